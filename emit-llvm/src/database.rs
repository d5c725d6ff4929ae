//! The database rows of Low's runtime interface (`db.exec`, `db.query`, `db.query_one`,
//! `db.begin`, `db.commit`, `db.rollback`) on the runtime's C ABI: each starts a pending runtime
//! operation, which the function's frame awaits (`frames.rs`) and then finishes into the call's
//! destination.
//!
//! A statement's `?` arguments are collected into a runtime argument list first (kept in a slot
//! of the function's stack, `nagi_abi::SQL_ARGS_SIZE` bytes), one `nagi_rt_sql_arg_*` call per
//! argument: integers and `bool` (0 or 1) as SQLite INTEGER, `f64`
//! as REAL, strings as TEXT, and `none` as NULL, which is what the Rust path's `SqlValue`
//! conversions bind. Rows come back decoded by the runtime through the class's layout
//! descriptor (`descriptors.rs`), with the same column and range checks as the Rust path.

use inkwell::values::{IntValue, PointerValue};
use nagi_low::{ClassId, LocalId, OpId, Operand, RuntimeFn, Type};

use crate::function::FnEmitter;
use crate::ir;
use crate::runtime_calls::{self, Rt};
use crate::{Error, descriptors};

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// Starts the database operation of `func` and awaits it at `op`.
    pub(crate) fn database_call(
        &mut self,
        op: OpId,
        dest: Option<LocalId>,
        func: RuntimeFn,
        class: Option<ClassId>,
        args: &[Operand],
    ) -> Result<(), Error> {
        let cx = self.cx;
        let class_type = || class.map(Type::Class).ok_or_else(|| Error::internal("a query without its class"));
        let started = match func {
            RuntimeFn::DbBegin | RuntimeFn::DbCommit | RuntimeFn::DbRollback => {
                runtime_calls::call(cx, Rt::Row(func), &[])?
            }
            RuntimeFn::DbExec | RuntimeFn::DbExecCommit | RuntimeFn::DbQuery | RuntimeFn::DbQueryOne => {
                let (sql, len) = self.text_of(args.first())?;
                let list = self.sql_args(args.get(1..).unwrap_or(&[]))?;
                let i32t = cx.context.i32_type();
                match func {
                    RuntimeFn::DbExec | RuntimeFn::DbExecCommit => {
                        runtime_calls::call(cx, Rt::Row(func), &[sql.into(), len.into(), list.into()])?
                    }
                    RuntimeFn::DbQuery => {
                        let desc = descriptors::descriptor(cx, &class_type()?);
                        let args = [sql.into(), len.into(), list.into(), desc.into(), i32t.const_zero().into()];
                        runtime_calls::call(cx, Rt::Row(func), &args)?
                    }
                    _ => {
                        // `query_one` writes an `Option<C>`, so it is given that descriptor.
                        let desc = descriptors::descriptor(cx, &Type::Option(Box::new(class_type()?)));
                        let args = [sql.into(), len.into(), list.into(), desc.into(), i32t.const_int(1, false).into()];
                        runtime_calls::call(cx, Rt::DbQueryOne, &args)?
                    }
                }
            }
            RuntimeFn::QueueDeadLetters => {
                let (name, len) = self.text_of(args.first())?;
                let desc = descriptors::descriptor(cx, &class_type()?);
                runtime_calls::call(cx, Rt::Row(func), &[name.into(), len.into(), desc.into()])?
            }
            RuntimeFn::QueueRetry => {
                let (name, len) = self.text_of(args.first())?;
                let id = self.operand(args.get(1).ok_or_else(|| Error::internal("queue.retry without its id"))?)?;
                runtime_calls::call(cx, Rt::Row(func), &[name.into(), len.into(), id.into()])?
            }
            _ => return Err(Error::internal(format!("{} is not a database row", func.name()))),
        };
        let started = started.ok_or_else(|| Error::internal("a database call returns nothing"))?.into_pointer_value();
        let out = match (func, dest) {
            (
                RuntimeFn::DbExec
                | RuntimeFn::DbExecCommit
                | RuntimeFn::DbQuery
                | RuntimeFn::DbQueryOne
                | RuntimeFn::QueueDeadLetters
                | RuntimeFn::QueueRetry,
                Some(d),
            ) => Some(self.slot(d)),
            _ => None,
        };
        self.await_runtime(op, started, out)?;
        if out.is_none() {
            self.store_unit(dest)?;
        }
        Ok(())
    }

    /// The bytes and length of a string argument (a `&String` local).
    pub(crate) fn text_of(&mut self, arg: Option<&Operand>) -> Result<(PointerValue<'ctx>, IntValue<'ctx>), Error> {
        let place = self.string_place(arg.map(std::slice::from_ref).unwrap_or(&[]))?;
        self.text_at(place)
    }

    fn text_at(&self, string: PointerValue<'ctx>) -> Result<(PointerValue<'ctx>, IntValue<'ctx>), Error> {
        let b = &self.cx.builder;
        let st = self.cx.layouts.string();
        let ptr = ir::load_field(b, st, string, 0, "s.ptr")?.into_pointer_value();
        let len = ir::load_field(b, st, string, 1, "s.len")?.into_int_value();
        Ok((ptr, len))
    }

    /// A new runtime argument list holding `args`, in order, in a slot of this function's
    /// stack (the statement consumes it before anything awaits).
    fn sql_args(&mut self, args: &[Operand]) -> Result<PointerValue<'ctx>, Error> {
        let cx = self.cx;
        let words = cx.context.i64_type().array_type((nagi_abi::SQL_ARGS_SIZE / 8) as u32);
        let slot = self.entry_alloca(words.into(), "sql.args")?;
        let list = cx.builder.build_pointer_cast(slot, cx.layouts.byte_ptr(), "sql.args.ptr")?;
        let count = cx.context.i64_type().const_int(args.len() as u64, false);
        runtime_calls::call(cx, Rt::SqlArgs, &[list.into(), count.into()])?;
        for arg in args {
            match self.operand_type(arg) {
                Type::Option(inner) => {
                    let Operand::Local(local) = arg else { return Err(Error::internal("an option constant")) };
                    let slot = self.slot(*local);
                    let st = cx.layouts.llvm(&Type::Option(inner.clone())).into_struct_type();
                    self.optional_arg(list, slot, st, |this| {
                        let payload = ir::load_field(&cx.builder, st, slot, 1, "sql.some")?;
                        this.scalar_arg(list, &inner, payload)
                    })?;
                }
                Type::Ref { pointee, .. } => {
                    let Operand::Local(local) = arg else { return Err(Error::internal("a reference constant")) };
                    let place = self.load_local(*local)?.into_pointer_value();
                    match &*pointee {
                        Type::String => self.text_arg(list, place)?,
                        Type::Option(inner) if **inner == Type::String => {
                            let st = cx.layouts.llvm(&pointee).into_struct_type();
                            self.optional_arg(list, place, st, |this| {
                                let string = ir::field(&cx.builder, st, place, 1, "sql.text")?;
                                this.text_arg(list, string)
                            })?;
                        }
                        other => return Err(Error::internal(format!("a SQL argument of type &{other:?}"))),
                    }
                }
                ty => {
                    let value = self.operand(arg)?;
                    self.scalar_arg(list, &ty, value)?;
                }
            }
        }
        Ok(list)
    }

    /// Appends a scalar: INTEGER for `i32`, `i64`, `bool` and `Duration` (microseconds), REAL
    /// for `f64`, the RFC 3339 TEXT of a `Time` (the runtime writes it).
    fn scalar_arg(
        &self,
        list: PointerValue<'ctx>,
        ty: &Type,
        value: inkwell::values::BasicValueEnum<'ctx>,
    ) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let i64t = cx.context.i64_type();
        match ty {
            Type::F64 => runtime_calls::call(cx, Rt::SqlArgReal, &[list.into(), value.into()])?,
            Type::I64 | Type::Duration => runtime_calls::call(cx, Rt::SqlArgInt, &[list.into(), value.into()])?,
            Type::Time => runtime_calls::call(cx, Rt::SqlArgTime, &[list.into(), value.into()])?,
            // A `Uuid` goes by pointer to its bytes, held in a temporary of the stack.
            Type::Uuid => {
                let slot = self.entry_alloca(value.get_type(), "sql.uuid")?;
                cx.builder.build_store(slot, value)?;
                let bytes = cx.builder.build_pointer_cast(slot, cx.layouts.byte_ptr(), "sql.uuid.bytes")?;
                runtime_calls::call(cx, Rt::SqlArgUuid, &[list.into(), bytes.into()])?
            }
            Type::I32 => {
                let wide = b.build_int_s_extend(value.into_int_value(), i64t, "sql.int")?;
                runtime_calls::call(cx, Rt::SqlArgInt, &[list.into(), wide.into()])?
            }
            Type::Bool => {
                let wide = b.build_int_z_extend(value.into_int_value(), i64t, "sql.bool")?;
                runtime_calls::call(cx, Rt::SqlArgInt, &[list.into(), wide.into()])?
            }
            other => return Err(Error::internal(format!("a SQL argument of type {other:?}"))),
        };
        Ok(())
    }

    fn text_arg(&self, list: PointerValue<'ctx>, string: PointerValue<'ctx>) -> Result<(), Error> {
        let (ptr, len) = self.text_at(string)?;
        runtime_calls::call(self.cx, Rt::SqlArgText, &[list.into(), ptr.into(), len.into()])?;
        Ok(())
    }

    /// Appends NULL when the option at `option` (of struct type `st`) is `none`, else what
    /// `some` appends.
    fn optional_arg(
        &mut self,
        list: PointerValue<'ctx>,
        option: PointerValue<'ctx>,
        st: inkwell::types::StructType<'ctx>,
        some: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let b = &self.cx.builder;
        let tag = ir::load_field(b, st, option, 0, "sql.tag")?.into_int_value();
        let is_some = self.block("sql.some");
        let is_none = self.block("sql.none");
        let next = self.block("sql.next");
        b.build_conditional_branch(tag, is_some, is_none)?;
        b.position_at_end(is_some);
        some(self)?;
        b.build_unconditional_branch(next)?;
        b.position_at_end(is_none);
        runtime_calls::call(self.cx, Rt::SqlArgNull, &[list.into()])?;
        b.build_unconditional_branch(next)?;
        b.position_at_end(next);
        Ok(())
    }
}
