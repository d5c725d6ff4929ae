//! Random well-typed High Nagi programs, for running one program on every executor and
//! comparing what each prints (differential testing, as Cranelift tests its backends).
//!
//! [`program`] draws a program from [`arbitrary::Unstructured`] bytes, so the same generator
//! serves a cargo-fuzz target (bytes from libFuzzer) and a seeded batch mode ([`from_seed`]).
//! Every program checks, as a program and as a test build ([`compile`], [`compile_tests`]): the
//! generator is type-directed and keeps to the ownership rules (non-copy values are cloned,
//! never moved; an enum is passed to a helper, which borrows it, matched in place or cloned;
//! arrays are not changed (pushed, sorted, reversed) while iterated, nor a place while a `match`
//! arm borrows its payload), to the pattern rules (a payload is bound only in an arm of one
//! pattern, no variant or literal is matched twice, every `match` is exhaustive) and to the
//! failure rules (`try` and `fail` only in functions declared `fails` and in tests; a literal
//! status in 400–599). What the programs exercise: `i32`/`i64`/`f64` arithmetic with edge
//! constants (MIN, MAX, −1, 0, NaN of either sign, ±inf, ±0.0, subnormals, 1e308), shifts by
//! any count, casts, comparisons, `min`/`max`/`abs`, `&&`/`||` with a printing right side,
//! `inout` calls inside expressions, class literals with fields in any order and class locals
//! whose fields are assigned, bounded loops, arrays indexed in and out of range, strings and the
//! string library, options, recursion, and enums: locals, arrays and a class field of three
//! prelude enums (payloads of `i64`, `String`, `bool`, `f64`, `i32` and a class, and none),
//! `match` on them with copied and borrowed bindings, `|`, `_`, qualified and unqualified
//! patterns in any order, `match` on integers (edge literals), strings and booleans, and
//! `break`/`continue` inside arms in loops. Every arm prints, so a wrong branch shows in the
//! output. Then (`failures.rs`, `testing.rs`, `arrays.rs`, `maps.rs`, `times.rs`, `generics.rs`, `modules.rs`): generated functions of
//! random parameters and bodies, half of them declared `fails` and failing on a computed
//! condition with a literal, computed or out-of-range status, called with `try` (of a call, of
//! a parenthesized operation, as a statement) and left early with `return`; `test` blocks with
//! `assert` and `assert_eq` that sometimes fail; the array library (`sort` of numbers with edge
//! floats and of strings, `sort_by` each field of a class, twice for stability, `reverse`,
//! `contains`, `slice` in and out of range), with the reordered elements printed; maps
//! (`insert` over repeating keys, `get`, `remove`, `contains`, `len`, clones and
//! `for k, v in m`, printed in order); times (`times.rs`: `parse_time` of edge texts, `Duration`
//! literals of every unit, `+`, `-`, comparisons, scaling, both text forms, traps at the ends of
//! the range; the clock is never read; `parse_uuid` of UUID texts in several forms); generic
//! functions and a generic class of the prelude called on every element type (`generics.rs`); a configuration (`knobs.rs`: `config Knobs` with a
//! default for every value, read in expressions of the main file); and, in a
//! third of the programs, a module `lib` holding the prelude, functions and a test, used
//! qualified and through `import lib.{…}`. Traps (division by zero, an index or a slice out of
//! range, a failed assertion, a test's failure) are part of the behaviour to compare, not
//! failures of the run. With [`Config::waits`] ([`program_with`], [`from_seed_with`]; off by
//! default, as only the compiled backends run such programs), also recursive async functions
//! and tasks that spawn tasks of their own function (`waits.rs`): helpers that `sleep` and call
//! themselves or each other with a bounded depth, or spawn themselves in a `scope`, called in
//! expressions and statements and spawned from a `scope` in `main`, tests and functions.

use arbitrary::{Result, Unstructured};

mod arrays;
mod failures;
mod generics;
mod knobs;
mod maps;
mod matching;
mod modules;
mod prelude;
pub mod reduce;
mod testing;
mod times;
mod waits;

use failures::{Func, Ret};
use modules::File;
pub use modules::{Files, MODULE_LINE, compile, compile_tests, files};

/// A type the generator writes expressions of.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    I32,
    I64,
    F64,
    Bool,
    Str,
    /// The prelude's enums: `Tok` (payloads `i64`, `String`, `bool`, none), `Light` (no
    /// payloads) and `Item` (payloads `P`, `f64`, `i32`, none).
    Tok,
    Light,
    Item,
    /// The prelude's class `P` (`a: i64`, `b: f64`, `c: String`).
    P,
}

/// What a variant carries.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Payload {
    Nothing,
    Of(Ty),
    /// A `P`, which the generator writes only as a literal.
    ClassP,
}

