//! The few builder calls whose inkwell signature depends on the LLVM version: loads and
//! address computations name the pointee type explicitly with opaque pointers (LLVM 15 on)
//! and take it from the pointer type with typed pointers (LLVM 14). Everything else in the
//! emitter is version-independent, so moving to a newer LLVM touches this file and the feature
//! line in `Cargo.toml`.

use inkwell::builder::Builder;
use inkwell::types::{BasicType, BasicTypeEnum, StructType};
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};

use crate::Error;

/// Where a function's locals live, and the hidden counter of each `for`.
pub(crate) type Slots<'ctx> =
    (la_arena::ArenaMap<nagi_low::LocalId, PointerValue<'ctx>>, la_arena::ArenaMap<nagi_low::OpId, PointerValue<'ctx>>);

/// Loads a `ty` from `ptr`.
pub(crate) fn load<'ctx>(
    b: &Builder<'ctx>,
    ty: BasicTypeEnum<'ctx>,
    ptr: PointerValue<'ctx>,
    name: &str,
) -> Result<BasicValueEnum<'ctx>, Error> {
    #[cfg(feature = "llvm14")]
    {
        let _ = ty;
        Ok(b.build_load(ptr, name)?)
    }
    #[cfg(not(feature = "llvm14"))]
    {
        Ok(b.build_load(ty, ptr, name)?)
    }
}

/// The address of field `index` of the struct `ty` at `ptr`.
pub(crate) fn field<'ctx>(
    b: &Builder<'ctx>,
    ty: StructType<'ctx>,
    ptr: PointerValue<'ctx>,
    index: u32,
    name: &str,
) -> Result<PointerValue<'ctx>, Error> {
    #[cfg(feature = "llvm14")]
    {
        let _ = ty;
        Ok(b.build_struct_gep(ptr, index, name)?)
    }
    #[cfg(not(feature = "llvm14"))]
    {
        Ok(b.build_struct_gep(ty, ptr, index, name)?)
    }
}

/// The address of element `index` of an array of `elem` starting at `base` (`inbounds`: the
/// index has been checked against the length).
pub(crate) fn element<'ctx>(
    b: &Builder<'ctx>,
    elem: BasicTypeEnum<'ctx>,
    base: PointerValue<'ctx>,
    index: IntValue<'ctx>,
    name: &str,
) -> Result<PointerValue<'ctx>, Error> {
    // SAFETY: inkwell marks GEP construction unsafe because an out-of-bounds `inbounds` GEP is
    // poison; every caller passes an index it has checked against the array's length (or one
    // past the end for a push after growing).
    #[cfg(feature = "llvm14")]
    {
        let _ = elem;
        Ok(unsafe { b.build_in_bounds_gep(base, &[index], name)? })
    }
    #[cfg(not(feature = "llvm14"))]
    {
        Ok(unsafe { b.build_in_bounds_gep(elem, base, &[index], name)? })
    }
}

/// Loads field `index` (of type `field_ty`) of the struct `ty` at `ptr`.
pub(crate) fn load_field<'ctx>(
    b: &Builder<'ctx>,
    ty: StructType<'ctx>,
    ptr: PointerValue<'ctx>,
    index: u32,
    name: &str,
) -> Result<BasicValueEnum<'ctx>, Error> {
    let field_ty = ty.get_field_type_at_index(index).ok_or_else(|| Error::internal("field index out of range"))?;
    let at = field(b, ty, ptr, index, name)?;
    load(b, field_ty.as_basic_type_enum(), at, name)
}
