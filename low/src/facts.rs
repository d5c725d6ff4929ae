//! Operation facts, written once: which locals an operation uses and defines, what else it
//! may do (trap, call, await, change memory, reach the runtime, move control), and its family.
//!
//! Every analysis that needs such a fact asks these methods on [`OpKind`] and [`Opcode`]
//! instead of matching on the operations itself, so that adding an operation means filling in
//! one row per fact here, and the verifier, the passes, the commit rule and the interpreter
//! cannot disagree about it. The model is Cranelift's opcode flags (`can_trap`, `other_side_effects`,
//! …) for the effects and rustc's MIR visitor for the locals (`visit_local` with a context,
//! generated once for `&` and `&mut`).
//!
//! Users: the verifier's flow check (`verifier/flow.rs`: [`Use`] decides read, move, drop and
//! change in place, [`OpKind::dest`] the write), the passes (`passes/src/body.rs` and every
//! pass that renames or counts locals, through [`OpKind::for_each_local`] and its `_mut`
//! twins; `has_effect` and the cost report through [`OpKind::effects`]), the commit rule
//! (`commit.rs`'s `cannot_fail`, through [`OpKind::effects`]), the borrow origins
//! (`borrows.rs`, through [`OpKind::borrowed_from`]), the parser (which results and awaits an
//! opcode takes) and the interpreter (its dispatch by [`Family`]).

use crate::entities::LocalId;
use crate::ops::{OpKind, Opcode, Operand, ScopeKind, StrPart};
use crate::types::Constant;

/// How an operation uses a local it reads (the role of the slot, as rustc's
/// `PlaceContext`). Every use needs the local to hold a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Use {
    /// Borrowed for the operation: the value is read (or followed, for a reference) and stays.
    Read,
    /// Taken: a non-copy local is moved out and unusable afterwards; a copy is copied.
    Consume,
    /// Ended by `drop`: taken like [`Use::Consume`], and what it owns is freed.
    Drop,
    /// Borrowed and changed in place (`store`, `field.set`, `array.push`, …) or borrowed
    /// mutably (`borrow_mut`, `field.ref_mut`, `array.ref_mut`): through an owned local, every
    /// reference into it dies. The change happens after every other use of the operation.
    Mutate,
    /// Borrowed for a whole `for` loop (the array of `for %x in %xs`): read at the head of
    /// every iteration rather than once by the operation.
    Iterate,
}

/// How an operation touches a local slot, for analyses that need no more than that.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// The local is read (its value is used, borrowed, consumed or changed in place).
    Read,
    /// The local is written (the operation's destination, or a `for` variable).
    Write,
}

/// Where control goes after an operation, apart from trapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Control {
    /// To the next operation.
    Next,
    /// Into the blocks it owns, each run at most once, then to the next operation (`if`,
    /// `block`).
    Branch,
    /// Into its body, possibly many times (`loop`, `for`).
    Repeat,
    /// Out of the enclosing blocks to a label (`break`, `continue`).
    Jump,
    /// Out of the function (`return`, `trap`).
    Exit,
}

/// What running one operation may do besides writing its destination, not looking into the
/// blocks it owns. Like Cranelift's opcode flags, each is a property of the operation's kind
/// (and, for arithmetic, its scalar type), never of its operands' values; see
/// [`OpKind::can_trap`] for the one refinement by a constant operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Effects {
    /// It may trap: a bounds check, an empty option, the wrong enum variant, an integer
    /// division, or `trap` itself.
    pub traps: bool,
    /// It runs other code, which may fail or not return: a function, a runtime function, a
    /// task, an actor, a supervisor's tree, a deferred call or a database statement.
    pub calls: bool,
    /// It suspends its function (an awaited call, `scope.end`, `task.join`, `actor.call`,
    /// `actor.send`, `queue.push`).
    pub awaits: bool,
    /// It changes memory other than its destination: a store or a change in place, or it
    /// takes a local's value (`move`, `drop`).
    pub writes_memory: bool,
    /// It reaches outside the function's memory: the runtime, the database, tasks, actors,
    /// queues, or other functions.
    pub outside: bool,
    /// Where control goes.
    pub control: Control,
}

