#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Settings resolution against real config files in temp dirs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agents_config::{
    CliOverrides, ConfigError, DEFAULT_MCP_TIMEOUT_S, ENV_AGENT_SKILLS_PATHS, ENV_CONFIG,
    ENV_DATABASE_URL, ENV_LIMITS_DEFINITION_MAX_BYTES, ENV_LIMITS_EXPORT_MAX_BYTES,
    ENV_LIMITS_MAX_DEPTH, ENV_LIMITS_PLAN_MAX_BYTES, ENV_MCP_TIMEOUT_S, ENV_VARS, Origin, Settings,
    expand_path, mask_database_url, parse_paths, resolve,
};
use agents_definition::Limits;
use serde_json::json;

/// A home directory with an optional `~/.cleveragents/config.toml`.
struct World {
    home: tempfile::TempDir,
    env: HashMap<String, String>,
}

impl World {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            env: HashMap::new(),
        }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn default_config(&self) -> PathBuf {
        self.home().join(".cleveragents/config.toml")
    }

    fn write_default_config(&self, text: &str) -> PathBuf {
        let path = self.default_config();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.home().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn set(&mut self, name: &str, value: &str) {
        self.env.insert(name.to_owned(), value.to_owned());
    }

    fn resolve(&self, cli: &CliOverrides) -> Result<Settings, ConfigError> {
        let env = |name: &str| self.env.get(name).cloned();
        resolve(cli, &env, self.home())
    }

    fn ok(&self, cli: &CliOverrides) -> Settings {
        self.resolve(cli).unwrap_or_else(|err| panic!("{err}"))
    }

    fn err(&self, cli: &CliOverrides) -> String {
        match self.resolve(cli) {
            Ok(settings) => panic!("expected an error, got {settings:?}"),
            Err(err) => err.to_string(),
        }
    }
}

fn no_flags() -> CliOverrides {
    CliOverrides::default()
}

fn file_origin(path: &Path, line: usize) -> Origin {
    Origin::File {
        path: path.to_path_buf(),
        line,
    }
}

#[test]
fn defaults_apply_when_nothing_is_set() {
    let world = World::new();
    let settings = world.ok(&no_flags());
    assert_eq!(settings.config_file.value, world.default_config());
    assert_eq!(settings.config_file.origin, Origin::Default);
    assert!(!settings.config_file_loaded);
    assert_eq!(
        settings.database_url.value,
        format!(
            "sqlite://{}/.cleveragents/cleveragents.db",
            world.home.path().display()
        )
    );
    assert_eq!(settings.database_url.origin, Origin::Default);
    assert_eq!(
        settings.agent_skills_paths.value,
        vec![world.home().join(".cleveragents/agent_skills")]
    );
    assert_eq!(settings.agent_skills_paths.origin, Origin::Default);
    assert_eq!(settings.mcp_timeout_s.value, DEFAULT_MCP_TIMEOUT_S);
    assert_eq!(settings.mcp_timeout_s.value, 30);
    assert!(settings.mcp_servers.is_empty());
    assert_eq!(settings.home, world.home());
}

#[test]
fn database_url_precedence_flag_env_file_default() {
    let mut world = World::new();
    let config = world.write_default_config("[database]\nurl = \"sqlite:///from/file.db\"\n");
    let settings = world.ok(&no_flags());
    assert_eq!(
        Some(settings.database_url.value.as_str()),
        Some("sqlite:///from/file.db")
    );
    assert_eq!(settings.database_url.origin, file_origin(&config, 2));

    world.set(ENV_DATABASE_URL, "sqlite:///from/env.db");
    let settings = world.ok(&no_flags());
    assert_eq!(
        Some(settings.database_url.value.as_str()),
        Some("sqlite:///from/env.db")
    );
    assert_eq!(
        settings.database_url.origin,
        Origin::Env {
            var: ENV_DATABASE_URL
        }
    );

    let flags = CliOverrides {
        database_url: Some("sqlite:///from/flag.db".into()),
        ..no_flags()
    };
    let settings = world.ok(&flags);
    assert_eq!(
        Some(settings.database_url.value.as_str()),
        Some("sqlite:///from/flag.db")
    );
    assert_eq!(settings.database_url.origin, Origin::Flag);
}

