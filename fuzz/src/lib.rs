//! What every fuzz target checks about an error it was given: the promise of
//! issue 12 that no error is longer than a few KiB and none carries a raw
//! control character (only line breaks between its own lines).

use std::fmt::Display;

/// The "few KiB" every rendered error must stay within.
pub const MAX_ERROR_BYTES: usize = 8 << 10;

/// Panics (a crash for libFuzzer) when `error` renders too long or with a raw
/// control character other than `\n`.
pub fn check_error(what: &str, error: &dyn Display) {
    let text = error.to_string();
    assert!(
        text.len() <= MAX_ERROR_BYTES,
        "{what}: error is {} bytes: {}",
        text.len(),
        text.chars().take(2000).collect::<String>()
    );
    if let Some(c) = text.chars().find(|c| c.is_control() && *c != '\n') {
        panic!("{what}: error holds the raw control character {c:?}: {text:?}");
    }
}
