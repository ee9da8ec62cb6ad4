//! Progressive disclosure of a resolved skill's tools: a lexical ranker
//! over them ([`rank`]), what a tool list costs in a model's context
//! ([`budget`]), and which tools each disclosure mode puts there first
//! ([`plan`]). Pure: no I/O; the gateway and the CLI build a [`Catalog`]
//! once per resolution and ask it.

#![deny(clippy::panic, clippy::indexing_slicing)]

pub mod budget;
pub mod plan;
pub mod rank;
pub mod tokenize;

pub use budget::{BYTES_PER_TOKEN, Cost, estimate_tokens};
pub use plan::{
    BudgetReport, CALL, Catalog, CatalogTool, Collision, DEFAULT_BUDGET_TOKENS, Defer, Disclosure,
    LOADER, Match, Mode, ModeCost, SEARCH, SkillCost, SkillGroup,
};
pub use rank::{Hit, Ranker, ToolText};

#[cfg(test)]
mod tests;
