//! `agents skill lint`: validation of skill folders without registering.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::scan::{self, Candidate, Dedup};
use crate::skill_md::{Rule, SKILL_MD, SkillMdError};

/// The outcome for one skill folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LintedFolder {
    /// The folder as found.
    pub folder: PathBuf,
    /// The skill's `name` when it loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// No errors (warnings allowed).
    pub ok: bool,
    /// Everything that stops the folder from loading.
    pub errors: Vec<SkillMdError>,
    /// Problems that do not.
    pub warnings: Vec<SkillMdError>,
}

/// The outcome for every path given to [`lint`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LintReport {
    /// One entry per skill folder (or per unusable path), in argument order,
    /// then folder name.
    pub folders: Vec<LintedFolder>,
    /// Unreadable entries and duplicate links met while scanning.
    pub warnings: Vec<String>,
}

impl LintReport {
    /// True when no folder has errors.
    pub fn is_ok(&self) -> bool {
        self.folders.iter().all(|folder| folder.ok)
    }

    /// Number of folders with errors.
    pub fn failed(&self) -> usize {
        self.folders.iter().filter(|folder| !folder.ok).count()
    }
}

impl fmt::Display for LintReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for warning in &self.warnings {
            writeln!(f, "warning: {warning}")?;
        }
        for folder in &self.folders {
            let status = if folder.ok { "ok   " } else { "error" };
            write!(f, "{status} {}", folder.folder.display())?;
            if let Some(name) = &folder.name {
                write!(f, " ({name})")?;
            }
            writeln!(f)?;
            for error in &folder.errors {
                writeln!(f, "  error: {error}")?;
            }
            for warning in &folder.warnings {
                writeln!(f, "  warning: {warning}")?;
            }
        }
        write!(
            f,
            "{} skill folder(s) checked, {} with errors",
            self.folders.len(),
            self.failed()
        )
    }
}

/// Validates skill folders without registering anything. Each path may be a
/// skill folder (holding `SKILL.md`), a `SKILL.md` file, or a directory of
/// skill folders. A path that does not exist, or a directory with no skill
/// folder at all, is an error: in an author's CI it is a typo.
pub fn lint(paths: &[PathBuf]) -> LintReport {
    let mut report = LintReport::default();
    let mut dedup = Dedup::default();
    // `Err` holds a path problem, reported in place to keep argument order.
    let mut planned: Vec<Result<Candidate, LintedFolder>> = Vec::new();
    for path in paths {
        let mut add = |folder: PathBuf, planned: &mut Vec<_>, warnings: &mut Vec<String>| match dedup.add(folder, warnings) {
            Ok(Some(candidate)) => planned.push(Ok(candidate)),
            Ok(None) => {}
            Err(err) => planned.push(Err(failed(&err.folder, err.problems))),
        };
        let path_error = |message: String| {
            failed(path, vec![SkillMdError::new(path, None, Rule::Path, message)])
        };
        let Ok(meta) = std::fs::metadata(path) else {
            planned.push(Err(path_error("does not exist".into())));
            continue;
        };
        if meta.is_file() {
            if path.file_name().is_some_and(|name| name == SKILL_MD) {
                let folder = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
                let folder = if folder.as_os_str().is_empty() { PathBuf::from(".") } else { folder };
                add(resolve_unnamed(folder), &mut planned, &mut report.warnings);
            } else {
                planned.push(Err(path_error(format!(
                    "expected a skill folder, a `{SKILL_MD}` file or a folder of skill folders"
                ))));
            }
        } else if std::fs::symlink_metadata(path.join(SKILL_MD)).is_ok() {
            add(resolve_unnamed(path.clone()), &mut planned, &mut report.warnings);
        } else if meta.is_dir() {
            let folders = scan::skill_folders(path, &mut report.warnings);
            if folders.is_empty() {
                planned.push(Err(path_error(format!(
                    "no skill folders found: expected subfolders holding a `{SKILL_MD}`"
                ))));
            }
            for folder in folders {
                add(folder, &mut planned, &mut report.warnings);
            }
        } else {
            planned.push(Err(path_error("not a file or directory".into())));
        }
    }

    let candidates: Vec<Candidate> = planned.iter().filter_map(|p| p.as_ref().ok()).cloned().collect();
    let mut loaded = scan::load_all(&candidates, None).into_iter();
    for entry in planned {
        let folder = match entry {
            Err(folder) => folder,
            Ok(candidate) => match loaded.next() {
                Some(Ok(skill)) => LintedFolder {
                    folder: candidate.folder,
                    name: skill
                        .tool
                        .name
                        .split_once('/')
                        .map(|(_, name)| name.to_owned()),
                    ok: true,
                    errors: Vec::new(),
                    warnings: skill.warnings,
                },
                Some(Err(err)) => failed(&candidate.folder, err.problems),
                None => continue,
            },
        };
        report.folders.push(folder);
    }
    report
}

fn failed(folder: &Path, errors: Vec<SkillMdError>) -> LintedFolder {
    LintedFolder {
        folder: folder.to_path_buf(),
        name: None,
        ok: false,
        errors,
        warnings: Vec::new(),
    }
}

/// `.` (or `..`) has no name for the folder-name rule: use the resolved path.
fn resolve_unnamed(folder: PathBuf) -> PathBuf {
    if folder.file_name().is_some() {
        return folder;
    }
    std::fs::canonicalize(&folder).unwrap_or(folder)
}
