//! Modules: `import` loads the files of a program, and their items become one program with
//! qualified names, which the checker sees as if written in one file.
//!
//! `import accounts` loads `accounts.nagi` beside the importing file (`import billing/invoices`
//! loads `billing/invoices.nagi`); the module is then used as `invoices.find(id)`,
//! `invoices.Invoice { … }`, `invoices.State.Paid`, and `import billing/invoices.{find, Invoice}`
//! also makes `find` and `Invoice` usable unqualified. Classes, enums and functions are private
//! to their module unless declared `pub`; tables and routes of every module belong to the one
//! service.
//!
//! Each file is loaded and parsed once, with its spans placed after the previous file's in one
//! span space ([`Sources`]), so that every diagnostic names its file. The items of a module other
//! than the main one get its path as a prefix, `/` written `.` (`billing.invoices.find`): that is
//! their name in the checker, in its messages and in Low (docs/low.md, "Modules"). References are
//! rewritten to those names before checking, so the checker and lowering know nothing of modules,
//! and the work is linear in the size of the program. A program of one file is left as written.
//!
//! Errors: `H230` a module that cannot be loaded, `H231` an import cycle (named in full), `H232`
//! a private item used from another module, `H233` a name a module does not declare, `H234` two
//! imports under one name or a variable named like an imported module, `H235` an item name with
//! `__` (the Rust emitter's spelling of the `.` of qualified names).

use std::collections::HashMap;

use nagi_low::{Diagnostic, Span};
use nagi_syntax::ast::{
    self, Block, Expr, ExprKind, ForIter, Ident, Item, PatternKind, SourceFile, Stmt, StmtKind, TypeExpr, TypeExprKind,
};

/// Where the files of a program come from.
pub trait Loader {
    /// The text of the module at `path` (segments joined by `/`, relative to the main file's
    /// directory, without `.nagi`) and the file's name for messages; the error says why it
    /// cannot be read.
    fn load(&mut self, path: &str) -> Result<(String, String), String>;
}

/// Reads modules from files: `import billing/invoices` is `billing/invoices.nagi` in `dir`, the
/// main file's directory. The compiler does no IO: `read` is the caller's (the driver passes
/// `std::fs::read`).
pub struct Directory<R> {
    /// The main file's directory.
    pub dir: std::path::PathBuf,
    /// Reads a file's bytes.
    pub read: R,
}

impl<R: FnMut(&std::path::Path) -> std::io::Result<Vec<u8>>> Loader for Directory<R> {
    fn load(&mut self, path: &str) -> Result<(String, String), String> {
        let file = self.dir.join(format!("{path}.nagi"));
        let name = file.display().to_string();
        let bytes = (self.read)(&file).map_err(|e| format!("cannot read {name}: {e}"))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| format!("{name} is not UTF-8 (at byte {})", e.utf8_error().valid_up_to()))?;
        Ok((name, text))
    }
}

/// A loader for a program of one text, which imports nothing.
pub struct NoImports;

impl Loader for NoImports {
    fn load(&mut self, path: &str) -> Result<(String, String), String> {
        Err(format!("`{path}` cannot be loaded: this program is compiled from a text, not from a file"))
    }
}

/// The files of a program and where each starts in the shared span space.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    files: Vec<SourceText>,
}

#[derive(Clone, Debug)]
struct SourceText {
    name: String,
    text: String,
    base: usize,
}

impl Sources {
    /// Adds a file, placed after the others (one byte apart, so that an end-of-file span of one
    /// file is not the start of the next); returns its base.
    fn add(&mut self, name: String, text: String) -> usize {
        let base = self.files.last().map_or(0, |f| f.base + f.text.len() + 1);
        self.files.push(SourceText { name, text, base });
        base
    }

    /// The number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are no files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Each file's name, its base in the span space and its text, in order.
    pub fn files(&self) -> impl Iterator<Item = (&str, usize, &str)> {
        self.files.iter().map(|f| (f.name.as_str(), f.base, f.text.as_str()))
    }

