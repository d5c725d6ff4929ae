//! Statements: declarations and scopes, assignment and mutability, control flow, loops and the
//! iteration guard, `return`, transactions, and the definite-return analysis.

use nagi_syntax::ast::{self, BinaryOp, Span};

use super::expr::{NotPlace, is_number, low_binary, mk};
use super::{Body, H301, H302, H313, H314, H401, H402, H404, H405, H406, H407, H408, a_or_an, error};
use crate::tir::{Block, Expr, ExprKind, LocalKind, ParamMode, Place, Stmt, StmtKind, Ty};

/// How a place is about to be modified, for messages.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mutation {
    Assign,
    Push,
    /// `sort`, `sort_by` or `reverse`, by their row.
    Reorder(nagi_low::RuntimeFn),
    /// A map's `insert` or `remove`.
    Map,
    Inout,
}

impl Body<'_, '_> {
    /// Checks a block in a new scope.
    pub(super) fn block(&mut self, block: &ast::Block) -> Block {
        self.open_scope();
        let out = self.stmts(block);
        self.close_scope();
        out
    }

    /// Checks a block's statements in the current scope (the caller may have declared names
    /// into it, such as parameters or a loop variable, so redeclaring those is an error).
    pub(super) fn stmts(&mut self, block: &ast::Block) -> Block {
        let mut stmts = Vec::with_capacity(block.stmts.len());
        for stmt in &block.stmts {
            let kind = self.stmt(stmt);
            // Statements the checker added in front of this one (see `hoist_indices`).
            let prelude = std::mem::take(&mut self.prelude);
            if let Some(kind) = kind {
                stmts.extend(prelude);
                stmts.push(Stmt { kind, span: stmt.span });
            }
        }
        Block { stmts }
    }

    fn stmt(&mut self, stmt: &ast::Stmt) -> Option<StmtKind> {
        match &stmt.kind {
            ast::StmtKind::Let { mutable, name, ty, value } => self.let_stmt(*mutable, name, ty.as_ref(), value),
            ast::StmtKind::Assign { target, op, value } => self.assign(target, *op, value),
            ast::StmtKind::If { cond, then_block, else_block } => {
                let cond = self.check_expr(cond, &Ty::Bool);
                let then_block = self.block(then_block);
                let else_block = else_block.as_ref().map(|b| self.block(b));
                Some(StmtKind::If { cond: cond?, then_block, else_block })
            }
            ast::StmtKind::IfLet { name, value, then_block, else_block } => {
                let value = self.infer_value(value, None);
                let payload = match value.as_ref().map(|v| &v.ty) {
                    Some(Ty::Option(inner)) => Some((**inner).clone()),
                    Some(other) => {
                        let found = self.ty_name(other);
                        self.report(
                            error(
                                H314,
                                value.as_ref().map_or(stmt.span, |v| v.span),
                                format!("`if let` needs an option, found `{found}`"),
                                format!("this is `{found}`"),
                            )
                            .note("`if let x = e` runs its block when the option `e` holds a value"),
                        );
                        None
                    }
                    None => None,
                };
                self.open_scope();
                let local = self.declare(name, payload, false, LocalKind::IfLet);
                let then_block = self.stmts(then_block);
                self.close_scope();
                let else_block = else_block.as_ref().map(|b| self.block(b));
                Some(StmtKind::IfLet { local, value: value?, then_block, else_block })
            }
            ast::StmtKind::While { cond, body } => {
                let cond = self.check_expr(cond, &Ty::Bool);
                self.loop_depth += 1;
                let body = self.block(body);
                self.loop_depth -= 1;
                Some(StmtKind::While { cond: cond?, body })
            }
            ast::StmtKind::For { var, iter, body } => self.for_stmt(var, iter, body, stmt.span),
            ast::StmtKind::Break | ast::StmtKind::Continue => {
                let word = if matches!(stmt.kind, ast::StmtKind::Break) { "break" } else { "continue" };
                if self.loop_depth == 0 {
                    self.report(error(
                        H405,
                        stmt.span,
                        format!("`{word}` outside of a loop"),
                        "not inside `while` or `for`",
                    ));
                    return None;
                }
                if self.transaction_loop_depth == Some(self.loop_depth) {
                    self.report(
                        error(
                            H408,
                            stmt.span,
                            format!("`{word}` cannot leave a `db.transaction` block"),
                            "leaves the transaction",
                        )
                        .note("the transaction must finish first; set a variable and act on it after the block"),
                    );
                    return None;
                }
                Some(if word == "break" { StmtKind::Break } else { StmtKind::Continue })
            }
            ast::StmtKind::Return(value) => self.return_stmt(value.as_ref(), stmt.span),
            ast::StmtKind::Match { scrutinee, arms } => self.match_stmt(scrutinee, arms, stmt.span),
            ast::StmtKind::Scope(body) => self.scope_stmt(body, stmt.span),
            ast::StmtKind::Defer(call) => self.defer_stmt(call, stmt.span),
            ast::StmtKind::Transaction(body) => {
                self.effects.db_use.get_or_insert(stmt.span);
                if self.transaction_loop_depth.is_some() {
                    self.report(
                        error(
                            H408,
                            stmt.span,
                            "`db.transaction` blocks cannot be nested",
                            "inside another transaction",
                        )
                        .note("the outer transaction already makes its whole block atomic"),
                    );
                }
                let outer = self.transaction_loop_depth.replace(self.loop_depth);
                let body = self.block(body);
                self.transaction_loop_depth = outer;
                Some(StmtKind::Transaction(body))
            }
            ast::StmtKind::Expr(e) => {
                let value = self.infer(e, None);
                // A message to an actor is a call, whatever the handler's name.
                let message = value.as_ref().is_some_and(|v| matches!(v.kind, ExprKind::ActorCall { .. }));
                if !message && !has_effect(e) {
                    let mut d = error(H407, e.span, "this expression's value is unused", "computed and then dropped");
                    d = match &e.kind {
                        ast::ExprKind::Binary { op: BinaryOp::Eq, .. } => {
                            d.note("to assign, write `=` instead of `==`")
                        }
                        _ => d.note("use the value (for example with `let`), or remove the expression"),
                    };
                    self.report(d);
                    return None;
                }
                Some(StmtKind::Expr(value?))
            }
        }
    }

