//! The typed intermediate representation (TIR): High Nagi after name resolution and type
//! checking, before lowering.
//!
//! The checker (`check/`) builds it from the AST; lowering (`lower/`) turns it into Low. In
//! TIR every name is resolved to an index, every expression has its type, implicit
//! conversions are explicit nodes (`OptionSome` for `T` → `T?`), compound assignments are
//! spelled out (`x += e` is `x = x + e`), and defaults and shapes the checker validated are
//! trusted. What TIR does not decide is ownership: whether a read moves, copies or borrows is
//! the lowering's decision from the context of the read (see `lower`).

use nagi_low::{HttpMethod, RuntimeFn, ScalarType};
use nagi_syntax::ast::Span;

/// An index into [`Program::classes`].
pub type ClassIdx = usize;
/// An index into [`Program::enums`].
pub type EnumIdx = usize;
/// An index into [`Program::functions`].
pub type FnIdx = usize;
mod loops;

pub use loops::{ArrayLoop, LoopMethod, Stage};

/// An index into [`Function::locals`].
pub type LocalIdx = usize;
/// An index into a class's fields.
pub type FieldIdx = usize;

/// A checked program.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub classes: Vec<Class>,
    pub enums: Vec<Enum>,
    pub tables: Vec<Table>,
    pub routes: Vec<Route>,
    /// Plain functions, route handlers and tests, in source order.
    pub functions: Vec<Function>,
    /// The tests (`test "name" { … }`), in source order.
    pub tests: Vec<Test>,
    /// The functions some `spawn` starts, each once, in index order: each gets a task
    /// function in Low that owns its arguments.
    pub spawned: Vec<FnIdx>,
    /// The functions some `spawn_blocking` starts, each once, in index order: each gets a plain
    /// function in Low that owns its arguments.
    pub spawned_blocking: Vec<FnIdx>,
    /// The functions some `defer` calls that borrow a parameter, each once, in index order: each
    /// gets a plain function in Low that owns its arguments.
    pub deferred: Vec<FnIdx>,
    /// The actors, in source order.
    pub actors: Vec<Actor>,
    /// The supervisors, in source order.
    pub supervisors: Vec<Supervisor>,
    /// The job queues, in source order.
    pub queues: Vec<Queue>,
    /// The scheduled jobs, in source order.
    pub schedules: Vec<Schedule>,
    /// The configuration's values, in declaration order.
    pub configs: Vec<ConfigValue>,
}

/// A value of the program's configuration, as Low's `config` line declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigValue {
    pub name: String,
    /// The environment variable: the name in upper case.
    pub env: String,
    /// `String`, `i64`, `f64`, `bool` or `Duration`.
    pub ty: Ty,
    pub secret: bool,
    /// The default as text the runtime reads; `None` for a required value.
    pub default: Option<String>,
}

/// A durable job queue: its rules and the function that runs a job (a handler like a route's,
/// whose parameters are the job and, optionally, the attempt's number).
#[derive(Clone, Debug, PartialEq)]
pub struct Queue {
    pub name: String,
    pub handler: FnIdx,
    /// How many jobs run at once, 1 to 1024.
    pub workers: u32,
    /// How many times a job runs at most before it is dead-lettered, at least 1.
    pub max_attempts: u32,
    /// The delay after a first failure and the longest delay, in milliseconds.
    pub backoff_ms: (u64, u64),
    pub span: Span,
}

/// A scheduled job: the plain function that runs at each tick, named after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// The function's name, which the scheduled job (a queue of the runtime's) is named by.
    pub name: String,
    pub func: FnIdx,
    /// Whether the function takes the tick's time.
    pub takes_tick: bool,
    pub when: nagi_low::Schedule,
    pub span: Span,
}

/// A supervisor: its restart rules and its children.
#[derive(Clone, Debug, PartialEq)]
pub struct Supervisor {
    pub name: String,
    pub strategy: nagi_low::Strategy,
    pub intensity: u32,
    pub period_ms: u64,
    pub backoff_ms: (u64, u64),
    /// Each child's name and what it is.
    pub children: Vec<(String, SupervisedChild)>,
}

