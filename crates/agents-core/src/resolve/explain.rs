//! Why an entry is in a tool set and where its overrides came from
//! ([`SkillResolver::explain`]).

#[allow(
    clippy::wildcard_imports,
    reason = "a part of `resolve`, which it names whole"
)]
use super::*;

/// Why one entry is in a tool set and where its overrides came from
/// ([`SkillResolver::explain`]).
///
/// The resolver walks each skill once (see the module documentation), so a
/// sub-skill shared by many include paths is not expanded once per path. What
/// is recorded for an entry is therefore: one occurrence per skill that
/// defines it, at the include path by which the depth-first walk first
/// reached that skill, in the order the walk finished those skills; then the
/// winning occurrence (the last one in the full expansion, found by the
/// reverse walk), marked `won`, when it is not already the last recorded one.
/// The paths through a shared skill between its first and its last can
/// neither fix the entry's position nor win, so nothing that decided the
/// entry is left out, and the record stays linear in the closure, not in
/// the number of paths (2^40 in a 40-layer diamond lattice).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// Where the entry appeared, in depth-first order; the first fixed its
    /// position, the one with `won` its metadata. At most
    /// [`MAX_OCCURRENCES`]: the first and the last half of that many.
    pub occurrences: Vec<Occurrence>,
    /// How many occurrences between those were left out (a chain whose every
    /// skill names the entry has one per skill, each with a path as long as
    /// the chain: listing them all made `--explain --format json` quadratic
    /// in the depth, 2 GB for 12,500 skills).
    pub more_occurrences: usize,
    /// One per key of the entry's final overrides, in their order.
    pub overrides: Vec<OverrideOrigin>,
}

/// One place an entry appeared during flattening.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Occurrence {
    /// From the root to the skill that defines the entry there.
    pub include_path: IncludePath,
    /// The overrides the entry carried there.
    pub overrides: ValueMap,
    /// True for exactly one occurrence: the last, whose metadata the entry has.
    pub won: bool,
}

/// Where one key of an entry's final overrides came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverrideOrigin {
    /// The override key.
    pub key: String,
    /// The value that won.
    pub winner: OverrideLayer,
    /// Weaker values for the same key it replaced, weakest first: the
    /// [`MAX_REPLACED`] nearest the winner.
    pub replaced: Vec<OverrideLayer>,
    /// How many weaker values there were beyond those (a chain with an
    /// override on every include has one per include: listing them all for
    /// every entry made `--explain` quadratic in the depth).
    pub more_replaced: usize,
}

/// The most replaced values an [`OverrideOrigin`] lists.
pub const MAX_REPLACED: usize = 10;

/// The most occurrences an [`Explanation`] lists: the first half of them
/// (the first fixed the entry's position) and the last half (the winner is
/// last).
pub const MAX_OCCURRENCES: usize = 10;

/// One value an override key had at one layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverrideLayer {
    /// The value.
    pub value: serde_json::Value,
    /// The skill that declared it (in its `overrides:` or on an include).
    pub from: SkillName,
    /// From the root to `from`.
    pub include_path: IncludePath,
}

/// One override layer: the value, the skill that wrote it and the path to
/// that skill.
pub(super) type Layer<'e> = (&'e serde_json::Value, &'e SkillName, &'e IncludePath);

/// The include-edge layers setting one key on the path from the root to a
/// path node, strongest (nearest the root) first: the first
/// `MAX_REPLACED + 1` of them, and how many there are in all.
#[derive(Default, Clone)]
pub(super) struct EdgeLayers<'e> {
    pub(super) kept: Vec<Layer<'e>>,
    pub(super) count: usize,
}

/// [`EdgeLayers`] per path node and key, for `--explain`: a node's are its
/// parent's plus its own include edge, so each (node, key) is computed once
/// and entries sharing a path do not each walk it (a chain of thousands of
/// skills with an override on every include walked it once per entry:
/// quadratic).
#[derive(Default)]
pub(super) struct PathLayers<'e> {
    /// By the path node's address (the entries keep every node alive while
    /// this exists) and the key.
    pub(super) known: HashMap<(*const PathNode, &'e str), Arc<EdgeLayers<'e>>>,
    /// Path nodes computed, for the test that pins the linear cost.
    pub(super) steps: usize,
}

