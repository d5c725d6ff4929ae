//! The Low verifier: the rules a module must satisfy before a pass or an emitter may rely on it.
//!
//! [`verify`] checks a whole module and [`verify_function`] one function (for tools that
//! replace single functions). Both collect every error rather than stopping at the first, in a
//! deterministic order: module-level checks first, then each function in arena order; inside a
//! function, its signature and local declarations, then its operations in pre-order (text
//! order, each operation's type errors before its flow errors), and "control reaches the end of
//! the function" last. A message names the function (`in $f: …`), says what is wrong and what
//! was expected; the span is the operation's (or the local's, or the function's) when the
//! module came from text, and the label is the operation as the printer writes it.
//!
//! No input makes the verifier panic or overflow the stack: every id is range-checked before it
//! is used (a hand-edited file or a buggy pass can hold any id), and nested blocks are walked
//! with explicit stacks, so nesting depth is bounded by memory only.
//!
//! # Checklist
//!
//! Module ([`verify`] only):
//! - V201 Names are unique: classes, functions and tables in the module, fields within a class.
//! - V202 No class field type holds a reference (docs/design.md §4).
//! - V203 Every class a type names exists (fields, and in functions: locals, results,
//!   `new`, `rtcall` class arguments).
//! - V204 Tables: the class exists, the key field index is in range, and the key field is
//!   `i32`, `i64`, `String` or `Uuid`.
//! - V205 Routes: the handler exists; every `{name}` in the path is a parameter of the handler;
//!   every name in `headers(…)` is a parameter of the handler, neither `body` nor a path
//!   parameter; a parameter called `body` is an owned class; every other parameter is `i32`,
//!   `i64`, `f64`, `bool`, `String` or an `Option` of one. (That the handler's result holds no reference is
//!   V202 on the handler's signature.)
//! - V206 No two routes share a method and path.
//!
//! Function signature and locals:
//! - V201 Local names and label names are unique within the function.
//! - V207 The parameters are exactly the first `params.len()` locals, in order.
//! - V208 A function called `main` takes no parameters and returns `unit`. (It may be async: the
//!   program then runs with a database, the module's tables in a fresh in-memory SQLite.)
//! - V202 The result type holds no reference; a local's type holds a reference only at its root
//!   (`&T` and `&mut T` are fine, `[&T]`, `Option<&T>` and `&&T` are not).
//!
//! Structure (every id in range, the body a tree):
//! - V210 Every id is in range: locals, functions, classes named by operations, blocks, labels,
//!   operations listed in blocks, and the body block.
//! - V211 Every block is owned by at most one operation (the body by none), and every operation
//!   is listed in at most one block, once. This also rules out cycles.
//! - V212 Every label is declared by at most one `loop`, `for` or `block`.
//! - V213 `break @l` names an enclosing `loop`, `for` or `block`; `continue @l` names an
//!   enclosing `loop` or `for`.
//!
//! Operations (an operand's type is its local's declared type or its constant's type):
//! - V220 Operand and destination types are what the operation takes and produces: `const`,
//!   `copy`, unary and binary arithmetic (`dest` is `bool` for comparisons, `Option<T>` for
//!   `checked_*`), `cast` (numeric to numeric), `call` (each argument's type equals the
//!   parameter's exactly, so a `&mut` argument is not accepted for a `&` parameter), `rtcall`
//!   (per [`crate::runtime::RtType::accepts`]), `new`, `field.*`, `array.*` (index `i64`),
//!   `string`, `str.*` (operands `String` or a reference to one), `option.*`, `move`, `clone`,
//!   `borrow` (of an owned value, or of a `&mut T` as a `&T` reborrow), `load`, `store`, `if`
//!   (condition `bool`), `for` over a range (variable and bounds the same `i32` or `i64`) or
//!   over an array (`[T]`, `&[T]` or `&mut [T]`; the variable is `T` for copy `T`, else `&T`),
//!   and the value of `return`.
//! - V221 An arithmetic or cast operation is defined at its suffix type: `neg` and `abs` at
//!   `i32 i64 f64`; `not` at `i32 i64 bool`; `add sub mul div rem min max lt le gt ge` at
//!   `i32 i64 f64`; `and or xor` at `i32 i64 bool`; `shl shr checked_*` at `i32 i64`; `eq ne`
//!   at every scalar; `cast` to `i32 i64 f64`.
//! - V222 Operand counts: a call passes as many arguments as the callee has parameters (an
//!   `rtcall` at least as many as the fixed parameters of a variadic row), `new` gives
//!   one value per field, and `str.concat` has at least one part.
//! - V223 A call without a destination calls a function that returns `unit`.
//! - V224 A call is awaited exactly when its callee (or runtime row) is async.
//! - V225 `await` appears only in async functions.
//! - V226 An `rtcall` has a class argument exactly when its runtime row is generic.
//! - V227 A field index is in range for the object's class.
//! - V228 Mutation goes through an owned value or a `&mut`: `field.set`, `field.ref_mut`,
//!   `array.set`, `array.push`, `array.ref_mut` and `store`.
//! - V229 Copy-ness: `copy`, `field.get`, `array.get` and `load` read copy types; `move` and
//!   `drop` take non-copy types.
//! - V230 `return` has a value exactly when the function's result is not `unit` (`return unit`
//!   is also accepted in a `unit` function).
//!
//! Flow (a dataflow over the structured body: each local is unassigned, live or moved on each
//! path; `if` joins its arms, loops iterate to a fixpoint, and after `break`, `continue`,
//! `return` and `trap` nothing is reachable, so unreachable operations raise no flow errors):
//! - V240 Every local is definitely assigned where it is read (parameters start assigned).
//! - V241 No local is read after it was moved (on any path): a consuming read (an argument for
//!   an owned parameter, a `new` field, the value of `array.set`, `array.push`, `field.set`,
//!   `store` and `option.some`, the operand of `move`, `drop` and `option.unwrap`, the value of
//!   `return`) moves a local of non-copy type; copy-type locals are never moved. A reference
//!   local becomes unusable when a local it may borrow from (computed flow-insensitively
//!   through `borrow`, `field.ref`, `array.ref`, `for` and `copy`) is moved, dropped,
//!   reassigned, or changed in place through the owner (`array.push`, `array.set`,
//!   `field.set`, `store`, or lent out mutably by `borrow_mut`, `field.ref_mut`,
//!   `array.ref_mut`). Only the first bad read of a local is reported until it is assigned
//!   again.
//! - V242 No assignment overwrites a non-copy local that may still own a value.
//! - V243 At each `return`, no non-copy local (owned parameters included) may still own a
//!   value, except the one returned.
//! - V244 In one `call` or `rtcall`, a `&mut` argument is the only argument that may reach its
//!   value: no other argument is a reference that may borrow from the same local (or derive
//!   from the same reference parameter), the same `&mut` local is not passed twice, and no
//!   argument moves a local that a reference argument borrows from.
//! - V245 Control never reaches the end of the body: every path ends in `return` or `trap`, or
//!   loops forever (a `loop` that nothing breaks out of never exits).
//! - V246 No array is changed in place (through its owner or through a reference into it)
//!   inside the body of a `for` that iterates over it.
//! - V247 At each `await` (once the call has taken its arguments), every non-copy local
//!   either owns a value on every path or on none: an async function's pending frame must know,
//!   from where it is suspended alone, which values a cancellation drops
//!   ([`suspensions`]).
//! - V248 `db.exec_commit` (a statement that commits its request's transaction) appears only
//!   in a route handler that no function calls and whose result is not an option, and only
//!   where nothing after it can fail: [`crate::commit::final_statements`].
//! - V249 A `Scope` or `Task<T>` is only ever the whole type of a local of an async function:
//!   no parameter, result, class field, payload, array, option or map holds one, so a task
//!   handle never leaves the function whose scope owns the task.
//! - V250 Nothing crosses a task boundary by reference: `scope.spawn` starts an async
//!   function whose parameters hold no reference (and no scope or task), with owned arguments;
//!   `actor.call` and `actor.send` pass owned arguments to their handler.
//! - V251 Actors fit together: `actor.start` names a plain function without parameters that
//!   returns a class `C`, with a mailbox of 1 to 2^20 messages, and gives an `Actor<C>`; a
//!   handler of `actor.call` or `actor.send` is a plain function whose first parameter is
//!   `&mut C`; an `Actor<C>` is only ever the whole type of a local, a parameter or a result,
//!   never held by a field, payload, array, option or map.
//! - V252 Supervisors fit together: each nested supervisor is declared before its one parent,
//!   the backoff's minimum is not above its maximum, the period is positive, and a
//!   `supervisor.child` path starts at a tree (a supervisor that is no other's child) and ends
//!   at an actor, whose handle it gives.
//! - V253 Deferred calls fit together: `defer.new` calls a plain function whose parameters hold
//!   no reference, and a `Defer` is only ever the whole type of a local that is not a
//!   parameter, never cloned.
//! - V254 Job queues fit together: unique names, a handler taking `%body` (a class) and
//!   optionally `%attempt: i64`, 1 to 1024 workers, at least 1 attempt, a backoff whose minimum
//!   is not above its maximum; `queue.push` names a queue, pushes its job class with an `i64`
//!   delay and gives an `i64`, in an async function.
//! - V255 Configuration fits together: each `config` value has a unique name and variable, a
//!   type of `String`, `i64`, `f64`, `bool` or `Duration`, is `secret` only as a `String`; a
//!   `config.*` row reads an `i64` constant position whose value has the row's type.
//!
//! The flow checks run only on a function whose body passed the structure checks on blocks
//! and operations (V210 for them, V211), since they walk the body as a tree.
//!
//! # Not yet checked
//!
//! - Changes made through a reference do not invalidate other references to the same value
//!   (only changes through the owning local do), and reads of an owned local while a `&mut`
//!   borrow of it is live are not reported.
//! - Reborrows are tracked per local, not per path: a reference local that borrows from
//!   different locals at different points is treated as borrowing from all of them.
//! - Dead arena entries: an operation that no block lists, or a block no operation owns, is
//!   ignored (passes cannot delete arena entries) and the printer does not print it; a label
//!   no operation declares is ignored likewise.
//! - String contents (`string` literals, `trap` messages, route paths beyond `{…}`) and
//!   identifier spelling; the parser owns the text form.
//! - Recursion and reachability between functions, and whether `main` exists at all.

