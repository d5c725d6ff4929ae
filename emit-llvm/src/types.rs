//! Layouts: how each Low type is laid out as an LLVM type.
//!
//! | Low | LLVM | notes |
//! | --- | --- | --- |
//! | `i32`, `i64`, `f64` | `i32`, `i64`, `double` | |
//! | `bool` | `i1` | one byte in memory; crosses the C ABI as an `i32` 0 or 1 |
//! | `unit` | `{}` | zero-sized; a function returning `unit` returns `void` |
//! | `String` | `%nagi.String = { i8*, i64 len, i64 cap }` | `ptr` comes from the runtime's allocator; `cap == 0` owns nothing |
//! | `[T]` | `{ T*, i64 len, i64 cap }` | the same three words as a string, so the runtime grows both alike |
//! | `Option<T>` | `{ i1, T }` | the payload is zero when the tag is 0 |
//! | class `C` | `%C = { fields… }` | a named struct, fields in declaration order |
//! | `&T`, `&mut T` | `T*` | a pointer to the owner's storage |
//!
//! A class that holds itself by value (directly or through an `Option`) would have no finite
//! size; [`Layouts::new`] rejects it. Holding itself through an array is fine, since the array
//! stores a pointer.

use std::collections::BTreeMap;

use inkwell::AddressSpace;
use inkwell::context::Context;
use inkwell::targets::TargetData;
use inkwell::types::{BasicType, BasicTypeEnum, PointerType, StructType};
use la_arena::ArenaMap;
use nagi_low::{ArenaGet, ClassId, Diagnostic, Module, Type};

use crate::Error;

/// The LLVM types of one module's Low types, and their sizes on the target.
pub(crate) struct Layouts<'ctx> {
    context: &'ctx Context,
    classes: ArenaMap<ClassId, StructType<'ctx>>,
    string: StructType<'ctx>,
    target_data: TargetData,
}

impl<'ctx> Layouts<'ctx> {
    /// Declares one named struct per class (bodies after all names exist, so classes may refer to
    /// each other through arrays), after checking that every class has a finite size.
    pub(crate) fn new(context: &'ctx Context, module: &Module, target_data: TargetData) -> Result<Self, Error> {
        check_finite(module)?;
        let string = context.opaque_struct_type("nagi.String");
        string.set_body(
            &[
                context.i8_type().ptr_type(AddressSpace::default()).into(),
                context.i64_type().into(),
                context.i64_type().into(),
            ],
            false,
        );
        let mut classes = ArenaMap::default();
        for (id, class) in module.classes.iter() {
            classes.insert(id, context.opaque_struct_type(&format!("class.{}", class.name)));
        }
        let layouts = Layouts { context, classes, string, target_data };
        for (id, class) in module.classes.iter() {
            let fields: Vec<BasicTypeEnum> = class.fields.iter().map(|f| layouts.llvm(&f.ty)).collect();
            layouts.classes[id].set_body(&fields, false);
        }
        Ok(layouts)
    }

