//! The closure methods of arrays and maps in TIR: the loop a method runs (`lower/closures.rs`
//! writes it out), the stages a chain joins into it, and which method it is.

use super::{Expr, LocalIdx};

/// A closure method of the array library, run as a loop over the array (`lower/closures.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayLoop {
    pub method: LoopMethod,
    /// The array, and the hidden local that first holds it when it is not a place.
    pub array: Expr,
    pub held: Option<LocalIdx>,
    /// The `map`s and `filter`s chained before this method (`xs.filter(f).map(g).fold(…)`),
    /// which run in the same loop, element by element, in order.
    pub stages: Vec<Stage>,
    /// The closure's element parameter, a loop variable (lent each element in turn); for a
    /// map's method, the entry's value.
    pub element: LocalIdx,
    /// For a map's method (`m.count(fn(k, v) => …)`): the closure's key parameter, the loop
    /// then running over the map's entries in insertion order (`for k, v in m`).
    pub key: Option<LocalIdx>,
    /// `fold`'s accumulator parameter (a mutable binding) and its initial value.
    pub fold: Option<(LocalIdx, Expr)>,
    /// The closure's body: the new element (`map`), whether the element counts (`filter`,
    /// `any`, `all`, `find`, `count`), or the next accumulator (`fold`).
    pub body: Expr,
    /// The hidden local the result is built in (`fold`'s accumulator for `fold`).
    pub result: LocalIdx,
}

/// A `map` or `filter` that runs inside the loop of the method chained after it: its closure's
/// element parameter and body. A `map`'s body gives the next stage's element (a new binding);
/// after a `filter` the next stage reads the same element.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub method: LoopMethod,
    pub element: LocalIdx,
    pub body: Expr,
}

/// The array library's methods that take a closure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopMethod {
    Map,
    Filter,
    Any,
    All,
    Find,
    Count,
    Fold,
}

impl LoopMethod {
    /// The method of `name`, if it takes a closure.
    pub fn from_name(name: &str) -> Option<LoopMethod> {
        Some(match name {
            "map" => LoopMethod::Map,
            "filter" => LoopMethod::Filter,
            "any" => LoopMethod::Any,
            "all" => LoopMethod::All,
            "find" => LoopMethod::Find,
            "count" => LoopMethod::Count,
            "fold" => LoopMethod::Fold,
            _ => return None,
        })
    }
}
