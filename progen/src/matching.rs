//! Enums and `match` in generated programs: enum locals, matches on enums (bindings copied or
//! borrowed, `|`, `_`, qualified and unqualified patterns) and on integers, strings and bools.
//! Enum types and values are named as the file may (`lib.Tok.End` where the main file does not
//! import `Tok`), and patterns name the enum only where it is unqualified.

use arbitrary::Result;

use super::*;

impl Gen<'_, '_> {
    /// `let` or `var` of an enum local, from a random variant or a helper, with or without its
    /// type written; sometimes read at once through a helper that borrows it.
    pub(super) fn enum_local(&mut self) -> Result<()> {
        let ty = *self.u.choose(&Ty::ENUMS)?;
        let value = self.expr(ty, 3)?;
        let mutable = self.u.ratio(2, 3)?;
        let name = self.fresh("e");
        let keyword = if mutable { "var" } else { "let" };
        if self.u.arbitrary()? {
            let shown = self.ty_text(ty)?;
            self.line(&format!("{keyword} {name}: {shown} = {value}"));
        } else {
            self.line(&format!("{keyword} {name} = {value}"));
        }
        self.declare(Var { name: name.clone(), ty, mutable, array: false });
        if self.u.ratio(1, 2)? {
            let read = self.enum_read(ty, &name)?;
            self.line(&format!("print({read})"));
        }
        Ok(())
    }

    /// A `match` on an enum value: a local, an element of an enum array (maybe out of range),
    /// a clone, the field of a `Q` or a temporary. The arms take the variants in a random
    /// order, some together with `|`, payloads bound or ignored with `_`, each pattern
    /// qualified (`Tok.End`) or not, and a `_` arm for the variants left out (rarely one after
    /// all of them).
    pub(super) fn enum_match(&mut self, depth: u32) -> Result<()> {
        let id = self.fresh("m");
        let local = self.pick_var(|v| v.ty.is_enum() && !v.array)?;
        let array = self.pick_var(|v| v.ty.is_enum() && v.array)?;
        let (ty, text, scrutinee) = match (self.u.int_in_range(0..=5)?, local, array) {
            (0..=2, Some(var), _) => (var.ty, var.name.clone(), Scrutinee::Local(var.name)),
            (3, _, Some(array)) => {
                // In range most of the time; sometimes any index (it may trap).
                let index = if self.u.ratio(4, 5)? {
                    format!("(abs({}) % max({}.len(), 1))", self.expr(Ty::I64, 1)?, array.name)
                } else {
                    self.expr(Ty::I64, 1)?
                };
                (array.ty, format!("{}[{index}]", array.name), Scrutinee::Element(array.name))
            }
            (4, _, _) => {
                // The field of a class literal, its fields in either order.
                let q = self.fresh("q");
                let tag = self.expr(Ty::Tok, 2)?;
                let n = self.expr(Ty::I64, 1)?;
                let fields =
                    if self.u.arbitrary()? { format!("tag: {tag}, n: {n}") } else { format!("n: {n}, tag: {tag}") };
                let class = self.q("Q")?;
                self.line(&format!("let {q} = {class} {{ {fields} }}"));
                if self.u.arbitrary()? {
                    let score = self.q("tok_score")?;
                    self.line(&format!("print({q}.n + {score}({q}.tag))"));
                }
                (Ty::Tok, format!("{q}.tag"), Scrutinee::Free)
            }
            (5, Some(var), _) => (var.ty, format!("{}.clone()", var.name), Scrutinee::Free),
            _ => {
                let ty = *self.u.choose(&Ty::ENUMS)?;
                (ty, self.expr(ty, 2)?, Scrutinee::Free)
            }
        };
        let variants = ty.variants();
        let mut order: Vec<usize> = (0..variants.len()).collect();
        self.shuffle(&mut order)?;
        let wild = if self.u.ratio(1, 3)? { self.u.int_in_range(1..=order.len())? } else { 0 };
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for &index in &order[..order.len() - wild] {
            match groups.last_mut() {
                Some(last) if self.u.ratio(1, 3)? => last.push(index),
                _ => groups.push(vec![index]),
            }
        }
        let mut arms = Vec::new();
        for group in &groups {
            let mut patterns = Vec::new();
            let mut binding = None;
            for &index in group {
                let (variant, payload) = variants[index];
                // A pattern names the enum only as this file may write it unqualified.
                let written = if self.names_unqualified(ty.name()) && self.u.ratio(1, 3)? {
                    format!("{}.{variant}", ty.name())
                } else {
                    variant.to_string()
                };
                patterns.push(match payload {
                    Payload::Nothing => written,
                    // A name is bound only in an arm of one pattern (H317 otherwise).
                    _ if group.len() == 1 && self.u.ratio(3, 4)? => {
                        let name = self.fresh("b");
                        let pattern = format!("{written}({name})");
                        binding = Some((name, payload));
                        pattern
                    }
                    _ => format!("{written}(_)"),
                });
            }
            arms.push((patterns.join(" | "), binding));
        }
        match arms.last_mut() {
            // `_` as the last alternative of the last arm.
            Some((patterns, None)) if wild > 0 && self.u.ratio(1, 6)? => patterns.push_str(" | _"),
            _ if wild > 0 || self.u.ratio(1, 10)? => arms.push(("_".to_string(), None)),
            _ => {}
        }
        self.match_arms(&id, &text, arms, &scrutinee, depth)
    }

