//! Item collection: classes, tables, functions and routes, with every written type resolved,
//! duplicates reported, route shapes validated and route handler names chosen.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use nagi_low::{Diagnostic, HttpMethod};
use nagi_syntax::ast::{self, Ident, Item, SourceFile, Span, TypeExpr, TypeExprKind};

use super::{
    H203, H204, H205, H206, H207, H208, H210, H212, H220, H221, H222, H223, H224, H225, H226, H227, H240, H303, H309,
    H310, H311, H320, H417, H432, H433, error,
};
use crate::tir::{self, ClassIdx, EnumIdx, FnIdx, Literal, ParamMode, Ty};

mod actors;
mod configs;
mod containment;
pub(super) mod generics;
mod queues;
pub(super) mod results;
mod routes;
mod schedules;
mod supervisors;

pub(super) use actors::ActorInfo;
pub(super) use actors::{actor_stored, holds_actor};
pub(super) use supervisors::SupervisorInfo;

/// The builtin functions other than the runtime rows of `builtins::LIBRARY_FNS`; user
/// functions may shadow neither (see [`is_builtin_fn`]).
const BUILTIN_FNS: [&str; 9] = ["print", "min", "max", "abs", "to_string", "fail", "set_header", "assert", "assert_eq"];

/// Whether `name` is a builtin function, which a user function may not shadow.
pub(super) fn is_builtin_fn(name: &str) -> bool {
    BUILTIN_FNS.contains(&name) || super::builtins::LIBRARY_FNS.iter().any(|(n, _)| *n == name)
}

/// Every builtin function's name.
pub(super) fn builtin_fn_names() -> impl Iterator<Item = &'static str> {
    BUILTIN_FNS.into_iter().chain(super::builtins::LIBRARY_FNS.iter().map(|(n, _)| *n))
}

/// The written names of the built-in types.
pub(super) const BUILTIN_TYPES: [&str; 10] =
    ["i32", "i64", "f64", "bool", "String", "Time", "Duration", "Uuid", results::RESULT, results::FAILURE];

/// A class with its fields' types resolved where possible.
#[derive(Clone)]
pub(super) struct ClassInfo {
    pub name: String,
    pub name_span: Span,
    pub span: Span,
    pub fields: Vec<FieldInfo>,
    /// The actor (an index into `Items::actors`) whose state this class is.
    pub actor: Option<usize>,
}

/// A class field; `ty` is `None` when its type failed to resolve (already reported).
#[derive(Clone)]
pub(super) struct FieldInfo {
    pub name: String,
    pub ty: Option<Ty>,
}

/// An enum with its payload types resolved where possible.
#[derive(Clone)]
pub(super) struct EnumInfo {
    pub name: String,
    pub name_span: Span,
    pub span: Span,
    pub variants: Vec<VariantInfo>,
}

/// An enum variant; `payload` is `Some(None)` when its written type failed to resolve (already
/// reported), `None` when the variant carries no payload.
#[derive(Clone)]
pub(super) struct VariantInfo {
    pub name: String,
    pub payload: Option<Option<Ty>>,
}

/// A parameter of a function or route handler.
#[derive(Clone)]
pub(super) struct ParamInfo {
    pub name: Ident,
    pub ty: Option<Ty>,
    pub mode: ParamMode,
}

/// What a function's body is: written in the file, or a closure's lifted to a function of its
/// own (`generics.rs`), held by its call's checker.
#[derive(Clone)]
pub(super) enum FnBody<'f> {
    Block(&'f ast::Block),
    /// A closure expression (`fn(x) => …` or `fn(x) -> T { … }`) and how many captures it
    /// has: its parameters are the function's first ones, its captures the rest.
    Closure(std::rc::Rc<ast::Expr>, usize),
}

/// A function or route handler's signature, and its body to check later.
#[derive(Clone)]
pub(super) struct FnInfo<'f> {
    /// The Low name: as written for `fn`, derived from method and path for a route.
    pub name: String,
    pub params: Vec<ParamInfo>,
    /// `None` when the written result type failed to resolve.
    pub ret: Option<Ty>,
    pub defaults: Vec<(usize, Literal)>,
    pub body: FnBody<'f>,
    pub span: Span,
    /// For a route: its method (as written) and path, for messages.
    pub route: Option<(String, String)>,
    /// Declared `fails` (a route may always fail).
    pub fails: bool,
    /// For a test: its name as written.
    pub test: Option<String>,
    /// For the handler of a queue: the queue's name.
    pub queue: Option<String>,
}

