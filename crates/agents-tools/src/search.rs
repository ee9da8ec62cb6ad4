//! `glob` and `grep`: ripgrep's walker (`.gitignore`, `.ignore`, hidden
//! files skipped, links not followed), its glob matcher and its searcher.
//!
//! A walk starts at the root and descends only towards the directory asked
//! for, so the ignore files between the two apply (as they would to `rg`
//! run from the root), and none above the root is read. Every file is then
//! opened beneath the root again (`glob` checks each match the same way):
//! a directory swapped for a link during the walk leads nowhere.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, sinks::Lossy};
use ignore::{WalkBuilder, WalkState};
use rustix::fs::{FileType, OFlags};
use tokio_util::sync::CancellationToken;

use crate::error::{Rule, ToolError, shown};
use crate::output::{Collector, cut_line};
use crate::roots::{Place, Roots};
use crate::spec::{GlobArgs, GrepArgs};
use crate::{Limits, ToolOutput};

/// The longest glob pattern taken, in bytes.
const MAX_GLOB: usize = 4096;

/// The most a compiled regular expression may take (the regex crate's
/// default is 10 MiB too; named here so a hostile pattern's error is ours).
const REGEX_SIZE_LIMIT: usize = 10 << 20;

pub(crate) fn glob(
    roots: &Roots,
    limits: &Limits,
    args: GlobArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let pattern = args.pattern.as_str();
    if pattern.is_empty() {
        return Err(ToolError::Failed("the glob pattern is empty".into()));
    }
    if pattern.starts_with('/') {
        return Err(ToolError::refused(
            Rule::OutsideRoots,
            format!(
                "the pattern `{}` is absolute; patterns match beneath `root`",
                shown(pattern)
            ),
        ));
    }
    if pattern.split('/').any(|part| part == "..") {
        return Err(ToolError::refused(
            Rule::ParentDir,
            format!("the pattern `{}` climbs with `..`", shown(pattern)),
        ));
    }
    if pattern.len() > MAX_GLOB {
        return Err(ToolError::Failed(format!(
            "the glob pattern `{}` is {} bytes; at most {MAX_GLOB} are taken",
            shown(pattern),
            pattern.len()
        )));
    }
    let invalid = |err: globset::Error| {
        ToolError::Failed(format!(
            "invalid glob pattern `{}`: {}",
            shown(pattern),
            agents_core::text::bounded_message(&err.kind().to_string())
        ))
    };
    // A set of one: its `build` answers an error where a lone glob's
    // `compile_matcher` would panic.
    let glob = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(invalid)?;
    let matcher = globset::GlobSetBuilder::new()
        .add(glob)
        .build()
        .map_err(invalid)?;
    let base = roots.locate(args.root.as_deref().unwrap_or(""))?;
    let dir = roots.open(&base, OFlags::PATH | OFlags::DIRECTORY)?;
    drop(dir);
    let base_rel = base.normalized();
    // The directories the pattern names literally: the walk starts there.
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal: PathBuf = parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .take_while(|part| !part.contains(['*', '?', '[', '{', '\\']))
        .collect();
    let start = base_rel.join(&literal);
    let found = Mutex::new(Vec::new());
    let bytes = AtomicUsize::new(0);
    let full = AtomicBool::new(false);
    let cap = limits.max_output_bytes;
    let walked = walk(roots, &base, &start, limits, cancel, || {
        |rel: &Path| {
            let Ok(beneath) = rel.strip_prefix(&base_rel) else {
                return true;
            };
            if !matcher.is_match(beneath) {
                return true;
            }
            // Still beneath the root, and no link, now.
            if roots
                .open_found(base.root, rel, OFlags::PATH | OFlags::NOFOLLOW)
                .is_none()
            {
                return true;
            }
            let shown = roots.display(base.root, rel);
            let total = bytes.fetch_add(shown.len() + 1, Ordering::Relaxed) + shown.len() + 1;
            if let Ok(mut found) = found.lock() {
                found.push(shown);
            }
            if total > cap {
                full.store(true, Ordering::Relaxed);
                return false;
            }
            true
        }
    })?;
    let mut found = found.into_inner().unwrap_or_default();
    found.sort_unstable();
    let mut out = Collector::new(cap);
    let listed = found.iter().take_while(|path| out.line(path)).count();
    if out.is_empty() && !out.is_cut() {
        return Ok(ToolOutput::text(
            format!("[no files match `{}`{}]\n", shown(pattern), walked.note()),
            false,
        ));
    }
    let stopped = full.load(Ordering::Relaxed);
    Ok(walked.finish(out, || {
        if stopped {
            format!(
                "cut: {listed} paths shown; the walk stopped at the output limit, so more may match"
            )
        } else {
            format!(
                "cut: {listed} paths shown; {} more not shown",
                found.len() - listed
            )
        }
    }))
}

