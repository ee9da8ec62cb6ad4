//! The builtin tools: their names, specs (the schemas clients see) and the
//! arguments each executor takes, side by side so the two cannot drift (the
//! test `arguments_match_the_schemas` compares them).

use agents_core::{ToolRegistry, ToolSource, ToolSpec};
use serde::Deserialize;
use serde_json::{Value, json};

/// One of the builtin tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Builtin {
    ReadFile,
    WriteFile,
    EditFile,
    ListDir,
    Glob,
    Grep,
    Shell,
    HttpGet,
    GitStatus,
    GitDiff,
    GitCommit,
}

impl Builtin {
    /// Every builtin, in the order the specs are listed.
    pub const ALL: [Builtin; 11] = [
        Builtin::ReadFile,
        Builtin::WriteFile,
        Builtin::EditFile,
        Builtin::ListDir,
        Builtin::Glob,
        Builtin::Grep,
        Builtin::Shell,
        Builtin::HttpGet,
        Builtin::GitStatus,
        Builtin::GitDiff,
        Builtin::GitCommit,
    ];

    /// The short name, `read_file`.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The registry name, `builtin/read_file`.
    pub fn spec_name(self) -> &'static str {
        self.spec().spec_name
    }

    /// The builtin called `name`, either the registry name
    /// (`builtin/read_file`) or the short one (`read_file`).
    pub fn from_name(name: &str) -> Option<Self> {
        let short = name.strip_prefix("builtin/").unwrap_or(name);
        Self::ALL.into_iter().find(|b| b.name() == short)
    }

    /// Whether the tool can change files, run programs or record commits.
    pub fn writes(self) -> bool {
        self.spec().writes
    }

    fn spec(self) -> &'static Spec {
        match self {
            Builtin::ReadFile => &SPECS[0],
            Builtin::WriteFile => &SPECS[1],
            Builtin::EditFile => &SPECS[2],
            Builtin::ListDir => &SPECS[3],
            Builtin::Glob => &SPECS[4],
            Builtin::Grep => &SPECS[5],
            Builtin::Shell => &SPECS[6],
            Builtin::HttpGet => &SPECS[7],
            Builtin::GitStatus => &SPECS[8],
            Builtin::GitDiff => &SPECS[9],
            Builtin::GitCommit => &SPECS[10],
        }
    }
}

struct Spec {
    spec_name: &'static str,
    name: &'static str,
    description: &'static str,
    read_only: bool,
    writes: bool,
    input: fn() -> Value,
}

const SPECS: [Spec; 11] = [
    Spec {
        spec_name: "builtin/read_file",
        name: "read_file",
        description: "Read a text file",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "minimum": 0}, "limit": {"type": "integer", "minimum": 1}}, "required": ["path"]}),
    },
    Spec {
        spec_name: "builtin/write_file",
        name: "write_file",
        description: "Create or overwrite a text file",
        read_only: false,
        writes: true,
        input: || json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}),
    },
    Spec {
        spec_name: "builtin/edit_file",
        name: "edit_file",
        description: "Replace an exact string in a file",
        read_only: false,
        writes: true,
        input: || json!({"type": "object", "properties": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}}, "required": ["path", "old", "new"]}),
    },
    Spec {
        spec_name: "builtin/list_dir",
        name: "list_dir",
        description: "List the entries of a directory",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    },
    Spec {
        spec_name: "builtin/glob",
        name: "glob",
        description: "Find files matching a glob pattern",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"pattern": {"type": "string"}, "root": {"type": "string"}}, "required": ["pattern"]}),
    },
    Spec {
        spec_name: "builtin/grep",
        name: "grep",
        description: "Search file contents with a regular expression",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}, "ignore_case": {"type": "boolean"}}, "required": ["pattern"]}),
    },
    Spec {
        spec_name: "builtin/shell",
        name: "shell",
        description: "Run a shell command",
        read_only: false,
        writes: true,
        input: || json!({"type": "object", "properties": {"command": {"type": "string"}, "cwd": {"type": "string"}, "timeout_s": {"type": "integer", "minimum": 1}}, "required": ["command"]}),
    },
    Spec {
        spec_name: "builtin/http_get",
        name: "http_get",
        description: "Fetch a URL over HTTP(S)",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"url": {"type": "string", "format": "uri"}}, "required": ["url"]}),
    },
    Spec {
        spec_name: "builtin/git_status",
        name: "git_status",
        description: "Show the working tree status",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"repo": {"type": "string"}}}),
    },
    Spec {
        spec_name: "builtin/git_diff",
        name: "git_diff",
        description: "Show changes between commits or the working tree",
        read_only: true,
        writes: false,
        input: || json!({"type": "object", "properties": {"repo": {"type": "string"}, "rev": {"type": "string"}}}),
    },
    Spec {
        spec_name: "builtin/git_commit",
        name: "git_commit",
        description: "Record staged changes",
        read_only: false,
        writes: true,
        input: || json!({"type": "object", "properties": {"repo": {"type": "string"}, "message": {"type": "string"}}, "required": ["message"]}),
    },
];