impl<'e> PathLayers<'e> {
    pub(super) fn of(&mut self, path: &'e IncludePath, key: &'e str) -> Arc<EdgeLayers<'e>> {
        // Up to the nearest node already known (or past the root)...
        let mut todo: Vec<&'e IncludePath> = Vec::new();
        let mut known = Arc::new(EdgeLayers::default());
        let mut at = Some(path);
        while let Some(node) = at {
            if let Some(done) = self.known.get(&(Arc::as_ptr(&node.0), key)) {
                known = Arc::clone(done);
                break;
            }
            todo.push(node);
            at = node.parent();
        }
        // ... then down again, adding each node's include edge.
        for node in todo.into_iter().rev() {
            self.steps += 1;
            let edge = node.0.edge.as_deref().and_then(|edge| edge.get(key));
            if let (Some(value), Some(parent)) = (edge, node.parent()) {
                let mut next = EdgeLayers::clone(&known);
                next.count += 1;
                if next.kept.len() <= MAX_REPLACED {
                    next.kept.push((value, parent.last(), parent));
                }
                known = Arc::new(next);
            }
            self.known
                .insert((Arc::as_ptr(&node.0), key), Arc::clone(&known));
        }
        known
    }
}

/// The [`IncludePath`] each reached skill was first entered by, built on
/// demand from [`Node::entered_by`] and kept, so building the paths of every
/// skill costs one path node per skill (a path shares its parent's).
pub(super) struct FirstPaths(Vec<Option<IncludePath>>);

impl FirstPaths {
    pub(super) fn new(nodes: usize) -> Self {
        let mut paths = Vec::new();
        paths.resize_with(nodes, || None);
        Self(paths)
    }

    pub(super) fn get(&mut self, analysis: &Analysis<'_>, node: NodeId) -> IncludePath {
        // Up to the nearest path already built (or the root's, built now),
        // then down, building and keeping each path on the way.
        let mut below = Vec::new();
        let mut at = node;
        let mut path = loop {
            if let Some(path) = &self.0[at] {
                break path.clone();
            }
            match analysis.nodes[at].entered_by {
                Some((parent, include)) => {
                    below.push((at, include));
                    at = parent;
                }
                None => {
                    let root = IncludePath::root(analysis.nodes[at].skill.name.clone());
                    self.0[at] = Some(root.clone());
                    break root;
                }
            }
        };
        for &(id, include) in below.iter().rev() {
            path = path.child(analysis.nodes[id].skill.name.clone(), &include.overrides);
            self.0[id] = Some(path.clone());
        }
        path
    }
}

impl<'a> SkillResolver<'a> {
    /// Flattens `root` like [`Self::resolve`] and says, for every entry, where
    /// it occurred and where each of its final overrides came from (the
    /// explanations are parallel to `entries`; see [`Explanation`] for what
    /// is recorded). Cost: linear in the occurrences recorded (at most one per
    /// skill defining the entry, plus the winning one), times the length of
    /// the include paths printed with them.
    pub fn explain(
        &self,
        root: &SkillName,
    ) -> Result<(Resolution, Vec<Explanation>), ResolveError> {
        let mut analysis = self.analyze(root)?;
        if !analysis.errors.is_empty() {
            return Err(analysis.errors.swap_remove(0));
        }
        let (entries, ids) = self.collect_last_metadata(root, &analysis);
        duplicate_agent_skills(root, &entries, &mut analysis.warnings);
        let explanations = self.explanations(&analysis, &entries, &ids);
        Ok((
            Resolution {
                root: root.clone(),
                entries,
                warnings: analysis.warnings,
            },
            explanations,
        ))
    }

    pub(super) fn explanations(
        &self,
        analysis: &Analysis<'a>,
        entries: &[ResolvedToolEntry],
        ids: &[NameId],
    ) -> Vec<Explanation> {
        let mut seen: Vec<Vec<Occurrence>> = Vec::new();
        seen.resize_with(analysis.names.len(), Vec::new);
        let mut paths = FirstPaths::new(analysis.nodes.len());
        let mut layers = PathLayers::default();
        for &id in &analysis.finished {
            let node = &analysis.nodes[id];
            let path = paths.get(analysis, id);
            for entry in analysis.own(node) {
                seen[entry.name].push(Occurrence {
                    include_path: path.clone(),
                    overrides: entry_overrides(node.skill, analysis.name(entry.name), &path),
                    won: false,
                });
            }
        }
        entries
            .iter()
            .zip(ids)
            .map(|(entry, &id)| {
                let mut occurrences = std::mem::take(&mut seen[id]);
                match occurrences.last_mut() {
                    Some(last)
                        if last.include_path == entry.include_path
                            && last.overrides == entry.overrides =>
                    {
                        last.won = true;
                    }
                    _ => occurrences.push(Occurrence {
                        include_path: entry.include_path.clone(),
                        overrides: entry.overrides.clone(),
                        won: true,
                    }),
                }
                let overrides = self.override_origins(entry, &mut layers);
                let more_occurrences = occurrences.len().saturating_sub(MAX_OCCURRENCES);
                if more_occurrences > 0 {
                    let head = MAX_OCCURRENCES / 2;
                    occurrences.drain(head..head + more_occurrences);
                }
                Explanation {
                    occurrences,
                    more_occurrences,
                    overrides,
                }
            })
            .collect()
    }

