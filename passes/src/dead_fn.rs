//! `dead-fn`: dead function elimination. Removes the functions that no root can reach
//! through calls.
//!
//! The roots are what the runtime calls: `main`, every route handler, and the state function
//! of every supervised actor. Reachability is a
//! depth-first search over the call graph ([`crate::callgraph`], petgraph), which walks with
//! its own stack. A module with no roots at all (no `main`, no routes) is a library whose
//! every function is an entry point, so nothing is removed from it.
//!
//! `Module::functions` is an arena, which cannot remove entries: the pass rebuilds it with
//! the kept functions in their order and renumbers every `call` and `route`.

use la_arena::{Arena, ArenaMap};
use nagi_low::{FuncId, FunctionData, Module};
use petgraph::visit::Dfs;

use crate::Pass;
use crate::body::{ArenaGetMut, preorder};
use crate::callgraph::CallGraph;

/// The `dead-fn` pass.
pub struct DeadFn;

impl Pass for DeadFn {
    fn name(&self) -> &'static str {
        "dead-fn"
    }

    fn description(&self) -> &'static str {
        "removes functions that `main` and the route handlers cannot reach through calls"
    }

    fn run(&self, module: &mut Module) {
        let roots = CallGraph::roots(module);
        if roots.is_empty() {
            return;
        }
        let calls = CallGraph::build(module);
        let mut reached: ArenaMap<FuncId, ()> = ArenaMap::default();
        let mut dfs = Dfs::empty(&calls.graph);
        for root in roots {
            dfs.move_to(calls.node[root]);
            while let Some(n) = dfs.next(&calls.graph) {
                reached.insert(calls.graph[n], ());
            }
        }
        if module.functions.iter().all(|(id, _)| reached.contains_idx(id)) {
            return;
        }
        let old = std::mem::take(&mut module.functions);
        let mut kept: Arena<FunctionData> = Arena::new();
        let mut renumber: ArenaMap<FuncId, FuncId> = ArenaMap::default();
        for (id, func) in old {
            if reached.contains_idx(id) {
                renumber.insert(id, kept.alloc(func));
            }
        }
        // Every call and spawn in a kept function is of a reached function, so each has a new number.
        for (_, func) in kept.iter_mut() {
            for (op, _) in preorder(func) {
                if let Some(data) = func.ops.get_mut_checked(op)
                    && let Some(callee) = data.kind.callee_mut()
                    && let Some(&new) = renumber.get(*callee)
                {
                    *callee = new;
                }
            }
        }
        for route in &mut module.routes {
            if let Some(&new) = renumber.get(route.handler) {
                route.handler = new;
            }
        }
        for queue in module.queues.values_mut() {
            if let Some(&new) = renumber.get(queue.handler) {
                queue.handler = new;
            }
        }
        for supervisor in module.supervisors.values_mut() {
            for child in &mut supervisor.children {
                if let nagi_low::ChildKind::Actor { init, .. } = &mut child.kind
                    && let Some(&new) = renumber.get(*init)
                {
                    *init = new;
                }
            }
        }
        module.functions = kept;
    }
}