#[test]
fn agent_skills_paths_precedence_flag_env_file_default() {
    let mut world = World::new();
    let config = world.write_default_config("[skills]\nagent_skills_paths = \"/file/a,/file/b\"\n");
    let settings = world.ok(&no_flags());
    assert_eq!(
        settings.agent_skills_paths.value,
        [PathBuf::from("/file/a"), PathBuf::from("/file/b")]
    );
    assert_eq!(settings.agent_skills_paths.origin, file_origin(&config, 2));

    world.set(ENV_AGENT_SKILLS_PATHS, "/env/a");
    let settings = world.ok(&no_flags());
    assert_eq!(settings.agent_skills_paths.value, [PathBuf::from("/env/a")]);
    assert_eq!(
        settings.agent_skills_paths.origin,
        Origin::Env {
            var: ENV_AGENT_SKILLS_PATHS
        }
    );

    let flags = CliOverrides {
        agent_skills_paths: Some("/flag/a,/flag/b".into()),
        ..no_flags()
    };
    let settings = world.ok(&flags);
    assert_eq!(
        settings.agent_skills_paths.value,
        [PathBuf::from("/flag/a"), PathBuf::from("/flag/b")]
    );
    assert_eq!(settings.agent_skills_paths.origin, Origin::Flag);
}

#[test]
fn mcp_timeout_precedence_flag_env_file_default() {
    let mut world = World::new();
    let config = world.write_default_config("# comment\n[mcp]\ntimeout_s = 45\n");
    let settings = world.ok(&no_flags());
    assert_eq!(settings.mcp_timeout_s.value, 45);
    assert_eq!(settings.mcp_timeout_s.origin, file_origin(&config, 3));

    world.set(ENV_MCP_TIMEOUT_S, "7");
    let settings = world.ok(&no_flags());
    assert_eq!(settings.mcp_timeout_s.value, 7);
    assert_eq!(
        settings.mcp_timeout_s.origin,
        Origin::Env {
            var: ENV_MCP_TIMEOUT_S
        }
    );

    let flags = CliOverrides {
        mcp_timeout_s: Some(3),
        ..no_flags()
    };
    let settings = world.ok(&flags);
    assert_eq!(settings.mcp_timeout_s.value, 3);
    assert_eq!(settings.mcp_timeout_s.origin, Origin::Flag);
}

#[test]
fn config_file_precedence_flag_env_default() {
    let mut world = World::new();
    world.write_default_config("[mcp]\ntimeout_s = 1\n");
    let from_env = world.write("env.toml", "[mcp]\ntimeout_s = 2\n");
    let from_flag = world.write("flag.toml", "[mcp]\ntimeout_s = 3\n");

    let settings = world.ok(&no_flags());
    assert_eq!(settings.mcp_timeout_s.value, 1);
    assert!(settings.config_file_loaded);

    world.set(ENV_CONFIG, from_env.to_str().unwrap());
    let settings = world.ok(&no_flags());
    assert_eq!(settings.mcp_timeout_s.value, 2);
    assert_eq!(settings.config_file.value, from_env);
    assert_eq!(settings.config_file.origin, Origin::Env { var: ENV_CONFIG });

    let flags = CliOverrides {
        config: Some(from_flag.clone()),
        ..no_flags()
    };
    let settings = world.ok(&flags);
    assert_eq!(settings.mcp_timeout_s.value, 3);
    assert_eq!(settings.config_file.value, from_flag);
    assert_eq!(settings.config_file.origin, Origin::Flag);
}

#[test]
fn the_environment_beats_the_file_for_agent_skills_paths() {
    let mut world = World::new();
    let env_dir = world.home().join("env-skills");
    std::fs::create_dir_all(&env_dir).unwrap();
    world.write_default_config("[skills]\nagent_skills_paths = \"/somewhere/else\"\n");
    world.set(ENV_AGENT_SKILLS_PATHS, env_dir.to_str().unwrap());
    let settings = world.ok(&no_flags());
    assert_eq!(settings.agent_skills_paths.value, [env_dir]);
    // The file's path is never checked, so it produces no warning.
    assert!(settings.warnings.is_empty(), "{:?}", settings.warnings);
}

#[test]
fn an_empty_environment_variable_counts_as_unset() {
    let mut world = World::new();
    world.write_default_config("[mcp]\ntimeout_s = 9\n");
    world.set(ENV_MCP_TIMEOUT_S, "");
    world.set(ENV_CONFIG, "");
    let settings = world.ok(&no_flags());
    assert_eq!(settings.mcp_timeout_s.value, 9);
    assert_eq!(settings.config_file.origin, Origin::Default);
}

