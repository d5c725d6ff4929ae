//! Low's operations and the one table of their names.
//!
//! Operations are three-address: operands are locals or typed constants, never nested
//! expressions. An operation writes at most one local (its destination). The semantics are
//! in `docs/design.md` §2, and `docs/low.md` gives each operation's text form with an example. The name
//! tables below ([`Opcode`], [`UnaryOp`], [`BinaryOp`]) are the only place names are spelled:
//! the printer prints through `name()` and the parser reads through `from_name()`.

use crate::entities::{
    BlockId, ClassId, EnumId, FieldIndex, FuncId, LabelId, LocalId, QueueId, SupervisorId, VariantIndex,
};
use crate::runtime::RuntimeFn;
use crate::types::{Constant, ScalarType};

/// Declares a fieldless enum together with its text names, as one list.
macro_rules! name_table {
    ($(#[$meta:meta])* $vis:vis enum $enum:ident { $($(#[$vmeta:meta])* $variant:ident => $name:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $enum { $($(#[$vmeta])* $variant,)* }

        impl $enum {
            /// Every value, in table order.
            pub const ALL: &'static [$enum] = &[$($enum::$variant,)*];

            /// The text spelling.
            pub fn name(self) -> &'static str {
                match self { $($enum::$variant => $name,)* }
            }

            /// The value spelled `name`, if any.
            pub fn from_name(name: &str) -> Option<$enum> {
                match name { $($name => Some($enum::$variant),)* _ => None }
            }
        }
    };
}

