//! `~` and `$VAR` / `${VAR}` in paths.

use std::path::{Path, PathBuf};

use crate::ConfigError;

/// Expands a leading `~` (alone or before `/`) to `home`, and `$VAR` /
/// `${VAR}` anywhere from `env`. A `$` not followed by a name stays as it is.
/// An unset variable, an unclosed `${` or `~user` is an error naming `raw`.
pub fn expand_path(
    raw: &str,
    home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, ConfigError> {
    let fail = |message: String| ConfigError::Expand {
        raw: raw.to_owned(),
        message,
    };
    let expanded = expand_vars(raw, env).map_err(fail)?;
    let Some(rest) = expanded.strip_prefix('~') else {
        return Ok(PathBuf::from(expanded));
    };
    if rest.is_empty() {
        return Ok(home.to_path_buf());
    }
    match rest.strip_prefix('/') {
        Some(tail) => Ok(home.join(tail.trim_start_matches('/'))),
        None => Err(fail("`~user` is not supported: write the full path".into())),
    }
}

fn expand_vars(raw: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            let Some(close) = braced.find('}') else {
                return Err("`${` is not closed by `}`".into());
            };
            let name = &braced[..close];
            if name.is_empty()
                || name.starts_with(|c: char| c.is_ascii_digit())
                || !name.chars().all(is_name)
            {
                return Err(format!("`${{{name}}}` is not a variable name"));
            }
            (name, &braced[close + 1..])
        } else {
            // Like a shell: a name starts with a letter or `_`, so `$5` stays as written.
            let end = match after.chars().next() {
                Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                    after.find(|c: char| !is_name(c)).unwrap_or(after.len())
                }
                _ => 0,
            };
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            out.push('$');
        } else {
            match env(name) {
                Some(value) => out.push_str(&value),
                None => return Err(format!("environment variable `{name}` is not set")),
            }
        }
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
}
