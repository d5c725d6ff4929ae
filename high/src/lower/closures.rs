//! Lowering of the array library's closure methods (`check/closures.rs`): each is written as
//! the TIR loop a person would write by hand, then lowered as statements are, so a closure
//! costs nothing beyond that loop (no closure value, no call, no allocation but the result's):
//!
//! - `map`: `result = []; for x in xs { result.push(body) }`
//! - `filter`: `result = []; for x in xs { if body { result.push(x.clone()) } }`
//! - `any` / `all`: `result = false / true; for x in xs { if body / !body { result = !result; break } }`
//! - `find`: `result = none; for x in xs { if body { result = x.clone(); break } }`
//! - `count`: `result = 0; for x in xs { if body { result = result + 1 } }`
//! - `fold`: `acc = init; for x in xs { acc = body }`
//!
//! A chain (`xs.filter(f).map(g).count(h)`) is one loop: each chained `filter` becomes an
//! `if f { … }` around the rest and each `map` a `let` of the next closure's element, around
//! the last method's statements. A computed array (not a place) is first held in a hidden
//! local, which the loop borrows;
//! `fold`'s initial value is evaluated after the array, as written.
//!
//! A map's methods are the same loops over its entries (`for k, v in m`), `map` and `filter`
//! inserting into a new map (`result.insert(k.clone(), …)`) where an array's push.

use nagi_low::{BinaryOp, LocalId, ScalarType};

use super::{FnCx, ScopeKind};
use crate::tir::{ArrayLoop, Block, Builtin, Expr, ExprKind, LocalKind, LoopMethod, Place, Stmt, StmtKind, Ty};

