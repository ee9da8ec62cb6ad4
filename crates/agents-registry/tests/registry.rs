#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The service over a real SQLite file: the spec's Service API, `tools()`,
//! plan validation and discovery refresh, and the product rules the service
//! owns (first-use discovery, the lock gate, typed warnings), run without
//! the binary.

use agents_core::{Plan, Skill, SkillItem, SkillName, ToolRegistry, ToolSource};
use agents_registry::{
    ConflictStrategy, DiscoveryFolders, FirstUse, ServiceError, SkillRegistryService, WriteMode,
    builtin_tools,
};
use agents_store::{DatabaseUrl, Store, StoreError};

fn name(s: &str) -> SkillName {
    SkillName::new(s).unwrap()
}

async fn service(dir: &tempfile::TempDir) -> SkillRegistryService {
    let store = Store::open(&DatabaseUrl::Sqlite(dir.path().join("r.db")))
        .await
        .unwrap();
    let mut builtins = ToolRegistry::new();
    for tool in builtin_tools() {
        builtins.register(tool, false).unwrap();
    }
    SkillRegistryService::new(store, dir.path().to_path_buf()).with_builtins(builtins)
}

fn skill(n: &str, items: Vec<SkillItem>) -> Skill {
    let mut s = Skill::new(name(n));
    s.items = items;
    s
}

fn tool_ref(t: &str) -> SkillItem {
    SkillItem::ToolRef { name: t.into() }
}

#[tokio::test]
async fn service_api_mirrors_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    let added = svc
        .add_skill(&skill(
            "local/code-tools",
            vec![tool_ref("builtin/read_file")],
        ))
        .await
        .unwrap();
    assert!(added.created_at.is_some());
    assert!(matches!(
        svc.add_skill(&skill("local/code-tools", vec![])).await,
        Err(ServiceError::Store(StoreError::DuplicateSkill(_)))
    ));
    assert_eq!(
        svc.get_skill(&name("local/code-tools"))
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    svc.add_skill(&skill("other/x", vec![])).await.unwrap();
    let local = svc.list_skills(Some("local")).await.unwrap();
    assert_eq!(local.len(), 1);
    let mut changed = svc.get_skill(&name("local/code-tools")).await.unwrap();
    changed.description = Some("changed".into());
    svc.update_skill(&changed).await.unwrap();
    // The token is now stale: a second writer with the old copy loses.
    assert!(matches!(
        svc.update_skill(&changed).await,
        Err(ServiceError::Store(StoreError::Conflict { .. }))
    ));
    svc.remove_skill(&name("local/code-tools"), false)
        .await
        .unwrap();
    assert!(matches!(
        svc.get_skill(&name("local/code-tools")).await,
        Err(ServiceError::Store(StoreError::SkillNotFound(_)))
    ));
}

#[tokio::test]
async fn tools_returns_entries_and_summary() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    svc.add_skills(&[
        skill(
            "l/base",
            vec![tool_ref("builtin/read_file"), tool_ref("builtin/grep")],
        ),
        skill(
            "l/top",
            vec![
                SkillItem::Include(agents_core::Include {
                    skill: name("l/base"),
                    overrides: Default::default(),
                }),
                tool_ref("builtin/shell"),
                SkillItem::InlineTool(Box::new(agents_core::InlineTool {
                    writes: true,
                    ..Default::default()
                })),
            ],
        ),
    ])
    .await
    .unwrap();
    let (entries, summary) = svc.tools(&name("l/top")).await.unwrap().into_parts();
    let names: Vec<_> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "builtin/read_file",
            "builtin/grep",
            "builtin/shell",
            "l/top/_anon_0"
        ]
    );
    assert_eq!(
        entries[0].tool.as_ref().unwrap().source,
        ToolSource::Builtin
    );
    assert_eq!(
        (
            summary.total_tools,
            summary.write_tools,
            summary.has_side_effects
        ),
        (4, 1, true)
    );
}

