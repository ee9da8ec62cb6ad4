//! The shared suite: every function here runs unchanged on SQLite and on
//! PostgreSQL (see the `suite!` list in `store.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use agents_core::{Skill, SkillItem, ToolSource};
use agents_store::{Store, StoreError, ToolGroup};
use serde_json::json;

use crate::fixtures::*;
use crate::harness::Ctx;

fn is_timestamp(raw: &str) -> bool {
    // 2026-12-02T14:03:00.123456Z
    let bytes = raw.as_bytes();
    raw.len() == 27
        && bytes[4] == b'-'
        && bytes[10] == b'T'
        && bytes[19] == b'.'
        && raw.ends_with('Z')
        && raw[20..26].bytes().all(|b| b.is_ascii_digit())
}

pub async fn crud(ctx: Ctx) {
    let store = ctx.open().await;
    let mut first = skill(
        "local/first",
        vec![tool_ref("builtin/read_file"), include("local/second")],
    );
    first.description = Some("the first".into());
    let added = store
        .add_skills(std::slice::from_ref(&first))
        .await
        .unwrap();
    assert_eq!(added.len(), 1);
    let stored = &added[0];
    let created = stored.created_at.clone().unwrap();
    assert!(is_timestamp(&created), "{created}");
    assert_eq!(stored.updated_at.as_deref(), Some(created.as_str()));
    assert_eq!(
        Skill {
            created_at: None,
            updated_at: None,
            ..stored.clone()
        },
        first
    );

    let got = store.get_skill(&first.name).await.unwrap().unwrap();
    assert_eq!(&got, stored);

    let list = store.list_skills(None).await.unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].name, first.name);
    assert_eq!(list[0].namespace, "local");
    assert_eq!(list[0].short_name, "first");
    assert_eq!(list[0].description.as_deref(), Some("the first"));
    assert_eq!(list[0].items, 2);
    assert_eq!(list[0].updated_at, created);

    let mut changed = got.clone();
    changed.description = Some("changed".into());
    changed.version = Some("2".into());
    changed.items = vec![tool_ref("builtin/write_file")];
    let updated = store
        .update_skills(std::slice::from_ref(&changed))
        .await
        .unwrap();
    assert_eq!(
        updated[0].created_at.as_deref(),
        Some(created.as_str()),
        "update keeps created_at"
    );
    assert!(updated[0].updated_at.as_deref().unwrap() > created.as_str());
    let got = store.get_skill(&first.name).await.unwrap().unwrap();
    assert_eq!(got, updated[0]);
    assert_eq!(got.items, vec![tool_ref("builtin/write_file")]);

    assert_eq!(
        store.remove_skill(&first.name, false).await.unwrap(),
        Some(vec![])
    );
    assert_eq!(store.get_skill(&first.name).await.unwrap(), None);
    assert!(store.list_skills(None).await.unwrap().is_empty());
    assert!(store.add_skills(&[]).await.unwrap().is_empty());
    assert!(store.update_skills(&[]).await.unwrap().is_empty());
}

pub async fn remove_refuses_an_included_skill_unless_forced(ctx: Ctx) {
    let store = ctx.open().await;
    let base = skill("local/base", vec![tool_ref("a/b"), include("local/base")]);
    store
        .add_skills(&[
            base,
            skill("local/zeta", vec![include("local/base")]),
            skill(
                "local/alpha",
                vec![include("local/base"), include("local/base")],
            ),
        ])
        .await
        .unwrap();
    let err = store
        .remove_skill(&name("local/base"), false)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "skill_included");
    assert_eq!(
        err.to_string(),
        "skill `local/base` is included by `local/alpha`, `local/zeta`; remove the includes first, \
         or pass `--force` to break them"
    );
    // Nothing was written.
    assert!(
        store
            .get_skill(&name("local/base"))
            .await
            .unwrap()
            .is_some()
    );
    // Forced: removed, and the broken includers are named (a self-include is not one).
    assert_eq!(
        store.remove_skill(&name("local/base"), true).await.unwrap(),
        Some(vec![name("local/alpha"), name("local/zeta")])
    );
    assert_eq!(store.get_skill(&name("local/base")).await.unwrap(), None);
    // A skill only it includes itself goes without force.
    store
        .add_skills(&[skill("local/loop", vec![include("local/loop")])])
        .await
        .unwrap();
    assert_eq!(
        store
            .remove_skill(&name("local/loop"), false)
            .await
            .unwrap(),
        Some(vec![])
    );
}

pub async fn duplicate_add_is_rejected_and_writes_nothing(ctx: Ctx) {
    let store = ctx.open().await;
    store
        .add_skills(&[skill("local/taken", vec![])])
        .await
        .unwrap();
    let batch = [
        skill("local/new-one", vec![tool_ref("a/b")]),
        skill("local/taken", vec![tool_ref("x/y")]),
        skill("local/new-two", vec![]),
    ];
    let err = store.add_skills(&batch).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateSkill(name) if name.as_str() == "local/taken"),
        "{err}"
    );
    assert_eq!(err.to_string(), "skill `local/taken` is already registered");
    assert_eq!(err.kind(), "duplicate_skill");
    assert_eq!(store.get_skill(&name("local/new-one")).await.unwrap(), None);
    assert_eq!(ctx.scalar("SELECT COUNT(*) FROM skills").await, 1);
    assert_eq!(ctx.scalar("SELECT COUNT(*) FROM skill_items").await, 0);
    assert!(
        store
            .get_skill(&name("local/taken"))
            .await
            .unwrap()
            .unwrap()
            .items
            .is_empty()
    );
}

pub async fn duplicate_within_one_batch(ctx: Ctx) {
    let store = ctx.open().await;
    let batch = [
        skill("local/a", vec![]),
        skill("local/twice", vec![tool_ref("a/b")]),
        skill("local/b", vec![]),
        skill("local/twice", vec![]),
    ];
    let err = store.add_skills(&batch).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateSkill(name) if name.as_str() == "local/twice"),
        "{err}"
    );
    assert_eq!(ctx.scalar("SELECT COUNT(*) FROM skills").await, 0);
}

pub async fn not_found(ctx: Ctx) {
    let store = ctx.open().await;
    let ghost = name("local/ghost");
    assert_eq!(store.get_skill(&ghost).await.unwrap(), None);
    assert_eq!(store.remove_skill(&ghost, false).await.unwrap(), None);
    let err = store
        .update_skills(&[skill("local/ghost", vec![])])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::SkillNotFound(name) if *name == ghost),
        "{err}"
    );
    assert_eq!(err.to_string(), "Skill 'local/ghost' is not registered");
    // A batch with one missing skill writes nothing.
    store
        .add_skills(&[skill("local/real", vec![])])
        .await
        .unwrap();
    let mut real = skill("local/real", vec![tool_ref("a/b")]);
    real.description = Some("should not land".into());
    let err = store
        .update_skills(&[real, skill("local/ghost", vec![])])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::SkillNotFound(_)), "{err}");
    let real = store.get_skill(&name("local/real")).await.unwrap().unwrap();
    assert_eq!(real.description, None);
    assert!(real.items.is_empty());
}

