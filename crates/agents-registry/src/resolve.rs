//! Resolution: loading skills' include closures and the catalogue entries
//! they refer to (in a bounded number of queries), and what is made of
//! them: tool sets ([`ToolSet`]), serve sets ([`ServeSet`]), the Agent
//! Skills prompt, include graphs and plan validation, with their warnings
//! worded (an untrusted inline MCP server says so, by the warning's kind).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use agents_core::{
    EffectiveCapabilities, Explanation, ItemKind, Meta, Plan, PlanReport, ResolvedToolEntry, Skill,
    SkillCapabilitySummary, SkillItem, SkillMap, SkillName, SkillResolver, SkillSource, ToolLookup,
    ToolSource, ToolSpec, compute_capability_summary, compute_effective_capabilities,
    diagnose_plan,
};
use agents_store::StoreError;
use indexmap::IndexMap;

use crate::catalogue::is_inline_shaped;
use crate::error::ServiceError;
use crate::service::SkillRegistryService;

/// The skills a write is checked over: the stored include closure, with the
/// skills being written standing in for stored ones of the same names. The
/// three tables hold disjoint names.
pub(crate) struct Overlay<'a> {
    /// The stored closure, less the names being written.
    stored: SkillMap,
    /// The skills being written, borrowed from the caller (a table of
    /// references: a file of many skills is held once).
    written: HashMap<&'a SkillName, &'a Skill>,
    /// Copies of the written skills whose MCP references take a configured
    /// allow-list, with it filled in (they are not in `written`).
    filled: SkillMap,
}

impl Overlay<'_> {
    /// Every skill.
    pub(crate) fn skills(&self) -> impl Iterator<Item = &Skill> + Clone {
        self.stored
            .values()
            .chain(self.filled.values())
            .chain(self.written.values().copied())
    }
}

impl SkillSource for Overlay<'_> {
    fn skill(&self, name: &SkillName) -> Option<&Skill> {
        self.written
            .get(name)
            .copied()
            .or_else(|| self.filled.get(name))
            .or_else(|| self.stored.get(name))
    }

    fn len_hint(&self) -> usize {
        self.stored.len() + self.filled.len() + self.written.len()
    }
}

/// Why an Agent Skills folder a skill names is not served or listed, and
/// how the user makes it so: a path in a skill is anyone's to write, so
/// only folders this user's own discovery scans count. `skill discover
/// --paths` re-scans exactly what it is given, so the advice is to add the
/// folder's parent to what is scanned, not to scan it alone (which would
/// drop every other discovered skill).
pub fn not_discovered(folder: &Path) -> String {
    format!(
        "its folder `{}` was not found by your discovery (a path in a skill is anyone's to write): add `{}` to the folders you scan (`[skills] agent_skills_paths` in `config.toml`, or every folder you scan given to `{}`)",
        agents_core::text::shown_path(folder),
        agents_core::text::shown_path(folder.parent().unwrap_or(folder)),
        agents_core::Hint::DiscoverPaths,
    )
}

/// A skill's flattened tool set, its capability summary and the warnings
/// produced on the way (unknown tools, stale MCP caches, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSet {
    /// The root skill.
    pub skill: Skill,
    /// Entries in first-occurrence order.
    pub entries: Vec<ResolvedToolEntry>,
    /// The spec's seven-field summary.
    pub summary: SkillCapabilitySummary,
    /// Capabilities over every entry whose flags are known, and the entries
    /// whose flags are not.
    pub effective: EffectiveCapabilities,
    /// Why each entry is there (parallel to `entries`); only filled by
    /// [`SkillRegistryService::explain_tools`].
    pub explanations: Option<Vec<Explanation>>,
    /// Non-fatal problems.
    pub warnings: Vec<String>,
}

impl ToolSet {
    /// The spec's `(entries, summary)` pair.
    pub fn into_parts(self) -> (Vec<ResolvedToolEntry>, SkillCapabilitySummary) {
        (self.entries, self.summary)
    }
}