mod flow;
mod queues;
mod structure;
mod supervisors;
#[cfg(test)]
mod tests;
mod types;

use std::collections::BTreeMap;
use std::fmt;

use crate::diagnostic::Diagnostic;
use crate::entities::{ArenaGet, FuncId, LocalId, OpId, index};
use crate::module::{FunctionData, LocalData, Module};
use crate::ops::OpKind;
use crate::printer::print_op_head;
use crate::source::{SourceMap, Span};
use crate::types::Type;

/// The diagnostic codes, one per kind of check; the module doc's checklist says what each
/// one checks.
mod code {
    pub const DUPLICATE_NAME: &str = "V201";
    pub const REFERENCE_NOT_ALLOWED: &str = "V202";
    pub const UNKNOWN_CLASS: &str = "V203";
    pub const BAD_TABLE: &str = "V204";
    pub const BAD_ROUTE: &str = "V205";
    pub const DUPLICATE_ROUTE: &str = "V206";
    pub const BAD_PARAMS: &str = "V207";
    pub const BAD_MAIN: &str = "V208";
    pub const INVALID_ID: &str = "V210";
    pub const NOT_A_TREE: &str = "V211";
    pub const LABEL_REDECLARED: &str = "V212";
    pub const BAD_JUMP: &str = "V213";
    pub const TYPE_MISMATCH: &str = "V220";
    pub const UNDEFINED_AT_TYPE: &str = "V221";
    pub const OPERAND_COUNT: &str = "V222";
    pub const DISCARDED_RESULT: &str = "V223";
    pub const AWAIT_MISMATCH: &str = "V224";
    pub const AWAIT_OUTSIDE_ASYNC: &str = "V225";
    pub const CLASS_ARGUMENT: &str = "V226";
    pub const FIELD_INDEX: &str = "V227";
    pub const NOT_MUTABLE: &str = "V228";
    pub const COPY_KIND: &str = "V229";
    pub const RETURN_VALUE: &str = "V230";
    pub const UNASSIGNED_READ: &str = "V240";
    pub const USE_AFTER_MOVE: &str = "V241";
    pub const OVERWRITE: &str = "V242";
    pub const LEAK_AT_RETURN: &str = "V243";
    pub const MUT_ALIAS: &str = "V244";
    pub const MISSING_RETURN: &str = "V245";
    pub const MUTATED_WHILE_ITERATED: &str = "V246";
    pub const MAYBE_LIVE_AT_AWAIT: &str = "V247";
    pub const EARLY_COMMIT: &str = "V248";
    pub const TASK_HANDLE_PLACE: &str = "V249";
    pub const TASK_BOUNDARY: &str = "V250";
    pub const ACTOR_MESSAGE: &str = "V251";
    pub const SUPERVISOR: &str = "V252";
    pub const DEFER: &str = "V253";
    pub const QUEUE: &str = "V254";
    pub const CONFIG: &str = "V255";
}

