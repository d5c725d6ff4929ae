//! The array library: the rules of High Nagi's array methods (`sort`, `sort_by`, `reverse`,
//! `contains`, `slice`), one function per row of Low's runtime interface (`array.*`).
//!
//! Each rule is written once, here, generic in the element type. The Rust path's generated
//! code calls these functions on its `Vec`s; the LLVM path calls them through `cabi::arrays`
//! on the arrays of emitted code; the Low interpreter through its host, on its values.
//!
//! The order is one total order per element type ([`Ordered`]): integers by value, `f64`
//! ascending with `-0.0` before `0.0` and every NaN last (IEEE 754's total order, except that
//! a NaN's sign is ignored, since it depends on how the NaN was computed), so that sorting
//! floats is deterministic and never depends on where a NaN started, and strings by their UTF-8
//! bytes (which is the order of their code points). Sorting is stable: equal keys
//! keep their order, which is what makes sorting by one field after another meaningful.

use std::cmp::Ordering;

use crate::trap;

/// A value the array library orders and compares: `i32`, `i64`, `f64` and strings.
pub trait Ordered {
    /// The library's total order ([module docs](self)).
    fn order(&self, other: &Self) -> Ordering;
    /// The library's equality, as Nagi's `==` has it: IEEE for `f64` (NaN equals nothing,
    /// `-0.0 == 0.0`), by value otherwise.
    fn same(&self, other: &Self) -> bool;
}

