//! `agents skill lint`: validation of skill folders without registering.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::scan::{self, Dedup, Probe};
use crate::skill_md::{Rule, SKILL_MD, SKILL_MD_LOWERCASE, SkillMdError, find_skill_md};

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
    /// Things worth knowing that are not problems here: the fields this
    /// registry adds to the standard, which the Agent Skills reference
    /// validator rejects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
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
            write!(
                f,
                "{status} {}",
                agents_core::text::shown_path(&folder.folder)
            )?;
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
            for note in &folder.notes {
                writeln!(f, "  note: {note}")?;
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
    let mut folders: Vec<PathBuf> = Vec::new();
    let mut planned = Vec::new();
    for path in paths {
        let path_error = |message: String| {
            Planned::Problem(failed(
                path,
                vec![SkillMdError::new(path, None, Rule::Path, message)],
            ))
        };
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                planned.push(path_error("does not exist".into()));
                continue;
            }
            // A link loop, a folder on the way that cannot be entered.
            Err(err) => {
                planned.push(path_error(format!("cannot be read: {err}")));
                continue;
            }
        };
        if meta.is_file() {
            if path
                .file_name()
                .is_some_and(|name| name == SKILL_MD || name == SKILL_MD_LOWERCASE)
            {
                let folder = match path.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                planned.push(Planned::Folder(folders.len()));
                folders.push(scan::resolve_unnamed(folder));
            } else {
                planned.push(path_error(format!(
                    "expected a skill folder, a `{SKILL_MD}` file or a folder of skill folders"
                )));
            }
        } else if !meta.is_dir() {
            planned.push(path_error("not a file or directory".into()));
        } else {
            let subfolders = match find_skill_md(path) {
                Ok(Some(_)) => {
                    planned.push(Planned::Folder(folders.len()));
                    folders.push(scan::resolve_unnamed(path.clone()));
                    continue;
                }
                Ok(None) => scan::subfolders(path, &mut report.warnings),
                Err(err) => Err(err),
            };
            match subfolders {
                Ok(found) => {
                    let start = folders.len();
                    folders.extend(found);
                    planned.push(Planned::Directory {
                        path,
                        range: start..folders.len(),
                    });
                }
                Err(err) => {
                    let err = scan::unreadable(path, &err);
                    planned.push(Planned::Problem(failed(path, err.problems)));
                }
            }
        }
    }

    let mut probes: Vec<Option<Probe>> = scan::probe_all(&folders, None)
        .into_iter()
        .map(Some)
        .collect();
    let dedup = Dedup::new(probes.iter().map(Option::as_ref));
    for plan in planned {
        match plan {
            Planned::Problem(folder) => report.folders.push(folder),
            Planned::Folder(index) => {
                // `probes` has one entry per folder.
                if let (Some(path), Some(probe)) = (folders.get(index), probes.get_mut(index))
                    && let Some(folder) = outcome(
                        (index, path),
                        probe.take(),
                        (&dedup, &folders),
                        &mut report.warnings,
                    )
                {
                    report.folders.push(folder);
                }
            }
            Planned::Directory { path, range } => {
                let mut skills = 0;
                for index in range {
                    let (Some(path), Some(probe)) = (folders.get(index), probes.get_mut(index))
                    else {
                        continue;
                    };
                    if matches!(probe, Some(Probe::NotASkill) | None) {
                        continue;
                    }
                    skills += 1;
                    if let Some(folder) = outcome(
                        (index, path),
                        probe.take(),
                        (&dedup, &folders),
                        &mut report.warnings,
                    ) {
                        report.folders.push(folder);
                    }
                }
                if skills == 0 {
                    report.folders.push(failed(
                        path,
                        vec![SkillMdError::new(
                            path,
                            None,
                            Rule::Path,
                            format!(
                                "no skill folders found: expected subfolders holding a `{SKILL_MD}`"
                            ),
                        )],
                    ));
                }
            }
        }
    }
    report
}

enum Planned<'a> {
    /// The path itself is unusable.
    Problem(LintedFolder),
    /// One skill folder, by index.
    Folder(usize),
    /// A directory whose subfolders are `range`.
    Directory {
        path: &'a Path,
        range: std::ops::Range<usize>,
    },
}

/// The report entry for one probed folder; `None` for a duplicate.
fn outcome(
    (index, folder): (usize, &Path),
    probe: Option<Probe>,
    (dedup, folders): (&Dedup, &[PathBuf]),
    warnings: &mut Vec<String>,
) -> Option<LintedFolder> {
    match probe? {
        Probe::NotASkill => Some(failed(
            folder,
            vec![SkillMdError::new(
                folder,
                None,
                Rule::Path,
                format!("no `{SKILL_MD}` in this folder"),
            )],
        )),
        Probe::Unresolved(err) => Some(failed(&err.folder, err.problems)),
        Probe::Skill { realpath, outcome } => {
            if !dedup.keep(index, folder, &realpath, folders, warnings) {
                return None;
            }
            Some(match *outcome {
                Ok(skill) => LintedFolder {
                    notes: crate::skill_md::EXTENSION_FIELDS
                        .iter()
                        .zip([&skill.tool.input_schema, &skill.tool.output_schema])
                        .filter(|(_, schema)| schema.is_some())
                        .map(|(field, _)| {
                            format!(
                                "`{field}` is an extension of this registry: the Agent Skills \
                                 reference validator (`skills-ref validate`) rejects it"
                            )
                        })
                        .collect(),
                    folder: folder.to_path_buf(),
                    name: skill
                        .tool
                        .name
                        .split_once('/')
                        .map(|(_, name)| name.to_owned()),
                    ok: true,
                    errors: Vec::new(),
                    warnings: skill.warnings,
                },
                Err(err) => LintedFolder {
                    warnings: err.warnings,
                    ..failed(folder, err.problems)
                },
            })
        }
    }
}

fn failed(folder: &Path, errors: Vec<SkillMdError>) -> LintedFolder {
    LintedFolder {
        folder: folder.to_path_buf(),
        name: None,
        ok: false,
        errors,
        warnings: Vec::new(),
        notes: Vec::new(),
    }
}
