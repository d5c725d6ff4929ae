//! Generic functions and classes (docs/language.md §3.7). A generic declaration is a template:
//! its body is checked once with its type parameters as written (`Ty::Param`, which allows what
//! their capabilities allow and nothing else), and each use with other types makes an
//! instance, an ordinary function or class named by the template and its type arguments in Low
//! (`first.i64`, `Page.User`), whose body is checked again with the parameters replaced. Only
//! instances reach the program, so Low and the emitters stay monomorphic.
//!
//! Instances made while a template's body is checked are abstract: they exist for that check
//! (their indexes start at [`ABSTRACT`]) and never reach the program.

use std::borrow::Cow;

use nagi_low::Diagnostic;
use nagi_syntax::ast;

use super::{ClassInfo, EnumInfo, FieldInfo, FnInfo, Items, ParamInfo, VariantInfo};
use crate::check::{H205, H207, H433, error};
use crate::tir::{Bounds, ClassIdx, EnumIdx, FnIdx, ParamMode, Ty};

/// The first index of an abstract instance (a function or class made while a template's body
/// is checked), far above any program's own.
pub(in crate::check) const ABSTRACT: usize = 1 << 40;

/// How deeply instances may make instances (`f<T>` calling `f<[T]>` would never end).
const MAX_DEPTH: u32 = 32;

/// A declared type parameter.
#[derive(Clone)]
pub(in crate::check) struct TypeParamInfo {
    pub name: String,
    pub bounds: Bounds,
}

impl TypeParamInfo {
    /// The parameter as a type inside its declaration.
    pub fn ty(&self) -> Ty {
        Ty::Param(self.name.clone(), self.bounds)
    }
}

/// A generic function: its signature over its type parameters.
pub(in crate::check) struct GenericFn<'f> {
    pub info: FnInfo<'f>,
    pub params: Vec<TypeParamInfo>,
}

/// A generic class: its fields over its type parameters.
pub(in crate::check) struct GenericClass {
    pub info: ClassInfo,
    pub params: Vec<TypeParamInfo>,
}

/// A generic enum: its variants over its type parameters.
pub(in crate::check) struct GenericEnum {
    pub info: EnumInfo,
    pub params: Vec<TypeParamInfo>,
}

/// An enum made on first use: a `Result<T>` (`result_of`, `results.rs`) or an instance of a
/// generic enum (`generic`: its template and type arguments).
pub(in crate::check) struct MadeEnum {
    pub result_of: Option<Ty>,
    pub generic: Option<(usize, Vec<Ty>)>,
    pub info: EnumInfo,
}

/// An instance of a generic function.
pub(in crate::check) struct FnInstance<'f> {
    /// The generic function it is an instance of; `None` for a closure lifted to a function.
    pub template: Option<usize>,
    pub args: Vec<Ty>,
    /// The function each function-typed parameter calls, in order (part of the key).
    pub closures: Vec<FnIdx>,
    /// For each function-typed parameter: its name, the function it calls and which of the
    /// instance's parameters are that function's captures (passed after its own arguments).
    pub fn_params: Vec<FnParam>,
    pub info: FnInfo<'f>,
    /// The type parameters' bindings its body is checked with.
    pub env: Vec<(String, Ty)>,
    /// How many instances made it: 1 for one a program's own function uses.
    pub depth: u32,
}

/// A function-typed parameter of an instance: the function its calls call, and the positions
/// of the instance's parameters that hold that function's captures.
#[derive(Clone, Debug)]
pub(in crate::check) struct FnParam {
    pub name: String,
    pub lifted: FnIdx,
    pub captures: Vec<usize>,
}

/// What a call passes for a function-typed parameter: the function (a lifted closure or a
/// program function) and the values it captures, by name and type.
pub(in crate::check) struct ClosureArg {
    pub lifted: FnIdx,
    pub captures: Vec<(String, Ty)>,
}

/// A class made on first use: an instance of a generic class (`template` and `args`), or the
/// built-in `Failure` (no template).
pub(in crate::check) struct MadeClass {
    pub template: Option<usize>,
    pub args: Vec<Ty>,
    pub info: ClassInfo,
}

/// The instances made so far.
#[derive(Default)]
pub(in crate::check) struct Instances<'f> {
    /// Function `fns.len() + k` is `fns[k]`.
    pub fns: Vec<FnInstance<'f>>,
    /// Function `ABSTRACT + k` is `abstract_fns[k]`.
    pub abstract_fns: Vec<FnInstance<'f>>,
    /// Class `classes.len() + k` is `classes[k]`.
    pub classes: Vec<MadeClass>,
    /// Class `ABSTRACT + k` is `abstract_classes[k]`.
    pub abstract_classes: Vec<MadeClass>,
}

