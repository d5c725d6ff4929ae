//! Which functions can recurse: the members of the call graph's cycles.
//!
//! Both emitters put a stack check (`nagi_runtime::stack`) at the entry of exactly these
//! functions, so stack overflow is a trap on either path while code without recursion (the CPU
//! kernels) pays nothing: a function on no cycle adds one bounded frame to its caller's, so only
//! recursion can grow the stack without bound. Strongly connected components come from
//! petgraph's Tarjan implementation, which is iterative.

use std::collections::HashSet;

use petgraph::graph::DiGraph;

use crate::entities::FuncId;
use crate::module::Module;
use crate::ops::OpKind;

/// The functions of `module` that lie on a cycle of calls (a function that calls itself, or a
/// group that calls each other round).
pub fn recursive_functions(module: &Module) -> HashSet<FuncId> {
    on_cycles(module, |kind| match kind {
        OpKind::Call { callee, .. } => Some(*callee),
        _ => None,
    })
}

/// The async functions of `module` whose futures could contain themselves: those on a cycle of
/// calls and task spawns (`scope.spawn`: a task that spawns a task of its own function). The
/// Rust emitter boxes exactly these futures, whose type would otherwise be infinite.
pub fn async_cycle_functions(module: &Module) -> HashSet<FuncId> {
    let mut cyclic = on_cycles(module, |kind| match kind {
        OpKind::Call { callee, .. } | OpKind::ScopeSpawn { callee, blocking: false, .. } => Some(*callee),
        _ => None,
    });
    cyclic.retain(|f| module.functions[*f].is_async);
    cyclic
}

/// The functions on a cycle of the graph whose edges go from each function to the function
/// `edge` names for each of its operations.
fn on_cycles(module: &Module, edge: impl Fn(&OpKind) -> Option<FuncId>) -> HashSet<FuncId> {
    let mut graph = DiGraph::<FuncId, ()>::with_capacity(module.functions.len(), module.functions.len());
    let mut node = la_arena::ArenaMap::default();
    for (id, _) in module.functions.iter() {
        node.insert(id, graph.add_node(id));
    }
    let mut cyclic = HashSet::new();
    for (caller, func) in module.functions.iter() {
        for op in func.ops.values() {
            if let Some(callee) = edge(&op.kind)
                && let Some(&to) = node.get(callee)
            {
                if callee == caller {
                    cyclic.insert(caller);
                }
                graph.update_edge(node[caller], to, ());
            }
        }
    }
    for component in petgraph::algo::tarjan_scc(&graph) {
        if component.len() > 1 {
            cyclic.extend(component.into_iter().map(|n| graph[n]));
        }
    }
    cyclic
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_calls_and_mutual_calls_recurse_the_rest_does_not() {
        let text = "nagi-low 1\nmodule r\n\n\
            fn $fact(%n: i64) -> i64 {\n  let %m: i64\n  let %r: i64\n  %m = sub.i64 %n, 1_i64\n  %r = call $fact(%m)\n  return %r\n}\n\n\
            fn $even(%n: i64) -> bool {\n  let %b: bool\n  %b = call $odd(%n)\n  return %b\n}\n\n\
            fn $odd(%n: i64) -> bool {\n  let %b: bool\n  %b = call $even(%n)\n  return %b\n}\n\n\
            fn $leaf(%n: i64) -> i64 {\n  return %n\n}\n\n\
            fn $main() -> unit {\n  let %x: i64\n  let %b: bool\n  %x = call $fact(3_i64)\n  %x = call $leaf(%x)\n  %b = call $even(%x)\n  return\n}\n";
        let (module, _) = crate::parse(text).expect("parses");
        let recursive = recursive_functions(&module);
        let mut names: Vec<&str> = recursive.iter().map(|f| module.functions[*f].name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["even", "fact", "odd"]);
    }
}
