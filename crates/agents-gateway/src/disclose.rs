//! Progressive disclosure of the served tools (`agents mcp serve
//! --disclose all|skills|search|auto`), built on `agents-disclosure`.
//!
//! - A [`Disclosed`] is the catalogue of the tools the gateway serves
//!   (grouped by the skill that defines each, ranked by BM25F) and what the
//!   mode puts in the first `tools/list`. It is built when the gateway
//!   starts and again at every re-resolution ([`Gateway::disclosure_for`]);
//!   a re-resolution whose tools collide with a meta tool is not served.
//! - `skills`: each session's list is the served skills' own tools, the
//!   tools of the skills that session loaded, and the loader
//!   ([`agents_disclosure::LOADER`]). Loading adds a skill's tools for that
//!   session only and sends it `notifications/tools/list_changed`.
//! - `search`: the list is [`agents_disclosure::SEARCH`] and
//!   [`agents_disclosure::CALL`]; `call_tool` runs the named tool through
//!   [`Gateway::call_from`], the path of a direct call (lock, arguments,
//!   approval, policy, audit, timeout).
//! - Disclosure is about the context, not access: a direct `tools/call` of
//!   any served tool works in every mode.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock, Weak};

use agents_core::{ExportFormat, SkillName};
use agents_disclosure::{CALL, Catalog, CatalogTool, Disclosure, LOADER, Mode, SEARCH, ToolText};
use rmcp::model::{CallToolResult, ClientConfig, ContentBlock};
use rmcp::service::{Peer, RoleServer};
use serde::Serialize;
use serde_json::{Value, json};

use crate::calls::tool_error;
use crate::{CancellationToken, Follow, Gateway, Serving, lock};

/// How the gateway discloses the served tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscloseOptions {
    /// The mode.
    pub mode: Mode,
    /// The budget of the first tool list, in estimated tokens (what `auto`
    /// plans for; the others are only checked against it).
    pub budget_tokens: usize,
}

impl Default for DiscloseOptions {
    /// `all`: every tool, as before disclosure existed.
    fn default() -> Self {
        Self {
            mode: Mode::All,
            budget_tokens: agents_disclosure::DEFAULT_BUDGET_TOKENS,
        }
    }
}

/// Why the tools cannot be disclosed as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiscloseError {
    /// A served tool is exported under the name of a meta tool.
    #[error(
        "disclosure mode `{mode}` adds the tool `{meta}`, and the served tool `{registry_name}` \
         (of skill `{skill}`) is exported under that name too: one tool list cannot hold two \
         tools named alike"
    )]
    Collision {
        /// The mode applied.
        mode: Mode,
        /// The meta tool's name.
        meta: String,
        /// The served tool's registry name.
        registry_name: String,
        /// The skill that defines it.
        skill: String,
    },
}

impl DiscloseError {
    /// A stable name for scripts.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Collision { .. } => "disclosure_collision",
        }
    }
}

/// The served tools' catalogue and what the mode puts first.
#[derive(Debug)]
pub struct Disclosed {
    catalog: Catalog,
    plan: Disclosure,
}

/// One skill the loader offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OfferedSkill {
    /// The skill.
    pub skill: String,
    /// How many tools loading it adds.
    pub tools: usize,
}

/// What a disclosure puts first, for `--dry-run` and the start-up line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The mode asked for.
    pub requested: Mode,
    /// The mode applied (what `auto` chose).
    pub mode: Mode,
    /// The budget, in estimated tokens.
    pub budget_tokens: usize,
    /// The export names of the served tools in the first list.
    pub eager: Vec<String>,
    /// The meta tools of the first list.
    pub meta: Vec<String>,
    /// The skills the loader offers.
    pub offered: Vec<OfferedSkill>,
    /// The served tools not in the first list.
    pub deferred: usize,
    /// Bytes and estimated tokens of the first list.
    pub bytes: usize,
    /// See `bytes`.
    pub tokens: usize,
    /// Bytes and estimated tokens of every served tool (`all`).
    pub all_bytes: usize,
    /// See `all_bytes`.
    pub all_tokens: usize,
    /// Whether the first list fits the budget.
    pub fits: bool,
}