pub async fn remove_cascades_to_items(ctx: Ctx) {
    let store = ctx.open().await;
    store
        .add_skills(&[
            skill(
                "local/doomed",
                vec![tool_ref("a/b"), include("local/kept"), tool_ref("c/d")],
            ),
            skill("local/kept", vec![tool_ref("e/f")]),
        ])
        .await
        .unwrap();
    assert_eq!(
        ctx.scalar("SELECT COUNT(*) FROM skill_items WHERE skill_name = 'local/doomed'")
            .await,
        3
    );
    assert!(
        store
            .remove_skill(&name("local/doomed"), false)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        ctx.scalar("SELECT COUNT(*) FROM skill_items WHERE skill_name = 'local/doomed'")
            .await,
        0
    );
    assert_eq!(ctx.scalar("SELECT COUNT(*) FROM skill_items").await, 1);
    // The database itself cascades, not just the store.
    ctx.execute("DELETE FROM skills WHERE name = 'local/kept'")
        .await;
    assert_eq!(ctx.scalar("SELECT COUNT(*) FROM skill_items").await, 0);
}

pub async fn every_item_kind_round_trips_in_order(ctx: Ctx) {
    let store = ctx.open().await;
    let original = everything("local/everything");
    let added = store
        .add_skills(std::slice::from_ref(&original))
        .await
        .unwrap();
    let got = store.get_skill(&original.name).await.unwrap().unwrap();
    assert_eq!(got, added[0]);
    assert_eq!(got.items, original.items);
    assert_eq!(got.metadata, original.metadata);
    assert_eq!(got.overrides, original.overrides);
    let keys: Vec<&String> = got.metadata.keys().collect();
    assert_eq!(
        keys,
        ["zeta", "alpha", "mid"],
        "metadata key order survives"
    );
    let override_keys: Vec<&String> = got.overrides.keys().collect();
    assert_eq!(override_keys, ["builtin/read_file", "mcp:gh/create_issue"]);

    let rows = ctx
        .rows(
            "SELECT item_type, item_name, item_config, CAST(item_order AS TEXT), created_at FROM skill_items \
             WHERE skill_name = 'local/everything' ORDER BY item_order",
        )
        .await;
    let columns: Vec<(String, String, Option<String>, String)> = rows
        .iter()
        .map(|row| {
            (
                row[0].clone().unwrap(),
                row[1].clone().unwrap(),
                row[2].clone(),
                row[3].clone().unwrap(),
            )
        })
        .collect();
    let expected_types = [
        "tool_ref",
        "inline_tool",
        "include",
        "mcp_source",
        "agent_source",
        "include",
        "inline_tool",
        "mcp_source",
        "tool_ref",
    ];
    assert_eq!(
        columns.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        expected_types
    );
    let names: Vec<&str> = columns.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(
        names,
        [
            "builtin/read_file",
            "local/everything/_anon_0",
            "lib/helpers",
            "gh",
            "~/skills/pdf",
            "lib/plain",
            "local/everything/_anon_1",
            "remote",
            "mcp:gh/create_issue"
        ]
    );
    assert_eq!(
        columns.iter().map(|c| c.3.as_str()).collect::<Vec<_>>(),
        ["0", "1", "2", "3", "4", "5", "6", "7", "8"]
    );
    let config = |i: usize| {
        columns[i]
            .2
            .as_deref()
            .map(|raw| serde_json::from_str::<serde_json::Value>(raw).unwrap())
    };
    assert_eq!(config(0), None, "tool_ref has no config");
    assert_eq!(config(4), None, "agent_source has no config");
    assert_eq!(config(5), None, "include without overrides has no config");
    assert_eq!(
        config(2),
        Some(json!({"overrides": {"checkpointable": true}}))
    );
    assert_eq!(
        config(3).unwrap()["env"],
        json!({"TOKEN": "${GITHUB_TOKEN}", "A": "1"})
    );
    assert_eq!(config(1).unwrap()["description"], json!("first inline"));
    assert!(
        rows.iter()
            .all(|row| row[4].as_deref() == added[0].created_at.as_deref())
    );
    let meta = ctx.rows("SELECT metadata_json FROM skills").await;
    let meta: serde_json::Value = serde_json::from_str(meta[0][0].as_deref().unwrap()).unwrap();
    assert_eq!(
        meta["overrides"]["builtin/read_file"],
        json!({"read_only": true, "description": "reads"})
    );
    assert_eq!(meta["metadata"]["zeta"], json!(1));

    // The same skill survives a full export too.
    assert_eq!(store.all_skills().await.unwrap(), vec![got]);
}

pub async fn list_filters_by_namespace_and_sorts_by_name(ctx: Ctx) {
    let store = ctx.open().await;
    let names = [
        "ns/b", "other/a", "ns/B", "ns/a", "ns/_x", "ns/-y", "ns/a-b", "ns/a_b", "ns/Z9", "zz/top",
        "ns2/a",
    ];
    let mut batch: Vec<Skill> = names
        .iter()
        .map(|n| skill(n, vec![tool_ref("t/1")]))
        .collect();
    batch[0].items.push(tool_ref("t/2"));
    batch[0].version = Some("0.1".into());
    store.add_skills(&batch).await.unwrap();

    let mut sorted: Vec<&str> = names.to_vec();
    sorted.sort();
    let all: Vec<String> = store
        .list_skills(None)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(all, sorted, "byte order on every backend");

    let ns = store.list_skills(Some("ns")).await.unwrap();
    let ns_names: Vec<&str> = ns.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        ns_names,
        [
            "ns/-y", "ns/B", "ns/Z9", "ns/_x", "ns/a", "ns/a-b", "ns/a_b", "ns/b"
        ]
    );
    let b = ns.iter().find(|s| s.name.as_str() == "ns/b").unwrap();
    assert_eq!((b.items, b.version.as_deref()), (2, Some("0.1")));
    assert!(store.list_skills(Some("nobody")).await.unwrap().is_empty());
    assert_eq!(store.list_skills(Some("ns2")).await.unwrap().len(), 1);

    let all = store.all_skills().await.unwrap();
    assert_eq!(
        all.iter().map(|s| s.name.to_string()).collect::<Vec<_>>(),
        sorted
    );
}

pub async fn failed_batches_leave_the_database_unchanged(ctx: Ctx) {
    let store = ctx.open().await;
    store
        .add_skills(&[skill("keep/one", vec![tool_ref("a/b")])])
        .await
        .unwrap();
    let before = store.status().await.unwrap();
    let dump = store.all_skills().await.unwrap();

    let mut batch: Vec<Skill> = (0..50)
        .map(|i| skill(&format!("keep/new{i}"), vec![tool_ref("x/y")]))
        .collect();
    batch.push(skill("keep/one", vec![]));
    assert!(matches!(
        store.add_skills(&batch).await,
        Err(StoreError::DuplicateSkill(_))
    ));

    let mut bad = skill("keep/bad", vec![]);
    bad.version = Some("v".repeat(51));
    let err = store
        .add_skills(&[skill("keep/fine", vec![]), bad])
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::InvalidValue {
                column: "version",
                ..
            }
        ),
        "{err}"
    );

    let mut update = dump[0].clone();
    update.description = Some("nul\0".into());
    assert!(matches!(
        store.update_skills(&[update]).await,
        Err(StoreError::InvalidValue { .. })
    ));

    assert_eq!(store.status().await.unwrap(), before);
    assert_eq!(store.all_skills().await.unwrap(), dump);
}

