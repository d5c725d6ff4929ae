//! The module's call graph (petgraph), shared by `dead-fn` and `inline`.
//!
//! One node per function, in arena order, weighted by the function's id; one edge from caller
//! to callee for each function a body calls (several calls of the same callee give one edge).
//! Routes and `main` are the roots: the runtime calls them, nothing in the module does.

use std::collections::HashSet;

use la_arena::ArenaMap;
use nagi_low::{ArenaGet, FuncId, Module};
use petgraph::graph::{DiGraph, NodeIndex};

use crate::body::preorder;

/// Who calls whom.
pub struct CallGraph {
    /// Caller → callee edges; node weights are function ids.
    pub graph: DiGraph<FuncId, ()>,
    /// The node of each function.
    pub node: ArenaMap<FuncId, NodeIndex>,
}

impl CallGraph {
    /// The call graph of `module`. Calls of function ids out of range are ignored (the
    /// verifier reports them).
    pub fn build(module: &Module) -> CallGraph {
        let mut graph = DiGraph::with_capacity(module.functions.len(), module.functions.len());
        let mut node = ArenaMap::default();
        for (id, _) in module.functions.iter() {
            node.insert(id, graph.add_node(id));
        }
        for (caller, func) in module.functions.iter() {
            let mut seen = HashSet::new();
            for (op, _) in preorder(func) {
                // A spawned function is reached like a called one.
                if let Some(callee) = func.ops.get(op).and_then(|d| d.kind.callee())
                    && module.functions.get(callee).is_some()
                    && seen.insert(callee)
                {
                    graph.add_edge(node[caller], node[callee], ());
                }
            }
        }
        CallGraph { graph, node }
    }

    /// The functions the runtime calls: `main`, every route and queue handler, in arena order and
    /// without repeats. Empty for a module with neither (a library of functions).
    pub fn roots(module: &Module) -> Vec<FuncId> {
        let mut roots: Vec<FuncId> = module.routes.iter().map(|r| r.handler).collect();
        // The runtime runs queues' handlers as it runs routes'.
        roots.extend(module.queues.values().map(|q| q.handler));
        roots.extend(module.function_by_name("main"));
        // The runtime makes supervised actors' states itself.
        for supervisor in module.supervisors.values() {
            roots.extend(supervisor.children.iter().filter_map(|c| match c.kind {
                nagi_low::ChildKind::Actor { init, .. } => Some(init),
                nagi_low::ChildKind::Supervisor(_) => None,
            }));
        }
        roots.retain(|f| module.functions.get(*f).is_some());
        roots.sort_by_key(|f| nagi_low::entities::index(*f));
        roots.dedup();
        roots
    }
}
