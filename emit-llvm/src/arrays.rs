//! The array library's rows (`array.*`): each array is passed as a pointer to its
//! `{ T*, len, cap }`, with what the runtime needs to know of its elements, which it sees only
//! as bytes: their kind (`i32`, `i64`, `f64` or string, the codes of the runtime's
//! `cabi::arrays`), their size, the offset of a sort key inside them, and the clone glue a slice
//! copies them with.

use inkwell::values::{BasicMetadataValueEnum, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use nagi_abi::array_kind;
use nagi_low::{ClassId, Constant, LocalId, Operand, RuntimeFn, Type};

use crate::function::FnEmitter;
use crate::runtime_calls::{Rt, call};
use crate::{Cx, Error};

/// The runtime's code for an element or key of type `ty` (`nagi_abi::array_kind`), as the `i32`
/// the runtime's functions take.
fn kind<'ctx>(cx: &Cx<'ctx, '_>, ty: &Type) -> Result<IntValue<'ctx>, Error> {
    let code = match ty {
        Type::I32 => array_kind::I32,
        Type::I64 => array_kind::I64,
        Type::F64 => array_kind::F64,
        Type::String => array_kind::STRING,
        other => return Err(Error::internal(format!("the array library does not order {other:?}"))),
    };
    Ok(cx.context.i32_type().const_int(code as u64, true))
}

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// A row of the array library.
    pub(crate) fn array_call(
        &mut self,
        dest: Option<LocalId>,
        func: RuntimeFn,
        class: Option<ClassId>,
        args: &[Operand],
    ) -> Result<(), Error> {
        let cx = self.cx;
        let (i32t, i64t) = (cx.context.i32_type(), cx.context.i64_type());
        let (array, elem) = self.array_arg(args.first())?;
        let arg =
            |i: usize| args.get(i).ok_or_else(|| Error::internal(format!("rtcall {} lacks an argument", func.name())));
        let size = i64t.const_int(cx.layouts.size(&elem), false);
        let result = match func {
            RuntimeFn::ArraySort => call(cx, Rt::Row(func), &[array.into(), kind(cx, &elem)?.into()])?,
            RuntimeFn::ArraySortBy => {
                let (Some(class), Operand::Const(Constant::I64(field))) = (class, arg(1)?) else {
                    return Err(Error::internal("array.sort_by without a class or a constant field"));
                };
                let field = u32::try_from(*field).map_err(|_| Error::internal("a negative sort key"))?;
                let key = &cx.low.classes[class].fields[field as usize].ty;
                let offset = cx.layouts.offset_of(cx.layouts.class(class), field);
                let values: [BasicMetadataValueEnum; 4] =
                    [array.into(), size.into(), i64t.const_int(offset, false).into(), kind(cx, key)?.into()];
                call(cx, Rt::Row(func), &values)?
            }
            RuntimeFn::ArrayReverse => call(cx, Rt::Row(func), &[array.into(), size.into()])?,
            RuntimeFn::ArraySortByKeys => {
                let (keys, key) = self.array_arg(Some(arg(1)?))?;
                let values: [BasicMetadataValueEnum; 4] =
                    [array.into(), size.into(), keys.into(), kind(cx, &key)?.into()];
                call(cx, Rt::Row(func), &values)?
            }
            RuntimeFn::ArrayContains => self.contains(array, &elem, arg(1)?)?,
            RuntimeFn::ArraySlice => {
                let dest = dest.ok_or_else(|| Error::internal("array.slice without a destination"))?;
                let out = cx.builder.build_pointer_cast(self.slot(dest), cx.layouts.byte_ptr(), "out")?;
                let (start, end) = (self.operand(arg(1)?)?, self.operand(arg(2)?)?);
                let (size, align) = crate::glue::size_align(cx, &elem);
                let clone = match crate::glue::clone_fn(cx, &elem) {
                    Some(f) => cx.builder.build_pointer_cast(
                        f.as_global_value().as_pointer_value(),
                        cx.layouts.byte_ptr(),
                        "clone",
                    )?,
                    None => cx.layouts.byte_ptr().const_null(),
                };
                let values: [BasicMetadataValueEnum; 7] =
                    [out.into(), array.into(), start.into(), end.into(), size.into(), align.into(), clone.into()];
                call(cx, Rt::Row(func), &values)?;
                return Ok(());
            }
            other => return Err(Error::internal(format!("rtcall {} is not a row of the array library", other.name()))),
        };
        match (result, dest) {
            (Some(truth), Some(dest)) => {
                let zero = i32t.const_zero();
                let truth = cx.builder.build_int_compare(IntPredicate::NE, truth.into_int_value(), zero, "b")?;
                self.store_local(dest, truth.into())
            }
            (_, dest) => self.store_unit(dest),
        }
    }

    /// The array an array reference points to, as a byte pointer, and its element type.
    fn array_arg(&self, arg: Option<&Operand>) -> Result<(PointerValue<'ctx>, Type), Error> {
        let Some(Operand::Local(local)) = arg else {
            return Err(Error::internal("an array row without an array reference"));
        };
        let (place, ty) = self.place(*local)?;
        let Type::Array(elem) = ty else { return Err(Error::internal("an array row on a value that is not an array")) };
        Ok((self.cx.builder.build_pointer_cast(place, self.cx.layouts.byte_ptr(), "array")?, (**elem).clone()))
    }

    /// `array.contains`: integers widened to an `i64`, floats by value, a string by pointer.
    fn contains(
        &mut self,
        array: PointerValue<'ctx>,
        elem: &Type,
        value: &Operand,
    ) -> Result<Option<inkwell::values::BasicValueEnum<'ctx>>, Error> {
        let cx = self.cx;
        match elem {
            Type::String => {
                let Operand::Local(local) = value else { return Err(Error::internal("a string that is not a local")) };
                let string = self.place(*local)?.0;
                let string = cx.builder.build_pointer_cast(
                    string,
                    cx.layouts.string().ptr_type(AddressSpace::default()),
                    "s",
                )?;
                call(cx, Rt::ArrayContainsStr, &[array.into(), string.into()])
            }
            Type::F64 => {
                let v = self.operand(value)?;
                call(cx, Rt::ArrayContainsF64, &[array.into(), v.into()])
            }
            int => {
                let v = self.operand(value)?.into_int_value();
                let wide = cx.builder.build_int_s_extend_or_bit_cast(v, cx.context.i64_type(), "wide")?;
                let kind = kind(cx, int)?;
                call(cx, Rt::Row(RuntimeFn::ArrayContains), &[array.into(), kind.into(), wide.into()])
            }
        }
    }
}
