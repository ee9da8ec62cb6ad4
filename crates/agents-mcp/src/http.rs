//! Fetching from a streamable-HTTP server.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::error::McpError;
use crate::list::Failure;
use crate::session::{self, STAGE_INITIALIZE, SessionError, get_stage};
use crate::{FetchOptions, FetchedTools, McpTransport};

#[derive(Debug)]
pub(crate) struct HttpLaunch<'a> {
    pub(crate) server: &'a str,
    pub(crate) url: &'a str,
    pub(crate) headers: &'a [(String, String)],
    pub(crate) timeout: Duration,
}

/// Connects and runs `initialize` and `tools/list`; the session stays open.
pub(crate) async fn open(
    launch: HttpLaunch<'_>,
    options: &FetchOptions,
    handler: session::Handler,
) -> Result<(session::Client, FetchedTools), McpError> {
    let server = launch.server;
    let mut headers = HashMap::new();
    for (name, value) in launch.headers {
        let invalid = |what: &str| McpError::InvalidSource {
            server: server.to_owned(),
            message: format!("`headers.{name}`: {what}"),
        };
        let header_name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid("not a valid HTTP header name"))?;
        // The value may hold an expanded secret: never echo it.
        let header_value = HeaderValue::from_str(value)
            .map_err(|_| invalid("the expanded value is not a valid HTTP header value"))?;
        headers.insert(header_name, header_value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(launch.url)
        .custom_headers(headers)
        .max_json_response_size(options.max_message_bytes)
        .max_sse_event_size(options.max_message_bytes);
    let transport = StreamableHttpClientTransport::from_config(config);

    let stage = Mutex::new(STAGE_INITIALIZE);
    let outcome = tokio::time::timeout(
        launch.timeout,
        session::run(
            transport,
            server,
            McpTransport::Http,
            &stage,
            options,
            handler,
        ),
    )
    .await;
    match outcome {
        Ok(Ok((client, fetched))) => Ok((client, fetched)),
        Ok(Err(failure)) => Err(diagnose(server, launch.url, get_stage(&stage), failure)),
        Err(_elapsed) => Err(McpError::Timeout {
            server: server.to_owned(),
            stage: get_stage(&stage),
            timeout: launch.timeout,
            note: String::new(),
        }),
    }
}

fn diagnose(server: &str, url: &str, stage: &'static str, failure: SessionError) -> McpError {
    if let SessionError::List(Failure::Fatal(err)) = failure {
        return err;
    }
    let Some(err) = failure.as_std() else {
        return McpError::Protocol {
            server: server.to_owned(),
            stage,
            message: "unknown error".into(),
        };
    };
    let connect = |reason: String| McpError::Connect {
        server: server.to_owned(),
        url: url.to_owned(),
        reason,
    };
    if session::io_error_kind(err) == Some(std::io::ErrorKind::ConnectionRefused) {
        return connect("connection refused".into());
    }
    if session::find_reqwest_error(err).is_some_and(|err| err.is_connect()) {
        return connect(session::root_cause(err));
    }
    McpError::Protocol {
        server: server.to_owned(),
        stage,
        message: session::error_chain(err),
    }
}
