"""The specification's "`tools()` Method" block, run as written; the
`registry` it continues with is the in-memory `SkillRegistry` of the block
before, with `local/code-tools` registered.
"""

from agents_registry import SkillRegistry

registry = SkillRegistry()
registry.register(
    {
        "name": "local/code-tools",
        "tools": ["builtin/read_file", "builtin/grep"],
        "inline_tools": [{"description": "Run the formatter", "writes": True}],
    }
)

# ---- the specification's block ----

entries, summary = registry.tools("local/code-tools")
print(f"Total tools: {summary.total_tools}")
print(f"Has writes: {summary.write_tools > 0}")