impl FnInfo<'_> {
    /// How messages name the function: `` `f` `` or `` route `GET /users` ``.
    pub fn display_name(&self) -> String {
        if matches!(self.body, FnBody::Closure(..)) {
            return "a closure passed to a function".to_string();
        }
        if let Some(queue) = &self.queue {
            return format!("the handler of queue `{queue}`");
        }
        match (&self.route, &self.test) {
            (Some((method, path)), _) => format!("route `{method} {path}`"),
            (None, Some(test)) => format!("test {test:?}"),
            (None, None) => format!("function `{}`", self.name),
        }
    }
}

/// Everything declared at the top level.
pub(super) struct Items<'f> {
    pub classes: Vec<ClassInfo>,
    pub class_by_name: HashMap<String, ClassIdx>,
    pub enums: Vec<EnumInfo>,
    /// Enums by name; classes and enums share one namespace.
    pub enum_by_name: HashMap<String, EnumIdx>,
    /// The enums made on first use, `Result<T>` (`results.rs`) and generic enums' instances
    /// (`generics.rs`): enum `enums.len() + k` is the `k`-th; the abstract ones (`generics.rs`)
    /// are enum `ABSTRACT + k`.
    pub made_enums: RefCell<Vec<generics::MadeEnum>>,
    pub abstract_enums: RefCell<Vec<generics::MadeEnum>>,
    /// The built-in class `Failure`, made when the program first names it.
    pub failure: Cell<Option<ClassIdx>>,
    /// Generic functions and classes by name (templates, which are not in `fns` or
    /// `classes`), and the instances made so far (`generics.rs`).
    pub generic_fns: Vec<generics::GenericFn<'f>>,
    pub generic_fn_by_name: HashMap<String, usize>,
    pub generic_classes: Vec<generics::GenericClass>,
    pub generic_class_by_name: HashMap<String, usize>,
    pub generic_enums: Vec<generics::GenericEnum>,
    pub generic_enum_by_name: HashMap<String, usize>,
    pub instances: RefCell<generics::Instances<'f>>,
    /// The type parameters in scope and what they resolve to.
    pub type_env: RefCell<Vec<(String, Ty)>>,
    /// Whether a template is being checked: what it makes is abstract.
    pub checking_template: Cell<bool>,
    /// How many instances made the function being checked (0 for a declared one).
    pub checking_depth: Cell<u32>,
    /// How deeply the class or enum instances being made nest, and the template found to
    /// nest without end (`generics.rs`).
    pub making_depth: Cell<u32>,
    /// Whether a function type may be resolved: while a function's parameters are.
    pub fn_types_allowed: Cell<bool>,
    /// How many closures each function (by its Low name) has lifted so far, for their names.
    pub closure_counts: RefCell<HashMap<String, usize>>,
    pub endless: RefCell<Option<(String, Span, bool)>>,
    pub tables: Vec<tir::Table>,
    pub routes: Vec<tir::Route>,
    pub fns: Vec<FnInfo<'f>>,
    /// Plain functions by name (route handlers cannot be called).
    pub fn_by_name: HashMap<String, FnIdx>,
    /// The first plain function called `main`.
    pub main: Option<FnIdx>,
    /// The tests, in source order: their names and functions.
    pub tests: Vec<(String, FnIdx, Span)>,
    /// Whether classes and tables checked without errors, so SQL can be checked against them.
    pub schema_ok: bool,
    /// The actors, in source order.
    pub actors: Vec<ActorInfo>,
    /// The supervisors, in source order, and by name.
    pub supervisors: Vec<SupervisorInfo>,
    pub supervisor_by_name: HashMap<String, usize>,
    /// The queues, in source order.
    pub queues: Vec<tir::Queue>,
    /// The class `DeadLetter`, declared when the program has a queue.
    pub dead_letter: Option<ClassIdx>,
    /// The scheduled jobs, in source order.
    pub schedules: Vec<tir::Schedule>,
    /// The configuration's values, in declaration order (their positions are `config.*`'s).
    pub configs: Vec<tir::ConfigValue>,
    /// Each `config` declaration's values, by the declaration's name.
    pub config_by_name: HashMap<String, Vec<configs::ConfigField>>,
}