/// A child of a supervisor: an actor (an index into `Program::actors`) or a supervisor (into
/// `Program::supervisors`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SupervisedChild {
    Actor(usize),
    Supervisor(usize),
}

/// An actor: its state class, the function that makes a fresh state, its mailbox's capacity
/// and its handlers.
#[derive(Clone, Debug, PartialEq)]
pub struct Actor {
    /// The state, a class named as the actor (which no class literal outside `init` builds).
    pub class: ClassIdx,
    /// `Name.init`: no parameters, result the state.
    pub init: FnIdx,
    /// Messages the mailbox holds, 1 to 2^20 (64 unless written).
    pub capacity: u32,
    /// `Name.h` for each handler `h`: its first parameter is the state, `inout`.
    pub handlers: Vec<FnIdx>,
}

/// A test: its name, its function (no parameters, no result) and where it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Test {
    pub name: String,
    pub function: FnIdx,
    /// `file:line:col` of the test.
    pub location: String,
}

/// A High type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    I32,
    I64,
    F64,
    Bool,
    Unit,
    String,
    /// `Time`: an instant in UTC (microseconds since 1970, `Type::Time` in Low).
    Time,
    /// `Duration`: signed microseconds (`Type::Duration` in Low).
    Duration,
    /// `Uuid`: 128 bits (`Type::Uuid` in Low).
    Uuid,
    /// A secret configuration value: a `String` in Low, which High shows only as `***` and
    /// hands out only through `.reveal()` (docs/language.md §6.16). No written type names it.
    Secret,
    Array(Box<Ty>),
    Option(Box<Ty>),
    /// `Map<K, V>`, `K` being `i64` or `String`.
    Map(Box<Ty>, Box<Ty>),
    Class(ClassIdx),
    Enum(EnumIdx),
    /// The handle of a task giving a `T` (`spawn f(…)`); only ever a `let` binding inside a
    /// `scope`, consumed by `join`.
    Task(Box<Ty>),
    /// A handle of an actor whose state is the class (the actor's name as a type).
    Actor(ClassIdx),
    /// A type parameter of the generic function being checked, by name, with the capabilities
    /// its type arguments have. Only the checker sees it: a generic body is checked once with
    /// its parameters as written and then once per instance with them replaced, and only the
    /// instances reach a [`Program`] (docs/language.md §3.7).
    Param(String, Bounds),
    /// A function-typed parameter's type, `fn(T, U) -> R` (`R` unit for none). Only the checker
    /// sees it: each call passes a closure or a function, and the callee's instance for it calls
    /// that function directly (docs/language.md §6.6).
    Fn(Vec<Ty>, Box<Ty>),
}

/// The capabilities a type parameter requires of its type arguments (`T: ord + text`), a set
/// of the [`Bounds`] constants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bounds(pub u8);

impl Bounds {
    /// `==` and `!=`.
    pub const EQ: Bounds = Bounds(1);
    /// `<`, `<=`, `>`, `>=` (and equality).
    pub const ORD: Bounds = Bounds(2 | 1);
    /// `to_string` and interpolation.
    pub const TEXT: Bounds = Bounds(4);
    /// Copied rather than moved.
    pub const COPY: Bounds = Bounds(8);
    /// The capabilities as written, with the name each is written as.
    pub const NAMES: [(&'static str, Bounds); 4] =
        [("eq", Bounds::EQ), ("ord", Bounds::ORD), ("text", Bounds::TEXT), ("copy", Bounds::COPY)];

    /// Whether every capability of `other` is in this set.
    pub fn has(self, other: Bounds) -> bool {
        self.0 & other.0 == other.0
    }
}

impl Ty {
    /// Whether values are copied rather than moved: scalars and options of scalars. Enums move,
    /// as classes do.
    pub fn is_copy(&self) -> bool {
        match self {
            Ty::I32 | Ty::I64 | Ty::F64 | Ty::Bool | Ty::Unit | Ty::Time | Ty::Duration | Ty::Uuid => true,
            Ty::Option(inner) => inner.is_copy(),
            Ty::Param(_, bounds) => bounds.has(Bounds::COPY),
            Ty::String
            | Ty::Secret
            | Ty::Array(_)
            | Ty::Map(..)
            | Ty::Class(_)
            | Ty::Enum(_)
            | Ty::Task(_)
            | Ty::Actor(_)
            | Ty::Fn(..) => false,
        }
    }

    /// The scalar type, for `i32`, `i64`, `f64` and `bool`.
    pub fn scalar(&self) -> Option<ScalarType> {
        match self {
            Ty::I32 => Some(ScalarType::I32),
            Ty::I64 => Some(ScalarType::I64),
            Ty::F64 => Some(ScalarType::F64),
            Ty::Bool => Some(ScalarType::Bool),
            _ => None,
        }
    }
}

/// A class declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    pub name: String,
    pub fields: Vec<Field>,
    pub span: Span,
}

/// An enum declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Enum {
    pub name: String,
    pub variants: Vec<Variant>,
    /// `T` when this is the built-in `Result<T>` (named `Result.T`), which is written so.
    pub result_of: Option<Ty>,
    pub span: Span,
}

