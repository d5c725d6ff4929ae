//! The array library in generated programs: `sort` of arrays of numbers and strings (floats
//! with NaN of either sign, ±0.0 and ±inf among them), `sort_by` of arrays of `P` by each of its
//! fields, sometimes twice in a row (the second keeps the first's order among equal keys, so
//! stability shows), `reverse` of arrays of any element, `contains`, and `slice` with ranges in
//! and out of range (out of range traps). A reordered array is usually printed element by
//! element, so a wrong order shows in the output. The closure methods (`map`, `filter`,
//! `any`, `all`, `count`, `find`, `fold`, and `sort_by_key` with a computed key) run over array
//! locals with bodies of any expression
//! the generator writes, the element and the function's locals among them.

use arbitrary::Result;

use super::*;

impl Gen<'_, '_> {
    /// A statement of the array library: an array reordered in place and printed, a slice of
    /// one kept in a new local, or a loop over a slice.
    pub(super) fn array_stmt(&mut self, depth: u32) -> Result<()> {
        match self.u.int_in_range(0..=7)? {
            5 | 6 => self.closure_stmt(),
            7 => self.sort_by_key(),
            0..=2 => self.reorder(),
            4 if depth < 3 => self.slice_loop(depth),
            _ => self.slice_local(),
        }
    }

    /// `sort_by_key` of an array local that may change here, by a key of `i64`, `f64` or
    /// `String` computed from the element and the function's locals, then the elements printed:
    /// a wrong order, or an unstable one among equal keys, shows.
    fn sort_by_key(&mut self) -> Result<()> {
        let iterating = self.iterating.clone();
        let array = match self.pick_var(|v| v.array && v.mutable && !iterating.contains(&v.name))? {
            Some(array) => array,
            None => self.sortable_array()?,
        };
        let key = *self.u.choose(&[Ty::I64, Ty::I64, Ty::F64, Ty::Str])?;
        let x = self.fresh("x");
        self.iterating.push(array.name.clone());
        self.scopes.push(vec![Var { name: x.clone(), ty: array.ty, mutable: false, array: false }]);
        self.loops += 1;
        let body = self.expr(key, 2);
        self.loops -= 1;
        self.scopes.pop();
        self.iterating.pop();
        self.line(&format!("{}.sort_by_key(fn({x}) => {})", array.name, body?));
        self.print_elements(&array)
    }

    /// `sort`, `sort_by` or `reverse` of an array local that may change here (not iterated,
    /// no element borrowed by a `match` arm), or of a new array of edge values.
    fn reorder(&mut self) -> Result<()> {
        let iterating = self.iterating.clone();
        let array = match self.pick_var(|v| v.array && v.mutable && !iterating.contains(&v.name))? {
            Some(array) => array,
            None => self.sortable_array()?,
        };
        let xs = array.name.clone();
        match array.ty {
            ty if ty.ordered() && self.u.ratio(3, 4)? => self.line(&format!("{xs}.sort()")),
            Ty::P if self.u.ratio(3, 4)? => {
                let first = *self.u.choose(&["a", "b", "c"])?;
                self.line(&format!("{xs}.sort_by({first})"));
                if self.u.ratio(1, 2)? {
                    let second = *self.u.choose(&["a", "b", "c"])?;
                    self.line(&format!("{xs}.sort_by({second})"));
                }
            }
            _ => self.line(&format!("{xs}.reverse()")),
        }
        if self.u.ratio(2, 3)? {
            self.print_elements(&array)?;
        }
        Ok(())
    }

    /// A new array local of a type the library orders, or of `P`, with two to six elements of
    /// shallow expressions (edge constants repeat, so equal keys are common).
    fn sortable_array(&mut self) -> Result<Var> {
        let ty = *self.u.choose(&[Ty::I32, Ty::I64, Ty::F64, Ty::F64, Ty::Str, Ty::P])?;
        let len = self.u.int_in_range(2..=6)?;
        let mut items = Vec::new();
        for _ in 0..len {
            items.push(self.expr(ty, 1)?);
        }
        let name = self.fresh("xs");
        let element = self.ty_text(ty)?;
        self.line(&format!("var {name}: [{element}] = [{}]", items.join(", ")));
        let var = Var { name, ty, mutable: true, array: true };
        self.declare(var.clone());
        Ok(var)
    }

