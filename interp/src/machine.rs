//! The run loop: one operation at a time from the innermost open block of the running frame,
//! with structured control flow, calls and returns done on explicit stacks.
//!
//! A control-flow operation opens a block by pushing a [`Cursor`]; the end of a block, `break`
//! and `continue` pop cursors; `call` pushes a frame and `return` pops one, writing the result
//! into the caller's destination. Nothing here recurses in Rust, so the depth of Low's nesting
//! and recursion costs heap only, and the recursion limit is a plain count of frames.

use std::rc::Rc;

use nagi_low::{ArenaGet, BlockId, FuncId, LabelId, LocalId, Module, OpKind, Operand, ScalarType};

use crate::stack::{Cursor, Frame, Scope, Stack, as_array, as_bool, fault, project};
use crate::value::{Place, Proj, Value};
use crate::{Host, Options, STACK_OVERFLOW, Stop};

/// The interpreter's state for one run.
pub(crate) struct Machine<'m, 'h> {
    pub(crate) module: &'m Module,
    pub(crate) host: &'h mut dyn Host,
    pub(crate) stack: Stack<'m>,
    max_frames: usize,
    /// Operations still allowed to run.
    steps_left: u64,
    /// The locals and cursor vectors of returned frames, reused by later calls so that a call
    /// does not allocate once the stack has been this deep before.
    spare: Vec<(Vec<Value>, Vec<Cursor>)>,
}

/// What the run loop does after an operation.
enum Flow {
    /// Runs the next operation.
    Next,
    /// `$main` returned.
    Done,
}

impl<'m, 'h> Machine<'m, 'h> {
    pub(crate) fn new(module: &'m Module, host: &'h mut dyn Host, options: &Options) -> Self {
        Machine {
            module,
            host,
            stack: Stack::default(),
            max_frames: options.max_frames.max(1),
            steps_left: options.max_steps,
            spare: Vec::new(),
        }
    }

    /// Runs `main` until it returns or the program stops.
    pub(crate) fn run(&mut self, main: FuncId) -> Result<(), Stop> {
        self.call(None, main, &[])?;
        loop {
            let frame = self.stack.top_mut()?;
            let func = frame.func;
            let Some(cursor) = frame.cursors.last_mut() else {
                return Err(fault(format!("in ${}: no block is open", func.name)));
            };
            let block = func.blocks.get(cursor.block).ok_or_else(|| fault("a block outside its function"))?;
            match block.ops.get(cursor.next) {
                Some(&op) => {
                    cursor.next += 1;
                    if self.steps_left == 0 {
                        return Err(Stop::OutOfSteps);
                    }
                    self.steps_left -= 1;
                    let op = func.ops.get(op).ok_or_else(|| fault("an operation outside its function"))?;
                    if let Flow::Done = self.op(&op.kind)? {
                        return Ok(());
                    }
                }
                None => self.end_of_block()?,
            }
        }
    }

    /// Runs one operation.
    fn op(&mut self, kind: &'m OpKind) -> Result<Flow, Stop> {
        match kind {
            OpKind::Call { dest, callee, args, awaited: _ } => {
                // An awaited call runs to completion in place: without the database there is
                // nothing for an async function to wait for.
                self.call(*dest, *callee, args)?;
            }
            OpKind::RuntimeCall { dest, func, class, args, awaited: _ } => {
                self.runtime_call(*dest, *func, *class, args)?
            }
            OpKind::If { cond, then_block, else_block } => {
                let cond = as_bool(&self.stack.operand(cond)?)?;
                let arm = if cond { Some(*then_block) } else { *else_block };
                if let Some(block) = arm {
                    self.open(block, Scope::Arm)?;
                }
            }
            OpKind::Loop { label, body } => self.open(*body, Scope::Loop(*label))?,
            OpKind::Block { label, body } => self.open(*body, Scope::Block(*label))?,
            OpKind::ForRange { var, start, end, label, body } => self.for_range(*var, start, end, *label, *body)?,
            OpKind::ForEach { var, seq, label, body } => self.for_each(*var, *seq, *label, *body)?,
            OpKind::Break { label } => {
                self.unwind_to(*label)?;
                self.stack.top_mut()?.cursors.pop();
            }
            OpKind::Continue { label } => {
                self.unwind_to(*label)?;
                self.next_iteration()?;
            }
            OpKind::Return { value } => return self.ret(value.as_ref()),
            OpKind::Trap { message } => return Err(Stop::Trap(message.clone())),
            other => self.data_op(other)?,
        }
        Ok(Flow::Next)
    }

    /// Opens `block` in the running frame.
    fn open(&mut self, block: BlockId, scope: Scope) -> Result<(), Stop> {
        self.stack.top_mut()?.cursors.push(Cursor { block, next: 0, scope });
        Ok(())
    }

    /// `for %var in start..end @label`: the bounds are read once; an empty range opens nothing.
    fn for_range(
        &mut self,
        var: LocalId,
        start: &Operand,
        end: &Operand,
        label: LabelId,
        body: BlockId,
    ) -> Result<(), Stop> {
        let (ty, start) = int_bound(&self.stack.operand(start)?)?;
        let (_, end) = int_bound(&self.stack.operand(end)?)?;
        if start < end {
            self.stack.set(var, int_value(ty, start))?;
            self.open(body, Scope::Range { label, var, ty, current: start, end })?;
        }
        Ok(())
    }

    /// `for %var in %seq @label`: `%var` is each element (copy types) or a reference to it.
    fn for_each(&mut self, var: LocalId, seq: LocalId, label: LabelId, body: BlockId) -> Result<(), Stop> {
        let copy = !self.stack.local_type(var)?.is_ref();
        let seq = self.stack.place_of(seq)?;
        if let Some(element) = self.element(&seq, 0, copy)? {
            self.stack.set(var, element)?;
            self.open(body, Scope::Each { label, var, seq, index: 0, copy })?;
        }
        Ok(())
    }