pub async fn optimistic_update_detects_conflicts(ctx: Ctx) {
    let store = ctx.open().await;
    let added = store
        .add_skills(&[skill("opt/s", vec![])])
        .await
        .unwrap()
        .remove(0);
    let token = added.updated_at.clone().unwrap();

    let mut mine = added.clone();
    mine.description = Some("mine".into());
    let after = store
        .update_skills(&[mine.clone()])
        .await
        .unwrap()
        .remove(0);
    let new_token = after.updated_at.clone().unwrap();
    assert!(new_token > token);

    // `mine` still carries the old token: a second write with it loses.
    mine.description = Some("stale".into());
    let err = store.update_skills(&[mine]).await.unwrap_err();
    match &err {
        StoreError::Conflict {
            name,
            expected,
            found,
        } => {
            assert_eq!(name.as_str(), "opt/s");
            assert_eq!(expected, &token);
            assert_eq!(found, &new_token);
        }
        other => panic!("expected a conflict, got {other}"),
    }
    assert_eq!(err.kind(), "conflict");
    assert!(
        err.to_string().contains("fetch it again and retry"),
        "{err}"
    );
    assert_eq!(
        store
            .get_skill(&name("opt/s"))
            .await
            .unwrap()
            .unwrap()
            .description
            .as_deref(),
        Some("mine")
    );

    // Without a token, the write applies; tokens strictly increase even
    // when updates come faster than the clock ticks.
    let mut previous = new_token;
    for i in 0..20 {
        let mut blind = skill("opt/s", vec![]);
        blind.description = Some(format!("blind {i}"));
        let done = store.update_skills(&[blind]).await.unwrap().remove(0);
        let token = done.updated_at.unwrap();
        assert!(token > previous, "{token} <= {previous}");
        assert!(is_timestamp(&token), "{token}");
        assert_eq!(done.created_at, added.created_at);
        previous = token;
    }
}

pub async fn schema_too_new_is_refused_untouched(ctx: Ctx) {
    let store = ctx.open().await;
    store
        .add_skills(&[skill("keep/me", vec![tool_ref("a/b")])])
        .await
        .unwrap();
    let status = store.status().await.unwrap();
    assert_eq!((status.schema_version, status.supported_version), (2, 2));
    drop(store);
    ctx.execute("INSERT INTO schema_migrations (version, description, applied_at) VALUES (999, 'from the future', '2999-01-01T00:00:00.000000Z')")
        .await;
    let err = ctx.try_open().await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::SchemaTooNew {
                found: 999,
                supported: 2
            }
        ),
        "{err}"
    );
    assert_eq!(err.kind(), "schema_too_new");
    assert!(err.to_string().contains("upgrade `agents`"), "{err}");
    assert_eq!(
        ctx.scalar("SELECT MAX(version) FROM schema_migrations")
            .await,
        999
    );
    assert_eq!(
        ctx.scalar("SELECT COUNT(*) FROM schema_migrations").await,
        3
    );
    assert_eq!(ctx.scalar("SELECT COUNT(*) FROM skill_items").await, 1);
}

pub async fn reopening_keeps_data_and_schema(ctx: Ctx) {
    let store = ctx.open().await;
    store.add_skills(&[everything("keep/all")]).await.unwrap();
    drop(store);
    let again = ctx.open().await;
    assert_eq!(again.status().await.unwrap().schema_version, 2);
    assert_eq!(
        ctx.scalar("SELECT COUNT(*) FROM schema_migrations").await,
        2
    );
    assert_eq!(
        again
            .get_skill(&name("keep/all"))
            .await
            .unwrap()
            .unwrap()
            .items,
        everything("keep/all").items
    );
}

pub async fn concurrent_first_opens_all_succeed(ctx: Ctx) {
    let opens: Vec<_> = (0..8)
        .map(|_| {
            let ctx = ctx.clone();
            tokio::spawn(async move { ctx.try_open().await.map(|_| ()) })
        })
        .collect();
    for open in opens {
        open.await.unwrap().unwrap();
    }
    assert_eq!(
        ctx.scalar("SELECT COUNT(*) FROM schema_migrations").await,
        2
    );
    assert_eq!(ctx.open().await.status().await.unwrap().schema_version, 2);
}

pub async fn tools_put_get_list_remove(ctx: Ctx) {
    let store = ctx.open().await;
    let tools = vec![
        tool("builtin/read_file", ToolSource::Builtin),
        mcp_tool("gh", "create_issue"),
        tool("custom/zeta", ToolSource::Custom),
        tool("agent_skills/pdf", ToolSource::AgentSkills),
    ];
    store.put_tools(&tools, false).await.unwrap();
    assert_eq!(
        store
            .get_tool("mcp:gh/create_issue")
            .await
            .unwrap()
            .as_ref(),
        Some(&tools[1])
    );
    assert_eq!(store.get_tool("nope").await.unwrap(), None);
    let names: Vec<String> = store
        .list_tools(None)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        [
            "agent_skills/pdf",
            "builtin/read_file",
            "custom/zeta",
            "mcp:gh/create_issue"
        ]
    );
    assert_eq!(
        store.list_tools(Some(ToolSource::Mcp)).await.unwrap(),
        vec![tools[1].clone()]
    );
    assert!(
        store
            .list_tools(Some(ToolSource::Custom))
            .await
            .unwrap()
            .iter()
            .all(|t| t.source == ToolSource::Custom)
    );

    let wanted = vec![
        "custom/zeta".to_string(),
        "missing".to_string(),
        "builtin/read_file".to_string(),
    ];
    let got: Vec<String> = store
        .get_tools(&wanted)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        got,
        ["custom/zeta", "builtin/read_file"],
        "request order, missing skipped"
    );
    assert!(store.get_tools(&[]).await.unwrap().is_empty());
    assert_eq!(
        ctx.rows("SELECT source, origin FROM tools WHERE name = 'mcp:gh/create_issue'")
            .await,
        vec![vec![Some("mcp".to_string()), Some("gh".to_string())]]
    );
    assert_eq!(
        ctx.rows("SELECT origin FROM tools WHERE name = 'custom/zeta'")
            .await,
        vec![vec![None]]
    );

    // A taken name without `replace` fails and writes nothing.
    let err = store
        .put_tools(
            &[
                tool("custom/new", ToolSource::Custom),
                tool("custom/zeta", ToolSource::Custom),
            ],
            false,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateTool(name) if name == "custom/zeta"),
        "{err}"
    );
    assert_eq!(err.to_string(), "tool `custom/zeta` is already registered");
    assert_eq!(store.get_tool("custom/new").await.unwrap(), None);
    let err = store
        .put_tools(
            &[
                tool("custom/twice", ToolSource::Custom),
                tool("custom/twice", ToolSource::Custom),
            ],
            false,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateTool(name) if name == "custom/twice"),
        "{err}"
    );

    // With `replace`, the definition changes and created_at stays.
    let created = ctx
        .rows("SELECT created_at FROM tools WHERE name = 'custom/zeta'")
        .await;
    let mut changed = tool("custom/zeta", ToolSource::Custom);
    changed.description = "changed".into();
    changed.writes = Some(true);
    store.put_tools(&[changed.clone()], true).await.unwrap();
    assert_eq!(store.get_tool("custom/zeta").await.unwrap(), Some(changed));
    assert_eq!(
        ctx.rows("SELECT created_at FROM tools WHERE name = 'custom/zeta'")
            .await,
        created
    );

    // Removing a tool skills still name is not refused (an unknown tool ref
    // is a warning); the result names those skills, each once, sorted, and
    // not a skill that only includes one of them.
    store
        .add_skills(&[
            skill(
                "local/users-b",
                vec![tool_ref("custom/zeta"), tool_ref("custom/zeta")],
            ),
            skill("local/users-a", vec![tool_ref("custom/zeta")]),
            skill("local/other", vec![include("local/users-a")]),
        ])
        .await
        .unwrap();
    assert_eq!(
        store
            .remove_tool("custom/zeta", "custom/zeta")
            .await
            .unwrap(),
        Some(vec![name("local/users-a"), name("local/users-b")])
    );
    assert_eq!(
        store
            .remove_tool("custom/zeta", "custom/zeta")
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.status().await.unwrap().tools, 3);
    store.put_tools(&[], false).await.unwrap();
}