/// One variant of an enum, with its payload's type if it carries one.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub name: String,
    pub payload: Option<Ty>,
}

/// One field of a class.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: Ty,
}

/// `table NAME: Class key FIELD`.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: String,
    pub class: ClassIdx,
    pub key: FieldIdx,
    pub span: Span,
}

/// A route: its method and path, and the function that handles it.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub method: HttpMethod,
    pub path: String,
    pub handler: FnIdx,
    /// The handler's parameters that come from request headers (`token: header String`).
    pub headers: Vec<String>,
    pub span: Span,
}

/// How a function receives a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamMode {
    /// Borrowed read-only: plain function parameters (copy types are simply copied).
    Borrowed,
    /// Borrowed mutably: `inout` parameters.
    Inout,
    /// Owned by the callee: route handler parameters (the runtime gives up the decoded value).
    Owned,
}

/// What a local is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalKind {
    Param(ParamMode),
    /// A `let` or `var` binding (`mutable` tells which).
    Binding,
    /// The variable of a `for` loop (read-only; for non-copy elements it stands for a borrow of
    /// the element).
    LoopVar,
    /// The name bound by `if let` (owns the unwrapped value).
    IfLet,
    /// The name a `match` arm binds to a variant's payload (read-only; for a non-copy payload it
    /// stands for a borrow of the payload, as a loop variable does for an element).
    MatchBinding,
}

/// A local variable or parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    /// The name as written; lowering keeps it for the Low local.
    pub name: String,
    pub ty: Ty,
    pub mutable: bool,
    pub kind: LocalKind,
    pub span: Span,
}

/// A function or route handler.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The Low name: the written name for `fn`, a name derived from method and path for a
    /// route (`get_users_id`).
    pub name: String,
    /// The first `params.len()` locals, in order.
    pub params: Vec<LocalIdx>,
    /// Route query parameters with a default: `(param, default)`. The handler receives such a
    /// parameter as `Option<T>` and lowering substitutes the default for `none`.
    pub defaults: Vec<(LocalIdx, Literal)>,
    pub ret: Ty,
    pub locals: Vec<Local>,
    pub body: Block,
    /// Inferred: the body uses the database or calls an async function.
    pub is_async: bool,
    /// Whether this function handles a route.
    pub is_route: bool,
    /// Whether the function may fail: declared `fails`, or a route handler whose body fails or
    /// calls a failing function. Its Low result is then an option (`none`: failed, with the
    /// failure recorded by `http.fail`); see `lower`.
    pub fails: bool,
    pub span: Span,
}

/// A constant usable as a default.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    I32(i32),
    I64(i64),
    F64(f64),
    Bool(bool),
    Str(String),
}

/// A sequence of statements; the locals it declares go out of scope at its end.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
}

