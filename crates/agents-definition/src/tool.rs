use agents_core::{Meta, ToolSource, ToolSpec, ValueMap};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{DefinitionError, Limits, documents};

/// A custom tool definition as users write it.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[schemars(title = "CleverAgents custom tool definition")]
#[serde(deny_unknown_fields)]
struct ToolDocument {
    /// `namespace/name`, e.g. `custom/deploy`
    name: String,
    /// What the tool does
    #[serde(default)]
    description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// JSON Schema of the input
    input_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// JSON Schema of the output
    output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Only reads
    read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Writes
    writes: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Its effects can be checkpointed
    checkpointable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Has side effects
    side_effects: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// How the tool runs (a program and an argv template, no shell);
    /// without it the tool is a catalogue entry
    run: Option<agents_core::RunSpec>,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    /// Free-form key/values (become `source_metadata`)
    metadata: ValueMap,
}

/// The JSON Schema of a custom tool definition document (what `tool add`
/// reads), generated from the type that parses it.
pub fn tool_schema() -> Value {
    schemars::schema_for!(ToolDocument).to_value()
}

/// Parses custom tool definitions (one document or a `---` stream) within
/// [`Limits::TOOLS`]. Each tool gets source `custom`; `metadata` becomes its
/// `source_metadata`, to which the caller may add the file path.
pub fn parse_tools(text: &str, file: &str) -> Result<Vec<ToolSpec>, DefinitionError> {
    parse_tools_with(text, file, &Limits::TOOLS)
}

/// [`parse_tools`] with explicit limits.
pub fn parse_tools_with(
    text: &str,
    file: &str,
    limits: &Limits,
) -> Result<Vec<ToolSpec>, DefinitionError> {
    let mut tools: Vec<ToolSpec> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    documents(text, file, limits, |number, document: ToolDocument| {
        // `run` is kept under a key of the registry's own: one the
        // definition wrote in `metadata` would be taken for it.
        for key in [Meta::File, Meta::Run] {
            if document.metadata.contains_key(key.as_str()) {
                return Err(DefinitionError::at_field(
                    file,
                    text,
                    number,
                    &document.name,
                    format!(
                        "metadata: `{}` is reserved (the registry records {} under it)",
                        key.as_str(),
                        if key == Meta::File {
                            "the file the tool came from"
                        } else {
                            "the tool's `run`"
                        }
                    ),
                    &format!("metadata.{}", key.as_str()),
                ));
            }
        }
        let mut tool = ToolSpec {
            name: document.name,
            description: document.description,
            input_schema: document.input_schema,
            output_schema: document.output_schema,
            source: ToolSource::Custom,
            source_metadata: document.metadata,
            read_only: document.read_only,
            writes: document.writes,
            checkpointable: document.checkpointable,
            side_effects: document.side_effects.or(document.writes),
        };
        if let Some(run) = &document.run {
            let run = serde_json::to_value(run).map_err(|err| {
                DefinitionError::at_field(file, text, number, &tool.name, err.to_string(), "run")
            })?;
            tool.set_meta(Meta::Run, run);
        }
        if let Err(err) = tool.validate() {
            let field = field_of(&err.message);
            return Err(DefinitionError::at_field(
                file,
                text,
                number,
                &tool.name,
                err.message,
                field,
            ));
        }
        if !seen.insert(tool.name.clone()) {
            return Err(DefinitionError::at_field(
                file,
                text,
                number,
                &tool.name,
                "tool is defined more than once in this file",
                "name",
            ));
        }
        tools.push(tool);
        Ok(())
    })?;
    Ok(tools)
}

/// The field a [`ToolSpec::validate`] message is about: a schema's, or
/// else the name's.
pub(crate) fn field_of(message: &str) -> &'static str {
    ["input_schema", "output_schema"]
        .into_iter()
        .find(|field| {
            message
                .strip_prefix(field)
                .is_some_and(|rest| rest.starts_with(':'))
        })
        .unwrap_or("name")
}

