//! What the gateway serves of a resolved set, and what it leaves out and
//! why: [`Serving::decide`] is the one place that decides, for `mcp serve`,
//! its `--dry-run` and `skill tools --served` alike. A tool is served when
//! something here can run it (a builtin of this version, or a tool of a
//! trusted MCP server whose cached entry names its definition); every other
//! entry the skills name is a [`LeftOut`] with its reason, which the
//! server's [`instructions`] repeat for a client whose user never sees the
//! gateway's log.

use std::sync::Arc;
use std::time::Duration;

use agents_core::{ExportFormat, LeftOut, Meta, ToolSource, export_tools};
use agents_registry::{McpDefinition, ServeSet};
use serde_json::Value;

use crate::ServedSkill;
use crate::arguments::compile;

/// What runs a served tool.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Backend {
    /// A tool of an upstream MCP server, proxied.
    Mcp {
        /// The server definition it comes from.
        definition: Box<McpDefinition>,
        /// Its launch spec as this user consented to it: what the gateway
        /// starts ([`agents_mcp::connect`] takes nothing else).
        launch: Box<agents_trust::TrustedLaunch>,
        /// The tool's own name on its server.
        server_tool: String,
    },
    /// A builtin tool, run in process ([`crate::local`]).
    Builtin(agents_tools::Builtin),
    /// A custom or inline tool's `run` this user consented to, run in
    /// process under the same policy as builtins.
    Run(Box<agents_tools::TrustedRunTool>),
}

/// One tool the gateway serves.
#[derive(Debug, Clone)]
pub struct ServedTool {
    /// The MCP `Tool` as served (export name, schemas, annotations, `_meta`).
    pub tool: Value,
    /// Export name.
    pub export_name: String,
    /// Registry name (`mcp:{server}/{tool}`, `builtin/read_file`).
    pub registry_name: String,
    /// What runs it.
    pub backend: Backend,
    /// The skill whose item produced the entry.
    pub source_skill: String,
    /// The include path from the served skill to `source_skill`.
    pub include_path: String,
    /// The entry's overrides, merged (the policy of its calls).
    pub overrides: agents_core::ValueMap,
    /// The deadline of a proxied call (the entry's `timeout_s`, else its
    /// server's, else the default); a builtin call has one only when the
    /// entry's `timeout_s` sets it.
    pub timeout: Duration,
    /// The checker of its arguments (validator and step counter), compiled
    /// at its first call and reused by every call after it; each resolution
    /// makes new tools, so a changed schema is compiled again (compiling it
    /// for every call was most of the gateway's own work per call).
    checker: Arc<std::sync::OnceLock<Result<crate::arguments::Checker, String>>>,
}

impl ServedTool {
    /// The server definition of a proxied tool.
    pub fn definition(&self) -> Option<&McpDefinition> {
        match &self.backend {
            Backend::Mcp { definition, .. } => Some(definition),
            Backend::Builtin(_) | Backend::Run(_) => None,
        }
    }

    /// Checks `arguments` against the tool's input schema, as
    /// [`check_arguments`] does, with the checker compiled once.
    pub fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        let schema = self.tool.get("inputSchema").unwrap_or(&Value::Null);
        self.checker
            .get_or_init(|| compile(&self.export_name, schema))
            .as_ref()?
            .check(&self.export_name, arguments)
    }
}

/// What the gateway serves of a resolved set ([`ServeSet`]) and what it
/// leaves out, and why; not the plan file ([`agents_core::Plan`]).
#[derive(Debug, Clone, Default)]
pub struct Serving {
    /// Served tools, in entry order.
    pub served: Vec<ServedTool>,
    /// Agent Skills served as resources, in entry order.
    pub skills: Vec<ServedSkill>,
    /// Entries not served, and why.
    pub left_out: Vec<LeftOut>,
    /// Resolution warnings.
    pub warnings: Vec<String>,
}

