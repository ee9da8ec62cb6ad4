use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use std::process::Command;
use tempfile::TempDir;

/// A sandbox: its own HOME, database file and working directory.
pub struct Sandbox {
    pub dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Self { dir }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("registry.db")
    }

    pub fn db_url(&self) -> String {
        format!("sqlite://{}", self.db_path().display())
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `text` to `name` inside the sandbox and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `agents` with the sandbox's HOME and database, run in the sandbox.
    pub fn cmd(&self) -> Command {
        self.command(env!("CARGO_BIN_EXE_agents"))
    }

    /// Any program (a test client, `script`) with the same environment as [`Self::cmd`].
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.dir.path())
            .env("HOME", self.home())
            .env("CLEVERAGENTS_DATABASE_URL", self.db_url())
            .env_remove("CLEVERAGENTS_CONFIG")
            .env_remove("CLEVERAGENTS_SKILLS_AGENT_SKILLS_PATHS")
            .env_remove("CLEVERAGENTS_MCP_TIMEOUT_S")
            .env_remove("CLEVERAGENTS_LOG");
        cmd
    }

    /// Creates the sandbox's registry (`agents db init`): a command that
    /// only reads refuses a registry file that does not exist.
    pub fn init_db(&self) {
        self.run(&["db", "init"]).ok();
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    /// [`Self::run`] with these environment variables set.
    pub fn run_env(&self, args: &[&str], vars: &[(&str, &str)]) -> Run {
        let mut cmd = self.cmd();
        cmd.args(args).envs(vars.iter().copied());
        Run::from(cmd.output().unwrap(), self)
    }

    /// Rows in `table`, counted by the `sqlite3` CLI.
    pub fn sql_count(&self, table: &str) -> i64 {
        self.sqlite3(&format!("SELECT COUNT(*) FROM {table}"))
            .parse()
            .unwrap()
    }

    /// Runs `sql` on the database with the `sqlite3` CLI (as anyone who can
    /// write the file could); its output, trimmed.
    pub fn sqlite3(&self, sql: &str) -> String {
        let out = std::process::Command::new("sqlite3")
            .arg(self.db_path())
            .arg(sql)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(output: Output, sandbox: &Sandbox) -> Self {
        let clean = |bytes: Vec<u8>| {
            String::from_utf8(bytes)
                .unwrap()
                .replace(&sandbox.dir.path().display().to_string(), "[SANDBOX]")
        };
        Self {
            code: output.status.code().unwrap_or(-1),
            stdout: clean(output.stdout),
            stderr: clean(output.stderr),
        }
    }

    pub fn ok(self) -> Self {
        assert_eq!(
            self.code, 0,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    pub fn fails(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    pub fn stderr_json(&self) -> Value {
        serde_json::from_str(self.stderr.lines().last().unwrap_or(""))
            .unwrap_or_else(|e| panic!("stderr is not JSON ({e}):\n{}", self.stderr))
    }
}

/// Registers the shipped example skills (one `skill add` of all three files).
pub fn add_examples(sb: &Sandbox) {
    let dir = examples().join("skills");
    let mut args = vec!["skill".to_owned(), "add".to_owned()];
    for f in ["code-tools.yaml", "git-tools.yaml", "devops-toolkit.yaml"] {
        args.push(dir.join(f).display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sb.run(&args).ok();
}

/// The repo's `examples/` folder.
pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Replaces timestamps so snapshots are stable.
pub fn redact_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // 2026-12-02T14:03:00.123456Z
        if i + 27 <= bytes.len() && is_stamp(&text[i..i + 27]) {
            out.push_str("[TIMESTAMP]");
            i += 27;
        } else {
            out.push(text[i..].chars().next().unwrap());
            i += text[i..].chars().next().unwrap().len_utf8();
        }
    }
    out
}

fn is_stamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 27
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[26] == b'Z'
        && s.chars()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10 | 13 | 16 | 19 | 26) || c.is_ascii_digit())
}

/// A fresh PostgreSQL database for one test, dropped afterwards; `None` (with
/// a visible notice) when no server is configured outside CI.
pub struct PgDatabase {
    admin: String,
    pub name: String,
    pub url: String,
}

impl PgDatabase {
    pub fn create(test: &str) -> Option<Self> {
        let Ok(admin) = std::env::var("AGENTS_TEST_POSTGRES_URL") else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "AGENTS_TEST_POSTGRES_URL must be set in CI (scripts/test.sh starts PostgreSQL)"
            );
            eprintln!("SKIPPED (no AGENTS_TEST_POSTGRES_URL): {test}");
            return None;
        };
        let name = format!("cli_{}_{}", test, std::process::id());
        psql(&admin, &format!("DROP DATABASE IF EXISTS {name}"));
        psql(&admin, &format!("CREATE DATABASE {name}"));
        let url = with_database(&admin, &name);
        Some(Self { admin, name, url })
    }

    pub fn query(&self, sql: &str) -> String {
        psql(&self.url, sql)
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let _ = std::process::Command::new("psql")
            .args([
                "-X",
                "-q",
                "-t",
                "-A",
                &self.admin,
                "-c",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            ])
            .output();
    }
}

