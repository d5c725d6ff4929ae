//! The lowering of Low's `rtcall` rows onto the runtime's C functions (`runtime_calls.rs`):
//! printing, formatting, strings and JSON here; the database in `database.rs`, the array library
//! in `arrays.rs`, maps in `maps.rs`.

use inkwell::values::{BasicMetadataValueEnum, PointerValue};
use nagi_abi::CType;
use nagi_low::{Operand, RowGroup, RuntimeFn};

use crate::Error;
use crate::function::FnEmitter;
use crate::runtime_calls::{Rt, call, row_function};

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// Lowers `rtcall`: printing, formatting and JSON here, the database in `database.rs`.
    pub(crate) fn runtime_call(
        &mut self,
        op: nagi_low::OpId,
        dest: Option<nagi_low::LocalId>,
        func: RuntimeFn,
        class: Option<nagi_low::ClassId>,
        args: &[Operand],
    ) -> Result<(), Error> {
        let cx = self.cx;
        // Printing and formatting rows, and whether the row writes a string.
        let is_fmt = match func.group() {
            RowGroup::Json => return self.json_call(dest, func, class, args),
            RowGroup::Strings => return self.string_call(dest, func, args),
            RowGroup::Arrays => return self.array_call(dest, func, class, args),
            RowGroup::Database => return self.database_call(op, dest, func, class, args),
            RowGroup::Time => return self.sleep(op, dest, args),
            RowGroup::Secrets => return self.secret_call(op, dest, func, args),
            // Every `uuid.*` row takes its `Uuid`s by pointer and writes a result through the
            // out-pointer, or returns a bool: the string library's convention.
            RowGroup::Ids => return self.string_call(dest, func, args),
            RowGroup::Config => {
                return match func {
                    RuntimeFn::ConfigStr | RuntimeFn::ConfigBool => self.string_call(dest, func, args),
                    _ => self.bytes_call(dest, func, args),
                };
            }
            RowGroup::Clock => {
                return match func {
                    RuntimeFn::TimeFormat | RuntimeFn::DurationFormat | RuntimeFn::TimeParse => {
                        self.string_call(dest, func, args)
                    }
                    _ => self.bytes_call(dest, func, args),
                };
            }
            // `http.take_failure` writes the message through the out-pointer.
            RowGroup::Http if func == RuntimeFn::HttpTakeFailure => return self.string_call(dest, func, args),
            RowGroup::Http | RowGroup::Test => return self.bytes_call(dest, func, args),
            RowGroup::Outbound => return self.outbound_call(op, dest, class, args),
            RowGroup::Print => false,
            RowGroup::Format => true,
        };
        let rt = Rt::Row(func);
        if func == RuntimeFn::PrintStr {
            let place = self.string_place(args)?;
            let string = cx.layouts.string();
            let ptr = crate::ir::load_field(&cx.builder, string, place, 0, "s.ptr")?;
            let len = crate::ir::load_field(&cx.builder, string, place, 1, "s.len")?;
            call(cx, rt, &[ptr.into(), len.into()])?;
            return self.store_unit(dest);
        }
        let arg = args.first().ok_or_else(|| Error::internal(format!("rtcall {} lacks its argument", func.name())))?;
        let mut value: BasicMetadataValueEnum<'ctx> = self.operand(arg)?.into();
        if matches!(func, RuntimeFn::PrintBool | RuntimeFn::FmtBool) {
            // A bool crosses the C ABI as an i32 0 or 1.
            value = cx.builder.build_int_z_extend(value.into_int_value(), cx.context.i32_type(), "b")?.into();
        }
        if is_fmt {
            let dest = dest.ok_or_else(|| Error::internal("fmt without a destination"))?;
            call(cx, rt, &[self.slot(dest).into(), value])?;
            Ok(())
        } else {
            call(cx, rt, &[value])?;
            self.store_unit(dest)
        }
    }

    /// A row whose C function takes each `i64` (a `Time` and a `Duration` are ones) by value and
    /// each string as its bytes (pointer and length), and returns nothing or an `i64`: `http.*`,
    /// `test.*` and the clock's.
    fn bytes_call(&mut self, dest: Option<nagi_low::LocalId>, func: RuntimeFn, args: &[Operand]) -> Result<(), Error> {
        let cx = self.cx;
        let mut values: Vec<BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(4);
        for (i, param) in func.data().params.iter().enumerate() {
            if matches!(param, nagi_low::RtType::I64 | nagi_low::RtType::Time | nagi_low::RtType::Duration) {
                let arg =
                    args.get(i).ok_or_else(|| Error::internal(format!("rtcall {} lacks an argument", func.name())))?;
                values.push(self.operand(arg)?.into());
            } else {
                let place = self.string_place(&args[i..])?;
                let string = cx.layouts.string();
                values.push(crate::ir::load_field(&cx.builder, string, place, 0, "s.ptr")?.into());
                values.push(crate::ir::load_field(&cx.builder, string, place, 1, "s.len")?.into());
            }
        }
        match (call(cx, Rt::Row(func), &values)?, dest) {
            (Some(result), Some(dest)) => self.store_local(dest, result),
            (_, dest) => self.store_unit(dest),
        }
    }

    /// `json.encode<C>(&C) -> String` and `json.decode<C>(&str) -> Option<C>`, through the
    /// runtime with the layout descriptor of `C` (or of `Option<C>`).
    fn json_call(
        &mut self,
        dest: Option<nagi_low::LocalId>,
        func: RuntimeFn,
        class: Option<nagi_low::ClassId>,
        args: &[Operand],
    ) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let class = nagi_low::Type::Class(class.ok_or_else(|| Error::internal("json without a class"))?);
        let dest = dest.ok_or_else(|| Error::internal("json without a destination"))?;
        let arg = self.string_place(args)?;
        if func == RuntimeFn::JsonEncode {
            let value = b.build_pointer_cast(arg, cx.layouts.byte_ptr(), "value")?;
            let desc = crate::descriptors::descriptor(cx, &class);
            call(cx, Rt::Row(RuntimeFn::JsonEncode), &[self.slot(dest).into(), value.into(), desc.into()])?;
        } else {
            let string = cx.layouts.string();
            let ptr = crate::ir::load_field(b, string, arg, 0, "s.ptr")?;
            let len = crate::ir::load_field(b, string, arg, 1, "s.len")?;
            let out = b.build_pointer_cast(self.slot(dest), cx.layouts.byte_ptr(), "out")?;
            let desc = crate::descriptors::descriptor(cx, &nagi_low::Type::Option(Box::new(class)));
            call(cx, Rt::Row(RuntimeFn::JsonDecode), &[out.into(), ptr.into(), len.into(), desc.into()])?;
        }
        Ok(())
    }

    /// A row of the string library: the destination's slot as the out-pointer (unless the row
    /// returns a bool, which comes back as an `i32`), then each argument, a reference as the
    /// pointer to its place and an `i64` by value, in the C signature's pointer types.
    fn string_call(&mut self, dest: Option<nagi_low::LocalId>, func: RuntimeFn, args: &[Operand]) -> Result<(), Error> {
        let cx = self.cx;
        let dest = dest.ok_or_else(|| Error::internal(format!("rtcall {} without a destination", func.name())))?;
        let kinds = row_function(func).params();
        let returns_bool = func.data().ret == nagi_low::RtType::Bool;
        let pointer = |ptr: PointerValue<'ctx>, kind: CType| -> Result<BasicMetadataValueEnum<'ctx>, Error> {
            let ty = match kind {
                CType::Str => cx.layouts.string().ptr_type(inkwell::AddressSpace::default()),
                _ => cx.layouts.byte_ptr(),
            };
            Ok(cx.builder.build_pointer_cast(ptr, ty, "arg")?.into())
        };
        let mut values = Vec::with_capacity(kinds.len());
        if !returns_bool {
            values.push(pointer(self.slot(dest), kinds[0])?);
        }
        for arg in args {
            let kind = kinds[values.len()];
            let value = match (kind, arg) {
                (CType::I64, _) => self.operand(arg)?.into(),
                (_, Operand::Local(l)) => pointer(self.place(*l)?.0, kind)?,
                _ => return Err(Error::internal(format!("rtcall {}: a reference that is not a local", func.name()))),
            };
            values.push(value);
        }
        let result = call(cx, Rt::Row(func), &values)?;
        if returns_bool {
            let result = result.ok_or_else(|| Error::internal(format!("{} returns nothing", func.name())))?;
            let zero = cx.context.i32_type().const_zero();
            let truth = cx.builder.build_int_compare(inkwell::IntPredicate::NE, result.into_int_value(), zero, "b")?;
            self.store_local(dest, truth.into())?;
        }
        Ok(())
    }

    /// A row of randomness and secrets: `rand.int` as a plain call, `rand.token` and
    /// `secret.eq` as the string library's rows, and the password rows as pending operations
    /// (they run on the runtime's blocking pool) whose finish writes the result into `dest`.
    fn secret_call(
        &mut self,
        op: nagi_low::OpId,
        dest: Option<nagi_low::LocalId>,
        func: RuntimeFn,
        args: &[Operand],
    ) -> Result<(), Error> {
        match func {
            RuntimeFn::RandInt => self.bytes_call(dest, func, args),
            RuntimeFn::RandToken | RuntimeFn::SecretEq => self.string_call(dest, func, args),
            _ => {
                let mut values: Vec<BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(4);
                for arg in args {
                    let (ptr, len) = self.text_of(Some(arg))?;
                    values.push(ptr.into());
                    values.push(len.into());
                }
                let started = call(self.cx, Rt::Row(func), &values)?
                    .ok_or_else(|| Error::internal(format!("{} returns nothing", func.name())))?
                    .into_pointer_value();
                let dest =
                    dest.ok_or_else(|| Error::internal(format!("rtcall {} without a destination", func.name())))?;
                let out = self.slot(dest);
                self.await_runtime(op, started, Some(out))
            }
        }
    }

    /// `http.fetch` and `http.fetch_json<C>`: the method, URL and body strings and the header
    /// array by pointer to their places, the timeout, and the descriptor of the `Option<T>`
    /// (`T` the class, or `String` without one) that the pending operation's finish writes into
    /// `dest`.
    fn outbound_call(
        &mut self,
        op: nagi_low::OpId,
        dest: Option<nagi_low::LocalId>,
        class: Option<nagi_low::ClassId>,
        args: &[Operand],
    ) -> Result<(), Error> {
        let cx = self.cx;
        let [method, url, body, headers, timeout] = args else {
            return Err(Error::internal("http.fetch takes five arguments"));
        };
        let string_ptr = cx.layouts.string().ptr_type(inkwell::AddressSpace::default());
        let mut values: Vec<BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(6);
        for (arg, ty) in [(method, string_ptr), (url, string_ptr), (body, string_ptr), (headers, cx.layouts.byte_ptr())]
        {
            let Operand::Local(local) = arg else { return Err(Error::internal("http.fetch: a reference constant")) };
            let place = self.place(*local)?.0;
            values.push(cx.builder.build_pointer_cast(place, ty, "arg")?.into());
        }
        values.push(self.operand(timeout)?.into());
        let answer = class.map_or(nagi_low::Type::String, nagi_low::Type::Class);
        let desc = crate::descriptors::descriptor(cx, &nagi_low::Type::Option(Box::new(answer)));
        values.push(desc.into());
        let started = call(cx, Rt::Row(RuntimeFn::HttpFetch), &values)?
            .ok_or_else(|| Error::internal("nagi_rt_http_fetch returns nothing"))?
            .into_pointer_value();
        let dest = dest.ok_or_else(|| Error::internal("http.fetch without a destination"))?;
        let out = self.slot(dest);
        self.await_runtime(op, started, Some(out))
    }

    /// The place of the first argument of a string or class row (a reference local).
    pub(crate) fn string_place(&mut self, args: &[Operand]) -> Result<PointerValue<'ctx>, Error> {
        match args.first() {
            Some(Operand::Local(l)) => self.place(*l).map(|(p, _)| p),
            _ => Err(Error::internal("a reference argument that is not a local")),
        }
    }
}