name_table! {
    /// Every operation mnemonic except the unary and binary arithmetic ones, which have their
    /// own tables because they always carry a scalar-type suffix.
    pub enum Opcode {
        /// `%d = const C`
        Const => "const",
        /// `%d = copy %x` (copy types only)
        Copy => "copy",
        /// `%d = cast.T x`
        Cast => "cast",
        /// `[%d =] [await] call $f(args)`
        Call => "call",
        /// `[%d =] [await] rtcall name[<Class>](args)`
        RuntimeCall => "rtcall",
        /// `%d = new Class { field: x, … }`
        New => "new",
        /// `%d = field.get %o, name`
        FieldGet => "field.get",
        /// `%d = field.ref %o, name`
        FieldRef => "field.ref",
        /// `%d = field.ref_mut %o, name`
        FieldRefMut => "field.ref_mut",
        /// `field.set %o, name, x`
        FieldSet => "field.set",
        /// `%d = array.new`
        ArrayNew => "array.new",
        /// `%d = array.len %a`
        ArrayLen => "array.len",
        /// `%d = array.get %a, i`
        ArrayGet => "array.get",
        /// `%d = array.ref %a, i`
        ArrayRef => "array.ref",
        /// `%d = array.ref_mut %a, i`
        ArrayRefMut => "array.ref_mut",
        /// `array.set %a, i, x`
        ArraySet => "array.set",
        /// `array.push %a, x`
        ArrayPush => "array.push",
        /// `%d = map.new`
        MapNew => "map.new",
        /// `%d = map.len %m`
        MapLen => "map.len",
        /// `%d = map.find %m, k`
        MapFind => "map.find",
        /// `%d = map.key_ref %m, i`
        MapKeyRef => "map.key_ref",
        /// `%d = map.value_ref %m, i`
        MapValueRef => "map.value_ref",
        /// `map.insert %m, k, v`
        MapInsert => "map.insert",
        /// `%d = map.remove %m, k`
        MapRemove => "map.remove",
        /// `%d = scope.new`
        ScopeNew => "scope.new",
        /// `%d = scope.spawn %s, $f(args)`
        ScopeSpawn => "scope.spawn",
        /// `%d = scope.spawn_blocking %s, $f(args)`
        ScopeSpawnBlocking => "scope.spawn_blocking",
        /// `await scope.end %s`
        ScopeEnd => "scope.end",
        /// `[%d =] await task.join %t`
        TaskJoin => "task.join",
        /// `%d = actor.start $init, capacity`
        ActorStart => "actor.start",
        /// `[%d =] await actor.call %a, $h(args)`
        ActorCall => "actor.call",
        /// `await actor.send %a, $h(args)`
        ActorSend => "actor.send",
        /// `%d = supervisor.child Tree, child, …`
        SupervisorChild => "supervisor.child",
        /// `%d = defer.new $f(args)`
        DeferNew => "defer.new",
        /// `[%d =] await queue.push NAME, %job, delay`
        QueuePush => "queue.push",
        /// `%d = string "text"`
        String => "string",
        /// `%d = str.len %s`
        StrLen => "str.len",
        /// `%d = str.concat "post ", %id, " of ", %name`
        StrConcat => "str.concat",
        /// `%d = str.eq %a, %b`
        StrEq => "str.eq",
        /// `%d = option.some x`
        OptionSome => "option.some",
        /// `%d = option.none`
        OptionNone => "option.none",
        /// `%d = option.is_some %o`
        OptionIsSome => "option.is_some",
        /// `%d = option.unwrap %o`
        OptionUnwrap => "option.unwrap",
        /// `%d = enum.new Enum.Variant[(x)]`
        EnumNew => "enum.new",
        /// `%d = enum.is %e, Variant`
        EnumIs => "enum.is",
        /// `%d = enum.get %e, Variant`
        EnumGet => "enum.get",
        /// `%d = enum.ref %e, Variant`
        EnumRef => "enum.ref",
        /// `%d = move %x`
        Move => "move",
        /// `%d = clone %x`
        Clone => "clone",
        /// `drop %x`
        Drop => "drop",
        /// `%d = borrow %x`
        Borrow => "borrow",
        /// `%d = borrow_mut %x`
        BorrowMut => "borrow_mut",
        /// `%d = load %r`
        Load => "load",
        /// `store %r, x`
        Store => "store",
        /// `if c { … } else { … }`
        If => "if",
        /// `loop @l { … }`
        Loop => "loop",
        /// `block @l { … }`
        Block => "block",
        /// `for %i in a..b @l { … }` or `for %x in %xs @l { … }`
        For => "for",
        /// `break @l`
        Break => "break",
        /// `continue @l`
        Continue => "continue",
        /// `return [x]`
        Return => "return",
        /// `trap "message"`
        Trap => "trap",
    }
}

name_table! {
    /// One-operand arithmetic, written `op.T x`.
    pub enum UnaryOp {
        /// Wrapping negation for integers (`neg.i64 MIN == MIN`), sign flip for `f64`.
        Neg => "neg",
        /// Logical not for `bool`, bitwise not for integers.
        Not => "not",
        /// Wrapping absolute value for integers (`abs.i64 MIN == MIN`), sign clear for `f64`.
        Abs => "abs",
    }
}

name_table! {
    /// Two-operand arithmetic, bitwise and comparison operations, written `op.T a, b`. Both
    /// operands have type `T`; the result has type `T`, except comparisons (`bool`) and checked
    /// operations (`Option<T>`).
    pub enum BinaryOp {
        /// Wrapping for integers.
        Add => "add",
        /// Wrapping for integers.
        Sub => "sub",
        /// Wrapping for integers.
        Mul => "mul",
        /// Integers: traps on zero divisor; `MIN / -1 == MIN`. `f64`: IEEE.
        Div => "div",
        /// Integers: traps on zero divisor; `MIN % -1 == 0`. `f64`: IEEE `fmod` (Rust `%`).
        Rem => "rem",
        /// Bitwise for integers, logical (not short-circuit) for `bool`.
        And => "and",
        /// Bitwise for integers, logical (not short-circuit) for `bool`.
        Or => "or",
        /// Bitwise for integers, logical for `bool`.
        Xor => "xor",
        /// Integers only; the count is masked to the bit width.
        Shl => "shl",
        /// Arithmetic shift right, integers only; the count is masked to the bit width.
        Shr => "shr",
        /// IEEE for `f64` (false when either side is NaN).
        Eq => "eq",
        /// IEEE for `f64` (true when either side is NaN).
        Ne => "ne",
        Lt => "lt",
        Le => "le",
        Gt => "gt",
        Ge => "ge",
        /// For `f64`: the other operand when one is NaN, and `-0.0 < +0.0`.
        Min => "min",
        /// For `f64`: the other operand when one is NaN, and `-0.0 < +0.0`.
        Max => "max",
        /// Integers only: `Option<T>`, none on overflow.
        CheckedAdd => "checked_add",
        /// Integers only: `Option<T>`, none on overflow.
        CheckedSub => "checked_sub",
        /// Integers only: `Option<T>`, none on overflow.
        CheckedMul => "checked_mul",
    }
}

