//! What several commands do alike, one function each: read the files they
//! are given, report a write of many files, gate on a lock, discover on
//! first use, tell MCP drift, report a plan's validation. Command modules
//! (`crate::commands::*`) import these and never each other; the rules
//! behind them are the service's.

pub mod discovery;
pub mod files;
pub mod lock;
pub mod mcp;
pub mod plan;