    /// The file the byte `at` of the span space lies in: its name, base and text.
    pub fn file_at(&self, at: usize) -> Option<(&str, usize, &str)> {
        self.files.iter().rev().find(|f| f.base <= at).map(|f| (f.name.as_str(), f.base, f.text.as_str()))
    }

    /// The base in the span space of the file called `name`.
    pub fn base_of(&self, name: &str) -> Option<usize> {
        self.files.iter().find(|f| f.name == name).map(|f| f.base)
    }

    /// `file:line:col` of the byte `at` of the span space (columns count characters, from 1).
    pub fn locate(&self, at: usize) -> String {
        let Some(file) = self.files.iter().rev().find(|f| f.base <= at) else { return format!("byte {at}") };
        let offset = (at - file.base).min(file.text.len());
        let before = &file.text[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("{}:{line}:{col}", file.name)
    }

    /// The doc comment of the item whose span starts at byte `at` of the span space: the
    /// `///` lines directly above the item's line, without the slashes and the one space after
    /// them, joined by newlines; `None` when there are none.
    pub fn doc_comment(&self, at: usize) -> Option<String> {
        let file = self.files.iter().rev().find(|f| f.base <= at)?;
        let offset = (at - file.base).min(file.text.len());
        let line_start = file.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let mut lines: Vec<&str> = file.text[..line_start]
            .lines()
            .rev()
            .map(str::trim_start)
            .take_while(|line| line.starts_with("///"))
            .map(|line| {
                let text = &line[3..];
                text.strip_prefix(' ').unwrap_or(text).trim_end()
            })
            .collect();
        lines.reverse();
        let text = lines.join("\n");
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    /// Renders each diagnostic against the file its span lies in (the first file for one
    /// without a span), as `file:line:col: error[CODE]: …`.
    pub fn render(&self, diagnostics: &[Diagnostic]) -> String {
        let mut out = String::new();
        for d in diagnostics {
            let file = d
                .span
                .and_then(|s| self.files.iter().rev().find(|f| f.base <= s.start as usize))
                .or(self.files.first());
            match file {
                Some(file) => {
                    let mut local = d.clone();
                    local.span = d.span.map(|s| Span {
                        start: s.start - file.base as u32,
                        end: s.end.saturating_sub(file.base as u32).max(s.start - file.base as u32),
                    });
                    out.push_str(&local.render(&file.name, &file.text));
                }
                None => out.push_str(&d.render("<input>", "")),
            }
        }
        out
    }
}

/// One loaded module.
struct Unit {
    /// The path, `billing/invoices`; empty for the main file.
    path: String,
    ast: SourceFile,
    /// Module aliases (`invoices`) to units.
    aliases: HashMap<String, usize>,
    /// Names imported unqualified: name → (unit, name there).
    imported: HashMap<String, usize>,
}

impl Unit {
    /// The qualified name of this module's item `name`.
    fn qualified(&self, name: &str) -> String {
        if self.path.is_empty() { name.to_string() } else { format!("{}.{name}", self.path.replace('/', ".")) }
    }
}

/// What kind of item a name declares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Function,
    Class,
    Enum,
}

/// The kinds a type name may refer to.
const TYPES: &[Kind] = &[Kind::Class, Kind::Enum];

/// Loads the main file's imports and everything they import, and gives back the whole program
/// as one file with qualified names, with the files for diagnostics. Errors: every module
/// problem found, or the first syntax error of a file.
pub fn load_program(
    main_name: &str,
    main_text: &str,
    loader: &mut dyn Loader,
) -> Result<(SourceFile, Sources), (Vec<Diagnostic>, Sources)> {
    let mut sources = Sources::default();
    let base = sources.add(main_name.to_string(), main_text.to_string());
    let main = match parse(main_text, base) {
        Ok(ast) => ast,
        Err(d) => return Err((vec![d], sources)),
    };
    let mut program = Program { units: Vec::new(), by_path: HashMap::new(), diags: Vec::new() };
    program.units.push(Unit { path: String::new(), ast: main, aliases: HashMap::new(), imported: HashMap::new() });
    program.by_path.insert(String::new(), 0);
    if let Err(d) = program.load_imports(0, &mut sources, loader, &mut Vec::new()) {
        return Err((vec![d], sources));
    }
    if program.units.len() == 1 {
        // One file: nothing to qualify (and an `import` in it would have been loaded).
        let file = program.units.pop().map(|u| u.ast).unwrap_or(SourceFile { items: Vec::new() });
        return Ok((strip_imports(file), sources));
    }
    let merged = program.merge();
    if program.diags.is_empty() { Ok((merged, sources)) } else { Err((program.diags, sources)) }
}

/// The paths a file's text imports (`billing/invoices`), relative to its directory; none when
/// the text does not parse.
pub fn imports_of(text: &str) -> Vec<String> {
    let Ok(file) = nagi_syntax::parse(text) else { return Vec::new() };
    file.items
        .iter()
        .filter_map(|item| match item {
            Item::Import(import) => Some(import.path.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join("/")),
            _ => None,
        })
        .collect()
}

fn parse(text: &str, base: usize) -> Result<SourceFile, Diagnostic> {
    nagi_syntax::parse_at(text, base).map_err(|e| {
        Diagnostic::new("H100", e.message).at(Some(Span { start: e.span.start, end: e.span.end })).label(e.label)
    })
}

fn strip_imports(mut file: SourceFile) -> SourceFile {
    file.items.retain(|i| !matches!(i, Item::Import(_)));
    file
}

fn low_span(span: ast::Span) -> Span {
    Span { start: span.start, end: span.end }
}

fn error(code: &'static str, span: ast::Span, message: impl Into<String>, label: impl Into<String>) -> Diagnostic {
    Diagnostic::new(code, message).at(Some(low_span(span))).label(label)
}

struct Program {
    units: Vec<Unit>,
    by_path: HashMap<String, usize>,
    diags: Vec<Diagnostic>,
}

impl Program {
    /// Loads what unit `at` imports, depth first; `stack` holds the units being loaded, to name
    /// a cycle. Each file is loaded once.
    fn load_imports(
        &mut self,
        at: usize,
        sources: &mut Sources,
        loader: &mut dyn Loader,
        stack: &mut Vec<usize>,
    ) -> Result<(), Diagnostic> {
        stack.push(at);
        let imports: Vec<ast::ImportDecl> = self.units[at]
            .ast
            .items
            .iter()
            .filter_map(|i| if let Item::Import(d) = i { Some(d.clone()) } else { None })
            .collect();
        for import in imports {
            let dir = match self.units[at].path.rsplit_once('/') {
                Some((dir, _)) => format!("{dir}/"),
                None => String::new(),
            };
            let relative: Vec<&str> = import.path.iter().map(|s| s.name.as_str()).collect();
            let path = format!("{dir}{}", relative.join("/"));
            let alias = import.path.last().map_or_else(String::new, |s| s.name.clone());
            let target = match self.by_path.get(&path) {
                Some(&target) => {
                    if let Some(i) = stack.iter().position(|&u| u == target) {
                        let mut cycle: Vec<String> = stack[i..].iter().map(|&u| self.display(u)).collect();
                        cycle.push(self.display(target));
                        return Err(error(
                            "H231",
                            import.span,
                            format!("import cycle: {}", cycle.join(" → ")),
                            "imports a module that imports this one",
                        )
                        .note(
                            "modules must import each other in one direction; move what both need into a third module",
                        ));
                    }
                    target
                }
                None => {
                    let (name, text) = loader.load(&path).map_err(|why| {
                        error("H230", import.span, format!("cannot load module `{path}`: {why}"), "unknown module")
                    })?;
                    let base = sources.add(name, text.clone());
                    let ast = parse(&text, base)?;
                    let target = self.units.len();
                    self.units.push(Unit {
                        path: path.clone(),
                        ast,
                        aliases: HashMap::new(),
                        imported: HashMap::new(),
                    });
                    self.by_path.insert(path.clone(), target);
                    self.load_imports(target, sources, loader, stack)?;
                    target
                }
            };
            let unit = &mut self.units[at];
            if unit.aliases.insert(alias.clone(), target).is_some_and(|other| other != target) {
                return Err(error(
                    "H234",
                    import.span,
                    format!("two imported modules are called `{alias}`"),
                    "imported under a name already taken",
                ));
            }
            for name in import.names.iter().flatten() {
                self.units[at].imported.insert(name.name.clone(), target);
            }
        }
        stack.pop();
        Ok(())
    }

