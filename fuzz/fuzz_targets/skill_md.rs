//! `SKILL.md` parsing and validation (`parse_skill_md`) on arbitrary bytes.
//!
//! Checks: no panic; every problem bounded and escaped, with a line inside
//! the file; an accepted front-matter obeys the name and description rules,
//! and is accepted unchanged in a folder of its own name.
#![no_main]

use std::path::Path;

use agents_discovery::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, parse_skill_md};
use agents_fuzz::check_error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let lines = data.iter().filter(|b| **b == b'\n').count() + 1;
    // No parent folder: the folder-name rule does not apply.
    match parse_skill_md(Path::new("SKILL.md"), data) {
        Ok(doc) => {
            let name = &doc.name;
            assert!(
                !name.is_empty() && name.chars().count() <= MAX_NAME_CHARS,
                "{name:?}"
            );
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{name:?}"
            );
            assert!(!name.starts_with('-') && !name.ends_with('-') && !name.contains("--"));
            assert!(!doc.description.trim().is_empty(), "{doc:?}");
            assert!(doc.description.chars().count() <= MAX_DESCRIPTION_CHARS);
            assert!(doc.body_line >= 1 && doc.body_line <= lines + 1, "{doc:?}");
            for warning in &doc.warnings {
                check_error("SKILL.md warning", warning);
            }
            let in_folder = format!("{name}/SKILL.md");
            let again = parse_skill_md(Path::new(&in_folder), data)
                .unwrap_or_else(|errors| panic!("refused in its own folder: {errors:?}"));
            assert_eq!(again.name, doc.name);
            assert_eq!(again.description, doc.description);
            assert_eq!(again.metadata, doc.metadata);
        }
        Err(errors) => {
            assert!(!errors.is_empty(), "refused without a reason");
            for error in &errors {
                check_error("SKILL.md error", error);
                if let Some(line) = error.line {
                    assert!(
                        line >= 1 && line <= lines,
                        "line {line} of {lines}: {error}"
                    );
                }
            }
        }
    }
});
