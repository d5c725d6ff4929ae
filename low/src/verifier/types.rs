//! Operand typing: each operation's operands and destination have the types it takes and
//! produces, its ids are in range, and calls match their callee.
//!
//! These checks are flow-insensitive: they look at one operation and the declared types of the
//! locals it names, and run on every operation, reachable or not.

use std::borrow::Cow;

use crate::entities::{ArenaGet, EnumId, LocalId, OpId, index};
use crate::facts::Family;
use crate::module::{ClassData, EnumData, FieldData, VariantData};
use crate::ops::{BinaryOp, OpKind, Operand, StrPart, UnaryOp};
use crate::types::{ScalarType, Type};

use super::{FnCx, code, mnemonic};

mod actors;
mod defers;
mod maps;
mod queues;
mod rtcall;

pub(super) use actors::actor_problems;
mod tasks;

/// Checks the types and ids of one operation.
pub(super) fn check_op(cx: &mut FnCx<'_>, op: OpId, kind: &OpKind) {
    let mut c = OpCheck { name: mnemonic(kind), cx, op, invalid: Vec::new() };
    c.check(kind);
}

/// The checks of one operation, with its mnemonic for messages.
struct OpCheck<'c, 'a> {
    cx: &'c mut FnCx<'a>,
    op: OpId,
    name: String,
    /// Out-of-range locals already reported for this operation, so each is reported once.
    invalid: Vec<LocalId>,
}

