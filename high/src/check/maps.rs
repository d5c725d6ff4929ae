//! `Map<K, V>`: `Map.new()` (typed by where it goes, as `[]` is), `m.get(k)` and
//! `m.contains(k)` on any map value (borrowed), `m.insert(k, v)` and `m.remove(k)` on a map place
//! that may be modified, and `for k, v in m`.
//!
//! The rules: `get` gives the value as an option, copied or cloned (the map keeps its own);
//! `insert` moves the key and the value in; `remove` moves the value out; the key of `get`,
//! `contains` and `remove` is only read. While a `for` walks a map place, the place may not
//! change (H406), as for arrays.

use nagi_syntax::ast::{self, Ident, Span};

use super::expr::mk;
use super::stmt::Mutation;
use super::{Body, H304, H314, error};
use crate::tir::{Block, Expr, ExprKind, LocalKind, StmtKind, Ty};

impl Body<'_, '_> {
    /// `Map.new()`: an empty map of the expected type.
    pub(super) fn map_new(&mut self, args: &[ast::Expr], hint: Option<&Ty>, span: Span) -> Option<Expr> {
        if !self.arity("Map.new", 0, args, span) {
            return None;
        }
        let ty = match hint {
            Some(ty @ Ty::Map(..)) => ty.clone(),
            Some(Ty::Option(inner)) if matches!(**inner, Ty::Map(..)) => (**inner).clone(),
            _ => {
                self.report(
                    error(H304, span, "the key and value types of this empty map are unknown", "type needed")
                        .note("write the type where the map is stored, as in `var m: Map<String, i64> = Map.new()`"),
                );
                return None;
            }
        };
        Some(mk(ExprKind::MapNew, ty, span))
    }

    /// `m.get(k)` or `m.contains(k)` on the map value `map`.
    pub(super) fn map_lookup(&mut self, map: Expr, method: &Ident, args: &[ast::Expr], span: Span) -> Option<Expr> {
        let Ty::Map(k, v) = map.ty.clone() else {
            for arg in args {
                self.infer(arg, None);
            }
            return self.no_such_method(&map.ty, method, "maps");
        };
        if !self.arity(&method.name, 1, args, span) {
            return None;
        }
        let key = self.check_expr(&args[0], &k)?;
        let contains = method.name == "contains";
        let ty = if contains { Ty::Bool } else { Ty::Option(v) };
        Some(mk(ExprKind::MapLookup { map: Box::new(map), key: Box::new(key), contains }, ty, span))
    }

    /// `m.insert(k, v)` or `m.remove(k)` on a map place that may be modified.
    pub(super) fn map_write(
        &mut self,
        receiver: &ast::Expr,
        method: &Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let target = self.mutable_receiver(receiver, &format!("{} into", method.name));
        let insert = method.name == "insert";
        if !self.arity(&method.name, if insert { 2 } else { 1 }, args, span) {
            return None;
        }
        let (place, ty) = target?;
        let Ty::Map(k, v) = ty.clone() else {
            for arg in args {
                self.infer(arg, None);
            }
            return self.no_such_method(&ty, method, "maps");
        };
        let mutable = self.check_mutation(&place, receiver.span, Mutation::Map);
        let key = self.check_expr(&args[0], &k);
        if insert {
            let value = self.check_expr(&args[1], &v);
            let (key, value) = (Box::new(key?), Box::new(value?));
            return mutable.then(|| mk(ExprKind::MapInsert { map: place, key, value }, Ty::Unit, span));
        }
        let key = Box::new(key?);
        mutable.then(|| mk(ExprKind::MapRemove { map: place, key }, Ty::Option(v), span))
    }

    /// `for key, value in map { body }`.
    pub(super) fn for_entries(
        &mut self,
        key: &ast::Ident,
        value: &ast::Ident,
        map: &ast::Expr,
        body: &ast::Block,
    ) -> Option<StmtKind> {
        let checked = self.infer_value(map, None);
        let types = match checked.as_ref().map(|m| &m.ty) {
            Some(Ty::Map(k, v)) => Some(((**k).clone(), (**v).clone())),
            Some(other) => {
                let found = self.ty_name(other);
                self.report(
                    error(
                        H314,
                        map.span,
                        format!("`for {}, {} in …` needs a map, found `{found}`", key.name, value.name),
                        format!("this is `{found}`"),
                    )
                    .note("two loop variables walk a map's keys and values; an array takes one"),
                );
                None
            }
            None => None,
        };
        let guarded = self.guard_iterated(checked.as_ref());
        let (k, v) = types.unzip();
        let (key_local, value_local, body) = self.entries_body(key, k, value, v, body);
        if guarded {
            self.iterating.pop();
        }
        Some(StmtKind::ForEntries { key: key_local, value: value_local, map: checked?, body })
    }

    /// Declares the two loop variables in the body's scope and checks the body as a loop.
    fn entries_body(
        &mut self,
        key: &ast::Ident,
        key_ty: Option<Ty>,
        value: &ast::Ident,
        value_ty: Option<Ty>,
        body: &ast::Block,
    ) -> (usize, usize, Block) {
        self.open_scope();
        let key_local = self.declare(key, key_ty, false, LocalKind::LoopVar);
        let value_local = self.declare(value, value_ty, false, LocalKind::LoopVar);
        self.loop_depth += 1;
        let body = self.stmts(body);
        self.loop_depth -= 1;
        self.close_scope();
        (key_local, value_local, body)
    }
}
