#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
//! The memory `agents skill add` needs for a file of many skills: a small
//! multiple of the file, not one copy of its skills per stage of the write.
//!
//! This is its own test binary because the peak is read with
//! `getrusage(RUSAGE_CHILDREN)`, the largest resident size of any child this
//! process has waited for: no other test's children may share the process.

#[allow(dead_code, reason = "the CLI tests' helpers; this binary uses a few")]
#[path = "cli/support/mod.rs"]
mod support;

use std::fmt::Write as _;

use nix::sys::resource::{UsageWho, getrusage};

use support::Sandbox;

/// Peak resident bytes of the largest child waited for so far.
fn children_peak() -> u64 {
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap();
    // Linux reports kilobytes.
    u64::try_from(usage.max_rss()).unwrap() * 1024
}

/// 30,000 small skills that include one another and name tools, each
/// document made by `document` from the skill's YAML lines: about 4 MB,
/// where every byte of YAML becomes several bytes of typed skill.
fn many_skills(namespace: &str, head: &str, document: impl Fn(&str) -> String) -> String {
    let mut text = head.to_owned();
    for i in 0..30_000 {
        if i > 0 || !head.is_empty() {
            text.push_str("---\n");
        }
        let mut skill = format!(
            "name: {namespace}{}/skill_{i}\ndescription: skill number {i}\ntools:\n  - builtin/read_file\n  - builtin/grep\n",
            i % 50
        );
        if i > 3 {
            writeln!(
                skill,
                "includes:\n  - {namespace}{}/skill_{}",
                (i - 3) % 50,
                i - 3
            )
            .unwrap();
        }
        text.push_str(&document(&skill));
    }
    text
}

/// Runs `agents ARGS` on `text` (written to `file`) and returns the peak
/// above `fixed` as a multiple of the text's size. The peak read is the
/// largest of every child so far, so it bounds this command's from above.
fn multiple(sb: &Sandbox, fixed: u64, file: &str, text: &str, args: &[&str]) -> f64 {
    sb.write(file, text);
    sb.run(args).ok();
    let peak = children_peak();
    let size = text.len() as u64;
    let multiple = peak.saturating_sub(fixed) as f64 / size as f64;
    eprintln!(
        "agents {}: {size} bytes, peak {peak} bytes, fixed {fixed} bytes, {multiple:.1}x the file",
        args.join(" ")
    );
    multiple
}

#[test]
fn a_file_of_many_skills_is_held_once() {
    let sb = Sandbox::new();
    // The fixed cost first: the process, its runtime and an open database.
    sb.write("one.yaml", "name: one/skill\ntools: [builtin/grep]\n");
    sb.run(&["skill", "add", "one.yaml"]).ok();
    let fixed = children_peak();
    // An export is read one document at a time, like a skill file (the
    // earlier one-document format held all of its parse events: 23x).
    let export = many_skills("imp", "format: cleveragents-export/2\n", |skill| {
        format!(
            "skill:\n{}",
            skill
                .lines()
                .map(|l| format!("  {l}\n"))
                .collect::<String>()
        )
    });
    let import = multiple(
        &sb,
        fixed,
        "all.yaml",
        &export,
        &["db", "import", "all.yaml"],
    );
    let skills = many_skills("ns", "", str::to_owned);
    let add = multiple(
        &sb,
        fixed,
        "many.yaml",
        &skills,
        &["skill", "add", "many.yaml"],
    );
    // The typed skills alone are about 4.4x such a file; holding them a
    // second time (a copy for the check, the encoded rows, copies returned
    // by the store) took `skill add` to 22x.
    for (what, multiple) in [("db import", import), ("skill add", add)] {
        assert!(multiple < 12.0, "{what} held {multiple:.1}x the file");
    }
}