/// The skills the served tools come from, to look their descriptions up.
pub fn described_skills(serving: &Serving) -> Vec<SkillName> {
    let mut out: Vec<SkillName> = Vec::new();
    for tool in &serving.served {
        if let Ok(name) = SkillName::new(&tool.source_skill)
            && !out.contains(&name)
        {
            out.push(name);
        }
    }
    out
}

impl Disclosed {
    /// The disclosure of the tools `serving` serves for the skills `roots`
    /// (their own tools are the root's), the skills described by
    /// `descriptions`. Fails when a served tool has a meta tool's name.
    pub fn of(
        serving: &Serving,
        roots: &[String],
        descriptions: &HashMap<String, String>,
        options: DiscloseOptions,
    ) -> Result<Self, DiscloseError> {
        let tools = serving
            .served
            .iter()
            .map(|served| {
                let text = ToolText {
                    name: served.registry_name.clone(),
                    description: served
                        .tool
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    // Tokenised alike whole or split: the separators are no words.
                    skills: vec![served.include_path.clone()],
                    parameters: served
                        .tool
                        .get("inputSchema")
                        .map(agents_disclosure::rank::parameter_names)
                        .unwrap_or_default(),
                };
                let tool = CatalogTool {
                    registry_name: served.registry_name.clone(),
                    export_name: served.export_name.clone(),
                    skill: served.source_skill.clone(),
                    value: served.tool.clone(),
                };
                (tool, text)
            })
            .collect();
        let roots: Vec<&str> = roots.iter().map(String::as_str).collect();
        let catalog = Catalog::from_tools(&roots, ExportFormat::Mcp, tools, descriptions);
        let disclosure = catalog.plan(options.mode, options.budget_tokens);
        if let Some(collision) = catalog.collisions(&disclosure).first() {
            return Err(DiscloseError::Collision {
                mode: disclosure.mode,
                meta: collision.meta.clone(),
                registry_name: collision.tool.registry_name.clone(),
                skill: collision.tool.skill.clone(),
            });
        }
        Ok(Self {
            catalog,
            plan: disclosure,
        })
    }

    /// The mode applied.
    pub fn mode(&self) -> Mode {
        self.plan.mode
    }

    /// What the first tool list holds and costs.
    pub fn summary(&self) -> Summary {
        let all = self.catalog.all_cost();
        let name = |tool: &Value| {
            agents_disclosure::plan::exported_name(tool, ExportFormat::Mcp).unwrap_or_default()
        };
        Summary {
            requested: self.plan.requested,
            mode: self.plan.mode,
            budget_tokens: self.plan.budget_tokens,
            eager: self
                .plan
                .eager
                .iter()
                .filter_map(|&i| self.catalog.tools().get(i))
                .map(|tool| tool.export_name.clone())
                .collect(),
            meta: self.plan.meta.iter().map(name).collect(),
            offered: self
                .plan
                .offered
                .iter()
                .filter_map(|&i| self.catalog.groups().get(i))
                .map(|group| OfferedSkill {
                    skill: group.skill.clone(),
                    tools: group.tools.len(),
                })
                .collect(),
            deferred: self.catalog.tools().len() - self.plan.eager.len(),
            bytes: self.plan.cost.bytes,
            tokens: self.plan.cost.tokens,
            all_bytes: all.bytes,
            all_tokens: all.tokens,
            fits: self.plan.fits(),
        }
    }

    /// Whether `name` is a meta tool of the first list.
    fn is_meta(&self, name: &str) -> bool {
        self.plan
            .meta
            .iter()
            .any(|tool| tool.get("name").and_then(Value::as_str) == Some(name))
    }