impl<'f> Items<'f> {
    /// The type parameters of a declaration, reporting unknown capabilities, a name used twice
    /// or naming a type, and capabilities where none are allowed (`bounds_allowed` false: a
    /// class's parameters, which only hold values).
    pub(super) fn type_params(
        &self,
        params: &[ast::TypeParam],
        bounds_allowed: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Vec<TypeParamInfo> {
        let mut out: Vec<TypeParamInfo> = Vec::new();
        for param in params {
            let name = &param.name.name;
            if out.iter().any(|p| p.name == *name) {
                diags.push(error(H433, param.name.span, format!("type parameter `{name}` is declared twice"), "again"));
            } else if self.names_type(name) {
                diags.push(
                    error(
                        H205,
                        param.name.span,
                        format!("type parameter `{name}` is named like a type"),
                        "a type's name",
                    )
                    .note("choose another name, such as `T`"),
                );
            }
            let mut bounds = Bounds::default();
            for bound in &param.bounds {
                match Bounds::NAMES.iter().find(|(n, _)| *n == bound.name) {
                    Some(_) if !bounds_allowed => diags.push(
                        error(H433, bound.span, "a class's type parameter takes no capabilities", "not allowed here")
                            .note("a class only holds its parameter's values; write capabilities on the functions that need them"),
                    ),
                    Some((_, b)) => bounds = Bounds(bounds.0 | b.0),
                    None => diags.push(
                        error(H433, bound.span, format!("unknown capability `{}`", bound.name), "not a capability")
                            .note("the capabilities are `eq`, `ord`, `text` and `copy`"),
                    ),
                }
            }
            out.push(TypeParamInfo { name: name.clone(), bounds });
        }
        out
    }

    /// Whether `name` is a type's name (built-in, declared or generic).
    fn names_type(&self, name: &str) -> bool {
        super::BUILTIN_TYPES.contains(&name)
            || self.class_by_name.contains_key(name)
            || self.enum_by_name.contains_key(name)
            || self.generic_class_by_name.contains_key(name)
            || self.generic_enum_by_name.contains_key(name)
    }

    /// Whether the function called `name` (plain or generic) is declared `fails`.
    pub(in crate::check) fn declared_fails(&self, name: &str) -> bool {
        match (self.fn_by_name.get(name), self.generic_fn_by_name.get(name)) {
            (Some(&func), _) => self.fn_info(func).fails,
            (None, Some(&k)) => self.generic_fns[k].info.fails,
            (None, None) => false,
        }
    }

    /// Runs `f` as inside a template with `params`: each bound to itself, and what it makes
    /// abstract.
    fn in_template<R>(&self, params: &[TypeParamInfo], f: impl FnOnce() -> R) -> R {
        let env = params.iter().map(|p| (p.name.clone(), p.ty())).collect();
        let saved = self.checking_template.replace(true);
        let out = self.with_type_env(env, f);
        self.checking_template.set(saved);
        out
    }

    /// Runs `f` with the type parameters bound as `env` (`T` resolving to its type).
    pub(in crate::check) fn with_type_env<R>(&self, env: Vec<(String, Ty)>, f: impl FnOnce() -> R) -> R {
        let saved = self.type_env.replace(env);
        let out = f();
        self.type_env.replace(saved);
        out
    }

    /// The type a type parameter's name resolves to where it is in scope.
    pub(super) fn type_param_named(&self, name: &str) -> Option<Ty> {
        self.type_env.borrow().iter().find(|(n, _)| n == name).map(|(_, t)| t.clone())
    }

    /// The class at `idx`: declared, made (`Failure`, an instance) or abstract.
    pub(in crate::check) fn class_at(&self, idx: ClassIdx) -> Option<Cow<'_, ClassInfo>> {
        if let Some(info) = self.classes.get(idx) {
            return Some(Cow::Borrowed(info));
        }
        let instances = self.instances.borrow();
        let made = match idx.checked_sub(ABSTRACT) {
            Some(k) => instances.abstract_classes.get(k),
            None => instances.classes.get(idx - self.classes.len()),
        };
        made.map(|m| Cow::Owned(m.info.clone()))
    }

