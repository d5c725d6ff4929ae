//! The High Nagi checker: name resolution, type checking, mutability, definite return, route
//! shapes and compile-time SQL checking, producing the typed IR of [`crate::tir`].
//!
//! The checker never stops at the first problem: it collects every diagnostic of the file, in
//! source order, and returns them all. An expression that failed to check yields nothing and its
//! parents stay silent, so one mistake gives one diagnostic rather than a cascade.
//!
//! Work happens in three phases:
//! 1. [`items`] collects classes, tables, functions and routes and resolves every written type,
//!    so bodies can refer to items declared anywhere in the file.
//! 2. Each function body is checked ([`expr`], [`stmt`], [`builtins`]); SQL strings are handed
//!    to the caller's SQL checker, which sees the program's classes and tables.
//! 3. Async-ness is propagated through calls to a fixpoint, and `main` is checked not to use the
//!    database.
//!
//! Error codes (stable; the negative golden tests depend on them):
//!
//! | code | meaning |
//! | --- | --- |
//! | H201 | unknown variable |
//! | H202 | unknown function |
//! | H203 | unknown type or class |
//! | H204 | unknown field |
//! | H205 | class or enum declared twice (they share one namespace), named like a built-in type, or an enum without variants |
//! | H206 | field declared twice in a class, or variant twice in an enum |
//! | H207 | function declared twice, or named like a builtin |
//! | H208 | table declared twice |
//! | H209 | local declared twice in one block, or named `db` |
//! | H210 | parameter declared twice |
//! | H211 | unknown method |
//! | H212 | route declared twice |
//! | H214 | field given twice in a class literal |
//! | H215 | field missing from a class literal |
//! | H220 | unknown HTTP method |
//! | H221 | malformed route path |
//! | H222 | path parameter without a matching parameter |
//! | H223 | route parameter that is neither a path, body nor query parameter |
//! | H224 | `body` on a method without a request body |
//! | H225 | misplaced or invalid default, or `inout` on a route parameter |
//! | H226 | `main` with parameters or a result, or declared `fails` |
//! | H227 | a parameter source that is unknown (`header` is the one) or misplaced (a function, path or `body` parameter) |
//! | H301 | type mismatch |
//! | H302 | operator or builtin not applicable to the type |
//! | H303 | integer literal out of range |
//! | H304 | `none` or `[]` whose type is unknown |
//! | H305 | field access on a value that is not a class |
//! | H306 | indexing a value that is not an array |
//! | H307 | wrong number of arguments |
//! | H308 | invalid `as` cast |
//! | H309 | option of an option |
//! | H310 | type not allowed here (table key, table column, route parameter) |
//! | H311 | class or enum that contains itself |
//! | H312 | field or element of a temporary value |
//! | H313 | a value of type unit used as a value |
//! | H314 | `if let` on a non-option, `for` over a non-array or non-integer range |
//! | H315 | `db.query<T>` / `db.query_one<T>` type argument problems |
//! | H316 | `match` on a type that has no patterns (an option, an array, a class, a float) |
//! | H317 | an unknown variant, or a variant pattern that binds a payload wrongly |
//! | H318 | an unreachable `match` pattern (after `_`, or matching what an earlier arm does) |
//! | H319 | a `match` that does not cover every value: the missing variants are named |
//! | H320 | a map whose key type is not `i64` or `String` |
//! | H401 | modifying something that is not mutable |
//! | H402 | assigning to something that is not a place |
//! | H403 | function can reach its end without returning |
//! | H404 | `return` with a missing or unexpected value |
//! | H405 | `break` / `continue` outside a loop |
//! | H406 | modifying an array while iterating over it, or a value while a `match` arm borrows its payload |
//! | H407 | expression statement whose value is unused |
//! | H408 | misuse of `db.transaction` (nesting, leaving it with `return`/`break`/`continue`/`fail`/`try`) |
//! | H409 | `main` uses the database (directly or through a call) |
//! | H410 | invalid `inout` argument (not a place, or overlapping another argument) |
//! | H411 | a call of a failing function without `try` |
//! | H412 | `try` before an expression in which nothing can fail |
//! | H413 | `fail` or `try` in a function that is not declared `fails` (nor a route) |
//! | H414 | `fail` with a status outside 400–599 |
//! | H415 | `set_header` outside a route handler's own body |
//! | H416 | `spawn` outside a `scope`, a `scope` inside `db.transaction`, or a task that uses the database |
//! | H417 | a `spawn` of something that cannot run as a task, or a task handle stored, copied or passed on |
//! | H418 | actors (§9.7): a handler or a state's initial value that waits (database, tasks, actors, `sleep`), a handler that fails or takes an `inout` parameter, an unknown handler, a class literal of an actor's state, an actor handle held by a field, an array, an option or a map, a mailbox outside 1–2^20, `send` of something that is not a handler call, `try?` of something that is not one failing call or of a call giving an option |
//! | H419 | supervisors (§9.8): an unknown strategy, a reversed backoff, a child that is neither an actor nor a supervisor, a supervisor with two parents or supervising itself, a path that names no child or ends at a supervisor, a supervisor in an imported module |
//! | H425 | `defer` (§9.6.1) of something that is not a call of a program function, or of a function that can fail, has an `inout` parameter or waits |
//! | H426 | a queue whose rules are out of range or whose handler does not fit, or a `push` with the wrong arguments |
//! | H427 | `set_clock` outside a test's own body |
//! | H428 | configuration (§6.16): a value of a type other than String, i64, f64, bool or Duration, a secret that is not a String, a default that is not a literal of its type, a value or declaration twice, a `config` outside the main file, an unknown value, or a secret used other than through `.reveal()` |
//! | H429 | outbound calls (§9.10): a type argument that is not a class, arguments that are not a URL, a body (a class or a `String`), header lines and a timeout |
//! | H430 | scheduled jobs (§9.11): a function that does not exist, takes other than nothing or the tick's `Time`, returns a value or is scheduled twice or named like a queue; a period that is not a whole number of milliseconds; an expression that is not five cron fields; a schedule outside the main file |
//! | H431 | an outbound call that may come after a write of the same request, or a write while a task of the scope may be calling out (§9.10) |
//! | H432 | closures (§6.6): a closure other than the argument of an array method that takes one (`map`, `filter`, `any`, `all`, `find`, `count`, `fold`, `sort_by_key`) or of a function-typed parameter, the wrong number of parameters, a written parameter type other than the one the method or function type gives, a function type other than a function parameter's, a function parameter used as a value or called from a closure, a passed function of another type or one that can fail |
//! | H433 | generics (§3.7): a type argument without a capability its parameter requires (the argument and the capability named), a type parameter a call does not determine, an unknown capability, a capability on a class's parameter, a generic class without its type arguments or with the wrong number of them, instances nested too deeply |
//! | H240 | test declared twice |
//! | H501 | SQL rejected by the SQL checker (unknown table or column, syntax, result shape) |
//! | H502 | SQL that is not a string literal |
//! | H503 | `?` placeholder count differs from the argument count |
//! | H504 | SQL argument of a type that cannot be bound |
//! | H505 | a `*` result column other than a lone `SELECT *` of a query |