/// Checks every rule of the module doc's checklist on `module`.
///
/// `source` is the [`SourceMap`] the parser produced alongside the module, if it came from
/// text; with it, diagnostics carry spans. Returns every error found, in a deterministic
/// order (module-level checks, then functions in arena order, each function's operations in
/// text order). Never panics, whatever ids the module holds.
pub fn verify(module: &Module, source: Option<&SourceMap>) -> Result<(), Vec<Diagnostic>> {
    let mut diagnostics = check_module(module, source);
    for (id, _) in module.functions.iter() {
        diagnostics.extend(verify_function(module, id, source));
    }
    if diagnostics.is_empty() { Ok(()) } else { Err(diagnostics) }
}

/// Checks one function of `module`: its signature, its locals, every operation's types and the
/// flow rules, but none of the module-level rules (names across the module, classes, tables
/// and routes). For tools that replace or re-check single functions. Returns the errors in
/// text order; empty means the function is well formed.
pub fn verify_function(module: &Module, func: FuncId, source: Option<&SourceMap>) -> Vec<Diagnostic> {
    let Some(data) = module.functions.get(func) else {
        return vec![Diagnostic::new(
            code::INVALID_ID,
            format!(
                "function #{} does not exist; module {} has {} functions",
                index(func),
                module.name,
                module.functions.len()
            ),
        )];
    };
    let mut cx = FnCx::new(module, func, data, source);
    check_signature(&mut cx);
    check_locals(&mut cx);
    if let Some(tree) = structure::walk(&mut cx) {
        flow::check(&mut cx, &tree);
    }
    cx.finish()
}

/// One `await` of an async function and the owned (non-copy, non-reference) locals that hold a
/// value while it is pending: after the call took its arguments, before its result is
/// written. A cancelled frame suspended there drops exactly these (and the pending callee).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suspension {
    /// The awaited `call` or `rtcall`.
    pub op: OpId,
    /// The locals that own a value there, in arena order.
    pub live: Vec<LocalId>,
}

