//! The built-in types of caught failures: `Failure { status: i64, message: String }` and
//! `Result<T>`, the enum `Ok(T) | Failed(Failure)` that `catch f()` gives (docs/language.md
//! §11.2). Each `Result<T>` is its own enum, made the first time the program names it (in a
//! written type or by a `catch`), so that Low, the emitters and JSON see an ordinary enum.

use std::borrow::Cow;

use nagi_syntax::ast::Span;

use super::generics::{ABSTRACT, MadeClass, MadeEnum};
use super::{ClassInfo, EnumInfo, FieldInfo, Items, VariantInfo};
use crate::tir::{ClassIdx, EnumIdx, Ty};

/// The name of the built-in class of a caught failure.
pub(in crate::check) const FAILURE: &str = "Failure";
/// The name of the built-in type `catch` gives.
pub(in crate::check) const RESULT: &str = "Result";

impl Items<'_> {
    /// The class `Failure`, made the first time the program names it (so a program that does
    /// not use it has no such class).
    pub(in crate::check) fn failure_class(&self) -> ClassIdx {
        if let Some(idx) = self.failure.get() {
            return idx;
        }
        let field = |name: &str, ty: Ty| FieldInfo { name: name.into(), ty: Some(ty) };
        let info = ClassInfo {
            name: FAILURE.into(),
            name_span: Span::default(),
            span: Span::default(),
            fields: vec![field("status", Ty::I64), field("message", Ty::String)],
            actor: None,
        };
        let mut instances = self.instances.borrow_mut();
        instances.classes.push(MadeClass { template: None, args: Vec::new(), info });
        let idx = self.classes.len() + instances.classes.len() - 1;
        self.failure.set(Some(idx));
        idx
    }

    /// The class named `name` (a declared one, or `Failure`): every lookup of a class by name
    /// goes through here.
    pub(in crate::check) fn class_named(&self, name: &str) -> Option<ClassIdx> {
        if name == FAILURE {
            return Some(self.failure_class());
        }
        self.class_by_name.get(name).copied()
    }

    /// The enum `Result<ok>` (`ok` is `Ty::Unit` for a call without a result, whose `Ok`
    /// carries nothing), made on first use.
    pub(in crate::check) fn result_enum(&self, ok: &Ty) -> EnumIdx {
        let failure = self.failure_class();
        let abstract_ = self.checking_template.get() || self.has_param(ok);
        if let Some(idx) = self.find_enum(abstract_, |m| m.result_of.as_ref() == Some(ok)) {
            return idx;
        }
        // No borrow held: the name reads the `Result` that `ok` may hold.
        let info = result_info(format!("{RESULT}.{}", self.low_type_name(ok)), ok, failure);
        self.push_enum(abstract_, MadeEnum { result_of: Some(ok.clone()), generic: None, info })
    }

    /// The made enum (abstract or not) that `found` picks, if there is one.
    pub(super) fn find_enum(&self, abstract_: bool, found: impl Fn(&MadeEnum) -> bool) -> Option<EnumIdx> {
        let (list, base) =
            if abstract_ { (&self.abstract_enums, ABSTRACT) } else { (&self.made_enums, self.enums.len()) };
        list.borrow().iter().position(found).map(|k| base + k)
    }

    /// Adds a made enum (to the abstract ones when `abstract_`): its index.
    pub(super) fn push_enum(&self, abstract_: bool, made: MadeEnum) -> EnumIdx {
        let (list, base) =
            if abstract_ { (&self.abstract_enums, ABSTRACT) } else { (&self.made_enums, self.enums.len()) };
        let mut list = list.borrow_mut();
        list.push(made);
        base + list.len() - 1
    }

    /// The made enum at `idx` (a `Result<T>` or a generic enum's instance), through `f`.
    pub(super) fn made_enum<R>(&self, idx: EnumIdx, f: impl FnOnce(&MadeEnum) -> R) -> Option<R> {
        match idx.checked_sub(ABSTRACT) {
            Some(k) => self.abstract_enums.borrow().get(k).map(f),
            None => self.made_enums.borrow().get(idx.checked_sub(self.enums.len())?).map(f),
        }
    }

    /// The enum at `idx`: declared, made (`Result<T>`, an instance) or abstract.
    pub(in crate::check) fn enum_at(&self, idx: EnumIdx) -> Option<Cow<'_, EnumInfo>> {
        match self.enums.get(idx) {
            Some(info) => Some(Cow::Borrowed(info)),
            None => self.made_enum(idx, |m| Cow::Owned(m.info.clone())),
        }
    }

    /// `T` of the enum at `idx` when it is a `Result<T>`.
    pub(in crate::check) fn result_of(&self, idx: EnumIdx) -> Option<Ty> {
        self.made_enum(idx, |m| m.result_of.clone()).flatten()
    }

    /// A type's name in Low, where an instance's name is its parts joined by dots
    /// (`Result.Array.Post` for `Result<[Post]>`): Low names are dotted words.
    pub(super) fn low_type_name(&self, ty: &Ty) -> String {
        match ty {
            Ty::Array(inner) => format!("Array.{}", self.low_type_name(inner)),
            Ty::Option(inner) => format!("Option.{}", self.low_type_name(inner)),
            Ty::Map(k, v) => format!("Map.{}.{}", self.low_type_name(k), self.low_type_name(v)),
            Ty::Task(inner) => format!("Task.{}", self.low_type_name(inner)),
            Ty::Enum(idx) => self.enum_at(*idx).map_or_else(|| "enum".into(), |e| e.name.clone()),
            Ty::Class(idx) => self.class_at(*idx).map_or_else(|| "class".into(), |c| c.name.clone()),
            other => self.ty_name(other),
        }
    }
}

/// The enum `Result<ok>` named `name`: `Ok(ok)` (no payload for unit) or `Failed(Failure)`.
fn result_info(name: String, ok: &Ty, failure: ClassIdx) -> EnumInfo {
    let payload = (*ok != Ty::Unit).then(|| Some(ok.clone()));
    let variants = vec![
        VariantInfo { name: "Ok".into(), payload },
        VariantInfo { name: "Failed".into(), payload: Some(Some(Ty::Class(failure))) },
    ];
    EnumInfo { name, name_span: Span::default(), span: Span::default(), variants }
}