pub(crate) fn grep(
    roots: &Roots,
    limits: &Limits,
    args: GrepArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    if args.pattern.contains('\0') {
        return Err(ToolError::refused(
            Rule::NulByte,
            "the pattern holds a NUL byte",
        ));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.ignore_case.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build(&args.pattern)
        .map_err(|err| {
            ToolError::Failed(format!(
                "invalid regular expression `{}`: {}",
                shown(&args.pattern),
                agents_core::text::bounded_message(&err.to_string())
            ))
        })?;
    let place = roots.locate(args.path.as_deref().unwrap_or(""))?;
    let fd = roots.open(&place, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY)?;
    let stat = rustix::fs::fstat(&fd).map_err(|err| ToolError::io("search", &place.raw, err))?;
    let cap = limits.max_output_bytes;
    let searcher = || {
        SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .build()
    };
    // One file asked for by name: searched whatever the ignore files say.
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::Directory => {}
        FileType::RegularFile => {
            let shown = roots.display(place.root, &place.normalized());
            let mut block = String::new();
            search_file(
                &mut searcher(),
                &matcher,
                &File::from(fd),
                &shown,
                &mut block,
                cap,
            );
            let mut out = Collector::new(cap);
            out.partial(&block);
            return Ok(finish_grep(out, block.is_empty(), false, Walked::default()));
        }
        _ => {
            return Err(ToolError::Failed(format!(
                "`{}` is not a regular file or a directory",
                shown(&place.raw)
            )));
        }
    }
    drop(fd);
    let found: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let bytes = AtomicUsize::new(0);
    let full = AtomicBool::new(false);
    let start = place.normalized();
    let (found_in, bytes, full_at, root) = (&found, &bytes, &full, place.root);
    let walked = walk(roots, &place, &start, limits, cancel, || {
        let mut searcher = searcher();
        let matcher = matcher.clone();
        move |rel: &Path| {
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK;
            let Some(fd) = roots.open_found(root, rel, flags) else {
                return true;
            };
            let shown = roots.display(root, rel);
            let mut block = String::new();
            search_file(
                &mut searcher,
                &matcher,
                &File::from(fd),
                &shown,
                &mut block,
                cap,
            );
            if block.is_empty() {
                return true;
            }
            let total = bytes.fetch_add(block.len(), Ordering::Relaxed) + block.len();
            if let Ok(mut found) = found_in.lock() {
                found.push((shown, block));
            }
            if total > cap {
                full_at.store(true, Ordering::Relaxed);
                return false;
            }
            true
        }
    })?;
    let mut found = found.into_inner().unwrap_or_default();
    found.sort_unstable();
    let mut out = Collector::new(cap);
    for (_, block) in &found {
        if !out.partial(block) {
            break;
        }
    }
    Ok(finish_grep(
        out,
        found.is_empty(),
        full.load(Ordering::Relaxed),
        walked,
    ))
}

fn finish_grep(out: Collector, none: bool, stopped: bool, walked: Walked) -> ToolOutput {
    if none {
        return ToolOutput::text(format!("[no matches{}]\n", walked.note()), false);
    }
    walked.finish(out, || {
        format!(
            "cut: the matches reached the output limit{}",
            if stopped {
                "; the search stopped there, more may exist"
            } else {
                ""
            },
        )
    })
}

/// Appends `shown:line:text` to `block` for each matching line of `file`,
/// stopping once `block` passes `cap`.
fn search_file(
    searcher: &mut Searcher,
    matcher: &grep_regex::RegexMatcher,
    file: &File,
    shown: &str,
    block: &mut String,
    cap: usize,
) {
    // An unreadable file (or one that stops being readable) adds what it
    // gave before.
    let _ = searcher.search_file(
        matcher,
        file,
        Lossy(|number, line| {
            let line = line.trim_end_matches(['\n', '\r']);
            block.push_str(shown);
            block.push(':');
            block.push_str(&number.to_string());
            block.push(':');
            block.push_str(&cut_line(line));
            block.push('\n');
            Ok(block.len() <= cap)
        }),
    );
}