impl FnCx<'_> {
    /// `each` into `dest`.
    pub(super) fn array_loop(&mut self, each: &ArrayLoop, ty: &Ty, dest: LocalId) {
        let span = each.body.span;
        let stmt = |kind: StmtKind| Stmt { kind, span };
        let local = |idx: usize, ty: &Ty| Expr { kind: ExprKind::Place(Place::Local(idx)), ty: ty.clone(), span };
        let mut stmts = Vec::new();
        // The loop borrows the array where it is, or the hidden local holding a computed one.
        let array = match each.held {
            None => each.array.clone(),
            Some(held) => {
                stmts.push(stmt(StmtKind::Let { local: held, value: each.array.clone() }));
                local(held, &each.array.ty)
            }
        };
        let elem = self.tir.locals[each.element].ty.clone();
        let element = local(each.element, &elem);
        // The element itself, as a value the result owns: a `map`'s new value is moved.
        let lent = self.tir.locals[each.element].kind == LocalKind::LoopVar;
        let owned = if elem.is_copy() || !lent {
            element.clone()
        } else {
            Expr {
                kind: ExprKind::Builtin { builtin: Builtin::Clone, args: vec![element.clone()] },
                ty: elem.clone(),
                span,
            }
        };
        let result = local(each.result, ty);
        let set = |value: Expr| stmt(StmtKind::Assign { place: Place::Local(each.result), value });
        let when = |then: Vec<Stmt>, otherwise: Option<Vec<Stmt>>| {
            let cond = each.body.clone();
            let then_block = Block { stmts: then };
            let else_block = otherwise.map(|stmts| Block { stmts });
            stmt(StmtKind::If { cond, then_block, else_block })
        };
        let bool_expr = |b: bool| Expr { kind: ExprKind::Bool(b), ty: Ty::Bool, span };
        // A map's `map` and `filter` build a map of the same keys, each the loop's key owned.
        let key = each.key.map(|key| {
            let ty = self.tir.locals[key].ty.clone();
            let read = local(key, &ty);
            if ty.is_copy() {
                read
            } else {
                Expr { kind: ExprKind::Builtin { builtin: Builtin::Clone, args: vec![read] }, ty, span }
            }
        });
        let insert = |key: Expr, value: Expr| {
            let kind =
                ExprKind::MapInsert { map: Place::Local(each.result), key: Box::new(key), value: Box::new(value) };
            stmt(StmtKind::Expr(Expr { kind, ty: Ty::Unit, span }))
        };
        let start = match each.method {
            LoopMethod::Map | LoopMethod::Filter if key.is_some() => ExprKind::MapNew,
            LoopMethod::Map | LoopMethod::Filter => ExprKind::Array(Vec::new()),
            LoopMethod::Any => ExprKind::Bool(false),
            LoopMethod::All => ExprKind::Bool(true),
            LoopMethod::Find => ExprKind::None,
            LoopMethod::Count => ExprKind::Int(0),
            LoopMethod::Fold => ExprKind::None,
        };
        let first = match &each.fold {
            Some((_, init)) => init.clone(),
            None => Expr { kind: start, ty: ty.clone(), span },
        };
        stmts.push(stmt(StmtKind::Let { local: each.result, value: first }));
        let push = |value: Expr| {
            let kind = ExprKind::Push { array: Place::Local(each.result), value: Box::new(value) };
            stmt(StmtKind::Expr(Expr { kind, ty: Ty::Unit, span }))
        };
        // The last method's statements, inside the chained `map`s and `filter`s, each handing
        // the next its element: a `filter` holds the rest in its `if` (the shape LLVM's loop
        // vectorizer if-converts; a `continue` out of the middle of the body it does not).
        let mut body = Vec::new();
        body.extend(match each.method {
            LoopMethod::Map => match &key {
                Some(key) => vec![insert(key.clone(), each.body.clone())],
                None => vec![push(each.body.clone())],
            },
            LoopMethod::Filter => match &key {
                Some(key) => vec![when(vec![insert(key.clone(), owned)], None)],
                None => vec![when(vec![push(owned)], None)],
            },
            LoopMethod::Any => vec![when(vec![set(bool_expr(true)), stmt(StmtKind::Break)], None)],
            LoopMethod::All => vec![when(Vec::new(), Some(vec![set(bool_expr(false)), stmt(StmtKind::Break)]))],
            LoopMethod::Find => {
                let some = Expr { kind: ExprKind::OptionSome(Box::new(owned)), ty: ty.clone(), span };
                vec![when(vec![set(some), stmt(StmtKind::Break)], None)]
            }
            LoopMethod::Count => {
                let one = Expr { kind: ExprKind::Int(1), ty: Ty::I64, span };
                let kind = ExprKind::Binary {
                    op: BinaryOp::Add,
                    operand_ty: ScalarType::I64,
                    lhs: Box::new(result.clone()),
                    rhs: Box::new(one),
                };
                vec![when(vec![set(Expr { kind, ty: Ty::I64, span })], None)]
            }
            LoopMethod::Fold => vec![set(each.body.clone())],
        });
        for (i, stage) in each.stages.iter().enumerate().rev() {
            let rest = std::mem::take(&mut body);
            let next = each.stages.get(i + 1).map_or(each.element, |s| s.element);
            if stage.method == LoopMethod::Filter {
                // After a `filter`, the next closure's parameter is the same element: one Low local.
                self.bindings[next] = self.bindings[stage.element];
                let cond = stage.body.clone();
                body.push(stmt(StmtKind::If { cond, then_block: Block { stmts: rest }, else_block: None }));
            } else {
                body.push(stmt(StmtKind::Let { local: next, value: stage.body.clone() }));
                body.extend(rest);
            }
        }
        let first = each.stages.first().map_or(each.element, |s| s.element);
        stmts.push(stmt(match each.key {
            Some(key) => StmtKind::ForEntries { key, value: each.element, map: array, body: Block { stmts: body } },
            None => StmtKind::ForEach { local: first, array, body: Block { stmts: body } },
        }));
        // The statements are built here and freed after: marks on their expressions must not
        // outlive them.
        let marks = self.pinned.snapshot();
        self.scoped(ScopeKind::Block, |cx| {
            let (last, lead) = stmts.split_last().expect("the loop");
            for s in lead {
                cx.stmt(s);
            }
            // The loop's body is one level deeper than here.
            cx.closure_loops.push(cx.loop_depth() + 1);
            cx.stmt(last);
            cx.closure_loops.pop();
            cx.eval_into(&result, dest);
        });
        self.pinned.restore(marks);
    }
}
