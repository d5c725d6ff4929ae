//! Calls of the prelude's generic functions and the generic class `Duo<T>`, so that every
//! executor runs instances of one template for several types: two typed locals of a random
//! element type, then `pick`, `bigger` (numbers), `same` (types with `==`), `shown` (types
//! with a text), `duo` and `swapped` (a `Duo<T>` in and out), `first_or` of an array of
//! them, `slot_or` of a `Slot<T>` (a generic enum), and `count_if` and `map_each` with a
//! closure (capturing the locals, with an expression or a block body), the result printed
//! where it has a text.

use arbitrary::Result;

use super::*;

impl Gen<'_, '_> {
    /// One use of a generic function of the prelude, on two new locals of one type.
    pub(super) fn generic_stmt(&mut self) -> Result<()> {
        let ty = *self.u.choose(&Ty::ELEMENTS)?;
        let text = self.ty_text(ty)?;
        let (a, b) = (self.fresh("g"), self.fresh("g"));
        for name in [&a, &b] {
            let value = self.expr(ty, 2)?;
            self.line(&format!("let {name}: {text} = {value}"));
        }
        let textual = matches!(ty, Ty::I32 | Ty::I64 | Ty::F64 | Ty::Bool | Ty::Str);
        let r = self.fresh("g");
        match self.u.int_in_range(0..=9)? {
            0 => {
                let c = self.expr(Ty::Bool, 2)?;
                let f = self.q("pick")?;
                self.line(&format!("let {r}: {text} = {f}({c}, {a}, {b})"));
                self.show(&r, ty);
            }
            1 if matches!(ty, Ty::I32 | Ty::I64 | Ty::F64) => {
                let f = self.q("bigger")?;
                self.line(&format!("let {r}: {text} = {f}({a}, {b})"));
                self.show(&r, ty);
            }
            2 if textual => {
                let f = self.q("same")?;
                self.line(&format!("print({f}({a}, {b}))"));
            }
            3 if textual => {
                let f = self.q("shown")?;
                self.line(&format!("let {r}: String = {f}({a})"));
                self.line(&format!("print({r})"));
            }
            4 => {
                let (f, g) = (self.q("duo")?, self.q("swapped")?);
                let s = self.fresh("g");
                self.line(&format!("let {r} = {f}({a}, {b})"));
                self.line(&format!("let {s} = {g}({r})"));
                self.show(&format!("{s}.first"), ty);
                self.show(&format!("{r}.first"), ty);
            }
            6 => {
                let (slot, f) = (self.q("Slot")?, self.q("slot_or")?);
                let clone = if ty.owned() { ".clone()" } else { "" };
                if self.u.ratio(1, 2)? {
                    self.line(&format!("let {r}: {slot}<{text}> = {slot}.Full({a}{clone})"));
                } else {
                    self.line(&format!("let {r}: {slot}<{text}> = {slot}.Vacant"));
                }
                let s = self.fresh("g");
                self.line(&format!("let {s}: {text} = {f}({r}, {b})"));
                self.show(&s, ty);
            }
            7 if ty == Ty::I64 => {
                let f = self.q("count_if")?;
                let op = *self.u.choose(&[">", "<", "==", "!="])?;
                self.line(&format!("print({f}([{a}, {b}, 3, -1], fn(x) => x {op} {a}))"));
            }
            8 if textual => {
                let f = self.q("map_each")?;
                let clone = if ty.owned() { ".clone()" } else { "" };
                self.line(&format!("let {r}: [String] = {f}([{a}{clone}], fn(x) => \"<{{x}}|{{{b}}}>\")"));
                self.line(&format!("print({r}[0])"));
            }
            9 if textual => {
                let (f, same) = (self.q("map_each")?, self.q("same")?);
                let clone = if ty.owned() { ".clone()" } else { "" };
                self.line(&format!("let {r} = {f}([{a}{clone}, {b}{clone}], fn(x: {text}) -> bool {{"));
                self.indent += 1;
                self.line(&format!("if {same}(x, {b}) {{"));
                self.line("    return true");
                self.line("}");
                self.line("return false");
                self.indent -= 1;
                self.line("})");
                self.line(&format!("print({r}[0])"));
                self.line(&format!("print({r}[1])"));
            }
            _ => {
                let f = self.q("first_or")?;
                let clone = if ty.owned() { ".clone()" } else { "" };
                let xs = if self.u.ratio(1, 3)? { String::new() } else { format!("{a}{clone}, {b}{clone}") };
                self.line(&format!("let {r}: [{text}] = [{xs}]"));
                let s = self.fresh("g");
                self.line(&format!("let {s}: {text} = {f}({r}, {b})"));
                self.show(&s, ty);
            }
        }
        self.declare(Var { name: a, ty, mutable: false, array: false });
        self.declare(Var { name: b, ty, mutable: false, array: false });
        Ok(())
    }

    /// Prints `value` (a place of type `ty`) where it has a text: itself, or a field of a `P`.
    fn show(&mut self, value: &str, ty: Ty) {
        match ty {
            Ty::I32 | Ty::I64 | Ty::F64 | Ty::Bool | Ty::Str => self.line(&format!("print({value})")),
            Ty::P => self.line(&format!("print({value}.c)")),
            _ => {}
        }
    }
}