    /// The template and type arguments of the class at `idx`, when it is an instance.
    pub(in crate::check) fn class_generic(&self, idx: ClassIdx) -> Option<(usize, Vec<Ty>)> {
        let instances = self.instances.borrow();
        let made = match idx.checked_sub(ABSTRACT) {
            Some(k) => instances.abstract_classes.get(k),
            None => instances.classes.get(idx.checked_sub(self.classes.len())?),
        }?;
        Some((made.template?, made.args.clone()))
    }

    /// The function or route handler at `idx`: declared, an instance or abstract.
    pub(in crate::check) fn fn_info(&self, idx: FnIdx) -> Cow<'_, FnInfo<'f>> {
        if let Some(info) = self.fns.get(idx) {
            return Cow::Borrowed(info);
        }
        let instances = self.instances.borrow();
        let instance = match idx.checked_sub(ABSTRACT) {
            Some(k) => &instances.abstract_fns[k],
            None => &instances.fns[idx - self.fns.len()],
        };
        Cow::Owned(instance.info.clone())
    }

    /// How many functions the program has: the declared ones and the instances made so far.
    pub(in crate::check) fn fn_count(&self) -> usize {
        self.fns.len() + self.instances.borrow().fns.len()
    }

    /// The bindings and depth function `idx`'s body is checked with (none for a declared one).
    pub(in crate::check) fn fn_env(&self, idx: FnIdx) -> (Vec<(String, Ty)>, u32) {
        let instances = self.instances.borrow();
        let instance = match idx.checked_sub(ABSTRACT) {
            Some(k) => instances.abstract_fns.get(k),
            None => idx.checked_sub(self.fns.len()).and_then(|k| instances.fns.get(k)),
        };
        instance.map_or_else(|| (Vec::new(), 0), |i| (i.env.clone(), i.depth))
    }

    /// The template function `idx` is an instance of.
    pub(in crate::check) fn fn_template(&self, idx: FnIdx) -> Option<usize> {
        let instances = self.instances.borrow();
        match idx.checked_sub(ABSTRACT) {
            Some(k) => instances.abstract_fns.get(k)?.template,
            None => instances.fns.get(idx.checked_sub(self.fns.len())?)?.template,
        }
    }

    /// The instance of generic function `template` for `args` and, for its function-typed
    /// parameters, `closures`, made on first use; `None` when instances would nest deeper than
    /// [`MAX_DEPTH`]. The instance has no function-typed parameters: each is bound to its
    /// closure's function, whose captures become parameters after the others.
    pub(in crate::check) fn fn_instance(
        &self,
        template: usize,
        args: Vec<Ty>,
        closures: Vec<ClosureArg>,
    ) -> Option<FnIdx> {
        let abstract_ = self.checking_template.get() || args.iter().any(|a| self.has_param(a));
        let lifted: Vec<FnIdx> = closures.iter().map(|c| c.lifted).collect();
        {
            let instances = self.instances.borrow();
            let (list, base) =
                if abstract_ { (&instances.abstract_fns, ABSTRACT) } else { (&instances.fns, self.fns.len()) };
            let same = |i: &FnInstance| i.template == Some(template) && i.args == args && i.closures == lifted;
            if let Some(k) = list.iter().position(same) {
                return Some(base + k);
            }
        }
        let depth = self.checking_depth.get() + 1;
        if depth > MAX_DEPTH {
            return None;
        }
        let generic = &self.generic_fns[template];
        let env: Vec<(String, Ty)> = generic.params.iter().map(|p| p.name.clone()).zip(args.iter().cloned()).collect();
        let mut info = generic.info.clone();
        // An abstract instance is named as written (its messages are the template's); a real
        // one by its type arguments and closures too.
        if !abstract_ {
            let mut names: Vec<String> = args.iter().map(|a| self.low_type_name(a)).collect();
            names.extend(lifted.iter().map(|&f| self.fn_info(f).name.clone()));
            info.name = format!("{}.{}", info.name, names.join("."));
        }
        for param in &mut info.params {
            param.ty = param.ty.as_ref().map(|t| self.subst(t, &env));
        }
        info.ret = info.ret.as_ref().map(|t| self.subst(t, &env));
        let mut fn_params = Vec::new();
        if !closures.is_empty() {
            let (fns, others): (Vec<ParamInfo>, Vec<ParamInfo>) =
                info.params.drain(..).partition(|p| matches!(p.ty, Some(Ty::Fn(..))));
            info.params = others;
            for (param, closure) in fns.iter().zip(closures) {
                let mut captures = Vec::new();
                for (name, ty) in closure.captures {
                    captures.push(info.params.len());
                    let ident = ast::Ident { name: format!("{}_{name}", param.name.name), span: param.name.span };
                    info.params.push(ParamInfo { name: ident, ty: Some(ty), mode: ParamMode::Borrowed });
                }
                fn_params.push(FnParam { name: param.name.name.clone(), lifted: closure.lifted, captures });
            }
        }
        let instance = FnInstance { template: Some(template), args, closures: lifted, fn_params, info, env, depth };
        Some(self.push_fn(abstract_, instance))
    }

