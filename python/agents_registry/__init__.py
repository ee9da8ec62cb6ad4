"""The skill registry of the `agents` CLI, from Python, on the same Rust core.

    from agents_registry import SkillRegistryService, SkillRepository

    svc = SkillRegistryService(skill_repo=SkillRepository("sqlite://skills.db"))
    svc.add_skill({"name": "local/code-tools", "tools": ["builtin/read_file"]})
    entries, summary = svc.tools("local/code-tools")

See the package's README for the whole API.
"""

from agents_registry._native import (
    DiscoveryConflict,
    DiscoveryResult,
    ResolvedToolEntry,
    Skill,
    SkillCapabilitySummary,
    SkillItem,
    SkillRegistry,
    SkillRegistryService,
    SkillRepository,
    SkillSummary,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    __version__,
)
from agents_registry.errors import (
    ArgumentTypeError,
    ConfigError,
    CycleError,
    DiscoveryConflictError,
    DuplicateSkillError,
    NonOverridableFieldError,
    RegistryError,
    RegistryWarning,
    SkillNotFoundError,
    StoreError,
    ToolCallError,
    ValidationError,
)

__all__ = [
    "ArgumentTypeError",
    "ConfigError",
    "CycleError",
    "DiscoveryConflict",
    "DiscoveryConflictError",
    "DiscoveryResult",
    "DuplicateSkillError",
    "NonOverridableFieldError",
    "RegistryError",
    "RegistryWarning",
    "ResolvedToolEntry",
    "Skill",
    "SkillCapabilitySummary",
    "SkillItem",
    "SkillNotFoundError",
    "SkillRegistry",
    "SkillRegistryService",
    "SkillRepository",
    "SkillSummary",
    "StoreError",
    "ToolCallError",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "ValidationError",
    "__version__",
]
