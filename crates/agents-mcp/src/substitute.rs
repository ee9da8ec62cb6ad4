//! `${VAR}` (and `${VAR:-default}`) expansion for MCP server `env` values
//! and HTTP headers.

/// Why a `${VAR}` reference could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VarError {
    /// The variable is not set.
    #[error("environment variable `{name}` is not set")]
    Missing {
        /// The variable's name.
        name: String,
    },
    /// `${` without a valid name and a closing `}`.
    #[error("malformed variable reference at byte {offset}: {message}")]
    Malformed {
        /// Byte offset of the `$`.
        offset: usize,
        /// What was expected.
        message: String,
    },
}

impl VarError {
    /// A stable machine-readable kind: the kind of the [`crate::McpError`]
    /// it becomes in a server's launch spec.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Missing { .. } => "mcp_missing_variable",
            Self::Malformed { .. } => "mcp_invalid_source",
        }
    }
}

/// Replaces every `${NAME}` in `text` with `lookup(NAME)`, and every
/// `${NAME:-DEFAULT}` with `lookup(NAME)` when that is set and not empty,
/// else with `DEFAULT` as written (the shell's rule, which Claude Code's
/// `.mcp.json` follows).
///
/// `NAME` is `[A-Za-z_][A-Za-z0-9_]*`; `DEFAULT` runs to the first `}` and
/// holds no `${`. `$${` stands for a literal `${`; any other `$` is kept as
/// is. An unset variable without a default or a malformed reference is an
/// error: a secret silently replaced by nothing would fail later and far less
/// clearly.
pub fn substitute_vars(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, VarError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut offset = 0;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let after = &rest[dollar + 1..];
        let here = offset + dollar;
        if let Some(escaped) = after.strip_prefix("${") {
            out.push_str("${");
            offset = here + 3;
            rest = escaped;
            continue;
        }
        let Some(body) = after.strip_prefix('{') else {
            out.push('$');
            offset = here + 1;
            rest = after;
            continue;
        };
        let Some(close) = body.find('}') else {
            return Err(VarError::Malformed {
                offset: here,
                message: "`${` without a closing `}`".into(),
            });
        };
        let inner = &body[..close];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if !is_var_name(name) {
            return Err(VarError::Malformed {
                offset: here,
                message: format!(
                    "`${{{inner}}}`: expected a name made of letters, digits and `_`, not starting with a digit (or `NAME:-DEFAULT`)"
                ),
            });
        }
        if default.is_some_and(|default| default.contains("${")) {
            return Err(VarError::Malformed {
                offset: here,
                message: format!("`${{{inner}}}`: a default may not hold another `${{`"),
            });
        }
        let value = match (lookup(name), default) {
            (Some(value), Some(default)) if value.is_empty() => default.to_owned(),
            (Some(value), _) => value,
            (None, Some(default)) => default.to_owned(),
            (None, None) => {
                return Err(VarError::Missing {
                    name: name.to_owned(),
                });
            }
        };
        out.push_str(&value);
        offset = here + 2 + close + 1;
        rest = &body[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cr3t".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_references_and_keeps_other_text() {
        assert_eq!(
            substitute_vars("Bearer ${TOKEN}", &env).unwrap(),
            "Bearer s3cr3t"
        );
        assert_eq!(
            substitute_vars("${TOKEN}${TOKEN}", &env).unwrap(),
            "s3cr3ts3cr3t"
        );
        assert_eq!(substitute_vars("a${EMPTY}b", &env).unwrap(), "ab");
        assert_eq!(substitute_vars("cost: $5 $", &env).unwrap(), "cost: $5 $");
        assert_eq!(
            substitute_vars("$${TOKEN} is literal", &env).unwrap(),
            "${TOKEN} is literal"
        );
        assert_eq!(
            substitute_vars("héllo ${TOKEN} wörld", &env).unwrap(),
            "héllo s3cr3t wörld"
        );
        assert_eq!(substitute_vars("", &env).unwrap(), "");
    }

    #[test]
    fn missing_and_malformed_references_are_errors() {
        assert_eq!(
            substitute_vars("x ${NOPE} y", &env).unwrap_err(),
            VarError::Missing {
                name: "NOPE".into()
            }
        );
        let err = substitute_vars("ab${TOKEN", &env).unwrap_err();
        assert!(
            matches!(err, VarError::Malformed { offset: 2, .. }),
            "{err:?}"
        );
        assert!(matches!(
            substitute_vars("${}", &env),
            Err(VarError::Malformed { .. })
        ));
        assert!(matches!(
            substitute_vars("${1A}", &env),
            Err(VarError::Malformed { .. })
        ));
        assert!(matches!(
            substitute_vars("${A-B}", &env),
            Err(VarError::Malformed { .. })
        ));
    }

    /// Claude Code's `${VAR:-default}`: it was refused when the server
    /// started ("malformed variable reference"), after `mcp import` had
    /// added it.
    #[test]
    fn a_default_is_used_when_the_variable_is_unset_or_empty() {
        assert_eq!(
            substitute_vars("${TOKEN:-fallback}", &env).unwrap(),
            "s3cr3t"
        );
        assert_eq!(
            substitute_vars("${NOPE:-fall back}", &env).unwrap(),
            "fall back"
        );
        assert_eq!(substitute_vars("${EMPTY:-x}", &env).unwrap(), "x");
        assert_eq!(substitute_vars("${A_B:-}/y", &env).unwrap(), "/y");
        assert_eq!(
            substitute_vars("a ${NOPE:-b:c-d$e} f", &env).unwrap(),
            "a b:c-d$e f"
        );
        assert_eq!(substitute_vars("$${NOPE:-x}", &env).unwrap(), "${NOPE:-x}");
        for malformed in ["${:-x}", "${1A:-x}", "${A-B:-x}", "${NOPE:-${TOKEN}}"] {
            assert!(
                matches!(
                    substitute_vars(malformed, &env),
                    Err(VarError::Malformed { .. })
                ),
                "{malformed}"
            );
        }
        // `:` alone or `-` alone is no default.
        assert!(matches!(
            substitute_vars("${NOPE:x}", &env),
            Err(VarError::Malformed { .. })
        ));
        assert!(matches!(
            substitute_vars("${NOPE-x}", &env),
            Err(VarError::Malformed { .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn text_without_dollars_is_unchanged(text in "[^$]*") {
            proptest::prop_assert_eq!(substitute_vars(&text, &env).unwrap(), text);
        }

        #[test]
        fn never_panics(text in ".*") {
            let _ = substitute_vars(&text, &env);
        }
    }
}