/// What `agents mcp serve` serves: the flattened, de-duplicated tool set of
/// several skills and the MCP server definitions their closure uses.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeSet {
    /// Entries in first-occurrence order across the skills; a name met again
    /// (in a later skill) takes the later entry, as includes do.
    pub entries: Vec<ResolvedToolEntry>,
    /// The MCP server definitions of the closure (trusted or not).
    pub servers: Vec<crate::McpDefinition>,
    /// Non-fatal problems.
    pub warnings: Vec<String>,
    /// The MCP servers (by name, each once, in the order met) a skill of
    /// the set uses whose tool list was never fetched: none of their tools
    /// is known, so none is in `entries` unless a skill names it.
    pub uncached: Vec<String>,
    /// The Agent Skill folders (realpaths) this user's own discovery found
    /// (rows sealed by their scope): the only ones whose files may be
    /// served or pointed to. An `agent_sources` path in a skill is a row
    /// anyone who can write the database may have written, so the folder
    /// it names is read for its name and description but not served.
    pub own_folders: std::collections::BTreeSet<String>,
    /// The `run`s of the set's custom and inline tools that this user
    /// consented to, by entry name (`agents-trust`'s decision): a `run`
    /// not here never starts.
    pub runs: std::collections::BTreeMap<String, crate::trust::TrustedRun>,
}

impl ServeSet {
    /// Whether `spec` is an Agent Skill in one of [`Self::own_folders`].
    pub fn is_own_folder(&self, spec: &ToolSpec) -> bool {
        spec.source == ToolSource::AgentSkills
            && spec
                .meta_str(Meta::Path)
                .is_some_and(|folder| self.own_folders.contains(folder))
    }
}

impl SkillRegistryService {
    /// [`Self::load`], failing on the first MCP reference of the closure
    /// that names no defined server (what resolving needs).
    pub(crate) async fn load_checked(
        &self,
        roots: &[SkillName],
    ) -> Result<(SkillMap, Catalog), ServiceError> {
        let (skills, catalog) = self.load(roots).await?;
        if let Some(err) = self
            .check_mcp_references(skills.values())
            .into_iter()
            .next()
        {
            return Err(err);
        }
        Ok((skills, catalog))
    }

    /// Loads `roots` and their include closure, and the catalogue entries the
    /// closure can refer to, in a bounded number of queries.
    async fn load(&self, roots: &[SkillName]) -> Result<(SkillMap, Catalog), ServiceError> {
        let mut skills = self.load_closure(roots).await?;
        for skill in skills.values_mut() {
            self.fill_allow_lists(skill);
        }
        let catalog = self.catalog_for(skills.values()).await?;
        Ok((skills, catalog))
    }

