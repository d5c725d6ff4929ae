//! The Nagi kernels as the two emitters produced them (`build.rs`); nothing here re-implements
//! a kernel.

/// `examples/kernels.nagi` through the Rust emitter: the module `program` of the emitted crate,
/// included and compiled as part of this crate.
pub mod rust {
    include!(concat!(env!("OUT_DIR"), "/kernels_rust.rs"));

    use crate::{Input, Value, Variant, opaque};

    /// The variant `nagi-rust`. The emitted functions take `&Vec<i64>` (Low's `&[i64]`).
    pub fn variant() -> Variant {
        Variant {
            name: "nagi-rust",
            kernels: [
                |i: &Input| Value::Int(opaque(program::integer_sum, &i.ints)),
                |i: &Input| Value::Int(opaque(program::map_reduce, &i.ints)),
                |i: &Input| Value::Int(opaque(program::filter_reduce, &i.ints)),
                |i: &Input| Value::Int(opaque(program::branch, &i.ints)),
                |i: &Input| Value::Float(opaque(program::float_sum, &i.floats)),
                |i: &Input| Value::Int(opaque(program::loop_sum, i.n)),
                |i: &Input| Value::Int(opaque(program::closure_chain, &i.ints)),
            ],
        }
    }
}

/// `examples/kernels.nagi` through the LLVM emitter, at `-O2` and `-O3`, called through the C
/// symbols `build.rs` exported (`nagi_o2_integer_sum`, …).
pub mod llvm {
    use std::hint::black_box;

    use crate::{Input, Value, Variant};

    /// Nagi's `[T]` as the LLVM emitter lays it out (`{ T*, i64 len, i64 cap }`, see
    /// `emit-llvm/src/types.rs` and `docs/c-abi.md`); a `&[T]` parameter is a pointer to one.
    #[repr(C)]
    pub struct NagiArray<T> {
        /// The first element.
        pub ptr: *const T,
        /// Elements.
        pub len: i64,
        /// Capacity; 0 means the array owns no buffer, so nothing ever frees this one.
        pub cap: i64,
    }

    impl<T> NagiArray<T> {
        /// A view of `xs` as a Nagi array that owns nothing.
        pub fn borrow(xs: &[T]) -> NagiArray<T> {
            NagiArray { ptr: xs.as_ptr(), len: xs.len() as i64, cap: 0 }
        }
    }

    type IntKernel = unsafe extern "C" fn(*const NagiArray<i64>) -> i64;
    type FloatKernel = unsafe extern "C" fn(*const NagiArray<f64>) -> f64;
    type CountKernel = unsafe extern "C" fn(i64) -> i64;

    /// Declares one optimization level's seven symbols.
    macro_rules! kernels {
        ($($name:ident: $ty:ty => $ret:ty;)*) => {
            unsafe extern "C" {
                $(
                    /// An exported Nagi kernel (see `build.rs`).
                    fn $name(arg: $ty) -> $ret;
                )*
            }
        };
    }

    kernels! {
        nagi_o2_integer_sum: *const NagiArray<i64> => i64;
        nagi_o2_map_reduce: *const NagiArray<i64> => i64;
        nagi_o2_filter_reduce: *const NagiArray<i64> => i64;
        nagi_o2_branch: *const NagiArray<i64> => i64;
        nagi_o2_float_sum: *const NagiArray<f64> => f64;
        nagi_o2_loop_sum: i64 => i64;
        nagi_o2_closure_chain: *const NagiArray<i64> => i64;
        nagi_o3_integer_sum: *const NagiArray<i64> => i64;
        nagi_o3_map_reduce: *const NagiArray<i64> => i64;
        nagi_o3_filter_reduce: *const NagiArray<i64> => i64;
        nagi_o3_branch: *const NagiArray<i64> => i64;
        nagi_o3_float_sum: *const NagiArray<f64> => f64;
        nagi_o3_loop_sum: i64 => i64;
        nagi_o3_closure_chain: *const NagiArray<i64> => i64;
    }

    /// Calls an integer kernel on `xs`.
    #[inline(always)]
    fn ints(f: IntKernel, xs: &[i64]) -> i64 {
        let array = NagiArray::borrow(xs);
        // SAFETY: `f` is a kernel the LLVM emitter compiled from `fn k(xs: [i64]) -> i64`: it
        // reads `array` (a valid, aligned three-word struct that lives across the call) and
        // `len` elements from `ptr`, which `xs` keeps alive; it writes nothing, allocates
        // nothing, frees nothing (`cap` is 0 and a borrowed array is never dropped), and does
        // not unwind.
        unsafe { black_box(f)(&array) }
    }

    /// Calls a float kernel on `xs`.
    #[inline(always)]
    fn floats(f: FloatKernel, xs: &[f64]) -> f64 {
        let array = NagiArray::borrow(xs);
        // SAFETY: as in `ints`, for `fn k(xs: [f64]) -> f64`.
        unsafe { black_box(f)(&array) }
    }

    /// Calls `loop_sum`.
    #[inline(always)]
    fn count(f: CountKernel, n: i64) -> i64 {
        // SAFETY: `fn loop_sum(n: i64) -> i64` takes and returns plain integers, touches no
        // memory and does not unwind.
        unsafe { black_box(f)(n) }
    }

    /// The variant `nagi-llvm-O2`.
    pub fn variant_o2() -> Variant {
        Variant {
            name: "nagi-llvm-O2",
            kernels: [
                |i: &Input| Value::Int(ints(nagi_o2_integer_sum, &i.ints)),
                |i: &Input| Value::Int(ints(nagi_o2_map_reduce, &i.ints)),
                |i: &Input| Value::Int(ints(nagi_o2_filter_reduce, &i.ints)),
                |i: &Input| Value::Int(ints(nagi_o2_branch, &i.ints)),
                |i: &Input| Value::Float(floats(nagi_o2_float_sum, &i.floats)),
                |i: &Input| Value::Int(count(nagi_o2_loop_sum, i.n)),
                |i: &Input| Value::Int(ints(nagi_o2_closure_chain, &i.ints)),
            ],
        }
    }

    /// The variant `nagi-llvm-O3`.
    pub fn variant_o3() -> Variant {
        Variant {
            name: "nagi-llvm-O3",
            kernels: [
                |i: &Input| Value::Int(ints(nagi_o3_integer_sum, &i.ints)),
                |i: &Input| Value::Int(ints(nagi_o3_map_reduce, &i.ints)),
                |i: &Input| Value::Int(ints(nagi_o3_filter_reduce, &i.ints)),
                |i: &Input| Value::Int(ints(nagi_o3_branch, &i.ints)),
                |i: &Input| Value::Float(floats(nagi_o3_float_sum, &i.floats)),
                |i: &Input| Value::Int(count(nagi_o3_loop_sum, i.n)),
                |i: &Input| Value::Int(ints(nagi_o3_closure_chain, &i.ints)),
            ],
        }
    }
}
