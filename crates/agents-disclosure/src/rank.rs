//! A BM25 ranker over the tools of one resolution (BM25F: one score over
//! several weighted fields).
//!
//! Each tool is a document of four fields, tokenised by
//! [`crate::tokenize::tokens`]: its name, its description (after
//! overrides), the skills that brought it (the skill that defines it and
//! its include path from the root) and the names of its parameters (every
//! `properties` key of its input schema, nested ones too). A term's
//! frequency in a document is the sum over fields of its count, times the
//! field's weight, divided by the field's length normalisation
//! `1 - b + b * len / avg_len`; the score is the usual
//! `idf * tf * (k1 + 1) / (k1 + tf)` summed over the query's distinct
//! terms, with `idf = ln(1 + (n - df + 0.5) / (df + 0.5))`.
//!
//! Everything a query needs is computed when the ranker is built (once per
//! resolution): per term, the documents that hold it with their whole
//! contribution. A query only adds those up, so its cost is the length of
//! the postings of its terms, not the number of tools.

use std::collections::HashMap;

use agents_core::ResolvedToolEntry;
use serde_json::Value;

use crate::tokenize::tokens;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;
/// How much a match in each field counts: name, description, skills,
/// parameter names.
const WEIGHTS: [f32; FIELDS] = [3.0, 1.0, 0.5, 1.0];
const FIELDS: usize = 4;
/// The most parameter names read from one schema, and how deep.
const MAX_PARAMETERS: usize = 64;
const MAX_SCHEMA_DEPTH: usize = 4;

/// The text of one tool the ranker reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolText {
    /// The tool's name (a registry name such as `mcp:github/create_issue`).
    pub name: String,
    /// What it does.
    pub description: String,
    /// The skills that brought it: its include path from the root to the
    /// skill that defines it.
    pub skills: Vec<String>,
    /// The names of its parameters.
    pub parameters: Vec<String>,
}

impl ToolText {
    /// The text of a resolved entry: its name, its description after
    /// overrides (empty for a tool the registry does not know), its include
    /// path and its input schema's property names.
    pub fn of(entry: &ResolvedToolEntry) -> Self {
        let description = agents_core::effective(entry)
            .map(|tool| tool.description)
            .unwrap_or_default();
        let parameters = entry
            .tool
            .as_ref()
            .and_then(|tool| tool.input_schema.as_ref())
            .map(parameter_names)
            .unwrap_or_default();
        Self {
            name: entry.name.clone(),
            description,
            skills: entry
                .include_path
                .skills()
                .into_iter()
                .map(ToString::to_string)
                .collect(),
            parameters,
        }
    }
}

/// The `properties` keys of `schema` and of the schemas inside it, first
/// met first, at most [`MAX_PARAMETERS`] of them.
pub fn parameter_names(schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut pending = vec![(schema, 0usize)];
    while let Some((value, depth)) = pending.pop() {
        if depth > MAX_SCHEMA_DEPTH || names.len() >= MAX_PARAMETERS {
            continue;
        }
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    for (name, inner) in properties {
                        if names.len() < MAX_PARAMETERS && !names.contains(name) {
                            names.push(name.clone());
                        }
                        pending.push((inner, depth + 1));
                    }
                }
                for key in ["items", "anyOf", "oneOf", "allOf"] {
                    if let Some(inner) = map.get(key) {
                        pending.push((inner, depth + 1));
                    }
                }
            }
            Value::Array(items) => pending.extend(items.iter().map(|item| (item, depth))),
            _ => {}
        }
    }
    names
}

/// One ranked tool: its index in the list the ranker was built from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Index of the tool in the ranker's input.
    pub index: usize,
    /// Its BM25 score (higher is better; only comparable within one query).
    pub score: f32,
}

/// A BM25 index over a list of tools (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Ranker {
    /// Per term, each document holding it and the term's whole contribution
    /// to that document's score.
    postings: HashMap<String, Vec<(u32, f32)>>,
    len: usize,
}

