//! Checking of actors: `Name.start()`, calls of handlers `a.h(args)` (which fail when the actor
//! has stopped, so they are marked with `try` or `try?`), `send a.h(args)`, and `try? call`.
//!
//! The rules (docs/language.md, "Actors"): a handler's arguments are consumed, as a spawn's
//! are, and none is `inout` (a message cannot write to its sender's values); handlers and the
//! state's initial values never wait (checked across functions in `check.rs`); only the
//! actor's own `init` builds its state. A function that starts, calls or sends to an actor
//! waits, so it is async.

use nagi_syntax::ast::{self, Span};

use super::expr::mk;
use nagi_low::Diagnostic;

use super::{Body, H418, H419, error};
use crate::tir::{ClassIdx, Expr, ExprKind, SupervisedChild, Ty};

/// A supervised actor's place: its tree, its path below the tree, and its state class.
pub(super) type SupervisedActor = (usize, Vec<u32>, ClassIdx);

impl Body<'_, '_> {
    /// The actor whose name `e` is, when `e` is a name that no variable hides.
    pub(super) fn actor_named(&self, e: &ast::Expr) -> Option<usize> {
        let ast::ExprKind::Name(id) = &e.kind else { return None };
        if self.lookup(&id.name).is_some() {
            return None;
        }
        let class = self.items.class_named(&id.name)?;
        self.items.class_at(class)?.actor
    }

    /// Whether `e` is a variable holding an actor handle, or a supervised actor.
    pub(super) fn is_actor_handle(&self, e: &ast::Expr) -> bool {
        if let Some(found) = self.supervisor_path(e) {
            return found.is_ok();
        }
        let ast::ExprKind::Name(id) = &e.kind else { return false };
        self.lookup(&id.name).is_some_and(|l| matches!(self.locals[l].ty, Ty::Actor(_)))
    }

    /// When `e` is `Supervisor.child.…` (its first name a supervisor that no variable hides):
    /// the tree, the path below it and the actor's state class, or why it names no actor.
    pub(super) fn supervisor_path(&self, e: &ast::Expr) -> Option<Result<SupervisedActor, Diagnostic>> {
        let mut names = Vec::new();
        let mut at = e;
        let base = loop {
            match &at.kind {
                ast::ExprKind::Field { object, field } => {
                    names.push(field);
                    at = object;
                }
                ast::ExprKind::Name(id) => break id,
                _ => return None,
            }
        };
        names.reverse();
        if self.lookup(&base.name).is_some() {
            return None;
        }
        let items = self.items;
        let &first = items.supervisor_by_name.get(&base.name)?;
        let (tree, mut path) = items.supervisor_place(first);
        let mut current = first;
        for (i, name) in names.iter().enumerate() {
            let supervisor = &items.supervisors[current].decl;
            let Some(position) = supervisor.children.iter().position(|(n, _)| *n == name.name) else {
                let list: Vec<String> = supervisor.children.iter().map(|(n, _)| format!("`{n}`")).collect();
                let d = error(
                    H419,
                    name.span,
                    format!("supervisor `{}` has no child `{}`", supervisor.name, name.name),
                    "unknown child",
                )
                .note(format!("its children are {}", list.join(", ")));
                return Some(Err(d));
            };
            path.push(position as u32);
            match supervisor.children[position].1 {
                SupervisedChild::Supervisor(nested) => current = nested,
                SupervisedChild::Actor(actor) if i + 1 == names.len() => {
                    return Some(Ok((tree, path, items.actors[actor].class)));
                }
                SupervisedChild::Actor(_) => {
                    let d = error(
                        H419,
                        names[i + 1].span,
                        format!("`{}` is an actor, with no children", name.name),
                        "not a child",
                    )
                    .note("call a handler on the actor: `Supervisor.child.handler(…)`");
                    return Some(Err(d));
                }
            }
        }
        let d = error(
            H419,
            e.span,
            format!("`{}` is a supervisor, not an actor", items.supervisors[current].decl.name),
            "a supervisor",
        )
        .note("name one of its actors: `Supervisor.child`");
        Some(Err(d))
    }

    /// A supervised actor's handle, or the report of why the path names none.
    pub(super) fn supervised_actor(&mut self, found: Result<SupervisedActor, Diagnostic>, span: Span) -> Option<Expr> {
        match found {
            Ok((tree, path, class)) => {
                self.effects.suspends.get_or_insert(span);
                Some(mk(ExprKind::SupervisorChild { tree, path }, Ty::Actor(class), span))
            }
            Err(d) => {
                self.report(d);
                None
            }
        }
    }

    /// `Name.method(args)` on the actor `actor`: only `start()` exists.
    pub(super) fn actor_start(
        &mut self,
        actor: usize,
        method: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let class = self.items.actors[actor].class;
        let name = self.items.classes[class].name.clone();
        if method.name != "start" {
            self.report(
                error(H418, method.span, format!("actor `{name}` has no function `{}`", method.name), "unknown")
                    .note(format!("start the actor with `{name}.start()`, then call its handlers on the handle")),
            );
            return None;
        }
        if !self.arity("start", 0, args, span) {
            return None;
        }
        self.effects.suspends.get_or_insert(span);
        Some(mk(ExprKind::ActorStart { actor }, Ty::Actor(class), span))
    }

