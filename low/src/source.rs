//! Side tables for Low that came from text: source spans and comments.
//!
//! The IR itself holds no positions (docs/design.md §1, Low rule 4). The parser fills a
//! [`SourceMap`] alongside the module; the verifier uses it to put `line:col` on its errors and
//! the printer uses it to print comments back where they were.

use std::collections::HashMap;

use la_arena::ArenaMap;

use crate::entities::{
    BlockId, ClassId, EnumId, FieldIndex, FuncId, LocalId, OpId, QueueId, SupervisorId, VariantIndex,
};

/// A byte range `start..end` in the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// A line of Low text that full-line comments can be attached to: the comments written
/// directly above it. Every printed line is one of these, so no comment is lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// The `module NAME` line.
    ModuleHeader,
    Class(ClassId),
    Field(ClassId, FieldIndex),
    /// The closing `}` of a class.
    ClassEnd(ClassId),
    Enum(EnumId),
    Variant(EnumId, VariantIndex),
    /// The closing `}` of an enum.
    EnumEnd(EnumId),
    /// A `table` line, by position in `Module::tables`.
    Table(usize),
    /// A `config` line, by position in `Module::configs`.
    Config(usize),
    /// A `route` line, by position in `Module::routes`.
    Route(usize),
    /// A `supervisor` line.
    Supervisor(SupervisorId),
    /// A `queue` line.
    Queue(QueueId),
    /// A function's header line.
    Function(FuncId),
    /// A `let` line declaring a (non-parameter) local.
    Local(FuncId, LocalId),
    /// An operation's first line.
    Op(FuncId, OpId),
    /// The `}` (or `} else {`) that closes a block.
    BlockEnd(FuncId, BlockId),
    /// The end of the file.
    End,
}

/// Spans of one function's pieces.
#[derive(Clone, Debug, Default)]
pub struct FunctionSpans {
    /// The function's name in its header.
    pub name: Span,
    pub locals: ArenaMap<LocalId, Span>,
    pub ops: ArenaMap<OpId, Span>,
}

/// Everything the parser knows about where things were written.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub classes: ArenaMap<ClassId, Span>,
    pub enums: ArenaMap<EnumId, Span>,
    /// Spans of table declarations, parallel to `Module::tables`.
    pub tables: Vec<Span>,
    /// Spans of route declarations, parallel to `Module::routes`.
    pub routes: Vec<Span>,
    /// Spans of supervisor headers (`supervisor Name`).
    pub supervisors: ArenaMap<SupervisorId, Span>,
    /// Spans of queue declarations.
    pub queues: ArenaMap<QueueId, Span>,
    pub functions: ArenaMap<FuncId, FunctionSpans>,
    /// Full-line comments, without their leading `//`, keyed by the line below them.
    pub comments: HashMap<Anchor, Vec<String>>,
}

impl SourceMap {
    /// The span of `op` in `func`, if it came from text.
    pub fn op(&self, func: FuncId, op: OpId) -> Option<Span> {
        self.functions.get(func)?.ops.get(op).copied()
    }

    /// The span of the declaration of `local` in `func`, if it came from text.
    pub fn local(&self, func: FuncId, local: LocalId) -> Option<Span> {
        self.functions.get(func)?.locals.get(local).copied()
    }

    /// The span of `func`'s name, if it came from text.
    pub fn function(&self, func: FuncId) -> Option<Span> {
        self.functions.get(func).map(|f| f.name)
    }

    /// The comments above `anchor`.
    pub fn comments(&self, anchor: Anchor) -> &[String] {
        self.comments.get(&anchor).map_or(&[], Vec::as_slice)
    }
}

/// The 1-based line and column (in characters) of byte offset `offset` in `text`.
pub fn line_col(text: &str, offset: u32) -> (usize, usize) {
    let offset = (offset as usize).min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}