impl<'a> OpCheck<'_, 'a> {
    fn error(&mut self, code: &'static str, message: impl std::fmt::Display) {
        self.cx.op_error(code, self.op, message);
    }

    /// The declared type of `local`, reporting an out-of-range id.
    fn local(&mut self, local: LocalId) -> Option<&'a Type> {
        let ty = self.cx.ty(local);
        if ty.is_none() && !self.invalid.contains(&local) {
            self.invalid.push(local);
            let message = format!(
                "`{}` names local #{}, which does not exist; the function has {} locals",
                self.name,
                index(local),
                self.cx.func.locals.len()
            );
            self.error(code::INVALID_ID, message);
        }
        ty
    }

    /// The type of an operand: its constant's, or its local's declared type.
    fn operand(&mut self, operand: &Operand) -> Option<Cow<'a, Type>> {
        match operand {
            Operand::Const(c) => Some(Cow::Owned(c.ty())),
            Operand::Local(l) => self.local(*l).map(Cow::Borrowed),
        }
    }

    /// How an operand is written, for messages.
    fn describe(&self, operand: &Operand) -> String {
        match operand {
            Operand::Const(c) => c.to_string(),
            Operand::Local(l) => self.cx.name(*l),
        }
    }

    fn show(&self, ty: &Type) -> String {
        self.cx.show(ty)
    }

    /// Reports the operation (one that waits or starts what waits: tasks, actors) outside an
    /// async function (V225).
    fn require_async(&mut self) {
        if !self.cx.func.is_async {
            let message =
                format!("`{}` is only allowed in async functions, and ${} is not async", self.name, self.cx.func.name);
            self.error(code::AWAIT_OUTSIDE_ASYNC, message);
        }
    }

    /// Reports `what` having type `found` where `expected` (spelled out) was needed.
    fn mismatch(&mut self, what: &str, found: &Type, expected: &str) {
        let message = format!("{what} of `{}` has type {}, expected {expected}", self.name, self.show(found));
        self.error(code::TYPE_MISMATCH, message);
    }

    /// Checks that `what` has exactly type `expected`.
    fn expect(&mut self, what: &str, found: &Type, expected: &Type) {
        if found != expected {
            let expected = self.show(expected);
            self.mismatch(what, found, &expected);
        }
    }

    /// Checks that operand `operand` (called `role`, e.g. "operand") has type `expected`.
    fn expect_operand(&mut self, role: &str, operand: &Operand, expected: &Type) {
        if let Some(found) = self.operand(operand) {
            let what = format!("{role} {}", self.describe(operand));
            self.expect(&what, &found, expected);
        }
    }

    /// Checks that the destination has type `expected`.
    fn expect_dest(&mut self, dest: LocalId, expected: &Type) {
        if let Some(found) = self.local(dest) {
            let what = format!("destination {}", self.cx.name(dest));
            self.expect(&what, found, expected);
        }
    }

    /// The class that `object` is or refers to, and whether it may be mutated through it.
    fn class_of(&mut self, object: LocalId) -> Option<(&'a ClassData, bool)> {
        let ty = self.local(object)?;
        let (inner, mutable) = ty.through_ref();
        match inner {
            // An unknown class is reported at the local's declaration.
            Type::Class(c) => self.cx.module.classes.get(*c).map(|class| (class, mutable)),
            _ => {
                let what = format!("object {}", self.cx.name(object));
                self.mismatch(&what, ty, "a class or a reference to one");
                None
            }
        }
    }

    /// The enum that `value` is or refers to, and whether it may be mutated through it.
    fn enum_of(&mut self, value: LocalId) -> Option<(&'a EnumData, bool)> {
        let ty = self.local(value)?;
        let (inner, mutable) = ty.through_ref();
        match inner {
            // An unknown enum is reported at the local's declaration.
            Type::Enum(e) => self.cx.module.enums.get(*e).map(|data| (data, mutable)),
            _ => {
                let what = format!("value {}", self.cx.name(value));
                self.mismatch(&what, ty, "an enum or a reference to one");
                None
            }
        }
    }

    fn variant(&mut self, data: &'a EnumData, index: u32) -> Option<&'a VariantData> {
        let variant = data.variants.get(index as usize);
        if variant.is_none() {
            let message = format!(
                "`{}` names variant #{index}, but enum {} has {} variants",
                self.name,
                data.name,
                data.variants.len()
            );
            self.error(code::FIELD_INDEX, message);
        }
        variant
    }

    /// `enum.new`: the enum and variant exist, and the payload is given exactly when the
    /// variant carries one, with the payload's type.
    fn enum_new(&mut self, dest: LocalId, enum_id: EnumId, variant: u32, payload: &Option<Operand>) {
        let found = payload.as_ref().map(|p| self.operand(p));
        let Some(data) = self.cx.module.enums.get(enum_id) else {
            self.local(dest);
            let message = format!(
                "`enum.new` names enum #{}, which does not exist; the module has {} enums",
                index(enum_id),
                self.cx.module.enums.len()
            );
            self.error(code::UNKNOWN_CLASS, message);
            return;
        };
        self.expect_dest(dest, &Type::Enum(enum_id));
        let Some(v) = self.variant(data, variant) else { return };
        match (&v.payload, payload, found) {
            (Some(expected), Some(value), Some(Some(found))) => {
                let what = format!("the payload of {}.{} ({})", data.name, v.name, self.describe(value));
                self.expect(&what, &found, expected);
            }
            (Some(_), None, _) => {
                let message = format!("`enum.new {}.{}` needs the variant's payload", data.name, v.name);
                self.error(code::OPERAND_COUNT, message);
            }
            (None, Some(_), _) => {
                let message =
                    format!("`enum.new {}.{}` gives a payload, but the variant carries none", data.name, v.name);
                self.error(code::OPERAND_COUNT, message);
            }
            _ => {}
        }
    }

    fn field(&mut self, class: &'a ClassData, index: u32) -> Option<&'a FieldData> {
        let field = class.fields.get(index as usize);
        if field.is_none() {
            let message = format!(
                "`{}` names field #{index}, but class {} has {} fields",
                self.name,
                class.name,
                class.fields.len()
            );
            self.error(code::FIELD_INDEX, message);
        }
        field
    }

    /// The element type of the array that `array` is or refers to, and whether it may be
    /// mutated through it.
    fn array_of(&mut self, array: LocalId) -> Option<(&'a Type, bool)> {
        let ty = self.local(array)?;
        match ty.through_ref() {
            (Type::Array(element), mutable) => Some((element, mutable)),
            _ => {
                let what = format!("array {}", self.cx.name(array));
                self.mismatch(&what, ty, "an array [T] or a reference to one");
                None
            }
        }
    }

    /// Reports a mutation through a shared reference.
    fn require_mutable(&mut self, mutable: bool, target: LocalId, what: &str) {
        if !mutable {
            let ty = self.cx.ty(target).map(|t| self.show(t)).unwrap_or_default();
            let message = format!(
                "`{}` {what} through {}, a shared reference ({ty}); it needs an owned value or a `&mut`",
                self.name,
                self.cx.name(target)
            );
            self.error(code::NOT_MUTABLE, message);
        }
    }

    /// Checks that the operand `string` is a `String` or a reference to one.
    fn expect_string(&mut self, role: &str, string: LocalId) {
        if let Some(ty) = self.local(string)
            && ty.through_ref().0 != &Type::String
        {
            let what = format!("{role} {}", self.cx.name(string));
            self.mismatch(&what, ty, "String or &str");
        }
    }

    /// Checks one operation, by family.
    fn check(&mut self, kind: &OpKind) {
        match kind.family() {
            Family::Scalar => self.check_scalar(kind),
            Family::Call => self.check_call(kind),
            Family::Object => self.check_object(kind),
            Family::Array => self.check_array(kind),
            Family::Map => self.map_op(kind),
            Family::String => self.check_string(kind),
            Family::Option => self.check_option(kind),
            Family::Enum => self.check_enum(kind),
            Family::Ownership => self.check_ownership(kind),
            Family::Async => self.check_async(kind),
            Family::Control => self.check_control(kind),
        }
    }

    /// `const`, unary and binary arithmetic, `cast`.
    fn check_scalar(&mut self, kind: &OpKind) {
        match kind {
            OpKind::Const { dest, value } => self.expect_dest(*dest, &value.ty()),
            OpKind::Unary { dest, op, ty, arg } => {
                let defined = match op {
                    UnaryOp::Neg | UnaryOp::Abs => *ty != ScalarType::Bool,
                    UnaryOp::Not => *ty != ScalarType::F64,
                };
                if !defined {
                    let takes = if *op == UnaryOp::Not { "i32, i64 or bool" } else { "i32, i64 or f64" };
                    let message = format!("`{}` is not defined: `{}` takes {takes}", self.name, op.name());
                    self.error(code::UNDEFINED_AT_TYPE, message);
                }
                let t = ty.to_type();
                self.expect_operand("operand", arg, &t);
                self.expect_dest(*dest, &t);
            }
            OpKind::Binary { dest, op, ty, lhs, rhs } => self.binary(*dest, *op, *ty, lhs, rhs),
            OpKind::Cast { dest, to, arg } => {
                if *to == ScalarType::Bool {
                    let message = format!("`{}` is not defined: `cast` converts to i32, i64 or f64", self.name);
                    self.error(code::UNDEFINED_AT_TYPE, message);
                }
                if let Some(found) = self.operand(arg)
                    && !matches!(*found, Type::I32 | Type::I64 | Type::F64)
                {
                    let what = format!("operand {}", self.describe(arg));
                    self.mismatch(&what, &found, "i32, i64 or f64");
                }
                self.expect_dest(*dest, &to.to_type());
            }
            _ => {}
        }
    }

    /// `call` and `rtcall`.
    fn check_call(&mut self, kind: &OpKind) {
        match kind {
            OpKind::Call { dest, callee, args, awaited } => self.call(*dest, *callee, args, *awaited),
            OpKind::RuntimeCall { dest, func, class, args, awaited } => {
                self.runtime_call(*dest, *func, *class, args, *awaited)
            }
            _ => {}
        }
    }

    /// `new` and `field.*`.
    fn check_object(&mut self, kind: &OpKind) {
        match kind {
            OpKind::New { dest, class, fields } => {
                let types: Vec<_> = fields.iter().map(|f| self.operand(f)).collect();
                let Some(class_data) = self.cx.module.classes.get(*class) else {
                    self.local(*dest);
                    let message = format!(
                        "`new` names class #{}, which does not exist; the module has {} classes",
                        index(*class),
                        self.cx.module.classes.len()
                    );
                    self.error(code::UNKNOWN_CLASS, message);
                    return;
                };
                if fields.len() != class_data.fields.len() {
                    let message = format!(
                        "`new {}` gives {} field values, but class {} has {} fields",
                        class_data.name,
                        fields.len(),
                        class_data.name,
                        class_data.fields.len()
                    );
                    self.error(code::OPERAND_COUNT, message);
                }
                for ((value, found), field) in fields.iter().zip(&types).zip(&class_data.fields) {
                    if let Some(found) = found {
                        let what = format!("field `{}` ({})", field.name, self.describe(value));
                        self.expect(&what, found, &field.ty);
                    }
                }
                self.expect_dest(*dest, &Type::Class(*class));
            }
            OpKind::FieldGet { dest, object, field } => {
                self.local(*dest);
                let Some((class, _)) = self.class_of(*object) else { return };
                let Some(field) = self.field(class, *field) else { return };
                if !field.ty.is_copy() {
                    let message = format!(
                        "field `{}` of class {} has type {}, which is not a copy type; \
                         borrow it with `field.ref` instead",
                        field.name,
                        class.name,
                        self.show(&field.ty)
                    );
                    self.error(code::COPY_KIND, message);
                }
                self.expect_dest(*dest, &field.ty);
            }
            OpKind::FieldRef { dest, object, field, mutable } => {
                self.local(*dest);
                let Some((class, object_mutable)) = self.class_of(*object) else { return };
                if *mutable {
                    self.require_mutable(object_mutable, *object, "borrows a field mutably");
                }
                let Some(field) = self.field(class, *field) else { return };
                self.expect_dest(*dest, &Type::reference(*mutable, field.ty.clone()));
            }
            OpKind::FieldSet { object, field, value } => {
                let found = self.operand(value);
                let Some((class, object_mutable)) = self.class_of(*object) else { return };
                self.require_mutable(object_mutable, *object, "writes a field");
                let Some(field) = self.field(class, *field) else { return };
                if let Some(found) = found {
                    let what = format!("value {}", self.describe(value));
                    self.expect(&what, &found, &field.ty);
                }
            }
            _ => {}
        }
    }

    /// `array.*`.
    fn check_array(&mut self, kind: &OpKind) {
        match kind {
            OpKind::ArrayNew { dest } => {
                if let Some(ty) = self.local(*dest)
                    && !matches!(ty, Type::Array(_))
                {
                    let what = format!("destination {}", self.cx.name(*dest));
                    self.mismatch(&what, ty, "an array type [T]");
                }
            }
            OpKind::ArrayLen { dest, array } => {
                self.array_of(*array);
                self.expect_dest(*dest, &Type::I64);
            }
            OpKind::ArrayGet { dest, array, index } => {
                self.expect_operand("index", index, &Type::I64);
                self.local(*dest);
                let Some((element, _)) = self.array_of(*array) else { return };
                if !element.is_copy() {
                    let message = format!(
                        "the elements of {} have type {}, which is not a copy type; borrow one with `array.ref` instead",
                        self.cx.name(*array),
                        self.show(element)
                    );
                    self.error(code::COPY_KIND, message);
                }
                self.expect_dest(*dest, element);
            }
            OpKind::ArrayRef { dest, array, index, mutable } => {
                self.expect_operand("index", index, &Type::I64);
                self.local(*dest);
                let Some((element, array_mutable)) = self.array_of(*array) else { return };
                if *mutable {
                    self.require_mutable(array_mutable, *array, "borrows an element mutably");
                }
                self.expect_dest(*dest, &Type::reference(*mutable, element.clone()));
            }
            OpKind::ArraySet { array, index, value } => {
                self.expect_operand("index", index, &Type::I64);
                let found = self.operand(value);
                let Some((element, array_mutable)) = self.array_of(*array) else { return };
                self.require_mutable(array_mutable, *array, "writes an element");
                if let Some(found) = found {
                    let what = format!("value {}", self.describe(value));
                    self.expect(&what, &found, element);
                }
            }
            OpKind::ArrayPush { array, value } => {
                let found = self.operand(value);
                let Some((element, array_mutable)) = self.array_of(*array) else { return };
                self.require_mutable(array_mutable, *array, "appends");
                if let Some(found) = found {
                    let what = format!("value {}", self.describe(value));
                    self.expect(&what, &found, element);
                }
            }
            _ => {}
        }
    }

    /// `string` and `str.*`.
    fn check_string(&mut self, kind: &OpKind) {
        match kind {
            OpKind::StringLit { dest, .. } => self.expect_dest(*dest, &Type::String),
            OpKind::StrLen { dest, string } => {
                self.expect_string("operand", *string);
                self.expect_dest(*dest, &Type::I64);
            }
            OpKind::StrConcat { dest, parts } => {
                if parts.is_empty() {
                    self.error(code::OPERAND_COUNT, "`str.concat` needs at least one part".to_string());
                }
                for part in parts {
                    if let StrPart::Local(local) = part {
                        self.expect_string("operand", *local);
                    }
                }
                self.expect_dest(*dest, &Type::String);
            }
            OpKind::StrEq { dest, lhs, rhs } => {
                self.expect_string("operand", *lhs);
                self.expect_string("operand", *rhs);
                self.expect_dest(*dest, &Type::Bool);
            }
            _ => {}
        }
    }

    /// `option.*`.
    fn check_option(&mut self, kind: &OpKind) {
        match kind {
            OpKind::OptionSome { dest, value } => {
                if let Some(found) = self.operand(value) {
                    self.expect_dest(*dest, &Type::Option(Box::new(found.into_owned())));
                } else {
                    self.local(*dest);
                }
            }
            OpKind::OptionNone { dest } => {
                if let Some(ty) = self.local(*dest)
                    && !matches!(ty, Type::Option(_))
                {
                    let what = format!("destination {}", self.cx.name(*dest));
                    self.mismatch(&what, ty, "an Option type");
                }
            }
            OpKind::OptionIsSome { dest, option } => {
                if let Some(ty) = self.local(*option)
                    && !matches!(ty.through_ref().0, Type::Option(_))
                {
                    let what = format!("operand {}", self.cx.name(*option));
                    self.mismatch(&what, ty, "Option<T> or a reference to one");
                }
                self.expect_dest(*dest, &Type::Bool);
            }
            OpKind::OptionUnwrap { dest, option } => {
                self.local(*dest);
                match self.local(*option) {
                    Some(Type::Option(payload)) => self.expect_dest(*dest, payload),
                    Some(ty) => {
                        let what = format!("operand {}", self.cx.name(*option));
                        self.mismatch(&what, ty, "an owned Option<T>");
                    }
                    None => {}
                }
            }
            _ => {}
        }
    }

    /// `enum.*`.
    fn check_enum(&mut self, kind: &OpKind) {
        match kind {
            OpKind::EnumNew { dest, enum_id, variant, payload } => self.enum_new(*dest, *enum_id, *variant, payload),
            OpKind::EnumIs { dest, value, variant } => {
                self.local(*dest);
                if let Some((data, _)) = self.enum_of(*value) {
                    self.variant(data, *variant);
                }
                self.expect_dest(*dest, &Type::Bool);
            }
            OpKind::EnumGet { dest, value, variant } | OpKind::EnumRef { dest, value, variant } => {
                self.local(*dest);
                let Some((data, _)) = self.enum_of(*value) else { return };
                let Some(v) = self.variant(data, *variant) else { return };
                let Some(payload) = &v.payload else {
                    let message =
                        format!("`{}` reads the payload of {}.{}, which carries none", self.name, data.name, v.name);
                    self.error(code::OPERAND_COUNT, message);
                    return;
                };
                if matches!(kind, OpKind::EnumRef { .. }) {
                    self.expect_dest(*dest, &Type::reference(false, payload.clone()));
                    return;
                }
                if !payload.is_copy() {
                    let message = format!(
                        "the payload of {}.{} has type {}, which is not a copy type; borrow it with `enum.ref` instead",
                        data.name,
                        v.name,
                        self.show(payload)
                    );
                    self.error(code::COPY_KIND, message);
                }
                self.expect_dest(*dest, payload);
            }
            _ => {}
        }
    }

    /// `copy`, `move`, `clone`, `drop`, `borrow[_mut]`, `load`, `store`.
    fn check_ownership(&mut self, kind: &OpKind) {
        match kind {
            OpKind::Copy { dest, src } => {
                if let Some(ty) = self.local(*src) {
                    if !ty.is_copy() {
                        let message = format!(
                            "`copy` of {}, whose type {} is not a copy type; use `move` or `clone`",
                            self.cx.name(*src),
                            self.show(ty)
                        );
                        self.error(code::COPY_KIND, message);
                    }
                    self.expect_dest(*dest, ty);
                } else {
                    self.local(*dest);
                }
            }
            OpKind::Move { dest, src } => {
                if let Some(ty) = self.local(*src) {
                    if ty.is_copy() {
                        let message = format!(
                            "`move` of {}, whose type {} is a copy type; use `copy`",
                            self.cx.name(*src),
                            self.show(ty)
                        );
                        self.error(code::COPY_KIND, message);
                    }
                    self.expect_dest(*dest, ty);
                } else {
                    self.local(*dest);
                }
            }
            OpKind::Clone { dest, src } => match self.local(*src) {
                Some(ty) if ty.is_task_handle() => {
                    let message = format!(
                        "`clone` of {}, whose type {} has one owner; a scope or a task is never copied",
                        self.cx.name(*src),
                        self.show(ty)
                    );
                    self.error(code::TASK_HANDLE_PLACE, message);
                }
                Some(Type::Defer) => {
                    let message = format!(
                        "`clone` of {}, a Defer; a deferred call has one owner and runs once",
                        self.cx.name(*src)
                    );
                    self.error(code::DEFER, message);
                }
                Some(Type::Ref { pointee, .. }) => self.expect_dest(*dest, pointee),
                Some(ty) => self.expect_dest(*dest, ty),
                None => {
                    self.local(*dest);
                }
            },
            OpKind::Drop { local } => {
                if let Some(ty) = self.local(*local)
                    && ty.is_copy()
                {
                    let message = format!(
                        "`drop` of {}, whose type {} is a copy type; only owned values are dropped",
                        self.cx.name(*local),
                        self.show(ty)
                    );
                    self.error(code::COPY_KIND, message);
                }
            }
            OpKind::Borrow { dest, src, mutable } => match self.local(*src) {
                // A shared borrow of a `&mut T` reborrows it as `&T`, so an `inout` parameter
                // can be passed on to a read-only one.
                Some(Type::Ref { mutable: true, pointee }) if !*mutable => {
                    self.expect_dest(*dest, &Type::reference(false, (**pointee).clone()))
                }
                Some(ty) if ty.is_ref() => {
                    self.local(*dest);
                    let what = format!("operand {}", self.cx.name(*src));
                    self.mismatch(&what, ty, "an owned value or a `&mut` (a reference is copied, not borrowed again)");
                }
                Some(ty) => self.expect_dest(*dest, &Type::reference(*mutable, ty.clone())),
                None => {
                    self.local(*dest);
                }
            },
            OpKind::Load { dest, reference } => {
                self.local(*dest);
                match self.local(*reference) {
                    Some(Type::Ref { pointee, .. }) => {
                        if !pointee.is_copy() {
                            let message = format!(
                                "`load` through {} reads a {}, which is not a copy type; use `clone`",
                                self.cx.name(*reference),
                                self.show(pointee)
                            );
                            self.error(code::COPY_KIND, message);
                        }
                        self.expect_dest(*dest, pointee);
                    }
                    Some(ty) => {
                        let what = format!("operand {}", self.cx.name(*reference));
                        self.mismatch(&what, ty, "a reference &T");
                    }
                    None => {}
                }
            }
            OpKind::Store { reference, value } => {
                let found = self.operand(value);
                match self.local(*reference) {
                    Some(Type::Ref { mutable, pointee }) => {
                        self.require_mutable(*mutable, *reference, "writes");
                        if let Some(found) = found {
                            let what = format!("value {}", self.describe(value));
                            self.expect(&what, &found, pointee);
                        }
                    }
                    Some(ty) => {
                        let what = format!("operand {}", self.cx.name(*reference));
                        self.mismatch(&what, ty, "a reference &mut T");
                    }
                    None => {}
                }
            }
            _ => {}
        }
    }

    /// Tasks, actors, supervisors, deferred calls and queues, each in its own file.
    fn check_async(&mut self, kind: &OpKind) {
        match kind {
            OpKind::ScopeNew { .. } | OpKind::ScopeSpawn { .. } | OpKind::ScopeEnd { .. } | OpKind::TaskJoin { .. } => {
                self.task_op(kind)
            }
            OpKind::ActorStart { .. }
            | OpKind::ActorCall { .. }
            | OpKind::ActorSend { .. }
            | OpKind::SupervisorChild { .. } => self.actor_op(kind),
            OpKind::DeferNew { dest, callee, args } => self.defer(*dest, *callee, args),
            OpKind::QueuePush { dest, queue, job, delay } => self.queue_push(*dest, *queue, *job, delay),
            _ => {}
        }
    }

    /// What control flow reads: the condition of `if`, the bounds and variable of `for`, the returned value.
    fn check_control(&mut self, kind: &OpKind) {
        match kind {
            OpKind::If { cond, .. } => self.expect_operand("condition", cond, &Type::Bool),
            OpKind::ForRange { var, start, end, .. } => {
                let var_ty = self.local(*var);
                let start_ty = self.operand(start);
                let end_ty = self.operand(end);
                let Some(var_ty) = var_ty else { return };
                if !matches!(var_ty, Type::I32 | Type::I64) {
                    let what = format!("loop variable {}", self.cx.name(*var));
                    self.mismatch(&what, var_ty, "i32 or i64");
                    return;
                }
                for (role, operand, found) in [("start", start, start_ty), ("end", end, end_ty)] {
                    if let Some(found) = found {
                        let what = format!("{role} {}", self.describe(operand));
                        self.expect(&what, &found, var_ty);
                    }
                }
            }
            OpKind::ForEach { var, seq, .. } => {
                let var_ty = self.local(*var);
                let Some((element, _)) = self.array_of(*seq) else { return };
                let expected =
                    if element.is_copy() { element.clone() } else { Type::reference(false, element.clone()) };
                if let Some(var_ty) = var_ty {
                    let what = format!("loop variable {}", self.cx.name(*var));
                    self.expect(&what, var_ty, &expected);
                }
            }
            OpKind::Return { value } => self.ret(value.as_ref()),
            OpKind::Loop { .. }
            | OpKind::Block { .. }
            | OpKind::Break { .. }
            | OpKind::Continue { .. }
            | OpKind::Trap { .. } => {}
            _ => {}
        }
    }

    fn binary(&mut self, dest: LocalId, op: BinaryOp, ty: ScalarType, lhs: &Operand, rhs: &Operand) {
        use ScalarType::{Bool, F64};
        let (defined, takes) = match op {
            BinaryOp::Add
            | BinaryOp::Sub
            | BinaryOp::Mul
            | BinaryOp::Div
            | BinaryOp::Rem
            | BinaryOp::Min
            | BinaryOp::Max
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => (ty != Bool, "i32, i64 or f64"),
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => (ty != F64, "i32, i64 or bool"),
            BinaryOp::Shl | BinaryOp::Shr | BinaryOp::CheckedAdd | BinaryOp::CheckedSub | BinaryOp::CheckedMul => {
                (ty.is_int(), "i32 or i64")
            }
            BinaryOp::Eq | BinaryOp::Ne => (true, ""),
        };
        if !defined {
            let message = format!("`{}` is not defined: `{}` takes {takes}", self.name, op.name());
            self.error(code::UNDEFINED_AT_TYPE, message);
        }
        let t = ty.to_type();
        self.expect_operand("operand", lhs, &t);
        self.expect_operand("operand", rhs, &t);
        let result = if op.is_comparison() {
            Type::Bool
        } else if op.is_checked() {
            Type::Option(Box::new(t))
        } else {
            t
        };
        self.expect_dest(dest, &result);
    }

    /// The destination of a call against the callee's result type.
    pub(super) fn call_result(&mut self, dest: Option<LocalId>, ret: &Type, callee: &str) {
        match dest {
            Some(dest) => self.expect_dest(dest, ret),
            None if *ret == Type::Unit => {}
            None => {
                let message = format!(
                    "the result of {callee} (type {}) is discarded; assign it to a local (and drop it if unused)",
                    self.show(ret)
                );
                self.error(code::DISCARDED_RESULT, message);
            }
        }
    }

    /// `awaited` against the callee's asyncness, and `await` only in async functions.
    fn check_await(&mut self, awaited: bool, callee_async: bool, callee: &str) {
        if callee_async && !awaited {
            let message = format!("{callee} is async, so the call must be awaited (`await {}`)", self.name);
            self.error(code::AWAIT_MISMATCH, message);
        } else if !callee_async && awaited {
            let message = format!("{callee} is not async, so the call must not be awaited; remove `await`");
            self.error(code::AWAIT_MISMATCH, message);
        }
        if awaited && !self.cx.func.is_async {
            let message =
                format!("`await` is only allowed in async functions, and ${} is not async", self.cx.func.name);
            self.error(code::AWAIT_OUTSIDE_ASYNC, message);
        }
    }

    fn call(&mut self, dest: Option<LocalId>, callee: crate::entities::FuncId, args: &[Operand], awaited: bool) {
        let types: Vec<_> = args.iter().map(|a| self.operand(a)).collect();
        if let Some(dest) = dest {
            self.local(dest);
        }
        let Some(callee_data) = self.cx.module.functions.get(callee) else {
            let message = format!(
                "`call` names function #{}, which does not exist; the module has {} functions",
                index(callee),
                self.cx.module.functions.len()
            );
            self.error(code::INVALID_ID, message);
            return;
        };
        self.name = format!("call ${}", callee_data.name);
        let callee_name = format!("${}", callee_data.name);
        self.call_args(args, &types, callee_data, &callee_name, Crossing::Call);
        self.call_result(dest, &callee_data.ret, &callee_name);
        self.check_await(awaited, callee_data.is_async, &callee_name);
    }

    /// The arguments of a `call` or a `scope.spawn` of `callee` against its parameters: as many,
    /// each of its parameter's type; for a task (`owned_only`), no parameter may hold a
    /// reference (V250).
    pub(super) fn call_args(
        &mut self,
        args: &[Operand],
        types: &[Option<Cow<'a, Type>>],
        callee: &'a crate::module::FunctionData,
        callee_name: &str,
        crossing: Crossing,
    ) {
        // A handler's first parameter is the actor's state, which the actor passes itself.
        let params = match crossing {
            Crossing::Message => callee.params.get(1..).unwrap_or_default(),
            Crossing::Call | Crossing::Task | Crossing::Defer => &callee.params[..],
        };
        if args.len() != params.len() {
            let message =
                format!("`{}` passes {} arguments, but {callee_name} takes {}", self.name, args.len(), params.len());
            self.error(code::OPERAND_COUNT, message);
        }
        for (i, ((arg, found), param)) in args.iter().zip(types).zip(params).enumerate() {
            // A parameter that is out of range is reported when the callee is verified.
            let (Some(found), Some(param)) = (found, callee.locals.get(*param)) else { continue };
            let who = match crossing {
                Crossing::Call => None,
                Crossing::Task => Some((code::TASK_BOUNDARY, "a task cannot borrow from its parent")),
                Crossing::Message => Some((code::TASK_BOUNDARY, "a message cannot borrow from its sender")),
                Crossing::Defer => Some((code::DEFER, "a deferred call keeps its arguments until it runs")),
            };
            if let Some((rule, who)) = who
                && param.ty.contains_ref()
            {
                let message = format!(
                    "parameter {} of {callee_name} has type {}; {who}, so what it takes is owned",
                    i + 1 + usize::from(crossing == Crossing::Message),
                    self.show(&param.ty)
                );
                self.error(rule, message);
                continue;
            }
            let what = format!("argument {} ({})", i + 1, self.describe(arg));
            self.expect(&what, found, &param.ty);
        }
    }

    fn ret(&mut self, value: Option<&Operand>) {
        let func = self.cx.func;
        let ret = &func.ret;
        match value {
            None if *ret == Type::Unit => {}
            None => {
                let message = format!("`return` without a value in a function that returns {}", self.show(ret));
                self.error(code::RETURN_VALUE, message);
            }
            Some(value) => {
                let Some(found) = self.operand(value) else { return };
                if *ret == Type::Unit && *found != Type::Unit {
                    let message = format!(
                        "`return` gives {} of type {} in a function that returns unit; write `return`",
                        self.describe(value),
                        self.show(&found)
                    );
                    self.error(code::RETURN_VALUE, message);
                } else {
                    let what = format!("returned value {}", self.describe(value));
                    let expected = format!("{} (the result type of ${})", self.show(ret), func.name);
                    if *found != *ret {
                        self.mismatch(&what, &found, &expected);
                    }
                }
            }
        }
    }
}

/// What the arguments of a call cross, which decides what they may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Crossing {
    /// Nothing: a `call`, whose arguments may borrow.
    Call,
    /// A task boundary (`scope.spawn`): every argument is owned.
    Task,
    /// A mailbox (`actor.call`, `actor.send`): every argument is owned, and the handler's first
    /// parameter, the state, is not passed.
    Message,
    /// A deferred call (`defer.new`): every argument is owned, since the call runs when the
    /// `Defer` is dropped (V253).
    Defer,
}
