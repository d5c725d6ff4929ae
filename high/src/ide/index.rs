//! The index of a checked program: every name in its files, at its span, resolved to what it
//! names ([`Symbol`]), and the type of every expression. It is built by walking the (merged)
//! syntax tree beside the typed program, matched by span: the checker keeps each expression's
//! span, so the typed expression of a written one is found by its span alone.

use std::collections::HashMap;

use nagi_syntax::ast::{self, Span};

use crate::modules::Sources;
use crate::tir::{self, ClassIdx, EnumIdx, FnIdx, LocalIdx, Program, Ty};

/// What a name names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symbol {
    /// A parameter or local of a function.
    Local(FnIdx, LocalIdx),
    Function(FnIdx),
    Class(ClassIdx),
    /// A field of a class, by position.
    Field(ClassIdx, usize),
    Enum(EnumIdx),
    Variant(EnumIdx, usize),
    /// A table, by position in the program.
    Table(usize),
    /// A job queue, by position in the program.
    Queue(usize),
    /// A module: a file of the program, by its position in the span space's files (its
    /// declaration is the file's start).
    Module(usize),
}

/// One name in the text: where, what it names, and whether it declares it.
#[derive(Clone, Copy, Debug)]
pub struct Occurrence {
    pub span: Span,
    pub symbol: Symbol,
    pub definition: bool,
}

/// The program's names and expression types.
#[derive(Default)]
pub struct Index {
    pub occurrences: Vec<Occurrence>,
    /// Each typed expression's span and type.
    pub types: Vec<(Span, Ty)>,
}

/// Builds the index of `file` (the merged syntax tree) and `program` (its checked form).
pub fn build(file: &ast::SourceFile, program: &Program, sources: &Sources) -> Index {
    // The instances of a generic function share its body's spans: the first stands for them
    // all, so a name in the body is one symbol (its first instance's).
    let mut functions: HashMap<(u32, u32), FnIdx> = HashMap::new();
    for (i, f) in program.functions.iter().enumerate() {
        functions.entry((f.span.start, f.span.end)).or_insert(i);
    }
    let mut exprs: HashMap<(u32, u32), Vec<&tir::Expr>> = HashMap::new();
    let mut types = Vec::new();
    for (i, function) in program.functions.iter().enumerate() {
        if functions.get(&(function.span.start, function.span.end)) != Some(&i) {
            continue;
        }
        function.body.walk_statements(&mut |_, roots| {
            for root in roots {
                root.walk(&mut |e| {
                    exprs.entry((e.span.start, e.span.end)).or_default().push(e);
                    types.push((e.span, e.ty.clone()));
                });
            }
        });
    }
    let mut builder = Builder { program, exprs, functions, sources, current: None, out: Vec::new() };
    for item in &file.items {
        builder.item(item);
    }
    Index { occurrences: builder.out, types }
}

struct Builder<'p> {
    program: &'p Program,
    exprs: HashMap<(u32, u32), Vec<&'p tir::Expr>>,
    functions: HashMap<(u32, u32), FnIdx>,
    sources: &'p Sources,
    /// The function whose body is being walked.
    current: Option<FnIdx>,
    out: Vec<Occurrence>,
}

impl<'p> Builder<'p> {
    fn add(&mut self, span: Span, symbol: Symbol, definition: bool) {
        self.out.push(Occurrence { span, symbol, definition });
    }

    /// The file (by position) whose text holds `span`.
    fn file_of(&self, span: Span) -> Option<usize> {
        let at = span.start as usize;
        self.sources.files().filter(|(_, base, _)| *base <= at).count().checked_sub(1)
    }