/// Every reachable `await` of function `func`, in text order, with what its frame owns while
/// it is pending (see [`Suspension`]). The same flow analysis as the verifier's ownership
/// checks computes it, so the two cannot disagree about which values are live.
///
/// Errors: the function does not verify (the first diagnostic).
pub fn suspensions(module: &Module, func: FuncId) -> Result<Vec<Suspension>, Diagnostic> {
    let Some(data) = module.functions.get(func) else {
        return Err(Diagnostic::new(code::INVALID_ID, format!("function #{} does not exist", index(func))));
    };
    let mut cx = FnCx::new(module, func, data, None);
    let Some(tree) = structure::walk(&mut cx) else {
        return Err(cx
            .finish()
            .into_iter()
            .next()
            .unwrap_or_else(|| Diagnostic::new(code::NOT_A_TREE, "malformed body")));
    };
    let found = flow::suspensions(&mut cx, &tree);
    match cx.finish().into_iter().next() {
        Some(error) => Err(error),
        None => Ok(found),
    }
}

/// The key that orders function-level diagnostics (signature, locals) before any operation's.
const KEY_FUNCTION: u32 = 0;
/// The key that orders end-of-function diagnostics after every operation's.
const KEY_END: u32 = u32::MAX;

/// What the checks of one function share: the function, where to report, and the order in
/// which diagnostics are finally given.
struct FnCx<'a> {
    module: &'a Module,
    id: FuncId,
    func: &'a FunctionData,
    source: Option<&'a SourceMap>,
    /// For each operation, one plus its position in the body's pre-order, or 0 while it has
    /// not been reached; diagnostics are sorted by it so they come out in text order even
    /// though the type and flow checks run as separate walks.
    order: Vec<u32>,
    diagnostics: Vec<(u32, Diagnostic)>,
}

impl<'a> FnCx<'a> {
    fn new(module: &'a Module, id: FuncId, func: &'a FunctionData, source: Option<&'a SourceMap>) -> FnCx<'a> {
        FnCx { module, id, func, source, order: vec![0; func.ops.len()], diagnostics: Vec::new() }
    }

    /// The diagnostics, in order: function-level first, then by operation in text order,
    /// then end-of-function; the sort is stable, so one operation's errors keep the order in
    /// which the checks found them.
    fn finish(mut self) -> Vec<Diagnostic> {
        self.diagnostics.sort_by_key(|(key, _)| *key);
        self.diagnostics.into_iter().map(|(_, d)| d).collect()
    }

    fn message(&self, message: impl fmt::Display) -> String {
        format!("in ${}: {message}", self.func.name)
    }

    fn function_span(&self) -> Option<Span> {
        self.source.and_then(|s| s.function(self.id))
    }

    /// A diagnostic about the whole function, ordered before its operations'.
    fn error(&mut self, code: &'static str, message: impl fmt::Display) {
        let d = Diagnostic::new(code, self.message(message)).at(self.function_span());
        self.diagnostics.push((KEY_FUNCTION, d));
    }

    /// A diagnostic about a local's declaration, ordered before the operations'.
    fn local_error(&mut self, code: &'static str, local: LocalId, message: impl fmt::Display) {
        let span = self.source.and_then(|s| s.local(self.id, local)).or_else(|| self.function_span());
        let d = Diagnostic::new(code, self.message(message)).at(span);
        self.diagnostics.push((KEY_FUNCTION, d));
    }

    /// A diagnostic about operation `op`, not yet recorded.
    fn op_diagnostic(&self, code: &'static str, op: OpId, message: impl fmt::Display) -> (u32, Diagnostic) {
        let key = self.order.get(index(op)).copied().unwrap_or(KEY_FUNCTION);
        let span = self.source.and_then(|s| s.op(self.id, op));
        let mut d = Diagnostic::new(code, self.message(message)).at(span);
        d.label = op_label(self.module, self.func, op);
        (key, d)
    }

    /// Records a diagnostic about operation `op`.
    fn op_error(&mut self, code: &'static str, op: OpId, message: impl fmt::Display) {
        let d = self.op_diagnostic(code, op, message);
        self.diagnostics.push(d);
    }

    /// A diagnostic ordered after every operation's, not yet recorded.
    fn end_diagnostic(&self, code: &'static str, message: impl fmt::Display) -> (u32, Diagnostic) {
        (KEY_END, Diagnostic::new(code, self.message(message)).at(self.function_span()))
    }

    fn local(&self, local: LocalId) -> Option<&'a LocalData> {
        self.func.locals.get(local)
    }

    /// The declared type of `local`, or `None` when the id is out of range.
    fn ty(&self, local: LocalId) -> Option<&'a Type> {
        self.local(local).map(|l| &l.ty)
    }

    /// `%name` for messages; a placeholder for an out-of-range id.
    fn name(&self, local: LocalId) -> String {
        match self.local(local) {
            Some(l) => format!("%{}", l.name),
            None => format!("%<invalid local #{}>", index(local)),
        }
    }

    /// The text spelling of `ty`.
    fn show(&self, ty: &Type) -> String {
        ty.display(self.module).to_string()
    }
}

/// The printed first line of `op`, or a placeholder when printing it would look up an id that
/// is out of range (the printer indexes labels and classes directly).
fn op_label(module: &Module, func: &FunctionData, op: OpId) -> Option<String> {
    let kind = &func.ops.get(op)?.kind;
    let printable = match kind {
        OpKind::New { class, .. } | OpKind::RuntimeCall { class: Some(class), .. } => {
            module.classes.get(*class).is_some()
        }
        _ => kind.label().is_none_or(|label| func.labels.get(label).is_some()),
    };
    Some(if printable {
        print_op_head(module, func, op)
    } else {
        format!("{} (with an id out of range)", mnemonic(kind))
    })
}

