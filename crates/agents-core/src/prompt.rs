//! The `<available_skills>` block agents put in their system prompt, in the
//! layout the Agent Skills reference's `to-prompt` writes: every element on
//! its own line, text HTML-escaped (`&`, `<`, `>`, `"`, `'`).

use crate::{ResolvedToolEntry, ToolSource};

/// One Agent Skill as the prompt lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSkill {
    /// The `name` of its `SKILL.md`.
    pub name: String,
    /// Its `description`.
    pub description: String,
    /// The absolute path of its `SKILL.md`.
    pub location: String,
}

/// The Agent Skills among resolved `entries`, in resolution order; entries
/// whose Agent Skill was not discovered on this machine are left out.
pub fn prompt_skills(entries: &[ResolvedToolEntry]) -> Vec<PromptSkill> {
    entries
        .iter()
        .filter_map(|entry| entry.tool.as_ref())
        .filter(|tool| tool.source == ToolSource::AgentSkills)
        .filter_map(|tool| {
            Some(PromptSkill {
                name: tool
                    .name
                    .strip_prefix("agent_skills/")
                    .unwrap_or(&tool.name)
                    .to_owned(),
                description: tool.description.clone(),
                location: tool.skill_md()?.to_owned(),
            })
        })
        .collect()
}

/// The `<available_skills>` block for `skills`.
pub fn available_skills_prompt(skills: &[PromptSkill]) -> String {
    let mut out = String::from("<available_skills>\n");
    for skill in skills {
        out.push_str("<skill>\n");
        for (tag, text) in [
            ("name", &skill.name),
            ("description", &skill.description),
            ("location", &skill.location),
        ] {
            out.push_str(&format!("<{tag}>\n{}\n</{tag}>\n", escape(text)));
        }
        out.push_str("</skill>\n");
    }
    out.push_str("</available_skills>\n");
    out
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_matches_the_reference_layout_and_escapes_markup() {
        let skills = [PromptSkill {
            name: "pdf".into(),
            description: "Read <PDF> & \"forms\" it's".into(),
            location: "/s/pdf/SKILL.md".into(),
        }];
        assert_eq!(
            available_skills_prompt(&skills),
            "<available_skills>\n<skill>\n<name>\npdf\n</name>\n<description>\n\
             Read &lt;PDF&gt; &amp; &quot;forms&quot; it&#x27;s\n</description>\n\
             <location>\n/s/pdf/SKILL.md\n</location>\n</skill>\n</available_skills>\n"
        );
        assert_eq!(
            available_skills_prompt(&[]),
            "<available_skills>\n</available_skills>\n"
        );
    }
}
