//! The types of the `map.*` operations: a map operand is a `Map<K, V>` or a reference to one
//! (a `&mut` for `insert` and `remove`), a key operand of `find` and `remove` is an `i64` or a
//! `&String` as `K` is `i64` or `String`, positions are `i64`.

use super::OpCheck;
use crate::entities::LocalId;
use crate::ops::{OpKind, Operand};
use crate::types::Type;

impl<'a> OpCheck<'_, 'a> {
    /// One `map.*` operation.
    pub(super) fn map_op(&mut self, kind: &OpKind) {
        match kind {
            OpKind::MapNew { dest } => {
                if let Some(ty) = self.local(*dest)
                    && !matches!(ty, Type::Map(..))
                {
                    let what = format!("destination {}", self.cx.name(*dest));
                    self.mismatch(&what, ty, "a map type Map<K, V>");
                }
            }
            OpKind::MapLen { dest, map } => {
                self.map_of(*map);
                self.expect_dest(*dest, &Type::I64);
            }
            OpKind::MapFind { dest, map, key } => {
                if let Some((k, _, _)) = self.map_of(*map) {
                    self.expect_key(key, k);
                }
                self.expect_dest(*dest, &Type::I64);
            }
            OpKind::MapRef { dest, map, index, value } => {
                self.expect_operand("position", index, &Type::I64);
                self.local(*dest);
                let Some((k, v, _)) = self.map_of(*map) else { return };
                let target = if *value { v } else { k };
                self.expect_dest(*dest, &Type::reference(false, target.clone()));
            }
            OpKind::MapInsert { map, key, value } => {
                let (key_found, value_found) = (self.operand(key), self.operand(value));
                let Some((k, v, mutable)) = self.map_of(*map) else { return };
                self.require_mutable(mutable, *map, "inserts");
                if let Some(found) = key_found {
                    let what = format!("key {}", self.describe(key));
                    self.expect(&what, &found, k);
                }
                if let Some(found) = value_found {
                    let what = format!("value {}", self.describe(value));
                    self.expect(&what, &found, v);
                }
            }
            OpKind::MapRemove { dest, map, key } => {
                self.local(*dest);
                let Some((k, v, mutable)) = self.map_of(*map) else { return };
                self.require_mutable(mutable, *map, "removes");
                self.expect_key(key, k);
                self.expect_dest(*dest, &Type::Option(Box::new(v.clone())));
            }
            _ => {}
        }
    }

    /// The key type, value type and mutability of the map `map` (owned, or behind a reference).
    fn map_of(&mut self, map: LocalId) -> Option<(&'a Type, &'a Type, bool)> {
        let ty = self.local(map)?;
        match ty.through_ref() {
            (Type::Map(k, v), mutable) => Some((k, v, mutable)),
            _ => {
                let what = format!("map {}", self.cx.name(map));
                self.mismatch(&what, ty, "a map Map<K, V> or a reference to one");
                None
            }
        }
    }

    /// A key that is looked up: an `i64` for `i64` keys, a `&String` for `String` keys.
    fn expect_key(&mut self, key: &Operand, k: &Type) {
        let wanted = match k {
            Type::String => Type::reference(false, Type::String),
            other => other.clone(),
        };
        if let Some(found) = self.operand(key)
            && *found != wanted
        {
            let what = format!("key {}", self.describe(key));
            self.mismatch(&what, &found, &format!("{}", wanted.display(self.cx.module)));
        }
    }
}
