//! The types of the task operations: `scope.new` makes a `Scope`, `scope.spawn` starts an async
//! function whose parameters hold no reference with arguments of their types and gives a
//! `Task<R>`, `task.join` turns a `Task<T>` into a `T`, and `scope.end` takes a `Scope`; every
//! one of them belongs in an async function (V225), and nothing crosses the task boundary by
//! reference (V250).

use super::{Crossing, OpCheck};
use crate::entities::{ArenaGet, FuncId, LocalId, index};
use crate::ops::{OpKind, Operand};
use crate::types::Type;
use crate::verifier::code;

impl<'a> OpCheck<'_, 'a> {
    /// One task operation.
    pub(super) fn task_op(&mut self, kind: &OpKind) {
        self.require_async();
        match kind {
            OpKind::ScopeNew { dest } => self.expect_dest(*dest, &Type::Scope),
            OpKind::ScopeSpawn { dest, scope, callee, args, blocking } => {
                self.spawn(*dest, *scope, *callee, args, *blocking)
            }
            OpKind::ScopeEnd { scope } => self.expect_scope(*scope),
            OpKind::TaskJoin { dest, task } => {
                let Some(ty) = self.local(*task) else { return };
                let Type::Task(result) = ty else {
                    let what = format!("operand {}", self.cx.name(*task));
                    self.mismatch(&what, ty, "a task Task<T>");
                    return;
                };
                let joined = self.name.clone();
                self.call_result(*dest, result, &joined);
            }
            _ => {}
        }
    }

    /// The operand of `scope.spawn` and `scope.end` is an owned `Scope`.
    fn expect_scope(&mut self, scope: LocalId) {
        if let Some(ty) = self.local(scope)
            && *ty != Type::Scope
        {
            let what = format!("operand {}", self.cx.name(scope));
            self.mismatch(&what, ty, "Scope");
        }
    }

    fn spawn(&mut self, dest: LocalId, scope: LocalId, callee: FuncId, args: &[Operand], blocking: bool) {
        self.expect_scope(scope);
        let types: Vec<_> = args.iter().map(|a| self.operand(a)).collect();
        let Some(callee_data) = self.cx.module.functions.get(callee) else {
            self.local(dest);
            let message = format!(
                "`scope.spawn` names function #{}, which does not exist; the module has {} functions",
                index(callee),
                self.cx.module.functions.len()
            );
            self.error(code::INVALID_ID, message);
            return;
        };
        let callee_name = format!("${}", callee_data.name);
        self.name = format!("{} {callee_name}", if blocking { "scope.spawn_blocking" } else { "scope.spawn" });
        if blocking && callee_data.is_async {
            let message = format!("{callee_name} is async; the blocking pool runs plain functions, which never wait");
            self.error(code::TASK_BOUNDARY, message);
        } else if !blocking && !callee_data.is_async {
            let message = format!("{callee_name} is not async; a task runs an async function");
            self.error(code::TASK_BOUNDARY, message);
        }
        self.call_args(args, &types, callee_data, &callee_name, Crossing::Task);
        self.expect_dest(dest, &Type::Task(Box::new(callee_data.ret.clone())));
    }
}
