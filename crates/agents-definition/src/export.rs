use std::collections::HashMap;

use agents_core::{Skill, SkillName, ToolSpec};
use serde::{Deserialize, Serialize};

use crate::skill::SkillDocument;
use crate::{DefinitionError, Limits};

/// The version tag [`export_to_yaml`] writes: a stream of YAML documents,
/// a header (`format: …`) then one document per skill (`skill: …`) and per
/// tool (`tool: …`), so a reader holds one document's parse at a time.
pub const EXPORT_FORMAT: &str = "cleveragents-export/2";

/// The first version: one YAML document holding every skill and tool. Still
/// read, but its one document is parsed whole (yaml_serde holds all of a
/// document's events, about 12 bytes per byte of such a file).
pub const EXPORT_FORMAT_V1: &str = "cleveragents-export/1";

/// Any document of an export; which keys it may have depends on its place.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    /// The header's version tag.
    #[serde(default)]
    format: Option<String>,
    /// A version 1 header's skills.
    #[serde(default)]
    skills: Option<Vec<SkillDocument>>,
    /// A version 1 header's tools.
    #[serde(default)]
    tools: Option<Vec<ToolSpec>>,
    /// One skill (version 2).
    #[serde(default)]
    skill: Option<SkillDocument>,
    /// One tool (version 2).
    #[serde(default)]
    tool: Option<ToolSpec>,
}

#[derive(Serialize)]
struct Header<'a> {
    format: &'a str,
}

#[derive(Serialize)]
struct SkillEntry {
    skill: SkillDocument,
}

#[derive(Serialize)]
struct ToolEntry<'a> {
    tool: &'a ToolSpec,
}

/// What [`export_to_yaml`] writes: the stream, and its largest document,
/// which whoever reads the stream back must allow (a reader refuses a
/// document over [`Limits::max_document_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    /// The [`EXPORT_FORMAT`] stream.
    pub text: String,
    /// The largest skill or tool document (none when there is neither).
    pub largest: Option<LargestDocument>,
    /// The skills and tools whose documents [`parse_export`] would refuse (a
    /// stored row no definition file could have made, such as an include
    /// override of a locked field written by an older client, or a tool
    /// schema written straight into the database), in export order. The
    /// stream holds them all the same: a backup refused is worse.
    pub refused: Vec<RefusedDocument>,
}

/// A document of an [`Export`] that reading the export back would refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedDocument {
    /// What the document defines: `skill` or `tool`.
    pub kind: &'static str,
    /// The skill or tool the document defines.
    pub subject: String,
    /// Why it is refused, as the reader says it (`field: message; …`).
    pub reason: String,
}

/// One document of an [`Export`], by what it defines and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargestDocument {
    /// The skill or tool the document defines.
    pub subject: String,
    /// Its size in bytes as a reader counts it: from its `---` line to the
    /// next.
    pub bytes: usize,
}

/// All skills (definition format) and catalogue tools (with their source)
/// as an [`EXPORT_FORMAT`] stream, for moving a registry between backends.
pub fn export_to_yaml(skills: &[Skill], tools: &[ToolSpec]) -> Result<Export, DefinitionError> {
    let failed = |err: yaml_serde::Error| {
        DefinitionError::at_document("<output>", 1, "export", err.to_string())
    };
    let mut out = crate::yaml_text(&Header {
        format: EXPORT_FORMAT,
    })
    .map_err(failed)?;
    let mut largest: Option<LargestDocument> = None;
    let mut document = |out: &mut String, subject: &str, body: String| {
        const MARKER: &str = "---\n";
        out.push_str(MARKER);
        out.push_str(&body);
        let bytes = MARKER.len() + body.len();
        if largest.as_ref().is_none_or(|seen| bytes > seen.bytes) {
            largest = Some(LargestDocument {
                subject: subject.to_owned(),
                bytes,
            });
        }
    };
    let mut refused = Vec::new();
    for skill in skills {
        let entry = SkillEntry {
            skill: SkillDocument::from_skill(skill),
        };
        let body = crate::yaml_text(&entry).map_err(failed)?;
        document(&mut out, skill.name.as_str(), body);
        // What the reader checks of the document it reads back.
        if let Err(problems) = entry.skill.into_skill().validate() {
            refused.push(RefusedDocument {
                kind: "skill",
                subject: skill.name.to_string(),
                reason: crate::skill::describe_problems(&problems),
            });
        }
    }
    for tool in tools {
        let body = crate::yaml_text(&ToolEntry { tool }).map_err(failed)?;
        document(&mut out, &tool.name, body);
        // What the reader checks of a tool row (a schema a client wrote
        // into the database past the checks).
        if let Err(err) = tool.validate() {
            refused.push(RefusedDocument {
                kind: "tool",
                subject: tool.name.clone(),
                reason: err.message,
            });
        }
    }
    Ok(Export {
        text: out,
        largest,
        refused,
    })
}