    /// Prints the elements of `array` in order, one line each (a `P` as its three fields), or a
    /// string array joined on one line.
    fn print_elements(&mut self, array: &Var) -> Result<()> {
        let xs = &array.name;
        if array.ty == Ty::Str && self.u.ratio(1, 2)? {
            self.line(&format!("print({xs}.join(\",\"))"));
            return Ok(());
        }
        let x = self.fresh("x");
        let value = match array.ty {
            Ty::P => format!("to_string({x}.a) + \" \" + to_string({x}.b) + \" \" + {x}.c"),
            ty if ty.is_enum() => self.enum_read(ty, &x)?,
            _ => x.clone(),
        };
        self.line(&format!("for {x} in {xs} {{"));
        self.indent += 1;
        self.line(&format!("print({value})"));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// `xs.slice(start, end)` of the array local `array`: mostly a range computed from its
    /// length (empty, whole, halves, thirds), sometimes one that is out of range when the array
    /// is empty, or any range (usually out of range, which traps).
    pub(super) fn slice(&mut self, array: &Var) -> Result<String> {
        let xs = &array.name;
        let (start, end) = match self.u.int_in_range(0..=11)? {
            0 | 1 => ("0".to_string(), format!("{xs}.len()")),
            2 | 3 => (format!("{xs}.len() / 2"), format!("{xs}.len()")),
            4 | 5 => ("0".to_string(), format!("{xs}.len() / 2")),
            6 | 7 => (format!("{xs}.len() / 3"), format!("{xs}.len() - {xs}.len() / 3")),
            8 => (format!("{xs}.len()"), format!("{xs}.len()")),
            9 => (format!("min(1, {xs}.len())"), format!("{xs}.len()")),
            10 => ("1".to_string(), format!("{xs}.len()")),
            _ => (self.expr(Ty::I64, 1)?, self.expr(Ty::I64, 1)?),
        };
        Ok(format!("{xs}.slice({start}, {end})"))
    }

    /// `var ys: [T] = xs.slice(…)`, sometimes printed.
    fn slice_local(&mut self) -> Result<()> {
        let Some(array) = self.pick_var(|v| v.array)? else { return self.reorder() };
        let slice = self.slice(&array)?;
        let name = self.fresh("xs");
        let element = self.ty_text(array.ty)?;
        self.line(&format!("var {name}: [{element}] = {slice}"));
        let var = Var { name, ty: array.ty, mutable: true, array: true };
        self.declare(var.clone());
        if self.u.ratio(1, 2)? {
            self.print_elements(&var)?;
        }
        Ok(())
    }

    /// `for x in xs.slice(…) { … }`: the loop runs over a new array, so the body may change `xs`.
    fn slice_loop(&mut self, depth: u32) -> Result<()> {
        let Some(array) = self.pick_var(|v| v.array)? else { return self.reorder() };
        let slice = self.slice(&array)?;
        let x = self.fresh("x");
        self.line(&format!("for {x} in {slice} {{"));
        let n = self.u.int_in_range(1..=2)?;
        self.block(|g| {
            g.declare(Var { name: x.clone(), ty: array.ty, mutable: false, array: false });
            g.loops += 1;
            let result = (0..n).try_for_each(|_| g.stmt(depth + 1));
            g.loops -= 1;
            result
        })?;
        self.line("}");
        Ok(())
    }

    /// `xs.contains(x)` on an array local of a type the library compares (or on a slice of it).
    pub(super) fn contains(&mut self, array: &Var, d: u32) -> Result<String> {
        let x = self.expr(array.ty, d)?;
        let receiver = if self.u.ratio(1, 4)? { self.slice(array)? } else { array.name.clone() };
        Ok(format!("{receiver}.contains({x})"))
    }
}

impl Gen<'_, '_> {
    /// A closure method of an array local (or of a new array): `map` into a new array local,
    /// `filter` into one, `any`, `all` and `count` printed, `find` unwrapped with `if let`, and
    /// `fold` into an `i64` or a `String`, printed. The body reads the element and the
    /// function's locals as any expression does, inside the closure's loop (so calls stay out of
    /// a function's body, as they do in its loops).
    pub(super) fn closure_stmt(&mut self) -> Result<()> {
        let array = match self.pick_var(|v| v.array)? {
            Some(array) => array,
            None => self.sortable_array()?,
        };
        let mut xs = array.name.clone();
        self.iterating.push(xs.clone());
        // Now and then a `filter` chained before the method, which runs in its loop.
        if self.u.ratio(1, 3)? {
            let x = self.fresh("x");
            self.scopes.push(vec![Var { name: x.clone(), ty: array.ty, mutable: false, array: false }]);
            self.loops += 1;
            let cond = self.expr(Ty::Bool, 2);
            self.loops -= 1;
            self.scopes.pop();
            xs = format!("{xs}.filter(fn({x}) => {})", cond?);
        }
        self.iterating.pop();
        let method = *self.u.choose(&["map", "filter", "any", "all", "count", "find", "fold"])?;
        let fold = match method {
            "fold" => Some(*self.u.choose(&[Ty::I64, Ty::Str])?),
            _ => None,
        };
        let acc = self.fresh("acc");
        let x = self.fresh("x");
        let params = if fold.is_some() { format!("{acc}, {x}") } else { x.clone() };
        let body_ty = match method {
            "map" => *self.u.choose(&Ty::SCALARS)?,
            "fold" => fold.unwrap_or(Ty::I64),
            _ => Ty::Bool,
        };
        self.iterating.push(array.name.clone());
        // The closure's parameters are visible in its body only.
        self.scopes.push(Vec::new());
        if let Some(ty) = fold {
            self.declare(Var { name: acc.clone(), ty, mutable: false, array: false });
        }
        self.declare(Var { name: x.clone(), ty: array.ty, mutable: false, array: false });
        self.loops += 1;
        let body = match fold {
            // The accumulator grows with each element, so every element shows in the result.
            Some(Ty::Str) => self.expr(Ty::Str, 2).map(|e| format!("{acc} + {e}")),
            Some(_) => self.expr(Ty::I64, 2).map(|e| format!("{acc} + {e}")),
            None => self.expr(body_ty, 3),
        };
        self.loops -= 1;
        self.scopes.pop();
        self.iterating.pop();
        let closure = format!("fn({params}) => {}", body?);
        match method {
            "map" | "filter" => {
                let name = self.fresh("ys");
                let ty = if method == "map" { body_ty } else { array.ty };
                // Written, so that a `map` of integer literals is of the element type intended.
                let element = self.ty_text(ty)?;
                self.line(&format!("let {name}: [{element}] = {xs}.{method}({closure})"));
                let var = Var { name, ty, mutable: false, array: true };
                self.declare(var.clone());
                if self.u.ratio(1, 2)? {
                    self.print_elements(&var)?;
                }
            }
            "find" => {
                let found = self.fresh("found");
                self.line(&format!("if let {found} = {xs}.find({closure}) {{"));
                self.indent += 1;
                if matches!(array.ty, Ty::I32 | Ty::I64 | Ty::F64 | Ty::Bool | Ty::Str) {
                    self.line(&format!("print({found})"));
                } else {
                    self.line("print(\"found\")");
                }
                self.indent -= 1;
                self.line("} else {");
                self.indent += 1;
                self.line("print(\"not found\")");
                self.indent -= 1;
                self.line("}");
            }
            "fold" => {
                let init = if fold == Some(Ty::Str) { "\"\"".to_string() } else { self.expr(Ty::I64, 1)? };
                self.line(&format!("print({xs}.fold({init}, {closure}))"));
            }
            _ => self.line(&format!("print({xs}.{method}({closure}))")),
        }
        Ok(())
    }
}