#[tokio::test]
async fn validate_plan_checks_tool_refs_and_mcp_references() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    svc.add_skill(&skill(
        "l/p",
        vec![
            tool_ref("custom/missing"),
            SkillItem::McpSource(Box::new(agents_core::McpSource {
                server: "nowhere".into(),
                ..Default::default()
            })),
        ],
    ))
    .await
    .unwrap();
    let report = svc
        .validate_plan(&Plan {
            skills: vec!["l/p".into(), "l/absent".into()],
        })
        .await
        .unwrap();
    assert_eq!(
        report.errors,
        [
            "Skill 'l/p': Tool 'custom/missing' is not registered",
            "Skill 'l/absent' referenced in plan is not registered",
            "Skill 'l/p': MCP server 'nowhere' is not defined (give `command` or `url` in the item, or add `[mcp.servers.nowhere]` to config.toml)",
        ]
    );
}

#[tokio::test]
async fn refresh_agent_skills_replaces_only_agent_skill_tools() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    let skills = dir.path().join("skills");
    for (folder, text) in [("one", "First"), ("two", "Second")] {
        std::fs::create_dir_all(skills.join(folder)).unwrap();
        std::fs::write(
            skills.join(folder).join("SKILL.md"),
            format!("---\nname: {folder}\ndescription: {text}\n---\n"),
        )
        .unwrap();
    }
    let custom = agents_core::ToolSpec::new("custom/keep", "kept", ToolSource::Custom);
    svc.add_tools(&[custom], false).await.unwrap();
    assert!(!svc.agent_skills_discovered().await.unwrap());
    let result = svc
        .refresh_agent_skills(
            std::slice::from_ref(&skills),
            false,
            ConflictStrategy::Skip,
            None,
        )
        .await
        .unwrap();
    assert_eq!(result.result.discovered.len(), 2);
    assert_eq!(
        result.changes.added,
        ["agent_skills/one", "agent_skills/two"]
    );
    assert!(svc.agent_skills_discovered().await.unwrap());
    std::fs::remove_dir_all(skills.join("two")).unwrap();
    let again = svc
        .refresh_agent_skills(
            std::slice::from_ref(&skills),
            false,
            ConflictStrategy::Skip,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        again.changes,
        agents_registry::ScopeChanges {
            added: vec![],
            kept: vec!["agent_skills/one".into()],
            changed: vec![],
            removed: vec![agents_registry::RemovedSkill {
                name: "agent_skills/two".into(),
                path: Some(
                    std::fs::canonicalize(&skills)
                        .unwrap()
                        .join("two")
                        .to_string_lossy()
                        .into_owned()
                ),
            }],
        }
    );
    let agent: Vec<_> = svc
        .list_tools(Some(ToolSource::AgentSkills))
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(agent, ["agent_skills/one"]);
    svc.get_tool("custom/keep").await.unwrap();
    // `discover_and_register` keeps what is there: a re-scan finds the same skill again, not a conflict.
    let again = svc
        .discover_and_register(std::slice::from_ref(&skills), ConflictStrategy::Error, None)
        .await
        .unwrap();
    assert_eq!(again.discovered.len(), 1);
}

#[tokio::test]
async fn agent_source_entry_never_shows_a_same_named_catalogue_tool() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    // `tool add` refuses the reserved namespaces outright, and a name
    // shaped like an inline tool's entry (`{skill}/_anon_{i}`).
    for reserved in [
        "agent_skills/my-tool",
        "mcp:gh/create_issue",
        "local/devops-toolkit/_anon_0",
    ] {
        let tool = agents_core::ToolSpec::new(reserved, "impostor", ToolSource::Custom);
        assert!(matches!(
            svc.add_tools(&[tool], false).await,
            Err(ServiceError::ReservedToolName { .. })
        ));
    }
    // Only the three-part shape of an inline entry is reserved.
    let fine = agents_core::ToolSpec::new("acme/_anon_helper", "fine", ToolSource::Custom);
    assert!(svc.add_tools(&[fine], false).await.is_ok());
    // A database written before the rule may still hold one: the folder wins.
    let impostor =
        agents_core::ToolSpec::new("agent_skills/my-tool", "impostor", ToolSource::Custom);
    svc.store().put_tools(&[impostor], false).await.unwrap();
    let folder = dir.path().join("elsewhere").join("my-tool");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: my-tool\ndescription: The real folder\n---\n",
    )
    .unwrap();
    let mut s = skill("local/s", vec![tool_ref("agent_skills/my-tool")]);
    s.items
        .push(SkillItem::AgentSource(agents_core::AgentSource {
            path: "~/elsewhere/my-tool".into(),
        }));
    svc.add_skill(&s).await.unwrap();
    let set = svc.tools(&name("local/s")).await.unwrap();
    let agent = set
        .entries
        .iter()
        .find(|e| e.name == "agent_skill:~/elsewhere/my-tool")
        .unwrap();
    assert_eq!(agent.tool.as_ref().unwrap().description, "The real folder");
    assert_eq!(agent.tool.as_ref().unwrap().source, ToolSource::AgentSkills);
}