impl Effects {
    /// Whether the operation may do anything other than write its destination: the question
    /// of dead-code elimination (with [`OpKind::can_trap`] for traps).
    pub fn any_besides_trapping(&self) -> bool {
        self.calls || self.awaits || self.writes_memory || self.outside || self.control != Control::Next
    }
}

/// The groups of operations, as `docs/low.md` §6–§8 list them; emitters and the interpreter
/// dispatch on it before matching the operations of one group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// `const`, unary and binary arithmetic, `cast`.
    Scalar,
    /// `call`, `rtcall`.
    Call,
    /// `new`, `field.*`.
    Object,
    /// `array.*`.
    Array,
    /// `map.*`.
    Map,
    /// `string`, `str.*`.
    String,
    /// `option.*`.
    Option,
    /// `enum.*`.
    Enum,
    /// `copy`, `move`, `clone`, `drop`, `borrow[_mut]`, `load`, `store`.
    Ownership,
    /// `scope.*`, `task.join`, `actor.*`, `supervisor.child`, `defer.new`, `queue.push`.
    Async,
    /// `if`, `loop`, `block`, `for`, `break`, `continue`, `return`, `trap`.
    Control,
}

/// Whether an opcode's operation assigns a local.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DestKind {
    /// Always (`%d = …`).
    Required,
    /// When the result is wanted (calls, joins, `actor.call`, `queue.push`).
    Optional,
    /// Never.
    None,
}

impl Opcode {
    /// The family of the operations this mnemonic spells.
    pub fn family(self) -> Family {
        use Opcode::*;
        match self {
            Const | Cast => Family::Scalar,
            Call | RuntimeCall => Family::Call,
            New | FieldGet | FieldRef | FieldRefMut | FieldSet => Family::Object,
            ArrayNew | ArrayLen | ArrayGet | ArrayRef | ArrayRefMut | ArraySet | ArrayPush => Family::Array,
            MapNew | MapLen | MapFind | MapKeyRef | MapValueRef | MapInsert | MapRemove => Family::Map,
            String | StrLen | StrConcat | StrEq => Family::String,
            OptionSome | OptionNone | OptionIsSome | OptionUnwrap => Family::Option,
            EnumNew | EnumIs | EnumGet | EnumRef => Family::Enum,
            Copy | Move | Clone | Drop | Borrow | BorrowMut | Load | Store => Family::Ownership,
            ScopeNew | ScopeSpawn | ScopeSpawnBlocking | ScopeEnd | TaskJoin | ActorStart | ActorCall | ActorSend
            | SupervisorChild | DeferNew | QueuePush => Family::Async,
            If | Loop | Block | For | Break | Continue | Return | Trap => Family::Control,
        }
    }

    /// Whether the operation always suspends its function, and so is always written
    /// `await …`. `call` and `rtcall` are awaited when their callee is async.
    pub fn always_awaited(self) -> bool {
        matches!(self, Opcode::ScopeEnd | Opcode::TaskJoin | Opcode::ActorCall | Opcode::ActorSend | Opcode::QueuePush)
    }

    /// Whether the operation may be written `await …`.
    pub fn may_be_awaited(self) -> bool {
        self.always_awaited() || matches!(self, Opcode::Call | Opcode::RuntimeCall)
    }

    /// Whether the operation assigns a local (`%d = …`). A `for` writes its variable, which is
    /// not written before the mnemonic: it has [`DestKind::None`].
    pub fn dest_kind(self) -> DestKind {
        use Opcode::*;
        match self {
            Call | RuntimeCall | TaskJoin | ActorCall | QueuePush => DestKind::Optional,
            FieldSet | ArraySet | ArrayPush | MapInsert | ScopeEnd | ActorSend | Drop | Store | If | Loop | Block
            | For | Break | Continue | Return | Trap => DestKind::None,
            Const | Copy | Cast | New | FieldGet | FieldRef | FieldRefMut | ArrayNew | ArrayLen | ArrayGet
            | ArrayRef | ArrayRefMut | MapNew | MapLen | MapFind | MapKeyRef | MapValueRef | MapRemove | ScopeNew
            | ScopeSpawn | ScopeSpawnBlocking | ActorStart | SupervisorChild | DeferNew | String | StrLen
            | StrConcat | StrEq | OptionSome | OptionNone | OptionIsSome | OptionUnwrap | EnumNew | EnumIs
            | EnumGet | EnumRef | Move | Clone | Borrow | BorrowMut | Load => DestKind::Required,
        }
    }
}