/// The mnemonic of an operation as written in the text, with its type suffix where it has one
/// (`add.i64`, `cast.f64`, `rtcall print.i64`).
fn mnemonic(kind: &OpKind) -> String {
    match kind {
        OpKind::Unary { op, ty, .. } => format!("{}.{}", op.name(), ty.name()),
        OpKind::Binary { op, ty, .. } => format!("{}.{}", op.name(), ty.name()),
        OpKind::Cast { to, .. } => format!("cast.{}", to.name()),
        OpKind::RuntimeCall { func, .. } => format!("rtcall {}", func.name()),
        other => other.opcode().map_or("?", |o| o.name()).to_string(),
    }
}

/// Where an actor handle may be, for V251's messages.
const ACTOR_PLACES: &str =
    "an actor handle is only ever the whole type of a local, a parameter or a result (clone it to share it)";

/// Where a `Defer` may be, for V253's messages.
const DEFER_PLACES: &str = "a Defer is only ever the whole type of a local that is not a parameter";

/// What a walk over a type tree found. Types are walked with an explicit stack, since a
/// hand-written type may nest deeply.
#[derive(Default)]
struct TypeScan {
    /// A reference at the root of the type.
    root_ref: bool,
    /// A reference below the root (`[&T]`, `Option<&T>`, `&&T`).
    nested_ref: bool,
    /// A `Scope` or `Task<T>` at the root of the type.
    root_task: bool,
    /// A `Scope` or `Task<T>` below the root (`[Task<i64>]`, `&Scope`).
    nested_task: bool,
    /// An `Actor<C>` at the root of the type.
    root_actor: bool,
    /// An `Actor<C>` below the root (`[Actor<C>]`, `Option<Actor<C>>`; `&Actor<C>` is a borrow
    /// of a whole local and allowed).
    nested_actor: bool,
    /// A `Defer` anywhere in the type, at its root or below it.
    defer: bool,
    /// A `Defer` below the root (`[Defer]`, `&Defer`).
    nested_defer: bool,
    /// Class and enum ids that are out of range, in the order found, each described as
    /// "class #3, which does not exist; the module has 2 classes".
    unknown_classes: Vec<String>,
}

impl TypeScan {
    /// The rules a value of the scanned type breaks when a class field or an enum payload holds
    /// it, with why: a scope or task (V249) and an actor handle (V251) are never held by value.
    fn handles_held(&self) -> impl Iterator<Item = (&'static str, &'static str)> {
        let task = (self.root_task || self.nested_task)
            .then_some((code::TASK_HANDLE_PLACE, "only a local of an async function holds a scope or a task"));
        let actor = (self.root_actor || self.nested_actor).then_some((code::ACTOR_MESSAGE, ACTOR_PLACES));
        let defer = self.defer.then_some((code::DEFER, DEFER_PLACES));
        task.into_iter().chain(actor).chain(defer)
    }
}

fn scan_type(module: &Module, ty: &Type) -> TypeScan {
    let mut scan = TypeScan::default();
    let mut stack = vec![(ty, true)];
    while let Some((t, root)) = stack.pop() {
        match t {
            Type::Ref { pointee, .. } => {
                if root {
                    scan.root_ref = true;
                } else {
                    scan.nested_ref = true;
                }
                // A borrow of a whole `Actor<C>` local is as good as the local.
                stack.push((pointee, root && matches!(**pointee, Type::Actor(_))));
            }
            Type::Array(inner) | Type::Option(inner) => stack.push((inner, false)),
            Type::Map(k, v) => stack.extend([(&**k, false), (&**v, false)]),
            Type::Scope | Type::Task(_) => {
                if root {
                    scan.root_task = true;
                } else {
                    scan.nested_task = true;
                }
                if let Type::Task(inner) = t {
                    stack.push((inner, false));
                }
            }
            Type::Actor(c) | Type::Class(c) => {
                if let Type::Actor(_) = t {
                    if root {
                        scan.root_actor = true;
                    } else {
                        scan.nested_actor = true;
                    }
                }
                if module.classes.get(*c).is_none() {
                    scan.unknown_classes.push(format!(
                        "class #{}, which does not exist; the module has {} classes",
                        index(*c),
                        module.classes.len()
                    ));
                }
            }
            Type::Enum(e) => {
                if module.enums.get(*e).is_none() {
                    scan.unknown_classes.push(format!(
                        "enum #{}, which does not exist; the module has {} enums",
                        index(*e),
                        module.enums.len()
                    ));
                }
            }
            Type::Defer => {
                scan.defer = true;
                scan.nested_defer |= !root;
            }
            Type::I32
            | Type::I64
            | Type::F64
            | Type::Bool
            | Type::Unit
            | Type::String
            | Type::Time
            | Type::Duration
            | Type::Uuid => {}
        }
    }
    scan
}

/// The row that reads a configuration value of type `ty`, if a value may have that type.
pub fn config_row(ty: &Type) -> Option<crate::RuntimeFn> {
    use crate::RuntimeFn::*;
    Some(match ty {
        Type::String => ConfigStr,
        Type::I64 => ConfigI64,
        Type::F64 => ConfigF64,
        Type::Bool => ConfigBool,
        Type::Duration => ConfigDuration,
        _ => return None,
    })
}

