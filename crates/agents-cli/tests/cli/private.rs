//! Files the tool keeps for its user are private: folders 0700, files 0600;
//! a lock file, a project file, gets the usual mode.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::{Run, Sandbox};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn the_default_home_database_trust_and_scope_files_are_private() {
    let sb = Sandbox::new();
    // The default database: `~/.cleveragents/cleveragents.db`.
    let run = |args: &[&str]| {
        let mut cmd = sb.cmd();
        cmd.env_remove("CLEVERAGENTS_DATABASE_URL");
        Run::from(cmd.args(args).output().unwrap(), &sb)
    };
    let file = sb.write(
        "server.yaml",
        "name: me/served\nmcp_sources:\n  - server: quiet\n    command: /bin/true\n",
    );
    run(&["skill", "add", file.to_str().unwrap()]).ok();
    run(&["skill", "discover"]).ok();
    run(&["mcp", "trust", "quiet"]).ok();
    let export = sb.path("export.yaml");
    run(&["db", "export", "-o", export.to_str().unwrap()]).ok();
    let lock = sb.path("skills.lock");
    run(&["skill", "lock", "me/served", "-o", lock.to_str().unwrap()]).ok();

    let home = sb.home().join(".cleveragents");
    assert_eq!(mode(&home), 0o700, "~/.cleveragents");
    let db = home.join("cleveragents.db");
    assert_eq!(mode(&db), 0o600, "the database");
    for side in ["cleveragents.db-wal", "cleveragents.db-shm"] {
        let path = home.join(side);
        if path.exists() {
            assert_eq!(mode(&path), 0o600, "{side}");
        }
    }
    assert_eq!(mode(&home.join("scope")), 0o600, "the discovery scope");
    assert_eq!(mode(&home.join("trust.json")), 0o600, "the trust store");
    assert_eq!(mode(&export), 0o600, "the export");
    // A lock file is a project file, meant to be committed: the mode the
    // umask gives any new file, not the owner's only.
    let plain = sb.write("plain", "");
    assert_eq!(mode(&lock), mode(&plain), "the lock file");
    // Every file above was replaced atomically: no temporary file is left.
    for dir in [home.as_path(), sb.path("").as_path()] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let name = entry.unwrap().file_name();
            assert!(
                !name.to_string_lossy().ends_with(".partial"),
                "{}: {name:?}",
                dir.display()
            );
        }
    }
}

#[test]
fn a_database_in_a_new_folder_gets_a_private_folder() {
    let sb = Sandbox::new();
    let db = sb.path("new/deeper/registry.db");
    let url = format!("sqlite://{}", db.display());
    let out = sb
        .cmd()
        .env("CLEVERAGENTS_DATABASE_URL", &url)
        .args(["db", "init"])
        .output()
        .unwrap();
    Run::from(out, &sb).ok();
    assert_eq!(mode(&sb.path("new")), 0o700);
    assert_eq!(mode(&sb.path("new/deeper")), 0o700);
    assert_eq!(mode(&db), 0o600);
}

/// Files the tool acts on without asking refuse to be used when another
/// user could have written them: the config file (its MCP servers run
/// unprompted, with this user's secrets), the trust store and the discovery
/// scope's key. A folder someone else can write is how such a file
/// appears; its mode or its owner tells.
#[test]
fn files_another_user_can_change_are_not_used() {
    use std::os::unix::fs::MetadataExt;
    let sb = Sandbox::new();
    let home = sb.home().join(".cleveragents");
    let config = sb.write(
        "home/.cleveragents/config.toml",
        "[mcp.servers.evil]\ncommand = \"/bin/true\"\n",
    );
    sb.run(&["config", "show"]).ok();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o666)).unwrap();
    let run = sb.run(&["--format", "json", "mcp", "list"]).fails(1);
    let error = run.stderr_json();
    assert_eq!(error["error"]["kind"], "config_permissions", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("other users may change it (mode 0666; `chmod go-w` it)"),
        "{message}"
    );
    // `--config` names a file the same check applies to.
    let named = sb.write("shared.toml", "");
    std::fs::set_permissions(&named, std::fs::Permissions::from_mode(0o646)).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = sb
        .run(&["--config", named.to_str().unwrap(), "config", "show"])
        .fails(1);
    assert!(run.stderr.contains("mode 0646"), "{}", run.stderr);

    // The discovery scope: its key seals this user's rows.
    sb.run(&["skill", "discover"]).ok();
    let scope = home.join("scope");
    std::fs::set_permissions(&scope, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = sb.run(&["skill", "discover"]).fails(1);
    assert!(
        run.stderr
            .contains("other users may read its key (mode 0644"),
        "{}",
        run.stderr
    );
    std::fs::set_permissions(&scope, std::fs::Permissions::from_mode(0o600)).unwrap();
    sb.run(&["skill", "discover"]).ok();

    // Owned by another user (only root can hand a file over, so only a
    // run as root checks it).
    let trust = home.join("trust.json");
    std::fs::write(&trust, "{\"version\": 1, \"trusted\": []}").unwrap();
    std::fs::set_permissions(&trust, std::fs::Permissions::from_mode(0o600)).unwrap();
    sb.run(&["mcp", "trust", "--list"]).ok();
    if std::fs::metadata(&trust).unwrap().uid() == 0 {
        for file in [&trust, &config, &scope] {
            let chown = std::process::Command::new("chown")
                .args(["65534", file.to_str().unwrap()])
                .status()
                .unwrap();
            assert!(chown.success());
        }
        let run = sb.run(&["mcp", "trust", "--list"]).fails(1);
        assert!(
            run.stderr.contains("another user (uid 65534) owns it"),
            "{}",
            run.stderr
        );
        let run = sb.run(&["config", "show"]).fails(1);
        assert!(
            run.stderr.contains("another user (uid 65534) owns it"),
            "{}",
            run.stderr
        );
    }
}