impl Ordered for i32 {
    fn order(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

impl Ordered for i64 {
    fn order(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

impl Ordered for f64 {
    fn order(&self, other: &Self) -> Ordering {
        // Every NaN goes last and equals every other NaN: the sign and payload of a NaN depend
        // on how it was computed (x86's `0.0 / 0.0` is negative, a constant folded by rustc or
        // LLVM is positive), so an order that looked at them would differ between backends.
        match (self.is_nan(), other.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => self.total_cmp(other),
        }
    }
    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

impl Ordered for str {
    fn order(&self, other: &Self) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

impl Ordered for String {
    fn order(&self, other: &Self) -> Ordering {
        self.as_str().order(other.as_str())
    }
    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

/// A key of one of the ordered types whose type is known only when the program runs: what the
/// LLVM path reads out of emitted code's memory and the interpreter out of its values. Keys of
/// different kinds are never compared (the verifier gives every call one kind); if they were,
/// they would be equal in order and different in [`Ordered::same`].
#[derive(Clone, Copy, Debug)]
pub enum Key<'a> {
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// An `f64`.
    F64(f64),
    /// A string.
    Str(&'a str),
}

impl Ordered for Key<'_> {
    fn order(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Key::I32(a), Key::I32(b)) => a.order(b),
            (Key::I64(a), Key::I64(b)) => a.order(b),
            (Key::F64(a), Key::F64(b)) => a.order(b),
            (Key::Str(a), Key::Str(b)) => a.order(b),
            _ => Ordering::Equal,
        }
    }
    fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (Key::I32(a), Key::I32(b)) => a.same(b),
            (Key::I64(a), Key::I64(b)) => a.same(b),
            (Key::F64(a), Key::F64(b)) => a.same(b),
            (Key::Str(a), Key::Str(b)) => a.same(b),
            _ => false,
        }
    }
}

/// Sorts `xs` in place, stably and ascending by [`Ordered::order`].
pub fn sort<T: Ordered>(xs: &mut [T]) {
    xs.sort_by(T::order);
}

/// Sorts `xs` in place, stably and ascending by the key `key` gives each element (a field of a
/// class: `posts.sort_by(created)`).
pub fn sort_by<T, K: Ordered + ?Sized>(xs: &mut [T], key: impl Fn(&T) -> &K) {
    xs.sort_by(|a, b| key(a).order(key(b)));
}

/// Sorts `xs` in place, stably and ascending by `keys[i]` for the element at `i`
/// (`posts.sort_by_key(fn(p) => p.views)`, the keys computed first); traps unless there are as
/// many keys as elements.
pub fn sort_by_keys<T, K: Ordered>(xs: &mut [T], keys: &[K]) {
    if keys.len() != xs.len() {
        crate::trap(&format!("sort_by_keys: {} keys for {} elements", keys.len(), xs.len()));
    }
    let order = sorted_order(&keys.iter().collect::<Vec<_>>());
    apply_order(xs, &order);
}

/// Puts `xs` into the order `order` gives (position `i` gets the element that stood at
/// `order[i]`), in place by swaps along each cycle of the permutation: linear time, each
/// element moved once.
pub fn apply_order<T>(xs: &mut [T], order: &[usize]) {
    let mut placed = vec![false; order.len()];
    for start in 0..order.len() {
        let mut i = start;
        while !placed[i] {
            placed[i] = true;
            let from = order[i];
            if from == start {
                break;
            }
            xs.swap(i, from);
            i = from;
        }
    }
}

/// The order in which the elements whose keys are `keys` stand once sorted stably: position
/// `i` of the result is the index of the element that goes to `i`. For arrays whose elements
/// only the caller can move (the LLVM path's, which are bytes here).
pub fn sorted_order<K: Ordered + ?Sized>(keys: &[&K]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| keys[a].order(keys[b]));
    order
}

/// Reverses the order of the elements of `xs` in place.
pub fn reverse<T>(xs: &mut [T]) {
    xs.reverse();
}

/// Whether an element of `xs` equals `x` by [`Ordered::same`] (so an `f64` NaN is never found).
pub fn contains<T: Ordered + ?Sized, E: std::borrow::Borrow<T>>(xs: &[E], x: &T) -> bool {
    xs.iter().any(|e| e.borrow().same(x))
}

/// The range `start..end` of an array of `len` elements as indexes, or the message of the trap
/// when it is not `0 <= start <= end <= len`: a slice is never silently shortened.
pub fn slice_range(len: usize, start: i64, end: i64) -> Result<std::ops::Range<usize>, String> {
    let in_range = 0 <= start && start <= end && usize::try_from(end).is_ok_and(|end| end <= len);
    if !in_range {
        let elements = if len == 1 { "element" } else { "elements" };
        return Err(format!("slice {start}..{end} out of range for an array of {len} {elements}"));
    }
    // Both ends are in `0..=len` now, so they fit a `usize`.
    Ok(start as usize..end as usize)
}

/// The elements `start..end` of `xs`, cloned into a new array; traps as [`slice_range`] says.
pub fn slice<T: Clone>(xs: &[T], start: i64, end: i64) -> Vec<T> {
    match slice_range(xs.len(), start, end) {
        Ok(range) => xs[range].to_vec(),
        Err(message) => trap(&message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_order_moves_each_element_where_the_order_says() {
        // Every permutation of five elements, against the order applied by copying.
        fn permutations(n: usize) -> Vec<Vec<usize>> {
            if n == 0 {
                return vec![Vec::new()];
            }
            let mut all = Vec::new();
            for rest in permutations(n - 1) {
                for at in 0..n {
                    let mut p = rest.clone();
                    p.insert(at, n - 1);
                    all.push(p);
                }
            }
            all
        }
        let all = permutations(5);
        assert_eq!(all.len(), 120);
        for order in all {
            let mut xs: Vec<String> = (0..5).map(|i| format!("e{i}")).collect();
            let expected: Vec<String> = order.iter().map(|&i| xs[i].clone()).collect();
            apply_order(&mut xs, &order);
            assert_eq!(xs, expected, "order {order:?}");
        }
    }

    #[test]
    fn sort_by_keys_is_stable_and_follows_the_keys() {
        let mut words = vec!["pear", "fig", "apple", "kiwi"];
        let keys: Vec<i64> = words.iter().map(|w| w.len() as i64).collect();
        sort_by_keys(&mut words, &keys);
        assert_eq!(words, ["fig", "pear", "kiwi", "apple"]);
        let mut xs = vec![1, 2, 3];
        sort_by_keys(&mut xs, &[f64::NAN, -0.0, 0.0]);
        assert_eq!(xs, [2, 3, 1]);
    }

    #[test]
    fn floats_sort_with_negative_zero_first_and_every_nan_last() {
        let mut xs = [2.5, f64::NAN, -0.0, -f64::NAN, 0.0, f64::NEG_INFINITY, -1.0];
        sort(&mut xs);
        let bits: Vec<u64> = xs.iter().map(|x| x.to_bits()).collect();
        let expected = [f64::NEG_INFINITY, -1.0, -0.0, 0.0, 2.5, f64::NAN, -f64::NAN];
        assert_eq!(bits, expected.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }

    #[test]
    fn strings_sort_by_bytes_and_sorting_by_a_key_is_stable() {
        let mut words = vec!["b".to_string(), "B".into(), "é".into(), "a".into()];
        sort(&mut words);
        assert_eq!(words, ["B", "a", "b", "é"]);
        let mut pairs = vec![(2, "x"), (1, "y"), (2, "a"), (1, "b")];
        sort_by(&mut pairs, |p| &p.0);
        assert_eq!(pairs, [(1, "y"), (1, "b"), (2, "x"), (2, "a")]);
        assert_eq!(sorted_order::<i64>(&[&3, &1, &3, &0]), [3, 1, 0, 2]);
    }

    #[test]
    fn contains_compares_as_nagi_does() {
        assert!(contains(&[1i64, 2, 3], &2) && !contains(&[1i64], &4));
        assert!(!contains(&[f64::NAN], &f64::NAN) && contains(&[-0.0], &0.0));
        assert!(contains::<str, String>(&["ab".into()], "ab"));
    }

    #[test]
    fn slices_check_their_range() {
        assert_eq!(slice(&[1, 2, 3, 4], 1, 3), [2, 3]);
        assert_eq!(slice_range(3, 3, 3), Ok(3..3));
        assert_eq!(slice_range(3, 2, 1), Err("slice 2..1 out of range for an array of 3 elements".into()));
        assert_eq!(slice_range(1, -1, 1), Err("slice -1..1 out of range for an array of 1 element".into()));
        assert_eq!(slice_range(0, 0, 1), Err("slice 0..1 out of range for an array of 0 elements".into()));
    }
}
