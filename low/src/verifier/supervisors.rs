//! The module-level checks of supervisors (V252, with V251 for their actors): names are
//! unique, each actor child has a valid state function and mailbox, each nested supervisor has
//! one parent, declared after it, and the backoff's minimum is not above its maximum.

use std::collections::BTreeSet;

use la_arena::ArenaMap;

use super::code;
use super::types::actor_problems;
use crate::diagnostic::Diagnostic;
use crate::entities::SupervisorId;
use crate::module::{ChildKind, Module};
use crate::source::SourceMap;

/// Every problem of the module's supervisors.
pub(super) fn check(module: &Module, source: Option<&SourceMap>, out: &mut Vec<Diagnostic>) {
    let span = |id: SupervisorId| source.and_then(|s| s.supervisors.get(id).copied());
    let mut names = BTreeSet::new();
    // How many supervisors name each one as a child; only the named ones have an entry.
    let mut parents: ArenaMap<SupervisorId, usize> = ArenaMap::default();
    for (id, supervisor) in module.supervisors.iter() {
        let name = &supervisor.name;
        let mut error = |code: &'static str, message: String| {
            out.push(Diagnostic::new(code, format!("in supervisor {name}: {message}")).at(span(id)));
        };
        if !names.insert(name.as_str()) {
            error(code::DUPLICATE_NAME, "a second supervisor of this name".into());
        }
        if supervisor.backoff_ms.0 > supervisor.backoff_ms.1 {
            let (min, max) = supervisor.backoff_ms;
            error(code::SUPERVISOR, format!("the backoff's minimum {min}ms is above its maximum {max}ms"));
        }
        if supervisor.period_ms == 0 {
            error(code::SUPERVISOR, "restarts are counted over a period longer than 0ms".into());
        }
        let mut children = BTreeSet::new();
        for child in &supervisor.children {
            if !children.insert(child.name.as_str()) {
                error(code::DUPLICATE_NAME, format!("child `{}` is declared twice", child.name));
            }
            match child.kind {
                ChildKind::Actor { init, capacity } => {
                    for problem in actor_problems(module, init, capacity) {
                        error(code::ACTOR_MESSAGE, format!("child `{}`: {problem}", child.name));
                    }
                }
                // A smaller id is one declared before this one, which therefore exists.
                ChildKind::Supervisor(nested) if nested < id => *parents.entry(nested).or_default() += 1,
                ChildKind::Supervisor(_) => {
                    let message =
                        format!("child `{}` names a supervisor that is not declared before this one", child.name);
                    error(code::SUPERVISOR, message);
                }
            }
        }
    }
    for (id, &count) in parents.iter() {
        if count > 1 {
            let message = format!(
                "supervisor {} is the child of {count} supervisors; a supervisor has one parent",
                module.supervisors[id].name
            );
            out.push(Diagnostic::new(code::SUPERVISOR, message).at(span(id)));
        }
    }
}