    /// For a name written qualified (`accounts.find`) at `span` naming what is declared at
    /// `declared`: the module's name as written, as an occurrence of the declaring file. The
    /// modules' merge keeps a qualified type's span whole (`accounts.Account`) and a qualified
    /// call's at its last name (`find`, after `accounts.` in the text); a name imported
    /// unqualified has no module part.
    fn module_prefix(&mut self, span: Span, qualified: &str, declared: Span) {
        let (Some((path, _)), Some(file)) = (qualified.rsplit_once('.'), self.file_of(declared)) else { return };
        let alias = path.rsplit('.').next().unwrap_or(path);
        let Some((_, base, text)) = self.sources.file_at(span.start as usize) else { return };
        let start = span.start as usize - base;
        let written = &text[start..(span.end as usize - base).min(text.len())];
        let module = if written.starts_with(&format!("{alias}.")) {
            Some(start)
        } else {
            text[..start].strip_suffix(&format!("{alias}.")).map(|before| before.len())
        };
        if let Some(at) = module {
            let at = (at + base) as u32;
            self.add(Span { start: at, end: at + alias.len() as u32 }, Symbol::Module(file), false);
        }
    }

    /// The plain function called `name` (qualified for a module's), not a route or a test.
    fn function_named(&self, name: &str) -> Option<FnIdx> {
        let tests: Vec<FnIdx> = self.program.tests.iter().map(|t| t.function).collect();
        self.program
            .functions
            .iter()
            .enumerate()
            .position(|(i, f)| f.name == name && !f.is_route && !tests.contains(&i))
    }

    fn class(&self, name: &str) -> Option<ClassIdx> {
        self.program.classes.iter().position(|c| c.name == name)
    }

    fn enumeration(&self, name: &str) -> Option<EnumIdx> {
        self.program.enums.iter().position(|e| e.name == name)
    }

