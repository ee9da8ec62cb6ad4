//! The bad-input corpus (`tests/bad-input/`, see its README): every file goes
//! to the real command that reads it; each must fail (or, for `ok-` files, be
//! accepted) with a short stderr free of raw control characters, and the
//! whole corpus's stderr is pinned in one snapshot.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::support::Sandbox;

/// The longest stderr any case may produce (20 write-time warnings, each
/// with the line it points at quoted under it, are about 4 KiB).
const MAX_STDERR: usize = 6 * 1024;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/bad-input")
}

fn command(folder: &str) -> &'static [&'static str] {
    match folder {
        "skill" => &["skill", "add"],
        "tool" => &["tool", "add"],
        "plan" => &["plan", "validate"],
        "import" => &["db", "import"],
        "agent-skill" => &["skill", "lint"],
        "config" => &["config", "show", "--config"],
        // The lock is read before the skill is looked up.
        "lock" => &["skill", "diff", "gen/any", "--lock"],
        other => panic!("tests/bad-input/{other}: no command reads this folder"),
    }
}

const FOLDERS: [&str; 7] = [
    "skill",
    "tool",
    "plan",
    "import",
    "agent-skill",
    "config",
    "lock",
];

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The bytes of one generated case.
fn generate(generator: &str, n: usize) -> Vec<u8> {
    let mut out = String::new();
    match generator {
        "long-description" => {
            out.push_str("name: gen/long\ndescription: ");
            out.push_str(&"x".repeat(n));
            out.push('\n');
        }
        "long-name" => {
            out.push_str("name: gen/");
            out.push_str(&"n".repeat(n));
            out.push('\n');
        }
        "flow-nesting" => {
            out.push_str("name: gen/deep\nmetadata: ");
            out.push_str(&"{a: ".repeat(n));
            out.push('1');
            out.push_str(&"}".repeat(n));
            out.push('\n');
        }
        "block-nesting" => {
            out.push_str("name: gen/deep\nmetadata:\n");
            for depth in 1..=n {
                out.push_str(&" ".repeat(depth));
                out.push_str("k:\n");
            }
            out.push_str(&" ".repeat(n + 1));
            out.push_str("v\n");
        }
        "tool-refs" => {
            out.push_str("name: gen/many\ntools:\n");
            for i in 0..n {
                let _ = writeln!(out, "  - custom/t{i}");
            }
        }
        "skills" => {
            for i in 0..n {
                let _ = writeln!(out, "---\nname: gen/s{i}\nincludes: [gen/missing]");
            }
        }
        "include-cycle" => {
            for i in 0..n {
                let _ = writeln!(out, "---\nname: gen/c{i}\nincludes: [gen/c{}]", (i + 1) % n);
            }
        }
        "nuls" => return vec![0; n],
        "filler" => {
            out.push_str("name: gen/big\n");
            while out.len() < n {
                out.push_str("# filler filler filler filler filler filler filler\n");
            }
        }
        "plan-skills" => {
            out.push_str("skills:\n");
            for i in 0..n {
                let _ = writeln!(out, "  - gen/p{i}");
            }
        }
        "alias-amplification" => {
            // A megabyte string aliased `n` times: small file, huge value.
            let _ = write!(
                out,
                "name: gen/amp\nmetadata:\n  s: &s \"{}\"\n  l: [{}]\n",
                "x".repeat(1_000_000),
                vec!["*s"; n].join(",")
            );
        }
        "lock-huge-value" => {
            // serde quotes a value of the wrong type whole.
            let _ = write!(
                out,
                "{{\"version\": 1, \"digest\": \"d\", \"skills\": \"{}\"}}",
                "A".repeat(n)
            );
        }
        "json-typo" => {
            out.push_str("{\"format\": \"cleveragents-export/1\", \"skills\": [");
            for i in 0..n {
                let _ = write!(out, "{{\"name\": \"gen/j{i}\"}},");
            }
            out.push_str("{\"name\": \"gen/last\"}], \"tools\": [] oops}");
        }
        "json-nesting" => {
            out.push_str("{\"format\": \"cleveragents-export/1\", \"skills\": [{\"name\": \"gen/deep\", \"metadata\": ");
            out.push_str(&"{\"a\": ".repeat(n));
            out.push('1');
            out.push_str(&"}".repeat(n));
            out.push_str("}], \"tools\": []}");
        }
        "toml-long-line" => {
            out.push_str("[database]\nurl = \"postgres://u:hunter2@db/x?");
            out.push_str(&"a".repeat(n));
            out.push('\n');
        }
        "skill-md-huge" => {
            out.push_str("---\nname: gen-huge\ndescription: huge\n---\n");
            out.push_str(&"body ".repeat(n / 5));
        }
        other => panic!("generated.txt: unknown generator `{other}`"),
    }
    out.into_bytes()
}

