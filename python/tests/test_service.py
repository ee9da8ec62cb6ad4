"""SkillRegistryService: every method, its results and its errors, on SQLite."""

import sqlite3
import warnings
from pathlib import Path

import pytest

import agents_registry as ar

CODE_TOOLS = {
    "name": "local/code-tools",
    "description": "Read and edit code",
    "version": "1.2.0",
    "metadata": {"owner": "platform-team"},
    "overrides": {"builtin/read_file": {"timeout_s": 10}},
    "tools": ["builtin/read_file", "builtin/grep"],
    "includes": ["local/base", {"skill": "local/git", "overrides": {"approval": "required"}}],
    "inline_tools": [
        {"description": "Run the formatter", "writes": True, "checkpointable": True, "side_effects": True}
    ],
    "mcp_sources": [
        {"server": "github", "command": "npx", "args": ["-y", "server-github"], "env": {"GITHUB_TOKEN": "s3cr3t-value"}}
    ],
    "agent_sources": [{"path": "~/.cleveragents/agent_skills/pdf-processing"}],
}


def add_base(svc: ar.SkillRegistryService) -> None:
    svc.add_skill({"name": "local/base", "tools": ["builtin/list_dir"]})
    svc.add_skill({"name": "local/git", "tools": ["builtin/shell", "builtin/read_file"]})


def test_a_skill_round_trips_with_its_items_in_order(svc: ar.SkillRegistryService) -> None:
    added = svc.add_skill(CODE_TOOLS)
    assert added.created_at is not None and added.updated_at == added.created_at
    got = svc.get_skill("local/code-tools")
    assert got == added
    assert (got.name, got.namespace, got.short_name) == ("local/code-tools", "local", "code-tools")
    assert (got.description, got.version, got.metadata) == ("Read and edit code", "1.2.0", {"owner": "platform-team"})
    assert got.overrides == {"builtin/read_file": {"timeout_s": 10}}
    rows = [(i.item_type, i.item_name, i.item_order) for i in got.items]
    assert rows == [
        ("tool_ref", "builtin/read_file", 0),
        ("tool_ref", "builtin/grep", 1),
        ("include", "local/base", 2),
        ("include", "local/git", 3),
        ("inline_tool", "local/code-tools/_anon_0", 4),
        ("mcp_source", "github", 5),
        ("agent_source", "~/.cleveragents/agent_skills/pdf-processing", 6),
    ]
    configs = [i.item_config for i in got.items]
    assert configs[0] is None and configs[2] is None and configs[6] is None
    assert configs[3] == {"overrides": {"approval": "required"}}
    assert configs[4] == {"description": "Run the formatter", "read_only": False, "writes": True,
                          "checkpointable": True, "side_effects": True}
    assert configs[5] is not None and configs[5]["server"] == "github"
    assert got.items[4].to_dict() == {"item_type": "inline_tool", "item_name": "local/code-tools/_anon_0",
                                      "item_config": configs[4], "item_order": 4}


def test_the_rows_are_the_specifications_tables(svc: ar.SkillRegistryService, tmp_path: Path) -> None:
    svc.add_skill(CODE_TOOLS)
    with sqlite3.connect(tmp_path / "skills.db") as conn:
        skill = conn.execute("SELECT namespace, short_name, version FROM skills WHERE name = ?",
                             ("local/code-tools",)).fetchone()
        items = conn.execute("SELECT item_type, item_name, item_order FROM skill_items "
                             "WHERE skill_name = ? ORDER BY item_order", ("local/code-tools",)).fetchall()
    assert skill == ("local", "code-tools", "1.2.0")
    assert [(t, n, o) for t, n, o in items] == [
        (i.item_type, i.item_name, i.item_order) for i in svc.get_skill("local/code-tools").items
    ]


def test_to_dict_is_the_definition_and_reads_back(svc: ar.SkillRegistryService, tmp_path: Path) -> None:
    skill = svc.add_skill(CODE_TOOLS)
    data = skill.to_dict()
    for key, value in CODE_TOOLS.items():
        if key != "inline_tools":
            assert data[key] == value, key
    assert data["namespace"] == "local" and data["short_name"] == "code-tools"
    assert [item["item_order"] for item in data["items"]] == list(range(7))
    assert ar.Skill.from_dict(data) == skill
    other = ar.SkillRegistryService(skill_repo=ar.SkillRepository(f"sqlite://{tmp_path / 'other.db'}"))
    copied = other.add_skill(data)
    assert copied.to_dict()["tools"] == data["tools"]
    # What to_dict derives must say what the definition says.
    with pytest.raises(ar.ValidationError, match="`items`"):
        ar.Skill.from_dict({**data, "tools": ["builtin/grep"]})
    with pytest.raises(ar.ValidationError, match="`namespace`"):
        ar.Skill.from_dict({**data, "namespace": "other"})


