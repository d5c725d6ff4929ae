//! The static cost report (`nagic --emit=cost`): what each function allocates, clones, asks
//! of the runtime and awaits, read off Low, with the line of each operation in the module's
//! canonical Low text.
//!
//! Low makes every such cost an operation of its own (docs/design.md §1, Low rule 1), so the report is
//! a walk over each function's operations in text order. What counts (`docs/passes.md` has
//! the format):
//!
//! - `alloc`: an operation that may allocate heap memory: `string`, `str.concat`, `array.new`,
//!   `array.push` (the array may grow), `clone` of a value that owns heap memory (a `String`,
//!   an array, or an option or class holding one), and `rtcall`s whose result owns heap memory
//!   (`fmt.*`, `json.encode`, `json.decode`, `db.query`, `db.query_one` of such classes).
//!   `new` is not an allocation: a class is a value, built from fields that were allocated
//!   (and reported) where they were made;
//! - `clone`: every `clone`;
//! - `rtcall`: every runtime call;
//! - `await`: every awaited `call` or `rtcall`, every `task.join` and `scope.end`;
//! - `call`: every call of a function of the module, whose own costs are reported under it;
//! - `spawn`: every `scope.spawn`, which is also an `alloc` (the task's frame).
//!
//! Line numbers come from [`nagi_low::printer::print_module_with_lines`], so they are the
//! lines of `nagic --emit=low` for the same module and pipeline, and the output is
//! deterministic.

use std::fmt::Write;

use nagi_low::printer::{print_module_with_lines, print_op_head};

use nagi_low::{ArenaGet, FunctionData, Module, OpKind, Operand, Type};

use crate::body::preorder;

/// The kinds of cost, in the order their tags are printed.
const KINDS: [&str; 6] = ["alloc", "clone", "rtcall", "await", "call", "spawn"];

/// One operation that costs something.
pub struct Site {
    /// The 1-based line of the operation in the printed module.
    pub line: u32,
    /// Which of [`KINDS`] apply.
    pub kinds: [bool; 6],
    /// The operation as printed.
    pub text: String,
}

/// The costs of one function.
pub struct FunctionCost {
    /// The function's name, without the `$`.
    pub name: String,
    /// Whether it is `async`.
    pub is_async: bool,
    /// The line of the function's header.
    pub line: u32,
    /// Its costly operations, in text order.
    pub sites: Vec<Site>,
}

impl FunctionCost {
    /// How many sites have each kind.
    pub fn counts(&self) -> [usize; 6] {
        let mut counts = [0; 6];
        for site in &self.sites {
            for (c, &k) in counts.iter_mut().zip(&site.kinds) {
                *c += usize::from(k);
            }
        }
        counts
    }
}

/// The costs of every function of a module, in arena (text) order.
pub struct CostReport {
    /// The module's name.
    pub module: String,
    /// Every function, in text order.
    pub functions: Vec<FunctionCost>,
}

/// Builds the report for `module`.
pub fn report(module: &Module) -> CostReport {
    let (text, lines) = print_module_with_lines(module);
    let header_lines = function_header_lines(module, &text);
    let mut functions = Vec::new();
    for (n, (id, func)) in module.functions.iter().enumerate() {
        let mut sites = Vec::new();
        for (op, _) in preorder(func) {
            let Some(data) = func.ops.get(op) else { continue };
            let kinds = classify(module, func, &data.kind);
            if !kinds.iter().any(|&k| k) {
                continue;
            }
            let line = lines.get(id).and_then(|m| m.get(op)).copied().unwrap_or(0);
            sites.push(Site { line, kinds, text: print_op_head(module, func, op) });
        }
        functions.push(FunctionCost {
            name: func.name.clone(),
            is_async: func.is_async,
            line: header_lines.get(n).copied().unwrap_or(0),
            sites,
        });
    }
    CostReport { module: module.name.clone(), functions }
}