/// The shipped builtin tool specs, in a stable order.
pub fn builtin_tools() -> Vec<ToolSpec> {
    SPECS
        .iter()
        .map(|b| {
            let mut spec = ToolSpec::new(b.spec_name, b.description, ToolSource::Builtin);
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

// The arguments each executor takes: one field a property of the schema
// above, optional where the schema does not require it. Properties the
// schemas do not list are ignored, as the schemas allow them.

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct ReadFileArgs {
    pub path: String,
    pub offset: Option<u64>,
    pub limit: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct WriteFileArgs {
    pub path: String,
    pub content: String,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct EditFileArgs {
    pub path: String,
    pub old: String,
    pub new: String,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct ListDirArgs {
    pub path: String,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct GlobArgs {
    pub pattern: String,
    pub root: Option<String>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct GrepArgs {
    pub pattern: String,
    pub path: Option<String>,
    pub ignore_case: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct ShellArgs {
    pub command: String,
    pub cwd: Option<String>,
    pub timeout_s: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct HttpGetArgs {
    pub url: String,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct GitStatusArgs {
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct GitDiffArgs {
    pub repo: Option<String>,
    pub rev: Option<String>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct GitCommitArgs {
    pub repo: Option<String>,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn builtins_are_valid_and_unique() {
        let tools = builtin_tools();
        let mut registry = agents_core::ToolRegistry::new();
        for tool in tools {
            registry.register(tool, false).unwrap();
        }
        assert_eq!(registry.len(), SPECS.len());
        let unchecked = builtin_registry().unwrap();
        assert!(registry.list(None).eq(unchecked.list(None)));
    }

    #[test]
    fn names_round_trip() {
        for (builtin, spec) in Builtin::ALL.into_iter().zip(builtin_tools()) {
            assert_eq!(builtin.spec_name(), spec.name);
            assert_eq!(spec.name, format!("builtin/{}", builtin.name()));
            assert_eq!(Builtin::from_name(&spec.name), Some(builtin));
            assert_eq!(Builtin::from_name(builtin.name()), Some(builtin));
        }
        assert_eq!(Builtin::from_name("builtin/rm_rf"), None);
    }

    /// The property names, the required ones, and each property's JSON type.
    fn shape(schema: &Value) -> (BTreeSet<(String, String)>, BTreeSet<String>) {
        let types = schema["properties"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, property)| {
                // schemars writes an optional field as `["string", "null"]`.
                let ty = match &property["type"] {
                    Value::Array(types) => types
                        .iter()
                        .find(|t| *t != "null")
                        .unwrap()
                        .as_str()
                        .unwrap()
                        .to_owned(),
                    ty => ty.as_str().unwrap().to_owned(),
                };
                (name.clone(), ty)
            })
            .collect();
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().map(|n| n.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        (types, required)
    }

    #[test]
    fn arguments_match_the_schemas() {
        let derived = [
            schemars::schema_for!(ReadFileArgs),
            schemars::schema_for!(WriteFileArgs),
            schemars::schema_for!(EditFileArgs),
            schemars::schema_for!(ListDirArgs),
            schemars::schema_for!(GlobArgs),
            schemars::schema_for!(GrepArgs),
            schemars::schema_for!(ShellArgs),
            schemars::schema_for!(HttpGetArgs),
            schemars::schema_for!(GitStatusArgs),
            schemars::schema_for!(GitDiffArgs),
            schemars::schema_for!(GitCommitArgs),
        ];
        for (spec, args) in builtin_tools().iter().zip(derived) {
            let declared = shape(spec.input_schema.as_ref().unwrap());
            let taken = shape(&serde_json::to_value(args).unwrap());
            assert_eq!(declared, taken, "{}", spec.name);
        }
    }
}
