#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The product rules the service owns, run without the binary: first-use
//! discovery, the lock gate and typed warnings.

use agents_core::{Skill, SkillItem, SkillName, ToolRegistry};
use agents_registry::{
    DiscoveryFolders, FirstUse, ServiceError, SkillRegistryService, builtin_tools,
};
use agents_store::DatabaseUrl;

fn name(s: &str) -> SkillName {
    SkillName::new(s).unwrap()
}

async fn service(dir: &tempfile::TempDir) -> SkillRegistryService {
    let store = agents_store::Store::open(&DatabaseUrl::Sqlite(dir.path().join("r.db")))
        .await
        .unwrap();
    let mut builtins = ToolRegistry::new();
    for tool in builtin_tools() {
        builtins.register(tool, false).unwrap();
    }
    SkillRegistryService::new(store, dir.path().to_path_buf()).with_builtins(builtins)
}

fn skill(n: &str, tools: &[&str]) -> Skill {
    let mut s = Skill::new(name(n));
    s.items = tools
        .iter()
        .map(|t| SkillItem::ToolRef { name: (*t).into() })
        .collect();
    s
}

fn agent_skill(root: &std::path::Path, folder: &str) {
    std::fs::create_dir_all(root.join(folder)).unwrap();
    std::fs::write(
        root.join(folder).join("SKILL.md"),
        format!("---\nname: {folder}\ndescription: the {folder} skill\n---\n"),
    )
    .unwrap();
}

fn discovered(first: FirstUse) -> Vec<String> {
    match first {
        FirstUse::Discovered(refreshed) => refreshed
            .result
            .discovered
            .into_iter()
            .map(|tool| tool.name)
            .collect(),
        other => panic!("expected a discovery, got {other:?}"),
    }
}

/// The first-use rule: the configured folders are discovered once, when
/// nothing was ever discovered, and again only when asked.
#[tokio::test]
async fn first_use_discovers_the_configured_folders_once() {
    let dir = tempfile::tempdir().unwrap();
    let folders = dir.path().join("skills");
    agent_skill(&folders, "one");
    let svc = service(&dir)
        .await
        .with_discovery_folders(DiscoveryFolders {
            folders: vec![folders.clone()],
            defaulted: false,
        });
    assert_eq!(
        discovered(svc.discover_configured(false, None).await.unwrap()),
        ["agent_skills/one"]
    );
    agent_skill(&folders, "two");
    assert!(matches!(
        svc.discover_configured(false, None).await.unwrap(),
        FirstUse::AlreadyDiscovered
    ));
    assert_eq!(
        discovered(svc.discover_configured(true, None).await.unwrap()),
        ["agent_skills/one", "agent_skills/two"]
    );
}

/// A default folder that does not exist (a fresh machine) is skipped
/// without a warning; a configured one that does not exist is warned of.
#[tokio::test]
async fn first_use_skips_missing_default_folders_silently() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder");
    for (defaulted, warned) in [(true, false), (false, true)] {
        let dir = tempfile::tempdir().unwrap();
        let svc = service(&dir)
            .await
            .with_discovery_folders(DiscoveryFolders {
                folders: vec![missing.clone()],
                defaulted,
            });
        let FirstUse::Discovered(refreshed) = svc.discover_configured(false, None).await.unwrap()
        else {
            panic!("expected a discovery");
        };
        assert!(refreshed.result.discovered.is_empty());
        assert_eq!(
            !refreshed.result.warnings.is_empty(),
            warned,
            "defaulted {defaulted}: {:?}",
            refreshed.result.warnings
        );
        assert!(svc.agent_skills_discovered().await.unwrap());
    }
}

