"""The exceptions and the warning category of `agents_registry`.

Every error the registry raises is a `RegistryError`; `kind` is the same
stable machine-readable kind the `agents` CLI prints in its `--format json`
errors (`duplicate_skill`, `cycle`, `invalid_definition`, ...). Some also
derive from the builtin exception a Python caller would catch: a skill that
is not found is a `KeyError`, a refused value a `ValueError`, a value of the
wrong type a `TypeError`.
"""

from typing import List, Optional

__all__ = [
    "ArgumentTypeError",
    "ConfigError",
    "CycleError",
    "DiscoveryConflictError",
    "DuplicateSkillError",
    "NonOverridableFieldError",
    "RegistryError",
    "RegistryWarning",
    "SkillNotFoundError",
    "StoreError",
    "ToolCallError",
    "ValidationError",
]


class RegistryError(Exception):
    """Base of every error the registry raises."""

    message: str
    kind: str

    def __init__(self, message: str, kind: str = "registry_error") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind

    def __str__(self) -> str:
        # Also for the `KeyError` subclasses, which would quote the message.
        return self.message


class DuplicateSkillError(RegistryError):
    """A skill of that name is already registered."""


class SkillNotFoundError(RegistryError, KeyError):
    """No skill of that name is registered (also a missing include)."""


class ValidationError(RegistryError, ValueError):
    """A definition, name or argument breaks a rule; nothing was written.

    For a definition given as YAML text (or as a dict, which is read as the
    same YAML), the message is the CLI's: the label, line and column, then
    the offending line with a caret under the problem. `file`, `line` and
    `column` say where, when known.
    """

    file: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None


class ArgumentTypeError(ValidationError, TypeError):
    """An argument (or a value inside a dict) has a type the registry cannot take."""


class CycleError(RegistryError, ValueError):
    """Includes loop back on themselves; `cycle` lists the skills, first repeated last."""

    cycle: List[str] = []


class NonOverridableFieldError(RegistryError, ValueError):
    """An override sets `name`, `source_skill` or `is_inline`.

    `fields` are the refused fields, `skill` the skill that declares the
    override and `include_path` the include path to it.
    """

    fields: List[str] = []
    skill: Optional[str] = None
    include_path: Optional[str] = None


class DiscoveryConflictError(RegistryError, ValueError):
    """Discovery with `on_conflict="error"` met a name that is taken; nothing was registered."""


class StoreError(RegistryError):
    """The database refused or failed (I/O, connection, schema, a concurrent change, ...)."""


class ToolCallError(RegistryError):
    """A tool call was refused before it ran or could not finish.

    `rule` names the rule that refused it (`read-only`, `approval-required`,
    `beneath-root`, ...) when one did.
    """

    rule: Optional[str] = None


class ConfigError(RegistryError):
    """Settings cannot be resolved (the config file, an environment variable)."""


class RegistryWarning(UserWarning):
    """A problem that does not stop the call: an unknown tool, a stale MCP cache, ..."""