#[tokio::test]
async fn every_kind_of_skill_write_records_its_writer() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await.with_identity("alice@one");
    let by = async |skill: &str| {
        svc.store()
            .get_meta(&format!("defined_by.{skill}"))
            .await
            .unwrap()
    };
    svc.add_skill(&skill("w/added", vec![])).await.unwrap();
    assert_eq!(by("w/added").await.as_deref(), Some("alice@one"));
    // Another writer updates it; then an import by a third writes a new skill
    // and replaces the first.
    let bob = service(&dir).await.with_identity("bob@two");
    let mut changed = bob.get_skill(&name("w/added")).await.unwrap();
    changed.description = Some("changed".into());
    bob.update_skill(&changed).await.unwrap();
    assert_eq!(by("w/added").await.as_deref(), Some("bob@two"));
    let carol = service(&dir).await.with_identity("carol@three");
    let mut replaced = skill("w/added", vec![tool_ref("builtin/read_file")]);
    replaced.description = Some("imported".into());
    carol
        .import_with(&[skill("w/imported", vec![]), replaced], &[], true)
        .await
        .unwrap();
    // An import says so: the file's author is not the importer.
    const IMPORTED: &str = "carol@three (db import of a file from anyone)";
    assert_eq!(by("w/imported").await.as_deref(), Some(IMPORTED));
    assert_eq!(by("w/added").await.as_deref(), Some(IMPORTED));
    // A refused write records nobody.
    assert!(svc.add_skill(&skill("w/imported", vec![])).await.is_err());
    assert_eq!(by("w/imported").await.as_deref(), Some(IMPORTED));
}

/// The longest name a skill may have (100 + 1 + 150 characters) is stored
/// with its writer, and a trust prompt reads the writer back: the writer's
/// key had been 262 characters, over the 255 a `registry_meta` key holds.
#[tokio::test]
async fn the_longest_skill_name_records_its_writer() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await.with_identity("alice@one");
    let longest = format!("{}/{}", "n".repeat(100), "s".repeat(150));
    svc.add_skill(&skill(
        &longest,
        vec![SkillItem::McpSource(Box::new(agents_core::McpSource {
            server: "inline".into(),
            command: Some("true".into()),
            ..Default::default()
        }))],
    ))
    .await
    .unwrap();
    let definitions = svc.mcp_server_definitions().await.unwrap();
    let inline = definitions
        .iter()
        .find(|definition| definition.server == "inline")
        .unwrap();
    assert_eq!(inline.defined_by.as_deref(), Some("alice@one"));
    // A shorter name keeps the key registries already hold.
    svc.add_skill(&skill("w/short", vec![])).await.unwrap();
    assert_eq!(
        svc.store()
            .get_meta("defined_by.w/short")
            .await
            .unwrap()
            .as_deref(),
        Some("alice@one")
    );
}

