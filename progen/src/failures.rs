//! Functions the generator writes, and failures. A function has random parameters (scalars,
//! enums, `P`, sometimes an array) and a random body that ends in a `return`; half of them are
//! declared `fails` and `fail(status, message)` on a condition computed from their parameters,
//! with a literal status (400–599), one computed within that range, or any `i64` (answered as
//! 500, the message saying so), and may end in `fail` instead of `return`. Their calls: `try`
//! before the call or before a parenthesized operation holding it, and `try` of a failing function
//! without a result as a statement; `if … { return … }` leaves a function early. Only a
//! function declared `fails` and a test may `try`, so `main` calls only the plain ones; any body,
//! `main` too, may `match catch f(…)` and print the value or the failure's status and message.
//! In Low a failing function returns an option (of an option for `fails -> i64?`), on every
//! backend.

use arbitrary::Result;

use super::*;

/// What a generated function returns.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Ret {
    /// Nothing: a failing function called as a statement, `try check(x)`.
    Unit,
    Of(Ty),
    /// An `i64?`, kept in an option local.
    OptI64,
}

/// A function the generator wrote, as later bodies may call it.
#[derive(Clone, Debug)]
pub(super) struct Func {
    pub(super) name: String,
    /// Each parameter's type, and whether it is an array of that type.
    pub(super) params: Vec<(Ty, bool)>,
    pub(super) ret: Ret,
    pub(super) fails: bool,
    pub(super) file: File,
    /// Whether it is `pub` (only in the module; the main file calls only those).
    pub(super) public: bool,
}

/// The types of generated parameters and results.
const TYPES: [Ty; 10] = [Ty::I32, Ty::I64, Ty::I64, Ty::F64, Ty::Bool, Ty::Str, Ty::Tok, Ty::Light, Ty::Item, Ty::P];

impl Gen<'_, '_> {
    /// A function in `file`: `[pub ]fn NAME(params)[ fails][ -> T] { … }`, which later bodies
    /// may call.
    pub(super) fn function(&mut self, file: File) -> Result<String> {
        let fails = self.u.ratio(1, 2)?;
        let name = self.fresh(if fails { "check" } else { "calc" });
        let public = file == File::Lib && self.u.ratio(3, 4)?;
        let ret = match self.u.int_in_range(0..=9)? {
            0 | 1 if fails => Ret::Unit,
            2 => Ret::OptI64,
            _ => Ret::Of(*self.u.choose(&TYPES)?),
        };
        // Types are named as this file names them.
        self.body = Body { file, fails, ret: Some(ret) };
        let (mut params, mut vars, mut written) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..self.u.int_in_range(0..=3)? {
            let ty = *self.u.choose(&TYPES)?;
            let array = self.u.ratio(1, 6)?;
            let param = self.fresh("a");
            let shown = self.ty_text(ty)?;
            written.push(if array { format!("{param}: [{shown}]") } else { format!("{param}: {shown}") });
            params.push((ty, array));
            vars.push(Var { name: param, ty, mutable: false, array });
        }
        let result = match ret {
            Ret::Unit => String::new(),
            Ret::Of(ty) => format!(" -> {}", self.ty_text(ty)?),
            Ret::OptI64 => " -> i64?".to_string(),
        };
        let text = self.item_body(Body { file, fails, ret: Some(ret) }, vars, 6, |g| {
            let n = g.u.int_in_range(1..=4)?;
            // A failing function fails at one place at least, on a condition of its own.
            let fail_at = if fails { Some(g.u.int_in_range(0..=n)?) } else { None };
            for i in 0..=n {
                if fail_at == Some(i) {
                    g.fail_site()?;
                }
                if i < n {
                    // Depth 2: one level of `if` or loop, so that calls inside stay few.
                    g.stmt(2)?;
                }
            }
            g.ending(ret)
        })?;
        let header = format!(
            "{}fn {name}({}){}{result}",
            if public { "pub " } else { "" },
            written.join(", "),
            if fails { " fails" } else { "" }
        );
        self.funcs.push(Func { name, params, ret, fails, file, public });
        Ok(format!("{header} {{\n{text}}}\n\n"))
    }