/// Collects and checks every item of `file`.
pub(super) fn collect<'f>(file: &'f SourceFile, diags: &mut Vec<Diagnostic>) -> Items<'f> {
    let mut items = Items {
        classes: Vec::new(),
        class_by_name: HashMap::new(),
        enums: Vec::new(),
        enum_by_name: HashMap::new(),
        made_enums: RefCell::new(Vec::new()),
        abstract_enums: RefCell::new(Vec::new()),
        failure: Cell::new(None),
        generic_fns: Vec::new(),
        generic_fn_by_name: HashMap::new(),
        generic_classes: Vec::new(),
        generic_class_by_name: HashMap::new(),
        generic_enums: Vec::new(),
        generic_enum_by_name: HashMap::new(),
        instances: RefCell::new(generics::Instances::default()),
        type_env: RefCell::new(Vec::new()),
        checking_template: Cell::new(false),
        checking_depth: Cell::new(0),
        making_depth: Cell::new(0),
        fn_types_allowed: Cell::new(false),
        closure_counts: RefCell::new(HashMap::new()),
        endless: RefCell::new(None),
        tables: Vec::new(),
        routes: Vec::new(),
        fns: Vec::new(),
        fn_by_name: HashMap::new(),
        main: None,
        tests: Vec::new(),
        schema_ok: false,
        actors: Vec::new(),
        supervisors: Vec::new(),
        supervisor_by_name: HashMap::new(),
        queues: Vec::new(),
        configs: Vec::new(),
        config_by_name: HashMap::new(),
        dead_letter: None,
        schedules: Vec::new(),
    };
    let schema_start = diags.len();
    let (generic_decls, class_decls): (Vec<&ast::ClassDecl>, Vec<&ast::ClassDecl>) = file
        .items
        .iter()
        .filter_map(|i| if let Item::Class(c) = i { Some(c) } else { None })
        .partition(|c| !c.type_params.is_empty());
    // Names first, so a field may name a class declared further down.
    let (generic_enum_decls, enum_decls): (Vec<&ast::EnumDecl>, Vec<&ast::EnumDecl>) = file
        .items
        .iter()
        .filter_map(|i| if let Item::Enum(e) = i { Some(e) } else { None })
        .partition(|e| !e.type_params.is_empty());
    // Names first, so a field or payload may name a type declared further down.
    let actor_decls: Vec<&ast::ActorDecl> =
        file.items.iter().filter_map(|i| if let Item::Actor(a) = i { Some(a) } else { None }).collect();
    for decl in &class_decls {
        items.declare_class(&decl.name, decl.span, diags);
    }
    for decl in &enum_decls {
        items.declare_enum(decl, diags);
    }
    for decl in &generic_decls {
        items.declare_generic_class(decl, diags);
    }
    for decl in &generic_enum_decls {
        items.declare_generic_enum(decl, diags);
    }
    if let Some(queue) = file.items.iter().find_map(|i| if let Item::Queue(q) = i { Some(q) } else { None }) {
        items.declare_dead_letter(queue, diags);
    }
    // An actor's state is a class named as the actor, declared after the written classes.
    let states: Vec<ClassIdx> = actor_decls.iter().map(|decl| items.declare_actor(decl, diags)).collect();
    for (idx, decl) in class_decls.iter().enumerate() {
        items.classes[idx].fields = items.resolve_fields(&decl.fields, &decl.name.name, diags);
    }
    for decl in &generic_decls {
        items.resolve_generic_fields(decl, diags);
    }
    for decl in &generic_enum_decls {
        items.resolve_generic_variants(decl, diags);
    }
    items.refresh_instances();
    items.report_endless(diags);
    for (decl, &class) in actor_decls.iter().zip(&states) {
        items.classes[class].fields = items.resolve_fields(&decl.fields, &decl.name.name, diags);
    }
    for (idx, decl) in enum_decls.iter().enumerate() {
        items.enums[idx].variants = items.resolve_variants(decl, diags);
    }
    items.check_self_containment(diags);
    let mut table_names = HashSet::new();
    for item in &file.items {
        if let Item::Table(table) = item {
            items.collect_table(table, &mut table_names, diags);
        }
    }
    items.schema_ok = diags.len() == schema_start;

    for item in &file.items {
        match item {
            Item::Function(f) if !f.type_params.is_empty() || takes_closure(f) => items.collect_generic_fn(f, diags),
            Item::Function(f) => items.collect_fn(f, diags),
            Item::Route(r) => items.collect_route(r, diags),
            Item::Test(t) => items.collect_test(t, diags),
            Item::Queue(q) => items.collect_queue(q, diags),
            Item::Config(c) => items.collect_config(c, diags),
            Item::Schedule(_)
            | Item::Class(_)
            | Item::Enum(_)
            | Item::Table(_)
            | Item::Import(_)
            | Item::Actor(_)
            | Item::Supervisor(_) => {}
        }
    }
    for (decl, class) in actor_decls.iter().zip(states) {
        items.collect_actor(decl, class, diags);
    }
    // Once every function is known.
    for item in &file.items {
        if let Item::Schedule(schedule) = item {
            items.collect_schedule(schedule, diags);
        }
    }
    let supervisor_decls: Vec<&ast::SupervisorDecl> =
        file.items.iter().filter_map(|i| if let Item::Supervisor(s) = i { Some(s) } else { None }).collect();
    items.collect_supervisors(&supervisor_decls, diags);
    items.name_handlers();
    items.check_duplicate_routes(file, diags);
    items
}