impl Serving {
    /// Decides what to serve from a resolved set. The call timeout is the
    /// entry's `timeout_s` override, else the server's `timeout_s`, else
    /// `default_timeout`.
    pub fn decide(set: &ServeSet, default_timeout: Duration) -> Self {
        let exported = export_tools(&set.entries, ExportFormat::Mcp);
        // Looked up by name once each, not found by a scan per entry: a set of
        // tens of thousands of entries cost seconds.
        let by_name: std::collections::HashMap<&str, &agents_core::ResolvedToolEntry> = set
            .entries
            .iter()
            .map(|entry| (entry.name.as_str(), entry))
            .collect();
        let mut skills: Vec<ServedSkill> = Vec::new();
        let mut skill_names: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut not_own: Vec<LeftOut> = Vec::new();
        for entry in &set.entries {
            let Some(spec) = entry.tool.as_ref() else {
                continue;
            };
            let Some(mut skill) = ServedSkill::of(spec) else {
                continue;
            };
            // As a lock names it.
            skill.entry.clone_from(&entry.name);
            if !set.is_own_folder(spec) {
                not_own.push(LeftOut {
                    name: entry.name.clone(),
                    reason: agents_registry::not_discovered(&skill.folder),
                });
                continue;
            }
            if skill_names.insert(skill.name.clone()) {
                skills.push(skill);
            }
        }
        // Agent Skills are served as resources, not as tools.
        let mut left_out: Vec<LeftOut> = exported
            .left_out
            .into_iter()
            .filter(|l| {
                by_name
                    .get(l.name.as_str())
                    .is_none_or(|e| e.tool.as_ref().and_then(ServedSkill::of).is_none())
            })
            .map(|mut l| {
                // An MCP tool the catalogue does not know because its server is
                // not trusted, or was never queried: said as such.
                let unknown = by_name
                    .get(l.name.as_str())
                    .is_some_and(|e| e.tool.is_none());
                if let Some(reason) = mcp_server_of(&l.name)
                    .filter(|_| unknown)
                    .and_then(|server| unlisted_reason(set, server))
                {
                    l.reason = reason;
                }
                l
            })
            .collect();
        // A server none of whose tools a skill names (no allow-list) and whose
        // list was never fetched leaves out everything it has: said once.
        for server in &set.uncached {
            let named = set
                .entries
                .iter()
                .any(|e| mcp_server_of(&e.name) == Some(server.as_str()));
            if !named && let Some(reason) = unlisted_reason(set, server) {
                left_out.push(LeftOut {
                    name: format!("mcp:{server}"),
                    reason,
                });
            }
        }
        left_out.extend(not_own);
        let mut served = Vec::new();
        for tool in exported.tools {
            let Some(registry_name) = tool
                .get("_meta")
                .and_then(|meta| meta.get(agents_core::META_NAME))
                .and_then(Value::as_str)
            else {
                continue;
            };
            let Some(entry) = by_name.get(registry_name).copied() else {
                continue;
            };
            let registry_name = entry.name.as_str();
            let export_name = tool
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let timeout_override = timeout_s(&entry.overrides).map(|t| t.as_secs());
            let served_tool = |backend: Backend, timeout: Duration, tool: Value| ServedTool {
                export_name: export_name.clone(),
                registry_name: registry_name.to_owned(),
                backend,
                source_skill: entry.source_skill.to_string(),
                include_path: entry.include_path.to_string(),
                overrides: entry.overrides.clone(),
                timeout,
                tool,
                checker: Arc::default(),
            };
            if entry
                .tool
                .as_ref()
                .is_some_and(|t| t.source == ToolSource::Builtin)
            {
                match agents_tools::Builtin::from_name(&entry.name) {
                    Some(builtin) => served.push(served_tool(
                        Backend::Builtin(builtin),
                        timeout_override.map_or(default_timeout, Duration::from_secs),
                        tool,
                    )),
                    None => left_out.push(LeftOut {
                        name: entry.name.clone(),
                        reason: "no builtin of this version of `agents` has that name".into(),
                    }),
                }
                continue;
            }
            if let Some(spec) = entry
                .tool
                .as_ref()
                .filter(|t| t.source == ToolSource::Custom)
            {
                match run_tool(set, &entry.name, spec) {
                    Ok(run) => served.push(served_tool(
                        Backend::Run(Box::new(run)),
                        timeout_override.map_or(default_timeout, Duration::from_secs),
                        tool,
                    )),
                    Err(reason) => left_out.push(LeftOut {
                        name: entry.name.clone(),
                        reason,
                    }),
                }
                continue;
            }
            let Some(spec) = entry.tool.as_ref().filter(|t| t.source == ToolSource::Mcp) else {
                continue;
            };
            let (Some(digest), Some(server_tool)) =
                (spec.meta_str(Meta::SpecDigest), spec.meta_str(Meta::Tool))
            else {
                left_out.push(LeftOut {
                    name: entry.name.clone(),
                    reason: "its cached entry names no server definition".into(),
                });
                continue;
            };
            let Some(definition) = set.servers.iter().find(|d| d.digest == digest) else {
                left_out.push(LeftOut {
                    name: entry.name.clone(),
                    reason: "its server definition is no longer used by the skill".into(),
                });
                continue;
            };
            let Some(launch) = definition.trusted_launch() else {
                left_out.push(LeftOut {
                    name: entry.name.clone(),
                    reason: definition.untrusted_hint(),
                });
                continue;
            };
            let timeout = timeout_override
                .or(definition.source.timeout_s)
                .map_or(default_timeout, Duration::from_secs);
            served.push(served_tool(
                Backend::Mcp {
                    definition: Box::new(definition.clone()),
                    launch: Box::new(launch),
                    server_tool: server_tool.to_owned(),
                },
                timeout,
                tool,
            ));
        }
        Serving {
            served,
            skills,
            left_out,
            warnings: set.warnings.clone(),
        }
    }
}

