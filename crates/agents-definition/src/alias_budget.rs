//! The walk every definition file gets before its typed parse
//! ([`agents_core::walk`]): a bound on what YAML aliases expand to, and no
//! key repeated in a map.
//!
//! yaml_serde caps alias *repetitions*, not what they add up to: a 1 MB file
//! whose 1 MB string is aliased 500 times deserializes into 500 MB (3 GB of
//! memory on the way) and stores a 500 MB row that no export can move. So
//! each file is first walked without building anything, charging every
//! value and every string byte, aliases included, against a budget
//! proportional to the file (16 units a byte, plus 32 MiB): a file without
//! aliases costs at most about 6 units a byte and never reaches it, and
//! whatever the aliases expand to, the typed parse that follows stays linear
//! in the input.
//!
//! serde keeps the last value of a repeated key, so `overrides` naming a
//! tool twice would lose the first silently; the same walk refuses the
//! second, pointing at it.

use agents_core::walk::Walk;

/// The message of the budget error.
pub(crate) const MESSAGE: &str = "YAML aliases expand to too much data";

/// Cost of one value, on top of its string's bytes.
const VALUE_COST: usize = 8;

/// The walk for a file of `len` bytes.
pub(crate) fn walk_for(len: usize) -> Walk {
    Walk::new(
        len.saturating_mul(16).saturating_add(32 << 20),
        VALUE_COST,
        MESSAGE,
    )
}
