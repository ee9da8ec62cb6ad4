use std::time::Duration;

/// Why tools could not be fetched from an MCP server. Every variant names the
/// server; none carries an expanded secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The `mcp_source` cannot be used as written.
    #[error("mcp server `{server}`: {message}")]
    InvalidSource {
        /// Server name.
        server: String,
        /// What was expected.
        message: String,
    },
    /// A `${VAR}` in `env` or `headers` names an unset variable.
    #[error("mcp server `{server}`: `{field}`: environment variable `{var}` is not set")]
    MissingVar {
        /// Server name.
        server: String,
        /// Where the reference is, e.g. `env.GITHUB_TOKEN` or `headers.Authorization`.
        field: String,
        /// The unset variable.
        var: String,
    },
    /// The stdio server's program could not be started.
    #[error("mcp server `{server}`: cannot start `{command}`: {reason}")]
    Spawn {
        /// Server name.
        server: String,
        /// The program as written.
        command: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The stdio server exited before the fetch finished.
    #[error("mcp server `{server}` exited early ({status}) during `{stage}`{}", stderr_note(.stderr))]
    ExitedEarly {
        /// Server name.
        server: String,
        /// Exit status, e.g. `exit status: 3`.
        status: String,
        /// `initialize` or `tools/list`.
        stage: &'static str,
        /// The last lines it wrote to stderr.
        stderr: String,
    },
    /// The stdio server wrote lines that are not JSON-RPC messages to stdout.
    #[error("mcp server `{server}` wrote output that is not JSON-RPC to stdout, e.g. `{sample}`")]
    Garbage {
        /// Server name.
        server: String,
        /// The start of the first such line.
        sample: String,
    },
    /// One message was larger than the client accepts.
    #[error("mcp server `{server}` sent a message larger than {limit} bytes")]
    MessageTooLarge {
        /// Server name.
        server: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// The fetch did not finish in time.
    #[error("mcp server `{server}`: no answer to `{stage}` within {}{note}", seconds(.timeout))]
    Timeout {
        /// Server name.
        server: String,
        /// The request that was pending.
        stage: &'static str,
        /// The limit for the whole fetch.
        timeout: Duration,
        /// Extra context (starts with `; `), or empty.
        note: String,
    },
    /// The server lists more tools than allowed.
    #[error("mcp server `{server}` lists more than {limit} tools")]
    TooManyTools {
        /// Server name.
        server: String,
        /// `FetchOptions::max_tools`.
        limit: usize,
    },
    /// `tools/list` returned a cursor it had already returned.
    #[error(
        "mcp server `{server}`: `tools/list` returned the cursor `{cursor}` twice (pagination loop)"
    )]
    CursorLoop {
        /// Server name.
        server: String,
        /// The repeated cursor, shortened.
        cursor: String,
    },
    /// `tools/list` kept returning new cursors.
    #[error("mcp server `{server}`: `tools/list` did not end after {limit} pages")]
    TooManyPages {
        /// Server name.
        server: String,
        /// `FetchOptions::max_pages`.
        limit: usize,
    },
    /// The HTTP server could not be reached.
    #[error("mcp server `{server}`: cannot connect to `{url}`: {reason}")]
    Connect {
        /// Server name.
        server: String,
        /// The endpoint.
        url: String,
        /// Why, e.g. `connection refused`.
        reason: String,
    },
    /// The server broke the protocol or answered with an error.
    #[error("mcp server `{server}`: `{stage}` failed: {message}")]
    Protocol {
        /// Server name.
        server: String,
        /// `initialize` or `tools/list`.
        stage: &'static str,
        /// What happened.
        message: String,
    },
}

impl McpError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::InvalidSource { .. } => "mcp_invalid_source",
            Self::MissingVar { .. } => "mcp_missing_variable",
            Self::Spawn { .. } => "mcp_spawn",
            Self::ExitedEarly { .. } => "mcp_exited_early",
            Self::Garbage { .. } => "mcp_garbage_output",
            Self::MessageTooLarge { .. } => "mcp_message_too_large",
            Self::Timeout { .. } => "mcp_timeout",
            Self::TooManyTools { .. } => "mcp_too_many_tools",
            Self::CursorLoop { .. } => "mcp_cursor_loop",
            Self::TooManyPages { .. } => "mcp_too_many_pages",
            Self::Connect { .. } => "mcp_connect",
            Self::Protocol { .. } => "mcp_protocol",
        }
    }

    /// The same error with every one of `secrets` masked in the text that
    /// came from the server or its driver (its stderr, an error body, a
    /// reason): a server may echo the environment or headers it was given.
    pub(crate) fn scrubbed(mut self, secrets: &[String]) -> Self {
        if secrets.is_empty() {
            return self;
        }
        match &mut self {
            Self::ExitedEarly { stderr: text, .. }
            | Self::Garbage { sample: text, .. }
            | Self::Timeout { note: text, .. }
            | Self::CursorLoop { cursor: text, .. }
            | Self::Connect { reason: text, .. }
            | Self::Protocol { message: text, .. }
            | Self::Spawn { reason: text, .. } => {
                *text = agents_core::redact::scrub(text, secrets);
            }
            _ => {}
        }
        self
    }

    /// The same error without what the server wrote outside the protocol
    /// (its stderr, stray stdout): for a client of the gateway, who is not
    /// this user (a server may print its environment). The whole error is
    /// for this user's log.
    pub fn without_server_output(mut self) -> Self {
        const SEE_LOG: &str = "see the gateway's log";
        match &mut self {
            Self::ExitedEarly { stderr, .. } if !stderr.is_empty() => *stderr = SEE_LOG.into(),
            Self::Garbage { sample, .. } => *sample = SEE_LOG.into(),
            Self::Timeout { note, .. } if !note.is_empty() => *note = format!("; {SEE_LOG}"),
            _ => {}
        }
        self
    }

    /// The server the error is about.
    pub fn server(&self) -> &str {
        match self {
            Self::InvalidSource { server, .. }
            | Self::MissingVar { server, .. }
            | Self::Spawn { server, .. }
            | Self::ExitedEarly { server, .. }
            | Self::Garbage { server, .. }
            | Self::MessageTooLarge { server, .. }
            | Self::Timeout { server, .. }
            | Self::TooManyTools { server, .. }
            | Self::CursorLoop { server, .. }
            | Self::TooManyPages { server, .. }
            | Self::Connect { server, .. }
            | Self::Protocol { server, .. } => server,
        }
    }
}

fn stderr_note(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; stderr: {stderr}")
    }
}

fn seconds(duration: &Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        format!("{:.3} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_server() {
        let err = McpError::Timeout {
            server: "gh".into(),
            stage: "tools/list",
            timeout: Duration::from_millis(1500),
            note: String::new(),
        };
        assert_eq!(
            err.to_string(),
            "mcp server `gh`: no answer to `tools/list` within 1.500 s"
        );
        assert_eq!(err.server(), "gh");
        let err = McpError::ExitedEarly {
            server: "gh".into(),
            status: "exit status: 3".into(),
            stage: "initialize",
            stderr: "boom".into(),
        };
        assert_eq!(
            err.to_string(),
            "mcp server `gh` exited early (exit status: 3) during `initialize`; stderr: boom"
        );
    }
}