    /// A closure lifted to a function of its own (`info`), checked later with the type
    /// parameters of where it was written (`env`).
    pub(in crate::check) fn lift_closure(&self, info: FnInfo<'f>) -> FnIdx {
        let abstract_ = self.checking_template.get();
        let env = self.type_env.borrow().clone();
        let depth = self.checking_depth.get() + 1;
        let instance = FnInstance {
            template: None,
            args: Vec::new(),
            closures: Vec::new(),
            fn_params: Vec::new(),
            info,
            env,
            depth,
        };
        self.push_fn(abstract_, instance)
    }

    /// The next name of a closure lifted from the function named `enclosing`:
    /// `main.closure1`, `main.closure2`, ….
    pub(in crate::check) fn closure_name(&self, enclosing: &str) -> String {
        let mut counts = self.closure_counts.borrow_mut();
        let n = counts.entry(enclosing.to_string()).or_insert(0);
        *n += 1;
        format!("{enclosing}.closure{n}")
    }

    /// Adds a function instance (to the abstract ones when `abstract_`): its index.
    fn push_fn(&self, abstract_: bool, instance: FnInstance<'f>) -> FnIdx {
        let mut instances = self.instances.borrow_mut();
        if abstract_ {
            instances.abstract_fns.push(instance);
            ABSTRACT + instances.abstract_fns.len() - 1
        } else {
            instances.fns.push(instance);
            self.fns.len() + instances.fns.len() - 1
        }
    }

    /// How many abstract function instances there are so far.
    pub(in crate::check) fn abstract_fn_count(&self) -> usize {
        self.instances.borrow().abstract_fns.len()
    }

    /// The function-typed parameters of function `idx`'s instance and what they call.
    pub(in crate::check) fn fn_params(&self, idx: FnIdx) -> Vec<FnParam> {
        let instances = self.instances.borrow();
        let instance = match idx.checked_sub(ABSTRACT) {
            Some(k) => instances.abstract_fns.get(k),
            None => idx.checked_sub(self.fns.len()).and_then(|k| instances.fns.get(k)),
        };
        instance.map_or_else(Vec::new, |i| i.fn_params.clone())
    }

    /// The instance of generic class `template` for `args`, made on first use.
    pub(in crate::check) fn class_instance(&self, template: usize, args: Vec<Ty>) -> ClassIdx {
        let abstract_ = self.checking_template.get() || args.iter().any(|a| self.has_param(a));
        let generic = &self.generic_classes[template];
        let env: Vec<(String, Ty)> = generic.params.iter().map(|p| p.name.clone()).zip(args.iter().cloned()).collect();
        let idx = {
            let mut instances = self.instances.borrow_mut();
            let (list, base) = if abstract_ {
                (&mut instances.abstract_classes, ABSTRACT)
            } else {
                (&mut instances.classes, self.classes.len())
            };
            if let Some(k) = list.iter().position(|m| m.template == Some(template) && m.args == args) {
                return base + k;
            }
            // Made with no fields first, so a field naming the instance itself finds it.
            let mut info = generic.info.clone();
            info.fields.clear();
            list.push(MadeClass { template: Some(template), args: args.clone(), info });
            base + list.len() - 1
        };
        let names: Vec<String> = args.iter().map(|a| self.low_type_name(a)).collect();
        let name = format!("{}.{}", generic.info.name, names.join("."));
        let fields: Vec<FieldInfo> = self.nested(&generic.info, || {
            generic
                .info
                .fields
                .iter()
                .map(|f| FieldInfo { name: f.name.clone(), ty: f.ty.as_ref().map(|t| self.subst(t, &env)) })
                .collect()
        });
        let mut instances = self.instances.borrow_mut();
        let made = match idx.checked_sub(ABSTRACT) {
            Some(k) => &mut instances.abstract_classes[k],
            None => &mut instances.classes[idx - self.classes.len()],
        };
        made.info.name = name;
        made.info.fields = fields;
        idx
    }

    /// The template and type arguments of the enum at `idx`, when it is a generic enum's
    /// instance.
    pub(in crate::check) fn enum_generic(&self, idx: EnumIdx) -> Option<(usize, Vec<Ty>)> {
        self.made_enum(idx, |m| m.generic.clone()).flatten()
    }

