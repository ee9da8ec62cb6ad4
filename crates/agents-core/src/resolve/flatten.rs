//! The two walks of the module documentation: the forward walk fixes each
//! entry's first position, the reverse walk its last metadata.

#[allow(
    clippy::wildcard_imports,
    reason = "a part of `resolve`, which it names whole"
)]
use super::*;

/// The names a skill's own items contribute, in the order the spec gives:
/// tool refs, inline tools, MCP tools, agent skills.
pub fn entry_names(skill: &Skill, tools: &dyn ToolLookup) -> Vec<String> {
    let mut names: Vec<String> = tool_ref_names(skill).map(str::to_owned).collect();
    names.extend(
        other_entries(skill, tools, &mut Vec::new())
            .into_iter()
            .map(|e| e.name),
    );
    names
}

/// The names of a skill's tool refs, in order: its first own entries.
pub(super) fn tool_ref_names(skill: &Skill) -> impl Iterator<Item = &str> {
    skill.items.iter().filter_map(|item| match item {
        SkillItem::ToolRef { name } => Some(name.as_str()),
        _ => None,
    })
}

/// One of a skill's own entries other than its tool refs. The spec is
/// borrowed from the lookup (or owned, for inline tools): a closure visits
/// each skill once but a tool is named by many skills, and only the winning
/// occurrence needs its own copy.
pub(super) struct OwnEntry<'t> {
    pub(super) name: String,
    pub(super) kind: ItemKind,
    pub(super) tool: Option<Cow<'t, ToolSpec>>,
}

/// A skill's own entries after its tool refs: inline tools, MCP tools,
/// agent skills, in that order.
pub(super) fn other_entries<'t>(
    skill: &Skill,
    tools: &'t dyn ToolLookup,
    warnings: &mut Vec<ResolveWarning>,
) -> Vec<OwnEntry<'t>> {
    let mut out = Vec::new();
    let inline = skill.items.iter().filter_map(|item| match item {
        SkillItem::InlineTool(tool) => Some(tool),
        _ => None,
    });
    for (index, tool) in inline.enumerate() {
        let name = skill.inline_tool_name(index);
        let mut spec = ToolSpec::new(
            name.clone(),
            tool.description.clone().unwrap_or_default(),
            ToolSource::Custom,
        );
        spec.input_schema = tool.input_schema.clone();
        spec.output_schema = tool.output_schema.clone();
        spec.read_only = Some(tool.read_only);
        spec.writes = Some(tool.writes);
        spec.checkpointable = Some(tool.checkpointable);
        spec.side_effects = Some(tool.has_side_effects());
        if let Some(run) = &tool.run
            && let Ok(run) = serde_json::to_value(run)
        {
            spec.set_meta(crate::Meta::Run, run);
        }
        out.push(OwnEntry {
            name,
            kind: ItemKind::InlineTool,
            tool: Some(Cow::Owned(spec)),
        });
    }
    for item in &skill.items {
        let SkillItem::McpSource(source) = item else {
            continue;
        };
        let prefix = format!("mcp:{}/", source.server);
        match tools.mcp_tools(source) {
            Some(served) => {
                // One order whether cached or not: the allow-list's when there
                // is one, else the server's own listing order.
                let short_of = |spec: &&ToolSpec| {
                    spec.name
                        .strip_prefix(&prefix)
                        .unwrap_or(&spec.name)
                        .to_owned()
                };
                let chosen: Vec<&ToolSpec> = match &source.tools {
                    Some(allow) => {
                        let by_short: HashMap<String, &ToolSpec> =
                            served.iter().map(|spec| (short_of(spec), *spec)).collect();
                        let mut chosen = Vec::with_capacity(allow.len());
                        for wanted in allow {
                            match by_short.get(wanted) {
                                Some(spec) => chosen.push(*spec),
                                None => {
                                    let offered: Vec<&str> =
                                        by_short.keys().map(String::as_str).collect();
                                    warnings.push(ResolveWarning::McpToolMissing {
                                        skill: skill.name.clone(),
                                        server: source.server.clone(),
                                        tool: wanted.clone(),
                                        did_you_mean: crate::text::did_you_mean(wanted, &offered)
                                            .map(str::to_owned),
                                    });
                                }
                            }
                        }
                        chosen
                    }
                    None => served,
                };
                for spec in chosen {
                    out.push(OwnEntry {
                        name: format!("{prefix}{}", short_of(&spec)),
                        kind: ItemKind::McpSource,
                        tool: Some(Cow::Borrowed(spec)),
                    });
                }
            }
            None => {
                warnings.push(ResolveWarning::McpNotCached {
                    skill: skill.name.clone(),
                    server: source.server.clone(),
                });
                for wanted in source.tools.iter().flatten() {
                    out.push(OwnEntry {
                        name: format!("{prefix}{wanted}"),
                        kind: ItemKind::McpSource,
                        tool: None,
                    });
                }
            }
        }
    }
    for item in &skill.items {
        if let SkillItem::AgentSource(source) = item {
            out.push(OwnEntry {
                name: format!("agent_skill:{}", source.path),
                kind: ItemKind::AgentSource,
                tool: tools.agent_skill(&source.path).map(Cow::Borrowed),
            });
        }
    }
    out
}