def test_a_skill_object_is_made_from_keywords_yaml_or_a_dict() -> None:
    by_keywords = ar.Skill(name="local/k", description="d", tools=["builtin/grep"], includes=["local/base"])
    by_dict = ar.Skill.from_dict({"name": "local/k", "description": "d", "tools": ["builtin/grep"],
                                  "includes": ["local/base"]})
    by_yaml = ar.Skill.from_yaml("name: local/k\ndescription: d\ntools: [builtin/grep]\nincludes: [local/base]\n")
    assert by_keywords == by_dict == by_yaml
    assert by_keywords.created_at is None
    assert ar.Skill.from_yaml(by_keywords.to_yaml()) == by_keywords
    with pytest.raises(ar.ValidationError, match="expected one skill"):
        ar.Skill.from_yaml("name: local/a\n---\nname: local/b\n")


def test_list_skills_filters_by_namespace(svc: ar.SkillRegistryService) -> None:
    add_base(svc)
    svc.add_skill({"name": "team/x", "description": "X"})
    every = svc.list_skills()
    assert [s.name for s in every] == ["local/base", "local/git", "team/x"]
    team = svc.list_skills(namespace="team")
    assert len(team) == 1
    row = team[0]
    assert (row.name, row.namespace, row.short_name, row.description, row.item_count) == (
        "team/x", "team", "x", "X", 0)
    assert row.to_dict()["item_count"] == 0
    assert svc.list_skills(namespace="nobody") == []
    with pytest.raises(ar.ValidationError) as caught:
        svc.list_skills(namespace="bad namespace")
    assert caught.value.kind == "invalid_namespace"


def test_update_checks_nobody_changed_the_skill_since_it_was_read(svc: ar.SkillRegistryService) -> None:
    svc.add_skill({"name": "local/u", "description": "one"})
    read = svc.get_skill("local/u")
    changed = read.replace(description="two")
    assert changed.updated_at == read.updated_at
    updated = svc.update_skill(changed)
    assert updated.description == "two" and updated.updated_at != read.updated_at
    assert updated.created_at == read.created_at
    with pytest.raises(ar.StoreError) as caught:
        svc.update_skill(read.replace(description="three"))
    assert caught.value.kind == "conflict"
    # A definition without a stamp replaces whatever is there.
    assert svc.update_skill({"name": "local/u", "description": "four"}).description == "four"
    with pytest.raises(ar.SkillNotFoundError):
        svc.update_skill({"name": "local/nobody"})
    with pytest.raises(ar.ValidationError, match="derived"):
        read.replace(items=[])


def test_remove_refuses_an_included_skill_unless_forced(svc: ar.SkillRegistryService) -> None:
    add_base(svc)
    svc.add_skill({"name": "local/top", "includes": ["local/base"]})
    with pytest.raises(ar.StoreError) as caught:
        svc.remove_skill("local/base")
    assert caught.value.kind == "skill_included"
    assert svc.remove_skill("local/base", force=True) == ["local/top"]
    assert svc.remove_skill("local/top") == []
    with pytest.raises(ar.SkillNotFoundError) as missing:
        svc.remove_skill("local/top")
    assert missing.value.kind == "skill_not_found"
    assert isinstance(missing.value, KeyError)
    assert str(missing.value) == "Skill 'local/top' is not registered"


def test_add_skills_is_all_or_nothing(svc: ar.SkillRegistryService) -> None:
    add_base(svc)
    with pytest.raises(ar.DuplicateSkillError) as caught:
        svc.add_skills([{"name": "local/new"}, {"name": "local/base"}])
    assert caught.value.kind == "duplicate_skill"
    assert [s.name for s in svc.list_skills()] == ["local/base", "local/git"]
    added = svc.add_skills([ar.Skill(name="local/new"), {"name": "local/newer"}])
    assert [s.name for s in added] == ["local/new", "local/newer"]