    /// The instance of generic enum `template` for `args`, made on first use.
    pub(in crate::check) fn enum_instance(&self, template: usize, args: Vec<Ty>) -> EnumIdx {
        let abstract_ = self.checking_template.get() || args.iter().any(|a| self.has_param(a));
        let key = Some((template, args.clone()));
        if let Some(idx) = self.find_enum(abstract_, |m| m.generic == key) {
            return idx;
        }
        let generic = &self.generic_enums[template];
        // Made with no variants first, so a payload naming the instance itself finds it.
        let mut info = generic.info.clone();
        info.variants.clear();
        let idx = self.push_enum(abstract_, MadeEnum { result_of: None, generic: key, info });
        let env: Vec<(String, Ty)> = generic.params.iter().map(|p| p.name.clone()).zip(args.iter().cloned()).collect();
        let names: Vec<String> = args.iter().map(|a| self.low_type_name(a)).collect();
        let name = format!("{}.{}", generic.info.name, names.join("."));
        let enum_span = ClassInfo {
            name: generic.info.name.clone(),
            name_span: generic.info.name_span,
            span: generic.info.span,
            fields: Vec::new(),
            actor: None,
        };
        let variants: Vec<VariantInfo> = self.nested(&enum_span, || {
            generic
                .info
                .variants
                .iter()
                .map(|v| VariantInfo {
                    name: v.name.clone(),
                    payload: v.payload.as_ref().map(|p| p.as_ref().map(|t| self.subst(t, &env))),
                })
                .collect()
        });
        let list = if abstract_ { &self.abstract_enums } else { &self.made_enums };
        let base = if abstract_ { ABSTRACT } else { self.enums.len() };
        let mut list = list.borrow_mut();
        let made = &mut list[idx - base];
        made.info.name = name;
        made.info.variants = variants;
        idx
    }

    /// Runs `make` (the types of an instance of the template `of`) one level deeper in the
    /// instances that make instances; past [`MAX_DEPTH`] levels it gives nothing and records
    /// the template, whose types would grow for ever (`class Tree<T> { kids: [Tree<[T]>] }`).
    fn nested<R: Default>(&self, of: &ClassInfo, make: impl FnOnce() -> R) -> R {
        let depth = self.making_depth.get();
        if depth > 2 * MAX_DEPTH {
            self.endless.borrow_mut().get_or_insert((of.name.clone(), of.name_span, false));
            return R::default();
        }
        self.making_depth.set(depth + 1);
        let out = make();
        self.making_depth.set(depth);
        out
    }

    /// Reports a template whose instances would hold ever larger instances of itself.
    pub(in crate::check) fn report_endless(&self, diags: &mut Vec<Diagnostic>) {
        let mut endless = self.endless.borrow_mut();
        if let Some((name, span, reported)) = endless.as_mut()
            && !*reported
        {
            *reported = true;
            let (name, span) = (name.clone(), *span);
            diags.push(
                error(
                    H433,
                    span,
                    format!("`{name}` holds instances of itself with ever larger type arguments"),
                    "endless",
                )
                .note("an instance of a generic type may hold only instances that are no larger"),
            );
        }
    }

    /// Declares a generic enum (its name; the variants come once every type is known).
    pub(super) fn declare_generic_enum(&mut self, decl: &ast::EnumDecl, diags: &mut Vec<Diagnostic>) {
        let name = &decl.name.name;
        if self.names_type(name) {
            diags.push(error(H205, decl.name.span, format!("type `{name}` is declared twice"), "declared again here"));
            return;
        }
        let params = self.type_params(&decl.type_params, false, diags);
        let info = EnumInfo { name: name.clone(), name_span: decl.name.span, span: decl.span, variants: Vec::new() };
        self.generic_enum_by_name.insert(name.clone(), self.generic_enums.len());
        self.generic_enums.push(GenericEnum { info, params });
    }

    /// Resolves the variants of the generic enum declared as `decl`.
    pub(super) fn resolve_generic_variants(&mut self, decl: &ast::EnumDecl, diags: &mut Vec<Diagnostic>) {
        let Some(&k) = self.generic_enum_by_name.get(&decl.name.name) else { return };
        if self.generic_enums[k].info.span != decl.span {
            return;
        }
        let params = self.generic_enums[k].params.clone();
        let variants = self.in_template(&params, || self.resolve_variants(decl, diags));
        self.generic_enums[k].info.variants = variants;
    }

