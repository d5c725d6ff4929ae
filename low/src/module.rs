//! The Low data model: a module of classes, functions and declarations; a function of locals,
//! blocks, operations and labels, each in its own arena.
//!
//! Structure of a function body: `FunctionData::body` is a block; a block is an ordered list of
//! operations; control-flow operations (`if`, `loop`, `block`, `for`) own further blocks. Every
//! block has exactly one owner, so a body is a tree and every function is reducible by
//! construction. The canonical arena order is the order of the text: the parser allocates
//! parameters first, then declared locals, and operations and blocks in pre-order.

use la_arena::Arena;

use crate::entities::{
    BlockId, ClassId, EnumId, FieldIndex, FuncId, LocalId, OpId, QueueId, SupervisorId, VariantIndex,
};
use crate::ops::OpKind;
use crate::types::Type;

/// The text format's version; the first line of every Low file is `nagi-low 1`.
pub const FORMAT_VERSION: u32 = 1;

/// One Low module: what one `.low` file (or one lowered `.nagi` file) holds.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Module {
    /// The module's name, from its `module NAME` line.
    pub name: String,
    /// Classes in declaration order.
    pub classes: Arena<ClassData>,
    /// Enums in declaration order. Classes and enums share one namespace.
    pub enums: Arena<EnumData>,
    /// Functions in declaration order.
    pub functions: Arena<FunctionData>,
    /// `table` bindings of classes to SQLite tables, in declaration order.
    pub tables: Vec<TableDecl>,
    /// `config` values, in declaration order; `config.*` rows read them by position.
    pub configs: Vec<ConfigDecl>,
    /// `route` bindings of HTTP method and path to handler functions, in declaration order.
    pub routes: Vec<RouteDecl>,
    /// Supervisors, in declaration order; a nested one is declared before its parent
    /// (docs/low.md §8.3), so a [`ChildKind::Supervisor`] names an earlier id.
    pub supervisors: Arena<SupervisorDecl>,
    /// Durable job queues, in declaration order (docs/low.md §8.5).
    pub queues: Arena<QueueDecl>,
}

impl Module {
    /// An empty module called `name`.
    pub fn new(name: impl Into<String>) -> Module {
        Module { name: name.into(), ..Module::default() }
    }

    /// The class called `name`, if any.
    pub fn class_by_name(&self, name: &str) -> Option<ClassId> {
        self.classes.iter().find(|(_, c)| c.name == name).map(|(id, _)| id)
    }

    /// The enum called `name`, if any.
    pub fn enum_by_name(&self, name: &str) -> Option<EnumId> {
        self.enums.iter().find(|(_, e)| e.name == name).map(|(id, _)| id)
    }

    /// Whether the module is a service, which the runtime serves: it has routes, or job queues
    /// and no `$main`. A test build keeps its program's queues beside the `$main` that runs its
    /// tests, which may push jobs (no worker runs them there).
    pub fn is_service(&self) -> bool {
        !self.routes.is_empty() || (!self.queues.is_empty() && self.function_by_name("main").is_none())
    }

    /// The function called `name` (without the `$` sigil), if any.
    pub fn function_by_name(&self, name: &str) -> Option<FuncId> {
        self.functions.iter().find(|(_, f)| f.name == name).map(|(id, _)| id)
    }

    /// The supervisor called `name`, if any.
    pub fn supervisor_by_name(&self, name: &str) -> Option<SupervisorId> {
        self.supervisors.iter().find(|(_, s)| s.name == name).map(|(id, _)| id)
    }

    /// The queue called `name`, if any.
    pub fn queue_by_name(&self, name: &str) -> Option<QueueId> {
        self.queues.iter().find(|(_, q)| q.name == name).map(|(id, _)| id)
    }
}

/// A class: a named record of fields, owned by value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassData {
    pub name: String,
    /// Fields in declaration order; [`FieldIndex`] indexes this list.
    pub fields: Vec<FieldData>,
}

impl ClassData {
    /// The index of the field called `name`, if any.
    pub fn field_index(&self, name: &str) -> Option<FieldIndex> {
        self.fields.iter().position(|f| f.name == name).map(|i| i as FieldIndex)
    }
}

/// One field of a class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldData {
    pub name: String,
    pub ty: Type,
}