    /// As [`Self::load`], with `written` standing in for (or added to) the
    /// stored skills of the same names: a write checked before it lands.
    /// The written skills are borrowed, not copied (a file of many skills
    /// is held once); only those whose MCP references take a configured
    /// allow-list are copied, to fill it in.
    pub(crate) async fn load_with<'a>(
        &self,
        roots: &[SkillName],
        written: &'a [Skill],
    ) -> Result<(Overlay<'a>, Catalog), ServiceError> {
        let mut stored = self.load_closure(roots).await?;
        let mut overlay_written = HashMap::with_capacity(written.len());
        let mut filled = SkillMap::default();
        for skill in written {
            stored.remove(&skill.name);
            if skill
                .items
                .iter()
                .any(|item| self.allow_list_of(item).is_some())
            {
                let mut copy = skill.clone();
                self.fill_allow_lists(&mut copy);
                overlay_written.remove(&skill.name);
                filled.insert(copy.name.clone(), copy);
            } else {
                filled.remove(&skill.name);
                overlay_written.insert(&skill.name, skill);
            }
        }
        for skill in stored.values_mut() {
            self.fill_allow_lists(skill);
        }
        let overlay = Overlay {
            stored,
            written: overlay_written,
            filled,
        };
        let catalog = self.catalog_for(overlay.skills()).await?;
        Ok((overlay, catalog))
    }

    async fn load_closure(&self, roots: &[SkillName]) -> Result<SkillMap, ServiceError> {
        Ok(self
            .store
            .load_closure(roots)
            .await?
            .into_iter()
            .map(|skill| (skill.name.clone(), skill))
            .collect())
    }

    /// The configured allow-list a reference item takes: an `mcp_source`
    /// that only names a configured server and has no list of its own.
    fn allow_list_of(&self, item: &SkillItem) -> Option<&Option<Vec<String>>> {
        match item {
            SkillItem::McpSource(source) if source.is_reference() && source.tools.is_none() => self
                .mcp_servers
                .get(&source.server)
                .map(|configured| &configured.tools),
            _ => None,
        }
    }

    /// Gives each reference item of `skill` its configured server's allow-list.
    fn fill_allow_lists(&self, skill: &mut Skill) {
        for item in &mut skill.items {
            if let Some(tools) = self.allow_list_of(item).cloned()
                && let SkillItem::McpSource(source) = item
            {
                source.tools = tools;
            }
        }
    }

    /// The catalogue entries `skills` can refer to: builtins, the stored
    /// tools they name, and the MCP and Agent Skills rows when they use
    /// those sources.
    async fn catalog_for<'s, I>(&self, skills: I) -> Result<Catalog, ServiceError>
    where
        I: Iterator<Item = &'s Skill> + Clone,
    {
        // A closure names each tool many times: deduplicate before sorting.
        let mut wanted: HashSet<&str> = HashSet::new();
        let mut has_mcp = false;
        let mut has_agent = false;
        for skill in skills.clone() {
            for item in &skill.items {
                match item {
                    SkillItem::ToolRef { name } => {
                        wanted.insert(name);
                    }
                    SkillItem::McpSource(_) => has_mcp = true,
                    SkillItem::AgentSource(_) => has_agent = true,
                    _ => {}
                }
            }
        }
        let mut wanted: Vec<&str> = wanted
            .into_iter()
            .filter(|name| self.builtins.get(name).is_none())
            .collect();
        wanted.sort_unstable();
        let mut catalog = Catalog {
            config_digests: self
                .mcp_servers
                .iter()
                .map(|(name, source)| (name.clone(), self.config_digest(source)))
                .collect(),
            ..Catalog::default()
        };
        for tool in self.builtins.list(None) {
            catalog.insert(tool.clone());
        }
        let stored: Vec<String> = wanted
            .iter()
            .map(|name| {
                self.scope
                    .stored_name(name)
                    .unwrap_or_else(|| (*name).to_owned())
            })
            .collect();
        for tool in self.store.get_tools(&stored).await? {
            // A catalogue row named like an inline tool's entry (written
            // before `tool add` refused such names, or by another writer of
            // the database) would take that entry over: not used.
            if tool.source == ToolSource::Custom && is_inline_shaped(&tool.name) {
                tracing::warn!(
                    "tool `{}` is named like an inline tool's entry and is not used",
                    agents_core::text::shorten(&tool.name, agents_core::text::MAX_ECHO_BYTES)
                );
                continue;
            }
            if let Some(tool) = self.scope.visible(tool) {
                catalog.insert(tool);
            }
        }
        if has_mcp {
            let rows = self.store.list_tools(Some(ToolSource::Mcp)).await?;
            // A spec's cached list that is not the one this user last fetched
            // from it was written by someone else since: not used.
            let mut lists: HashMap<&str, Vec<&ToolSpec>> = HashMap::new();
            for row in &rows {
                if let Some(digest) = crate::mcp::row_digest(row) {
                    lists.entry(digest).or_default().push(row);
                }
            }
            let replaced: HashSet<String> = lists
                .iter()
                .filter(|(digest, list)| {
                    self.trust
                        .recorded_list(digest)
                        .is_some_and(|recorded| recorded != crate::mcp::list_digest(list.iter().copied()))
                })
                .map(|(digest, list)| {
                    // The name is a row's, so anyone's: escaped and short.
                    let server = agents_core::text::shorten(
                        list.first()
                            .and_then(|row| row.meta_str(Meta::Server))
                            .unwrap_or_default(),
                        agents_core::text::MAX_ECHO_BYTES,
                    );
                    tracing::warn!(
                        "mcp server `{server}`: its cached tool list was changed in the database since you fetched it (spec digest {}); it is not used until `{}`",
                        digest.get(..12).unwrap_or(digest),
                        agents_core::Hint::refresh(&server)
                    );
                    (*digest).to_owned()
                })
                .collect();
            drop(lists);
            for tool in rows {
                if let Some((digest, tool)) = crate::mcp::restore_cached(tool)
                    && !replaced.contains(&digest)
                {
                    catalog.insert_mcp(digest, tool);
                }
            }
            catalog.order_mcp();
        }
        if has_agent {
            for tool in self.store.list_tools(Some(ToolSource::AgentSkills)).await? {
                if let Some(tool) = self.scope.visible(tool) {
                    catalog.insert(tool);
                }
            }
            for skill in skills {
                for item in skill.items_of(ItemKind::AgentSource) {
                    if let SkillItem::AgentSource(source) = item {
                        catalog.map_agent_path(&source.path, &self.home);
                    }
                }
            }
        }
        Ok(catalog)
    }

    /// Fails when an `mcp_source` only names a server that is not configured.
    pub(crate) fn check_mcp_references<'s>(
        &self,
        skills: impl Iterator<Item = &'s Skill>,
    ) -> Vec<ServiceError> {
        let mut errors = Vec::new();
        let mut sorted: Vec<&Skill> = skills.collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        for skill in sorted {
            for item in &skill.items {
                if let SkillItem::McpSource(source) = item
                    && source.is_reference()
                    && !self.mcp_servers.contains_key(&source.server)
                {
                    errors.push(ServiceError::UnknownMcpServer {
                        skill: skill.name.to_string(),
                        server: source.server.clone(),
                    });
                }
            }
        }
        errors
    }

    /// The flattened tool set of `name` with its capability summary.
    pub async fn tools(&self, name: &SkillName) -> Result<ToolSet, ServiceError> {
        self.resolve_tools(name, false).await
    }

    /// The `<available_skills>` block (the Agent Skills reference's
    /// `to-prompt` layout) for the Agent Skills in `name`'s flattened set,
    /// and one line per Agent Skill left out of it.
    ///
    /// Only Agent Skills in folders this user's discovery found are listed
    /// (see [`ServeSet::own_folders`]): the block tells an agent where to
    /// read, and a path in a shared database is anyone's. Each other one is
    /// named in the lines returned, with what would list it.
    pub async fn skill_prompt(
        &self,
        name: &SkillName,
    ) -> Result<(String, Vec<String>), ServiceError> {
        let set = self.serve_set(std::slice::from_ref(name)).await?;
        let mut own: Vec<ResolvedToolEntry> = Vec::new();
        let mut left_out = Vec::new();
        for entry in &set.entries {
            let Some(spec) = entry.tool.as_ref() else {
                continue;
            };
            if set.is_own_folder(spec) {
                own.push(entry.clone());
            } else if spec.source == ToolSource::AgentSkills
                && let Some(folder) = spec.meta_str(Meta::Path)
            {
                left_out.push(format!(
                    "`{}` is left out of the prompt: {}",
                    agents_core::text::escape_control(&entry.name),
                    not_discovered(Path::new(folder)),
                ));
            }
        }
        let text = agents_core::available_skills_prompt(&agents_core::prompt_skills(&own));
        Ok((text, left_out))
    }

    /// The Markdown body of the Agent Skill `name`'s `SKILL.md`, read from
    /// the folder discovery found it in (the file is re-validated first).
    pub async fn agent_skill_body(&self, name: &str) -> Result<String, ServiceError> {
        let tool = self.get_tool(name).await?;
        let file = tool
            .skill_md()
            .ok_or_else(|| ServiceError::NotAnAgentSkill(name.to_owned()))?;
        let (_, body) = agents_discovery::read_skill_md_body(std::path::Path::new(file))
            .map_err(ServiceError::SkillMd)?;
        Ok(body)
    }

    /// [`Self::tools`] with an [`Explanation`] per entry: every occurrence
    /// and where each final override came from.
    pub async fn explain_tools(&self, name: &SkillName) -> Result<ToolSet, ServiceError> {
        self.resolve_tools(name, true).await
    }

    async fn resolve_tools(
        &self,
        name: &SkillName,
        explain: bool,
    ) -> Result<ToolSet, ServiceError> {
        let resolved = self.resolve_tools_of(name, explain).await;
        self.suggesting(resolved).await
    }

    async fn resolve_tools_of(
        &self,
        name: &SkillName,
        explain: bool,
    ) -> Result<ToolSet, ServiceError> {
        let (skills, catalog) = self.load_checked(std::slice::from_ref(name)).await?;
        let resolver = SkillResolver::new(&skills, &catalog);
        let (resolution, explanations) = if explain {
            let (resolution, explanations) = resolver.explain(name)?;
            (resolution, Some(explanations))
        } else {
            (resolver.resolve(name)?, None)
        };
        let root = skills
            .get(name)
            .ok_or_else(|| StoreError::SkillNotFound(name.clone()))?;
        let summary = compute_capability_summary(root, &resolution.entries);
        let effective = compute_effective_capabilities(&resolution.entries);
        Ok(ToolSet {
            skill: root.clone(),
            entries: resolution.entries,
            summary,
            effective,
            explanations,
            warnings: self.warning_lines(&skills, &resolution.warnings).await?,
        })
    }

    /// The digest a server of the config file is cached under in the shared
    /// database: its [`agents_mcp::spec_digest`] keyed with this user's key
    /// (the discovery scope's, kept in `~/.cleveragents/scope`). The spec
    /// digest covers literal `env` and header values, and another user of
    /// the database could copy the config with a guessed secret and compare;
    /// keyed, the name says nothing to anyone without the key. Specs held
    /// in skills are in the database for all to read, so theirs stay plain
    /// (and their caches shared).
    pub fn config_digest(&self, source: &agents_core::McpSource) -> String {
        self.scope
            .keyed_digest("mcp config spec", &agents_mcp::spec_digest(source))
    }

    /// `warnings` as lines ([`agents_core::summarize_warnings`]), except
    /// that an MCP server with no cached list whose definition is not
    /// trusted here says so: refreshing it (what the plain warning advises)
    /// would refuse to start it.
    pub(crate) async fn warning_lines(
        &self,
        skills: &SkillMap,
        warnings: &[agents_core::ResolveWarning],
    ) -> Result<Vec<String>, ServiceError> {
        let mut lines = Vec::new();
        let mut plain = Vec::with_capacity(warnings.len());
        for warning in warnings {
            if let agents_core::ResolveWarning::McpNotCached { skill, server } = warning
                && let Some(line) = self.untrusted_not_cached(skills, skill, server).await?
            {
                if !lines.contains(&line) {
                    lines.push(line);
                }
            } else {
                plain.push(warning.clone());
            }
        }
        lines.extend(agents_core::summarize_warnings(&plain));
        Ok(lines)
    }

    /// What to say instead of "no cached tool list" when `skill`'s inline
    /// definition of `server` is not trusted here: who wrote it, what it
    /// would run, and the command that trusts exactly it.
    async fn untrusted_not_cached(
        &self,
        skills: &SkillMap,
        skill: &SkillName,
        server: &str,
    ) -> Result<Option<String>, ServiceError> {
        let Some(source) = skills.get(skill).and_then(|skill| {
            skill.items.iter().find_map(|item| match item {
                SkillItem::McpSource(source)
                    if source.server == server && !source.is_reference() =>
                {
                    Some(source)
                }
                _ => None,
            })
        }) else {
            return Ok(None);
        };
        if self.trust().is_trusted(&agents_mcp::spec_digest(source)) {
            return Ok(None);
        }
        let by = self.defined_by(skill).await?;
        let definition = self.definition(source, skill.as_ref(), by);
        let writer = match &definition.defined_by {
            Some(user) => format!("by `{user}`"),
            None => "writer unknown".to_owned(),
        };
        Ok(Some(format!(
            "Skill '{skill}': MCP server '{}' has no cached tool list, and its definition there ({writer}) is not trusted here, so it is not started; {}",
            definition.shown_server(),
            definition.launch_in_message()
        )))
    }

    /// The lines of a plan's typed `warnings`, each as it reads, except an
    /// MCP server with no cached list whose inline definition is not trusted
    /// here, which says so as [`Self::warning_lines`] does (by its kind,
    /// [`agents_core::ResolveWarning::McpNotCached`], not its text).
    async fn plan_warning_lines(
        &self,
        skills: &SkillMap,
        warnings: &[agents_core::ResolveWarning],
    ) -> Result<Vec<String>, ServiceError> {
        let mut lines = Vec::with_capacity(warnings.len());
        for warning in warnings {
            let untrusted = match warning {
                agents_core::ResolveWarning::McpNotCached { skill, server } => {
                    self.untrusted_not_cached(skills, skill, server).await?
                }
                _ => None,
            };
            lines.push(untrusted.unwrap_or_else(|| warning.to_string()));
        }
        Ok(lines)
    }

    /// A cheap fingerprint of the whole registry (see
    /// [`agents_store::Store::change_stamp`]); `agents mcp serve` polls it to
    /// notice that skills or the catalogue changed.
    pub async fn change_stamp(&self) -> Result<String, ServiceError> {
        // The trust store too: trusting or untrusting a server changes
        // what is served without a row changing.
        Ok(format!(
            "{}|{}",
            self.store.change_stamp().await?,
            self.trust.stamp()
        ))
    }

    /// The tool set `agents mcp serve` serves for `names` (see [`ServeSet`]).
    pub async fn serve_set(&self, names: &[SkillName]) -> Result<ServeSet, ServiceError> {
        let set = self.serve_set_with(names, |_, _| Ok(())).await;
        self.suggesting(set).await
    }

    /// [`Self::serve_set`], handing each skill's own resolution (a name
    /// given twice once) to `each` as it goes: what is checked of each skill
    /// is what the set is made of, from the same load.
    pub(crate) async fn serve_set_with(
        &self,
        names: &[SkillName],
        mut each: impl FnMut(&SkillName, &[ResolvedToolEntry]) -> Result<(), ServiceError>,
    ) -> Result<ServeSet, ServiceError> {
        let (skills, catalog) = self.load_checked(names).await?;
        // By name: an entry of a later skill replaces an earlier one in its
        // place (one look-up each, not a scan of those before it).
        let mut entries: IndexMap<String, ResolvedToolEntry> = IndexMap::new();
        let mut warnings = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for name in names {
            let resolution = SkillResolver::new(&skills, &catalog).resolve(name)?;
            if seen.insert(name) {
                each(name, &resolution.entries)?;
            }
            warnings.extend(resolution.warnings);
            for entry in resolution.entries {
                entries.insert(entry.name.clone(), entry);
            }
        }
        let entries: Vec<ResolvedToolEntry> = entries.into_values().collect();
        let mut uncached: Vec<String> = Vec::new();
        for warning in &warnings {
            if let agents_core::ResolveWarning::McpNotCached { server, .. } = warning
                && !uncached.contains(server)
            {
                uncached.push(server.clone());
            }
        }
        let warnings = self.warning_lines(&skills, &warnings).await?;
        let mut closure: Vec<Skill> = skills.into_values().collect();
        closure.sort_by(|a, b| a.name.cmp(&b.name));
        let servers = self.definitions_of(&closure).await?;
        let runs = entries
            .iter()
            .filter_map(|entry| {
                let run = entry.tool.as_ref()?.run()?.ok()?;
                let consent = crate::trust::TrustedRun::consented(self.trust(), &run)?;
                Some((entry.name.clone(), consent))
            })
            .collect();
        Ok(ServeSet {
            entries,
            servers,
            warnings,
            uncached,
            own_folders: catalog.agent_by_folder.into_keys().collect(),
            runs,
        })
    }

    /// The include closure of `name` as a graph: cycles and missing includes
    /// are drawn, not errors (the root itself must exist).
    pub async fn include_graph(
        &self,
        name: &SkillName,
    ) -> Result<agents_core::IncludeGraph, ServiceError> {
        let skills: SkillMap = self
            .store
            .load_closure(std::slice::from_ref(name))
            .await?
            .into_iter()
            .map(|skill| (skill.name.clone(), skill))
            .collect();
        if !skills.contains_key(name) {
            return self
                .suggesting(Err(StoreError::SkillNotFound(name.clone()).into()))
                .await;
        }
        Ok(agents_core::include_graph(name, &skills))
    }

    /// Checks that every skill a plan references is satisfiable; returns all
    /// problems.
    pub async fn validate_plan(&self, plan: &Plan) -> Result<PlanReport, ServiceError> {
        let (skills, catalog) = self.load(&plan_roots(plan)).await?;
        let diagnosis = diagnose_plan(plan, &skills, Some(&catalog));
        let mut errors = diagnosis.errors;
        for err in self.check_mcp_references(skills.values()) {
            errors.push(err.to_string());
        }
        Ok(PlanReport {
            errors,
            warnings: self
                .plan_warning_lines(&skills, &diagnosis.warnings)
                .await?,
        })
    }
}

