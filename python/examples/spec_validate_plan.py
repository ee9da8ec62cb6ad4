"""The specification's "`validate_plan()` Usage" block, run as written but
for its import: with nothing registered where its comment stands, it prints
the two "not registered" errors.
"""

# ---- the specification's block; only its import is changed ----

from agents_registry import SkillRegistry

registry = SkillRegistry()
# ... register skills ...

errors = registry.validate_plan({"skills": ["local/code-tools", "local/deploy"]})
if errors:
    for err in errors:
        print(f"Plan validation error: {err}")
