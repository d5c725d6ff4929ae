//! Arithmetic, bitwise operations, comparisons and casts on scalars: the interpreter's adapter
//! over [`nagi_low::eval`], the one definition of Low's scalar semantics, which the constant
//! folder uses too.
//!
//! What this adds is the interpreter's side of it: values to and from [`Value`]s, a trap worded
//! by the [`Host`] (the runtime's own message), and a fault naming the operands when Low that did
//! not verify asks for an operation that is not defined on them.

use nagi_low::eval::{self, Outcome, Refusal};
use nagi_low::{BinaryOp, Constant, ScalarType, UnaryOp};

use crate::stack::fault;
use crate::value::Value;
use crate::{Host, Stop};

/// The scalar a value holds, if it is one.
fn scalar(v: &Value) -> Option<Constant> {
    match *v {
        Value::I32(v) => Some(Constant::I32(v)),
        Value::I64(v) => Some(Constant::I64(v)),
        Value::F64(v) => Some(Constant::F64(v)),
        Value::Bool(v) => Some(Constant::Bool(v)),
        _ => None,
    }
}

/// `op.ty x`.
pub(crate) fn unary(op: UnaryOp, ty: ScalarType, x: Value) -> Result<Value, Stop> {
    match scalar(&x).and_then(|c| eval::unary(op, c)) {
        Some(c) => Ok(Value::constant(&c)),
        None => Err(fault(format!("`{}.{}` of {}", op.name(), ty.name(), x.kind()))),
    }
}

/// `op.ty a, b`; a trap is worded by the host.
pub(crate) fn binary(host: &dyn Host, op: BinaryOp, ty: ScalarType, a: Value, b: Value) -> Result<Value, Stop> {
    let (Some(x), Some(y)) = (scalar(&a), scalar(&b)) else {
        return Err(mismatch(op, ty, &a, &b));
    };
    match eval::binary(op, x, y) {
        Ok(Outcome::Value(c)) => Ok(Value::constant(&c)),
        Ok(Outcome::Checked(c)) => Ok(Value::Option(c.map(|c| Box::new(Value::constant(&c))))),
        Err(Refusal::Trap(trap)) => Err(Stop::Trap(host.trap_message(trap))),
        // Both operands of one type, and the operation is not defined at it.
        Err(Refusal::Undefined) if x.ty() == y.ty() => {
            let at = x.ty().as_scalar().map_or("?", ScalarType::name);
            Err(fault(format!("`{}.{at}`", op.name())))
        }
        Err(Refusal::Undefined) => Err(mismatch(op, ty, &a, &b)),
    }
}

/// The fault for operands that are not both of one scalar type.
fn mismatch(op: BinaryOp, ty: ScalarType, a: &Value, b: &Value) -> Stop {
    fault(format!("`{}.{}` of {} and {}", op.name(), ty.name(), a.kind(), b.kind()))
}

/// `cast.to x`.
pub(crate) fn cast(to: ScalarType, x: Value) -> Result<Value, Stop> {
    match scalar(&x).and_then(|c| eval::cast(to, c)) {
        Some(c) => Ok(Value::constant(&c)),
        None => Err(fault(format!("`cast.{}` of {}", to.name(), x.kind()))),
    }
}
