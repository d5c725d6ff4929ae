//! The High Nagi abstract syntax tree, as the parser builds it: every node carries its source
//! span, and nothing is resolved yet (names are strings, types are as written).

/// A byte range `start..end` in the source file.
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
}

/// A name as written, with where.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole `.nagi` file: its declarations in source order.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceFile {
    pub items: Vec<Item>,
}

/// A top-level declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Class(ClassDecl),
    Enum(EnumDecl),
    Import(ImportDecl),
    Test(TestDecl),
    Table(TableDecl),
    Route(RouteDecl),
    Function(FnDecl),
    Actor(ActorDecl),
    Supervisor(SupervisorDecl),
    Queue(QueueDecl),
    Config(ConfigDecl),
    Schedule(ScheduleDecl),
}

/// `schedule cleanup every 1h` or `schedule report at "0 3 * * *"`: the function `func` runs
/// as a job at each tick of the schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleDecl {
    /// The function that runs (and names the scheduled job).
    pub func: Ident,
    pub when: ScheduleWhen,
    pub span: Span,
}

/// When a scheduled function runs.
#[derive(Clone, Debug, PartialEq)]
pub enum ScheduleWhen {
    /// `every DURATION`: the duration in microseconds, and where it is written.
    Every(u64, Span),
    /// `at "CRON"`: a five-field cron expression, and where it is written.
    At(String, Span),
}

/// `config Name { field: Type  key: secret String  limit: i64 = 100 }`: values of the program's
/// configuration, read as `Name.field` and bound at start from the environment.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigDecl {
    pub name: Ident,
    pub fields: Vec<ConfigField>,
    pub span: Span,
}

/// One value of a `config`: its name, whether it is `secret`, its type, and its default.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigField {
    pub name: Ident,
    pub secret: bool,
    pub ty: TypeExpr,
    pub default: Option<Expr>,
    pub span: Span,
}

/// `queue name { workers N  max_attempts M  backoff A..B  fn run(job: J[, attempt: i64]) { … } }`:
/// a durable job queue, its rules (each written at most once; the checker gives the defaults)
/// and the handler that runs a job.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueDecl {
    pub name: Ident,
    /// `workers N`, and where.
    pub workers: Option<(u64, Span)>,
    /// `max_attempts N`, and where.
    pub max_attempts: Option<(u64, Span)>,
    /// `backoff A..B`, in milliseconds, and where.
    pub backoff: Option<(u64, u64, Span)>,
    /// The handler, `fn run(…)`.
    pub handler: FnDecl,
    pub span: Span,
}

/// One member of a queue's body, as parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueMember {
    /// `workers N` or `max_attempts N` (the word is checked when the queue is built).
    Count(Ident, u64, Span),
    Backoff(u64, u64, Span),
    Handler(FnDecl),
}

/// `supervisor Name { child name: Type … strategy S  intensity N per T  backoff A..B }`: the
/// children (actors or supervisors, by type name) and the restart rules, each written at most
/// once (the checker gives the defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct SupervisorDecl {
    pub name: Ident,
    /// Each child's name and the actor or supervisor it is.
    pub children: Vec<(Ident, Ident)>,
    pub strategy: Option<Ident>,
    /// `intensity N per T`: N restarts, T in milliseconds, and where.
    pub intensity: Option<(u64, u64, Span)>,
    /// `backoff A..B`, in milliseconds, and where.
    pub backoff: Option<(u64, u64, Span)>,
    pub span: Span,
}

/// One member of a supervisor's body, as parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum SupervisorMember {
    Child(Ident, Ident),
    Strategy(Ident),
    Intensity(u64, u64, Span),
    Backoff(u64, u64, Span),
}