def test_add_skills_yaml_reads_a_stream_and_reports_like_the_cli(svc: ar.SkillRegistryService) -> None:
    added = svc.add_skills_yaml("name: local/a\ntools: [builtin/grep]\n---\nname: local/b\nincludes: [local/a]\n")
    assert [s.name for s in added] == ["local/a", "local/b"]
    with pytest.raises(ar.ValidationError) as caught:
        svc.add_skills_yaml("name: local/c\ntools: [builtin/grep]\ninclude: [local/a]\n", source="skills.yaml")
    err = caught.value
    assert (err.kind, err.file, err.line, err.column) == ("invalid_definition", "skills.yaml", 3, 1)
    assert str(err).startswith("skills.yaml:3:1: unknown field `include`")
    assert str(err).endswith("3 | include: [local/a]\n  | ^")


def test_tools_flattens_and_summarizes(svc: ar.SkillRegistryService) -> None:
    add_base(svc)
    svc.add_skill(CODE_TOOLS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        entries, summary = svc.tools("local/code-tools")
    names = [e.name for e in entries]
    assert names == [
        "builtin/list_dir", "builtin/shell", "builtin/read_file", "builtin/grep",
        "local/code-tools/_anon_0", "agent_skill:~/.cleveragents/agent_skills/pdf-processing",
    ]
    read_file = entries[2]
    assert (read_file.source, read_file.source_skill, read_file.is_inline, read_file.kind) == (
        "builtin", "local/code-tools", False, "tool_ref")
    assert read_file.overrides == {"timeout_s": 10}
    assert read_file.include_path == ["local/code-tools"]
    assert read_file.read_only is True and read_file.writes is False
    assert read_file.description == "Read a text file"
    assert read_file.input_schema is not None and read_file.input_schema["required"] == ["path"]
    assert read_file.tool is not None and read_file.tool.name == "builtin/read_file"
    shell = entries[1]
    assert shell.include_path == ["local/code-tools", "local/git"]
    assert shell.overrides == {"approval": "required"}
    inline = entries[4]
    assert inline.is_inline and inline.kind == "inline_tool" and inline.writes is True
    unknown = entries[5]
    assert unknown.source is None and unknown.tool is None and unknown.source_metadata == {}
    assert summary.to_dict() == {
        "total_tools": 6, "read_only_tools": 0, "write_tools": 1, "checkpointable_tools": 1,
        "has_side_effects": True, "mcp_sources": 1, "agent_skill_sources": 1,
    }
    assert summary.total_tools == 6 and summary.has_side_effects is True
    # Non-fatal problems arrive as warnings of the registry's category.
    assert caught and all(issubclass(w.category, ar.RegistryWarning) for w in caught)
    assert any("github" in str(w.message) for w in caught)
    # resolve_tools and compute_capability_summary are the two halves.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert svc.resolve_tools("local/code-tools") == entries
        assert svc.compute_capability_summary("local/code-tools") == summary
        assert svc.compute_capability_summary(svc.get_skill("local/code-tools")) == summary
    assert svc.compute_capability_summary("local/code-tools", entries) == summary
    assert svc.compute_capability_summary("local/code-tools", entries[:2]).total_tools == 2
    assert entries[2].to_dict()["include_path"] == ["local/code-tools"]


def test_validate_plan_returns_the_specifications_messages(svc: ar.SkillRegistryService) -> None:
    add_base(svc)
    svc.add_skill({"name": "local/broken", "includes": ["local/gone"]})
    svc.add_skill({"name": "local/a", "includes": ["local/b"]})
    svc.add_skill({"name": "local/b", "includes": ["local/a"]})
    assert svc.validate_plan({"skills": ["local/base", "local/git"]}) == []
    errors = svc.validate_plan({"skills": ["local/nobody", "local/broken", "local/a"]})
    assert errors[0] == "Skill 'local/nobody' referenced in plan is not registered"
    assert errors[1].startswith("Skill 'local/broken': Included skill 'local/gone' not found")
    assert errors[2] == "Skill 'local/a': Cycle detected in skill includes: local/a -> local/b -> local/a"
    assert svc.validate_plan(["local/nobody"]) == [errors[0]]
    with pytest.raises(ar.ValidationError, match="unknown field `skill`"):
        svc.validate_plan({"skill": ["local/base"]})


def test_a_missing_include_is_a_skill_not_found(svc: ar.SkillRegistryService) -> None:
    svc.add_skill({"name": "local/broken", "includes": ["local/gone"]})
    with pytest.raises(ar.SkillNotFoundError) as caught:
        svc.tools("local/broken")
    assert caught.value.kind == "missing_include"


def test_a_stored_non_overridable_override_is_a_value_error(svc: ar.SkillRegistryService, tmp_path: Path) -> None:
    svc.add_skill({"name": "local/o", "tools": ["builtin/grep"]})
    # The parser refuses such a definition; only a row written behind the
    # registry's back holds one.
    with sqlite3.connect(tmp_path / "skills.db") as conn:
        conn.execute("UPDATE skills SET metadata_json = ? WHERE name = 'local/o'",
                     ('{"metadata": {}, "overrides": {"builtin/grep": {"is_inline": true}}}',))
    with pytest.raises(ar.NonOverridableFieldError) as caught:
        svc.tools("local/o")
    err = caught.value
    assert isinstance(err, ValueError) and err.kind == "non_overridable_field"
    assert (err.fields, err.skill) == (["is_inline"], "local/o")
    assert str(err).startswith("Non-overridable field(s) 'is_inline' in overrides from skill 'local/o'")
    with pytest.raises(ar.ValidationError, match="cannot be overridden"):
        svc.add_skill({"name": "local/p", "overrides": {"builtin/grep": {"name": "x"}}})


def test_reprs_are_short_and_keep_secrets_out(svc: ar.SkillRegistryService) -> None:
    add_base(svc)
    skill = svc.add_skill(CODE_TOOLS)
    assert repr(skill).startswith("Skill(name='local/code-tools', version='1.2.0', description='Read and edit code', items=7")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        entries, summary = svc.tools("local/code-tools")
    shown = [repr(skill), repr(entries), repr(summary), repr(skill.items), repr(svc.list_skills())]
    assert all("s3cr3t" not in text for text in shown)
    assert repr(entries[0]) == (
        "ResolvedToolEntry(name='builtin/list_dir', source='builtin', source_skill='local/base', is_inline=False)")
    assert repr(summary).startswith("SkillCapabilitySummary(total_tools=6, ")
    assert repr(svc).startswith("SkillRegistryService(database_url='sqlite://")


def test_a_postgres_password_is_hidden_in_reprs() -> None:
    repo = ar.SkillRepository("postgres://me:hunter2@localhost:5432/db")
    assert "hunter2" not in repr(repo) and "hunter2" not in repo.database_url


def test_tool_registry_holds_the_in_code_tools(tmp_path: Path) -> None:
    registry = ar.ToolRegistry()
    assert "builtin/read_file" in registry and len(registry) == len(registry.list()) > 0
    host = ar.ToolRegistry(builtins=False)
    assert len(host) == 0 and host.get("builtin/read_file") is None
    spec = host.register({"name": "host/search", "description": "Search", "read_only": True,
                          "input_schema": {"type": "object"}})
    assert (spec.name, spec.source, spec.read_only) == ("host/search", "builtin", True)
    assert host.get("host/search") == spec
    with pytest.raises(ar.ValidationError) as caught:
        host.register({"name": "host/search"})
    assert caught.value.kind == "duplicate_tool"
    host.register({"name": "host/search", "description": "Search again"}, replace=True)
    svc = ar.SkillRegistryService(skill_repo=ar.SkillRepository(f"sqlite://{tmp_path / 't.db'}"),
                                  tool_registry=host)
    svc.add_skill({"name": "local/h", "tools": ["host/search"]})
    entries, _ = svc.tools("local/h")
    assert entries[0].source == "builtin" and entries[0].description == "Search again"
    # The service took a copy: later registrations are not its.
    host.register({"name": "host/later"})
    svc.add_skill({"name": "local/l", "tools": ["host/later"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert svc.tools("local/l")[0][0].source is None


def test_skill_registry_is_in_memory(home: Path) -> None:
    registry = ar.SkillRegistry()
    assert isinstance(registry, ar.SkillRegistryService)
    registry.register({"name": "local/code-tools", "tools": ["builtin/grep"]})
    registry.register(ar.Skill(name="local/deploy", tools=["builtin/shell"]))
    assert registry.validate_plan({"skills": ["local/code-tools", "local/deploy"]}) == []
    entries, summary = registry.tools("local/code-tools")
    assert [e.name for e in entries] == ["builtin/grep"] and summary.total_tools == 1
    assert registry.database_url == "sqlite::memory:"
    # Nothing of it reached the disk, not even the scope file.
    assert not (home / ".cleveragents").exists()
    assert ar.SkillRegistry().list_skills() == []


def test_the_settings_chain_picks_the_database(home: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Default: the SQLite file in ~/.cleveragents, made with its folder.
    default = ar.SkillRegistryService()
    assert default.database_url == f"sqlite://{home / '.cleveragents' / 'cleveragents.db'}"
    assert (home / ".cleveragents" / "cleveragents.db").is_file()
    # The config file.
    config = home / ".cleveragents" / "config.toml"
    config.write_text(f'[database]\nurl = "sqlite://{tmp_path / "from-config.db"}"\n')
    assert ar.SkillRegistryService().database_url.endswith("from-config.db")
    # A config file named by the argument.
    other = tmp_path / "other.toml"
    other.write_text(f'[database]\nurl = "sqlite://{tmp_path / "from-other.db"}"\n')
    assert ar.SkillRegistryService(config=other).database_url.endswith("from-other.db")
    # The environment beats the file.
    monkeypatch.setenv("CLEVERAGENTS_DATABASE_URL", f"sqlite://{tmp_path / 'from-env.db'}")
    assert ar.SkillRegistryService().database_url.endswith("from-env.db")
    # The argument beats the environment.
    svc = ar.SkillRegistryService(database_url=f"sqlite://{tmp_path / 'from-arg.db'}")
    assert svc.database_url.endswith("from-arg.db")
    with pytest.raises(ar.ValidationError, match="not both"):
        ar.SkillRegistryService(skill_repo=ar.SkillRepository("sqlite::memory:"), database_url="sqlite::memory:")


def test_settings_errors_are_config_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ar.ConfigError) as missing:
        ar.SkillRegistryService(config=tmp_path / "nope.toml")
    assert missing.value.kind == "config_missing_file"
    bad = tmp_path / "bad.toml"
    bad.write_text("[database]\nurll = 1\n")
    with pytest.raises(ar.ConfigError) as invalid:
        ar.SkillRegistryService(config=bad)
    assert invalid.value.kind == "config_invalid" and "bad.toml:2:1" in str(invalid.value)
    monkeypatch.setenv("CLEVERAGENTS_DATABASE_URL", "mysql://nope")
    with pytest.raises(ar.ValidationError) as url:
        ar.SkillRegistryService()
    assert url.value.kind == "invalid_database_url"
    assert "environment variable `CLEVERAGENTS_DATABASE_URL`" in str(url.value)
    repo = ar.SkillRepository(f"sqlite://{tmp_path / 'no' / 'such' / 'folder.db'}")
    with pytest.raises(ar.StoreError) as folder:
        ar.SkillRegistryService(skill_repo=repo)
    assert folder.value.kind == "missing_database_directory"


def test_a_repository_takes_a_path(tmp_path: Path) -> None:
    repo = ar.SkillRepository(tmp_path / "by-path.db")
    assert repo.database_url == f"sqlite://{tmp_path / 'by-path.db'}"
    assert ar.SkillRegistryService(skill_repo=repo).list_skills() == []


def test_every_error_is_a_registry_error_with_its_builtin_base() -> None:
    assert issubclass(ar.SkillNotFoundError, KeyError)
    assert issubclass(ar.ValidationError, ValueError)
    assert issubclass(ar.ArgumentTypeError, TypeError) and issubclass(ar.ArgumentTypeError, ar.ValidationError)
    assert issubclass(ar.NonOverridableFieldError, ValueError)
    assert issubclass(ar.DiscoveryConflictError, ValueError)
    for cls in (ar.DuplicateSkillError, ar.SkillNotFoundError, ar.ValidationError, ar.CycleError,
                ar.StoreError, ar.ConfigError, ar.NonOverridableFieldError, ar.DiscoveryConflictError):
        assert issubclass(cls, ar.RegistryError)
    err = ar.SkillNotFoundError("skill `x/y` is not registered", "skill_not_found")
    assert (str(err), err.kind, err.message) == ("skill `x/y` is not registered", "skill_not_found",
                                                 "skill `x/y` is not registered")