/// A slot an operation reads: a local, or an operand that may also be a constant. `L` and `O`
/// are `&LocalId` and `&Operand`, or their `&mut` forms.
enum Place<L, O> {
    Local(L),
    Operand(O),
}

/// The one list of the slots each operation reads, with their [`Use`], in operand order:
/// [`OpKind::for_each_use`] and its `_mut` twins call it with a callback `$f(Place, Use)`, and
/// match ergonomics make the same arms bind `&` or `&mut`.
macro_rules! visit_uses {
    ($kind:expr, $f:ident) => {{
        use Use::{Consume, Iterate, Mutate, Read};
        let role = |mutable: bool| if mutable { Mutate } else { Read };
        match $kind {
            OpKind::Const { .. }
            | OpKind::ArrayNew { .. }
            | OpKind::MapNew { .. }
            | OpKind::ScopeNew { .. }
            | OpKind::StringLit { .. }
            | OpKind::OptionNone { .. }
            | OpKind::ActorStart { .. }
            | OpKind::SupervisorChild { .. }
            | OpKind::EnumNew { payload: None, .. }
            | OpKind::Return { value: None }
            | OpKind::Loop { .. }
            | OpKind::Block { .. }
            | OpKind::Break { .. }
            | OpKind::Continue { .. }
            | OpKind::Trap { .. } => {}
            OpKind::Copy { src: x, .. }
            | OpKind::FieldGet { object: x, .. }
            | OpKind::ArrayLen { array: x, .. }
            | OpKind::MapLen { map: x, .. }
            | OpKind::StrLen { string: x, .. }
            | OpKind::OptionIsSome { option: x, .. }
            | OpKind::EnumIs { value: x, .. }
            | OpKind::EnumGet { value: x, .. }
            | OpKind::EnumRef { value: x, .. }
            | OpKind::Clone { src: x, .. }
            | OpKind::Load { reference: x, .. } => $f(Place::Local(x), Read),
            OpKind::FieldRef { object: x, mutable, .. } | OpKind::Borrow { src: x, mutable, .. } => {
                $f(Place::Local(x), role(*mutable))
            }
            OpKind::OptionUnwrap { option: x, .. } | OpKind::Move { src: x, .. } => $f(Place::Local(x), Consume),
            OpKind::Drop { local } => $f(Place::Local(local), Use::Drop),
            OpKind::StrEq { lhs, rhs, .. } => {
                $f(Place::Local(lhs), Read);
                $f(Place::Local(rhs), Read);
            }
            OpKind::StrConcat { parts, .. } => {
                for part in parts {
                    if let StrPart::Local(x) = part {
                        $f(Place::Local(x), Read);
                    }
                }
            }
            OpKind::Unary { arg, .. } | OpKind::Cast { arg, .. } | OpKind::If { cond: arg, .. } => {
                $f(Place::Operand(arg), Read)
            }
            OpKind::Binary { lhs, rhs, .. } | OpKind::ForRange { start: lhs, end: rhs, .. } => {
                $f(Place::Operand(lhs), Read);
                $f(Place::Operand(rhs), Read);
            }
            // Runtime functions never consume their arguments; calls move non-copy ones.
            OpKind::RuntimeCall { args, .. } => {
                for a in args {
                    $f(Place::Operand(a), Read);
                }
            }
            OpKind::Call { args, .. } | OpKind::New { fields: args, .. } | OpKind::DeferNew { args, .. } => {
                for a in args {
                    $f(Place::Operand(a), Consume);
                }
            }
            // The arguments move into the task or the message.
            OpKind::ScopeSpawn { scope: x, args, .. }
            | OpKind::ActorCall { actor: x, args, .. }
            | OpKind::ActorSend { actor: x, args, .. } => {
                $f(Place::Local(x), Read);
                for a in args {
                    $f(Place::Operand(a), Consume);
                }
            }
            OpKind::ScopeEnd { scope: x } | OpKind::TaskJoin { task: x, .. } => $f(Place::Local(x), Consume),
            // The job is read (encoded as JSON), not taken.
            OpKind::QueuePush { job, delay, .. } => {
                $f(Place::Local(job), Read);
                $f(Place::Operand(delay), Read);
            }
            OpKind::FieldSet { object: target, value, .. }
            | OpKind::ArrayPush { array: target, value }
            | OpKind::Store { reference: target, value } => {
                $f(Place::Local(target), Mutate);
                $f(Place::Operand(value), Consume);
            }
            OpKind::ArrayGet { array, index, .. }
            | OpKind::MapFind { map: array, key: index, .. }
            | OpKind::MapRef { map: array, index, .. } => {
                $f(Place::Local(array), Read);
                $f(Place::Operand(index), Read);
            }
            OpKind::ArrayRef { array, index, mutable, .. } => {
                $f(Place::Local(array), role(*mutable));
                $f(Place::Operand(index), Read);
            }
            OpKind::MapRemove { map, key, .. } => {
                $f(Place::Local(map), Mutate);
                $f(Place::Operand(key), Read);
            }
            OpKind::ArraySet { array, index, value } => {
                $f(Place::Local(array), Mutate);
                $f(Place::Operand(index), Read);
                $f(Place::Operand(value), Consume);
            }
            OpKind::MapInsert { map, key, value } => {
                $f(Place::Local(map), Mutate);
                $f(Place::Operand(key), Consume);
                $f(Place::Operand(value), Consume);
            }
            OpKind::OptionSome { value, .. } | OpKind::EnumNew { payload: Some(value), .. } => {
                $f(Place::Operand(value), Consume)
            }
            OpKind::ForEach { seq, .. } => $f(Place::Local(seq), Iterate),
            OpKind::Return { value: Some(value) } => $f(Place::Operand(value), Consume),
        }
    }};
}

