//! MCP refresh: which server definition to use, querying it, and replacing
//! its cached tools in the catalogue in one transaction.

use std::time::Duration;

use agents_core::{McpSource, Skill, SkillItem, SkillName, ToolSource};
use agents_mcp::{FetchOptions, fetch_tools};
use agents_store::{Store, ToolGroup};
use indexmap::IndexMap;
use serde::Serialize;

use crate::error::ServiceError;
use crate::service::SkillRegistryService;

/// The outcome of refreshing one MCP server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpRefresh {
    /// Server name.
    pub server: String,
    /// `stdio` or `http`.
    pub transport: Option<String>,
    /// Tools now cached (on success).
    pub tools: Vec<String>,
    /// Tools the server listed but the catalogue refused.
    pub rejected: Vec<String>,
    /// Why the server could not be queried; the old cache is kept.
    pub error: Option<String>,
    /// When the cache in use was fetched (ISO-8601), if there is one.
    pub cached_at: Option<String>,
}

/// A server known to the registry and its cache state, for `agents mcp list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpServerState {
    /// Server name.
    pub server: String,
    /// Where it is defined: `config` or the first skill that defines it inline.
    pub defined_in: String,
    /// `stdio` or `http`; `None` for a reference to an undefined server.
    pub transport: Option<&'static str>,
    /// Number of cached tools.
    pub cached_tools: usize,
    /// When the cache was fetched.
    pub fetched_at: Option<String>,
    /// The last refresh error, if the last refresh failed.
    pub last_error: Option<String>,
}

/// `source_metadata` key of an MCP tool: its position in the server's
/// `tools/list` answer, so the resolver can keep the server's order.
pub const LIST_INDEX: &str = "list_index";

fn meta_key(server: &str, field: &str) -> String {
    format!("mcp.{server}.{field}")
}

impl<S: Store> SkillRegistryService<S> {
    /// Every MCP server definition the registry knows: configured servers
    /// first, then servers defined inline in skills (the first skill by name
    /// wins when two define the same server differently).
    pub async fn mcp_server_definitions(
        &self,
    ) -> Result<IndexMap<String, (String, McpSource)>, ServiceError> {
        let mut servers: IndexMap<String, (String, McpSource)> = self
            .mcp_servers()
            .iter()
            .map(|(name, source)| (name.clone(), ("config".to_owned(), source.clone())))
            .collect();
        for skill in self.store().all_skills().await? {
            collect_inline(&skill, &mut servers);
        }
        Ok(servers)
    }

    /// The definition of the MCP servers used by `skills` (inline or from
    /// config), by server name.
    fn servers_of(&self, skills: &[&Skill]) -> Result<IndexMap<String, McpSource>, ServiceError> {
        let mut servers = IndexMap::new();
        for skill in skills {
            for item in &skill.items {
                let SkillItem::McpSource(source) = item else {
                    continue;
                };
                if servers.contains_key(&source.server) {
                    continue;
                }
                let definition = if source.is_reference() {
                    self.mcp_servers()
                        .get(&source.server)
                        .cloned()
                        .ok_or_else(|| ServiceError::UnknownMcpServer {
                            skill: skill.name.to_string(),
                            server: source.server.clone(),
                        })?
                } else {
                    source.clone()
                };
                servers.insert(source.server.clone(), definition);
            }
        }
        Ok(servers)
    }

    /// Re-queries the MCP servers used by `name` and its includes.
    pub async fn refresh_mcp_for_skill(
        &self,
        name: &SkillName,
        options: &FetchOptions,
    ) -> Result<Vec<McpRefresh>, ServiceError> {
        let skills = self
            .store()
            .load_closure(std::slice::from_ref(name))
            .await?;
        let refs: Vec<&Skill> = skills.iter().collect();
        let servers = self.servers_of(&refs)?;
        self.refresh_servers(servers, options).await
    }

    /// Re-queries the named servers (all known servers when `names` is empty).
    pub async fn refresh_mcp(
        &self,
        names: &[String],
        options: &FetchOptions,
    ) -> Result<Vec<McpRefresh>, ServiceError> {
        let known = self.mcp_server_definitions().await?;
        let mut servers = IndexMap::new();
        if names.is_empty() {
            for (name, (_, source)) in known {
                if !source.is_reference() {
                    servers.insert(name, source);
                }
            }
        } else {
            for name in names {
                match known.get(name) {
                    Some((_, source)) if !source.is_reference() => {
                        servers.insert(name.clone(), source.clone());
                    }
                    _ => {
                        return Err(ServiceError::Mcp(format!(
                            "mcp server `{name}` is not defined in config.toml or in any skill"
                        )));
                    }
                }
            }
        }
        self.refresh_servers(servers, options).await
    }