    fn let_stmt(
        &mut self,
        mutable: bool,
        name: &ast::Ident,
        ty: Option<&ast::TypeExpr>,
        value: &ast::Expr,
    ) -> Option<StmtKind> {
        let (declared, value) = match ty {
            Some(ty) => match self.items.resolve_ty(ty, self.diags) {
                Some(declared) => {
                    let value = self.check_expr(value, &declared);
                    (Some(declared), value)
                }
                // The type already has a diagnostic; checking the value against nothing could
                // only add noise such as "`none` needs a type".
                None => (None, None),
            },
            None => {
                let value = self.infer(value, None);
                (value.as_ref().map(|v| v.ty.clone()), value)
            }
        };
        let declared = match declared {
            Some(Ty::Unit) => {
                self.report(
                    error(
                        H313,
                        value.as_ref().map_or(name.span, |v| v.span),
                        format!("`{}` would hold no value", name.name),
                        "its type is unit",
                    )
                    .note("this expression does not produce a value"),
                );
                None
            }
            Some(ty @ Ty::Task(_)) if mutable => {
                self.not_a_task(&ty, name.span, "held by a `var`");
                None
            }
            other => other,
        };
        let local = self.declare(name, declared.clone(), mutable, LocalKind::Binding);
        declared?;
        Some(StmtKind::Let { local, value: value? })
    }

    fn assign(&mut self, target: &ast::Expr, op: Option<BinaryOp>, value: &ast::Expr) -> Option<StmtKind> {
        let (place, ty) = match self.place_expr(target) {
            Ok(p) => p,
            Err(reason) => {
                if let NotPlace::Value = reason {
                    self.infer(target, None);
                    self.report(
                        error(
                            H402,
                            target.span,
                            "cannot assign to this expression",
                            "not a variable, field or element",
                        )
                        .note("the left side of `=` must name storage, such as `x`, `p.name` or `xs[i]`"),
                    );
                }
                self.infer(value, None);
                return None;
            }
        };
        let mutable = self.check_mutation(&place, target.span, Mutation::Assign);
        let (place, value) = match op {
            None => (place, self.check_expr(value, &ty)?),
            Some(op) => {
                let rhs = self.check_expr(value, &ty)?;
                let place = self.hoist_indices(place, &rhs);
                let value = self.compound(op, &place, &ty, target.span, rhs)?;
                (place, value)
            }
        };
        mutable.then_some(StmtKind::Assign { place, value })
    }

