//! The arithmetic of docs/design.md §2 on constants, for constant folding: what `op.T a, b` computes
//! when both operands are known.
//!
//! Integers wrap; `MIN / -1 == MIN` and `MIN % -1 == 0`; shift counts are masked to the bit
//! width; division and remainder by zero trap, so they are never folded (the caller keeps the
//! operation, which still traps at run time). Floats are IEEE 754 binary64: `min`/`max` return
//! the other operand when one is NaN and order `-0.0` below `+0.0`, exactly as the runtime's
//! `fmin`/`fmax`; float → integer casts saturate with NaN → 0. A NaN result is folded to the
//! one NaN Low can spell (`NaN_f64`): no Low operation can tell NaNs apart, and the printed
//! constant must read back to the same bits.

use nagi_low::{BinaryOp, Constant, ScalarType, UnaryOp};

/// What folding a binary operation gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Folded {
    /// A plain constant.
    Value(Constant),
    /// The result of a `checked_*` operation: `option.some` of the value, or `option.none`.
    Checked(Option<Constant>),
}

/// The canonical NaN for any NaN result.
fn f(v: f64) -> Constant {
    Constant::F64(if v.is_nan() { f64::NAN } else { v })
}

/// `op.ty a`, or `None` when the operand does not have type `ty`.
pub fn unary(op: UnaryOp, ty: ScalarType, a: Constant) -> Option<Constant> {
    Some(match (op, ty, a) {
        (UnaryOp::Neg, ScalarType::I32, Constant::I32(x)) => Constant::I32(x.wrapping_neg()),
        (UnaryOp::Neg, ScalarType::I64, Constant::I64(x)) => Constant::I64(x.wrapping_neg()),
        (UnaryOp::Neg, ScalarType::F64, Constant::F64(x)) => f(-x),
        (UnaryOp::Not, ScalarType::I32, Constant::I32(x)) => Constant::I32(!x),
        (UnaryOp::Not, ScalarType::I64, Constant::I64(x)) => Constant::I64(!x),
        (UnaryOp::Not, ScalarType::Bool, Constant::Bool(x)) => Constant::Bool(!x),
        (UnaryOp::Abs, ScalarType::I32, Constant::I32(x)) => Constant::I32(x.wrapping_abs()),
        (UnaryOp::Abs, ScalarType::I64, Constant::I64(x)) => Constant::I64(x.wrapping_abs()),
        (UnaryOp::Abs, ScalarType::F64, Constant::F64(x)) => f(x.abs()),
        _ => return None,
    })
}

/// `op.ty a, b`, or `None` when it must not be folded: the operands do not have type `ty`,
/// the operation is not defined at `ty`, or it traps (an integer division or remainder by
/// zero).
pub fn binary(op: BinaryOp, ty: ScalarType, a: Constant, b: Constant) -> Option<Folded> {
    match (ty, a, b) {
        (ScalarType::I32, Constant::I32(x), Constant::I32(y)) => int(op, x, y, Constant::I32),
        (ScalarType::I64, Constant::I64(x), Constant::I64(y)) => int(op, x, y, Constant::I64),
        (ScalarType::F64, Constant::F64(x), Constant::F64(y)) => float(op, x, y).map(Folded::Value),
        (ScalarType::Bool, Constant::Bool(x), Constant::Bool(y)) => boolean(op, x, y).map(Folded::Value),
        _ => None,
    }
}

/// The integer operations, shared by `i32` and `i64` through this trait.
trait Int: Copy + Ord + Eq {
    fn wrapping_add(self, o: Self) -> Self;
    fn wrapping_sub(self, o: Self) -> Self;
    fn wrapping_mul(self, o: Self) -> Self;
    fn wrapping_div(self, o: Self) -> Self;
    fn wrapping_rem(self, o: Self) -> Self;
    fn checked_add(self, o: Self) -> Option<Self>;
    fn checked_sub(self, o: Self) -> Option<Self>;
    fn checked_mul(self, o: Self) -> Option<Self>;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    /// Shifts by `count` masked to the bit width.
    fn shl(self, count: Self) -> Self;
    fn shr(self, count: Self) -> Self;
    fn is_zero(self) -> bool;
}

macro_rules! impl_int {
    ($t:ty) => {
        impl Int for $t {
            fn wrapping_add(self, o: Self) -> Self {
                <$t>::wrapping_add(self, o)
            }
            fn wrapping_sub(self, o: Self) -> Self {
                <$t>::wrapping_sub(self, o)
            }
            fn wrapping_mul(self, o: Self) -> Self {
                <$t>::wrapping_mul(self, o)
            }
            fn wrapping_div(self, o: Self) -> Self {
                <$t>::wrapping_div(self, o)
            }
            fn wrapping_rem(self, o: Self) -> Self {
                <$t>::wrapping_rem(self, o)
            }
            fn checked_add(self, o: Self) -> Option<Self> {
                <$t>::checked_add(self, o)
            }
            fn checked_sub(self, o: Self) -> Option<Self> {
                <$t>::checked_sub(self, o)
            }
            fn checked_mul(self, o: Self) -> Option<Self> {
                <$t>::checked_mul(self, o)
            }
            fn and(self, o: Self) -> Self {
                self & o
            }
            fn or(self, o: Self) -> Self {
                self | o
            }
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
            // `wrapping_shl` masks the count to the bit width; `as u32` keeps the low bits of
            // a negative count, so this is docs/design.md §2.3's masked shift for every count, exactly
            // as the Rust emitter writes it.
            fn shl(self, count: Self) -> Self {
                <$t>::wrapping_shl(self, count as u32)
            }
            fn shr(self, count: Self) -> Self {
                <$t>::wrapping_shr(self, count as u32)
            }
            fn is_zero(self) -> bool {
                self == 0
            }
        }
    };
}