impl Payload {
    /// Whether a binding of this payload is a borrow (of a `String` or a `P`) rather than a copy.
    fn borrowed(self) -> bool {
        matches!(self, Payload::Of(Ty::Str) | Payload::ClassP)
    }
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::F64 => "f64",
            Ty::Bool => "bool",
            Ty::Str => "String",
            Ty::Tok => "Tok",
            Ty::Light => "Light",
            Ty::Item => "Item",
            Ty::P => "P",
        }
    }

    /// Whether a value of this type is not a copy (a read that keeps it is a `clone`).
    fn owned(self) -> bool {
        matches!(self, Ty::Str | Ty::P) || self.is_enum()
    }

    /// Whether the array library orders and compares values of this type (`sort`, `contains`).
    fn ordered(self) -> bool {
        matches!(self, Ty::I32 | Ty::I64 | Ty::F64 | Ty::Str)
    }

    /// Whether this is one of the prelude's enums.
    fn is_enum(self) -> bool {
        matches!(self, Ty::Tok | Ty::Light | Ty::Item)
    }

    /// An enum's variants in declaration order, with what each carries.
    fn variants(self) -> &'static [(&'static str, Payload)] {
        match self {
            Ty::Tok => &[
                ("Num", Payload::Of(Ty::I64)),
                ("Word", Payload::Of(Ty::Str)),
                ("Flag", Payload::Of(Ty::Bool)),
                ("End", Payload::Nothing),
            ],
            Ty::Light => &[("Red", Payload::Nothing), ("Amber", Payload::Nothing), ("Green", Payload::Nothing)],
            Ty::Item => &[
                ("Boxed", Payload::ClassP),
                ("Ratio", Payload::Of(Ty::F64)),
                ("Small", Payload::Of(Ty::I32)),
                ("Nothing", Payload::Nothing),
            ],
            _ => &[],
        }
    }

    const SCALARS: [Ty; 5] = [Ty::I32, Ty::I64, Ty::F64, Ty::Bool, Ty::Str];
    const ENUMS: [Ty; 3] = [Ty::Tok, Ty::Light, Ty::Item];
    /// What arrays hold.
    const ELEMENTS: [Ty; 9] = [Ty::I32, Ty::I64, Ty::F64, Ty::Bool, Ty::Str, Ty::Tok, Ty::Light, Ty::Item, Ty::P];
}

/// How a `match` reaches the value it inspects, which decides what its arms may not change
/// while they borrow a payload.
enum Scrutinee {
    /// A local (`match t`): the arm may not assign it or pass it `inout`.
    Local(String),
    /// An element of an array local (`match ts[i]`): the arm may not push to the array.
    Element(String),
    /// A temporary, a clone or a field of a literal nobody changes: no restriction.
    Free,
}

/// A local in scope: its name, type, whether it is `var`, and whether it is an array of `ty`.
#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    mutable: bool,
    array: bool,
}

/// The generator's state while it writes one function body.
struct Gen<'a, 'b> {
    u: &'a mut Unstructured<'b>,
    out: String,
    indent: usize,
    scopes: Vec<Vec<Var>>,
    next_name: usize,
    /// Arrays being iterated by an enclosing `for`, or whose element a `match` arm borrows a
    /// payload of, which may not be changed.
    iterating: Vec<String>,
    /// Enum locals whose payload a `match` arm borrows, which may not be assigned or passed
    /// `inout`.
    frozen: Vec<String>,
    /// How many loops enclose the statement being written (`break` and `continue` need one).
    loops: u32,
    /// Statements left in this item, so that it stays small and ends.
    budget: u32,
    /// What the body being written is: where it lives and what it may do.
    body: Body,
    /// The functions written so far. A body calls only functions written before it, so nothing
    /// recurses, and a function's body calls none inside a loop, so calls cannot multiply.
    funcs: Vec<Func>,
    /// For a program with a module `lib` (which then holds the prelude): the names the main
    /// file imports unqualified (`import lib.{…}`); every other name of `lib` it qualifies.
    imports: Option<Vec<String>>,
    /// Whether the main file declares the configuration `Knobs` (`knobs.rs`), whose values the
    /// main file's expressions may read.
    knobs: bool,
    /// Which optional forms the program may contain.
    config: Config,
}

/// Which optional forms [`program_with`] writes. The default ([`program`], [`from_seed`]) is
/// what every executor runs, the interpreter and the JIT included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Recursive async functions and tasks that spawn tasks of their own function (`sleep`,
    /// `scope`, `spawn`, `join`; `waits.rs`). They make `main` async, which the JIT refuses
    /// (M109), and the interpreter refuses tasks (I103): such programs are for the compiled
    /// backends (`rust`, `llvm`). With it off, a seed gives the same program as before it existed.
    pub waits: bool,
}