    /// The place of a compound assignment, evaluated once: `place op= rhs` reads and then
    /// writes `place`, so an index whose second evaluation could differ from its first — it
    /// calls a function, or reads a local that `rhs` may change — is computed once into a hidden
    /// local declared just before the statement (`xs[f(0)] += f(5)` calls `f(0)` once, before
    /// `f(5)`). Other indices are pure and left in place: reading them twice is the same.
    fn hoist_indices(&mut self, place: Place, rhs: &Expr) -> Place {
        match place {
            Place::Local(_) => place,
            Place::Field(base, field) => Place::Field(Box::new(self.hoist_indices(*base, rhs)), field),
            Place::Index(base, index) => {
                // Inner indices first: they are written, and evaluated, before this one.
                let base = self.hoist_indices(*base, rhs);
                let items = self.items;
                let is_inout = |func: usize, arg: usize| {
                    items.fn_info(func).params.get(arg).is_some_and(|p| p.mode == ParamMode::Inout)
                };
                let changes = index.has_call() || index.roots().into_iter().any(|root| rhs.may_write(root, &is_inout));
                if !changes {
                    return Place::Index(Box::new(base), index);
                }
                let span = index.span;
                let ty = index.ty.clone();
                let local = self.hidden_local("index", ty.clone(), span);
                self.prelude.push(Stmt { kind: StmtKind::Let { local, value: *index }, span });
                Place::Index(Box::new(base), Box::new(mk(ExprKind::Place(Place::Local(local)), ty, span)))
            }
        }
    }

    /// `place op= value` as `place = place op value`.
    fn compound(&mut self, op: BinaryOp, place: &Place, ty: &Ty, target_span: Span, rhs: Expr) -> Option<Expr> {
        let span = Span { start: target_span.start, end: rhs.span.end.max(target_span.end) };
        let read = mk(ExprKind::Place(place.clone()), ty.clone(), target_span);
        if op == BinaryOp::Add && *ty == Ty::String {
            return Some(mk(ExprKind::Concat(Box::new(read), Box::new(rhs)), Ty::String, span));
        }
        if !is_number(ty) {
            let name = self.ty_name(ty);
            let allowed = if op == BinaryOp::Add { "i32, i64, f64 and String" } else { "i32, i64 and f64" };
            self.report(
                error(
                    H302,
                    target_span,
                    format!("cannot apply `{}=` to `{name}`", op.symbol()),
                    format!("this is `{name}`"),
                )
                .note(format!("`{}=` works on {allowed}", op.symbol())),
            );
            return None;
        }
        let operand_ty = ty.scalar()?;
        let low = low_binary(op)?;
        Some(mk(ExprKind::Binary { op: low, operand_ty, lhs: Box::new(read), rhs: Box::new(rhs) }, ty.clone(), span))
    }