#[test]
fn unknown_keys_point_at_line_and_column_with_a_caret() {
    let world = World::new();
    let config =
        world.write_default_config("[skills]\nagent_skills_paths = \"/a\"\ncolour = \"red\"\n");
    assert_eq!(
        world.err(&no_flags()),
        format!(
            "{}:3:1: unknown field `colour`, expected `agent_skills_paths`\n  |\n3 | colour = \"red\"\n  | ^^^^^^",
            config.display()
        )
    );

    world.write_default_config("[database]\nurl = \"x\"\n\n[cache]\n");
    let err = world.err(&no_flags());
    assert!(
        err.starts_with(&format!(
            "{}:4:2: unknown field `cache`, expected one of `database`, `skills`, `mcp`",
            config.display()
        )),
        "{err}"
    );
    assert!(err.ends_with("4 | [cache]\n  |  ^^^^^"), "{err}");

    world.write_default_config("[mcp.servers.gh]\ncommand = \"gh\"\n  comand = \"typo\"\n");
    let err = world.err(&no_flags());
    assert!(
        err.contains(":3:3: unknown field `comand`, expected one of `command`"),
        "{err}"
    );
    assert!(
        err.ends_with("3 |   comand = \"typo\"\n  |   ^^^^^^"),
        "{err}"
    );
}

/// Found by the `config` fuzz target: an error at a line's trailing `\r`
/// (here the end of a file ending in a bare CR) panicked while the caret was
/// placed (`clamp` with min > max).
#[test]
fn an_error_at_a_trailing_carriage_return_is_reported() {
    let world = World::new();
    for text in [
        "[mgp]\r",
        "\u{feff}[mgp]\r",
        "[mcp]\r\ntimeout_s = \r",
        "x = 1\r",
    ] {
        let config = world.write_default_config(text);
        let err = world.err(&no_flags());
        assert!(err.starts_with(&format!("{}:", config.display())), "{err}");
        assert!(err.ends_with('^'), "{err:?}");
    }
}

#[test]
fn type_errors_point_at_the_value() {
    let world = World::new();
    let config = world.write_default_config("[mcp]\ntimeout_s = \"soon\"\n");
    assert_eq!(
        world.err(&no_flags()),
        format!(
            "{}:2:13: invalid type: string \"soon\", expected i64\n  |\n2 | timeout_s = \"soon\"\n  |             ^^^^^^",
            config.display()
        )
    );
    world.write_default_config("[database]\nurl = 5\n");
    assert!(
        world
            .err(&no_flags())
            .contains(":2:7: invalid type: integer `5`, expected a string")
    );
    world.write_default_config("[skills\n");
    assert!(
        world
            .err(&no_flags())
            .contains(":1:8: unclosed table, expected `]`")
    );
}

#[test]
fn timeouts_below_one_second_are_refused_wherever_they_come_from() {
    let mut world = World::new();
    let config = world.write_default_config("[mcp]\ntimeout_s = 0\n");
    assert_eq!(
        world.err(&no_flags()),
        format!(
            "{}:2:13: `mcp.timeout_s`: expected whole seconds, at least 1, got `0`\n  |\n2 | timeout_s = 0\n  |             ^",
            config.display()
        )
    );
    world.set(ENV_MCP_TIMEOUT_S, "ten");
    assert_eq!(
        world.err(&no_flags()),
        "invalid `mcp.timeout_s` from environment variable `CLEVERAGENTS_MCP_TIMEOUT_S`: expected whole seconds, at least 1, got `ten`"
    );
    let flags = CliOverrides {
        mcp_timeout_s: Some(0),
        ..no_flags()
    };
    assert_eq!(
        world.err(&flags),
        "invalid `mcp.timeout_s` from command-line flag: expected whole seconds, at least 1, got `0`"
    );
}

#[test]
fn a_missing_default_file_is_fine_but_a_named_one_is_an_error() {
    let mut world = World::new();
    assert!(!world.ok(&no_flags()).config_file_loaded);

    let missing = world.home().join("nope.toml");
    let flags = CliOverrides {
        config: Some(missing.clone()),
        ..no_flags()
    };
    assert_eq!(
        world.err(&flags),
        format!(
            "config file `{}` (from command-line flag) does not exist",
            missing.display()
        )
    );
    world.set(ENV_CONFIG, missing.to_str().unwrap());
    assert_eq!(
        world.err(&no_flags()),
        format!(
            "config file `{}` (from environment variable `CLEVERAGENTS_CONFIG`) does not exist",
            missing.display()
        )
    );
}