/// The local an operation defines, as `Option<&LocalId>` or `Option<&mut LocalId>`: the one
/// list behind [`OpKind::dest`] and [`OpKind::dest_mut`].
macro_rules! defined_local {
    ($kind:expr) => {
        match $kind {
            OpKind::Const { dest, .. }
            | OpKind::Copy { dest, .. }
            | OpKind::Unary { dest, .. }
            | OpKind::Binary { dest, .. }
            | OpKind::Cast { dest, .. }
            | OpKind::New { dest, .. }
            | OpKind::FieldGet { dest, .. }
            | OpKind::FieldRef { dest, .. }
            | OpKind::ArrayNew { dest }
            | OpKind::ArrayLen { dest, .. }
            | OpKind::ArrayGet { dest, .. }
            | OpKind::ArrayRef { dest, .. }
            | OpKind::MapNew { dest }
            | OpKind::MapLen { dest, .. }
            | OpKind::MapFind { dest, .. }
            | OpKind::MapRef { dest, .. }
            | OpKind::MapRemove { dest, .. }
            | OpKind::ScopeNew { dest }
            | OpKind::ScopeSpawn { dest, .. }
            | OpKind::ActorStart { dest, .. }
            | OpKind::SupervisorChild { dest, .. }
            | OpKind::DeferNew { dest, .. }
            | OpKind::StringLit { dest, .. }
            | OpKind::StrLen { dest, .. }
            | OpKind::StrConcat { dest, .. }
            | OpKind::StrEq { dest, .. }
            | OpKind::OptionSome { dest, .. }
            | OpKind::OptionNone { dest }
            | OpKind::OptionIsSome { dest, .. }
            | OpKind::OptionUnwrap { dest, .. }
            | OpKind::EnumNew { dest, .. }
            | OpKind::EnumIs { dest, .. }
            | OpKind::EnumGet { dest, .. }
            | OpKind::EnumRef { dest, .. }
            | OpKind::Move { dest, .. }
            | OpKind::Clone { dest, .. }
            | OpKind::Borrow { dest, .. }
            | OpKind::Load { dest, .. }
            | OpKind::ForRange { var: dest, .. }
            | OpKind::ForEach { var: dest, .. } => Some(dest),
            OpKind::Call { dest, .. }
            | OpKind::RuntimeCall { dest, .. }
            | OpKind::TaskJoin { dest, .. }
            | OpKind::ActorCall { dest, .. }
            | OpKind::QueuePush { dest, .. } => dest.as_mut_or_ref(),
            OpKind::FieldSet { .. }
            | OpKind::ArraySet { .. }
            | OpKind::ArrayPush { .. }
            | OpKind::MapInsert { .. }
            | OpKind::ScopeEnd { .. }
            | OpKind::ActorSend { .. }
            | OpKind::Drop { .. }
            | OpKind::Store { .. }
            | OpKind::If { .. }
            | OpKind::Loop { .. }
            | OpKind::Block { .. }
            | OpKind::Break { .. }
            | OpKind::Continue { .. }
            | OpKind::Return { .. }
            | OpKind::Trap { .. } => None,
        }
    };
}

