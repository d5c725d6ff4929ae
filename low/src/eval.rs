//! The one definition of Low's scalar semantics: the folder and the interpreter share it, and the
//! runtime and both emitters must agree with it.
//!
//! What `op.T x`, `op.T a, b` and `cast.T x` compute on known scalar values ([`unary`],
//! [`binary`], [`cast`]), by docs/low.md §6.2–6.4 and docs/design.md §2: integers wrap,
//! `MIN / -1 == MIN` and `MIN % -1 == 0`, shift counts are masked to the bit width, integer
//! division and remainder by zero trap; floats are IEEE 754 binary64, `%` is Rust's (C's `fmod`),
//! comparisons are false on NaN except `ne`, and `min`/`max` return the other operand when one
//! is NaN and order `-0.0` below `+0.0`; float → integer casts saturate with NaN → 0.
//!
//! `nagi-passes` folds with it (`passes/src/fold.rs`) and `nagi-interp` runs with it
//! (`interp/src/scalar.rs`), so the two cannot disagree. The executors that do not run this
//! code spell the same rules for themselves: the Rust emitter (with `nagi_runtime::ops`) and
//! the LLVM emitter (`emit-llvm/src/ops.rs`). `nagi-interp-host`'s tests pin this file to the
//! runtime's `fmin`/`fmax` and trapping division, and the runnable goldens run every program on
//! all three.
//!
//! Values are [`Constant`]s, and nothing here canonicalizes a NaN result: the interpreter keeps
//! the NaN the hardware gives, and the folder picks the one NaN Low can spell.

use crate::ops::{BinaryOp, UnaryOp};
use crate::types::{Constant, ScalarType};

/// What a binary operation gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// A plain scalar.
    Value(Constant),
    /// The result of a `checked_*` operation: `option.some` of the value, or `option.none` on
    /// overflow.
    Checked(Option<Constant>),
}

/// Why a binary operation gives no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The operation is not defined on these operands (not both of one scalar type, or the
    /// operation has no meaning at that type). Verified Low never asks.
    Undefined,
    /// The operation traps at run time. The caller words the trap: the runtime owns the
    /// message.
    Trap(Trap),
}

/// A trap a scalar operation raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trap {
    /// Integer `div` by zero (the runtime's `division by zero`).
    DivisionByZero,
    /// Integer `rem` by zero (the runtime's `remainder by zero`).
    RemainderByZero,
}

/// `op.T x`, where `T` is the type of `x`; `None` when `op` is not defined at that type.
pub fn unary(op: UnaryOp, x: Constant) -> Option<Constant> {
    Some(match (op, x) {
        (UnaryOp::Neg, Constant::I32(v)) => Constant::I32(v.wrapping_neg()),
        (UnaryOp::Neg, Constant::I64(v)) => Constant::I64(v.wrapping_neg()),
        (UnaryOp::Neg, Constant::F64(v)) => Constant::F64(-v),
        (UnaryOp::Not, Constant::I32(v)) => Constant::I32(!v),
        (UnaryOp::Not, Constant::I64(v)) => Constant::I64(!v),
        (UnaryOp::Not, Constant::Bool(v)) => Constant::Bool(!v),
        (UnaryOp::Abs, Constant::I32(v)) => Constant::I32(v.wrapping_abs()),
        (UnaryOp::Abs, Constant::I64(v)) => Constant::I64(v.wrapping_abs()),
        (UnaryOp::Abs, Constant::F64(v)) => Constant::F64(v.abs()),
        _ => return None,
    })
}

/// `op.T a, b`, where `T` is the type of both operands.
pub fn binary(op: BinaryOp, a: Constant, b: Constant) -> Result<Outcome, Refusal> {
    match (a, b) {
        (Constant::I32(a), Constant::I32(b)) => int32(op, a, b),
        (Constant::I64(a), Constant::I64(b)) => int64(op, a, b),
        (Constant::F64(a), Constant::F64(b)) => float(op, a, b).map(Outcome::Value).ok_or(Refusal::Undefined),
        (Constant::Bool(a), Constant::Bool(b)) => boolean(op, a, b).map(Outcome::Value).ok_or(Refusal::Undefined),
        _ => Err(Refusal::Undefined),
    }
}

