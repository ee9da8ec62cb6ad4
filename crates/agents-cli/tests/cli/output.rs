//! What reaches a terminal: no raw control characters from stored data, and
//! log lines that keep the JSON-lines contract under `--format json`.

use crate::support::{Run, Sandbox};

const HOSTILE: &str = r#""\e]0;TITLE\a\e[2J\x9b""#;

/// Line breaks and the tabs between piped table cells are ours; any other
/// control character would have come from stored data.
fn assert_clean(what: &str, text: &str) {
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{what} has a raw control character:\n{text:?}"
    );
}

#[test]
fn tables_and_lines_escape_control_characters_from_stored_data() {
    let sb = Sandbox::new();
    let tool = sb.write(
        "tool.yaml",
        &format!("name: custom/evil\ndescription: {HOSTILE}\n"),
    );
    let skill = sb.write(
        "skill.yaml",
        &format!(
            "name: me/evil\ndescription: {HOSTILE}\ntools: [custom/evil]\ninline_tools:\n  - description: {HOSTILE}\n"
        ),
    );
    sb.run(&["tool", "add", tool.to_str().unwrap()]).ok();
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    for args in [
        &["skill", "list"][..],
        &["skill", "tools", "me/evil"],
        &["tool", "list"],
        &["tool", "list", "--source", "custom"],
        &["skill", "get", "me/evil", "--format", "yaml"],
        &["tool", "get", "custom/evil"],
    ] {
        let run = sb.run(args).ok();
        assert_clean(&format!("stdout of {args:?}"), &run.stdout);
        assert_clean(&format!("stderr of {args:?}"), &run.stderr);
        // Tables; the YAML of `get` is escaped by the serializer (`"\e]0;…"`).
        if args[1] != "get" {
            assert!(
                run.stdout
                    .contains("\\u{1b}]0;TITLE\\u{7}\\u{1b}[2J\\u{9b}"),
                "{args:?}: the description is shown escaped:\n{}",
                run.stdout
            );
        }
    }
    for args in [
        &["skill", "list", "--format", "json"][..],
        &["skill", "tools", "me/evil", "--format", "json"],
        &["tool", "list", "--format", "json"],
    ] {
        let run = sb.run(args).ok();
        assert_clean(&format!("stdout of {args:?}"), &run.stdout);
        let value = run.json();
        assert!(
            value.to_string().contains('\u{9b}'),
            "{args:?}: JSON keeps the value: {value}"
        );
    }
}

#[test]
fn log_lines_are_json_lines_under_format_json() {
    let sb = Sandbox::new();
    let skill = sb.write("skill.yaml", "name: me/logged\ntools: [builtin/grep]\n");
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    let out = sb
        .cmd()
        .env("CLEVERAGENTS_LOG", "debug")
        .args(["skill", "tools", "me/logged", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.is_empty(), "debug logging printed nothing");
    assert!(!stderr.contains('\u{1b}'), "colour into a pipe:\n{stderr}");
    for line in stderr.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|err| panic!("not a JSON line ({err}): {line}"));
    }
}

#[test]
fn quiet_commands_print_nothing_on_stderr() {
    let sb = Sandbox::new();
    let skill = sb.write("skill.yaml", "name: me/quiet\n");
    let run = sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    assert_eq!(run.stderr, "");
    let run = sb.run(&["skill", "list"]).ok();
    assert_eq!(run.stderr, "");
}

/// A log filter that does not parse is said (and the default used), and
/// `--quiet` drops log lines at warning level as it drops other warnings.
#[test]
fn a_bad_log_filter_is_warned_about_unless_quiet() {
    let sb = Sandbox::new();
    sb.init_db();
    let bad = [("CLEVERAGENTS_LOG", "???bad[")];
    let run = sb.run_env(&["skill", "list"], &bad).ok();
    assert!(
        run.stderr
            .starts_with("warning: `CLEVERAGENTS_LOG` is not a log filter"),
        "{}",
        run.stderr
    );
    let run = sb.run_env(&["-q", "skill", "list"], &bad).ok();
    assert_eq!(run.stderr, "");
}