/// The walks' hash maps: names are hashed once per include edge and once
/// per own entry, so a fast (randomly seeded) hasher matters.
pub(super) type FastHash = foldhash::fast::RandomState;

/// A skill reached by the forward walk: its index in [`Analysis::nodes`].
pub(super) type NodeId = usize;
/// An entry name: its index in [`Analysis::names`].
pub(super) type NameId = usize;

/// Where the forward walk is with a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Visit {
    /// Named by an include already entered, not entered yet.
    Pending,
    /// On the walk's stack, at this index (so a back edge finds where its
    /// cycle starts without searching the stack).
    Open(u32),
    /// Done.
    Finished,
}

/// A skill the forward walk reached, numbered when an include first names it.
pub(super) struct Node<'a> {
    pub(super) skill: &'a Skill,
    pub(super) visit: Visit,
    /// The skill whose include the forward walk entered it by, and that
    /// include (`None` for a root). The path it was first reached by is
    /// rebuilt from these only for `explain` ([`FirstPaths`]): the walk
    /// itself allocates no path.
    pub(super) entered_by: Option<(NodeId, &'a crate::skill::Include)>,
    /// Its tool refs' entries: a range of [`Analysis::refs`] (set on
    /// entering); its other own entries come after them.
    pub(super) refs: Range<usize>,
    /// Its other own entries: a range of [`Analysis::entries`] (set on entering).
    pub(super) others: Range<usize>,
    /// Its includes in order: a range of [`Analysis::edges`] (set on entering).
    pub(super) edges: Range<usize>,
}

impl<'a> Node<'a> {
    pub(super) fn new(skill: &'a Skill) -> Self {
        Self {
            skill,
            visit: Visit::Pending,
            entered_by: None,
            refs: 0..0,
            others: 0..0,
            edges: 0..0,
        }
    }
}

/// One of a reached skill's own entries.
#[derive(Clone, Copy)]
pub(super) struct Entry<'a> {
    pub(super) name: NameId,
    pub(super) kind: ItemKind,
    pub(super) tool: EntryTool<'a>,
}

/// An [`Entry`]'s spec.
#[derive(Clone, Copy)]
pub(super) enum EntryTool<'a> {
    /// The lookup does not know it.
    Unknown,
    /// Borrowed from the lookup.
    Found(&'a ToolSpec),
    /// An inline tool's spec: an index into [`Analysis::inline`].
    Inline(usize),
}

/// An include of a reached skill and the node of the skill it names
/// (`None`: no such skill).
pub(super) struct Edge<'a> {
    pub(super) include: &'a crate::skill::Include,
    pub(super) target: Option<NodeId>,
}

/// How many tool refs and includes [`Analysis::reserve`] makes room for
/// per skill: a guess (a typical skill names a handful of tools and includes
/// a skill or two); a closure with more grows its vectors as usual.
pub(super) const REFS_PER_SKILL: usize = 8;
pub(super) const INCLUDES_PER_SKILL: usize = 2;

/// A skill on the forward walk's stack. The stack is the include path the
/// walk reached the skill on top by.
pub(super) struct Frame {
    pub(super) node: NodeId,
    /// The next of the node's edges to follow, and the end of them.
    pub(super) next: usize,
    pub(super) end: usize,
}

