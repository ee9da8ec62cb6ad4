"""Fixtures of the `agents_registry` tests.

Every test runs with its own home directory (so `~/.cleveragents` is the
test's) and without the `CLEVERAGENTS_*` variables of whoever runs it.

Outside CI a test that needs something not installed (the PostgreSQL server
scripts/test.sh starts, the `agents` binary) is skipped with the reason; with
`AGENTS_TEST_REQUIRE_ALL=1` (scripts/test.sh sets it) it fails instead.
"""

import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Iterator, Optional

import pytest

import agents_registry as ar

REPO = Path(__file__).resolve().parents[2]


def needed(what: str) -> None:
    """Skips the test, or fails it when everything is required."""
    if os.environ.get("AGENTS_TEST_REQUIRE_ALL") == "1":
        pytest.fail(f"{what} is required (AGENTS_TEST_REQUIRE_ALL=1)")
    pytest.skip(f"{what} is not available")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory of the test's own, and the test's folder as the current one."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in list(os.environ):
        if name.startswith("CLEVERAGENTS_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite://{tmp_path / 'skills.db'}"


@pytest.fixture
def svc(db_url: str) -> ar.SkillRegistryService:
    return ar.SkillRegistryService(skill_repo=ar.SkillRepository(db_url))


def agents_bin() -> str:
    """The `agents` binary the Rust build made (`AGENTS_BIN`, else target/debug/agents)."""
    path = os.environ.get("AGENTS_BIN")
    if path is None:
        target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
        path = str(target / "debug" / "agents")
    if not os.access(path, os.X_OK):
        needed(f"the `agents` binary (`{path}`)")
    return path


def run_agents(*args: str, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [agents_bin(), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh database on the throwaway PostgreSQL server, dropped afterwards."""
    admin = os.environ.get("AGENTS_TEST_POSTGRES_URL")
    if not admin:
        needed("PostgreSQL (`AGENTS_TEST_POSTGRES_URL`)")
    psql = shutil.which("psql")
    if psql is None:
        needed("`psql`")
    assert admin is not None and psql is not None
    name = f"py_{uuid.uuid4().hex[:12]}"

    def sql(statement: str) -> None:
        subprocess.run([psql, "-X", "-q", admin, "-c", statement], check=True, capture_output=True)

    sql(f"CREATE DATABASE {name}")
    try:
        yield admin.rsplit("/", 1)[0] + "/" + name
    finally:
        sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
