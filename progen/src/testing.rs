//! Tests in generated programs: `test "name" { … }` blocks of random statements, which may
//! `try` failing functions and `fail` themselves, with assertions (`assert`, and `assert_eq` of
//! every type it compares) that sometimes fail; `main` asserts too, more rarely. A failed
//! assertion, a failure and a trap each end the test, and how it ended is compared like the
//! output. A test in the module `lib` calls the module's functions only.

use arbitrary::Result;

use super::*;

impl Gen<'_, '_> {
    /// `test "tN what" { … }` in `file`.
    pub(super) fn test_block(&mut self, file: File) -> Result<String> {
        let id = self.fresh("t");
        let what = *self.u.choose(&["computes", "fails", "sorts", "matches", "checks"])?;
        let body = self.item_body(Body { file, fails: true, ret: None }, Vec::new(), 14, |g| {
            let n = g.u.int_in_range(2..=8)?;
            for _ in 0..n {
                if g.u.ratio(1, 4)? { g.assertion()? } else { g.stmt(0)? }
            }
            Ok(())
        })?;
        Ok(format!("test \"{id} {what}\" {{\n{body}}}\n"))
    }

    /// `assert(cond)` or `assert_eq(a, b)` of an `i32`, `i64`, `f64`, `bool` or `String`, most
    /// of them true: one expression kept and compared with itself evaluated again (equal unless
    /// it changes what it reads, or is NaN), a local compared with itself; and some that are
    /// as likely false: a condition, a local against an expression, two expressions.
    pub(super) fn assertion(&mut self) -> Result<()> {
        let ty = *self.u.choose(&[Ty::I32, Ty::I64, Ty::F64, Ty::Bool, Ty::Str])?;
        let var = self.pick_var(|v| v.ty == ty && !v.array)?;
        match (self.u.int_in_range(0..=7)?, var) {
            (0, _) => {
                let cond = self.expr(Ty::Bool, 3)?;
                self.line(&format!("assert({cond})"));
            }
            (1, Some(var)) => self.line(&format!("assert_eq({0}, {0})", var.name)),
            (2, Some(var)) => {
                let value = self.expr(ty, 1)?;
                self.line(&format!("assert_eq({}, {value})", var.name));
            }
            (3, _) => {
                let (a, b) = (self.expr(ty, 2)?, self.expr(ty, 2)?);
                self.line(&format!("assert_eq({a}, {b})"));
            }
            _ => {
                let value = self.expr(ty, 2)?;
                let name = self.fresh("v");
                self.line(&format!("let {name}: {} = {value}", ty.name()));
                self.line(&format!("assert_eq({name}, {value})"));
                self.declare(Var { name, ty, mutable: false, array: false });
            }
        }
        Ok(())
    }
}