    /// A `match` on an `i32`, `i64`, `String` or `bool` (an expression or a local) with
    /// distinct literal patterns, edge values among them, some together with `|`, and the `_`
    /// arm that integers and strings need.
    pub(super) fn literal_match(&mut self, depth: u32) -> Result<()> {
        const SMALL: [&str; 5] = ["0", "1", "-1", "2", "-2"];
        const I32: [&str; 9] = ["0", "1", "-1", "2", "7", "31", "100", "2147483647", "-2147483648"];
        const I64: [&str; 10] = [
            "0",
            "1",
            "-1",
            "3",
            "-7",
            "64",
            "1000",
            "9223372036854775807",
            "-9223372036854775808",
            "-9223372036854775807",
        ];
        const STR: [&str; 10] =
            ["\"\"", "\"a\"", "\"nagi\"", "\"x y\"", "\"A\"", "\"NAGI\"", "\"0\"", "\"-1\"", "\"true\"", "\"w:a\""];
        let id = self.fresh("m");
        let ty = *self.u.choose(&[Ty::I32, Ty::I64, Ty::I64, Ty::Str, Ty::Bool])?;
        let mut text = self.expr(ty, 2)?;
        let mut pool: Vec<&str> = match ty {
            Ty::I32 | Ty::I64 if self.u.ratio(1, 3)? => {
                // A remainder, so that the small patterns are hit often.
                text = format!("({text} % 3)");
                SMALL.to_vec()
            }
            Ty::I32 => I32.to_vec(),
            Ty::I64 => I64.to_vec(),
            _ => STR.to_vec(),
        };
        if self.u.ratio(1, 3)?
            && let Some(var) = self.pick_var(|v| v.ty == ty && !v.array)?
        {
            text = var.name;
        }
        let mut arms: Vec<(String, Option<(String, Payload)>)> = Vec::new();
        if ty == Ty::Bool {
            let first = self.u.arbitrary()?;
            let patterns: &[&str] = match self.u.int_in_range(0..=3)? {
                0 if first => &["true", "false"],
                0 => &["false", "true"],
                1 if first => &["true", "_"],
                1 => &["false", "_"],
                2 if first => &["true | false"],
                2 => &["false | true"],
                _ => &["_"],
            };
            arms.extend(patterns.iter().map(|p| (p.to_string(), None)));
        } else {
            // Distinct literals only: a repeated one is unreachable (H318).
            self.shuffle(&mut pool)?;
            let count = self.u.int_in_range(1..=4)?;
            for literal in &pool[..count] {
                match arms.last_mut() {
                    Some((patterns, _)) if self.u.ratio(1, 3)? => {
                        patterns.push_str(" | ");
                        patterns.push_str(literal);
                    }
                    _ => arms.push((literal.to_string(), None)),
                }
            }
            arms.push(("_".to_string(), None));
        }
        self.match_arms(&id, &text, arms, &Scrutinee::Free, depth)
    }

