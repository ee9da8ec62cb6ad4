//! `agents mcp serve` running custom and inline tools' `run`s, gated by the
//! local user's consent (`agents-trust`) and under the same call policy as
//! builtins, driven by the official Python SDK client
//! (`tests/cli/py/builtin_client.py`, the session setup of `serve_builtin`).

use serde_json::json;

use crate::serve::text_of;
use crate::serve_builtin::{client, served};
use crate::support::{Sandbox, python};

/// Adds the tools of `yaml` (one file, trusted as the user's own).
fn add_tool(sb: &Sandbox, file: &str, yaml: &str) {
    let path = sb.write(file, yaml);
    sb.run(&["tool", "add", path.to_str().unwrap()]).ok();
}

/// `-- agents mcp serve SKILL --root WS` (stdio).
fn stdio(skill: &str, ws: &str) -> Vec<String> {
    let mut args: Vec<String> = vec!["--".into(), env!("CARGO_BIN_EXE_agents").into()];
    args.extend(["mcp", "serve", skill, "--root", ws].map(String::from));
    args
}

const GREET: &str = "name: custom/greet\ndescription: greet\nwrites: true\ninput_schema: {type: object, properties: {who: {type: string}}, required: [who]}\noutput_schema: {type: object, properties: {hello: {type: string}}, required: [hello]}\nrun:\n  command: /bin/sh\n  args: [-c, 'touch greeted; printf \"{{\\\"hello\\\": \\\"%s\\\"}}\" \"$1\"', sh, '{who}']\n";

const FAIL: &str = "name: custom/fail\ndescription: fail\ninput_schema: {type: object}\nrun:\n  command: /bin/sh\n  args: [-c, 'echo plain-out; echo the-stderr-tail >&2; exit 3']\n";

const ECHO: &str = "name: custom/echo\ndescription: echo\ninput_schema: {type: object, properties: {text: {type: string}}, required: [text]}\nrun:\n  command: /usr/bin/printf\n  args: ['%s', '{text}']\n";

const TOUCH: &str = "name: custom/touch\ndescription: touch\ninput_schema: {type: object, properties: {path: {type: string}}}\nrun:\n  command: /bin/sh\n  args: [-c, 'touch \"$1\"', sh, '{path}']\n";

#[test]
fn a_trusted_run_is_served_and_an_untrusted_one_never_starts() {
    let Some(python) = python("serve_run_tools") else {
        return;
    };
    let sb = Sandbox::new();
    let ws = sb.path("ws");
    std::fs::create_dir_all(&ws).unwrap();
    add_tool(&sb, "greet.yaml", GREET);
    add_tool(&sb, "fail.yaml", FAIL);
    add_tool(&sb, "echo.yaml", ECHO);
    // `custom/touch` as another user's: its `run` is not in this user's
    // trust store (added, then the store put back as it was).
    let trust = sb.home().join(".cleveragents/trust.json");
    let before = std::fs::read(&trust).unwrap();
    add_tool(&sb, "touch.yaml", TOUCH);
    std::fs::write(&trust, before).unwrap();
    let skill = sb.write(
        "r.yaml",
        "name: l/r\ndescription: run tools\ntools: [custom/greet, custom/fail, custom/echo, custom/touch]\n",
    );
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();

    let (names, dry) = served(&sb, "l/r");
    assert_eq!(dry["tools"].as_array().unwrap().len(), 3, "{dry}");
    let left = &dry["left_out"][0];
    assert_eq!(left["name"], "custom/touch", "{dry}");
    assert!(
        left["reason"].as_str().unwrap().contains("is not trusted"),
        "{dry}"
    );
    // What it would run is not quoted.
    assert!(!dry.to_string().contains("touch \\\"$1\\\""), "{dry}");

    let marker = sb.path("ws/untrusted-ran");
    let config = json!({"steps": [
        {"call": names["custom/greet"], "arguments": {"who": "a b"}},
        {"call": names["custom/fail"], "arguments": {}},
        {"call": "custom__touch", "arguments": {"path": marker}},
        {"call": names["custom/echo"], "arguments": {}},
        // A hostile argument: a NUL cannot be an argv word; a bounded
        // tool error, nothing runs.
        {"call": names["custom/echo"], "arguments": {"text": "a\u{0}b"}},
    ]});
    let out = client(&sb, &python, &config, &stdio("l/r", ws.to_str().unwrap()));
    let steps = out["steps"].as_array().unwrap();
    // stdout is the text; JSON stdout checked against output_schema is
    // the structured result.
    assert_eq!(text_of(&steps[0]), "{\"hello\": \"a b\"}", "{}", steps[0]);
    assert_eq!(
        steps[0]["structuredContent"]["hello"], "a b",
        "{}",
        steps[0]
    );
    assert!(ws.join("greeted").exists());
    // A non-zero exit is a tool error with the exit code and stderr's tail.
    assert_eq!(steps[1]["isError"], true, "{}", steps[1]);
    let failed = text_of(&steps[1]);
    assert!(
        failed.contains('3') && failed.contains("the-stderr-tail"),
        "{failed}"
    );
    // The untrusted one is not served: unknown, and it never ran.
    assert!(
        steps[2]["error"].as_str().unwrap().contains("unknown tool"),
        "{}",
        steps[2]
    );
    assert!(!marker.exists());
    // Arguments are checked before anything runs.
    assert_eq!(steps[3]["isError"], true, "{}", steps[3]);
    for step in &steps[4..5] {
        assert_eq!(step["isError"], true, "{step}");
        assert!(
            step.to_string().len() < 16_384,
            "{}",
            step.to_string().len()
        );
    }
    // The client is told what is left out, and why.
    let instructions = out["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("`custom/touch`") && instructions.contains("is not trusted"),
        "{instructions}"
    );
}