#[test]
fn a_directory_as_config_file_is_an_error() {
    let world = World::new();
    std::fs::create_dir_all(world.default_config()).unwrap();
    assert_eq!(
        world.err(&no_flags()),
        format!(
            "config file `{}` is not a regular file",
            world.default_config().display()
        )
    );
}

#[test]
fn the_config_path_itself_expands_tilde_and_variables() {
    let mut world = World::new();
    world.write("conf/alt.toml", "[mcp]\ntimeout_s = 11\n");
    world.set("CONF_DIR", "conf");
    world.set(ENV_CONFIG, "~/${CONF_DIR}/alt.toml");
    let settings = world.ok(&no_flags());
    assert_eq!(settings.mcp_timeout_s.value, 11);
    assert_eq!(
        settings.config_file.value,
        world.home().join("conf/alt.toml")
    );
}

#[test]
fn tilde_and_variables_expand_in_paths() {
    let home = Path::new("/home/ada");
    let vars: HashMap<&str, &str> = [("SKILLS", "/opt/skills"), ("TEAM", "core")].into();
    let env = |name: &str| vars.get(name).map(|v| (*v).to_owned());
    let cases = [
        ("~", "/home/ada"),
        ("~/skills", "/home/ada/skills"),
        ("~//skills", "/home/ada/skills"),
        ("$SKILLS", "/opt/skills"),
        ("${SKILLS}/extra", "/opt/skills/extra"),
        ("/srv/$TEAM/skills", "/srv/core/skills"),
        ("/srv/${TEAM}_x", "/srv/core_x"),
        ("/cost/$5/$", "/cost/$5/$"),
        ("relative/dir", "relative/dir"),
        ("/a~b", "/a~b"),
    ];
    for (raw, expected) in cases {
        assert_eq!(
            expand_path(raw, home, &env).unwrap(),
            PathBuf::from(expected),
            "{raw}"
        );
    }
    let errors = [
        (
            "$MISSING/x",
            "cannot expand `$MISSING/x`: environment variable `MISSING` is not set",
        ),
        (
            "${SKILLS",
            "cannot expand `${SKILLS`: `${` is not closed by `}`",
        ),
        (
            "${A-B}",
            "cannot expand `${A-B}`: `${A-B}` is not a variable name",
        ),
        (
            "~bob/skills",
            "cannot expand `~bob/skills`: `~user` is not supported: write the full path",
        ),
    ];
    for (raw, expected) in errors {
        assert_eq!(
            expand_path(raw, home, &env).unwrap_err().to_string(),
            expected,
            "{raw}"
        );
    }
}

#[test]
fn empty_entries_in_path_lists_are_ignored() {
    let home = Path::new("/h");
    let env = |_: &str| None;
    assert_eq!(
        parse_paths(" /a ,, ,~/b,", home, &env).unwrap(),
        [PathBuf::from("/a"), PathBuf::from("/h/b")]
    );
    assert!(parse_paths("", home, &env).unwrap().is_empty());
    assert!(parse_paths(" , ,", home, &env).unwrap().is_empty());

    let world = World::new();
    world.write_default_config("[skills]\nagent_skills_paths = \",/x,,\"\n");
    assert_eq!(
        world.ok(&no_flags()).agent_skills_paths.value,
        [PathBuf::from("/x")]
    );
}

#[test]
fn file_paths_expand_and_relative_ones_follow_the_config_file() {
    let mut world = World::new();
    world.set("OPT", "/opt");
    let config = world
        .write_default_config("[skills]\nagent_skills_paths = \"~/mine, $OPT/skills, team\"\n");
    let settings = world.ok(&no_flags());
    assert_eq!(
        settings.agent_skills_paths.value,
        [
            world.home().join("mine"),
            PathBuf::from("/opt/skills"),
            config.parent().unwrap().join("team"),
        ]
    );

    world.write_default_config("[skills]\nagent_skills_paths = [\"~/one\", \"\", \"/two\"]\n");
    assert_eq!(
        world.ok(&no_flags()).agent_skills_paths.value,
        [world.home().join("one"), PathBuf::from("/two")]
    );

    world.write_default_config("[skills]\nagent_skills_paths = \"$NOPE/x\"\n");
    let err = world.err(&no_flags());
    assert!(
        err.contains(":2:22: cannot expand `$NOPE/x`: environment variable `NOPE` is not set"),
        "{err}"
    );
}