#[test]
fn a_command_line_that_does_not_parse_is_a_json_error_under_format_json() {
    let sb = Sandbox::new();
    for args in [
        &["--format", "json", "skill", "add"][..],
        &["skill", "add", "--format=json", "--bogus"][..],
    ] {
        let run = sb.run(args).fails(2);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        let error: serde_json::Value = serde_json::from_str(&run.stderr).unwrap();
        assert_eq!(error["error"]["kind"], "usage", "{error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("Usage: agents skill add"), "{message}");
        assert!(!message.starts_with("error:"), "{message}");
    }
    // Otherwise clap's own text; and after `--` nothing is an option.
    for args in [
        &["skill", "add"][..],
        &["skill", "add", "--bogus", "--", "--format", "json"][..],
    ] {
        let run = sb.run(args).fails(2);
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    }
}

/// A newline in a file or folder name would start a forged line of output
/// (`error: …` that no error wrote): every path in a message is escaped.
#[test]
fn a_newline_in_a_path_cannot_forge_a_line() {
    let sb = Sandbox::new();
    let file = sb.write("evil\nerror: forged.json", "not json");
    let folder = sb.path("skills\nerror: forged");
    std::fs::create_dir_all(&folder).unwrap();
    for args in [
        vec!["mcp", "import", file.to_str().unwrap()],
        vec!["config", "show", "--config", file.to_str().unwrap()],
        vec!["skill", "lint", folder.to_str().unwrap()],
        vec!["skill", "discover", "--paths", folder.to_str().unwrap()],
    ] {
        let run = sb.run(&args);
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(
            !all.lines()
                .any(|line| line.trim_start().starts_with("error: forged")),
            "{args:?}: {all}"
        );
    }
}

/// A reader that went away (`agents … | head -1`) ends the command quietly
/// and with success, for text and for JSON, as ripgrep does.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let sb = Sandbox::new();
    for args in [
        &["completions", "bash"][..],
        &["schema", "skill", "--format", "json"],
        &["config", "show"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = sb
            .cmd()
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
    }
}

/// `--color always` colours the `error` and `warning` prefixes; into a pipe
/// by default, and with `never`, they are plain.
#[test]
fn color_always_colours_the_prefixes() {
    let sb = Sandbox::new();
    let run = sb
        .run(&["--color", "always", "skill", "get", "l/none"])
        .fails(1);
    assert!(
        run.stderr.starts_with("\u{1b}[1;31merror\u{1b}[0m: "),
        "{:?}",
        run.stderr
    );
    for args in [
        &["skill", "get", "l/none"][..],
        &["--color", "never", "skill", "get", "l/none"],
    ] {
        let run = sb.run(args).fails(1);
        assert!(run.stderr.starts_with("error: "), "{:?}", run.stderr);
    }
    // Every command's text output ends its last line.
    let run = sb.run(&["config", "show"]).ok();
    assert!(run.stdout.ends_with('\n'), "{:?}", run.stdout);
    let run = sb.run(&["--color", "always", "config", "show"]).ok();
    assert!(
        run.stderr.contains("\u{1b}[1;33mwarning\u{1b}[0m: "),
        "{:?}",
        run.stderr
    );
}

#[test]
fn an_error_echoing_a_huge_argument_stays_a_few_kib() {
    // A URL, a path, a name or an argument of 100 KB, each echoed by the
    // error it causes: cut in the middle, with how much was cut.
    let sb = Sandbox::new();
    let long = "x".repeat(100_000);
    let url = format!("postgres://u:pw@127.0.0.1:1/{long}");
    let path = format!("/tmp/{long}/x.yaml");
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>);
    let cases: Vec<Case<'_>> = vec![
        (
            vec!["db", "status"],
            vec![("CLEVERAGENTS_DATABASE_URL", &url)],
        ),
        (vec!["skill", "add", &path], vec![]),
        (vec!["mcp", "tools", &long], vec![]),
        (vec![&long], vec![]),
        (vec!["skill", "list", "--format", &long], vec![]),
        (vec!["--format", "json", "skill", &long], vec![]),
    ];
    for (args, env) in cases {
        let run = sb.run_env(&args, &env);
        assert_ne!(run.code, 0, "{:?}", &args[..args.len().min(2)]);
        assert!(
            run.stderr.len() < 8192,
            "{:?}: {} bytes",
            &args[..args.len().min(2)],
            run.stderr.len()
        );
        assert!(!run.stderr.contains(":pw@"), "{}", run.stderr);
    }
}

#[test]
fn a_bad_database_url_says_where_it_was_set() {
    let sb = Sandbox::new();
    sb.write(
        "home/.cleveragents/config.toml",
        "[database]\nurl = \"mysql://u@h/db\"\n",
    );
    let mut cmd = sb.cmd();
    cmd.env_remove("CLEVERAGENTS_DATABASE_URL")
        .args(["skill", "list"]);
    let run = Run::from(cmd.output().unwrap(), &sb).fails(1);
    assert!(
        run.stderr
            .starts_with("error: `database.url` from `[SANDBOX]/home/.cleveragents/config.toml:2`: invalid database url `mysql://u@h/db`"),
        "{}",
        run.stderr
    );
    let run = sb.run_env(
        &["skill", "list"],
        &[("CLEVERAGENTS_DATABASE_URL", "mysql://x")],
    );
    assert!(
        run.stderr.starts_with(
            "error: `database.url` from environment variable `CLEVERAGENTS_DATABASE_URL`: "
        ),
        "{}",
        run.stderr
    );
}
