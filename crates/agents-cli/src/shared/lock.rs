//! The lock gate as people see it: a diff printed (stdout, or stderr where
//! stdout is a protocol channel) and the refusal. The verdict itself is the
//! service's ([`agents_registry::Locked`]).

use std::path::Path;

use agents_core::LockDiff;
use agents_registry::Locked;
use serde_json::Value;

use crate::cli::Format;
use crate::output::{self, Failure};

/// The diff as an object: the lock, whether it matches, and only what differs.
pub fn diff_json(diff: &LockDiff, file: &Path) -> Value {
    let mut value = serde_json::to_value(diff).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut value {
        fields.insert("lock".into(), Value::from(file.display().to_string()));
        fields.insert("matches".into(), Value::Bool(diff.is_clean()));
    }
    value
}

/// The diff on stdout: a JSON object (in JSON and the export formats), or
/// one line per differing entry.
pub fn print_diff(format: Format, diff: &LockDiff, file: &Path) -> Result<(), Failure> {
    if format.structured() || format.is_export() {
        return output::json(&diff_json(diff, file));
    }
    output::raw(&diff.to_text(&file.display().to_string(), None))
}

/// The diff on stderr, where stdout is a protocol channel (`mcp serve`):
/// one JSON line under `--format json`, else the lines of [`print_diff`].
fn report_diff(format: Format, diff: &LockDiff, file: &Path) {
    output::report(
        format,
        &diff.to_text(&file.display().to_string(), None),
        &diff_json(diff, file),
    );
}

/// Where a drifted resolution's diff goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffTo {
    /// The diff is the result: stdout.
    Stdout,
    /// Stdout is a client's channel: stderr.
    Stderr,
}

/// `locked`'s value when it matches the lock `file`; otherwise `warnings`
/// (the resolution's own), then each differing skill's diff, then the
/// refusal (`lock_mismatch`).
pub fn gate<T>(
    format: Format,
    locked: Locked<T>,
    file: &Path,
    warnings: impl FnOnce(&T) -> Vec<String>,
    to: DiffTo,
) -> Result<T, Failure> {
    let Some(mismatch) = locked.mismatch(&file.display().to_string()) else {
        return Ok(locked.value);
    };
    output::warn_all(format, warnings(&locked.value));
    for diff in locked.drifted() {
        match to {
            DiffTo::Stdout => print_diff(format, diff, file)?,
            DiffTo::Stderr => report_diff(format, diff, file),
        }
    }
    Err(mismatch.into())
}
