//! Lowering of expressions and places: where a value goes, and whether reading it moves,
//! copies or borrows.

use nagi_low::{BinaryOp, Constant, LocalId, OpKind, Operand, RuntimeFn, ScalarType, StrPart, Type, UnaryOp};

use super::{FnCx, Own};
use crate::tir::{Builtin, DbOp, Expr, ExprKind, ParamMode, Place, Ty};

impl FnCx<'_> {
    pub(super) fn low_ty(&self, ty: &Ty) -> Type {
        self.shared.types.low(ty)
    }

    /// Evaluates `expr` for its effect; a value it produces is dropped.
    pub(super) fn eval_effect(&mut self, expr: &Expr) {
        if expr.ty == Ty::Unit {
            self.eval_unit(expr);
        } else {
            let dest = self.temp(self.low_ty(&expr.ty));
            self.eval_into(expr, dest);
        }
    }

    /// Evaluates a `unit` expression (a call without a result, `print`, `push`).
    fn eval_unit(&mut self, expr: &Expr) {
        match &expr.kind {
            ExprKind::Call { func, args } => self.call(*func, args, None),
            ExprKind::ActorCall { actor, handler, args } => self.actor_call(actor, *handler, args, None),
            ExprKind::Send(call) => self.send(call),
            ExprKind::Fetch(fetch) => self.fetch(fetch, None),
            ExprKind::Builtin { builtin: Builtin::Print, args } => self.print(&args[0]),
            ExprKind::Builtin { builtin: Builtin::Fail, args } => self.fail(&args[0], &args[1]),
            ExprKind::Builtin { builtin: Builtin::SetHeader, args } => self.set_header(&args[0], &args[1]),
            ExprKind::Builtin { builtin: Builtin::Assert, args } => self.assert(&args[0], &args[1]),
            ExprKind::Builtin { builtin: Builtin::AssertEq, args } => self.assert_eq(&args[0], &args[1], &args[2]),
            ExprKind::Push { array, value } => {
                let held = self.in_flight.len();
                let value = self.held_operand(value);
                let array = self.place_base(array, true, expr.span);
                self.emit(OpKind::ArrayPush { array, value });
                self.in_flight.truncate(held);
            }
            ExprKind::Reorder { row, array, key } => {
                let array = self.borrow_mut_arg(array, expr.span);
                let mut args = vec![Operand::Local(array)];
                // `sort_by` names its class and the key field, a constant the verifier checks.
                let class = match self.element_type(array) {
                    Type::Class(class) if key.is_some() => Some(class),
                    _ => None,
                };
                args.extend(key.map(|k| Operand::Const(Constant::I64(k as i64))));
                self.runtime_call(*row, None, args, class);
            }
            ExprKind::SortByKeys { array, keys } => {
                // The keys first, while the array is only read; then it is sorted by them.
                let keys = self.borrow_arg(keys);
                let array = self.borrow_mut_arg(array, expr.span);
                let args = vec![Operand::Local(array), Operand::Local(keys)];
                self.runtime_call(RuntimeFn::ArraySortByKeys, None, args, None);
            }
            _ => {
                let dest = self.temp(Type::Unit);
                self.eval_into(expr, dest);
            }
        }
    }

    /// An operand holding `expr`'s value, for a consuming position or a copy type: constants
    /// and copy-type locals are used as they are, a non-copy local is moved, anything else is
    /// computed into a temporary.
    pub(super) fn operand(&mut self, expr: &Expr) -> Operand {
        match &expr.kind {
            ExprKind::Int(v) => {
                Operand::Const(if expr.ty == Ty::I32 { Constant::I32(*v as i32) } else { Constant::I64(*v) })
            }
            ExprKind::Float(v) => Operand::Const(Constant::F64(*v)),
            ExprKind::Bool(v) => Operand::Const(Constant::Bool(*v)),
            // A pinned copy-type local is read now, into a temporary, below.
            ExprKind::Place(Place::Local(local))
                if !(self.bindings[*local].is_ref || expr.ty.is_copy() && self.pinned.contains(expr)) =>
            {
                let low = self.bindings[*local].low;
                if expr.ty.is_copy() {
                    Operand::Local(low)
                } else {
                    self.move_local(*local, expr);
                    Operand::Local(low)
                }
            }
            _ => {
                let dest = self.temp(self.low_ty(&expr.ty));
                self.eval_into(expr, dest);
                // The consumer takes the temporary's value, so the statement must not drop it.
                if !expr.ty.is_copy() {
                    self.state.insert(dest, Own::Moved);
                }
                Operand::Local(dest)
            }
        }
    }

    /// [`FnCx::operand`] for an operation that evaluates other expressions before it is
    /// emitted: an owned value is kept in flight, so that a failure meanwhile drops it; the
    /// caller truncates [`FnCx::in_flight`] once the operation has taken it.
    pub(super) fn held_operand(&mut self, expr: &Expr) -> Operand {
        let operand = self.operand(expr);
        if let Operand::Local(local) = operand
            && !expr.ty.is_copy()
        {
            self.in_flight.push(local);
        }
        operand
    }

    /// A local holding `expr`'s value (see [`FnCx::operand`]).
    pub(super) fn operand_local(&mut self, expr: &Expr) -> LocalId {
        match self.operand(expr) {
            Operand::Local(local) => local,
            Operand::Const(value) => {
                let dest = self.temp(value.ty());
                self.emit(OpKind::Const { dest, value });
                dest
            }
        }
    }

    /// Marks a High local's value as moved, reporting a move of something already moved or a
    /// move that a loop would repeat.
    fn move_local(&mut self, local: usize, expr: &Expr) {
        let low = self.bindings[local].low;
        let name = self.tir.locals[local].name.clone();
        match self.state.get(&low) {
            Some(Own::Live) => {}
            _ => {
                self.error("H420", format!("`{name}` is used after it was moved"), expr.span, "value used after move");
                return;
            }
        }
        if self.matched.contains(&low) {
            self.error(
                "H424",
                format!("`{name}` cannot move while a `match` arm borrows its payload; move a `.clone()` instead"),
                expr.span,
                "moved inside the arm",
            );
            return;
        }
        let declared_depth = self.loop_depth_of.get(&low).copied().unwrap_or(0);
        if self.closure_loops.iter().any(|&depth| depth > declared_depth) {
            self.error(
                "H422",
                format!(
                    "`{name}` is captured by a closure, which runs once for each element, so it cannot move \
                     out of it; move a `.clone()` instead"
                ),
                expr.span,
                "moved out of the closure",
            );
            return;
        }
        if self.loop_depth() > declared_depth {
            self.error(
                "H422",
                format!(
                    "`{name}` is moved inside a loop, so the next iteration would use it after the move; \
                     move a `.clone()` instead, or assign `{name}` a new value before the loop repeats"
                ),
                expr.span,
                "moved inside a loop",
            );
            return;
        }
        self.state.insert(low, Own::Moved);
    }

    /// After a refused move, treats `dest` as holding a value anyway, so that one mistake is
    /// reported once rather than again at every later use of `dest`.
    fn pretend_assigned(&mut self, dest: LocalId) {
        if !self.f.locals[dest].ty.is_copy() {
            self.state.insert(dest, Own::Live);
        }
    }

    /// Checks that a read of a High local sees a value.
    fn check_live(&mut self, local: usize, expr_span: nagi_syntax::ast::Span) {
        let low = self.bindings[local].low;
        if !self.bindings[local].is_ref && !self.f.locals[low].ty.is_copy() && self.state.get(&low) != Some(&Own::Live)
        {
            let name = self.tir.locals[local].name.clone();
            self.error("H420", format!("`{name}` is used after it was moved"), expr_span, "value used after move");
        }
    }

    /// A local through which `expr` can be read without consuming it: the local itself (owned
    /// or a reference), a reference to a field or element, or a temporary holding a computed
    /// value (dropped at the end of the statement).
    ///
    /// A pinned place (one a later operand changes) is read now: a copy-type value into a
    /// temporary, any other value cloned into one.
    pub(super) fn read(&mut self, expr: &Expr) -> LocalId {
        match &expr.kind {
            ExprKind::Place(place) if self.pinned.contains(expr) && !expr.ty.is_copy() => {
                let src = self.place_base_checked(place, false, expr.span);
                let dest = self.temp(self.low_ty(&expr.ty));
                self.emit(OpKind::Clone { dest, src });
                dest
            }
            ExprKind::Place(place) if !self.pinned.contains(expr) => self.place_base_checked(place, false, expr.span),
            _ => {
                // A computed value is kept in a temporary that the statement drops at its end.
                let dest = self.temp(self.low_ty(&expr.ty));
                self.eval_into(expr, dest);
                dest
            }
        }
    }

    /// A reference of exactly type `&T` to `expr`'s value, for a borrowed call parameter or a
    /// runtime argument: a fresh `borrow` of an owned local, a reborrow of a `&mut`, or the
    /// shared reference itself.
    pub(super) fn borrow_arg(&mut self, expr: &Expr) -> LocalId {
        let local = self.read(expr);
        match self.f.locals[local].ty.clone() {
            Type::Ref { mutable: false, .. } => local,
            Type::Ref { mutable: true, pointee } => {
                let dest = self.temp(Type::reference(false, *pointee));
                self.emit(OpKind::Borrow { dest, src: local, mutable: false });
                dest
            }
            owned => {
                let dest = self.temp(Type::reference(false, owned));
                self.emit(OpKind::Borrow { dest, src: local, mutable: false });
                dest
            }
        }
    }

    /// A `&mut T` to `place`, for an `inout` argument.
    pub(super) fn borrow_mut_arg(&mut self, place: &Place, span: nagi_syntax::ast::Span) -> LocalId {
        let local = self.place_base_checked(place, true, span);
        match self.f.locals[local].ty.clone() {
            Type::Ref { mutable: true, .. } => local,
            owned => {
                let dest = self.temp(Type::reference(true, owned));
                self.emit(OpKind::Borrow { dest, src: local, mutable: true });
                dest
            }
        }
    }

    fn place_base_checked(&mut self, place: &Place, mutable: bool, span: nagi_syntax::ast::Span) -> LocalId {
        self.place_base(place, mutable, span)
    }

    /// A local that holds `place` or refers to it, on which field and element operations
    /// act: the local itself for `Local`, a `field.ref[_mut]` or `array.ref[_mut]` for
    /// projections.
    ///
    /// Reading through a place whose root local was moved is reported (at `span`).
    pub(super) fn place_base(&mut self, place: &Place, mutable: bool, span: nagi_syntax::ast::Span) -> LocalId {
        match place {
            Place::Local(local) => {
                self.check_live(*local, span);
                self.bindings[*local].low
            }
            Place::Field(base, field) => {
                let object = self.place_base(base, mutable, span);
                let ty = self.field_type(object, *field);
                let dest = self.temp(Type::reference(mutable, ty));
                self.emit(OpKind::FieldRef { dest, object, field: *field as u32, mutable });
                dest
            }
            Place::Index(base, index) => {
                let array = self.place_base(base, mutable, span);
                let index = self.operand(index);
                let element = self.element_type(array);
                let dest = self.temp(Type::reference(mutable, element));
                self.emit(OpKind::ArrayRef { dest, array, index, mutable });
                dest
            }
        }
    }

    fn field_type(&self, object: LocalId, field: usize) -> Type {
        match self.f.locals[object].ty.through_ref().0 {
            Type::Class(class) => {
                let index = self.shared.types.classes.iter().position(|c| c == class).unwrap_or(0);
                self.low_ty(&self.shared.program.classes[index].fields[field].ty)
            }
            other => other.clone(),
        }
    }

    fn element_type(&self, array: LocalId) -> Type {
        match self.f.locals[array].ty.through_ref().0 {
            Type::Array(element) => (**element).clone(),
            other => other.clone(),
        }
    }

    /// Evaluates `expr` into `dest`, which holds no value (or a copy-type value).
    pub(super) fn eval_into(&mut self, expr: &Expr, dest: LocalId) {
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => {
                let Operand::Const(value) = self.operand(expr) else { return };
                self.emit(OpKind::Const { dest, value });
            }
            ExprKind::Str(text) => self.emit(OpKind::StringLit { dest, value: text.clone() }),
            ExprKind::None => self.emit(OpKind::OptionNone { dest }),
            ExprKind::Place(place) => self.read_place_into(place, expr, dest),
            ExprKind::Array(items) => {
                self.pin_clobbered(&items.iter().collect::<Vec<_>>());
                self.emit(OpKind::ArrayNew { dest });
                for item in items {
                    let value = self.operand(item);
                    self.emit(OpKind::ArrayPush { array: dest, value });
                }
            }
            ExprKind::New { class, fields } => {
                // Evaluated as written, stored in declaration order.
                self.pin_clobbered(&fields.iter().map(|(_, value)| value).collect::<Vec<_>>());
                let mut slots: Vec<Option<Operand>> = vec![None; fields.len()];
                let held = self.in_flight.len();
                for (field, value) in fields {
                    let operand = self.held_operand(value);
                    if let Some(slot) = slots.get_mut(*field) {
                        *slot = Some(operand);
                    }
                }
                // The checker gives every field exactly once; a gap would fail verification.
                let fields = slots.into_iter().map(|s| s.unwrap_or(Operand::Const(Constant::Unit))).collect();
                self.emit(OpKind::New { dest, class: self.shared.types.classes[*class], fields });
                self.in_flight.truncate(held);
            }
            ExprKind::Unary { op, operand } => {
                let ty = operand.ty.scalar().unwrap_or(ScalarType::I64);
                let arg = self.operand(operand);
                self.emit(OpKind::Unary { dest, op: *op, ty, arg });
            }
            ExprKind::Binary { op, operand_ty, lhs, rhs } => {
                self.pin_clobbered(&[&**lhs, &**rhs]);
                let lhs = self.operand(lhs);
                let rhs = self.operand(rhs);
                self.emit(OpKind::Binary { dest, op: *op, ty: *operand_ty, lhs, rhs });
            }
            ExprKind::Concat(lhs, rhs) => {
                self.pin_clobbered(&[&**lhs, &**rhs]);
                let lhs = self.read(lhs);
                let rhs = self.read(rhs);
                self.emit(OpKind::StrConcat { dest, parts: vec![StrPart::Local(lhs), StrPart::Local(rhs)] });
            }
            ExprKind::Interp(parts) => {
                self.pin_clobbered(&parts.iter().collect::<Vec<_>>());
                let parts = parts
                    .iter()
                    .map(|part| match &part.kind {
                        ExprKind::Str(text) => StrPart::Text(text.clone()),
                        _ => StrPart::Local(self.read(part)),
                    })
                    .collect();
                self.emit(OpKind::StrConcat { dest, parts });
            }
            ExprKind::StrEq { negated, lhs, rhs } => {
                self.pin_clobbered(&[&**lhs, &**rhs]);
                let lhs = self.read(lhs);
                let rhs = self.read(rhs);
                self.emit(OpKind::StrEq { dest, lhs, rhs });
                if *negated {
                    self.emit(OpKind::Unary {
                        dest,
                        op: UnaryOp::Not,
                        ty: ScalarType::Bool,
                        arg: Operand::Local(dest),
                    });
                }
            }
            ExprKind::And(lhs, rhs) | ExprKind::Or(lhs, rhs) => {
                // The left side's value goes into `dest` before the right side runs; when the
                // right side reads `dest` (`b = a || b`), it must see the old value, so the
                // result is built in a temporary instead.
                if self.mentions(rhs, dest) {
                    let result = self.temp(Type::Bool);
                    self.eval_into(expr, result);
                    self.emit(OpKind::Copy { dest, src: result });
                    return;
                }
                // Short-circuit: the right side runs only when the left does not decide.
                self.eval_into(lhs, dest);
                let cond = if matches!(expr.kind, ExprKind::And(..)) {
                    Operand::Local(dest)
                } else {
                    let negated = self.temp(Type::Bool);
                    self.emit(OpKind::Unary {
                        dest: negated,
                        op: UnaryOp::Not,
                        ty: ScalarType::Bool,
                        arg: Operand::Local(dest),
                    });
                    Operand::Local(negated)
                };
                let (then_block, _) = self.emit_if(cond, false);
                self.in_block(then_block, |cx| cx.statement(|cx| cx.eval_into(rhs, dest)));
            }
            ExprKind::Cast { expr: inner, to } => {
                let arg = self.operand(inner);
                self.emit(OpKind::Cast { dest, to: *to, arg });
            }
            ExprKind::Call { func, args } => self.call(*func, args, Some(dest)),
            ExprKind::Spawn { func, args, blocking } => self.spawn(*func, args, *blocking, dest),
            ExprKind::Join(handle) => self.join(handle, dest),
            ExprKind::ActorStart { actor } => self.actor_start(*actor, dest),
            ExprKind::SupervisorChild { tree, path } => self.supervisor_child(*tree, path, dest),
            ExprKind::ActorCall { actor, handler, args } => self.actor_call(actor, *handler, args, Some(dest)),
            ExprKind::TryOption(call) => self.try_option(call, dest),
            ExprKind::Catch { call, failure } => {
                let Ty::Enum(result) = expr.ty else { return };
                self.catch(call, result, *failure, dest);
            }
            ExprKind::Fetch(fetch) => self.fetch(fetch, Some(dest)),
            ExprKind::Builtin { builtin, args } => self.builtin(*builtin, args, dest),
            ExprKind::MapNew | ExprKind::MapLookup { .. } | ExprKind::MapInsert { .. } | ExprKind::MapRemove { .. } => {
                self.map_expr(expr, dest)
            }
            ExprKind::Push { .. } | ExprKind::Reorder { .. } | ExprKind::SortByKeys { .. } | ExprKind::Send(_) => {
                self.eval_unit(expr);
                self.emit(OpKind::Const { dest, value: Constant::Unit });
            }
            ExprKind::Db { op, class, sql, position, args } => self.db(*op, *class, sql, position, args, dest),
            ExprKind::QueuePush { queue, job, delay } => self.queue_push(*queue, job, delay.as_deref(), Some(dest)),
            ExprKind::QueueDeadLetters { queue, class } => self.queue_dead_letters(*queue, *class, dest),
            ExprKind::QueueRetry { queue, id } => self.queue_retry(*queue, id, dest),
            ExprKind::ArrayLoop(each) => self.array_loop(each, &expr.ty, dest),
            ExprKind::OptionSome(inner) => {
                let value = self.operand(inner);
                self.emit(OpKind::OptionSome { dest, value });
            }
            ExprKind::Variant { enum_idx, variant, payload } => {
                let payload = payload.as_ref().map(|p| self.operand(p));
                let enum_id = self.shared.types.enums[*enum_idx];
                self.emit(OpKind::EnumNew { dest, enum_id, variant: *variant, payload });
            }
        }
    }

    /// Reads `place` into `dest`: copies a copy-type value, moves an owned non-copy local, and
    /// refuses to move out of a borrow, a field or an element.
    fn read_place_into(&mut self, place: &Place, expr: &Expr, dest: LocalId) {
        let copy = expr.ty.is_copy();
        match place {
            Place::Local(local) => {
                let binding = self.bindings[*local];
                if binding.is_ref {
                    if copy {
                        self.emit(OpKind::Load { dest, reference: binding.low });
                    } else {
                        let name = &self.tir.locals[*local].name;
                        let message = format!("cannot move out of `{name}`, which is borrowed; use `{name}.clone()`");
                        self.error("H421", message, expr.span, "borrowed value moved");
                        self.pretend_assigned(dest);
                    }
                } else if copy {
                    self.emit(OpKind::Copy { dest, src: binding.low });
                } else {
                    self.move_local(*local, expr);
                    self.emit(OpKind::Move { dest, src: binding.low });
                }
            }
            Place::Field(base, field) => {
                if !copy {
                    self.error(
                        "H423",
                        "cannot move a value out of a field; use `.clone()` to copy it".into(),
                        expr.span,
                        "field moved",
                    );
                    self.pretend_assigned(dest);
                    return;
                }
                let object = self.place_base(base, false, expr.span);
                self.emit(OpKind::FieldGet { dest, object, field: *field as u32 });
            }
            Place::Index(base, index) => {
                if !copy {
                    self.error(
                        "H423",
                        "cannot move a value out of an array element; use `.clone()` to copy it".into(),
                        expr.span,
                        "element moved",
                    );
                    self.pretend_assigned(dest);
                    return;
                }
                let array = self.place_base(base, false, expr.span);
                let index = self.operand(index);
                self.emit(OpKind::ArrayGet { dest, array, index });
            }
        }
    }

    /// A call of a program function; arguments follow the callee's parameter modes.
    fn call(&mut self, func: usize, args: &[Expr], dest: Option<LocalId>) {
        let function = &self.shared.program.functions[func];
        let (unit, fails) = (function.ret == Ty::Unit, function.fails);
        if fails {
            // The result is an option: `none` passes the failure on, a value is unwrapped.
            let result = self.failing_call_result(func, args);
            self.pass_failure_on(result, if unit { None } else { dest });
            return;
        }
        let (operands, awaited) = self.call_operands(func, args);
        let dest = if unit { None } else { dest };
        let callee = self.shared.functions[func];
        self.emit(OpKind::Call { dest, callee, args: operands, awaited });
    }

    /// The operands of a call of `func` with `args`, by its parameter modes, and whether the
    /// call is awaited.
    fn call_operands(&mut self, func: usize, args: &[Expr]) -> (Vec<Operand>, bool) {
        let callee = &self.shared.program.functions[func];
        let modes: Vec<ParamMode> = callee
            .params
            .iter()
            .map(|p| match callee.locals[*p].kind {
                crate::tir::LocalKind::Param(mode) => mode,
                _ => ParamMode::Borrowed,
            })
            .collect();
        let awaited = callee.is_async;
        self.pin_clobbered(&args.iter().collect::<Vec<_>>());
        let mut operands = Vec::with_capacity(args.len());
        for (arg, mode) in args.iter().zip(modes) {
            let operand = match mode {
                ParamMode::Inout => match &arg.kind {
                    ExprKind::Place(place) => Operand::Local(self.borrow_mut_arg(place, arg.span)),
                    _ => self.operand(arg),
                },
                ParamMode::Borrowed if !arg.ty.is_copy() => Operand::Local(self.borrow_arg(arg)),
                ParamMode::Borrowed | ParamMode::Owned => self.operand(arg),
            };
            operands.push(operand);
        }
        (operands, awaited)
    }

    /// A call of the failing function `func`: the local holding its option result.
    pub(super) fn failing_call_result(&mut self, func: usize, args: &[Expr]) -> LocalId {
        let (operands, awaited) = self.call_operands(func, args);
        let result = self.temp(self.shared.program_result(func));
        let callee = self.shared.functions[func];
        self.emit(OpKind::Call { dest: Some(result), callee, args: operands, awaited });
        result
    }

    fn print(&mut self, arg: &Expr) {
        let (row, operand) = match arg.ty {
            Ty::I32 => (RuntimeFn::PrintI32, self.operand(arg)),
            Ty::I64 => (RuntimeFn::PrintI64, self.operand(arg)),
            Ty::F64 => (RuntimeFn::PrintF64, self.operand(arg)),
            Ty::Bool => (RuntimeFn::PrintBool, self.operand(arg)),
            _ => (RuntimeFn::PrintStr, Operand::Local(self.borrow_arg(arg))),
        };
        self.runtime_call(row, None, vec![operand], None);
    }

    fn builtin(&mut self, builtin: Builtin, args: &[Expr], dest: LocalId) {
        match builtin {
            Builtin::Print => {
                self.print(&args[0]);
                self.emit(OpKind::Const { dest, value: Constant::Unit });
            }
            Builtin::Fail => self.fail(&args[0], &args[1]),
            Builtin::SetHeader | Builtin::Assert | Builtin::AssertEq => {
                match builtin {
                    Builtin::SetHeader => self.set_header(&args[0], &args[1]),
                    Builtin::Assert => self.assert(&args[0], &args[1]),
                    _ => self.assert_eq(&args[0], &args[1], &args[2]),
                }
                self.emit(OpKind::Const { dest, value: Constant::Unit });
            }
            Builtin::Min | Builtin::Max => {
                self.pin_clobbered(&[&args[0], &args[1]]);
                let ty = args[0].ty.scalar().unwrap_or(ScalarType::I64);
                let lhs = self.operand(&args[0]);
                let rhs = self.operand(&args[1]);
                let op = if builtin == Builtin::Min { BinaryOp::Min } else { BinaryOp::Max };
                self.emit(OpKind::Binary { dest, op, ty, lhs, rhs });
            }
            Builtin::Abs => {
                let ty = args[0].ty.scalar().unwrap_or(ScalarType::I64);
                let arg = self.operand(&args[0]);
                self.emit(OpKind::Unary { dest, op: UnaryOp::Abs, ty, arg });
            }
            Builtin::ToString => {
                let row = match args[0].ty {
                    Ty::I32 => RuntimeFn::FmtI32,
                    Ty::I64 => RuntimeFn::FmtI64,
                    Ty::F64 => RuntimeFn::FmtF64,
                    Ty::Bool => RuntimeFn::FmtBool,
                    _ => {
                        let src = self.read(&args[0]);
                        self.emit(OpKind::Clone { dest, src });
                        return;
                    }
                };
                let arg = self.operand(&args[0]);
                self.runtime_call(row, Some(dest), vec![arg], None);
            }
            Builtin::Len => {
                let src = self.read(&args[0]);
                if args[0].ty == Ty::String {
                    self.emit(OpKind::StrLen { dest, string: src });
                } else if matches!(args[0].ty, Ty::Map(..)) {
                    self.emit(OpKind::MapLen { dest, map: src });
                } else {
                    self.emit(OpKind::ArrayLen { dest, array: src });
                }
            }
            Builtin::Runtime(row) => {
                self.pin_clobbered(&args.iter().collect::<Vec<_>>());
                let operands = args
                    .iter()
                    .map(|arg| if arg.ty.is_copy() { self.operand(arg) } else { Operand::Local(self.borrow_arg(arg)) })
                    .collect();
                self.runtime_call(row, Some(dest), operands, None);
            }
            Builtin::Clone => {
                if args[0].ty.is_copy() {
                    let value = self.operand(&args[0]);
                    match value {
                        Operand::Local(src) => self.emit(OpKind::Copy { dest, src }),
                        Operand::Const(value) => self.emit(OpKind::Const { dest, value }),
                    }
                } else {
                    let src = self.read(&args[0]);
                    self.emit(OpKind::Clone { dest, src });
                }
            }
        }
    }

    /// A `&str` of `value`: a borrow of a new temporary `String`, which the statement drops.
    pub(super) fn str_temp(&mut self, value: String) -> LocalId {
        let text = self.temp(Type::String);
        self.emit(OpKind::StringLit { dest: text, value });
        let text_ref = self.temp(Type::reference(false, Type::String));
        self.emit(OpKind::Borrow { dest: text_ref, src: text, mutable: false });
        text_ref
    }

    /// A database operation: the SQL text as a temporary `String`, borrowed, and the
    /// placeholder values (scalars by value, strings by reference), awaited. The text starts
    /// with a comment naming the statement's source position, `/*nagi users.nagi:17*/ `, which
    /// the runtime labels the statement's metrics with (SQLite skips it).
    fn db(&mut self, op: DbOp, class: Option<usize>, sql: &str, position: &str, args: &[Expr], dest: LocalId) {
        let mut operands = vec![Operand::Local(self.str_temp(format!("/*nagi {position}*/ {sql}")))];
        self.pin_clobbered(&args.iter().collect::<Vec<_>>());
        for arg in args {
            let operand = if arg.ty.is_copy() { self.operand(arg) } else { Operand::Local(self.borrow_arg(arg)) };
            operands.push(operand);
        }
        let row = match op {
            DbOp::Exec => RuntimeFn::DbExec,
            DbOp::Query => RuntimeFn::DbQuery,
            DbOp::QueryOne => RuntimeFn::DbQueryOne,
        };
        let class = class.map(|c| self.shared.types.classes[c]);
        self.runtime_call(row, Some(dest), operands, class);
    }
}
