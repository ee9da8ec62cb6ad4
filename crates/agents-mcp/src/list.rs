//! `tools/list` with bounded pagination, and the mapping of MCP tools onto
//! [`ToolSpec`]s.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use agents_core::{Meta, ToolSource, ToolSpec, check_schema, validate_tool_name};
use rmcp::RoleClient;
use rmcp::model::{PaginatedRequestParams, Tool, ToolAnnotations};
use rmcp::service::{Peer, ServiceError};
use serde_json::Value;

use crate::error::McpError;
use crate::{McpTransport, RejectedTool};
use agents_core::text::shorten;

/// Why listing stopped: a limit of ours, or an error from rmcp that the
/// transport-specific code turns into a diagnosis.
#[derive(Debug)]
pub(crate) enum Failure {
    Fatal(McpError),
    Service(ServiceError),
}

#[derive(Debug)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<ToolSpec>,
    pub(crate) rejected: Vec<RejectedTool>,
}

#[derive(Debug)]
pub(crate) struct ListLimits {
    pub(crate) max_tools: usize,
    pub(crate) max_pages: usize,
}

pub(crate) async fn list_all(
    peer: &Peer<RoleClient>,
    server: &str,
    transport: McpTransport,
    fetched_at: &str,
    limits: &ListLimits,
) -> Result<Listing, Failure> {
    let mut listing = Listing {
        tools: Vec::new(),
        rejected: Vec::new(),
    };
    let mut names = HashSet::new();
    // Hashes, not the cursors: a hostile server could send huge ones.
    let mut seen_cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut listed = 0usize;
    for _page in 0..limits.max_pages {
        let params = cursor
            .take()
            .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let page = peer.list_tools(params).await.map_err(Failure::Service)?;
        listed = listed.saturating_add(page.tools.len());
        if listed > limits.max_tools {
            return Err(Failure::Fatal(McpError::TooManyTools {
                server: server.to_owned(),
                limit: limits.max_tools,
            }));
        }
        for tool in page.tools {
            if !names.insert(tool.name.to_string()) {
                listing.rejected.push(RejectedTool {
                    server: server.to_owned(),
                    tool: tool.name.to_string(),
                    reason: "listed more than once".into(),
                });
                continue;
            }
            match to_spec(server, transport, fetched_at, tool) {
                Ok(spec) => listing.tools.push(spec),
                Err(rejected) => {
                    // Debug only: the caller reports `rejected` (the CLI as
                    // a warning), so a warning here said it twice.
                    tracing::debug!("{rejected}");
                    listing.rejected.push(rejected);
                }
            }
        }
        match page.next_cursor {
            None => return Ok(listing),
            Some(next) => {
                let mut hasher = DefaultHasher::new();
                next.hash(&mut hasher);
                if !seen_cursors.insert(hasher.finish()) {
                    return Err(Failure::Fatal(McpError::CursorLoop {
                        server: server.to_owned(),
                        cursor: shorten(&next, 60).into_owned(),
                    }));
                }
                cursor = Some(next);
            }
        }
    }
    Err(Failure::Fatal(McpError::TooManyPages {
        server: server.to_owned(),
        limit: limits.max_pages,
    }))
}

/// Maps one MCP tool; a tool whose name or schemas break the catalogue's rules
/// is rejected (and reported) rather than failing the whole server.
fn to_spec(
    server: &str,
    transport: McpTransport,
    fetched_at: &str,
    tool: Tool,
) -> Result<ToolSpec, RejectedTool> {
    let original = tool.name.to_string();
    let reject = |reason: String| RejectedTool {
        server: server.to_owned(),
        tool: original.clone(),
        reason,
    };
    let name = format!("mcp:{server}/{original}");
    validate_tool_name(&name).map_err(|err| reject(err.message))?;

    let input_schema = Value::Object(std::sync::Arc::unwrap_or_clone(tool.input_schema));
    check_schema(&input_schema).map_err(|message| reject(format!("`inputSchema`: {message}")))?;
    let output_schema = match tool.output_schema {
        Some(schema) => {
            let schema = Value::Object(std::sync::Arc::unwrap_or_clone(schema));
            check_schema(&schema)
                .map_err(|message| reject(format!("`outputSchema`: {message}")))?;
            Some(schema)
        }
        None => None,
    };

    let title = tool
        .title
        .clone()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()));
    let annotations = tool
        .annotations
        .as_ref()
        .and_then(|annotations| serde_json::to_value(annotations).ok());
    let mut spec = ToolSpec::new(
        name,
        tool.description.map(|d| d.into_owned()).unwrap_or_default(),
        ToolSource::Mcp,
    );
    spec.set_meta(Meta::Server, server);
    spec.set_meta(Meta::Transport, transport.as_str());
    spec.set_meta(Meta::FetchedAt, fetched_at);
    spec.set_meta(Meta::Tool, original.as_str());
    if let Some(title) = title {
        spec.set_meta(Meta::Title, title);
    }
    if let Some(annotations) = annotations {
        spec.set_meta(Meta::Annotations, annotations);
    }
    // Kept so that the gateway knows a tool it cannot call (one that
    // requires task augmentation); the watcher put it under `_meta`.
    if let Some(execution) = tool
        .meta
        .as_ref()
        .and_then(|meta| meta.get(crate::process::EXECUTION_META))
    {
        spec.set_meta(Meta::Execution, execution.clone());
    }
    spec.input_schema = Some(input_schema);
    spec.output_schema = output_schema;
    if let Some(annotations) = &tool.annotations {
        apply_annotations(&mut spec, annotations);
    }
    Ok(spec)
}