mod actors;
mod arrays;
mod builtins;
mod closures;
mod configs;
mod enums;
mod expr;
mod failures;
mod generics;
mod items;
mod lifted;
mod maps;
mod outbound;
mod queues;
mod stmt;
mod tasks;
#[cfg(test)]
mod tests;
mod time;
mod writer;

pub(crate) use writer::may_write;

/// Every builtin function's name (for completion).
pub(crate) fn builtin_function_names() -> Vec<&'static str> {
    items::builtin_fn_names().collect()
}

use nagi_low::Diagnostic;
use nagi_syntax::ast::{self, SourceFile, Span};

use crate::tir::{self, FnIdx, LocalIdx, LocalKind, ParamMode, Ty};
use items::Items;

/// One SQL statement for the SQL checker to prepare against the program's tables.
#[derive(Clone, Debug, PartialEq)]
pub struct SqlRequest<'a> {
    /// The SQL text, exactly as the string literal spells it (escapes resolved).
    pub sql: &'a str,
    /// How many placeholder arguments the call passes; the checker has already verified that
    /// the SQL has that many `?` placeholders.
    pub args: usize,
    /// For `db.query<T>` and `db.query_one<T>`: `T`'s fields in declaration order, which the
    /// statement's result columns must match by name and count. `None` for `db.exec`.
    pub result_fields: Option<Vec<(String, Ty)>>,
}