pub async fn replace_tool_group_swaps_one_group(ctx: Ctx) {
    let store = ctx.open().await;
    store
        .put_tools(
            &[
                mcp_tool("a", "one"),
                mcp_tool("a", "two"),
                mcp_tool("b", "one"),
                tool("skills/pdf", ToolSource::AgentSkills),
                tool("skills/old", ToolSource::AgentSkills),
                tool("builtin/read_file", ToolSource::Builtin),
            ],
            false,
        )
        .await
        .unwrap();
    let group = ToolGroup {
        source: ToolSource::Mcp,
        origin: Some("a".into()),
    };
    let deleted = store
        .replace_tool_group(&group, &[mcp_tool("a", "two"), mcp_tool("a", "three")], &[])
        .await
        .unwrap();
    assert_eq!(deleted, 2);
    let mcp: Vec<String> = store
        .list_tools(Some(ToolSource::Mcp))
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(mcp, ["mcp:a/three", "mcp:a/two", "mcp:b/one"]);

    let all_skills = ToolGroup {
        source: ToolSource::AgentSkills,
        origin: None,
    };
    let deleted = store
        .replace_tool_group(
            &all_skills,
            &[tool("skills/pdf", ToolSource::AgentSkills)],
            &[],
        )
        .await
        .unwrap();
    assert_eq!(deleted, 2);
    let skills: Vec<String> = store
        .list_tools(Some(ToolSource::AgentSkills))
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(skills, ["skills/pdf"]);

    // New tools replace a same-named tool of another source.
    let mut moved = tool("builtin/read_file", ToolSource::AgentSkills);
    moved.description = "now from a skill folder".into();
    store
        .replace_tool_group(&all_skills, &[moved.clone()], &[])
        .await
        .unwrap();
    assert_eq!(
        store.get_tool("builtin/read_file").await.unwrap(),
        Some(moved)
    );
    assert!(
        store
            .list_tools(Some(ToolSource::Builtin))
            .await
            .unwrap()
            .is_empty()
    );

    // Emptying a group.
    assert_eq!(store.replace_tool_group(&group, &[], &[]).await.unwrap(), 2);
    assert_eq!(
        store.list_tools(Some(ToolSource::Mcp)).await.unwrap().len(),
        1
    );
}

pub async fn replace_tool_group_writes_its_meta_in_the_same_transaction(ctx: Ctx) {
    let store = ctx.open().await;
    let group = ToolGroup {
        source: ToolSource::Mcp,
        origin: Some("a".into()),
    };
    store
        .replace_tool_group(
            &group,
            &[mcp_tool("a", "one")],
            &[("mcp.a.fetched_at", "t1")],
        )
        .await
        .unwrap();
    assert_eq!(
        store.get_meta("mcp.a.fetched_at").await.unwrap().as_deref(),
        Some("t1")
    );
    // A refused call (a NUL in a meta value) changes neither the tools nor the meta.
    let err = store
        .replace_tool_group(
            &group,
            &[mcp_tool("a", "two")],
            &[("mcp.a.fetched_at", "t2"), ("mcp.a.other", "bad\0")],
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "invalid_value");
    let names: Vec<String> = store
        .list_tools(Some(ToolSource::Mcp))
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["mcp:a/one"]);
    assert_eq!(
        store.get_meta("mcp.a.fetched_at").await.unwrap().as_deref(),
        Some("t1")
    );
    assert_eq!(store.get_meta("mcp.a.other").await.unwrap(), None);
}

pub async fn replace_keeping_previous_keeps_one_generation_per_group(ctx: Ctx) {
    let store = ctx.open().await;
    let group = |origin: &str| ToolGroup {
        source: ToolSource::Mcp,
        origin: Some(origin.into()),
    };
    let described = |origin: &str, name: &str, description: &str| {
        let mut tool = mcp_tool(origin, name);
        tool.description = description.into();
        tool
    };
    assert!(store.previous_tools(&group("a")).await.unwrap().is_empty());
    store
        .replace_tool_group(&group("a"), &[described("a", "one", "v1")], &[])
        .await
        .unwrap();
    store
        .replace_tool_group(&group("b"), &[described("b", "one", "b1")], &[])
        .await
        .unwrap();
    // A plain replace keeps no generation.
    store
        .replace_tool_group(&group("a"), &[described("a", "one", "v2")], &[])
        .await
        .unwrap();
    assert!(store.previous_tools(&group("a")).await.unwrap().is_empty());
    store
        .replace_tool_group_keeping_previous(
            &group("a"),
            &[described("a", "one", "v3"), described("a", "two", "v3")],
            &[("mcp.a.fetched_at", "t3")],
        )
        .await
        .unwrap();
    let previous = store.previous_tools(&group("a")).await.unwrap();
    assert_eq!(previous, [described("a", "one", "v2")]);
    assert_eq!(
        store.get_meta("mcp.a.fetched_at").await.unwrap().as_deref(),
        Some("t3")
    );
    // One generation: the next kept change replaces it; other groups are untouched.
    store
        .replace_tool_group_keeping_previous(&group("a"), &[described("a", "two", "v4")], &[])
        .await
        .unwrap();
    let previous: Vec<String> = store
        .previous_tools(&group("a"))
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.description)
        .collect();
    assert_eq!(previous, ["v3", "v3"]);
    assert!(store.previous_tools(&group("b")).await.unwrap().is_empty());
    assert_eq!(ctx.scalar("SELECT COUNT(*) FROM tools_previous").await, 2);
    let current: Vec<String> = store
        .list_tools(Some(ToolSource::Mcp))
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(current, ["mcp:a/two", "mcp:b/one"]);
}

