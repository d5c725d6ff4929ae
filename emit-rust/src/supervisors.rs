//! Supervisors on the Rust path: one function per supervisor building its
//! `nagi_runtime::supervisors::Spec`, and `nagi_supervisors()` giving the trees, which
//! `supervisor.child` hands to the runtime (it starts them the first time a child is asked for).

use std::fmt::Write;

use nagi_low::entities::index;
use nagi_low::{ChildKind, Module, Strategy};

use crate::names::ident;

/// Writes the supervisors' functions, inside `mod program`.
pub fn supervisors(out: &mut String, module: &Module) {
    if module.supervisors.is_empty() {
        return;
    }
    // A supervisor's function is named by its id's position, the one number Rust can spell.
    for (id, supervisor) in module.supervisors.iter() {
        let i = index(id);
        let children: Vec<String> = supervisor
            .children
            .iter()
            .map(|child| match &child.kind {
                ChildKind::Actor { init, capacity } => {
                    let name = module.actor_name(*init);
                    let init = &module.functions[*init];
                    format!(
                        "nagi_runtime::supervisors::ChildSpec::actor({name:?}, {capacity}, self::{})",
                        ident(&init.name)
                    )
                }
                ChildKind::Supervisor(nested) => {
                    let nested = index(*nested);
                    format!("nagi_runtime::supervisors::ChildSpec::supervisor(nagi_supervisor_{nested}())")
                }
            })
            .collect();
        let strategy = match supervisor.strategy {
            Strategy::OneForOne => "OneForOne",
            Strategy::OneForAll => "OneForAll",
        };
        let (min, max) = supervisor.backoff_ms;
        let _ = writeln!(
            out,
            "    fn nagi_supervisor_{i}() -> nagi_runtime::supervisors::Spec {{\n        \
             nagi_runtime::supervisors::Spec {{ name: {:?}, strategy: nagi_runtime::supervisors::Strategy::{strategy}, \
             intensity: {}, period: ::std::time::Duration::from_millis({}), \
             backoff_min: ::std::time::Duration::from_millis({min}), \
             backoff_max: ::std::time::Duration::from_millis({max}), children: vec![{}] }}\n    }}\n",
            supervisor.name,
            supervisor.intensity,
            supervisor.period_ms,
            children.join(", ")
        );
    }
    let trees: Vec<String> =
        module.supervisor_trees().into_iter().map(|id| format!("nagi_supervisor_{}()", index(id))).collect();
    let _ = writeln!(
        out,
        "    fn nagi_supervisors() -> ::std::vec::Vec<nagi_runtime::supervisors::Spec> {{\n        vec![{}]\n    }}\n",
        trees.join(", ")
    );
}
