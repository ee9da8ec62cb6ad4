//! The typed results: each a frozen Python class over the Rust value, with
//! attributes read on access, a short `repr` (no secrets: an MCP server's
//! `env` is never in one) and `to_dict()`.

use agents_core::{ResolvedToolEntry, Skill, SkillCapabilitySummary, SkillItem, ToolSpec};
use agents_definition::Limits;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{Value, json};

use crate::convert::{map_to_py, opt_repr, opt_to_py, py_repr, to_json, to_py};
use crate::error::{Class, Failure, Outcome, raise};

/// The keys `Skill.to_dict()` adds to the definition's: derived from it or
/// set by the store, so a dict read back may hold them (see
/// [`skill_from_json`]).
const DERIVED_KEYS: [&str; 5] = [
    "namespace",
    "short_name",
    "created_at",
    "updated_at",
    "items",
];

/// The label of a skill given as a dict, in its errors.
pub(crate) const DICT_LABEL: &str = "<dict>";

/// The label of YAML text given without one, in its errors.
pub(crate) const YAML_LABEL: &str = "<yaml>";

/// One `skill_items` row as the specification describes it.
fn item_rows(skill: &Skill) -> Vec<ItemRow> {
    skill
        .items
        .iter()
        .zip(skill.item_names())
        .enumerate()
        .map(|(order, (item, name))| ItemRow {
            item_type: item.kind().as_str(),
            item_name: name,
            item_config: item_config(item),
            item_order: order,
        })
        .collect()
}

/// What the store keeps in `item_config` for `item`, as JSON.
fn item_config(item: &SkillItem) -> Option<Value> {
    match item {
        SkillItem::ToolRef { .. } | SkillItem::AgentSource(_) => None,
        SkillItem::Include(include) if include.overrides.is_empty() => None,
        SkillItem::Include(include) => Some(json!({ "overrides": &*include.overrides })),
        SkillItem::InlineTool(tool) => serde_json::to_value(tool).ok(),
        SkillItem::McpSource(source) => serde_json::to_value(source).ok(),
    }
}

#[derive(Debug, Clone, PartialEq)]
struct ItemRow {
    item_type: &'static str,
    item_name: String,
    item_config: Option<Value>,
    item_order: usize,
}

impl ItemRow {
    fn to_json(&self) -> Value {
        json!({
            "item_type": self.item_type,
            "item_name": self.item_name,
            "item_config": self.item_config,
            "item_order": self.item_order,
        })
    }
}

/// The skill's definition keys (as `agents skill get --format json` prints
/// them), with `items`.
fn skill_json(skill: &Skill) -> Value {
    let mut value = agents_definition::skill_to_json(skill);
    if let Value::Object(map) = &mut value {
        let items = item_rows(skill).iter().map(ItemRow::to_json).collect();
        map.insert("items".into(), Value::Array(items));
    }
    value
}

/// A dict's JSON as the YAML text a definition file would hold, for the
/// file parser (labelled [`DICT_LABEL`] in its errors).
pub(crate) fn dict_yaml(value: &Value) -> Outcome<String> {
    agents_definition::yaml_text(value).map_err(|err| {
        Failure::new(
            Class::Validation,
            "invalid_definition",
            format!("{DICT_LABEL}: cannot be written as YAML: {err}"),
        )
    })
}