/// "Did you mean" hints come from the catalogue as this service last wrote
/// it (read once, not once per file written), and a command computes at
/// most a few hundred of them.
#[tokio::test]
async fn write_hints_follow_the_services_own_tool_writes_and_are_bounded() {
    use agents_core::ToolSpec;
    use agents_registry::WriteMode;
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    // The names a warning suggests (data the caller shows).
    let warned = |outcome: agents_registry::WriteOutcome| -> Vec<String> {
        outcome
            .warnings
            .into_iter()
            .flat_map(|w| w.did_you_mean)
            .collect()
    };
    let first = svc
        .write_skills(
            &[skill("h/a", vec![tool_ref("custom/deplyo")])],
            WriteMode::Add,
            false,
        )
        .await
        .unwrap();
    assert!(warned(first).is_empty());
    svc.add_tools(
        &[ToolSpec::new("custom/deploy", "ships", ToolSource::Custom)],
        false,
    )
    .await
    .unwrap();
    let second = svc
        .write_skills(
            &[skill("h/b", vec![tool_ref("custom/deplyo")])],
            WriteMode::Add,
            false,
        )
        .await
        .unwrap();
    assert!(
        warned(second) == ["custom/deploy"],
        "the hint names were read before the tool was added"
    );
    // 300 files with a near miss each: of the 200 lines a service looks
    // for a hint, two are spent above.
    let mut hinted = 0;
    for i in 0..300 {
        let outcome = svc
            .write_skills(
                &[skill(&format!("h/c{i}"), vec![tool_ref("custom/deplyo")])],
                WriteMode::Add,
                false,
            )
            .await
            .unwrap();
        hinted += usize::from(!warned(outcome).is_empty());
    }
    assert_eq!(hinted, 198);
}

/// `db import` checks tools as `tool add` does: a custom tool stored with
/// another definition is refused without `replace` (nothing written), a
/// builtin's name is refused, a `source: builtin` row must name a builtin,
/// and a cache group the registry holds keeps its own rows.
#[tokio::test]
async fn an_import_treats_stored_tools_as_tool_add_does() {
    use agents_core::{Meta, ToolSpec};
    use agents_registry::ToolChange;
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    let custom = |description: &str| ToolSpec::new("custom/x", description, ToolSource::Custom);
    svc.add_tools(&[custom("stored")], false).await.unwrap();
    let stored = async || svc.get_tool("custom/x").await.unwrap().description;

    // Another definition: refused, and the file's new skill is not written either.
    let err = svc
        .import_with(&[skill("new/a", vec![])], &[custom("file")], false)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ServiceError::Store(StoreError::DuplicateTool(n)) if n == "custom/x"),
        "{err}"
    );
    assert_eq!(err.kind(), "duplicate_tool");
    assert_eq!(stored().await, "stored");
    assert!(svc.get_skill(&name("new/a")).await.is_err());
    // The same definition is left alone; `replace` takes the file's.
    let outcome = svc
        .import_with(&[skill("new/a", vec![])], &[custom("stored")], false)
        .await
        .unwrap();
    assert_eq!(
        outcome.tools,
        [("custom/x".to_owned(), ToolChange::Unchanged)]
    );
    assert_eq!(outcome.tools_written(), 0);
    let outcome = svc.import_with(&[], &[custom("file")], true).await.unwrap();
    assert_eq!(
        outcome.tools,
        [("custom/x".to_owned(), ToolChange::Updated)]
    );
    assert_eq!(stored().await, "file");

    // Names `tool add` refuses, and builtin rows: skipped when they name a
    // builtin, refused when they do not.
    let hidden = ToolSpec::new("builtin/read_file", "hidden", ToolSource::Custom);
    let err = svc.import_with(&[], &[hidden], true).await.unwrap_err();
    assert_eq!(err.kind(), "builtin_tool", "{err}");
    let reserved = ToolSpec::new("mcp:srv/x", "impostor", ToolSource::Custom);
    let err = svc.import_with(&[], &[reserved], true).await.unwrap_err();
    assert_eq!(err.kind(), "reserved_tool_name", "{err}");
    let builtin = ToolSpec::new("builtin/read_file", "skipped", ToolSource::Builtin);
    let no_builtin = ToolSpec::new("custom/src", "dropped", ToolSource::Builtin);
    let err = svc
        .import_with(&[], &[builtin.clone(), no_builtin, custom("x")], true)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "tool_not_found", "{err}");
    assert!(
        err.to_string().contains(
            "tool `custom/src` is not a builtin tool, but its row says `source: builtin`"
        ),
        "{err}"
    );
    assert_eq!(stored().await, "file");
    let err = svc
        .import_with(&[], &[builtin, custom("again")], false)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "duplicate_tool");

    // Caches: a server definition the registry has rows of keeps them all.
    let mcp = |tool: &str, digest: &str, description: &str| {
        let mut spec = ToolSpec::new(
            format!("mcp:srv@{digest}/{tool}"),
            description,
            ToolSource::Mcp,
        );
        spec.source_metadata
            .insert(Meta::SpecDigest.as_str().into(), digest.into());
        spec
    };
    svc.import_with(&[], &[mcp("echo", "d1", "old")], false)
        .await
        .unwrap();
    let file = [
        mcp("echo", "d1", "new"),
        mcp("add", "d1", "new"),
        mcp("echo", "d2", "new"),
    ];
    let outcome = svc.import_with(&[], &file, false).await.unwrap();
    assert_eq!(
        outcome.tools,
        [
            ("mcp:srv@d1/echo".to_owned(), ToolChange::Kept),
            ("mcp:srv@d1/add".to_owned(), ToolChange::Kept),
            ("mcp:srv@d2/echo".to_owned(), ToolChange::Created),
        ]
    );
    let names: Vec<String> = svc
        .list_tools(Some(ToolSource::Mcp))
        .await
        .unwrap()
        .into_iter()
        .map(|tool| format!("{} {}", tool.name, tool.description))
        .collect();
    assert_eq!(names, ["mcp:srv@d1/echo old", "mcp:srv@d2/echo new"]);
    let outcome = svc.import_with(&[], &file, true).await.unwrap();
    assert_eq!(
        outcome.tools,
        [
            ("mcp:srv@d1/echo".to_owned(), ToolChange::Updated),
            ("mcp:srv@d1/add".to_owned(), ToolChange::Created),
            ("mcp:srv@d2/echo".to_owned(), ToolChange::Unchanged),
        ]
    );
}