impl BinaryOp {
    /// Whether the result is `bool` whatever the operand type.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }

    /// Whether the result is `Option<T>`.
    pub fn is_checked(self) -> bool {
        matches!(self, BinaryOp::CheckedAdd | BinaryOp::CheckedSub | BinaryOp::CheckedMul)
    }

    /// Whether the operation may trap (integer division and remainder by zero).
    pub fn may_trap(self, ty: ScalarType) -> bool {
        ty.is_int() && matches!(self, BinaryOp::Div | BinaryOp::Rem)
    }
}

/// A part of `str.concat`: a `String` local, or text written in the operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StrPart {
    Local(LocalId),
    Text(String),
}

/// An operand: a local or a typed constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Local(LocalId),
    Const(Constant),
}

impl Operand {
    /// The local this operand reads, if it is one.
    pub fn as_local(&self) -> Option<LocalId> {
        match self {
            Operand::Local(l) => Some(*l),
            Operand::Const(_) => None,
        }
    }
}

/// What a label names, which decides what `break` and `continue` may do with it and where
/// control goes when its body ends: a `loop` starts its body again, a `for` goes back to its
/// head (which may also leave), and a `block` falls through to the operation after it.
/// `continue` may name a `loop` or a `for`, `break` any of the three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    /// `loop @l { … }`
    Loop,
    /// `for … @l { … }`, over a range or an array.
    For,
    /// `block @l { … }`
    Block,
}

