//! What a tool set costs in a model's context: bytes and an estimate of
//! tokens.
//!
//! The method: the bytes of the tools as compact JSON (the array a request
//! carries, `serde_json` without spaces), and a token estimate of those
//! bytes divided by [`BYTES_PER_TOKEN`], rounded up. Tool schemas are JSON
//! with short English words; byte-pair tokenisers of current models cut
//! such text at about four bytes per token, and no tokeniser of a given
//! provider is exact for another's. The estimate is for comparing modes and
//! checking a budget, not for billing.

use serde::Serialize;
use serde_json::Value;

/// Bytes per estimated token (see the module documentation).
pub const BYTES_PER_TOKEN: usize = 4;

/// The method, in one line, for reports.
pub const METHOD: &str = "bytes of the compact JSON tool array / 4, rounded up";

/// The estimated tokens of `bytes` bytes of JSON.
pub fn estimate_tokens(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The size of a tool array in a context.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    /// How many tools.
    pub tools: usize,
    /// Bytes of the compact JSON array.
    pub bytes: usize,
    /// [`estimate_tokens`] of `bytes`.
    pub tokens: usize,
}

impl Cost {
    /// The cost of the array of `tools`.
    pub fn of<'a>(tools: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut count = 0;
        // `[` and `]`, and a comma between two tools.
        let mut bytes = 2;
        for tool in tools {
            if count > 0 {
                bytes += 1;
            }
            count += 1;
            bytes += json_len(tool);
        }
        Self {
            tools: count,
            bytes,
            tokens: estimate_tokens(bytes),
        }
    }
}

/// The length of `value` as compact JSON.
pub fn json_len(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cost_is_the_bytes_of_the_compact_array() {
        let tools = [json!({"name": "a"}), json!({"name": "bb", "x": [1, 2]})];
        let cost = Cost::of(&tools);
        let array = serde_json::to_string(&tools).unwrap();
        assert_eq!(cost.bytes, array.len());
        assert_eq!(cost.tools, 2);
        assert_eq!(cost.tokens, array.len().div_ceil(4));
        assert_eq!(
            Cost::of(&[]),
            Cost {
                tools: 0,
                bytes: 2,
                tokens: 1
            }
        );
    }

    #[test]
    fn tokens_round_up() {
        assert_eq!(estimate_tokens(0), 0);
        assert_eq!(estimate_tokens(1), 1);
        assert_eq!(estimate_tokens(8), 2);
        assert_eq!(estimate_tokens(9), 3);
    }
}