#[test]
fn a_run_tree_dies_at_timeout_s_and_sandbox_strict_keeps_it_in_its_root() {
    let Some(python) = python("serve_run_policy") else {
        return;
    };
    let sb = Sandbox::new();
    let ws = sb.path("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let outside = sb.path("escaped");
    let marker = "876541";
    add_tool(
        &sb,
        "sleep.yaml",
        &format!(
            "name: custom/sleep\ndescription: sleep\ninput_schema: {{type: object}}\nrun:\n  command: /bin/sh\n  args: [-c, 'sleep {marker}1 & sleep {marker}2 & sleep {marker}3; wait']\n"
        ),
    );
    add_tool(
        &sb,
        "escape.yaml",
        &format!(
            "name: custom/escape\ndescription: escape\ninput_schema: {{type: object}}\nrun:\n  command: /bin/sh\n  args: [-c, 'echo x > {}; echo y > inside']\n",
            outside.display()
        ),
    );
    let skill = sb.write(
        "p.yaml",
        "name: l/p\ndescription: policy\ntools: [custom/sleep, custom/escape]\noverrides:\n  custom/sleep: {timeout_s: 1}\n  custom/escape: {sandbox: strict}\n",
    );
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    let (names, _) = served(&sb, "l/p");
    let config = json!({"steps": [
        {"call": names["custom/sleep"], "arguments": {}},
        {"count": marker, "after": 1, "within": 10},
        {"call": names["custom/escape"], "arguments": {}},
    ]});
    let out = client(&sb, &python, &config, &stdio("l/p", ws.to_str().unwrap()));
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(steps[0]["isError"], true, "{}", steps[0]);
    assert!(text_of(&steps[0]).contains("timed out"), "{}", steps[0]);
    assert_eq!(
        steps[1]["running"], 0,
        "a process of the tree outlived the call"
    );
    // Landlock: the write outside the root failed, the one inside did not.
    assert!(!outside.exists(), "{}", steps[2]);
    assert!(ws.join("inside").exists(), "{}", steps[2]);
}

#[test]
fn a_second_users_untrusted_run_on_a_shared_postgres_never_starts() {
    let Some(python) = python("serve_run_shared") else {
        return;
    };
    let Some(pg) = crate::support::PgDatabase::create("serve_run_shared") else {
        return;
    };
    let url = pg.url.as_str();
    // The first user writes the tool and the skill (their `run` is
    // trusted for them: their own file).
    let first = Sandbox::new();
    let marker = first.path("second-user-ran");
    let touch = first.write(
        "touch.yaml",
        &format!(
            "name: custom/touch\ndescription: touch\ninput_schema: {{type: object}}\nrun:\n  command: /usr/bin/touch\n  args: ['{}']\n",
            marker.display()
        ),
    );
    first
        .run(&[
            "--database-url",
            url,
            "tool",
            "add",
            touch.to_str().unwrap(),
        ])
        .ok();
    let skill = first.write(
        "s.yaml",
        "name: l/shared\ndescription: shared\ntools: [custom/touch]\n",
    );
    first
        .run(&[
            "--database-url",
            url,
            "skill",
            "add",
            skill.to_str().unwrap(),
        ])
        .ok();
    // The second user, another HOME on the same database.
    let second = Sandbox::new();
    let dry = second
        .run(&[
            "--database-url",
            url,
            "mcp",
            "serve",
            "l/shared",
            "--dry-run",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(dry["tools"].as_array().unwrap().len(), 0, "{dry}");
    assert_eq!(dry["left_out"][0]["name"], "custom/touch", "{dry}");
    assert!(
        dry["left_out"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("is not trusted"),
        "{dry}"
    );
    // Serving: stderr and the instructions say so; a call never starts it.
    let served = second
        .cmd()
        .args(["--database-url", url, "mcp", "serve", "l/shared"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&served.stderr);
    assert!(
        stderr.contains("`custom/touch`") && stderr.contains("is not trusted"),
        "{stderr}"
    );
    let mut args: Vec<String> = vec!["--".into(), env!("CARGO_BIN_EXE_agents").into()];
    args.extend(["--database-url", url, "mcp", "serve", "l/shared"].map(String::from));
    let config = json!({"steps": [{"list": true}, {"call": "custom__touch", "arguments": {}}]});
    let out = client(&second, &python, &config, &args);
    assert_eq!(
        out["steps"][0]["tools"].as_array().unwrap().len(),
        0,
        "{out}"
    );
    assert!(
        out["steps"][1]["error"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{out}"
    );
    assert!(
        !marker.exists(),
        "the second user's gateway started the first user's run"
    );
    let instructions = out["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("`custom/touch`") && instructions.contains("is not trusted"),
        "{instructions}"
    );
    // The first user's own gateway does run it.
    let mine = client(
        &first,
        &python,
        &json!({"steps": [{"call": "custom__touch", "arguments": {}}]}),
        &{
            let mut args: Vec<String> = vec!["--".into(), env!("CARGO_BIN_EXE_agents").into()];
            args.extend(
                [
                    "--database-url",
                    url,
                    "mcp",
                    "serve",
                    "l/shared",
                    "--root",
                    first.path("").to_str().unwrap(),
                ]
                .map(String::from),
            );
            args
        },
    );
    assert!(marker.exists(), "{mine}");
}

/// `custom/NAME`: `/bin/sh -c SCRIPT` with `text` (a string, `extra`
/// schema keywords) given as `stdin` or as `$1`.
fn sh_tool(name: &str, script: &str, extra: &str, on_stdin: bool) -> String {
    let (stdin, args) = if on_stdin {
        ("\n  stdin: '{text}'", "")
    } else {
        ("", ", sh, '{text}'")
    };
    format!(
        "name: custom/{name}\ndescription: {name}\ninput_schema: {{type: object, properties: {{text: {{type: string{extra}}}}}}}\nrun:\n  command: /bin/sh\n  args: [-c, '{script}'{args}]{stdin}\n"
    )
}

/// Huge strings through the gateway, each file-fed to the Python client
/// (1 MiB cannot be one word of its command line): 1 MiB on `stdin` is
/// counted whole; over the schema's `maxLength`, or as an argv word over
/// Linux's 128 KiB `MAX_ARG_STRLEN`, a bounded tool error naming the field
/// and nothing starts; 1 MiB of stdout is cut to the 256 KiB default with
/// a note. The session answers after each.
#[test]
fn huge_strings_reach_run_tools_whole_or_as_bounded_errors() {
    let Some(python) = python("serve_run_huge") else {
        return;
    };
    let sb = Sandbox::new();
    let ws = sb.path("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let tools = [
        (
            "count",
            sh_tool("count", "touch count-ran; wc -c", "", true),
        ),
        (
            "short",
            sh_tool("short", "touch short-ran; wc -c", ", maxLength: 1000", true),
        ),
        (
            "word",
            sh_tool(
                "word",
                "touch word-ran; printf %s \"$1\" | wc -c",
                "",
                false,
            ),
        ),
        (
            "flood",
            sh_tool("flood", "yes abcdefg | head -c 1048576", "", true),
        ),
    ];
    for (name, yaml) in &tools {
        add_tool(&sb, &format!("{name}.yaml"), yaml);
    }
    let skill = sb.write(
        "h.yaml",
        "name: l/h\ndescription: huge\ntools: [custom/count, custom/short, custom/word, custom/flood]\n",
    );
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    let (names, _) = served(&sb, "l/h");
    let mib = 1 << 20;
    let huge = sb.write("huge.json", &json!({"text": "a".repeat(mib)}).to_string());
    let from_file = |tool: &str| json!({"call": names[tool], "arguments_file": huge});
    let config = json!({"steps": [
        from_file("custom/count"),
        from_file("custom/short"),
        from_file("custom/word"),
        {"call": names["custom/flood"], "arguments": {}},
        {"call": names["custom/count"], "arguments": {"text": "still here"}},
    ]});
    let out = client(&sb, &python, &config, &stdio("l/h", ws.to_str().unwrap()));
    let steps = out["steps"].as_array().unwrap();
    // 1 MiB on stdin: every byte arrived.
    assert_eq!(text_of(&steps[0]).trim(), mib.to_string(), "{}", steps[0]);
    // Over `maxLength` and in an argv word: a tool error of a few KiB that
    // names the field; the command never started.
    for (step, field, marker) in [
        (&steps[1], "/text", "short-ran"),
        (&steps[2], "`run.args[3]` (`{text}`)", "word-ran"),
    ] {
        assert_eq!(step["isError"], true, "{step:.2000}");
        let text = text_of(step);
        assert!(text.contains(field), "{text:.2000}");
        assert!(text.len() < 8 * 1024, "{}", text.len());
        assert!(!ws.join(marker).exists(), "{marker}");
    }
    assert!(text_of(&steps[1]).contains("1000"));
    assert!(text_of(&steps[2]).contains("MAX_ARG_STRLEN"));
    // 1 MiB of stdout: cut to the 256 KiB default, saying what was cut.
    let flood = text_of(&steps[3]);
    assert_ne!(steps[3]["isError"], true);
    assert!(flood.len() <= 256 * 1024, "{}", flood.len());
    assert!(flood.starts_with("abcdefg\nabcdefg\n"));
    assert!(
        flood.ends_with(" more bytes of stdout not shown; 1048576 in all]\n"),
        "{}",
        &flood[flood.len() - 200..]
    );
    // The session goes on answering.
    assert_eq!(text_of(&steps[4]).trim(), "10", "{}", steps[4]);
}
