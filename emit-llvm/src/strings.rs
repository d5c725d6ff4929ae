//! `str.concat`: the parts (string locals and constant texts) written as `{ ptr, len }` pairs
//! into a scratch array in the function's entry block, and one call of the runtime's
//! `nagi_rt_str_concat`, which allocates the result once at the parts' total length.

use nagi_low::{LocalId, StrPart};

use crate::function::FnEmitter;
use crate::runtime_calls::{self, Rt};
use crate::{Error, ir};

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// `dest = str.concat parts…`.
    pub(crate) fn concat(&mut self, dest: LocalId, parts: &[StrPart]) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let i64_ty = cx.context.i64_type();
        let part_ty = cx.context.struct_type(&[cx.layouts.byte_ptr().into(), i64_ty.into()], false);
        // In the entry block, so that a concatenation in a loop does not grow the stack; the
        // array is dead once the call returns, so an async function's `poll` may keep it there
        // too (no suspension point lies between the stores and the call).
        let here = b.get_insert_block().ok_or_else(|| Error::internal("no insertion block"))?;
        let entry = self.llfn.get_first_basic_block().ok_or_else(|| Error::internal("no entry block"))?;
        match entry.get_first_instruction() {
            Some(first) => b.position_before(&first),
            None => b.position_at_end(entry),
        }
        let count = i64_ty.const_int(parts.len() as u64, false);
        let scratch = b.build_array_alloca(part_ty, count, "concat.parts")?;
        b.position_at_end(here);
        for (i, part) in parts.iter().enumerate() {
            let (ptr, len) = match part {
                StrPart::Local(local) => {
                    let (p, _) = self.place(*local)?;
                    let ptr = ir::load_field(b, cx.layouts.string(), p, 0, "part.ptr")?.into_pointer_value();
                    let len = ir::load_field(b, cx.layouts.string(), p, 1, "part.len")?.into_int_value();
                    (ptr, len)
                }
                StrPart::Text(text) => runtime_calls::literal(cx, text)?,
            };
            let at = ir::element(b, part_ty.into(), scratch, i64_ty.const_int(i as u64, false), "part")?;
            b.build_store(ir::field(b, part_ty, at, 0, "part.ptr")?, ptr)?;
            b.build_store(ir::field(b, part_ty, at, 1, "part.len")?, len)?;
        }
        let array = b.build_pointer_cast(scratch, cx.layouts.byte_ptr(), "parts")?;
        runtime_calls::call(cx, Rt::StrConcat, &[self.slot(dest).into(), array.into(), count.into()])?;
        Ok(())
    }
}
