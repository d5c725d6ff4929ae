//! One Low function → one LLVM function.
//!
//! Every Low local gets a stack slot (`alloca` in the entry block); operations load their
//! operands from slots and store their results into them, and LLVM's `mem2reg`/SROA turn the
//! slots into SSA values at `-O1` and above. A borrow is the address of the owner's slot (or
//! of a field or element inside it), so references need no extra bookkeeping.
//!
//! Structured control flow becomes basic blocks. The body is walked with an explicit work
//! stack rather than recursion, so nesting depth is bounded by memory only. After a `break`,
//! `continue`, `return` or `trap`, the rest of the Low block is unreachable and is skipped.
//!
//! Nagi functions have internal linkage (named `nagi.fn.NAME`; an exported one, see
//! `Options::export`, has external linkage under its C symbol instead), are `nounwind` (a trap ends
//! the process inside the runtime), and their reference parameters carry `noalias`,
//! `nonnull`, `dereferenceable` and `align`, with `readonly` on shared ones: the verifier's
//! exclusivity rule at call sites (V244) is what makes `noalias` sound, and it is what lets LLVM
//! keep a slice's pointer and length in registers and vectorize loops over it, as rustc does.

use inkwell::IntPredicate;
use inkwell::attributes::AttributeLoc;
use inkwell::basic_block::BasicBlock;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Linkage;
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FunctionValue, PointerValue};
use la_arena::ArenaMap;
use nagi_low::{
    ArenaGet, BlockId, ClassId, Constant, Family, FuncId, FunctionData, LabelId, LocalId, OpId, OpKind, Operand, Type,
};

use crate::enums;
use crate::frames::{self, Frame};
use crate::glue;
use crate::ir;
use crate::runtime_calls::{self, Rt};
use crate::{Cx, Error};

/// Declares `func` with its LLVM signature and parameter attributes: internal as
/// `nagi.fn.NAME`, or external as `symbol` when it is exported.
pub(crate) fn declare<'ctx>(cx: &Cx<'ctx, '_>, func: &FunctionData, symbol: Option<&str>) -> FunctionValue<'ctx> {
    let params: Vec<BasicMetadataTypeEnum> = func.param_types().map(|t| cx.layouts.llvm(t).into()).collect();
    let fn_type = crate::fn_type(&cx.layouts, cx.context, &params, &func.ret);
    let f = match symbol {
        Some(symbol) => cx.module.add_function(symbol, fn_type, Some(Linkage::External)),
        None => cx.module.add_function(&format!("nagi.fn.{}", func.name), fn_type, Some(Linkage::Internal)),
    };
    cx.nounwind(f);
    for (i, ty) in func.param_types().enumerate() {
        let Type::Ref { mutable, pointee } = ty else { continue };
        let at = AttributeLoc::Param(i as u32);
        f.add_attribute(at, cx.attribute("noalias", 0));
        f.add_attribute(at, cx.attribute("nonnull", 0));
        let size = cx.layouts.size(pointee);
        if size > 0 {
            f.add_attribute(at, cx.attribute("dereferenceable", size));
        }
        f.add_attribute(at, cx.attribute("align", u64::from(cx.layouts.align(pointee))));
        if !mutable {
            f.add_attribute(at, cx.attribute("readonly", 0));
        }
    }
    f
}

/// Emits the body of `func` into `f`, or, for an async function, into its frame's `poll`
/// (`frames.rs`), whose slots are the frame's fields and whose entry dispatches on the state.
/// A function that can recurse (`recursive`) first calls the runtime's stack check, which traps
/// with `stack overflow` past the thread's limit; a `poll` checks on every resume.
pub(crate) fn define<'ctx>(cx: &Cx<'ctx, '_>, id: FuncId, func: &FunctionData, recursive: bool) -> Result<(), Error> {
    let frame = cx.frames.get(id);
    let f = match frame {
        Some(frame) => frame.poll,
        None => cx.functions[id],
    };
    let entry = cx.context.append_basic_block(f, "entry");
    cx.builder.position_at_end(entry);
    let (slots, counters, poll) = match frame {
        Some(frame) => {
            let ((slots, counters), poll) = frames::poll_slots(cx, func, frame)?;
            (slots, counters, Some(poll))
        }
        None => {
            let (slots, counters) = stack_slots(cx, f, func)?;
            (slots, counters, None)
        }
    };
    let start = cx.context.append_basic_block(f, "start");
    let dispatch = if poll.is_some() { cx.context.append_basic_block(f, "dispatch") } else { start };
    if recursive {
        stack_check(cx, f, dispatch)?;
    } else {
        cx.builder.build_unconditional_branch(dispatch)?;
    }
    cx.builder.position_at_end(start);
    let mut emitter = FnEmitter { cx, func, llfn: f, slots, counters, labels: ArenaMap::default(), frame, poll };
    emitter.body()?;
    if !emitter.terminated() {
        // The verifier guarantees control never reaches the end of a body (V245).
        cx.builder.build_unreachable()?;
    }
    if let (Some(frame), Some(poll)) = (frame, &emitter.poll) {
        frames::finish_poll(cx, f, dispatch, start, poll)?;
        frames::define_helpers(cx, func, frame)?;
    }
    Ok(())
}