/// A skill from a dict in the YAML definition's shape: written out as that
/// YAML and read by the same parser as a file, so every rule, limit and
/// message is the CLI's (errors point at the line of that YAML, labelled
/// [`DICT_LABEL`]). The keys `to_dict()` adds are taken back: `updated_at`
/// (and `created_at`) as the stored stamps, which make an update check that
/// nobody changed the skill since it was read; `namespace`, `short_name` and
/// `items` only when they say what the definition says (they are derived
/// from it, so a change to them alone would be lost).
pub(crate) fn skill_from_json(
    value: Value,
    limits: &Limits,
    advise: &dyn Fn(agents_definition::DefinitionError) -> Failure,
) -> Outcome<Skill> {
    let Value::Object(mut map) = value else {
        return Err(Failure::new(
            Class::ArgumentType,
            "invalid_argument",
            "a skill: expected a dict",
        ));
    };
    let mut derived: Vec<(&str, Value)> = Vec::new();
    for key in DERIVED_KEYS {
        if let Some(value) = map.shift_remove(key) {
            derived.push((key, value));
        }
    }
    let text = dict_yaml(&Value::Object(map))?;
    let mut skills =
        agents_definition::parse_skills_with(&text, DICT_LABEL, limits).map_err(advise)?;
    let (Some(mut skill), true) = (skills.pop(), skills.is_empty()) else {
        return Err(Failure::new(
            Class::Validation,
            "invalid_definition",
            format!("{DICT_LABEL}: expected one skill"),
        ));
    };
    for (key, value) in derived {
        let mismatch = |says: String| {
            Failure::new(
                Class::Validation,
                "invalid_definition",
                format!(
                    "{DICT_LABEL}: `{}`: `{key}` {says}; it is derived from the definition, so change the definition's keys instead",
                    skill.name
                ),
            )
        };
        match (key, &value) {
            ("created_at" | "updated_at", Value::Null) => {}
            ("created_at", Value::String(stamp)) => skill.created_at = Some(stamp.clone()),
            ("updated_at", Value::String(stamp)) => skill.updated_at = Some(stamp.clone()),
            ("created_at" | "updated_at", _) => {
                return Err(Failure::new(
                    Class::ArgumentType,
                    "invalid_argument",
                    format!("{DICT_LABEL}: `{key}`: expected a `str` or `None`"),
                ));
            }
            ("namespace", _) if value.as_str() != Some(skill.namespace()) => {
                return Err(mismatch(format!(
                    "is not the name's namespace `{}`",
                    skill.namespace()
                )));
            }
            ("short_name", _) if value.as_str() != Some(skill.short_name()) => {
                return Err(mismatch(format!(
                    "is not the name's short name `{}`",
                    skill.short_name()
                )));
            }
            ("items", _) => {
                let rows: Vec<Value> = item_rows(&skill).iter().map(ItemRow::to_json).collect();
                if value != Value::Array(rows) {
                    return Err(mismatch(
                        "does not match the items of `tools`, `includes`, `inline_tools`, `mcp_sources` and `agent_sources`".into(),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(skill)
}

/// A skill as the specification has it: a name, a description, a version,
/// metadata and ordered items, with the store's timestamps once stored.
///
/// Make one with keyword arguments in the YAML definition's shape
/// (`Skill(name="local/x", tools=["builtin/grep"])`), from such a dict
/// (`Skill.from_dict`) or from YAML text (`Skill.from_yaml`). It is
/// immutable: `replace(**changes)` makes a changed copy, which keeps the
/// stored `updated_at` so that `update_skill` refuses it when someone else
/// changed the skill meanwhile.
#[pyclass(frozen, eq, module = "agents_registry", name = "Skill")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PySkill {
    pub(crate) skill: Skill,
}

#[pymethods]
impl PySkill {
    #[new]
    #[pyo3(signature = (name, *, description=None, version=None, metadata=None, overrides=None, tools=None, includes=None, inline_tools=None, mcp_sources=None, agent_sources=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        description: Option<&Bound<'_, PyAny>>,
        version: Option<&Bound<'_, PyAny>>,
        metadata: Option<&Bound<'_, PyAny>>,
        overrides: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
        includes: Option<&Bound<'_, PyAny>>,
        inline_tools: Option<&Bound<'_, PyAny>>,
        mcp_sources: Option<&Bound<'_, PyAny>>,
        agent_sources: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let dict = PyDict::new(py);
        dict.set_item("name", name)?;
        for (key, value) in [
            ("description", description),
            ("version", version),
            ("metadata", metadata),
            ("overrides", overrides),
            ("tools", tools),
            ("includes", includes),
            ("inline_tools", inline_tools),
            ("mcp_sources", mcp_sources),
            ("agent_sources", agent_sources),
        ] {
            if let Some(value) = value.filter(|value| !value.is_none()) {
                dict.set_item(key, value)?;
            }
        }
        Self::from_dict(py, dict.as_any())
    }

    /// A skill from a dict in the YAML definition's shape (or one that
    /// `to_dict()` made).
    #[staticmethod]
    fn from_dict(py: Python<'_>, definition: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = raise(py, dict_json(definition, "a skill"))?;
        let skill = crate::error::detached(py, || {
            skill_from_json(value, &Limits::SKILLS, &Failure::from)
        })?;
        Ok(Self { skill })
    }

    /// The one skill defined in YAML text.
    #[staticmethod]
    #[pyo3(signature = (text, source = None))]
    fn from_yaml(
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        source: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let text = raise(py, crate::convert::str_arg(text, "text"))?;
        let source = raise(py, crate::convert::opt_str_arg(source, "source"))?
            .unwrap_or_else(|| YAML_LABEL.to_owned());
        let mut skills = crate::error::detached(py, move || {
            Ok(agents_definition::parse_skills_with(
                &text,
                &source,
                &Limits::SKILLS,
            )?)
        })?;
        match (skills.pop(), skills.is_empty()) {
            (Some(skill), true) => Ok(Self { skill }),
            (found, _) => Err(Failure::new(
                Class::Validation,
                "invalid_definition",
                format!(
                    "expected one skill in the YAML text, found {} (`add_skills_yaml` takes several)",
                    skills.len() + usize::from(found.is_some())
                ),
            )
            .into_py_err(py)),
        }
    }

    /// A copy with the given definition keys changed (`description=...`,
    /// `tools=[...]`, ...), checked as a new definition is.
    #[pyo3(signature = (**changes))]
    fn replace(&self, py: Python<'_>, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut value = agents_definition::skill_to_json(&self.skill);
        let renamed = match (changes, &mut value) {
            (Some(changes), Value::Object(map)) => {
                for key in ["namespace", "short_name", "created_at", "updated_at"] {
                    map.shift_remove(key);
                }
                let mut renamed = false;
                for (key, item) in changes.iter() {
                    let key = raise(py, crate::convert::str_arg(&key, "key"))?;
                    if DERIVED_KEYS.contains(&key.as_str()) {
                        return Err(Failure::new(
                            Class::Validation,
                            "invalid_argument",
                            format!("`{key}` is derived from the definition or set by the store: change the definition's keys instead"),
                        )
                        .into_py_err(py));
                    }
                    let item = raise(py, to_json(&item, &format!("`{key}`")))?;
                    renamed |= key == "name" && item.as_str() != Some(self.skill.name.as_str());
                    map.insert(key, item);
                }
                renamed
            }
            _ => false,
        };
        let mut skill = crate::error::detached(py, || {
            skill_from_json(value, &Limits::SKILLS, &Failure::from)
        })?;
        // Another name is another skill: the stamps were this one's.
        if !renamed {
            skill.created_at.clone_from(&self.skill.created_at);
            skill.updated_at.clone_from(&self.skill.updated_at);
        }
        Ok(Self { skill })
    }

    #[getter]
    fn name(&self) -> &str {
        self.skill.name.as_str()
    }

    #[getter]
    fn namespace(&self) -> &str {
        self.skill.namespace()
    }

    #[getter]
    fn short_name(&self) -> &str {
        self.skill.short_name()
    }

    #[getter]
    fn description(&self) -> Option<&str> {
        self.skill.description.as_deref()
    }

    #[getter]
    fn version(&self) -> Option<&str> {
        self.skill.version.as_deref()
    }

    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_py(py, &self.skill.metadata)
    }

    /// Skill-level overrides: entry name → fields.
    #[getter]
    fn overrides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, fields) in &self.skill.overrides {
            dict.set_item(name, map_to_py(py, fields)?)?;
        }
        Ok(dict)
    }

    /// The items in their stable `item_order`.
    #[getter]
    fn items(&self) -> Vec<PySkillItem> {
        item_rows(&self.skill)
            .into_iter()
            .map(|row| PySkillItem { row })
            .collect()
    }

    #[getter]
    fn created_at(&self) -> Option<&str> {
        self.skill.created_at.as_deref()
    }

    #[getter]
    fn updated_at(&self) -> Option<&str> {
        self.skill.updated_at.as_deref()
    }

    /// The definition's keys (`name`, `description`, `version`, `metadata`,
    /// `overrides`, `tools`, `includes`, `inline_tools`, `mcp_sources`,
    /// `agent_sources`) with `namespace`, `short_name`, `created_at`,
    /// `updated_at` and `items`; `Skill.from_dict` and `add_skill` take it back.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &skill_json(&self.skill))
    }

    /// The definition as YAML text, as `agents skill get --format yaml`
    /// writes it (secrets included: it is the definition).
    fn to_yaml(&self, py: Python<'_>) -> PyResult<String> {
        agents_definition::skills_to_yaml(std::slice::from_ref(&self.skill))
            .map_err(|err| Failure::from(err).into_py_err(py))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Skill(name={}, version={}, description={}, items={}, updated_at={})",
            py_repr(py, self.skill.name.as_str()),
            opt_repr(py, self.skill.version.as_deref()),
            opt_repr(py, self.skill.description.as_deref()),
            self.skill.items.len(),
            opt_repr(py, self.skill.updated_at.as_deref()),
        )
    }
}

