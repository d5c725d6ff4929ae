//! Lowering of expected failures. A function that may fail returns an option in Low: `some`
//! of its result when it returns, `none` when it failed, the failure (status and message)
//! recorded by `rtcall http.fail` (runtime/src/failure.rs). `fail(status, message)` records,
//! drops everything still owned and returns `none`; a call of a failing function is followed by
//! a test of its option that returns `none` the same way, passing the failure on, and unwraps
//! the value otherwise. A route handler's `none` is answered by the runtime: with the recorded
//! failure, or 404 when there is none (a route of result `T?` keeps `Option<T>` as its Low
//! result, since the two cannot be confused).

use nagi_low::{Constant, LocalData, LocalId, OpKind, Operand, RuntimeFn, Type};

use super::{FnCx, Own, ScopeKind, Shared};
use crate::tir::{self, ClassIdx, EnumIdx, Expr, Ty};

impl Shared<'_> {
    /// The Low result type of `function`: its result, in an option when it may fail (a route
    /// whose result is already an option keeps it as it is).
    pub(super) fn result(&self, function: &tir::Function) -> Type {
        let ret = self.types.low(&function.ret);
        if wraps(function) { Type::Option(Box::new(ret)) } else { ret }
    }

    /// [`Shared::result`] of the function at `index`.
    pub(super) fn program_result(&self, index: usize) -> Type {
        self.result(&self.program.functions[index])
    }
}

/// Whether `function`'s returned values are wrapped in `some`.
fn wraps(function: &tir::Function) -> bool {
    function.fails && !(function.is_route && matches!(function.ret, Ty::Option(_)))
}