impl_int!(i32);
impl_int!(i64);

fn int<T: Int>(op: BinaryOp, x: T, y: T, c: fn(T) -> Constant) -> Option<Folded> {
    let v = |t: T| Some(Folded::Value(c(t)));
    let b = |t: bool| Some(Folded::Value(Constant::Bool(t)));
    match op {
        BinaryOp::Add => v(x.wrapping_add(y)),
        BinaryOp::Sub => v(x.wrapping_sub(y)),
        BinaryOp::Mul => v(x.wrapping_mul(y)),
        // Division by zero traps at run time; the operation stays so that it still does.
        BinaryOp::Div | BinaryOp::Rem if y.is_zero() => None,
        // `wrapping_div` gives `MIN / -1 == MIN` and `wrapping_rem` gives `MIN % -1 == 0`.
        BinaryOp::Div => v(x.wrapping_div(y)),
        BinaryOp::Rem => v(x.wrapping_rem(y)),
        BinaryOp::And => v(x.and(y)),
        BinaryOp::Or => v(x.or(y)),
        BinaryOp::Xor => v(x.xor(y)),
        BinaryOp::Shl => v(x.shl(y)),
        BinaryOp::Shr => v(x.shr(y)),
        BinaryOp::Eq => b(x == y),
        BinaryOp::Ne => b(x != y),
        BinaryOp::Lt => b(x < y),
        BinaryOp::Le => b(x <= y),
        BinaryOp::Gt => b(x > y),
        BinaryOp::Ge => b(x >= y),
        BinaryOp::Min => v(x.min(y)),
        BinaryOp::Max => v(x.max(y)),
        BinaryOp::CheckedAdd => Some(Folded::Checked(x.checked_add(y).map(c))),
        BinaryOp::CheckedSub => Some(Folded::Checked(x.checked_sub(y).map(c))),
        BinaryOp::CheckedMul => Some(Folded::Checked(x.checked_mul(y).map(c))),
    }
}

