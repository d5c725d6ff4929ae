//! The call stack: frames of locals, each with its stack of open blocks, and access to locals
//! and the places references name.
//!
//! Operations act on the top frame. A local is read "through its reference" where Low lets an
//! operand be a value or a reference to one (`field.get %o` with `%o: C`, `&C` or `&mut C`):
//! [`Stack::read`] and [`Stack::read_mut`] follow a reference held in the local to its place.

use std::rc::Rc;

use nagi_low::{ArenaGet, BlockId, FunctionData, LabelId, LocalId, Operand, ScalarType};

use crate::Stop;
use crate::value::{Place, Proj, Value};

/// One activation of a function.
pub(crate) struct Frame<'m> {
    pub(crate) func: &'m FunctionData,
    /// Indexed by the local's arena index.
    pub(crate) locals: Vec<Value>,
    /// The open blocks, innermost last; the function's body is the first.
    pub(crate) cursors: Vec<Cursor>,
    /// The caller's local that receives the result.
    pub(crate) dest: Option<LocalId>,
}

/// An open block and how far it has run.
pub(crate) struct Cursor {
    pub(crate) block: BlockId,
    /// The position of the next operation to run in the block.
    pub(crate) next: usize,
    pub(crate) scope: Scope,
}

/// What opened a block, which says what its end and `break`/`continue` do.
pub(crate) enum Scope {
    /// The function's body: running off its end is a fault (verified Low returns or traps).
    Body,
    /// An arm of `if`: its end continues after the `if`.
    Arm,
    /// `loop @l`: its end starts the body again.
    Loop(LabelId),
    /// `block @l`: its end, or `break @l`, continues after it.
    Block(LabelId),
    /// `for %var in current..end @l`: the hidden counter, so that the body may assign `%var`
    /// without changing the iteration (the Rust emitter's `for nagi_i in a..b`).
    Range { label: LabelId, var: LocalId, ty: ScalarType, current: i64, end: i64 },
    /// `for %var in %seq @l`: the array's place, and the element `%var` holds.
    Each { label: LabelId, var: LocalId, seq: Rc<Place>, index: usize, copy: bool },
}

impl Scope {
    /// The label `break` and `continue` name this scope by, if it has one.
    pub(crate) fn label(&self) -> Option<LabelId> {
        match self {
            Scope::Body | Scope::Arm => None,
            Scope::Loop(l) | Scope::Block(l) => Some(*l),
            Scope::Range { label, .. } | Scope::Each { label, .. } => Some(*label),
        }
    }
}

/// A fault: something verified Low cannot do.
pub(crate) fn fault(message: impl Into<String>) -> Stop {
    Stop::Fault(message.into())
}

/// The position of a local in its frame's `locals`.
pub(crate) fn slot(local: LocalId) -> usize {
    u32::from(local.into_raw()) as usize
}

/// The frames, `$main`'s first.
#[derive(Default)]
pub(crate) struct Stack<'m> {
    pub(crate) frames: Vec<Frame<'m>>,
}