/// V255 on the `config` lines: unique names and variables, a type a value may have, `secret`
/// only on a `String`.
fn check_configs(module: &Module, out: &mut Vec<Diagnostic>) {
    let (mut names, mut vars) = (BTreeMap::new(), BTreeMap::new());
    for config in &module.configs {
        let mut problem = |message: String| out.push(Diagnostic::new(code::CONFIG, message));
        if names.insert(config.name.as_str(), ()).is_some() {
            problem(format!("configuration value `{}` is declared twice", config.name));
        }
        if vars.insert(config.env.as_str(), ()).is_some() {
            problem(format!("environment variable {} is bound to two configuration values", config.env));
        }
        if config_row(&config.ty).is_none() {
            let ty = config.ty.display(module);
            problem(format!(
                "configuration value `{}` has type {ty}; a value is a String, i64, f64, bool or Duration",
                config.name
            ));
        }
        if config.secret && config.ty != Type::String {
            problem(format!("configuration value `{}` is secret, which only a String may be", config.name));
        }
    }
}

/// Module-level checks: names, classes, tables and routes.
fn check_module(module: &Module, source: Option<&SourceMap>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    supervisors::check(module, source, &mut out);
    queues::check(module, source, &mut out);
    check_configs(module, &mut out);

    let mut class_names = BTreeMap::new();
    for (id, class) in module.classes.iter() {
        let span = source.and_then(|s| s.classes.get(id).copied());
        if class_names.insert(class.name.as_str(), id).is_some() {
            out.push(Diagnostic::new(code::DUPLICATE_NAME, format!("class {} is declared twice", class.name)).at(span));
        }
        let mut field_names = BTreeMap::new();
        for field in &class.fields {
            if field_names.insert(field.name.as_str(), ()).is_some() {
                let message = format!("class {} declares field `{}` twice", class.name, field.name);
                out.push(Diagnostic::new(code::DUPLICATE_NAME, message).at(span));
            }
            let scan = scan_type(module, &field.ty);
            if scan.root_ref || scan.nested_ref {
                let message = format!(
                    "field `{}` of class {} has type {}; a class field may not hold a reference \
                     (references are second-class: only parameters and locals borrow)",
                    field.name,
                    class.name,
                    field.ty.display(module)
                );
                out.push(Diagnostic::new(code::REFERENCE_NOT_ALLOWED, message).at(span));
            }
            for (code, why) in scan.handles_held() {
                let message = format!(
                    "field `{}` of class {} has type {}; {why}",
                    field.name,
                    class.name,
                    field.ty.display(module)
                );
                out.push(Diagnostic::new(code, message).at(span));
            }
            for c in scan.unknown_classes {
                let message = format!("field `{}` of class {} names {c}", field.name, class.name);
                out.push(Diagnostic::new(code::UNKNOWN_CLASS, message).at(span));
            }
        }
    }
    check_enums(module, source, &mut class_names, &mut out);

    let mut function_names = BTreeMap::new();
    for (id, func) in module.functions.iter() {
        if function_names.insert(func.name.as_str(), id).is_some() {
            let span = source.and_then(|s| s.function(id));
            out.push(
                Diagnostic::new(code::DUPLICATE_NAME, format!("function ${} is declared twice", func.name)).at(span),
            );
        }
    }

    check_tables(module, source, &mut out);
    check_routes(module, source, &mut out);
    check_early_commits(module, source, &mut out);
    out
}

/// Enum declarations: a name no class or other enum has, at least one variant, distinct
/// variant names, and payloads that hold no reference and name only types that exist.
fn check_enums<'m>(
    module: &'m Module,
    source: Option<&SourceMap>,
    type_names: &mut BTreeMap<&'m str, crate::entities::ClassId>,
    out: &mut Vec<Diagnostic>,
) {
    let mut enum_names = BTreeMap::new();
    for (id, data) in module.enums.iter() {
        let span = source.and_then(|s| s.enums.get(id).copied());
        if type_names.contains_key(data.name.as_str()) || enum_names.insert(data.name.as_str(), id).is_some() {
            let message = format!("type {} is declared twice (classes and enums share one namespace)", data.name);
            out.push(Diagnostic::new(code::DUPLICATE_NAME, message).at(span));
        }
        if data.variants.is_empty() {
            let message = format!("enum {} has no variants; an enum needs at least one", data.name);
            out.push(Diagnostic::new(code::OPERAND_COUNT, message).at(span));
        }
        let mut variant_names = BTreeMap::new();
        for variant in &data.variants {
            if variant_names.insert(variant.name.as_str(), ()).is_some() {
                let message = format!("enum {} declares variant `{}` twice", data.name, variant.name);
                out.push(Diagnostic::new(code::DUPLICATE_NAME, message).at(span));
            }
            let Some(payload) = &variant.payload else { continue };
            let scan = scan_type(module, payload);
            if scan.root_ref || scan.nested_ref {
                let message = format!(
                    "variant `{}` of enum {} carries {}; a payload may not hold a reference",
                    variant.name,
                    data.name,
                    payload.display(module)
                );
                out.push(Diagnostic::new(code::REFERENCE_NOT_ALLOWED, message).at(span));
            }
            for (code, why) in scan.handles_held() {
                let message = format!(
                    "variant `{}` of enum {} carries {}; {why}",
                    variant.name,
                    data.name,
                    payload.display(module)
                );
                out.push(Diagnostic::new(code, message).at(span));
            }
            for c in scan.unknown_classes {
                let message = format!("variant `{}` of enum {} names {c}", variant.name, data.name);
                out.push(Diagnostic::new(code::UNKNOWN_CLASS, message).at(span));
            }
        }
    }
}

