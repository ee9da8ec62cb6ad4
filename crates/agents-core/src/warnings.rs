//! Warnings for people: one line per problem, however many skills share it.
//!
//! A resolution reports an unknown tool once per skill that names it; in a
//! large closure the same missing tool can be named by thousands of skills.
//! [`summarize_warnings`] turns that into one line per unknown tool, naming a
//! few of the skills and counting all of them, and drops exact repeats of any
//! other warning. Linear in the number of warnings.

use std::collections::HashSet;

use indexmap::{IndexMap, IndexSet};

use crate::name::SkillName;
use crate::resolve::ResolveWarning;

/// How many skill names a summarized line lists before "and N more".
pub const NAMED_SKILLS: usize = 3;

/// The warnings as lines, in first-seen order. An unknown tool named by one
/// skill keeps the specification's message (`Skill 'S': Tool 'T' is not
/// registered`); named by several, it becomes `Tool 'T' is not registered
/// (named by N skills: 'a', 'b', 'c' and N-3 more)`.
pub fn summarize_warnings(warnings: &[ResolveWarning]) -> Vec<String> {
    enum Line<'a> {
        Unknown(&'a str),
        Other(String),
    }
    let mut lines: Vec<Line<'_>> = Vec::new();
    // Each tool's skills as a set (in first-named order): a closure of
    // thousands of skills naming one missing tool asks once per skill.
    let mut unknown: IndexMap<&str, IndexSet<&SkillName>> = IndexMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    for warning in warnings {
        match warning {
            ResolveWarning::UnknownTool { skill, tool } => {
                let skills = unknown.entry(tool.as_str()).or_default();
                if skills.is_empty() {
                    lines.push(Line::Unknown(tool));
                }
                skills.insert(skill);
            }
            other => {
                let text = other.to_string();
                if seen.insert(text.clone()) {
                    lines.push(Line::Other(text));
                }
            }
        }
    }
    lines
        .into_iter()
        .map(|line| match line {
            Line::Other(text) => text,
            Line::Unknown(tool) => {
                let skills: Vec<&SkillName> = unknown
                    .get(tool)
                    .map(|skills| skills.iter().copied().collect())
                    .unwrap_or_default();
                match skills.as_slice() {
                    [one] => ResolveWarning::UnknownTool {
                        skill: (*one).clone(),
                        tool: tool.to_owned(),
                    }
                    .to_string(),
                    many => {
                        let named: Vec<String> = many
                            .iter()
                            .take(NAMED_SKILLS)
                            .map(|skill| format!("'{skill}'"))
                            .collect();
                        let rest = many.len().saturating_sub(NAMED_SKILLS);
                        let more = if rest > 0 {
                            format!(" and {rest} more")
                        } else {
                            String::new()
                        };
                        format!(
                            "Tool '{}' is not registered (named by {} skills: {}{more})",
                            crate::text::shorten_middle(tool, 512),
                            many.len(),
                            named.join(", ")
                        )
                    }
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown(skill: &str, tool: &str) -> ResolveWarning {
        ResolveWarning::UnknownTool {
            skill: SkillName::new(skill).unwrap(),
            tool: tool.into(),
        }
    }

    #[test]
    fn one_line_per_unknown_tool_with_a_count() {
        let mut warnings: Vec<ResolveWarning> = (0..5)
            .map(|i| unknown(&format!("l/s{i}"), "custom/missing"))
            .collect();
        warnings.insert(1, unknown("l/only", "custom/other"));
        warnings.push(ResolveWarning::McpNotCached {
            skill: SkillName::new("l/m").unwrap(),
            server: "gh".into(),
        });
        warnings.push(warnings[warnings.len() - 1].clone());
        assert_eq!(
            summarize_warnings(&warnings),
            [
                "Tool 'custom/missing' is not registered (named by 5 skills: 'l/s0', 'l/s1', 'l/s2' and 2 more)",
                "Skill 'l/only': Tool 'custom/other' is not registered",
                "Skill 'l/m': MCP server 'gh' has no cached tool list (run `refresh mcp server gh` or use `--refresh`)",
            ]
        );
    }

    #[test]
    fn two_skills_are_both_named() {
        let warnings = [
            unknown("l/a", "x/y"),
            unknown("l/b", "x/y"),
            unknown("l/a", "x/y"),
        ];
        assert_eq!(
            summarize_warnings(&warnings),
            ["Tool 'x/y' is not registered (named by 2 skills: 'l/a', 'l/b')"]
        );
    }
}