/// Reads what [`export_to_yaml`] wrote (or an [`EXPORT_FORMAT_V1`] file),
/// validating every skill and tool, within [`Limits::EXPORT`].
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
    let mut reader = Reader {
        file,
        text,
        version: None,
        seen: HashMap::new(),
        seen_tools: HashMap::new(),
        skills: Vec::new(),
        tools: Vec::new(),
    };
    crate::documents(text, file, limits, |number, document: Document| {
        reader.read(number, document)
    })
    .map_err(|mut err| {
        // A version 1 export is one document however many skills it holds
        // (its header line comes first, after any comments).
        if err.limit == Some(crate::Limit::DocumentBytes)
            && text
                .lines()
                .take(64)
                .any(|line| line.contains(EXPORT_FORMAT_V1))
        {
            err.message.push_str(&format!(
                "; a `{EXPORT_FORMAT_V1}` export is a single document: export the registry \
                 again, as `{EXPORT_FORMAT}` (a document per skill and tool), or raise \
                 `limits.definition_max_bytes`"
            ));
        }
        err
    })?;
    if reader.version.is_none() {
        return Err(DefinitionError::whole_file(
            file,
            format!("no export found: expected `format: {EXPORT_FORMAT}` first"),
        ));
    }
    Ok((reader.skills, reader.tools))
}

/// What [`parse_export_with`] has read so far.
struct Reader<'f> {
    file: &'f str,
    /// The whole stream, to point at a field an error is about.
    text: &'f str,
    /// The header's version, once read.
    version: Option<&'static str>,
    /// The document each skill read so far came in.
    seen: HashMap<SkillName, usize>,
    /// The document each tool read so far came in.
    seen_tools: HashMap<String, usize>,
    skills: Vec<Skill>,
    tools: Vec<ToolSpec>,
}