impl Ranker {
    /// Indexes the entries of a resolution, in their order.
    pub fn from_entries(entries: &[ResolvedToolEntry]) -> Self {
        let texts: Vec<ToolText> = entries.iter().map(ToolText::of).collect();
        Self::new(&texts)
    }

    /// Indexes `tools`, in their order.
    pub fn new(tools: &[ToolText]) -> Self {
        // Per document, per field, its tokens.
        let fields: Vec<[Vec<String>; FIELDS]> = tools
            .iter()
            .map(|tool| {
                [
                    tokens(&tool.name),
                    tokens(&tool.description),
                    tool.skills.iter().flat_map(|skill| tokens(skill)).collect(),
                    tool.parameters
                        .iter()
                        .flat_map(|name| tokens(name))
                        .collect(),
                ]
            })
            .collect();
        let count = tools.len().max(1) as f32;
        let mut average = [0f32; FIELDS];
        for document in &fields {
            for (sum, field) in average.iter_mut().zip(document) {
                *sum += field.len() as f32;
            }
        }
        for sum in &mut average {
            *sum = (*sum / count).max(1.0);
        }
        // Per term, each document's weighted, normalised frequency.
        let mut frequencies: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        for (index, document) in fields.into_iter().enumerate() {
            let Ok(index) = u32::try_from(index) else {
                break;
            };
            let mut weighted: HashMap<String, f32> = HashMap::new();
            for ((terms, weight), avg) in document.into_iter().zip(WEIGHTS).zip(average) {
                let norm = 1.0 - B + B * terms.len() as f32 / avg;
                for term in terms {
                    *weighted.entry(term).or_default() += weight / norm;
                }
            }
            for (term, tf) in weighted {
                frequencies.entry(term).or_default().push((index, tf));
            }
        }
        let postings = frequencies
            .into_iter()
            .map(|(term, mut docs)| {
                let df = docs.len() as f32;
                let idf = (1.0 + (count - df + 0.5) / (df + 0.5)).ln();
                for (_, tf) in &mut docs {
                    *tf = idf * *tf * (K1 + 1.0) / (K1 + *tf);
                }
                (term, docs)
            })
            .collect();
        Self {
            postings,
            len: tools.len(),
        }
    }