/// What a walk met besides files.
#[derive(Debug, Default)]
struct Walked {
    /// Entries it could not read (permissions, a directory gone).
    errors: usize,
}

impl Walked {
    /// `out`'s text, with `cut` (and what the walk skipped) when it was
    /// cut, or a line of its own saying what the walk skipped.
    fn finish(self, out: Collector, cut: impl FnOnce() -> String) -> ToolOutput {
        let (text, truncated) = out.finish(|| format!("{}{}", cut(), self.note()));
        let text = if !truncated && self.errors > 0 {
            format!("{text}[{}]\n", self.note().trim_start_matches("; "))
        } else {
            text
        };
        ToolOutput::text(text, truncated)
    }

    fn note(&self) -> String {
        if self.errors == 0 {
            String::new()
        } else {
            format!("; {} paths could not be read and were skipped", self.errors)
        }
    }
}

/// Walks the regular files beneath `start` (a path beneath `place`'s root),
/// calling the visitor each thread makes with each one's path relative to
/// the root; a visitor returning false stops the walk.
fn walk<F, V>(
    roots: &Roots,
    place: &Place,
    start: &Path,
    limits: &Limits,
    cancel: &CancellationToken,
    make: F,
) -> Result<Walked, ToolError>
where
    F: Fn() -> V + Sync,
    V: FnMut(&Path) -> bool + Send,
{
    let root = roots
        .root(place.root)
        .ok_or_else(|| ToolError::Failed("the workspace roots changed during the call".into()))?;
    let threads = match limits.search_threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
        n => n,
    };
    let errors = AtomicUsize::new(0);
    let reached = AtomicBool::new(start.as_os_str().is_empty());
    // From the root, towards `start`: the ignore files on the way apply.
    let mut builder = builder_at(&root.path, threads);
    if !start.as_os_str().is_empty() {
        let (root_path, target) = (root.path.clone(), start.to_path_buf());
        builder.filter_entry(move |entry| {
            entry
                .path()
                .strip_prefix(&root_path)
                .is_ok_and(|rel| target.starts_with(rel) || rel.starts_with(&target))
        });
    }
    run(
        &builder, &root.path, start, cancel, &errors, &reached, &make,
    );
    if !reached.load(Ordering::Relaxed) && !cancel.is_cancelled() {
        // `start` is itself ignored (or hidden): asked for by name, it is
        // walked all the same, as `rg` walks a path it is given.
        let from = root.path.join(start);
        if roots
            .open_found(place.root, start, OFlags::PATH | OFlags::DIRECTORY)
            .is_some()
        {
            run(
                &builder_at(&from, threads),
                &root.path,
                start,
                cancel,
                &errors,
                &reached,
                &make,
            );
        }
    }
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    Ok(Walked {
        errors: errors.into_inner(),
    })
}

fn builder_at(from: &Path, threads: usize) -> WalkBuilder {
    let mut builder = WalkBuilder::new(from);
    builder
        .threads(threads)
        .follow_links(false)
        .hidden(true)
        .parents(false)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false);
    builder
}

fn run<F, V>(
    builder: &WalkBuilder,
    root: &Path,
    start: &Path,
    cancel: &CancellationToken,
    errors: &AtomicUsize,
    reached: &AtomicBool,
    make: &F,
) where
    F: Fn() -> V + Sync,
    V: FnMut(&Path) -> bool + Send,
{
    builder.build_parallel().run(|| {
        let mut visit = make();
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                errors.fetch_add(1, Ordering::Relaxed);
                return WalkState::Continue;
            };
            let Ok(rel) = entry.path().strip_prefix(root) else {
                return WalkState::Continue;
            };
            if rel == start {
                reached.store(true, Ordering::Relaxed);
            }
            if !rel.starts_with(start) || !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            if visit(rel) {
                WalkState::Continue
            } else {
                WalkState::Quit
            }
        })
    });
}