/// The `run` of the custom or inline tool `spec` (entry `name`) when this
/// user consented to it ([`ServeSet::runs`]), else why it is not served.
/// The reason never quotes what the `run` would start.
fn run_tool(
    set: &ServeSet,
    name: &str,
    spec: &agents_core::ToolSpec,
) -> Result<agents_tools::TrustedRunTool, String> {
    let tool = match agents_tools::RunTool::from_spec(spec) {
        None => {
            return Err(
                "`custom` tools have no executor in the gateway: its definition has no `run`"
                    .into(),
            );
        }
        Some(Err(err)) => return Err(format!("its `run` cannot be read: {err}")),
        Some(Ok(tool)) => tool,
    };
    let digest = tool.digest();
    set.runs
        .get(name)
        .and_then(|consent| agents_tools::TrustedRunTool::new(tool, consent))
        .ok_or_else(|| {
            format!(
                "its `run` (digest `{digest}`) is not trusted on this machine: it never starts \
                 until you review what it runs and trust it"
            )
        })
}

/// The deadline an entry's `timeout_s` override sets.
fn timeout_s(overrides: &agents_core::ValueMap) -> Option<Duration> {
    overrides
        .get("timeout_s")
        .and_then(Value::as_u64)
        .filter(|s| *s > 0)
        .map(Duration::from_secs)
}

/// The server of an MCP entry (`mcp:{server}/{tool}`).
fn mcp_server_of(name: &str) -> Option<&str> {
    name.strip_prefix("mcp:")?
        .split_once('/')
        .map(|(server, _)| server)
}

/// Why the tools of `server` are not known, when that is because no
/// definition of it the set uses is trusted here, or because it has no
/// cached tool list; `None` otherwise (a tool its list does not have).
fn unlisted_reason(set: &ServeSet, server: &str) -> Option<String> {
    let definitions: Vec<&McpDefinition> =
        set.servers.iter().filter(|d| d.server == server).collect();
    let trusted = definitions.iter().find(|d| d.trusted());
    match trusted {
        None => definitions.first().map(|d| d.untrusted_hint()),
        Some(d) if set.uncached.iter().any(|s| s == server) => Some(format!(
            "mcp server `{}` has no cached tool list, so none of its tools is known",
            d.shown_server()
        )),
        Some(_) => None,
    }
}

