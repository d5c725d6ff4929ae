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
        // The array is dead once the call returns, so an async function's `poll` may keep it on
        // its stack too (no suspension point lies between the stores and the call).
        let count = i64_ty.const_int(parts.len() as u64, false);
        let scratch = self.entry_alloca(part_ty.array_type(parts.len() as u32).into(), "concat.parts")?;
        let scratch =
            b.build_pointer_cast(scratch, part_ty.ptr_type(inkwell::AddressSpace::default()), "parts.first")?;
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