#[test]
fn unexpandable_environment_paths_name_the_variable() {
    let mut world = World::new();
    world.set(ENV_AGENT_SKILLS_PATHS, "/ok,$NOPE");
    assert_eq!(
        world.err(&no_flags()),
        "invalid `skills.agent_skills_paths` from environment variable `CLEVERAGENTS_SKILLS_AGENT_SKILLS_PATHS`: cannot expand `$NOPE`: environment variable `NOPE` is not set"
    );
}

#[test]
fn missing_directories_are_warnings_not_errors() {
    let mut world = World::new();
    let present = world.home().join("present");
    std::fs::create_dir_all(&present).unwrap();
    let file = world.write("a-file", "");
    let missing = world.home().join("missing");
    world.set(
        ENV_AGENT_SKILLS_PATHS,
        &format!(
            "{},{},{}",
            present.display(),
            missing.display(),
            file.display()
        ),
    );
    let settings = world.ok(&no_flags());
    assert_eq!(
        settings.agent_skills_paths.value,
        [present, missing.clone(), file.clone()]
    );
    assert_eq!(
        settings.warnings,
        [
            format!(
                "agent skills path `{}` (from environment variable `CLEVERAGENTS_SKILLS_AGENT_SKILLS_PATHS`) does not exist",
                missing.display()
            ),
            format!(
                "agent skills path `{}` (from environment variable `CLEVERAGENTS_SKILLS_AGENT_SKILLS_PATHS`) is not a directory",
                file.display()
            ),
        ]
    );
}

#[test]
fn mcp_servers_become_validated_mcp_sources() {
    let world = World::new();
    world.write_default_config(
        r#"[mcp]
timeout_s = 12

[mcp.servers.github]
command = "github-mcp"
args = ["--stdio"]
env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }
cwd = "~/work"
tools = ["create_issue"]

[mcp.servers.search]
url = "https://search.example/mcp"
headers = { Authorization = "Bearer ${TOKEN}" }
timeout_s = 5
"#,
    );
    let settings = world.ok(&no_flags());
    assert_eq!(settings.mcp_timeout_s.value, 12);
    let names: Vec<_> = settings.mcp_servers.keys().cloned().collect();
    assert_eq!(names, ["github", "search"]);
    let github = &settings.mcp_servers["github"];
    assert_eq!(github.server, "github");
    assert_eq!(github.command.as_deref(), Some("github-mcp"));
    assert_eq!(github.args, ["--stdio"]);
    assert_eq!(github.env["GITHUB_TOKEN"], "${GITHUB_TOKEN}");
    assert_eq!(github.cwd.as_deref(), Some("~/work"));
    assert_eq!(
        github.tools.as_deref(),
        Some(&["create_issue".to_owned()][..])
    );
    assert_eq!(github.timeout_s, None);
    let search = &settings.mcp_servers["search"];
    assert_eq!(search.url.as_deref(), Some("https://search.example/mcp"));
    assert_eq!(search.headers["Authorization"], "Bearer ${TOKEN}");
    assert_eq!(search.timeout_s, Some(5));
}

#[test]
fn invalid_mcp_servers_point_at_their_table() {
    let world = World::new();
    let cases = [
        (
            "[mcp.servers.both]\ncommand = \"x\"\nurl = \"http://h\"\n",
            "1:1: mcp server `both`: give either `command` (stdio) or `url` (streamable HTTP), not both\n  |\n1 | [mcp.servers.both]\n  | ^^^^^^^^^^^^^^^^^^",
        ),
        (
            "[mcp.servers.none]\ntools = [\"a\"]\n",
            "1:1: mcp server `none`: needs `command` (a stdio server) or `url` (a streamable-HTTP server)",
        ),
        (
            "[mcp.servers.ftp]\nurl = \"ftp://h\"\n",
            "1:1: mcp server `ftp`: `url`: expected an `http://` or `https://` URL, got `ftp://h`",
        ),
        (
            // A URL of another scheme is echoed without its secrets.
            "[mcp.servers.ftp]\nurl = \"ftp://user:SECRETPASS1@h/x?token=SECRETTOK1\"\n",
            "1:1: mcp server `ftp`: `url`: expected an `http://` or `https://` URL, got `ftp://user:***@h/x?token=***`",
        ),
        (
            "[mcp.servers.web]\nurl = \"http://h\"\nargs = [\"-v\"]\n",
            "1:1: mcp server `web`: `args`, `env` and `cwd` need a `command` server",
        ),
        (
            "[mcp.servers.\"bad name\"]\ncommand = \"x\"\n",
            "1:1: mcp server `bad name`: `server`: server name `bad name` must be 1-100 characters of letters, digits, `_`, `-` or `.`",
        ),
        (
            "[mcp.servers.slow]\ncommand = \"x\"\ntimeout_s = -1\n",
            "3:13: mcp server `slow`: `timeout_s`: expected whole seconds, at least 1, got `-1`",
        ),
    ];
    for (text, expected) in cases {
        let config = world.write_default_config(text);
        let err = world.err(&no_flags());
        let expected = format!("{}:{expected}", config.display());
        assert!(
            err.starts_with(&expected),
            "{err}\n---- expected prefix\n{expected}"
        );
    }
}

