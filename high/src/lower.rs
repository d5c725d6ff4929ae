//! Lowering: typed High ([`tir`]) → Low, with every move, copy, borrow, drop and await made
//! explicit.
//!
//! Ownership is decided here, from the context of each read (docs/design.md §4):
//! - A read in a *consuming* position (a `let` initialiser, an assigned value, a pushed value, a
//!   class-literal field, a returned value, an array-literal element, an implicit `T?` wrap)
//!   moves a non-copy local; moving out of a borrowed parameter, a loop variable, a field or an
//!   element is an error that suggests `.clone()`.
//! - Every other read borrows: operations that accept a value or a reference read the local
//!   directly, and calls get an explicit `borrow` (a fresh reference local each time, so the
//!   verifier's flow-insensitive reference tracking stays exact).
//! - Values that nobody consumes are dropped: temporaries at the end of their statement, `let`
//!   bindings at the end of their block, everything still live at `return`, `break` and
//!   `continue`. Where the arms of an `if` disagree about whether a local was moved, the arm
//!   that still owns it drops it, so after the `if` the local is moved on every path.
//! - A non-copy local declared outside a loop may not be moved inside it (it would be moved
//!   again on the next iteration); assigning it a new value is fine.
//!
//! The result verifies: lowering keeps exactly the invariants `nagi_low::verifier` checks.
//!
//! Error codes: `H420` use after move, `H421` move out of a borrowed parameter or loop
//! variable, `H422` move inside a loop of a value declared outside it, `H423` move out of a
//! field or an element, `H424` move of a value while a `match` arm borrows its payload.

mod actors;
mod closures;
mod expr;
mod failures;
mod maps;
mod order;
mod outbound;
mod patterns;
mod queues;
mod schedules;
mod stmt;
mod tasks;
mod testing;

use std::collections::{HashMap, HashSet};

use nagi_low::{
    BlockData, BlockId, ClassData, ClassId, Diagnostic, EnumData, EnumId, FieldData, FuncId, FunctionData, LabelData,
    LabelId, LocalData, LocalId, Module, OpData, OpKind, QueueId, RouteDecl, RuntimeFn, Span as LowSpan, SupervisorId,
    TableDecl, Type, VariantData,
};
use nagi_syntax::ast::Span;

use crate::tir::{self, LocalKind, ParamMode, Program, Ty};

/// Lowers a checked program into a Low module called `module_name`.
///
/// Errors: ownership errors the type checker cannot see (use after move, move out of a
/// borrow, move inside a loop), all of them, in source order per function.
pub fn lower(program: &Program, module_name: &str) -> Result<Module, Vec<Diagnostic>> {
    lower_for(program, module_name, false)
}

