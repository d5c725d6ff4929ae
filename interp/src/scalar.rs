//! Arithmetic, bitwise operations, comparisons and casts on scalars (docs/design.md §2.1–2.5).
//!
//! Each rule is spelled as the Rust emitter spells it (`wrapping_*`, `wrapping_shl(count as
//! u32)`, `as` for casts, IEEE comparisons), so the two agree by construction; the rules the
//! runtime owns (trapping division and remainder, `min`/`max` of floats) go to the [`Host`].

use nagi_low::{BinaryOp, ScalarType, UnaryOp};

use crate::stack::fault;
use crate::value::Value;
use crate::{Host, Stop};

/// `op.ty x`.
pub(crate) fn unary(op: UnaryOp, ty: ScalarType, x: Value) -> Result<Value, Stop> {
    Ok(match (op, x) {
        (UnaryOp::Neg, Value::I32(v)) => Value::I32(v.wrapping_neg()),
        (UnaryOp::Neg, Value::I64(v)) => Value::I64(v.wrapping_neg()),
        (UnaryOp::Neg, Value::F64(v)) => Value::F64(-v),
        (UnaryOp::Not, Value::I32(v)) => Value::I32(!v),
        (UnaryOp::Not, Value::I64(v)) => Value::I64(!v),
        (UnaryOp::Not, Value::Bool(v)) => Value::Bool(!v),
        (UnaryOp::Abs, Value::I32(v)) => Value::I32(v.wrapping_abs()),
        (UnaryOp::Abs, Value::I64(v)) => Value::I64(v.wrapping_abs()),
        (UnaryOp::Abs, Value::F64(v)) => Value::F64(v.abs()),
        (op, x) => return Err(fault(format!("`{}.{}` of {}", op.name(), ty.name(), x.kind()))),
    })
}

/// `op.ty a, b`.
pub(crate) fn binary(host: &dyn Host, op: BinaryOp, ty: ScalarType, a: Value, b: Value) -> Result<Value, Stop> {
    let trap = |message: String| Stop::Trap(message);
    match (a, b) {
        (Value::I32(a), Value::I32(b)) => match op {
            BinaryOp::Div => host.div_i32(a, b).map(Value::I32).map_err(trap),
            BinaryOp::Rem => host.rem_i32(a, b).map(Value::I32).map_err(trap),
            _ => int32(op, a, b),
        },
        (Value::I64(a), Value::I64(b)) => match op {
            BinaryOp::Div => host.div_i64(a, b).map(Value::I64).map_err(trap),
            BinaryOp::Rem => host.rem_i64(a, b).map(Value::I64).map_err(trap),
            _ => int64(op, a, b),
        },
        (Value::F64(a), Value::F64(b)) => float(host, op, a, b),
        (Value::Bool(a), Value::Bool(b)) => boolean(op, a, b),
        (a, b) => Err(fault(format!("`{}.{}` of {} and {}", op.name(), ty.name(), a.kind(), b.kind()))),
    }
}