    /// Checks that `place` may be modified: rooted at a mutable local and not being iterated.
    /// Reports and returns false otherwise.
    pub(super) fn check_mutation(&mut self, place: &Place, span: Span, how: Mutation) -> bool {
        let root = root_local(place);
        let Some(local) = self.locals.get(root) else { return false };
        let name = local.name.clone();
        if !local.mutable {
            let text = self.place_text(place);
            let captured = self.is_capture(root);
            // Say what the root is: "not declared with `var`" would mislead for a parameter.
            let what = match local.kind {
                _ if captured => "is a capture of the closure (read-only)",
                LocalKind::Binding => "is not declared with `var`",
                LocalKind::Param(ParamMode::Borrowed) => "is a read-only parameter",
                LocalKind::Param(_) => "is a read-only route parameter",
                LocalKind::LoopVar => "is a read-only loop variable",
                LocalKind::IfLet => "is read-only (bound by `if let`)",
                LocalKind::MatchBinding => "is read-only (bound by a `match` pattern)",
            };
            let because =
                if matches!(place, Place::Local(_)) { format!(", which {what}") } else { format!(": `{name}` {what}") };
            let message = match how {
                Mutation::Assign => format!("cannot assign to `{text}`{because}"),
                Mutation::Push => format!("cannot push to `{text}`{because}"),
                Mutation::Reorder(nagi_low::RuntimeFn::ArrayReverse) => format!("cannot reverse `{text}`{because}"),
                Mutation::Reorder(_) => format!("cannot sort `{text}`{because}"),
                Mutation::Map => format!("cannot change the map `{text}`{because}"),
                Mutation::Inout => format!("cannot pass `{text}` as an `inout` argument{because}"),
            };
            let note = match local.kind {
                _ if captured => "a closure passed to a function borrows what it captures for the call; give the \
                                  value back as the closure's result (or use `fold`) and assign it where the closure \
                                  is written"
                    .to_string(),
                LocalKind::Binding => format!("declare it with `var {name}` to make it mutable"),
                LocalKind::Param(ParamMode::Borrowed) => {
                    format!("parameters are read-only; declare it `inout {name}: …` to change the caller's value")
                }
                LocalKind::Param(_) => "route parameters are read-only; copy one into a `var` to change it".to_string(),
                LocalKind::LoopVar => "a loop variable is read-only".to_string(),
                LocalKind::IfLet => {
                    "a name bound by `if let` is read-only; copy it into a `var` to change it".to_string()
                }
                LocalKind::MatchBinding => {
                    "a name bound by a pattern is read-only; copy or clone it into a `var` to change it".to_string()
                }
            };
            self.report(error(H401, span, message, "not mutable").note(note));
            return false;
        }
        // A loop or an arm borrows from the whole of its place's root local (Low tracks a
        // borrow by the local it comes from), so any part of that local is off limits.
        if let Some((borrowed, iterated, by_match)) = self.iterating.iter().find(|(p, _, _)| root_local(p) == root) {
            let (iterated, by_match) = (iterated.clone(), *by_match);
            // A part of the borrowed place itself is named as the place (`xs`, not `xs[…]`).
            let text = if overlaps(borrowed, place) { iterated.clone() } else { self.place_text(place) };
            let diagnostic = if by_match {
                let payload =
                    if text == iterated { "its payload".to_string() } else { format!("the payload of `{iterated}`") };
                error(
                    H406,
                    span,
                    format!("cannot modify `{text}` while a `match` arm borrows {payload}"),
                    "modified inside the arm",
                )
                .note(format!("match on a copy with `match {iterated}.clone()`, or change it after the `match`"))
            } else {
                let message = if text == iterated {
                    format!("cannot modify `{text}` while iterating over it")
                } else {
                    format!("cannot modify `{text}` while iterating over `{iterated}`")
                };
                error(H406, span, message, "modified inside the loop").note(format!(
                    "iterate over a copy with `for … in {iterated}.clone()`, or collect the changes and apply them after the loop"
                ))
            };
            self.report(diagnostic);
            return false;
        }
        true
    }

    /// A place as the user writes it: `u.name`, `xs[…]`.
    pub(super) fn place_text(&self, place: &Place) -> String {
        self.place_text_ty(place).0
    }

    fn place_text_ty(&self, place: &Place) -> (String, Option<Ty>) {
        match place {
            Place::Local(l) => match self.locals.get(*l) {
                Some(local) => (local.name.clone(), Some(local.ty.clone())),
                None => ("?".to_string(), None),
            },
            Place::Field(base, f) => {
                let (text, ty) = self.place_text_ty(base);
                let field = match ty {
                    Some(Ty::Class(c)) => self.items.class_at(c).and_then(|c| c.fields.get(*f).cloned()),
                    _ => None,
                };
                match field {
                    Some(field) => (format!("{text}.{}", field.name), field.ty.clone()),
                    None => (format!("{text}.?"), None),
                }
            }
            Place::Index(base, _) => {
                let (text, ty) = self.place_text_ty(base);
                let elem = match ty {
                    Some(Ty::Array(elem)) => Some(*elem),
                    _ => None,
                };
                (format!("{text}[…]"), elem)
            }
        }
    }