/// Writes the checked-in and generated cases under `root` and returns their
/// paths relative to it, sorted.
fn cases(root: &Path) -> Vec<String> {
    let mut cases = Vec::new();
    for folder in FOLDERS {
        let from = corpus().join(folder);
        copy_dir(&from, &root.join(folder));
        for entry in std::fs::read_dir(&from).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            cases.push(format!("{folder}/{name}"));
        }
    }
    let manifest = std::fs::read_to_string(corpus().join("generated.txt")).unwrap();
    for line in manifest.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [path, generator, n] = fields[..] else {
            panic!("generated.txt: expected PATH GENERATOR N: {line}");
        };
        let target = root.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, generate(generator, n.parse().unwrap())).unwrap();
        // A SKILL.md case is its folder.
        let case = path.strip_suffix("/SKILL.md").unwrap_or(path);
        cases.push(case.to_owned());
    }
    cases.sort();
    cases
}

#[test]
fn every_bad_input_fails_briefly_and_cleanly() {
    let sb = Sandbox::new();
    let root = sb.path("bad-input");
    let cases = cases(&root);
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut report = String::new();
    let mut problems = Vec::new();
    for case in &cases {
        let folder = case.split('/').next().unwrap();
        let name = case.rsplit('/').next().unwrap();
        let args = command(folder);
        let file = root.join(case);
        let out = sb.cmd().args(args).arg(&file).output().unwrap();
        let code = out.status.code().unwrap_or(-1);
        let Ok(stderr) = String::from_utf8(out.stderr.clone()) else {
            problems.push(format!("{case}: stderr is not UTF-8"));
            continue;
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = stderr.replace(&sb.dir.path().display().to_string(), "[SANDBOX]");
        let accepted = name.starts_with("ok-");
        if accepted && code != 0 {
            problems.push(format!("{case}: expected it to be accepted, exit {code}"));
        }
        if !accepted && code == 0 {
            problems.push(format!(
                "{case}: accepted (exit 0); rename it `ok-…` if that is right"
            ));
        }
        if code != 0 && code != 1 && code != 2 {
            problems.push(format!("{case}: exit {code} (a crash?)"));
        }
        if out.stderr.len() > MAX_STDERR {
            problems.push(format!("{case}: {} bytes of stderr", out.stderr.len()));
        }
        for (what, text) in [("stderr", &*stderr), ("stdout", &*stdout)] {
            if text.chars().any(|c| c.is_control() && c != '\n') {
                problems.push(format!("{case}: raw control character on {what}"));
            }
        }
        if stderr.contains("panicked") {
            problems.push(format!("{case}: panicked"));
        }
        let _ = writeln!(
            report,
            "### {case}: agents {} → exit {code}\n{}",
            args.join(" "),
            stderr.chars().take(MAX_STDERR).collect::<String>()
        );
        // `skill lint` reports on stdout.
        if folder == "agent-skill" {
            let stdout = stdout.replace(&sb.dir.path().display().to_string(), "[SANDBOX]");
            let _ = writeln!(report, "stdout:\n{stdout}");
        }
    }
    assert!(problems.is_empty(), "{}\n\n{report}", problems.join("\n"));
    insta::assert_snapshot!("corpus", report);
}
