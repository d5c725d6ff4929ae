//! Maps in generated programs: a `Map<i64, V>` or `Map<String, V>` local (values of `i64`,
//! `f64`, `String` or the class `P`) filled by `insert` with keys drawn from edge constants and
//! short strings, so that keys repeat and an insert often replaces a value in place; read with
//! `get` (copied or cloned into an option), `contains` and `len`; emptied in part by `remove`
//! (the later entries move up); cloned; and printed entry by entry with `for k, v in m`, so a
//! wrong order after a replacement or a removal shows in the output; and the closure methods of
//! maps (`count`, `any`, `all`, `filter`, `map`, `fold`) over the entries.

use arbitrary::Result;

use super::*;

impl Gen<'_, '_> {
    /// A map local, a few operations on it, and its entries printed in order.
    pub(super) fn map_stmt(&mut self) -> Result<()> {
        let key = *self.u.choose(&[Ty::I64, Ty::Str])?;
        let value = *self.u.choose(&[Ty::I64, Ty::F64, Ty::Str, Ty::P])?;
        let m = self.fresh("m");
        let (key_text, value_text) = (self.ty_text(key)?, self.ty_text(value)?);
        self.line(&format!("var {m}: Map<{key_text}, {value_text}> = Map.new()"));
        for _ in 0..self.u.int_in_range(1..=7)? {
            match self.u.int_in_range(0..=8)? {
                8 => self.map_closure(&m, key, value)?,
                0..=3 => {
                    let (k, v) = (self.map_key(key)?, self.expr(value, 1)?);
                    self.line(&format!("{m}.insert({k}, {v})"));
                }
                4 => self.map_read(&m, key, value, "get")?,
                5 => self.map_read(&m, key, value, "remove")?,
                6 => {
                    let k = self.map_key(key)?;
                    self.line(&format!("print({m}.contains({k}))"));
                }
                _ => self.line(&format!("print({m}.len())")),
            }
        }
        let source = if self.u.ratio(1, 3)? { format!("{m}.clone()") } else { m.clone() };
        let (k, v) = (self.fresh("k"), self.fresh("v"));
        let key_shown = if key == Ty::Str { k.clone() } else { format!("to_string({k})") };
        let value_shown = self.map_value_text(value, &v);
        self.line(&format!("for {k}, {v} in {source} {{"));
        self.indent += 1;
        self.line(&format!("print({key_shown} + \": \" + {value_shown})"));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// One of the map's closure methods (`count`, `any`, `all`, `filter`, `map`, `fold`) over
    /// its entries, its result printed (a new map entry by entry, in order).
    fn map_closure(&mut self, m: &str, key: Ty, value: Ty) -> Result<()> {
        let (k, v) = (self.fresh("k"), self.fresh("v"));
        let key_shown = if key == Ty::Str { k.clone() } else { format!("to_string({k})") };
        let value_shown = self.map_value_text(value, &v);
        // A test of the entry: its key and its value as text, compared with a few texts.
        let test = format!("({key_shown} + {value_shown}).len() > {}", self.u.int_in_range(0..=8)?);
        match self.u.int_in_range(0..=5)? {
            0 => self.line(&format!("print({m}.count(fn({k}, {v}) => {test}))")),
            1 => self.line(&format!("print({m}.any(fn({k}, {v}) => {test}))")),
            2 => self.line(&format!("print({m}.all(fn({k}, {v}) => {test}))")),
            3 => {
                let acc = self.fresh("acc");
                self.line(&format!(
                    "print({m}.fold(\"\", fn({acc}, {k}, {v}) => {acc} + {key_shown} + {value_shown}))"
                ));
            }
            n => {
                let method = if n == 4 { "filter" } else { "map" };
                let body = if n == 4 { test } else { format!("{key_shown} + \"=\" + {value_shown}") };
                let r = self.fresh("r");
                self.line(&format!("let {r} = {m}.{method}(fn({k}, {v}) => {body})"));
                let (k2, v2) = (self.fresh("k"), self.fresh("v"));
                let shown = if n == 4 { self.map_value_text(value, &v2) } else { v2.clone() };
                self.line(&format!("for {k2}, {v2} in {r} {{"));
                self.line(&format!("    print({shown})"));
                self.line("}");
                let _ = k2;
            }
        }
        Ok(())
    }

    /// A key: mostly one of a few values, so that keys repeat.
    fn map_key(&mut self, key: Ty) -> Result<String> {
        if self.u.ratio(3, 4)? {
            let few: &[&str] =
                if key == Ty::Str { &["\"a\"", "\"b\"", "\"\"", "\"é\""] } else { &["0", "1", "-1", "7"] };
            return Ok((*self.u.choose(few)?).to_string());
        }
        self.expr(key, 1)
    }

    /// `if let x = m.get(k) { print(x) } else { print("absent") }`, or the same with `remove`.
    fn map_read(&mut self, m: &str, key: Ty, value: Ty, method: &str) -> Result<()> {
        let k = self.map_key(key)?;
        let x = self.fresh("x");
        let shown = self.map_value_text(value, &x);
        self.line(&format!("if let {x} = {m}.{method}({k}) {{"));
        self.indent += 1;
        self.line(&format!("print({shown})"));
        self.indent -= 1;
        self.line("} else {");
        self.indent += 1;
        self.line(&format!("print(\"no {method}\")"));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// A value of a map as a `String` expression, for printing.
    fn map_value_text(&self, value: Ty, x: &str) -> String {
        match value {
            Ty::Str => x.to_string(),
            Ty::P => format!("to_string({x}.a) + \" \" + to_string({x}.b) + \" \" + {x}.c"),
            _ => format!("to_string({x})"),
        }
    }
}