    /// The LLVM type that holds a value of `ty`.
    pub(crate) fn llvm(&self, ty: &Type) -> BasicTypeEnum<'ctx> {
        let cx = self.context;
        match ty {
            Type::I32 => cx.i32_type().into(),
            Type::I64 => cx.i64_type().into(),
            Type::F64 => cx.f64_type().into(),
            Type::Bool => cx.bool_type().into(),
            Type::Unit => self.unit().into(),
            Type::String => self.string.into(),
            Type::Array(elem) => self.array(elem).into(),
            Type::Option(inner) => cx.struct_type(&[cx.bool_type().into(), self.llvm(inner)], false).into(),
            // The verifier has checked every class id; an empty struct keeps a bad one harmless.
            Type::Class(c) => self.classes.get(*c).copied().unwrap_or_else(|| self.unit()).into(),
            Type::Ref { pointee, .. } => self.pointer(pointee).into(),
        }
    }

    /// `{}`, the type of `unit`.
    pub(crate) fn unit(&self) -> StructType<'ctx> {
        self.context.struct_type(&[], false)
    }

    /// `%nagi.String`.
    pub(crate) fn string(&self) -> StructType<'ctx> {
        self.string
    }

    /// `{ T*, i64, i64 }` for `[T]`.
    pub(crate) fn array(&self, elem: &Type) -> StructType<'ctx> {
        let i64t = self.context.i64_type();
        self.context.struct_type(&[self.pointer(elem).into(), i64t.into(), i64t.into()], false)
    }

    /// `T*`.
    pub(crate) fn pointer(&self, pointee: &Type) -> PointerType<'ctx> {
        self.llvm(pointee).ptr_type(AddressSpace::default())
    }

    /// `i8*`, the pointer type the runtime's C ABI takes.
    pub(crate) fn byte_ptr(&self) -> PointerType<'ctx> {
        self.context.i8_type().ptr_type(AddressSpace::default())
    }

    /// The distance between consecutive array elements of type `ty`, in bytes.
    pub(crate) fn size(&self, ty: &Type) -> u64 {
        self.target_data.get_abi_size(&self.llvm(ty))
    }

    /// The ABI alignment of `ty`, in bytes.
    pub(crate) fn align(&self, ty: &Type) -> u32 {
        self.target_data.get_abi_alignment(&self.llvm(ty))
    }

    /// Where field `index` of `st` starts, in bytes.
    pub(crate) fn offset_of(&self, st: StructType<'ctx>, index: u32) -> u64 {
        self.target_data.offset_of_element(&st, index).unwrap_or(0)
    }

    /// The size and ABI alignment of a struct type, in bytes.
    pub(crate) fn struct_size_align(&self, st: StructType<'ctx>) -> (u64, u32) {
        (self.target_data.get_abi_size(&st), self.target_data.get_abi_alignment(&st))
    }

    /// The struct type of a class.
    pub(crate) fn class(&self, class: ClassId) -> StructType<'ctx> {
        self.classes.get(class).copied().unwrap_or_else(|| self.unit())
    }
}

/// Rejects a class that contains itself by value: it would need infinite space.
fn check_finite(module: &Module) -> Result<(), Error> {
    // Edges: class → classes it holds by value (directly or inside options, not inside arrays).
    let mut edges: BTreeMap<ClassId, Vec<ClassId>> = BTreeMap::new();
    for (id, class) in module.classes.iter() {
        let mut out = Vec::new();
        let mut stack: Vec<&Type> = class.fields.iter().map(|f| &f.ty).collect();
        while let Some(t) = stack.pop() {
            match t {
                Type::Class(c) => out.push(*c),
                Type::Option(inner) => stack.push(inner),
                _ => {}
            }
        }
        edges.insert(id, out);
    }
    // Depth-first search with an explicit stack; a grey node reached again closes a cycle.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        White,
        Grey,
        Black,
    }
    let mut marks: BTreeMap<ClassId, Mark> = edges.keys().map(|k| (*k, Mark::White)).collect();
    for &root in edges.keys() {
        if marks[&root] != Mark::White {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        marks.insert(root, Mark::Grey);
        while let Some((node, next)) = stack.pop() {
            let succ = edges.get(&node).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(&s) = succ.get(next) {
                stack.push((node, next + 1));
                match marks.get(&s).copied().unwrap_or(Mark::Black) {
                    Mark::White => {
                        marks.insert(s, Mark::Grey);
                        stack.push((s, 0));
                    }
                    Mark::Grey => {
                        let name = |c: ClassId| module.classes.get(c).map_or("?", |c| c.name.as_str()).to_string();
                        return Err(Error(Diagnostic::new(
                            "M104",
                            format!(
                                "class {} holds class {} by value, which holds it back: such a class would need \
                                 infinite space; hold one of them in an array instead",
                                name(node),
                                name(s)
                            ),
                        )));
                    }
                    Mark::Black => {}
                }
            } else {
                marks.insert(node, Mark::Black);
            }
        }
    }
    Ok(())
}
