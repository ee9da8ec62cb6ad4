//! The service layer: what the spec calls `SkillRegistryService` and
//! `SkillRegistry`, gluing the core resolver to a [`Store`], the builtin
//! tools, Agent Skills discovery and MCP servers.
//!
//! It owns policy (what is validated when, which catalogue wins, what a
//! refresh replaces) but no SQL, no YAML and no printing.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod call;
mod catalogue;
mod discovery;
mod error;
mod identity;
mod lock;
mod mcp;
mod notes;
mod resolve;
mod scope;
mod service;
mod skills;
mod trust;
mod write;

pub use agents_discovery::{
    ConflictStrategy, DigestCache, DiscoveryResult, FileStamp, FolderDigestError,
};
pub use agents_mcp::FetchOptions;
pub use agents_store::Store;
// The builtin specs live beside their executors, in one place.
pub use agents_tools::{builtin_registry, builtin_tools};
pub use call::{PreparedCall, RunReview};
pub use discovery::{DiscoveryFolders, FirstUse, Progress, Refreshed, RemovedSkill, ScopeChanges};
pub use error::{Hint, MAX_SUGGESTIONS, STRICT_SHOWN, ServiceError, strict_message};
pub use identity::process_identity;
pub use lock::{Locked, agent_folder_digests};
pub use mcp::{
    DEFAULT_MCP_TIMEOUT, DriftWarning, McpDefinition, McpRefresh, McpServerState, McpToolDiff,
    McpToolGroup, REVIEWED_MAX, ReviewedDefinition, TRUST_DIGEST_MIN, TrustReview, TrustStep,
};
pub use notes::EntryNote;
pub use scope::{DiscoveryScope, ScopeError};
pub use service::{
    RESERVED_TOOL_PREFIXES, ServeSet, SkillRegistryService, ToolSet, not_discovered,
};
pub use trust::{
    Destination, Launch, MAX_LAUNCH_BYTES, SHORT_LAUNCH_BYTES, Trust, TrustEntry, TrustError,
    TrustStore, TrustedLaunch, TrustedRun, describe_launch,
};
pub use write::{
    FileCheck, ImportOutcome, ToolChange, WriteEffect, WriteFinding, WriteMode, WriteOutcome,
    did_you_mean, shown_findings,
};
