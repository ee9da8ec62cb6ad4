#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Behaviour of the resolver, summary and plan validation, rule by rule.

use std::collections::HashMap;

use agents_core::*;
use serde_json::{Value, json};

fn name(s: &str) -> SkillName {
    SkillName::new(s).unwrap()
}

fn map(value: Value) -> ValueMap {
    value.as_object().unwrap().clone()
}

/// A tiny builder: `skill("a/x").tools(["t1"]).include("a/y")`.
struct B(Skill);
fn skill(n: &str) -> B {
    B(Skill::new(name(n)))
}
impl B {
    fn tools<const N: usize>(mut self, tools: [&str; N]) -> Self {
        for t in tools {
            self.0.items.push(SkillItem::ToolRef { name: t.into() });
        }
        self
    }
    fn include(self, n: &str) -> Self {
        self.include_with(n, json!({}))
    }
    fn include_with(mut self, n: &str, overrides: Value) -> Self {
        self.0.items.push(SkillItem::Include(Include {
            skill: name(n),
            overrides: map(overrides).into(),
        }));
        self
    }
    fn inline(mut self, tool: InlineTool) -> Self {
        self.0.items.push(SkillItem::InlineTool(Box::new(tool)));
        self
    }
    fn mcp(mut self, server: &str, allow: Option<Vec<&str>>) -> Self {
        self.0.items.push(SkillItem::McpSource(Box::new(McpSource {
            server: server.into(),
            tools: allow.map(|a| a.into_iter().map(String::from).collect()),
            ..McpSource::default()
        })));
        self
    }
    fn agent(mut self, path: &str) -> Self {
        self.0
            .items
            .push(SkillItem::AgentSource(AgentSource { path: path.into() }));
        self
    }
    fn override_(mut self, tool: &str, fields: Value) -> Self {
        self.0.overrides.insert(tool.into(), map(fields));
        self
    }
}

fn set(skills: Vec<B>) -> HashMap<SkillName, Skill> {
    skills
        .into_iter()
        .map(|b| (b.0.name.clone(), b.0))
        .collect()
}

fn tools(names: &[&str]) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for n in names {
        registry
            .register(
                ToolSpec::new(*n, format!("{n} tool"), ToolSource::Builtin),
                false,
            )
            .unwrap();
    }
    registry
}

fn resolve(
    skills: &HashMap<SkillName, Skill>,
    registry: &ToolRegistry,
    root: &str,
) -> Result<Resolution, ResolveError> {
    SkillResolver::new(skills, registry).resolve(&name(root))
}

fn names(resolution: &Resolution) -> Vec<&str> {
    resolution.entries.iter().map(|e| e.name.as_str()).collect()
}

#[test]
fn includes_are_resolved_depth_first_before_own_tools() {
    let skills = set(vec![
        skill("l/root")
            .tools(["r1", "r2"])
            .include("l/a")
            .include("l/b"),
        skill("l/a").tools(["a1"]).include("l/c"),
        skill("l/b").tools(["b1"]),
        skill("l/c").tools(["c1"]),
    ]);
    let r = resolve(&skills, &ToolRegistry::new(), "l/root").unwrap();
    assert_eq!(names(&r), ["c1", "a1", "b1", "r1", "r2"]);
    let c1 = &r.entries[0];
    assert_eq!(c1.source_skill, name("l/c"));
    let path: Vec<_> = c1
        .include_path
        .skills()
        .into_iter()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(path, ["l/root", "l/a", "l/c"]);
}

#[test]
fn own_items_come_in_spec_order_tool_refs_inline_mcp_agent() {
    let mut registry = tools(&["t"]);
    let mut mcp = ToolSpec::new("mcp:gh/create_issue", "Create", ToolSource::Mcp);
    mcp.source_metadata = map(json!({"server": "gh"}));
    registry.register(mcp, false).unwrap();
    // Items interleaved on purpose: kind order must win over item order.
    let skills = set(vec![
        skill("l/root")
            .agent("/skills/pdf")
            .mcp("gh", None)
            .inline(InlineTool::default())
            .tools(["t"])
            .inline(InlineTool::default()),
    ]);
    let r = resolve(&skills, &registry, "l/root").unwrap();
    assert_eq!(
        names(&r),
        [
            "t",
            "l/root/_anon_0",
            "l/root/_anon_1",
            "mcp:gh/create_issue",
            "agent_skill:/skills/pdf"
        ]
    );
    assert!(r.entries[1].is_inline && !r.entries[0].is_inline);
    assert_eq!(
        r.entries[1].tool.as_ref().unwrap().source,
        ToolSource::Custom
    );
    assert_eq!(r.entries[3].kind, ItemKind::McpSource);
    // The agent skill is unknown to the lookup: kept, without a spec.
    assert!(r.entries[4].tool.is_none());
}

#[test]
fn duplicates_keep_first_position_and_last_metadata() {
    let skills = set(vec![
        skill("l/root")
            .include("l/a")
            .include_with("l/b", json!({"via": "b"}))
            .tools(["x"]),
        skill("l/a")
            .tools(["shared", "a1"])
            .override_("shared", json!({"from": "a"})),
        skill("l/b")
            .tools(["b1", "shared"])
            .override_("shared", json!({"from": "b"})),
    ]);
    let r = resolve(&skills, &tools(&["shared", "a1", "b1", "x"]), "l/root").unwrap();
    assert_eq!(names(&r), ["shared", "a1", "b1", "x"]);
    let shared = &r.entries[0];
    assert_eq!(shared.source_skill, name("l/b"));
    assert_eq!(shared.overrides, map(json!({"from": "b", "via": "b"})));
    assert_eq!(shared.include_path.to_string(), "l/root -> l/b");
}

#[test]
fn last_occurrence_wins_through_diamonds_with_different_paths() {
    // root -> [left -> base, right -> base]; base's entry last occurs via right.
    let skills = set(vec![
        skill("l/root")
            .include_with("l/left", json!({"side": "left"}))
            .include_with("l/right", json!({"side": "right"})),
        skill("l/left").include("l/base"),
        skill("l/right").include("l/base"),
        skill("l/base").tools(["t"]),
    ]);
    let r = resolve(&skills, &tools(&["t"]), "l/root").unwrap();
    assert_eq!(r.entries.len(), 1);
    assert_eq!(r.entries[0].overrides, map(json!({"side": "right"})));
    assert_eq!(
        r.entries[0].include_path.to_string(),
        "l/root -> l/right -> l/base"
    );
}

#[test]
fn skill_level_overrides_apply_to_own_matching_entries_only() {
    let skills = set(vec![
        skill("l/root")
            .tools(["t1"])
            .include("l/a")
            .override_("t1", json!({"timeout_s": 10}))
            .override_("a1", json!({"x": 1})),
        skill("l/a").tools(["a1"]),
    ]);
    let r = resolve(&skills, &tools(&["t1", "a1"]), "l/root").unwrap();
    assert_eq!(r.entries[0].name, "a1");
    assert!(
        r.entries[0].overrides.is_empty(),
        "root's override must not reach a1 of l/a"
    );
    assert_eq!(r.entries[1].overrides, map(json!({"timeout_s": 10})));
    assert!(r.warnings.contains(&ResolveWarning::UnmatchedOverride {
        skill: name("l/root"),
        target: "a1".into()
    }));
}

#[test]
fn overrides_of_a_type_the_registry_cannot_use_warn() {
    let skills = set(vec![
        skill("l/root")
            .include_with(
                "l/sub",
                json!({"writes": "no", "timeout_s": 0, "approval": 1}),
            )
            .tools(["t"])
            .override_(
                "t",
                json!({"read_only": "true", "description": 42, "title": "ok"}),
            ),
        skill("l/sub").tools(["u"]),
    ]);
    let r = resolve(&skills, &tools(&["t", "u"]), "l/root").unwrap();
    let lines: Vec<String> = r.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "Skill 'l/root': override `read_only` for 't' is a string, expected `true` or `false`; it counts as unset and hides any weaker value of `read_only`",
            "Skill 'l/root': override `description` for 't' is a number, expected a string; it counts as unset and hides any weaker value of `description`",
            "Skill 'l/root': override `writes` on its include of 'l/sub' is a string, expected `true` or `false`; it counts as unset and hides any weaker value of `writes`",
            "Skill 'l/root': override `timeout_s` on its include of 'l/sub' is `0`, expected a whole number of seconds from 1; it counts as unset and hides any weaker value of `timeout_s`",
        ]
    );
}