/// What the body being written is.
#[derive(Clone, Copy, Debug)]
struct Body {
    /// The file it is in, which decides how it names the module's items.
    file: File,
    /// Whether it may `fail` and `try`: a function declared `fails`, or a test.
    fails: bool,
    /// The function's result, for a `return` inside it; `None` in `main` and tests.
    ret: Option<Ret>,
}

/// A program drawn from `u`: the prelude, random functions (some declared `fails`), a `main` of
/// random statements and random tests; a third of the programs keep the prelude and some of
/// the functions and tests in a module `lib`, which the main file imports. The text holds
/// every file of the program, the main file first, each other one after a [`MODULE_LINE`]
/// ([`files`] splits it).
///
/// Errors: only `arbitrary`'s own (it never runs out of data: exhausted input reads as zeros).
pub fn program(u: &mut Unstructured) -> Result<String> {
    program_with(u, &Config::default())
}

/// A program drawn from `u` as [`program`] draws one, with the optional forms `config` asks for.
///
/// Errors: only `arbitrary`'s own.
pub fn program_with(u: &mut Unstructured, config: &Config) -> Result<String> {
    let mut g = Gen {
        u,
        out: String::new(),
        indent: 1,
        scopes: vec![Vec::new()],
        next_name: 0,
        iterating: Vec::new(),
        frozen: Vec::new(),
        loops: 0,
        budget: 0,
        body: Body { file: File::Main, fails: false, ret: None },
        funcs: Vec::new(),
        imports: None,
        config: *config,
        knobs: false,
    };
    let mut lib = String::new();
    if g.u.ratio(1, 3)? {
        g.imports = Some(Vec::new());
        lib.push_str(&prelude::public(config));
        for _ in 0..g.u.int_in_range(0..=2)? {
            lib.push_str(&g.function(File::Lib)?);
        }
        g.imports = Some(g.choose_imports()?);
    }
    let mut text = match g.imports.clone() {
        Some(imports) => g.import_lines(&imports)?,
        None => prelude::text(config),
    };
    if g.u.ratio(1, 3)? {
        text.push_str(&g.knobs_decl()?);
    }
    for _ in 0..g.u.int_in_range(0..=3)? {
        text.push_str(&g.function(File::Main)?);
    }
    let main = g.item_body(Body { file: File::Main, fails: false, ret: None }, Vec::new(), 40, |g| {
        let count = g.u.int_in_range(4..=14)?;
        (0..count).try_for_each(|_| g.stmt(0))
    })?;
    text.push_str(&format!("fn main() {{\n{main}}}\n"));
    for _ in 0..g.u.int_in_range(0..=2)? {
        text.push('\n');
        text.push_str(&g.test_block(File::Main)?);
    }
    if g.imports.is_some() {
        if g.u.ratio(1, 3)? {
            lib.push('\n');
            lib.push_str(&g.test_block(File::Lib)?);
        }
        text.push('\n');
        text.push_str(MODULE_LINE);
        text.push('\n');
        text.push_str(&lib);
    }
    Ok(text)
}

/// The program for `seed`: `size` bytes from a splitmix64 stream fed to [`program`].
pub fn from_seed(seed: u64, size: usize) -> String {
    from_seed_with(seed, size, &Config::default())
}