/// What an operation does. Field names follow one convention: `dest` is the local written;
/// every other `LocalId` or [`Operand`] is read. Operands in consuming positions (arguments to
/// owned parameters, `new` fields, `array.push`/`array.set`/`field.set`/`store` values, the key
/// and value of `map.insert`,
/// `option.some`, `enum.new` payloads, `move`, `drop`, `option.unwrap`, `return`) move a non-copy local; every other
/// read borrows it for the duration of the operation. Which slot is which, and every other fact
/// an analysis asks of an operation, is in [`crate::facts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpKind {
    Const {
        dest: LocalId,
        value: Constant,
    },
    Copy {
        dest: LocalId,
        src: LocalId,
    },
    Unary {
        dest: LocalId,
        op: UnaryOp,
        ty: ScalarType,
        arg: Operand,
    },
    Binary {
        dest: LocalId,
        op: BinaryOp,
        ty: ScalarType,
        lhs: Operand,
        rhs: Operand,
    },
    /// Numeric conversion to `to` from the operand's type. Float → int saturates, NaN → 0;
    /// int → int truncates or sign-extends; int → float rounds to nearest.
    Cast {
        dest: LocalId,
        to: ScalarType,
        arg: Operand,
    },
    Call {
        dest: Option<LocalId>,
        callee: FuncId,
        args: Vec<Operand>,
        awaited: bool,
    },
    /// A call of a runtime function from [`crate::runtime::RUNTIME_FUNCTIONS`]; `class` is the
    /// class argument of generic rows such as `db.query<User>`.
    RuntimeCall {
        dest: Option<LocalId>,
        func: RuntimeFn,
        class: Option<ClassId>,
        args: Vec<Operand>,
        awaited: bool,
    },
    /// Construction; `fields` are in the class's declaration order.
    New {
        dest: LocalId,
        class: ClassId,
        fields: Vec<Operand>,
    },
    /// Reads a copy-type field of a class value or reference.
    FieldGet {
        dest: LocalId,
        object: LocalId,
        field: FieldIndex,
    },
    /// Borrows a field of a class value or reference.
    FieldRef {
        dest: LocalId,
        object: LocalId,
        field: FieldIndex,
        mutable: bool,
    },
    /// Replaces a field (dropping the old value) of an owned class or `&mut` class.
    FieldSet {
        object: LocalId,
        field: FieldIndex,
        value: Operand,
    },
    /// An empty array; the element type is the destination's.
    ArrayNew {
        dest: LocalId,
    },
    /// The length as `i64`.
    ArrayLen {
        dest: LocalId,
        array: LocalId,
    },
    /// Reads a copy-type element; an index outside `0..len` traps.
    ArrayGet {
        dest: LocalId,
        array: LocalId,
        index: Operand,
    },
    /// Borrows an element; an index outside `0..len` traps.
    ArrayRef {
        dest: LocalId,
        array: LocalId,
        index: Operand,
        mutable: bool,
    },
    /// Replaces an element (dropping the old value); an index outside `0..len` traps.
    ArraySet {
        array: LocalId,
        index: Operand,
        value: Operand,
    },
    /// Appends an element.
    ArrayPush {
        array: LocalId,
        value: Operand,
    },
    /// An empty map; the key and value types are the destination's.
    MapNew {
        dest: LocalId,
    },
    /// The number of entries as `i64`.
    MapLen {
        dest: LocalId,
        map: LocalId,
    },
    /// The position (`i64`, from 0 in insertion order) of the entry with key `key`, or -1. The
    /// key is an `i64` or a `&String`.
    MapFind {
        dest: LocalId,
        map: LocalId,
        key: Operand,
    },
    /// Borrows the key (`value: false`) or the value (`value: true`) of the entry at position
    /// `index`; a position outside `0..len` traps.
    MapRef {
        dest: LocalId,
        map: LocalId,
        index: Operand,
        value: bool,
    },
    /// Inserts `value` under `key` (both consumed). A key that is already there keeps its
    /// position, and its old value is dropped; a new key goes last.
    MapInsert {
        map: LocalId,
        key: Operand,
        value: Operand,
    },
    /// Removes the entry with key `key` (an `i64` or a `&String`): its value as `some`, or
    /// `none`. The entries after it move up one position, keeping their order.
    MapRemove {
        dest: LocalId,
        map: LocalId,
        key: Operand,
    },
    /// A scope with no tasks yet (docs/low.md §8.1).
    ScopeNew {
        dest: LocalId,
    },
    /// Starts a task of `scope` (an owned `Scope` local, borrowed) that runs the async
    /// function `callee` with `args` (consumed, as a call consumes them); the destination is
    /// its `Task<R>`. Nothing the task receives is a reference. With `blocking`
    /// (`scope.spawn_blocking`), `callee` is a plain function, run on the bounded blocking pool.
    ScopeSpawn {
        dest: LocalId,
        scope: LocalId,
        callee: FuncId,
        args: Vec<Operand>,
        blocking: bool,
    },
    /// Awaits every task of `scope` (consumed); raises the first trap of a task, after
    /// cancelling the others. Always awaited.
    ScopeEnd {
        scope: LocalId,
    },
    /// Awaits the result of `task` (a `Task<T>`, consumed); raises the first trap of a task of
    /// its scope, after cancelling the others. Always awaited; `dest` may be absent for `unit`.
    TaskJoin {
        dest: Option<LocalId>,
        task: LocalId,
    },
    /// Starts an actor (docs/low.md §8.2) whose state the plain function `init` (no
    /// parameters, result a class `C`) makes, with a mailbox of `capacity` messages; the
    /// destination is its `Actor<C>`.
    ActorStart {
        dest: LocalId,
        init: FuncId,
        capacity: u32,
    },
    /// Runs the plain function `handler` on the state of `actor` (an `Actor<C>` local,
    /// borrowed): its first parameter is `&mut C`, which the actor passes, and `args` (consumed)
    /// are the others. Waits for room in the mailbox, then for the result `R`; `dest` is an
    /// `Option<R>`, `none` when the actor stopped, after the runtime recorded the failure (503).
    /// Always awaited; `dest` may be absent.
    ActorCall {
        dest: Option<LocalId>,
        actor: LocalId,
        handler: FuncId,
        args: Vec<Operand>,
    },
    /// As [`OpKind::ActorCall`] without waiting for the handler: waits only for room in the
    /// mailbox, and the handler's result is dropped. A message to a stopped actor is a dead
    /// letter. Always awaited.
    ActorSend {
        actor: LocalId,
        handler: FuncId,
        args: Vec<Operand>,
    },
    /// Another handle of the actor at `path` (child indexes, one per level) below the
    /// supervisor `tree` (one that is no other's child); the runtime starts the trees the first
    /// time a child is asked for.
    SupervisorChild {
        dest: LocalId,
        tree: SupervisorId,
        path: Vec<u32>,
    },
    /// A `Defer` (docs/low.md §8.4) that calls the plain function `callee` with `args`
    /// (consumed, as a call consumes them) when it is dropped: by a `drop`, or by the
    /// cancellation of its task. Its result is dropped.
    DeferNew {
        dest: LocalId,
        callee: FuncId,
        args: Vec<Operand>,
    },
    /// Pushes a job on the queue `queue`: `job` (a value or a reference of the queue's job
    /// class, borrowed) as JSON, to run no sooner than `delay` (an `i64`, milliseconds) from
    /// now; `dest` is the job's id (`i64`). Inside a route handler it is part of the request's
    /// transaction. Always awaited (it is a database statement).
    QueuePush {
        dest: Option<LocalId>,
        queue: QueueId,
        job: LocalId,
        delay: Operand,
    },
    /// A new owned `String` holding `value` (the LLVM emitter keeps it as the literal's constant
    /// bytes, owning no buffer; docs/c-abi.md).
    StringLit {
        dest: LocalId,
        value: String,
    },
    /// The length in UTF-8 bytes as `i64`.
    StrLen {
        dest: LocalId,
        string: LocalId,
    },
    /// A new `String`: the parts one after the other, written into one buffer allocated at
    /// their total length (no operand is consumed). `a + b` has two parts; an interpolated
    /// string has its texts and its holes' values.
    StrConcat {
        dest: LocalId,
        parts: Vec<StrPart>,
    },
    /// Byte-wise equality.
    StrEq {
        dest: LocalId,
        lhs: LocalId,
        rhs: LocalId,
    },
    OptionSome {
        dest: LocalId,
        value: Operand,
    },
    /// The empty option; the payload type is the destination's.
    OptionNone {
        dest: LocalId,
    },
    OptionIsSome {
        dest: LocalId,
        option: LocalId,
    },
    /// The payload; traps when the option is empty. Consumes a non-copy option.
    OptionUnwrap {
        dest: LocalId,
        option: LocalId,
    },
    /// A value of enum `enum_id` holding `variant`, with the payload if the variant carries
    /// one (consumed like a `new` field).
    EnumNew {
        dest: LocalId,
        enum_id: EnumId,
        variant: VariantIndex,
        payload: Option<Operand>,
    },
    /// Whether the enum value or reference `value` holds `variant`.
    EnumIs {
        dest: LocalId,
        value: LocalId,
        variant: VariantIndex,
    },
    /// Reads the copy-type payload of `variant` from an enum value or reference; traps when
    /// `value` holds another variant.
    EnumGet {
        dest: LocalId,
        value: LocalId,
        variant: VariantIndex,
    },
    /// Borrows the payload of `variant` (shared) from an enum value or reference; traps when
    /// `value` holds another variant.
    EnumRef {
        dest: LocalId,
        value: LocalId,
        variant: VariantIndex,
    },
    /// Transfers ownership; `src` is unusable afterwards.
    Move {
        dest: LocalId,
        src: LocalId,
    },
    /// A deep copy of an owned value or of what a reference points to (allocates).
    Clone {
        dest: LocalId,
        src: LocalId,
    },
    /// Ends an owned value's life, freeing what it owns.
    Drop {
        local: LocalId,
    },
    /// Borrows a local (`&T`, or `&mut T` when `mutable`) until the local is moved, dropped or
    /// reassigned.
    Borrow {
        dest: LocalId,
        src: LocalId,
        mutable: bool,
    },
    /// Reads a copy-type value through a reference.
    Load {
        dest: LocalId,
        reference: LocalId,
    },
    /// Writes through a `&mut` reference, dropping the old value.
    Store {
        reference: LocalId,
        value: Operand,
    },
    If {
        cond: Operand,
        then_block: BlockId,
        else_block: Option<BlockId>,
    },
    /// Repeats `body` until a `break` or `return` leaves it.
    Loop {
        label: LabelId,
        body: BlockId,
    },
    /// Runs `body` once; `break @label` leaves it early.
    Block {
        label: LabelId,
        body: BlockId,
    },
    /// `var` takes `start, start+1, …, end-1` (empty when `start >= end`); the bounds are read
    /// once.
    ForRange {
        var: LocalId,
        start: Operand,
        end: Operand,
        label: LabelId,
        body: BlockId,
    },
    /// `var` takes each element of `seq` in order: the element itself for copy types, a
    /// shared reference to it otherwise. `seq` is borrowed for the loop.
    ForEach {
        var: LocalId,
        seq: LocalId,
        label: LabelId,
        body: BlockId,
    },
    Break {
        label: LabelId,
    },
    Continue {
        label: LabelId,
    },
    Return {
        value: Option<Operand>,
    },
    /// Ends the program (or, in a handler, the request with a 500) with `message`.
    Trap {
        message: String,
    },
}

