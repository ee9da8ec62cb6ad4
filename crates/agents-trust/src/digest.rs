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
    agents_core::text::hex(&hasher.finalize())
}

/// The first 12 hex digits, for tables and catalogue names.
pub fn short_digest(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> McpSource {
        let mut source = McpSource {
            server: "gh".into(),
            command: Some("npx".into()),
            args: vec!["-y".into(), "server".into()],
            cwd: Some("/srv".into()),
            ..McpSource::default()
        };
        source.env.insert("A".into(), "1".into());
        source.env.insert("B".into(), "${TOKEN}".into());
        source
    }

    #[test]
    fn every_field_of_the_launch_spec_changes_the_digest() {
        let original = spec_digest(&base());
        type Change = Box<dyn Fn(&mut McpSource)>;
        let changes: Vec<(&str, Change)> = vec![
            ("server", Box::new(|s| s.server = "gh2".into())),
            ("command", Box::new(|s| s.command = Some("node".into()))),
            ("args", Box::new(|s| s.args.push("--x".into()))),
            ("args order", Box::new(|s| s.args.reverse())),
            (
                "env value",
                Box::new(|s| {
                    s.env.insert("A".into(), "2".into());
                }),
            ),
            (
                "env name",
                Box::new(|s| {
                    s.env.insert("C".into(), "1".into());
                }),
            ),
            ("cwd", Box::new(|s| s.cwd = None)),
            (
                "url",
                Box::new(|s| s.url = Some("http://127.0.0.1:1/mcp".into())),
            ),
            (
                "headers",
                Box::new(|s| {
                    s.headers
                        .insert("Authorization".into(), "Bearer ${T}".into());
                }),
            ),
        ];
        for (field, change) in changes {
            let mut changed = base();
            change(&mut changed);
            assert_ne!(
                spec_digest(&changed),
                original,
                "changing {field} kept the digest"
            );
        }
    }

    #[test]
    fn what_neither_runs_nor_connects_does_not_change_it() {
        let original = spec_digest(&base());
        let mut same = base();
        same.tools = Some(vec!["echo".into()]);
        same.timeout_s = Some(5);
        assert_eq!(spec_digest(&same), original);
        // Map order is not part of the identity.
        let mut reordered = McpSource {
            env: Default::default(),
            ..base()
        };
        reordered.env.insert("B".into(), "${TOKEN}".into());
        reordered.env.insert("A".into(), "1".into());
        assert_eq!(spec_digest(&reordered), original);
        assert_eq!(short_digest(&original).len(), 12);
    }
}
