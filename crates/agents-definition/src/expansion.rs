//! A bound on what YAML aliases expand to.
//!
//! yaml_serde caps alias *repetitions*, not what they add up to: a 1 MB file
//! whose 1 MB string is aliased 500 times deserializes into 500 MB (3 GB of
//! memory on the way) and stores a 500 MB row that no export can move. So a
//! file with an anchor in it is first walked without building anything,
//! charging every value and every string byte, aliases included, against a
//! budget proportional to the file (16 units a byte, plus 32 MiB): a file
//! without aliases costs at most about 5 units a byte and never reaches it,
//! and whatever the aliases expand to, the typed parse that follows stays
//! linear in the input.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The message of the budget error (found again by [`crate::documents`]).
pub(crate) const MESSAGE: &str = "YAML aliases expand to too much data";

/// Cost of one value, on top of its string's bytes.
const VALUE_COST: usize = 8;

/// The budget of a file of `len` bytes.
pub(crate) fn budget_for(len: usize) -> usize {
    len.saturating_mul(16).saturating_add(32 << 20)
}

/// Walks one value, charging it to `budget`.
#[derive(Clone, Copy)]
pub(crate) struct Count<'a> {
    pub(crate) budget: &'a Cell<usize>,
}

impl Count<'_> {
    fn charge<E: de::Error>(self, bytes: usize) -> Result<(), E> {
        match self
            .budget
            .get()
            .checked_sub(VALUE_COST.saturating_add(bytes))
        {
            Some(left) => {
                self.budget.set(left);
                Ok(())
            }
            None => Err(E::custom(MESSAGE)),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Count<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Count<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.charge(v.len())
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<(), E> {
        self.charge(v.len())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.charge(0)?;
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.charge(0)?;
        while map.next_key_seed(self)?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        // A tagged value (`!name x`): count what it holds.
        let ((), variant) = data.variant_seed(self)?;
        de::VariantAccess::newtype_variant_seed(variant, self)
    }
}
