//! The builtin tool specs the CLI ships, so the example skills resolve out of
//! the box. A host program embedding the library registers its own instead.

use agents_core::{ToolRegistry, ToolSource, ToolSpec};
use serde_json::{Value, json};

struct Builtin {
    name: &'static str,
    description: &'static str,
    read_only: bool,
    writes: bool,
    input: fn() -> Value,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "builtin/read_file",
        description: "Read a text file",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "minimum": 0}, "limit": {"type": "integer", "minimum": 1}}, "required": ["path"]}),
    },
    Builtin {
        name: "builtin/write_file",
        description: "Create or overwrite a text file",
        read_only: false,
        writes: true,
        input: || json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}),
    },
    Builtin {
        name: "builtin/edit_file",
        description: "Replace an exact string in a file",
        read_only: false,
        writes: true,
        input: || json!({"type": "object", "properties": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}}, "required": ["path", "old", "new"]}),
    },
    Builtin {
        name: "builtin/list_dir",
        description: "List the entries of a directory",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    },
    Builtin {
        name: "builtin/glob",
        description: "Find files matching a glob pattern",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"pattern": {"type": "string"}, "root": {"type": "string"}}, "required": ["pattern"]}),
    },
    Builtin {
        name: "builtin/grep",
        description: "Search file contents with a regular expression",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}, "ignore_case": {"type": "boolean"}}, "required": ["pattern"]}),
    },
    Builtin {
        name: "builtin/shell",
        description: "Run a shell command",
        read_only: false,
        writes: true,
        input: || json!({"type": "object", "properties": {"command": {"type": "string"}, "cwd": {"type": "string"}, "timeout_s": {"type": "integer", "minimum": 1}}, "required": ["command"]}),
    },
    Builtin {
        name: "builtin/http_get",
        description: "Fetch a URL over HTTP(S)",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"url": {"type": "string", "format": "uri"}}, "required": ["url"]}),
    },
    Builtin {
        name: "builtin/git_status",
        description: "Show the working tree status",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"repo": {"type": "string"}}}),
    },
    Builtin {
        name: "builtin/git_diff",
        description: "Show changes between commits or the working tree",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"repo": {"type": "string"}, "rev": {"type": "string"}}}),
    },
    Builtin {
        name: "builtin/git_commit",
        description: "Record staged changes",
        read_only: false,
        writes: true,
        input: || json!({"type": "object", "properties": {"repo": {"type": "string"}, "message": {"type": "string"}}, "required": ["message"]}),
    },
];

/// The shipped builtin tool specs, in a stable order.
pub fn builtin_tools() -> Vec<ToolSpec> {
    BUILTINS
        .iter()
        .map(|b| {
            let mut spec = ToolSpec::new(b.name, b.description, ToolSource::Builtin);
            spec.input_schema = Some((b.input)());
            spec.read_only = Some(b.read_only);
            spec.writes = Some(b.writes);
            spec.side_effects = Some(b.writes);
            spec
        })
        .collect()
}

/// The builtin tools as a registry. Their schemas are not checked against
/// the meta-schema here, on every start: they are code, and the test
/// `builtins_are_valid_and_unique` checks them.
pub fn builtin_registry() -> Result<ToolRegistry, agents_core::RegistryError> {
    let mut registry = ToolRegistry::new();
    for tool in builtin_tools() {
        registry.register_known_valid(tool)?;
    }
    Ok(registry)
}

#[cfg(test)]
mod tests {
    #[test]
    fn builtins_are_valid_and_unique() {
        let tools = super::builtin_tools();
        let mut registry = agents_core::ToolRegistry::new();
        for tool in tools {
            registry.register(tool, false).unwrap();
        }
        assert_eq!(registry.len(), super::BUILTINS.len());
        let unchecked = super::builtin_registry().unwrap();
        assert!(registry.list(None).eq(unchecked.list(None)));
    }
}
