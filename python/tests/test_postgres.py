"""The same API on the throwaway PostgreSQL server scripts/test.sh starts
(TLS on, password authentication), in a database of the test's own."""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import agents_registry as ar


def test_the_service_on_postgres(pg_url: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    svc = ar.SkillRegistryService(skill_repo=ar.SkillRepository(pg_url))
    assert svc.database_url.startswith("postgres://") and "@" in svc.database_url
    assert pg_url.split("@")[0].split(":")[-1] not in repr(svc)  # the password
    svc.add_skills_yaml(
        "name: local/base\ntools: [builtin/list_dir]\n---\n"
        "name: local/code-tools\nversion: '1.0'\ntools: [builtin/read_file]\nincludes: [local/base]\n"
        "inline_tools: [{description: fmt, writes: true}]\n"
    )
    entries, summary = svc.tools("local/code-tools")
    assert [e.name for e in entries] == ["builtin/list_dir", "builtin/read_file", "local/code-tools/_anon_0"]
    assert (summary.total_tools, summary.write_tools) == (3, 1)
    assert [s.name for s in svc.list_skills(namespace="local")] == ["local/base", "local/code-tools"]
    read = svc.get_skill("local/code-tools")
    svc.update_skill(read.replace(version="1.1"))
    with pytest.raises(ar.StoreError) as conflict:
        svc.update_skill(read.replace(version="1.2"))
    assert conflict.value.kind == "conflict"
    with pytest.raises(ar.DuplicateSkillError):
        svc.add_skill({"name": "local/base"})
    assert svc.validate_plan(["local/code-tools", "local/nobody"]) == [
        "Skill 'local/nobody' referenced in plan is not registered"]
    # Discovery writes this user's scope rows in the shared database.
    folder = home / "skills" / "my-tool"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: my-tool\ndescription: A tool\n---\n")
    assert [t.name for t in svc.discover_and_register(str(home / "skills")).discovered] == ["agent_skills/my-tool"]
    # Several threads on one service: each call takes a pooled connection.
    def work(i: int) -> int:
        svc.add_skill({"name": f"pool/s{i}", "includes": ["local/code-tools"]})
        return svc.tools(f"pool/s{i}")[1].total_tools

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(work, range(24))) == [3] * 24
    # The settings chain reaches the same database.
    monkeypatch.setenv("CLEVERAGENTS_DATABASE_URL", pg_url)
    assert len(ar.SkillRegistryService().list_skills(namespace="pool")) == 24
    assert sorted(svc.remove_skill("local/code-tools", force=True)) == sorted(f"pool/s{i}" for i in range(24))