/// `actor Name { var field: Type = value … fn handler(params) -> T { … } … mailbox N }`: a
/// state, the handlers that change it, and the mailbox's capacity.
#[derive(Clone, Debug, PartialEq)]
pub struct ActorDecl {
    pub name: Ident,
    /// The state's fields, in order; `init` holds their initial values.
    pub fields: Vec<FieldDecl>,
    pub handlers: Vec<FnDecl>,
    /// `mailbox N`, if written, and where.
    pub mailbox: Option<(u64, Span)>,
    /// The body that makes a fresh state: `return Name { field: value, … }`, built by the
    /// parser from the fields' initial values.
    pub init: Block,
    pub span: Span,
}

/// One member of an actor's body, as parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum ActorMember {
    State(FieldDecl, Expr),
    Handler(FnDecl),
    Mailbox(u64, Span),
}

/// `import a/b` or `import a/b.{x, y}`: the module at path `a/b` (the file `a/b.nagi` beside the
/// importing file), used as `b.x`, and with `names` also as `x`.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportDecl {
    /// The path's segments: `billing`, `invoices`.
    pub path: Vec<Ident>,
    pub names: Option<Vec<Ident>>,
    pub span: Span,
}

/// `test "name" { body }`: a test, run by `nagic test`.
#[derive(Clone, Debug, PartialEq)]
pub struct TestDecl {
    pub name: StrLit,
    pub body: Block,
    pub span: Span,
}

/// `[pub] class Name[<T, …>] { field: Type … }`
#[derive(Clone, Debug, PartialEq)]
pub struct ClassDecl {
    pub name: Ident,
    /// Written `pub`: other modules may use it.
    pub public: bool,
    /// The type parameters of a generic class (`class Page<T>`), in order; empty otherwise.
    pub type_params: Vec<TypeParam>,
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

/// `enum Name[<T, …>] { Variant, Variant(Type), … }`
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDecl {
    pub name: Ident,
    /// Written `pub`: other modules may use it.
    pub public: bool,
    /// The type parameters of a generic enum (`enum Tree<T>`), in order; empty otherwise.
    pub type_params: Vec<TypeParam>,
    pub variants: Vec<VariantDecl>,
    pub span: Span,
}

/// One variant of an enum declaration, with the type of its payload if it carries one.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantDecl {
    pub name: Ident,
    pub payload: Option<TypeExpr>,
}

/// One field of a class declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: TypeExpr,
}

/// `table NAME: Class key FIELD`
#[derive(Clone, Debug, PartialEq)]
pub struct TableDecl {
    pub name: Ident,
    pub class: Ident,
    pub key: Ident,
    pub span: Span,
}

/// `route METHOD "path" (params) -> T { body }`
#[derive(Clone, Debug, PartialEq)]
pub struct RouteDecl {
    pub method: Ident,
    pub path: StrLit,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Block,
    pub span: Span,
}

/// `fn name[<T: bound, …>](params) [fails] -> T { body }`
#[derive(Clone, Debug, PartialEq)]
pub struct FnDecl {
    pub name: Ident,
    /// Written `pub`: other modules may call it.
    pub public: bool,
    /// The type parameters of a generic function, in order; empty otherwise.
    pub type_params: Vec<TypeParam>,
    pub params: Vec<Param>,
    /// Written `fails`: the function may stop with `fail(status, message)`, and its callers
    /// must mark calls of it with `try`.
    pub fails: bool,
    pub ret: Option<TypeExpr>,
    pub body: Block,
    pub span: Span,
}

/// A parameter: `[inout] name: Type [= default]`. Defaults are allowed on route query
/// parameters only (the checker says so elsewhere).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub inout: bool,
    pub name: Ident,
    /// Where a route parameter comes from, written before its type (`token: header String`);
    /// `header` is the only source (the checker says so).
    pub source: Option<Ident>,
    pub ty: TypeExpr,
    pub default: Option<Expr>,
    pub span: Span,
}

/// A string literal's value (escapes resolved) and span.
#[derive(Clone, Debug, PartialEq)]
pub struct StrLit {
    pub value: String,
    pub span: Span,
}