/// The integer operations for one integer type. The shift count is masked to the bit width by
/// `wrapping_shl`/`wrapping_shr`, and `as u32` keeps the low bits of a negative count, so this
/// is docs/design.md §2.3's masked shift for every count, exactly as the Rust emitter writes it.
macro_rules! int_binary {
    ($name:ident, $t:ty, $variant:ident) => {
        fn $name(op: BinaryOp, a: $t, b: $t) -> Result<Outcome, Refusal> {
            let int = |v: $t| Ok(Outcome::Value(Constant::$variant(v)));
            let truth = |v: bool| Ok(Outcome::Value(Constant::Bool(v)));
            let checked = |v: Option<$t>| Ok(Outcome::Checked(v.map(Constant::$variant)));
            match op {
                BinaryOp::Add => int(a.wrapping_add(b)),
                BinaryOp::Sub => int(a.wrapping_sub(b)),
                BinaryOp::Mul => int(a.wrapping_mul(b)),
                BinaryOp::Div if b == 0 => Err(Refusal::Trap(Trap::DivisionByZero)),
                BinaryOp::Rem if b == 0 => Err(Refusal::Trap(Trap::RemainderByZero)),
                // `wrapping_div` gives `MIN / -1 == MIN` and `wrapping_rem` gives `MIN % -1 == 0`.
                BinaryOp::Div => int(a.wrapping_div(b)),
                BinaryOp::Rem => int(a.wrapping_rem(b)),
                BinaryOp::And => int(a & b),
                BinaryOp::Or => int(a | b),
                BinaryOp::Xor => int(a ^ b),
                BinaryOp::Shl => int(a.wrapping_shl(b as u32)),
                BinaryOp::Shr => int(a.wrapping_shr(b as u32)),
                BinaryOp::Eq => truth(a == b),
                BinaryOp::Ne => truth(a != b),
                BinaryOp::Lt => truth(a < b),
                BinaryOp::Le => truth(a <= b),
                BinaryOp::Gt => truth(a > b),
                BinaryOp::Ge => truth(a >= b),
                BinaryOp::Min => int(a.min(b)),
                BinaryOp::Max => int(a.max(b)),
                BinaryOp::CheckedAdd => checked(a.checked_add(b)),
                BinaryOp::CheckedSub => checked(a.checked_sub(b)),
                BinaryOp::CheckedMul => checked(a.checked_mul(b)),
            }
        }
    };
}

int_binary!(int32, i32, I32);
int_binary!(int64, i64, I64);

/// The `f64` operations: IEEE arithmetic and comparisons, and [`fmin`]/[`fmax`].
fn float(op: BinaryOp, a: f64, b: f64) -> Option<Constant> {
    Some(match op {
        BinaryOp::Add => Constant::F64(a + b),
        BinaryOp::Sub => Constant::F64(a - b),
        BinaryOp::Mul => Constant::F64(a * b),
        BinaryOp::Div => Constant::F64(a / b),
        BinaryOp::Rem => Constant::F64(a % b),
        // IEEE comparisons: false when either side is NaN, except `ne`.
        BinaryOp::Eq => Constant::Bool(a == b),
        BinaryOp::Ne => Constant::Bool(a != b),
        BinaryOp::Lt => Constant::Bool(a < b),
        BinaryOp::Le => Constant::Bool(a <= b),
        BinaryOp::Gt => Constant::Bool(a > b),
        BinaryOp::Ge => Constant::Bool(a >= b),
        BinaryOp::Min => Constant::F64(fmin(a, b)),
        BinaryOp::Max => Constant::F64(fmax(a, b)),
        BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::Shl
        | BinaryOp::Shr
        | BinaryOp::CheckedAdd
        | BinaryOp::CheckedSub
        | BinaryOp::CheckedMul => return None,
    })
}

/// `min.f64`: a NaN operand yields the other operand, and `-0.0` is below `+0.0`. Rust's
/// `f64::min` leaves the sign of a zero result open, so the equal case is decided on the sign.
fn fmin(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        a
    } else {
        b
    }
}