/// `Option<LocalId>` seen through `&` or `&mut`, as `Option<&LocalId>` or `Option<&mut
/// LocalId>`, so that [`defined_local`] has one arm for optional results.
trait AsMutOrRef<'a> {
    type Out;
    fn as_mut_or_ref(self) -> Self::Out;
}

impl<'a> AsMutOrRef<'a> for &'a Option<LocalId> {
    type Out = Option<&'a LocalId>;
    fn as_mut_or_ref(self) -> Option<&'a LocalId> {
        self.as_ref()
    }
}

impl<'a> AsMutOrRef<'a> for &'a mut Option<LocalId> {
    type Out = Option<&'a mut LocalId>;
    fn as_mut_or_ref(self) -> Option<&'a mut LocalId> {
        self.as_mut()
    }
}

impl OpKind {
    /// Calls `f` on every local the operation reads, with its [`Use`], in operand order.
    /// Constant operands are skipped, and blocks the operation owns are not entered.
    pub fn for_each_use(&self, mut f: impl FnMut(LocalId, Use)) {
        let mut g = |place: Place<&LocalId, &Operand>, role: Use| match place {
            Place::Local(l) | Place::Operand(Operand::Local(l)) => f(*l, role),
            Place::Operand(Operand::Const(_)) => {}
        };
        visit_uses!(self, g)
    }

    /// Like [`OpKind::for_each_use`], with mutable access to each local, for renaming.
    pub fn for_each_use_mut(&mut self, mut f: impl FnMut(&mut LocalId, Use)) {
        let mut g = |place: Place<&mut LocalId, &mut Operand>, role: Use| match place {
            Place::Local(l) | Place::Operand(Operand::Local(l)) => f(l, role),
            Place::Operand(Operand::Const(_)) => {}
        };
        visit_uses!(self, g)
    }

    /// Calls `f` on every operand slot that may hold a constant as well as a local, with its
    /// [`Use`]: arithmetic and cast operands, call and `new` arguments, indexes and keys,
    /// stored and pushed values, `option.some` and `enum.new` payloads, `if` conditions, `for`
    /// bounds, `queue.push` delays and returned values.
    pub fn for_each_operand_mut(&mut self, mut f: impl FnMut(&mut Operand, Use)) {
        let mut g = |place: Place<&mut LocalId, &mut Operand>, role: Use| {
            if let Place::Operand(o) = place {
                f(o, role)
            }
        };
        visit_uses!(self, g)
    }

    /// Calls `f` on every local slot, read or written, in operand order: the reads (as
    /// [`OpKind::for_each_use`]) before the write (as [`OpKind::dest`]).
    pub fn for_each_local(&self, mut f: impl FnMut(LocalId, Slot)) {
        self.for_each_use(|l, _| f(l, Slot::Read));
        if let Some(d) = self.dest() {
            f(d, Slot::Write);
        }
    }

    /// Like [`OpKind::for_each_local`], with mutable access to each slot, for renaming.
    pub fn for_each_local_mut(&mut self, mut f: impl FnMut(&mut LocalId, Slot)) {
        self.for_each_use_mut(|l, _| f(l, Slot::Read));
        if let Some(d) = self.dest_mut() {
            f(d, Slot::Write);
        }
    }

    /// The local this operation writes, if any. A `for` writes its loop variable at the top of
    /// each iteration, which is reported here too. No operation writes more than one local.
    pub fn dest(&self) -> Option<LocalId> {
        defined_local!(self).copied()
    }