impl<'m> Stack<'m> {
    /// The running frame.
    pub(crate) fn top(&self) -> Result<&Frame<'m>, Stop> {
        self.frames.last().ok_or_else(|| fault("no frame is running"))
    }

    /// The running frame, for writing.
    pub(crate) fn top_mut(&mut self) -> Result<&mut Frame<'m>, Stop> {
        self.frames.last_mut().ok_or_else(|| fault("no frame is running"))
    }

    /// The value a local holds, as it is (a reference stays a reference).
    pub(crate) fn local(&self, local: LocalId) -> Result<&Value, Stop> {
        let frame = self.top()?;
        match frame.locals.get(slot(local)) {
            Some(Value::Unset) | None => Err(unset(frame, local)),
            Some(v) => Ok(v),
        }
    }

    /// Assigns a local of the running frame.
    pub(crate) fn set(&mut self, local: LocalId, value: Value) -> Result<(), Stop> {
        let frame = self.top_mut()?;
        let slot = frame.locals.get_mut(slot(local)).ok_or_else(|| fault("a local outside its function"))?;
        *slot = value;
        Ok(())
    }

    /// Takes a local's value out, leaving it unset: a move or a drop.
    pub(crate) fn take(&mut self, local: LocalId) -> Result<Value, Stop> {
        let frame = self.top_mut()?;
        match frame.locals.get_mut(slot(local)) {
            Some(v) if !matches!(v, Value::Unset) => Ok(std::mem::replace(v, Value::Unset)),
            _ => Err(unset(frame, local)),
        }
    }

    /// The value of an operand in a consuming position: a constant, a copy of a copy-type
    /// local, or a non-copy local moved out.
    pub(crate) fn consume(&mut self, operand: &Operand) -> Result<Value, Stop> {
        match operand {
            Operand::Const(c) => Ok(Value::constant(c)),
            Operand::Local(l) => self.consume_local(*l),
        }
    }

    /// A local in a consuming position: copied when its type is a copy type, else moved out.
    pub(crate) fn consume_local(&mut self, local: LocalId) -> Result<Value, Stop> {
        let copy = self.top()?.func.locals.get(local).is_none_or(|l| l.ty.is_copy());
        if copy { self.local(local).cloned() } else { self.take(local) }
    }

    /// The value of an operand that is read, not consumed (a scalar operand).
    pub(crate) fn operand(&self, operand: &Operand) -> Result<Value, Stop> {
        match operand {
            Operand::Const(c) => Ok(Value::constant(c)),
            Operand::Local(l) => self.local(*l).cloned(),
        }
    }

    /// The place a local names: the place of the reference it holds, or the local itself.
    pub(crate) fn place_of(&self, local: LocalId) -> Result<Rc<Place>, Stop> {
        match self.local(local)? {
            Value::Ref(place) => Ok(Rc::clone(place)),
            _ => Ok(Rc::new(Place { frame: self.frames.len() - 1, local: slot(local), path: Vec::new() })),
        }
    }

    /// The value a local holds, or the one its reference points to.
    pub(crate) fn read(&self, local: LocalId) -> Result<&Value, Stop> {
        match self.local(local)? {
            Value::Ref(place) => self.resolve(place),
            v => Ok(v),
        }
    }

    /// The value a local holds, or the one its reference points to, for writing.
    pub(crate) fn read_mut(&mut self, local: LocalId) -> Result<&mut Value, Stop> {
        if let Value::Ref(place) = self.local(local)? {
            let place = Rc::clone(place);
            return self.resolve_mut(&place);
        }
        let frame = self.top_mut()?;
        frame.locals.get_mut(slot(local)).ok_or_else(|| fault("a local outside its function"))
    }

    /// The value at a place.
    pub(crate) fn resolve(&self, place: &Place) -> Result<&Value, Stop> {
        let root = self.frames.get(place.frame).and_then(|f| f.locals.get(place.local));
        let mut value = root.ok_or_else(dangling)?;
        for proj in &place.path {
            value = value.project(*proj).ok_or_else(dangling)?;
        }
        match value {
            Value::Unset => Err(dangling()),
            v => Ok(v),
        }
    }

    /// The value at a place, for writing.
    pub(crate) fn resolve_mut(&mut self, place: &Place) -> Result<&mut Value, Stop> {
        let root = self.frames.get_mut(place.frame).and_then(|f| f.locals.get_mut(place.local));
        let mut value = root.ok_or_else(dangling)?;
        for proj in &place.path {
            value = value.project_mut(*proj).ok_or_else(dangling)?;
        }
        Ok(value)
    }

    /// The type of a local of the running frame.
    pub(crate) fn local_type(&self, local: LocalId) -> Result<&'m nagi_low::Type, Stop> {
        let func = self.top()?.func;
        func.locals.get(local).map(|l| &l.ty).ok_or_else(|| fault("a local outside its function"))
    }
}

fn unset(frame: &Frame, local: LocalId) -> Stop {
    let name = frame.func.locals.get(local).map_or("?", |l| l.name.as_str());
    fault(format!("in ${}: %{name} is read while it holds no value", frame.func.name))
}

fn dangling() -> Stop {
    fault("a reference no longer points to a value")
}

/// The `i64` an operand value holds.
pub(crate) fn as_i64(v: &Value) -> Result<i64, Stop> {
    match v {
        Value::I64(n) => Ok(*n),
        other => Err(fault(format!("expected an i64, found {}", other.kind()))),
    }
}

/// The `bool` an operand value holds.
pub(crate) fn as_bool(v: &Value) -> Result<bool, Stop> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => Err(fault(format!("expected a bool, found {}", other.kind()))),
    }
}

/// The text a string value holds.
pub(crate) fn as_str(v: &Value) -> Result<&str, Stop> {
    match v {
        Value::Str(s) => Ok(s),
        other => Err(fault(format!("expected a string, found {}", other.kind()))),
    }
}

/// The elements an array value holds.
pub(crate) fn as_array(v: &Value) -> Result<&Vec<Value>, Stop> {
    match v {
        Value::Array(items) => Ok(items),
        other => Err(fault(format!("expected an array, found {}", other.kind()))),
    }
}

/// Projects from a place one step: a helper for `field.ref`, `array.ref` and `for` over arrays.
pub(crate) fn project(place: &Place, proj: Proj) -> Value {
    Value::Ref(Rc::new(place.then(proj)))
}
