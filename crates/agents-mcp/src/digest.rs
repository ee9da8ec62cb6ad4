//! The identity of a launch spec: a SHA-256 digest over every field that
//! decides what runs or where requests go.

use std::collections::BTreeMap;

use agents_core::McpSource;
use sha2::{Digest, Sha256};

/// Version tag hashed in front of the fields, so a future change of the
/// encoding cannot collide with today's digests.
const DOMAIN: &[u8] = b"agents mcp launch spec v1\0";

/// Hex SHA-256 of the launch spec of `source`: server name, `command`, `args`,
/// `env` (names and values as written, `${VAR}` unexpanded), `cwd`, `url` and
/// `headers` (as written). The `tools` allow-list and `timeout_s` are not part of
/// it: they change neither what runs nor where a request goes. The order of
/// `env` and `headers` entries does not matter; everything else does.
pub fn spec_digest(source: &McpSource) -> String {
    #[derive(serde::Serialize)]
    struct Spec<'a> {
        server: &'a str,
        command: Option<&'a str>,
        args: &'a [String],
        env: BTreeMap<&'a str, &'a str>,
        cwd: Option<&'a str>,
        url: Option<&'a str>,
        headers: BTreeMap<&'a str, &'a str>,
    }
    let spec = Spec {
        server: &source.server,
        command: source.command.as_deref(),
        args: &source.args,
        env: source
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
        cwd: source.cwd.as_deref(),
        url: source.url.as_deref(),
        headers: source
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
    };
    // Serializing plain strings and maps of strings cannot fail.
    let encoded = serde_json::to_vec(&spec).unwrap_or_default();
    let mut hasher = Sha256::new();
    hasher.update(DOMAIN);
    hasher.update(&encoded);
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The first 12 hex digits, for tables and catalogue names.
pub fn short_digest(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
}