/// The write-time check's findings stay typed up to the caller: the skill
/// whose definition holds each and the part of it, so a caller that has the
/// file can point at the line (the service reads none).
#[tokio::test]
async fn write_findings_name_their_skill_and_the_part_of_it() {
    use agents_core::{Include, Site};
    use agents_registry::WriteMode;
    let dir = tempfile::tempdir().unwrap();
    let svc = service(&dir).await;
    let include = |to: &str| {
        SkillItem::Include(Include {
            skill: name(to),
            overrides: Default::default(),
        })
    };
    let outcome = svc
        .write_skills(
            &[
                skill("f/a", vec![tool_ref("custom/none"), include("f/missing")]),
                skill("f/b", vec![include("f/c")]),
                skill("f/c", vec![include("f/b")]),
            ],
            WriteMode::Add,
            false,
        )
        .await
        .unwrap();
    let found: Vec<(&str, Option<&str>, Option<&Site>)> = outcome
        .warnings
        .iter()
        .map(|f| {
            (
                f.kind,
                f.skill.as_ref().map(SkillName::as_str),
                f.site.as_ref(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "missing_include",
                Some("f/a"),
                Some(&Site::Include(name("f/missing")))
            ),
            ("cycle", Some("f/b"), Some(&Site::Include(name("f/c")))),
            (
                "unknown_tool",
                Some("f/a"),
                Some(&Site::ToolRef("custom/none".into()))
            ),
        ]
    );
    let err = svc
        .write_skills(
            &[skill("f/d", vec![tool_ref("custom/none")])],
            WriteMode::Add,
            true,
        )
        .await
        .unwrap_err();
    let agents_registry::ServiceError::Strict(findings) = &err else {
        panic!("{err}");
    };
    assert_eq!(findings[0].site, Some(Site::ToolRef("custom/none".into())));
    assert_eq!(
        err.to_string(),
        "nothing written: 1 problem under --strict\n  Skill 'f/d': Tool 'custom/none' is not registered"
    );
}

/// `skill apply` promises create-or-update: a remove that commits between
/// its read of the stored skills and its write makes it create them again,
/// never fail with `skill_not_found`. Writers race on one database, each on
/// its own thread with its own connections, as processes would: appliers of
/// all 12 names, removers and adders of single names. Before the fix about
/// 1 % of these applies failed on PostgreSQL.
fn applies_survive_racing_removes(url: &DatabaseUrl) {
    const NAMES: usize = 12;
    const WRITERS: usize = 8;
    const ROUNDS: usize = 120;
    let all: Vec<Skill> = (0..NAMES)
        .map(|i| skill(&format!("race/s{i}"), vec![tool_ref("builtin/read_file")]))
        .collect();
    let writer = |writer: usize| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let store = Store::open(url).await.unwrap();
            let svc = SkillRegistryService::new(store, std::env::temp_dir());
            let (mut applies, mut failures) = (0, Vec::new());
            for round in 0..ROUNDS {
                let one = name(&format!("race/s{}", (writer * 5 + round * 7) % NAMES));
                match (writer % 2, round % 3) {
                    (0, _) | (1, 0) => {
                        applies += 1;
                        if let Err(err) = svc.write_skills(&all, WriteMode::Apply, false).await {
                            failures.push(err.to_string());
                        }
                    }
                    (_, 1) => {
                        let _ = svc.remove_skill(&one, false).await;
                    }
                    _ => {
                        let _ = svc
                            .add_skill(&skill(one.as_str(), vec![tool_ref("builtin/grep")]))
                            .await;
                    }
                }
            }
            (applies, failures)
        })
    };
    let (mut applies, mut failures) = (0, Vec::new());
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|i| scope.spawn(move || writer(i)))
            .collect();
        for handle in writers {
            let (count, mut failed) = handle.join().unwrap();
            applies += count;
            failures.append(&mut failed);
        }
    });
    assert_eq!(applies, WRITERS / 2 * ROUNDS + WRITERS / 2 * ROUNDS / 3);
    assert!(
        failures.is_empty(),
        "{} of {applies} applies failed: {:?}",
        failures.len(),
        failures
    );
}