pub(crate) use crate::ir::Slots;

/// The stack slots of an ordinary function: one `alloca` per local and per `for` counter, with
/// the parameters stored into theirs.
fn stack_slots<'ctx>(cx: &Cx<'ctx, '_>, f: FunctionValue<'ctx>, func: &FunctionData) -> Result<Slots<'ctx>, Error> {
    let mut slots = ArenaMap::default();
    for (id, local) in func.locals.iter() {
        let slot = cx.builder.build_alloca(cx.layouts.llvm(&local.ty), &local.name)?;
        slots.insert(id, slot);
    }
    // `for` keeps its position in a hidden counter, separate from the Low loop variable (which
    // the body may reassign without changing the iteration, as in Rust).
    let mut counters = ArenaMap::default();
    for (id, op) in func.ops.iter() {
        let ty = match &op.kind {
            OpKind::ForRange { var, .. } => cx.layouts.llvm(func.local_type(*var)),
            OpKind::ForEach { .. } => cx.context.i64_type().into(),
            _ => continue,
        };
        counters.insert(id, cx.builder.build_alloca(ty, "for.i")?);
    }
    for (i, &param) in func.params.iter().enumerate() {
        let value = f.get_nth_param(i as u32).ok_or_else(|| Error::internal("parameter count"))?;
        cx.builder.build_store(slots[param], value)?;
    }
    Ok((slots, counters))
}

/// The stack check at the entry of a function that can recurse, then a branch to `start`:
///
/// ```text
/// %sp = llvm.read_register.i64(!"rsp")        ; the frame address off x86-64
/// %limit = load @nagi.stack.limit            ; thread-local, all ones until computed
/// br (icmp ult %sp, %limit), %stack.slow, %start
/// stack.slow:                                  ; cold: first check of a thread, or overflow
///   call nagi_rt_stack_slow(%sp, @nagi.stack.limit)
///   br %start
/// ```
///
/// The fast path is a thread-local load and a compare, inline; the runtime computes each
/// thread's limit and decides the trap (`runtime/src/stack.rs`), so the rule has one home.
fn stack_check<'ctx>(cx: &Cx<'ctx, '_>, f: FunctionValue<'ctx>, start: BasicBlock<'ctx>) -> Result<(), Error> {
    let b = &cx.builder;
    let i64t = cx.context.i64_type();
    let sp = stack_pointer(cx)?;
    let limit_slot = stack_limit_global(cx);
    let limit = ir::load(b, i64t.into(), limit_slot.as_pointer_value(), "stack.limit")?.into_int_value();
    let past = b.build_int_compare(IntPredicate::ULT, sp, limit, "stack.past")?;
    let slow = cx.context.append_basic_block(f, "stack.slow");
    b.build_conditional_branch(past, slow, start)?;
    b.position_at_end(slow);
    let slot = b.build_pointer_cast(limit_slot.as_pointer_value(), cx.layouts.byte_ptr(), "stack.slot")?;
    runtime_calls::call(cx, Rt::StackSlow, &[sp.into(), slot.into()])?;
    b.build_unconditional_branch(start)?;
    Ok(())
}

/// The stack pointer as an `i64`: `llvm.read_register` of `rsp` on x86-64 (one instruction),
/// elsewhere the frame address (which costs the function a frame pointer).
fn stack_pointer<'ctx>(cx: &Cx<'ctx, '_>) -> Result<inkwell::values::IntValue<'ctx>, Error> {
    let b = &cx.builder;
    let i64t = cx.context.i64_type();
    let x86_64 = inkwell::targets::TargetMachine::get_default_triple().as_str().to_string_lossy().starts_with("x86_64");
    let (name, types, args): (&str, Vec<inkwell::types::BasicTypeEnum>, Vec<BasicMetadataValueEnum>) = if x86_64 {
        let register = cx.context.metadata_node(&[cx.context.metadata_string("rsp").into()]);
        ("llvm.read_register", vec![i64t.into()], vec![register.into()])
    } else {
        ("llvm.frameaddress", vec![cx.layouts.byte_ptr().into()], vec![cx.context.i32_type().const_zero().into()])
    };
    let intrinsic = Intrinsic::find(name)
        .and_then(|i| i.get_declaration(&cx.module, &types))
        .ok_or_else(|| Error::internal(format!("LLVM has no {name}")))?;
    let value = b
        .build_call(intrinsic, &args, "sp")?
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| Error::internal(format!("{name} returns nothing")))?;
    Ok(match value {
        BasicValueEnum::PointerValue(p) => b.build_ptr_to_int(p, i64t, "sp")?,
        other => other.into_int_value(),
    })
}

