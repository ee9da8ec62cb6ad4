//! One skill folder → one `ToolSpec`.

use std::fmt;
use std::path::{Path, PathBuf};

use agents_core::{Meta, ToolSource, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::skill_md::{self, Rule, SKILL_MD, SkillDoc, SkillMdError};

/// Discovered tools are registered as `agent_skills/<name>`.
pub const TOOL_NAMESPACE: &str = "agent_skills";

/// A skill folder that cannot be loaded, with every problem found in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderError {
    /// The folder as it was found (not resolved).
    pub folder: PathBuf,
    /// Each problem with its file, line and rule.
    pub problems: Vec<SkillMdError>,
    /// What `SKILL.md` would be warned of, found beside the problems: a
    /// report shows every finding at once, not the warnings only once the
    /// errors are fixed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<SkillMdError>,
}

impl FolderError {
    /// A stable machine-readable kind (a folder's `SKILL.md` that does not
    /// read or validate).
    pub fn kind(&self) -> &'static str {
        "invalid_skill_md"
    }
}

impl fmt::Display for FolderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "{one}"),
            problems => {
                write!(
                    f,
                    "skill folder `{}` has {} problems:",
                    agents_core::text::shown_path(&self.folder),
                    problems.len()
                )?;
                for problem in problems {
                    write!(f, "\n  {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for FolderError {}

/// A loaded skill folder: its tool and the warnings that did not stop it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadedSkill {
    /// The tool to register.
    pub tool: ToolSpec,
    /// Unknown fields, a byte order mark, coerced metadata values.
    pub warnings: Vec<SkillMdError>,
}

/// Loads the skill in `folder` (which holds a `SKILL.md`, or a `skill.md`
/// and no `SKILL.md`) as a tool named
/// `agent_skills/<name>`. The folder's name as given (a symlink's own name)
/// must equal `name`; `source_metadata.path` is the folder's realpath.
pub fn load_folder(folder: &Path) -> Result<ToolSpec, FolderError> {
    load_skill(folder).map(|loaded| loaded.tool)
}

/// [`load_folder`], keeping the warnings.
pub fn load_skill(folder: &Path) -> Result<LoadedSkill, FolderError> {
    let fail = |message: String| FolderError {
        folder: folder.to_path_buf(),
        problems: vec![SkillMdError::new(folder, None, Rule::Path, message)],
        warnings: Vec::new(),
    };
    let realpath = std::fs::canonicalize(folder)
        .map_err(|err| fail(format!("cannot resolve folder: {err}")))?;
    if !realpath.is_dir() {
        return Err(fail("not a directory".into()));
    }
    // `.` and `..` have no name of their own: use the resolved one.
    let named = if folder.file_name().is_some() {
        folder
    } else {
        realpath.as_path()
    };
    let file = match skill_md::find_skill_md(folder) {
        Ok(Some(file)) => file,
        // Reading it says what is wrong.
        Ok(None) => folder.join(SKILL_MD),
        Err(err) => return Err(crate::scan::unreadable(folder, &err)),
    };
    load_resolved(named, &realpath, file)
}

/// Loads a folder whose realpath is already known (discovery resolves every
/// candidate first to drop duplicates).
/// `file` is the folder's `SKILL.md` (see [`skill_md::find_skill_md`]);
/// only its name is used, joined to `folder`.
pub(crate) fn load_resolved(
    folder: &Path,
    realpath: &Path,
    file: PathBuf,
) -> Result<LoadedSkill, FolderError> {
    let file_name = file
        .file_name()
        .map_or_else(|| SKILL_MD.into(), ToOwned::to_owned);
    let file = folder.join(&file_name);
    let folder_name = folder
        .file_name()
        .map(|name| name.to_string_lossy().into_owned());
    let errors = |refused: skill_md::Refused| FolderError {
        folder: folder.to_path_buf(),
        problems: refused.errors,
        warnings: refused.warnings,
    };
    let bytes = skill_md::read_capped(&file).map_err(|err| errors(vec![err].into()))?;
    let doc = skill_md::parse_all(&file, &bytes, folder_name.as_deref()).map_err(errors)?;
    Ok(to_tool(doc, realpath, &file_name))
}

fn to_tool(doc: SkillDoc, realpath: &Path, file_name: &std::ffi::OsStr) -> LoadedSkill {
    let mut tool = ToolSpec::new(
        format!("{TOOL_NAMESPACE}/{}", doc.name),
        doc.description,
        ToolSource::AgentSkills,
    );
    tool.input_schema = doc.input_schema;
    tool.output_schema = doc.output_schema;
    tool.set_meta(Meta::Path, realpath.to_string_lossy().into_owned());
    tool.set_meta(
        Meta::SkillMd,
        realpath.join(file_name).to_string_lossy().into_owned(),
    );
    if let Some(license) = doc.license {
        tool.set_meta(Meta::License, license);
    }
    if let Some(compatibility) = doc.compatibility {
        tool.set_meta(Meta::Compatibility, compatibility);
    }
    if !doc.metadata.is_empty() {
        let map: serde_json::Map<String, Value> = doc
            .metadata
            .into_iter()
            .map(|(key, value)| (key, Value::String(value)))
            .collect();
        tool.set_meta(Meta::Metadata, map);
    }
    if let Some(allowed) = doc.allowed_tools {
        tool.set_meta(Meta::AllowedTools, allowed);
    }
    LoadedSkill {
        tool,
        warnings: doc.warnings,
    }
}