#[test]
fn include_overrides_shallow_merge_and_outer_beats_inner() {
    let skills = set(vec![
        skill("l/root").include_with("l/mid", json!({"approval": "required", "level": "outer"})),
        skill("l/mid")
            .include_with("l/leaf", json!({"level": "inner", "keep": true}))
            .tools(["m"]),
        skill("l/leaf").tools(["t"]).override_(
            "t",
            json!({"timeout_s": 5, "level": "own", "nested": {"a": 1}}),
        ),
    ]);
    let r = resolve(&skills, &tools(&["t", "m"]), "l/root").unwrap();
    let t = &r.entries[0];
    assert_eq!(
        t.overrides,
        map(
            json!({"timeout_s": 5, "level": "outer", "nested": {"a": 1}, "keep": true, "approval": "required"})
        )
    );
    // Every entry the include contributes gets the include's overrides.
    assert_eq!(
        r.entries[1].overrides,
        map(json!({"approval": "required", "level": "outer"}))
    );
}

#[test]
fn non_overridable_fields_are_refused_with_skill_and_include_path() {
    let skills = set(vec![
        skill("l/root").include("l/a"),
        skill("l/a").include_with("l/b", json!({"source_skill": "x", "is_inline": true})),
        skill("l/b").tools(["t"]),
    ]);
    let err = resolve(&skills, &tools(&["t"]), "l/root").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Non-overridable field(s) 'source_skill', 'is_inline' in overrides from skill 'l/a' (include path: l/root -> l/a -> l/b)"
    );
    let skills = set(vec![
        skill("l/root")
            .tools(["t"])
            .override_("t", json!({"name": "other"})),
    ]);
    let err = resolve(&skills, &tools(&["t"]), "l/root").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Non-overridable field(s) 'name' in overrides from skill 'l/root' (include path: l/root)"
    );
}

#[test]
fn missing_includes_name_the_declaring_skill_and_path() {
    let skills = set(vec![
        skill("l/root").include("l/a"),
        skill("l/a").include("l/ghost"),
    ]);
    let err = resolve(&skills, &ToolRegistry::new(), "l/root").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Skill 'l/a': Included skill 'l/ghost' not found (include path: l/root -> l/a)"
    );
}

