//! `Map<K, V>`: High Nagi's map, with `i64` or `String` keys, in insertion order.
//!
//! The rules are [`indexmap`]'s, and every path uses them: the Rust path's generated code holds
//! a [`Map`], the LLVM path keeps its keys and values in arrays of emitted code beside an
//! [`Index`] (`cabi::maps`), and the interpreter an `IndexMap` of its values.
//!
//! - An entry's position is where its key was first inserted: inserting under a key that is
//!   there already replaces the value and keeps the position; a new key goes last.
//! - Removing an entry moves the entries after it up one position, keeping their order
//!   (`shift_remove`, O(n)), so iteration order is always insertion order, never hash order:
//!   output is deterministic.
//! - JSON: an object, in position order; an `i64` key is written as its decimal text and read
//!   back from it (serde_json's rule for integer keys). A repeated key in input keeps the first
//!   position and the last value.

use std::borrow::Borrow;
use std::hash::Hash;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::{ops, trap};

/// A map key whose type is known only when the program runs: what the LLVM path's index
/// (`cabi::maps`) and the JSON decoder of maps (`shaped_json`) hash.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// An `i64` key.
    I64(i64),
    /// A `String` key.
    Str(Box<str>),
}

/// A map from `K` (`i64` or `String`) to `V`, in insertion order ([module docs](self)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
#[serde(bound(serialize = "K: Serialize + Hash + Eq, V: Serialize"))]
#[serde(bound(deserialize = "K: Deserialize<'de> + Hash + Eq, V: Deserialize<'de>"))]
pub struct Map<K: Hash + Eq, V>(IndexMap<K, V>);

impl<K: Hash + Eq, V> Default for Map<K, V> {
    fn default() -> Self {
        Map(IndexMap::new())
    }
}

impl<K: Hash + Eq, V> Map<K, V> {
    /// An empty map (allocates nothing).
    pub fn new() -> Self {
        Map::default()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `map.find`: the position of the entry with key `key`, or -1.
    pub fn find<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> i64
    where
        K: Borrow<Q>,
    {
        self.0.get_index_of(key).map_or(-1, |i| i as i64)
    }

    /// `map.key_ref`: the key at `position`; traps outside `0..len` with the index trap.
    pub fn key_at(&self, position: i64) -> &K {
        let at = ops::index(position, self.0.len());
        self.0.get_index(at).map(|(k, _)| k).unwrap_or_else(|| trap("map position out of range"))
    }

    /// `map.value_ref`: the value at `position`; traps outside `0..len` with the index trap.
    pub fn value_at(&self, position: i64) -> &V {
        let at = ops::index(position, self.0.len());
        self.0.get_index(at).map(|(_, v)| v).unwrap_or_else(|| trap("map position out of range"))
    }

    /// `map.insert`: `value` under `key`; an existing key keeps its position (and its old value
    /// is dropped), a new one goes last.
    pub fn insert(&mut self, key: K, value: V) {
        self.0.insert(key, value);
    }

    /// `map.remove`: the value under `key`, removed, or `None`; later entries move up.
    pub fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.0.shift_remove(key)
    }

    /// The entries in position order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_follow_first_insertion_and_removal_keeps_order() {
        let mut m: Map<String, i64> = Map::new();
        m.insert("b".into(), 1);
        m.insert("a".into(), 2);
        m.insert("c".into(), 3);
        m.insert("b".into(), 4);
        assert_eq!(m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(), ["b=4", "a=2", "c=3"]);
        assert_eq!(m.remove("a"), Some(2));
        assert_eq!(m.remove("a"), None);
        assert_eq!((m.find("c"), m.find("a")), (1, -1));
        assert_eq!((m.key_at(1).as_str(), *m.value_at(0)), ("c", 4));
    }

    #[test]
    fn json_is_an_object_with_integer_keys_as_text() {
        let mut m: Map<i64, String> = Map::new();
        m.insert(10, "x".into());
        m.insert(-2, "y".into());
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, r#"{"10":"x","-2":"y"}"#);
        let back: Map<i64, String> = serde_json::from_str(r#"{"3":"a","1":"b","3":"c"}"#).unwrap();
        assert_eq!(back.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(), ["3=c", "1=b"]);
    }
}