    /// The tool list of a session that loaded `loaded`: the first list's
    /// served tools, the loaded skills' tools, then the meta tools.
    fn tools_for(&self, loaded: &BTreeSet<String>) -> Vec<Value> {
        let tools = self.catalog.tools();
        let mut shown: Vec<usize> = self.plan.eager.clone();
        for &offered in &self.plan.offered {
            if let Some(group) = self.catalog.groups().get(offered)
                && loaded.contains(&group.skill)
            {
                shown.extend(&group.tools);
            }
        }
        // The first list's tools first, then each loaded skill's in the
        // loader's order: a list that only grows.
        let mut seen = std::collections::HashSet::new();
        shown.retain(|i| seen.insert(*i));
        shown
            .into_iter()
            .filter_map(|i| tools.get(i).map(|tool| tool.value.clone()))
            .chain(self.plan.meta.iter().cloned())
            .collect()
    }

    /// The offered skill named `name`.
    fn offered(&self, name: &str) -> Option<&agents_disclosure::SkillGroup> {
        self.plan
            .offered
            .iter()
            .filter_map(|&i| self.catalog.groups().get(i))
            .find(|group| group.skill == name)
    }

    /// What the `instructions` add: how the tools are disclosed.
    fn instructions(&self) -> String {
        match self.plan.mode {
            Mode::Skills => {
                let mut text = format!(
                    "\n\nTools are disclosed skill by skill: the tool list holds the served \
                     skills' own tools and `{LOADER}`, which adds the tools of the skills you \
                     name to your tool list. Skills:"
                );
                let offered = self.summary().offered;
                for skill in offered.iter().take(MAX_SKILLS_IN_INSTRUCTIONS) {
                    let description = self
                        .offered(&skill.skill)
                        .map(|group| agents_core::text::shorten(&group.description, 160))
                        .unwrap_or_default();
                    text.push_str(&format!("\n- {} ({} tools)", skill.skill, skill.tools));
                    if !description.is_empty() {
                        text.push_str(&format!(": {description}"));
                    }
                }
                if offered.len() > MAX_SKILLS_IN_INSTRUCTIONS {
                    text.push_str(&format!(
                        "\n- and {} more (see `{LOADER}`)",
                        offered.len() - MAX_SKILLS_IN_INSTRUCTIONS
                    ));
                }
                text
            }
            Mode::Search => format!(
                "\n\nThe {} tools are behind a search: `{SEARCH}` finds them by what they do \
                 and returns their input schemas; `{CALL}` calls one by name.",
                self.catalog.tools().len()
            ),
            Mode::All | Mode::Auto => String::new(),
        }
    }
}

/// The offered skills the `instructions` name one by one.
const MAX_SKILLS_IN_INSTRUCTIONS: usize = 50;

/// The most skills one `load_skills` call loads (the loader's enum holds
/// each at most once anyway).
const MAX_LOADED_AT_ONCE: usize = 64;

/// The disclosure state of a gateway: the options, what is disclosed now,
/// and what each session loaded.
#[derive(Default)]
pub(crate) struct State {
    /// `None` for `all` (every tool, nothing built).
    options: std::sync::OnceLock<(DiscloseOptions, Vec<String>)>,
    current: RwLock<Option<Arc<Disclosed>>>,
    /// The skills each session loaded, by its handshake info (one per
    /// session, as for roots).
    sessions: std::sync::Mutex<Vec<(Weak<ClientConfig>, BTreeSet<String>)>>,
}