    /// Like [`OpKind::dest`], with mutable access, for renaming.
    pub fn dest_mut(&mut self) -> Option<&mut LocalId> {
        defined_local!(self)
    }

    /// The local the destination may point into, when the destination is a reference: the
    /// source of `borrow`, `copy`, `field.ref`, `enum.ref`, `array.ref`, `map.key_ref`,
    /// `map.value_ref`, and the array a `for` iterates over.
    pub fn borrowed_from(&self) -> Option<LocalId> {
        match self {
            OpKind::Borrow { src: x, .. }
            | OpKind::Copy { src: x, .. }
            | OpKind::FieldRef { object: x, .. }
            | OpKind::EnumRef { value: x, .. }
            | OpKind::ArrayRef { array: x, .. }
            | OpKind::MapRef { map: x, .. }
            | OpKind::ForEach { seq: x, .. } => Some(*x),
            _ => None,
        }
    }

    /// The family of this operation.
    pub fn family(&self) -> Family {
        self.opcode().map_or(Family::Scalar, Opcode::family)
    }

    /// Whether this operation suspends its function: an awaited call, or an operation that is
    /// always awaited ([`Opcode::always_awaited`]).
    pub fn is_await(&self) -> bool {
        match self {
            OpKind::Call { awaited, .. } | OpKind::RuntimeCall { awaited, .. } => *awaited,
            _ => self.opcode().is_some_and(Opcode::always_awaited),
        }
    }

    /// Where control goes after this operation, from the structural facts of
    /// [`crate::ops`].
    pub fn control(&self) -> Control {
        match self {
            OpKind::Break { .. } | OpKind::Continue { .. } => Control::Jump,
            _ if self.is_terminator() => Control::Exit,
            _ if matches!(self.scope_kind(), Some(ScopeKind::Loop | ScopeKind::For)) => Control::Repeat,
            _ if self.blocks().next().is_some() => Control::Branch,
            _ => Control::Next,
        }
    }

    /// The effects of this operation: the one table behind the commit rule's `cannot_fail` and
    /// the passes' `has_effect`, which ask different questions of the same facts.
    pub fn effects(&self) -> Effects {
        let (mut traps, mut calls, mut writes_memory, mut outside) = (false, false, false, false);
        match self {
            OpKind::Binary { op, ty, .. } => traps = op.may_trap(*ty),
            // Bounds checks, an empty option, the wrong variant.
            OpKind::ArrayGet { .. }
            | OpKind::ArrayRef { .. }
            | OpKind::MapRef { .. }
            | OpKind::OptionUnwrap { .. }
            | OpKind::EnumGet { .. }
            | OpKind::EnumRef { .. }
            | OpKind::Trap { .. } => traps = true,
            OpKind::ArraySet { .. } => (traps, writes_memory) = (true, true),
            OpKind::FieldSet { .. }
            | OpKind::ArrayPush { .. }
            | OpKind::MapInsert { .. }
            | OpKind::MapRemove { .. }
            | OpKind::Store { .. }
            | OpKind::Move { .. }
            | OpKind::Drop { .. } => writes_memory = true,
            // A scope is a runtime object, but making one runs nothing that could fail.
            OpKind::ScopeNew { .. } => outside = true,
            OpKind::Call { .. }
            | OpKind::RuntimeCall { .. }
            | OpKind::ScopeSpawn { .. }
            | OpKind::DeferNew { .. }
            | OpKind::QueuePush { .. }
            | OpKind::ScopeEnd { .. }
            | OpKind::TaskJoin { .. }
            | OpKind::ActorStart { .. }
            | OpKind::ActorCall { .. }
            | OpKind::ActorSend { .. }
            | OpKind::SupervisorChild { .. } => (calls, outside) = (true, true),
            // Consuming a copy-type value takes nothing, so `new`, `option.some` and `enum.new`
            // change no memory but their destination when their values are copies; callers
            // that remove operations check the operand types.
            OpKind::Const { .. }
            | OpKind::Copy { .. }
            | OpKind::Unary { .. }
            | OpKind::Cast { .. }
            | OpKind::New { .. }
            | OpKind::FieldGet { .. }
            | OpKind::FieldRef { .. }
            | OpKind::ArrayNew { .. }
            | OpKind::ArrayLen { .. }
            | OpKind::MapNew { .. }
            | OpKind::MapLen { .. }
            | OpKind::MapFind { .. }
            | OpKind::StringLit { .. }
            | OpKind::StrLen { .. }
            | OpKind::StrConcat { .. }
            | OpKind::StrEq { .. }
            | OpKind::OptionSome { .. }
            | OpKind::OptionNone { .. }
            | OpKind::OptionIsSome { .. }
            | OpKind::EnumNew { .. }
            | OpKind::EnumIs { .. }
            | OpKind::Clone { .. }
            | OpKind::Borrow { .. }
            | OpKind::Load { .. }
            | OpKind::If { .. }
            | OpKind::Loop { .. }
            | OpKind::Block { .. }
            | OpKind::ForRange { .. }
            | OpKind::ForEach { .. }
            | OpKind::Break { .. }
            | OpKind::Continue { .. }
            | OpKind::Return { .. } => {}
        }
        Effects { traps, calls, awaits: self.is_await(), writes_memory, outside, control: self.control() }
    }

