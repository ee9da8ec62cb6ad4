use agents_core::{Skill, ToolSpec};
use serde::{Deserialize, Serialize};

use crate::skill::SkillDocument;
use crate::{DefinitionError, Limits};

/// The version tag of the export format.
pub const EXPORT_FORMAT: &str = "cleveragents-export/1";

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Export {
    format: String,
    #[serde(default)]
    skills: Vec<SkillDocument>,
    #[serde(default)]
    tools: Vec<ToolSpec>,
}

/// All skills (definition format) and catalogue tools (with their source) in
/// one YAML document, for moving a registry between backends.
pub fn export_to_yaml(skills: &[Skill], tools: &[ToolSpec]) -> Result<String, DefinitionError> {
    let export = Export {
        format: EXPORT_FORMAT.to_owned(),
        skills: skills.iter().map(SkillDocument::from_skill).collect(),
        tools: tools.to_vec(),
    };
    yaml_serde::to_string(&export)
        .map_err(|err| DefinitionError::at_document("<output>", 1, "export", err.to_string()))
}

/// Reads what [`export_to_yaml`] wrote, validating every skill and tool,
/// within [`Limits::EXPORT`].
pub fn parse_export(
    text: &str,
    file: &str,
) -> Result<(Vec<Skill>, Vec<ToolSpec>), DefinitionError> {
    parse_export_with(text, file, &Limits::EXPORT)
}

/// [`parse_export`] with explicit limits.
pub fn parse_export_with(
    text: &str,
    file: &str,
    limits: &Limits,
) -> Result<(Vec<Skill>, Vec<ToolSpec>), DefinitionError> {
    crate::limits::check(text, file, limits)?;
    let export: Export = yaml_serde::from_str(text)
        .map_err(|err| DefinitionError::from_yaml(file, text, None, &err))?;
    if export.format != EXPORT_FORMAT {
        return Err(DefinitionError::at_document(
            file,
            1,
            "export",
            format!(
                "unsupported export format `{}`, expected `{EXPORT_FORMAT}`",
                export.format
            ),
        ));
    }
    let mut skills = Vec::with_capacity(export.skills.len());
    for document in export.skills {
        let skill = document.into_skill();
        if let Err(problems) = skill.validate() {
            return Err(DefinitionError::at_document(
                file,
                1,
                skill.name.as_str(),
                crate::skill::describe_problems(&problems),
            ));
        }
        skills.push(skill);
    }
    for tool in &export.tools {
        tool.validate()
            .map_err(|err| DefinitionError::at_document(file, 1, &tool.name, err.message))?;
    }
    Ok((skills, export.tools))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_round_trips() {
        let skills = crate::parse_skills(
            "name: a/b\ntools: [x]\n---\nname: a/c\nincludes: [a/b]\n",
            "s",
        )
        .unwrap();
        let tools = crate::parse_tools("name: custom/x\ndescription: X\n", "t").unwrap();
        let text = export_to_yaml(&skills, &tools).unwrap();
        assert_eq!(parse_export(&text, "e").unwrap(), (skills, tools));
        assert!(
            parse_export("format: other\n", "e")
                .unwrap_err()
                .message
                .contains("unsupported export format")
        );
    }
}
