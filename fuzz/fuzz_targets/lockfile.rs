//! Lock files (`Lockfile::parse`) on arbitrary text: a `skills.lock` comes
//! with a project, so from anyone.
//!
//! Checks: no panic; errors bounded and escaped; an accepted lock written
//! again (`to_text`) reads back the same and is written to the same bytes.
#![no_main]

use agents_fuzz::check_error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match agents_core::Lockfile::parse(text, "fuzz.lock") {
        Ok(lock) => {
            let printed = lock.to_text();
            let again = agents_core::Lockfile::parse(&printed, "printed.lock")
                .unwrap_or_else(|err| panic!("printed lock does not parse: {err}\n{printed}"));
            assert_eq!(again, lock, "lock changed on a round trip:\n{printed}");
            assert_eq!(again.to_text(), printed, "the same lock printed two ways");
        }
        Err(err) => check_error("Lockfile::parse", &err),
    }
});
