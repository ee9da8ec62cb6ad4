//! One walk over a parsed document (YAML, as the readers above hand it to
//! serde) that bounds what it costs and refuses a key repeated in a map.
//!
//! yaml_serde caps alias *repetitions*, not what they add up to: a few
//! kilobytes of anchors and aliases can expand into millions of values, and
//! a 1 MB string aliased 500 times into 500 MB. A [`Walk`] charges every
//! value it meets, and every byte of every string, aliases included, against
//! a budget, and stops at the first value that would overdraw it.
//!
//! A YAML map may repeat a key, and serde keeps the last value: a skill's
//! `overrides` naming a tool twice, or a tool's `metadata` repeating a
//! field, would lose the first silently. A walk refuses the second
//! occurrence. It does so while reading the key itself, so the parser's
//! error points at the repeated key, not at the map it is in.
//!
//! The walk either builds nothing ([`Walk::check`]: a pass before a typed
//! parse, so that parse only ever sees bounded input without repeated keys)
//! or builds the JSON value ([`Walk::json`]: front-matter read as JSON).
//! Map keys are compared as written, as the typed parse reads them: a YAML
//! `1` and `"1"` are the same key, `1` and `1.0` are not.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a walk stopped the parse, when it was the walk's own rule and not the
/// parser's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The document costs more than the budget.
    Budget,
    /// A map repeats a key.
    RepeatedKey,
    /// A `.inf` or `.nan`, which JSON cannot hold: the typed parse would
    /// read it into a JSON value as `null` without a word (a schema's
    /// `maximum: .inf`, an override's `timeout_s: .inf`). Refused where it
    /// is written, in a text field too, where quoting keeps the text.
    NonFinite,
}

/// A budget and the rules of one walk (one file: documents of a stream
/// share it).
#[derive(Debug)]
pub struct Walk {
    left: Cell<usize>,
    value_cost: usize,
    message: &'static str,
    stop: Cell<Option<Stop>>,
    /// Numbers JSON cannot hold are built as their text (see
    /// [`Walk::loose_numbers`]) rather than refused.
    loose: bool,
    loosened: Cell<bool>,
}

impl Walk {
    /// A walk that may spend `budget` units: each value costs `value_cost`
    /// plus the bytes of its string. `message` is the error when it runs out.
    #[must_use]
    pub fn new(budget: usize, value_cost: usize, message: &'static str) -> Self {
        Self {
            left: Cell::new(budget),
            value_cost,
            message,
            stop: Cell::new(None),
            loose: false,
            loosened: Cell::new(false),
        }
    }

    /// This walk builds an integer wider than 64 bits, `.inf` and `.nan` as
    /// a string ([`LOOSE_MARK`], then the integer's decimal digits, `inf`,
    /// `NaN`) instead of
    /// refusing them: for a reader that reads such scalars again as the text
    /// they were written as. [`Walk::loosened`] says whether it did.
    #[must_use]
    pub fn loose_numbers(mut self) -> Self {
        self.loose = true;
        self
    }

    /// Whether a number was built as text under [`Walk::loose_numbers`].
    #[must_use]
    pub fn loosened(&self) -> bool {
        self.loosened.get()
    }

    /// A number JSON cannot hold, built as [`LOOSE_MARK`] and `text` when
    /// this walk is loose.
    fn loosen<B: Built, E: de::Error>(&self, text: &str) -> Option<Result<B, E>> {
        self.loose.then(|| {
            self.loosened.set(true);
            Ok(B::string(&format!("{LOOSE_MARK}{text}")))
        })
    }

    /// A seed that walks one value and builds nothing.
    #[must_use]
    pub fn check(&self) -> Seed<'_, Checked> {
        Seed::new(self)
    }

    /// A seed that walks one value and builds it as JSON.
    #[must_use]
    pub fn json(&self) -> Seed<'_, Value> {
        Seed::new(self)
    }

    /// The rule that stopped the last failed walk, if it was one of this
    /// module's (the parser's own errors leave it `None`).
    #[must_use]
    pub fn stopped(&self) -> Option<Stop> {
        self.stop.get()
    }

    fn fail<E: de::Error>(&self, stop: Stop, message: impl fmt::Display) -> E {
        self.stop.set(Some(stop));
        E::custom(message)
    }

    fn charge<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        match self
            .left
            .get()
            .checked_sub(self.value_cost.saturating_add(bytes))
        {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => Err(self.fail(Stop::Budget, self.message)),
        }
    }
}