/// Prints tools in the definition format (source metadata as `metadata`).
pub fn tools_to_yaml(tools: &[ToolSpec]) -> Result<String, DefinitionError> {
    let mut out = String::new();
    for (index, tool) in tools.iter().enumerate() {
        if index > 0 {
            out.push_str("---\n");
        }
        let document = ToolDocument {
            name: tool.name.clone(),
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            read_only: tool.read_only,
            writes: tool.writes,
            checkpointable: tool.checkpointable,
            side_effects: tool.side_effects,
            run: tool.run().and_then(Result::ok),
            metadata: {
                // What `tool add` recorded is not part of the definition:
                // written back, the next `tool add` would refuse it.
                let mut metadata = tool.source_metadata.clone();
                if tool.source == ToolSource::Custom {
                    metadata.shift_remove(Meta::File.as_str());
                    metadata.shift_remove(Meta::Run.as_str());
                }
                metadata
            },
        };
        let text = crate::yaml_text(&document).map_err(|err| {
            DefinitionError::at_document("<output>", index + 1, &tool.name, err.to_string())
        })?;
        out.push_str(&text);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tools_with_schemas() {
        let tools = parse_tools(
            "name: custom/deploy\ndescription: Deploy\nwrites: true\ninput_schema: {type: object}\n---\nname: custom/b\n",
            "t.yaml",
        )
        .unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].source, ToolSource::Custom);
        assert_eq!(tools[0].side_effects, Some(true));
        assert_eq!(
            parse_tools(&tools_to_yaml(&tools).unwrap(), "o").unwrap(),
            tools
        );
    }

    #[test]
    fn run_is_parsed_kept_and_written_back() {
        let text = "name: custom/count\nrun:\n  command: wc\n  args: [-l, \"{files...}\"]\n  timeout_s: 5\n";
        let tools = parse_tools(text, "t.yaml").unwrap();
        let run = tools[0].run().unwrap().unwrap();
        assert_eq!(run.command, "wc");
        assert_eq!(run.args, ["-l", "{files...}"]);
        assert_eq!(
            parse_tools(&tools_to_yaml(&tools).unwrap(), "o").unwrap(),
            tools
        );
        let err = parse_tools("name: custom/x\nmetadata: {run: 1}\n", "t.yaml").unwrap_err();
        assert!(err.to_string().contains("`run` is reserved"), "{err}");
        let err = parse_tools(
            "name: custom/x\nrun: {command: x, args: [\"{a\"]}\n",
            "t.yaml",
        )
        .unwrap_err();
        assert!(err.to_string().contains("`run.args[0]`"), "{err}");
    }

    #[test]
    fn rejects_bad_tools() {
        let err = parse_tools("name: x\nsource: builtin\n", "t.yaml").unwrap_err();
        assert!(err.message.contains("unknown field `source`"), "{err}");
        let err = parse_tools(
            "name: custom/x\nmetadata:\n  owner: a\n  owner: b\n",
            "t.yaml",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("t.yaml:4:3: metadata: duplicate key `owner`"),
            "{err}"
        );
        let err = parse_tools("name: x\ninput_schema: {type: nope}\n", "t.yaml").unwrap_err();
        assert!(
            err.to_string()
                .contains("`x`: input_schema: not a valid JSON Schema"),
            "{err}"
        );
        let err = parse_tools("name: ''\n", "t.yaml").unwrap_err();
        assert!(err.message.contains("must not be empty"), "{err}");
    }

    #[test]
    fn the_recorded_file_is_reserved_and_not_written_back() {
        let err = parse_tools("name: custom/x\nmetadata: {file: mine}\n", "t.yaml").unwrap_err();
        assert!(err.message.contains("`file` is reserved"), "{err}");
        let mut tools = parse_tools("name: custom/x\nmetadata: {owner: me}\n", "t.yaml").unwrap();
        tools[0].set_meta(Meta::File, "/abs/t.yaml".to_owned());
        let yaml = tools_to_yaml(&tools).unwrap();
        assert!(!yaml.contains("/abs/t.yaml"), "{yaml}");
        let back = parse_tools(&yaml, "o").unwrap();
        assert_eq!(
            back[0].source_metadata.get("owner"),
            Some(&Value::from("me"))
        );
    }
}