    fn for_stmt(&mut self, var: &ast::Ident, iter: &ast::ForIter, body: &ast::Block, span: Span) -> Option<StmtKind> {
        match iter {
            ast::ForIter::Entries(value, map) => self.for_entries(var, value, map, body),
            ast::ForIter::Range(start, end) => {
                let pair = self.infer_pair(start, end, None, span, "a range");
                let pair = match pair {
                    Some((s, e)) if !matches!(s.ty, Ty::I32 | Ty::I64) => {
                        let found = self.ty_name(&s.ty);
                        self.report(error(
                            H314,
                            s.span,
                            format!("a range needs integers (i32 or i64), found `{found}`"),
                            format!("this is `{found}`"),
                        ));
                        drop(e);
                        None
                    }
                    other => other,
                };
                let ty = pair.as_ref().map(|(s, _)| s.ty.clone());
                let (local, body) = self.loop_body(var, ty, body);
                let (start, end) = pair?;
                Some(StmtKind::ForRange { local, start, end, body })
            }
            ast::ForIter::Each(array) => {
                let value = self.infer_value(array, None);
                let elem = match value.as_ref().map(|v| &v.ty) {
                    Some(Ty::Array(elem)) => Some((**elem).clone()),
                    Some(other) => {
                        let found = self.ty_name(other);
                        self.report(
                            error(
                                H314,
                                array.span,
                                format!("`for` needs an array or a range `a..b`, found `{found}`"),
                                format!("this is `{found}`"),
                            )
                            .note("iterate over an array, or over integers with `for i in 0..n`"),
                        );
                        None
                    }
                    None => None,
                };
                let guarded = self.guard_iterated(value.as_ref());
                let (local, body) = self.loop_body(var, elem, body);
                if guarded {
                    self.iterating.pop();
                }
                Some(StmtKind::ForEach { local, array: value?, body })
            }
        }
    }

    /// While a loop borrows a place's elements or entries, that place must not change: the
    /// place `value` is, if it is one, joins the iterated places. True when it did (the caller
    /// pops it after the body).
    pub(super) fn guard_iterated(&mut self, value: Option<&Expr>) -> bool {
        match value.map(|v| &v.kind) {
            Some(ExprKind::Place(place)) => {
                let name = self.place_text(place);
                self.iterating.push((place.clone(), name, false));
                true
            }
            _ => false,
        }
    }

    /// Declares a loop variable in the body's scope and checks the body as a loop.
    fn loop_body(&mut self, var: &ast::Ident, ty: Option<Ty>, body: &ast::Block) -> (usize, Block) {
        self.open_scope();
        let local = self.declare(var, ty, false, LocalKind::LoopVar);
        self.loop_depth += 1;
        let body = self.stmts(body);
        self.loop_depth -= 1;
        self.close_scope();
        (local, body)
    }

    fn return_stmt(&mut self, value: Option<&ast::Expr>, span: Span) -> Option<StmtKind> {
        if self.transaction_loop_depth.is_some() {
            self.report(
                error(H408, span, "cannot `return` from inside a `db.transaction` block", "leaves the transaction")
                    .note("the transaction must finish first; set a variable and return after the block"),
            );
        }
        let Some(ret) = self.ret.clone() else {
            if let Some(value) = value {
                self.infer(value, None);
            }
            return None;
        };
        let inside = self.transaction_loop_depth.is_none();
        match (value, &ret) {
            (None, Ty::Unit) => inside.then_some(StmtKind::Return(None)),
            (None, ty) => {
                let name = self.ty_name(ty);
                self.report(error(
                    H404,
                    span,
                    format!("{} returns {} `{name}`, so `return` needs a value", self.display_name, a_or_an(&name)),
                    "value missing",
                ));
                None
            }
            (Some(value), Ty::Unit) => {
                let found = self.infer(value, None);
                if found.is_some_and(|v| v.ty == Ty::Unit) {
                    self.report(error(H301, value.span, "this expression has no value to return", "its type is unit"));
                    return None;
                }
                self.report(
                    error(
                        H404,
                        value.span,
                        format!("{} returns no value, so `return` takes none", self.display_name),
                        "unexpected value",
                    )
                    .note("declare a result type, as in `fn f() -> i64`, to return a value"),
                );
                None
            }
            (Some(value), ty) => {
                let value = self.check_expr(value, ty)?;
                inside.then_some(StmtKind::Return(Some(value)))
            }
        }
    }
}

/// The local a place starts from.
pub(super) fn root_local(place: &Place) -> usize {
    place.root()
}

