use serde::{Deserialize, Serialize};

use crate::name::SkillName;
use crate::resolve::{ResolveWarning, SkillResolver, SkillSource, ToolLookup};

/// A plan: the skills an agent run will need.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Skill names as written (validated here, not at parse time, so that a
    /// bad name is one error among the others).
    pub skills: Vec<String>,
}

/// The outcome of [`validate_plan`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PlanReport {
    /// Problems that make the plan unsatisfiable.
    pub errors: Vec<String>,
    /// Problems worth a look that do not block the plan.
    pub warnings: Vec<String>,
}

impl PlanReport {
    /// True when there are no errors.
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Checks that every skill of `plan` exists, its includes resolve without
/// cycles or forbidden overrides, and (when `tools` is given) its tool refs
/// are registered. Collects every problem instead of stopping at the first.
pub fn validate_plan(
    plan: &Plan,
    skills: &dyn SkillSource,
    tools: Option<&dyn ToolLookup>,
) -> PlanReport {
    let mut report = PlanReport::default();
    let empty = crate::registry::ToolRegistry::new();
    let lookup: &dyn ToolLookup = tools.unwrap_or(&empty);
    let resolver = SkillResolver::new(skills, lookup);
    let push_unique = |list: &mut Vec<String>, message: String| {
        if !list.contains(&message) {
            list.push(message);
        }
    };
    for raw in &plan.skills {
        let name = match SkillName::new(raw) {
            Ok(name) => name,
            Err(err) => {
                push_unique(&mut report.errors, format!("Plan: {err}"));
                continue;
            }
        };
        if skills.skill(&name).is_none() {
            push_unique(
                &mut report.errors,
                format!("Skill '{name}' referenced in plan is not registered"),
            );
            continue;
        }
        let (errors, warnings) = resolver.diagnose(&name);
        for error in errors {
            let message = match error {
                crate::ResolveError::Cycle { .. } => format!("Skill '{name}': {error}"),
                other => other.to_string(),
            };
            push_unique(&mut report.errors, message);
        }
        for warning in warnings {
            match warning {
                ResolveWarning::UnknownTool { .. } if tools.is_none() => {}
                ResolveWarning::UnknownTool { .. } => {
                    push_unique(&mut report.errors, warning.to_string());
                }
                other => push_unique(&mut report.warnings, other.to_string()),
            }
        }
    }
    report
}