pub async fn replace_tool_group_is_atomic_for_readers(ctx: Ctx) {
    let store = Arc::new(ctx.open().await);
    let group = ToolGroup {
        source: ToolSource::Mcp,
        origin: Some("srv".into()),
    };
    let set = |prefix: &str| {
        (0..40)
            .map(|i| mcp_tool("srv", &format!("{prefix}{i:02}")))
            .collect::<Vec<_>>()
    };
    store
        .replace_tool_group(&group, &set("a"), &[])
        .await
        .unwrap();
    let writer = {
        let store = Arc::clone(&store);
        let group = group.clone();
        let (a, b) = (set("a"), set("b"));
        tokio::spawn(async move {
            for round in 0..30 {
                let next = if round % 2 == 0 { &b } else { &a };
                assert_eq!(
                    store.replace_tool_group(&group, next, &[]).await.unwrap(),
                    40
                );
            }
        })
    };
    let reader_store = ctx.open().await;
    let mut observed = 0;
    while observed == 0 || !writer.is_finished() {
        let names: Vec<String> = reader_store
            .list_tools(Some(ToolSource::Mcp))
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(
            names.len(),
            40,
            "a reader saw a half-replaced group: {names:?}"
        );
        let prefixes: BTreeSet<&str> = names.iter().map(|n| &n[6..7]).collect();
        assert_eq!(prefixes.len(), 1, "mixed groups: {names:?}");
        observed += 1;
    }
    writer.await.unwrap();
    assert!(observed > 0);
}

pub async fn meta_values(ctx: Ctx) {
    let store = ctx.open().await;
    assert_eq!(store.get_meta("last_refresh").await.unwrap(), None);
    store.set_meta("last_refresh", "yesterday").await.unwrap();
    store.set_meta("last_refresh", "today").await.unwrap();
    store.set_meta("other", "").await.unwrap();
    assert_eq!(
        store.get_meta("last_refresh").await.unwrap().as_deref(),
        Some("today")
    );
    assert_eq!(store.get_meta("other").await.unwrap().as_deref(), Some(""));
}

pub async fn load_closure_follows_includes(ctx: Ctx) {
    let store = ctx.open().await;
    store
        .add_skills(&[
            skill(
                "d/top",
                vec![include("d/left"), include("d/right"), tool_ref("t/top")],
            ),
            skill("d/left", vec![include("d/bottom")]),
            skill("d/right", vec![include("d/bottom"), include("d/missing")]),
            skill("d/bottom", vec![tool_ref("t/bottom")]),
            skill("d/unrelated", vec![tool_ref("t/x")]),
            skill("c/a", vec![include("c/b")]),
            skill("c/b", vec![include("c/a")]),
        ])
        .await
        .unwrap();
    let closure = store.load_closure(&[name("d/top")]).await.unwrap();
    let names: Vec<&str> = closure.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["d/bottom", "d/left", "d/right", "d/top"]);
    assert_eq!(
        closure[3],
        store.get_skill(&name("d/top")).await.unwrap().unwrap()
    );
    assert_eq!(closure[0].items, vec![tool_ref("t/bottom")]);

    let closure = store
        .load_closure(&[name("d/left"), name("d/unrelated"), name("d/nope")])
        .await
        .unwrap();
    let names: Vec<&str> = closure.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["d/bottom", "d/left", "d/unrelated"]);

    let cycle = store.load_closure(&[name("c/a")]).await.unwrap();
    assert_eq!(cycle.len(), 2, "a cycle terminates");
    assert!(
        store
            .load_closure(&[name("d/nope")])
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.load_closure(&[]).await.unwrap().is_empty());
}

pub async fn load_closure_of_a_deep_chain(ctx: Ctx) {
    const DEPTH: usize = 10_000;
    let store = ctx.open().await;
    let chain: Vec<Skill> = (0..DEPTH)
        .map(|i| {
            let mut items = vec![tool_ref(&format!("t/{i}"))];
            if i + 1 < DEPTH {
                items.push(include(&format!("chain/s{:05}", i + 1)));
            }
            skill(&format!("chain/s{i:05}"), items)
        })
        .collect();
    let started = Instant::now();
    store.add_skills(&chain).await.unwrap();
    let added = started.elapsed();
    let started = Instant::now();
    let closure = store.load_closure(&[name("chain/s00000")]).await.unwrap();
    let loaded = started.elapsed();
    eprintln!(
        "{}: add {DEPTH} chained skills {added:?}, load_closure {loaded:?}",
        ctx.backend()
    );
    assert_eq!(closure.len(), DEPTH);
    assert_eq!(closure[DEPTH - 1].name.as_str(), "chain/s09999");
    assert_eq!(closure[0].items.len(), 2);
    // Its cost is counted, not timed, by the closure statement's own test
    // (`engine::tests`): twice the depth, at most about twice the work.
    let tail = store.load_closure(&[name("chain/s09998")]).await.unwrap();
    assert_eq!(tail.len(), 2);
}

pub async fn status_counts_rows(ctx: Ctx) {
    let store = ctx.open().await;
    let status = store.status().await.unwrap();
    assert_eq!(status.backend, ctx.backend());
    assert_eq!((status.skills, status.skill_items, status.tools), (0, 0, 0));
    assert_eq!(status.schema_version, 2);
    assert_eq!(status.location, ctx.url().to_string());
    if let Some(url) = ctx.postgres_url() {
        let password = url
            .split_once("://")
            .unwrap()
            .1
            .split('@')
            .next()
            .unwrap()
            .split(':')
            .nth(1)
            .unwrap_or("");
        if !password.is_empty() {
            assert!(!status.location.contains(password), "{}", status.location);
        }
    }
    store
        .add_skills(&[
            skill("s/a", vec![tool_ref("x/1"), tool_ref("x/2")]),
            skill("s/b", vec![tool_ref("x/3")]),
        ])
        .await
        .unwrap();
    store
        .put_tools(&[tool("x/1", ToolSource::Custom)], false)
        .await
        .unwrap();
    let status = store.status().await.unwrap();
    assert_eq!((status.skills, status.skill_items, status.tools), (2, 3, 1));
}

