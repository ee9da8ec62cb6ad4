use serde_json::json;

use crate::support::{Run, Sandbox, examples};

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n")
}

#[test]
fn discover_registers_folders_and_skills_resolve_them() {
    let sb = Sandbox::new();
    let dir = sb.path("skills");
    sb.write(
        "skills/pdf-tools/SKILL.md",
        &skill_md("pdf-tools", "Work with PDFs"),
    );
    sb.write("skills/notes/SKILL.md", &skill_md("notes", "Take notes"));
    sb.write("skills/Broken/SKILL.md", &skill_md("Broken", "Bad name"));
    let run = sb
        .run(&[
            "skill",
            "discover",
            "--paths",
            dir.to_str().unwrap(),
            "--format",
            "json",
        ])
        .fails(1);
    let out = run.json();
    let names: Vec<&str> = out["discovered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["agent_skills/notes", "agent_skills/pdf-tools"]);
    assert_eq!(out["errors"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["conflicts"], json!([]));

    let file = sb.write(
        "s.yaml",
        &format!(
            "name: l/docs\nagent_sources:\n  - path: {}\n",
            dir.join("pdf-tools").display()
        ),
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let tools = sb
        .run(&["skill", "tools", "l/docs", "--format", "json"])
        .ok()
        .json();
    let entry = &tools["tools"][0];
    assert_eq!(entry["name"], "agent_skill:[SANDBOX]/skills/pdf-tools");
    assert_eq!(entry["source"], "agent_skills");
    assert_eq!(entry["description"], "Work with PDFs");
    assert_eq!(
        entry["source_metadata"]["path"],
        "[SANDBOX]/skills/pdf-tools"
    );
    assert_eq!(tools["summary"]["agent_skill_sources"], 1);
}

/// The names `tool list --source agent_skills` lists.
fn agent_skill_names(sb: &Sandbox) -> Vec<String> {
    let listed = sb
        .run(&[
            "tool",
            "list",
            "--source",
            "agent_skills",
            "--format",
            "json",
        ])
        .ok()
        .json();
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn refresh_picks_up_added_edited_and_deleted_folders() {
    let sb = Sandbox::new();
    let dir = sb.path("skills");
    sb.write("skills/alpha/SKILL.md", &skill_md("alpha", "First"));
    sb.write("skills/beta/SKILL.md", &skill_md("beta", "Second"));
    std::fs::create_dir_all(sb.home().join(".cleveragents")).unwrap();
    sb.write(
        "home/.cleveragents/config.toml",
        &format!("[skills]\nagent_skills_paths = \"{}\"\n", dir.display()),
    );
    sb.run(&[
        "tool",
        "add",
        examples().join("tools/deploy.yaml").to_str().unwrap(),
    ])
    .ok();
    let file = sb.write(
        "s.yaml",
        "name: l/s\ntools: [agent_skills/alpha, agent_skills/beta, agent_skills/gamma]\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    // First `tools` discovers automatically: nothing was ever discovered.
    let out = sb
        .run(&["skill", "tools", "l/s", "--format", "json"])
        .ok()
        .json();
    let sources: Vec<_> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["source"].clone())
        .collect();
    // `agent_skills/gamma` names no folder yet: its namespace says where
    // it would come from, and `not_callable` why it is not there.
    assert_eq!(
        sources,
        [
            json!("agent_skills"),
            json!("agent_skills"),
            json!("agent_skills")
        ]
    );
    assert_eq!(out["tools"][2]["callable"], false);
    assert_eq!(
        out["tools"][2]["not_callable"],
        "no discovered Agent Skill folder matches it (`agents skill discover`)"
    );
    // An Agent Skill is read by the model, not called.
    assert_eq!(out["tools"][0]["callable"], false);
    assert!(
        out["tools"][0]["not_callable"]
            .as_str()
            .unwrap()
            .starts_with("an Agent Skill is instructions for the model"),
        "{out}"
    );

    std::fs::remove_dir_all(dir.join("beta")).unwrap();
    sb.write("skills/alpha/SKILL.md", &skill_md("alpha", "First, edited"));
    sb.write("skills/gamma/SKILL.md", &skill_md("gamma", "Third"));
    // Without --refresh the stored catalogue is used.
    let out = sb
        .run(&["skill", "tools", "l/s", "--format", "json"])
        .ok()
        .json();
    assert_eq!(out["tools"][0]["description"], "First");
    let out = sb
        .run(&["skill", "tools", "l/s", "--refresh", "--format", "json"])
        .ok()
        .json();
    assert_eq!(out["tools"][0]["description"], "First, edited");
    assert_eq!(out["tools"][1]["source"], "agent_skills");
    assert_eq!(out["tools"][1]["callable"], false);
    assert_eq!(out["tools"][2]["source"], "agent_skills");
    // Other sources are untouched by a refresh.
    sb.run(&["tool", "get", "custom/deploy"]).ok();
    let agent_skills = || agent_skill_names(&sb).len();
    assert_eq!(agent_skills(), 2);

    // A mistyped `--paths` is refused and drops nothing; a configured path
    // that is missing only warns (a default folder not made yet is normal).
    let typo = format!("{}z", dir.display());
    let run = sb.run(&["skill", "discover", "--paths", &typo]).fails(1);
    assert!(
        run.stderr.contains("does not exist: nothing was changed"),
        "{}",
        run.stderr
    );
    let run = sb
        .run(&["skill", "discover", "--paths", &typo, "--format", "json"])
        .fails(1);
    assert!(
        run.stderr
            .contains("\"kind\":\"agent_skills_path_missing\""),
        "{}",
        run.stderr
    );
    let file_path = sb.write("not-a-dir", "x");
    let run = sb
        .run(&["skill", "discover", "--paths", file_path.to_str().unwrap()])
        .fails(1);
    assert!(run.stderr.contains("is not a directory"), "{}", run.stderr);
    // `--paths ''` (an unset variable in `--paths "$DIRS"`) names no folder.
    for empty in ["", " , "] {
        let run = sb.run(&["skill", "discover", "--paths", empty]).fails(1);
        assert!(run.stderr.contains("name no folder"), "{}", run.stderr);
    }
    assert_eq!(agent_skills(), 2);
}

#[test]
fn conflicts_follow_the_strategy() {
    let sb = Sandbox::new();
    let first = sb.path("first");
    let second = sb.path("second");
    sb.write("first/dup/SKILL.md", &skill_md("dup", "From first"));
    sb.write("second/dup/SKILL.md", &skill_md("dup", "From second"));
    let paths = format!("{},{}", first.display(), second.display());
    let out = sb
        .run(&["skill", "discover", "--paths", &paths, "--format", "json"])
        .ok()
        .json();
    assert_eq!(out["discovered"].as_array().unwrap().len(), 1);
    assert_eq!(out["discovered"][0]["description"], "From first");
    assert_eq!(out["conflicts"].as_array().unwrap().len(), 1);
    let run = sb
        .run(&[
            "skill",
            "discover",
            "--paths",
            &paths,
            "--on-conflict",
            "error",
        ])
        .fails(1);
    assert!(run.stderr.contains("dup"), "{}", run.stderr);
    // `replace`: the later folder of the same scan takes the name.
    let out = sb
        .run(&[
            "skill",
            "discover",
            "--paths",
            &paths,
            "--on-conflict",
            "replace",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(out["discovered"].as_array().unwrap().len(), 1);
    assert_eq!(out["discovered"][0]["description"], "From second");
    assert_eq!(out["conflicts"][0]["resolution"], "replaced", "{out}");
    let tool = sb
        .run(&["tool", "get", "agent_skills/dup", "--format", "json"])
        .ok()
        .json();
    assert_eq!(tool["description"], "From second");
    // A custom tool cannot take a name in the reserved `agent_skills/` namespace, so
    // discovery never has to arbitrate between a custom tool and a discovered skill.
    let sb = Sandbox::new();
    let tool = sb.write(
        "t.yaml",
        "name: agent_skills/dup\ndescription: Custom one\n",
    );
    let run = sb.run(&["tool", "add", tool.to_str().unwrap()]).fails(1);
    assert!(run.stderr.contains("reserved"), "{}", run.stderr);
}

/// `--paths` naming a skill folder (one holding a `SKILL.md`) discovers
/// that skill, as `skill lint` takes it (it found none before, and the
/// re-scan silently dropped every skill found earlier), and its immediate
/// subfolders holding a `SKILL.md` too, as the specification scans every
/// path (its own `SKILL.md` hid them).
#[test]
fn discover_of_a_skill_folder_discovers_that_skill_and_those_below() {
    let sb = Sandbox::new();
    sb.write("skills/one/SKILL.md", &skill_md("one", "First"));
    sb.write("skills/one/sub/SKILL.md", &skill_md("sub", "Below"));
    sb.write("skills/one/scripts/run.sh", "echo\n");
    sb.write("skills/two/SKILL.md", &skill_md("two", "Second"));
    let one = sb.path("skills/one");
    let out = sb
        .run(&[
            "skill",
            "discover",
            "--paths",
            one.to_str().unwrap(),
            "--format",
            "json",
        ])
        .ok()
        .json();
    let names: Vec<&str> = out["discovered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["agent_skills/one", "agent_skills/sub"]);
    let run = sb
        .run(&["skill", "discover", "--paths", one.to_str().unwrap()])
        .ok();
    assert_eq!(
        run.stdout,
        "discovered 2 agent skill(s), 0 conflict(s), 0 folder(s) with errors\n  agent_skills/one  [SANDBOX]/skills/one\n  agent_skills/sub  [SANDBOX]/skills/one/sub\n0 added, 2 kept, 0 changed, 0 removed\n"
    );
    sb.run(&["skill", "lint", one.to_str().unwrap()]).ok();
}

/// `skill discover` is the specification's refresh: it removes every Agent
/// Skill found before, then registers what it finds. A `--paths` naming
/// other folders drops those found before: said, with the counts of what
/// was added, kept, changed and removed, not silent.
#[test]
fn a_rescan_says_what_it_added_kept_changed_and_removed() {
    let sb = Sandbox::new();
    sb.write("first/alpha/SKILL.md", &skill_md("alpha", "First"));
    sb.write("first/beta/SKILL.md", &skill_md("beta", "Second"));
    sb.write("other/gamma/SKILL.md", &skill_md("gamma", "Third"));
    let first = sb.path("first");
    let first = first.to_str().unwrap();
    let run = sb.run(&["skill", "discover", "--paths", first]).ok();
    assert!(
        run.stdout
            .ends_with("\n2 added, 0 kept, 0 changed, 0 removed\n"),
        "{}",
        run.stdout
    );
    // One edited, one gone, one new.
    sb.write("first/alpha/SKILL.md", &skill_md("alpha", "First, edited"));
    std::fs::remove_dir_all(sb.path("first/beta")).unwrap();
    sb.write("first/delta/SKILL.md", &skill_md("delta", "Fourth"));
    let out = sb
        .run(&["skill", "discover", "--paths", first, "--format", "json"])
        .ok()
        .json();
    assert_eq!(
        out["changes"],
        json!({
            "added": ["agent_skills/delta"],
            "kept": [],
            "changed": ["agent_skills/alpha"],
            "removed": [{"name": "agent_skills/beta", "path": "[SANDBOX]/first/beta"}],
        })
    );
    // Another folder named alone: what the first held is removed, and said.
    let other = sb.path("other");
    let run = sb
        .run(&["skill", "discover", "--paths", other.to_str().unwrap()])
        .ok();
    assert_eq!(
        run.stdout,
        "discovered 1 agent skill(s), 0 conflict(s), 0 folder(s) with errors\n  \
         agent_skills/gamma  [SANDBOX]/other/gamma\n\
         1 added, 0 kept, 0 changed, 2 removed\n  \
         removed agent_skills/alpha  (was [SANDBOX]/first/alpha)\n  \
         removed agent_skills/delta  (was [SANDBOX]/first/delta)\n  \
         (a discovery replaces every Agent Skill found before with what it finds now: give \
         `--paths` every folder you scan)\n"
    );
    assert_eq!(agent_skill_names(&sb), ["agent_skills/gamma"]);
    // Both named: nothing found before is lost.
    let both = format!("{first},{}", other.display());
    let out = sb
        .run(&["skill", "discover", "--paths", &both, "--format", "json"])
        .ok()
        .json();
    assert_eq!(out["changes"]["kept"], json!(["agent_skills/gamma"]));
    assert_eq!(out["changes"]["removed"], json!([]));
    assert_eq!(out["changes"]["added"].as_array().unwrap().len(), 2);
}

#[test]
fn lint_validates_without_a_database() {
    let sb = Sandbox::new();
    sb.write("good/SKILL.md", &skill_md("good", "Fine"));
    sb.write(
        "bad/SKILL.md",
        "---\nname: bad--name\ndescription: x\n---\n",
    );
    sb.run(&["skill", "lint", sb.path("good").to_str().unwrap()])
        .ok();
    let run = sb
        .run(&[
            "skill",
            "lint",
            sb.path("bad").to_str().unwrap(),
            "--format",
            "json",
        ])
        .fails(1);
    assert!(run.stdout.contains("bad--name"), "{}", run.stdout);
    sb.run(&[
        "skill",
        "lint",
        examples()
            .join("agent_skills/pdf-processing")
            .to_str()
            .unwrap(),
    ])
    .ok();
    assert!(!sb.db_path().exists(), "lint must not create a database");
}

#[test]
fn config_show_reports_values_and_origins() {
    let sb = Sandbox::new();
    sb.write(
        "home/.cleveragents/config.toml",
        "[skills]\nagent_skills_paths = \"/from/file\"\n\n[mcp]\ntimeout_s = 12\n",
    );
    let out = sb
        .cmd()
        .args(["config", "show", "--format", "json"])
        .env("CLEVERAGENTS_SKILLS_AGENT_SKILLS_PATHS", "/from/env")
        .output()
        .unwrap();
    assert!(out.status.success());
    let settings: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        settings["agent_skills_paths"]["value"],
        json!(["/from/env"])
    );
    assert_eq!(settings["agent_skills_paths"]["origin"]["kind"], "env");
    assert_eq!(settings["mcp_timeout_s"]["value"], 12);
    assert_eq!(settings["mcp_timeout_s"]["origin"]["kind"], "file");
    let bad = sb.write("bad.toml", "[skills]\nagent_skill_paths = \"x\"\n");
    let run = sb
        .run(&["--config", bad.to_str().unwrap(), "config", "show"])
        .fails(1);
    assert!(run.stderr.contains("bad.toml:2"), "{}", run.stderr);
    assert!(run.stderr.contains("agent_skill_paths"), "{}", run.stderr);
}

#[test]
fn input_limits_are_settings_every_reader_obeys() {
    let sb = Sandbox::new();
    // 3 levels of `metadata` nesting below the document's own mapping.
    let nested = sb.write(
        "nested.yaml",
        "name: l/nested\nmetadata:\n  a:\n    b:\n      c: 1\n",
    );
    let nested = nested.to_str().unwrap();
    // A file setting of 2 refuses it, with its line; the environment wins
    // over the file, and the default (64) lets it through.
    sb.write(
        "home/.cleveragents/config.toml",
        "[limits]\nmax_depth = 2\n",
    );
    let refused = sb.run(&["skill", "add", nested]).fails(1);
    assert!(
        refused.stderr.contains("nested.yaml:"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("deeper than"), "{}", refused.stderr);
    // The error says which setting raises the limit, and how far.
    assert!(
        refused.stderr.contains(
            "= help: `limits.max_depth` (or `CLEVERAGENTS_LIMITS_MAX_DEPTH`) raises the limit of 2, up to 128"
        ),
        "{}",
        refused.stderr
    );
    sb.run_env(
        &["skill", "add", nested],
        &[("CLEVERAGENTS_LIMITS_MAX_DEPTH", "64")],
    )
    .ok();
    // A variable set to bytes that are not UTF-8 is refused, not read as
    // unset (the limit, or the database, silently falling back).
    {
        use std::os::unix::ffi::OsStrExt;
        for var in ["CLEVERAGENTS_LIMITS_MAX_DEPTH", "CLEVERAGENTS_DATABASE_URL"] {
            let mut cmd = sb.cmd();
            cmd.args(["skill", "add", nested])
                .env(var, std::ffi::OsStr::from_bytes(b"sqlite:///tmp/\xff.db"));
            let run = Run::from(cmd.output().unwrap(), &sb).fails(1);
            assert!(
                run.stderr.contains(&format!(
                    "from environment variable `{var}`: not valid UTF-8"
                )),
                "{var}: {}",
                run.stderr
            );
        }
    }

    // Each kind of file has its own size limit.
    let plan = sb.write("plan.yaml", "skill: l/nested\nsteps: []\n");
    let tools = sb.write("tools.yaml", "name: custom/t\ndescription: a tool\n");
    let export = sb.path("export.yaml");
    let export = export.to_str().unwrap();
    sb.run(&["db", "export", "-o", export]).ok();
    for (args, var, key) in [
        (
            ["plan", "validate", plan.to_str().unwrap()],
            "CLEVERAGENTS_LIMITS_PLAN_MAX_BYTES",
            "limits.plan_max_bytes",
        ),
        (
            ["tool", "add", tools.to_str().unwrap()],
            "CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES",
            "limits.definition_max_bytes",
        ),
        (
            ["skill", "add", nested],
            "CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES",
            "limits.definition_max_bytes",
        ),
        (
            ["db", "import", export],
            "CLEVERAGENTS_LIMITS_EXPORT_MAX_BYTES",
            "limits.export_max_bytes",
        ),
    ] {
        let run = sb
            .run_env(
                &args,
                &[(var, "10"), ("CLEVERAGENTS_LIMITS_MAX_DEPTH", "64")],
            )
            .fails(1);
        assert!(
            run.stderr.contains("larger than the limit of 10 bytes"),
            "{args:?}: {}",
            run.stderr
        );
        let help = format!("= help: `{key}` (or `{var}`) raises the limit of 10, up to 268435456");
        assert!(run.stderr.contains(&help), "{args:?}: {}", run.stderr);
    }
    // At its most, a limit has no setting to suggest.
    let deepest = sb.write(
        "deepest.yaml",
        &format!(
            "name: l/deep\nmetadata: {{k: {}{}}}\n",
            "[".repeat(130),
            "]".repeat(130)
        ),
    );
    let run = sb
        .run_env(
            &["skill", "add", deepest.to_str().unwrap()],
            &[("CLEVERAGENTS_LIMITS_MAX_DEPTH", "128")],
        )
        .fails(1);
    assert!(run.stderr.contains("deeper than 128"), "{}", run.stderr);
    assert!(!run.stderr.contains("help:"), "{}", run.stderr);

    // One document of an export may be no larger than a skill file: a
    // version 1 export, one document, is refused above it with what to do.
    let v1 = sb.write(
        "export-v1.yaml",
        "format: cleveragents-export/1\nskills:\n  - name: l/v1\n    tools: [builtin/read_file]\n",
    );
    let v1 = v1.to_str().unwrap();
    let run = sb
        .run_env(
            &["db", "import", v1],
            &[
                ("CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES", "40"),
                ("CLEVERAGENTS_LIMITS_MAX_DEPTH", "64"),
            ],
        )
        .fails(1);
    assert!(
        run.stderr
            .contains("larger than the limit of 40 bytes for one document")
            && run.stderr.contains("export the registry again"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("= help: `limits.definition_max_bytes` (or `CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES`) raises the limit of 40"),
        "{}",
        run.stderr
    );
    sb.run_env(
        &["db", "import", v1],
        &[("CLEVERAGENTS_LIMITS_MAX_DEPTH", "64")],
    )
    .ok();

    // An export `db import` could not read back under the same settings
    // says so, and which setting reads it; with that setting it imports.
    let shrunk = [
        ("CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES", "60"),
        ("CLEVERAGENTS_LIMITS_MAX_DEPTH", "64"),
    ];
    let run = sb.run_env(&["db", "export", "-o", export], &shrunk).ok();
    let warning = run
        .stderr
        .lines()
        .find(|line| line.contains("is exported as a document of"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(
        warning.contains("more than the 60 bytes `db import` reads in one document: importing it needs `limits.definition_max_bytes` (or `CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES`) of at least "),
        "{warning}"
    );
    let needed = warning.rsplit(' ').next().unwrap();
    assert!(needed.parse::<u64>().unwrap() > 60, "{warning}");
    sb.run_env(&["db", "import", export], &shrunk).fails(1);
    sb.run_env(
        &["db", "import", "--replace", export],
        &[
            ("CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES", needed),
            ("CLEVERAGENTS_LIMITS_MAX_DEPTH", "64"),
        ],
    )
    .ok();
    // The same for the file as a whole.
    let run = sb
        .run_env(
            &["db", "export", "-o", export],
            &[("CLEVERAGENTS_LIMITS_EXPORT_MAX_BYTES", "10")],
        )
        .ok();
    assert!(
        run.stderr.contains(
            "more than the 10 bytes `db import` reads: importing it needs `limits.export_max_bytes`"
        ),
        "{}",
        run.stderr
    );
    // Under the defaults an export says nothing.
    let run = sb.run(&["db", "export", "-o", export]).ok();
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);

    // Out of range anywhere is an error naming where it came from.
    let run = sb
        .run_env(
            &["config", "show"],
            &[("CLEVERAGENTS_LIMITS_MAX_DEPTH", "129")],
        )
        .fails(1);
    assert!(
        run.stderr.contains("CLEVERAGENTS_LIMITS_MAX_DEPTH")
            && run.stderr.contains("from 1 to 128"),
        "{}",
        run.stderr
    );
    sb.write(
        "home/.cleveragents/config.toml",
        "[limits]\nexport_max_bytes = 268435457\n",
    );
    let run = sb.run(&["config", "show"]).fails(1);
    assert!(run.stderr.contains("config.toml:2"), "{}", run.stderr);
    assert!(run.stderr.contains("export_max_bytes"), "{}", run.stderr);
}

/// On a fresh registry every command that resolves skills discovers the
/// configured Agent Skills folders once first, as `skill tools` does, so a
/// `--strict` write, `skill validate` and `plan validate` agree with it.
#[test]
fn a_fresh_registry_discovers_before_any_resolution() {
    let sb = Sandbox::new();
    sb.write(
        "home/.cleveragents/agent_skills/one/SKILL.md",
        &skill_md("one", "The one"),
    );
    let file = sb.write("r.yaml", "name: r/y\ntools: [agent_skills/one]\n");
    sb.run(&["skill", "add", "--strict", file.to_str().unwrap()])
        .ok();
    // A registry that got the skill without any resolution (`db import`):
    // validation discovers first too.
    let export = sb.path("export.yaml");
    sb.run(&["db", "export", "-o", export.to_str().unwrap()])
        .ok();
    let export = std::fs::read_to_string(&export).unwrap();
    let fresh = Sandbox::new();
    fresh.write(
        "home/.cleveragents/agent_skills/one/SKILL.md",
        &skill_md("one", "The one"),
    );
    let dump = fresh.write("dump.yaml", &export);
    fresh.run(&["db", "import", dump.to_str().unwrap()]).ok();
    fresh.run(&["skill", "validate", "r/y"]).ok();
    let plan = fresh.write("p.yaml", "skills: [r/y]\n");
    let again = Sandbox::new();
    again.write(
        "home/.cleveragents/agent_skills/one/SKILL.md",
        &skill_md("one", "The one"),
    );
    let dump = again.write("dump.yaml", &export);
    again.run(&["db", "import", dump.to_str().unwrap()]).ok();
    again
        .run(&["plan", "validate", plan.to_str().unwrap()])
        .ok();
}

/// A `SKILL.md` with an error and warnings: `skill lint` (and `skill
/// discover`) report every finding at once, errors first, not the
/// warnings only once the error is fixed; lint still fails.
#[test]
fn lint_shows_a_folders_warnings_beside_its_errors() {
    let sb = Sandbox::new();
    sb.write(
        "skills/mix/SKILL.md",
        "---\nname: mix\ncolour: red\nauthr: me\n---\n\n# mix\n",
    );
    let folder = sb.path("skills/mix");
    let run = sb
        .run(&["skill", "lint", folder.to_str().unwrap()])
        .fails(1);
    let findings: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.starts_with("  "))
        .collect();
    assert_eq!(findings.len(), 3, "{}", run.stdout);
    assert!(
        findings[0].starts_with("  error: ") && findings[0].contains("description"),
        "{}",
        run.stdout
    );
    for (warning, field) in findings[1..].iter().zip(["colour", "authr"]) {
        assert!(
            warning.starts_with("  warning: ") && warning.contains(field),
            "{}",
            run.stdout
        );
    }
    let json = sb
        .run(&[
            "skill",
            "lint",
            folder.to_str().unwrap(),
            "--format",
            "json",
        ])
        .fails(1)
        .json();
    let linted = &json["folders"][0];
    assert_eq!(linted["ok"], false, "{json}");
    assert_eq!(linted["errors"].as_array().unwrap().len(), 1, "{json}");
    assert_eq!(linted["warnings"].as_array().unwrap().len(), 2, "{json}");

    // Discovery says the same of the folder it cannot register.
    let run = sb
        .run(&[
            "skill",
            "discover",
            "--paths",
            sb.path("skills").to_str().unwrap(),
        ])
        .fails(1);
    let all = format!("{}{}", run.stdout, run.stderr);
    for part in ["description", "colour", "authr"] {
        assert!(all.contains(part), "{part} not in:\n{all}");
    }
}
