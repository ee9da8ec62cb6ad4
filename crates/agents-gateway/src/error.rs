//! Why the gateway could not serve (a failed call is a tool error, not
//! this): each error has a stable [`GatewayError::kind`].

/// Why the gateway could not serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The client's `initialize` failed or the transport broke at once.
    #[error("mcp serve: the client session could not start: {0}")]
    Session(#[source] Box<rmcp::service::ServerInitializeError>),
    /// A non-loopback address without `--auth-token-env`.
    #[error(
        "mcp serve: refusing to listen on {0} without a token: anything but a loopback address \
         needs `--auth-token-env VAR` (clients then send `Authorization: Bearer <value of VAR>`)"
    )]
    TokenRequired(std::net::SocketAddr),
    /// A loopback address with neither a token nor `--no-auth`.
    #[error(
        "mcp serve: refusing to listen on {0} without a token: every user of this machine can \
         connect to a loopback port and call your servers with your secrets; pass \
         `--auth-token-env VAR` (clients then send `Authorization: Bearer <value of VAR>`), or \
         `--no-auth` on a machine only you use"
    )]
    LoopbackTokenRequired(std::net::SocketAddr),
    /// `--auth-token-env VAR` names an unset or empty variable.
    #[error("mcp serve: environment variable `{0}` (from --auth-token-env) is not set or empty")]
    TokenMissing(String),
    /// The address could not be bound.
    #[error("mcp serve: cannot listen on {0}: {1}")]
    Bind(std::net::SocketAddr, #[source] std::io::Error),
}

impl GatewayError {
    /// A stable name for scripts.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Session(_) => "mcp_serve",
            Self::TokenRequired(_) | Self::LoopbackTokenRequired(_) => "auth_token_required",
            Self::TokenMissing(_) => "auth_token_missing",
            Self::Bind(..) => "bind",
        }
    }
}
