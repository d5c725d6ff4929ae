//! `Map<K, V>` (`map.*`): a map is `{ [K] keys, [V] values, i8* index }`. Lengths and positions
//! are read from the arrays here; lookups, insertion and removal go through the runtime's index
//! (runtime `cabi::maps`), which also moves keys and values inside the arrays, while dropping
//! and writing values stays here, where their types are known.

use inkwell::IntPredicate;
use inkwell::values::{BasicMetadataValueEnum, IntValue, PointerValue};
use nagi_low::{LocalId, OpKind, Operand, Type};

use crate::function::FnEmitter;
use crate::runtime_calls::{Rt, call};
use crate::{Error, glue, ir};

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// One `map.*` operation.
    pub(crate) fn map_op(&mut self, kind: &OpKind) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        match kind {
            OpKind::MapNew { dest } => {
                let zero = cx.layouts.llvm(self.ty(*dest)).const_zero();
                self.store_local(*dest, zero)?;
            }
            OpKind::MapLen { dest, map } => {
                let (p, k, v) = self.map_place(*map)?;
                let keys = self.map_array(p, &k, &v, 0)?;
                let len = ir::load_field(b, cx.layouts.array(&k), keys, 1, "len")?;
                self.store_local(*dest, len)?;
            }
            OpKind::MapFind { dest, map, key } => {
                let (p, k, _) = self.map_place(*map)?;
                let (rt, key) = self.key_arg(&k, key, Rt::MapFindInt, Rt::MapFindStr)?;
                let raw = b.build_pointer_cast(p, cx.layouts.byte_ptr(), "map")?;
                let at =
                    call(cx, rt, &[raw.into(), key])?.ok_or_else(|| Error::internal("map.find returns nothing"))?;
                self.store_local(*dest, at)?;
            }
            OpKind::MapRef { dest, map, index, value } => {
                let (p, k, v) = self.map_place(*map)?;
                let (elem, field) = if *value { (v.clone(), 1) } else { (k.clone(), 0) };
                let array = ir::field(b, cx.layouts.map(&k, &v), p, field, "entries")?;
                let at = self.element_ptr(array, &elem, index)?;
                self.store_local(*dest, at.into())?;
            }
            OpKind::MapInsert { map, key, value } => self.map_insert(*map, key, value)?,
            OpKind::MapRemove { dest, map, key } => {
                let (p, k, v) = self.map_place(*map)?;
                let (rt, key) = self.key_arg(&k, key, Rt::MapRemoveInt, Rt::MapRemoveStr)?;
                let option = cx.layouts.llvm(self.ty(*dest)).into_struct_type();
                let slot = self.slot(*dest);
                b.build_store(slot, option.const_zero())?;
                let payload =
                    b.build_pointer_cast(ir::field(b, option, slot, 1, "payload")?, cx.layouts.byte_ptr(), "out")?;
                let raw = b.build_pointer_cast(p, cx.layouts.byte_ptr(), "map")?;
                let size = cx.context.i64_type().const_int(cx.layouts.size(&v), false);
                let values: [BasicMetadataValueEnum; 4] = [raw.into(), key, payload.into(), size.into()];
                let found = call(cx, rt, &values)?.ok_or_else(|| Error::internal("map.remove returns nothing"))?;
                let zero = cx.context.i32_type().const_zero();
                let tag = b.build_int_compare(IntPredicate::NE, found.into_int_value(), zero, "found")?;
                b.build_store(ir::field(b, option, slot, 0, "tag")?, tag)?;
            }
            _ => return Err(Error::internal("not a map operation")),
        }
        Ok(())
    }

    /// `map.insert`: the runtime enters the key (taking a string key over) and answers the value's
    /// position, negative (`-1 - position`) when the key was there, whose old value is dropped
    /// before the new one is stored.
    fn map_insert(&mut self, map: LocalId, key: &Operand, value: &Operand) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let (p, k, v) = self.map_place(map)?;
        let new_value = self.operand(value)?;
        let key = match (&k, key) {
            // The string key is passed as its slot, which the runtime takes over.
            (Type::String, Operand::Local(l)) => self.slot(*l).into(),
            (Type::String, _) => return Err(Error::internal("a string key that is not a local")),
            _ => self.operand(key)?.into(),
        };
        let rt = if k == Type::String { Rt::MapInsertStr } else { Rt::MapInsertInt };
        let raw = b.build_pointer_cast(p, cx.layouts.byte_ptr(), "map")?;
        let (size, align) = glue::size_align(cx, &v);
        let answer = call(cx, rt, &[raw.into(), key, size.into(), align.into()])?
            .ok_or_else(|| Error::internal("map.insert returns nothing"))?
            .into_int_value();
        let zero = cx.context.i64_type().const_zero();
        let replaced = b.build_int_compare(IntPredicate::SLT, answer, zero, "replaced")?;
        let minus_one = cx.context.i64_type().const_all_ones();
        let old_at = b.build_int_sub(minus_one, answer, "old.at")?;
        let at: IntValue = b.build_select(replaced, old_at, answer, "at")?.into_int_value();
        let values = self.map_array(p, &k, &v, 1)?;
        let data = ir::load_field(b, cx.layouts.array(&v), values, 0, "data")?.into_pointer_value();
        let slot = ir::element(b, cx.layouts.llvm(&v), data, at, "slot")?;
        if v.owns_heap(cx.low) {
            let drop_old = self.block("map.replace");
            let store = self.block("map.store");
            b.build_conditional_branch(replaced, drop_old, store)?;
            b.position_at_end(drop_old);
            glue::drop_in_place(cx, &v, slot)?;
            b.build_unconditional_branch(store)?;
            b.position_at_end(store);
        }
        b.build_store(slot, new_value)?;
        Ok(())
    }

    /// A key operand as the runtime takes it: an `i64` by value (the `int` entry point), a
    /// string by the pointer to it (the `string` one).
    fn key_arg(
        &mut self,
        k: &Type,
        key: &Operand,
        int: Rt,
        string: Rt,
    ) -> Result<(Rt, BasicMetadataValueEnum<'ctx>), Error> {
        match (k, key) {
            (Type::String, Operand::Local(l)) => Ok((string, self.place(*l)?.0.into())),
            (Type::String, _) => Err(Error::internal("a string key that is not a local")),
            _ => Ok((int, self.operand(key)?.into())),
        }
    }

    /// The map a local (an owned map or a reference to one) holds, and its key and value types.
    fn map_place(&self, local: LocalId) -> Result<(PointerValue<'ctx>, Type, Type), Error> {
        match self.place(local)? {
            (p, Type::Map(k, v)) => Ok((p, (**k).clone(), (**v).clone())),
            _ => Err(Error::internal("a map operation on a local that is not a map")),
        }
    }

    /// The keys (`field` 0) or values (1) array of the map at `p`.
    fn map_array(&self, p: PointerValue<'ctx>, k: &Type, v: &Type, field: u32) -> Result<PointerValue<'ctx>, Error> {
        ir::field(&self.cx.builder, self.cx.layouts.map(k, v), p, field, "entries")
    }
}