/// Integer operations other than division and remainder, for one integer type; the shift count
/// is masked to the bit width by `wrapping_shl`/`wrapping_shr` (`as u32` keeps its low bits, so
/// a negative count works as on the other paths).
macro_rules! int_binary {
    ($name:ident, $t:ty, $variant:ident) => {
        fn $name(op: BinaryOp, a: $t, b: $t) -> Result<Value, Stop> {
            let checked = |r: Option<$t>| Value::Option(r.map(|v| Box::new(Value::$variant(v))));
            Ok(match op {
                BinaryOp::Add => Value::$variant(a.wrapping_add(b)),
                BinaryOp::Sub => Value::$variant(a.wrapping_sub(b)),
                BinaryOp::Mul => Value::$variant(a.wrapping_mul(b)),
                BinaryOp::And => Value::$variant(a & b),
                BinaryOp::Or => Value::$variant(a | b),
                BinaryOp::Xor => Value::$variant(a ^ b),
                BinaryOp::Shl => Value::$variant(a.wrapping_shl(b as u32)),
                BinaryOp::Shr => Value::$variant(a.wrapping_shr(b as u32)),
                BinaryOp::Eq => Value::Bool(a == b),
                BinaryOp::Ne => Value::Bool(a != b),
                BinaryOp::Lt => Value::Bool(a < b),
                BinaryOp::Le => Value::Bool(a <= b),
                BinaryOp::Gt => Value::Bool(a > b),
                BinaryOp::Ge => Value::Bool(a >= b),
                BinaryOp::Min => Value::$variant(a.min(b)),
                BinaryOp::Max => Value::$variant(a.max(b)),
                BinaryOp::CheckedAdd => checked(a.checked_add(b)),
                BinaryOp::CheckedSub => checked(a.checked_sub(b)),
                BinaryOp::CheckedMul => checked(a.checked_mul(b)),
                BinaryOp::Div | BinaryOp::Rem => {
                    return Err(fault("integer division reached the general integer operations"));
                }
            })
        }
    };
}

int_binary!(int32, i32, I32);
int_binary!(int64, i64, I64);

/// `f64` operations: IEEE arithmetic, `%` as Rust's (C's `fmod`), comparisons false on NaN
/// except `ne`, and the runtime's `fmin`/`fmax`.
fn float(host: &dyn Host, op: BinaryOp, a: f64, b: f64) -> Result<Value, Stop> {
    Ok(match op {
        BinaryOp::Add => Value::F64(a + b),
        BinaryOp::Sub => Value::F64(a - b),
        BinaryOp::Mul => Value::F64(a * b),
        BinaryOp::Div => Value::F64(a / b),
        BinaryOp::Rem => Value::F64(a % b),
        BinaryOp::Eq => Value::Bool(a == b),
        BinaryOp::Ne => Value::Bool(a != b),
        BinaryOp::Lt => Value::Bool(a < b),
        BinaryOp::Le => Value::Bool(a <= b),
        BinaryOp::Gt => Value::Bool(a > b),
        BinaryOp::Ge => Value::Bool(a >= b),
        BinaryOp::Min => Value::F64(host.fmin(a, b)),
        BinaryOp::Max => Value::F64(host.fmax(a, b)),
        other => return Err(fault(format!("`{}.f64`", other.name()))),
    })
}

/// `bool` operations: logical, both operands already evaluated.
fn boolean(op: BinaryOp, a: bool, b: bool) -> Result<Value, Stop> {
    Ok(Value::Bool(match op {
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor | BinaryOp::Ne => a ^ b,
        BinaryOp::Eq => a == b,
        other => return Err(fault(format!("`{}.bool`", other.name()))),
    }))
}

/// `cast.to x`: Rust's `as`, which saturates float → integer (NaN → 0), truncates or
/// sign-extends integers and rounds integer → float to nearest.
pub(crate) fn cast(to: ScalarType, x: Value) -> Result<Value, Stop> {
    Ok(match (to, x) {
        (ScalarType::I32, Value::I32(v)) => Value::I32(v),
        (ScalarType::I32, Value::I64(v)) => Value::I32(v as i32),
        (ScalarType::I32, Value::F64(v)) => Value::I32(v as i32),
        (ScalarType::I64, Value::I32(v)) => Value::I64(i64::from(v)),
        (ScalarType::I64, Value::I64(v)) => Value::I64(v),
        (ScalarType::I64, Value::F64(v)) => Value::I64(v as i64),
        (ScalarType::F64, Value::I32(v)) => Value::F64(f64::from(v)),
        (ScalarType::F64, Value::I64(v)) => Value::F64(v as f64),
        (ScalarType::F64, Value::F64(v)) => Value::F64(v),
        (to, x) => return Err(fault(format!("`cast.{}` of {}", to.name(), x.kind()))),
    })
}
