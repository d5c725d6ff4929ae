//! Arithmetic, comparisons and casts with docs/design.md §2's semantics, which are not LLVM's defaults.
//!
//! - `add sub mul` carry no `nsw`/`nuw`: they wrap.
//! - `div`/`rem` trap on a zero divisor with the runtime's messages (`division by zero`,
//!   `remainder by zero`) and divide by `1` instead of `-1` (then negate), so `MIN / -1` is
//!   `MIN` and `MIN % -1` is `0` without ever executing LLVM's undefined `sdiv MIN, -1`. A
//!   constant divisor other than `0` and `-1` needs neither guard, which keeps `x % 7` in a
//!   kernel vectorizable.
//! - Shift counts are masked to the bit width, as Rust's `wrapping_shl`/`wrapping_shr`.
//! - Float → int is `llvm.fptosi.sat` (saturating, NaN → 0), as Rust's `as`.
//! - Float `ne` is the unordered compare (`une`: true with a NaN), the others ordered.
//! - Float `min`/`max` give what `nagi_runtime::ops::fmin`/`fmax` give: a NaN operand gives
//!   the other one, and `-0.0` orders below `+0.0` (`llvm.minnum`/`maxnum` plus a sign-bit
//!   fix-up for equal operands; see `float_min_max`).
//! - Integer `abs`/`neg` wrap (`abs MIN == MIN`).

use inkwell::intrinsics::Intrinsic;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use nagi_abi::trap_text;
use nagi_low::{BinaryOp, Constant, Operand, ScalarType, Type, UnaryOp};