/// MCP annotations are hints from the server; they are mapped only when given:
/// - `readOnlyHint: true` → read-only, no writes, no side effects (it wins over
///   `destructiveHint`, which the spec says only matters when not read-only);
/// - `readOnlyHint: false`, or a `destructiveHint` without `readOnlyHint` (the
///   tool updates its environment, additively or not) → writes, side effects;
/// - no hint → all three stay unknown (`None`).
///
/// `idempotentHint` and `openWorldHint` have no field of their own; they are kept
/// in `source_metadata.annotations`. `checkpointable` is never set from MCP.
fn apply_annotations(spec: &mut ToolSpec, annotations: &ToolAnnotations) {
    match (annotations.read_only_hint, annotations.destructive_hint) {
        (Some(true), _) => {
            spec.read_only = Some(true);
            spec.writes = Some(false);
            spec.side_effects = Some(false);
        }
        (Some(false), _) | (None, Some(_)) => {
            spec.read_only = Some(false);
            spec.writes = Some(true);
            spec.side_effects = Some(true);
        }
        (None, None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(name: &str, schema: Value) -> Tool {
        let Value::Object(map) = schema else {
            panic!("schema must be an object")
        };
        Tool::new(name.to_owned(), "d", Arc::new(map))
    }

    #[test]
    fn maps_names_schemas_and_metadata() {
        let spec = to_spec(
            "gh",
            McpTransport::Stdio,
            "2026-01-01T00:00:00Z",
            tool("create_issue", json!({"type": "object"})),
        )
        .unwrap();
        assert_eq!(spec.name, "mcp:gh/create_issue");
        assert_eq!(spec.source, ToolSource::Mcp);
        assert_eq!(spec.input_schema, Some(json!({"type": "object"})));
        assert_eq!(
            Value::Object(spec.source_metadata),
            json!({"server": "gh", "transport": "stdio", "fetched_at": "2026-01-01T00:00:00Z", "tool": "create_issue"})
        );
        assert_eq!(
            (spec.read_only, spec.writes, spec.side_effects),
            (None, None, None)
        );
    }

    #[test]
    fn rejects_invalid_schemas_and_names() {
        let err = to_spec(
            "gh",
            McpTransport::Http,
            "t",
            tool("x", json!({"type": "objekt"})),
        )
        .unwrap_err();
        assert_eq!(err.tool, "x");
        assert!(
            err.to_string().starts_with(
                "mcp server `gh`: tool `x` skipped: `inputSchema`: not a valid JSON Schema"
            ),
            "{err}"
        );
        assert!(to_spec("gh", McpTransport::Http, "t", tool("has space", json!({}))).is_err());
    }

    #[test]
    fn annotations_map_onto_capabilities() {
        let mapped = |annotations: ToolAnnotations| {
            let spec = to_spec(
                "s",
                McpTransport::Stdio,
                "t",
                tool("t", json!({})).with_annotations(annotations),
            )
            .unwrap();
            (spec.read_only, spec.writes, spec.side_effects)
        };
        assert_eq!(
            mapped(ToolAnnotations::new().read_only(true).destructive(true)),
            (Some(true), Some(false), Some(false))
        );
        assert_eq!(
            mapped(ToolAnnotations::new().read_only(false)),
            (Some(false), Some(true), Some(true))
        );
        assert_eq!(
            mapped(ToolAnnotations::new().destructive(false)),
            (Some(false), Some(true), Some(true))
        );
        assert_eq!(
            mapped(ToolAnnotations::new().open_world(true)),
            (None, None, None)
        );
    }
}