/// The line of each function's header in the printed module, in arena order: the printer
/// writes functions in arena order, each header on a line starting `fn $` or `async fn $`.
fn function_header_lines(module: &Module, text: &str) -> Vec<u32> {
    let mut out = Vec::with_capacity(module.functions.len());
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("fn $") || line.starts_with("async fn $") {
            out.push(i as u32 + 1);
        }
    }
    out
}

/// Which kinds of cost `kind` has.
fn classify(module: &Module, func: &FunctionData, kind: &OpKind) -> [bool; 6] {
    let mut k = [false; 6];
    k[3] = kind.is_await();
    match kind {
        OpKind::StringLit { .. } | OpKind::StrConcat { .. } | OpKind::ArrayNew { .. } | OpKind::ArrayPush { .. } => {
            k[0] = true
        }
        OpKind::Clone { src, .. } => {
            k[1] = true;
            let ty = func.locals.get(*src).map(|l| l.ty.through_ref().0.clone());
            k[0] = ty.is_some_and(|t| t.owns_heap(module));
        }
        OpKind::RuntimeCall { func: rt, class, args, .. } => {
            k[2] = true;
            let class_ty = class.map(Type::Class);
            let ret = rt.data().ret;
            // The array library's generic rows take their element type from the first argument.
            let first = args.first().and_then(Operand::as_local).and_then(|l| func.locals.get(l));
            let elem = first.and_then(|l| nagi_low::runtime::element_type(&l.ty));
            k[0] = ret.to_type(class_ty.as_ref(), elem).is_some_and(|t| t.owns_heap(module));
        }
        OpKind::Call { .. } => k[4] = true,
        // A task's frame is allocated when it is spawned.
        OpKind::ScopeSpawn { .. } => {
            k[0] = true;
            k[5] = true;
        }
        // The job is encoded as JSON (allocates) and inserted by the database thread.
        OpKind::QueuePush { .. } => k[0] = true,
        // An actor is a task of its own; a message is allocated, and the sender waits for
        // room in the mailbox (and a call for the reply).
        OpKind::ActorStart { .. } => {
            k[0] = true;
            k[5] = true;
        }
        // Another handle of a supervised actor: the runtime's handle box. A deferred call holds
        // its arguments in a box until its drop makes the call.
        OpKind::SupervisorChild { .. } | OpKind::DeferNew { .. } => k[0] = true,
        OpKind::ActorCall { .. } | OpKind::ActorSend { .. } => k[0] = true,
        _ => {}
    }
    k
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn summary(counts: [usize; 6]) -> String {
    format!(
        "{}, {}, {}, {}, {}, {}",
        plural(counts[0], "allocation", "allocations"),
        plural(counts[1], "clone", "clones"),
        plural(counts[2], "runtime call", "runtime calls"),
        plural(counts[3], "await", "awaits"),
        plural(counts[4], "call", "calls"),
        plural(counts[5], "spawn", "spawns"),
    )
}

impl CostReport {
    /// The report as text (the format is described in `docs/passes.md`). `low_command` is the
    /// command that prints the Low text the line numbers refer to.
    pub fn render(&self, low_command: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "cost report for module {}", self.module);
        let _ = writeln!(out, "lines refer to the Low printed by `{low_command}`");
        // Wide enough for the longest combination an operation can have.
        let width = "alloc,rtcall,await".len();
        let mut totals = [0usize; 6];
        for f in &self.functions {
            out.push('\n');
            let asyncness = if f.is_async { "async " } else { "" };
            let _ = writeln!(out, "{asyncness}fn ${} (line {})", f.name, f.line);
            for site in &f.sites {
                let tags: Vec<&str> = KINDS.iter().zip(&site.kinds).filter(|(_, k)| **k).map(|(n, _)| *n).collect();
                let _ = writeln!(out, "  {:>5}  {:<width$} {}", site.line, tags.join(","), site.text);
            }
            let counts = f.counts();
            for (t, c) in totals.iter_mut().zip(counts) {
                *t += c;
            }
            let _ = writeln!(out, "  = {}", summary(counts));
        }
        out.push('\n');
        let _ =
            writeln!(out, "total: {} in {}", summary(totals), plural(self.functions.len(), "function", "functions"));
        out
    }
}
