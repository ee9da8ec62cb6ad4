//! Input files (skill, tool, plan and export files, a client's MCP file, a
//! lock file): a regular file, or `-` for standard input. A named pipe
//! nobody writes to hung every command that read one, and `/dev/zero` was
//! read to the size limit (256 MiB, 785 MB of memory) before it was
//! refused: both are refused by their type, before anything is read.

use std::io::Write as _;
use std::process::{Output, Stdio};

use crate::support::Sandbox;

/// Every command that reads an input file, its arguments before the file.
const READERS: &[&[&str]] = &[
    &["skill", "add"],
    &["skill", "apply"],
    &["skill", "update"],
    &["tool", "add"],
    &["plan", "validate"],
    &["db", "import"],
    &["mcp", "import"],
    &["skill", "diff", "gen/any", "--lock"],
    &["skill", "tools", "gen/any", "--locked"],
];

/// `agents ARGS`, killed after 60 s (`timeout` exits 124), so a command
/// that hangs fails the test instead of hanging it.
fn bounded(sb: &Sandbox, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = sb
        .command("timeout")
        .args(["60", env!("CARGO_BIN_EXE_agents")])
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(text.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

#[test]
fn named_pipes_and_devices_are_refused_unread() {
    let sb = Sandbox::new();
    sb.init_db();
    let fifo = sb.path("pipe.yaml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let fifo = fifo.to_str().unwrap();
    for reader in READERS {
        for (file, what) in [
            (fifo, "a named pipe (FIFO)"),
            ("/dev/zero", "a character device"),
        ] {
            let mut args = reader.to_vec();
            args.push(file);
            let out = bounded(&sb, &args, None);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_ne!(out.status.code(), Some(124), "{args:?} hung");
            assert!(!out.status.success(), "{args:?}: {stderr}");
            assert!(
                stderr.contains(&format!(
                    "cannot read `{file}`: it is {what}, not a regular file (give a file, or `-` for standard input)"
                )),
                "{args:?}: {stderr}"
            );
        }
    }
}

#[test]
fn standard_input_is_read_for_a_dash() {
    let sb = Sandbox::new();
    sb.init_db();
    let out = bounded(
        &sb,
        &["skill", "add", "-"],
        Some("name: local/p\ntools:\n  - builtin/raed_file\n"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Its findings name it as given.
    assert!(
        stderr.contains("-: Skill 'local/p': Tool 'builtin/raed_file' is not registered"),
        "{stderr}"
    );
    // The plan is read: its skill's problem is what fails it.
    let out = bounded(&sb, &["plan", "validate", "-"], Some("skills: [local/p]\n"));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("Skill 'local/p': Tool 'builtin/raed_file' is not registered"),
        "{said}"
    );
    let out = bounded(
        &sb,
        &["mcp", "import", "--dry-run", "-"],
        Some(r#"{"mcpServers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}"#),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("would add mcp server `fetch`"), "{stderr}");
}

#[test]
fn an_endless_standard_input_is_refused_at_the_limit() {
    let sb = Sandbox::new();
    sb.init_db();
    // Read to the limit and one byte more, not to its end (which never comes).
    let out = sb
        .command("timeout")
        .args(["60", env!("CARGO_BIN_EXE_agents"), "skill", "add", "-"])
        .env("CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES", "1024")
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("input is larger than the limit of 1024 bytes for this kind of file"),
        "{stderr}"
    );
}
