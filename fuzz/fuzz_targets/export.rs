//! The `db export` / `db import` format (`parse_export`) on arbitrary text.
//!
//! Checks: no panic; errors bounded and escaped; an accepted export written
//! again (`export_to_yaml`) reads back to the same skills and tools.
#![no_main]

use agents_fuzz::check_error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match agents_definition::parse_export(text, "fuzz-export.yaml") {
        Ok((skills, tools)) => {
            let printed = agents_definition::export_to_yaml(&skills, &tools)
                .unwrap()
                .text;
            let again = agents_definition::parse_export(&printed, "printed.yaml")
                .unwrap_or_else(|err| panic!("printed export does not parse: {err}\n{printed}"));
            assert_eq!(
                again,
                (skills, tools),
                "export changed on a round trip:\n{printed}"
            );
        }
        Err(err) => check_error("parse_export", &err),
    }
});
