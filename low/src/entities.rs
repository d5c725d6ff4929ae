//! Every Low id, kept together in one file.
//!
//! Ids follow Cranelift's `entities.rs` and rust-analyzer's MIR: an id is an `Idx` into the arena
//! of the thing that owns it, and the payload type carries the `Data` suffix (the module's
//! declarations keep their `Decl` suffix: a queue or a supervisor is a declaration, with no body
//! of its own). Module-level ids ([`ClassId`], [`EnumId`], [`FuncId`], [`SupervisorId`],
//! [`QueueId`]) index the arenas of a [`Module`](crate::Module); function-level ids
//! ([`LocalId`], [`BlockId`], [`OpId`], [`LabelId`]) index the arenas of one
//! [`FunctionData`](crate::FunctionData) and mean nothing without it.

use la_arena::{Idx, RawIdx};

use crate::module::{
    BlockData, ClassData, EnumData, FunctionData, LabelData, LocalData, OpData, QueueDecl, SupervisorDecl,
};

/// A class of the module: an index into `Module::classes`.
pub type ClassId = Idx<ClassData>;
/// An enum of the module: an index into `Module::enums`.
pub type EnumId = Idx<EnumData>;
/// A function of the module: an index into `Module::functions`.
pub type FuncId = Idx<FunctionData>;
/// A supervisor of the module: an index into `Module::supervisors`. A nested supervisor is
/// declared, and so allocated, before its parent, so a child's id is smaller than its parent's.
pub type SupervisorId = Idx<SupervisorDecl>;
/// A durable job queue of the module: an index into `Module::queues`.
pub type QueueId = Idx<QueueDecl>;
/// A local (parameter or variable) of one function: an index into `FunctionData::locals`.
pub type LocalId = Idx<LocalData>;
/// A block (an ordered list of operations) of one function: an index into `FunctionData::blocks`.
pub type BlockId = Idx<BlockData>;
/// An operation of one function: an index into `FunctionData::ops`.
pub type OpId = Idx<OpData>;
/// A loop or block label of one function: an index into `FunctionData::labels`.
pub type LabelId = Idx<LabelData>;

/// The position of a field inside its class's field list (0-based, declaration order).
pub type FieldIndex = u32;

/// The position of a variant inside its enum's variant list (0-based, declaration order); it
/// is also the variant's tag in both emitters' layouts.
pub type VariantIndex = u32;

/// The position of `id` in its arena (0-based, allocation order). Analyses keep side tables
/// beside an arena, one `Vec` entry per local or operation, and index them with this; it is the
/// one place an id turns into a number.
pub fn index<T>(id: Idx<T>) -> usize {
    u32::from(id.into_raw()) as usize
}

/// The id at position `i` of an arena of `T`s, the inverse of [`index`]. The id means something
/// only for an arena with more than `i` entries.
pub fn id_at<T>(i: usize) -> Idx<T> {
    Idx::from_raw(RawIdx::from(i as u32))
}

/// Checked lookup in an arena, for ids that come from outside the arena's owner (hand-edited
/// text, a buggy pass): indexing an `Arena` with a foreign id panics, this answers `None`.
pub trait ArenaGet<T> {
    /// The entry for `idx`, or `None` when `idx` is out of range.
    fn get(&self, idx: Idx<T>) -> Option<&T>;
}

impl<T> ArenaGet<T> for la_arena::Arena<T> {
    fn get(&self, idx: Idx<T>) -> Option<&T> {
        if index(idx) < self.len() { Some(&self[idx]) } else { None }
    }
}
