//! Disclosure plans: which of a skill's tools go into a model's context
//! first, and what stands for the rest.
//!
//! - [`Mode::All`]: every tool, as today.
//! - [`Mode::Skills`]: the root skill's own tools, and a loader tool
//!   ([`LOADER`]) that offers each included skill by name, description and
//!   tool count; loading one adds its tools. Tools are grouped by the skill
//!   that defines them (the last skill of their include path), so loading
//!   a skill adds its own tools, not those of the skills it includes (each
//!   is offered on its own).
//! - [`Mode::Search`]: no tool but [`SEARCH`] (ranks every tool, returns the
//!   best with their schemas) and [`CALL`] (calls any tool by name).
//! - [`Mode::Auto`]: `all` while its estimated tokens fit the budget, else
//!   the cheaper of `skills` and `search` (`skills` on a tie).
//!
//! The meta tools' input schemas are strict-mode valid: every object closes
//! with `additionalProperties: false` and requires every property, and no
//! field is optional or nullable. [`CALL`] takes its arguments as JSON text
//! for that reason: a free-form object cannot be strict.

use std::collections::HashMap;

use agents_core::{ExportFormat, ExportedTools, ResolvedToolEntry};
use serde::Serialize;
use serde_json::{Value, json};

use crate::budget::{self, Cost};
use crate::rank::{Ranker, ToolText};

/// The loader tool of [`Mode::Skills`].
pub const LOADER: &str = "load_skills";
/// The search tool of [`Mode::Search`].
pub const SEARCH: &str = "search_tools";
/// The call tool of [`Mode::Search`].
pub const CALL: &str = "call_tool";
/// The most matches one search returns.
pub const MAX_SEARCH_LIMIT: usize = 20;
/// The most names [`Catalog::suggest`] gives.
pub const MAX_SUGGESTIONS: usize = 3;
/// The budget when none is given, in estimated tokens.
pub const DEFAULT_BUDGET_TOKENS: usize = 8_000;
/// The longest skill description the loader repeats, in characters.
const MAX_SKILL_DESCRIPTION: usize = 160;

/// The tool searches of Anthropic's API: the server-side BM25 tool search
/// (`tool_search_tool_bm25_20251119`, named `tool_search_tool_bm25`), which
/// finds tools marked `defer_loading: true` from natural-language queries.
pub const ANTHROPIC_TOOL_SEARCH_TYPE: &str = "tool_search_tool_bm25_20251119";
/// The name Anthropic's API gives its BM25 tool search tool.
pub const ANTHROPIC_TOOL_SEARCH_NAME: &str = "tool_search_tool_bm25";

/// How a skill's tools are disclosed (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Every tool.
    All,
    /// The root's own tools and a loader of the included skills.
    Skills,
    /// A search tool and a call tool.
    Search,
    /// `all` within the budget, else the cheaper of `skills` and `search`.
    Auto,
}

impl Mode {
    /// Every mode, in the order reports show them.
    pub const ALL: [Mode; 4] = [Mode::All, Mode::Skills, Mode::Search, Mode::Auto];

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::All => "all",
            Mode::Skills => "skills",
            Mode::Search => "search",
            Mode::Auto => "auto",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which tools an export marks deferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Defer {
    /// None: every tool, as today.
    None,
    /// Those that do not fit the budget (see [`Catalog::export`]).
    Auto,
    /// All of them.
    All,
}

/// One exported tool of a catalogue.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogTool {
    /// Its registry name.
    pub registry_name: String,
    /// Its export name (the name a model calls).
    pub export_name: String,
    /// The skill that defines it.
    pub skill: String,
    /// The tool as exported in the catalogue's format.
    pub value: Value,
}

/// The tools one skill of the closure defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillGroup {
    /// The skill.
    pub skill: String,
    /// Its description (empty when it has none).
    pub description: String,
    /// Its tools, as indices into [`Catalog::tools`].
    pub tools: Vec<usize>,
    /// True for the root skill.
    pub root: bool,
}