/// A dict argument as JSON.
pub(crate) fn dict_json(value: &Bound<'_, PyAny>, what: &str) -> Outcome<Value> {
    if value.cast::<PyDict>().is_err() {
        return Err(crate::convert::wrong_type(what, "a `dict`", value));
    }
    to_json(value, what)
}

/// One ordered component of a skill, as a `skill_items` row holds it.
#[pyclass(frozen, eq, module = "agents_registry", name = "SkillItem")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PySkillItem {
    row: ItemRow,
}

#[pymethods]
impl PySkillItem {
    /// `tool_ref`, `include`, `inline_tool`, `mcp_source` or `agent_source`.
    #[getter]
    fn item_type(&self) -> &str {
        self.row.item_type
    }

    /// The tool, included skill, `{skill}/_anon_{i}`, server or path.
    #[getter]
    fn item_name(&self) -> &str {
        &self.row.item_name
    }

    /// The item's configuration (`None` for a tool ref or an agent source).
    #[getter]
    fn item_config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_to_py(py, self.row.item_config.as_ref())
    }

    #[getter]
    fn item_order(&self) -> usize {
        self.row.item_order
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.row.to_json())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "SkillItem(item_type={}, item_name={}, item_order={})",
            py_repr(py, self.row.item_type),
            py_repr(py, &self.row.item_name),
            self.row.item_order
        )
    }
}

