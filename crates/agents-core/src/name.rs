use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The rule every skill name must satisfy, quoted in error messages.
pub const SKILL_NAME_PATTERN: &str = "^[a-zA-Z0-9_-]+/[a-zA-Z0-9_-]+$";

const MAX_NAMESPACE: usize = 100;
const MAX_SHORT_NAME: usize = 150;

/// A validated, namespaced skill name: `namespace/short_name`. Cloning one
/// shares the text (include paths and resolved entries hold many copies).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SkillName {
    full: Arc<str>,
    slash: usize,
}

/// Why a string is not a valid [`SkillName`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
// Cut so the cut name, count included, stays within `MAX_ECHO_BYTES`: a
// caller that cuts quoted names again leaves it as it is.
#[error(
    "invalid skill name `{}`: {reason}",
    crate::text::shorten(name, crate::text::MAX_ECHO_BYTES - 40)
)]
pub struct InvalidSkillName {
    /// The rejected input, as given (the message shows it cut).
    pub name: String,
    /// Which rule it broke.
    pub reason: String,
}

impl InvalidSkillName {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        "invalid_skill_name"
    }
}

impl SkillName {
    /// Validates `name` against [`SKILL_NAME_PATTERN`] and the column widths.
    pub fn new(name: &str) -> Result<Self, InvalidSkillName> {
        let fail = |reason: String| InvalidSkillName {
            name: name.to_owned(),
            reason,
        };
        let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        let Some((namespace, short)) = name.split_once('/') else {
            return Err(fail(format!(
                "expected `namespace/short_name` matching `{SKILL_NAME_PATTERN}`"
            )));
        };
        if namespace.is_empty()
            || short.is_empty()
            || !namespace.chars().all(allowed)
            || !short.chars().all(allowed)
        {
            return Err(fail(format!("must match `{SKILL_NAME_PATTERN}`")));
        }
        if namespace.len() > MAX_NAMESPACE {
            return Err(fail(format!(
                "namespace is {} characters, at most {MAX_NAMESPACE} are allowed",
                namespace.len()
            )));
        }
        if short.len() > MAX_SHORT_NAME {
            return Err(fail(format!(
                "short name is {} characters, at most {MAX_SHORT_NAME} are allowed",
                short.len()
            )));
        }
        Ok(Self {
            full: Arc::from(name),
            slash: namespace.len(),
        })
    }

    /// The whole name, `namespace/short_name`.
    pub fn as_str(&self) -> &str {
        &self.full
    }

    /// The part before the slash.
    pub fn namespace(&self) -> &str {
        &self.full[..self.slash]
    }

    /// The part after the slash.
    pub fn short_name(&self) -> &str {
        &self.full[self.slash + 1..]
    }
}

impl fmt::Display for SkillName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.full)
    }
}

impl fmt::Debug for SkillName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.full, f)
    }
}

impl FromStr for SkillName {
    type Err = InvalidSkillName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl AsRef<str> for SkillName {
    fn as_ref(&self) -> &str {
        &self.full
    }
}

/// A string matching [`SKILL_NAME_PATTERN`] (at most 255 characters).
impl schemars::JsonSchema for SkillName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SkillName".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "`namespace/short_name`",
            "pattern": SKILL_NAME_PATTERN,
            "maxLength": MAX_NAMESPACE + 1 + MAX_SHORT_NAME,
        })
    }
}

impl Serialize for SkillName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.full)
    }
}

impl<'de> Deserialize<'de> for SkillName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::new(&raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_valid_names_and_splits_them() {
        let name = SkillName::new("local/code-tools").unwrap();
        assert_eq!(name.namespace(), "local");
        assert_eq!(name.short_name(), "code-tools");
        assert_eq!(name.as_str(), "local/code-tools");
        assert!(SkillName::new("A_b-9/x").is_ok());
    }

    #[test]
    fn rejects_names_breaking_the_pattern() {
        for bad in [
            "", "local", "/x", "x/", "a/b/c", "a b/c", "a/b c", "a/b.c", "ä/b", "a/b\n", " a/b",
        ] {
            let err = SkillName::new(bad).unwrap_err();
            assert_eq!(err.name, bad);
            assert!(
                err.to_string().contains(SKILL_NAME_PATTERN),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn enforces_column_widths() {
        let ns = "n".repeat(100);
        let short = "s".repeat(150);
        assert!(SkillName::new(&format!("{ns}/{short}")).is_ok());
        let err = SkillName::new(&format!("{ns}n/x")).unwrap_err();
        assert!(err.reason.contains("namespace is 101 characters"), "{err}");
        let err = SkillName::new(&format!("x/{short}s")).unwrap_err();
        assert!(err.reason.contains("short name is 151 characters"), "{err}");
    }

    #[test]
    fn error_quotes_the_name() {
        let err = SkillName::new("bad name").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid skill name `bad name`: expected `namespace/short_name` matching `^[a-zA-Z0-9_-]+/[a-zA-Z0-9_-]+$`"
        );
    }
}
