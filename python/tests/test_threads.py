"""One service used from many Python threads at once, and the interpreter
let go of while the registry works."""

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator, List, Tuple

import pytest

import agents_registry as ar

WORKERS = 8
ROUNDS = 25


def test_a_thread_pool_shares_one_service(svc: ar.SkillRegistryService) -> None:
    svc.add_skill({"name": "shared/base", "tools": ["builtin/read_file", "builtin/grep"]})

    def work(worker: int) -> Tuple[int, List[str]]:
        seen = []
        for round_ in range(ROUNDS):
            name = f"w{worker}/s{round_}"
            svc.add_skill({"name": name, "includes": ["shared/base"], "tools": ["builtin/list_dir"]})
            entries, summary = svc.tools(name)
            assert summary.total_tools == 3
            seen.append(",".join(e.name for e in entries))
            assert svc.get_skill(name).name == name
            if round_ % 5 == 4:
                svc.update_skill(svc.get_skill(name).replace(description=f"round {round_}"))
            assert svc.validate_plan([name, "shared/base"]) == []
        return worker, seen

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        results = list(pool.map(work, range(WORKERS)))
    expected = "builtin/read_file,builtin/grep,builtin/list_dir"
    for worker, seen in results:
        assert seen == [expected] * ROUNDS, worker
    names = [s.name for s in svc.list_skills()]
    assert len(names) == WORKERS * ROUNDS + 1
    for worker in range(WORKERS):
        described = [svc.get_skill(f"w{worker}/s{r}").description for r in range(ROUNDS)]
        assert described.count(None) == ROUNDS - ROUNDS // 5


def test_services_made_and_dropped_in_threads(tmp_path: "pytest.TempPathFactory") -> None:
    url = f"sqlite://{tmp_path}/threads.db"  # type: ignore[operator]

    def work(worker: int) -> int:
        own = ar.SkillRegistryService(skill_repo=ar.SkillRepository(url))
        own.add_skill({"name": f"t{worker}/s", "tools": ["builtin/grep"]})
        memory = ar.SkillRegistry()
        memory.register({"name": "local/m", "tools": ["builtin/grep"]})
        return memory.tools("local/m")[1].total_tools + own.tools(f"t{worker}/s")[1].total_tools

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(work, range(8))) == [2] * 8


@pytest.fixture
def long_switch_interval() -> Iterator[None]:
    """Forced switches between threads only every 0.2 s: a thread that holds
    the interpreter keeps it that long unless it lets go of it itself."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.2)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_the_interpreter_is_let_go_of_during_a_call(
    svc: ar.SkillRegistryService, long_switch_interval: None
) -> None:
    # A chain long enough that flattening it reads many rows.
    chain = 400
    svc.add_skills(
        [{"name": f"chain/s{i}", "tools": ["builtin/grep"], "includes": [f"chain/s{i + 1}"] if i + 1 < chain else []}
         for i in range(chain)]
    )
    count = 0
    stop = False
    running = threading.Event()

    def counter() -> None:
        nonlocal count
        running.set()
        while not stop:
            count += 1

    thread = threading.Thread(target=counter)
    thread.start()
    running.wait()
    try:
        during = []
        for _ in range(5):
            before = count
            svc.tools("chain/s0")
            during.append(count - before)
    finally:
        stop = True
        thread.join()
    # The counting thread waits for the interpreter while the main thread
    # holds it (a forced switch comes only after 0.2 s, and the main thread
    # goes from reading `count` into the call at once): it counts between
    # the two reads only if the call let go of the interpreter.
    assert sum(during) > 0, during