/// The blocks an operation owns, as `[Option<&BlockId>; 2]` or `[Option<&mut BlockId>; 2]`
/// (`$as` is `as_ref` or `as_mut`): the one list behind [`OpKind::blocks`] and
/// [`OpKind::blocks_mut`], where match ergonomics make the same arms bind `&` or `&mut`.
macro_rules! owned_blocks {
    ($kind:expr, $as:ident) => {
        match $kind {
            OpKind::If { then_block, else_block, .. } => [Some(then_block), else_block.$as()],
            OpKind::Loop { body, .. }
            | OpKind::Block { body, .. }
            | OpKind::ForRange { body, .. }
            | OpKind::ForEach { body, .. } => [Some(body), None],
            _ => [None, None],
        }
    };
}

/// The label an operation declares or jumps to, as `Option<&LabelId>` or `Option<&mut
/// LabelId>`: the one list behind [`OpKind::label`] and [`OpKind::label_mut`].
macro_rules! mentioned_label {
    ($kind:expr) => {
        match $kind {
            OpKind::Loop { label, .. }
            | OpKind::Block { label, .. }
            | OpKind::ForRange { label, .. }
            | OpKind::ForEach { label, .. }
            | OpKind::Break { label }
            | OpKind::Continue { label } => Some(label),
            _ => None,
        }
    };
}

