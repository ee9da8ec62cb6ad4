//! The decision, and the values that carry it. Every field here is private
//! to this module: nothing else, in this crate or any other, can make a
//! [`Trust`] that says yes, a [`TrustedLaunch`] or a [`TrustedRun`]
//! (without `unsafe`, which the workspace forbids).

use agents_core::{McpSource, RunSpec};

use crate::{TrustStore, spec_digest};

/// Whether one MCP server definition may start on this machine, and why:
/// made only here, from the config file's say or the trust store's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    basis: Basis,
    /// [`spec_digest`] of the definition it was decided for: a
    /// [`TrustedLaunch`] is made only for that spec.
    spec: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Basis {
    /// A server of the user's own config file, not marked `untrusted`.
    ConfigFile,
    /// Its spec's digest is in the trust store.
    Store,
    /// Neither: it is never started.
    None,
}

impl Trust {
    /// A server of the user's config file: trusted as the file's own
    /// unless the file marks it `untrusted` (an import of a file from
    /// someone else); such a server is trusted once its spec is in `store`.
    ///
    /// The one input taken on the caller's word is that `source` was read
    /// from this user's own config file (what the user writes there is
    /// trusted for them, as decision 0215 says).
    pub fn of_config_server(
        store: &TrustStore,
        source: &McpSource,
        marked_untrusted: bool,
    ) -> Self {
        let spec = spec_digest(source);
        if !marked_untrusted {
            return Self {
                basis: Basis::ConfigFile,
                spec,
            };
        }
        Self::of_digest(store, spec)
    }

    /// A definition from anywhere else (a skill's inline spec, a shared
    /// database): trusted when its spec's digest is in `store`.
    pub fn of_spec(store: &TrustStore, source: &McpSource) -> Self {
        Self::of_digest(store, spec_digest(source))
    }

    fn of_digest(store: &TrustStore, spec: String) -> Self {
        let basis = if store.is_trusted(&spec) {
            Basis::Store
        } else {
            Basis::None
        };
        Self { basis, spec }
    }

    /// Not trusted, whatever the store says.
    pub fn none() -> Self {
        Self {
            basis: Basis::None,
            spec: String::new(),
        }
    }

    /// Whether it may start.
    pub fn is_trusted(&self) -> bool {
        self.basis != Basis::None
    }

    /// What a launcher takes: `source` when this decision says yes and was
    /// made for that very spec (a decision for one definition never starts
    /// another); `None` otherwise.
    pub fn launch(&self, source: &McpSource) -> Option<TrustedLaunch> {
        if !self.is_trusted() || spec_digest(source) != self.spec {
            return None;
        }
        Some(TrustedLaunch {
            source: source.clone(),
            digest: self.spec.clone(),
        })
    }
}

/// Written as whether it is trusted (`true`/`false`).
impl serde::Serialize for Trust {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(self.is_trusted())
    }
}

/// An MCP launch spec the local user consented to (their config file's, or
/// its digest in their trust store): the only thing `agents-mcp` starts or
/// connects to. Made only by [`Trust::launch`].
///
/// ```compile_fail
/// // Cannot be built outside the deciding module: its fields are private.
/// let launch = agents_trust::TrustedLaunch {
///     source: agents_core::McpSource::default(),
///     digest: String::new(),
/// };
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TrustedLaunch {
    source: McpSource,
    digest: String,
}

impl TrustedLaunch {
    /// The spec consented to (`${VAR}` unexpanded).
    pub fn source(&self) -> &McpSource {
        &self.source
    }

    /// Its [`spec_digest`].
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

/// A `run` spec of a custom or inline tool whose digest is in the local
/// user's trust store: the only `run` `agents-tools` starts. Made only by
/// [`TrustedRun::consented`].
///
/// ```compile_fail
/// // Cannot be built outside the deciding module: its fields are private.
/// let spec: agents_core::RunSpec = serde_json::from_str(r#"{"command": "true"}"#).unwrap();
/// let digest = spec.digest();
/// let run = agents_trust::TrustedRun { spec, digest };
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TrustedRun {
    spec: RunSpec,
    digest: String,
}

impl TrustedRun {
    /// `spec` when this user trusts its digest ([`RunSpec::digest`]) in
    /// `store`; `None` otherwise.
    pub fn consented(store: &TrustStore, spec: &RunSpec) -> Option<Self> {
        let digest = spec.digest();
        store.is_trusted(&digest).then(|| Self {
            spec: spec.clone(),
            digest,
        })
    }

    /// The `run` consented to.
    pub fn spec(&self) -> &RunSpec {
        &self.spec
    }

    /// Its digest.
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::source;

    #[test]
    fn a_launch_is_made_only_for_the_spec_consented_to() {
        let store = TrustStore::in_memory();
        let lint = source("lint", "lint-server");
        let other = source("lint", "curl-evil");
        // Not in the store: no launch.
        assert!(Trust::of_spec(&store, &lint).launch(&lint).is_none());
        store.trust(&lint, "test").unwrap();
        let trust = Trust::of_spec(&store, &lint);
        let launch = trust.launch(&lint).unwrap();
        assert_eq!(launch.source(), &lint);
        assert_eq!(launch.digest(), spec_digest(&lint));
        // A decision for one spec never starts another.
        assert!(trust.launch(&other).is_none());
        assert!(Trust::none().launch(&lint).is_none());
    }

    #[test]
    fn a_config_server_marked_untrusted_needs_the_store() {
        let store = TrustStore::in_memory();
        let own = source("own", "own-server");
        assert!(
            Trust::of_config_server(&store, &own, false)
                .launch(&own)
                .is_some()
        );
        assert!(
            Trust::of_config_server(&store, &own, true)
                .launch(&own)
                .is_none()
        );
        store.trust(&own, "test").unwrap();
        assert!(
            Trust::of_config_server(&store, &own, true)
                .launch(&own)
                .is_some()
        );
    }
}