/// A resolved skill's exported tools, grouped by skill and ranked: built
/// once per resolution, it answers plans, searches and loads.
#[derive(Debug, Clone)]
pub struct Catalog {
    format: ExportFormat,
    root: String,
    tools: Vec<CatalogTool>,
    groups: Vec<SkillGroup>,
    by_name: HashMap<String, usize>,
    ranker: Ranker,
    exported: ExportedTools,
}

/// What one mode puts in the context first.
#[derive(Debug, Clone, PartialEq)]
pub struct Disclosure {
    /// The mode asked for.
    pub requested: Mode,
    /// The mode applied (never [`Mode::Auto`]).
    pub mode: Mode,
    /// The budget it was planned for, in estimated tokens.
    pub budget_tokens: usize,
    /// The catalogue tools in the first tool list, as indices.
    pub eager: Vec<usize>,
    /// The skills the loader offers, as indices into [`Catalog::groups`].
    pub offered: Vec<usize>,
    /// The loader, or the search and call tools, in the catalogue's format.
    pub meta: Vec<Value>,
    /// The cost of the first tool list (eager tools and meta tools).
    pub cost: Cost,
}

impl Disclosure {
    /// Whether the first tool list fits the budget.
    pub fn fits(&self) -> bool {
        self.cost.tokens <= self.budget_tokens
    }
}

/// A meta tool and the catalogue tool exported under the same name
/// ([`Catalog::collisions`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Collision<'a> {
    /// The meta tool's name.
    pub meta: String,
    /// The tool of the catalogue named alike.
    pub tool: &'a CatalogTool,
}

/// One search match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match<'a> {
    /// The tool.
    pub tool: &'a CatalogTool,
    /// Its BM25 score.
    pub score: f32,
}

impl Catalog {
    /// The catalogue of `entries` (a resolution of `root`) exported in
    /// `format`; `descriptions` gives the skills' descriptions by name.
    pub fn new(
        root: &str,
        entries: &[ResolvedToolEntry],
        format: ExportFormat,
        descriptions: &HashMap<String, String>,
    ) -> Self {
        let mut exported = agents_core::export_tools(entries, format);
        let names = agents_core::entry_export_names(entries);
        let by_export: HashMap<&str, &ResolvedToolEntry> = entries
            .iter()
            .filter_map(|entry| Some((names.get(entry.name.as_str())?.as_str(), entry)))
            .collect();
        let tools = std::mem::take(&mut exported.tools)
            .into_iter()
            .filter_map(|value| {
                let export_name = exported_name(&value, format)?;
                let entry = by_export.get(export_name.as_str())?;
                let tool = CatalogTool {
                    registry_name: entry.name.clone(),
                    export_name,
                    skill: entry.source_skill.to_string(),
                    value,
                };
                Some((tool, ToolText::of(entry)))
            })
            .collect();
        Self::assemble(&[root], format, tools, descriptions, exported)
    }

    /// The catalogue of tools exported already (those a gateway serves),
    /// each with the text the ranker reads. `roots` are the skills served:
    /// their own tools are the root's (the first names the catalogue).
    pub fn from_tools(
        roots: &[&str],
        format: ExportFormat,
        tools: Vec<(CatalogTool, ToolText)>,
        descriptions: &HashMap<String, String>,
    ) -> Self {
        let exported = ExportedTools {
            tools: Vec::new(),
            left_out: Vec::new(),
            notes: Vec::new(),
            agent_skills: Vec::new(),
        };
        Self::assemble(roots, format, tools, descriptions, exported)
    }