impl OpKind {
    /// The mnemonic of this operation; `None` for unary and binary arithmetic, whose names
    /// come from [`UnaryOp`] and [`BinaryOp`].
    pub fn opcode(&self) -> Option<Opcode> {
        Some(match self {
            OpKind::Unary { .. } | OpKind::Binary { .. } => return None,
            OpKind::Const { .. } => Opcode::Const,
            OpKind::Copy { .. } => Opcode::Copy,
            OpKind::Cast { .. } => Opcode::Cast,
            OpKind::Call { .. } => Opcode::Call,
            OpKind::RuntimeCall { .. } => Opcode::RuntimeCall,
            OpKind::New { .. } => Opcode::New,
            OpKind::FieldGet { .. } => Opcode::FieldGet,
            OpKind::FieldRef { mutable: false, .. } => Opcode::FieldRef,
            OpKind::FieldRef { mutable: true, .. } => Opcode::FieldRefMut,
            OpKind::FieldSet { .. } => Opcode::FieldSet,
            OpKind::ArrayNew { .. } => Opcode::ArrayNew,
            OpKind::ArrayLen { .. } => Opcode::ArrayLen,
            OpKind::ArrayGet { .. } => Opcode::ArrayGet,
            OpKind::ArrayRef { mutable: false, .. } => Opcode::ArrayRef,
            OpKind::ArrayRef { mutable: true, .. } => Opcode::ArrayRefMut,
            OpKind::ArraySet { .. } => Opcode::ArraySet,
            OpKind::ArrayPush { .. } => Opcode::ArrayPush,
            OpKind::MapNew { .. } => Opcode::MapNew,
            OpKind::MapLen { .. } => Opcode::MapLen,
            OpKind::MapFind { .. } => Opcode::MapFind,
            OpKind::MapRef { value: false, .. } => Opcode::MapKeyRef,
            OpKind::MapRef { value: true, .. } => Opcode::MapValueRef,
            OpKind::MapInsert { .. } => Opcode::MapInsert,
            OpKind::MapRemove { .. } => Opcode::MapRemove,
            OpKind::ScopeNew { .. } => Opcode::ScopeNew,
            OpKind::ScopeSpawn { blocking: false, .. } => Opcode::ScopeSpawn,
            OpKind::ScopeSpawn { blocking: true, .. } => Opcode::ScopeSpawnBlocking,
            OpKind::ScopeEnd { .. } => Opcode::ScopeEnd,
            OpKind::TaskJoin { .. } => Opcode::TaskJoin,
            OpKind::ActorStart { .. } => Opcode::ActorStart,
            OpKind::ActorCall { .. } => Opcode::ActorCall,
            OpKind::ActorSend { .. } => Opcode::ActorSend,
            OpKind::SupervisorChild { .. } => Opcode::SupervisorChild,
            OpKind::DeferNew { .. } => Opcode::DeferNew,
            OpKind::QueuePush { .. } => Opcode::QueuePush,
            OpKind::StringLit { .. } => Opcode::String,
            OpKind::StrLen { .. } => Opcode::StrLen,
            OpKind::StrConcat { .. } => Opcode::StrConcat,
            OpKind::StrEq { .. } => Opcode::StrEq,
            OpKind::OptionSome { .. } => Opcode::OptionSome,
            OpKind::OptionNone { .. } => Opcode::OptionNone,
            OpKind::OptionIsSome { .. } => Opcode::OptionIsSome,
            OpKind::OptionUnwrap { .. } => Opcode::OptionUnwrap,
            OpKind::EnumNew { .. } => Opcode::EnumNew,
            OpKind::EnumIs { .. } => Opcode::EnumIs,
            OpKind::EnumGet { .. } => Opcode::EnumGet,
            OpKind::EnumRef { .. } => Opcode::EnumRef,
            OpKind::Move { .. } => Opcode::Move,
            OpKind::Clone { .. } => Opcode::Clone,
            OpKind::Drop { .. } => Opcode::Drop,
            OpKind::Borrow { mutable: false, .. } => Opcode::Borrow,
            OpKind::Borrow { mutable: true, .. } => Opcode::BorrowMut,
            OpKind::Load { .. } => Opcode::Load,
            OpKind::Store { .. } => Opcode::Store,
            OpKind::If { .. } => Opcode::If,
            OpKind::Loop { .. } => Opcode::Loop,
            OpKind::Block { .. } => Opcode::Block,
            OpKind::ForRange { .. } | OpKind::ForEach { .. } => Opcode::For,
            OpKind::Break { .. } => Opcode::Break,
            OpKind::Continue { .. } => Opcode::Continue,
            OpKind::Return { .. } => Opcode::Return,
            OpKind::Trap { .. } => Opcode::Trap,
        })
    }