/// A row of `list_skills`: a skill without its items.
#[pyclass(frozen, eq, module = "agents_registry", name = "SkillSummary")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PySkillSummary {
    pub(crate) summary: agents_store::SkillSummary,
}

#[pymethods]
impl PySkillSummary {
    #[getter]
    fn name(&self) -> &str {
        self.summary.name.as_str()
    }

    #[getter]
    fn namespace(&self) -> &str {
        &self.summary.namespace
    }

    #[getter]
    fn short_name(&self) -> &str {
        &self.summary.short_name
    }

    #[getter]
    fn description(&self) -> Option<&str> {
        self.summary.description.as_deref()
    }

    #[getter]
    fn version(&self) -> Option<&str> {
        self.summary.version.as_deref()
    }

    /// How many items the skill has.
    #[getter]
    fn item_count(&self) -> u64 {
        self.summary.items
    }

    #[getter]
    fn updated_at(&self) -> &str {
        &self.summary.updated_at
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = &self.summary;
        to_py(
            py,
            &json!({
                "name": s.name.as_str(),
                "namespace": s.namespace,
                "short_name": s.short_name,
                "description": s.description,
                "version": s.version,
                "item_count": s.items,
                "updated_at": s.updated_at,
            }),
        )
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "SkillSummary(name={}, version={}, item_count={})",
            py_repr(py, self.summary.name.as_str()),
            opt_repr(py, self.summary.version.as_deref()),
            self.summary.items
        )
    }
}

/// A tool the registry knows: builtin (in code), custom, MCP or Agent Skill.
#[pyclass(frozen, eq, module = "agents_registry", name = "ToolSpec")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PyToolSpec {
    pub(crate) spec: ToolSpec,
}

#[pymethods]
impl PyToolSpec {
    #[getter]
    fn name(&self) -> &str {
        &self.spec.name
    }

    #[getter]
    fn description(&self) -> &str {
        &self.spec.description
    }