    /// How messages name a unit: its path, or `the main file`.
    fn display(&self, unit: usize) -> String {
        let path = &self.units[unit].path;
        if path.is_empty() { "the main file".to_string() } else { format!("`{path}`") }
    }

    /// Every unit's items, qualified and with their references rewritten, in one file.
    fn merge(&mut self) -> SourceFile {
        // Each unit's declared names, so that lookups are constant time.
        let mut tables: Vec<HashMap<String, (Kind, bool)>> = Vec::with_capacity(self.units.len());
        for u in 0..self.units.len() {
            let mut table = HashMap::new();
            for item in &self.units[u].ast.items {
                let (name, kind, public) = match item {
                    Item::Function(f) => (&f.name, Kind::Function, f.public),
                    Item::Class(c) => (&c.name, Kind::Class, c.public),
                    Item::Enum(e) => (&e.name, Kind::Enum, e.public),
                    // An actor's name is its state's and its handle type's; it stays in its module.
                    Item::Actor(a) => (&a.name, Kind::Class, false),
                    _ => continue,
                };
                if name.name.contains("__") {
                    self.diags.push(
                        error("H235", name.span, format!("`{}` contains `__`", name.name), "reserved in item names")
                            .note("`__` spells the `.` of module paths in generated Rust; use one `_`"),
                    );
                }
                table.entry(name.name.clone()).or_insert((kind, public));
            }
            tables.push(table);
        }
        let mut items = Vec::new();
        for u in 0..self.units.len() {
            // The names a `.{…}` list imports must exist and be public.
            let imports: Vec<ast::ImportDecl> = self.units[u]
                .ast
                .items
                .iter()
                .filter_map(|i| if let Item::Import(d) = i { Some(d.clone()) } else { None })
                .collect();
            for import in &imports {
                let Some(target) = import.path.last().and_then(|a| self.units[u].aliases.get(&a.name).copied()) else {
                    continue;
                };
                for name in import.names.iter().flatten() {
                    if let Err(d) = self.check_visible(&tables, target, name) {
                        self.diags.push(d);
                    }
                }
            }
            let unit_items = std::mem::take(&mut self.units[u].ast.items);
            let mut rewriter = Rewriter {
                program: self,
                tables: &tables,
                unit: u,
                diags: Vec::new(),
                type_params: Vec::new(),
                bound: std::collections::HashSet::new(),
            };
            for mut item in unit_items {
                if rewriter.item(&mut item) {
                    items.push(item);
                }
            }
            let diags = rewriter.diags;
            self.diags.extend(diags);
        }
        SourceFile { items }
    }

