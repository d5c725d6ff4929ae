//! The module-level checks of supervisors (V252, with V251 for their actors): names are
//! unique, each actor child has a valid state function and mailbox, each nested supervisor has
//! one parent, declared after it, and the backoff's minimum is not above its maximum.

use std::collections::BTreeSet;

use super::code;
use super::types::actor_problems;
use crate::diagnostic::Diagnostic;
use crate::module::{ChildKind, Module};
use crate::source::SourceMap;

/// Every problem of the module's supervisors.
pub(super) fn check(module: &Module, source: Option<&SourceMap>, out: &mut Vec<Diagnostic>) {
    let span = |index: usize| source.and_then(|s| s.supervisors.get(index).copied());
    let mut names = BTreeSet::new();
    let mut parents = vec![0_usize; module.supervisors.len()];
    for (index, supervisor) in module.supervisors.iter().enumerate() {
        let name = &supervisor.name;
        let mut error = |code: &'static str, message: String| {
            out.push(Diagnostic::new(code, format!("in supervisor {name}: {message}")).at(span(index)));
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
                ChildKind::Supervisor(nested) if nested < index => parents[nested] += 1,
                ChildKind::Supervisor(_) => {
                    let message =
                        format!("child `{}` names a supervisor that is not declared before this one", child.name);
                    error(code::SUPERVISOR, message);
                }
            }
        }
    }
    for (index, count) in parents.into_iter().enumerate() {
        if count > 1 {
            let message = format!(
                "supervisor {} is the child of {count} supervisors; a supervisor has one parent",
                module.supervisors[index].name
            );
            out.push(Diagnostic::new(code::SUPERVISOR, message).at(span(index)));
        }
    }
}