/// The valid skill names of `plan`, each once (a plan may repeat a name any
/// number of times; the closure query takes each root once).
pub(crate) fn plan_roots(plan: &Plan) -> Vec<SkillName> {
    let mut names: Vec<SkillName> = plan
        .skills
        .iter()
        .filter_map(|raw| SkillName::new(raw).ok())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The tools a resolution may need, indexed the ways the resolver asks.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    by_name: HashMap<String, ToolSpec>,
    /// Cached MCP tools by launch-spec digest, named `mcp:{server}/{tool}`.
    mcp: HashMap<String, Vec<ToolSpec>>,
    /// The cache digest of each configured server, which references resolve
    /// to ([`SkillRegistryService::config_digest`]).
    config_digests: HashMap<String, String>,
    /// Agent Skill folder realpath → its spec.
    agent_by_folder: HashMap<String, ToolSpec>,
    /// Agent source path as written → the spec of the folder it names. Kept
    /// apart from `by_name` so a catalogue tool that happens to share the
    /// Agent Skill's name can never stand in for the folder.
    agent_by_written: HashMap<String, ToolSpec>,
}

impl Catalog {
    fn insert(&mut self, tool: ToolSpec) {
        match tool.source {
            // Cached MCP tools only count through `insert_mcp`, by digest.
            ToolSource::Mcp => return,
            ToolSource::AgentSkills => {
                if let Some(path) = tool.meta_str(Meta::Path) {
                    self.agent_by_folder.insert(path.to_owned(), tool.clone());
                }
            }
            ToolSource::Builtin | ToolSource::Custom => {}
        }
        self.by_name.insert(tool.name.clone(), tool);
    }

