//! Turns an `mcp_source` item into what is needed to start or reach the server,
//! expanding `${VAR}` on a copy: the item itself keeps the text as written.

use std::time::Duration;

use agents_core::McpSource;

use crate::error::McpError;
use crate::substitute::{VarError, substitute_vars};
use crate::{EnvLookup, FetchOptions};

#[derive(Debug)]
pub(crate) enum Launch {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) launch: Launch,
    pub(crate) timeout: Duration,
    /// What no message may show: every value a `${VAR}` expanded to, the
    /// value of a secret-named `env` entry or header (and its words after
    /// the first, the token of `Bearer TOKEN`), and the URL's credentials.
    /// A server may echo any of them in its stderr or an error body.
    pub(crate) secrets: Vec<String>,
}

pub(crate) fn prepare(source: &McpSource, options: &FetchOptions) -> Result<Prepared, McpError> {
    let server = source.server.as_str();
    let mut secrets = Vec::new();
    let invalid = |message: String| McpError::InvalidSource {
        server: server.to_owned(),
        message,
    };
    if server.is_empty() {
        return Err(invalid("the server name must not be empty".into()));
    }
    if server.contains('/') || server.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid(
            "the server name must not contain `/`, whitespace or control characters".into(),
        ));
    }
    let timeout = match source.timeout_s {
        Some(0) => return Err(invalid("`timeout_s` must be at least 1".into())),
        Some(seconds) => Duration::from_secs(seconds),
        None => options.timeout,
    };
    let launch = match (&source.command, &source.url) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "has both `command` (stdio) and `url` (http): expected one".into(),
            ));
        }
        (None, None) => {
            return Err(invalid(
                "has neither `command` nor `url`: a server defined in the configuration must be resolved before fetching"
                    .into(),
            ));
        }
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err(invalid("`command` must not be empty".into()));
            }
            if !source.headers.is_empty() {
                return Err(invalid(
                    "`headers` only apply to `url` (http) servers".into(),
                ));
            }
            let env = source
                .env
                .iter()
                .map(|(name, value)| {
                    Ok((
                        name.clone(),
                        expand(server, ("env", name), value, &options.env, &mut secrets)?,
                    ))
                })
                .collect::<Result<_, McpError>>()?;
            Launch::Stdio {
                command: command.clone(),
                args: source.args.clone(),
                env,
                cwd: source.cwd.clone(),
            }
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(invalid(format!(
                    "`url` `{url}` must start with `http://` or `https://`"
                )));
            }
            if !source.args.is_empty() || !source.env.is_empty() || source.cwd.is_some() {
                return Err(invalid(
                    "`args`, `env` and `cwd` only apply to `command` (stdio) servers".into(),
                ));
            }
            let headers = source
                .headers
                .iter()
                .map(|(name, value)| {
                    Ok((
                        name.clone(),
                        expand(server, ("headers", name), value, &options.env, &mut secrets)?,
                    ))
                })
                .collect::<Result<_, McpError>>()?;
            secrets.extend(agents_core::redact::url_secrets(url));
            Launch::Http {
                url: url.clone(),
                headers,
            }
        }
    };
    // Each secret in every form an echo of it may take (trimmed, line by
    // line), and remembered for the rest of the process: a log line or
    // warning made from what the server said is masked where it is printed,
    // whichever path made it (see `agents_core::redact::remember`).
    let secrets = agents_core::redact::secret_forms(secrets);
    agents_core::redact::remember(&secrets);
    Ok(Prepared {
        launch,
        timeout,
        secrets,
    })
}

/// `value` of the `env` or `headers` entry `key` with its `${VAR}`s
/// expanded; what it must not show goes to `secrets`.
fn expand(
    server: &str,
    (table, key): (&str, &str),
    value: &str,
    env: &EnvLookup,
    secrets: &mut Vec<String>,
) -> Result<String, McpError> {
    let field = format!("{table}.{key}");
    let looked_up = std::cell::RefCell::new(Vec::new());
    let expanded = substitute_vars(value, &|name: &str| {
        let found = env(name);
        looked_up.borrow_mut().extend(found.clone());
        found
    })
    .map_err(|err| match err {
        VarError::Missing { name } => McpError::MissingVar {
            server: server.to_owned(),
            field: field.clone(),
            var: name,
        },
        malformed @ VarError::Malformed { .. } => McpError::InvalidSource {
            server: server.to_owned(),
            message: format!("`{field}`: {malformed}"),
        },
    })?;
    secrets.extend(looked_up.into_inner());
    // Credentials in a URL-valued entry (`DATABASE_URL=postgres://u:pw@h`,
    // a token query parameter), whatever the entry is called.
    if expanded.contains("://") {
        secrets.extend(agents_core::redact::url_secrets(&expanded));
    }
    if agents_core::redact::is_secret_name(key) {
        // The whole value first, so it is masked whole where it appears.
        secrets.push(expanded.clone());
        secrets.extend(expanded.split_whitespace().skip(1).map(str::to_owned));
    }
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_error_keeps_its_kind_in_the_launch_spec() {
        let env: EnvLookup = std::sync::Arc::new(|_: &str| None);
        for value in ["${UNSET}", "${1A}"] {
            let raw = substitute_vars(value, &|name: &str| env(name)).unwrap_err();
            let err = expand("srv", ("env", "X"), value, &env, &mut Vec::new()).unwrap_err();
            assert_eq!(raw.kind(), err.kind(), "{value}: {err}");
        }
    }

    #[test]
    fn expanded_values_and_secret_named_literals_are_secrets() {
        let env: EnvLookup = std::sync::Arc::new(|name: &str| Some(format!("value-of-{name}")));
        let mut secrets = Vec::new();
        let plain = expand("srv", ("env", "PATHS"), "a:${HOME}", &env, &mut secrets).unwrap();
        assert_eq!(plain, "a:value-of-HOME");
        assert_eq!(secrets, ["value-of-HOME"]);
        // A literal is shown unless its key names a secret.
        let mut secrets = Vec::new();
        expand("srv", ("env", "LEVEL"), "debug", &env, &mut secrets).unwrap();
        assert!(secrets.is_empty(), "{secrets:?}");
        expand(
            "srv",
            ("headers", "Authorization"),
            "Bearer lit3ral",
            &env,
            &mut secrets,
        )
        .unwrap();
        assert_eq!(secrets, ["Bearer lit3ral", "lit3ral"]);
        // A URL's credentials, whatever the entry is called.
        let mut secrets = Vec::new();
        expand(
            "srv",
            ("env", "DATABASE_URL"),
            "postgres://u:dbpass-V15@h/db",
            &env,
            &mut secrets,
        )
        .unwrap();
        assert_eq!(secrets, ["dbpass-V15"]);
    }
}