impl Block {
    /// Calls `visit` with each statement (its kind) and the expressions it evaluates itself
    /// ([`StmtKind::own_exprs`]), for every statement at every depth, in source order.
    pub fn walk_statements<'a>(&'a self, visit: &mut dyn FnMut(Option<&'a StmtKind>, Vec<&'a Expr>)) {
        for stmt in &self.stmts {
            visit(Some(&stmt.kind), stmt.kind.own_exprs());
            for inner in stmt.kind.inner_blocks() {
                inner.walk_statements(visit);
            }
        }
    }
}

/// A statement and its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// Statements.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// Declares `local` (in the enclosing block's scope) and initialises it.
    Let {
        local: LocalIdx,
        value: Expr,
    },
    /// Replaces the value at `place` (dropping the old one).
    Assign {
        place: Place,
        value: Expr,
    },
    /// An expression evaluated for its effect; its value, if any, is dropped.
    Expr(Expr),
    If {
        cond: Expr,
        then_block: Block,
        else_block: Option<Block>,
    },
    /// `if let local = value { } else { }`: `value` has type `Option<T>`, `local` has type `T`.
    IfLet {
        local: LocalIdx,
        value: Expr,
        then_block: Block,
        else_block: Option<Block>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    /// `for local in start..end`, with `local` of `start`'s integer type.
    ForRange {
        local: LocalIdx,
        start: Expr,
        end: Expr,
        body: Block,
    },
    /// `for local in array`.
    ForEach {
        local: LocalIdx,
        array: Expr,
        body: Block,
    },
    /// `for key, value in map`, in insertion order.
    ForEntries {
        key: LocalIdx,
        value: LocalIdx,
        map: Expr,
        body: Block,
    },
    /// Leaves the innermost loop.
    Break,
    /// Starts the innermost loop's next iteration.
    Continue,
    Return(Option<Expr>),
    /// `db.transaction { }`: the block runs between `db.begin` and `db.commit`.
    Transaction(Block),
    /// `scope { … }`: the block, after which every task spawned in it has finished.
    Scope(Block),
    /// `defer func(args)`: the call of a plain function that cannot fail, made when the
    /// enclosing block is left or its task cancelled; `args` are evaluated here.
    Defer {
        func: FnIdx,
        args: Vec<Expr>,
    },
    /// `match scrutinee { arms }`: the first arm with a matching pattern runs. The checker has
    /// proven the arms exhaustive, so the last arm may run without a test.
    Match {
        scrutinee: Expr,
        arms: Vec<MatchArm>,
    },
}

impl StmtKind {
    /// The expressions the statement evaluates itself (not those of its blocks), in order.
    pub fn own_exprs(&self) -> Vec<&Expr> {
        match self {
            StmtKind::Let { value, .. } | StmtKind::Assign { value, .. } | StmtKind::Expr(value) => vec![value],
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => vec![cond],
            StmtKind::IfLet { value, .. } => vec![value],
            StmtKind::ForRange { start, end, .. } => vec![start, end],
            StmtKind::ForEach { array, .. } => vec![array],
            StmtKind::ForEntries { map, .. } => vec![map],
            StmtKind::Return(value) => value.iter().collect(),
            StmtKind::Defer { args, .. } => args.iter().collect(),
            StmtKind::Match { scrutinee, .. } => vec![scrutinee],
            StmtKind::Break | StmtKind::Continue | StmtKind::Transaction(_) | StmtKind::Scope(_) => Vec::new(),
        }
    }

    /// The blocks the statement holds.
    pub fn inner_blocks(&self) -> Vec<&Block> {
        match self {
            StmtKind::If { then_block, else_block, .. } | StmtKind::IfLet { then_block, else_block, .. } => {
                std::iter::once(then_block).chain(else_block.as_ref()).collect()
            }
            StmtKind::While { body, .. }
            | StmtKind::ForRange { body, .. }
            | StmtKind::ForEach { body, .. }
            | StmtKind::ForEntries { body, .. }
            | StmtKind::Transaction(body)
            | StmtKind::Scope(body) => vec![body],
            StmtKind::Match { arms, .. } => arms.iter().map(|arm| &arm.body).collect(),
            _ => Vec::new(),
        }
    }
}