/// A migrated database at `url` (the writers then only open it).
fn migrate(url: &DatabaseUrl) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { drop(Store::open(url).await.unwrap()) });
}

#[test]
fn applies_survive_racing_removes_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = DatabaseUrl::Sqlite(dir.path().join("r.db"));
    migrate(&url);
    applies_survive_racing_removes(&url);
}

#[test]
fn applies_survive_racing_removes_postgres() {
    let Ok(admin) = std::env::var("AGENTS_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "AGENTS_TEST_POSTGRES_URL must be set in CI"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED (no AGENTS_TEST_POSTGRES_URL): applies_survive_racing_removes_postgres"
        );
        return;
    };
    let database = format!("registry_apply_race_{}", std::process::id());
    let admin_sql = |sql: String| {
        use sqlx::{Connection, Executor};
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
                conn.execute(sqlx::AssertSqlSafe(sql)).await.unwrap();
                let _ = conn.close().await;
            });
    };
    let drop_it = format!("DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)");
    admin_sql(drop_it.clone());
    admin_sql(format!("CREATE DATABASE \"{database}\""));
    let (base, query) = admin.split_once('?').unwrap_or((&admin, ""));
    let authority = base.find("://").map_or(0, |i| i + 3);
    let path = base[authority..]
        .find('/')
        .map_or(base.len(), |i| i + authority);
    let mut url = format!("{}/{database}", &base[..path]);
    if !query.is_empty() {
        url = format!("{url}?{query}");
    }
    let url = DatabaseUrl::Postgres(url);
    migrate(&url);
    // A failed assertion still drops the database.
    let outcome = std::panic::catch_unwind(|| applies_survive_racing_removes(&url));
    admin_sql(drop_it);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

// ----- the product rules the service owns (first-use discovery, the lock
// gate, typed warnings and notes), run without the binary ------------------

fn skill_with(n: &str, tools: &[&str]) -> Skill {
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
    svc.add_skill(&skill_with("l/a", &["builtin/read_file"]))
        .await
        .unwrap();
    svc.add_skill(&skill_with("l/b", &["builtin/read_file"]))
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
    svc.add_skill(&skill_with("l/a", &["builtin/read_file"]))
        .await
        .unwrap();
    svc.add_skill(&skill_with("l/new", &["builtin/read_file"]))
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
    let mut s = skill_with("l/ro", &["builtin/write_file", "builtin/read_file"]);
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
    let mut s = skill_with("l/m", &[]);
    s.items
        .push(SkillItem::McpSource(Box::new(agents_core::McpSource {
            server: "echo".into(),
            command: Some("echo".into()),
            ..agents_core::McpSource::default()
        })));
    svc.add_skill(&s).await.unwrap();
    let plan = Plan {
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
