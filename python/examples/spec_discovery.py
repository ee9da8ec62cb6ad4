"""The specification's "Service API (Discovery)" block, run as written but
for its imports; `session_factory` is a database URL here
(`AGENTS_EXAMPLE_DATABASE_URL`, else a SQLite file in the current folder).
"""

import os

session_factory = os.environ.get("AGENTS_EXAMPLE_DATABASE_URL", "sqlite://example.db")

# ---- the specification's block; only its imports are changed ----

from agents_registry import SkillRegistryService
from agents_registry import SkillRepository
from agents_registry import ToolRegistry

tool_registry = ToolRegistry()
svc = SkillRegistryService(
    skill_repo=SkillRepository(session_factory),
    tool_registry=tool_registry,
)

# Initial discovery
result = svc.discover_and_register(
    "~/.cleveragents/agent_skills,/opt/skills"
)
print(f"Discovered: {len(result.discovered)} skills")
print(f"Conflicts: {len(result.conflicts)}")

# Refresh (re-scan)
result = svc.refresh_agent_skills(
    "~/.cleveragents/agent_skills,/opt/skills"
)
