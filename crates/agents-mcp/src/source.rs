//! Turns an `mcp_source` item into what is needed to start or reach the server,
//! expanding `${VAR}` on a copy: the item itself keeps the text as written.

use std::time::Duration;

use agents_core::McpSource;

use crate::error::McpError;
use crate::expand::{VarError, expand_vars};
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
}

pub(crate) fn prepare(source: &McpSource, options: &FetchOptions) -> Result<Prepared, McpError> {
    let server = source.server.as_str();
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
                        expand(server, &format!("env.{name}"), value, &options.env)?,
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
                        expand(server, &format!("headers.{name}"), value, &options.env)?,
                    ))
                })
                .collect::<Result<_, McpError>>()?;
            Launch::Http {
                url: url.clone(),
                headers,
            }
        }
    };
    Ok(Prepared { launch, timeout })
}

fn expand(server: &str, field: &str, value: &str, env: &EnvLookup) -> Result<String, McpError> {
    expand_vars(value, &|name: &str| env(name)).map_err(|err| match err {
        VarError::Missing { name } => McpError::MissingVar {
            server: server.to_owned(),
            field: field.to_owned(),
            var: name,
        },
        malformed @ VarError::Malformed { .. } => McpError::InvalidSource {
            server: server.to_owned(),
            message: format!("`{field}`: {malformed}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_error_keeps_its_kind_in_the_launch_spec() {
        let env: EnvLookup = std::sync::Arc::new(|_: &str| None);
        for value in ["${UNSET}", "${1A}"] {
            let raw = expand_vars(value, &|name: &str| env(name)).unwrap_err();
            let err = expand("srv", "env.X", value, &env).unwrap_err();
            assert_eq!(raw.kind(), err.kind(), "{value}: {err}");
        }
    }
}