pub async fn undecodable_rows_are_reported_as_corrupt(ctx: Ctx) {
    let store = ctx.open().await;
    store
        .add_skills(&[
            skill("bad/meta", vec![]),
            skill("bad/item", vec![tool_ref("a/b")]),
        ])
        .await
        .unwrap();
    store
        .put_tools(&[tool("bad/tool", ToolSource::Custom)], false)
        .await
        .unwrap();
    ctx.execute("UPDATE skills SET metadata_json = 'not json' WHERE name = 'bad/meta'")
        .await;
    ctx.execute("UPDATE skill_items SET item_type = 'gadget' WHERE skill_name = 'bad/item'")
        .await;
    ctx.execute("UPDATE tools SET spec_json = '{}' WHERE name = 'bad/tool'")
        .await;
    let err = store.get_skill(&name("bad/meta")).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Corrupt {
                table: "skills",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.kind(), "corrupt_data");
    let err = store.get_skill(&name("bad/item")).await.unwrap_err();
    assert!(
        err.to_string().contains("unknown `item_type` `gadget`"),
        "{err}"
    );
    assert!(matches!(
        store.all_skills().await,
        Err(StoreError::Corrupt { .. })
    ));
    // A listing across the registry reads around them, saying why.
    store
        .add_skills(&[skill("good/one", vec![tool_ref("a/b")])])
        .await
        .unwrap();
    let readable = store.readable_skills().await.unwrap();
    let names: Vec<&str> = readable.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good/one"]);
    let mut corrupt: Vec<String> = readable.corrupt.iter().map(|e| e.to_string()).collect();
    corrupt.sort();
    assert_eq!(corrupt.len(), 2, "{corrupt:?}");
    assert!(corrupt[0].contains("`bad/item#0`"), "{corrupt:?}");
    assert!(corrupt[1].contains("`bad/meta`"), "{corrupt:?}");
    assert!(
        readable
            .corrupt
            .iter()
            .all(|err| err.kind() == "corrupt_data")
    );
    assert!(matches!(
        store.get_tool("bad/tool").await,
        Err(StoreError::Corrupt { table: "tools", .. })
    ));
    // Summaries do not decode JSON, so listing still works.
    assert_eq!(store.list_skills(None).await.unwrap().len(), 3);
    // A tool row that does not decode is left out of listings and of a
    // look-up of several names (the tool reads as unknown); export reads
    // strictly.
    store
        .put_tools(&[tool("good/tool", ToolSource::Custom)], false)
        .await
        .unwrap();
    let listed: Vec<String> = store
        .list_tools(None)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, ["good/tool"]);
    let found = store
        .get_tools(&["bad/tool".to_owned(), "good/tool".to_owned()])
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert!(matches!(
        store.all_tools().await,
        Err(StoreError::Corrupt { table: "tools", .. })
    ));
    // A skill row whose name no skill may have is left out of the summary
    // listing, not the end of it.
    ctx.execute("UPDATE skills SET name = 'no slash' WHERE name = 'bad/meta'")
        .await;
    let names: Vec<String> = store
        .list_skills(None)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(names, ["bad/item", "good/one"]);
    // A decode error quoting a secret-looking value masks it.
    ctx.execute(
        "UPDATE skills SET metadata_json = '{\"metadata\":\"token=hunter2tok\"}' WHERE name = 'good/one'",
    )
    .await;
    let err = store.get_skill(&name("good/one")).await.unwrap_err();
    assert!(!err.to_string().contains("hunter2tok"), "{err}");
}

/// A row written behind the registry's back is read as strictly as one it
/// writes: a name that would print as a command line or as lines of its
/// own (an MCP server name, a tool ref, a catalogue name, the server and
/// tool of a cached MCP row) makes the row corrupt, naming table and key.
pub async fn names_read_back_are_checked_as_when_written(ctx: Ctx) {
    let store = ctx.open().await;
    let server = SkillItem::McpSource(Box::new(agents_core::McpSource {
        server: "fmt".into(),
        command: Some("/bin/true".into()),
        ..agents_core::McpSource::default()
    }));
    store
        .add_skills(&[
            skill("team/server", vec![tool_ref("a/b"), server.clone()]),
            skill("team/refs", vec![tool_ref("a/b")]),
            skill("team/url", vec![server]),
            skill("team/fine", vec![tool_ref("a/b")]),
        ])
        .await
        .unwrap();
    store
        .put_tools(
            &[
                tool("x/one", ToolSource::Custom),
                mcp_tool("gh", "issue"),
                mcp_tool("gh", "pull"),
            ],
            false,
        )
        .await
        .unwrap();
    ctx.execute(
        "UPDATE skill_items SET item_config = '{\"server\":\"fmt --digest 0; touch /tmp/x #\",\"command\":\"/bin/true\"}' \
         WHERE skill_name = 'team/server' AND item_type = 'mcp_source'",
    )
    .await;
    ctx.execute(
        "UPDATE skill_items SET item_name = 'a/b\nwarning: fake' WHERE skill_name = 'team/refs'",
    )
    .await;
    ctx.execute(
        "UPDATE skill_items SET item_config = '{\"server\":\"fmt\",\"command\":\"/bin/true\",\"url\":\"file:///etc/passwd\"}' \
         WHERE skill_name = 'team/url'",
    )
    .await;
    ctx.execute("UPDATE tools SET name = 'x/one two', spec_json = replace(spec_json, 'x/one', 'x/one two') WHERE name = 'x/one'")
        .await;
    ctx.execute(
        "UPDATE tools SET spec_json = replace(spec_json, '\"server\":\"gh\"', '\"server\":\"gh x\"') WHERE name = 'mcp:gh/issue'",
    )
    .await;
    for (skill_name, key, needle) in [
        (
            "team/server",
            "team/server#1",
            "`item_config`: `server`: server name `fmt --digest 0; touch /tmp/x #` must be",
        ),
        (
            "team/refs",
            "team/refs#0",
            "`item_name`: tool name must not contain whitespace or control characters",
        ),
        (
            "team/url",
            "team/url#0",
            "give either `command` (stdio) or `url` (streamable HTTP), not both; `url`: expected an `http://` or `https://` URL",
        ),
    ] {
        let err = store.get_skill(&name(skill_name)).await.unwrap_err();
        match &err {
            StoreError::Corrupt {
                table, key: got, ..
            } => {
                assert_eq!((*table, got.as_str()), ("skill_items", key), "{err}");
            }
            other => panic!("{other}"),
        }
        assert!(err.to_string().contains(needle), "{err}");
        assert!(!err.to_string().contains('\n'), "{err}");
    }
    let readable = store.readable_skills().await.unwrap();
    let names: Vec<&str> = readable.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["team/fine"]);
    assert_eq!(readable.corrupt.len(), 3);
    for (tool_name, needle) in [
        ("x/one two", "`name`: tool name must not contain whitespace"),
        (
            "mcp:gh/issue",
            "`source_metadata.server`: server name `gh x` must be",
        ),
    ] {
        let err = store.get_tool(tool_name).await.unwrap_err();
        assert!(
            matches!(&err, StoreError::Corrupt { table: "tools", key, .. } if key == tool_name),
            "{err}"
        );
        assert!(err.to_string().contains(needle), "{err}");
    }
    let listed: Vec<String> = store
        .list_tools(None)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, ["mcp:gh/pull"]);
}