/// A SQL checker: called once per `db.exec`/`db.query`/`db.query_one` whose SQL is a string
/// literal; an `Err(message)` becomes an H501 diagnostic pointing at the literal.
pub type SqlCheck = Box<dyn FnMut(&SqlRequest) -> Result<(), String>>;

/// Checks a parsed file and builds its typed IR.
///
/// `make_sql` is called once, after the classes and tables are collected and only if they are
/// free of errors (otherwise SQL checking is skipped, since a broken schema would make every
/// statement look wrong). It receives the program's classes and tables and returns the checker
/// for the SQL of the function bodies; `sql.rs` builds one on an in-memory SQLite, and
/// [`no_sql_check`] accepts everything.
///
/// Errors: every diagnostic of the file, sorted by position.
///
/// `locate` words a span as `file:line:col`, for the messages of failed assertions.
pub fn check(
    file: &SourceFile,
    make_sql: &dyn Fn(&[tir::Class], &[tir::Table]) -> SqlCheck,
    locate: &dyn Fn(Span) -> String,
) -> Result<tir::Program, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let items = items::collect(file, &mut diags);
    let classes = items.tir_classes();
    let mut sql: SqlCheck = match (&classes, items.schema_ok) {
        (Some(classes), true) => make_sql(classes, &items.tables),
        _ => no_sql_check(&[], &[]),
    };
    let sql_enabled = classes.is_some() && items.schema_ok;

    // Each generic function's body once, over its type parameters as written: what it may do
    // with their values is settled here, and its instances are checked only if it passed.
    let mut failed_templates = vec![false; items.generic_fns.len()];
    for (k, failed) in failed_templates.iter_mut().enumerate() {
        let before = diags.len();
        items.checking_template.set(true);
        let own = items.generic_fns[k].params.iter().map(|p| p.ty()).collect();
        let first = items.abstract_fn_count();
        if let Some(idx) = items.fn_instance(k, own, Vec::new()) {
            check_function(&items, idx, &mut diags, sql.as_mut(), sql_enabled, locate);
        }
        // The closures its body passes to functions, lifted (abstractly) and checked as theirs.
        let mut next = first;
        while next < items.abstract_fn_count() {
            let idx = items::generics::ABSTRACT + next;
            if items.fn_template(idx).is_none() {
                check_function(&items, idx, &mut diags, sql.as_mut(), sql_enabled, locate);
            }
            next += 1;
        }
        items.checking_template.set(false);
        *failed = diags.len() > before;
    }
    // The program's functions, then the instances they make (which may make more), in order.
    let mut functions = Vec::with_capacity(items.fns.len());
    let mut effects = Vec::with_capacity(items.fns.len());
    let mut idx = 0;
    while idx < items.fn_count() {
        let (function, effect) = if items.fn_template(idx).is_some_and(|k| failed_templates[k]) {
            unchecked_instance(&items, idx)
        } else {
            check_function(&items, idx, &mut diags, sql.as_mut(), sql_enabled, locate)
        };
        functions.push(function);
        effects.push(effect);
        idx += 1;
    }

    items.check_made_containment(&mut diags);
    items.report_endless(&mut diags);
    let uses_db = propagate(&effects, |e| e.db_use.is_some());
    let is_async = propagate(&effects, |e| e.db_use.is_some() || e.suspends.is_some());
    check_main(&items, &effects, &uses_db, &mut diags);
    check_spawns(&items, &effects, &uses_db, &is_async, &mut diags);
    check_actors(&items, &effects, &is_async, &mut diags);
    let spawned_by = |blocking: bool| {
        let mut spawned: Vec<FnIdx> =
            effects.iter().flat_map(|e| e.spawns.iter().filter(|s| s.2 == blocking).map(|(f, _, _)| *f)).collect();
        spawned.sort_unstable();
        spawned.dedup();
        spawned
    };
    let (spawned, spawned_blocking) = (spawned_by(false), spawned_by(true));
    let mut deferred: Vec<FnIdx> = effects.iter().flat_map(|e| e.defers.iter().map(|(f, _)| *f)).collect();
    deferred.sort_unstable();
    deferred.dedup();
    // Only a function that borrows a parameter needs an owning function to be deferred.
    deferred.retain(|&f| functions[f].params.iter().any(|&p| !functions[f].locals[p].ty.is_copy()));

    if diags.is_empty() {
        let tests: Vec<FnIdx> = items.tests.iter().map(|(_, idx, _)| *idx).collect();
        writer::check(&functions, &tests, locate, &mut diags);
    }
    if !diags.is_empty() {
        // A stable sort keeps the order of diagnostics at one position as they were found.
        diags.sort_by_key(|d| d.span.map_or(0, |s| s.start));
        return Err(diags);
    }
    for (function, is_async) in functions.iter_mut().zip(is_async) {
        function.is_async = is_async;
    }
    Ok(tir::Program {
        // Again: a `catch` in a body may have used the class `Failure` since.
        classes: items.tir_classes().unwrap_or_default(),
        enums: items.tir_enums().unwrap_or_default(),
        tables: items.tables.clone(),
        routes: items.routes.clone(),
        tests: items
            .tests
            .iter()
            .map(|(name, idx, span)| tir::Test { name: name.clone(), function: *idx, location: locate(*span) })
            .collect(),
        functions,
        spawned,
        spawned_blocking,
        deferred,
        actors: items.tir_actors(),
        supervisors: items.tir_supervisors(),
        queues: items.queues.clone(),
        schedules: items.schedules.clone(),
        configs: items.configs.clone(),
    })
}

