//! The seven kernels of docs/design.md §6 ("CPU kernels"), their shared input and expected results.
//!
//! Every variant (native, CPython, Node) is checked against [`EXPECTED`] before anything is
//! timed; floats within [`FLOAT_TOLERANCE`].

use std::fmt;

/// Elements in the input, and iterations of `loop`.
pub const N: usize = 100_000;

/// How far a float result may be from the expected one.
pub const FLOAT_TOLERANCE: f64 = 1e-7;

/// One kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kernel {
    /// Σ x
    IntegerSum,
    /// Σ (3x + 1)
    MapReduce,
    /// Σ x over x > 0
    FilterReduce,
    /// Σ (x if x % 7 == 0 else -x)
    Branch,
    /// Σ x/7 as f64, in order
    FloatSum,
    /// Σ over i in 0..N of i % 7
    Loop,
    /// Σ (3x + 1) over x > 0, written with closures (`filter`, `map`, `fold`) in Nagi and as a
    /// loop in the hand-written Rust
    ClosureChain,
}

impl Kernel {
    /// All seven, in the order of docs/design.md §6.
    pub const ALL: [Kernel; 7] = [
        Kernel::IntegerSum,
        Kernel::MapReduce,
        Kernel::FilterReduce,
        Kernel::Branch,
        Kernel::FloatSum,
        Kernel::Loop,
        Kernel::ClosureChain,
    ];

    /// The name used in docs/design.md, the results and the chart.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::IntegerSum => "integer_sum",
            Kernel::MapReduce => "map_reduce",
            Kernel::FilterReduce => "filter_reduce",
            Kernel::Branch => "branch",
            Kernel::FloatSum => "float_sum",
            Kernel::Loop => "loop",
            Kernel::ClosureChain => "closure_chain",
        }
    }

    /// The kernel called `name`.
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Its definition, as docs/design.md states it.
    pub fn definition(self) -> &'static str {
        match self {
            Kernel::IntegerSum => "Σ x",
            Kernel::MapReduce => "Σ (3x + 1)",
            Kernel::FilterReduce => "Σ x over x > 0",
            Kernel::Branch => "Σ (x if x % 7 == 0 else -x)",
            Kernel::FloatSum => "Σ x/7 (f64)",
            Kernel::Loop => "Σ over i in 0..100000 of i % 7",
            Kernel::ClosureChain => "Σ (3x + 1) over x > 0 (filter, map, fold)",
        }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A kernel's result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// The integer kernels.
    Int(i64),
    /// `float_sum`.
    Float(f64),
}

impl Value {
    /// The value as JSON.
    pub fn to_json(self) -> serde_json::Value {
        match self {
            Value::Int(v) => v.into(),
            Value::Float(v) => v.into(),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v:?}"),
        }
    }
}

/// The expected results (docs/design.md §6), in [`Kernel::ALL`]'s order.
pub const EXPECTED: [(Kernel, Value); 7] = [
    (Kernel::IntegerSum, Value::Int(-3184)),
    (Kernel::MapReduce, Value::Int(90448)),
    (Kernel::FilterReduce, Value::Int(12461527)),
    (Kernel::Branch, Value::Int(2106)),
    (Kernel::FloatSum, Value::Float(-454.85714285709753)),
    (Kernel::Loop, Value::Int(299995)),
    (Kernel::ClosureChain, Value::Int(37434527)),
];

/// The expected result of `kernel`.
pub fn expected(kernel: Kernel) -> Value {
    EXPECTED.iter().find(|(k, _)| *k == kernel).map(|(_, v)| *v).expect("every kernel has a result")
}

/// Checks `got` against the expected result of `kernel`; the error names the variant and the
/// kernel, for the message that stops the run.
pub fn check(variant: &str, kernel: Kernel, got: Value) -> Result<(), String> {
    let want = expected(kernel);
    let ok = match (want, got) {
        (Value::Int(a), Value::Int(b)) => a == b,
        (Value::Float(a), Value::Float(b)) => (a - b).abs() <= FLOAT_TOLERANCE,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("checksum mismatch: variant {variant}, kernel {kernel}: got {got}, expected {want}"))
    }
}

/// The expected results as a JSON object `{"integer_sum": -3184, …}`, the form the CPython and
/// Node scripts take on their command line.
pub fn expected_json() -> String {
    let map: serde_json::Map<String, serde_json::Value> =
        EXPECTED.iter().map(|(k, v)| (k.name().to_string(), v.to_json())).collect();
    serde_json::Value::Object(map).to_string()
}

/// The shared input: `x_i = (i*17 + 13) % 997 - 498` for `i` in `0..N`.
pub fn input_ints() -> Vec<i64> {
    (0..N as i64).map(|i| (i * 17 + 13) % 997 - 498).collect()
}

/// `x_i / 7` as f64.
pub fn input_floats(ints: &[i64]) -> Vec<f64> {
    ints.iter().map(|&x| x as f64 / 7.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_accept_the_expected_results_and_name_a_mismatch() {
        for (kernel, value) in EXPECTED {
            check("test", kernel, value).unwrap();
        }
        check("x", Kernel::FloatSum, Value::Float(-454.85714285709753 + 5e-8)).unwrap();
        let err = check("nagi-llvm-O2", Kernel::Branch, Value::Int(2107)).unwrap_err();
        assert_eq!(err, "checksum mismatch: variant nagi-llvm-O2, kernel branch: got 2107, expected 2106");
        assert!(check("x", Kernel::FloatSum, Value::Float(-454.8571)).is_err());
        assert!(check("x", Kernel::IntegerSum, Value::Float(-3184.0)).is_err());
    }

    #[test]
    fn the_input_is_the_documented_one() {
        let xs = input_ints();
        assert_eq!((xs.len(), xs[0], xs[1], xs[N - 1]), (N, -485, -468, (99_999 * 17 + 13) % 997 - 498));
        assert_eq!(xs.iter().sum::<i64>(), -3184);
        assert_eq!(input_floats(&xs)[0], -485.0 / 7.0);
        let json: serde_json::Value = serde_json::from_str(&expected_json()).unwrap();
        assert_eq!(json["branch"], 2106);
    }
}