    /// Whether this operation may trap, given its constant operands: as
    /// [`Effects::traps`], except that an integer division or remainder by a nonzero constant
    /// cannot.
    pub fn can_trap(&self) -> bool {
        match self {
            // A constant divisor other than an integer zero cannot trap.
            OpKind::Binary { rhs: Operand::Const(c), .. } if !matches!(c, Constant::I32(0) | Constant::I64(0)) => false,
            _ => self.effects().traps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entities::id_at;
    use crate::ops::BinaryOp;
    use crate::types::ScalarType;

    fn uses(kind: &OpKind) -> Vec<(usize, Use)> {
        let mut out = Vec::new();
        kind.for_each_use(|l, role| out.push((crate::entities::index(l), role)));
        out
    }

    #[test]
    fn uses_come_in_operand_order_with_their_roles_and_constants_are_skipped() {
        let set =
            OpKind::ArraySet { array: id_at(0), index: Operand::Local(id_at(1)), value: Operand::Local(id_at(2)) };
        assert_eq!(uses(&set), [(0, Use::Mutate), (1, Use::Read), (2, Use::Consume)]);
        assert_eq!(set.dest(), None);
        let each = OpKind::ForEach { var: id_at(3), seq: id_at(4), label: id_at(0), body: id_at(1) };
        assert_eq!(uses(&each), [(4, Use::Iterate)]);
        assert_eq!(each.dest(), Some(id_at(3)));
        let mut slots = Vec::new();
        each.for_each_local(|l, slot| slots.push((crate::entities::index(l), slot)));
        assert_eq!(slots, [(4, Slot::Read), (3, Slot::Write)]);
        let push = OpKind::ArrayPush { array: id_at(0), value: Operand::Const(Constant::I64(1)) };
        assert_eq!(uses(&push), [(0, Use::Mutate)]);
    }

    #[test]
    fn a_division_traps_by_its_opcode_but_not_by_a_nonzero_constant() {
        let div = |rhs| OpKind::Binary {
            dest: id_at(0),
            op: BinaryOp::Div,
            ty: ScalarType::I64,
            lhs: Operand::Local(id_at(1)),
            rhs: Operand::Const(Constant::I64(rhs)),
        };
        assert!(div(2).effects().traps && !div(2).can_trap());
        assert!(div(0).effects().traps && div(0).can_trap());
        assert!(!div(2).effects().any_besides_trapping());
    }

    #[test]
    fn control_and_awaits_come_from_the_structure() {
        assert_eq!(OpKind::Break { label: id_at(0) }.control(), Control::Jump);
        assert_eq!(OpKind::Return { value: None }.control(), Control::Exit);
        assert_eq!(OpKind::Loop { label: id_at(0), body: id_at(1) }.control(), Control::Repeat);
        assert_eq!(OpKind::Block { label: id_at(0), body: id_at(1) }.control(), Control::Branch);
        let end = OpKind::ScopeEnd { scope: id_at(0) };
        assert!(end.is_await() && end.effects().calls && Opcode::ScopeEnd.always_awaited());
        assert_eq!(Opcode::TaskJoin.dest_kind(), DestKind::Optional);
        assert_eq!(Opcode::For.dest_kind(), DestKind::None);
    }
}