/// JSON text to a value, refusing a key repeated in an object (serde_json
/// keeps the last, so a reader of the file and the program would see
/// different values). No budget: JSON has no aliases.
pub fn json_from_str(text: &str) -> Result<Value, serde_json::Error> {
    let walk = Walk::new(usize::MAX, 0, "");
    let mut parser = serde_json::Deserializer::from_str(text);
    let value = walk.json().deserialize(&mut parser)?;
    parser.end()?;
    Ok(value)
}

/// What a walk builds of each value it meets: [`Checked`] or a JSON [`Value`].
pub trait Built: Sized + sealed::Sealed {
    /// A sequence being built.
    #[doc(hidden)]
    type Seq: Default;
    /// A map being built: it also answers whether a key was seen.
    #[doc(hidden)]
    type Map: Default;
    #[doc(hidden)]
    fn bool(v: bool) -> Self;
    #[doc(hidden)]
    fn i64(v: i64) -> Self;
    #[doc(hidden)]
    fn u64(v: u64) -> Self;
    #[doc(hidden)]
    fn wide<E: de::Error>(text: String) -> Result<Self, E>;
    #[doc(hidden)]
    fn f64<E: de::Error>(v: f64) -> Result<Self, E>;
    #[doc(hidden)]
    fn string(v: &str) -> Self;
    #[doc(hidden)]
    fn bytes<E: de::Error>() -> Result<Self, E>;
    #[doc(hidden)]
    fn null() -> Self;
    #[doc(hidden)]
    fn push(seq: &mut Self::Seq, item: Self);
    #[doc(hidden)]
    fn seq(seq: Self::Seq) -> Self;
    #[doc(hidden)]
    fn has(map: &Self::Map, key: &str) -> bool;
    #[doc(hidden)]
    fn insert(map: &mut Self::Map, key: String, value: Self);
    #[doc(hidden)]
    fn map(map: Self::Map) -> Self;
    #[doc(hidden)]
    fn tagged<'de, A: EnumAccess<'de>>(seed: Seed<'_, Self>, data: A) -> Result<Self, A::Error>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Checked {}
    impl Sealed for serde_json::Value {}
}

/// Nothing built: the value was walked and kept to the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked;

type KeySet = HashSet<String, foldhash::fast::RandomState>;

/// Starts the string a loose walk ([`Walk::loose_numbers`]) builds for a
/// number JSON cannot hold: no YAML text holds it (a NUL must be escaped),
/// so a reader can tell such a placeholder from any string written.
pub const LOOSE_MARK: char = '\0';

/// JSON has no infinity and no NaN.
const NON_FINITE: &str = "`.nan` and `.inf` are not supported";

impl Built for Checked {
    type Seq = ();
    type Map = KeySet;
    fn bool(_: bool) -> Self {
        Self
    }
    fn i64(_: i64) -> Self {
        Self
    }
    fn u64(_: u64) -> Self {
        Self
    }
    fn wide<E: de::Error>(_: String) -> Result<Self, E> {
        Ok(Self)
    }
    fn f64<E: de::Error>(_: f64) -> Result<Self, E> {
        Ok(Self)
    }
    fn string(_: &str) -> Self {
        Self
    }
    fn bytes<E: de::Error>() -> Result<Self, E> {
        Ok(Self)
    }
    fn null() -> Self {
        Self
    }
    fn push((): &mut (), _: Self) {}
    fn seq((): ()) -> Self {
        Self
    }
    fn has(map: &KeySet, key: &str) -> bool {
        map.contains(key)
    }
    fn insert(map: &mut KeySet, key: String, _: Self) {
        map.insert(key);
    }
    fn map(_: KeySet) -> Self {
        Self
    }
    fn tagged<'de, A: EnumAccess<'de>>(seed: Seed<'_, Self>, data: A) -> Result<Self, A::Error> {
        // A tagged value (`!name x`): walk what it holds; the typed parse
        // decides whether the tag means anything.
        let (Self, variant) = data.variant_seed(seed)?;
        de::VariantAccess::newtype_variant_seed(variant, seed)
    }
}

impl Built for Value {
    type Seq = Vec<Value>;
    type Map = Map<String, Value>;
    fn bool(v: bool) -> Self {
        Value::Bool(v)
    }
    fn i64(v: i64) -> Self {
        Value::Number(v.into())
    }
    fn u64(v: u64) -> Self {
        Value::Number(v.into())
    }
    fn wide<E: de::Error>(text: String) -> Result<Self, E> {
        Err(E::custom(format!("integer `{text}` is out of range")))
    }
    fn f64<E: de::Error>(v: f64) -> Result<Self, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(NON_FINITE))
    }
    fn string(v: &str) -> Self {
        Value::String(v.to_owned())
    }
    fn bytes<E: de::Error>() -> Result<Self, E> {
        Err(E::custom("binary values are not supported"))
    }
    fn null() -> Self {
        Value::Null
    }
    fn push(seq: &mut Vec<Value>, item: Self) {
        seq.push(item);
    }
    fn seq(seq: Vec<Value>) -> Self {
        Value::Array(seq)
    }
    fn has(map: &Map<String, Value>, key: &str) -> bool {
        map.contains_key(key)
    }
    fn insert(map: &mut Map<String, Value>, key: String, value: Self) {
        map.insert(key, value);
    }
    fn map(map: Map<String, Value>) -> Self {
        Value::Object(map)
    }
    fn tagged<'de, A: EnumAccess<'de>>(_: Seed<'_, Self>, _: A) -> Result<Self, A::Error> {
        Err(de::Error::custom(
            "YAML tags such as `!name` are not supported",
        ))
    }
}