#[test]
fn config_show_hides_secret_options_in_args() {
    let world = World::new();
    world.write_default_config(
        "[mcp.servers.gh]\ncommand = \"gh-mcp\"\nargs = [\"--api-key\", \"showsecret9\", \"--token=showsecret8\", \"--verbose\"]\n",
    );
    let settings = world.ok(&no_flags());
    let shown = serde_json::to_string(&settings).unwrap();
    assert!(!shown.contains("showsecret"), "{shown}");
    assert!(shown.contains("--verbose"), "{shown}");
    // The server still gets them.
    assert_eq!(settings.mcp_servers["gh"].args[1], "showsecret9");
}

#[test]
fn config_show_json_has_value_and_origin_per_key() {
    let mut world = World::new();
    let config = world
        .write_default_config("[database]\nurl = \"postgres://ada:s3cret@db.local:5432/agents\"\n");
    world.set(ENV_MCP_TIMEOUT_S, "8");
    let flags = CliOverrides {
        agent_skills_paths: Some("/flag".into()),
        ..no_flags()
    };
    let settings = world.ok(&flags);
    // The store still gets the real URL; only what is shown is masked.
    assert_eq!(
        Some(settings.database_url.value.as_str()),
        Some("postgres://ada:s3cret@db.local:5432/agents")
    );
    let shown = serde_json::to_value(&settings).unwrap();
    assert_eq!(
        shown["database_url"],
        json!({"value": "postgres://ada:***@db.local:5432/agents", "origin": {"kind": "file", "path": config, "line": 2}})
    );
    assert_eq!(
        shown["agent_skills_paths"],
        json!({"value": ["/flag"], "origin": {"kind": "flag"}})
    );
    assert_eq!(
        shown["mcp_timeout_s"],
        json!({"value": 8, "origin": {"kind": "env", "var": "CLEVERAGENTS_MCP_TIMEOUT_S"}})
    );
    assert_eq!(
        shown["config_file"],
        json!({"value": config, "origin": {"kind": "default"}})
    );
    assert_eq!(shown["config_file_loaded"], json!(true));
    assert_eq!(
        shown["warnings"],
        json!(["agent skills path `/flag` (from command-line flag) does not exist"])
    );

    let text = settings.to_string();
    assert!(
        text.contains("database.url                postgres://ada:***@db.local:5432/agents  (`"),
        "{text}"
    );
    assert!(
        text.contains(
            "mcp.timeout_s               8  (environment variable `CLEVERAGENTS_MCP_TIMEOUT_S`)"
        ),
        "{text}"
    );
    assert!(!text.contains("s3cret"), "{text}");
}

#[test]
fn database_passwords_are_masked_for_display_only() {
    assert_eq!(
        mask_database_url("postgres://u:p@h/db"),
        "postgres://u:***@h/db"
    );
    assert_eq!(mask_database_url("postgres://u@h/db"), "postgres://u@h/db");
    assert_eq!(
        mask_database_url("sqlite:///tmp/a:b@c.db"),
        "sqlite:///tmp/a:b@c.db"
    );
    assert_eq!(mask_database_url("not a url"), "not a url");
}

