//! Trust: what may start on this machine as the local user. The decision
//! is made in one place, the `agents-trust` crate (its `decide` module):
//!
//! - an MCP server definition's [`Trust`] (its config file's say, or its
//!   launch spec's digest in this user's [`TrustStore`]) is the only maker
//!   of a [`TrustedLaunch`], the only thing `agents-mcp` starts or connects
//!   to ([`crate::McpDefinition::trusted_launch`]);
//! - a custom or inline tool's `run` is callable only with a
//!   [`TrustedRun`] ([`TrustedRun::consented`]: its digest in the store),
//!   which `agents-tools` needs to start it ([`crate::SkillRegistryService::callable`]).
//!
//! It sits in a crate below `agents-mcp` and `agents-tools` so that their
//! launchers can take those types and no other code can make them (decision
//! 0215). This module re-exports it for the registry's users.

pub use agents_trust::*;