    fn assemble(
        roots: &[&str],
        format: ExportFormat,
        parts: Vec<(CatalogTool, ToolText)>,
        descriptions: &HashMap<String, String>,
        exported: ExportedTools,
    ) -> Self {
        let mut groups: Vec<SkillGroup> = Vec::new();
        let mut group_of: HashMap<String, usize> = HashMap::new();
        for root in roots {
            if !group_of.contains_key(*root) {
                group_of.insert((*root).to_owned(), groups.len());
                groups.push(SkillGroup {
                    skill: (*root).to_owned(),
                    description: descriptions.get(*root).cloned().unwrap_or_default(),
                    tools: Vec::new(),
                    root: true,
                });
            }
        }
        let mut tools = Vec::with_capacity(parts.len());
        let mut texts = Vec::with_capacity(parts.len());
        for (tool, text) in parts {
            let next = groups.len();
            let group = *group_of.entry(tool.skill.clone()).or_insert(next);
            if group == next {
                groups.push(SkillGroup {
                    description: descriptions.get(&tool.skill).cloned().unwrap_or_default(),
                    skill: tool.skill.clone(),
                    tools: Vec::new(),
                    root: false,
                });
            }
            if let Some(group) = groups.get_mut(group) {
                group.tools.push(tools.len());
            }
            texts.push(text);
            tools.push(tool);
        }
        let by_name = tools
            .iter()
            .enumerate()
            .flat_map(|(i, tool)| {
                [
                    (tool.export_name.clone(), i),
                    (tool.registry_name.clone(), i),
                ]
            })
            .collect();
        Self {
            format,
            root: roots
                .first()
                .map(|root| (*root).to_owned())
                .unwrap_or_default(),
            ranker: Ranker::new(&texts),
            tools,
            groups,
            by_name,
            exported,
        }
    }

    /// The root skill.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The format the tools are exported in.
    pub fn format(&self) -> ExportFormat {
        self.format
    }