/// An enum: a value that is one of its variants, each carrying at most one payload value. A
/// variant's position in `variants` is its tag ([`VariantIndex`]); docs/low.md gives the
/// layout both emitters use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumData {
    pub name: String,
    /// Variants in declaration order; there is at least one.
    pub variants: Vec<VariantData>,
}

impl EnumData {
    /// The index of the variant called `name`, if any.
    pub fn variant_index(&self, name: &str) -> Option<VariantIndex> {
        self.variants.iter().position(|v| v.name == name).map(|i| i as VariantIndex)
    }
}

/// One variant of an enum: its name and the type of its payload, if it carries one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantData {
    pub name: String,
    pub payload: Option<Type>,
}

/// `table NAME: Class key FIELD`: the rows of SQLite table `NAME` are values of `Class`, and
/// `FIELD` is its primary key. The runtime creates the table at start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDecl {
    pub name: String,
    pub class: ClassId,
    pub key: FieldIndex,
}

/// `config NAME: TYPE env "VAR" [secret] [default "TEXT"]`: a value of the program's
/// configuration (docs/low.md §5.5), bound once at start from the environment variable `VAR`, or
/// from `TEXT` when `VAR` is unset; without a default the value is required. `TYPE` is
/// `String`, `i64`, `f64`, `bool` or `Duration`; only a `String` may be `secret` (never shown in
/// an error, `--help` or the log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigDecl {
    pub name: String,
    pub ty: Type,
    pub env: String,
    pub secret: bool,
    pub default: Option<String>,
}

/// An HTTP method a route answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HttpMethod {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl HttpMethod {
    /// All methods, in table order.
    pub const ALL: [HttpMethod; 5] =
        [HttpMethod::Get, HttpMethod::Post, HttpMethod::Put, HttpMethod::Patch, HttpMethod::Delete];

    /// The method as written in Low and on the wire (`GET`, …).
    pub fn name(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Delete => "DELETE",
        }
    }

    /// The status of a route's successful answer: 204 No Content (and no body) for a handler
    /// without a result, else 201 for `POST` and 200 otherwise.
    pub fn success_status(self, has_result: bool) -> u16 {
        match (has_result, self) {
            (false, _) => 204,
            (true, HttpMethod::Post) => 201,
            (true, _) => 200,
        }
    }

    /// The method spelled `name`, if any.
    pub fn from_name(name: &str) -> Option<HttpMethod> {
        HttpMethod::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// `route METHOD "PATH" $handler [headers(a, b)]`: requests matching method and path are
/// answered by calling the handler. Path parameters are written `{name}` and bind the handler
/// parameter of that name; a parameter called `body` of class type is the decoded JSON request
/// body; the parameters listed in `headers` come from request headers ([`RouteDecl::header_name`]);
/// other parameters are query parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteDecl {
    pub method: HttpMethod,
    pub path: String,
    pub handler: FuncId,
    /// The handler's parameters bound from request headers, in declaration order.
    pub headers: Vec<String>,
}

/// A durable job queue (docs/low.md §8.5): `queue NAME $handler workers N max_attempts M
/// backoff Ams Bms`, and for a scheduled job ` every Pms` or ` cron "…"`. The handler is bound
/// as a route's is: `%body` (an owned class) is the job, and an `i64` parameter `%attempt`, if
/// it has one, the attempt's number from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueDecl {
    pub name: String,
    pub handler: FuncId,
    /// How many attempts of the queue run at once.
    pub workers: u32,
    /// How many attempts a job gets before it is dead-lettered.
    pub max_attempts: u32,
    /// The delay after a first failed attempt and the longest delay, in milliseconds.
    pub backoff_ms: (u64, u64),
    /// When the runtime pushes a job on its own: the ticks of a scheduled job, whose job is the
    /// tick's time (`{"at": "<RFC 3339>"}`).
    pub schedule: Option<Schedule>,
}

/// The ticks of a scheduled job (docs/low.md §8.6), in UTC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Every multiple of this many milliseconds since 1970-01-01T00:00:00Z.
    Every { ms: u64 },
    /// The minutes a five-field cron expression (minute hour day-of-month month day-of-week)
    /// names.
    Cron(String),
}