    /// Fills the instances made while the templates' own fields and variants were resolved
    /// (`Tree<T>` inside `enum Tree<T>`), which were made before those were known.
    pub(super) fn refresh_instances(&self) {
        let classes: Vec<(usize, Vec<Ty>)> = {
            let instances = self.instances.borrow();
            instances
                .classes
                .iter()
                .chain(&instances.abstract_classes)
                .filter_map(|m| Some((m.template?, m.args.clone())))
                .collect()
        };
        for (template, args) in classes {
            let env = self.env_of(&self.generic_classes[template].params, &args);
            let fields: Vec<FieldInfo> = self.generic_classes[template]
                .info
                .fields
                .iter()
                .map(|f| FieldInfo { name: f.name.clone(), ty: f.ty.as_ref().map(|t| self.subst(t, &env)) })
                .collect();
            let mut instances = self.instances.borrow_mut();
            let instances = &mut *instances;
            let key = Some(template);
            for made in instances.classes.iter_mut().chain(instances.abstract_classes.iter_mut()) {
                if made.template == key && made.args == args {
                    made.info.fields = fields.clone();
                }
            }
        }
        let enums: Vec<(usize, Vec<Ty>)> = {
            let (made, abstract_) = (self.made_enums.borrow(), self.abstract_enums.borrow());
            made.iter().chain(abstract_.iter()).filter_map(|m| m.generic.clone()).collect()
        };
        for (template, args) in enums {
            let env = self.env_of(&self.generic_enums[template].params, &args);
            let variants: Vec<VariantInfo> = self.generic_enums[template]
                .info
                .variants
                .iter()
                .map(|v| VariantInfo {
                    name: v.name.clone(),
                    payload: v.payload.as_ref().map(|p| p.as_ref().map(|t| self.subst(t, &env))),
                })
                .collect();
            let key = Some((template, args));
            for list in [&self.made_enums, &self.abstract_enums] {
                for made in list.borrow_mut().iter_mut().filter(|m| m.generic == key) {
                    made.info.variants = variants.clone();
                }
            }
        }
    }

    /// The bindings of `params` to `args`.
    fn env_of(&self, params: &[TypeParamInfo], args: &[Ty]) -> Vec<(String, Ty)> {
        params.iter().map(|p| p.name.clone()).zip(args.iter().cloned()).collect()
    }

    /// The written name of an enum: `Tree<i64>` for an instance, `Result<T>` for a result.
    pub(super) fn enum_display_name(&self, idx: EnumIdx) -> String {
        if let Some(ok) = self.result_of(idx) {
            return format!("Result<{}>", self.ty_name(&ok));
        }
        match (self.enum_generic(idx), self.enum_at(idx)) {
            (Some((template, args)), _) => {
                let args: Vec<String> = args.iter().map(|a| self.ty_name(a)).collect();
                format!("{}<{}>", self.generic_enums[template].info.name, args.join(", "))
            }
            (None, Some(info)) => info.name.clone(),
            (None, None) => "<enum>".into(),
        }
    }

    /// The name a pattern writes the enum at `idx` by: `Result` for any `Result<T>`, a
    /// generic enum's own name for its instances.
    pub(in crate::check) fn enum_written_name(&self, idx: EnumIdx) -> String {
        if self.result_of(idx).is_some() {
            return super::results::RESULT.to_string();
        }
        match self.enum_generic(idx) {
            Some((template, _)) => self.generic_enums[template].info.name.clone(),
            None => self.ty_name(&Ty::Enum(idx)),
        }
    }