/// The lock gate: a resolution that matches its lock passes; one that
/// drifted is refused with a typed error naming each difference, and only
/// the skills that differ are in the drift.
#[tokio::test]
async fn the_lock_gate_refuses_a_drifted_resolution() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    svc.add_skill(&skill("l/a", &["builtin/read_file"]))
        .await
        .unwrap();
    svc.add_skill(&skill("l/b", &["builtin/read_file"]))
        .await
        .unwrap();
    let names = [name("l/a"), name("l/b")];
    let (lock, warnings) = svc.lock_skills(&names).await.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");

    let tools = svc.locked_tools(&name("l/a"), false, &lock).await.unwrap();
    assert!(tools.matches());
    assert!(tools.mismatch("agents.lock").is_none());
    let served = svc.locked_serve_set(&names, &lock).await.unwrap();
    assert!(served.matches());
    assert_eq!(served.diffs.len(), 2);

    let mut changed = svc.get_skill(&name("l/b")).await.unwrap();
    changed.items.push(SkillItem::ToolRef {
        name: "builtin/write_file".into(),
    });
    svc.update_skill(&changed).await.unwrap();
    let served = svc.locked_serve_set(&names, &lock).await.unwrap();
    assert!(!served.matches());
    let drifted: Vec<&str> = served.drifted().map(|d| d.skill.as_str()).collect();
    assert_eq!(drifted, ["l/b"]);
    let err = served.mismatch("agents.lock").unwrap();
    assert_eq!(err.kind(), "lock_mismatch");
    assert!(matches!(err, ServiceError::LockMismatch { .. }));
    assert_eq!(
        err.to_string(),
        "the resolution differs from the lock `agents.lock`: skill `l/b`: added builtin/write_file"
    );
    // The other skill still matches on its own.
    assert!(
        svc.locked_tools(&name("l/a"), true, &lock)
            .await
            .unwrap()
            .matches()
    );
    let other = svc.locked_tools(&name("l/b"), false, &lock).await.unwrap();
    assert_eq!(other.drifted().count(), 1);
}

/// A skill the lock has no record of is "not locked", not a list of
/// added entries.
#[tokio::test]
async fn the_lock_gate_names_a_skill_the_lock_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    svc.add_skill(&skill("l/a", &["builtin/read_file"]))
        .await
        .unwrap();
    svc.add_skill(&skill("l/new", &["builtin/read_file"]))
        .await
        .unwrap();
    let (lock, _) = svc.lock_skills(&[name("l/a")]).await.unwrap();
    let locked = svc
        .locked_tools(&name("l/new"), false, &lock)
        .await
        .unwrap();
    assert_eq!(
        locked.mismatch("x.lock").unwrap().to_string(),
        "the resolution differs from the lock `x.lock`: skill `l/new`: not locked"
    );
}

/// The call policy's notes on a tool set are typed: a `read_only`
/// override on a tool that writes is named, one on a tool that only reads
/// is not.
#[tokio::test]
async fn a_read_only_override_on_a_writing_tool_is_noted() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    let mut s = skill("l/ro", &["builtin/write_file", "builtin/read_file"]);
    for tool in ["builtin/write_file", "builtin/read_file"] {
        let mut fields = agents_core::ValueMap::new();
        fields.insert("read_only".into(), serde_json::Value::Bool(true));
        s.overrides.insert(tool.into(), fields);
    }
    svc.add_skill(&s).await.unwrap();
    let set = svc.tools(&name("l/ro")).await.unwrap();
    assert_eq!(
        set.policy_notes(),
        [agents_registry::EntryNote::ReadOnlyButWrites {
            entry: "builtin/write_file".into()
        }]
    );
    assert!(set.not_served().is_empty());
}

/// A plan's warning about an MCP server with no cached list says, by the
/// warning's kind, when the skill's own definition of it is not trusted
/// here (refreshing it would refuse to start it); a trusted one keeps the
/// plain warning.
#[tokio::test]
async fn a_plan_warning_says_when_an_inline_server_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    let mut s = skill("l/m", &[]);
    s.items
        .push(SkillItem::McpSource(Box::new(agents_core::McpSource {
            server: "echo".into(),
            command: Some("echo".into()),
            ..agents_core::McpSource::default()
        })));
    svc.add_skill(&s).await.unwrap();
    let plan = agents_core::Plan {
        skills: vec!["l/m".into()],
    };
    let report = svc.validate_plan(&plan).await.unwrap();
    assert!(report.is_ok(), "{:?}", report.errors);
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0].starts_with(
            "Skill 'l/m': MCP server 'echo' has no cached tool list, and its definition there (writer unknown) is not trusted here, so it is not started; it would run `echo`"
        ),
        "{}",
        report.warnings[0]
    );
}
