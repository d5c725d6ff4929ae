//! The types of `defer.new`: it calls a plain function (an async one could not run inside a
//! drop) with owned arguments of its parameters' types (V253), and gives a `Defer`.

use super::{Crossing, OpCheck};
use crate::entities::{FuncId, LocalId};
use crate::ops::Operand;
use crate::types::Type;
use crate::verifier::code;

impl<'a> OpCheck<'_, 'a> {
    /// `%d = defer.new $f(args)`.
    pub(super) fn defer(&mut self, dest: LocalId, callee: FuncId, args: &[Operand]) {
        let types: Vec<_> = args.iter().map(|a| self.operand(a)).collect();
        let Some((data, name)) = self.named_function(callee) else {
            self.local(dest);
            return;
        };
        if data.is_async {
            let message = format!("{name} is async; a deferred call runs inside a drop, which never waits");
            self.error(code::DEFER, message);
        }
        self.call_args(args, &types, data, &name, Crossing::Defer);
        self.expect_dest(dest, &Type::Defer);
    }
}