/// The left-out entries the server's `instructions` name one by one.
const LEFT_OUT_IN_INSTRUCTIONS: usize = 10;

/// The longest reason the server's `instructions` give, in bytes.
const MAX_REASON_BYTES: usize = 400;

/// The server's `instructions` (the `initialize` result): what it serves
/// and, where the skills name something it does not serve, what and why,
/// so a client whose user never sees the gateway's log (Claude Desktop)
/// can tell. Reasons are the served set's own, which never quote what an
/// untrusted definition would run: what a skill's writer wrote does not
/// reach the model as instructions.
pub(crate) fn instructions(serving: &Serving) -> String {
    let mut text = String::from(
        "Tools of skills resolved by the `agents` skill registry; \
         `_meta[\"io.cleveragents/name\"]` is each tool's registry name. \
         Agent Skills of those skills are resources under `skill://<name>/` \
         (see `skills/list`).",
    );
    if serving.left_out.is_empty() {
        return text;
    }
    text.push_str(&format!(
        "\n\nServing {} tool(s) and {} Agent Skill(s); left out of what the skills name ({}):",
        serving.served.len(),
        serving.skills.len(),
        serving.left_out.len()
    ));
    for l in serving.left_out.iter().take(LEFT_OUT_IN_INSTRUCTIONS) {
        text.push_str(&format!(
            "\n- `{}`: {}",
            agents_core::text::escape_control(&agents_core::text::shorten(
                &l.name,
                agents_core::text::MAX_ECHO_BYTES
            )),
            agents_core::text::escape_control(&agents_core::text::shorten(
                &l.reason,
                MAX_REASON_BYTES
            ))
        ));
    }
    if let Some(more) = serving
        .left_out
        .len()
        .checked_sub(LEFT_OUT_IN_INSTRUCTIONS)
        .filter(|more| *more > 0)
    {
        text.push_str(&format!("\n- and {more} more"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arguments::COMPILED;
    use serde_json::json;

    fn served_tool(schema: Value) -> ServedTool {
        let source = agents_core::McpSource {
            server: "up".into(),
            ..agents_core::McpSource::default()
        };
        let store = agents_trust::TrustStore::in_memory();
        let launch = agents_trust::Trust::of_config_server(&store, &source, false)
            .launch(&source)
            .unwrap();
        ServedTool {
            tool: json!({"name": "t", "inputSchema": schema}),
            export_name: "t".into(),
            registry_name: "mcp:up/t".into(),
            backend: Backend::Mcp {
                server_tool: "t".into(),
                definition: Box::new(McpDefinition::untrusted(source, "config")),
                launch: Box::new(launch),
            },
            source_skill: "l/s".into(),
            include_path: "l/s".into(),
            overrides: agents_core::ValueMap::default(),
            timeout: Duration::from_secs(1),
            checker: Arc::default(),
        }
    }

    #[test]
    fn a_validator_is_compiled_once_per_resolved_tool() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let tool = served_tool(schema.clone());
        let before = COMPILED.with(std::cell::Cell::get);
        for _ in 0..3 {
            assert!(tool.check_arguments(&json!({"a": 1})).is_ok());
            assert!(tool.check_arguments(&json!({"a": "x"})).is_err());
        }
        // A clone (what a call takes from the served set) shares it.
        assert!(tool.clone().check_arguments(&json!({"a": 2})).is_ok());
        assert_eq!(COMPILED.with(std::cell::Cell::get) - before, 1);
        // Another resolution's tool compiles its own.
        let again = served_tool(schema);
        assert!(again.check_arguments(&json!({"a": 1})).is_ok());
        assert_eq!(COMPILED.with(std::cell::Cell::get) - before, 2);
        // An invalid schema is said at every call, compiled once too.
        let broken = served_tool(json!({"type": 5}));
        for _ in 0..2 {
            let err = broken.check_arguments(&json!({})).unwrap_err();
            assert!(err.contains("invalid input schema"), "{err}");
        }
        assert_eq!(COMPILED.with(std::cell::Cell::get) - before, 3);
    }
}