/// Walks one value of a [`Walk`], building a `B`.
pub struct Seed<'w, B> {
    walk: &'w Walk,
    built: PhantomData<fn() -> B>,
}

impl<B> Clone for Seed<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B> Copy for Seed<'_, B> {}

impl<B> fmt::Debug for Seed<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Seed").field("walk", self.walk).finish()
    }
}

impl<'w, B> Seed<'w, B> {
    fn new(walk: &'w Walk) -> Self {
        Self {
            walk,
            built: PhantomData,
        }
    }
}

impl<'de, B: Built> DeserializeSeed<'de> for Seed<'_, B> {
    type Value = B;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<B, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, B: Built> Visitor<'de> for Seed<'_, B> {
    type Value = B;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<B, E> {
        self.walk.charge(0)?;
        Ok(B::bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<B, E> {
        self.walk.charge(0)?;
        Ok(B::i64(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<B, E> {
        self.walk.charge(0)?;
        Ok(B::u64(v))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<B, E> {
        self.walk.charge(0)?;
        let text = v.to_string();
        self.walk.loosen(&text).unwrap_or_else(|| B::wide(text))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<B, E> {
        self.walk.charge(0)?;
        let text = v.to_string();
        self.walk.loosen(&text).unwrap_or_else(|| B::wide(text))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<B, E> {
        self.walk.charge(0)?;
        if !v.is_finite() {
            if let Some(built) = self.walk.loosen(&v.to_string()) {
                return built;
            }
            return Err(self.walk.fail(Stop::NonFinite, NON_FINITE));
        }
        B::f64(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<B, E> {
        self.walk.charge(v.len())?;
        Ok(B::string(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<B, E> {
        self.walk.charge(v.len())?;
        B::bytes()
    }

    fn visit_unit<E: de::Error>(self) -> Result<B, E> {
        self.walk.charge(0)?;
        Ok(B::null())
    }

    fn visit_none<E: de::Error>(self) -> Result<B, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<B, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<B, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<B, A::Error> {
        self.walk.charge(0)?;
        let mut items = B::Seq::default();
        while let Some(item) = seq.next_element_seed(self)? {
            B::push(&mut items, item);
        }
        Ok(B::seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<B, A::Error> {
        self.walk.charge(0)?;
        let mut built = B::Map::default();
        while let Some(key) = map.next_key_seed(Key::<B> {
            walk: self.walk,
            seen: &built,
        })? {
            let value = map.next_value_seed(self)?;
            B::insert(&mut built, key, value);
        }
        Ok(B::map(built))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<B, A::Error> {
        B::tagged(self, data)
    }
}

/// A map key as written (read with `deserialize_str`, as the typed parse
/// reads the keys of its string-keyed maps: `~`, `True` and `1.0` stay
/// themselves, a tag is ignored), refused if the map already has it. A YAML
/// `1` and `"1"` are then the same key, as they are once parsed.
struct Key<'w, 'm, B: Built> {
    walk: &'w Walk,
    seen: &'m B::Map,
}

impl<'de, B: Built> DeserializeSeed<'de> for Key<'_, '_, B> {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, B: Built> Visitor<'de> for Key<'_, '_, B> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        self.walk.charge(v.len())?;
        if B::has(self.seen, v) {
            return Err(self
                .walk
                .fail(Stop::RepeatedKey, format_args!("duplicate key `{v}`")));
        }
        Ok(v.to_owned())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// Walks `text` (JSON, which serde reads as YAML's readers do) with a
    /// fresh walk, building JSON and then nothing.
    fn both(text: &str, budget: usize) -> (Result<Value, Option<Stop>>, Result<(), Option<Stop>>) {
        let walk = Walk::new(budget, 8, "too much");
        let built = walk
            .json()
            .deserialize(&mut serde_json::Deserializer::from_str(text))
            .map_err(|_| walk.stopped());
        let walk = Walk::new(budget, 8, "too much");
        let checked = walk
            .check()
            .deserialize(&mut serde_json::Deserializer::from_str(text))
            .map(|Checked| ())
            .map_err(|_| walk.stopped());
        (built, checked)
    }

    #[test]
    fn a_value_without_repeats_is_built_whole() {
        let text = r#"{"a": [1, -2, 1.5, "x", null, true], "b": {"a": {}}, "c": {"a": 1}}"#;
        let (built, checked) = both(text, 1 << 20);
        assert_eq!(
            built.unwrap(),
            json!({"a": [1, -2, 1.5, "x", null, true], "b": {"a": {}}, "c": {"a": 1}})
        );
        assert_eq!(checked, Ok(()));
    }

    #[test]
    fn a_repeated_key_stops_both_walks_at_any_depth() {
        for text in [
            r#"{"a": 1, "a": 2}"#,
            r#"{"x": {"b": [{"a": 1, "c": 0, "a": 2}]}}"#,
            r#"{"a": {}, "a": {}}"#,
        ] {
            let (built, checked) = both(text, 1 << 20);
            assert_eq!(built, Err(Some(Stop::RepeatedKey)), "{text}");
            assert_eq!(checked, Err(Some(Stop::RepeatedKey)), "{text}");
        }
    }

    #[test]
    fn the_same_key_in_two_maps_is_not_repeated() {
        let (built, checked) = both(r#"[{"a": 1}, {"a": 2}, {"b": {"a": 3}, "a": 4}]"#, 1 << 20);
        assert!(built.is_ok());
        assert_eq!(checked, Ok(()));
    }

    #[test]
    fn the_message_names_the_key() {
        let walk = Walk::new(1 << 20, 8, "too much");
        let err = walk
            .check()
            .deserialize(&mut serde_json::Deserializer::from_str(
                r#"{"keep": 1, "keep": 2}"#,
            ))
            .unwrap_err();
        assert!(err.to_string().starts_with("duplicate key `keep`"), "{err}");
    }

    #[test]
    fn the_budget_charges_values_and_string_bytes() {
        let text = r#"{"abc": "wxyz"}"#;
        // The map, its key and its value: 8 + (8 + 3) + (8 + 4) = 31.
        let (built, checked) = both(text, 31);
        assert!(built.is_ok());
        assert_eq!(checked, Ok(()));
        let (built, checked) = both(text, 30);
        assert_eq!(built, Err(Some(Stop::Budget)));
        assert_eq!(checked, Err(Some(Stop::Budget)));
    }

    #[test]
    fn a_parser_error_is_not_the_walks() {
        let (built, checked) = both(r#"{"a": 1,"#, 1 << 20);
        assert_eq!(built, Err(None));
        assert_eq!(checked, Err(None));
    }
}
