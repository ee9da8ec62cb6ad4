"""The specification's "Service API" block, run as written but for its imports.

`session_factory` is a database URL here (`AGENTS_EXAMPLE_DATABASE_URL`,
else a SQLite file in the current folder), and the `skill` and
`updated_skill` the block leaves to its reader are made first.
"""

import os

from agents_registry import Skill

session_factory = os.environ.get("AGENTS_EXAMPLE_DATABASE_URL", "sqlite://example.db")
skill = Skill(name="local/code-tools", description="Read and search code", tools=["builtin/read_file", "builtin/grep"])
updated_skill = skill.replace(tools=["builtin/read_file", "builtin/grep", "builtin/edit_file"])

# ---- the specification's block; only its imports are changed ----

from agents_registry import SkillRegistryService
from agents_registry import SkillRepository

svc = SkillRegistryService(skill_repo=SkillRepository(session_factory))

# Register
svc.add_skill(skill)

# Retrieve
skill = svc.get_skill("local/code-tools")

# List with filter
skills = svc.list_skills(namespace="local")

# Update
svc.update_skill(updated_skill)

# Remove
svc.remove_skill("local/code-tools")