/// A SQL checker factory that accepts every statement: for tests, fuzzing, and checking a file
/// without SQLite.
pub fn no_sql_check(_classes: &[tir::Class], _tables: &[tir::Table]) -> SqlCheck {
    Box::new(|_| Ok(()))
}

/// What a function body does that matters across functions.
#[derive(Default)]
struct Effects {
    /// Where the body first uses the database directly (an operation or a transaction).
    db_use: Option<Span>,
    /// Every call of a program function, with the call's span.
    calls: Vec<(FnIdx, Span)>,
    /// Where the body first fails or calls a failing function.
    fails_at: Option<Span>,
    /// Where the body first waits without the database: a `scope`, a `join`, a `sleep`, an
    /// outbound call.
    suspends: Option<Span>,
    /// Where the body first calls another HTTP service.
    calls_out: Option<Span>,
    /// Every `spawn` and `spawn_blocking` (true), with the function it starts.
    spawns: Vec<(FnIdx, Span, bool)>,
    /// Every `defer`, with the function it calls.
    defers: Vec<(FnIdx, Span)>,
}

/// Which functions have a property that a call passes on to the caller: `seed` says which have
/// it themselves. A function is async when it uses the database or waits (`scope`, `join`,
/// `sleep`), or calls an async function; it uses the database when it does so directly or
/// through a call. A `spawn` passes on neither: the task runs apart. Iterating to a fixpoint
/// handles recursion and calls to functions declared later.
fn propagate(effects: &[Effects], seed: impl Fn(&Effects) -> bool) -> Vec<bool> {
    let mut is_async: Vec<bool> = effects.iter().map(seed).collect();
    loop {
        let mut changed = false;
        for (idx, effect) in effects.iter().enumerate() {
            if !is_async[idx] && effect.calls.iter().any(|(callee, _)| is_async.get(*callee) == Some(&true)) {
                is_async[idx] = true;
                changed = true;
            }
        }
        if !changed {
            return is_async;
        }
    }
}

