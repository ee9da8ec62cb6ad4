//! `agents mcp serve`: a real MCP server (rmcp's server side) that serves the
//! resolved tool set of one or more skills and proxies `tools/call` to the
//! upstream MCP servers the tools come from.
//!
//! - Only MCP tools are served: builtin and custom tools have no executor here,
//!   and tools of an untrusted server are left out (an untrusted server is never
//!   started). [`Plan::left_out`] says which and why.
//! - Upstreams start on first use, one session per server definition (launch-spec
//!   digest), reused across calls; a crashed or timed-out server is dropped (its
//!   process group killed) and started again on the next call.
//! - Arguments are validated against the tool's input schema before they are
//!   forwarded; a violation is a tool error (`isError: true`) naming the field.
//! - Shutdown: [`Gateway::shutdown`] closes every upstream; dropping the gateway
//!   (e.g. on a signal) SIGKILLs their process groups.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use agents_core::{ExportFormat, LeftOut, ToolSource, export_tools};
use agents_mcp::{FetchOptions, Upstream};
use agents_registry::{McpDefinition, ServeSet};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

/// One tool the gateway serves.
#[derive(Debug, Clone)]
pub struct ServedTool {
    /// The MCP `Tool` as served (export name, schemas, annotations, `_meta`).
    pub tool: Value,
    /// Export name.
    pub export_name: String,
    /// Registry name (`mcp:{server}/{tool}`).
    pub registry_name: String,
    /// The tool's own name on its server.
    pub server_tool: String,
    /// The server definition it comes from.
    pub definition: McpDefinition,
    /// Call timeout.
    pub timeout: Duration,
}

/// What the gateway serves and what it leaves out.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Served tools, in entry order.
    pub served: Vec<ServedTool>,
    /// Entries not served, and why.
    pub left_out: Vec<LeftOut>,
    /// Resolution warnings.
    pub warnings: Vec<String>,
}