impl<'f> Items<'f> {
    /// The classes as TIR, if every field type resolved: the declared ones, then those made so
    /// far (`Failure`, generic classes' instances) in the order they were made.
    pub fn tir_classes(&self) -> Option<Vec<tir::Class>> {
        let made = self.instances.borrow();
        self.classes
            .iter()
            .chain(made.classes.iter().map(|m| &m.info))
            .map(|c| {
                let fields = c
                    .fields
                    .iter()
                    .map(|f| Some(tir::Field { name: f.name.clone(), ty: f.ty.clone()? }))
                    .collect::<Option<Vec<_>>>()?;
                Some(tir::Class { name: c.name.clone(), fields, span: c.span })
            })
            .collect()
    }

    /// The enums as TIR, if every payload type resolved: the declared ones, then those made so
    /// far (`Result<T>`, generic enums' instances) in the order they were made.
    pub fn tir_enums(&self) -> Option<Vec<tir::Enum>> {
        let made = self.made_enums.borrow();
        self.enums
            .iter()
            .map(|e| (e, None))
            .chain(made.iter().map(|m| (&m.info, m.result_of.clone())))
            .map(|(e, result_of)| {
                let variants = e
                    .variants
                    .iter()
                    .map(|v| {
                        let payload = match &v.payload {
                            None => None,
                            Some(ty) => Some(ty.clone()?),
                        };
                        Some(tir::Variant { name: v.name.clone(), payload })
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(tir::Enum { name: e.name.clone(), variants, result_of, span: e.span })
            })
            .collect()
    }

    /// The index of `enum_idx`'s variant `name`.
    pub fn variant_index(&self, enum_idx: EnumIdx, name: &str) -> Option<u32> {
        self.enum_at(enum_idx)?.variants.iter().position(|v| v.name == name).map(|i| i as u32)
    }

    /// "`Admin`, `Member(i64)`": an enum's variants for notes.
    pub fn variant_list(&self, enum_idx: EnumIdx) -> String {
        let Some(data) = self.enum_at(enum_idx) else { return String::new() };
        let names: Vec<String> = data
            .variants
            .iter()
            .map(|v| match &v.payload {
                Some(Some(ty)) => format!("`{}({})`", v.name, self.ty_name(ty)),
                _ => format!("`{}`", v.name),
            })
            .collect();
        format!("the variants of `{}` are {}", self.ty_name(&Ty::Enum(enum_idx)), names.join(", "))
    }

    /// A type as the user writes it.
    pub fn ty_name(&self, ty: &Ty) -> String {
        match ty {
            Ty::I32 => "i32".into(),
            Ty::I64 => "i64".into(),
            Ty::F64 => "f64".into(),
            Ty::Bool => "bool".into(),
            Ty::Unit => "unit".into(),
            Ty::String => "String".into(),
            Ty::Time => "Time".into(),
            Ty::Secret => "Secret".into(),
            Ty::Uuid => "Uuid".into(),
            Ty::Duration => "Duration".into(),
            Ty::Array(inner) => format!("[{}]", self.ty_name(inner)),
            Ty::Option(inner) => format!("{}?", self.ty_name(inner)),
            Ty::Map(k, v) => format!("Map<{}, {}>", self.ty_name(k), self.ty_name(v)),
            Ty::Class(idx) => self.class_display_name(*idx),
            Ty::Enum(idx) => self.enum_display_name(*idx),
            Ty::Task(inner) => format!("Task<{}>", self.ty_name(inner)),
            Ty::Actor(idx) => self.classes.get(*idx).map_or_else(|| "<actor>".into(), |c| c.name.clone()),
            Ty::Param(name, _) => name.clone(),
            Ty::Fn(params, ret) => {
                let params: Vec<String> = params.iter().map(|p| self.ty_name(p)).collect();
                match **ret {
                    Ty::Unit => format!("fn({})", params.join(", ")),
                    ref ret => format!("fn({}) -> {}", params.join(", "), self.ty_name(ret)),
                }
            }
        }
    }

    /// Resolves a written type, reporting unknown names and `T??`.
    pub fn resolve_ty(&self, ty: &TypeExpr, diags: &mut Vec<Diagnostic>) -> Option<Ty> {
        match &ty.kind {
            TypeExprKind::Named(name) => match name.as_str() {
                "i32" => Some(Ty::I32),
                "i64" => Some(Ty::I64),
                "f64" => Some(Ty::F64),
                "bool" => Some(Ty::Bool),
                "String" => Some(Ty::String),
                "Time" => Some(Ty::Time),
                "Duration" => Some(Ty::Duration),
                "Uuid" => Some(Ty::Uuid),
                _ => {
                    if let Some(ty) = self.type_param_named(name) {
                        return Some(ty);
                    }
                    if self.generic_class_by_name.contains_key(name) || self.generic_enum_by_name.contains_key(name) {
                        diags.push(
                            error(H433, ty.span, format!("`{name}` needs its type arguments"), "no `<…>`")
                                .note(format!("write the types it holds, as in `{name}<i64>`")),
                        );
                        return None;
                    }
                    if let Some(idx) = self.class_named(name) {
                        // An actor's name, as a type, is its handle's.
                        let actor = self.class_at(idx).is_some_and(|c| c.actor.is_some());
                        return Some(if actor { Ty::Actor(idx) } else { Ty::Class(idx) });
                    }
                    if let Some(idx) = self.enum_by_name.get(name) {
                        return Some(Ty::Enum(*idx));
                    }
                    if name == results::RESULT {
                        diags.push(
                            error(H203, ty.span, "`Result` needs the type of its value", "no `<T>`")
                                .note("write `Result<T>`, the type of `catch f()` for an `f` that gives a `T`"),
                        );
                        return None;
                    }
                    let mut d = error(H203, ty.span, format!("unknown type `{name}`"), "not a type, class or enum");
                    let known = BUILTIN_TYPES
                        .iter()
                        .copied()
                        .chain(self.classes.iter().map(|c| c.name.as_str()))
                        .chain(self.enums.iter().map(|e| e.name.as_str()));
                    if let Some(similar) = known.clone().find(|k| k.eq_ignore_ascii_case(name)) {
                        d = d.note(format!("did you mean `{similar}`?"));
                    } else {
                        d = d.note(
                            "the types are i32, i64, f64, bool, String, arrays `[T]`, options `T?`, maps `Map<K, V>`, and declared classes and enums",
                        );
                    }
                    diags.push(d);
                    None
                }
            },
            TypeExprKind::Array(inner) => Some(Ty::Array(Box::new(self.resolve_ty(inner, diags)?))),
            TypeExprKind::Map(key, value) => {
                let (k, v) = (self.resolve_ty(key, diags), self.resolve_ty(value, diags));
                let k = k?;
                if !matches!(k, Ty::I64 | Ty::String) {
                    let found = self.ty_name(&k);
                    diags.push(
                        error(H320, key.span, format!("a map key cannot be `{found}`"), "not a key type")
                            .note("map keys are i64 or String"),
                    );
                    return None;
                }
                Some(Ty::Map(Box::new(k), Box::new(v?)))
            }
            TypeExprKind::Result(ok) => Some(Ty::Enum(self.result_enum(&self.resolve_ty(ok, diags)?))),
            TypeExprKind::Generic(name, args) => self.resolve_instance(name, args, ty.span, diags),
            TypeExprKind::Fn(params, ret) => {
                if !self.fn_types_allowed.get() {
                    diags.push(
                        error(
                            H432,
                            ty.span,
                            "a function type is only the type of a function's parameter",
                            "not allowed here",
                        )
                        .note(
                            "a route's, a handler's or a job's parameter takes values; call the function in the body",
                        ),
                    );
                    return None;
                }
                let params: Vec<Option<Ty>> = params.iter().map(|p| self.resolve_ty(p, diags)).collect();
                let ret = match ret {
                    Some(ret) => self.resolve_ty(ret, diags)?,
                    None => Ty::Unit,
                };
                Some(Ty::Fn(params.into_iter().collect::<Option<Vec<Ty>>>()?, Box::new(ret)))
            }
            TypeExprKind::Option(inner) => {
                let resolved = self.resolve_ty(inner, diags)?;
                // `T?` where a type parameter `T` is an option type is that type (§3.7).
                let parameter = matches!(&inner.kind, TypeExprKind::Named(n) if self.type_param_named(n).is_some());
                if parameter && matches!(resolved, Ty::Option(_)) {
                    return Some(resolved);
                }
                if matches!(resolved, Ty::Option(_)) {
                    diags.push(
                        error(H309, ty.span, "an option of an option is not a type", "`T??` is not allowed")
                            .note("one `?` already allows `none`"),
                    );
                    return None;
                }
                Some(Ty::Option(Box::new(resolved)))
            }
        }
    }

    /// `Page<User>`: the instance of a generic class, its arguments resolved.
    fn resolve_instance(&self, name: &str, args: &[TypeExpr], span: Span, diags: &mut Vec<Diagnostic>) -> Option<Ty> {
        if let Some(&template) = self.generic_enum_by_name.get(name) {
            let args: Vec<Option<Ty>> = args.iter().map(|a| self.resolve_ty(a, diags)).collect();
            let args = args.into_iter().collect::<Option<Vec<Ty>>>()?;
            if !self.type_arg_count(name, self.generic_enums[template].params.len(), &args, span, diags) {
                return None;
            }
            return Some(Ty::Enum(self.enum_instance(template, args)));
        }
        let Some(&template) = self.generic_class_by_name.get(name) else {
            let what = if self.class_named(name).is_some() || self.enum_by_name.contains_key(name) {
                format!("`{name}` is not generic")
            } else {
                format!("unknown generic type `{name}`")
            };
            diags.push(error(H203, span, what, "takes no type arguments"));
            return None;
        };
        let args: Vec<Option<Ty>> = args.iter().map(|a| self.resolve_ty(a, diags)).collect();
        let args = args.into_iter().collect::<Option<Vec<Ty>>>()?;
        if !self.type_arg_count(name, self.generic_classes[template].params.len(), &args, span, diags) {
            return None;
        }
        Some(Ty::Class(self.class_instance(template, args)))
    }

    /// Whether a generic type has its number of type arguments, none of them a task handle
    /// (which no class or enum may hold).
    fn type_arg_count(
        &self,
        name: &str,
        expected: usize,
        args: &[Ty],
        span: Span,
        diags: &mut Vec<Diagnostic>,
    ) -> bool {
        if args.len() != expected {
            let plural = if expected == 1 { "" } else { "s" };
            let message = format!("`{name}` takes {expected} type argument{plural}, not {}", args.len());
            diags.push(error(H433, span, message, "wrong number of type arguments"));
            return false;
        }
        if let Some(arg) = args.iter().find(|a| matches!(a, Ty::Task(_))) {
            diags.push(error(H417, span, format!("`{name}` cannot hold `{}`", self.ty_name(arg)), "a task handle"));
            return false;
        }
        true
    }

    /// The index of `class`'s field `name`.
    pub fn field_index(&self, class: ClassIdx, name: &str) -> Option<usize> {
        self.class_at(class)?.fields.iter().position(|f| f.name == name)
    }

    /// "`id`, `name`, `age`": a class's fields for notes.
    pub fn field_list(&self, class: ClassIdx) -> String {
        let Some(info) = self.class_at(class) else { return String::new() };
        let name = self.class_display_name(class);
        if info.fields.is_empty() {
            return format!("`{name}` has no fields");
        }
        let names: Vec<String> = info.fields.iter().map(|f| format!("`{}`", f.name)).collect();
        format!("the fields of `{name}` are {}", names.join(", "))
    }

    /// Declares the class `name` (an actor's state too), reporting a clash of names.
    fn declare_class(&mut self, ident: &Ident, span: Span, diags: &mut Vec<Diagnostic>) -> ClassIdx {
        let idx = self.classes.len();
        let name = &ident.name;
        if BUILTIN_TYPES.contains(&name.as_str()) {
            diags.push(error(
                H205,
                ident.span,
                format!("`{name}` is a built-in type and cannot be declared as a class"),
                "built-in type name",
            ));
        } else if self.class_by_name.contains_key(name) {
            diags.push(error(H205, ident.span, format!("class `{name}` is declared twice"), "declared again here"));
        } else {
            self.class_by_name.insert(name.clone(), idx);
        }
        self.classes.push(ClassInfo {
            name: name.clone(),
            name_span: ident.span,
            span,
            fields: Vec::new(),
            actor: None,
        });
        idx
    }

    fn declare_enum(&mut self, decl: &ast::EnumDecl, diags: &mut Vec<Diagnostic>) {
        let idx = self.enums.len();
        let name = &decl.name.name;
        if BUILTIN_TYPES.contains(&name.as_str()) {
            diags.push(error(
                H205,
                decl.name.span,
                format!("`{name}` is a built-in type and cannot be declared as an enum"),
                "built-in type name",
            ));
        } else if self.class_by_name.contains_key(name) || self.enum_by_name.contains_key(name) {
            diags.push(
                error(H205, decl.name.span, format!("type `{name}` is declared twice"), "declared again here")
                    .note("classes and enums share one namespace"),
            );
        } else {
            self.enum_by_name.insert(name.clone(), idx);
        }
        if decl.variants.is_empty() {
            diags.push(error(
                H205,
                decl.name.span,
                format!("enum `{name}` has no variants"),
                "an enum needs a variant",
            ));
        }
        self.enums.push(EnumInfo {
            name: name.clone(),
            name_span: decl.name.span,
            span: decl.span,
            variants: Vec::new(),
        });
    }

    fn resolve_variants(&self, decl: &ast::EnumDecl, diags: &mut Vec<Diagnostic>) -> Vec<VariantInfo> {
        let mut variants: Vec<VariantInfo> = Vec::new();
        for variant in &decl.variants {
            if variants.iter().any(|v| v.name == variant.name.name) {
                diags.push(error(
                    H206,
                    variant.name.span,
                    format!("variant `{}` is declared twice in enum `{}`", variant.name.name, decl.name.name),
                    "declared again here",
                ));
                continue;
            }
            let payload = variant.payload.as_ref().map(|ty| self.resolve_ty(ty, diags));
            variants.push(VariantInfo { name: variant.name.name.clone(), payload });
        }
        variants
    }

    /// The fields of the class (or actor state) `owner`.
    fn resolve_fields(&self, decls: &[ast::FieldDecl], owner: &str, diags: &mut Vec<Diagnostic>) -> Vec<FieldInfo> {
        let mut fields: Vec<FieldInfo> = Vec::new();
        for field in decls {
            if fields.iter().any(|f| f.name == field.name.name) {
                diags.push(error(
                    H206,
                    field.name.span,
                    format!("field `{}` is declared twice in class `{owner}`", field.name.name),
                    "declared again here",
                ));
                continue;
            }
            let ty = self.resolve_ty(&field.ty, diags);
            if ty.as_ref().is_some_and(holds_actor) {
                diags.push(actor_stored(field.ty.span, "a field"));
                fields.push(FieldInfo { name: field.name.name.clone(), ty: None });
                continue;
            }
            fields.push(FieldInfo { name: field.name.name.clone(), ty });
        }
        fields
    }

    fn collect_table(&mut self, decl: &ast::TableDecl, names: &mut HashSet<String>, diags: &mut Vec<Diagnostic>) {
        // SQLite table names are case-insensitive, so `Users` and `users` are the same table.
        if !names.insert(decl.name.name.to_ascii_lowercase()) {
            diags.push(error(
                H208,
                decl.name.span,
                format!("table `{}` is declared twice", decl.name.name),
                "declared again here",
            ));
            return;
        }
        let Some(class) = self.class_named(&decl.class.name) else {
            diags.push(error(
                H203,
                decl.class.span,
                format!("unknown class `{}`", decl.class.name),
                "no class of this name",
            ));
            return;
        };
        let mut ok = true;
        let Some(info) = self.class_at(class) else { return };
        for field in &info.fields {
            if let Some(ty) = &field.ty
                && !is_sql_value(ty)
            {
                ok = false;
                diags.push(
                    error(
                        H310,
                        decl.class.span,
                        format!(
                            "table `{}` cannot store class `{}`: field `{}` has type `{}`, which has no SQLite column type",
                            decl.name.name,
                            decl.class.name,
                            field.name,
                            self.ty_name(ty)
                        ),
                        "stored here",
                    )
                    .note("table columns hold i32, i64, f64, bool, String and options of those"),
                );
            }
        }
        let Some(key) = self.field_index(class, &decl.key.name) else {
            diags.push(
                error(
                    H204,
                    decl.key.span,
                    format!("class `{}` has no field `{}` to use as the key", decl.class.name, decl.key.name),
                    "unknown field",
                )
                .note(self.field_list(class)),
            );
            return;
        };
        match &info.fields[key].ty {
            Some(Ty::I32 | Ty::I64 | Ty::String | Ty::Uuid) | None => {}
            Some(other) => {
                ok = false;
                diags.push(error(
                    H310,
                    decl.key.span,
                    format!(
                        "the key `{}` has type `{}`; a table key must be i32, i64, String or Uuid",
                        decl.key.name,
                        self.ty_name(other)
                    ),
                    "not a valid key type",
                ));
            }
        }
        if ok {
            self.tables.push(tir::Table { name: decl.name.name.clone(), class, key, span: decl.span });
        }
    }

    fn collect_fn(&mut self, decl: &'f ast::FnDecl, diags: &mut Vec<Diagnostic>) {
        let idx = self.fns.len();
        let name = &decl.name.name;
        let params = self.collect_params(&decl.params, diags, plain_param_mode);
        let ret = decl.ret.as_ref().map_or(Some(Ty::Unit), |t| self.resolve_ty(t, diags));
        if is_builtin_fn(name) {
            diags.push(error(
                H207,
                decl.name.span,
                format!("`{name}` is a builtin function and cannot be redeclared"),
                "builtin name",
            ));
        } else if self.fn_by_name.contains_key(name) || self.generic_fn_by_name.contains_key(name) {
            diags.push(error(
                H207,
                decl.name.span,
                format!("function `{name}` is declared twice"),
                "declared again here",
            ));
        } else {
            self.fn_by_name.insert(name.clone(), idx);
            if name == "main" {
                self.main = Some(idx);
                if let Some(first) = decl.params.first() {
                    diags.push(error(H226, first.span, "`main` takes no parameters", "unexpected parameter"));
                }
                if let Some(ret) = &decl.ret {
                    diags.push(
                        error(H226, ret.span, "`main` returns no value", "unexpected result type")
                            .note("write `fn main() { … }`"),
                    );
                }
                if decl.fails {
                    diags.push(
                        error(H226, decl.name.span, "`main` cannot fail", "declared `fails`")
                            .note("only route handlers and the functions they call answer with a failure"),
                    );
                }
            }
        }
        self.fns.push(declared_fn(decl, params, ret));
    }

    /// A test: a function without parameters or result, named `test.N` (which no written name
    /// can be), whose name must be unique (H240).
    fn collect_test(&mut self, decl: &'f ast::TestDecl, diags: &mut Vec<Diagnostic>) {
        let name = decl.name.value.clone();
        if self.tests.iter().any(|(n, _, _)| *n == name) {
            diags.push(error(H240, decl.name.span, format!("test {name:?} is declared twice"), "declared again here"));
        }
        let idx = self.fns.len();
        self.tests.push((name.clone(), idx, decl.span));
        self.fns.push(FnInfo {
            name: format!("test.{}", self.tests.len() - 1),
            params: Vec::new(),
            ret: Some(Ty::Unit),
            defaults: Vec::new(),
            body: FnBody::Block(&decl.body),
            span: decl.span,
            route: None,
            // A test may `try` failing functions: a failure ends it as failed.
            fails: true,
            test: Some(name),
            queue: None,
        });
    }

    /// Resolves parameters, reporting duplicate names; `mode` checks what differs between
    /// functions and routes and chooses the mode.
    fn collect_params(
        &self,
        params: &[ast::Param],
        diags: &mut Vec<Diagnostic>,
        mut mode: impl FnMut(&ast::Param, &mut Vec<Diagnostic>) -> ParamMode,
    ) -> Vec<ParamInfo> {
        let mut out: Vec<ParamInfo> = Vec::with_capacity(params.len());
        for param in params {
            if out.iter().any(|p| p.name.name == param.name.name) {
                diags.push(error(
                    H210,
                    param.name.span,
                    format!("parameter `{}` is declared twice", param.name.name),
                    "declared again here",
                ));
            }
            let ty = self.resolve_ty(&param.ty, diags);
            let mode = mode(param, diags);
            out.push(ParamInfo { name: param.name.clone(), ty, mode });
        }
        out
    }
}

/// The signature of the plain function (or template) `decl`.
fn declared_fn<'f>(decl: &'f ast::FnDecl, params: Vec<ParamInfo>, ret: Option<Ty>) -> FnInfo<'f> {
    FnInfo {
        name: decl.name.name.clone(),
        params,
        ret,
        defaults: Vec::new(),
        body: FnBody::Block(&decl.body),
        span: decl.span,
        route: None,
        fails: decl.fails,
        test: None,
        queue: None,
    }
}