    async fn refresh_servers(
        &self,
        servers: IndexMap<String, McpSource>,
        options: &FetchOptions,
    ) -> Result<Vec<McpRefresh>, ServiceError> {
        // Servers are independent: query them concurrently.
        let fetches = servers.values().map(|source| async move {
            (source.server.clone(), fetch_tools(source, options).await)
        });
        let results = futures::future::join_all(fetches).await;
        let mut outcomes = Vec::with_capacity(results.len());
        for (server, result) in results {
            let group = ToolGroup {
                source: ToolSource::Mcp,
                origin: Some(server.clone()),
            };
            match result {
                Ok(mut fetched) => {
                    for (index, tool) in fetched.tools.iter_mut().enumerate() {
                        tool.source_metadata
                            .insert(LIST_INDEX.into(), serde_json::Value::from(index));
                    }
                    let stamp = fetched
                        .fetched_at
                        .format(&time::format_description::well_known::Rfc3339)
                        .unwrap_or_default();
                    self.store()
                        .replace_tool_group(&group, &fetched.tools)
                        .await?;
                    self.store()
                        .set_meta(&meta_key(&server, "fetched_at"), &stamp)
                        .await?;
                    self.store()
                        .set_meta(&meta_key(&server, "last_error"), "")
                        .await?;
                    outcomes.push(McpRefresh {
                        server,
                        transport: Some(fetched.transport.as_str().to_owned()),
                        tools: fetched.tools.iter().map(|t| t.name.clone()).collect(),
                        rejected: fetched.rejected.iter().map(ToString::to_string).collect(),
                        error: None,
                        cached_at: Some(stamp),
                    });
                }
                Err(err) => {
                    let message = err.to_string();
                    self.store()
                        .set_meta(&meta_key(&server, "last_error"), &message)
                        .await?;
                    let cached_at = self
                        .store()
                        .get_meta(&meta_key(&server, "fetched_at"))
                        .await?
                        .filter(|s| !s.is_empty());
                    outcomes.push(McpRefresh {
                        server,
                        transport: None,
                        tools: Vec::new(),
                        rejected: Vec::new(),
                        error: Some(message),
                        cached_at,
                    });
                }
            }
        }
        Ok(outcomes)
    }

    /// Known servers with their cache state.
    pub async fn mcp_server_states(&self) -> Result<Vec<McpServerState>, ServiceError> {
        let known = self.mcp_server_definitions().await?;
        let cached = self.store().list_tools(Some(ToolSource::Mcp)).await?;
        let mut states = Vec::with_capacity(known.len());
        for (server, (defined_in, source)) in known {
            let cached_tools = cached
                .iter()
                .filter(|t| {
                    t.source_metadata.get("server").and_then(|s| s.as_str())
                        == Some(server.as_str())
                })
                .count();
            let transport = if source.url.is_some() {
                Some("http")
            } else if source.command.is_some() {
                Some("stdio")
            } else {
                None
            };
            let fetched_at = self
                .store()
                .get_meta(&meta_key(&server, "fetched_at"))
                .await?
                .filter(|s| !s.is_empty());
            let last_error = self
                .store()
                .get_meta(&meta_key(&server, "last_error"))
                .await?
                .filter(|s| !s.is_empty());
            states.push(McpServerState {
                server,
                defined_in,
                transport,
                cached_tools,
                fetched_at,
                last_error,
            });
        }
        Ok(states)
    }
}

fn collect_inline(skill: &Skill, servers: &mut IndexMap<String, (String, McpSource)>) {
    for item in &skill.items {
        if let SkillItem::McpSource(source) = item
            && !servers.contains_key(&source.server)
        {
            servers.insert(
                source.server.clone(),
                (skill.name.to_string(), source.clone()),
            );
        }
    }
}

/// Default per-server timeout, used when config gives none.
pub const DEFAULT_MCP_TIMEOUT: Duration = Duration::from_secs(30);