/// The program for `seed` with the optional forms `config` asks for: [`from_seed`]'s bytes fed
/// to [`program_with`].
pub fn from_seed_with(seed: u64, size: usize, config: &Config) -> String {
    let mut state = seed;
    let mut bytes = Vec::with_capacity(size);
    while bytes.len() < size {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        bytes.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    program_with(&mut Unstructured::new(&bytes), config).unwrap_or_default()
}

impl Gen<'_, '_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Writes the body of an item (`main`, a function or a test) with `vars` in scope (its
    /// parameters) and at most `budget` statements, and returns its text.
    fn item_body(
        &mut self,
        body: Body,
        vars: Vec<Var>,
        budget: u32,
        write: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<String> {
        self.body = body;
        self.out.clear();
        self.indent = 1;
        self.scopes = vec![vars];
        self.iterating.clear();
        self.frozen.clear();
        self.loops = 0;
        self.budget = budget;
        write(self)?;
        Ok(std::mem::take(&mut self.out))
    }

    fn fresh(&mut self, base: &str) -> String {
        self.next_name += 1;
        format!("{base}{}", self.next_name)
    }

    fn declare(&mut self, var: Var) {
        self.scopes.last_mut().expect("a scope").push(var);
    }

    fn vars(&self, pred: impl Fn(&Var) -> bool) -> Vec<Var> {
        self.scopes.iter().flatten().filter(|v| pred(v)).cloned().collect()
    }

    fn pick_var(&mut self, pred: impl Fn(&Var) -> bool) -> Result<Option<Var>> {
        let vars = self.vars(pred);
        if vars.is_empty() { Ok(None) } else { Ok(Some(self.u.choose(&vars)?.clone())) }
    }

    /// Runs `body` one indentation level deeper, in a scope of its own.
    fn block(&mut self, body: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        self.indent += 1;
        self.scopes.push(Vec::new());
        let result = body(self);
        self.scopes.pop();
        self.indent -= 1;
        result
    }

    /// One statement; `depth` is how deeply blocks nest here.
    fn stmt(&mut self, depth: u32) -> Result<()> {
        if self.budget == 0 {
            return Ok(());
        }
        self.budget -= 1;
        // A call of a helper that waits, or a `scope` of tasks (only where asked for).
        if self.may_wait() && self.u.ratio(1, 8)? {
            return self.wait_stmt(depth);
        }
        let choice = self.u.int_in_range(0..=23)?;
        match choice {
            0..=2 => self.declare_scalar(),
            3 => self.declare_array(),
            4 | 5 => self.print_expr(),
            6 => self.assign(),
            7 if depth < 3 => self.if_stmt(depth),
            8 if depth < 3 => self.counted_loop(depth),
            9 if depth < 3 => self.for_each(depth),
            10 => self.push(),
            11 => self.class_literal(),
            12 => self.option_stmt(),
            13 | 14 => self.enum_local(),
            15 if depth < 3 => self.enum_match(depth),
            16 if depth < 3 => self.literal_match(depth),
            17 | 18 => self.array_stmt(depth),
            19 if self.u.ratio(1, 4)? => self.caught_call(),
            19 => self.exit_stmt(),
            20 if self.body.fails || self.u.ratio(1, 8)? => self.assertion(),
            21 => self.map_stmt(),
            22 if self.u.ratio(1, 3)? => self.uuid_stmt(),
            22 => self.time_stmt(),
            23 => self.generic_stmt(),
            _ => self.print_expr(),
        }
    }

    fn declare_scalar(&mut self) -> Result<()> {
        let ty = *self.u.choose(&Ty::SCALARS)?;
        let value = self.expr(ty, 3)?;
        let mutable = self.u.ratio(2, 3)?;
        let name = self.fresh("v");
        let keyword = if mutable { "var" } else { "let" };
        self.line(&format!("{keyword} {name}: {} = {value}", ty.name()));
        self.declare(Var { name, ty, mutable, array: false });
        Ok(())
    }

    fn declare_array(&mut self) -> Result<()> {
        let ty = *self.u.choose(&Ty::ELEMENTS)?;
        let len = self.u.int_in_range(0..=4)?;
        let mut items = Vec::new();
        for _ in 0..len {
            items.push(self.expr(ty, 2)?);
        }
        let name = self.fresh("xs");
        let element = self.ty_text(ty)?;
        self.line(&format!("var {name}: [{element}] = [{}]", items.join(", ")));
        self.declare(Var { name, ty, mutable: true, array: true });
        Ok(())
    }

    fn print_expr(&mut self) -> Result<()> {
        let ty = *self.u.choose(&Ty::SCALARS)?;
        let value = self.expr(ty, 4)?;
        self.line(&format!("print({value})"));
        Ok(())
    }

    fn assign(&mut self) -> Result<()> {
        let frozen = self.frozen.clone();
        let Some(var) = self.pick_var(|v| v.mutable && !v.array && !frozen.contains(&v.name))? else {
            return self.print_expr();
        };
        if var.ty == Ty::P && self.u.ratio(1, 2)? {
            // A field of a class local: the place is the field.
            let (field, ty) = *self.u.choose(&[("a", Ty::I64), ("b", Ty::F64), ("c", Ty::Str)])?;
            let value = self.expr(ty, 3)?;
            let op = if ty == Ty::Str { "=" } else { *self.u.choose(&["=", "=", "+=", "*="])? };
            self.line(&format!("{}.{field} {op} {value}", var.name));
            return Ok(());
        }
        let value = self.expr(var.ty, 3)?;
        let compound = var.ty != Ty::Bool && var.ty != Ty::P && !var.ty.is_enum() && self.u.ratio(1, 3)?;
        let op = match (compound, var.ty) {
            (false, _) => "=",
            (true, Ty::Str) => "+=",
            (true, Ty::F64) => *self.u.choose(&["+=", "-=", "*="])?,
            (true, _) => *self.u.choose(&["+=", "-=", "*=", "%="])?,
        };
        self.line(&format!("{} {op} {value}", var.name));
        Ok(())
    }

    fn if_stmt(&mut self, depth: u32) -> Result<()> {
        let cond = self.expr(Ty::Bool, 3)?;
        self.line(&format!("if {cond} {{"));
        let n = self.u.int_in_range(1..=3)?;
        self.block(|g| (0..n).try_for_each(|_| g.stmt(depth + 1)))?;
        if self.u.ratio(1, 2)? {
            self.line("} else {");
            let n = self.u.int_in_range(1..=2)?;
            self.block(|g| (0..n).try_for_each(|_| g.stmt(depth + 1)))?;
        }
        self.line("}");
        Ok(())
    }

    /// `for i in a..b` or a `while` with a counter: at most a few iterations either way.
    fn counted_loop(&mut self, depth: u32) -> Result<()> {
        let n = self.u.int_in_range(0..=4)?;
        let body = self.u.int_in_range(1..=3)?;
        if self.u.ratio(1, 2)? {
            let i = self.fresh("i");
            let start = self.u.int_in_range(-2..=1)?;
            self.line(&format!("for {i} in {start}..{} {{", start + n));
            self.block(|g| {
                g.declare(Var { name: i.clone(), ty: Ty::I64, mutable: false, array: false });
                g.loops += 1;
                let result = (0..body).try_for_each(|_| g.stmt(depth + 1));
                g.loops -= 1;
                result
            })?;
        } else {
            let k = self.fresh("k");
            self.line(&format!("var {k}: i64 = 0"));
            self.line(&format!("while {k} < {n} {{"));
            self.block(|g| {
                // The counter goes up first, so a `continue` in the body cannot loop forever.
                g.line(&format!("{k} += 1"));
                g.loops += 1;
                let result = (0..body).try_for_each(|_| g.stmt(depth + 1));
                g.loops -= 1;
                result
            })?;
            self.line("}");
            return Ok(());
        }
        self.line("}");
        Ok(())
    }

    fn for_each(&mut self, depth: u32) -> Result<()> {
        let Some(array) = self.pick_var(|v| v.array)? else { return self.counted_loop(depth) };
        let x = self.fresh("x");
        self.line(&format!("for {x} in {} {{", array.name));
        self.iterating.push(array.name.clone());
        let n = self.u.int_in_range(1..=2)?;
        let result = self.block(|g| {
            g.declare(Var { name: x.clone(), ty: array.ty, mutable: false, array: false });
            g.loops += 1;
            let result = (0..n).try_for_each(|_| g.stmt(depth + 1));
            g.loops -= 1;
            result
        });
        self.iterating.pop();
        result?;
        self.line("}");
        Ok(())
    }

    fn push(&mut self) -> Result<()> {
        let iterating = self.iterating.clone();
        let Some(array) = self.pick_var(|v| v.array && v.mutable && !iterating.contains(&v.name))? else {
            return self.declare_array();
        };
        let value = self.expr(array.ty, 2)?;
        self.line(&format!("{}.push({value})", array.name));
        Ok(())
    }

    /// A `P` literal with its fields in a random order (evaluated as written), each at most
    /// `depth` operators deep.
    fn p_literal(&mut self, depth: u32) -> Result<String> {
        let mut fields =
            [("a", self.expr(Ty::I64, depth)?), ("b", self.expr(Ty::F64, depth)?), ("c", self.expr(Ty::Str, depth)?)];
        self.shuffle(&mut fields)?;
        let text: Vec<String> = fields.iter().map(|(f, v)| format!("{f}: {v}")).collect();
        Ok(format!("{} {{ {} }}", self.q("P")?, text.join(", ")))
    }

    /// A random permutation of `items` (Fisher–Yates).
    fn shuffle<T>(&mut self, items: &mut [T]) -> Result<()> {
        for i in (1..items.len()).rev() {
            let j = self.u.int_in_range(0..=i)?;
            items.swap(i, j);
        }
        Ok(())
    }

    /// A `P` local (a literal, or any `P` value), then reads of its fields.
    fn class_literal(&mut self) -> Result<()> {
        let value = if self.u.ratio(3, 4)? { self.p_literal(2)? } else { self.expr(Ty::P, 2)? };
        let name = self.fresh("p");
        self.line(&format!("var {name} = {value}"));
        let field = *self.u.choose(&["a", "b", "c"])?;
        self.line(&format!("print({name}.{field})"));
        if self.u.ratio(1, 2)? {
            let value = self.expr(Ty::I64, 2)?;
            self.line(&format!("{name}.a = {value}"));
            let bump = self.q("bump_i64")?;
            self.line(&format!("print({name}.a + {bump}({name}.a))"));
        }
        self.declare(Var { name, ty: Ty::P, mutable: true, array: false });
        Ok(())
    }

    fn option_stmt(&mut self) -> Result<()> {
        let name = self.fresh("o");
        let value = match self.call(Ret::OptI64, 2)? {
            Some(call) if self.u.ratio(1, 2)? => call,
            _ if self.u.ratio(1, 3)? => "none".to_string(),
            _ => self.expr(Ty::I64, 2)?,
        };
        self.line(&format!("var {name}: i64? = {value}"));
        if self.u.ratio(1, 2)? {
            let half = self.q("half")?;
            self.line(&format!("{name} = {half}({name})"));
        }
        let v = self.fresh("w");
        self.line(&format!("if let {v} = {name} {{"));
        self.indent += 1;
        self.line(&format!("print({v})"));
        self.indent -= 1;
        self.line("} else {");
        self.indent += 1;
        self.line("print(\"none\")");
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// An expression of type `ty`, at most `depth` operators deep.
    fn expr(&mut self, ty: Ty, depth: u32) -> Result<String> {
        if depth == 0 || self.u.ratio(1, 4)? {
            return self.leaf(ty);
        }
        let d = depth - 1;
        // A call of a helper that waits, in the middle of the expression (only where asked for).
        if matches!(ty, Ty::I64 | Ty::Bool | Ty::Str) && self.may_wait() && self.u.ratio(1, 12)? {
            return self.wait_call(ty, d);
        }
        // A call of a function the generator wrote, now and then.
        if self.u.ratio(1, 10)?
            && let Some(call) = self.call(Ret::Of(ty), d)?
        {
            return Ok(call);
        }
        match ty {
            Ty::I32 | Ty::I64 => self.int_expr(ty, d),
            Ty::F64 => self.float_expr(d),
            Ty::Bool => self.bool_expr(d),
            Ty::Str => self.str_expr(d),
            Ty::Tok | Ty::Light | Ty::Item => self.enum_expr(ty, d),
            Ty::P => self.p_literal(d.min(2)),
        }
    }

    fn leaf(&mut self, ty: Ty) -> Result<String> {
        if self.u.ratio(1, 2)?
            && let Some(var) = self.pick_var(|v| v.ty == ty && !v.array)?
        {
            // A String, a class or an enum is never moved: reading a clone keeps every later
            // use valid.
            return Ok(if ty.owned() { format!("{}.clone()", var.name) } else { var.name });
        }
        if let Some(read) = self.knob(ty)? {
            return Ok(read);
        }
        // A field of a class value: a copy, or a clone of the string.
        if matches!(ty, Ty::I64 | Ty::F64 | Ty::Str)
            && self.u.ratio(1, 6)?
            && let Some(var) = self.pick_var(|v| v.ty == Ty::P && !v.array)?
        {
            return Ok(match ty {
                Ty::I64 => format!("{}.a", var.name),
                Ty::F64 => format!("{}.b", var.name),
                _ => format!("{}.c.clone()", var.name),
            });
        }
        self.literal(ty)
    }

    fn literal(&mut self, ty: Ty) -> Result<String> {
        Ok(match ty {
            Ty::I32 => {
                let edges = ["0", "1", "-1", "7", "100", "2147483647", "(-2147483648)", "31", "32", "-33"];
                self.u.choose(&edges)?.to_string()
            }
            Ty::I64 => {
                let edges =
                    ["0", "1", "-1", "3", "64", "65", "-7", "1000", "9223372036854775807", "(-9223372036854775808)"];
                self.u.choose(&edges)?.to_string()
            }
            Ty::F64 => {
                let edges = [
                    "0.0",
                    "(-0.0)",
                    "1.5",
                    "(-2.25)",
                    "1e308",
                    "5e-324",
                    "(0.0 / 0.0)",
                    "(1.0 / 0.0)",
                    "(-1.0 / 0.0)",
                    "0.1",
                    "3.0",
                    "(-(0.0 / 0.0))",
                ];
                self.u.choose(&edges)?.to_string()
            }
            Ty::Bool => (if self.u.arbitrary()? { "true" } else { "false" }).to_string(),
            Ty::Str => (*self.u.choose(&["\"\"", "\"a\"", "\"nagi\"", "\"x y\""])?).to_string(),
            Ty::Tok | Ty::Light | Ty::Item => {
                let index = self.u.choose_index(ty.variants().len())?;
                self.variant_value(ty, index, 0)?
            }
            Ty::P => self.p_literal(0)?,
        })
    }

    fn int_expr(&mut self, ty: Ty, d: u32) -> Result<String> {
        let t = ty.name();
        Ok(match self.u.int_in_range(0..=14)? {
            0 => {
                let op = *self.u.choose(&["+", "-", "*", "&", "|", "^"])?;
                format!("({} {op} {})", self.expr(ty, d)?, self.expr(ty, d)?)
            }
            1 => {
                // Division: mostly by a non-zero literal, sometimes by anything (it may trap).
                let op = *self.u.choose(&["/", "%"])?;
                let divisor = if self.u.ratio(3, 4)? {
                    (*self.u.choose(&["3", "-1", "7", "2"])?).to_string()
                } else {
                    self.expr(ty, d)?
                };
                format!("({} {op} {divisor})", self.expr(ty, d)?)
            }
            2 => {
                let op = *self.u.choose(&["<<", ">>"])?;
                format!("({} {op} {})", self.expr(ty, d)?, self.expr(ty, d)?)
            }
            3 => format!("(-{})", self.expr(ty, d)?),
            4 => {
                let f = *self.u.choose(&["min", "max"])?;
                format!("{f}({}, {})", self.expr(ty, d)?, self.expr(ty, d)?)
            }
            5 => format!("abs({})", self.expr(ty, d)?),
            6 => {
                let from = *self.u.choose(&[Ty::I32, Ty::I64, Ty::F64])?;
                format!("({} as {t})", self.expr(from, d)?)
            }
            7 => format!("{}({})", self.q(&format!("tap_{t}"))?, self.expr(ty, d)?),
            8 => match self.pick_var(|v| v.ty == ty && v.mutable && !v.array)? {
                // A variable read next to an `inout` call that changes it: evaluation order.
                Some(var) => format!("({} + {}({}))", var.name, self.q(&format!("bump_{t}"))?, var.name),
                None => self.leaf(ty)?,
            },
            9 => match self.pick_var(|v| v.array)? {
                Some(array) if ty == Ty::I64 => format!("{}.len()", array.name),
                Some(array) if array.ty == ty => {
                    // In range most of the time; sometimes any index (it may trap).
                    let index = if self.u.ratio(4, 5)? {
                        format!("(abs({}) % max({}.len(), 1))", self.expr(Ty::I64, 1)?, array.name)
                    } else {
                        self.expr(Ty::I64, 1)?
                    };
                    format!("{}[{index}]", array.name)
                }
                _ => self.leaf(ty)?,
            },
            10 if ty == Ty::I64 => format!("{}({} % 20)", self.q("rec")?, self.expr(Ty::I64, d)?),
            12 if ty == Ty::I64 => format!("{}({})", self.q("tok_score")?, self.enum_arg(Ty::Tok, d)?),
            12 | 13 if ty == Ty::I32 => format!("{}({})", self.q("light_code")?, self.enum_arg(Ty::Light, d)?),
            11 if ty == Ty::I64 && self.u.arbitrary()? => format!("{}.split(\"a\").len()", self.expr(Ty::Str, d)?),
            11 if ty == Ty::I64 => {
                // An `inout` enum changed inside an arm, read before and after: evaluation order.
                let frozen = self.frozen.clone();
                match self.pick_var(|v| v.ty == Ty::Tok && v.mutable && !v.array && !frozen.contains(&v.name))? {
                    Some(var) => format!("({}({2}) + {}({2}))", self.q("tok_score")?, self.q("tok_bump")?, var.name),
                    None => format!("{}({}({}))", self.q("tok_score")?, self.q("tok_of")?, self.expr(Ty::I64, d)?),
                }
            }
            14 if ty == Ty::I64 => match self.pick_var(|v| v.array)? {
                Some(array) => format!("{}.len()", self.slice(&array)?),
                None => format!("{}.len()", self.expr(Ty::Str, d)?),
            },
            _ if ty == Ty::I64 => format!("{}.len()", self.expr(Ty::Str, d)?),
            _ => self.leaf(ty)?,
        })
    }

    fn float_expr(&mut self, d: u32) -> Result<String> {
        Ok(match self.u.int_in_range(0..=8)? {
            0 | 1 => {
                let op = *self.u.choose(&["+", "-", "*", "/", "%"])?;
                format!("({} {op} {})", self.expr(Ty::F64, d)?, self.expr(Ty::F64, d)?)
            }
            2 => format!("(-{})", self.expr(Ty::F64, d)?),
            3 => {
                let f = *self.u.choose(&["min", "max"])?;
                format!("{f}({}, {})", self.expr(Ty::F64, d)?, self.expr(Ty::F64, d)?)
            }
            4 => format!("abs({})", self.expr(Ty::F64, d)?),
            5 => {
                let from = *self.u.choose(&[Ty::I32, Ty::I64])?;
                format!("({} as f64)", self.expr(from, d)?)
            }
            6 => format!("{}({})", self.q("tap_f64")?, self.expr(Ty::F64, d)?),
            7 => format!("{}({})", self.q("item_value")?, self.enum_arg(Ty::Item, d)?),
            _ => match self.pick_var(|v| v.ty == Ty::F64 && v.mutable && !v.array)? {
                Some(var) => format!("({} - {}({}))", var.name, self.q("bump_f64")?, var.name),
                None => self.leaf(Ty::F64)?,
            },
        })
    }

    fn bool_expr(&mut self, d: u32) -> Result<String> {
        Ok(match self.u.int_in_range(0..=6)? {
            0 | 1 => {
                let ty = *self.u.choose(&[Ty::I32, Ty::I64, Ty::F64])?;
                let op = *self.u.choose(&["==", "!=", "<", "<=", ">", ">="])?;
                format!("({} {op} {})", self.expr(ty, d)?, self.expr(ty, d)?)
            }
            2 => {
                // The right side prints, so a wrong short circuit shows.
                let op = *self.u.choose(&["&&", "||"])?;
                let (lhs, tap) = (self.expr(Ty::Bool, d)?, self.q("tap_bool")?);
                format!("({lhs} {op} {tap}({}))", self.expr(Ty::Bool, d)?)
            }
            3 => format!("(!{})", self.expr(Ty::Bool, d)?),
            4 => {
                let op = *self.u.choose(&["==", "!="])?;
                format!("({} {op} {})", self.expr(Ty::Str, d)?, self.expr(Ty::Str, d)?)
            }
            5 if self.u.arbitrary()? => {
                let method = *self.u.choose(&["contains", "starts_with", "ends_with"])?;
                format!("{}.{method}({})", self.expr(Ty::Str, d)?, self.expr(Ty::Str, d)?)
            }
            6 => match self.pick_var(|v| v.array && v.ty.ordered())? {
                Some(array) => self.contains(&array, d)?,
                None => self.leaf(Ty::Bool)?,
            },
            _ => match self.pick_var(|v| v.ty == Ty::Bool && v.mutable && !v.array)? {
                // `b = a || b`: the destination read on the right.
                Some(var) => format!("({} || {})", self.expr(Ty::Bool, d)?, var.name),
                None => self.leaf(Ty::Bool)?,
            },
        })
    }

    fn str_expr(&mut self, d: u32) -> Result<String> {
        Ok(match self.u.int_in_range(0..=9)? {
            0 | 1 => format!("({} + {})", self.expr(Ty::Str, d)?, self.expr(Ty::Str, d)?),
            9 => self.interpolation(d)?,
            2 => {
                let from = *self.u.choose(&[Ty::I32, Ty::I64, Ty::F64, Ty::Bool])?;
                format!("to_string({})", self.expr(from, d)?)
            }
            // The string library: every generated string is ASCII, so any byte is a boundary.
            3 => {
                let method = *self.u.choose(&["trim", "to_lower", "to_upper"])?;
                format!("{}.{method}()", self.expr(Ty::Str, d)?)
            }
            4 => {
                // A one-character pattern and a short replacement, so a loop cannot grow a
                // string exponentially (an empty pattern matches between every two bytes).
                let s = self.expr(Ty::Str, d)?;
                let from = *self.u.choose(&["\"a\"", "\" \"", "\"n\""])?;
                let to = *self.u.choose(&["\"\"", "\"-\"", "\"xy\""])?;
                format!("{s}.replace({from}, {to})")
            }
            6 => format!("{}({})", self.q("tok_text")?, self.enum_arg(Ty::Tok, d)?),
            7 => match self.pick_var(|v| v.ty == Ty::Tok && v.array)? {
                Some(array) => format!("{}({})", self.q("first_word")?, array.name),
                None => format!("{}({})", self.q("light_name")?, self.enum_arg(Ty::Light, d)?),
            },
            5 => match self.pick_var(|v| v.ty == Ty::Str && !v.array)? {
                Some(var) => format!("{0}.slice({0}.len() / 3, {0}.len() / 2)", var.name),
                None => format!("{}.split(\" \").join(\",\")", self.expr(Ty::Str, d)?),
            },
            _ => match self.pick_var(|v| v.ty == Ty::Str && !v.array)? {
                Some(var) => format!("{}.clone()", var.name),
                None => self.leaf(Ty::Str)?,
            },
        })
    }

    /// An interpolated string: one to three holes of any type `to_string` takes, between texts
    /// that may hold an escaped brace.
    fn interpolation(&mut self, d: u32) -> Result<String> {
        let texts = ["", "a", " = ", "{{", "}}", "x y "];
        let mut s = String::from("\"");
        for _ in 0..self.u.int_in_range(1..=3)? {
            s.push_str(self.u.choose(&texts)?);
            let ty = *self.u.choose(&[Ty::I32, Ty::I64, Ty::F64, Ty::Bool, Ty::Str])?;
            s.push('{');
            s.push_str(&self.expr(ty, d)?);
            s.push('}');
        }
        s.push_str(self.u.choose(&texts)?);
        s.push('"');
        Ok(s)
    }
}

#[cfg(test)]
mod tests;