    /// The typed expressions written at `span`.
    fn typed(&self, span: Span) -> Vec<&'p tir::Expr> {
        self.exprs.get(&(span.start, span.end)).cloned().unwrap_or_default()
    }

    /// The local of the current function declared by the name at `span`.
    fn local_at(&self, span: Span) -> Option<(FnIdx, LocalIdx)> {
        let f = self.current?;
        self.program.functions[f].locals.iter().position(|l| l.span == span).map(|l| (f, l))
    }

    fn define_local(&mut self, name: &ast::Ident) {
        if let Some((f, l)) = self.local_at(name.span) {
            self.add(name.span, Symbol::Local(f, l), true);
        }
    }

    fn item(&mut self, item: &ast::Item) {
        match item {
            ast::Item::Class(d) => self.class_decl(&d.name, &d.fields),
            ast::Item::Enum(d) => {
                if let Some(e) = self.enumeration(&d.name.name) {
                    self.add(d.name.span, Symbol::Enum(e), true);
                    for (i, v) in d.variants.iter().enumerate() {
                        self.add(v.name.span, Symbol::Variant(e, i), true);
                        if let Some(ty) = &v.payload {
                            self.ty(ty);
                        }
                    }
                }
            }
            ast::Item::Table(d) => {
                if let Some(t) = self.program.tables.iter().position(|t| t.span == d.span) {
                    self.add(d.name.span, Symbol::Table(t), true);
                    let class = self.program.tables[t].class;
                    self.add(d.class.span, Symbol::Class(class), false);
                    self.add(d.key.span, Symbol::Field(class, self.program.tables[t].key), false);
                }
            }
            ast::Item::Function(d) => self.function(d.span, Some(&d.name), &d.params, &d.ret, &d.body),
            ast::Item::Route(d) => self.function(d.span, None, &d.params, &d.ret, &d.body),
            ast::Item::Test(d) => self.function(d.span, None, &[], &None, &d.body),
            ast::Item::Actor(d) => {
                // An actor's state is a class of its name.
                self.class_decl(&d.name, &d.fields);
                for h in &d.handlers {
                    self.function(h.span, Some(&h.name), &h.params, &h.ret, &h.body);
                }
            }
            ast::Item::Queue(d) => {
                if let Some(q) = self.program.queues.iter().position(|q| q.span == d.span) {
                    self.add(d.name.span, Symbol::Queue(q), true);
                }
                let h = &d.handler;
                self.function(h.span, Some(&h.name), &h.params, &h.ret, &h.body);
            }
            ast::Item::Config(d) => {
                for f in &d.fields {
                    self.ty(&f.ty);
                }
            }
            ast::Item::Import(d) => {
                let path: Vec<&str> = d.path.iter().map(|s| s.name.as_str()).collect();
                // `import billing/invoices.{find, Invoice}`: each name, as the module's item.
                for name in d.names.iter().flatten() {
                    let qualified = format!("{}.{}", path.join("."), name.name);
                    if let Some(f) = self.function_named(&qualified) {
                        self.add(name.span, Symbol::Function(f), false);
                    } else if let Some(c) = self.class(&qualified) {
                        self.add(name.span, Symbol::Class(c), false);
                    } else if let Some(e) = self.enumeration(&qualified) {
                        self.add(name.span, Symbol::Enum(e), false);
                    }
                }
                let file = format!("/{}.nagi", path.join("/"));
                if let (Some(last), Some(i)) =
                    (d.path.last(), self.sources.files().position(|(name, _, _)| name.ends_with(&file)))
                {
                    self.add(last.span, Symbol::Module(i), false);
                }
            }
            ast::Item::Schedule(d) => {
                if let Some(f) = self.function_named(&d.func.name) {
                    self.add(d.func.span, Symbol::Function(f), false);
                }
            }
            ast::Item::Supervisor(_) => {}
        }
    }

    /// A class's (or an actor state's) name and fields, declared.
    fn class_decl(&mut self, name: &ast::Ident, fields: &[ast::FieldDecl]) {
        if let Some(c) = self.class(&name.name) {
            self.add(name.span, Symbol::Class(c), true);
            for (i, field) in fields.iter().enumerate() {
                self.add(field.name.span, Symbol::Field(c, i), true);
                self.ty(&field.ty);
            }
        }
    }

    fn function(
        &mut self,
        span: Span,
        name: Option<&ast::Ident>,
        params: &[ast::Param],
        ret: &Option<ast::TypeExpr>,
        body: &ast::Block,
    ) {
        let Some(&f) = self.functions.get(&(span.start, span.end)) else { return };
        self.current = Some(f);
        if let Some(name) = name {
            self.add(name.span, Symbol::Function(f), true);
        }
        let function = &self.program.functions[f];
        for (i, p) in params.iter().enumerate() {
            if let Some(&local) = function.params.get(i) {
                self.add(p.name.span, Symbol::Local(f, local), true);
            }
            self.ty(&p.ty);
            if let Some(default) = &p.default {
                self.expr(default);
            }
        }
        if let Some(ret) = ret {
            self.ty(ret);
        }
        self.block(body);
        self.current = None;
    }

    fn ty(&mut self, ty: &ast::TypeExpr) {
        match &ty.kind {
            ast::TypeExprKind::Named(name) => {
                if let Some(c) = self.class(name) {
                    self.add(ty.span, Symbol::Class(c), false);
                    self.module_prefix(ty.span, name, self.program.classes[c].span);
                } else if let Some(e) = self.enumeration(name) {
                    self.add(ty.span, Symbol::Enum(e), false);
                    self.module_prefix(ty.span, name, self.program.enums[e].span);
                }
            }
            ast::TypeExprKind::Array(inner) | ast::TypeExprKind::Option(inner) | ast::TypeExprKind::Result(inner) => {
                self.ty(inner)
            }
            ast::TypeExprKind::Map(k, v) => {
                self.ty(k);
                self.ty(v);
            }
            // The template of a generic class is no class of the program (its instances are).
            ast::TypeExprKind::Generic(_, args) => args.iter().for_each(|a| self.ty(a)),
            ast::TypeExprKind::Fn(params, ret) => {
                params.iter().for_each(|p| self.ty(p));
                if let Some(ret) = ret {
                    self.ty(ret);
                }
            }
        }
    }

    fn block(&mut self, block: &ast::Block) {
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &ast::Stmt) {
        use ast::StmtKind::*;
        match &stmt.kind {
            Let { name, ty, value, .. } => {
                self.define_local(name);
                if let Some(ty) = ty {
                    self.ty(ty);
                }
                self.expr(value);
            }
            Assign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            If { cond, then_block, else_block } => {
                self.expr(cond);
                self.block(then_block);
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            IfLet { name, value, then_block, else_block } => {
                self.expr(value);
                self.define_local(name);
                self.block(then_block);
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            For { var, iter, body } => {
                match iter {
                    ast::ForIter::Range(a, b) => {
                        self.expr(a);
                        self.expr(b);
                    }
                    ast::ForIter::Each(e) => self.expr(e),
                    ast::ForIter::Entries(value, e) => {
                        self.expr(e);
                        self.define_local(value);
                    }
                }
                self.define_local(var);
                self.block(body);
            }
            Break | Continue | Return(None) => {}
            Return(Some(e)) | Defer(e) | Expr(e) => self.expr(e),
            Transaction(b) | Scope(b) => self.block(b),
            Match { scrutinee, arms } => {
                self.expr(scrutinee);
                let scrutinee_enum = self.typed(scrutinee.span).first().and_then(|e| match &e.ty {
                    Ty::Enum(en) => Some(*en),
                    _ => None,
                });
                for arm in arms {
                    for p in &arm.patterns {
                        if let ast::PatternKind::Variant { enum_name, variant, binding } = &p.kind {
                            if let Some(en) = scrutinee_enum {
                                if let Some(name) = enum_name {
                                    self.add(name.span, Symbol::Enum(en), false);
                                }
                                if let Some(v) =
                                    self.program.enums[en].variants.iter().position(|v| v.name == variant.name)
                                {
                                    self.add(variant.span, Symbol::Variant(en, v), false);
                                }
                            }
                            if let Some(binding) = binding {
                                self.define_local(binding);
                            }
                        }
                    }
                    self.block(&arm.body);
                }
            }
        }
    }

    fn expr(&mut self, e: &ast::Expr) {
        use ast::ExprKind::*;
        let typed = self.typed(e.span);
        match &e.kind {
            Int(_) | Duration(_) | Float(_) | Str(_) | Bool(_) | None => {}
            Closure { params, body } => {
                for param in params {
                    if let Some(ty) = &param.ty {
                        self.ty(ty);
                    }
                    self.define_local(&param.name);
                }
                self.expr(body);
            }
            BlockClosure { params, ret, body } => {
                for param in params {
                    if let Some(ty) = &param.ty {
                        self.ty(ty);
                    }
                    self.define_local(&param.name);
                }
                if let Some(ret) = ret {
                    self.ty(ret);
                }
                self.block(body);
            }
            Name(ident) => {
                for t in &typed {
                    match &t.kind {
                        tir::ExprKind::Place(tir::Place::Local(l)) => {
                            if let Some(f) = self.current {
                                self.add(ident.span, Symbol::Local(f, *l), false);
                            }
                        }
                        tir::ExprKind::Variant { enum_idx, variant, .. } => {
                            self.add(ident.span, Symbol::Variant(*enum_idx, *variant as usize), false);
                        }
                        _ => continue,
                    }
                    break;
                }
            }
            Array(items) | Interp { holes: items, .. } => items.iter().for_each(|i| self.expr(i)),
            ClassLit { class, fields } => {
                let c = typed.iter().find_map(|t| match &t.kind {
                    tir::ExprKind::New { class, .. } => Some(*class),
                    _ => Option::None,
                });
                if let Some(c) = c.or_else(|| self.class(&class.name)) {
                    self.add(class.span, Symbol::Class(c), false);
                    for (name, value) in fields {
                        if let Some(i) = self.program.classes[c].fields.iter().position(|f| f.name == name.name) {
                            self.add(name.span, Symbol::Field(c, i), false);
                        }
                        self.expr(value);
                    }
                } else {
                    fields.iter().for_each(|(_, v)| self.expr(v));
                }
            }
            Unary { operand, .. } => self.expr(operand),
            Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            Cast { expr, ty } => {
                self.expr(expr);
                self.ty(ty);
            }
            Call { callee, args } => {
                // A call the checker took apart (`spawn f(x)`, `defer f(x)`) has no typed call at
                // its span: its function is then the one of its (qualified) name.
                let typed_call = typed.iter().find_map(|t| match &t.kind {
                    tir::ExprKind::Call { func, .. } => Some(*func),
                    _ => Option::None,
                });
                if let Some(f) = typed_call.or_else(|| self.function_named(&callee.name)) {
                    self.add(callee.span, Symbol::Function(f), false);
                    self.module_prefix(callee.span, &callee.name, self.program.functions[f].span);
                }
                args.iter().for_each(|a| self.expr(a));
            }
            MethodCall { receiver, method, args } => {
                let mut receiver_is_name = false;
                for t in &typed {
                    match &t.kind {
                        tir::ExprKind::Variant { enum_idx, variant, .. } => {
                            self.add(receiver.span, Symbol::Enum(*enum_idx), false);
                            self.add(method.span, Symbol::Variant(*enum_idx, *variant as usize), false);
                            receiver_is_name = true;
                        }
                        tir::ExprKind::ActorCall { handler, .. } => {
                            self.add(method.span, Symbol::Function(*handler), false)
                        }
                        tir::ExprKind::ActorStart { actor } => {
                            self.add(receiver.span, Symbol::Class(self.program.actors[*actor].class), false);
                            receiver_is_name = true;
                        }
                        tir::ExprKind::QueuePush { queue, .. }
                        | tir::ExprKind::QueueDeadLetters { queue, .. }
                        | tir::ExprKind::QueueRetry { queue, .. } => {
                            self.add(receiver.span, Symbol::Queue(*queue), false);
                            receiver_is_name = true;
                        }
                        tir::ExprKind::Call { func, .. } => self.add(method.span, Symbol::Function(*func), false),
                        _ => continue,
                    }
                    break;
                }
                if !receiver_is_name {
                    self.expr(receiver);
                }
                args.iter().for_each(|a| self.expr(a));
            }
            Field { object, field } => {
                let place = typed_place(&typed);
                let variant = typed.iter().find_map(|t| match &t.kind {
                    tir::ExprKind::Variant { enum_idx, variant, .. } => Some((*enum_idx, *variant as usize)),
                    _ => Option::None,
                });
                if let Some(place) = place {
                    self.place(e, &place);
                } else if let Some((en, v)) = variant {
                    self.add(object.span, Symbol::Enum(en), false);
                    self.add(field.span, Symbol::Variant(en, v), false);
                } else {
                    self.expr(object);
                }
            }
            Index { array, index } => match typed_place(&typed) {
                Some(place) => {
                    self.place(e, &place);
                }
                Option::None => {
                    self.expr(array);
                    self.expr(index);
                }
            },
            Try(inner) | TryOption(inner) | Catch(inner) | Send(inner) | Spawn(inner) | SpawnBlocking(inner) => {
                self.expr(inner)
            }
            Db { class, args, .. } | Http { class, args, .. } => {
                if let Some(ty) = class {
                    self.ty(ty);
                }
                args.iter().for_each(|a| self.expr(a));
            }
        }
    }

    /// A place written as `e` (`post.author.name`, `xs[i].id`), walked beside its typed form:
    /// its root local and each field. Returns the place's type.
    fn place(&mut self, e: &ast::Expr, place: &tir::Place) -> Option<Ty> {
        match (&e.kind, place) {
            (ast::ExprKind::Name(ident), tir::Place::Local(l)) => {
                let f = self.current?;
                self.add(ident.span, Symbol::Local(f, *l), false);
                Some(self.program.functions[f].locals[*l].ty.clone())
            }
            (ast::ExprKind::Field { object, field }, tir::Place::Field(base, i)) => {
                let Some(Ty::Class(c)) = self.place(object, base) else { return Option::None };
                self.add(field.span, Symbol::Field(c, *i), false);
                Some(self.program.classes[c].fields[*i].ty.clone())
            }
            (ast::ExprKind::Index { array, index }, tir::Place::Index(base, _)) => {
                let ty = self.place(array, base);
                self.expr(index);
                match ty {
                    Some(Ty::Array(item)) => Some(*item),
                    _ => Option::None,
                }
            }
            _ => Option::None,
        }
    }
}

/// The place among the typed expressions written at one span, if one is.
fn typed_place(typed: &[&tir::Expr]) -> Option<tir::Place> {
    typed.iter().find_map(|t| match &t.kind {
        tir::ExprKind::Place(p) => Some(p.clone()),
        _ => None,
    })
}