pub(super) struct Analysis<'a> {
    pub(super) errors: Vec<ResolveError>,
    pub(super) warnings: Vec<ResolveWarning>,
    pub(super) nodes: Vec<Node<'a>>,
    /// The node of each skill reached, by the name it was looked up by.
    pub(super) index: HashMap<&'a str, NodeId, FastHash>,
    /// The entries of tool refs, as names only: a closure has one per tool
    /// ref of every skill in it, and a ref's spec is per name
    /// ([`Analysis::ref_tools`]), so 8 bytes each instead of an [`Entry`]'s 32.
    pub(super) refs: Vec<NameId>,
    /// Every other own entry (inline tools, MCP tools, agent skills).
    pub(super) entries: Vec<Entry<'a>>,
    pub(super) edges: Vec<Edge<'a>>,
    /// Every entry name met, each once.
    pub(super) names: IndexSet<Cow<'a, str>, FastHash>,
    /// Per name: what the lookup said for a tool ref of that name, asked on
    /// the first such ref only.
    pub(super) ref_tools: Vec<Option<Option<&'a ToolSpec>>>,
    /// Per name: already placed in `order`.
    pub(super) placed: Vec<bool>,
    /// The specs of inline tools (built, not borrowed).
    pub(super) inline: Vec<ToolSpec>,
    /// Entry names in first-occurrence order.
    pub(super) order: Vec<NameId>,
    /// Skills in the order the forward walk finished them (post-order).
    pub(super) finished: Vec<NodeId>,
}

impl<'a> Analysis<'a> {
    pub(super) fn new() -> Self {
        Self {
            errors: Vec::new(),
            warnings: Vec::new(),
            nodes: Vec::new(),
            index: HashMap::default(),
            refs: Vec::new(),
            entries: Vec::new(),
            edges: Vec::new(),
            names: IndexSet::default(),
            ref_tools: Vec::new(),
            placed: Vec::new(),
            inline: Vec::new(),
            order: Vec::new(),
            finished: Vec::new(),
        }
    }

    /// Room for `skills` nodes (at most every skill is reached once), and
    /// for a few entries and includes each. Growing these vectors instead
    /// copies them about once more in all, into memory the process has not
    /// touched yet: for a closure of 20,000 skills that copying was about a
    /// sixth of the walk's instructions.
    pub(super) fn reserve(&mut self, skills: usize) {
        self.nodes.reserve(skills);
        self.index.reserve(skills);
        self.finished.reserve(skills);
        self.refs.reserve(skills.saturating_mul(REFS_PER_SKILL));
        self.edges
            .reserve(skills.saturating_mul(INCLUDES_PER_SKILL));
    }

    /// Numbers `skill`, looked up as `name`.
    pub(super) fn add_node(&mut self, name: &'a str, skill: &'a Skill) -> NodeId {
        let id = self.nodes.len();
        self.nodes.push(Node::new(skill));
        self.index.insert(name, id);
        id
    }

    pub(super) fn intern(&mut self, name: Cow<'a, str>) -> NameId {
        let (id, new) = self.names.insert_full(name);
        if new {
            self.ref_tools.push(None);
            self.placed.push(false);
        }
        id
    }

    /// [`Self::intern`] of a tool ref's name, keeping a copy of a new name
    /// rather than a pointer into the skill that named it: the few hundred
    /// distinct names then sit together in memory, and each of the tens of
    /// thousands of refs compares against a key already in cache instead of
    /// one in some far-off skill's items.
    pub(super) fn intern_ref(&mut self, name: &str) -> NameId {
        match self.names.get_index_of(name) {
            Some(id) => id,
            None => self.intern(Cow::Owned(name.to_owned())),
        }
    }

    pub(super) fn name(&self, id: NameId) -> &str {
        self.names.get_index(id).map_or("", |name| name.as_ref())
    }

    /// The include path along `stack`, then `last`, as an error prints it:
    /// a long one as its head and tail around its length (see
    /// [`crate::text::head_tail`]), so neither the message nor the time to
    /// make it grows with the depth (a chain of thousands of skills, each
    /// with a missing include, is one error per skill).
    pub(super) fn path_text(&self, stack: &[Frame], last: Option<&str>) -> String {
        let len = stack.len() + usize::from(last.is_some());
        crate::text::head_tail_by(
            len,
            |i| match stack.get(i) {
                Some(frame) => self.nodes[frame.node].skill.name.as_str(),
                None => last.unwrap_or_default(),
            },
            PATH_HEAD,
            PATH_TAIL,
            " -> ",
        )
    }