/// A task runs outside the request that spawned it, so it cannot take part in the request's
/// transaction: a spawned function must not use the database, directly or through a call. A
/// function on the blocking pool must not wait at all.
fn check_spawns(items: &Items, effects: &[Effects], uses_db: &[bool], is_async: &[bool], diags: &mut Vec<Diagnostic>) {
    for effect in effects {
        for &(func, span, blocking) in &effect.spawns {
            let name = items.fn_info(func).name.clone();
            if uses_db.get(func) == Some(&true) {
                diags.push(
                    error(H416, span, format!("`{name}` uses the database, so it cannot run as a task"), "a task")
                        .note("the database belongs to the request's own code: query before or after the scope"),
                );
            } else if blocking && is_async.get(func) == Some(&true) {
                diags.push(
                    error(H417, span, format!("`{name}` waits, so it cannot run on the blocking pool"), "waits")
                        .note("the blocking pool runs plain computations; `spawn` a function that waits"),
                );
            }
        }
        // A deferred call runs inside a drop, which cannot wait (the database waits too).
        for &(func, span) in &effect.defers {
            if is_async.get(func) == Some(&true) || uses_db.get(func) == Some(&true) {
                let name = items.fn_info(func).name.clone();
                diags.push(error(H425, span, format!("`{name}` waits, so it cannot be deferred"), "waits").note(
                    "a deferred call runs when its block is left or its task is cancelled, and cannot wait for \
                     the database, tasks, actors or `sleep` then",
                ));
            }
        }
    }
}

/// An actor runs one message at a time, each to completion, so neither its handlers nor the
/// making of its state may wait: no database, no task, no actor, no `sleep`, directly or
/// through a call.
fn check_actors(items: &Items, effects: &[Effects], is_async: &[bool], diags: &mut Vec<Diagnostic>) {
    for actor in &items.actors {
        let functions = std::iter::once(actor.init).chain(actor.handlers.iter().map(|(_, f)| *f));
        for func in functions {
            if is_async.get(func) != Some(&true) {
                continue;
            }
            let effect = &effects[func];
            let waits = effect
                .db_use
                .or(effect.suspends)
                .or_else(|| effect.calls.iter().find(|(c, _)| is_async.get(*c) == Some(&true)).map(|(_, span)| *span));
            let info = items.fn_info(func);
            let what = if func == actor.init {
                format!("the state of actor `{}`", items.classes[actor.class].name)
            } else {
                format!("handler `{}`", info.name)
            };
            diags.push(error(H418, waits.unwrap_or(info.span), format!("{what} waits here"), "waits").note(
                "an actor runs each message to completion, so its handlers cannot wait for the database, \
                     tasks, actors or `sleep`; do that in the caller and send the result",
            ));
        }
    }
}

/// `main` runs before any server or database exists, so it must not use the database (it may
/// still wait, for tasks or a `sleep`).
fn check_main(items: &Items, effects: &[Effects], uses_db: &[bool], diags: &mut Vec<Diagnostic>) {
    let Some(main) = items.main else { return };
    if !uses_db.get(main).copied().unwrap_or(false) {
        return;
    }
    let effect = &effects[main];
    if let Some(span) = effect.db_use {
        diags.push(
            error(H409, span, "`main` cannot use the database", "database used here")
                .note("the database is available to routes, tests and the functions they call"),
        );
    } else if let Some((callee, span)) = effect.calls.iter().find(|(c, _)| uses_db.get(*c) == Some(&true)) {
        let name = items.fn_info(*callee).name.clone();
        diags.push(
            error(
                H409,
                *span,
                format!("`main` cannot call `{name}`, which uses the database"),
                "this call uses the database",
            )
            .note("the database is available to routes, tests and the functions they call"),
        );
    }
}