    /// `match text { … }` with `arms` (the patterns, and the name each binds with its payload).
    /// Every arm prints `id` and its number, then what it bound, then up to two statements;
    /// inside a loop it may end with `break` or `continue`. A quarter of the matches are written
    /// one arm to a line (`Red => { print("m3 arm 0") },`), with nothing but the prints. While an
    /// arm borrows a payload (a `String` or a `P`), the place matched is not changed.
    pub(super) fn match_arms(
        &mut self,
        id: &str,
        text: &str,
        arms: Vec<(String, Option<(String, Payload)>)>,
        scrutinee: &Scrutinee,
        depth: u32,
    ) -> Result<()> {
        let compact = self.u.ratio(1, 4)?;
        self.line(&format!("match {text} {{"));
        self.indent += 1;
        for (number, (pattern, binding)) in arms.into_iter().enumerate() {
            let mut prints = vec![format!("print(\"{id} arm {number}\")")];
            if let Some((name, payload)) = &binding {
                prints.push(self.binding_print(name, *payload)?);
            }
            let exit = if self.loops > 0 && self.u.ratio(1, 5)? {
                Some(if self.u.arbitrary()? { "break" } else { "continue" })
            } else {
                None
            };
            if compact {
                prints.extend(exit.map(str::to_string));
                let separator = if self.u.arbitrary()? { "," } else { "" };
                self.line(&format!("{pattern} => {{ {} }}{separator}", prints.join("; ")));
                continue;
            }
            self.line(&format!("{pattern} => {{"));
            let guard = binding.as_ref().is_some_and(|(_, payload)| payload.borrowed());
            self.block(|g| {
                match &binding {
                    Some((name, Payload::Of(ty))) => {
                        g.declare(Var { name: name.clone(), ty: *ty, mutable: false, array: false })
                    }
                    Some((name, Payload::ClassP)) => {
                        g.declare(Var { name: name.clone(), ty: Ty::P, mutable: false, array: false })
                    }
                    _ => {}
                }
                for line in &prints {
                    g.line(line);
                }
                let (frozen, iterating) = match (guard, scrutinee) {
                    (true, Scrutinee::Local(name)) => (Some(name.clone()), None),
                    (true, Scrutinee::Element(array)) => (None, Some(array.clone())),
                    _ => (None, None),
                };
                g.frozen.extend(frozen.clone());
                g.iterating.extend(iterating.clone());
                let n = g.u.int_in_range(0..=2)?;
                let result = (0..n).try_for_each(|_| g.stmt(depth + 1));
                if frozen.is_some() {
                    g.frozen.pop();
                }
                if iterating.is_some() {
                    g.iterating.pop();
                }
                result?;
                if let Some(word) = exit {
                    g.line(word);
                }
                Ok(())
            })?;
            self.line("}");
        }
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// A `print` of a value read from the binding `name` of a `payload`.
    pub(super) fn binding_print(&mut self, name: &str, payload: Payload) -> Result<String> {
        let value = match payload {
            Payload::ClassP => match self.u.int_in_range(0..=3)? {
                0 => format!("{name}.a"),
                1 => format!("{name}.b"),
                2 => format!("{name}.c"),
                _ => format!("({name}.a + {name}.c.len())"),
            },
            Payload::Of(Ty::Str) => match self.u.int_in_range(0..=2)? {
                0 => format!("{name}.len()"),
                1 => format!("({name} + \"|\")"),
                _ => name.to_string(),
            },
            Payload::Of(Ty::I64) if self.u.ratio(1, 3)? => format!("({name} * 3 + 1)"),
            _ => name.to_string(),
        };
        Ok(format!("print({value})"))
    }

    /// An enum value: mostly a variant with a payload expression, sometimes a helper's result.
    pub(super) fn enum_expr(&mut self, ty: Ty, d: u32) -> Result<String> {
        if self.u.ratio(3, 4)? {
            let index = self.u.choose_index(ty.variants().len())?;
            return self.variant_value(ty, index, d);
        }
        Ok(match ty {
            Ty::Tok => format!("{}({})", self.q("tok_of")?, self.expr(Ty::I64, d)?),
            Ty::Light => format!("{}({})", self.q("light_next")?, self.enum_arg(Ty::Light, d)?),
            _ => format!("{}({})", self.q("item_of")?, self.enum_arg(Ty::Tok, d)?),
        })
    }

    /// `Enum.Variant` or `Enum.Variant(payload)`, the payload at most `d` operators deep.
    pub(super) fn variant_value(&mut self, ty: Ty, index: usize, d: u32) -> Result<String> {
        let (variant, payload) = ty.variants()[index];
        let enum_name = self.q(ty.name())?;
        Ok(match payload {
            Payload::Nothing => format!("{enum_name}.{variant}"),
            Payload::Of(t) => format!("{enum_name}.{variant}({})", self.expr(t, d)?),
            Payload::ClassP => format!("{enum_name}.{variant}({})", self.p_literal(d.min(1))?),
        })
    }

    /// A call of the prelude helper that reads an enum value `arg` of `ty` into something
    /// printable (`tok_text`, `light_name`, `item_value`).
    pub(super) fn enum_read(&mut self, ty: Ty, arg: &str) -> Result<String> {
        let helper = match ty {
            Ty::Tok => "tok_text",
            Ty::Light => "light_name",
            _ => "item_value",
        };
        Ok(format!("{}({arg})", self.q(helper)?))
    }

    /// An enum argument of a helper, which borrows it: a local as it is (not cloned), or an
    /// enum expression.
    pub(super) fn enum_arg(&mut self, ty: Ty, d: u32) -> Result<String> {
        if self.u.ratio(1, 2)?
            && let Some(var) = self.pick_var(|v| v.ty == ty && !v.array)?
        {
            return Ok(var.name);
        }
        self.expr(ty, d)
    }
}