    /// Where each of `entry`'s final overrides came from: the layers from the
    /// strongest (the root's include edge) to the weakest (the defining
    /// skill's own `overrides:`). The include edges come from `layers`, which
    /// walks each path node once per key however many entries share it.
    pub(super) fn override_origins<'e>(
        &self,
        entry: &'e ResolvedToolEntry,
        layers: &mut PathLayers<'e>,
    ) -> Vec<OverrideOrigin> {
        // No final override, no origin to find: the path is not walked.
        if entry.overrides.is_empty() {
            return Vec::new();
        }
        let own = self
            .skills
            .skill(&entry.source_skill)
            .and_then(|skill| skill.overrides.get(&entry.name));
        entry
            .overrides
            .iter()
            .filter_map(|(key, _)| {
                let edges = layers.of(&entry.include_path, key);
                let own = own
                    .and_then(|fields| fields.get(key))
                    .map(|value| (value, &entry.source_skill, &entry.include_path));
                let total = edges.count + usize::from(own.is_some());
                // Strongest first: the winner, then the layers it replaced,
                // of which the nearest `MAX_REPLACED` are kept.
                let mut found =
                    edges
                        .kept
                        .iter()
                        .copied()
                        .chain(own)
                        .map(|(value, from, path): Layer<'_>| OverrideLayer {
                            value: value.clone(),
                            from: from.clone(),
                            include_path: path.clone(),
                        });
                let winner = found.next()?;
                let mut replaced: Vec<OverrideLayer> = found.take(MAX_REPLACED).collect();
                let more_replaced = total - 1 - replaced.len();
                replaced.reverse();
                Some(OverrideOrigin {
                    key: key.clone(),
                    winner,
                    replaced,
                    more_replaced,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    #[test]
    pub(super) fn explaining_a_deep_chain_walks_each_path_node_once_per_key() {
        // 2,000 skills in a chain, each with its own tool, `lvl` overridden
        // on every include: every entry's path is a prefix of the deepest,
        // so the layers cost one step per node, not one per node per entry.
        const DEPTH: usize = 2_000;
        let name = |i: usize| SkillName::new(&format!("c/s{i}")).unwrap();
        let mut skills = SkillMap::default();
        let mut tools = crate::ToolRegistry::new();
        for i in 0..DEPTH {
            let mut skill = Skill::new(name(i));
            let tool = format!("c/t{i}");
            tools
                .register(ToolSpec::new(&tool, "t", ToolSource::Custom), false)
                .unwrap();
            skill.items.push(SkillItem::ToolRef {
                name: tool.as_str().into(),
            });
            if i + 1 < DEPTH {
                let mut overrides = ValueMap::new();
                overrides.insert("lvl".into(), serde_json::json!(i));
                skill.items.push(SkillItem::Include(crate::Include {
                    skill: name(i + 1),
                    overrides: overrides.into(),
                }));
            }
            skills.insert(skill.name.clone(), skill);
        }
        let resolver = SkillResolver::new(&skills, &tools);
        let (resolution, explanations) = resolver.explain(&name(0)).unwrap();
        let last = format!("c/t{}", DEPTH - 1);
        let at = resolution
            .entries
            .iter()
            .position(|e| e.name == last)
            .unwrap();
        let deepest = &explanations[at].overrides[0];
        assert_eq!(deepest.winner.value, serde_json::json!(0));
        assert_eq!(deepest.more_replaced, DEPTH - 2 - MAX_REPLACED);
        let mut layers = PathLayers::default();
        for entry in &resolution.entries {
            resolver.override_origins(entry, &mut layers);
        }
        assert!(layers.steps <= DEPTH, "{} steps", layers.steps);
    }
}
