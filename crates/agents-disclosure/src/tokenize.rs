//! Tokens for the ranker: words split at separators and case changes,
//! lowercased, with a few English suffixes folded.
//!
//! - any character that is not a letter or digit separates words
//!   (`snake_case`, `kebab-case`, `mcp:server/tool`, spaces, punctuation);
//! - inside a word, a lower-to-upper change (`camelCase` → `camel`, `case`),
//!   the end of an upper-case run before a capitalised word (`HTTPServer` →
//!   `http`, `server`) and a letter/digit change (`utf8` → `utf`, `8`) split
//!   it too;
//! - each part is lowercased; a handful of function words (`the`, `of`, …)
//!   are dropped;
//! - one suffix is folded off a word of four letters or more, leaving at
//!   least three: `ing`, `ed`, `es`, `s` (not after another `s`), then a
//!   final `e` — so `create`, `creates`, `created` and `creating` are all
//!   `creat`, and `files` and `file` are `fil`. The same folding runs on
//!   queries and tool text, so what it does to a word only matters when two
//!   different words meet.

/// Words too common in tool text and queries to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "with",
];

/// The tokens of `text`, in order (see the module documentation).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        split_word(word, &mut out);
    }
    out
}

/// Splits one separator-free word at case and letter/digit changes, pushing
/// each folded part.
fn split_word(word: &str, out: &mut Vec<String>) {
    let chars: Vec<char> = word.chars().collect();
    let mut start = 0;
    for i in 1..chars.len() {
        let (Some(&prev), Some(&cur)) = (chars.get(i - 1), chars.get(i)) else {
            continue;
        };
        let next = chars.get(i + 1).copied();
        let boundary = (prev.is_lowercase() && cur.is_uppercase())
            || (prev.is_uppercase() && cur.is_uppercase() && next.is_some_and(char::is_lowercase))
            || (prev.is_alphabetic() && cur.is_numeric())
            || (prev.is_numeric() && cur.is_alphabetic());
        if boundary {
            push_part(chars.get(start..i).unwrap_or_default(), out);
            start = i;
        }
    }
    push_part(chars.get(start..).unwrap_or_default(), out);
}

fn push_part(part: &[char], out: &mut Vec<String>) {
    if part.is_empty() {
        return;
    }
    let lower: String = part.iter().flat_map(|c| c.to_lowercase()).collect();
    if STOP_WORDS.contains(&lower.as_str()) {
        return;
    }
    out.push(fold(lower));
}

/// Folds one English suffix off a lowercase word (see the module
/// documentation).
fn fold(mut word: String) -> String {
    let letters = word.chars().count();
    if letters < 4 || !word.chars().all(char::is_alphabetic) {
        return word;
    }
    for suffix in ["ing", "ed", "es", "s"] {
        if word.ends_with(suffix)
            && letters - suffix.len() >= 3
            && !(suffix == "s" && word.ends_with("ss"))
        {
            word.truncate(word.len() - suffix.len());
            break;
        }
    }
    if word.ends_with('e') && word.chars().count() > 3 {
        word.pop();
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_and_case_changes_split_words() {
        assert_eq!(tokens("read_file"), ["read", "fil"]);
        assert_eq!(tokens("list-directory"), ["list", "directory"]);
        assert_eq!(tokens("getUserProfile"), ["get", "user", "profil"]);
        assert_eq!(tokens("HTTPServer"), ["http", "server"]);
        assert_eq!(
            tokens("mcp:github/create_issue"),
            ["mcp", "github", "creat", "issu"]
        );
        assert_eq!(tokens("sha256sum"), ["sha", "256", "sum"]);
    }

    #[test]
    fn suffixes_fold_to_one_stem() {
        for word in ["create", "creates", "created", "creating", "Create"] {
            assert_eq!(tokens(word), ["creat"], "{word}");
        }
        assert_eq!(tokens("files"), tokens("file"));
        assert_eq!(tokens("processes"), tokens("process"));
        assert_eq!(tokens("access"), ["access"]);
        // A stem keeps three letters.
        assert_eq!(tokens("uses"), ["use"]);
    }

    #[test]
    fn function_words_are_dropped() {
        assert_eq!(tokens("the contents of a file"), ["content", "fil"]);
        assert!(tokens("  --__// ").is_empty());
    }

    proptest::proptest! {
        /// Case and separators never change the tokens (of words of two
        /// letters or more: `aBC` cannot tell `b`, `c` from `bc`).
        #[test]
        fn tokens_ignore_case_and_separators(words in proptest::collection::vec("[a-z]{2,8}", 1..5)) {
            let snake = words.join("_");
            let kebab = words.join("-");
            let spaced = words.join(" ").to_uppercase();
            let slashed = words.join("/");
            let camel: String = words
                .iter()
                .enumerate()
                .map(|(i, w)| if i == 0 { w.clone() } else { capitalise(w) })
                .collect();
            let expected = tokens(&snake);
            proptest::prop_assert_eq!(&tokens(&kebab), &expected);
            proptest::prop_assert_eq!(&tokens(&spaced), &expected);
            proptest::prop_assert_eq!(&tokens(&slashed), &expected);
            proptest::prop_assert_eq!(&tokens(&camel), &expected);
        }

        /// Any text tokenises without a panic.
        #[test]
        fn tokens_never_panic(text in "\\PC{0,64}") {
            let _ = tokens(&text);
        }
    }

    fn capitalise(word: &str) -> String {
        let mut chars = word.chars();
        chars
            .next()
            .map(|first| first.to_uppercase().chain(chars).collect())
            .unwrap_or_default()
    }
}