/// One arm of a `match`: its patterns (any may match) and block; `binding` is the local bound
/// to the payload when the arm has one variant pattern with a name.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchArm {
    pub patterns: Vec<Pattern>,
    pub binding: Option<LocalIdx>,
    pub body: Block,
}

/// A checked pattern, of the scrutinee's type.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// `_`.
    Wildcard,
    /// A variant of the scrutinee's enum, by index.
    Variant(u32),
    /// An integer, fitted to the scrutinee's integer type.
    Int(i64),
    Str(String),
    Bool(bool),
}

/// An expression with its type and span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Ty,
    pub span: Span,
}

impl Expr {
    /// Calls `visit` on this expression and every expression inside it, the index expressions
    /// of places included, in no particular order. Iterative, so a deeply nested expression
    /// cannot overflow the stack.
    pub fn walk<'e>(&'e self, visit: &mut dyn FnMut(&'e Expr)) {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            visit(e);
            match &e.kind {
                ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::None => {}
                ExprKind::Place(place) => place.push_indices(&mut stack),
                ExprKind::Array(items) | ExprKind::Interp(items) => stack.extend(items.iter()),
                ExprKind::New { fields, .. } => stack.extend(fields.iter().map(|(_, v)| v)),
                ExprKind::Unary { operand, .. } => stack.push(operand),
                ExprKind::Binary { lhs, rhs, .. }
                | ExprKind::Concat(lhs, rhs)
                | ExprKind::StrEq { lhs, rhs, .. }
                | ExprKind::And(lhs, rhs)
                | ExprKind::Or(lhs, rhs) => stack.extend([&**lhs, &**rhs]),
                ExprKind::Cast { expr, .. } | ExprKind::OptionSome(expr) => stack.push(expr),
                ExprKind::ArrayLoop(each) => {
                    stack.push(&each.array);
                    stack.extend(each.stages.iter().map(|s| &s.body));
                    stack.extend(each.fold.as_ref().map(|(_, init)| init));
                    stack.push(&each.body);
                }
                ExprKind::Variant { payload, .. } => stack.extend(payload.as_deref()),
                ExprKind::Call { args, .. }
                | ExprKind::Builtin { args, .. }
                | ExprKind::Db { args, .. }
                | ExprKind::Spawn { args, .. } => stack.extend(args.iter()),
                ExprKind::ActorStart { .. } | ExprKind::SupervisorChild { .. } => {}
                ExprKind::QueuePush { job, delay, .. } => {
                    stack.push(job);
                    stack.extend(delay.as_deref());
                }
                ExprKind::QueueDeadLetters { .. } => {}
                ExprKind::QueueRetry { id, .. } => stack.push(id),
                ExprKind::ActorCall { actor, args, .. } => {
                    stack.push(actor);
                    stack.extend(args.iter());
                }
                ExprKind::Send(call) | ExprKind::TryOption(call) | ExprKind::Catch { call, .. } => stack.push(call),
                ExprKind::Fetch(fetch) => {
                    stack.push(&fetch.url);
                    stack.extend(fetch.body.as_deref());
                    stack.extend(fetch.headers.as_deref());
                    stack.extend(fetch.timeout.as_deref());
                }
                ExprKind::Join(handle) => stack.push(handle),
                ExprKind::Push { array, value } => {
                    array.push_indices(&mut stack);
                    stack.push(value);
                }
                ExprKind::Reorder { array, .. } => array.push_indices(&mut stack),
                ExprKind::SortByKeys { array, keys } => {
                    array.push_indices(&mut stack);
                    stack.push(keys);
                }
                ExprKind::MapNew => {}
                ExprKind::MapLookup { map, key, .. } => stack.extend([&**map, &**key]),
                ExprKind::MapInsert { map, key, value } => {
                    map.push_indices(&mut stack);
                    stack.extend([&**key, &**value]);
                }
                ExprKind::MapRemove { map, key } => {
                    map.push_indices(&mut stack);
                    stack.push(key);
                }
            }
        }
    }

    /// Whether evaluating this expression may change local `local`: a call in it passes a place
    /// rooted at `local` to an `inout` parameter (`is_inout(function, argument index)` tells
    /// which parameters are), or a `push` in it pushes to such a place. Nothing else in High
    /// writes a local from inside an expression.
    pub fn may_write(&self, local: LocalIdx, is_inout: &dyn Fn(FnIdx, usize) -> bool) -> bool {
        let mut found = false;
        self.walk(&mut |e| match &e.kind {
            ExprKind::Call { func, args } => {
                let writes = args
                    .iter()
                    .enumerate()
                    .any(|(i, arg)| is_inout(*func, i) && matches!(&arg.kind, ExprKind::Place(p) if p.root() == local));
                found |= writes;
            }
            ExprKind::Push { array, .. }
            | ExprKind::Reorder { array, .. }
            | ExprKind::SortByKeys { array, .. }
            | ExprKind::MapInsert { map: array, .. }
            | ExprKind::MapRemove { map: array, .. } => found |= array.root() == local,
            _ => {}
        });
        found
    }

    /// Whether this expression has an effect beyond its value: a call of a program function
    /// or a database operation (both may print, write or trap).
    pub fn has_call(&self) -> bool {
        let mut found = false;
        self.walk(&mut |e| {
            found |= matches!(
                e.kind,
                ExprKind::Call { .. }
                    | ExprKind::Db { .. }
                    | ExprKind::QueuePush { .. }
                    | ExprKind::QueueDeadLetters { .. }
                    | ExprKind::QueueRetry { .. }
            )
        });
        found
    }

    /// The locals this expression reads or writes through its places.
    pub fn roots(&self) -> Vec<LocalIdx> {
        let mut roots = Vec::new();
        self.walk(&mut |e| match &e.kind {
            ExprKind::Place(place) => roots.push(place.root()),
            ExprKind::Push { array, .. }
            | ExprKind::Reorder { array, .. }
            | ExprKind::SortByKeys { array, .. }
            | ExprKind::MapInsert { map: array, .. }
            | ExprKind::MapRemove { map: array, .. } => roots.push(array.root()),
            _ => {}
        });
        roots
    }
}