    /// Element `index` of the array at `seq` as a `for` variable holds it, or `None` past the
    /// end.
    fn element(&self, seq: &Place, index: usize, copy: bool) -> Result<Option<Value>, Stop> {
        let items = as_array(self.stack.resolve(seq)?)?;
        Ok(match items.get(index) {
            None => None,
            Some(v) if copy => Some(v.clone()),
            Some(_) => Some(project(seq, Proj::Index(index))),
        })
    }

    /// The end of the innermost open block: leaves it, or starts the loop's next iteration.
    fn end_of_block(&mut self) -> Result<(), Stop> {
        let frame = self.stack.top_mut()?;
        match frame.cursors.last().map(|c| &c.scope) {
            Some(Scope::Body) | None => {
                Err(fault(format!("in ${}: control reached the end of the body", frame.func.name)))
            }
            Some(Scope::Arm | Scope::Block(_)) => {
                frame.cursors.pop();
                Ok(())
            }
            Some(Scope::Loop(_) | Scope::Range { .. } | Scope::Each { .. }) => self.next_iteration(),
        }
    }

    /// Closes every block inside the one labelled `label`, which stays open on top.
    fn unwind_to(&mut self, label: LabelId) -> Result<(), Stop> {
        let frame = self.stack.top_mut()?;
        while let Some(cursor) = frame.cursors.last() {
            if cursor.scope.label() == Some(label) {
                return Ok(());
            }
            if let Scope::Body = cursor.scope {
                break;
            }
            frame.cursors.pop();
        }
        Err(fault(format!("in ${}: no enclosing block has the label of a break or continue", frame.func.name)))
    }

    /// Starts the next iteration of the loop on top of the running frame's blocks, or leaves
    /// it when a `for` is done.
    fn next_iteration(&mut self) -> Result<(), Stop> {
        let frame = self.stack.top_mut()?;
        let Some(cursor) = frame.cursors.last_mut() else { return Err(fault("no block is open")) };
        let next = match &mut cursor.scope {
            Scope::Loop(_) => {
                cursor.next = 0;
                return Ok(());
            }
            Scope::Range { var, ty, current, end, .. } => {
                // `current < end` held, so `current + 1` cannot overflow.
                if *current + 1 < *end {
                    *current += 1;
                    Some((*var, int_value(*ty, *current)))
                } else {
                    None
                }
            }
            Scope::Each { var, seq, index, copy, .. } => {
                *index += 1;
                let (var, seq, index, copy) = (*var, Rc::clone(seq), *index, *copy);
                self.element(&seq, index, copy)?.map(|element| (var, element))
            }
            Scope::Body | Scope::Arm | Scope::Block(_) => return Err(fault("`continue` names a block")),
        };
        match next {
            None => {
                self.stack.top_mut()?.cursors.pop();
            }
            Some((var, value)) => {
                self.stack.set(var, value)?;
                if let Some(cursor) = self.stack.top_mut()?.cursors.last_mut() {
                    cursor.next = 0;
                }
            }
        }
        Ok(())
    }

    /// Calls `callee` with `args` (owned arguments moved, copies copied, references passed on):
    /// pushes its frame, whose result goes to `dest`.
    fn call(&mut self, dest: Option<LocalId>, callee: FuncId, args: &[Operand]) -> Result<(), Stop> {
        if self.stack.frames.len() >= self.max_frames {
            return Err(Stop::Trap(STACK_OVERFLOW.to_string()));
        }
        let func = self.module.functions.get(callee).ok_or_else(|| fault("a call of a function outside the module"))?;
        if func.params.len() != args.len() {
            return Err(fault(format!("${} is called with {} arguments", func.name, args.len())));
        }
        let (mut locals, mut cursors) = self.spare.pop().unwrap_or_default();
        locals.resize(func.locals.len(), Value::Unset);
        for (param, arg) in func.params.iter().zip(args) {
            let value = self.stack.consume(arg)?;
            *locals.get_mut(crate::stack::slot(*param)).ok_or_else(|| fault("a parameter outside its function"))? =
                value;
        }
        cursors.push(Cursor { block: func.body, next: 0, scope: Scope::Body });
        self.stack.frames.push(Frame { func, locals, cursors, dest });
        Ok(())
    }

    /// `return [value]`: pops the running frame and writes the result into the caller's
    /// destination.
    fn ret(&mut self, value: Option<&Operand>) -> Result<Flow, Stop> {
        let value = match value {
            Some(operand) => self.stack.consume(operand)?,
            None => Value::Unit,
        };
        let frame = self.stack.frames.pop().ok_or_else(|| fault("a return with no frame running"))?;
        let Frame { mut locals, mut cursors, dest, .. } = frame;
        locals.clear();
        cursors.clear();
        self.spare.push((locals, cursors));
        if self.stack.frames.is_empty() {
            return Ok(Flow::Done);
        }
        if let Some(dest) = dest {
            self.stack.set(dest, value)?;
        }
        Ok(Flow::Next)
    }
}

/// The type and value of a `for` bound.
fn int_bound(v: &Value) -> Result<(ScalarType, i64), Stop> {
    match v {
        Value::I32(n) => Ok((ScalarType::I32, i64::from(*n))),
        Value::I64(n) => Ok((ScalarType::I64, *n)),
        other => Err(fault(format!("a range bound is {}", other.kind()))),
    }
}

/// The `for` variable's value for `n` (which lies in the bounds, so fits `ty`).
fn int_value(ty: ScalarType, n: i64) -> Value {
    match ty {
        ScalarType::I32 => Value::I32(n as i32),
        _ => Value::I64(n),
    }
}
