"""`call_tool`: a builtin or `run` tool called from Python through the same
preparation, executor and policy as `agents tool call`."""

import json
from pathlib import Path

import pytest

import agents_registry as ar


def skill(svc: ar.SkillRegistryService, overrides: dict) -> None:
    svc.add_skill({
        "name": "local/t",
        "tools": ["builtin/read_file", "builtin/write_file", "builtin/shell"],
        "overrides": overrides,
    })


def test_a_builtin_runs_inside_its_root(svc: ar.SkillRegistryService, tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.txt").write_text("hello from the root\n")
    result = svc.call_tool(None, "read_file", {"path": "notes.txt"}, roots=[root])
    assert isinstance(result, ar.ToolResult)
    assert not result.is_error and "hello from the root" in result.text
    # The default root is the current folder.
    (tmp_path / "here.txt").write_text("here\n")
    assert "here" in svc.call_tool(None, "builtin/read_file", {"path": "here.txt"}).text


def test_a_path_out_of_the_root_is_refused_naming_the_rule(
    svc: ar.SkillRegistryService, tmp_path: Path
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("secret\n")
    with pytest.raises(ar.ToolCallError) as refused:
        svc.call_tool(None, "read_file", {"path": "../secret.txt"}, roots=[root])
    assert refused.value.rule == "parent-dir"
    with pytest.raises(ar.ToolCallError) as refused:
        svc.call_tool(None, "read_file", {"path": str(tmp_path / "secret.txt")}, roots=[root])
    assert refused.value.rule == "outside-roots"
    assert "secret" not in str(refused.value).replace("secret.txt", "")


def test_read_only_refuses_a_writing_builtin(svc: ar.SkillRegistryService, tmp_path: Path) -> None:
    skill(svc, {"builtin/write_file": {"read_only": True}})
    with pytest.raises(ar.ToolCallError) as refused:
        svc.call_tool("local/t", "write_file", {"path": "out.txt", "content": "x"})
    assert refused.value.rule == "read-only" and refused.value.kind == "tool_error"
    assert not (tmp_path / "out.txt").exists()
    # Without the skill there is no such override.
    assert not svc.call_tool(None, "write_file", {"path": "out.txt", "content": "x"}).is_error
    assert (tmp_path / "out.txt").read_text() == "x"


def test_approval_is_given_by_approve(svc: ar.SkillRegistryService, tmp_path: Path) -> None:
    skill(svc, {"builtin/read_file": {"approval": "required"}})
    (tmp_path / "a.txt").write_text("approved read\n")
    with pytest.raises(ar.ToolCallError) as refused:
        svc.call_tool("local/t", "read_file", {"path": "a.txt"})
    assert refused.value.rule == "approval-required"
    result = svc.call_tool("local/t", "read_file", {"path": "a.txt"}, approve=True)
    assert "approved read" in result.text


def test_an_audited_entry_appends_one_line_per_call(
    svc: ar.SkillRegistryService, tmp_path: Path
) -> None:
    skill(svc, {"builtin/read_file": {"audit": True}})
    (tmp_path / "a.txt").write_text("a\n")
    audit = tmp_path / "audit.jsonl"
    for _ in range(3):
        svc.call_tool("local/t", "read_file", {"path": "a.txt"}, audit_file=audit)
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert len(lines) == 3
    assert all(line["skill"] == "local/t" and line["tool"].endswith("read_file") for line in lines)
    assert (audit.stat().st_mode & 0o777) == 0o600


def test_a_failing_tool_is_a_result_and_bad_arguments_raise(svc: ar.SkillRegistryService) -> None:
    result = svc.call_tool(None, "shell", {"command": "echo oops >&2; exit 3"})
    assert result.is_error and result.exit_code == 3
    with pytest.raises(ar.ValidationError):
        svc.call_tool(None, "read_file", {"no_such_argument": 1})
    with pytest.raises(ar.RegistryError) as unknown:
        svc.call_tool(None, "no_such_tool", {})
    assert unknown.value.kind != "tool_error"
    with pytest.raises(ar.RegistryError):
        svc.call_tool("local/missing", "read_file", {"path": "x"})