/// V248: every `db.exec_commit` is a route handler's final statement.
fn check_early_commits(module: &Module, source: Option<&SourceMap>, out: &mut Vec<Diagnostic>) {
    let mut handlers = None;
    for (id, func) in module.functions.iter() {
        let commits = func.ops.iter().filter(|(_, op)| {
            matches!(op.kind, OpKind::RuntimeCall { func: crate::runtime::RuntimeFn::DbExecCommit, .. })
        });
        let mut commits = commits.map(|(op, _)| op).peekable();
        if commits.peek().is_none() {
            continue;
        }
        // Only a module with some `db.exec_commit` pays for finding the handlers, once.
        let handler = handlers.get_or_insert_with(|| crate::commit::committing_handlers(module)).contains(&id);
        let finals = crate::commit::final_statements(func);
        for op in commits {
            let why = if !handler {
                "it is not a route handler that only the route calls and whose result is not an option"
            } else if !finals.contains(&op) {
                "something after it can fail (a call, a trap, a loop, or another statement)"
            } else {
                continue;
            };
            let message =
                format!("in ${}: `db.exec_commit` commits the request's writes, but {why}; use `db.exec`", func.name);
            out.push(Diagnostic::new(code::EARLY_COMMIT, message).at(source.and_then(|s| s.op(id, op))));
        }
    }
}

fn check_tables(module: &Module, source: Option<&SourceMap>, out: &mut Vec<Diagnostic>) {
    let mut names = BTreeMap::new();
    for (i, table) in module.tables.iter().enumerate() {
        let span = source.and_then(|s| s.tables.get(i).copied());
        let mut error = |code, message: String| out.push(Diagnostic::new(code, message).at(span));
        if names.insert(table.name.as_str(), i).is_some() {
            error(code::DUPLICATE_NAME, format!("table {} is declared twice", table.name));
        }
        let Some(class) = module.classes.get(table.class) else {
            let message = format!(
                "table {} stores class #{}, which does not exist; the module has {} classes",
                table.name,
                index(table.class),
                module.classes.len()
            );
            error(code::BAD_TABLE, message);
            continue;
        };
        match class.fields.get(table.key as usize) {
            None => error(
                code::BAD_TABLE,
                format!(
                    "the key of table {} is field #{} of class {}, which has only {} fields",
                    table.name,
                    table.key,
                    class.name,
                    class.fields.len()
                ),
            ),
            Some(key) if !matches!(key.ty, Type::I32 | Type::I64 | Type::String | Type::Uuid) => error(
                code::BAD_TABLE,
                format!(
                    "the key of table {} is field `{}` of type {}, expected i32, i64, String or Uuid",
                    table.name,
                    key.name,
                    key.ty.display(module)
                ),
            ),
            Some(_) => {}
        }
    }
}

/// The `{name}` parameters of a route path, in order, or the byte offset of a `{` without its
/// `}`.
fn path_parameters(path: &str) -> Result<Vec<&str>, usize> {
    let mut names = Vec::new();
    let mut rest = path;
    let mut offset = 0;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { return Err(offset + open) };
        names.push(&after[..close]);
        offset += open + 1 + close + 1;
        rest = &after[close + 1..];
    }
    Ok(names)
}

/// Whether a route handler may take a path or query parameter of type `ty`.
fn is_query_type(ty: &Type) -> bool {
    let plain = |t: &Type| {
        matches!(
            t,
            Type::I32 | Type::I64 | Type::F64 | Type::Bool | Type::String | Type::Time | Type::Duration | Type::Uuid
        )
    };
    match ty {
        Type::Option(inner) => plain(inner),
        other => plain(other),
    }
}