    /// `handle.h(args)`: a call of handler `h` of the actor `handle` holds; a failing call
    /// unless it is `send`'s message (`send` is true).
    pub(super) fn actor_call(
        &mut self,
        receiver: &ast::Expr,
        method: &ast::Ident,
        args: &[ast::Expr],
        send: bool,
        span: Span,
    ) -> Option<Expr> {
        let handle = self.infer_value(receiver, None)?;
        let Ty::Actor(class) = handle.ty else { return None };
        let items = self.items;
        let actor = &items.actors[items.classes[class].actor?];
        let name = &items.classes[class].name;
        let Some(&(_, handler)) = actor.handlers.iter().find(|(h, _)| *h == method.name) else {
            let list: Vec<String> = actor.handlers.iter().map(|(h, _)| format!("`{h}`")).collect();
            let note = if list.is_empty() {
                format!("`{name}` has no handlers")
            } else {
                format!("the handlers of `{name}` are {}", list.join(", "))
            };
            self.report(
                error(H418, method.span, format!("actor `{name}` has no handler `{}`", method.name), "unknown handler")
                    .note(note),
            );
            return None;
        };
        let info = &items.fns[handler];
        // The first parameter is the state, which the actor passes.
        let params = &info.params[1..];
        if !self.arity(&method.name, params.len(), args, span) {
            return None;
        }
        let mut out = Vec::with_capacity(args.len());
        // A handler's parameters are never `inout` (reported where it is declared).
        for (arg, param) in args.iter().zip(params) {
            out.push(match &param.ty {
                Some(ty) => self.check_expr(arg, ty)?,
                None => return None,
            });
        }
        self.effects.suspends.get_or_insert(span);
        if !send {
            let shown = match &receiver.kind {
                ast::ExprKind::Name(id) => format!("{}.{}", id.name, method.name),
                _ => format!("{name}.{}", method.name),
            };
            self.failing_call(&shown, span);
        }
        let ret = info.ret.clone()?;
        let call = ExprKind::ActorCall { actor: Box::new(handle), handler, args: out };
        Some(mk(call, if send { Ty::Unit } else { ret }, span))
    }

    /// `send handle.h(args)`.
    pub(super) fn send(&mut self, message: &ast::Expr, span: Span) -> Option<Expr> {
        match &message.kind {
            ast::ExprKind::MethodCall { receiver, method, args } if self.is_actor_handle(receiver) => {
                let call = self.actor_call(receiver, method, args, true, message.span)?;
                Some(mk(ExprKind::Send(Box::new(call)), Ty::Unit, span))
            }
            _ => {
                self.report(
                    error(H418, message.span, "`send` sends a message to an actor", "not a handler call")
                        .note("write `send a.handler(…)`, where `a` holds an actor's handle"),
                );
                None
            }
        }
    }

    /// `try? call`: the call's failure gives `none` (or `false`, for a call without a result).
    pub(super) fn try_option(&mut self, call: &ast::Expr, span: Span) -> Option<Expr> {
        let value = self.handled_call(call, "try?", span)?;
        if let Ty::Option(_) = value.ty {
            let found = self.ty_name(&value.ty);
            self.report(error(H418, span, format!("`try?` of a call that gives `{found}`"), "already an option").note(
                "an option of an option is not a type; match on `catch` of the call, or handle the failure \
                     with `try` in a function that fails",
            ));
            return None;
        }
        let ty = if value.ty == Ty::Unit { Ty::Bool } else { Ty::Option(Box::new(value.ty.clone())) };
        Some(mk(ExprKind::TryOption(Box::new(value)), ty, span))
    }

    /// The one failing call of a `try?` or a `catch` (`form`), checked with its failure
    /// handled where it happens.
    pub(super) fn handled_call(&mut self, call: &ast::Expr, form: &str, span: Span) -> Option<Expr> {
        let is_call = matches!(call.kind, ast::ExprKind::Call { .. } | ast::ExprKind::Http { .. })
            || matches!(&call.kind, ast::ExprKind::MethodCall { receiver, .. }
                if self.is_actor_handle(receiver) || self.supervisor_path(receiver).is_some());
        if !is_call {
            self.report(
                error(H418, call.span, format!("`{form}` applies to one call that can fail"), "not such a call")
                    .note(format!("write `{form} f(…)` or `{form} a.handler(…)`; use `try` to pass failures on")),
            );
            return None;
        }
        let outer = (self.catching.replace(call.span), std::mem::replace(&mut self.caught, false));
        let value = self.infer(call, None);
        let caught = std::mem::replace(&mut self.caught, outer.1);
        self.catching = outer.0;
        let value = value?;
        if !caught {
            self.report(error(super::H412, span, "this call cannot fail", "no failing call").note(format!(
                "`{form}` marks a call of a function declared `fails` or of an actor's handler; remove it"
            )));
            return None;
        }
        Some(value)
    }
}