impl State {
    fn current(&self) -> Option<Arc<Disclosed>> {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Installs `disclosed`; true when the first list's meta tools or mode
    /// changed (the served tools' own changes are told by the plan).
    fn install(&self, disclosed: Option<Arc<Disclosed>>) -> bool {
        let mut current = self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changed = match (current.as_ref(), disclosed.as_ref()) {
            (Some(old), Some(new)) => {
                old.plan.mode != new.plan.mode || old.plan.meta != new.plan.meta
            }
            (None, None) => false,
            _ => true,
        };
        *current = disclosed;
        changed
    }

    fn loaded(&self, peer: Option<&Peer<RoleServer>>) -> BTreeSet<String> {
        let Some(info) = peer.and_then(Peer::peer_info) else {
            return BTreeSet::new();
        };
        lock(&self.sessions)
            .iter()
            .find(|(session, _)| std::ptr::eq(session.as_ptr(), Arc::as_ptr(&info)))
            .map(|(_, loaded)| loaded.clone())
            .unwrap_or_default()
    }

    /// Adds `skills` to what the session of `peer` loaded; the skills new
    /// to it, or `None` for a peer with no session to remember them by.
    fn load(&self, peer: Option<&Peer<RoleServer>>, skills: &[String]) -> Option<Vec<String>> {
        let info = peer.and_then(Peer::peer_info)?;
        let mut sessions = lock(&self.sessions);
        sessions.retain(|(session, _)| session.strong_count() > 0);
        let position = sessions
            .iter()
            .position(|(session, _)| std::ptr::eq(session.as_ptr(), Arc::as_ptr(&info)));
        let index = match position {
            Some(index) => index,
            None => {
                sessions.push((Arc::downgrade(&info), BTreeSet::new()));
                sessions.len() - 1
            }
        };
        let (_, loaded) = sessions.get_mut(index)?;
        Some(
            skills
                .iter()
                .filter(|skill| loaded.insert((*skill).clone()))
                .cloned()
                .collect(),
        )
    }
}

/// A tool result of JSON text.
fn json_result(value: &Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(value.to_string())])
}

/// A string argument of a meta tool.
fn string_arg<'a>(
    arguments: &'a serde_json::Map<String, Value>,
    tool: &str,
    key: &str,
) -> Result<&'a str, CallToolResult> {
    arguments.get(key).and_then(Value::as_str).ok_or_else(|| {
        tool_error(format!(
            "invalid arguments for `{tool}`: `{key}` must be a string"
        ))
    })
}

impl Gateway {
    /// Discloses the served tools of `roots` (the skills served) as
    /// `options` says, the skills described by `descriptions`; with
    /// [`Mode::All`] nothing changes. Fails when a served tool has the
    /// name of a meta tool of the mode. Set once, before serving.
    pub fn with_disclosure(
        self,
        options: DiscloseOptions,
        roots: &[SkillName],
        descriptions: &HashMap<String, String>,
    ) -> Result<Self, DiscloseError> {
        if options.mode == Mode::All {
            return Ok(self);
        }
        let roots: Vec<String> = roots.iter().map(ToString::to_string).collect();
        let disclosed = Disclosed::of(&self.serving(), &roots, descriptions, options)?;
        let state = &self.shared.disclose;
        if state.options.set((options, roots)).is_ok() {
            state.install(Some(Arc::new(disclosed)));
        }
        Ok(self)
    }

    /// The disclosure of `serving` after a re-resolution (the skills'
    /// descriptions read again): `Ok(None)` without disclosure, an error
    /// when a served tool collides with a meta tool (it is then not served).
    pub(crate) async fn disclosure_for(
        &self,
        follow: &Follow<'_>,
        serving: &Serving,
    ) -> Result<Option<Arc<Disclosed>>, DiscloseError> {
        let Some((options, roots)) = self.shared.disclose.options.get() else {
            return Ok(None);
        };
        let descriptions = match follow
            .service
            .skill_descriptions(&described_skills(serving))
            .await
        {
            Ok(descriptions) => descriptions,
            Err(err) => {
                tracing::warn!("mcp serve: cannot read the skills' descriptions: {err}");
                HashMap::new()
            }
        };
        Disclosed::of(serving, roots, &descriptions, *options).map(|d| Some(Arc::new(d)))
    }

    /// Serves `disclosed` from now on; true when the clients' lists changed
    /// by it (beyond the served tools, which the plan compares).
    pub(crate) fn install_disclosure(&self, disclosed: Option<Arc<Disclosed>>) -> bool {
        self.shared.disclose.options.get().is_some() && self.shared.disclose.install(disclosed)
    }

    /// What is disclosed now (`None` for `all`).
    pub fn disclosed(&self) -> Option<Arc<Disclosed>> {
        self.shared.disclose.current()
    }

