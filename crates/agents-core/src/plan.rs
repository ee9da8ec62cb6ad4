use indexmap::IndexSet;
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

    /// Cuts each list to its first `max` lines, then one line saying how
    /// many more there were, so what is shown stays a few KiB however many
    /// problems a hostile graph has (a chain of thousands of skills each
    /// including the first has a cycle per skill). Returns how many errors
    /// and warnings there were in all.
    pub fn bound(&mut self, max: usize) -> (usize, usize) {
        use crate::text::cap_lines;
        (
            cap_lines(&mut self.errors, max, |n| format!("… and {n} more errors")),
            cap_lines(&mut self.warnings, max, |n| {
                format!("… and {n} more warnings")
            }),
        )
    }
}

/// What [`PlanReport::bound`] keeps of each list when a report is shown.
pub const MAX_SHOWN: usize = 100;

/// Checks that every skill of `plan` exists, its includes resolve without
/// cycles or forbidden overrides, and (when `tools` is given) its tool refs
/// are registered. Collects every problem instead of stopping at the first,
/// each once: a problem in a part that several of the plan's skills share
/// is reported under the first that reaches it.
pub fn validate_plan(
    plan: &Plan,
    skills: &dyn SkillSource,
    tools: Option<&dyn ToolLookup>,
) -> PlanReport {
    let diagnosis = diagnose_plan(plan, skills, tools);
    PlanReport {
        errors: diagnosis.errors,
        warnings: diagnosis.warnings.iter().map(ToString::to_string).collect(),
    }
}

/// [`validate_plan`]'s findings with the warnings still typed, for a caller
/// that says more of some kinds (each warning once by its message, in the
/// order first met).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlanDiagnosis {
    /// Problems that make the plan unsatisfiable.
    pub errors: Vec<String>,
    /// Problems worth a look that do not block the plan.
    pub warnings: Vec<ResolveWarning>,
}

/// [`validate_plan`], its warnings typed ([`PlanDiagnosis`]).
pub fn diagnose_plan(
    plan: &Plan,
    skills: &dyn SkillSource,
    tools: Option<&dyn ToolLookup>,
) -> PlanDiagnosis {
    // Each message once, in the order first met (a set: a hostile graph can
    // have a problem per skill).
    let mut errors: IndexSet<String> = IndexSet::new();
    let mut warnings: indexmap::IndexMap<String, ResolveWarning> = indexmap::IndexMap::new();
    let empty = crate::registry::ToolRegistry::new();
    let lookup: &dyn ToolLookup = tools.unwrap_or(&empty);
    let resolver = SkillResolver::new(skills, lookup);
    // One numbering for all the plan's skills: a skill reached from an
    // earlier one is not walked again, so a plan naming every skill of a
    // chain, or one skill many times, costs the closure once.
    let mut diagnosis = resolver.diagnosis();
    for raw in &plan.skills {
        let name = match SkillName::new(raw) {
            Ok(name) => name,
            Err(err) => {
                errors.insert(format!("Plan: {err}"));
                continue;
            }
        };
        if skills.skill(&name).is_none() {
            errors.insert(format!(
                "Skill '{name}' referenced in plan is not registered"
            ));
            continue;
        }
        let (found, noted) = diagnosis.root(&name);
        for error in found {
            let message = match error {
                crate::ResolveError::Cycle { .. } => format!("Skill '{name}': {error}"),
                other => other.to_string(),
            };
            errors.insert(message);
        }
        for warning in noted {
            match warning {
                ResolveWarning::UnknownTool { .. } if tools.is_none() => {}
                ResolveWarning::UnknownTool { .. } => {
                    errors.insert(warning.to_string());
                }
                other => {
                    warnings.entry(other.to_string()).or_insert(other);
                }
            }
        }
    }
    PlanDiagnosis {
        errors: errors.into_iter().collect(),
        warnings: warnings.into_values().collect(),
    }
}