/// [`lower`], or, when `tests` is set, a test build: the same functions, with a `main` that
/// runs the test `rtcall test.selected` names (the program's own `main` is `main.program`).
pub fn lower_for(program: &Program, module_name: &str, tests: bool) -> Result<Module, Vec<Diagnostic>> {
    let mut module = Module::new(module_name);
    let classes: Vec<ClassId> = program
        .classes
        .iter()
        .map(|c| module.classes.alloc(ClassData { name: c.name.clone(), fields: Vec::new() }))
        .collect();
    let enums: Vec<EnumId> = program
        .enums
        .iter()
        .map(|e| module.enums.alloc(EnumData { name: e.name.clone(), variants: Vec::new() }))
        .collect();
    let cx = Types { classes: &classes, enums: &enums };
    for (class, &id) in program.classes.iter().zip(&classes) {
        module.classes[id].fields =
            class.fields.iter().map(|f| FieldData { name: f.name.clone(), ty: cx.low(&f.ty) }).collect();
    }
    for (data, &id) in program.enums.iter().zip(&enums) {
        module.enums[id].variants = data
            .variants
            .iter()
            .map(|v| VariantData { name: v.name.clone(), payload: v.payload.as_ref().map(|t| cx.low(t)) })
            .collect();
    }
    module.tables = program
        .tables
        .iter()
        .map(|t| TableDecl { name: t.name.clone(), class: classes[t.class], key: t.key as u32 })
        .collect();
    module.configs = program
        .configs
        .iter()
        .map(|c| nagi_low::ConfigDecl {
            name: c.name.clone(),
            ty: cx.low(&c.ty),
            env: c.env.clone(),
            secret: c.secret,
            default: c.default.clone(),
        })
        .collect();
    let functions: Vec<FuncId> = program
        .functions
        .iter()
        .map(|f| module.functions.alloc(FunctionData::new(f.name.clone(), Type::Unit)))
        .collect();
    module.routes = program
        .routes
        .iter()
        .map(|r| RouteDecl {
            method: r.method,
            path: r.path.clone(),
            handler: functions[r.handler],
            headers: r.headers.clone(),
        })
        .collect();
    let tasks = tasks::declare_task_functions(&mut module, program, &program.spawned, "task");
    let blocking = tasks::declare_task_functions(&mut module, program, &program.spawned_blocking, "blocking");
    let deferred = tasks::declare_task_functions(&mut module, program, &program.deferred, "defer");
    let messages = actors::declare_message_functions(&mut module, program);
    let supervisors = actors::declare_supervisors(&mut module, program, &functions);
    let queues = queues::declare_queues(&mut module, program, &functions);
    let schedule_handlers = schedules::declare_schedules(&mut module, program, &functions);
    let mut errors = Vec::new();
    for (index, function) in program.functions.iter().enumerate() {
        let types = Types { classes: &classes, enums: &enums };
        let shared = Shared {
            program,
            types,
            functions: &functions,
            tasks: &tasks,
            blocking: &blocking,
            deferred: &deferred,
            messages: &messages,
            supervisors: &supervisors,
            queues: &queues,
        };
        let (data, mut errs) = FnCx::lower(&shared, function);
        module.functions[functions[index]] = data;
        errors.append(&mut errs);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    tasks::define_task_functions(&mut module, &functions, &tasks, true);
    tasks::define_task_functions(&mut module, &functions, &blocking, false);
    tasks::define_task_functions(&mut module, &functions, &deferred, false);
    actors::define_message_functions(&mut module, &functions, &messages);
    schedules::define_schedule_handlers(&mut module, program, &functions, &schedule_handlers);
    if tests {
        let ids: Vec<FuncId> = program.tests.iter().map(|t| functions[t.function]).collect();
        testing::test_main(&mut module, &ids);
    }
    Ok(module)
}

/// Maps High types to Low types.
struct Types<'a> {
    classes: &'a [ClassId],
    enums: &'a [EnumId],
}

impl Types<'_> {
    fn low(&self, ty: &Ty) -> Type {
        match ty {
            Ty::I32 => Type::I32,
            Ty::I64 => Type::I64,
            Ty::F64 => Type::F64,
            Ty::Bool => Type::Bool,
            Ty::Unit => Type::Unit,
            Ty::String => Type::String,
            Ty::Time => Type::Time,
            Ty::Duration => Type::Duration,
            Ty::Secret => Type::String,
            Ty::Uuid => Type::Uuid,
            Ty::Array(t) => Type::Array(Box::new(self.low(t))),
            Ty::Option(t) => Type::Option(Box::new(self.low(t))),
            Ty::Map(k, v) => Type::Map(Box::new(self.low(k)), Box::new(self.low(v))),
            Ty::Class(c) => Type::Class(self.classes[*c]),
            Ty::Enum(e) => Type::Enum(self.enums[*e]),
            Ty::Task(t) => Type::Task(Box::new(self.low(t))),
            Ty::Actor(c) => Type::Actor(self.classes[*c]),
            Ty::Param(name, _) => {
                unreachable!("type parameter `{name}` in a checked program: only instances reach one")
            }
            Ty::Fn(..) => unreachable!("a function type in a checked program: only instances reach one"),
        }
    }

    /// The Low type of a parameter received in `mode`.
    fn param(&self, ty: &Ty, mode: ParamMode) -> Type {
        match mode {
            ParamMode::Borrowed if ty.is_copy() => self.low(ty),
            ParamMode::Borrowed => Type::reference(false, self.low(ty)),
            ParamMode::Inout => Type::reference(true, self.low(ty)),
            ParamMode::Owned => self.low(ty),
        }
    }
}