    /// `builtin`, `custom`, `mcp` or `agent_skills`.
    #[getter]
    fn source(&self) -> &str {
        self.spec.source.as_str()
    }

    #[getter]
    fn source_metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_py(py, &self.spec.source_metadata)
    }

    #[getter]
    fn input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_to_py(py, self.spec.input_schema.as_ref())
    }

    #[getter]
    fn output_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_to_py(py, self.spec.output_schema.as_ref())
    }

    #[getter]
    fn read_only(&self) -> Option<bool> {
        self.spec.read_only
    }

    #[getter]
    fn writes(&self) -> Option<bool> {
        self.spec.writes
    }

    #[getter]
    fn checkpointable(&self) -> Option<bool> {
        self.spec.checkpointable
    }

    #[getter]
    fn side_effects(&self) -> Option<bool> {
        self.spec.side_effects
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &spec_json(&self.spec))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ToolSpec(name={}, source={})",
            py_repr(py, &self.spec.name),
            py_repr(py, self.spec.source.as_str())
        )
    }
}

/// Every field of `spec`, absent ones as `None`.
fn spec_json(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "source": spec.source.as_str(),
        "source_metadata": spec.source_metadata,
        "input_schema": spec.input_schema,
        "output_schema": spec.output_schema,
        "read_only": spec.read_only,
        "writes": spec.writes,
        "checkpointable": spec.checkpointable,
        "side_effects": spec.side_effects,
    })
}

/// One entry of a flattened tool set.
#[pyclass(frozen, eq, module = "agents_registry", name = "ResolvedToolEntry")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PyResolvedToolEntry {
    pub(crate) entry: ResolvedToolEntry,
}

impl PyResolvedToolEntry {
    fn spec(&self) -> Option<&ToolSpec> {
        self.entry.tool.as_ref()
    }
}

#[pymethods]
impl PyResolvedToolEntry {
    /// The tool name, `{skill}/_anon_{i}`, `mcp:{server}/{tool}` or `agent_skill:{path}`.
    #[getter]
    fn name(&self) -> &str {
        &self.entry.name
    }

    /// The tool's source (`builtin`, `custom`, `mcp`, `agent_skills`), `None`
    /// when no registered tool has the name.
    #[getter]
    fn source(&self) -> Option<&str> {
        self.spec().map(|tool| tool.source.as_str())
    }

    /// The skill whose item produced the entry.
    #[getter]
    fn source_skill(&self) -> &str {
        self.entry.source_skill.as_str()
    }

    #[getter]
    fn is_inline(&self) -> bool {
        self.entry.is_inline
    }

    /// The item type that produced the entry (`tool_ref`, `inline_tool`, ...).
    #[getter]
    fn kind(&self) -> &str {
        self.entry.kind.as_str()
    }