    /// Every exported tool, in entry order.
    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }

    /// The skills that define tools, the root first, then in the order
    /// their first tool comes.
    pub fn groups(&self) -> &[SkillGroup] {
        &self.groups
    }

    /// What the export left out, its notes and the Agent Skills it left out
    /// of a function array (its `tools` are in [`Catalog::tools`]).
    pub fn exported(&self) -> &ExportedTools {
        &self.exported
    }

    /// The tool exported as, or registered as, `name`.
    pub fn tool(&self, name: &str) -> Option<&CatalogTool> {
        self.by_name.get(name).and_then(|&i| self.tools.get(i))
    }

    /// The tools `skill` defines (what loading it adds); `None` for a skill
    /// that defines no exported tool.
    pub fn load(&self, skill: &str) -> Option<Vec<&CatalogTool>> {
        let group = self.groups.iter().find(|group| group.skill == skill)?;
        Some(
            group
                .tools
                .iter()
                .filter_map(|&i| self.tools.get(i))
                .collect(),
        )
    }

    /// The tools that match `query` best, at most `limit` (capped at
    /// [`MAX_SEARCH_LIMIT`]), best first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Match<'_>> {
        self.ranker
            .search(query, limit.min(MAX_SEARCH_LIMIT))
            .into_iter()
            .filter_map(|hit| {
                Some(Match {
                    tool: self.tools.get(hit.index)?,
                    score: hit.score,
                })
            })
            .collect()
    }

    /// The names to suggest for an unknown tool `name` (a `call_tool` of a
    /// name no tool has): the export name a typo away, else the export
    /// names of the best [`MAX_SUGGESTIONS`] matches of `name` read as a
    /// query; empty when nothing comes near.
    pub fn suggest(&self, name: &str) -> Vec<&str> {
        let names: Vec<&str> = self
            .tools
            .iter()
            .map(|tool| tool.export_name.as_str())
            .collect();
        if let Some(close) =
            agents_core::text::did_you_mean(name, &names).and_then(|close| self.tool(close))
        {
            return vec![close.export_name.as_str()];
        }
        self.search(name, MAX_SUGGESTIONS)
            .into_iter()
            .map(|found| found.tool.export_name.as_str())
            .collect()
    }

    /// The cost of every tool.
    pub fn all_cost(&self) -> Cost {
        Cost::of(self.tools.iter().map(|tool| &tool.value))
    }

    /// What `mode` puts in the context first, within `budget_tokens` (which
    /// only [`Mode::Auto`] reads).
    pub fn plan(&self, mode: Mode, budget_tokens: usize) -> Disclosure {
        match mode {
            Mode::All => self.disclose(mode, Mode::All, budget_tokens, self.all(), vec![], vec![]),
            Mode::Skills => self.skills(mode, budget_tokens),
            Mode::Search => self.searched(mode, budget_tokens),
            Mode::Auto => {
                let all = self.plan(Mode::All, budget_tokens);
                if all.fits() {
                    return Disclosure {
                        requested: Mode::Auto,
                        ..all
                    };
                }
                let skills = self.skills(Mode::Auto, budget_tokens);
                let search = self.searched(Mode::Auto, budget_tokens);
                if skills.cost.tokens <= search.cost.tokens {
                    skills
                } else {
                    search
                }
            }
        }
    }

    /// The first tool list of `disclosure`: its eager tools, then its meta
    /// tools.
    pub fn initial_tools(&self, disclosure: &Disclosure) -> Vec<Value> {
        disclosure
            .eager
            .iter()
            .filter_map(|&i| self.tools.get(i).map(|tool| tool.value.clone()))
            .chain(disclosure.meta.iter().cloned())
            .collect()
    }

    /// The meta tools of `disclosure` whose name a tool of the catalogue
    /// is exported under too: one list would name two tools alike.
    pub fn collisions(&self, disclosure: &Disclosure) -> Vec<Collision<'_>> {
        disclosure
            .meta
            .iter()
            .filter_map(|meta| exported_name(meta, self.format))
            .filter_map(|meta| {
                let tool = self.tools.iter().find(|tool| tool.export_name == meta)?;
                Some(Collision { meta, tool })
            })
            .collect()
    }

    fn all(&self) -> Vec<usize> {
        (0..self.tools.len()).collect()
    }

    fn disclose(
        &self,
        requested: Mode,
        mode: Mode,
        budget_tokens: usize,
        eager: Vec<usize>,
        offered: Vec<usize>,
        meta: Vec<Value>,
    ) -> Disclosure {
        let cost = Cost::of(
            eager
                .iter()
                .filter_map(|&i| self.tools.get(i).map(|tool| &tool.value))
                .chain(&meta),
        );
        Disclosure {
            requested,
            mode,
            budget_tokens,
            eager,
            offered,
            meta,
            cost,
        }
    }

    fn skills(&self, requested: Mode, budget_tokens: usize) -> Disclosure {
        let eager: Vec<usize> = self
            .groups
            .iter()
            .filter(|group| group.root)
            .flat_map(|group| group.tools.iter().copied())
            .collect();
        let offered: Vec<usize> = self
            .groups
            .iter()
            .enumerate()
            .filter(|(_, group)| !group.root && !group.tools.is_empty())
            .map(|(i, _)| i)
            .collect();
        let meta = if offered.is_empty() {
            vec![]
        } else {
            vec![self.loader(&offered)]
        };
        self.disclose(requested, Mode::Skills, budget_tokens, eager, offered, meta)
    }

    fn searched(&self, requested: Mode, budget_tokens: usize) -> Disclosure {
        let meta = vec![
            meta_tool(
                self.format,
                SEARCH,
                &format!(
                    "Finds tools among the {} tools of skill `{}` by name, description, the skill that brought them and parameter names; returns the best matches with their input schemas. Call one with `{CALL}`.",
                    self.tools.len(),
                    self.root
                ),
                search_schema(),
                true,
            ),
            meta_tool(
                self.format,
                CALL,
                &format!(
                    "Calls a tool `{SEARCH}` returned, by its name, with its arguments as JSON text."
                ),
                call_schema(),
                false,
            ),
        ];
        self.disclose(requested, Mode::Search, budget_tokens, vec![], vec![], meta)
    }

    /// The loader offering the skills `offered` (indices into the groups).
    fn loader(&self, offered: &[usize]) -> Value {
        let mut names = Vec::with_capacity(offered.len());
        let mut lines = Vec::with_capacity(offered.len());
        for group in offered.iter().filter_map(|&i| self.groups.get(i)) {
            names.push(group.skill.clone());
            let description = agents_core::text::shorten(&group.description, MAX_SKILL_DESCRIPTION);
            lines.push(if description.is_empty() {
                format!("- {} ({} tools)", group.skill, group.tools.len())
            } else {
                format!(
                    "- {} ({} tools): {description}",
                    group.skill,
                    group.tools.len()
                )
            });
        }
        meta_tool(
            self.format,
            LOADER,
            &format!(
                "Adds the tools of included skills to your tool list. Skills:\n{}",
                lines.join("\n")
            ),
            loader_schema(&names),
            true,
        )
    }

    /// The tools of an export with `defer`, within `budget_tokens`:
    /// - [`Defer::None`]: every tool;
    /// - Anthropic: [`Defer::All`] marks every tool `defer_loading: true`
    ///   and adds Anthropic's tool search tool; [`Defer::Auto`] marks
    ///   nothing while every tool fits the budget, else keeps the root
    ///   skill's own tools loaded when they fit it with the search tool,
    ///   and marks the rest;
    /// - other formats, which have no deferred loading: [`Defer::All`]
    ///   gives the [`Mode::Search`] pair, [`Defer::Auto`] the
    ///   [`Mode::Auto`] plan's first tool list.
    pub fn export(&self, defer: Defer, budget_tokens: usize) -> Vec<Value> {
        if defer == Defer::None {
            return self.tools.iter().map(|tool| tool.value.clone()).collect();
        }
        if self.format != ExportFormat::Anthropic {
            let mode = if defer == Defer::All {
                Mode::Search
            } else {
                Mode::Auto
            };
            return self.initial_tools(&self.plan(mode, budget_tokens));
        }
        let search_tool = json!({
            "type": ANTHROPIC_TOOL_SEARCH_TYPE,
            "name": ANTHROPIC_TOOL_SEARCH_NAME,
        });
        let eager: Vec<bool> = match defer {
            Defer::Auto if self.all_cost().tokens <= budget_tokens => {
                return self.tools.iter().map(|tool| tool.value.clone()).collect();
            }
            Defer::Auto => {
                let root = self.plan(Mode::Skills, budget_tokens);
                let cost = Cost::of(
                    root.eager
                        .iter()
                        .filter_map(|&i| self.tools.get(i).map(|tool| &tool.value))
                        .chain([&search_tool]),
                );
                let keep = cost.tokens <= budget_tokens;
                let mut eager = vec![false; self.tools.len()];
                for &i in root.eager.iter().filter(|_| keep) {
                    if let Some(flag) = eager.get_mut(i) {
                        *flag = true;
                    }
                }
                eager
            }
            Defer::All | Defer::None => vec![false; self.tools.len()],
        };
        let mut out: Vec<Value> = self
            .tools
            .iter()
            .zip(eager)
            .map(|(tool, eager)| {
                let mut value = tool.value.clone();
                if !eager && let Value::Object(fields) = &mut value {
                    fields.insert("defer_loading".into(), Value::Bool(true));
                }
                value
            })
            .collect();
        out.push(search_tool);
        out
    }

    /// What each mode puts in the context first, and what each skill's
    /// tools cost, within `budget_tokens`.
    pub fn budget(&self, budget_tokens: usize) -> BudgetReport {
        let all = self.all_cost();
        let modes = Mode::ALL
            .iter()
            .map(|&mode| {
                let plan = self.plan(mode, budget_tokens);
                ModeCost {
                    mode,
                    applied: plan.mode,
                    tools: plan.eager.len(),
                    meta_tools: plan.meta.len(),
                    deferred: self.tools.len() - plan.eager.len(),
                    bytes: plan.cost.bytes,
                    tokens: plan.cost.tokens,
                    percent_of_all: percent(plan.cost.tokens, all.tokens),
                    fits: plan.fits(),
                }
            })
            .collect();
        let skills = self
            .groups
            .iter()
            .filter(|group| !group.tools.is_empty() || group.root)
            .map(|group| {
                let cost = Cost::of(
                    group
                        .tools
                        .iter()
                        .filter_map(|&i| self.tools.get(i).map(|tool| &tool.value)),
                );
                SkillCost {
                    skill: group.skill.clone(),
                    root: group.root,
                    tools: cost.tools,
                    bytes: cost.bytes,
                    tokens: cost.tokens,
                }
            })
            .collect();
        BudgetReport {
            skill: self.root.clone(),
            method: budget::METHOD,
            budget_tokens,
            modes,
            skills,
        }
    }
}