    /// Whether `name` is a public item of unit `target`; the error says what is wrong.
    fn check_visible(
        &self,
        tables: &[HashMap<String, (Kind, bool)>],
        target: usize,
        name: &Ident,
    ) -> Result<Kind, Diagnostic> {
        let module = &self.units[target].path;
        match tables[target].get(&name.name) {
            None => Err(error(
                "H233",
                name.span,
                format!("module `{module}` has no item `{}`", name.name),
                "not declared there",
            )),
            Some((_, false)) => Err(error(
                "H232",
                name.span,
                format!("`{}` is private to module `{module}`", name.name),
                "not declared `pub`",
            )
            .note(format!("declare it `pub` in `{module}` to use it from other modules"))),
            Some((kind, true)) => Ok(*kind),
        }
    }
}

/// Rewrites one unit's items: declarations qualified, references resolved.
struct Rewriter<'p> {
    program: &'p Program,
    tables: &'p [HashMap<String, (Kind, bool)>],
    unit: usize,
    diags: Vec<Diagnostic>,
    /// The type parameters of the item being rewritten, which name no item and stay as
    /// written (`T` of `fn first<T>`, even where the module has an item `T`).
    type_params: Vec<String>,
    /// The names the item being rewritten binds (parameters and locals): a bare name that is
    /// none of them and names a function is that function, passed by its name.
    bound: std::collections::HashSet<String>,
}

