//! Actors as items: each actor's state (a class named as the actor), the function that makes
//! a fresh state (`Name.init`), its handlers (`Name.h`, whose first parameter is the state,
//! `inout`, named `self`) and its mailbox's capacity.

use super::*;
use crate::check::H418;

/// The mailbox capacity of an actor that does not declare one, in messages.
pub(crate) const DEFAULT_MAILBOX: u32 = 64;

/// The largest mailbox an actor may declare (Low's V251 bound).
const MAX_MAILBOX: u64 = 1 << 20;

/// An actor: its state class, the function making the state, the mailbox and the handlers.
pub(crate) struct ActorInfo {
    pub class: ClassIdx,
    pub init: FnIdx,
    pub capacity: u32,
    /// Each handler's written name and function.
    pub handlers: Vec<(String, FnIdx)>,
}

impl<'f> Items<'f> {
    /// Declares the state class of `decl`; the actor itself is collected later, with the
    /// functions.
    pub(super) fn declare_actor(&mut self, decl: &ast::ActorDecl, diags: &mut Vec<Diagnostic>) -> ClassIdx {
        let class = self.declare_class(&decl.name, decl.span, diags);
        self.classes[class].actor = Some(self.actors.len());
        self.actors.push(ActorInfo { class, init: usize::MAX, capacity: DEFAULT_MAILBOX, handlers: Vec::new() });
        class
    }

    /// The functions of the actor whose state is `class`: `Name.init`, then each handler.
    pub(super) fn collect_actor(&mut self, decl: &'f ast::ActorDecl, class: ClassIdx, diags: &mut Vec<Diagnostic>) {
        let actor = self.classes[class].actor.unwrap_or_default();
        let name = &decl.name.name;
        if let Some((n, span)) = decl.mailbox {
            if (1..=MAX_MAILBOX).contains(&n) {
                self.actors[actor].capacity = n as u32;
            } else {
                diags.push(
                    error(H418, span, format!("a mailbox holds 1 to {MAX_MAILBOX} messages, not {n}"), "out of range")
                        .note("the mailbox bounds how many messages wait; senders wait while it is full"),
                );
            }
        }
        self.actors[actor].init = self.fns.len();
        self.fns.push(FnInfo {
            name: format!("{name}.init"),
            params: Vec::new(),
            ret: Some(Ty::Class(class)),
            defaults: Vec::new(),
            body: FnBody::Block(&decl.init),
            span: decl.span,
            route: None,
            fails: false,
            test: None,
            queue: None,
        });
        for handler in &decl.handlers {
            if self.actors[actor].handlers.iter().any(|(h, _)| *h == handler.name.name) {
                diags.push(error(
                    H207,
                    handler.name.span,
                    format!("actor `{name}` has two handlers named `{}`", handler.name.name),
                    "declared again here",
                ));
                continue;
            }
            if handler.fails {
                diags.push(
                    error(H418, handler.name.span, "an actor's handler cannot fail", "declared `fails`").note(
                        "a handler that traps crashes its actor; a caller sees a failure only when the actor stops",
                    ),
                );
            }
            let state = Ident { name: "self".into(), span: handler.name.span };
            let mut params = vec![ParamInfo { name: state, ty: Some(Ty::Class(class)), mode: ParamMode::Inout }];
            params.extend(self.collect_params(&handler.params, diags, plain_param_mode));
            if let Some(p) = handler.params.iter().find(|p| p.inout) {
                diags.push(
                    error(H418, p.span, format!("handler `{}` takes an `inout` parameter", handler.name.name), "inout")
                        .note(
                            "a message is handled by the actor, which cannot write to its sender's values; \
                             return the new value instead",
                        ),
                );
            }
            if let Some(p) = handler.params.iter().find(|p| p.name.name == "self") {
                diags.push(
                    error(H210, p.name.span, "a handler's `self` is the actor's state", "declared again here")
                        .note("name the parameter differently"),
                );
            }
            let ret = handler.ret.as_ref().map_or(Some(Ty::Unit), |t| self.resolve_ty(t, diags));
            let idx = self.fns.len();
            self.actors[actor].handlers.push((handler.name.name.clone(), idx));
            self.fns.push(FnInfo {
                name: format!("{name}.{}", handler.name.name),
                params,
                ret,
                defaults: Vec::new(),
                body: FnBody::Block(&handler.body),
                span: handler.span,
                route: None,
                fails: false,
                test: None,
                queue: None,
            });
        }
    }

    /// The actors as TIR.
    pub fn tir_actors(&self) -> Vec<tir::Actor> {
        self.actors
            .iter()
            .map(|a| tir::Actor {
                class: a.class,
                init: a.init,
                capacity: a.capacity,
                handlers: a.handlers.iter().map(|(_, f)| *f).collect(),
            })
            .collect()
    }
}

/// Whether `ty` holds an actor handle anywhere.
pub(in crate::check) fn holds_actor(ty: &Ty) -> bool {
    match ty {
        Ty::Actor(_) => true,
        Ty::Array(t) | Ty::Option(t) | Ty::Task(t) => holds_actor(t),
        Ty::Map(k, v) => holds_actor(k) || holds_actor(v),
        _ => false,
    }
}

/// The error for an actor handle held by `what` (a field, an array, …).
pub(crate) fn actor_stored(span: Span, what: &str) -> Diagnostic {
    error(H418, span, format!("an actor handle cannot be held by {what}"), "holds an actor handle").note(
        "keep it in a `let` or `var`, pass it to functions, and `clone()` it for another holder of the same actor",
    )
}