use crate::Error;
use crate::function::FnEmitter;
use crate::runtime_calls;

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// Calls the LLVM intrinsic `name` overloaded on `types`.
    fn intrinsic(
        &self,
        name: &str,
        types: &[BasicTypeEnum<'ctx>],
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let cx = self.cx;
        let f = Intrinsic::find(name)
            .and_then(|i| i.get_declaration(&cx.module, types))
            .ok_or_else(|| Error::internal(format!("LLVM has no intrinsic {name}")))?;
        let site = cx.builder.build_call(f, args, "")?;
        site.try_as_basic_value().basic().ok_or_else(|| Error::internal(format!("{name} returns nothing")))
    }

    pub(crate) fn unary(
        &mut self,
        op: UnaryOp,
        ty: ScalarType,
        v: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let b = &self.cx.builder;
        Ok(match (op, ty) {
            (UnaryOp::Neg, ScalarType::F64) => b.build_float_neg(v.into_float_value(), "neg")?.into(),
            (UnaryOp::Neg, _) => {
                let v = v.into_int_value();
                b.build_int_sub(v.get_type().const_zero(), v, "neg")?.into()
            }
            (UnaryOp::Not, _) => b.build_not(v.into_int_value(), "not")?.into(),
            (UnaryOp::Abs, ScalarType::F64) => self.intrinsic("llvm.fabs", &[v.get_type()], &[v.into()])?,
            (UnaryOp::Abs, _) => {
                // `is_int_min_poison = false`: `abs MIN` is `MIN`, wrapping.
                let no_poison = self.cx.context.bool_type().const_zero();
                self.intrinsic("llvm.abs", &[v.get_type()], &[v.into(), no_poison.into()])?
            }
        })
    }

    pub(crate) fn binary(
        &mut self,
        op: BinaryOp,
        ty: ScalarType,
        lhs: &Operand,
        rhs: &Operand,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let a = self.operand(lhs)?;
        let bv = self.operand(rhs)?;
        if ty == ScalarType::F64 {
            return self.float_binary(op, a.into_float_value(), bv.into_float_value());
        }
        let (a, c) = (a.into_int_value(), bv.into_int_value());
        let b = &self.cx.builder;
        let int = |p| b.build_int_compare(p, a, c, "cmp").map(Into::into);
        Ok(match op {
            BinaryOp::Add => b.build_int_add(a, c, "add")?.into(),
            BinaryOp::Sub => b.build_int_sub(a, c, "sub")?.into(),
            BinaryOp::Mul => b.build_int_mul(a, c, "mul")?.into(),
            BinaryOp::Div | BinaryOp::Rem => self.divide(op, a, c, rhs)?.into(),
            BinaryOp::And => b.build_and(a, c, "and")?.into(),
            BinaryOp::Or => b.build_or(a, c, "or")?.into(),
            BinaryOp::Xor => b.build_xor(a, c, "xor")?.into(),
            BinaryOp::Shl | BinaryOp::Shr => {
                let bits = u64::from(a.get_type().get_bit_width());
                let count = b.build_and(c, a.get_type().const_int(bits - 1, false), "count")?;
                if op == BinaryOp::Shl {
                    b.build_left_shift(a, count, "shl")?.into()
                } else {
                    b.build_right_shift(a, count, true, "shr")?.into()
                }
            }
            BinaryOp::Eq => int(IntPredicate::EQ)?,
            BinaryOp::Ne => int(IntPredicate::NE)?,
            BinaryOp::Lt => int(IntPredicate::SLT)?,
            BinaryOp::Le => int(IntPredicate::SLE)?,
            BinaryOp::Gt => int(IntPredicate::SGT)?,
            BinaryOp::Ge => int(IntPredicate::SGE)?,
            BinaryOp::Min | BinaryOp::Max => {
                let p = if op == BinaryOp::Min { IntPredicate::SLT } else { IntPredicate::SGT };
                let pick_a = b.build_int_compare(p, a, c, "pick")?;
                b.build_select(pick_a, a, c, "minmax")?
            }
            BinaryOp::CheckedAdd | BinaryOp::CheckedSub | BinaryOp::CheckedMul => self.checked(op, a, c)?,
        })
    }

    /// Integer `div`/`rem` with the zero trap and the `-1` rule.
    fn divide(
        &mut self,
        op: BinaryOp,
        a: IntValue<'ctx>,
        d: IntValue<'ctx>,
        rhs: &Operand,
    ) -> Result<IntValue<'ctx>, Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let div = op == BinaryOp::Div;
        let constant = match rhs {
            Operand::Const(Constant::I32(v)) => Some(i64::from(*v)),
            Operand::Const(Constant::I64(v)) => Some(*v),
            _ => None,
        };
        if let Some(k) = constant
            && k != 0
            && k != -1
        {
            return Ok(if div { b.build_int_signed_div(a, d, "div")? } else { b.build_int_signed_rem(a, d, "rem")? });
        }
        let t = a.get_type();
        let is_zero = b.build_int_compare(IntPredicate::EQ, d, t.const_zero(), "zero")?;
        let trap = self.block(if div { "div.zero" } else { "rem.zero" });
        let ok = self.block(if div { "div.ok" } else { "rem.ok" });
        b.build_conditional_branch(is_zero, trap, ok)?;
        b.position_at_end(trap);
        runtime_calls::trap(cx, if div { trap_text::DIVISION_BY_ZERO } else { trap_text::REMAINDER_BY_ZERO })?;
        b.position_at_end(ok);
        let minus_one = t.const_all_ones();
        let is_minus_one = b.build_int_compare(IntPredicate::EQ, d, minus_one, "minus1")?;
        let safe = b.build_select(is_minus_one, t.const_int(1, false), d, "divisor")?.into_int_value();
        if div {
            // x / -1 is -x, wrapping (MIN / -1 == MIN).
            let q = b.build_int_signed_div(a, safe, "q")?;
            let negated = b.build_int_sub(t.const_zero(), a, "neg")?;
            Ok(b.build_select(is_minus_one, negated, q, "div")?.into_int_value())
        } else {
            // x % 1 == 0 == x % -1, MIN included.
            Ok(b.build_int_signed_rem(a, safe, "rem")?)
        }
    }

    /// `checked_*`: `Option<T>` from `llvm.s*.with.overflow`; the payload of a none is zero.
    fn checked(&mut self, op: BinaryOp, a: IntValue<'ctx>, c: IntValue<'ctx>) -> Result<BasicValueEnum<'ctx>, Error> {
        let name = match op {
            BinaryOp::CheckedAdd => "llvm.sadd.with.overflow",
            BinaryOp::CheckedSub => "llvm.ssub.with.overflow",
            _ => "llvm.smul.with.overflow",
        };
        let pair = self.intrinsic(name, &[a.get_type().into()], &[a.into(), c.into()])?.into_struct_value();
        let b = &self.cx.builder;
        let value = b.build_extract_value(pair, 0, "value")?.into_int_value();
        let overflow = b.build_extract_value(pair, 1, "overflow")?.into_int_value();
        let some = b.build_not(overflow, "some")?;
        let payload = b.build_select(overflow, a.get_type().const_zero(), value, "payload")?;
        let option_ty = self.cx.layouts.llvm(&Type::Option(Box::new(scalar_type(a)))).into_struct_type();
        let with_tag = b.build_insert_value(option_ty.const_zero(), some, 0, "opt")?;
        let whole = b.build_insert_value(with_tag, payload, 1, "opt")?;
        Ok(whole.into_struct_value().into())
    }

    fn float_binary(
        &mut self,
        op: BinaryOp,
        a: FloatValue<'ctx>,
        c: FloatValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let b = &self.cx.builder;
        let cmp = |p| b.build_float_compare(p, a, c, "fcmp").map(Into::into);
        Ok(match op {
            BinaryOp::Add => b.build_float_add(a, c, "fadd")?.into(),
            BinaryOp::Sub => b.build_float_sub(a, c, "fsub")?.into(),
            BinaryOp::Mul => b.build_float_mul(a, c, "fmul")?.into(),
            BinaryOp::Div => b.build_float_div(a, c, "fdiv")?.into(),
            // `frem` is C's fmod, which is Rust's `%` on f64.
            BinaryOp::Rem => b.build_float_rem(a, c, "frem")?.into(),
            BinaryOp::Eq => cmp(FloatPredicate::OEQ)?,
            BinaryOp::Ne => cmp(FloatPredicate::UNE)?,
            BinaryOp::Lt => cmp(FloatPredicate::OLT)?,
            BinaryOp::Le => cmp(FloatPredicate::OLE)?,
            BinaryOp::Gt => cmp(FloatPredicate::OGT)?,
            BinaryOp::Ge => cmp(FloatPredicate::OGE)?,
            BinaryOp::Min | BinaryOp::Max => self.float_min_max(op == BinaryOp::Min, a, c)?.into(),
            _ => return Err(Error::internal(format!("{} is not defined on f64", op.name()))),
        })
    }

    /// `fmin`/`fmax` of the runtime: `llvm.minnum`/`llvm.maxnum` (a NaN operand gives the other
    /// one), with the equal case decided on the sign bits: when `a == b` the result is
    /// `bits(a) | bits(b)` for min and `bits(a) & bits(b)` for max, so `-0.0` orders below
    /// `+0.0` and equal non-zero values keep their bits.
    ///
    /// Not a chain of `fcmp`-driven selects: `fcmp` does not tell the zeros apart, and
    /// InstCombine at -O2 rewrites such a chain into `select (fcmp ogt x, -0.0), x, -0.0`, which
    /// is wrong for `x == +0.0`. Integer `and`/`or` on the bits cannot be
    /// "simplified" that way.
    fn float_min_max(
        &mut self,
        min: bool,
        a: FloatValue<'ctx>,
        c: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, Error> {
        let name = if min { "llvm.minnum" } else { "llvm.maxnum" };
        let picked = self.intrinsic(name, &[a.get_type().into()], &[a.into(), c.into()])?.into_float_value();
        let b = &self.cx.builder;
        let i64t = self.cx.context.i64_type();
        let a_bits = b.build_bit_cast(a, i64t, "a.bits")?.into_int_value();
        let c_bits = b.build_bit_cast(c, i64t, "b.bits")?.into_int_value();
        let tie_bits =
            if min { b.build_or(a_bits, c_bits, "tie.bits")? } else { b.build_and(a_bits, c_bits, "tie.bits")? };
        let tie = b.build_bit_cast(tie_bits, a.get_type(), "tie")?.into_float_value();
        let equal = b.build_float_compare(FloatPredicate::OEQ, a, c, "equal")?;
        Ok(b.build_select(equal, tie, picked, "minmax")?.into_float_value())
    }

    pub(crate) fn cast(
        &mut self,
        from: &Type,
        to: ScalarType,
        v: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let target = cx.layouts.llvm(&to.to_type());
        Ok(match (from, to) {
            (Type::F64, ScalarType::F64) => v,
            (Type::F64, ScalarType::I32 | ScalarType::I64) => {
                self.intrinsic("llvm.fptosi.sat", &[target, v.get_type()], &[v.into()])?
            }
            (Type::I32 | Type::I64, ScalarType::F64) => {
                b.build_signed_int_to_float(v.into_int_value(), cx.context.f64_type(), "itof")?.into()
            }
            (Type::I32, ScalarType::I32) | (Type::I64, ScalarType::I64) => v,
            (Type::I64, ScalarType::I32) => {
                b.build_int_truncate(v.into_int_value(), cx.context.i32_type(), "trunc")?.into()
            }
            (Type::I32, ScalarType::I64) => {
                b.build_int_s_extend(v.into_int_value(), cx.context.i64_type(), "sext")?.into()
            }
            (Type::Bool, ScalarType::I32 | ScalarType::I64) => {
                b.build_int_z_extend(v.into_int_value(), target.into_int_type(), "zext")?.into()
            }
            _ => return Err(Error::internal(format!("cast to {} from an unsupported type", to.name()))),
        })
    }
}

/// The Low integer type of an LLVM integer value.
fn scalar_type(v: IntValue<'_>) -> Type {
    if v.get_type().get_bit_width() == 32 { Type::I32 } else { Type::I64 }
}