/// What every function's lowering reads.
struct Shared<'a> {
    program: &'a Program,
    types: Types<'a>,
    functions: &'a [FuncId],
    /// The task function of each spawned function (`lower/tasks.rs`).
    tasks: &'a [Option<FuncId>],
    /// The blocking-pool function of each function `spawn_blocking` starts (`lower/tasks.rs`).
    blocking: &'a [Option<FuncId>],
    /// The owning function of each function a `defer` calls (`lower/tasks.rs`).
    deferred: &'a [Option<FuncId>],
    /// The message function of each handler that borrows a parameter (`lower/actors.rs`).
    messages: &'a [Option<FuncId>],
    /// The Low id of each supervisor (`lower/actors.rs`).
    supervisors: &'a [SupervisorId],
    /// The Low id of each queue (`lower/queues.rs`).
    queues: &'a [QueueId],
}

/// How a High local lives in Low.
#[derive(Clone, Copy)]
struct Binding {
    low: LocalId,
    /// The Low local holds a reference to the value (borrowed and `inout` parameters of
    /// non-copy types, `inout` parameters of any type, loop variables over non-copy elements).
    is_ref: bool,
}

/// Whether an owned non-copy Low local holds a value on the current path. Locals not in the
/// map hold none (never assigned).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Own {
    Live,
    Moved,
}

/// What a scope is, for unwinding at `break`, `continue` and `return`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ScopeKind {
    Block,
    /// A loop body; `break`/`continue` name this label.
    Loop(LabelId),
    /// A `db.transaction` body: leaving it commits.
    Transaction,
    /// A `scope` body, whose `Scope` local this is: leaving it waits for its tasks.
    Tasks(LocalId),
}

struct Scope {
    kind: ScopeKind,
    /// Owned non-copy locals declared in this scope, in declaration order.
    owned: Vec<LocalId>,
}

/// Lowers one function.
struct FnCx<'a> {
    shared: &'a Shared<'a>,
    tir: &'a tir::Function,
    f: FunctionData,
    bindings: Vec<Binding>,
    state: HashMap<LocalId, Own>,
    /// For each owned local, how many loops enclosed its declaration.
    loop_depth_of: HashMap<LocalId, usize>,
    scopes: Vec<Scope>,
    /// Temporaries of the statements being lowered, innermost last.
    temps: Vec<Vec<LocalId>>,
    cur: BlockId,
    reachable: bool,
    names: HashSet<String>,
    next_temp: usize,
    next_label: usize,
    /// Labels of loops that some `break` leaves, to know whether code after the loop runs.
    broken: HashSet<LabelId>,
    /// Operands that a later operand may change, read into a temporary at their turn.
    pinned: order::Pinned,
    /// Locals whose payload a `match` arm being lowered borrows, which may not move meanwhile.
    matched: Vec<LocalId>,
    /// The loop depths of the closure methods being lowered (`closures.rs`): a move inside one
    /// of a value from outside it is a closure taking what it captured.
    closure_loops: Vec<usize>,
    /// Values taken for an operation that other expressions are still evaluated for (the
    /// fields before the last of a class literal, a value assigned or pushed while its place is
    /// computed): counted as moved, but no operation owns them yet, so a failure on the way
    /// (`try`) drops them ([`FnCx::held_operand`]).
    in_flight: Vec<LocalId>,
    errors: Vec<Diagnostic>,
}

