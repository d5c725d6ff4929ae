//! The types of the actor operations: `actor.start` makes an `Actor<C>` from a plain function
//! without parameters whose result is the class `C`; `actor.call` and `actor.send` run a plain
//! handler whose first parameter is `&mut C` on the actor's state, with owned arguments for the
//! others (V251, V250), and `actor.call` gives the handler's result as an option. All three
//! belong in async functions (V225).

use super::{Crossing, OpCheck};
use crate::entities::{ArenaGet, ClassId, FuncId, LocalId, index};
use crate::module::FunctionData;
use crate::ops::{OpKind, Operand};
use crate::types::Type;
use crate::verifier::code;

/// The largest mailbox `actor.start` may declare, in messages (`nagi_runtime::actors::MAX_CAPACITY`
/// bounds it the same).
const MAX_MAILBOX: u32 = 1 << 20;

impl<'a> OpCheck<'_, 'a> {
    /// One actor operation.
    pub(super) fn actor_op(&mut self, kind: &OpKind) {
        if !self.cx.func.is_async {
            let message =
                format!("`{}` is only allowed in async functions, and ${} is not async", self.name, self.cx.func.name);
            self.error(code::AWAIT_OUTSIDE_ASYNC, message);
        }
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
            _ => {}
        }
    }

    /// The function `id`, named in `self.name` from here on, or an error when it does not exist.
    fn named_function(&mut self, id: FuncId) -> Option<(&'a FunctionData, String)> {
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
        if data.is_async {
            let message =
                format!("{name} is async; an actor runs plain functions, each to completion before the next message");
            self.error(code::ACTOR_MESSAGE, message);
        }
        Some((data, name))
    }

    fn start(&mut self, dest: LocalId, init: FuncId, capacity: u32) {
        let Some((data, name)) = self.named_function(init) else {
            self.local(dest);
            return;
        };
        if !(1..=MAX_MAILBOX).contains(&capacity) {
            let message = format!("a mailbox holds 1 to {MAX_MAILBOX} messages, not {capacity}");
            self.error(code::ACTOR_MESSAGE, message);
        }
        if !data.params.is_empty() {
            let message = format!(
                "{name} has parameters; the function that makes an actor's state takes none, so that a \
                 restart can make it again"
            );
            self.error(code::ACTOR_MESSAGE, message);
        }
        match data.ret {
            Type::Class(class) => self.expect_dest(dest, &Type::Actor(class)),
            ref other => {
                let message = format!("{name} returns {}; an actor's state is a class value", self.show(other));
                self.error(code::ACTOR_MESSAGE, message);
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