impl FnCx<'_> {
    /// What a `return` of `value` returns: `some(value)` in a function that may fail (`some` of
    /// unit for a function without a result), `value` otherwise.
    pub(super) fn returned(&mut self, value: Option<Operand>) -> Option<Operand> {
        if !wraps(self.tir) {
            return value;
        }
        let wrapped = self.temp(self.f.ret.clone());
        let value = value.unwrap_or(Operand::Const(Constant::Unit));
        self.emit(OpKind::OptionSome { dest: wrapped, value });
        // The `return` that follows takes it.
        self.state.insert(wrapped, Own::Moved);
        Some(Operand::Local(wrapped))
    }

    /// `fail(status, message)`: records the failure, then returns `none`.
    pub(super) fn fail(&mut self, status: &Expr, message: &Expr) {
        self.pin_clobbered(&[status, message]);
        let status = self.operand(status);
        let message = self.borrow_arg(message);
        self.runtime_call(RuntimeFn::HttpFail, None, vec![status, Operand::Local(message)], None);
        self.return_failure();
    }

    /// `set_header(name, value)`: the `http.set_header` row with both strings borrowed.
    pub(super) fn set_header(&mut self, name: &Expr, value: &Expr) {
        self.pin_clobbered(&[name, value]);
        let name = self.borrow_arg(name);
        let value = self.borrow_arg(value);
        self.runtime_call(RuntimeFn::HttpSetHeader, None, vec![Operand::Local(name), Operand::Local(value)], None);
    }

    /// After a call of a failing function into `result`: returns `none` when it failed, and
    /// otherwise unwraps its value into `dest` (when the caller wants it).
    pub(super) fn pass_failure_on(&mut self, result: LocalId, dest: Option<LocalId>) {
        let ok = self.temp(Type::Bool);
        self.emit(OpKind::OptionIsSome { dest: ok, option: result });
        let (_, failed) = self.emit_if(Operand::Local(ok), true);
        let failed = failed.expect("asked for an else block");
        self.in_block(failed, |cx| cx.return_failure());
        // A unit result needs no unwrapping: `some(())` owns nothing, and the option is a copy
        // type.
        if let Some(dest) = dest {
            self.emit(OpKind::OptionUnwrap { dest, option: result });
            self.state.insert(result, Own::Moved);
        }
    }

    /// `catch call` into `dest`, a `Result<T>` (`result`): `Ok` of the call's value, or
    /// `Failed` of a `Failure` (`failure`) made of the recorded failure, which is taken.
    pub(super) fn catch(&mut self, call: &Expr, result: EnumIdx, failure: ClassIdx, dest: LocalId) {
        let Some(outcome) = self.handled_call(call) else { return };
        let enum_id = self.shared.types.enums[result];
        let ok = self.temp(Type::Bool);
        self.emit(OpKind::OptionIsSome { dest: ok, option: outcome });
        let (returned, failed) = self.emit_if(Operand::Local(ok), true);
        let failed = failed.expect("asked for an else block");
        self.in_block(returned, |cx| {
            let payload = (call.ty != Ty::Unit).then(|| {
                let value = cx.temp(cx.low_ty(&call.ty));
                cx.emit(OpKind::OptionUnwrap { dest: value, option: outcome });
                cx.state.insert(value, Own::Moved);
                Operand::Local(value)
            });
            cx.emit(OpKind::EnumNew { dest, enum_id, variant: 0, payload });
        });
        self.in_block(failed, |cx| {
            // `none`, which owns nothing, but the verifier wants every path to end the option.
            if !cx.f.locals[outcome].ty.is_copy() {
                cx.emit(OpKind::Drop { local: outcome });
            }
            // The message moves into the `Failure` at once, so no scope needs to own it.
            let (status, message) = cx.take_failure_aside();
            let class = cx.shared.types.classes[failure];
            let value = cx.temp(Type::Class(class));
            let fields = vec![Operand::Local(status), Operand::Local(message)];
            cx.emit(OpKind::New { dest: value, class, fields });
            cx.state.insert(message, Own::Moved);
            cx.emit(OpKind::EnumNew { dest, enum_id, variant: 1, payload: Some(Operand::Local(value)) });
            cx.state.insert(value, Own::Moved);
        });
        // The call's option was unwrapped on the one path, and dropped on the other.
        self.state.insert(outcome, Own::Moved);
        self.state.insert(dest, Own::Live);
    }

    /// Whether leaving the function from here runs code other than drops: the end of a
    /// `scope` of tasks, or a deferred call.
    fn unwind_runs_code(&self) -> bool {
        self.scopes.iter().any(|scope| {
            matches!(scope.kind, ScopeKind::Tasks(_))
                || scope
                    .owned
                    .iter()
                    .any(|l| self.f.locals[*l].ty == Type::Defer && self.state.get(l) == Some(&Own::Live))
        })
    }

    /// The recorded failure's status and message, taken into locals that no scope owns: the
    /// caller moves the message on (`catch`) or records it again and drops it (leaving).
    fn take_failure_aside(&mut self) -> (LocalId, LocalId) {
        let status = self.unowned_local(Type::I64);
        self.runtime_call(RuntimeFn::HttpFailureStatus, Some(status), Vec::new(), None);
        let message = self.unowned_local(Type::String);
        self.runtime_call(RuntimeFn::HttpTakeFailure, Some(message), Vec::new(), None);
        (status, message)
    }

    /// A fresh local that no scope owns, so that no scope's end drops it.
    fn unowned_local(&mut self, ty: Type) -> LocalId {
        let name = self.fresh_name("t");
        self.f.locals.alloc(LocalData { name, ty })
    }

    /// Drops everything still owned (values in flight too) and returns `none`.
    fn return_failure(&mut self) {
        // Counted as moved, but the operation that takes them comes after this failure: on
        // this path they are still owned. The states stay as they are for the path that goes on.
        for local in self.in_flight.clone().into_iter().rev() {
            self.emit(OpKind::Drop { local });
        }
        // Leaving may run code (a `scope`'s end waits for its tasks, maybe resuming on another
        // thread; a deferred call may handle failures of its own), and the failure is recorded
        // in a per-thread slot: it is taken before and recorded again after.
        let kept = self.unwind_runs_code().then(|| self.take_failure_aside());
        self.unwind_all();
        if let Some((status, message)) = kept {
            let borrowed = self.unowned_local(Type::reference(false, Type::String));
            self.emit(OpKind::Borrow { dest: borrowed, src: message, mutable: false });
            let args = vec![Operand::Local(status), Operand::Local(borrowed)];
            self.runtime_call(RuntimeFn::HttpFail, None, args, None);
            self.emit(OpKind::Drop { local: message });
            self.state.insert(message, Own::Moved);
        }
        let none = self.temp(self.f.ret.clone());
        self.emit(OpKind::OptionNone { dest: none });
        self.emit(OpKind::Return { value: Some(Operand::Local(none)) });
        // Only this path holds it, and the `return` took it; the code after the enclosing `if`
        // (which shares the ownership states) must not drop it.
        self.state.insert(none, Own::Moved);
    }
}