/// The module's thread-local stack limit, `@nagi.stack.limit` (all ones until the runtime
/// stores the thread's limit), created on first use.
fn stack_limit_global<'ctx>(cx: &Cx<'ctx, '_>) -> inkwell::values::GlobalValue<'ctx> {
    if let Some(global) = cx.module.get_global("nagi.stack.limit") {
        return global;
    }
    let i64t = cx.context.i64_type();
    let global = cx.module.add_global(i64t, None, "nagi.stack.limit");
    global.set_initializer(&i64t.const_all_ones());
    global.set_linkage(inkwell::module::Linkage::Internal);
    // LLVM's MCJIT cannot place thread-locals; JIT-run code runs on one thread anyway.
    if cx.entry != crate::Entry::Jit {
        global.set_thread_local(true);
        global.set_thread_local_mode(Some(inkwell::ThreadLocalMode::InitialExecTLSModel));
    }
    global
}

/// What is left to do while walking a body.
enum Work<'ctx> {
    /// Emit the operations of `block` from index `next` on.
    Block { block: BlockId, next: usize },
    /// Branch to the block, unless the current block already ended.
    Branch(BasicBlock<'ctx>),
    /// Continue emitting at the end of the block.
    Enter(BasicBlock<'ctx>),
}

/// The state of one function's emission.
pub(crate) struct FnEmitter<'a, 'ctx, 'm> {
    pub(crate) cx: &'a Cx<'ctx, 'm>,
    pub(crate) func: &'m FunctionData,
    pub(crate) llfn: FunctionValue<'ctx>,
    slots: ArenaMap<LocalId, PointerValue<'ctx>>,
    counters: ArenaMap<OpId, PointerValue<'ctx>>,
    /// For each label: where `break` goes, and where `continue` goes (loops only).
    labels: ArenaMap<LabelId, (BasicBlock<'ctx>, Option<BasicBlock<'ctx>>)>,
    /// The frame of an async function, whose body is its `poll`.
    pub(crate) frame: Option<&'a Frame<'ctx>>,
    /// The `poll` function's own state, for an async function.
    pub(crate) poll: Option<frames::Poll<'ctx>>,
}

impl<'a, 'ctx, 'm> FnEmitter<'a, 'ctx, 'm> {
    /// A stack slot of `ty` in the function's entry block, so that a slot made in a loop does
    /// not grow the stack on every iteration; the builder stays where it was.
    pub(crate) fn entry_alloca(&self, ty: BasicTypeEnum<'ctx>, name: &str) -> Result<PointerValue<'ctx>, Error> {
        let b = &self.cx.builder;
        let here = b.get_insert_block().ok_or_else(|| Error::internal("no insertion block"))?;
        let entry = self.llfn.get_first_basic_block().ok_or_else(|| Error::internal("no entry block"))?;
        match entry.get_first_instruction() {
            Some(first) => b.position_before(&first),
            None => b.position_at_end(entry),
        }
        let slot = b.build_alloca(ty, name);
        b.position_at_end(here);
        Ok(slot?)
    }

    fn body(&mut self) -> Result<(), Error> {
        let mut stack = vec![Work::Block { block: self.func.body, next: 0 }];
        while let Some(work) = stack.pop() {
            match work {
                Work::Block { block, next } => {
                    if self.terminated() {
                        continue;
                    }
                    let Some(&op) = self.func.blocks[block].ops.get(next) else { continue };
                    stack.push(Work::Block { block, next: next + 1 });
                    self.op(op, &mut stack)?;
                }
                Work::Branch(target) => {
                    if !self.terminated() {
                        self.cx.builder.build_unconditional_branch(target)?;
                    }
                }
                Work::Enter(target) => self.cx.builder.position_at_end(target),
            }
        }
        Ok(())
    }

    /// Whether the current block already ends in a terminator.
    pub(crate) fn terminated(&self) -> bool {
        self.cx.builder.get_insert_block().is_none_or(|b| b.get_terminator().is_some())
    }

    /// A new basic block in this function.
    pub(crate) fn block(&self, name: &str) -> BasicBlock<'ctx> {
        self.cx.context.append_basic_block(self.llfn, name)
    }