fn psql(url: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql")
        .args(["-X", "-q", "-t", "-A", url, "-c", sql])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Replaces the database name in a `postgres://…/db?…` URL.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[scheme_end..].find('/').map(|i| i + scheme_end);
    let host = path_start.map_or(base, |i| &base[..i]);
    match query {
        Some(query) => format!("{host}/{name}?{query}"),
        None => format!("{host}/{name}"),
    }
}

/// The value of `var`, an installed test dependency (e.g.
/// `AGENTS_TEST_MCP_EVERYTHING`). Under `scripts/test.sh` (which sets
/// `AGENTS_TEST_REQUIRE_ALL`) or in CI a missing one fails the test; elsewhere
/// the test skips with a note naming `test`.
pub fn required_env(var: &str, test: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) => Some(value),
        Err(_) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true")
                    && std::env::var("AGENTS_TEST_REQUIRE_ALL").is_err(),
                "{var} must be set (scripts/test.sh installs it: scripts/install-mcp-everything.sh, \
                 scripts/install-mcp-python.sh, scripts/install-mcp-ts-sdk.sh)"
            );
            eprintln!("SKIPPED (no {var}): {test}");
            None
        }
    }
}

/// server-everything's entry point (`AGENTS_TEST_MCP_EVERYTHING`).
pub fn everything(test: &str) -> Option<String> {
    required_env("AGENTS_TEST_MCP_EVERYTHING", test)
}

/// The venv python with the MCP Python SDK (`AGENTS_TEST_MCP_PYTHON`).
pub fn python(test: &str) -> Option<String> {
    required_env("AGENTS_TEST_MCP_PYTHON", test)
}

/// The folder the MCP TypeScript SDK is installed in
/// (`AGENTS_TEST_MCP_TS_SDK`, from `scripts/install-mcp-ts-sdk.sh`).
pub fn ts_sdk(test: &str) -> Option<String> {
    required_env("AGENTS_TEST_MCP_TS_SDK", test)
}

/// The path of `tests/cli/js/NAME`, the Node clients the tests run.
pub fn js_script(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/js")
        .join(name)
}

/// The path of `tests/cli/py/NAME`, the Python servers and clients the
/// tests run.
pub fn py_script(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/py")
        .join(name)
}

/// Processes whose environment carries `marker` (set in a server's `env`).
pub fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read(e.path().join("environ")).ok())
        .filter(|environ| String::from_utf8_lossy(environ).contains(marker))
        .count()
}

/// Waits (bounded, 10 s) until no process carries `marker`; returns how many remain.
pub fn settle(marker: &str) -> usize {
    for _ in 0..100 {
        if processes_with(marker) == 0 {
            return 0;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    processes_with(marker)
}

/// `script` (util-linux), which runs a command on a pseudo-terminal: needed
/// in CI; elsewhere its absence skips `what` (a test, or part of one).
pub fn script_program(what: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("script"))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("CI").is_err(),
            "`script` (util-linux) is needed in CI"
        );
        eprintln!("SKIPPED (no `script`): {what}");
    }
    found
}

/// What `line` printed, run on a pseudo-terminal by `script` (the command
/// given, with its environment; see [`script_program`]), `answer` typed at it.
pub fn at_terminal(mut script: Command, line: &str, answer: &str) -> String {
    use std::io::Write;
    let mut child = script
        .args(["-qec", line, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}