    /// Skill-level overrides with include overrides merged on top.
    #[getter]
    fn overrides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_py(py, &self.entry.overrides)
    }

    /// The skills from the root to `source_skill`.
    #[getter]
    fn include_path<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.entry
                .include_path
                .skills()
                .iter()
                .map(|name| name.as_str()),
        )
    }

    #[getter]
    fn description(&self) -> Option<&str> {
        self.spec().map(|tool| tool.description.as_str())
    }

    #[getter]
    fn input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_to_py(py, self.spec().and_then(|tool| tool.input_schema.as_ref()))
    }

    #[getter]
    fn output_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_to_py(py, self.spec().and_then(|tool| tool.output_schema.as_ref()))
    }

    #[getter]
    fn source_metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        match self.spec() {
            Some(tool) => map_to_py(py, &tool.source_metadata),
            None => Ok(PyDict::new(py)),
        }
    }

    #[getter]
    fn read_only(&self) -> Option<bool> {
        self.spec().and_then(|tool| tool.read_only)
    }

    #[getter]
    fn writes(&self) -> Option<bool> {
        self.spec().and_then(|tool| tool.writes)
    }

    #[getter]
    fn checkpointable(&self) -> Option<bool> {
        self.spec().and_then(|tool| tool.checkpointable)
    }

    #[getter]
    fn side_effects(&self) -> Option<bool> {
        self.spec().and_then(|tool| tool.side_effects)
    }

    /// The registered tool's spec, `None` when no registered tool has the name.
    #[getter]
    fn tool(&self) -> Option<PyToolSpec> {
        self.spec().map(|spec| PyToolSpec { spec: spec.clone() })
    }

    /// The fields `agents skill tools --format json` prints of the entry.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let entry = &self.entry;
        let tool = self.spec();
        let skills: Vec<&str> = entry
            .include_path
            .skills()
            .iter()
            .map(|name| name.as_str())
            .collect();
        to_py(
            py,
            &json!({
                "name": entry.name,
                "source": tool.map(|t| t.source.as_str()),
                "source_skill": entry.source_skill.as_str(),
                "is_inline": entry.is_inline,
                "kind": entry.kind.as_str(),
                "overrides": entry.overrides,
                "include_path": skills,
                "description": tool.map(|t| t.description.as_str()),
                "input_schema": tool.and_then(|t| t.input_schema.as_ref()),
                "output_schema": tool.and_then(|t| t.output_schema.as_ref()),
                "source_metadata": tool.map(|t| &t.source_metadata),
                "read_only": tool.and_then(|t| t.read_only),
                "writes": tool.and_then(|t| t.writes),
                "checkpointable": tool.and_then(|t| t.checkpointable),
                "side_effects": tool.and_then(|t| t.side_effects),
            }),
        )
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ResolvedToolEntry(name={}, source={}, source_skill={}, is_inline={})",
            py_repr(py, &self.entry.name),
            opt_repr(py, self.source()),
            py_repr(py, self.entry.source_skill.as_str()),
            if self.entry.is_inline {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// The specification's seven-field capability summary of a flattened tool set.
#[pyclass(
    frozen,
    eq,
    module = "agents_registry",
    name = "SkillCapabilitySummary"
)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PySummary {
    pub(crate) summary: SkillCapabilitySummary,
}

#[pymethods]
impl PySummary {
    #[getter]
    fn total_tools(&self) -> usize {
        self.summary.total_tools
    }

    #[getter]
    fn read_only_tools(&self) -> usize {
        self.summary.read_only_tools
    }

    #[getter]
    fn write_tools(&self) -> usize {
        self.summary.write_tools
    }

    #[getter]
    fn checkpointable_tools(&self) -> usize {
        self.summary.checkpointable_tools
    }

    #[getter]
    fn has_side_effects(&self) -> bool {
        self.summary.has_side_effects
    }

    #[getter]
    fn mcp_sources(&self) -> usize {
        self.summary.mcp_sources
    }

    #[getter]
    fn agent_skill_sources(&self) -> usize {
        self.summary.agent_skill_sources
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &summary_json(&self.summary))
    }

    fn __repr__(&self) -> String {
        let s = &self.summary;
        format!(
            "SkillCapabilitySummary(total_tools={}, read_only_tools={}, write_tools={}, checkpointable_tools={}, has_side_effects={}, mcp_sources={}, agent_skill_sources={})",
            s.total_tools,
            s.read_only_tools,
            s.write_tools,
            s.checkpointable_tools,
            if s.has_side_effects { "True" } else { "False" },
            s.mcp_sources,
            s.agent_skill_sources
        )
    }
}

fn summary_json(s: &SkillCapabilitySummary) -> Value {
    json!({
        "total_tools": s.total_tools,
        "read_only_tools": s.read_only_tools,
        "write_tools": s.write_tools,
        "checkpointable_tools": s.checkpointable_tools,
        "has_side_effects": s.has_side_effects,
        "mcp_sources": s.mcp_sources,
        "agent_skill_sources": s.agent_skill_sources,
    })
}

/// A discovered Agent Skill whose name was already taken, and how that was settled.
#[pyclass(frozen, eq, module = "agents_registry", name = "DiscoveryConflict")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PyConflict {
    conflict: agents_discovery::DiscoveryConflict,
}

fn resolution(conflict: &agents_discovery::DiscoveryConflict) -> &'static str {
    match conflict.resolution {
        agents_discovery::ConflictResolution::Skipped => "skipped",
        agents_discovery::ConflictResolution::Replaced => "replaced",
        agents_discovery::ConflictResolution::Failed => "failed",
    }
}

