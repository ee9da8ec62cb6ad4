//! The YAML definition formats: skill files (`parse_skills`), custom tool
//! files (`parse_tools`) and plans (`parse_plan`), on arbitrary text.
//!
//! Checks: no panic; errors bounded and escaped, on a line of the file; whatever parses prints back
//! (`skills_to_yaml`, `tools_to_yaml`) to text that parses to the same values.
#![no_main]

use agents_fuzz::check_error;
use libfuzzer_sys::fuzz_target;

/// An error's line is one of the file's (lines end at `\n`).
fn check_line(text: &str, err: &agents_definition::DefinitionError) {
    let lines = text.matches('\n').count() + 1;
    if let Some(line) = err.line {
        assert!(line >= 1 && line <= lines, "line {line} of {lines}: {err}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match agents_definition::parse_skills(text, "fuzz.yaml") {
        Ok(skills) => {
            let printed = agents_definition::skills_to_yaml(&skills).unwrap();
            let again = agents_definition::parse_skills(&printed, "printed.yaml")
                .unwrap_or_else(|err| panic!("printed skills do not parse: {err}\n{printed}"));
            assert_eq!(again, skills, "skills changed on a round trip:\n{printed}");
            for skill in &skills {
                let _ = agents_definition::skill_to_json(skill);
            }
        }
        Err(err) => {
            check_error("parse_skills", &err);
            check_line(text, &err);
        }
    }
    match agents_definition::parse_tools(text, "fuzz.yaml") {
        Ok(tools) => {
            let printed = agents_definition::tools_to_yaml(&tools).unwrap();
            let again = agents_definition::parse_tools(&printed, "printed.yaml")
                .unwrap_or_else(|err| panic!("printed tools do not parse: {err}\n{printed}"));
            assert_eq!(again, tools, "tools changed on a round trip:\n{printed}");
        }
        Err(err) => {
            check_error("parse_tools", &err);
            check_line(text, &err);
        }
    }
    if let Err(err) = agents_definition::parse_plan(text, "fuzz.yaml") {
        check_error("parse_plan", &err);
        check_line(text, &err);
    }
});