    /// `node`'s own entries in order: its tool refs, then the others.
    pub(super) fn own(&self, node: &Node<'a>) -> impl DoubleEndedIterator<Item = Entry<'a>> + '_ {
        let refs = self.refs[node.refs.clone()].iter().map(|&name| Entry {
            name,
            kind: ItemKind::ToolRef,
            tool: match self.ref_tools[name] {
                Some(Some(spec)) => EntryTool::Found(spec),
                _ => EntryTool::Unknown,
            },
        });
        refs.chain(self.entries[node.others.clone()].iter().copied())
    }

    pub(super) fn spec(&self, tool: EntryTool<'a>) -> Option<&ToolSpec> {
        match tool {
            EntryTool::Unknown => None,
            EntryTool::Found(spec) => Some(spec),
            EntryTool::Inline(index) => self.inline.get(index),
        }
    }
}

/// How the reverse walk reached a skill.
pub(super) enum Via<'a> {
    Root,
    Include(IncludePath, &'a ValueMap),
}

impl<'a> SkillResolver<'a> {
    /// The forward walk (see the module documentation).
    pub(super) fn analyze(&self, root: &SkillName) -> Result<Analysis<'a>, ResolveError> {
        let root_skill = self
            .skills
            .skill(root)
            .ok_or_else(|| ResolveError::SkillNotFound { name: root.clone() })?;
        let mut analysis = Analysis::new();
        analysis.reserve(self.skills.len_hint());
        let root_node = analysis.add_node(root_skill.name.as_str(), root_skill);
        self.walk(root_node, &mut analysis);
        Ok(analysis)
    }

    /// The forward walk from `root_node` (not yet entered) over the skills
    /// `analysis` has not reached yet.
    pub(super) fn walk(&self, root_node: NodeId, analysis: &mut Analysis<'a>) {
        let mut stack: Vec<Frame> = Vec::new();
        let edges = self.enter(root_node, None, &stack, analysis);
        stack.push(Frame {
            node: root_node,
            next: edges.start,
            end: edges.end,
        });
        while let Some(frame) = stack.last_mut() {
            let parent = frame.node;
            let at = frame.next;
            if at == frame.end {
                let node = &mut analysis.nodes[parent];
                node.visit = Visit::Finished;
                analysis.finished.push(parent);
                let (refs, others) = (node.refs.clone(), node.others.clone());
                let names = analysis.refs[refs]
                    .iter()
                    .copied()
                    .chain(analysis.entries[others].iter().map(|entry| entry.name));
                for name in names {
                    if !analysis.placed[name] {
                        analysis.placed[name] = true;
                        analysis.order.push(name);
                    }
                }
                stack.pop();
                continue;
            }
            frame.next += 1;
            let Edge { include, target } = analysis.edges[at];
            let skill = analysis.nodes[parent].skill;
            for (field, found, expected) in mistyped_fields(&include.overrides) {
                analysis.warnings.push(ResolveWarning::MistypedOverride {
                    skill: skill.name.clone(),
                    site: Site::IncludeOverrideField {
                        include: include.skill.clone(),
                        field: field.clone(),
                    },
                    field,
                    found,
                    expected,
                });
            }
            let blocked = crate::skill::locked_fields(&include.overrides);
            if !blocked.is_empty() {
                analysis.errors.push(ResolveError::NonOverridable {
                    fields: blocked,
                    skill: skill.name.clone(),
                    path: analysis.path_text(&stack, Some(include.skill.as_str())),
                });
            }
            let Some(target) = target else {
                analysis.errors.push(ResolveError::MissingInclude {
                    skill: skill.name.clone(),
                    include: include.skill.clone(),
                    path: analysis.path_text(&stack, None),
                });
                // Report each missing skill once per declaring skill.
                continue;
            };
            match analysis.nodes[target].visit {
                Visit::Finished => continue,
                Visit::Open(start) => {
                    // The cycle is the stack from `target` up, then `target`
                    // again; only its ends are kept (see `CYCLE_KEPT`).
                    let on_stack = stack.get(start as usize..).unwrap_or_default();
                    let len = on_stack.len() + 1;
                    let name = |frame: &Frame| analysis.nodes[frame.node].skill.name.clone();
                    let mut cycle: Vec<SkillName> = if len <= CYCLE_KEPT + 1 {
                        on_stack.iter().map(name).collect()
                    } else {
                        let tail = on_stack.len() - (PATH_TAIL - 1);
                        on_stack[..PATH_HEAD]
                            .iter()
                            .chain(&on_stack[tail..])
                            .map(name)
                            .collect()
                    };
                    cycle.push(include.skill.clone());
                    analysis.errors.push(ResolveError::Cycle { cycle, len });
                    continue;
                }
                Visit::Pending => {}
            }
            let edges = self.enter(target, Some((parent, include)), &stack, analysis);
            stack.push(Frame {
                node: target,
                next: edges.start,
                end: edges.end,
            });
        }
    }

    /// First visit of a skill in the forward walk (`stack` is the path to
    /// it): check its own overrides, number the skills it includes and
    /// compute its own entries. Returns its edges.
    pub(super) fn enter(
        &self,
        node: NodeId,
        entered_by: Option<(NodeId, &'a crate::skill::Include)>,
        stack: &[Frame],
        analysis: &mut Analysis<'a>,
    ) -> Range<usize> {
        let skill = analysis.nodes[node].skill;
        analysis.nodes[node].entered_by = entered_by;
        let mut blocked: Vec<String> = Vec::new();
        for fields in skill.overrides.values() {
            for field in crate::skill::locked_fields(fields) {
                if !blocked.contains(&field) {
                    blocked.push(field);
                }
            }
        }
        if !blocked.is_empty() {
            analysis.errors.push(ResolveError::NonOverridable {
                fields: blocked,
                skill: skill.name.clone(),
                path: analysis.path_text(stack, Some(skill.name.as_str())),
            });
        }
        for (target, fields) in skill.overrides.iter() {
            for (field, found, expected) in mistyped_fields(fields) {
                analysis.warnings.push(ResolveWarning::MistypedOverride {
                    skill: skill.name.clone(),
                    site: Site::OverrideField {
                        target: target.clone(),
                        field: field.clone(),
                    },
                    field,
                    found,
                    expected,
                });
            }
        }
        // One pass over the items (a closure is mostly tool refs and
        // includes): edges and tool-ref entries in item order.
        let edges_start = analysis.edges.len();
        let refs_start = analysis.refs.len();
        let mut others = false;
        for item in &skill.items {
            match item {
                SkillItem::Include(include) => {
                    // One hash of the name, whether it is new or not.
                    let target = match analysis.index.entry(include.skill.as_str()) {
                        Slot::Occupied(slot) => Some(*slot.get()),
                        Slot::Vacant(slot) => self.skills.skill(&include.skill).map(|child| {
                            let id = analysis.nodes.len();
                            slot.insert(id);
                            analysis.nodes.push(Node::new(child));
                            id
                        }),
                    };
                    analysis.edges.push(Edge { include, target });
                }
                SkillItem::ToolRef { name } => {
                    let id = analysis.intern_ref(name);
                    if analysis.ref_tools[id].is_none() {
                        analysis.ref_tools[id] = Some(self.tools.tool(name));
                    }
                    analysis.refs.push(id);
                }
                SkillItem::InlineTool(_) | SkillItem::McpSource(_) | SkillItem::AgentSource(_) => {
                    others = true;
                }
            }
        }
        let edges = edges_start..analysis.edges.len();
        let refs = refs_start..analysis.refs.len();
        let others_start = analysis.entries.len();
        let others = if others {
            other_entries(skill, self.tools, &mut analysis.warnings)
        } else {
            Vec::new()
        };
        for entry in others {
            let id = analysis.intern(Cow::Owned(entry.name));
            let tool = match entry.tool {
                None => EntryTool::Unknown,
                Some(Cow::Borrowed(spec)) => EntryTool::Found(spec),
                Some(Cow::Owned(spec)) => {
                    analysis.inline.push(spec);
                    EntryTool::Inline(analysis.inline.len() - 1)
                }
            };
            analysis.entries.push(Entry {
                name: id,
                kind: entry.kind,
                tool,
            });
        }
        let others = others_start..analysis.entries.len();
        let entered = &mut analysis.nodes[node];
        // u32 keeps a node at 80 bytes; no stack is 4 billion skills deep.
        entered.visit = Visit::Open(u32::try_from(stack.len()).unwrap_or(u32::MAX));
        entered.refs = refs;
        entered.others = others;
        entered.edges = edges.clone();
        let entered = &analysis.nodes[node];
        // Collected first: the entries are borrowed from `analysis`.
        let mut warnings = Vec::new();
        for entry in analysis.own(entered) {
            if !matches!(entry.tool, EntryTool::Unknown) {
                continue;
            }
            let name = analysis.name(entry.name);
            match entry.kind {
                ItemKind::ToolRef => warnings.push(ResolveWarning::UnknownTool {
                    skill: skill.name.clone(),
                    tool: name.to_owned(),
                }),
                ItemKind::AgentSource => {
                    let path = name.strip_prefix("agent_skill:").unwrap_or(name);
                    warnings.push(ResolveWarning::UnknownAgentSkill {
                        skill: skill.name.clone(),
                        path: path.to_owned(),
                    });
                }
                _ => {}
            }
        }
        for target in skill.overrides.keys() {
            if !analysis
                .own(entered)
                .any(|entry| analysis.name(entry.name) == target)
            {
                warnings.push(ResolveWarning::UnmatchedOverride {
                    skill: skill.name.clone(),
                    target: target.clone(),
                });
            }
        }
        analysis.warnings.append(&mut warnings);
        edges
    }

    /// The reverse walk (see the module documentation): each entry's winning
    /// occurrence, in first-occurrence order, with the name of each.
    pub(super) fn collect_last_metadata(
        &self,
        root: &SkillName,
        analysis: &Analysis<'a>,
    ) -> (Vec<ResolvedToolEntry>, Vec<NameId>) {
        let mut winners: Vec<Option<ResolvedToolEntry>> = Vec::new();
        winners.resize_with(analysis.names.len(), || None);
        // A slot, once filled, is never replaced: when every name has its
        // winner, the rest of the walk cannot change anything.
        let mut open = analysis.names.len();
        let mut visited = vec![false; analysis.nodes.len()];
        // The root is node 0 whenever the forward walk found it.
        let mut stack: Vec<(NodeId, Via<'a>)> = Vec::new();
        if !analysis.nodes.is_empty() {
            stack.push((0, Via::Root));
        }
        while let Some((id, via)) = stack.pop() {
            if open == 0 {
                break;
            }
            if visited[id] {
                continue;
            }
            visited[id] = true;
            let node = &analysis.nodes[id];
            let skill = node.skill;
            let path = match via {
                Via::Root => IncludePath::root(root.clone()),
                Via::Include(parent, overrides) => parent.child(skill.name.clone(), overrides),
            };
            for entry in analysis.own(node).rev() {
                let slot = &mut winners[entry.name];
                if slot.is_some() {
                    continue;
                }
                open -= 1;
                let name = analysis.name(entry.name);
                *slot = Some(ResolvedToolEntry {
                    name: name.to_owned(),
                    source_skill: skill.name.clone(),
                    is_inline: entry.kind == ItemKind::InlineTool,
                    overrides: entry_overrides(skill, name, &path),
                    include_path: path.clone(),
                    kind: entry.kind,
                    tool: analysis.spec(entry.tool).cloned(),
                });
            }
            for edge in &analysis.edges[node.edges.clone()] {
                if let Some(child) = edge.target
                    && !visited[child]
                {
                    stack.push((child, Via::Include(path.clone(), &edge.include.overrides)));
                }
            }
        }
        let mut ids = Vec::with_capacity(analysis.order.len());
        let entries = analysis
            .order
            .iter()
            .filter_map(|&id| {
                let entry = winners[id].take()?;
                ids.push(id);
                Some(entry)
            })
            .collect();
        (entries, ids)
    }
}

pub(super) fn entry_overrides(skill: &Skill, name: &str, path: &IncludePath) -> ValueMap {
    let mut overrides = skill.overrides.get(name).cloned().unwrap_or_default();
    for (key, value) in path.0.overrides.iter() {
        overrides.insert(key.clone(), value.clone());
    }
    overrides
}