    /// The blocks this operation owns, in text order: `then` before `else` for `if`, the body
    /// for `loop`, `block` and `for`, none for every other operation. It does not allocate, since
    /// every walk of a body asks it of every operation.
    pub fn blocks(&self) -> impl DoubleEndedIterator<Item = BlockId> {
        owned_blocks!(self, as_ref).into_iter().flatten().copied()
    }

    /// Like [`OpKind::blocks`], with mutable access to each block id, for renumbering.
    pub fn blocks_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut BlockId> {
        owned_blocks!(self, as_mut).into_iter().flatten()
    }

    /// The kind of scope this operation opens, if it declares a label: `loop`, `for` (over a
    /// range or an array) and `block`. Each of them owns exactly one block, its body, and the
    /// scope is that body.
    pub fn scope_kind(&self) -> Option<ScopeKind> {
        match self {
            OpKind::Loop { .. } => Some(ScopeKind::Loop),
            OpKind::ForRange { .. } | OpKind::ForEach { .. } => Some(ScopeKind::For),
            OpKind::Block { .. } => Some(ScopeKind::Block),
            _ => None,
        }
    }

    /// The label this operation declares (`loop`, `block`, `for`), if any.
    pub fn declared_label(&self) -> Option<LabelId> {
        self.scope_kind().and(self.label())
    }