impl<'a> FnCx<'a> {
    fn lower(shared: &'a Shared<'a>, tir: &'a tir::Function) -> (FunctionData, Vec<Diagnostic>) {
        let mut f = FunctionData::new(tir.name.clone(), shared.result(tir));
        f.is_async = tir.is_async;
        let body = f.body;
        let mut cx = FnCx {
            shared,
            tir,
            f,
            bindings: Vec::new(),
            state: HashMap::new(),
            loop_depth_of: HashMap::new(),
            scopes: vec![Scope { kind: ScopeKind::Block, owned: Vec::new() }],
            temps: Vec::new(),
            cur: body,
            reachable: true,
            names: HashSet::new(),
            next_temp: 0,
            next_label: 0,
            broken: HashSet::new(),
            pinned: order::Pinned::default(),
            matched: Vec::new(),
            closure_loops: Vec::new(),
            in_flight: Vec::new(),
            errors: Vec::new(),
        };
        cx.declare_locals();
        cx.apply_defaults();
        cx.block_stmts(&tir.body);
        if cx.reachable {
            if tir.ret == Ty::Unit {
                cx.unwind_all();
                let value = cx.returned(None);
                cx.emit(OpKind::Return { value });
            } else {
                // The checker proves every path of a non-unit function returns; this keeps the
                // Low well-formed should that proof ever be weaker than the verifier's.
                cx.emit(OpKind::Trap { message: format!("function `{}` ended without returning a value", tir.name) });
            }
        }
        (cx.f, cx.errors)
    }

    /// Allocates a Low local for every High local, parameters first, keeping High names
    /// (shadowed names get a numeric suffix).
    fn declare_locals(&mut self) {
        let defaults: HashMap<usize, ()> = self.tir.defaults.iter().map(|(l, _)| (*l, ())).collect();
        let queue_handler = self.is_queue_handler();
        for (index, local) in self.tir.locals.iter().enumerate() {
            let is_param = self.tir.params.contains(&index);
            // A queue's handler receives the job and the attempt under the names Low binds.
            let written = match self.tir.params.iter().position(|&p| p == index) {
                Some(i) if queue_handler => queues::PARAM_NAMES[i.min(1)],
                _ => &local.name,
            };
            let name = self.unique_name(written);
            let (ty, is_ref) = match local.kind {
                LocalKind::Param(mode) if defaults.contains_key(&index) => {
                    (Type::Option(Box::new(self.shared.types.param(&local.ty, mode))), false)
                }
                LocalKind::Param(mode) => {
                    let ty = self.shared.types.param(&local.ty, mode);
                    let is_ref = ty.is_ref();
                    (ty, is_ref)
                }
                LocalKind::LoopVar | LocalKind::MatchBinding if !local.ty.is_copy() => {
                    (Type::reference(false, self.shared.types.low(&local.ty)), true)
                }
                _ => (self.shared.types.low(&local.ty), false),
            };
            let low = self.f.locals.alloc(LocalData { name, ty });
            if is_param {
                self.f.params.push(low);
                if !is_ref && !local.ty.is_copy() {
                    self.state.insert(low, Own::Live);
                    self.loop_depth_of.insert(low, 0);
                    self.scopes[0].owned.push(low);
                }
            }
            self.bindings.push(Binding { low, is_ref });
        }
    }

    /// Route query parameters with defaults arrive as `Option<T>`; the body sees the value or
    /// the default in a local of its own. A `String` default is owned: the option is consumed
    /// by the unwrap or dropped (it is `none`) where the literal is made, and the value is the
    /// parameter the body owns from then on.
    fn apply_defaults(&mut self) {
        for (local, literal) in self.tir.defaults.clone() {
            let param = self.bindings[local].low;
            let name = format!("{}_value", self.tir.locals[local].name);
            let name = self.unique_name(&name);
            let ty = self.shared.types.low(&self.tir.locals[local].ty);
            let owned = !ty.is_copy();
            let value = self.f.locals.alloc(LocalData { name, ty });
            self.bindings[local].low = value;
            let present = self.temp(Type::Bool);
            self.emit(OpKind::OptionIsSome { dest: present, option: param });
            let (then_block, else_block) = self.emit_if(nagi_low::Operand::Local(present), true);
            self.in_block(then_block, |cx| {
                cx.emit(OpKind::OptionUnwrap { dest: value, option: param });
            });
            self.in_block(else_block.expect("requested"), |cx| {
                let constant = match literal {
                    tir::Literal::I32(v) => nagi_low::Constant::I32(v),
                    tir::Literal::I64(v) => nagi_low::Constant::I64(v),
                    tir::Literal::F64(v) => nagi_low::Constant::F64(v),
                    tir::Literal::Bool(v) => nagi_low::Constant::Bool(v),
                    tir::Literal::Str(text) => {
                        cx.emit(OpKind::Drop { local: param });
                        cx.emit(OpKind::StringLit { dest: value, value: text });
                        return;
                    }
                };
                cx.emit(OpKind::Const { dest: value, value: constant });
            });
            if owned {
                // The option is gone on both paths; the value takes its place among the
                // function's owned locals.
                self.state.insert(param, Own::Moved);
                self.state.insert(value, Own::Live);
                self.loop_depth_of.insert(value, 0);
                self.scopes[0].owned.push(value);
            }
        }
    }