/// The state of checking one function body. Its methods live in `expr.rs`, `stmt.rs` and
/// `builtins.rs`.
struct Body<'a, 'f> {
    items: &'a Items<'f>,
    /// The function being checked, an index into `items.fns`.
    fn_idx: FnIdx,
    /// Words a span as `file:line:col`.
    locate: &'a dyn Fn(Span) -> String,
    diags: &'a mut Vec<Diagnostic>,
    sql: &'a mut dyn FnMut(&SqlRequest) -> Result<(), String>,
    /// False when the schema had errors, so SQL is not sent to the SQL checker.
    sql_enabled: bool,
    /// The function's name for messages (`f`, or `GET /users` for a route).
    display_name: String,
    locals: Vec<tir::Local>,
    /// Locals whose type could not be resolved: reading one fails silently, because the
    /// declaration already has a diagnostic.
    poisoned: Vec<bool>,
    /// The names visible in each open block, innermost last.
    scopes: Vec<Vec<(String, LocalIdx)>>,
    /// How many loops enclose the current statement.
    loop_depth: usize,
    /// Inside `db.transaction`: the loop depth at its start, so `break` and `continue` cannot
    /// jump out of the transaction.
    transaction_loop_depth: Option<usize>,
    /// The places borrowed by enclosing `for` loops (their elements) and `match` arms (a
    /// payload), with their names for messages and whether a `match` is the borrower.
    iterating: Vec<(tir::Place, String, bool)>,
    /// The declared result type; `None` when it failed to resolve.
    ret: Option<Ty>,
    effects: Effects,
    /// Statements to insert before the statement being checked (hidden locals of a compound
    /// assignment's place).
    prelude: Vec<tir::Stmt>,
    /// How many `try` enclose the expression being checked.
    try_depth: usize,
    /// How many `scope` blocks enclose the statement being checked.
    scope_depth: usize,
    /// Calls of failing functions checked so far, so a `try` can tell whether it covers one.
    failing_calls: usize,
    /// The function-typed parameters of an instance: each name, the function its calls call
    /// and the locals holding that function's captures.
    fn_params: Vec<(String, FnIdx, Vec<LocalIdx>)>,
    /// How many closures' bodies are being checked where they are written, to find what they
    /// capture (`generics.rs`), around the expression being checked.
    closure_depth: u32,
    /// The span of the call a `try?` or `catch` is checking: its failure is handled there.
    catching: Option<Span>,
    /// Whether that call itself turned out to be a failing one (a failing call among its
    /// arguments does not count).
    caught: bool,
}

/// Checks function `idx`'s body.
fn check_function(
    items: &Items,
    idx: FnIdx,
    diags: &mut Vec<Diagnostic>,
    sql: &mut dyn FnMut(&SqlRequest) -> Result<(), String>,
    sql_enabled: bool,
    locate: &dyn Fn(Span) -> String,
) -> (tir::Function, Effects) {
    let info = items.fn_info(idx);
    let (env, depth) = items.fn_env(idx);
    let saved_depth = items.checking_depth.replace(depth);
    let out = items.with_type_env(env, || check_body(items, idx, &info, diags, sql, sql_enabled, locate));
    items.checking_depth.set(saved_depth);
    out
}

/// An instance of a generic function whose template failed to check: its body is not
/// checked again (the program has errors already), and a placeholder keeps the indexes.
fn unchecked_instance(items: &Items, idx: FnIdx) -> (tir::Function, Effects) {
    let info = items.fn_info(idx);
    let function = tir::Function {
        name: info.name.clone(),
        params: Vec::new(),
        defaults: Vec::new(),
        ret: Ty::Unit,
        locals: Vec::new(),
        body: tir::Block { stmts: Vec::new() },
        is_async: false,
        is_route: false,
        fails: false,
        span: info.span,
    };
    (function, Effects::default())
}

