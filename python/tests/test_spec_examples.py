"""The specification's Python code blocks (python/examples/spec_*.py: each
block as written but for its imports, after what it leaves to its reader)
run, and print what the specification says they print."""

import runpy
from pathlib import Path

import pytest

import agents_registry as ar

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(name: str, capsys: pytest.CaptureFixture[str]) -> str:
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_every_example_is_run_here() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("spec_*.py")) == [
        "spec_discovery.py", "spec_service_api.py", "spec_tools.py", "spec_validate_plan.py"]


def test_service_api(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run("spec_service_api.py", capsys)
    # Registered, updated, then removed: the file is there, the skill is not.
    svc = ar.SkillRegistryService(skill_repo=ar.SkillRepository(f"sqlite://{tmp_path / 'example.db'}"))
    assert svc.list_skills() == []


def test_service_api_on_postgres(capsys: pytest.CaptureFixture[str], pg_url: str,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTS_EXAMPLE_DATABASE_URL", pg_url)
    run("spec_service_api.py", capsys)
    svc = ar.SkillRegistryService(skill_repo=ar.SkillRepository(pg_url))
    assert svc.list_skills() == []


def test_discovery(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    from test_discovery import SKILL_MD as text

    folder = home / ".cleveragents" / "agent_skills" / "my-tool"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    out = run("spec_discovery.py", capsys)
    lines = out.splitlines()
    # `/opt/skills` is whatever the machine has there.
    assert lines[0].startswith("Discovered: ") and int(lines[0].split()[1]) >= 1
    assert lines[1].startswith("Conflicts: ")


def test_validate_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("spec_validate_plan.py", capsys) == (
        "Plan validation error: Skill 'local/code-tools' referenced in plan is not registered\n"
        "Plan validation error: Skill 'local/deploy' referenced in plan is not registered\n"
    )


def test_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("spec_tools.py", capsys) == "Total tools: 3\nHas writes: True\n"


def test_the_readme_example_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (EXAMPLES.parent / "README.md").read_text()
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 10
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    said = [line.split("# ", 1)[1] for line in code.splitlines() if line.startswith("print(") and "# " in line]
    assert printed[: len(said)] == said
    assert printed[-1] == "[\"Skill 'local/deploy' referenced in plan is not registered\"]"


def test_the_readme_example_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # The landing page's Python block, run as written in a fresh directory.
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = readme.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "['builtin/read_file', 'builtin/grep'] 2"
    assert "local/missing" in lines[1]