    /// The label this operation mentions: the one it declares (`loop`, `block`, `for`) or the
    /// one it jumps to (`break`, `continue`). No operation mentions more than one.
    pub fn label(&self) -> Option<LabelId> {
        mentioned_label!(self).copied()
    }

    /// Like [`OpKind::label`], with mutable access, for renumbering.
    pub fn label_mut(&mut self) -> Option<&mut LabelId> {
        mentioned_label!(self)
    }

    /// The function this operation runs: the callee of a `call`, a `scope.spawn` or a
    /// `defer.new`, the `init` of an `actor.start`, the handler of an `actor.call` or `actor.send`.
    pub fn callee(&self) -> Option<FuncId> {
        match self {
            OpKind::Call { callee, .. }
            | OpKind::ScopeSpawn { callee, .. }
            | OpKind::DeferNew { callee, .. }
            | OpKind::ActorStart { init: callee, .. }
            | OpKind::ActorCall { handler: callee, .. }
            | OpKind::ActorSend { handler: callee, .. } => Some(*callee),
            _ => None,
        }
    }

    /// Like [`OpKind::callee`], with mutable access, for renumbering.
    pub fn callee_mut(&mut self) -> Option<&mut FuncId> {
        match self {
            OpKind::Call { callee, .. }
            | OpKind::ScopeSpawn { callee, .. }
            | OpKind::DeferNew { callee, .. }
            | OpKind::ActorStart { init: callee, .. }
            | OpKind::ActorCall { handler: callee, .. }
            | OpKind::ActorSend { handler: callee, .. } => Some(callee),
            _ => None,
        }
    }

    /// Whether control never reaches the operation after this one in the same block.
    pub fn is_terminator(&self) -> bool {
        matches!(self, OpKind::Break { .. } | OpKind::Continue { .. } | OpKind::Return { .. } | OpKind::Trap { .. })
    }
}
