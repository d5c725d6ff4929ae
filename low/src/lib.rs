//! Low: Nagi's typed, explicit, arena-based intermediate representation.
//!
//! Every later stage of the compiler reads Low, and people read, edit and hand it back as
//! text. This crate holds the data model ([`Module`], [`FunctionData`], [`OpKind`], …), the
//! runtime interface table ([`runtime`]), the text [`printer`] and [`parser`], the
//! [`verifier`], and what the verifier and the passes must compute alike: the forward
//! [`dataflow`] walk over a body and the [`borrows`] origins; and [`eval`], the meaning of the
//! scalar operations, which the constant folder and the interpreter share. It depends on no
//! other compiler crate. `docs/low.md` is the reference of the text format.

pub mod borrows;
pub mod commit;
pub mod dataflow;
pub mod diagnostic;
pub mod entities;
pub mod eval;
pub mod facts;
pub mod lexer;
pub mod module;
pub mod ops;
pub mod parser;
pub mod printer;
pub mod recursion;
pub mod replace;
pub mod runtime;
pub mod source;
pub mod types;
pub mod verifier;

pub use diagnostic::Diagnostic;
pub use entities::{
    ArenaGet, BlockId, ClassId, EnumId, FieldIndex, FuncId, LabelId, LocalId, OpId, QueueId, SupervisorId, VariantIndex,
};
pub use facts::{Control, DestKind, Effects, Family, Slot, Use};
pub use module::{
    BlockData, ChildDecl, ChildKind, ClassData, ConfigDecl, EnumData, FieldData, FunctionData, HttpMethod, LabelData,
    LocalData, Module, OpData, ParamSource, QueueDecl, RouteDecl, Schedule, Strategy, SupervisorDecl, TableDecl,
    VariantData, enum_mismatch_message,
};
pub use ops::{BinaryOp, OpKind, Opcode, Operand, ScopeKind, StrPart, UnaryOp};
pub use parser::parse;
pub use printer::{print_function, print_module, print_module_with_lines};
pub use runtime::{RowGroup, RtType, RuntimeFn};
pub use source::{Anchor, SourceMap, Span};
pub use types::{Constant, ScalarType, Type};
pub use verifier::verify;
