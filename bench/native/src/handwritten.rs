//! The kernels hand-written in idiomatic Rust: iterator adaptors, as a Rust programmer would
//! write them. This is the baseline every other variant is compared with.
//!
//! Integer arithmetic wraps in release builds, as Nagi's does; `x % 7` by a non-zero constant
//! needs no check. `float_sum` adds in order (`Iterator::sum` over `f64` is a sequential fold),
//! as the Nagi kernel does.

use crate::{Input, Value, Variant, opaque};

/// Σ x
pub fn integer_sum(xs: &[i64]) -> i64 {
    xs.iter().sum()
}

/// Σ (3x + 1)
pub fn map_reduce(xs: &[i64]) -> i64 {
    xs.iter().map(|&x| 3 * x + 1).sum()
}

/// Σ x over x > 0
pub fn filter_reduce(xs: &[i64]) -> i64 {
    xs.iter().filter(|&&x| x > 0).sum()
}

/// Σ (x if x % 7 == 0 else -x)
pub fn branch(xs: &[i64]) -> i64 {
    xs.iter().map(|&x| if x % 7 == 0 { x } else { -x }).sum()
}

/// Σ x/7, in order.
pub fn float_sum(xs: &[f64]) -> f64 {
    xs.iter().sum()
}

/// Σ over i in 0..n of i % 7
pub fn loop_sum(n: i64) -> i64 {
    (0..n).map(|i| i % 7).sum()
}

/// Σ (3x + 1) over x > 0, as the loop a person writes (the closure chain's reference).
pub fn closure_chain(xs: &[i64]) -> i64 {
    let mut acc: i64 = 0;
    for &x in xs {
        if x > 0 {
            acc = acc.wrapping_add(3i64.wrapping_mul(x).wrapping_add(1));
        }
    }
    acc
}

/// The variant `rust`.
pub fn variant() -> Variant {
    Variant {
        name: "rust",
        kernels: [
            |i: &Input| Value::Int(opaque(integer_sum, &i.ints)),
            |i: &Input| Value::Int(opaque(map_reduce, &i.ints)),
            |i: &Input| Value::Int(opaque(filter_reduce, &i.ints)),
            |i: &Input| Value::Int(opaque(branch, &i.ints)),
            |i: &Input| Value::Float(opaque(float_sum, &i.floats)),
            |i: &Input| Value::Int(opaque(loop_sum, i.n)),
            |i: &Input| Value::Int(opaque(closure_chain, &i.ints)),
        ],
    }
}
