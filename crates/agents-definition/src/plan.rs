use agents_core::Plan;

use crate::{DefinitionError, Limits, documents};

/// Parses a plan, `{"skills": [...]}` in JSON or `skills: [...]` in YAML,
/// within [`Limits::PLAN`].
pub fn parse_plan(text: &str, file: &str) -> Result<Plan, DefinitionError> {
    parse_plan_with(text, file, &Limits::PLAN)
}

/// [`parse_plan`] with explicit limits.
pub fn parse_plan_with(text: &str, file: &str, limits: &Limits) -> Result<Plan, DefinitionError> {
    let mut plan: Option<Plan> = None;
    documents(text, file, limits, |number, parsed: Plan| {
        if plan.is_some() {
            return Err(DefinitionError::at_document(
                file,
                number,
                "plan",
                "expected one plan, found more than one document",
            ));
        }
        plan = Some(parsed);
        Ok(())
    })?;
    plan.ok_or_else(|| {
        DefinitionError::at_document(
            file,
            1,
            "plan",
            "expected a plan with a `skills` list, found nothing",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_json_and_yaml_plans() {
        let json = parse_plan(r#"{"skills": ["local/a", "local/b"]}"#, "p.json").unwrap();
        let yaml = parse_plan("skills:\n  - local/a\n  - local/b\n", "p.yaml").unwrap();
        assert_eq!(json, yaml);
        assert_eq!(json.skills, ["local/a", "local/b"]);
        assert!(
            parse_plan("skill: [x]\n", "p.yaml")
                .unwrap_err()
                .message
                .contains("unknown field")
        );
        assert!(parse_plan("", "p.yaml").is_err());
    }
}