fn float(op: BinaryOp, x: f64, y: f64) -> Option<Constant> {
    let b = |t: bool| Some(Constant::Bool(t));
    Some(match op {
        BinaryOp::Add => f(x + y),
        BinaryOp::Sub => f(x - y),
        BinaryOp::Mul => f(x * y),
        BinaryOp::Div => f(x / y),
        BinaryOp::Rem => f(x % y),
        // IEEE comparisons: false when either side is NaN, except `ne`.
        BinaryOp::Eq => return b(x == y),
        BinaryOp::Ne => return b(x != y),
        BinaryOp::Lt => return b(x < y),
        BinaryOp::Le => return b(x <= y),
        BinaryOp::Gt => return b(x > y),
        BinaryOp::Ge => return b(x >= y),
        BinaryOp::Min => f(fmin(x, y)),
        BinaryOp::Max => f(fmax(x, y)),
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

/// The `min` of docs/design.md §2.4: a NaN operand yields the other operand, and `-0.0` is below `+0.0`.
pub fn fmin(a: f64, b: f64) -> f64 {
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

/// The `max` of docs/design.md §2.4: a NaN operand yields the other operand, and `+0.0` is above `-0.0`.
pub fn fmax(a: f64, b: f64) -> f64 {
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

fn boolean(op: BinaryOp, x: bool, y: bool) -> Option<Constant> {
    Some(Constant::Bool(match op {
        BinaryOp::And => x & y,
        BinaryOp::Or => x | y,
        BinaryOp::Xor => x ^ y,
        BinaryOp::Eq => x == y,
        BinaryOp::Ne => x != y,
        _ => return None,
    }))
}

/// `cast.to a`: integer → integer truncates or sign-extends, integer → `f64` rounds to
/// nearest, `f64` → integer saturates with NaN → 0 (Rust's `as`, which the Rust emitter
/// writes). `None` for casts Low does not define.
pub fn cast(to: ScalarType, a: Constant) -> Option<Constant> {
    Some(match (to, a) {
        (ScalarType::I32, Constant::I32(x)) => Constant::I32(x),
        (ScalarType::I32, Constant::I64(x)) => Constant::I32(x as i32),
        (ScalarType::I32, Constant::F64(x)) => Constant::I32(x as i32),
        (ScalarType::I64, Constant::I32(x)) => Constant::I64(x as i64),
        (ScalarType::I64, Constant::I64(x)) => Constant::I64(x),
        (ScalarType::I64, Constant::F64(x)) => Constant::I64(x as i64),
        (ScalarType::F64, Constant::I32(x)) => f(x as f64),
        (ScalarType::F64, Constant::I64(x)) => f(x as f64),
        (ScalarType::F64, Constant::F64(x)) => f(x),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i64c(v: i64) -> Constant {
        Constant::I64(v)
    }

    #[test]
    fn integer_semantics_follow_design() {
        let fold = |op, a, b| binary(op, ScalarType::I64, i64c(a), i64c(b));
        assert_eq!(fold(BinaryOp::Add, i64::MAX, 1), Some(Folded::Value(i64c(i64::MIN))));
        assert_eq!(fold(BinaryOp::Div, i64::MIN, -1), Some(Folded::Value(i64c(i64::MIN))));
        assert_eq!(fold(BinaryOp::Rem, i64::MIN, -1), Some(Folded::Value(i64c(0))));
        assert_eq!(fold(BinaryOp::Div, 7, 0), None);
        assert_eq!(fold(BinaryOp::Rem, 7, 0), None);
        assert_eq!(fold(BinaryOp::Shl, 1, 64), Some(Folded::Value(i64c(1))));
        assert_eq!(fold(BinaryOp::Shl, 1, 65), Some(Folded::Value(i64c(2))));
        assert_eq!(fold(BinaryOp::Shr, -8, 1), Some(Folded::Value(i64c(-4))));
        assert_eq!(fold(BinaryOp::Shl, 1, -1), Some(Folded::Value(i64c(i64::MIN))));
        assert_eq!(fold(BinaryOp::CheckedAdd, i64::MAX, 1), Some(Folded::Checked(None)));
        assert_eq!(fold(BinaryOp::CheckedMul, 3, 4), Some(Folded::Checked(Some(i64c(12)))));
        assert_eq!(unary(UnaryOp::Neg, ScalarType::I64, i64c(i64::MIN)), Some(i64c(i64::MIN)));
        assert_eq!(unary(UnaryOp::Abs, ScalarType::I32, Constant::I32(i32::MIN)), Some(Constant::I32(i32::MIN)));
        let shl32 = binary(BinaryOp::Shl, ScalarType::I32, Constant::I32(1), Constant::I32(33));
        assert_eq!(shl32, Some(Folded::Value(Constant::I32(2))));
    }

    #[test]
    fn float_semantics_follow_design() {
        let fold = |op, a, b| binary(op, ScalarType::F64, Constant::F64(a), Constant::F64(b));
        assert_eq!(fold(BinaryOp::Min, 0.0, -0.0), Some(Folded::Value(Constant::F64(-0.0))));
        assert_eq!(fold(BinaryOp::Min, -0.0, 0.0), Some(Folded::Value(Constant::F64(-0.0))));
        assert_eq!(fold(BinaryOp::Max, -0.0, 0.0), Some(Folded::Value(Constant::F64(0.0))));
        assert_eq!(fold(BinaryOp::Min, f64::NAN, 2.0), Some(Folded::Value(Constant::F64(2.0))));
        assert_eq!(fold(BinaryOp::Max, 1.0, f64::NAN), Some(Folded::Value(Constant::F64(1.0))));
        assert_eq!(fold(BinaryOp::Eq, f64::NAN, f64::NAN), Some(Folded::Value(Constant::Bool(false))));
        assert_eq!(fold(BinaryOp::Ne, f64::NAN, 1.0), Some(Folded::Value(Constant::Bool(true))));
        assert_eq!(fold(BinaryOp::Div, 1.0, 0.0), Some(Folded::Value(Constant::F64(f64::INFINITY))));
        assert_eq!(fold(BinaryOp::Rem, -7.5, 2.0), Some(Folded::Value(Constant::F64(-1.5))));
        assert_eq!(fold(BinaryOp::Add, 0.1, 0.2), Some(Folded::Value(Constant::F64(0.30000000000000004))));
        let nan = fold(BinaryOp::Sub, f64::INFINITY, f64::INFINITY);
        assert_eq!(nan, Some(Folded::Value(Constant::F64(f64::NAN))));
    }

    #[test]
    fn casts_saturate() {
        assert_eq!(cast(ScalarType::I32, Constant::F64(f64::NAN)), Some(Constant::I32(0)));
        assert_eq!(cast(ScalarType::I32, Constant::F64(1e20)), Some(Constant::I32(i32::MAX)));
        assert_eq!(cast(ScalarType::I64, Constant::F64(-1e300)), Some(Constant::I64(i64::MIN)));
        assert_eq!(cast(ScalarType::I32, Constant::I64(0x1_0000_0005)), Some(Constant::I32(5)));
        assert_eq!(cast(ScalarType::I64, Constant::I32(-3)), Some(Constant::I64(-3)));
        assert_eq!(cast(ScalarType::F64, Constant::I64(i64::MAX)), Some(Constant::F64(9.223372036854776e18)));
        assert_eq!(cast(ScalarType::F64, Constant::Bool(true)), None);
    }
}