    fn insert_mcp(&mut self, digest: String, tool: ToolSpec) {
        let tools = self.mcp.entry(digest).or_default();
        if !tools.iter().any(|t| t.name == tool.name) {
            tools.push(tool);
        }
    }

    /// Puts each server's tools back in the order the server listed them
    /// (the store returns them sorted by name).
    fn order_mcp(&mut self) {
        for tools in self.mcp.values_mut() {
            tools.sort_by_key(|spec| {
                spec.meta(Meta::ListIndex)
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(u64::MAX)
            });
        }
    }

    fn map_agent_path(&mut self, written: &str, home: &Path) {
        let expanded = expand_home(written, home);
        let canonical = std::fs::canonicalize(&expanded).unwrap_or(expanded);
        if let Some(spec) = self
            .agent_by_folder
            .get(&canonical.to_string_lossy().into_owned())
        {
            self.agent_by_written
                .insert(written.to_owned(), spec.clone());
            return;
        }
        // A folder outside the configured discovery paths: read it directly so
        // the entry still shows its real name, description and schemas.
        if let Ok(tool) = agents_discovery::load_folder(&canonical) {
            self.agent_by_written.insert(written.to_owned(), tool);
        }
    }
}

pub(crate) fn expand_home(path: &str, home: &Path) -> PathBuf {
    match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

impl ToolLookup for Catalog {
    fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.by_name.get(name)
    }

    fn mcp_tools(&self, source: &agents_core::McpSource) -> Option<Vec<&ToolSpec>> {
        let tools = if source.is_reference() {
            self.mcp.get(self.config_digests.get(&source.server)?)?
        } else {
            self.mcp.get(&agents_mcp::spec_digest(source))?
        };
        Some(tools.iter().collect())
    }

    fn agent_skill(&self, path: &str) -> Option<&ToolSpec> {
        self.agent_by_written.get(path)
    }
}