/// `max.f64`: a NaN operand yields the other operand, and `+0.0` is above `-0.0`.
fn fmax(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a > b {
        a
    } else if b > a {
        b
    } else if a.is_sign_positive() {
        a
    } else {
        b
    }
}

/// The `bool` operations: logical, both operands already evaluated.
fn boolean(op: BinaryOp, a: bool, b: bool) -> Option<Constant> {
    Some(Constant::Bool(match op {
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor | BinaryOp::Ne => a ^ b,
        BinaryOp::Eq => a == b,
        _ => return None,
    }))
}

/// `cast.to x`: Rust's `as`, which the Rust emitter writes: integer → integer truncates or
/// sign-extends, integer → `f64` rounds to nearest, `f64` → integer saturates with NaN → 0.
/// `None` for casts Low does not define.
pub fn cast(to: ScalarType, x: Constant) -> Option<Constant> {
    Some(match (to, x) {
        (ScalarType::I32, Constant::I32(v)) => Constant::I32(v),
        (ScalarType::I32, Constant::I64(v)) => Constant::I32(v as i32),
        (ScalarType::I32, Constant::F64(v)) => Constant::I32(v as i32),
        (ScalarType::I64, Constant::I32(v)) => Constant::I64(i64::from(v)),
        (ScalarType::I64, Constant::I64(v)) => Constant::I64(v),
        (ScalarType::I64, Constant::F64(v)) => Constant::I64(v as i64),
        (ScalarType::F64, Constant::I32(v)) => Constant::F64(f64::from(v)),
        (ScalarType::F64, Constant::I64(v)) => Constant::F64(v as f64),
        (ScalarType::F64, Constant::F64(v)) => Constant::F64(v),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(c: Constant) -> Result<Outcome, Refusal> {
        Ok(Outcome::Value(c))
    }

    #[test]
    fn integer_division_by_zero_traps_and_min_by_minus_one_wraps() {
        let i32c = Constant::I32;
        assert_eq!(binary(BinaryOp::Div, i32c(7), i32c(0)), Err(Refusal::Trap(Trap::DivisionByZero)));
        assert_eq!(binary(BinaryOp::Rem, i32c(7), i32c(0)), Err(Refusal::Trap(Trap::RemainderByZero)));
        assert_eq!(binary(BinaryOp::Div, i32c(i32::MIN), i32c(-1)), value(i32c(i32::MIN)));
        assert_eq!(binary(BinaryOp::Rem, i32c(i32::MIN), i32c(-1)), value(i32c(0)));
        assert_eq!(binary(BinaryOp::Rem, i32c(-9), i32c(4)), value(i32c(-1)));
        // Float division by zero is IEEE, not a trap.
        let inf = binary(BinaryOp::Div, Constant::F64(1.0), Constant::F64(0.0));
        assert_eq!(inf, value(Constant::F64(f64::INFINITY)));
    }

    #[test]
    fn operations_undefined_at_a_type_are_refused() {
        let f = Constant::F64(1.0);
        assert_eq!(binary(BinaryOp::Shl, f, f), Err(Refusal::Undefined));
        assert_eq!(binary(BinaryOp::Lt, Constant::Bool(true), Constant::Bool(false)), Err(Refusal::Undefined));
        assert_eq!(binary(BinaryOp::Add, Constant::I32(1), Constant::I64(1)), Err(Refusal::Undefined));
        assert_eq!(unary(UnaryOp::Neg, Constant::Bool(true)), None);
        assert_eq!(unary(UnaryOp::Not, Constant::Unit), None);
        assert_eq!(cast(ScalarType::Bool, Constant::I32(1)), None);
    }

    #[test]
    fn a_nan_result_is_left_as_the_hardware_gives_it() {
        let nan = binary(BinaryOp::Sub, Constant::F64(f64::INFINITY), Constant::F64(f64::INFINITY));
        assert!(matches!(nan, Ok(Outcome::Value(Constant::F64(v))) if v.is_nan()));
        assert_eq!(unary(UnaryOp::Neg, Constant::F64(0.0)), Some(Constant::F64(-0.0)));
    }
}