impl Rewriter<'_> {
    fn this(&self) -> &Unit {
        &self.program.units[self.unit]
    }

    /// The qualified name an unqualified `name` of `kind` refers to: this module's item, or one
    /// imported by a `.{…}` list; `None` leaves the name as written (a builtin, a local, or an
    /// unknown name the checker reports).
    fn unqualified(&self, name: &str, kinds: &[Kind]) -> Option<String> {
        if self.tables[self.unit].get(name).is_some_and(|(k, _)| kinds.contains(k)) {
            return Some(self.this().qualified(name));
        }
        let &target = self.this().imported.get(name)?;
        let found = self.tables[target].get(name).filter(|(k, _)| kinds.contains(k));
        found.map(|_| self.program.units[target].qualified(name))
    }

    /// The module an alias names in this unit.
    fn module(&self, alias: &str) -> Option<usize> {
        self.this().aliases.get(alias).copied()
    }

    /// `alias.name`, of one of `kinds`, in the module `target`: its qualified name, or the error.
    fn qualified(&mut self, target: usize, name: &Ident, kinds: &[Kind]) -> Option<String> {
        match self.program.check_visible(self.tables, target, name) {
            Ok(found) if kinds.contains(&found) => Some(self.program.units[target].qualified(&name.name)),
            Ok(_) => {
                let what = match kinds {
                    [Kind::Function] => "a function",
                    [Kind::Enum] => "an enum",
                    _ => "a class or enum",
                };
                self.diags.push(error(
                    "H233",
                    name.span,
                    format!("`{}` in module `{}` is not {what}", name.name, self.program.units[target].path),
                    "another kind of item",
                ));
                None
            }
            Err(d) => {
                self.diags.push(d);
                None
            }
        }
    }

    /// Rewrites an item; `false` drops it (an import, which has done its work).
    fn item(&mut self, item: &mut Item) -> bool {
        let params = match item {
            Item::Function(f) => &f.type_params,
            Item::Class(c) => &c.type_params,
            Item::Enum(e) => &e.type_params,
            _ => &Vec::new(),
        };
        self.type_params = params.iter().map(|p| p.name.name.clone()).collect();
        self.bound.clear();
        match item {
            Item::Import(_) => return false,
            Item::Test(t) => self.block(&mut t.body),
            Item::Class(c) => {
                c.name.name = self.this().qualified(&c.name.name);
                for field in &mut c.fields {
                    self.ty(&mut field.ty);
                }
            }
            // Supervisors and queues live in the program's main file, whose names stay as
            // written: a queue's name is also what the database's rows name it by.
            Item::Supervisor(s) => self.main_file_only(&s.name, "H419", "a supervisor"),
            Item::Config(c) => self.main_file_only(&c.name, "H428", "a config"),
            Item::Schedule(s) => {
                self.main_file_only(&s.func, "H430", "a schedule");
                // An imported function (`import jobs.{cleanup}`) by its qualified name.
                if let Some(q) = self.unqualified(&s.func.name, &[Kind::Function]) {
                    s.func.name = q;
                }
            }
            Item::Queue(q) => {
                self.main_file_only(&q.name, "H426", "a queue");
                self.params(&mut q.handler.params);
                self.block(&mut q.handler.body);
            }
            Item::Actor(a) => {
                a.name.name = self.this().qualified(&a.name.name);
                for field in &mut a.fields {
                    self.ty(&mut field.ty);
                }
                self.block(&mut a.init);
                for handler in &mut a.handlers {
                    self.params(&mut handler.params);
                    if let Some(ret) = &mut handler.ret {
                        self.ty(ret);
                    }
                    self.block(&mut handler.body);
                }
            }
            Item::Enum(e) => {
                e.name.name = self.this().qualified(&e.name.name);
                for variant in &mut e.variants {
                    if let Some(ty) = &mut variant.payload {
                        self.ty(ty);
                    }
                }
            }
            Item::Table(t) => {
                if let Some(name) = self.unqualified(&t.class.name, &[Kind::Class]) {
                    t.class.name = name;
                }
            }
            Item::Route(r) => {
                self.params(&mut r.params);
                if let Some(ret) = &mut r.ret {
                    self.ty(ret);
                }
                self.block(&mut r.body);
            }
            Item::Function(f) => {
                f.name.name = self.this().qualified(&f.name.name);
                self.params(&mut f.params);
                if let Some(ret) = &mut f.ret {
                    self.ty(ret);
                }
                self.block(&mut f.body);
            }
        }
        true
    }

    /// Reports `what` (`code`) declared in an imported module rather than the main file.
    fn main_file_only(&mut self, name: &Ident, code: &'static str, what: &str) {
        if name.name != self.this().qualified(&name.name) {
            self.diags.push(error(
                code,
                name.span,
                format!("{what} is declared in the program's main file"),
                "in an imported module",
            ));
        }
    }

    fn params(&mut self, params: &mut [ast::Param]) {
        for param in params {
            self.binding(&param.name);
            self.ty(&mut param.ty);
            if let Some(default) = &mut param.default {
                self.expr(default);
            }
        }
    }

    /// A variable may not take the name of an imported module: `m.x` would be ambiguous.
    fn binding(&mut self, name: &Ident) {
        self.bound.insert(name.name.clone());
        if self.module(&name.name).is_some() {
            self.diags.push(
                error(
                    "H234",
                    name.span,
                    format!("`{}` is the name of an imported module", name.name),
                    "a module's name",
                )
                .note("choose another name for the variable"),
            );
        }
    }

    fn ty(&mut self, ty: &mut TypeExpr) {
        match &mut ty.kind {
            TypeExprKind::Named(name) => self.type_name(name, ty.span),
            TypeExprKind::Generic(name, args) => {
                self.type_name(name, ty.span);
                args.iter_mut().for_each(|a| self.ty(a));
            }
            TypeExprKind::Array(inner) | TypeExprKind::Option(inner) | TypeExprKind::Result(inner) => self.ty(inner),
            TypeExprKind::Map(key, value) => {
                self.ty(key);
                self.ty(value);
            }
            TypeExprKind::Fn(params, ret) => {
                params.iter_mut().for_each(|p| self.ty(p));
                if let Some(ret) = ret {
                    self.ty(ret);
                }
            }
        }
    }

    /// Qualifies a written type name (`Account`, `accounts.Account`) with the module it names.
    fn type_name(&mut self, name: &mut String, span: ast::Span) {
        let resolved = match name.split_once('.') {
            Some((alias, item)) => match self.module(alias) {
                Some(target) => {
                    let ident = Ident { name: item.to_string(), span };
                    self.qualified(target, &ident, TYPES)
                }
                None => {
                    self.diags.push(error(
                        "H230",
                        span,
                        format!("`{alias}` is not an imported module"),
                        "unknown module",
                    ));
                    None
                }
            },
            None if self.type_params.contains(name) => None,
            None => self.unqualified(name, TYPES),
        };
        if let Some(resolved) = resolved {
            *name = resolved;
        }
    }

    fn block(&mut self, block: &mut Block) {
        for stmt in &mut block.stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &mut Stmt) {
        match &mut stmt.kind {
            StmtKind::Let { name, ty, value, .. } => {
                self.binding(name);
                if let Some(ty) = ty {
                    self.ty(ty);
                }
                self.expr(value);
            }
            StmtKind::Assign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            StmtKind::If { cond, then_block, else_block } => {
                self.expr(cond);
                self.block(then_block);
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            StmtKind::IfLet { name, value, then_block, else_block } => {
                self.binding(name);
                self.expr(value);
                self.block(then_block);
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            StmtKind::For { var, iter, body } => {
                self.binding(var);
                match iter {
                    ForIter::Range(a, b) => {
                        self.expr(a);
                        self.expr(b);
                    }
                    ForIter::Each(e) => self.expr(e),
                    ForIter::Entries(value, e) => {
                        self.binding(value);
                        self.expr(e);
                    }
                }
                self.block(body);
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) | StmtKind::Defer(e) => self.expr(e),
            StmtKind::Transaction(body) | StmtKind::Scope(body) => self.block(body),
            StmtKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                for arm in arms {
                    for pattern in &mut arm.patterns {
                        if let PatternKind::Variant { enum_name, binding, .. } = &mut pattern.kind {
                            if let Some(b) = binding {
                                self.binding(b);
                            }
                            if let Some(e) = enum_name
                                && let Some(q) = self.unqualified(&e.name, &[Kind::Enum])
                            {
                                e.name = q;
                            }
                        }
                    }
                    self.block(&mut arm.body);
                }
            }
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue => {}
        }
    }

    /// The qualified name of the enum `e` names when it stands before a variant: `Role` (this
    /// module's or imported) or `m.Role`.
    fn enum_before_variant(&mut self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Name(id) => self.unqualified(&id.name, &[Kind::Enum]),
            ExprKind::Field { object, field } => match &object.kind {
                ExprKind::Name(alias) => {
                    let target = self.module(&alias.name)?;
                    self.qualified(target, field, &[Kind::Enum])
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn expr(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Int(_)
            | ExprKind::Duration(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::None => {}
            // A function of this module or imported, passed by its name (`apply(xs, twice)`).
            ExprKind::Name(id) => {
                if !self.bound.contains(&id.name)
                    && let Some(q) = self.unqualified(&id.name, &[Kind::Function])
                {
                    id.name = q;
                }
            }
            ExprKind::Array(items) | ExprKind::Interp { holes: items, .. } => {
                items.iter_mut().for_each(|i| self.expr(i))
            }
            ExprKind::Closure { params, body } => {
                for param in params.iter_mut() {
                    self.binding(&param.name);
                    if let Some(ty) = &mut param.ty {
                        self.ty(ty);
                    }
                }
                self.expr(body);
            }
            ExprKind::BlockClosure { params, ret, body } => {
                for param in params.iter_mut() {
                    self.binding(&param.name);
                    if let Some(ty) = &mut param.ty {
                        self.ty(ty);
                    }
                }
                if let Some(ret) = ret {
                    self.ty(ret);
                }
                self.block(body);
            }
            ExprKind::ClassLit { class, fields } => {
                for (_, value) in fields.iter_mut() {
                    self.expr(value);
                }
                let resolved = match class.name.split_once('.') {
                    Some((alias, name)) => match self.module(alias) {
                        Some(target) => {
                            let ident = Ident { name: name.to_string(), span: class.span };
                            self.qualified(target, &ident, &[Kind::Class])
                        }
                        None => None,
                    },
                    None => self.unqualified(&class.name, &[Kind::Class]),
                };
                if let Some(resolved) = resolved {
                    class.name = resolved;
                }
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Cast { expr, ty } => {
                self.expr(expr);
                self.ty(ty);
            }
            ExprKind::Call { callee, args } => {
                args.iter_mut().for_each(|a| self.expr(a));
                if let Some(q) = self.unqualified(&callee.name, &[Kind::Function]) {
                    callee.name = q;
                }
            }
            ExprKind::MethodCall { receiver, method, args } => {
                args.iter_mut().for_each(|a| self.expr(a));
                // `m.f(args)`: a function of module `m`.
                if let ExprKind::Name(alias) = &receiver.kind
                    && let Some(target) = self.module(&alias.name)
                {
                    let name = self.qualified(target, method, &[Kind::Function]);
                    let callee = Ident { name: name.unwrap_or_else(|| method.name.clone()), span: method.span };
                    let args = std::mem::take(args);
                    e.kind = ExprKind::Call { callee, args };
                    return;
                }
                // `Enum.Variant(x)` or `m.Enum.Variant(x)`.
                if let Some(q) = self.enum_before_variant(receiver) {
                    receiver.kind = ExprKind::Name(Ident { name: q, span: receiver.span });
                    return;
                }
                // `Name.start()` of an actor of this module.
                if method.name == "start"
                    && let ExprKind::Name(actor) = &receiver.kind
                    && let Some(q) = self.unqualified(&actor.name, &[Kind::Class])
                {
                    receiver.kind = ExprKind::Name(Ident { name: q, span: receiver.span });
                    return;
                }
                self.expr(receiver);
            }
            ExprKind::Field { object, field } => {
                // A module's function passed by its name (`apply(xs, util.twice)`).
                if let ExprKind::Name(alias) = &object.kind
                    && let Some(target) = self.module(&alias.name)
                    && self.tables[target].get(&field.name).is_some_and(|(k, _)| *k == Kind::Function)
                    && let Some(q) = self.qualified(target, field, &[Kind::Function])
                {
                    e.kind = ExprKind::Name(Ident { name: q, span: e.span });
                    return;
                }
                if let ExprKind::Name(alias) = &object.kind
                    && self.module(&alias.name).is_some()
                {
                    self.diags.push(error(
                        "H233",
                        e.span,
                        format!("`{}.{}` is not a value", alias.name, field.name),
                        "a module's item, not a value",
                    ));
                    return;
                }
                if let Some(q) = self.enum_before_variant(object) {
                    object.kind = ExprKind::Name(Ident { name: q, span: object.span });
                    return;
                }
                self.expr(object);
            }
            ExprKind::Index { array, index } => {
                self.expr(array);
                self.expr(index);
            }
            ExprKind::Db { class, args, .. } | ExprKind::Http { class, args, .. } => {
                if let Some(ty) = class {
                    self.ty(ty);
                }
                args.iter_mut().for_each(|a| self.expr(a));
            }
            ExprKind::Try(inner)
            | ExprKind::Spawn(inner)
            | ExprKind::SpawnBlocking(inner)
            | ExprKind::TryOption(inner)
            | ExprKind::Catch(inner)
            | ExprKind::Send(inner) => self.expr(inner),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::Loader;

    /// Modules held in memory, counting how often each is asked for.
    struct Memory {
        files: HashMap<String, String>,
        loads: HashMap<String, usize>,
    }

    impl Loader for Memory {
        fn load(&mut self, path: &str) -> Result<(String, String), String> {
            *self.loads.entry(path.to_string()).or_default() += 1;
            let text = self.files.get(path).cloned().ok_or_else(|| format!("no module {path}"))?;
            Ok((format!("{path}.nagi"), text))
        }
    }

    /// `n` modules `m0`…: module `i` imports the two before it (so most are reached along many
    /// paths) and calls them; the main file imports the last one.
    fn chain(n: usize) -> (String, Memory) {
        let mut files = HashMap::new();
        for i in 0..n {
            let mut text = String::new();
            let mut body = format!("{i}");
            for j in [i.wrapping_sub(1), i.wrapping_sub(2)] {
                if j < i {
                    text.push_str(&format!("import m{j}\n"));
                    body.push_str(&format!(" + m{j}.f{j}(x) % 7"));
                }
            }
            text.push_str(&format!(
                "pub class C{i} {{\n    v: i64\n}}\n\npub fn f{i}(x: i64) -> i64 {{\n    return {body}\n}}\n"
            ));
            files.insert(format!("m{i}"), text);
        }
        let last = n - 1;
        let main = format!("import m{last}\n\nfn main() {{\n    print(m{last}.f{last}(3))\n}}\n");
        (main, Memory { files, loads: HashMap::new() })
    }

    #[test]
    fn two_hundred_modules_are_each_loaded_once_and_become_one_program() {
        let (main, mut loader) = chain(200);
        let module = crate::compile_program("main.nagi", &main, "chain", &mut loader).map_err(|(d, s)| s.render(&d));
        let module = module.expect("compiles");
        assert_eq!(loader.loads.len(), 200);
        assert!(loader.loads.values().all(|&n| n == 1), "a module was loaded twice");
        assert_eq!(module.functions.len(), 201, "main and one function per module");
        assert_eq!(module.classes.len(), 200);
        assert!(module.function_by_name("m199.f199").is_some());
        assert!(module.class_by_name("m0.C0").is_some());
    }
}