#[test]
fn input_limits_default_to_each_kinds_limits_and_follow_the_chain() {
    let mut world = World::new();
    let defaults = world.ok(&no_flags()).limits;
    assert_eq!(defaults.skills(), Limits::SKILLS);
    assert_eq!(defaults.tools(), Limits::TOOLS);
    assert_eq!(defaults.plan(), Limits::PLAN);
    assert_eq!(defaults.export(), Limits::EXPORT);
    assert_eq!(defaults.max_depth.origin, Origin::Default);

    let config = world.write_default_config(
        "[limits]\nmax_depth = 10\ndefinition_max_bytes = 1000\nplan_max_bytes = 2000\n",
    );
    world.set(ENV_LIMITS_MAX_DEPTH, "20");
    world.set(ENV_LIMITS_EXPORT_MAX_BYTES, "3000");
    let limits = world.ok(&no_flags()).limits;
    assert_eq!(
        limits.skills(),
        Limits::SKILLS.with_max_bytes(1000).with_max_depth(20)
    );
    assert_eq!(
        limits.tools(),
        Limits::TOOLS.with_max_bytes(1000).with_max_depth(20)
    );
    assert_eq!(
        limits.plan(),
        Limits::PLAN.with_max_bytes(2000).with_max_depth(20)
    );
    assert_eq!(
        limits.export(),
        // One document of an export may be as large as a skill file.
        Limits::EXPORT
            .with_max_bytes(3000)
            .with_max_depth(20)
            .with_max_document_bytes(1000)
    );
    assert_eq!(
        limits.max_depth.origin,
        Origin::Env {
            var: ENV_LIMITS_MAX_DEPTH
        }
    );
    assert_eq!(limits.plan_max_bytes.origin, file_origin(&config, 4));

    for (var, bad) in [
        (ENV_LIMITS_MAX_DEPTH, "0"),
        (ENV_LIMITS_MAX_DEPTH, "129"),
        (ENV_LIMITS_PLAN_MAX_BYTES, "268435457"),
        (ENV_LIMITS_DEFINITION_MAX_BYTES, "-1"),
        (ENV_LIMITS_EXPORT_MAX_BYTES, "16MiB"),
    ] {
        let mut world = World::new();
        world.set(var, bad);
        let err = world.err(&no_flags());
        assert!(
            err.contains(var) && err.contains(&format!("`{bad}`")),
            "{err}"
        );
    }
    let world = World::new();
    world.write_default_config("[limits]\nmax_depth = 200\n");
    let err = world.err(&no_flags());
    assert!(
        err.contains(":2:") && err.contains("from 1 to 128"),
        "{err}"
    );
}

#[test]
fn every_environment_variable_is_declared_once() {
    let names: Vec<_> = ENV_VARS.iter().map(|var| var.name).collect();
    assert_eq!(
        names,
        [
            ENV_CONFIG,
            ENV_DATABASE_URL,
            ENV_AGENT_SKILLS_PATHS,
            ENV_MCP_TIMEOUT_S,
            ENV_LIMITS_MAX_DEPTH,
            ENV_LIMITS_DEFINITION_MAX_BYTES,
            ENV_LIMITS_PLAN_MAX_BYTES,
            ENV_LIMITS_EXPORT_MAX_BYTES
        ]
    );
    assert_eq!(
        names,
        [
            "CLEVERAGENTS_CONFIG",
            "CLEVERAGENTS_DATABASE_URL",
            "CLEVERAGENTS_SKILLS_AGENT_SKILLS_PATHS",
            "CLEVERAGENTS_MCP_TIMEOUT_S",
            "CLEVERAGENTS_LIMITS_MAX_DEPTH",
            "CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES",
            "CLEVERAGENTS_LIMITS_PLAN_MAX_BYTES",
            "CLEVERAGENTS_LIMITS_EXPORT_MAX_BYTES"
        ]
    );
    for var in ENV_VARS {
        assert!(
            !var.description.is_empty() && !var.key.is_empty(),
            "{var:?}"
        );
    }
}

