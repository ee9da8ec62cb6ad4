"""Python and the `agents` CLI on the same database see the same registry,
and a definition error reads the same from both."""

import json
import warnings
from pathlib import Path

import agents_registry as ar
from conftest import run_agents

DEVOPS = """name: local/devops-toolkit
description: Deploy things
tools: [builtin/shell, custom/unknown]
includes:
  - skill: local/base
    overrides: {approval: required}
inline_tools:
  - {description: Roll back, writes: true, checkpointable: true}
"""


def test_skill_tools_reads_the_same_from_python_and_the_cli(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'shared.db'}"
    svc = ar.SkillRegistryService(database_url=url)
    svc.add_skill({"name": "local/base", "tools": ["builtin/read_file", "builtin/grep"]})
    svc.add_skills_yaml(DEVOPS)
    # The specification's CLI block, on the database Python wrote.
    cli = run_agents("--database-url", url, "skill", "tools", "local/devops-toolkit", "--format", "json")
    assert cli.returncode == 0, cli.stderr
    shown = json.loads(cli.stdout)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        entries, summary = svc.tools("local/devops-toolkit")
    assert [str(w.message) for w in caught] == shown["warnings"]
    assert len(entries) == len(shown["tools"])
    for entry, row in zip(entries, shown["tools"]):
        mine = entry.to_dict()
        for key, value in mine.items():
            if key == "source_metadata" and value in ({}, None):
                assert row.get(key) is None
                continue
            assert row.get(key) == value, (entry.name, key)
    cli_summary = {k: v for k, v in shown["summary"].items() if k != "effective"}
    assert cli_summary == summary.to_dict()
    # What the CLI writes, Python reads.
    added = run_agents("--database-url", url, "skill", "add", str(write(tmp_path, "more.yaml",
                                                                          "name: local/more\ntools: [builtin/grep]\n")))
    assert added.returncode == 0, added.stderr
    assert svc.get_skill("local/more").items[0].item_name == "builtin/grep"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_a_definition_error_reads_as_the_clis(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'errors.db'}"
    svc = ar.SkillRegistryService(database_url=url)
    for text in (
        "name: local/x\ntools: [builtin/grep]\ninclude: [local/a]\n",
        "name: local/x\nversion: " + "v" * 60 + "\n",
        "name: local/x\nmcp_sources:\n  - server: gh\n    url: ftp://example.com\n    headers: {Authorization: secret-token}\n",
        "name: bad name\n",
        "name: local/a\n---\nname: local/a\n",
    ):
        path = write(tmp_path, "skill.yaml", text)
        cli = run_agents("--database-url", url, "skill", "add", str(path))
        assert cli.returncode != 0
        try:
            svc.add_skills_yaml(text, source=str(path))
        except ar.ValidationError as err:
            message = str(err)
        else:
            raise AssertionError(f"accepted: {text!r}")
        assert message in cli.stderr, (message, cli.stderr)
        assert "secret-token" not in message