    /// Whether `ty` mentions a type parameter (directly or through an abstract instance).
    pub(in crate::check) fn has_param(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Param(..) => true,
            Ty::Array(inner) | Ty::Option(inner) | Ty::Task(inner) => self.has_param(inner),
            Ty::Map(k, v) => self.has_param(k) || self.has_param(v),
            Ty::Class(c) => *c >= ABSTRACT,
            Ty::Enum(e) => *e >= ABSTRACT,
            Ty::Fn(params, ret) => params.iter().any(|p| self.has_param(p)) || self.has_param(ret),
            _ => false,
        }
    }

    /// `ty` with each type parameter named in `env` replaced by its binding.
    pub(in crate::check) fn subst(&self, ty: &Ty, env: &[(String, Ty)]) -> Ty {
        match ty {
            Ty::Param(name, _) => env.iter().find(|(n, _)| n == name).map_or_else(|| ty.clone(), |(_, t)| t.clone()),
            Ty::Array(inner) => Ty::Array(Box::new(self.subst(inner, env))),
            // `T?` of an option type is that type (as in Kotlin): there is no `T??`.
            Ty::Option(inner) => match self.subst(inner, env) {
                option @ Ty::Option(_) => option,
                other => Ty::Option(Box::new(other)),
            },
            Ty::Task(inner) => Ty::Task(Box::new(self.subst(inner, env))),
            Ty::Fn(params, ret) => {
                Ty::Fn(params.iter().map(|p| self.subst(p, env)).collect(), Box::new(self.subst(ret, env)))
            }
            Ty::Map(k, v) => Ty::Map(Box::new(self.subst(k, env)), Box::new(self.subst(v, env))),
            Ty::Class(c) if *c >= ABSTRACT => match self.class_generic(*c) {
                Some((template, args)) => {
                    Ty::Class(self.class_instance(template, args.iter().map(|a| self.subst(a, env)).collect()))
                }
                None => ty.clone(),
            },
            Ty::Enum(e) if *e >= ABSTRACT => match (self.result_of(*e), self.enum_generic(*e)) {
                (Some(ok), _) => Ty::Enum(self.result_enum(&self.subst(&ok, env))),
                (None, Some((template, args))) => {
                    Ty::Enum(self.enum_instance(template, args.iter().map(|a| self.subst(a, env)).collect()))
                }
                (None, None) => ty.clone(),
            },
            _ => ty.clone(),
        }
    }

    /// Matches `pattern` (a generic signature's type over the parameters in `env`) against
    /// `actual`, binding unbound parameters: whether they can agree. `T?` also matches a `T`
    /// (the value is wrapped as anywhere else).
    pub(in crate::check) fn unify(&self, pattern: &Ty, actual: &Ty, env: &mut [(String, Option<Ty>)]) -> bool {
        match (pattern, actual) {
            (Ty::Param(name, _), _) if env.iter().any(|(n, _)| n == name) => {
                let slot = &mut env.iter_mut().find(|(n, _)| n == name).expect("bound above").1;
                match slot {
                    Some(bound) => bound == actual,
                    None => {
                        *slot = Some(actual.clone());
                        true
                    }
                }
            }
            (Ty::Array(p), Ty::Array(a)) | (Ty::Option(p), Ty::Option(a)) | (Ty::Task(p), Ty::Task(a)) => {
                self.unify(p, a, env)
            }
            (Ty::Option(p), a) => self.unify(p, a, env),
            (Ty::Map(pk, pv), Ty::Map(ak, av)) => self.unify(pk, ak, env) && self.unify(pv, av, env),
            (Ty::Class(p), Ty::Class(a)) => match (self.class_generic(*p), self.class_generic(*a)) {
                (Some((pt, pargs)), Some((at, aargs))) if pt == at => {
                    pargs.iter().zip(&aargs).all(|(p, a)| self.unify(p, a, env))
                }
                _ => p == a,
            },
            (Ty::Enum(p), Ty::Enum(a)) => match (self.result_of(*p), self.result_of(*a)) {
                (Some(p), Some(a)) => self.unify(&p, &a, env),
                _ => match (self.enum_generic(*p), self.enum_generic(*a)) {
                    (Some((pt, pargs)), Some((at, aargs))) if pt == at => {
                        pargs.iter().zip(&aargs).all(|(p, a)| self.unify(p, a, env))
                    }
                    _ => p == a,
                },
            },
            _ => pattern == actual,
        }
    }

    /// The capabilities of `bounds` that `ty` lacks (none when it has them all).
    pub(in crate::check) fn missing_bounds(&self, ty: &Ty, bounds: Bounds) -> Bounds {
        let has = match ty {
            Ty::Param(_, own) => *own,
            _ => {
                let mut has = 0;
                if is_equatable(ty) {
                    has |= Bounds::EQ.0;
                }
                if is_ordered(ty) {
                    has |= Bounds::ORD.0;
                }
                if is_textual(ty) {
                    has |= Bounds::TEXT.0;
                }
                if ty.is_copy() {
                    has |= Bounds::COPY.0;
                }
                Bounds(has)
            }
        };
        Bounds(bounds.0 & !has.0)
    }

    /// A generic function: its signature over its type parameters, checked as a template once
    /// the bodies are (`check.rs`).
    pub(super) fn collect_generic_fn(&mut self, decl: &'f ast::FnDecl, diags: &mut Vec<Diagnostic>) {
        let name = &decl.name.name;
        if super::is_builtin_fn(name) || name == "main" {
            diags.push(error(H207, decl.name.span, format!("`{name}` cannot be a generic function"), "reserved name"));
            return;
        }
        if self.fn_by_name.contains_key(name) || self.generic_fn_by_name.contains_key(name) {
            diags.push(error(
                H207,
                decl.name.span,
                format!("function `{name}` is declared twice"),
                "declared again here",
            ));
            return;
        }
        let params = self.type_params(&decl.type_params, true, diags);
        let (fn_params, ret) = self.in_template(&params, || {
            self.fn_types_allowed.set(true);
            let fn_params = self.collect_params(&decl.params, diags, super::plain_param_mode);
            self.fn_types_allowed.set(false);
            let ret = decl.ret.as_ref().map_or(Some(Ty::Unit), |t| self.resolve_ty(t, diags));
            (fn_params, ret)
        });
        let info = super::declared_fn(decl, fn_params, ret);
        self.generic_fn_by_name.insert(name.clone(), self.generic_fns.len());
        self.generic_fns.push(GenericFn { info, params });
    }

    /// Declares a generic class (its name; the fields come once every type is known).
    pub(super) fn declare_generic_class(&mut self, decl: &ast::ClassDecl, diags: &mut Vec<Diagnostic>) {
        let name = &decl.name.name;
        if self.names_type(name) {
            diags.push(error(H205, decl.name.span, format!("type `{name}` is declared twice"), "declared again here"));
            return;
        }
        let params = self.type_params(&decl.type_params, false, diags);
        let info = ClassInfo {
            name: name.clone(),
            name_span: decl.name.span,
            span: decl.span,
            fields: Vec::new(),
            actor: None,
        };
        self.generic_class_by_name.insert(name.clone(), self.generic_classes.len());
        self.generic_classes.push(GenericClass { info, params });
    }

    /// Resolves the fields of the generic class declared as `decl`.
    pub(super) fn resolve_generic_fields(&mut self, decl: &ast::ClassDecl, diags: &mut Vec<Diagnostic>) {
        let Some(&k) = self.generic_class_by_name.get(&decl.name.name) else { return };
        if self.generic_classes[k].info.span != decl.span {
            return;
        }
        let params = self.generic_classes[k].params.clone();
        let fields = self.in_template(&params, || self.resolve_fields(&decl.fields, &decl.name.name, diags));
        self.generic_classes[k].info.fields = fields;
    }

    /// The written name of a class: `Page<User>` for an instance.
    pub(super) fn class_display_name(&self, idx: ClassIdx) -> String {
        match (self.class_generic(idx), self.class_at(idx)) {
            (Some((template, args)), _) => {
                let args: Vec<String> = args.iter().map(|a| self.ty_name(a)).collect();
                format!("{}<{}>", self.generic_classes[template].info.name, args.join(", "))
            }
            (None, Some(info)) => info.name.clone(),
            (None, None) => "<class>".into(),
        }
    }
}

