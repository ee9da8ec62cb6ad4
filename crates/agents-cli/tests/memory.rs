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

#[test]
fn adding_a_file_of_many_skills_holds_a_small_multiple_of_it() {
    let sb = Sandbox::new();
    // The fixed cost first: the process, its runtime and an open database.
    sb.write("one.yaml", "name: one/skill\ntools: [builtin/grep]\n");
    sb.run(&["skill", "add", "one.yaml"]).ok();
    let fixed = children_peak();
    // 30,000 small skills that include one another and name tools: about
    // 4 MB, where every byte of YAML becomes several bytes of typed skill.
    let mut text = String::new();
    for i in 0..30_000 {
        if i > 0 {
            text.push_str("---\n");
        }
        writeln!(
            text,
            "name: ns{}/skill_{i}\ndescription: skill number {i}\ntools:\n  - builtin/read_file\n  - builtin/grep",
            i % 50
        )
        .unwrap();
        if i > 3 {
            writeln!(text, "includes:\n  - ns{}/skill_{}", (i - 3) % 50, i - 3).unwrap();
        }
    }
    sb.write("many.yaml", &text);
    sb.run(&["skill", "add", "many.yaml"]).ok();
    let peak = children_peak();
    let size = text.len() as u64;
    let multiple = peak.saturating_sub(fixed) as f64 / size as f64;
    eprintln!(
        "skill add of {size} bytes: peak {peak} bytes, fixed {fixed} bytes, {multiple:.1}x the file"
    );
    // The typed skills alone are about 4.4x this file; holding them a second
    // time (a copy for the check, the encoded rows, copies returned by the
    // store) took it past 17x.
    assert!(
        multiple < 12.0,
        "skill add held {multiple:.1}x the file ({peak} bytes peak, {fixed} fixed, file {size})"
    );
}