fn conflict_json(conflict: &agents_discovery::DiscoveryConflict) -> Value {
    json!({
        "name": conflict.name,
        "existing_source": conflict.existing_source.as_str(),
        "existing_origin": conflict.existing_origin,
        "new_path": conflict.new_path.to_string_lossy(),
        "resolution": resolution(conflict),
    })
}

#[pymethods]
impl PyConflict {
    /// The contested tool name, `agent_skills/<name>`.
    #[getter]
    fn name(&self) -> &str {
        &self.conflict.name
    }

    #[getter]
    fn existing_source(&self) -> &str {
        self.conflict.existing_source.as_str()
    }

    #[getter]
    fn existing_origin(&self) -> &str {
        &self.conflict.existing_origin
    }

    /// The folder that wanted the name.
    #[getter]
    fn new_path(&self) -> String {
        self.conflict.new_path.to_string_lossy().into_owned()
    }

    /// `skipped`, `replaced` or `failed`.
    #[getter]
    fn resolution(&self) -> &str {
        resolution(&self.conflict)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &conflict_json(&self.conflict))
    }

    fn __str__(&self) -> String {
        self.conflict.to_string()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "DiscoveryConflict(name={}, existing_source={}, resolution={})",
            py_repr(py, &self.conflict.name),
            py_repr(py, self.conflict.existing_source.as_str()),
            py_repr(py, resolution(&self.conflict))
        )
    }
}

/// What a discovery found: the Agent Skills registered, the conflicts, the
/// folders whose `SKILL.md` failed and the warnings.
#[pyclass(frozen, module = "agents_registry", name = "DiscoveryResult")]
#[derive(Debug, Clone)]
pub(crate) struct PyDiscoveryResult {
    pub(crate) result: agents_discovery::DiscoveryResult,
    /// How a re-scan changed the Agent Skills found before (`None` for a
    /// discovery, which keeps them).
    pub(crate) changes: Option<agents_registry::ScopeChanges>,
}

/// A re-scan's changes as JSON: names `added`, `kept`, `changed`, and the
/// `removed` ones with the folder each was found in.
fn changes_json(changes: &agents_registry::ScopeChanges) -> Value {
    json!({
        "added": changes.added,
        "kept": changes.kept,
        "changed": changes.changed,
        "removed": changes
            .removed
            .iter()
            .map(|skill| json!({"name": skill.name, "path": skill.path}))
            .collect::<Vec<_>>(),
    })
}

#[pymethods]
impl PyDiscoveryResult {
    /// The discovered tools (`agent_skills/<name>`).
    #[getter]
    fn discovered(&self) -> Vec<PyToolSpec> {
        self.result
            .discovered
            .iter()
            .map(|spec| PyToolSpec { spec: spec.clone() })
            .collect()
    }

    #[getter]
    fn conflicts(&self) -> Vec<PyConflict> {
        self.result
            .conflicts
            .iter()
            .map(|conflict| PyConflict {
                conflict: conflict.clone(),
            })
            .collect()
    }

    /// One message per folder whose `SKILL.md` failed, with all its problems.
    #[getter]
    fn errors(&self) -> Vec<String> {
        self.result.errors.iter().map(ToString::to_string).collect()
    }

    /// Missing paths, unreadable entries, `SKILL.md` warnings.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.result.warnings.clone()
    }

    /// What a re-scan (`refresh_agent_skills`) changed: `{"added": [...],
    /// "kept": [...], "changed": [...], "removed": [{"name", "path"}]}`;
    /// `None` after `discover_and_register`, which keeps what it found before.
    #[getter]
    fn changes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.changes {
            Some(changes) => to_py(py, &changes_json(changes)),
            None => Ok(py.None().into_bound(py)),
        }
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = &self.result;
        to_py(
            py,
            &json!({
                "discovered": r.discovered.iter().map(spec_json).collect::<Vec<_>>(),
                "conflicts": r.conflicts.iter().map(conflict_json).collect::<Vec<_>>(),
                "errors": self.errors(),
                "warnings": r.warnings,
                "changes": self.changes.as_ref().map(changes_json),
            }),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "DiscoveryResult(discovered={}, conflicts={}, errors={}, warnings={})",
            self.result.discovered.len(),
            self.result.conflicts.len(),
            self.result.errors.len(),
            self.result.warnings.len()
        )
    }
}
