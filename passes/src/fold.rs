//! Constant folding's view of Low's scalar semantics: what `op.T a, b` computes when both
//! operands are known, by [`nagi_low::eval`], the one definition the interpreter runs with too.
//!
//! What this adds is what folding alone needs. An operation whose operands do not have its type
//! is not folded. A trapping operation (integer division or remainder by zero) is not folded:
//! the caller keeps the operation, which still traps at run time. A NaN result is folded to the
//! one NaN Low can spell (`NaN_f64`): no Low operation can tell NaNs apart, and the printed
//! constant must read back to the same bits.

use nagi_low::eval;
use nagi_low::{BinaryOp, Constant, ScalarType, UnaryOp};

/// What folding a binary operation gives: a plain constant, or the result of a `checked_*`
/// operation (`option.some` of the value, or `option.none`).
pub use nagi_low::eval::Outcome as Folded;

/// The constant a result folds to: the canonical NaN for any NaN.
fn canonical(c: Constant) -> Constant {
    match c {
        Constant::F64(v) if v.is_nan() => Constant::F64(f64::NAN),
        other => other,
    }
}

/// Whether `c` has type `ty`, the operation's suffix.
fn typed(ty: ScalarType, c: Constant) -> bool {
    c.ty() == ty.to_type()
}

/// `op.ty a`, or `None` when the operand does not have type `ty` or `op` is not defined at it.
pub fn unary(op: UnaryOp, ty: ScalarType, a: Constant) -> Option<Constant> {
    if !typed(ty, a) {
        return None;
    }
    eval::unary(op, a).map(canonical)
}

/// `op.ty a, b`, or `None` when it must not be folded: the operands do not have type `ty`,
/// the operation is not defined at `ty`, or it traps (an integer division or remainder by
/// zero).
pub fn binary(op: BinaryOp, ty: ScalarType, a: Constant, b: Constant) -> Option<Folded> {
    if !typed(ty, a) || !typed(ty, b) {
        return None;
    }
    match eval::binary(op, a, b).ok()? {
        Folded::Value(c) => Some(Folded::Value(canonical(c))),
        // `checked_*` is defined on integers only, so there is no NaN to canonicalize.
        checked @ Folded::Checked(_) => Some(checked),
    }
}

/// `cast.to a`, by [`eval::cast`]. `None` for casts Low does not define.
pub fn cast(to: ScalarType, a: Constant) -> Option<Constant> {
    eval::cast(to, a).map(canonical)
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