/// A place: something that names storage (a local, a field of a place, an element of a
/// place).
#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    Local(LocalIdx),
    Field(Box<Place>, FieldIdx),
    Index(Box<Place>, Box<Expr>),
}

impl Place {
    /// The local this place starts from (`u` for `u.tags[i]`).
    pub fn root(&self) -> LocalIdx {
        let mut place = self;
        loop {
            match place {
                Place::Local(local) => return *local,
                Place::Field(base, _) | Place::Index(base, _) => place = base,
            }
        }
    }

    /// Pushes the index expressions of this place (`i` and `j` of `xs[i].ys[j]`) on `stack`.
    fn push_indices<'e>(&'e self, stack: &mut Vec<&'e Expr>) {
        let mut place = self;
        loop {
            match place {
                Place::Local(_) => return,
                Place::Field(base, _) => place = base,
                Place::Index(base, index) => {
                    stack.push(index);
                    place = base;
                }
            }
        }
    }
}

/// Builtin functions and methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `print(x)` for any scalar or `String`.
    Print,
    /// `min(a, b)` on numbers.
    Min,
    /// `max(a, b)` on numbers.
    Max,
    /// `abs(x)` on numbers.
    Abs,
    /// `to_string(x)` for any scalar or `String`.
    ToString,
    /// `xs.len()` or `s.len()`: `i64`.
    Len,
    /// `x.clone()`: an owned copy.
    Clone,
    /// `fail(status, message)`: records the failure and returns from the failing function.
    Fail,
    /// `set_header(name, value)` in a route handler: a header of its successful answer.
    SetHeader,
    /// `assert(cond)`: the condition, then the assertion's location (a string literal).
    Assert,
    /// `assert_eq(a, b)`: both values (scalars or strings of one type), then the location.
    AssertEq,
    /// A method of the string library (`s.contains(t)`, `s.split(sep)`, `parts.join(sep)`, …),
    /// which is one row of the runtime interface: the receiver, then the arguments, strings
    /// and arrays borrowed and integers by value.
    Runtime(RuntimeFn),
}