/// Decides what to serve from a resolved set. The call timeout is the
/// entry's `timeout_s` override, else the server's `timeout_s`, else
/// `default_timeout`.
pub fn plan(set: &ServeSet, default_timeout: Duration) -> Plan {
    let exported = export_tools(&set.entries, ExportFormat::Mcp);
    let mut left_out = exported.left_out;
    let mut served = Vec::new();
    for tool in exported.tools {
        let Some(registry_name) = tool["_meta"][agents_core::META_NAME].as_str() else {
            continue;
        };
        let Some(entry) = set.entries.iter().find(|e| e.name == registry_name) else {
            continue;
        };
        let Some(spec) = entry.tool.as_ref().filter(|t| t.source == ToolSource::Mcp) else {
            continue;
        };
        let meta = |key: &str| spec.source_metadata.get(key).and_then(Value::as_str);
        let (Some(digest), Some(server_tool)) = (meta("spec_digest"), meta("tool")) else {
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
        if !definition.trusted {
            left_out.push(LeftOut {
                name: entry.name.clone(),
                reason: format!(
                    "mcp server `{}` is not trusted on this machine (run `agents mcp trust {}`)",
                    definition.server, definition.server
                ),
            });
            continue;
        }
        let timeout = entry
            .overrides
            .get("timeout_s")
            .and_then(Value::as_u64)
            .filter(|s| *s > 0)
            .or(definition.source.timeout_s)
            .map_or(default_timeout, Duration::from_secs);
        served.push(ServedTool {
            export_name: tool["name"].as_str().unwrap_or_default().to_owned(),
            registry_name: registry_name.to_owned(),
            server_tool: server_tool.to_owned(),
            definition: definition.clone(),
            timeout,
            tool,
        });
    }
    Plan {
        served,
        left_out,
        warnings: set.warnings.clone(),
    }
}

/// Checks `arguments` against `schema`; the error names the field.
pub fn check_arguments(tool: &str, schema: &Value, arguments: &Value) -> Result<(), String> {
    let validator = jsonschema::validator_for(schema)
        .map_err(|err| format!("tool `{tool}` has an invalid input schema: {err}"))?;
    let problems: Vec<String> = validator
        .iter_errors(arguments)
        .take(5)
        .map(|err| {
            let path = err.instance_path().to_string();
            if path.is_empty() {
                err.to_string()
            } else {
                format!("`{path}`: {err}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "invalid arguments for `{tool}`: {}",
            problems.join("; ")
        ))
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Upstream>>>;

struct Shared {
    plan: RwLock<Arc<Plan>>,
    options: FetchOptions,
    upstreams: tokio::sync::Mutex<HashMap<String, Slot>>,
}

/// The gateway: an rmcp [`rmcp::ServerHandler`]; clones share one state.
#[derive(Clone)]
pub struct Gateway {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").finish_non_exhaustive()
    }
}

fn tool_error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl Gateway {
    /// A gateway serving `plan`; upstreams are started with `options`.
    pub fn new(plan: Plan, options: FetchOptions) -> Self {
        Self {
            shared: Arc::new(Shared {
                plan: RwLock::new(Arc::new(plan)),
                options,
                upstreams: tokio::sync::Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The plan being served.
    pub fn plan(&self) -> Arc<Plan> {
        self.shared
            .plan
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Replaces the plan (after a re-resolution); true when the tool list changed.
    pub fn replace_plan(&self, plan: Plan) -> bool {
        let mut current = self
            .shared
            .plan
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changed = current
            .served
            .iter()
            .map(|t| &t.tool)
            .ne(plan.served.iter().map(|t| &t.tool));
        *current = Arc::new(plan);
        changed
    }

    /// The `tools/list` result.
    pub fn list(&self) -> Vec<Value> {
        self.plan().served.iter().map(|t| t.tool.clone()).collect()
    }

    /// Runs one `tools/call`; `None` when no served tool has that name.
    pub async fn call(&self, name: &str, arguments: Option<Value>) -> Option<CallToolResult> {
        let plan = self.plan();
        let served = plan.served.iter().find(|t| t.export_name == name)?.clone();
        drop(plan);
        let arguments = arguments.unwrap_or_else(|| json!({}));
        let schema = served.tool["inputSchema"].clone();
        if let Err(message) = check_arguments(&served.export_name, &schema, &arguments) {
            return Some(tool_error(message));
        }
        let Value::Object(arguments) = arguments else {
            return Some(tool_error(format!(
                "invalid arguments for `{name}`: expected an object"
            )));
        };
        let slot = {
            let mut upstreams = self.shared.upstreams.lock().await;
            upstreams
                .entry(served.definition.digest.clone())
                .or_default()
                .clone()
        };
        let mut upstream = slot.lock().await;
        if upstream.as_mut().is_some_and(Upstream::is_closed) {
            tracing::info!(server = %served.definition.server, "mcp server is gone; restarting it");
            if let Some(old) = upstream.take() {
                old.close().await;
            }
        }
        if upstream.is_none() {
            match agents_mcp::connect(&served.definition.source, &self.shared.options, None).await {
                Ok(started) => *upstream = Some(started),
                Err(err) => return Some(tool_error(err.to_string())),
            }
        }
        let running = upstream.as_mut()?;
        match running
            .call_tool(&served.server_tool, Some(arguments), served.timeout)
            .await
        {
            Ok(result) => Some(serde_json::from_value(result).unwrap_or_else(|err| {
                tool_error(format!(
                    "mcp server `{}` returned a result that is not a CallToolResult: {err}",
                    served.definition.server
                ))
            })),
            Err(err) => {
                // Crashed, hung or broken: stop it; the next call starts it again.
                if let Some(old) = upstream.take() {
                    old.close().await;
                }
                Some(tool_error(err.to_string()))
            }
        }
    }

    /// Stops every upstream server it started.
    pub async fn shutdown(&self) {
        let slots: Vec<Slot> = self
            .shared
            .upstreams
            .lock()
            .await
            .drain()
            .map(|(_, slot)| slot)
            .collect();
        for slot in slots {
            if let Some(upstream) = slot.lock().await.take() {
                upstream.close().await;
            }
        }
    }
}

impl rmcp::ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "agents-gateway",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Tools of skills resolved by the `agents` skill registry; \
                 `_meta[\"io.cleveragents/name\"]` is each tool's registry name.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Tool> = self
            .list()
            .into_iter()
            .filter_map(|tool| serde_json::from_value(tool).ok())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object);
        match self.call(&request.name, arguments).await {
            Some(result) => Ok(CallToolResponse::Complete(result)),
            None => Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            )),
        }
    }
}

/// Why the gateway could not serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The client's `initialize` failed or the transport broke at once.
    #[error("mcp serve: the client session could not start: {0}")]
    Session(String),
}

impl GatewayError {
    /// A stable name for scripts.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Session(_) => "mcp_serve",
        }
    }
}

impl Gateway {
    /// Serves one client over stdin/stdout until it disconnects, then stops
    /// every upstream.
    pub async fn serve_stdio(&self) -> Result<(), GatewayError> {
        use rmcp::ServiceExt;
        let running = self
            .clone()
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|err| GatewayError::Session(err.to_string()))?;
        let quit = running.waiting().await;
        tracing::debug!(?quit, "mcp client disconnected");
        self.shutdown().await;
        Ok(())
    }
}