    fn unique_name(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 1;
        while !self.names.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }

    /// A fresh temporary local. Non-copy temporaries join the innermost statement's list and
    /// are dropped at its end unless consumed.
    /// A local name no other local of the function has: `prefix` and a number.
    fn fresh_name(&mut self, prefix: &str) -> String {
        loop {
            let candidate = format!("{prefix}{}", self.next_temp);
            self.next_temp += 1;
            if self.names.insert(candidate.clone()) {
                return candidate;
            }
        }
    }

    fn temp(&mut self, ty: Type) -> LocalId {
        let name = self.fresh_name("t");
        let copy = ty.is_copy();
        let id = self.f.locals.alloc(LocalData { name, ty });
        if !copy {
            let depth = self.loop_depth();
            self.loop_depth_of.insert(id, depth);
            match self.temps.last_mut() {
                Some(frame) => frame.push(id),
                None => self.scopes.last_mut().expect("a function scope").owned.push(id),
            }
        }
        id
    }

    fn new_label(&mut self) -> LabelId {
        let name = format!("loop{}", self.next_label);
        self.next_label += 1;
        self.f.labels.alloc(LabelData { name })
    }

    fn loop_depth(&self) -> usize {
        self.scopes.iter().filter(|s| matches!(s.kind, ScopeKind::Loop(_))).count()
    }

    /// Appends an operation to the current block (nothing, once the block is unreachable).
    fn emit(&mut self, kind: OpKind) {
        if !self.reachable {
            return;
        }
        if let Some(dest) = kind.dest()
            && !self.f.locals[dest].ty.is_copy()
            && !matches!(kind, OpKind::ForEach { .. })
        {
            self.state.insert(dest, Own::Live);
        }
        let terminator = kind.is_terminator();
        let op = self.f.ops.alloc(OpData { kind });
        self.f.blocks[self.cur].ops.push(op);
        if terminator {
            self.reachable = false;
        }
    }

    /// Emits `if cond { } [else { }]` and returns its blocks, to be filled with `in_block`.
    fn emit_if(&mut self, cond: nagi_low::Operand, with_else: bool) -> (BlockId, Option<BlockId>) {
        let then_block = self.f.blocks.alloc(BlockData::default());
        let else_block = with_else.then(|| self.f.blocks.alloc(BlockData::default()));
        self.emit(OpKind::If { cond, then_block, else_block });
        (then_block, else_block)
    }

    /// Runs `body` with `block` as the current block, then restores the current block and
    /// reachability.
    fn in_block(&mut self, block: BlockId, body: impl FnOnce(&mut Self)) {
        let (saved, reachable) = (self.cur, self.reachable);
        self.cur = block;
        self.reachable = true;
        body(self);
        self.cur = saved;
        self.reachable = reachable;
    }

    fn span(span: Span) -> Option<LowSpan> {
        Some(LowSpan { start: span.start, end: span.end })
    }

    fn error(&mut self, code: &'static str, message: String, span: Span, label: &str) {
        self.errors.push(Diagnostic::new(code, message).at(Self::span(span)).label(label));
    }

    fn drop_if_live(&mut self, local: LocalId) {
        if self.state.get(&local) == Some(&Own::Live) {
            self.emit(OpKind::Drop { local });
            self.state.insert(local, Own::Moved);
        }
    }