impl Schedule {
    /// Why the schedule cannot run: a period of zero, or a cron expression that is not five
    /// fields the `croner` crate (the runtime's parser) reads.
    pub fn problem(&self) -> Option<String> {
        match self {
            Schedule::Every { ms: 0 } => Some("a schedule's period is at least 1ms".into()),
            Schedule::Every { .. } => None,
            Schedule::Cron(text) if text.split_whitespace().count() != 5 => Some(format!(
                "{text:?} is not a cron expression of five fields (minute hour day-of-month month day-of-week)"
            )),
            Schedule::Cron(text) => <croner::Cron as std::str::FromStr>::from_str(text)
                .err()
                .map(|e| format!("{text:?} is not a cron expression: {e}")),
        }
    }
}

impl QueueDecl {
    /// The route an attempt's request would take (`POST /queues/NAME`): the one the runtime
    /// hands the handler, so that both emitters bind its parameters exactly as a route's.
    pub fn as_route(&self) -> RouteDecl {
        RouteDecl {
            method: HttpMethod::Post,
            path: format!("/queues/{}", self.name),
            handler: self.handler,
            headers: Vec::new(),
        }
    }
}

/// A supervisor: its rules and its children (docs/low.md §8.3). The supervisors that are no
/// other's child are the trees the runtime starts, in declaration order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupervisorDecl {
    pub name: String,
    pub strategy: Strategy,
    /// How many restarts `period_ms` may see before the supervisor gives up.
    pub intensity: u32,
    /// The sliding window of restarts, in milliseconds.
    pub period_ms: u64,
    /// The backoff before a restart, from its minimum to its maximum, in milliseconds.
    pub backoff_ms: (u64, u64),
    pub children: Vec<ChildDecl>,
}

/// Which children a crash restarts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    OneForOne,
    OneForAll,
}

impl Strategy {
    /// The spelling in Low and High: `one_for_one`, `one_for_all`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::OneForOne => "one_for_one",
            Strategy::OneForAll => "one_for_all",
        }
    }
}

/// A child of a supervisor, named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildDecl {
    pub name: String,
    pub kind: ChildKind,
}

/// An actor (its state function and mailbox) or a nested supervisor (declared earlier than
/// its parent, so its id is the smaller).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChildKind {
    Actor { init: FuncId, capacity: u32 },
    Supervisor(SupervisorId),
}

impl Module {
    /// Whether supervisor `id` is the child of another, so that it is not a tree of its own.
    pub fn is_nested_supervisor(&self, id: SupervisorId) -> bool {
        self.supervisors.values().any(|s| s.children.iter().any(|c| c.kind == ChildKind::Supervisor(id)))
    }

    /// The name of the actor whose state `init` makes: its state class's (what the runtime
    /// names it in failures and logs); empty when `init` makes no class, which V251 reports.
    pub fn actor_name(&self, init: FuncId) -> &str {
        use crate::entities::ArenaGet;
        match self.functions.get(init).map(|f| &f.ret) {
            Some(Type::Class(c)) => self.classes.get(*c).map_or("", |c| c.name.as_str()),
            _ => "",
        }
    }

    /// The supervisors that are no other's child (the trees the runtime starts), in order.
    pub fn supervisor_trees(&self) -> Vec<SupervisorId> {
        self.supervisors.iter().map(|(id, _)| id).filter(|&id| !self.is_nested_supervisor(id)).collect()
    }
}

/// Where the runtime takes a route handler's parameter from; the rule of [`RouteDecl`], in one
/// place for both emitters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamSource {
    /// `{name}` in the path.
    Path,
    /// `?name=` in the query, required.
    Query,
    /// `?name=` in the query, which may be absent: the parameter's type is `Option<T>`.
    OptionalQuery,
    /// The JSON request body: the parameter called `body`, of class type.
    Body,
    /// A request header, required.
    Header,
    /// A request header which may be absent: the parameter's type is `Option<T>`.
    OptionalHeader,
}

impl RouteDecl {
    /// The number of the HTTP status a successful answer has, for a handler returning `ret`:
    /// 204 No Content (and no body) for a handler without a result, else 201 for `POST` and 200
    /// otherwise.
    pub fn success_status(&self, ret: &Type) -> u16 {
        // A handler without a result that may fail returns `Option<unit>`.
        let has_result = !matches!(ret, Type::Unit) && !matches!(ret, Type::Option(inner) if **inner == Type::Unit);
        self.method.success_status(has_result)
    }

    /// The header a header parameter is read from: its name with `_` written `-`
    /// (`x_request_id` reads `x-request-id`). Header names are case-insensitive; this one is
    /// lower case, as HTTP/2 and hyper write them.
    pub fn header_name(param: &str) -> String {
        param.to_ascii_lowercase().replace('_', "-")
    }