    /// The `tools/list` of the session of `peer`.
    pub fn list_for(&self, peer: Option<&Peer<RoleServer>>) -> Vec<Value> {
        match self.disclosed() {
            Some(disclosed) if disclosed.plan.mode != Mode::All => {
                disclosed.tools_for(&self.shared.disclose.loaded(peer))
            }
            _ => self.list(),
        }
    }

    /// What the disclosure adds to the server's `instructions`.
    pub(crate) fn disclosure_instructions(&self) -> String {
        self.disclosed()
            .map(|disclosed| disclosed.instructions())
            .unwrap_or_default()
    }

    /// One `tools/call` from the client `peer`: a meta tool of the
    /// disclosure, or any served tool ([`Gateway::call_from`]).
    pub(crate) async fn dispatch(
        &self,
        name: &str,
        arguments: Option<Value>,
        progress: Option<agents_mcp::ProgressSink>,
        peer: Option<&Peer<RoleServer>>,
        cancel: CancellationToken,
    ) -> Option<CallToolResult> {
        let Some(disclosed) = self.disclosed().filter(|d| d.is_meta(name)) else {
            return self
                .call_from(name, arguments, progress, peer, cancel)
                .await;
        };
        let arguments = match arguments.unwrap_or_else(|| json!({})) {
            Value::Object(arguments) => arguments,
            _ => {
                return Some(tool_error(format!(
                    "invalid arguments for `{name}`: expected an object"
                )));
            }
        };
        Some(match name {
            LOADER => self.load_skills(&disclosed, &arguments, peer).await,
            SEARCH => search_tools(&disclosed, &arguments),
            _ => {
                self.call_tool_by_name(&disclosed, &arguments, progress, peer, cancel)
                    .await
            }
        })
    }

    /// `load_skills`: adds the named skills' tools to the session's list
    /// and tells it so.
    async fn load_skills(
        &self,
        disclosed: &Disclosed,
        arguments: &serde_json::Map<String, Value>,
        peer: Option<&Peer<RoleServer>>,
    ) -> CallToolResult {
        let Some(skills) = arguments.get("skills").and_then(Value::as_array) else {
            return tool_error(format!(
                "invalid arguments for `{LOADER}`: `skills` must be an array of skill names"
            ));
        };
        let offered: Vec<&str> = disclosed
            .plan
            .offered
            .iter()
            .filter_map(|&i| disclosed.catalog.groups().get(i))
            .map(|group| group.skill.as_str())
            .collect();
        let mut names: Vec<String> = Vec::new();
        for skill in skills.iter().take(MAX_LOADED_AT_ONCE) {
            let Some(skill) = skill.as_str() else {
                return tool_error(format!(
                    "invalid arguments for `{LOADER}`: `skills` must be an array of skill names"
                ));
            };
            if disclosed.offered(skill).is_none() {
                let hint = agents_core::text::did_you_mean(skill, &offered)
                    .map(|close| format!(" (did you mean `{close}`?)"))
                    .unwrap_or_default();
                return tool_error(format!(
                    "no included skill is named `{}`{hint}; the skills are those the \
                     description of `{LOADER}` lists",
                    agents_core::text::shorten(skill, agents_core::text::MAX_ECHO_BYTES)
                ));
            }
            if !names.iter().any(|name| name == skill) {
                names.push(skill.to_owned());
            }
        }
        let Some(new) = self.shared.disclose.load(peer, &names) else {
            return tool_error(
                "this session cannot keep loaded tools (the client gave no session); call the \
                 tools by name instead"
                    .to_owned(),
            );
        };
        if !new.is_empty()
            && let Some(peer) = peer
            && let Err(err) = peer.notify_tool_list_changed().await
        {
            tracing::debug!(error = %err, "a client did not take notifications/tools/list_changed");
        }
        let loaded: Vec<Value> = names
            .iter()
            .filter_map(|name| disclosed.offered(name))
            .map(|group| {
                let tools: Vec<&str> = group
                    .tools
                    .iter()
                    .filter_map(|&i| disclosed.catalog.tools().get(i))
                    .map(|tool| tool.export_name.as_str())
                    .collect();
                json!({
                    "skill": group.skill,
                    "new": new.contains(&group.skill),
                    "tools": tools,
                })
            })
            .collect();
        json_result(&json!({
            "loaded": loaded,
            "note": "the tools were added to your tool list (notifications/tools/list_changed)",
        }))
    }

