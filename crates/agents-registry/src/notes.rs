//! What is worth knowing about the entries of a tool set before it is
//! handed to a model or served: an MCP tool the gateway cannot call, an
//! override the call policy does not enforce, a `read_only` override on a
//! tool that writes. Typed ([`EntryNote`]); a front end words them.

use agents_core::{ResolvedToolEntry, ToolSource};

use crate::service::ToolSet;

/// One thing to know about one entry of a [`ToolSet`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryNote {
    /// An MCP tool the gateway (`mcp serve`) cannot call, and why.
    NotServed {
        /// The entry's name.
        entry: String,
        /// Why not.
        reason: String,
    },
    /// An override the call policy reads but does not enforce, and why.
    NotEnforced {
        /// The entry's name.
        entry: String,
        /// The override and why it is not enforced.
        key: agents_tools::NotEnforced,
    },
    /// Overridden `read_only: true`, but the tool writes: every call of it
    /// is refused.
    ReadOnlyButWrites {
        /// The entry's name.
        entry: String,
    },
}

impl ToolSet {
    /// The MCP entries the gateway cannot call, in entry order.
    pub fn not_served(&self) -> Vec<EntryNote> {
        self.entries
            .iter()
            .filter_map(|entry| {
                let tool = entry
                    .tool
                    .as_ref()
                    .filter(|tool| tool.source == ToolSource::Mcp)?;
                let reason = agents_core::gateway_cannot_call(tool)?;
                Some(EntryNote::NotServed {
                    entry: entry.name.clone(),
                    reason,
                })
            })
            .collect()
    }

    /// What the call policy makes of each entry's overrides: keys it does
    /// not enforce, and `read_only` on a tool that writes.
    pub fn policy_notes(&self) -> Vec<EntryNote> {
        self.entries.iter().flat_map(policy_notes).collect()
    }
}

fn policy_notes(entry: &ResolvedToolEntry) -> Vec<EntryNote> {
    let policy = agents_tools::CallPolicy::from_overrides(&entry.overrides);
    let mut out: Vec<EntryNote> = policy
        .not_enforced
        .iter()
        .map(|key| EntryNote::NotEnforced {
            entry: entry.name.clone(),
            key: key.clone(),
        })
        .collect();
    let writes = entry.tool.as_ref().is_some_and(|tool| {
        match agents_tools::Builtin::from_name(&tool.name)
            .filter(|_| tool.source == ToolSource::Builtin)
        {
            Some(builtin) => builtin.writes(),
            None => tool.writes == Some(true),
        }
    });
    if policy.read_only && writes {
        out.push(EntryNote::ReadOnlyButWrites {
            entry: entry.name.clone(),
        });
    }
    out
}
