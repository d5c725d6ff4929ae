//! The `map.*` operations on [`Value::Map`]: lookups by key, references to an entry's key or
//! value by position (checked by the host's index rule, as on the compiled paths), and
//! insertion and removal with the runtime's order rules (`indexmap`'s, runtime/src/map.rs).

use indexmap::IndexMap;
use nagi_low::{LocalId, OpKind, Operand};

use crate::Stop;
use crate::machine::Machine;
use crate::stack::{as_i64, fault, project};
use crate::value::{MapKey, Proj, Value};

impl Machine<'_, '_> {
    /// `map.new`, `map.len`, `map.find`, `map.key_ref`, `map.value_ref`, `map.insert`, `map.remove`.
    pub(crate) fn map_op(&mut self, kind: &OpKind) -> Result<(), Stop> {
        match kind {
            OpKind::MapNew { dest } => self.stack.set(*dest, Value::Map(IndexMap::new())),
            OpKind::MapLen { dest, map } => {
                let len = self.entries(*map)?.len();
                self.stack.set(*dest, Value::I64(len as i64))
            }
            OpKind::MapFind { dest, map, key } => {
                let key = self.key(key)?;
                let at = self.entries(*map)?.get_index_of(&key).map_or(-1, |i| i as i64);
                self.stack.set(*dest, Value::I64(at))
            }
            OpKind::MapRef { dest, map, index, value } => {
                let position = as_i64(&self.stack.operand(index)?)?;
                let len = self.entries(*map)?.len();
                let at = self.host.index(position, len).map_err(Stop::Trap)?;
                let place = self.stack.place_of(*map)?;
                self.stack.set(*dest, project(&place, Proj::Entry(at, *value)))
            }
            OpKind::MapInsert { map, key, value } => {
                let key = self.stack.consume(key)?;
                let value = self.stack.consume(value)?;
                let hashed = MapKey::of(&key).ok_or_else(|| fault("a map key that is not an i64 or a string"))?;
                match self.stack.read_mut(*map)? {
                    Value::Map(entries) => {
                        entries.insert(hashed, (key, value));
                        Ok(())
                    }
                    other => Err(fault(format!("`map.insert` on {}", other.kind()))),
                }
            }
            OpKind::MapRemove { dest, map, key } => {
                let key = self.key(key)?;
                let removed = match self.stack.read_mut(*map)? {
                    Value::Map(entries) => entries.shift_remove(&key).map(|(_, v)| Box::new(v)),
                    other => return Err(fault(format!("`map.remove` on {}", other.kind()))),
                };
                self.stack.set(*dest, Value::Option(removed))
            }
            _ => Err(fault("not a map operation")),
        }
    }

    /// The entries of the map a local holds or refers to.
    fn entries(&self, map: LocalId) -> Result<&IndexMap<MapKey, (Value, Value)>, Stop> {
        match self.stack.read(map)? {
            Value::Map(entries) => Ok(entries),
            other => Err(fault(format!("a map operation on {}", other.kind()))),
        }
    }

    /// A key operand of `map.find` or `map.remove`: an `i64`, or a reference to a string.
    fn key(&self, key: &Operand) -> Result<MapKey, Stop> {
        let value = match key {
            Operand::Local(l) => self.stack.read(*l)?.clone(),
            Operand::Const(c) => Value::constant(c),
        };
        MapKey::of(&value).ok_or_else(|| fault("a map key that is not an i64 or a string"))
    }
}