/// Whether a function has a function-typed parameter, which makes it a template: each call
/// gets an instance for the closure it passes.
fn takes_closure(f: &ast::FnDecl) -> bool {
    f.params.iter().any(|p| matches!(p.ty.kind, TypeExprKind::Fn(..)))
}

/// The mode of a parameter of a plain function (or an actor's handler): borrowed, or `inout`;
/// reports a default or a request source, which only route parameters have.
fn plain_param_mode(param: &ast::Param, diags: &mut Vec<Diagnostic>) -> ParamMode {
    if param.default.is_some() {
        diags.push(
            error(H225, param.span, "only route query parameters can have defaults", "default not allowed here")
                .note("pass the value at every call instead"),
        );
    }
    if let Some(source) = &param.source {
        diags.push(
            error(
                H227,
                source.span,
                format!("only route parameters come from the request, not from `{}`", source.name),
                "not allowed on a function parameter",
            )
            .note("write the parameter as `name: Type`"),
        );
    }
    if param.inout { ParamMode::Inout } else { ParamMode::Borrowed }
}

/// Whether a value of `ty` can be stored in a SQLite column or bound as a SQL argument.
pub(super) fn is_sql_value(ty: &Ty) -> bool {
    match ty {
        Ty::I32 | Ty::I64 | Ty::F64 | Ty::Bool | Ty::String | Ty::Time | Ty::Duration | Ty::Uuid => true,
        Ty::Option(inner) => {
            matches!(**inner, Ty::I32 | Ty::I64 | Ty::F64 | Ty::Bool | Ty::String | Ty::Time | Ty::Duration | Ty::Uuid)
        }
        _ => false,
    }
}