pub async fn bulk_add_ten_thousand_skills(ctx: Ctx) {
    const COUNT: usize = 10_000;
    let store = ctx.open().await;
    let batch: Vec<Skill> = (0..COUNT)
        .map(|i| {
            let mut s = skill(
                &format!("bulk/skill-{i:05}"),
                vec![
                    tool_ref("builtin/read_file"),
                    tool_ref(&format!("custom/t{i}")),
                    include("bulk/skill-00000"),
                    SkillItem::InlineTool(Default::default()),
                    tool_ref("builtin/write_file"),
                ],
            );
            s.description = Some(format!("skill number {i}"));
            s
        })
        .collect();
    let started = Instant::now();
    store.add_skills(&batch).await.unwrap();
    let elapsed = started.elapsed();
    eprintln!(
        "{}: add_skills of {COUNT} skills x 5 items in one transaction: {elapsed:?} ({:.0} skills/s, debug build)",
        ctx.backend(),
        COUNT as f64 / elapsed.as_secs_f64()
    );
    let status = store.status().await.unwrap();
    assert_eq!(
        (status.skills, status.skill_items),
        (COUNT as u64, 5 * COUNT as u64)
    );
    let last = store
        .get_skill(&name("bulk/skill-09999"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(last.items, batch[COUNT - 1].items);
    // The rows go in a statement's worth at a time, inside one transaction:
    // a taken name in the last statement takes back every earlier one.
    let mut again: Vec<Skill> = (0..COUNT)
        .map(|i| skill(&format!("bulk2/skill-{i:05}"), vec![tool_ref("x/y")]))
        .collect();
    again.push(skill("bulk/skill-09999", vec![]));
    let err = store.add_skills(&again).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateSkill(taken) if taken.as_str() == "bulk/skill-09999"),
        "{err}"
    );
    assert_eq!(
        store.list_skills(Some("bulk2")).await.unwrap().len(),
        0,
        "an earlier statement of the failed add landed"
    );
}

/// 16 writers, each with its own store handle, add, update and remove skills
/// in one namespace; afterwards exactly the successful writes are visible.
pub async fn sixteen_concurrent_writers_lose_nothing(ctx: Ctx) {
    const WRITERS: usize = 16;
    const PER_WRITER: usize = 8;
    let tasks: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let ctx = ctx.clone();
            tokio::spawn(async move {
                let store = ctx.open().await;
                let mut expected: BTreeMap<String, String> = BTreeMap::new();
                for j in 0..PER_WRITER {
                    let raw = format!("race/w{writer:02}-{j}");
                    let mut s = skill(
                        &raw,
                        vec![tool_ref(&format!("t/{writer}")), include("race/shared")],
                    );
                    s.description = Some(format!("added by {writer}"));
                    let stored = store.add_skills(&[s]).await.unwrap().remove(0);
                    expected.insert(raw.clone(), "added".into());
                    if j % 2 == 0 {
                        let mut change = stored.clone();
                        change.description = Some(format!("updated by {writer}"));
                        change.items.push(tool_ref("t/extra"));
                        store.update_skills(&[change]).await.unwrap();
                        expected.insert(raw.clone(), "updated".into());
                    }
                    if j % 4 == 3 {
                        assert!(
                            store
                                .remove_skill(&name(&raw), true)
                                .await
                                .unwrap()
                                .is_some()
                        );
                        expected.remove(&raw);
                    }
                }
                expected
            })
        })
        .collect();
    let mut expected = BTreeMap::new();
    for task in tasks {
        expected.extend(task.await.unwrap());
    }
    let store = ctx.open().await;
    let listed: Vec<String> = store
        .list_skills(Some("race"))
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(listed, expected.keys().cloned().collect::<Vec<_>>());
    for (raw, state) in &expected {
        let got = store.get_skill(&name(raw)).await.unwrap().unwrap();
        let items = if state == "updated" { 3 } else { 2 };
        assert_eq!(got.items.len(), items, "{raw}");
        assert!(
            got.description.unwrap().starts_with(state.as_str()),
            "{raw}"
        );
    }
    let orphans = ctx
        .scalar(
            "SELECT COUNT(*) FROM skill_items WHERE skill_name NOT IN (SELECT name FROM skills)",
        )
        .await;
    assert_eq!(orphans, 0);
    let expected_items: usize = expected
        .values()
        .map(|state| if state == "updated" { 3 } else { 2 })
        .sum();
    assert_eq!(
        store.status().await.unwrap().skill_items,
        expected_items as u64
    );
}

pub async fn racing_adds_exactly_one_wins(ctx: Ctx) {
    let first = Arc::new(ctx.open().await);
    let second = Arc::new(ctx.open().await);
    for round in 0..10 {
        let raw = format!("race/same-{round}");
        let attempt = |store: Arc<Store>, writer: &'static str| {
            let mut s = skill(&raw, vec![tool_ref("t/x")]);
            s.description = Some(writer.into());
            tokio::spawn(async move { store.add_skills(&[s]).await })
        };
        let (a, b) = (
            attempt(Arc::clone(&first), "first"),
            attempt(Arc::clone(&second), "second"),
        );
        let results = [a.await.unwrap(), b.await.unwrap()];
        let wins = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(wins, 1, "round {round}: {results:?}");
        for result in &results {
            if let Err(err) = result {
                assert!(
                    matches!(err, StoreError::DuplicateSkill(name) if name.as_str() == raw),
                    "round {round}: {err}"
                );
            }
        }
        assert_eq!(
            first
                .get_skill(&name(&raw))
                .await
                .unwrap()
                .unwrap()
                .items
                .len(),
            1
        );
    }
    assert_eq!(ctx.scalar("SELECT COUNT(*) FROM skill_items").await, 10);
}

pub async fn update_racing_remove_applies_or_reports_not_found(ctx: Ctx) {
    let updater = Arc::new(ctx.open().await);
    let remover = Arc::new(ctx.open().await);
    let mut outcomes = BTreeMap::new();
    for round in 0..12 {
        let raw = format!("race/ur-{round}");
        updater
            .add_skills(&[skill(&raw, vec![tool_ref("t/a")])])
            .await
            .unwrap();
        let mut change = skill(&raw, vec![tool_ref("t/a"), tool_ref("t/b")]);
        change.description = Some("updated".into());
        let update = {
            let store = Arc::clone(&updater);
            tokio::spawn(async move { store.update_skills(&[change]).await })
        };
        let remove = {
            let store = Arc::clone(&remover);
            let target = name(&raw);
            tokio::spawn(async move { store.remove_skill(&target, true).await })
        };
        let (updated, removed) = (update.await.unwrap(), remove.await.unwrap());
        assert!(
            removed.unwrap().is_some(),
            "round {round}: the skill existed before both writes"
        );
        match updated {
            Ok(_) => *outcomes.entry("applied").or_insert(0) += 1,
            Err(StoreError::SkillNotFound(n)) if n.as_str() == raw => {
                *outcomes.entry("not_found").or_insert(0) += 1
            }
            Err(other) => panic!("round {round}: {other}"),
        }
        assert_eq!(updater.get_skill(&name(&raw)).await.unwrap(), None);
    }
    eprintln!("{}: update vs remove outcomes {outcomes:?}", ctx.backend());
    assert_eq!(
        ctx.scalar("SELECT COUNT(*) FROM skill_items").await,
        0,
        "no orphan items"
    );
}