/// A type parameter as declared: `T`, or `T: ord + text` with the capabilities its type
/// arguments must have (docs/language.md §3.7).
#[derive(Clone, Debug, PartialEq)]
pub struct TypeParam {
    pub name: Ident,
    pub bounds: Vec<Ident>,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

/// The shapes a written type can have.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// `i32`, `i64`, `f64`, `bool`, `String`, a class or enum name, or one of another module
    /// (`accounts.Account`, one string).
    Named(String),
    /// `[T]`
    Array(Box<TypeExpr>),
    /// `T?`
    Option(Box<TypeExpr>),
    /// `Map<K, V>`
    Map(Box<TypeExpr>, Box<TypeExpr>),
    /// `Result<T>`, the type of `catch f()` when `f` gives a `T`.
    Result(Box<TypeExpr>),
    /// An instance of a generic class: `Page<User>`, or one of another module
    /// (`paging.Page<User>`, the name one string).
    Generic(String, Vec<TypeExpr>),
    /// `fn(T, U) -> R` (no `-> R` for a function without a result): the type of a function's
    /// parameter that takes a closure, and nothing else's.
    Fn(Vec<TypeExpr>, Option<Box<TypeExpr>>),
}

/// A closure's parameter: its name and, optionally, its type (otherwise the one its method
/// gives it).
#[derive(Clone, Debug, PartialEq)]
pub struct ClosureParam {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
}

/// `{ statements }`
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

/// A statement and its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// The statements of High Nagi.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let x[: T] = e` (`mutable: false`) or `var x[: T] = e`.
    Let {
        mutable: bool,
        name: Ident,
        ty: Option<TypeExpr>,
        value: Expr,
    },
    /// `place = e`, or `place op= e` when `op` is given.
    Assign {
        target: Expr,
        op: Option<BinaryOp>,
        value: Expr,
    },
    /// `if c { } [else { }]`; `else if` is an else-block holding one `if`.
    If {
        cond: Expr,
        then_block: Block,
        else_block: Option<Block>,
    },
    /// `if let x = option { } [else { }]`
    IfLet {
        name: Ident,
        value: Expr,
        then_block: Block,
        else_block: Option<Block>,
    },
    /// `while c { }`
    While {
        cond: Expr,
        body: Block,
    },
    /// `for x in e { }`, `for i in a..b { }` or `for k, v in m { }`
    For {
        var: Ident,
        iter: ForIter,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    /// `db.transaction { }`
    Transaction(Block),
    /// `scope { }`: the tasks spawned inside end before the block does.
    Scope(Block),
    /// `defer f(args)`: the call runs when the enclosing block is left or its task cancelled.
    Defer(Expr),
    /// `match e { pattern => { } … }`
    Match {
        scrutinee: Expr,
        arms: Vec<MatchArm>,
    },
    /// An expression evaluated for its effect (a call).
    Expr(Expr),
}

/// One arm of a `match`: one or more patterns (`A | B`) and the block run when one matches.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchArm {
    pub patterns: Vec<Pattern>,
    pub body: Block,
    pub span: Span,
}

/// A pattern of a `match` arm, with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

/// The shapes a pattern can have.
#[derive(Clone, Debug, PartialEq)]
pub enum PatternKind {
    /// `_`: anything.
    Wildcard,
    /// `Variant`, `Variant(x)`, `Enum.Variant` or `Enum.Variant(x)`; a binding `_` binds nothing.
    Variant { enum_name: Option<Ident>, variant: Ident, binding: Option<Ident> },
    /// An integer literal, `-` allowed: the magnitude and whether it is negated.
    Int { negative: bool, magnitude: u64 },
    /// A string literal.
    Str(String),
    /// `true` or `false`.
    Bool(bool),
}

/// What a `for` loop walks.
#[derive(Clone, Debug, PartialEq)]
pub enum ForIter {
    /// `a..b`: integers from `a` up to, not including, `b`.
    Range(Expr, Expr),
    /// An array's elements.
    Each(Expr),
    /// `for k, v in m`: a map's entries in insertion order, the key in the loop's `var` and the
    /// value in this name.
    Entries(Ident, Expr),
}