    /// The last statements of a function: `return` of a value of its result, or (in a failing
    /// function, now and then) a conditional `return` followed by `fail`, which ends a function
    /// as `return` does.
    fn ending(&mut self, ret: Ret) -> Result<()> {
        match ret {
            Ret::Unit => {}
            Ret::Of(ty) if self.body.fails && self.u.ratio(1, 5)? => {
                let cond = self.expr(Ty::Bool, 2)?;
                let value = self.expr(ty, 3)?;
                self.line(&format!("if {cond} {{"));
                self.indent += 1;
                self.line(&format!("return {value}"));
                self.indent -= 1;
                self.line("}");
                let fail = self.fail_call()?;
                self.line(&fail);
            }
            Ret::Of(ty) => {
                let value = self.expr(ty, 3)?;
                self.line(&format!("return {value}"));
            }
            Ret::OptI64 => {
                if self.u.ratio(1, 2)? {
                    let cond = self.expr(Ty::Bool, 2)?;
                    self.line(&format!("if {cond} {{"));
                    self.indent += 1;
                    self.line("return none");
                    self.indent -= 1;
                    self.line("}");
                }
                let value = self.expr(Ty::I64, 3)?;
                self.line(&format!("return {value}"));
            }
        }
        Ok(())
    }

    /// A statement that may leave the body early: `if COND { fail(…) }` where the body may
    /// fail, `try` of a failing function without a result, or `if COND { return … }` in a
    /// function; a `print` elsewhere.
    pub(super) fn exit_stmt(&mut self) -> Result<()> {
        match self.u.int_in_range(0..=2)? {
            0 if self.body.fails => self.fail_site(),
            1 if self.body.fails => match self.call(Ret::Unit, 2)? {
                Some(call) => {
                    self.line(&call);
                    Ok(())
                }
                None => self.fail_site(),
            },
            _ => match self.body.ret {
                Some(ret) => self.early_return(ret),
                None => self.print_expr(),
            },
        }
    }

