//! What each reference local may borrow from: the flow-insensitive borrow origins that the
//! verifier's reference rules (V241, V244, V246) and passes that must keep them (`clone-elim`)
//! both read, so the two cannot disagree.

use std::collections::BTreeSet;

use crate::entities::{OpId, index};
use crate::module::FunctionData;

/// For each local (by arena index), what it may borrow from, and the reverse.
pub struct BorrowOrigins {
    /// For each reference local, its origins in ascending order: the owned locals it may point
    /// into and the reference parameters it may derive from. Empty for owned locals.
    pub of: Vec<Vec<usize>>,
    /// For each owned local, the reference locals that may point into it.
    pub dependents: Vec<Vec<usize>>,
}

impl BorrowOrigins {
    /// Computes the origins from the operations `ops` of `func` (those the caller considers
    /// part of the body): a reference made by `borrow`, `field.ref`, `enum.ref`, `array.ref`, `map.key_ref`,
    /// `map.value_ref` or `for` from
    /// an owned local borrows from it, and one made from another reference (also by `copy`)
    /// borrows from whatever that one does. Ids out of range are skipped.
    pub fn compute(func: &FunctionData, ops: impl IntoIterator<Item = OpId>) -> BorrowOrigins {
        let is_ref: Vec<bool> = func.locals.values().map(|l| l.ty.is_ref()).collect();
        let n = is_ref.len();
        let mut sets: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        // Reference locals written from another reference inherit that one's origins.
        let mut derived: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &p in &func.params {
            if is_ref.get(index(p)).copied().unwrap_or(false) {
                sets[index(p)].insert(index(p));
            }
        }
        for op in ops {
            let Some(data) = crate::entities::ArenaGet::get(&func.ops, op) else { continue };
            let (Some(dest), Some(src)) = (data.kind.dest(), data.kind.borrowed_from()) else { continue };
            let (dest, src) = (index(dest), index(src));
            if dest >= n || src >= n || !is_ref[dest] {
                continue;
            }
            if is_ref[src] {
                derived[src].push(dest);
            } else {
                sets[dest].insert(src);
            }
        }
        let mut work: Vec<usize> = (0..n).filter(|&i| !sets[i].is_empty()).collect();
        while let Some(from) = work.pop() {
            if derived[from].is_empty() {
                continue;
            }
            let inherited = sets[from].clone();
            for &to in &derived[from] {
                let before = sets[to].len();
                sets[to].extend(inherited.iter().copied());
                if sets[to].len() > before {
                    work.push(to);
                }
            }
        }
        let mut dependents = vec![Vec::new(); n];
        for (r, set) in sets.iter().enumerate() {
            for &origin in set {
                if !is_ref[origin] {
                    dependents[origin].push(r);
                }
            }
        }
        BorrowOrigins { of: sets.into_iter().map(|s| s.into_iter().collect()).collect(), dependents }
    }

    /// The first origin locals `a` and `b` (arena indices) share, if any.
    pub fn common(&self, a: usize, b: usize) -> Option<usize> {
        let (Some(a), Some(b)) = (self.of.get(a), self.of.get(b)) else { return None };
        a.iter().copied().find(|o| b.binary_search(o).is_ok())
    }
}