/// `part` as a percentage of `whole`, to one decimal.
fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 * 1000.0 / whole as f64).round() / 10.0
}

/// What each mode puts in the context first ([`Catalog::budget`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetReport {
    /// The root skill.
    pub skill: String,
    /// How tokens are estimated.
    pub method: &'static str,
    /// The budget `auto` plans for.
    pub budget_tokens: usize,
    /// One row per mode.
    pub modes: Vec<ModeCost>,
    /// One row per skill that defines tools, the root first.
    pub skills: Vec<SkillCost>,
}

/// The first tool list of one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeCost {
    /// The mode.
    pub mode: Mode,
    /// The mode applied (what `auto` chose).
    pub applied: Mode,
    /// The skill's tools in the list.
    pub tools: usize,
    /// The loader, search and call tools in the list.
    pub meta_tools: usize,
    /// The skill's tools left for later.
    pub deferred: usize,
    /// Bytes of the list.
    pub bytes: usize,
    /// Estimated tokens of the list.
    pub tokens: usize,
    /// `tokens` as a percentage of `all`'s.
    pub percent_of_all: f64,
    /// Whether `tokens` is within the budget.
    pub fits: bool,
}

/// What one skill's own tools cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillCost {
    /// The skill.
    pub skill: String,
    /// True for the root.
    pub root: bool,
    /// Its tools.
    pub tools: usize,
    /// Bytes of their array.
    pub bytes: usize,
    /// Estimated tokens of their array.
    pub tokens: usize,
}