/// Whether `==` applies to values of `ty` (the checker's rule for the operator).
pub(in crate::check) fn is_equatable(ty: &Ty) -> bool {
    matches!(ty, Ty::String | Ty::Uuid | Ty::Time | Ty::Duration) || ty.scalar().is_some()
}

/// Whether `<` applies to values of `ty`.
pub(in crate::check) fn is_ordered(ty: &Ty) -> bool {
    crate::check::expr::is_number(ty) || matches!(ty, Ty::Time | Ty::Duration)
}

/// Whether `to_string` and interpolation take values of `ty`.
pub(in crate::check) fn is_textual(ty: &Ty) -> bool {
    matches!(ty, Ty::String | Ty::Time | Ty::Duration | Ty::Uuid | Ty::Secret) || ty.scalar().is_some()
}

/// "`ord` and `text`": capabilities for messages (`ord` standing for the `eq` it includes).
pub(in crate::check) fn bounds_list(bounds: Bounds) -> String {
    let names: Vec<String> = bound_names(bounds).iter().map(|n| format!("`{n}`")).collect();
    names.join(" and ")
}

/// `ord + text`: capabilities as a declaration writes them.
pub(in crate::check) fn bounds_written(bounds: Bounds) -> String {
    bound_names(bounds).join(" + ")
}

fn bound_names(bounds: Bounds) -> Vec<&'static str> {
    let mut rest = bounds.0;
    let mut names = Vec::new();
    for (name, own) in [("ord", 2), ("eq", 1), ("text", 4), ("copy", 8)] {
        if rest & own != 0 {
            names.push(name);
            rest &= if name == "ord" { !3 } else { !own };
        }
    }
    names
}
