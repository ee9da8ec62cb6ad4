//! Reading the files commands are given, and reporting a command that
//! writes many files one by one.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agents_config::InputKind;
use agents_core::Lockfile;
use agents_definition::{DefinitionError, Limits};
use serde_json::json;

use crate::cli::Format;
use crate::context::Context;
use crate::output::{self, Failure};

/// Largest file we read, whatever its kind (each kind's own limit, in
/// `[limits]`, is at most this): a mistaken `agents skill add /dev/zero`
/// cannot eat the machine.
pub(crate) const MAX_DEFINITION_BYTES: u64 = agents_config::MAX_INPUT_BYTES;

/// Reads a UTF-8 text file, with errors that name it.
pub fn read_text(path: &Path) -> Result<String, Failure> {
    Ok(read_text_as_read(path)?.0)
}

/// [`read_text`], with the file's metadata as it was read (`None` for
/// standard input): who owns it, who may write it.
pub fn read_text_as_read(path: &Path) -> Result<(String, Option<std::fs::Metadata>), Failure> {
    read_input_text(path, MAX_DEFINITION_BYTES, |_, _| {
        Failure::new(
            "io",
            format!(
                "`{}` is larger than {} MiB",
                path.display(),
                MAX_DEFINITION_BYTES / 1024 / 1024
            ),
        )
    })
}

/// Reads a definition file (skills, tools, a plan, an export) within the
/// limits for its `kind` and parses it with `parse`. The file is refused by
/// its size before it is read, and a stream that turns out larger at the
/// limit; an error a limit caused says which setting raises it.
pub fn parse_definition<T>(
    ctx: &Context,
    path: &Path,
    kind: InputKind,
    parse: impl FnOnce(&str, &str, &Limits) -> Result<T, DefinitionError>,
) -> Result<T, Failure> {
    let limits = ctx.settings.limits.of(kind);
    let shown = path.display().to_string();
    let failure = |err: DefinitionError| {
        let advice = err
            .limit
            .and_then(|limit| ctx.settings.limits.advice(kind, limit));
        let mut failure = Failure::from(err);
        if let Some(advice) = advice {
            failure.message.push_str(&format!("\n  = help: {advice}"));
        }
        failure
    };
    let cap = u64::try_from(limits.max_bytes)
        .unwrap_or(u64::MAX)
        .min(MAX_DEFINITION_BYTES);
    let text = read_capped(path, cap, |len, exact| {
        limits.check_size(len, exact, &shown).err().map_or_else(
            || Failure::new("io", format!("`{shown}` is too large")),
            failure,
        )
    })?;
    parse(&text, &shown, &limits).map_err(failure)
}

/// Reads at most `cap` bytes of UTF-8 text from the input file `path` (a
/// regular file, or `-` for standard input: [`agents_fs::read_input`]);
/// `too_large` makes the error for a larger file, given its size and
/// whether that size is exact (a stream is read only to one byte past the
/// cap).
fn read_capped(
    path: &Path,
    cap: u64,
    too_large: impl Fn(u64, bool) -> Failure,
) -> Result<String, Failure> {
    Ok(read_input_text(path, cap, too_large)?.0)
}

/// [`read_capped`], with the file's metadata as read.
fn read_input_text(
    path: &Path,
    cap: u64,
    too_large: impl Fn(u64, bool) -> Failure,
) -> Result<(String, Option<std::fs::Metadata>), Failure> {
    let shown = path.display();
    let (bytes, metadata) = match agents_fs::read_input(path, cap) {
        Ok(input) => (input.bytes, input.metadata),
        Err(agents_fs::InputError::TooLarge { size, exact, .. }) => {
            return Err(too_large(size, exact));
        }
        Err(err @ agents_fs::InputError::NotAFile { .. }) => {
            return Err(Failure::new("not_a_file", err.to_string()));
        }
        Err(err) => return Err(Failure::new("io", err.to_string())),
    };
    let text = String::from_utf8(bytes).map_err(|err| {
        let valid = err.utf8_error().valid_up_to();
        let before = err.as_bytes().get(..valid).unwrap_or_default();
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        Failure::new(
            "invalid_definition",
            format!("{shown}:{line}: file is not valid UTF-8 (byte offset {valid})"),
        )
    })?;
    Ok((text, metadata))
}

/// What one file's write registered, and the warnings it raised.
pub struct Written {
    pub names: Vec<String>,
    /// Every warning (the JSON result's).
    pub warnings: Vec<String>,
    /// The warnings stderr shows (a long list cut), each naming the file
    /// (and the line, where it is known).
    pub shown: Vec<output::Warning>,
}

/// Runs `write` once per file (each file is its own transaction), reporting
/// each file on its own; exit 1 when any failed. `write` returns the names
/// it registered.
pub async fn for_each_file<'a, F, Fut>(
    format: Format,
    files: &'a [PathBuf],
    verb: &str,
    noun: &str,
    mut write: F,
) -> Result<ExitCode, Failure>
where
    F: FnMut(&'a Path) -> Fut,
    Fut: Future<Output = Result<Written, Failure>>,
{
    let mut results = Vec::new();
    let mut failed = false;
    for file in files {
        let shown = file.display().to_string();
        match write(file).await {
            Ok(Written {
                names,
                warnings,
                shown: cut,
            }) => {
                output::warn_all_detailed(format, cut);
                if format == Format::Table {
                    let plural = if names.len() == 1 { "" } else { "s" };
                    output::line(format!(
                        "{verb} {} {noun}{plural} from {shown}: {}",
                        names.len(),
                        preview(&names)
                    ))?;
                }
                results.push(json!({"file": shown, "ok": true, format!("{noun}s"): names, "warnings": warnings}));
            }
            Err(failure) => {
                failed = true;
                output::report_file_error(format, &failure);
                results.push(json!({"file": shown, "ok": false, "error": {"kind": failure.kind, "message": failure.message}}));
            }
        }
    }
    if format.structured() {
        output::json(&results)?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The first few names, and how many more there are.
pub(crate) fn preview<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 5;
    let mut text = names
        .iter()
        .take(SHOWN)
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(", … ({} more)", names.len() - SHOWN));
    }
    text
}

/// Prefixes a failure's message with the file it is about.
pub fn in_file(file: &Path, failure: Failure) -> Failure {
    Failure {
        message: format!("{}: {}", file.display(), failure.message),
        ..failure
    }
}

/// Reads and parses a lock file.
pub fn read_lock(file: &Path) -> Result<Lockfile, Failure> {
    let text = read_text(file)?;
    Ok(Lockfile::parse(&text, &file.display().to_string())?)
}
