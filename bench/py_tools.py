"""The Python side of the `python` cases: `svc.tools(SKILL)` through the
`agents_registry` package, in one process: the import, the service, one
warm-up call, then RUNS timed calls. Usage: python py_tools.py URL SKILL RUNS;
prints one JSON object (milliseconds)."""

import json
import sys
import time

start = time.perf_counter()
import agents_registry as ar  # noqa: E402

imported = time.perf_counter()


def main(url: str, skill: str, runs: int) -> None:
    svc = ar.SkillRegistryService(skill_repo=ar.SkillRepository(url))
    made = time.perf_counter()
    entries, summary = svc.tools(skill)
    first = time.perf_counter()
    samples = []
    for _ in range(runs):
        before = time.perf_counter()
        entries, summary = svc.tools(skill)
        samples.append((time.perf_counter() - before) * 1e3)
    print(json.dumps({
        "entries": len(entries),
        "total_tools": summary.total_tools,
        "import_ms": (imported - start) * 1e3,
        "service_ms": (made - imported) * 1e3,
        "first_call_ms": (first - made) * 1e3,
        "samples_ms": samples,
    }))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