    pub(crate) fn ty(&self, local: LocalId) -> &'m Type {
        self.func.local_type(local)
    }

    pub(crate) fn slot(&self, local: LocalId) -> PointerValue<'ctx> {
        self.slots[local]
    }

    /// Loads a local's value.
    pub(crate) fn load_local(&self, local: LocalId) -> Result<BasicValueEnum<'ctx>, Error> {
        let name = &self.func.locals[local].name;
        ir::load(&self.cx.builder, self.cx.layouts.llvm(self.ty(local)), self.slot(local), name)
    }

    /// Stores `value` into a local's slot.
    pub(crate) fn store_local(&self, local: LocalId, value: BasicValueEnum<'ctx>) -> Result<(), Error> {
        self.cx.builder.build_store(self.slot(local), value)?;
        Ok(())
    }

    /// Gives a `unit` destination its (empty) value, for calls whose result is `unit`.
    pub(crate) fn store_unit(&self, dest: Option<LocalId>) -> Result<(), Error> {
        if let Some(d) = dest {
            self.store_local(d, self.cx.layouts.unit().const_zero().into())?;
        }
        Ok(())
    }

    /// An operand's value.
    pub(crate) fn operand(&mut self, o: &Operand) -> Result<BasicValueEnum<'ctx>, Error> {
        match o {
            Operand::Local(l) => self.load_local(*l),
            Operand::Const(c) => Ok(self.constant(c)),
        }
    }

    pub(crate) fn constant(&self, c: &Constant) -> BasicValueEnum<'ctx> {
        let cx = self.cx.context;
        match c {
            Constant::I32(v) => cx.i32_type().const_int(*v as i64 as u64, true).into(),
            Constant::I64(v) => cx.i64_type().const_int(*v as u64, true).into(),
            Constant::F64(v) => cx.f64_type().const_float(*v).into(),
            Constant::Bool(v) => cx.bool_type().const_int(u64::from(*v), false).into(),
            Constant::Unit => self.cx.layouts.unit().const_zero().into(),
        }
    }

    /// The type of an operand.
    pub(crate) fn operand_type(&self, o: &Operand) -> Type {
        match o {
            Operand::Local(l) => self.ty(*l).clone(),
            Operand::Const(c) => c.ty(),
        }
    }

    /// Where the value a local stands for lives, and its type: the local's own slot for an
    /// owned value, the pointer it holds for a reference.
    pub(crate) fn place(&self, local: LocalId) -> Result<(PointerValue<'ctx>, &'m Type), Error> {
        match self.ty(local) {
            Type::Ref { pointee, .. } => Ok((self.load_local(local)?.into_pointer_value(), pointee)),
            other => Ok((self.slot(local), other)),
        }
    }

    /// The class a local (an owned class or a reference to one) holds.
    fn class_place(&self, local: LocalId) -> Result<(PointerValue<'ctx>, ClassId), Error> {
        match self.place(local)? {
            (p, Type::Class(c)) => Ok((p, *c)),
            _ => Err(Error::internal("a field access on a local that is not a class")),
        }
    }

    /// The enum a local (an owned enum or a reference to one) holds.
    fn enum_place(&self, local: LocalId) -> Result<(PointerValue<'ctx>, nagi_low::EnumId), Error> {
        match self.place(local)? {
            (p, Type::Enum(e)) => Ok((p, *e)),
            _ => Err(Error::internal("an enum operation on a local that is not an enum")),
        }
    }

    /// The array a local (an owned array or a reference to one) holds, and its element type.
    fn array_place(&self, local: LocalId) -> Result<(PointerValue<'ctx>, &'m Type), Error> {
        match self.place(local)? {
            (p, Type::Array(elem)) => Ok((p, elem)),
            _ => Err(Error::internal("an array operation on a local that is not an array")),
        }
    }

    /// The address of field `index` of the class at `ptr`.
    fn field_ptr(&self, ptr: PointerValue<'ctx>, class: ClassId, index: u32) -> Result<PointerValue<'ctx>, Error> {
        ir::field(&self.cx.builder, self.cx.layouts.class(class), ptr, index, "field")
    }

    fn field_type(&self, class: ClassId, index: u32) -> Result<&'m Type, Error> {
        self.cx
            .low
            .classes
            .get(class)
            .and_then(|c| c.fields.get(index as usize))
            .map(|f| &f.ty)
            .ok_or_else(|| Error::internal("field index out of range"))
    }

    /// The address of element `index` of the array at `array`, trapping with Nagi's message
    /// when the index is outside `0..len`.
    pub(crate) fn element_ptr(
        &mut self,
        array: PointerValue<'ctx>,
        elem: &Type,
        index: &Operand,
    ) -> Result<PointerValue<'ctx>, Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let st = cx.layouts.array(elem);
        let i = self.operand(index)?.into_int_value();
        let len = ir::load_field(b, st, array, 1, "len")?.into_int_value();
        // One unsigned comparison covers negative indexes too.
        let inside = b.build_int_compare(IntPredicate::ULT, i, len, "inside")?;
        let ok = self.block("index.ok");
        let bad = self.block("index.bad");
        b.build_conditional_branch(inside, ok, bad)?;
        b.position_at_end(bad);
        runtime_calls::call(cx, Rt::IndexOutOfRange, &[i.into(), len.into()])?;
        b.build_unreachable()?;
        b.position_at_end(ok);
        let data = ir::load_field(b, st, array, 0, "data")?.into_pointer_value();
        ir::element(b, cx.layouts.llvm(elem), data, i, "elem")
    }

    /// Emits one operation; control-flow operations push their blocks onto `stack`.
    fn op(&mut self, op: OpId, stack: &mut Vec<Work<'ctx>>) -> Result<(), Error> {
        let kind = &self.func.ops[op].kind;
        match kind.family() {
            Family::Call | Family::Async => self.call_op(op, kind),
            Family::Control => self.control_op(op, kind, stack),
            Family::Scalar | Family::Object | Family::Array => self.data_op(kind),
            Family::Map | Family::String | Family::Option | Family::Enum | Family::Ownership => self.value_op(op, kind),
        }
    }

    /// Calls and the async operations: tasks, actors, supervisors, deferred calls, queues.
    fn call_op(&mut self, op: OpId, kind: &'m OpKind) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        match kind {
            OpKind::Call { dest, callee, args, awaited: true } => self.await_call(op, *dest, *callee, args)?,
            OpKind::Call { dest, callee, args, .. } => {
                let mut values: Vec<BasicMetadataValueEnum> = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.operand(a)?.into());
                }
                let f = *cx.functions.get(*callee).ok_or_else(|| Error::internal("unknown callee"))?;
                let site = b.build_call(f, &values, "call")?;
                match (dest, site.try_as_basic_value().basic()) {
                    (Some(d), Some(v)) => self.store_local(*d, v)?,
                    (d, _) => self.store_unit(*d)?,
                }
            }
            OpKind::RuntimeCall { dest, func, class, args, .. } => self.runtime_call(op, *dest, *func, *class, args)?,
            kind @ (OpKind::ScopeNew { .. }
            | OpKind::ScopeSpawn { .. }
            | OpKind::ScopeEnd { .. }
            | OpKind::TaskJoin { .. }
            | OpKind::DeferNew { .. }) => self.task_op(op, kind)?,
            kind @ (OpKind::ActorStart { .. }
            | OpKind::ActorCall { .. }
            | OpKind::ActorSend { .. }
            | OpKind::SupervisorChild { .. }) => self.actor_op(op, kind)?,
            OpKind::QueuePush { dest, queue, job, delay } => self.queue_push(op, *dest, *queue, *job, delay)?,
            _ => return Err(Error::internal("an operation of another family")),
        }
        Ok(())
    }

    /// Control flow: branches into new basic blocks, with the blocks the operation owns pushed
    /// on `stack`.
    fn control_op(&mut self, op: OpId, kind: &'m OpKind, stack: &mut Vec<Work<'ctx>>) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        match kind {
            OpKind::If { cond, then_block, else_block } => {
                let c = self.operand(cond)?.into_int_value();
                let then_bb = self.block("then");
                let merge = self.block("endif");
                let else_bb = else_block.map(|_| self.block("else"));
                b.build_conditional_branch(c, then_bb, else_bb.unwrap_or(merge))?;
                stack.push(Work::Enter(merge));
                if let (Some(e), Some(bb)) = (else_block, else_bb) {
                    stack.push(Work::Branch(merge));
                    stack.push(Work::Block { block: *e, next: 0 });
                    stack.push(Work::Enter(bb));
                }
                stack.push(Work::Branch(merge));
                stack.push(Work::Block { block: *then_block, next: 0 });
                stack.push(Work::Enter(then_bb));
            }
            OpKind::Loop { label, body } => {
                let name = self.label_name(*label);
                let head = self.block(&format!("{name}.loop"));
                let exit = self.block(&format!("{name}.exit"));
                self.labels.insert(*label, (exit, Some(head)));
                b.build_unconditional_branch(head)?;
                stack.push(Work::Enter(exit));
                stack.push(Work::Branch(head));
                stack.push(Work::Block { block: *body, next: 0 });
                stack.push(Work::Enter(head));
            }
            OpKind::Block { label, body } => {
                let exit = self.block(&format!("{}.exit", self.label_name(*label)));
                self.labels.insert(*label, (exit, None));
                stack.push(Work::Enter(exit));
                stack.push(Work::Branch(exit));
                stack.push(Work::Block { block: *body, next: 0 });
            }
            OpKind::ForRange { var, start, end, label, body } => {
                let counter = self.counters[op];
                let first = self.operand(start)?.into_int_value();
                let mut end = self.operand(end)?.into_int_value();
                b.build_store(counter, first)?;
                // In a `poll`, an await in the body resumes inside the loop, where a value
                // computed before it is not available: the bound is kept in the frame.
                let kept = self.poll.as_ref().and_then(|p| p.loop_end(op));
                if let Some(slot) = kept {
                    b.build_store(slot, end)?;
                }
                let (head, exit) = self.loop_blocks(*label);
                b.position_at_end(head);
                if let Some(slot) = kept {
                    end = ir::load(b, first.get_type().into(), slot, "end")?.into_int_value();
                }
                let i = ir::load(b, first.get_type().into(), counter, "i")?.into_int_value();
                let more = b.build_int_compare(IntPredicate::SLT, i, end, "more")?;
                let next_bb = self.block(&format!("{}.body", self.label_name(*label)));
                b.build_conditional_branch(more, next_bb, exit)?;
                b.position_at_end(next_bb);
                self.store_local(*var, i.into())?;
                // `i < end` so `i + 1` cannot overflow: this counter is the emitter's own, not a
                // Nagi addition, and `nsw` lets LLVM compute the trip count.
                let one = first.get_type().const_int(1, false);
                b.build_store(counter, b.build_int_nsw_add(i, one, "i.next")?)?;
                self.push_loop(stack, *body, head, exit);
            }
            OpKind::ForEach { var, seq, label, body } => {
                let counter = self.counters[op];
                let (p, elem) = self.array_place(*seq)?;
                let st = cx.layouts.array(elem);
                // The sequence is borrowed for the whole loop, so its buffer and length are
                // read once, like Rust's slice iterator.
                let mut data = ir::load_field(b, st, p, 0, "data")?.into_pointer_value();
                let mut len = ir::load_field(b, st, p, 1, "len")?.into_int_value();
                let i64t = cx.context.i64_type();
                b.build_store(counter, i64t.const_zero())?;
                let (head, exit) = self.loop_blocks(*label);
                b.position_at_end(head);
                if self.poll.is_some() {
                    // An await in the body resumes inside the loop: read the (borrowed, so
                    // unchanged) sequence again at the head, where every path passes.
                    let (p, _) = self.array_place(*seq)?;
                    data = ir::load_field(b, st, p, 0, "data")?.into_pointer_value();
                    len = ir::load_field(b, st, p, 1, "len")?.into_int_value();
                }
                let i = ir::load(b, i64t.into(), counter, "i")?.into_int_value();
                let more = b.build_int_compare(IntPredicate::SLT, i, len, "more")?;
                let next_bb = self.block(&format!("{}.body", self.label_name(*label)));
                b.build_conditional_branch(more, next_bb, exit)?;
                b.position_at_end(next_bb);
                let at = ir::element(b, cx.layouts.llvm(elem), data, i, "elem")?;
                if self.ty(*var).is_ref() {
                    self.store_local(*var, at.into())?;
                } else {
                    let v = ir::load(b, cx.layouts.llvm(elem), at, "x")?;
                    self.store_local(*var, v)?;
                }
                b.build_store(counter, b.build_int_nsw_add(i, i64t.const_int(1, false), "i.next")?)?;
                self.push_loop(stack, *body, head, exit);
            }
            OpKind::Break { label } => {
                let (exit, _) = *self.labels.get(*label).ok_or_else(|| Error::internal("break to an unknown label"))?;
                b.build_unconditional_branch(exit)?;
            }
            OpKind::Continue { label } => {
                let target = self.labels.get(*label).and_then(|(_, c)| *c);
                let target = target.ok_or_else(|| Error::internal("continue to a label that is not a loop"))?;
                b.build_unconditional_branch(target)?;
            }
            OpKind::Return { value } if self.poll.is_some() => self.poll_return(value.as_ref())?,
            OpKind::Return { value } => match value {
                Some(v) if self.func.ret != Type::Unit => {
                    let v = self.operand(v)?;
                    b.build_return(Some(&v))?;
                }
                _ => {
                    b.build_return(None)?;
                }
            },
            OpKind::Trap { message } => runtime_calls::trap(cx, message)?,
            _ => return Err(Error::internal("an operation of another family")),
        }
        Ok(())
    }

    /// Scalars, objects and arrays.
    fn data_op(&mut self, kind: &'m OpKind) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        match kind {
            OpKind::Const { dest, value } => self.store_local(*dest, self.constant(value))?,
            OpKind::Unary { dest, op, ty, arg } => {
                let v = self.operand(arg)?;
                let r = self.unary(*op, *ty, v)?;
                self.store_local(*dest, r)?;
            }
            OpKind::Binary { dest, op, ty, lhs, rhs } => {
                let r = self.binary(*op, *ty, lhs, rhs)?;
                self.store_local(*dest, r)?;
            }
            OpKind::Cast { dest, to, arg } => {
                let from = self.operand_type(arg);
                let v = self.operand(arg)?;
                let r = self.cast(&from, *to, v)?;
                self.store_local(*dest, r)?;
            }
            OpKind::New { dest, class, fields } => {
                for (i, value) in fields.iter().enumerate() {
                    let v = self.operand(value)?;
                    let at = self.field_ptr(self.slot(*dest), *class, i as u32)?;
                    b.build_store(at, v)?;
                }
            }
            OpKind::FieldGet { dest, object, field } => {
                let (p, class) = self.class_place(*object)?;
                let at = self.field_ptr(p, class, *field)?;
                let v = ir::load(b, cx.layouts.llvm(self.field_type(class, *field)?), at, "field")?;
                self.store_local(*dest, v)?;
            }
            OpKind::FieldRef { dest, object, field, .. } => {
                let (p, class) = self.class_place(*object)?;
                let at = self.field_ptr(p, class, *field)?;
                self.store_local(*dest, at.into())?;
            }
            OpKind::FieldSet { object, field, value } => {
                let v = self.operand(value)?;
                let (p, class) = self.class_place(*object)?;
                let at = self.field_ptr(p, class, *field)?;
                glue::drop_in_place(cx, self.field_type(class, *field)?, at)?;
                b.build_store(at, v)?;
            }
            OpKind::ArrayNew { dest } => {
                let zero = cx.layouts.llvm(self.ty(*dest)).const_zero();
                self.store_local(*dest, zero)?;
            }
            OpKind::ArrayLen { dest, array } => {
                let (p, elem) = self.array_place(*array)?;
                let len = ir::load_field(b, cx.layouts.array(elem), p, 1, "len")?;
                self.store_local(*dest, len)?;
            }
            OpKind::ArrayGet { dest, array, index } => {
                let (p, elem) = self.array_place(*array)?;
                let at = self.element_ptr(p, elem, index)?;
                let v = ir::load(b, cx.layouts.llvm(elem), at, "elem")?;
                self.store_local(*dest, v)?;
            }
            OpKind::ArrayRef { dest, array, index, .. } => {
                let (p, elem) = self.array_place(*array)?;
                let at = self.element_ptr(p, elem, index)?;
                self.store_local(*dest, at.into())?;
            }
            OpKind::ArraySet { array, index, value } => {
                let v = self.operand(value)?;
                let (p, elem) = self.array_place(*array)?;
                let at = self.element_ptr(p, elem, index)?;
                glue::drop_in_place(cx, elem, at)?;
                b.build_store(at, v)?;
            }
            OpKind::ArrayPush { array, value } => {
                let v = self.operand(value)?;
                let (p, elem) = self.array_place(*array)?;
                self.push(p, elem, v)?;
            }
            _ => return Err(Error::internal("an operation of another family")),
        }
        Ok(())
    }

    /// Maps, strings, options, enums and ownership.
    fn value_op(&mut self, op: OpId, kind: &'m OpKind) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        match kind {
            OpKind::Copy { dest, src } | OpKind::Move { dest, src } => {
                let v = self.load_local(*src)?;
                self.store_local(*dest, v)?;
            }
            OpKind::MapNew { .. }
            | OpKind::MapLen { .. }
            | OpKind::MapFind { .. }
            | OpKind::MapRef { .. }
            | OpKind::MapInsert { .. }
            | OpKind::MapRemove { .. } => self.map_op(&self.func.ops[op].kind)?,
            OpKind::StringLit { dest, value } => {
                // The literal's constant bytes with capacity 0, which owns no buffer: no string
                // op changes a buffer in place and every free goes by the capacity, so nothing
                // needs a copy of its own (docs/c-abi.md, String).
                let (ptr, len) = runtime_calls::literal(cx, value)?;
                let st = cx.layouts.string();
                let slot = self.slot(*dest);
                b.build_store(ir::field(b, st, slot, 0, "data")?, ptr)?;
                b.build_store(ir::field(b, st, slot, 1, "len")?, len)?;
                b.build_store(ir::field(b, st, slot, 2, "cap")?, len.get_type().const_zero())?;
            }
            OpKind::StrLen { dest, string } => {
                let (p, _) = self.place(*string)?;
                let len = ir::load_field(b, cx.layouts.string(), p, 1, "len")?;
                self.store_local(*dest, len)?;
            }
            OpKind::StrConcat { dest, parts } => self.concat(*dest, parts)?,
            OpKind::StrEq { dest, lhs, rhs } => {
                let (l, _) = self.place(*lhs)?;
                let (r, _) = self.place(*rhs)?;
                let eq = runtime_calls::call(cx, Rt::StrEq, &[l.into(), r.into()])?
                    .ok_or_else(|| Error::internal("nagi_rt_str_eq returns nothing"))?;
                let zero = cx.context.i32_type().const_zero();
                let eq = b.build_int_compare(IntPredicate::NE, eq.into_int_value(), zero, "eq")?;
                self.store_local(*dest, eq.into())?;
            }
            OpKind::OptionSome { dest, value } => {
                let v = self.operand(value)?;
                let st = cx.layouts.llvm(self.ty(*dest)).into_struct_type();
                let slot = self.slot(*dest);
                b.build_store(ir::field(b, st, slot, 0, "tag")?, cx.context.bool_type().const_int(1, false))?;
                b.build_store(ir::field(b, st, slot, 1, "payload")?, v)?;
            }
            OpKind::OptionNone { dest } => {
                let zero = cx.layouts.llvm(self.ty(*dest)).const_zero();
                self.store_local(*dest, zero)?;
            }
            OpKind::OptionIsSome { dest, option } => {
                let (p, ty) = self.place(*option)?;
                let tag = ir::load_field(b, cx.layouts.llvm(ty).into_struct_type(), p, 0, "tag")?;
                self.store_local(*dest, tag)?;
            }
            OpKind::OptionUnwrap { dest, option } => {
                let (p, ty) = self.place(*option)?;
                let st = cx.layouts.llvm(ty).into_struct_type();
                let tag = ir::load_field(b, st, p, 0, "tag")?.into_int_value();
                let some = self.block("unwrap.some");
                let none = self.block("unwrap.none");
                b.build_conditional_branch(tag, some, none)?;
                b.position_at_end(none);
                runtime_calls::trap(cx, nagi_abi::trap_text::UNWRAP_OF_NONE)?;
                b.position_at_end(some);
                let v = ir::load_field(b, st, p, 1, "payload")?;
                self.store_local(*dest, v)?;
            }
            OpKind::EnumNew { dest, enum_id, variant, payload } => {
                let value = match payload {
                    Some(p) => Some(self.operand(p)?),
                    None => None,
                };
                enums::build_new(cx, *enum_id, self.slot(*dest), *variant, value)?;
            }
            OpKind::EnumIs { dest, value, variant } => {
                let (p, e) = self.enum_place(*value)?;
                let tag = enums::tag(cx, e, p)?;
                let wanted = cx.context.i64_type().const_int(u64::from(*variant), false);
                let is = b.build_int_compare(IntPredicate::EQ, tag, wanted, "is")?;
                self.store_local(*dest, is.into())?;
            }
            OpKind::EnumGet { dest, value, variant } | OpKind::EnumRef { dest, value, variant } => {
                let (p, e) = self.enum_place(*value)?;
                let payload = enums::payload_type(cx, e, *variant).ok_or_else(|| Error::internal("no payload"))?;
                let tag = enums::tag(cx, e, p)?;
                let wanted = cx.context.i64_type().const_int(u64::from(*variant), false);
                let is = b.build_int_compare(IntPredicate::EQ, tag, wanted, "is")?;
                let ok = self.block("variant.ok");
                let bad = self.block("variant.bad");
                b.build_conditional_branch(is, ok, bad)?;
                b.position_at_end(bad);
                runtime_calls::trap(cx, &nagi_low::enum_mismatch_message(cx.low, &Type::Enum(e), *variant))?;
                b.position_at_end(ok);
                let at = enums::payload_ptr(cx, e, p, payload)?;
                let result = if matches!(self.func.ops[op].kind, OpKind::EnumGet { .. }) {
                    ir::load(b, cx.layouts.llvm(payload), at, "payload")?
                } else {
                    at.into()
                };
                self.store_local(*dest, result)?;
            }
            OpKind::Clone { dest, src } => {
                let (p, ty) = self.place(*src)?;
                glue::clone_into(cx, ty, self.slot(*dest), p)?;
            }
            OpKind::Drop { local } => glue::drop_in_place(cx, self.ty(*local), self.slot(*local))?,
            OpKind::Borrow { dest, src, .. } => {
                let (p, _) = self.place(*src)?;
                self.store_local(*dest, p.into())?;
            }
            OpKind::Load { dest, reference } => {
                let (p, ty) = self.place(*reference)?;
                let v = ir::load(b, cx.layouts.llvm(ty), p, "load")?;
                self.store_local(*dest, v)?;
            }
            OpKind::Store { reference, value } => {
                let v = self.operand(value)?;
                let (p, ty) = self.place(*reference)?;
                glue::drop_in_place(cx, ty, p)?;
                b.build_store(p, v)?;
            }
            _ => return Err(Error::internal("an operation of another family")),
        }
        Ok(())
    }

    fn label_name(&self, label: LabelId) -> &'m str {
        &self.func.labels[label].name
    }

    /// The header and exit blocks of a `for` labelled `label`, with the labels registered and a
    /// branch into the header.
    fn loop_blocks(&mut self, label: LabelId) -> (BasicBlock<'ctx>, BasicBlock<'ctx>) {
        let name = self.label_name(label);
        let head = self.block(&format!("{name}.head"));
        let exit = self.block(&format!("{name}.exit"));
        self.labels.insert(label, (exit, Some(head)));
        let _ = self.cx.builder.build_unconditional_branch(head);
        (head, exit)
    }

    fn push_loop(&self, stack: &mut Vec<Work<'ctx>>, body: BlockId, head: BasicBlock<'ctx>, exit: BasicBlock<'ctx>) {
        stack.push(Work::Enter(exit));
        stack.push(Work::Branch(head));
        stack.push(Work::Block { block: body, next: 0 });
    }

    /// Appends `value` to the array at `array`, growing its buffer through the runtime when
    /// it is full.
    fn push(&mut self, array: PointerValue<'ctx>, elem: &Type, value: BasicValueEnum<'ctx>) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let st = cx.layouts.array(elem);
        let len = ir::load_field(b, st, array, 1, "len")?.into_int_value();
        let cap = ir::load_field(b, st, array, 2, "cap")?.into_int_value();
        let full = b.build_int_compare(IntPredicate::EQ, len, cap, "full")?;
        let grow = self.block("push.grow");
        let store = self.block("push.store");
        b.build_conditional_branch(full, grow, store)?;
        b.position_at_end(grow);
        let raw = b.build_pointer_cast(array, cx.layouts.byte_ptr(), "raw")?;
        let (size, align) = glue::size_align(cx, elem);
        runtime_calls::call(cx, Rt::Grow, &[raw.into(), size.into(), align.into()])?;
        b.build_unconditional_branch(store)?;
        b.position_at_end(store);
        let data = ir::load_field(b, st, array, 0, "data")?.into_pointer_value();
        let at = ir::element(b, cx.layouts.llvm(elem), data, len, "slot")?;
        b.build_store(at, value)?;
        let one = cx.context.i64_type().const_int(1, false);
        b.build_store(ir::field(b, st, array, 1, "len")?, b.build_int_add(len, one, "len")?)?;
        Ok(())
    }
}