/// The three database operations that are expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbOp {
    /// `db.exec(sql, …)`: `i64` rows changed.
    Exec,
    /// `db.query<T>(sql, …)`: `[T]`.
    Query,
    /// `db.query_one<T>(sql, …)`: `T?`.
    QueryOne,
}

/// Expressions. Operands of arithmetic are evaluated left to right.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal already fitted to its type (`ty` is `i32` or `i64`).
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A string literal (an owned `String` when used as a value).
    Str(String),
    /// `none`, of the option type in `ty`.
    None,
    /// A read of a place.
    Place(Place),
    /// `[a, b]`: a new array.
    Array(Vec<Expr>),
    /// `Class { … }`: every field exactly once, as `(field index, value)` in the order written,
    /// which is the order the values are evaluated in (not the declaration order).
    New {
        class: ClassIdx,
        fields: Vec<(FieldIdx, Expr)>,
    },
    /// `-x` (wrapping for integers) on a number, or `!x` on `bool` or an integer.
    Unary {
        op: nagi_low::UnaryOp,
        operand: Box<Expr>,
    },
    /// Arithmetic, bitwise or comparison on scalars of type `operand_ty` (comparisons have
    /// `ty` `bool`).
    Binary {
        op: nagi_low::BinaryOp,
        operand_ty: ScalarType,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `a + b` on strings: a new `String`.
    Concat(Box<Expr>, Box<Expr>),
    /// An interpolated string: a new `String` of its parts (each a `String`: the texts, the
    /// holes' values, scalars through `to_string`), made in one buffer.
    Interp(Vec<Expr>),
    /// `a == b` (or `!=` when `negated`) on strings.
    StrEq {
        negated: bool,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `a && b`, short-circuit.
    And(Box<Expr>, Box<Expr>),
    /// `a || b`, short-circuit.
    Or(Box<Expr>, Box<Expr>),
    /// `x as T` between numeric types.
    Cast {
        expr: Box<Expr>,
        to: ScalarType,
    },
    /// A call of a program function. Arguments for `Inout` parameters are `Place` reads of
    /// mutable places.
    Call {
        func: FnIdx,
        args: Vec<Expr>,
    },
    /// A builtin function or method.
    Builtin {
        builtin: Builtin,
        args: Vec<Expr>,
    },
    /// `xs.push(v)`: `xs` is a mutable place.
    Push {
        array: Place,
        value: Box<Expr>,
    },
    /// `Map.new()`: an empty map of the expression's type.
    MapNew,
    /// `m.get(k)` (a copy or clone of the value, as an option) or `m.contains(k)`; `map` is
    /// borrowed.
    MapLookup {
        map: Box<Expr>,
        key: Box<Expr>,
        contains: bool,
    },
    /// `m.insert(k, v)`: `map` is a mutable place; the key and the value are moved in.
    MapInsert {
        map: Place,
        key: Box<Expr>,
        value: Box<Expr>,
    },
    /// `m.remove(k)`: the value moved out, as an option; `map` is a mutable place.
    MapRemove {
        map: Place,
        key: Box<Expr>,
    },
    /// `xs.sort()`, `xs.sort_by(field)` or `xs.reverse()` (the runtime row `row`): `xs` is a
    /// mutable place; `key` is the field of `sort_by`.
    Reorder {
        row: nagi_low::RuntimeFn,
        array: Place,
        key: Option<FieldIdx>,
    },
    /// `xs.sort_by_key(fn(x) => key)`: `keys` (the `map` of the closure over `xs`, computed
    /// first) then `array.sort_by_keys` of the mutable place `xs` by them.
    SortByKeys {
        array: Place,
        keys: Box<Expr>,
    },
    /// `db.exec/query/query_one` with the SQL text (a literal the checker prepared against
    /// the declared tables), the statement's source position (`file:line`, which names it in
    /// the service's metrics) and the placeholder arguments.
    Db {
        op: DbOp,
        class: Option<ClassIdx>,
        sql: String,
        position: String,
        args: Vec<Expr>,
    },
    /// `spawn f(args)`: starts a task of the innermost `scope` running `f`; the arguments are
    /// consumed (the task owns them). The value is the task's handle, `Task<R>`. With
    /// `blocking` (`spawn_blocking`), `f` is a plain function run on the blocking pool.
    Spawn {
        func: FnIdx,
        args: Vec<Expr>,
        blocking: bool,
    },
    /// `h.join()`: waits for the task whose handle the local `h` is (consumed) and gives its
    /// result.
    Join(Box<Expr>),
    /// `q.push(job[, delay])`: pushes `job` (evaluated, then borrowed) on the queue of that
    /// index (into `Program::queues`), to run no sooner than `delay` milliseconds (an `i64`)
    /// from now; the job's id, an `i64`. A database statement (inside a request, part of its
    /// transaction).
    QueuePush {
        queue: usize,
        job: Box<Expr>,
        delay: Option<Box<Expr>>,
    },
    /// `q.dead_letters()`: the dead letters of the queue of that index, oldest first, as an
    /// array of the class `DeadLetter`. A database statement.
    QueueDeadLetters {
        queue: usize,
        class: ClassIdx,
    },
    /// `q.retry(id)`: pushes the dead letter `id` (an `i64`) of the queue of that index again;
    /// the new job's id, or 0 when there is none. A database statement.
    QueueRetry {
        queue: usize,
        id: Box<Expr>,
    },
    /// `Name.start()`: starts the actor of that index (into `Program::actors`); its handle.
    ActorStart {
        actor: usize,
    },
    /// `a.h(args)`: a call of the handler `h` (a function index) of the actor whose handle
    /// `actor` is (borrowed); the arguments are consumed. It fails (503) when the actor has
    /// stopped, so it is marked with `try`.
    ActorCall {
        actor: Box<Expr>,
        handler: FnIdx,
        args: Vec<Expr>,
    },
    /// `send a.h(args)`: the message of an [`ExprKind::ActorCall`], without waiting for the
    /// result; unit.
    Send(Box<Expr>),
    /// `Tree.child.…`: another handle of the actor at `path` (child indexes) below the
    /// supervisor `tree` (an index into `Program::supervisors`, one that is no other's child).
    SupervisorChild {
        tree: usize,
        path: Vec<u32>,
    },
    /// `http.get(url)`, `http.post<T>(url, body)`, …: a call of another HTTP service, which may
    /// fail; of type `T` (the class the answer decodes into) or `String` (its text).
    Fetch(Fetch),
    /// `try? call`: a failing call (a program function's or an actor's) whose failure gives
    /// `none` instead of passing on: `T?`, or `bool` (whether it succeeded) for a call without
    /// a result.
    TryOption(Box<Expr>),
    /// `catch call`: a failing call whose outcome is a value of its `Result<T>` (the
    /// expression's enum type): `Ok` of its value (`Ok` alone for a call without a result), or
    /// `Failed` of a `Failure` (the class `failure`) with the recorded status and message.
    Catch {
        call: Box<Expr>,
        failure: ClassIdx,
    },
    /// Implicit `T` → `T?`.
    OptionSome(Box<Expr>),
    /// `xs.map(fn(x) => body)` and the other closure methods of the array library: the
    /// closure's body run inline once per element, with no closure value.
    ArrayLoop(Box<ArrayLoop>),
    /// `Enum.Variant` or `Enum.Variant(payload)`: a new enum value.
    Variant {
        enum_idx: EnumIdx,
        variant: u32,
        payload: Option<Box<Expr>>,
    },
}

/// An outbound call ([`ExprKind::Fetch`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Fetch {
    /// The HTTP method in capitals: `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// The URL, a `String`.
    pub url: Box<Expr>,
    /// The body of `POST`, `PUT` and `PATCH`: a class (sent as JSON, borrowed) or a `String`.
    pub body: Option<Box<Expr>>,
    /// The header lines, a `[String]` of `Name: value` (borrowed).
    pub headers: Option<Box<Expr>>,
    /// The call's own timeout, in microseconds (an `i64`).
    pub timeout: Option<Box<Expr>>,
    /// The class the answer decodes into; none for its text.
    pub class: Option<ClassIdx>,
}