/// Checks function `idx`'s body, its type parameters bound.
fn check_body(
    items: &Items,
    idx: FnIdx,
    info: &items::FnInfo,
    diags: &mut Vec<Diagnostic>,
    sql: &mut dyn FnMut(&SqlRequest) -> Result<(), String>,
    sql_enabled: bool,
    locate: &dyn Fn(Span) -> String,
) -> (tir::Function, Effects) {
    let mut body = Body {
        items,
        fn_idx: idx,
        locate,
        diags,
        sql,
        sql_enabled,
        display_name: info.display_name(),
        locals: Vec::new(),
        poisoned: Vec::new(),
        scopes: vec![Vec::new()],
        loop_depth: 0,
        transaction_loop_depth: None,
        iterating: Vec::new(),
        ret: info.ret.clone(),
        effects: Effects::default(),
        prelude: Vec::new(),
        try_depth: 0,
        scope_depth: 0,
        failing_calls: 0,
        catching: None,
        caught: false,
        fn_params: Vec::new(),
        closure_depth: 0,
    };
    // An instance's captures of its closures are reached through `fn_params` only, by no name.
    let fn_params = items.fn_params(idx);
    let hidden: Vec<usize> = fn_params.iter().flat_map(|p| p.captures.iter().copied()).collect();
    let mut params = Vec::with_capacity(info.params.len());
    for (i, param) in info.params.iter().enumerate() {
        let mutable = param.mode == ParamMode::Inout;
        params.push(if hidden.contains(&i) {
            body.hidden_param(param)
        } else {
            body.declare(&param.name, param.ty.clone(), mutable, LocalKind::Param(param.mode))
        });
    }
    body.fn_params =
        fn_params.into_iter().map(|p| (p.name, p.lifted, p.captures.iter().map(|&i| params[i]).collect())).collect();
    // A lifted closure's captures are in a scope around its own parameters, which its body
    // may shadow as it could where the closure was written.
    if let items::FnBody::Closure(_, captures) = &info.body {
        let own = body.scopes[0].len() - captures;
        let outer: Vec<(String, LocalIdx)> = body.scopes[0].drain(own..).collect();
        body.scopes.insert(0, outer);
    }
    let ret = info.ret.clone().unwrap_or(Ty::Unit);
    let (block, written) = match &info.body {
        items::FnBody::Block(block) => (body.stmts(block), Some(*block)),
        items::FnBody::Closure(closure, _) => (body.closure_body(closure, &ret), None),
    };
    if let Some(written) = written
        && info.ret.as_ref().is_some_and(|t| *t != Ty::Unit)
        && !stmt::block_returns(written)
    {
        let end = written.span.end;
        let closing = Span { start: end.saturating_sub(1), end };
        let ty = items.ty_name(&ret);
        body.diags.push(
            error(
                H403,
                closing,
                format!("{} can reach its end without returning {} `{ty}`", body.display_name, a_or_an(&ty)),
                "the function can end here",
            )
            .note(format!("add `return` with {} `{ty}` value on every path", a_or_an(&ty))),
        );
    }
    let function = tir::Function {
        name: info.name.clone(),
        params,
        defaults: info.defaults.clone(),
        ret,
        locals: body.locals,
        body: block,
        is_async: false,
        is_route: info.route.is_some() || info.queue.is_some(),
        fails: if info.route.is_some() || info.queue.is_some() || info.test.is_some() {
            body.effects.fails_at.is_some()
        } else {
            info.fails
        },
        span: info.span,
    };
    (function, body.effects)
}

impl Body<'_, '_> {
    /// Reports a diagnostic.
    fn report(&mut self, diagnostic: Diagnostic) {
        self.diags.push(diagnostic);
    }

    /// A type as the user writes it.
    fn ty_name(&self, ty: &Ty) -> String {
        self.items.ty_name(ty)
    }

    /// Opens a block scope.
    fn open_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// Closes the innermost block scope.
    fn close_scope(&mut self) {
        self.scopes.pop();
    }

    /// A local the checker introduces, which no name refers to (it joins no scope).
    /// A parameter no name refers to (an instance's capture of a closure's).
    fn hidden_param(&mut self, param: &items::ParamInfo) -> LocalIdx {
        let idx = self.locals.len();
        self.poisoned.push(param.ty.is_none());
        let ty = param.ty.clone().unwrap_or(Ty::Unit);
        let kind = LocalKind::Param(param.mode);
        self.locals.push(tir::Local { name: param.name.name.clone(), ty, mutable: false, kind, span: param.name.span });
        idx
    }

    fn hidden_local(&mut self, name: &str, ty: Ty, span: Span) -> LocalIdx {
        let idx = self.locals.len();
        self.poisoned.push(false);
        self.locals.push(tir::Local { name: name.to_string(), ty, mutable: false, kind: LocalKind::Binding, span });
        idx
    }

