//! The types of the actor operations: `actor.start` makes an `Actor<C>` from a plain function
//! without parameters whose result is the class `C`; `actor.call` and `actor.send` run a plain
//! handler whose first parameter is `&mut C` on the actor's state, with owned arguments for the
//! others (V251, V250), and `actor.call` gives the handler's result as an option. All three
//! belong in async functions (V225).

use super::{Crossing, OpCheck};
use crate::entities::{ArenaGet, ClassId, FuncId, LocalId, SupervisorId, index};
use crate::module::{ChildKind, FunctionData, Module};
use crate::ops::{OpKind, Operand};
use crate::types::Type;
use crate::verifier::code;

/// The largest mailbox `actor.start` may declare, in messages (`nagi_runtime::actors::MAX_CAPACITY`
/// bounds it the same).
const MAX_MAILBOX: u32 = 1 << 20;

/// What is wrong with an actor whose state the function `init` makes, with a mailbox of
/// `capacity` messages: `init` is a plain function without parameters that returns a class.
/// Shared by `actor.start` and the supervisors' actor children.
pub(crate) fn actor_problems(module: &Module, init: FuncId, capacity: u32) -> Vec<String> {
    let mut out = Vec::new();
    let Some(data) = module.functions.get(init) else {
        let count = module.functions.len();
        out.push(format!("function #{} does not exist; the module has {count} functions", index(init)));
        return out;
    };
    let name = format!("${}", data.name);
    if data.is_async {
        out.push(format!("{name} is async; an actor runs plain functions, each to completion before the next message"));
    }
    if !(1..=MAX_MAILBOX).contains(&capacity) {
        out.push(format!("a mailbox holds 1 to {MAX_MAILBOX} messages, not {capacity}"));
    }
    if !data.params.is_empty() {
        out.push(format!(
            "{name} has parameters; the function that makes an actor's state takes none, so that a restart can \
             make it again"
        ));
    }
    if !matches!(data.ret, Type::Class(_)) {
        out.push(format!("{name} returns {}; an actor's state is a class value", data.ret.display(module)));
    }
    out
}

impl<'a> OpCheck<'_, 'a> {
    /// One actor operation.
    pub(super) fn actor_op(&mut self, kind: &OpKind) {
        self.require_async();
        match kind {
            OpKind::ActorStart { dest, init, capacity } => self.start(*dest, *init, *capacity),
            OpKind::ActorCall { dest, actor, handler, args } => {
                if let Some(ret) = self.message(*actor, *handler, args) {
                    let name = self.name.clone();
                    self.call_result(*dest, &Type::Option(Box::new(ret.clone())), &name);
                }
            }
            OpKind::ActorSend { actor, handler, args } => {
                self.message(*actor, *handler, args);
            }
            OpKind::SupervisorChild { dest, tree, path } => self.supervisor_child(*dest, *tree, path),
            _ => {}
        }
    }

    /// The function `id`, named in `self.name` from here on, or an error when it does not exist.
    pub(super) fn named_function(&mut self, id: FuncId) -> Option<(&'a FunctionData, String)> {
        let Some(data) = self.cx.module.functions.get(id) else {
            let message = format!(
                "`{}` names function #{}, which does not exist; the module has {} functions",
                self.name,
                index(id),
                self.cx.module.functions.len()
            );
            self.error(code::INVALID_ID, message);
            return None;
        };
        let name = format!("${}", data.name);
        self.name = format!("{} {name}", self.name);
        Some((data, name))
    }

    fn start(&mut self, dest: LocalId, init: FuncId, capacity: u32) {
        let module = self.cx.module;
        if let Some(data) = module.functions.get(init) {
            self.name = format!("{} ${}", self.name, data.name);
        }
        let problems = actor_problems(module, init, capacity);
        let ok = problems.is_empty();
        for message in problems {
            self.error(code::ACTOR_MESSAGE, message);
        }
        match module.functions.get(init).map(|f| &f.ret) {
            Some(Type::Class(class)) if ok => self.expect_dest(dest, &Type::Actor(*class)),
            _ => {
                self.local(dest);
            }
        }
    }

    /// The actor, handler and arguments of `actor.call` or `actor.send`; the handler's result
    /// type when they fit together.
    fn message(&mut self, actor: LocalId, handler: FuncId, args: &[Operand]) -> Option<&'a Type> {
        let types: Vec<_> = args.iter().map(|a| self.operand(a)).collect();
        let class = self.actor_class(actor);
        let (data, name) = self.named_function(handler)?;
        if data.is_async {
            let message =
                format!("{name} is async; an actor runs plain functions, each to completion before the next message");
            self.error(code::ACTOR_MESSAGE, message);
        }
        let state = data.params.first().and_then(|p| data.locals.get(*p)).map(|l| &l.ty);
        let expected = class.map(|c| Type::reference(true, Type::Class(c)));
        match (state, &expected) {
            (Some(found), Some(expected)) if found == expected => {}
            (found, _) => {
                let state = expected.as_ref().map_or("`&mut` the actor's state class".to_owned(), |t| self.show(t));
                let found = found.map_or("nothing".to_owned(), |t| self.show(t));
                let message =
                    format!("the first parameter of {name} is {found}; a handler's first parameter is {state}");
                self.error(code::ACTOR_MESSAGE, message);
                return None;
            }
        }
        self.call_args(args, &types, data, &name, Crossing::Message);
        Some(&data.ret)
    }

    /// `supervisor.child`: the path names an actor below a tree, and the destination is its
    /// handle. The supervisors themselves are checked with the module (`verifier/supervisors.rs`).
    fn supervisor_child(&mut self, dest: LocalId, tree: SupervisorId, path: &[u32]) {
        let module = self.cx.module;
        let Some(mut at) = module.supervisors.get(tree) else {
            self.local(dest);
            self.error(code::INVALID_ID, format!("supervisor #{} does not exist", index(tree)));
            return;
        };
        if module.is_nested_supervisor(tree) {
            let message = format!("supervisor {} is a child of another; a path starts at a tree", at.name);
            self.error(code::SUPERVISOR, message);
        }
        let mut actor = None;
        for (i, &step) in path.iter().enumerate() {
            let child = at.children.get(step as usize);
            match child.map(|c| &c.kind) {
                Some(ChildKind::Supervisor(nested)) if i + 1 < path.len() => match module.supervisors.get(*nested) {
                    Some(next) => at = next,
                    None => break,
                },
                Some(ChildKind::Actor { init, .. }) if i + 1 == path.len() => actor = Some(*init),
                _ => break,
            }
        }
        let Some(init) = actor else {
            self.local(dest);
            let message =
                format!("the path below supervisor {} does not end at an actor", module.supervisors[tree].name);
            self.error(code::SUPERVISOR, message);
            return;
        };
        match module.functions.get(init).map(|f| &f.ret) {
            Some(Type::Class(class)) => self.expect_dest(dest, &Type::Actor(*class)),
            // The state function itself is reported with the module.
            _ => {
                self.local(dest);
            }
        }
    }

    /// The state class of the `Actor<C>` (or `&Actor<C>`) local `actor`.
    fn actor_class(&mut self, actor: LocalId) -> Option<ClassId> {
        let ty = self.local(actor)?;
        match ty.through_ref().0 {
            Type::Actor(class) => Some(*class),
            _ => {
                let what = format!("operand {}", self.cx.name(actor));
                self.mismatch(&what, ty, "an actor Actor<C>");
                None
            }
        }
    }
}