    /// `match catch f(…) { Ok(v) => { … } Failed(e) => { … } }` of a failing function written
    /// before, in any body (a `catch` handles the failure, so the body need not fail): the
    /// value printed when it has a text, the failure's status and message always. Like any
    /// call, none inside a function's loop. Falls back to a `print` when there is no such
    /// function.
    pub(super) fn caught_call(&mut self) -> Result<()> {
        let body = self.body;
        let loops = self.loops;
        let callable = |f: &&Func| f.fails && (f.file == body.file || (f.public && body.file == File::Main));
        let candidates: Vec<Func> = self.funcs.iter().filter(callable).cloned().collect();
        if candidates.is_empty() || (body.ret.is_some() && loops > 0) {
            return self.print_expr();
        }
        let f = self.u.choose(&candidates)?.clone();
        let name = if f.file == File::Lib && body.file == File::Main { self.q(&f.name)? } else { f.name.clone() };
        let mut args = Vec::new();
        for &(ty, array) in &f.params {
            args.push(self.argument(ty, array, 2)?);
        }
        let (ok, shown) = match f.ret {
            Ret::Unit => ("Ok".to_string(), "\"ok\"".to_string()),
            Ret::Of(Ty::I32 | Ty::I64 | Ty::F64 | Ty::Bool | Ty::Str) => {
                let v = self.fresh("ok");
                (format!("Ok({v})"), format!("\"ok {{{v}}}\""))
            }
            Ret::Of(_) | Ret::OptI64 => ("Ok(_)".to_string(), "\"ok\"".to_string()),
        };
        let e = self.fresh("e");
        self.line(&format!("match catch {name}({}) {{", args.join(", ")));
        self.indent += 1;
        self.line(&format!("{ok} => {{ print({shown}) }}"));
        self.line(&format!("Failed({e}) => {{ print(\"failed {{{e}.status}}: {{{e}.message}}\") }}"));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// `if COND { return … }`.
    fn early_return(&mut self, ret: Ret) -> Result<()> {
        let cond = self.expr(Ty::Bool, 2)?;
        let value = match ret {
            Ret::Unit => String::new(),
            Ret::Of(ty) => format!(" {}", self.expr(ty, 2)?),
            Ret::OptI64 if self.u.ratio(1, 2)? => " none".to_string(),
            Ret::OptI64 => format!(" {}", self.expr(Ty::I64, 2)?),
        };
        self.line(&format!("if {cond} {{"));
        self.indent += 1;
        self.line(&format!("return{value}"));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// `if COND { fail(…) }`, the condition computed from a local or parameter when there is
    /// one, so that a function fails for some arguments and returns for others.
    fn fail_site(&mut self) -> Result<()> {
        let cond = self.fail_condition()?;
        let fail = self.fail_call()?;
        self.line(&format!("if {cond} {{"));
        self.indent += 1;
        self.line(&fail);
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    fn fail_condition(&mut self) -> Result<String> {
        let vars = self.vars(|v| !v.array && matches!(v.ty, Ty::I32 | Ty::I64 | Ty::Str | Ty::Bool));
        if vars.is_empty() || self.u.ratio(1, 4)? {
            return self.expr(Ty::Bool, 2);
        }
        let var = self.u.choose(&vars)?.clone();
        let name = var.name;
        Ok(match var.ty {
            Ty::I32 | Ty::I64 => {
                let k = *self.u.choose(&["2", "3", "5"])?;
                let r = *self.u.choose(&["0", "1", "-1"])?;
                format!("{name} % {k} == {r}")
            }
            Ty::Str if self.u.arbitrary()? => format!("{name}.len() > {}", self.u.choose(&["0", "1", "3"])?),
            Ty::Str => format!("{name}.contains(\"a\")"),
            _ if self.u.arbitrary()? => name,
            _ => format!("!{name}"),
        })
    }

    /// `fail(status, message)`: a literal status (400–599, H414 otherwise), one computed within
    /// that range, or any `i64` (through a call, so never a literal: the runtime answers one
    /// outside 400–599 as 500 and says so), and a message naming this place and a value.
    pub(super) fn fail_call(&mut self) -> Result<String> {
        let status = match self.u.int_in_range(0..=5)? {
            0..=3 => (*self.u.choose(&["400", "404", "409", "422", "500", "503", "599"])?).to_string(),
            4 => format!("400 + abs({} % 200)", self.expr(Ty::I64, 1)?),
            _ => format!("{}({})", self.q("tap_i64")?, self.expr(Ty::I64, 1)?),
        };
        let label = self.fresh("fail");
        let detail = self.expr(Ty::Str, 1)?;
        Ok(format!("fail({status}, \"{label}: \" + {detail})"))
    }

    /// A call of a function written before, whose result is `ret`, callable here (a failing one
    /// only where the body may `try`; from the main file only the module's `pub` ones): a
    /// failing call is written `(try f(…))`, or with `try` before a parenthesized operation on its
    /// result (`(try (f(…) + 1))`); one without a result as `try f(…)`. A
    /// function's body calls none inside a loop, so that calls cannot multiply.
    pub(super) fn call(&mut self, ret: Ret, d: u32) -> Result<Option<String>> {
        if self.body.ret.is_some() && self.loops > 0 {
            return Ok(None);
        }
        let body = self.body;
        let callable = |f: &&Func| {
            f.ret == ret && (!f.fails || body.fails) && (f.file == body.file || (f.public && body.file == File::Main))
        };
        let candidates: Vec<Func> = self.funcs.iter().filter(callable).cloned().collect();
        if candidates.is_empty() {
            return Ok(None);
        }
        let f = self.u.choose(&candidates)?.clone();
        let name = if f.file == File::Lib && body.file == File::Main { self.q(&f.name)? } else { f.name.clone() };
        let mut args = Vec::new();
        for &(ty, array) in &f.params {
            args.push(self.argument(ty, array, d)?);
        }
        let call = format!("{name}({})", args.join(", "));
        if !f.fails {
            return Ok(Some(call));
        }
        Ok(Some(match ret {
            Ret::Unit => format!("try {call}"),
            Ret::Of(ty @ (Ty::I32 | Ty::I64 | Ty::F64)) if self.u.ratio(1, 4)? => {
                let op = *self.u.choose(&["+", "-", "*"])?;
                let other = self.expr(ty, d.min(1))?;
                // `try` is a prefix operator: around parentheses it covers the whole operation.
                if self.u.arbitrary()? {
                    format!("(try ({call} {op} {other}))")
                } else {
                    format!("(try ({other} {op} {call}))")
                }
            }
            _ => format!("(try {call})"),
        }))
    }

    /// An argument for a parameter of `ty` (an array of it when `array`): a local as it is,
    /// which the callee borrows, or an expression (an array literal for an array).
    fn argument(&mut self, ty: Ty, array: bool, d: u32) -> Result<String> {
        if array {
            if let Some(var) = self.pick_var(|v| v.array && v.ty == ty)? {
                return Ok(var.name);
            }
            let mut items = Vec::new();
            for _ in 0..self.u.int_in_range(0..=2)? {
                items.push(self.expr(ty, d.min(1))?);
            }
            return Ok(format!("[{}]", items.join(", ")));
        }
        if ty.owned()
            && self.u.ratio(1, 2)?
            && let Some(var) = self.pick_var(|v| v.ty == ty && !v.array)?
        {
            return Ok(var.name);
        }
        self.expr(ty, d)
    }
}