    /// Drops the live temporaries of the innermost statement and forgets them.
    fn drop_temps(&mut self) {
        if let Some(frame) = self.temps.pop() {
            for &local in frame.iter().rev() {
                self.drop_if_live(local);
            }
        }
    }

    /// Runs `body` as one statement: temporaries it creates are dropped at its end.
    fn statement(&mut self, body: impl FnOnce(&mut Self)) {
        self.temps.push(Vec::new());
        body(self);
        self.drop_temps();
    }

    /// Emits the drops (and transaction commits) for leaving every scope from the innermost
    /// through `scopes[from]`, on this path only: the recorded states are left as they are,
    /// since the code that follows is unreachable.
    fn unwind_to(&mut self, from: usize) {
        let saved = self.state.clone();
        let temps: Vec<LocalId> = self.temps.iter().flatten().rev().copied().collect();
        if from == 0 {
            for local in temps {
                self.drop_if_live(local);
            }
        }
        for index in (from..self.scopes.len()).rev() {
            let owned = self.scopes[index].owned.clone();
            for &local in owned.iter().rev() {
                self.drop_if_live(local);
            }
            match self.scopes[index].kind {
                ScopeKind::Transaction => self.runtime_call(RuntimeFn::DbCommit, None, Vec::new(), None),
                ScopeKind::Tasks(scope) => self.end_scope(scope),
                ScopeKind::Block | ScopeKind::Loop(_) => {}
            }
        }
        self.state = saved;
    }

    /// Everything still owned, before a `return`.
    fn unwind_all(&mut self) {
        self.unwind_to(0);
    }

    /// Emits an `rtcall` of `func` (awaited when the function is async).
    fn runtime_call(
        &mut self,
        func: RuntimeFn,
        dest: Option<LocalId>,
        args: Vec<nagi_low::Operand>,
        class: Option<ClassId>,
    ) {
        let awaited = func.data().is_async;
        self.emit(OpKind::RuntimeCall { dest, func, class, args, awaited });
    }

    /// Makes the states after the two arms of an `if` agree: an arm that still owns a local
    /// the other arm moved drops it at its end. Returns the merged state.
    fn merge_arms(
        &mut self,
        then_end: (BlockId, bool, HashMap<LocalId, Own>),
        else_end: (Option<BlockId>, bool, HashMap<LocalId, Own>),
        if_op_block: BlockId,
    ) {
        let (then_block, then_reach, then_state) = then_end;
        let (mut else_block, else_reach, else_state) = else_end;
        match (then_reach, else_reach) {
            (false, false) => {
                self.reachable = false;
                self.state = then_state;
            }
            (true, false) => self.state = then_state,
            (false, true) => self.state = else_state,
            (true, true) => {
                let mut keys: Vec<LocalId> = then_state.keys().chain(else_state.keys()).copied().collect();
                keys.sort();
                keys.dedup();
                let mut merged = then_state.clone();
                for local in keys {
                    let a = then_state.get(&local).copied();
                    let b = else_state.get(&local).copied();
                    let live_a = a == Some(Own::Live);
                    let live_b = b == Some(Own::Live);
                    if live_a == live_b {
                        merged.insert(local, if live_a { Own::Live } else { a.or(b).unwrap_or(Own::Moved) });
                        continue;
                    }
                    let arm = if live_a {
                        then_block
                    } else {
                        *else_block.get_or_insert_with(|| self.add_else_block(if_op_block))
                    };
                    self.in_block(arm, |cx| cx.emit(OpKind::Drop { local }));
                    merged.insert(local, Own::Moved);
                }
                self.state = merged;
            }
        }
    }

    /// Gives the last `if` of `block` an empty else-block and returns it.
    fn add_else_block(&mut self, block: BlockId) -> BlockId {
        let new = self.f.blocks.alloc(BlockData::default());
        let op = *self.f.blocks[block].ops.last().expect("the if was just emitted");
        if let OpKind::If { else_block, .. } = &mut self.f.ops[op].kind {
            *else_block = Some(new);
        }
        new
    }
}