#[test]
fn long_include_paths_in_errors_show_head_and_tail() {
    // A chain of 3,000 skills, each with a missing include and a forbidden
    // override on its include edge: one error per skill, each naming its
    // path. Written out in full those would be quadratic in the depth.
    let n = 3_000;
    let skills = set((0..n)
        .map(|i| {
            let b = skill(&format!("l/s{i}")).include(&format!("l/ghost{i}"));
            if i + 1 < n {
                b.include_with(&format!("l/s{}", i + 1), json!({"name": "x"}))
            } else {
                b
            }
        })
        .collect());
    let errors = SkillResolver::new(&skills, &ToolRegistry::new()).check(&name("l/s0"));
    assert_eq!(errors.len(), 2 * n - 1);
    let deepest = errors
        .iter()
        .find_map(|err| match err {
            ResolveError::MissingInclude { include, path, .. }
                if include.as_str() == "l/ghost2999" =>
            {
                Some(path.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        deepest,
        "l/s0 -> l/s1 -> l/s2 -> l/s3 -> l/s4 -> … (3000 in all) … -> l/s2995 -> l/s2996 -> l/s2997 -> l/s2998 -> l/s2999"
    );
    let edge = errors
        .iter()
        .find_map(|err| match err {
            ResolveError::NonOverridable { skill, path, .. } if skill.as_str() == "l/s2998" => {
                Some(path.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        edge,
        "l/s0 -> l/s1 -> l/s2 -> l/s3 -> l/s4 -> … (3000 in all) … -> l/s2995 -> l/s2996 -> l/s2997 -> l/s2998 -> l/s2999"
    );
    assert!(errors.iter().all(|err| err.to_string().len() < 400));
    // Short paths are printed whole.
    let shallow = resolve(&skills, &ToolRegistry::new(), "l/s2995").unwrap_err();
    assert_eq!(
        shallow.to_string(),
        "Skill 'l/s2995': Included skill 'l/ghost2995' not found (include path: l/s2995)"
    );
}

#[test]
fn cycles_are_reported_with_the_full_cycle() {
    let skills = set(vec![
        skill("l/root").include("l/a"),
        skill("l/a").include("l/b"),
        skill("l/b").include("l/c"),
        skill("l/c").include("l/a"),
    ]);
    let err = resolve(&skills, &ToolRegistry::new(), "l/root").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Cycle detected in skill includes: l/a -> l/b -> l/c -> l/a"
    );
    let skills = set(vec![skill("l/self").include("l/self")]);
    let err = resolve(&skills, &ToolRegistry::new(), "l/self").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Cycle detected in skill includes: l/self -> l/self"
    );
}

#[test]
fn check_collects_every_problem() {
    let skills = set(vec![
        skill("l/root")
            .include("l/x")
            .include("l/y")
            .override_("t", json!({"name": 1})),
        skill("l/x").include("l/x"),
    ]);
    let errors = SkillResolver::new(&skills, &ToolRegistry::new()).check(&name("l/root"));
    assert_eq!(errors.len(), 3, "{errors:?}");
}

#[test]
fn diamond_lattice_of_forty_layers_is_linear() {
    // Each layer has two skills that both include both skills of the next layer:
    // 2^40 paths, 80 skills.
    let mut skills = Vec::new();
    for layer in 0..40 {
        for side in ["l", "r"] {
            let mut b = skill(&format!("d/{side}{layer}")).tools(
                [format!("t{layer}{side}").as_str()]
                    .map(|s| Box::leak(s.to_owned().into_boxed_str()) as &str),
            );
            if layer < 39 {
                b = b
                    .include(&format!("d/l{}", layer + 1))
                    .include(&format!("d/r{}", layer + 1));
            }
            skills.push(b);
        }
    }
    skills.push(skill("d/root").include("d/l0").include("d/r0"));
    let skills = set(skills);
    let source = Counting::new(&skills);
    let r = SkillResolver::new(&source, &ToolRegistry::new())
        .resolve(&name("d/root"))
        .unwrap();
    // Work counted, not timed: each of the 81 skills is looked up a bounded
    // number of times, not once per path.
    let lookups = source.lookups.get();
    assert!(lookups <= 2 * 81, "{lookups} look-ups");
    assert_eq!(r.entries.len(), 80);
    assert_eq!(r.entries[0].name, "t39l");
    assert_eq!(r.entries.last().unwrap().name, "t0r");
}

/// `c/s0` includes `c/s1` … includes `c/s{depth - 1}`; `c/sI` names tool `tI`.
fn chain(depth: usize) -> HashMap<SkillName, Skill> {
    let mut skills = Vec::new();
    for i in 0..depth {
        let mut b = skill(&format!("c/s{i}"));
        b.0.items.push(SkillItem::ToolRef {
            name: format!("t{i}").into(),
        });
        if i + 1 < depth {
            b = b.include(&format!("c/s{}", i + 1));
        }
        skills.push(b);
    }
    set(skills)
}

#[test]
fn ten_thousand_deep_chain_does_not_overflow_the_stack() {
    let depth = 10_000;
    let skills = chain(depth);
    let source = Counting::new(&skills);
    let r = SkillResolver::new(&source, &ToolRegistry::new())
        .resolve(&name("c/s0"))
        .unwrap();
    let lookups = source.lookups.get();
    assert!(lookups <= 2 * depth, "{lookups} look-ups");
    assert_eq!(r.entries.len(), depth);
    assert_eq!(r.entries[0].name, format!("t{}", depth - 1));
    assert_eq!(r.entries[0].include_path.len(), depth);
    // Shown by its ends, however deep; a short path whole.
    assert_eq!(
        r.entries[0].include_path.to_string(),
        format!(
            "c/s0 -> c/s1 -> c/s2 -> c/s3 -> c/s4 -> … ({depth} in all) … -> c/s{} -> c/s{} -> c/s{} -> c/s{} -> c/s{}",
            depth - 5,
            depth - 4,
            depth - 3,
            depth - 2,
            depth - 1
        )
    );
    for (len, entry) in r
        .entries
        .iter()
        .rev()
        .enumerate()
        .map(|(i, e)| (i + 1, e))
        .take(12)
    {
        let shown: Vec<String> = (0..len).map(|i| format!("c/s{i}")).collect();
        if len <= 11 {
            assert_eq!(entry.include_path.to_string(), shown.join(" -> "));
        } else {
            assert!(entry.include_path.to_string().contains("… (12 in all) …"));
        }
    }
    // A cycle at the bottom of the deep chain is still found, iteratively.
    let mut skills = skills;
    let last = name(&format!("c/s{}", depth - 1));
    skills
        .get_mut(&last)
        .unwrap()
        .items
        .push(SkillItem::Include(Include {
            skill: name("c/s0"),
            overrides: Default::default(),
        }));
    let err = resolve(&skills, &ToolRegistry::new(), "c/s0").unwrap_err();
    // Only the cycle's ends are kept, whatever its length.
    assert!(
        matches!(err, ResolveError::Cycle { ref cycle, len } if len == depth + 1 && cycle.len() == 10),
        "{err:?}"
    );
    assert!(
        err.to_string().ends_with(&format!(
            "c/s0 -> c/s1 -> c/s2 -> c/s3 -> c/s4 -> … ({} in all) … -> c/s{} -> c/s{} -> c/s{} -> c/s{} -> c/s0",
            depth + 1,
            depth - 4,
            depth - 3,
            depth - 2,
            depth - 1
        )),
        "{err}"
    );
}

#[test]
fn cycles_into_a_deep_stack_cost_the_same_each() {
    // A 10,000-deep chain whose every skill also includes the first: 10,000
    // back edges, the i-th closing a cycle of i + 2 skills. Keeping each
    // cycle whole would hold 50 million names; each keeps at most 10.
    let depth = 10_000;
    let mut skills = Vec::new();
    for i in 0..depth {
        let mut b = skill(&format!("c/s{i}")).include("c/s0");
        if i + 1 < depth {
            b = b.include(&format!("c/s{}", i + 1));
        }
        skills.push(b);
    }
    let skills = set(skills);
    let (errors, _) = SkillResolver::new(&skills, &ToolRegistry::new()).diagnose(&name("c/s0"));
    assert_eq!(errors.len(), depth);
    let mut lens = Vec::new();
    for error in &errors {
        let ResolveError::Cycle { cycle, len } = error else {
            panic!("{error:?}");
        };
        assert!(cycle.len() <= 11 && cycle.len() <= *len, "{error:?}");
        assert_eq!(cycle.first(), Some(&name("c/s0")));
        assert_eq!(cycle.last(), Some(&name("c/s0")));
        lens.push(*len);
    }
    lens.sort_unstable();
    assert_eq!(lens, (2..depth + 2).collect::<Vec<_>>());
    // Short cycles are kept whole.
    assert_eq!(
        errors
            .iter()
            .find(|e| matches!(e, ResolveError::Cycle { len: 3, .. }))
            .map(ToString::to_string)
            .as_deref(),
        Some("Cycle detected in skill includes: c/s0 -> c/s1 -> c/s0")
    );
    // A plan naming the chain reports every cycle once, and shows a bounded
    // part of them.
    let mut report = validate_plan(
        &Plan {
            skills: vec!["c/s0".into(), "c/s1".into()],
        },
        &skills,
        None,
    );
    // `c/s1` was reached from `c/s0`: its problems were reported then.
    assert_eq!(report.bound(agents_core::MAX_SHOWN), (depth, 0));
    assert_eq!(report.errors.len(), agents_core::MAX_SHOWN + 1);
    assert_eq!(
        report.errors.last().map(String::as_str),
        Some("… and 9900 more errors")
    );
    let shown: usize = report.errors.iter().map(String::len).sum();
    assert!(shown < 32 << 10, "{shown} bytes");
}

#[test]
fn a_plan_costs_its_combined_closure_once() {
    // A plan naming every skill of a 2,000-deep chain, then the head a
    // thousand times: each walked alone, that is 2 million skills entered
    // for the chain and 2 million more for the repeats.
    let depth = 2_000;
    let skills = chain(depth);
    let source = Counting::new(&skills);
    let mut names: Vec<String> = (0..depth).rev().map(|i| format!("c/s{i}")).collect();
    names.extend(std::iter::repeat_n("c/s0".to_owned(), 1_000));
    let report = validate_plan(&Plan { skills: names }, &source, Some(&ToolRegistry::new()));
    // Every tool is unknown: one error per skill, each once.
    assert_eq!(report.errors.len(), depth);
    let lookups = source.lookups.get();
    assert!(lookups <= 3 * depth, "{lookups} look-ups");
}

#[test]
fn mcp_entries_use_cached_tools_allow_list_and_warn() {
    let mut registry = ToolRegistry::new();
    for t in ["create_issue", "list_issues", "delete_repo"] {
        let mut spec = ToolSpec::new(format!("mcp:gh/{t}"), t, ToolSource::Mcp);
        spec.source_metadata = map(json!({"server": "gh"}));
        registry.register(spec, false).unwrap();
    }
    let skills = set(vec![
        skill("l/root")
            .mcp("gh", Some(vec!["create_issue", "list_issues", "nope"]))
            .mcp("never", Some(vec!["x"])),
    ]);
    let r = resolve(&skills, &registry, "l/root").unwrap();
    assert_eq!(
        names(&r),
        ["mcp:gh/create_issue", "mcp:gh/list_issues", "mcp:never/x"]
    );
    assert!(r.entries[2].tool.is_none());
    assert!(r.warnings.contains(&ResolveWarning::McpToolMissing {
        skill: name("l/root"),
        server: "gh".into(),
        tool: "nope".into(),
        did_you_mean: None,
    }));
    assert!(r.warnings.contains(&ResolveWarning::McpNotCached {
        skill: name("l/root"),
        server: "never".into()
    }));
}

#[test]
fn capability_summary_counts_inline_tools_and_root_sources() {
    let skills = set(vec![
        skill("l/root")
            .include("l/child")
            .inline(InlineTool {
                read_only: true,
                ..InlineTool::default()
            })
            .inline(InlineTool {
                writes: true,
                checkpointable: true,
                ..InlineTool::default()
            })
            .mcp("gh", Some(vec!["a"]))
            .agent("/p")
            .tools(["t"]),
        skill("l/child")
            .inline(InlineTool {
                writes: true,
                side_effects: Some(false),
                ..InlineTool::default()
            })
            .mcp("other", None)
            .agent("/q"),
    ]);
    let r = resolve(&skills, &tools(&["t"]), "l/root").unwrap();
    let summary = compute_capability_summary(&skills[&name("l/root")], &r.entries);
    assert_eq!(
        summary,
        SkillCapabilitySummary {
            total_tools: 7,
            read_only_tools: 1,
            write_tools: 2,
            checkpointable_tools: 1,
            has_side_effects: true,
            mcp_sources: 1,
            agent_skill_sources: 1,
        }
    );
    let quiet = set(vec![skill("l/q").inline(InlineTool {
        writes: true,
        side_effects: Some(false),
        ..InlineTool::default()
    })]);
    let r = resolve(&quiet, &ToolRegistry::new(), "l/q").unwrap();
    assert!(!compute_capability_summary(&quiet[&name("l/q")], &r.entries).has_side_effects);
}

#[test]
fn validate_plan_reports_all_errors_and_warnings() {
    let skills = set(vec![
        skill("l/ok").tools(["t"]),
        skill("l/broken").include("l/ghost").tools(["unknown"]),
        skill("l/loop").include("l/loop2"),
        skill("l/loop2").include("l/loop"),
        skill("l/forbidden")
            .tools(["t"])
            .override_("t", json!({"is_inline": false}))
            .override_("zzz", json!({"a": 1})),
    ]);
    let registry = tools(&["t"]);
    let plan = Plan {
        skills: vec![
            "l/ok".into(),
            "l/missing".into(),
            "l/broken".into(),
            "l/loop".into(),
            "l/forbidden".into(),
            "bad name".into(),
        ],
    };
    let report = validate_plan(&plan, &skills, Some(&registry));
    assert_eq!(
        report.errors,
        [
            "Skill 'l/missing' referenced in plan is not registered",
            "Skill 'l/broken': Included skill 'l/ghost' not found (include path: l/broken)",
            "Skill 'l/broken': Tool 'unknown' is not registered",
            "Skill 'l/loop': Cycle detected in skill includes: l/loop -> l/loop2 -> l/loop",
            "Non-overridable field(s) 'is_inline' in overrides from skill 'l/forbidden' (include path: l/forbidden)",
            "Plan: invalid skill name `bad name`: expected `namespace/short_name` matching `^[a-zA-Z0-9_-]+/[a-zA-Z0-9_-]+$`",
        ]
    );
    assert_eq!(
        report.warnings,
        ["Skill 'l/forbidden': override for 'zzz' matches no tool of the skill"]
    );
    // Without a tool registry, tool refs are not checked.
    let report = validate_plan(
        &Plan {
            skills: vec!["l/broken".into()],
        },
        &skills,
        None,
    );
    assert_eq!(report.errors.len(), 1);
    assert!(
        validate_plan(
            &Plan {
                skills: vec!["l/ok".into()]
            },
            &skills,
            Some(&registry)
        )
        .is_ok()
    );
}

#[allow(clippy::needless_range_loop)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Naive reference: expand the full depth-first sequence, then dedup.
    fn naive(skills: &HashMap<SkillName, Skill>, root: &SkillName) -> Vec<(String, SkillName)> {
        fn expand(
            skills: &HashMap<SkillName, Skill>,
            s: &SkillName,
            out: &mut Vec<(String, SkillName)>,
        ) {
            let skill = &skills[s];
            for inc in skill.includes() {
                expand(skills, &inc.skill, out);
            }
            for item in &skill.items {
                if let SkillItem::ToolRef { name } = item {
                    out.push((name.to_string(), s.clone()));
                }
            }
        }
        let mut all = Vec::new();
        expand(skills, root, &mut all);
        let mut order: Vec<String> = Vec::new();
        let mut last: HashMap<String, SkillName> = HashMap::new();
        for (n, s) in all {
            if !order.contains(&n) {
                order.push(n.clone());
            }
            last.insert(n, s);
        }
        order
            .into_iter()
            .map(|n| {
                let s = last[&n].clone();
                (n, s)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn matches_naive_expansion_on_random_dags(edges in proptest::collection::vec((0usize..8, 0usize..8), 0..20), tool_sets in proptest::collection::vec(proptest::collection::vec(0usize..6, 0..4), 8)) {
            let mut skills = HashMap::new();
            for i in 0..8 {
                let mut s = Skill::new(name(&format!("p/s{i}")));
                for (from, to) in &edges {
                    // Only forward edges: a DAG.
                    if *from == i && to > from {
                        s.items.push(SkillItem::Include(Include { skill: name(&format!("p/s{to}")), overrides: Default::default() }));
                    }
                }
                for t in &tool_sets[i] {
                    s.items.push(SkillItem::ToolRef { name: format!("t{t}").into() });
                }
                skills.insert(s.name.clone(), s);
            }
            let root = name("p/s0");
            let r = SkillResolver::new(&skills, &ToolRegistry::new()).resolve(&root).unwrap();
            let got: Vec<(String, SkillName)> = r.entries.iter().map(|e| (e.name.clone(), e.source_skill.clone())).collect();
            prop_assert_eq!(got, naive(&skills, &root));
        }
    }
}

// ----- resolution defects found in review ----------------------------------

#[test]
fn mcp_entries_keep_allow_list_order_whether_cached_or_not() {
    let skills = set(vec![skill("l/root").mcp("gh", Some(vec!["zeta", "alpha"]))]);
    let uncached = resolve(&skills, &ToolRegistry::new(), "l/root").unwrap();
    let mut registry = ToolRegistry::new();
    for t in ["alpha", "zeta"] {
        let mut spec = ToolSpec::new(format!("mcp:gh/{t}"), t, ToolSource::Mcp);
        spec.source_metadata = map(json!({"server": "gh"}));
        registry.register(spec, false).unwrap();
    }
    let cached = resolve(&skills, &registry, "l/root").unwrap();
    assert_eq!(names(&uncached), ["mcp:gh/zeta", "mcp:gh/alpha"]);
    assert_eq!(names(&cached), names(&uncached));
}

#[test]
fn unmatched_agent_source_warns() {
    let skills = set(vec![skill("l/root").agent("/nowhere/x")]);
    let r = resolve(&skills, &ToolRegistry::new(), "l/root").unwrap();
    assert!(r.entries[0].tool.is_none());
    assert!(r.warnings.contains(&ResolveWarning::UnknownAgentSkill {
        skill: name("l/root"),
        path: "/nowhere/x".into()
    }));
}

#[test]
fn same_agent_skill_under_two_names_warns() {
    let mut registry = ToolRegistry::new();
    let mut spec = ToolSpec::new("agent_skills/x", "x skill", ToolSource::AgentSkills);
    spec.source_metadata = map(json!({"path": "/skills/x"}));
    registry.register(spec, false).unwrap();
    let skills = set(vec![
        skill("l/root").tools(["agent_skills/x"]).agent("/skills/x"),
    ]);
    let r = resolve(&skills, &registry, "l/root").unwrap();
    assert_eq!(r.entries.len(), 2);
    assert!(r.warnings.contains(&ResolveWarning::DuplicateAgentSkill {
        skill: name("l/root"),
        first: "agent_skills/x".into(),
        second: "agent_skill:/skills/x".into(),
        tool: "agent_skills/x".into(),
    }));
}

mod export_names {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn registry_name() -> impl Strategy<Value = String> {
        prop_oneof![
            // Realistic shapes, with characters that need sanitising.
            "(builtin|custom|local)/[a-z_.:é -]{1,30}",
            "mcp:[a-zA-Z0-9_-]{1,20}/[a-zA-Z0-9_./:-]{1,80}",
            "agent_skill:[~/a-z._-]{1,60}",
            // Already valid names, including ones that look hashed.
            "[a-zA-Z0-9_-]{1,64}",
            "[a-z]{1,50}_[0-9a-f]{8}",
            // Anything at all.
            ".{1,200}",
        ]
    }

    /// What [`export_names`] keeps readable: the name sanitised as the
    /// module documentation says, when that is valid and unique.
    fn readable_of(name: &str) -> String {
        let single = export_names(&[name]).remove(0);
        let hashed = single.rsplit_once('_').is_some_and(|(_, hash)| {
            hash.len() == 8
                && hash
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        // Hashed alone: no readable form to keep.
        if hashed { String::new() } else { single }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn export_names_are_valid_deterministic_and_collision_free(
            names in proptest::collection::hash_set(registry_name(), 1..60)
        ) {
            let names: Vec<String> = names.into_iter().collect();
            let exported = export_names(&names);
            let mut reversed: Vec<String> = names.iter().rev().cloned().collect();
            let mut again = export_names(&reversed);
            again.reverse();
            reversed.reverse();
            // The same set in another order gives each name the same export name.
            prop_assert_eq!(&exported, &again);
            let mut seen: HashMap<&str, &str> = HashMap::new();
            for (name, export) in names.iter().zip(&exported) {
                prop_assert!(is_valid_export_name(export), "{name:?} -> {export:?}");
                if let Some(other) = seen.insert(export, name) {
                    // Only two hashed names sharing their prefix and 32-bit
                    // hash may meet (`export_tools` leaves them out); none
                    // does among these.
                    prop_assert!(false, "{other:?} and {name:?} both export as {export:?}");
                }
            }
        }

        /// A name whose readable form is valid and that no other name of
        /// the set shares keeps it: a hash only on a collision or an overflow.
        #[test]
        fn a_readable_name_is_hashed_only_on_a_collision_or_an_overflow(
            names in proptest::collection::hash_set(registry_name(), 1..30)
        ) {
            let names: Vec<String> = names.into_iter().collect();
            let exported = export_names(&names);
            for (name, export) in names.iter().zip(&exported) {
                let readable = readable_of(name);
                let shared = names
                    .iter()
                    .filter(|other| *other != name)
                    .any(|other| readable_of(other) == readable);
                if !readable.is_empty() && !shared {
                    prop_assert_eq!(export, &readable, "{:?}", name);
                }
            }
        }

        #[test]
        fn a_name_and_its_own_export_name_never_collide(name in registry_name()) {
            let exported = export_names(&[name.as_str()]).remove(0);
            if exported != name {
                let both = export_names(&[name.as_str(), exported.as_str()]);
                prop_assert_ne!(&both[0], &both[1]);
            }
        }
    }

    #[test]
    fn near_misses_do_not_collide() {
        // Same sanitised text, different registry names.
        let names = [
            "local/a.b",
            "local/a_b",
            "local:a_b",
            "local/a b",
            "local/a\u{e9}b",
        ];
        let exported: std::collections::HashSet<String> =
            export_names(&names).into_iter().collect();
        assert_eq!(exported.len(), names.len(), "{exported:?}");
    }
}

// ----- explain ----------------------------------------------------------

fn explain(
    skills: &HashMap<SkillName, Skill>,
    registry: &ToolRegistry,
    root: &str,
) -> (Resolution, Vec<Explanation>) {
    SkillResolver::new(skills, registry)
        .explain(&name(root))
        .unwrap()
}

fn paths(e: &Explanation) -> Vec<(String, Value, bool)> {
    e.occurrences
        .iter()
        .map(|o| {
            (
                o.include_path.to_string(),
                Value::Object(o.overrides.clone()),
                o.won,
            )
        })
        .collect()
}

#[test]
fn explain_a_diamond_shows_the_override_lost_on_the_first_path() {
    // root -> left {side: left} -> base; root -> right -> base. The last
    // occurrence (through right, without overrides) wins, and explain shows
    // the override that disappeared.
    let skills = set(vec![
        skill("l/root")
            .include_with("l/left", json!({"approval": "required"}))
            .include("l/right"),
        skill("l/left").include("l/base"),
        skill("l/right").include("l/base"),
        skill("l/base").tools(["t"]),
    ]);
    let (r, ex) = explain(&skills, &tools(&["t"]), "l/root");
    assert_eq!(r, resolve(&skills, &tools(&["t"]), "l/root").unwrap());
    assert_eq!(ex.len(), 1);
    assert_eq!(
        paths(&ex[0]),
        [
            (
                "l/root -> l/left -> l/base".to_owned(),
                json!({"approval": "required"}),
                false
            ),
            ("l/root -> l/right -> l/base".to_owned(), json!({}), true),
        ]
    );
    assert!(ex[0].overrides.is_empty());
}

#[test]
fn explain_records_every_defining_skill_once_and_exactly_one_winner() {
    // t is defined by root, a and the shared sub-skill s (reached through a and b).
    let skills = set(vec![
        skill("l/root").include("l/a").include("l/b").tools(["t"]),
        skill("l/a").include("l/s").tools(["t"]),
        skill("l/b").include("l/s"),
        skill("l/s").tools(["t", "u"]),
    ]);
    let (r, ex) = explain(&skills, &tools(&["t", "u"]), "l/root");
    assert_eq!(names(&r), ["t", "u"]);
    let t = paths(&ex[0]);
    assert_eq!(
        t.iter()
            .map(|(p, _, w)| (p.as_str(), *w))
            .collect::<Vec<_>>(),
        [
            ("l/root -> l/a -> l/s", false),
            ("l/root -> l/a", false),
            ("l/root", true),
        ]
    );
    // u only lives in the shared s: its first path and the winning last path.
    let u = paths(&ex[1]);
    assert_eq!(
        u.iter()
            .map(|(p, _, w)| (p.as_str(), *w))
            .collect::<Vec<_>>(),
        [
            ("l/root -> l/a -> l/s", false),
            ("l/root -> l/b -> l/s", true)
        ]
    );
    for e in &ex {
        assert_eq!(e.occurrences.iter().filter(|o| o.won).count(), 1);
        assert!(e.occurrences.last().unwrap().won);
    }
}

#[test]
fn explain_names_the_origin_of_each_nested_override_and_what_it_replaced() {
    let skills = set(vec![
        skill("l/root").include_with("l/mid", json!({"approval": "required", "level": "outer"})),
        skill("l/mid")
            .include_with("l/leaf", json!({"level": "inner", "keep": true}))
            .tools(["m"]),
        skill("l/leaf")
            .tools(["t"])
            .override_("t", json!({"timeout_s": 5, "level": "own"})),
    ]);
    let (r, ex) = explain(&skills, &tools(&["t", "m"]), "l/root");
    assert_eq!(r.entries[0].name, "t");
    type Origin = (String, Value, String, String, Vec<(Value, String)>);
    let origins: Vec<Origin> = ex[0]
        .overrides
        .iter()
        .map(|o| {
            (
                o.key.clone(),
                o.winner.value.clone(),
                o.winner.from.to_string(),
                o.winner.include_path.to_string(),
                o.replaced
                    .iter()
                    .map(|l| (l.value.clone(), l.from.to_string()))
                    .collect(),
            )
        })
        .collect();
    let want = |key: &str, value: Value, from: &str, path: &str, replaced: Vec<(Value, &str)>| {
        (
            key.to_owned(),
            value,
            from.to_owned(),
            path.to_owned(),
            replaced
                .into_iter()
                .map(|(v, f)| (v, f.to_owned()))
                .collect::<Vec<_>>(),
        )
    };
    let mut got = origins.clone();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        [
            want("approval", json!("required"), "l/root", "l/root", vec![]),
            want("keep", json!(true), "l/mid", "l/root -> l/mid", vec![]),
            want(
                "level",
                json!("outer"),
                "l/root",
                "l/root",
                vec![(json!("own"), "l/leaf"), (json!("inner"), "l/mid")]
            ),
            want(
                "timeout_s",
                json!(5),
                "l/leaf",
                "l/root -> l/mid -> l/leaf",
                vec![]
            ),
        ]
    );
    // One explanation key per final override key, in the entry's order.
    let keys: Vec<&String> = r.entries[0].overrides.keys().collect();
    assert_eq!(
        keys,
        ex[0].overrides.iter().map(|o| &o.key).collect::<Vec<_>>()
    );
}

#[test]
fn explain_lists_only_the_nearest_replaced_values_and_counts_the_rest() {
    // A chain of 16 with `lvl` overridden on every include: the root's value
    // wins over 15 weaker ones; the 10 nearest are listed, 5 counted.
    let mut skills = Vec::new();
    for i in 0..16 {
        let mut b = skill(&format!("c/s{i}")).tools([format!("t{i}").as_str()]);
        if i < 15 {
            b = b.include_with(&format!("c/s{}", i + 1), json!({"lvl": i}));
        }
        skills.push(b);
    }
    let names: Vec<String> = (0..16).map(|i| format!("t{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (r, ex) = explain(&set(skills), &tools(&refs), "c/s0");
    let deepest = r.entries.iter().position(|e| e.name == "t15").unwrap();
    let origin = &ex[deepest].overrides[0];
    assert_eq!(origin.winner.value, json!(0));
    assert_eq!(origin.replaced.len(), MAX_REPLACED);
    assert_eq!(origin.more_replaced, 14 - MAX_REPLACED);
    // Weakest first, and the ones kept are those next to the winner.
    let kept: Vec<&Value> = origin.replaced.iter().map(|l| &l.value).collect();
    assert_eq!(kept.first(), Some(&&json!(10)));
    assert_eq!(kept.last(), Some(&&json!(1)));
}

#[test]
fn explain_the_forty_layer_lattice_stays_linear() {
    let mut skills = Vec::new();
    for layer in 0..40 {
        for side in ["l", "r"] {
            let mut b = skill(&format!("d/{side}{layer}")).tools(["shared"]);
            if layer < 39 {
                b = b
                    .include_with(&format!("d/l{}", layer + 1), json!({"via": side}))
                    .include(&format!("d/r{}", layer + 1));
            }
            skills.push(b);
        }
    }
    skills.push(skill("d/root").include("d/l0").include("d/r0"));
    let skills = set(skills);
    let (r, ex) = explain(&skills, &ToolRegistry::new(), "d/root");
    assert_eq!(r.entries.len(), 1);
    // 80 defining skills, each recorded once, plus the winning path if it
    // differs from the last recorded one: not 2^40. Of those, the first
    // and the last five are listed and the rest counted.
    let n = ex[0].occurrences.len() + ex[0].more_occurrences;
    assert!((80..=81).contains(&n), "{n}");
    assert_eq!(ex[0].occurrences.len(), MAX_OCCURRENCES);
    assert_eq!(ex[0].occurrences.iter().filter(|o| o.won).count(), 1);
    assert!(ex[0].occurrences.last().unwrap().won);
}

#[test]
fn explain_lists_the_first_and_last_occurrences_of_a_long_chain() {
    // Every skill of a chain names the tool: one occurrence each, with a
    // path as long as the chain at that point.
    const DEPTH: usize = 200;
    let mut skills = Vec::new();
    for i in 0..DEPTH {
        let mut b = skill(&format!("c/s{i}")).tools(["builtin/x"]);
        if i + 1 < DEPTH {
            b = b.include_with(&format!("c/s{}", i + 1), json!({"timeout_s": i + 1}));
        }
        skills.push(b);
    }
    let skills = set(skills);
    let (_, ex) = explain(&skills, &ToolRegistry::new(), "c/s0");
    let ex = &ex[0];
    assert_eq!(ex.more_occurrences, DEPTH - MAX_OCCURRENCES);
    let lengths: Vec<usize> = ex
        .occurrences
        .iter()
        .map(|o| o.include_path.len())
        .collect();
    // The deepest five (the first the walk finished, one fixing the
    // position), then the shallowest five, the root's own winning.
    assert_eq!(lengths, [200, 199, 198, 197, 196, 5, 4, 3, 2, 1]);
    assert!(ex.occurrences[MAX_OCCURRENCES - 1].won);
}

#[test]
fn effective_capabilities_cover_every_entry_with_known_flags() {
    // A skill that only includes a shell-like builtin: the spec fields (inline
    // tools only) say no side effects; the effective block says yes.
    let mut registry = ToolRegistry::new();
    let mut shell = ToolSpec::new("builtin/shell", "run", ToolSource::Builtin);
    shell.read_only = Some(false);
    shell.writes = Some(true);
    let mut read = ToolSpec::new("builtin/read_file", "read", ToolSource::Builtin);
    read.read_only = Some(true);
    read.writes = Some(false);
    registry.register(shell, false).unwrap();
    registry.register(read, false).unwrap();
    let skills = set(vec![
        skill("l/root")
            .include("l/ops")
            .tools(["builtin/read_file", "custom/unknown"])
            .agent("/nowhere")
            // An override of a flag counts: read_file is declared checkpointable here.
            .override_("builtin/read_file", json!({"checkpointable": true})),
        skill("l/ops").tools(["builtin/shell"]),
    ]);
    let r = resolve(&skills, &registry, "l/root").unwrap();
    let root = &skills[&name("l/root")];
    let spec = compute_capability_summary(root, &r.entries);
    assert_eq!(spec.total_tools, 4);
    assert!(!spec.has_side_effects);
    assert_eq!(spec.write_tools, 0);
    assert_eq!(
        compute_effective_capabilities(&r.entries),
        EffectiveCapabilities {
            known_tools: 2,
            read_only_tools: 1,
            write_tools: 1,
            checkpointable_tools: 1,
            has_side_effects: true,
            unknown: vec!["custom/unknown".into(), "agent_skill:/nowhere".into()],
        }
    );
}

#[test]
fn capability_overrides_count_where_the_tool_is_unknown_and_writes_bring_side_effects() {
    // `custom/unknown` is not registered, and `builtin/grep` is read-only
    // with no side effects of its own: a skill declaring both `writes: true`
    // has tools with side effects.
    let mut registry = ToolRegistry::new();
    let mut grep = ToolSpec::new("builtin/grep", "search", ToolSource::Builtin);
    grep.read_only = Some(true);
    grep.writes = Some(false);
    grep.side_effects = Some(false);
    registry.register(grep, false).unwrap();
    let skills = set(vec![
        skill("l/root").include_with("l/inner", json!({"writes": true, "read_only": false})),
        skill("l/inner").tools(["builtin/grep", "custom/unknown"]),
    ]);
    let r = resolve(&skills, &registry, "l/root").unwrap();
    assert_eq!(
        compute_effective_capabilities(&r.entries),
        EffectiveCapabilities {
            known_tools: 2,
            read_only_tools: 0,
            write_tools: 2,
            checkpointable_tools: 0,
            has_side_effects: true,
            unknown: vec![],
        }
    );
    // An override that says no side effects is taken at its word.
    let skills = set(vec![
        skill("l/root").include_with("l/inner", json!({"writes": true, "side_effects": false})),
        skill("l/inner").tools(["custom/unknown"]),
    ]);
    let r = resolve(&skills, &registry, "l/root").unwrap();
    assert!(!compute_effective_capabilities(&r.entries).has_side_effects);
}

#[test]
fn served_annotations_keep_a_servers_destructive_hint_until_an_override_sets_a_flag() {
    // An MCP server's additive tool: not read-only, not destructive. The
    // registry's flags (writes, side effects) cannot say "additive".
    let mut registry = ToolRegistry::new();
    let mut additive = ToolSpec::new("mcp:srv/add_note", "adds", ToolSource::Mcp);
    additive.read_only = Some(false);
    additive.writes = Some(true);
    additive.side_effects = Some(true);
    additive.set_meta(
        Meta::Annotations,
        json!({"readOnlyHint": false, "destructiveHint": false}),
    );
    let mut reader = ToolSpec::new("mcp:srv/get_sum", "sums", ToolSource::Mcp);
    reader.read_only = Some(true);
    reader.writes = Some(false);
    reader.side_effects = Some(false);
    registry.register(additive, false).unwrap();
    registry.register(reader, false).unwrap();
    let skills = set(vec![
        skill("l/plain").tools(["mcp:srv/add_note"]),
        skill("l/strict")
            .tools(["mcp:srv/add_note", "mcp:srv/get_sum"])
            .override_("mcp:srv/add_note", json!({"side_effects": true}))
            .override_("mcp:srv/get_sum", json!({"writes": true})),
    ]);
    let annotations = |root: &str, tool: &str| {
        let r = resolve(&skills, &registry, root).unwrap();
        let entry = r.entries.iter().find(|e| e.name == tool).unwrap();
        mcp_annotations(&effective(entry).unwrap()).unwrap()
    };
    assert_eq!(
        annotations("l/plain", "mcp:srv/add_note"),
        json!({"readOnlyHint": false, "destructiveHint": false})
    );
    // An override of a flag is the skill's word over the server's.
    assert_eq!(
        annotations("l/strict", "mcp:srv/add_note"),
        json!({"readOnlyHint": false, "destructiveHint": true})
    );
    // A read-only tool an override makes write is no longer read-only.
    assert_eq!(
        annotations("l/strict", "mcp:srv/get_sum"),
        json!({"readOnlyHint": false, "destructiveHint": true})
    );
    // What MCP has no hint for reaches the client in `_meta`.
    let skills = set(vec![skill("l/ask").tools(["mcp:srv/add_note"]).override_(
        "mcp:srv/add_note",
        json!({"approval": "required", "timeout_s": 5}),
    )]);
    let r = resolve(&skills, &registry, "l/ask").unwrap();
    let served = export_tools(&r.entries, ExportFormat::Mcp);
    assert_eq!(
        served.tools[0]["_meta"]["io.cleveragents/overrides"],
        json!({"approval": "required", "timeout_s": 5})
    );
}

// ----- include graph ----------------------------------------------------

fn graph_fixture() -> HashMap<SkillName, Skill> {
    set(vec![
        skill("g/root")
            .include_with("g/a", json!({"approval": "required"}))
            .include("g/gone")
            .mcp("github", None)
            .agent("~/skills/pdf \"v2\""),
        skill("g/a").include("g/b").tools(["t"]),
        skill("g/b").include("g/a").include("g/gone"),
    ])
}

#[test]
fn graph_draws_cycles_missing_includes_and_leaves_in_dot() {
    let graph = include_graph(&name("g/root"), &graph_fixture());
    assert_eq!(
        graph.to_dot(),
        r#"digraph "g/root" {
  rankdir=LR;
  "g/root" [shape=box];
  "g/a" [shape=box];
  "g/b" [shape=box];
  "g/gone" [shape=box, style=dashed, color=red, label="g/gone (missing)"];
  "mcp:github" [shape=ellipse];
  "agent_skill:~/skills/pdf \"v2\"" [shape=note];
  "g/root" -> "g/a" [label="approval: required"];
  "g/a" -> "g/b";
  "g/b" -> "g/a" [color=red, label="cycle"];
  "g/b" -> "g/gone";
  "g/root" -> "g/gone";
  "g/root" -> "mcp:github";
  "g/root" -> "agent_skill:~/skills/pdf \"v2\"";
}
"#
    );
}

#[test]
fn graph_draws_cycles_missing_includes_and_leaves_in_mermaid() {
    let graph = include_graph(&name("g/root"), &graph_fixture());
    assert_eq!(
        graph.to_mermaid(),
        r#"flowchart LR
  n0["g/root"]
  n1["g/a"]
  n2["g/b"]
  n3["g/gone (missing)"]:::missing
  n4(["mcp:github"])
  n5[["agent_skill:~/skills/pdf #quot;v2#quot;"]]
  n0 -->|"approval: required"| n1
  n1 --> n2
  n2 -.->|"cycle"| n1
  n2 --> n3
  n0 --> n3
  n0 --> n4
  n0 --> n5
  classDef missing stroke:#d00,stroke-dasharray:5 5
"#
    );
    let json = serde_json::to_value(&graph).unwrap();
    assert_eq!(
        json["edges"][2],
        json!({"from": "g/b", "to": "g/a", "overrides": {}, "cycle": true})
    );
    assert_eq!(
        json["nodes"][3],
        json!({"id": "g/gone", "kind": "missing_skill"})
    );
}

#[test]
fn mermaid_labels_never_become_markup() {
    let skills = set(vec![
        skill("g/h")
            .include_with(
                "g/b",
                json!({"`**k**": "<img src=x onerror=alert(1)> #lt;script#gt; &amp;"}),
            )
            .agent("x<y>z"),
        skill("g/b"),
    ]);
    let text = include_graph(&name("g/h"), &skills).to_mermaid();
    assert!(
        text.contains(
            r##"-->|"#96;**k**: #lt;img src=x onerror=alert(1)#gt; #35;lt;script#35;gt; #amp;amp;"|"##
        ),
        "{text}"
    );
    assert!(
        text.contains(r##"[["agent_skill:x#lt;y#gt;z"]]"##),
        "{text}"
    );
    // Inside the quotes of every label, none of them is left raw.
    let labels: Vec<&str> = text
        .lines()
        .filter_map(|l| Some(&l[l.find('"')? + 1..l.rfind('"')?]))
        .collect();
    for raw in ['<', '>', '`', '&'] {
        assert!(!labels.iter().any(|l| l.contains(raw)), "{raw}: {text}");
    }
}

// ----- lock files --------------------------------------------------------

fn locked(skills: &HashMap<SkillName, Skill>, registry: &ToolRegistry, root: &str) -> LockedSkill {
    let resolution = resolve(skills, registry, root).unwrap();
    lock_skill(&resolution.entries, &AgentFiles::new())
}

#[test]
fn locking_is_deterministic_and_canonical() {
    let skills =
        set(vec![skill("l/root").tools(["a", "b"]).override_(
            "a",
            json!({"timeout_s": 5, "description": "A!"}),
        )]);
    let registry = tools(&["a", "b"]);
    let lock = |skills: &HashMap<SkillName, Skill>| {
        let mut all = std::collections::BTreeMap::new();
        all.insert("l/root".to_owned(), locked(skills, &registry, "l/root"));
        Lockfile::new(all).to_text()
    };
    let first = lock(&skills);
    assert_eq!(first, lock(&skills), "byte-identical on a second lock");
    // The same overrides written in another key order give the same bytes.
    let reordered =
        set(vec![skill("l/root").tools(["a", "b"]).override_(
            "a",
            json!({"description": "A!", "timeout_s": 5}),
        )]);
    assert_eq!(first, lock(&reordered));
    let parsed = Lockfile::parse(&first, "skills.lock").unwrap();
    assert_eq!(parsed.version, LOCK_VERSION);
    assert_eq!(parsed.to_text(), first);
    // A Windows editor that saved the lock put a byte order mark before it.
    let parsed = Lockfile::parse(&format!("\u{feff}{first}"), "skills.lock").unwrap();
    assert_eq!(parsed.to_text(), first);
    assert!(first.starts_with("{\n  \"digest\": \"sha256:"), "{first}");
    // Canonical JSON sorts keys at every depth and has no whitespace.
    assert_eq!(
        canonical(&json!({"b": 1, "a": {"d": 2, "c": [3]}})),
        r#"{"a":{"c":[3],"d":2},"b":1}"#
    );
}

#[test]
fn diff_names_changed_fields_added_and_removed_entries_only() {
    let registry = tools(&["a", "b", "c"]);
    let before = set(vec![skill("l/root").tools(["a", "b"])]);
    let mut all = std::collections::BTreeMap::new();
    all.insert("l/root".to_owned(), locked(&before, &registry, "l/root"));
    let lock = Lockfile::new(all);
    let same = diff_lock("l/root", &lock, &locked(&before, &registry, "l/root"));
    assert!(same.is_clean(), "{same:?}");

    let after = set(vec![
        skill("l/root")
            .tools(["b", "c"])
            .override_("b", json!({"timeout_s": 9})),
    ]);
    let diff = diff_lock("l/root", &lock, &locked(&after, &registry, "l/root"));
    assert!(!diff.is_clean());
    assert_eq!(
        diff.changed,
        vec![ChangedEntry {
            name: "b".into(),
            fields: vec!["overrides".into()]
        }]
    );
    assert_eq!(diff.added, ["c"]);
    assert_eq!(diff.removed, ["a"]);
    assert!(!diff.reordered);

    let mut described = tools(&["a"]);
    described
        .register(
            ToolSpec::new("b", "now does something else", ToolSource::Builtin),
            false,
        )
        .unwrap();
    let diff = diff_lock("l/root", &lock, &locked(&before, &described, "l/root"));
    assert_eq!(diff.changed.len(), 1);
    assert_eq!(diff.changed[0].name, "b");
    assert_eq!(diff.changed[0].fields, ["description"]);
    assert!(diff.added.is_empty() && diff.removed.is_empty());

    let swapped = set(vec![skill("l/root").tools(["b", "a"])]);
    let diff = diff_lock("l/root", &lock, &locked(&swapped, &registry, "l/root"));
    assert!(diff.reordered && diff.changed.is_empty());

    let other = diff_lock("l/other", &lock, &locked(&before, &registry, "l/root"));
    assert!(other.not_locked);
    assert_eq!(other.added, ["a", "b"]);

    // Only the lock's digest of an entry edited: said, not an empty list.
    let mut tampered = locked(&before, &registry, "l/root");
    tampered.entries[0].digest = format!("sha256:{}", "0".repeat(64));
    let mut all = std::collections::BTreeMap::new();
    all.insert("l/root".to_owned(), tampered);
    let diff = diff_lock(
        "l/root",
        &Lockfile::new(all),
        &locked(&before, &registry, "l/root"),
    );
    assert_eq!(diff.changed.len(), 1);
    assert_eq!(diff.changed[0].fields, ["digest"]);
}

/// The diff as people read it (`skill diff`, and the log of `mcp serve
/// --locked`): names and fields, escaped, never values; bounded when asked,
/// so a log line stays short however many entries differ; and what one
/// entry's difference is, for the refusal of its calls.
#[test]
fn a_lock_diff_reads_as_lines_and_can_be_bounded() {
    let registry = tools(&["a", "b", "c"]);
    let before = set(vec![skill("l/root").tools(["a", "b"])]);
    let mut all = std::collections::BTreeMap::new();
    all.insert("l/root".to_owned(), locked(&before, &registry, "l/root"));
    let lock = Lockfile::new(all);
    let same = diff_lock("l/root", &lock, &locked(&before, &registry, "l/root"));
    assert_eq!(same.to_text("x.lock", None), "l/root matches x.lock\n");
    let after = set(vec![
        skill("l/root")
            .tools(["b", "c"])
            .override_("b", json!({"timeout_s": 9})),
    ]);
    let diff = diff_lock("l/root", &lock, &locked(&after, &registry, "l/root"));
    assert_eq!(
        diff.to_text("x.lock", None),
        "l/root differs from x.lock: 1 changed, 1 added, 1 removed\n  changed b: overrides\n  added   c\n  removed a\n"
    );
    assert_eq!(
        diff.to_text("x.lock", Some(1)),
        "l/root differs from x.lock: 1 changed, 1 added, 1 removed\n  changed b: overrides\n  … and 2 more differing entries\n"
    );
    assert_eq!(diff.entry_change("b").as_deref(), Some("overrides changed"));
    assert_eq!(
        diff.entry_change("a").as_deref(),
        Some("removed from the resolution")
    );
    assert_eq!(
        diff.entry_change("c").as_deref(),
        Some("added since the lock")
    );
    assert_eq!(diff.entry_change("d"), None);
    let mut hostile = diff.clone();
    hostile.added = vec!["x\u{1b}[2Jy".into()];
    let text = hostile.to_text("x.lock", None);
    assert!(text.contains("  added   x\\u{1b}[2Jy\n"), "{text}");
}

/// A lock file is refused when its digests are not those of its contents:
/// the digest `skill lock` printed must not stay the same while the entries
/// under it change.
#[test]
fn a_lock_edited_under_its_digests_is_refused() {
    let registry = tools(&["a", "b"]);
    let skills = set(vec![skill("l/root").tools(["a", "b"])]);
    let mut all = std::collections::BTreeMap::new();
    all.insert("l/root".to_owned(), locked(&skills, &registry, "l/root"));
    let text = Lockfile::new(all).to_text();
    assert!(Lockfile::parse(&text, "l.lock").is_ok());
    let lock: Value = serde_json::from_str(&text).unwrap();
    let entry_digest = lock["skills"]["l/root"]["entries"][0]["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    let zeros = format!("sha256:{}", "0".repeat(64));
    type Edit<'a> = Box<dyn Fn(&mut Value) + 'a>;
    let edits: Vec<(Edit<'_>, &str)> = vec![
        (
            Box::new(|l| l["digest"] = json!(zeros)),
            "the file's digest",
        ),
        (
            Box::new(|l| l["skills"]["l/root"]["digest"] = json!(zeros)),
            "the digest of skill `l/root`",
        ),
        (
            Box::new(|l| l["skills"]["l/root"]["entries"][0]["digest"] = json!(zeros)),
            "the digest of skill `l/root`",
        ),
        (
            Box::new(|l| {
                l["skills"]["l/root"]["entries"][0]["fields"]
                    .as_object_mut()
                    .unwrap()
                    .remove("description");
            }),
            "no digest of its `description`",
        ),
        (
            Box::new(|l| l["skills"]["l/root"]["entries"][0]["fields"]["name"] = json!("md5:abc")),
            "`md5:abc` where a `sha256:` digest belongs",
        ),
        (
            Box::new(|l| {
                let first = l["skills"]["l/root"]["entries"][0].clone();
                l["skills"]["l/root"]["entries"][1] = first;
            }),
            "lists the entry `a` twice",
        ),
    ];
    for (edit, says) in edits {
        let mut edited = lock.clone();
        edit(&mut edited);
        let err = Lockfile::parse(&edited.to_string(), "l.lock").unwrap_err();
        assert_eq!(err.kind(), "invalid_lock");
        assert!(err.to_string().contains(says), "{says}: {err}");
    }
    assert!(entry_digest.starts_with("sha256:"));
}

#[test]
fn agent_skill_files_are_part_of_the_entry_digest() {
    let mut registry = ToolRegistry::new();
    let mut spec = ToolSpec::new("agent_skills/pdf", "PDFs", ToolSource::AgentSkills);
    spec.source_metadata
        .insert("path".into(), json!("/skills/pdf"));
    registry.register(spec, false).unwrap();
    let skills = set(vec![skill("l/root").tools(["agent_skills/pdf"])]);
    let entries = resolve(&skills, &registry, "l/root").unwrap().entries;
    let mut files = AgentFiles::new();
    files.insert(
        "agent_skills/pdf".into(),
        [("SKILL.md".to_owned(), "sha256:01".to_owned())].into(),
    );
    let before = lock_skill(&entries, &files);
    files.insert(
        "agent_skills/pdf".into(),
        [("SKILL.md".to_owned(), "sha256:02".to_owned())].into(),
    );
    let after = lock_skill(&entries, &files);
    assert_ne!(before.digest, after.digest);
    let mut all = std::collections::BTreeMap::new();
    all.insert("l/root".to_owned(), before);
    let diff = diff_lock("l/root", &Lockfile::new(all), &after);
    assert_eq!(diff.changed[0].fields, ["upstream"]);
}

#[test]
fn lock_files_of_another_version_or_shape_are_refused() {
    let err = Lockfile::parse(r#"{"version": 2}"#, "x.lock").unwrap_err();
    assert_eq!(err.kind(), "lock_version");
    let err = Lockfile::parse("not json", "x.lock").unwrap_err();
    assert_eq!(err.kind(), "invalid_lock");
    // Past a byte order mark, positions are an editor's (which hides it).
    let err = Lockfile::parse("\u{feff}{\"version\": x}", "x.lock").unwrap_err();
    assert!(err.to_string().contains("line 1 column 13"), "{err}");
    // A lock file comes with a project, so from anyone: serde quotes the
    // offending value whole, and the error still stays short.
    let huge = "A".repeat(1 << 20);
    for text in [
        format!(r#"{{"version": 1, "digest": "d", "skills": "{huge}"}}"#),
        format!(
            r#"{{"version": 1, "digest": "d", "skills": {{"a/b": {{"digest": "{huge}", "entries": 5}}}}}}"#
        ),
    ] {
        let shown = Lockfile::parse(&text, "x.lock").unwrap_err().to_string();
        assert!(shown.len() < 4096, "{}", shown.len());
        assert!(shown.contains("expected"), "{shown}");
    }
    assert!(
        err.to_string().starts_with("x.lock: not a lock file"),
        "{err}"
    );
    let err = Lockfile::parse(r#"{"skills": {}}"#, "x.lock").unwrap_err();
    assert_eq!(err.kind(), "invalid_lock");
    // A skill locked twice would show a reviewer one digest and hand serde
    // the other; so would a repeated `digest`.
    for text in [
        r#"{"version": 1, "digest": "d", "skills": {"a/b": {"digest": "x", "entries": []}, "a/b": {"digest": "y", "entries": []}}}"#,
        r#"{"version": 1, "version": 1, "skills": {}}"#,
    ] {
        let err = Lockfile::parse(text, "x.lock").unwrap_err();
        assert_eq!(err.kind(), "invalid_lock");
        assert!(err.to_string().contains("duplicate"), "{err}");
    }
    // Text after the value is still refused.
    let err = Lockfile::parse(r#"{"version": 1} {}"#, "x.lock").unwrap_err();
    assert_eq!(err.kind(), "invalid_lock");
    // An entry's field digest given twice, likewise.
    let err = Lockfile::parse(
        r#"{"version": 1, "digest": "d", "skills": {"a/b": {"digest": "x", "entries": [{"name": "n", "digest": "d", "fields": {"name": "a", "name": "b"}}]}}}"#,
        "x.lock",
    )
    .unwrap_err();
    assert!(err.to_string().contains("duplicate key `name`"), "{err}");
}

/// A lock file is read into the lock itself, not into a JSON value first:
/// keys it does not know are skipped unread, so a project's lock of a
/// hundred thousand unknown values holds none of them, and one nested a
/// hundred thousand deep is skipped without recursing.
#[test]
fn lock_files_are_read_without_a_json_value() {
    let unknown = format!(
        r#"{{"version": 1, "x": [{}0], "digest": "d", "skills": {{}}}}"#,
        "{}, ".repeat(100_000)
    );
    let err = Lockfile::parse(&unknown, "x.lock").unwrap_err();
    // The shape is wrong (the digest), and the unknown key was no trouble.
    assert!(err.to_string().contains("digest"), "{err}");
    let deep = format!(
        r#"{{"version": 1, "x": {}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    // Skipped without recursion: no stack to overflow.
    let err = Lockfile::parse(&deep, "x.lock").unwrap_err();
    assert!(err.to_string().contains("missing field `digest`"), "{err}");
}

/// Counts lookups: the cost of a walk without timing it.
struct Counting<'a> {
    skills: &'a HashMap<SkillName, Skill>,
    lookups: std::cell::Cell<usize>,
}
impl<'a> Counting<'a> {
    fn new(skills: &'a HashMap<SkillName, Skill>) -> Self {
        Self {
            skills,
            lookups: std::cell::Cell::new(0),
        }
    }
}
impl SkillSource for Counting<'_> {
    fn skill(&self, name: &SkillName) -> Option<&Skill> {
        self.lookups.set(self.lookups.get() + 1);
        self.skills.get(name)
    }
}

#[test]
fn diagnose_all_walks_a_chain_once_and_finds_what_each_root_finds() {
    // l/s0 includes l/s1 ... includes l/s599; every skill names an unknown tool.
    let n = 600;
    let mut skills = Vec::new();
    for i in 0..n {
        let own = format!("x/unknown_{i}");
        let mut b = skill(&format!("l/s{i}")).tools([own.as_str()]);
        if i + 1 < n {
            b = b.include(&format!("l/s{}", i + 1));
        }
        skills.push(b);
    }
    // A cycle and a missing include among them.
    skills.push(skill("l/c1").include("l/c2"));
    skills.push(skill("l/c2").include("l/c1").include("l/gone"));
    let skills = set(skills);
    let roots: Vec<SkillName> = (0..n)
        .rev()
        .map(|i| name(&format!("l/s{i}")))
        .chain([name("l/c2"), name("l/c1"), name("l/nope")])
        .collect();
    let source = Counting::new(&skills);
    let registry = ToolRegistry::new();
    let resolver = SkillResolver::new(&source, &registry);
    let (errors, warnings) = resolver.diagnose_all(&roots);
    // Linear: each skill is looked up about once, not once per root above it.
    assert!(
        source.lookups.get() <= 2 * roots.len(),
        "{} lookups for {} roots",
        source.lookups.get(),
        roots.len()
    );
    let unknown: std::collections::HashSet<String> = warnings
        .iter()
        .filter_map(|w| match w {
            ResolveWarning::UnknownTool { tool, .. } => Some(tool.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(unknown.len(), n, "every skill's unknown tool, once");
    assert_eq!(warnings.len(), n);
    let kinds: Vec<&str> = errors
        .iter()
        .map(|e| match e {
            ResolveError::SkillNotFound { .. } => "not_found",
            ResolveError::Cycle { .. } => "cycle",
            ResolveError::MissingInclude { .. } => "missing",
            ResolveError::NonOverridable { .. } => "blocked",
        })
        .collect();
    assert_eq!(kinds, ["not_found", "cycle", "missing"], "{errors:?}");
    // The same problems as diagnosing every root alone, as sets.
    let mut alone: std::collections::HashSet<String> = std::collections::HashSet::new();
    for root in &roots {
        let (errors, warnings) = SkillResolver::new(&skills, &registry).diagnose(root);
        alone.extend(
            errors
                .iter()
                .filter(|e| {
                    !matches!(
                        e,
                        ResolveError::Cycle { .. } | ResolveError::MissingInclude { .. }
                    )
                })
                .map(ToString::to_string),
        );
        alone.extend(warnings.iter().map(ToString::to_string));
    }
    let together: std::collections::HashSet<String> = errors
        .iter()
        .filter(|e| {
            !matches!(
                e,
                ResolveError::Cycle { .. } | ResolveError::MissingInclude { .. }
            )
        })
        .map(ToString::to_string)
        .chain(warnings.iter().map(ToString::to_string))
        .collect();
    assert_eq!(together, alone);
}

/// `--format json` errors carry these kinds: scripts match on them, so they
/// may not change.
#[test]
fn error_kinds_are_stable() {
    let name = SkillName::new("a/b").unwrap();
    let resolve = [
        (
            ResolveError::SkillNotFound { name: name.clone() },
            "skill_not_found",
        ),
        (
            ResolveError::MissingInclude {
                skill: name.clone(),
                include: name.clone(),
                path: "a/b".into(),
            },
            "missing_include",
        ),
        (
            ResolveError::Cycle {
                cycle: vec![name.clone(), name.clone()],
                len: 2,
            },
            "cycle",
        ),
        (
            ResolveError::NonOverridable {
                fields: vec!["name".into()],
                skill: name.clone(),
                path: "a/b".into(),
            },
            "non_overridable_field",
        ),
    ];
    for (err, kind) in resolve {
        assert_eq!(err.kind(), kind, "{err}");
    }
    let invalid = InvalidTool {
        name: "t".into(),
        message: "m".into(),
    };
    assert_eq!(invalid.kind(), "invalid_tool");
    assert_eq!(RegistryError::Invalid(invalid).kind(), "invalid_tool");
    let mut registry = ToolRegistry::new();
    let spec = ToolSpec::new("custom/t", "d", ToolSource::Custom);
    registry.register(spec.clone(), false).unwrap();
    let duplicate = registry.register(spec, false).unwrap_err();
    assert_eq!(duplicate.kind(), "duplicate_tool");
    assert_eq!(
        SkillName::new("nope").unwrap_err().kind(),
        "invalid_skill_name"
    );
}