impl Reader<'_> {
    fn read(&mut self, number: usize, document: Document) -> Result<(), DefinitionError> {
        let wrong = |message: String| DefinitionError::in_document(self.file, number, message);
        match self.version {
            None => {
                let version = match document.format.as_deref() {
                    Some(EXPORT_FORMAT) => EXPORT_FORMAT,
                    Some(EXPORT_FORMAT_V1) => EXPORT_FORMAT_V1,
                    Some(other) => {
                        return Err(wrong(format!(
                            "unsupported export format `{other}`, expected `{EXPORT_FORMAT}` (or `{EXPORT_FORMAT_V1}`)"
                        )));
                    }
                    None => {
                        return Err(wrong(format!(
                            "missing field `format`: an export starts with `format: {EXPORT_FORMAT}`"
                        )));
                    }
                };
                self.version = Some(version);
                if document.skill.is_some() || document.tool.is_some() {
                    return Err(wrong(
                        "the header holds only `format`; each skill and tool is a document of its own (`---`)"
                            .to_owned(),
                    ));
                }
                if version == EXPORT_FORMAT
                    && (document.skills.is_some() || document.tools.is_some())
                {
                    return Err(wrong(format!(
                        "`skills` and `tools` lists belong to `{EXPORT_FORMAT_V1}`; in `{EXPORT_FORMAT}` each skill and tool is a document of its own (`---`)"
                    )));
                }
                for (index, skill) in document.skills.unwrap_or_default().into_iter().enumerate() {
                    self.skill(number, &format!("skills[{index}]"), skill)?;
                }
                for (index, tool) in document.tools.unwrap_or_default().into_iter().enumerate() {
                    self.tool(number, &format!("tools[{index}]"), tool)?;
                }
                Ok(())
            }
            Some(EXPORT_FORMAT_V1) => Err(wrong(format!(
                "a `{EXPORT_FORMAT_V1}` export is one document; this is document {number}"
            ))),
            Some(_) => match document {
                Document {
                    format: None,
                    skills: None,
                    tools: None,
                    skill: Some(skill),
                    tool: None,
                } => self.skill(number, "skill", skill),
                Document {
                    format: None,
                    skills: None,
                    tools: None,
                    skill: None,
                    tool: Some(tool),
                } => self.tool(number, "tool", tool),
                _ => Err(wrong(
                    "each document after the header holds exactly one `skill` or one `tool`"
                        .to_owned(),
                )),
            },
        }
    }

    /// One skill, written at `at` (`skill`, or `skills[i]` of a version 1
    /// export) of document `number`.
    fn skill(
        &mut self,
        number: usize,
        at: &str,
        document: SkillDocument,
    ) -> Result<(), DefinitionError> {
        let skill = document.into_skill();
        if let Err(problems) = skill.validate() {
            let field = problems
                .first()
                .map_or("", |problem| problem.field.as_str());
            return Err(DefinitionError::at_field(
                self.file,
                self.text,
                number,
                skill.name.as_str(),
                crate::skill::describe_problems(&problems),
                &format!("{at}.{field}"),
            ));
        }
        if let Some(first) = self.seen.insert(skill.name.clone(), number) {
            return Err(DefinitionError::in_document(
                self.file,
                number,
                format!(
                    "skill `{}` is defined twice (first in document {first})",
                    skill.name
                ),
            ));
        }
        self.skills.push(skill);
        Ok(())
    }

    /// One tool row, written at `at` (`tool`, or `tools[i]`) of document
    /// `number`.
    fn tool(&mut self, number: usize, at: &str, tool: ToolSpec) -> Result<(), DefinitionError> {
        tool.validate().map_err(|err| {
            let field = crate::tool::field_of(&err.message);
            DefinitionError::at_field(
                self.file,
                self.text,
                number,
                &tool.name,
                err.message,
                &format!("{at}.{field}"),
            )
        })?;
        // Two rows of one name would be stored last-wins, silently.
        if let Some(first) = self.seen_tools.insert(tool.name.clone(), number) {
            return Err(DefinitionError::in_document(
                self.file,
                number,
                format!(
                    "tool `{}` is defined twice (first in document {first})",
                    tool.name
                ),
            ));
        }
        self.tools.push(tool);
        Ok(())
    }
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
        let export = export_to_yaml(&skills, &tools).unwrap();
        let text = export.text;
        assert!(
            text.starts_with("format: cleveragents-export/2\n---\nskill:\n"),
            "{text}"
        );
        // One document per skill and per tool after the header.
        assert_eq!(text.matches("\n---\n").count(), 3, "{text}");
        assert_eq!(parse_export(&text, "e").unwrap(), (skills, tools));
        // The largest document, `---` line included, as a reader counts it.
        let largest = export.largest.unwrap();
        let bodies: Vec<&str> = text.split("---\n").skip(1).collect();
        let body = bodies.iter().max_by_key(|body| body.len()).unwrap();
        assert_eq!(largest.bytes, body.len() + 4, "{text}");
        assert!(
            body.contains(&format!("name: {}\n", largest.subject)),
            "{body}"
        );
        assert_eq!(export_to_yaml(&[], &[]).unwrap().largest, None);
    }

    #[test]
    fn version_one_exports_are_still_read() {
        let v1 = "format: cleveragents-export/1\nskills:\n  - name: a/b\n    tools: [x]\ntools:\n  - name: custom/x\n    source: custom\n    description: X\n";
        let (skills, tools) = parse_export(v1, "e").unwrap();
        assert_eq!(skills.len(), 1);
        assert_eq!(tools.len(), 1);
        let err = parse_export(&format!("{v1}---\nskill: {{name: a/c}}\n"), "e").unwrap_err();
        assert!(err.message.contains("is one document"), "{err}");
    }

    #[test]
    fn one_document_may_be_no_larger_than_its_limit() {
        let v1 = "format: cleveragents-export/1\nskills:\n  - name: a/b\n    tools: [x]\n";
        let limits = Limits::EXPORT.with_max_document_bytes(40);
        let err = parse_export_with(v1, "e", &limits).unwrap_err();
        assert_eq!(err.line, Some(1), "{err}");
        assert_eq!(err.limit, Some(crate::Limit::DocumentBytes));
        assert!(
            err.message
                .contains("is 67 bytes, larger than the limit of 40 bytes for one document"),
            "{err}"
        );
        assert!(err.message.contains("export the registry again"), "{err}");
        // The same registry as version 2: every document is under the limit.
        let (skills, tools) = parse_export(v1, "e").unwrap();
        let v2 = export_to_yaml(&skills, &tools).unwrap().text;
        assert!(v2.len() > 40, "{v2}");
        assert_eq!(
            parse_export_with(&v2, "e", &limits).unwrap(),
            (skills, tools)
        );
        // A version 2 document over the limit is named by its line, with no v1 hint.
        let big = format!(
            "{v2}---\nskill:\n  name: a/c\n  description: {}\n",
            "d".repeat(40)
        );
        let err = parse_export_with(&big, "e", &limits).unwrap_err();
        assert_eq!(err.line, Some(v2.lines().count() + 1), "{err}");
        assert!(!err.message.contains("export the registry again"), "{err}");
    }

    #[test]
    fn misplaced_keys_name_their_document() {
        let cases = [
            ("format: other\n", 1, "unsupported export format `other`"),
            ("skill: {name: a/b}\n", 1, "missing field `format`"),
            (
                "format: cleveragents-export/2\nskill: {name: a/b}\n",
                1,
                "the header holds only `format`",
            ),
            (
                "format: cleveragents-export/2\nskills: []\n",
                1,
                "belong to `cleveragents-export/1`",
            ),
            (
                "format: cleveragents-export/2\n---\nskill: {name: a/b}\n---\nskill: {name: a/c}\ntool: {name: custom/x, source: custom}\n",
                3,
                "exactly one `skill` or one `tool`",
            ),
            (
                "format: cleveragents-export/2\n---\nskill: {name: a/b}\n---\nskill: {name: 'bad name'}\n",
                3,
                "",
            ),
        ];
        for (text, document, message) in cases {
            let err = parse_export(text, "e").unwrap_err();
            assert_eq!(err.document, Some(document), "{text}: {err}");
            assert!(err.message.contains(message), "{text}: {err}");
        }
        let err = parse_export(
            "format: cleveragents-export/2\n---\nskill: {name: a/b}\n---\nskill: {name: a/b}\n",
            "e",
        )
        .unwrap_err();
        assert_eq!(err.document, Some(3));
        assert!(
            err.message.contains("defined twice (first in document 2)"),
            "{err}"
        );
        // Tools as skills, whatever their source.
        let err = parse_export(
            "format: cleveragents-export/2\n---\ntool: {name: custom/x, source: custom}\n---\nskill: {name: a/b}\n---\ntool: {name: custom/x, source: mcp}\n",
            "e",
        )
        .unwrap_err();
        assert_eq!(err.document, Some(4));
        assert!(
            err.message
                .contains("tool `custom/x` is defined twice (first in document 2)"),
            "{err}"
        );
        let err = parse_export(
            "format: cleveragents-export/1\ntools:\n  - {name: custom/x, source: custom}\n  - {name: custom/x, source: custom}\n",
            "e",
        )
        .unwrap_err();
        assert!(
            err.message.contains("defined twice (first in document 1)"),
            "{err}"
        );
        let err = parse_export("# nothing\n", "e").unwrap_err();
        assert!(err.message.contains("no export found"), "{err}");
    }
}