pub async fn racing_optimistic_updates_one_wins(ctx: Ctx) {
    let first = Arc::new(ctx.open().await);
    let second = Arc::new(ctx.open().await);
    for round in 0..10 {
        let raw = format!("race/opt-{round}");
        let stored = first
            .add_skills(&[skill(&raw, vec![])])
            .await
            .unwrap()
            .remove(0);
        let attempt = |store: Arc<Store>, writer: &'static str| {
            let mut change = stored.clone();
            change.description = Some(writer.into());
            change.items = vec![tool_ref(&format!("t/{writer}"))];
            tokio::spawn(async move { store.update_skills(&[change]).await })
        };
        let (a, b) = (
            attempt(Arc::clone(&first), "first"),
            attempt(Arc::clone(&second), "second"),
        );
        let results = [a.await.unwrap(), b.await.unwrap()];
        let winners: Vec<&Skill> = results
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|v| &v[0])
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        let loser = results.iter().find_map(|r| r.as_ref().err()).unwrap();
        assert!(
            matches!(loser, StoreError::Conflict { .. }),
            "round {round}: {loser}"
        );
        let now = first.get_skill(&name(&raw)).await.unwrap().unwrap();
        assert_eq!(
            &now, winners[0],
            "the winner's definition is what is stored"
        );
        assert_eq!(now.items.len(), 1);
    }
}

pub async fn import_is_all_or_nothing(ctx: Ctx) {
    let store = ctx.open().await;
    store
        .add_skills(&[skill("taken/one", vec![tool_ref("a/b")])])
        .await
        .unwrap();
    // The tools are written first in the transaction; the taken skill fails
    // it afterwards, and the tools must be gone with it.
    let err = store
        .import(
            &[tool("imp/tool", ToolSource::Custom)],
            &[skill("imp/new", vec![]), skill("taken/one", vec![])],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::DuplicateSkill(_)), "{err}");
    assert_eq!(store.get_tool("imp/tool").await.unwrap(), None);
    assert_eq!(store.get_skill(&name("imp/new")).await.unwrap(), None);
    let done = store
        .import(
            &[tool("imp/tool", ToolSource::Custom)],
            &[skill("imp/new", vec![])],
        )
        .await
        .unwrap();
    assert_eq!(done.len(), 1);
    assert!(store.get_tool("imp/tool").await.unwrap().is_some());
    assert!(store.get_skill(&name("imp/new")).await.unwrap().is_some());
}

pub async fn write_skills_writes_its_meta_in_the_same_transaction(ctx: Ctx) {
    let store = ctx.open().await;
    let meta = async |key: &str| store.get_meta(key).await.unwrap();
    let written = [skill("w/one", vec![]), skill("w/two", vec![])];
    let stamps = store
        .write_skills(
            &[],
            &written,
            &[],
            &[("by.w/one", "old"), ("by.w/two", "u2"), ("by.w/one", "u1")],
        )
        .await
        .unwrap();
    // The stamps make the skills as stored.
    for added in stamps.added(&written) {
        assert_eq!(store.get_skill(&added.name).await.unwrap(), Some(added));
    }
    // A key given twice keeps its last value.
    assert_eq!(meta("by.w/one").await.as_deref(), Some("u1"));
    assert_eq!(meta("by.w/two").await.as_deref(), Some("u2"));
    // The add fails on a taken name after the new skill was inserted: neither
    // the skill nor its meta lands.
    let err = store
        .write_skills(
            &[],
            &[skill("w/three", vec![]), skill("w/one", vec![])],
            &[],
            &[("by.w/three", "u3"), ("by.w/one", "u3")],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::DuplicateSkill(_)), "{err}");
    assert_eq!(store.get_skill(&name("w/three")).await.unwrap(), None);
    assert_eq!(meta("by.w/three").await, None);
    assert_eq!(meta("by.w/one").await.as_deref(), Some("u1"));
    // A stale update fails the whole write, meta included.
    let mut stale = store.get_skill(&name("w/two")).await.unwrap().unwrap();
    stale.updated_at = Some("2000-01-01T00:00:00.000000Z".into());
    let err = store
        .write_skills(
            &[],
            &[skill("w/four", vec![])],
            &[stale],
            &[("by.w/four", "u4"), ("by.w/two", "u4")],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    assert_eq!(store.get_skill(&name("w/four")).await.unwrap(), None);
    assert_eq!(meta("by.w/two").await.as_deref(), Some("u2"));
    // A refused meta value (a NUL) writes no skill.
    let err = store
        .write_skills(
            &[],
            &[skill("w/five", vec![])],
            &[],
            &[("by.w/five", "bad\0")],
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "invalid_value");
    assert_eq!(store.get_skill(&name("w/five")).await.unwrap(), None);
}

pub async fn change_stamp_moves_on_every_kind_of_write(ctx: Ctx) {
    let store = ctx.open().await;
    let mut seen = BTreeSet::new();
    let mut stamp = store.change_stamp().await.unwrap();
    assert_eq!(store.change_stamp().await.unwrap(), stamp, "reads move it");
    seen.insert(stamp.clone());
    let mut moved = |next: String, what: &str| {
        assert!(
            seen.insert(next.clone()),
            "{what} did not move the stamp ({next})"
        );
        stamp = next;
    };
    store
        .add_skills(&[skill("local/a", vec![tool_ref("builtin/read_file")])])
        .await
        .unwrap();
    moved(store.change_stamp().await.unwrap(), "add_skills");
    // `updated_at` is strictly increasing per skill, so an update moves it.
    store
        .update_skills(&[skill("local/a", vec![tool_ref("builtin/grep")])])
        .await
        .unwrap();
    moved(store.change_stamp().await.unwrap(), "update_skills");
    store
        .put_tools(&[tool("custom/t", ToolSource::Custom)], false)
        .await
        .unwrap();
    moved(store.change_stamp().await.unwrap(), "put_tools");
    store
        .replace_tool_group(
            &ToolGroup {
                source: ToolSource::Mcp,
                origin: Some("d1".into()),
            },
            &[mcp_tool("s", "x")],
            &[("mcp.d1.fetched_at", "2030-01-01T00:00:00Z")],
        )
        .await
        .unwrap();
    moved(store.change_stamp().await.unwrap(), "replace_tool_group");
    store.remove_tool("custom/t", "custom/t").await.unwrap();
    moved(store.change_stamp().await.unwrap(), "remove_tool");
    store.remove_skill(&name("local/a"), true).await.unwrap();
    moved(store.change_stamp().await.unwrap(), "remove_skill");
}