#[test]
fn secrets_never_reach_config_show_in_any_format() {
    let world = World::new();
    world.write_default_config(concat!(
        "[database]\n",
        "url = \"postgres://u:pa/ss?w#rd@h/db?sslmode=require&password=hunter2&%70assword=qq77\"\n",
        "[mcp.servers.gh]\n",
        "command = \"gh\"\n",
        "env = { GITHUB_TOKEN = \"ghp_literal1\", REF = \"${GITHUB_TOKEN}\" }\n",
        "[mcp.servers.web]\n",
        "url = \"http://tok:en9@127.0.0.1:1/mcp?api_key=zz88\"\n",
        "headers = { Authorization = \"Bearer lit3ral\" }\n",
    ));
    let settings = world.ok(&no_flags());
    let table = settings.to_string();
    let json = serde_json::to_string(&settings).unwrap();
    for shown in [&table, &json] {
        for secret in [
            "pa/ss",
            "w#rd",
            "hunter2",
            "qq77",
            "ghp_literal1",
            "en9",
            "zz88",
            "lit3ral",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }
    assert!(json.contains("${GITHUB_TOKEN}"), "{json}");
    assert!(
        table.contains("postgres://u:***@h/db?sslmode=require&password=***"),
        "{table}"
    );
}

#[test]
fn a_syntax_error_on_the_url_line_does_not_echo_the_password() {
    let world = World::new();
    world.write_default_config("[database]\nurl = \"postgres://u:hunter2@h/db\" oops\n");
    let err = world.err(&no_flags());
    assert!(!err.contains("hunter2"), "{err}");
    assert!(err.contains(":2:"), "{err}");
}

#[test]
fn a_syntax_error_in_a_quoted_secret_key_or_an_env_table_does_not_echo_the_value() {
    for text in [
        "[database]\n\"password\" = \"hunter2\" oops\n",
        "[mcp.servers.gh.env]\nGH_PAT = \"hunter2\" oops\n",
        "[mcp.servers.gh.\"headers\"]\nX-Static = \"hunter2\" oops\n",
        // A `password=` pair where a number belongs: quoted by the type
        // error and on the source line.
        "[mcp]\ntimeout_s = \"password=hunter2\"\n",
    ] {
        let world = World::new();
        world.write_default_config(text);
        let err = world.err(&no_flags());
        assert!(!err.contains("hunter2"), "{err}");
        assert!(err.contains(":2:"), "{err}");
    }
}

/// An error quoting `args = ["--api-key", "…", 5]` masks the option's
/// value, and its caret still points at what it is about.
#[test]
fn a_secret_option_value_on_the_quoted_line_is_masked() {
    let world = World::new();
    world.write_default_config(
        "[mcp.servers.s]\ncommand = \"x\"\nargs = [\"--api-key\", \"TOMLSECRET\", 5]\n",
    );
    let err = world.err(&no_flags());
    assert!(!err.contains("TOMLSECRET"), "{err}");
    assert!(
        err.ends_with("3 | args = [\"--api-key\", \"***\", 5]\n  |                             ^"),
        "{err}"
    );
}

#[test]
fn an_error_far_along_a_long_line_stays_short() {
    let world = World::new();
    world.write_default_config(&format!(
        "[skills]\nagent_skills_paths = \"{}\" oops\n",
        "x".repeat(1_000_000)
    ));
    let err = world.err(&no_flags());
    assert!(err.len() < 4_096, "{} bytes", err.len());
    assert!(err.contains(":2:"), "{err}");
    // A name a million characters long, quoted by the message, is cut too.
    let world = World::new();
    world.write_default_config(&format!(
        "[mcp.servers.{}]\nbogus = 1\n",
        "s".repeat(1_000_000)
    ));
    let err = world.err(&no_flags());
    assert!(err.len() < 4_096, "{} bytes", err.len());
}

/// Found by the `config` fuzz target: a server name holding a control
/// character (TOML can escape any) was quoted raw in the error.
#[test]
fn control_characters_in_a_server_name_are_escaped_in_errors() {
    let world = World::new();
    let path = world.write(
        "c.toml",
        "[mcp.servers.\"\\u007Fsrv\\u001b[2J\"]\ncommand = \"echo\"\n",
    );
    let err = world.err(&CliOverrides {
        config: Some(path.clone()),
        ..no_flags()
    });
    assert!(!err.chars().any(|c| c.is_control() && c != '\n'), "{err:?}");
    assert!(err.contains("mcp server `\\u{7f}srv\\u{1b}[2J`"), "{err}");
    // The same name arriving through `mcp import` (a client's JSON file).
    let client = world.write(
        "client.json",
        "{\"mcpServers\": {\"\\u007feb\": {\"command\": \"x\"}}}",
    );
    let err = agents_config::import_mcp_servers(
        &client,
        &std::fs::read_to_string(&client).unwrap(),
        &path,
        "",
        &agents_config::Provenance::Own,
    )
    .map(|report| format!("{report:?}"))
    .unwrap_or_else(|err| err.to_string());
    assert!(!err.chars().any(|c| c.is_control() && c != '\n'), "{err:?}");
}