    /// Where the parameter `name` of type `ty` of this route's handler comes from.
    pub fn param_source(&self, name: &str, ty: &Type) -> ParamSource {
        ParamSource::of(&self.headers, &self.path, name, matches!(ty, Type::Option(_)), matches!(ty, Type::Class(_)))
    }
}

impl ParamSource {
    /// Where a route's handler parameter `name` comes from, given the route's header
    /// parameters and path, and whether the parameter's type is an option or a class: the rule
    /// of [`RouteDecl`], which the compiler's API description also follows.
    pub fn of(headers: &[String], path: &str, name: &str, is_option: bool, is_class: bool) -> ParamSource {
        if headers.iter().any(|h| h == name) {
            if is_option { ParamSource::OptionalHeader } else { ParamSource::Header }
        } else if path.contains(&format!("{{{name}}}")) {
            ParamSource::Path
        } else if name == "body" && is_class {
            ParamSource::Body
        } else if is_option {
            ParamSource::OptionalQuery
        } else {
            ParamSource::Query
        }
    }
}

/// One function: its signature and the arenas of its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionData {
    /// The name, without the `$` sigil.
    pub name: String,
    /// Whether the function is `async`: it may `await`, and every call to it must be awaited.
    pub is_async: bool,
    /// The parameters, which are the first `params.len()` locals, in order.
    pub params: Vec<LocalId>,
    /// The result type (`unit` for none).
    pub ret: Type,
    /// Parameters, then declared locals.
    pub locals: Arena<LocalData>,
    /// Every block of the body, the body block first.
    pub blocks: Arena<BlockData>,
    /// Every operation of the body, in pre-order.
    pub ops: Arena<OpData>,
    /// Every loop and block label, in the order they are declared.
    pub labels: Arena<LabelData>,
    /// The outermost block.
    pub body: BlockId,
}

impl FunctionData {
    /// A function with no parameters, no locals and an empty body.
    pub fn new(name: impl Into<String>, ret: Type) -> FunctionData {
        let mut blocks = Arena::new();
        let body = blocks.alloc(BlockData::default());
        FunctionData {
            name: name.into(),
            is_async: false,
            params: Vec::new(),
            ret,
            locals: Arena::new(),
            blocks,
            ops: Arena::new(),
            labels: Arena::new(),
            body,
        }
    }

    /// The type of `local`.
    pub fn local_type(&self, local: LocalId) -> &Type {
        &self.locals[local].ty
    }

    /// The types of the parameters, in order.
    pub fn param_types(&self) -> impl Iterator<Item = &Type> {
        self.params.iter().map(|p| &self.locals[*p].ty)
    }

    /// The local called `name` (without the `%` sigil), if any.
    pub fn local_by_name(&self, name: &str) -> Option<LocalId> {
        self.locals.iter().find(|(_, l)| l.name == name).map(|(id, _)| id)
    }
}

/// A parameter or local variable. Locals are mutable and function-scoped; the verifier
/// checks that each is assigned before use and not used after it is moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalData {
    /// The name, without the `%` sigil; lowering keeps the High variable's name.
    pub name: String,
    pub ty: Type,
}

/// An ordered list of operations.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct BlockData {
    pub ops: Vec<OpId>,
}

/// A label that `break` and `continue` name; declared by a `loop`, `for` or `block` operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelData {
    /// The name, without the `@` sigil.
    pub name: String,
}

/// One operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpData {
    pub kind: OpKind,
}

impl From<OpKind> for OpData {
    fn from(kind: OpKind) -> OpData {
        OpData { kind }
    }
}

/// The trap message of `enum.get` and `enum.ref` on a value holding another variant than
/// `variant` of the enum type `ty`: `enum value is not Role.Member`. Every executor traps with
/// it, so that the message is the same on all of them.
pub fn enum_mismatch_message(module: &Module, ty: &Type, variant: VariantIndex) -> String {
    use crate::entities::ArenaGet;
    let Type::Enum(e) = ty else { return "enum value has the wrong variant".to_string() };
    match module.enums.get(*e) {
        Some(data) => {
            let name = data.variants.get(variant as usize).map_or("?", |v| v.name.as_str());
            format!("enum value is not {}.{name}", data.name)
        }
        None => "enum value has the wrong variant".to_string(),
    }
}