    /// How many tools the ranker holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The tools that match `query` best, at most `limit`, best first
    /// (equal scores in input order). Tools that share no term with the
    /// query are not returned.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut terms = tokens(query);
        terms.sort_unstable();
        terms.dedup();
        let mut scores = vec![0f32; self.len];
        let mut touched: Vec<u32> = Vec::new();
        for term in &terms {
            for &(index, contribution) in self.postings.get(term).into_iter().flatten() {
                if let Some(score) = scores.get_mut(index as usize) {
                    if *score == 0.0 {
                        touched.push(index);
                    }
                    *score += contribution;
                }
            }
        }
        let mut hits: Vec<Hit> = touched
            .into_iter()
            .map(|index| Hit {
                index: index as usize,
                score: scores.get(index as usize).copied().unwrap_or_default(),
            })
            .collect();
        let order = |a: &Hit, b: &Hit| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index));
        if hits.len() > limit && limit > 0 {
            hits.select_nth_unstable_by(limit - 1, order);
        }
        hits.truncate(limit);
        hits.sort_unstable_by(order);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, skill: &str, parameters: &[&str]) -> ToolText {
        ToolText {
            name: name.into(),
            description: description.into(),
            skills: vec!["team/root".into(), skill.into()],
            parameters: parameters.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    fn catalogue() -> Vec<ToolText> {
        vec![
            tool(
                "builtin/read_file",
                "Read the contents of a file",
                "team/files",
                &["path"],
            ),
            tool(
                "builtin/write_file",
                "Write text to a file, replacing it",
                "team/files",
                &["path", "content"],
            ),
            tool(
                "mcp:github/create_issue",
                "Open a new issue in a repository",
                "team/github",
                &["owner", "repo", "title", "body"],
            ),
            tool(
                "mcp:github/list_pull_requests",
                "List pull requests of a repository",
                "team/github",
                &["owner", "repo", "state"],
            ),
            tool(
                "mcp:time/convert_time",
                "Convert a time between timezones",
                "team/clock",
                &["source_timezone", "time", "target_timezone"],
            ),
        ]
    }

    fn names(ranker: &Ranker, tools: &[ToolText], query: &str) -> Vec<String> {
        ranker
            .search(query, 3)
            .into_iter()
            .map(|hit| tools[hit.index].name.clone())
            .collect()
    }

    #[test]
    fn each_field_finds_its_tool() {
        let tools = catalogue();
        let ranker = Ranker::new(&tools);
        // Name.
        assert_eq!(
            names(&ranker, &tools, "createIssue")[0],
            "mcp:github/create_issue"
        );
        // Description, with folded suffixes.
        assert_eq!(
            names(&ranker, &tools, "converting timezones")[0],
            "mcp:time/convert_time"
        );
        // Skill of the include path.
        assert_eq!(names(&ranker, &tools, "clock")[0], "mcp:time/convert_time");
        // Parameter name.
        assert_eq!(
            names(&ranker, &tools, "target timezone")[0],
            "mcp:time/convert_time"
        );
        assert_eq!(
            names(&ranker, &tools, "write text into a file")[0],
            "builtin/write_file"
        );
    }

    #[test]
    fn nothing_shared_finds_nothing_and_limit_holds() {
        let tools = catalogue();
        let ranker = Ranker::new(&tools);
        assert!(ranker.search("kubernetes", 5).is_empty());
        assert!(ranker.search("", 5).is_empty());
        assert!(ranker.search("file", 0).is_empty());
        assert_eq!(ranker.search("repository file time", 2).len(), 2);
        assert_eq!(ranker.len(), 5);
        assert!(Ranker::new(&[]).search("file", 3).is_empty());
    }

    #[test]
    fn a_name_match_beats_a_description_match() {
        let tools = vec![
            tool("x/notes", "keeps a list of deploy steps", "a/b", &[]),
            tool("x/deploy", "ships the build", "a/b", &[]),
        ];
        let ranker = Ranker::new(&tools);
        assert_eq!(names(&ranker, &tools, "deploy")[0], "x/deploy");
    }

    #[test]
    fn parameter_names_are_read_from_nested_schemas() {
        let schema = json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "filter": {"type": "object", "properties": {"label_name": {"type": "string"}}},
                "items": {"type": "array", "items": {"properties": {"sha": {}}}},
            },
        });
        assert_eq!(
            parameter_names(&schema),
            ["owner", "filter", "items", "sha", "label_name"]
        );
        assert!(parameter_names(&json!(true)).is_empty());
    }

    proptest::proptest! {
        /// Hits are sorted, unique, within the limit, and each shares a
        /// term with the query; a tool's own name finds it.
        #[test]
        fn search_is_ordered_and_bounded(
            words in proptest::collection::vec("[a-z]{3,7}", 1..40),
            query in "[a-z ]{0,20}",
            limit in 0usize..8,
        ) {
            let tools: Vec<ToolText> = words
                .chunks(2)
                .enumerate()
                .map(|(i, pair)| tool(&format!("t{i}_{}", pair[0]), &pair.join(" "), "a/b", &[]))
                .collect();
            let ranker = Ranker::new(&tools);
            let hits = ranker.search(&query, limit);
            proptest::prop_assert!(hits.len() <= limit);
            for pair in hits.windows(2) {
                proptest::prop_assert!(pair[0].score >= pair[1].score);
                proptest::prop_assert!(pair[0].index != pair[1].index);
            }
            let query_terms = tokens(&query);
            for hit in &hits {
                let tool = &tools[hit.index];
                let text = format!("{} {} {}", tool.name, tool.description, tool.skills.join(" "));
                let terms = tokens(&text);
                proptest::prop_assert!(query_terms.iter().any(|t| terms.contains(t)));
            }
            for (i, tool) in tools.iter().enumerate() {
                let found = ranker.search(&tool.name, tools.len());
                proptest::prop_assert!(found.iter().any(|hit| hit.index == i));
            }
        }
    }
}