    /// Declares a local in the innermost scope. A `None` type means the declaration already
    /// failed; the local exists so later uses do not report "unknown variable" again.
    fn declare(&mut self, name: &ast::Ident, ty: Option<Ty>, mutable: bool, kind: LocalKind) -> LocalIdx {
        if name.name == "db" {
            self.report(error(H209, name.span, "`db` is reserved for the database", "reserved name"));
        } else if let Some(scope) = self.scopes.last()
            && scope.iter().any(|(n, _)| *n == name.name)
        {
            self.report(
                error(
                    H209,
                    name.span,
                    format!("`{}` is already declared in this block", name.name),
                    "declared again here",
                )
                .note("use a different name, or assign to the existing variable (declared with `var`)"),
            );
        }
        let idx = self.locals.len();
        self.poisoned.push(ty.is_none());
        self.locals.push(tir::Local {
            name: name.name.clone(),
            ty: ty.unwrap_or(Ty::Unit),
            mutable,
            kind,
            span: name.span,
        });
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((name.name.clone(), idx));
        }
        idx
    }

    /// The innermost local called `name`.
    fn lookup(&self, name: &str) -> Option<LocalIdx> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, idx)| *idx)
    }
}

/// Converts an AST span to a diagnostic span.
fn low_span(span: Span) -> nagi_low::Span {
    nagi_low::Span { start: span.start, end: span.end }
}

/// An error diagnostic at `span`.
fn error(code: &'static str, span: Span, message: impl Into<String>, label: impl Into<String>) -> Diagnostic {
    Diagnostic::new(code, message).at(Some(low_span(span))).label(label)
}

/// The indefinite article for a type as written, read the way people say it: "an `i64`",
/// "an `f64`", "an `Item`", but "a `String`", "a `User`", "a `[i64]`".
pub(crate) fn a_or_an(ty_name: &str) -> &'static str {
    match ty_name.chars().next() {
        Some('i' | 'f' | 'A' | 'E' | 'I' | 'O') => "an",
        _ => "a",
    }
}

/// "1 argument", "2 arguments".
fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}

// The codes, named so a typo is a compile error rather than a wrong code.
const H201: &str = "H201";
const H202: &str = "H202";
const H203: &str = "H203";
const H204: &str = "H204";
const H205: &str = "H205";
const H206: &str = "H206";
const H207: &str = "H207";
const H208: &str = "H208";
const H209: &str = "H209";
const H210: &str = "H210";
const H211: &str = "H211";
const H212: &str = "H212";
const H214: &str = "H214";
const H215: &str = "H215";
const H220: &str = "H220";
const H221: &str = "H221";
const H222: &str = "H222";
const H223: &str = "H223";
const H224: &str = "H224";
const H225: &str = "H225";
const H226: &str = "H226";
const H227: &str = "H227";
const H301: &str = "H301";
const H302: &str = "H302";
const H303: &str = "H303";
const H304: &str = "H304";
const H305: &str = "H305";
const H306: &str = "H306";
const H307: &str = "H307";
const H308: &str = "H308";
const H309: &str = "H309";
const H310: &str = "H310";
const H311: &str = "H311";
const H312: &str = "H312";
const H313: &str = "H313";
const H314: &str = "H314";
const H315: &str = "H315";
const H316: &str = "H316";
const H317: &str = "H317";
const H318: &str = "H318";
const H319: &str = "H319";
const H320: &str = "H320";
const H401: &str = "H401";
const H402: &str = "H402";
const H403: &str = "H403";
const H404: &str = "H404";
const H405: &str = "H405";
const H406: &str = "H406";
const H407: &str = "H407";
const H408: &str = "H408";
const H409: &str = "H409";
const H410: &str = "H410";
const H411: &str = "H411";
const H412: &str = "H412";
const H413: &str = "H413";
const H414: &str = "H414";
const H415: &str = "H415";
const H416: &str = "H416";
const H417: &str = "H417";
const H418: &str = "H418";
const H419: &str = "H419";
const H425: &str = "H425";
const H426: &str = "H426";
const H427: &str = "H427";
const H428: &str = "H428";
const H429: &str = "H429";
const H430: &str = "H430";
const H431: &str = "H431";
const H432: &str = "H432";
const H433: &str = "H433";
const H240: &str = "H240";
const H501: &str = "H501";
const H502: &str = "H502";
const H503: &str = "H503";
const H504: &str = "H504";
const H505: &str = "H505";
