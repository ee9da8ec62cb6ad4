use agents_core::Plan;

use crate::{DefinitionError, documents};

/// Parses a plan, `{"skills": [...]}` in JSON or `skills: [...]` in YAML.
pub fn parse_plan(text: &str, file: &str) -> Result<Plan, DefinitionError> {
    let mut plans: Vec<(usize, Plan)> = documents(text, file)?;
    match plans.len() {
        1 => Ok(plans.remove(0).1),
        0 => Err(DefinitionError::at_document(
            file,
            1,
            "plan",
            "expected a plan with a `skills` list, found nothing",
        )),
        n => Err(DefinitionError::at_document(
            file,
            2,
            "plan",
            format!("expected one plan, found {n} documents"),
        )),
    }
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