    /// `call_tool`: the named served tool, called as a direct call is.
    async fn call_tool_by_name(
        &self,
        disclosed: &Disclosed,
        arguments: &serde_json::Map<String, Value>,
        progress: Option<agents_mcp::ProgressSink>,
        peer: Option<&Peer<RoleServer>>,
        cancel: CancellationToken,
    ) -> CallToolResult {
        let (name, parsed) = match call_target(disclosed, arguments) {
            Ok(target) => target,
            Err(refused) => return refused,
        };
        self.call_from(&name, Some(parsed), progress, peer, cancel)
            .await
            .unwrap_or_else(|| {
                tool_error(format!(
                    "tool `{name}` is no longer served (the skills changed)"
                ))
            })
    }
}

/// The export name and arguments a `call_tool` names.
fn call_target(
    disclosed: &Disclosed,
    arguments: &serde_json::Map<String, Value>,
) -> Result<(String, Value), CallToolResult> {
    let name = string_arg(arguments, CALL, "name")?;
    let text = string_arg(arguments, CALL, "arguments")?;
    let Some(tool) = disclosed.catalog.tool(name) else {
        return Err(unknown_tool(disclosed, name));
    };
    let parsed: Value = if text.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(text).map_err(|err| {
            tool_error(format!(
                "invalid arguments for `{CALL}`: `arguments` is not JSON text ({err}); give \
                 the tool's arguments as a JSON object, `{{}}` for none"
            ))
        })?
    };
    if !parsed.is_object() {
        return Err(tool_error(format!(
            "invalid arguments for `{CALL}`: `arguments` must be a JSON object, `{{}}` for none"
        )));
    }
    Ok((tool.export_name.clone(), parsed))
}

/// `search_tools`: the best matches with their schemas.
fn search_tools(
    disclosed: &Disclosed,
    arguments: &serde_json::Map<String, Value>,
) -> CallToolResult {
    let query = match string_arg(arguments, SEARCH, "query") {
        Ok(query) => query,
        Err(err) => return err,
    };
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .filter(|limit| (1..=agents_disclosure::plan::MAX_SEARCH_LIMIT as u64).contains(limit));
    let Some(limit) = limit else {
        return tool_error(format!(
            "invalid arguments for `{SEARCH}`: `limit` must be a whole number from 1 to {}",
            agents_disclosure::plan::MAX_SEARCH_LIMIT
        ));
    };
    let matches: Vec<Value> = disclosed
        .catalog
        .search(query, usize::try_from(limit).unwrap_or(1))
        .into_iter()
        .map(|found| {
            let mut tool = found.tool.value.clone();
            if let Value::Object(fields) = &mut tool {
                fields.insert("skill".into(), Value::String(found.tool.skill.clone()));
            }
            tool
        })
        .collect();
    let mut result = json!({"tools": matches, "of": disclosed.catalog.tools().len()});
    if matches.is_empty()
        && let Value::Object(fields) = &mut result
    {
        fields.insert(
            "note".into(),
            json!("no tool matched those words; try other words for what it does"),
        );
    }
    json_result(&result)
}

/// The tool error of a `call_tool` of a name no served tool has.
fn unknown_tool(disclosed: &Disclosed, name: &str) -> CallToolResult {
    let shown = agents_core::text::shorten(name, agents_core::text::MAX_ECHO_BYTES);
    if name == CALL || name == SEARCH || name == LOADER {
        return tool_error(format!(
            "`{CALL}` calls the served tools, not `{shown}`: call `{shown}` directly"
        ));
    }
    let suggested = disclosed.catalog.suggest(name);
    let hint = if suggested.is_empty() {
        format!("; find tools with `{SEARCH}`")
    } else {
        format!(
            "; did you mean {}?",
            suggested
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    tool_error(format!("no served tool is named `{shown}`{hint}"))
}

#[cfg(test)]
mod tests;