/// The name an exported tool is called by in `format`.
pub fn exported_name(value: &Value, format: ExportFormat) -> Option<String> {
    let name = match format {
        ExportFormat::OpenAi => value.get("function")?.get("name")?,
        ExportFormat::Anthropic | ExportFormat::Mcp => value.get("name")?,
    };
    name.as_str().map(str::to_owned)
}

/// A meta tool in `format`: OpenAI's strict function, Anthropic's tool, or
/// an MCP tool (annotated read-only when `read_only`).
fn meta_tool(
    format: ExportFormat,
    name: &str,
    description: &str,
    schema: Value,
    read_only: bool,
) -> Value {
    match format {
        ExportFormat::OpenAi => json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": schema,
                "strict": true,
            },
        }),
        ExportFormat::Anthropic => {
            json!({"name": name, "description": description, "input_schema": schema})
        }
        ExportFormat::Mcp => {
            let mut tool = json!({"name": name, "description": description, "inputSchema": schema});
            if read_only && let Value::Object(fields) = &mut tool {
                fields.insert("annotations".into(), json!({"readOnlyHint": true}));
            }
            tool
        }
    }
}

/// The loader's input: the skills to load, each one of `names`.
pub fn loader_schema(names: &[String]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "skills": {
                "type": "array",
                "description": "The skills whose tools to add",
                "items": {"type": "string", "enum": names},
            },
        },
        "required": ["skills"],
        "additionalProperties": false,
    })
}

/// The search tool's input: a query and how many matches.
pub fn search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What the tool should do, in a few words",
            },
            "limit": {
                "type": "integer",
                "description": "How many matches to return",
                "minimum": 1,
                "maximum": MAX_SEARCH_LIMIT,
            },
        },
        "required": ["query", "limit"],
        "additionalProperties": false,
    })
}

/// The call tool's input: a tool name and its arguments as JSON text.
pub fn call_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": format!("The tool's name, as `{SEARCH}` returned it"),
            },
            "arguments": {
                "type": "string",
                "description": "The tool's arguments: a JSON object, as text (`{}` for none)",
            },
        },
        "required": ["name", "arguments"],
        "additionalProperties": false,
    })
}