/// An expression and its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// The expressions of High Nagi.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal's magnitude (a leading `-` is a unary minus, so `-2^63` is
    /// `Neg(Int(2^63))`, which the checker accepts for `i64::MIN`).
    Int(u64),
    /// A duration literal (`250ms`, `5s`, `2m`, `1h`, `1d`, `1500us`), in microseconds.
    Duration(u64),
    Float(f64),
    Str(String),
    /// `"post {id} of {account.name}"`: `texts[0]`, `holes[0]`, `texts[1]`, … `texts[n]`, each
    /// hole's value as `to_string` writes it (`texts` has one more element than `holes`).
    Interp {
        texts: Vec<String>,
        holes: Vec<Expr>,
    },
    Bool(bool),
    /// `none`
    None,
    Name(Ident),
    /// `[a, b, …]`
    Array(Vec<Expr>),
    /// `Class { field: e, … }`, or `module.Class { … }` (the class's name is then `module.Class`).
    ClassLit {
        class: Ident,
        fields: Vec<(Ident, Expr)>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `e as T`
    Cast {
        expr: Box<Expr>,
        ty: TypeExpr,
    },
    /// `f(args)`: a function or a builtin (`print`, `min`, `max`, `abs`, `to_string`).
    Call {
        callee: Ident,
        args: Vec<Expr>,
    },
    /// `e.m(args)`: `len`, `push`, `clone`.
    MethodCall {
        receiver: Box<Expr>,
        method: Ident,
        args: Vec<Expr>,
    },
    /// `e.field`
    Field {
        object: Box<Expr>,
        field: Ident,
    },
    /// `e[i]`
    Index {
        array: Box<Expr>,
        index: Box<Expr>,
    },
    /// `try e`: calls of failing functions inside `e` pass a failure on to the caller.
    Try(Box<Expr>),
    /// `spawn f(args)`: starts a task of the innermost `scope` running the call.
    Spawn(Box<Expr>),
    /// `spawn_blocking f(args)`: starts a task of the innermost `scope` running the call of a
    /// plain function on the bounded blocking pool.
    SpawnBlocking(Box<Expr>),
    /// `try? e`: `e`'s failing call gives an option (a `bool` for a call without a result)
    /// instead of passing its failure on.
    TryOption(Box<Expr>),
    /// `fn(x) => body`: a closure, an argument of the array library's `map`, `filter`, `any`,
    /// `all`, `find`, `count` and `fold`, which run `body` for each element.
    Closure {
        params: Vec<ClosureParam>,
        body: Box<Expr>,
    },
    /// `fn(x: i64) -> bool { statements }`: a closure with a block for its body, the argument
    /// of a function-typed parameter (§6.6).
    BlockClosure {
        params: Vec<ClosureParam>,
        ret: Option<TypeExpr>,
        body: Block,
    },
    /// `catch e`: `e`'s failing call gives a `Result<T>`, `Ok(value)` or `Failed(failure)`,
    /// instead of passing its failure on.
    Catch(Box<Expr>),
    /// `send a.handler(args)`: a message to an actor whose result nobody waits for.
    Send(Box<Expr>),
    /// `db.exec(…)`, `db.query<T>(…)`, `db.query_one<T>(…)`.
    Db {
        op: Ident,
        class: Option<TypeExpr>,
        args: Vec<Expr>,
    },
    /// `http.get(…)`, `http.post<T>(…)`: a call of another HTTP service; `method` is `get`,
    /// `post`, `put`, `patch` or `delete`, `class` the type its answer decodes into.
    Http {
        method: Ident,
        class: Option<TypeExpr>,
        args: Vec<Expr>,
    },
}

/// Prefix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-e`
    Neg,
    /// `!e`: logical for `bool`, bitwise for integers.
    Not,
}

/// Infix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&`, short-circuit.
    And,
    /// `||`, short-circuit.
    Or,
}

impl BinaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
}
