"""Agent Skills discovery from Python: the specification's SKILL.md and
config blocks, conflict strategies, refresh."""

import warnings
from pathlib import Path

import pytest

import agents_registry as ar

# The specification's "SKILL.md Format" block, as written.
SKILL_MD = """---
name: my-tool
description: A custom agent skill
input_schema:
  type: object
  properties:
    query:
      type: string
---

# My Tool

Additional documentation here.
"""

# The specification's "Configuration" block, as written.
CONFIG_TOML = """# ~/.cleveragents/config.toml
[skills]
agent_skills_paths = "/home/user/.cleveragents/agent_skills,/opt/skills"
"""


def write_skill(root: Path, name: str = "my-tool", text: str = SKILL_MD) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    return folder


def test_the_specifications_skill_md_is_discovered(svc: ar.SkillRegistryService, home: Path,
                                                   tmp_path: Path) -> None:
    folder = write_skill(home / ".cleveragents" / "agent_skills")
    missing = tmp_path / "no-such-folder"
    result = svc.discover_and_register(f"~/.cleveragents/agent_skills,{missing}")
    assert [t.name for t in result.discovered] == ["agent_skills/my-tool"]
    assert result.conflicts == [] and result.errors == []
    assert any(str(missing) in w for w in result.warnings)
    tool = result.discovered[0]
    assert (tool.source, tool.description) == ("agent_skills", "A custom agent skill")
    assert tool.input_schema == {"type": "object", "properties": {"query": {"type": "string"}}}
    assert tool.source_metadata["path"] == str(folder.resolve())
    assert result.to_dict()["discovered"][0]["name"] == "agent_skills/my-tool"
    assert repr(result) == "DiscoveryResult(discovered=1, conflicts=0, errors=0, warnings=1)"
    svc.add_skill({"name": "local/devops-toolkit", "tools": ["agent_skills/my-tool", "builtin/shell"]})
    entries, _ = svc.tools("local/devops-toolkit")
    assert [(e.name, e.source) for e in entries] == [("agent_skills/my-tool", "agent_skills"),
                                                     ("builtin/shell", "builtin")]


def test_refresh_replaces_what_was_found_before(svc: ar.SkillRegistryService, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root)
    other = write_skill(root, "other-tool", SKILL_MD.replace("my-tool", "other-tool"))
    assert len(svc.discover_and_register([root]).discovered) == 2
    for child in other.iterdir():
        child.unlink()
    other.rmdir()
    # Discovery keeps what it found before; a refresh replaces it.
    kept = svc.discover_and_register([str(root)])
    assert len(kept.discovered) == 1 and kept.changes is None
    svc.add_skill({"name": "local/uses", "tools": ["agent_skills/other-tool"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert svc.tools("local/uses")[0][0].source == "agent_skills"
        result = svc.refresh_agent_skills((str(root),))
        assert [t.name for t in result.discovered] == ["agent_skills/my-tool"]
        assert result.changes == {"added": [], "kept": ["agent_skills/my-tool"], "changed": [],
                                  "removed": [{"name": "agent_skills/other-tool",
                                               "path": str(other.resolve())}]}
        assert result.to_dict()["changes"] == result.changes
        assert svc.tools("local/uses")[0][0].source is None
    # A missing folder is a warning, as for configured folders.
    gone = svc.refresh_agent_skills([tmp_path / "gone"])
    assert gone.discovered == [] and any("gone" in w for w in gone.warnings)


def test_a_taken_name_is_settled_by_on_conflict(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root)
    host = ar.ToolRegistry(builtins=False)
    host.register({"name": "agent_skills/my-tool", "description": "in code"})
    svc = ar.SkillRegistryService(skill_repo=ar.SkillRepository(f"sqlite://{tmp_path / 'c.db'}"),
                                  tool_registry=host)
    with pytest.raises(ar.DiscoveryConflictError) as caught:
        svc.discover_and_register(str(root), on_conflict="error")
    assert isinstance(caught.value, ValueError)
    assert "agent_skills/my-tool" in str(caught.value)
    skipped = svc.discover_and_register(str(root))
    assert skipped.discovered == []
    conflict = skipped.conflicts[0]
    assert (conflict.name, conflict.existing_source, conflict.resolution) == (
        "agent_skills/my-tool", "builtin", "skipped")
    assert conflict.new_path == str((root / "my-tool").resolve())
    assert str(conflict).endswith(": kept the existing one")
    assert conflict.to_dict()["resolution"] == "skipped"
    replaced = svc.refresh_agent_skills(str(root), on_conflict="replace")
    assert [t.name for t in replaced.discovered] == ["agent_skills/my-tool"]
    assert replaced.conflicts[0].resolution == "replaced"


def test_configured_folders_are_the_default(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The specification's config block names folders a test machine does not
    # have (`/opt/skills` may be there: nothing is said of it): read, then
    # warned about by the discovery.
    config = tmp_path / "config.toml"
    config.write_text(CONFIG_TOML)
    svc = ar.SkillRegistryService(database_url=f"sqlite://{tmp_path / 'd.db'}", config=config)
    result = svc.discover_and_register()
    assert any("/home/user/.cleveragents/agent_skills" in w for w in result.warnings)
    # The environment variable beats the file.
    root = tmp_path / "from-env"
    write_skill(root)
    monkeypatch.setenv("CLEVERAGENTS_SKILLS_AGENT_SKILLS_PATHS", str(root))
    svc = ar.SkillRegistryService(database_url=f"sqlite://{tmp_path / 'd.db'}", config=config)
    assert [t.name for t in svc.refresh_agent_skills().discovered] == ["agent_skills/my-tool"]


def test_a_broken_skill_md_is_an_error_of_the_result(svc: ar.SkillRegistryService, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "broken", "---\nname: broken\n---\n")
    result = svc.discover_and_register(str(root))
    assert result.discovered == [] and len(result.errors) == 1
    assert "description" in result.errors[0]