fn check_routes(module: &Module, source: Option<&SourceMap>, out: &mut Vec<Diagnostic>) {
    let mut seen = BTreeMap::new();
    for (i, route) in module.routes.iter().enumerate() {
        let span = source.and_then(|s| s.routes.get(i).copied());
        let what = format!("route {} {:?}", route.method.name(), route.path);
        let mut error = |code, message: String| out.push(Diagnostic::new(code, message).at(span));
        if seen.insert((route.method.name(), route.path.as_str()), i).is_some() {
            error(code::DUPLICATE_ROUTE, format!("{what} is declared twice; each method and path has one handler"));
        }
        let Some(handler) = module.functions.get(route.handler) else {
            let message = format!(
                "{what} names function #{}, which does not exist; the module has {} functions",
                index(route.handler),
                module.functions.len()
            );
            error(code::BAD_ROUTE, message);
            continue;
        };
        let params: Vec<&LocalData> = handler.params.iter().filter_map(|p| handler.locals.get(*p)).collect();
        match path_parameters(&route.path) {
            Err(at) => error(code::BAD_ROUTE, format!("{what}: the `{{` at byte {at} of the path has no closing `}}`")),
            Ok(names) => {
                for name in names {
                    if !params.iter().any(|p| p.name == name) {
                        let message =
                            format!("{what}: path parameter `{{{name}}}` is not a parameter of ${}", handler.name);
                        error(code::BAD_ROUTE, message);
                    }
                }
            }
        }
        for name in &route.headers {
            let is_path = route.path.contains(&format!("{{{name}}}"));
            if !params.iter().any(|p| p.name == *name) || name == "body" || is_path {
                let message = format!(
                    "{what}: header parameter `{name}` must be a parameter of ${} other than %body and the path's",
                    handler.name
                );
                error(code::BAD_ROUTE, message);
            }
        }
        for p in params {
            if p.name == "body" {
                if !matches!(p.ty, Type::Class(_)) {
                    let message = format!(
                        "{what}: parameter %body of ${} has type {}; the request body must be an owned class",
                        handler.name,
                        p.ty.display(module)
                    );
                    error(code::BAD_ROUTE, message);
                }
            } else if !is_query_type(&p.ty) {
                let message = format!(
                    "{what}: parameter %{} of ${} has type {}; a path or query parameter must be \
                     i32, i64, f64, bool, String, Time, Duration, Uuid or an Option of one",
                    p.name,
                    handler.name,
                    p.ty.display(module)
                );
                error(code::BAD_ROUTE, message);
            }
        }
    }
}

/// The parameters, the result type, and `main`'s rules.
fn check_signature(cx: &mut FnCx<'_>) {
    let func = cx.func;
    for (i, &param) in func.params.iter().enumerate() {
        if cx.local(param).is_none() {
            let message = format!(
                "parameter {} is local #{}, which does not exist; the function has {} locals",
                i + 1,
                index(param),
                func.locals.len()
            );
            cx.error(code::INVALID_ID, message);
        } else if index(param) != i {
            let message = format!(
                "parameter {} is {}, local #{}; the parameters must be the first locals, in order",
                i + 1,
                cx.name(param),
                index(param)
            );
            cx.error(code::BAD_PARAMS, message);
        }
    }
    let scan = scan_type(cx.module, &func.ret);
    if scan.root_ref || scan.nested_ref {
        let message = format!(
            "the result type {} holds a reference; results are owned (a reference may not outlive the call)",
            cx.show(&func.ret)
        );
        cx.error(code::REFERENCE_NOT_ALLOWED, message);
    }
    if scan.root_task || scan.nested_task {
        let message = format!(
            "the result type {} holds a scope or a task; they stay in the function that made them",
            cx.show(&func.ret)
        );
        cx.error(code::TASK_HANDLE_PLACE, message);
    }
    if scan.nested_actor {
        cx.error(code::ACTOR_MESSAGE, format!("the result type is {}; {ACTOR_PLACES}", cx.show(&func.ret)));
    }
    if scan.defer {
        cx.error(code::DEFER, format!("the result type is {}; {DEFER_PLACES}", cx.show(&func.ret)));
    }
    for c in scan.unknown_classes {
        cx.error(code::UNKNOWN_CLASS, format!("the result type names {c}"));
    }
    if func.name == "main" {
        if !func.params.is_empty() {
            cx.error(code::BAD_MAIN, format!("`main` takes {} parameters, expected none", func.params.len()));
        }
        if func.ret != Type::Unit {
            cx.error(code::BAD_MAIN, format!("`main` returns {}, expected unit", cx.show(&func.ret)));
        }
    }
}

/// Local names and local types.
fn check_locals(cx: &mut FnCx<'_>) {
    let func = cx.func;
    let mut names = BTreeMap::new();
    for (id, local) in func.locals.iter() {
        if names.insert(local.name.as_str(), id).is_some() {
            cx.local_error(code::DUPLICATE_NAME, id, format!("local %{} is declared twice", local.name));
        }
        let scan = scan_type(cx.module, &local.ty);
        if scan.nested_ref {
            let message = format!(
                "%{} has type {}; a reference may only be the whole type of a local (`&T` or `&mut T`), \
                 never inside an array, an option or another reference",
                local.name,
                cx.show(&local.ty)
            );
            cx.local_error(code::REFERENCE_NOT_ALLOWED, id, message);
        }
        let param = func.params.contains(&id);
        if scan.nested_task || (scan.root_task && (param || !func.is_async)) {
            let message = format!(
                "%{} has type {}; a scope or a task is only ever the whole type of a local (not a \
                 parameter) of an async function",
                local.name,
                cx.show(&local.ty)
            );
            cx.local_error(code::TASK_HANDLE_PLACE, id, message);
        }
        if scan.nested_actor {
            let message = format!("%{} has type {}; {ACTOR_PLACES}", local.name, cx.show(&local.ty));
            cx.local_error(code::ACTOR_MESSAGE, id, message);
        }
        if scan.nested_defer || (scan.defer && param) {
            let message = format!("%{} has type {}; {DEFER_PLACES}", local.name, cx.show(&local.ty));
            cx.local_error(code::DEFER, id, message);
        }
        for c in scan.unknown_classes {
            cx.local_error(code::UNKNOWN_CLASS, id, format!("the type of %{} names {c}", local.name));
        }
    }
}