/// Whether two places may name overlapping storage: one is a prefix of the other, with
/// distinct fields apart and any two indices possibly equal.
pub(super) fn overlaps(a: &Place, b: &Place) -> bool {
    enum Step {
        Field(usize),
        Index,
    }
    fn path(place: &Place, out: &mut Vec<Step>) -> usize {
        match place {
            Place::Local(l) => *l,
            Place::Field(base, f) => {
                let root = path(base, out);
                out.push(Step::Field(*f));
                root
            }
            Place::Index(base, _) => {
                let root = path(base, out);
                out.push(Step::Index);
                root
            }
        }
    }
    let (mut pa, mut pb) = (Vec::new(), Vec::new());
    if path(a, &mut pa) != path(b, &mut pb) {
        return false;
    }
    pa.iter().zip(&pb).all(|pair| !matches!(pair, (Step::Field(x), Step::Field(y)) if x != y))
}

/// Whether an expression statement does something: a call of a function, `print`, `push`, or
/// a database operation. Pure builtins and operators computed for nothing are mistakes.
fn has_effect(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Call { callee, .. } => !matches!(callee.name.as_str(), "min" | "max" | "abs" | "to_string"),
        ast::ExprKind::MethodCall { method, .. } => {
            matches!(
                method.name.as_str(),
                "push" | "sort" | "sort_by" | "sort_by_key" | "reverse" | "insert" | "remove"
            )
        }
        ast::ExprKind::Db { .. } | ast::ExprKind::Http { .. } => true,
        ast::ExprKind::Try(inner) | ast::ExprKind::TryOption(inner) | ast::ExprKind::Catch(inner) => {
            has_effect(inner) || is_method_call(inner)
        }
        ast::ExprKind::Send(_) => true,
        // A task started for its effect, whose handle is dropped: the scope still waits for it.
        ast::ExprKind::Spawn(_) | ast::ExprKind::SpawnBlocking(_) => true,
        _ => false,
    }
}

/// Whether `e` is a method call: under `try` or `try?` only a program's calls can fail, so one
/// is an actor's handler.
fn is_method_call(e: &ast::Expr) -> bool {
    matches!(e.kind, ast::ExprKind::MethodCall { .. })
}

/// Definite return: whether every path through `block` ends in `return` (or never ends).
pub(super) fn block_returns(block: &ast::Block) -> bool {
    block.stmts.iter().any(stmt_returns)
}

fn stmt_returns(stmt: &ast::Stmt) -> bool {
    match &stmt.kind {
        ast::StmtKind::Return(_) => true,
        // `fail(…)` returns from the function too, with the failure.
        ast::StmtKind::Expr(ast::Expr { kind: ast::ExprKind::Call { callee, .. }, .. }) => callee.name == "fail",
        ast::StmtKind::If { then_block, else_block: Some(else_block), .. }
        | ast::StmtKind::IfLet { then_block, else_block: Some(else_block), .. } => {
            block_returns(then_block) && block_returns(else_block)
        }
        // `while true` without a `break` never finishes, so what follows is unreachable.
        ast::StmtKind::While { cond, body } => matches!(cond.kind, ast::ExprKind::Bool(true)) && !breaks(body),
        ast::StmtKind::Transaction(body) | ast::StmtKind::Scope(body) => block_returns(body),
        // The checker proves a `match` exhaustive, so it returns when every arm does.
        ast::StmtKind::Match { arms, .. } => !arms.is_empty() && arms.iter().all(|arm| block_returns(&arm.body)),
        _ => false,
    }
}

/// Whether `block` contains a `break` of the loop it belongs to (not of a nested loop).
fn breaks(block: &ast::Block) -> bool {
    block.stmts.iter().any(|stmt| match &stmt.kind {
        ast::StmtKind::Break => true,
        ast::StmtKind::If { then_block, else_block, .. } | ast::StmtKind::IfLet { then_block, else_block, .. } => {
            breaks(then_block) || else_block.as_ref().is_some_and(breaks)
        }
        ast::StmtKind::Transaction(body) | ast::StmtKind::Scope(body) => breaks(body),
        ast::StmtKind::Match { arms, .. } => arms.iter().any(|arm| breaks(&arm.body)),
        _ => false,
    })
}
