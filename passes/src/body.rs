//! Helpers every pass shares for reading and editing one function body: walking the body tree
//! without recursion, putting arenas back in canonical order, and dropping locals nothing
//! mentions. Which locals an operation reads and writes are facts of the operation
//! ([`nagi_low::facts`]).
//!
//! Passes edit arenas in place: they unlist operations from blocks and allocate new operations
//! and blocks at the end of the arenas. [`canonicalize`] then rebuilds the arenas in the order
//! the parser would allocate them for the printed text, dropping entries nothing lists, so
//! that between passes every function looks as if it had just been parsed.

use la_arena::{Arena, ArenaMap, Idx};
use nagi_low::entities::index;
use nagi_low::{
    ArenaGet, BlockData, BlockId, FunctionData, LabelData, LabelId, LocalData, LocalId, OpData, OpId, OpKind, Operand,
    Slot,
};

/// Every operation listed in the body, in pre-order (text order), with the block that lists
/// it. Walks with an explicit stack, so nesting depth is bounded by memory only; ids out of
/// range and blocks listed twice are skipped rather than followed.
pub fn preorder(func: &FunctionData) -> Vec<(OpId, BlockId)> {
    let mut out = Vec::with_capacity(func.ops.len());
    let mut seen_blocks = vec![false; func.blocks.len()];
    let mut stack: Vec<(BlockId, usize)> = vec![(func.body, 0)];
    if let Some(seen) = seen_blocks.get_mut(index(func.body)) {
        *seen = true;
    }
    while let Some((block, next)) = stack.pop() {
        let Some(&op) = func.blocks.get(block).and_then(|b| b.ops.get(next)) else { continue };
        stack.push((block, next + 1));
        out.push((op, block));
        let Some(data) = func.ops.get(op) else { continue };
        for b in data.kind.blocks().rev() {
            if let Some(seen) = seen_blocks.get_mut(index(b))
                && !*seen
            {
                *seen = true;
                stack.push((b, 0));
            }
        }
    }
    out
}

/// How many times each local (by arena index) is read, and how many of those reads are
/// `drop`s, over the operations listed in the body.
pub struct UseCounts {
    /// Reads of each local, `drop`s included.
    pub reads: Vec<u32>,
    /// The `drop`s among those reads.
    pub drops: Vec<u32>,
    /// The operations that write each local.
    pub defs: Vec<Vec<OpId>>,
}

impl UseCounts {
    /// Counts the uses in `func`.
    pub fn of(func: &FunctionData) -> UseCounts {
        let n = func.locals.len();
        let mut counts = UseCounts { reads: vec![0; n], drops: vec![0; n], defs: vec![Vec::new(); n] };
        for (op, _) in preorder(func) {
            counts.add(func, op);
        }
        counts
    }

    /// Adds the uses of operation `op`.
    pub fn add(&mut self, func: &FunctionData, op: OpId) {
        let Some(data) = func.ops.get(op) else { return };
        let is_drop = matches!(data.kind, OpKind::Drop { .. });
        data.kind.for_each_local(|l, slot| {
            let i = index(l);
            if i >= self.reads.len() {
                return;
            }
            match slot {
                Slot::Read => {
                    self.reads[i] += 1;
                    if is_drop {
                        self.drops[i] += 1;
                    }
                }
                Slot::Write => self.defs[i].push(op),
            }
        });
    }
}

/// Rebuilds the arenas of `func` in canonical order: operations, blocks and labels in the
/// order the parser allocates them when it reads the printed text (for each operation in text
/// order: its label, its first block, the operation, the first block's contents, then its
/// `else` block and that block's contents), keeping only what the body lists. Locals are kept
/// as they are. After this, printing and re-parsing the function gives an equal function.
/// A function already in canonical order is left as it is, without allocating: most passes
/// change few functions, and rebuilding every arena of a large module after every pass costs
/// more in the allocator than the passes themselves.
pub fn canonicalize(func: &mut FunctionData) {
    if is_canonical(func) {
        return;
    }
    let mut blocks: Arena<BlockData> = Arena::with_capacity(func.blocks.len());
    let mut ops: Arena<OpData> = Arena::with_capacity(func.ops.len());
    let mut labels: Arena<LabelData> = Arena::with_capacity(func.labels.len());
    // Operations are moved out of the old arena rather than cloned; each is listed at most
    // once (a second listing finds the placeholder, which `String::new` makes without
    // allocating, and the verifier would have rejected the function anyway).
    let mut old_ops = std::mem::take(&mut func.ops);
    let mut label_map: ArenaMap<LabelId, LabelId> = ArenaMap::default();
    let body = blocks.alloc(BlockData::default());
    let mut seen_blocks = vec![false; func.blocks.len()];
    if let Some(seen) = seen_blocks.get_mut(index(func.body)) {
        *seen = true;
    }
    enum Work {
        /// Copy the operations of old block `old` from `next` on into new block `new`.
        Ops { old: BlockId, new: BlockId, next: usize },
        /// Allocate the `else` block of new `if` operation `op`, copying old block `old`.
        Else { op: OpId, old: BlockId },
    }
    let mut stack = vec![Work::Ops { old: func.body, new: body, next: 0 }];
    while let Some(work) = stack.pop() {
        match work {
            Work::Else { op, old } => {
                let new = blocks.alloc(BlockData::default());
                if let OpKind::If { else_block, .. } = &mut ops[op].kind {
                    *else_block = Some(new);
                }
                stack.push(Work::Ops { old, new, next: 0 });
            }
            Work::Ops { old, new, next } => {
                let Some(&old_op) = func.blocks.get(old).and_then(|b| b.ops.get(next)) else { continue };
                stack.push(Work::Ops { old, new, next: next + 1 });
                let Some(data) = old_ops.get_mut_checked(old_op) else { continue };
                let mut kind = std::mem::replace(&mut data.kind, OpKind::Trap { message: String::new() });
                let mut remap_label = |l: &mut LabelId| {
                    if let Some(&m) = label_map.get(*l) {
                        *l = m;
                    } else if let Some(d) = func.labels.get(*l) {
                        let m = labels.alloc(d.clone());
                        label_map.insert(*l, m);
                        *l = m;
                    }
                };
                if let Some(label) = kind.label_mut() {
                    remap_label(label);
                }
                // The first block is allocated before the operation, as the parser does.
                let mut first_child: Option<(BlockId, BlockId)> = None;
                let mut else_child: Option<BlockId> = None;
                let mut claim = |b: BlockId| -> bool {
                    match seen_blocks.get_mut(index(b)) {
                        Some(seen) if !*seen => {
                            *seen = true;
                            true
                        }
                        _ => false,
                    }
                };
                match &mut kind {
                    OpKind::If { then_block, else_block, .. } => {
                        let old_then = *then_block;
                        let fresh = blocks.alloc(BlockData::default());
                        *then_block = fresh;
                        if claim(old_then) {
                            first_child = Some((old_then, fresh));
                        }
                        if let Some(e) = else_block.take()
                            && claim(e)
                        {
                            else_child = Some(e);
                        }
                    }
                    OpKind::Loop { body, .. }
                    | OpKind::Block { body, .. }
                    | OpKind::ForRange { body, .. }
                    | OpKind::ForEach { body, .. } => {
                        let old_body = *body;
                        let fresh = blocks.alloc(BlockData::default());
                        *body = fresh;
                        if claim(old_body) {
                            first_child = Some((old_body, fresh));
                        }
                    }
                    _ => {}
                }
                let new_op = ops.alloc(OpData { kind });
                blocks[new].ops.push(new_op);
                if let Some(old_else) = else_child {
                    stack.push(Work::Else { op: new_op, old: old_else });
                }
                if let Some((old_child, new_child)) = first_child {
                    stack.push(Work::Ops { old: old_child, new: new_child, next: 0 });
                }
            }
        }
    }
    func.blocks = blocks;
    func.ops = ops;
    func.labels = labels;
    func.body = body;
}

/// Whether `func`'s arenas are already in the order [`canonicalize`] would give them: every
/// operation, block and label numbered in allocation order, and nothing else in the arenas.
fn is_canonical(func: &FunctionData) -> bool {
    if index(func.body) != 0 {
        return false;
    }
    let (mut next_op, mut next_block, mut next_label) = (0usize, 1usize, 0usize);
    let mut labels_seen = vec![false; func.labels.len()];
    enum Work {
        Ops { block: BlockId, next: usize },
        Else { block: BlockId },
    }
    let mut stack = vec![Work::Ops { block: func.body, next: 0 }];
    while let Some(work) = stack.pop() {
        let (block, next) = match work {
            Work::Else { block } => {
                if index(block) != next_block {
                    return false;
                }
                next_block += 1;
                (block, 0)
            }
            Work::Ops { block, next } => (block, next),
        };
        let Some(&op) = func.blocks.get(block).and_then(|b| b.ops.get(next)) else { continue };
        stack.push(Work::Ops { block, next: next + 1 });
        let Some(data) = func.ops.get(op) else { return false };
        if let Some(label) = data.kind.label() {
            match labels_seen.get_mut(index(label)) {
                Some(seen) if *seen => {}
                Some(seen) if index(label) == next_label => {
                    *seen = true;
                    next_label += 1;
                }
                _ => return false,
            }
        }
        let mut blocks = data.kind.blocks();
        let (first, second) = (blocks.next(), blocks.next());
        if let Some(first) = first {
            if index(first) != next_block {
                return false;
            }
            next_block += 1;
        }
        if index(op) != next_op {
            return false;
        }
        next_op += 1;
        if let Some(second) = second {
            stack.push(Work::Else { block: second });
        }
        if let Some(first) = first {
            stack.push(Work::Ops { block: first, next: 0 });
        }
    }
    next_op == func.ops.len() && next_block == func.blocks.len() && next_label == func.labels.len()
}

/// Removes the locals that are neither parameters nor mentioned by any operation the body
/// lists, keeping the others in their order and renumbering every mention.
pub fn remove_unused_locals(func: &mut FunctionData) {
    let n = func.locals.len();
    let mut used = vec![false; n];
    for &p in &func.params {
        if let Some(u) = used.get_mut(index(p)) {
            *u = true;
        }
    }
    let listed = preorder(func);
    for &(op, _) in &listed {
        if let Some(data) = func.ops.get(op) {
            data.kind.for_each_local(|l, _| {
                if let Some(u) = used.get_mut(index(l)) {
                    *u = true;
                }
            });
        }
    }
    if used.iter().all(|&u| u) {
        return;
    }
    let mut locals: Arena<LocalData> = Arena::new();
    let mut map: Vec<Option<LocalId>> = vec![None; n];
    for (id, data) in func.locals.iter() {
        if used[index(id)] {
            map[index(id)] = Some(locals.alloc(data.clone()));
        }
    }
    let remap = |l: &mut LocalId| {
        if let Some(Some(m)) = map.get(index(*l)) {
            *l = *m;
        }
    };
    for p in &mut func.params {
        remap(p);
    }
    for (op, _) in listed {
        if let Some(data) = func.ops.get_mut_checked(op) {
            data.kind.for_each_local_mut(|l, _| remap(l));
        }
    }
    func.locals = locals;
}

/// Mutable checked lookup, the counterpart of [`ArenaGet`].
pub trait ArenaGetMut<T> {
    /// The entry for `idx`, or `None` when `idx` is out of range.
    fn get_mut_checked(&mut self, idx: Idx<T>) -> Option<&mut T>;
}

impl<T> ArenaGetMut<T> for Arena<T> {
    fn get_mut_checked(&mut self, idx: Idx<T>) -> Option<&mut T> {
        if index(idx) < self.len() { Some(&mut self[idx]) } else { None }
    }
}

/// Whether `kind` may end the program or change anything other than its destination: calls,
/// runtime calls, traps, stores and other in-place mutation, drops, moves, operations that
/// may trap (`array.get`, `array.ref`, `option.unwrap`, integer `div`/`rem` by anything but a
/// nonzero constant), and control flow. An operation without effects may be removed when
/// nothing reads its destination. The facts are the operation's [`nagi_low::Effects`], the
/// same the commit rule reads.
pub fn has_effect(kind: &OpKind) -> bool {
    kind.can_trap() || kind.effects().any_besides_trapping()
}

/// Whether every local operand of `kind` that it consumes is of a copy type, so that removing
/// the operation leaves no owned value behind: the values of `new`, `option.some` and
/// `enum.new`.
pub fn consumes_only_copies(func: &FunctionData, kind: &OpKind) -> bool {
    let copy = |o: &Operand| match o {
        Operand::Const(_) => true,
        Operand::Local(l) => func.locals.get(*l).is_some_and(|d| d.ty.is_copy()),
    };
    match kind {
        OpKind::New { fields, .. } => fields.iter().all(copy),
        OpKind::OptionSome { value, .. } | OpKind::EnumNew { payload: Some(value), .. } => copy(value),
        _ => true,
    }
}

/// The locals that are ever borrowed mutably (`borrow_mut`): a store through the reference
/// may change them behind any analysis that follows only their own assignments.
pub fn mutably_borrowed(func: &FunctionData) -> Vec<bool> {
    let mut out = vec![false; func.locals.len()];
    for (op, _) in preorder(func) {
        if let Some(OpKind::Borrow { src, mutable: true, .. }) = func.ops.get(op).map(|d| &d.kind)
            && let Some(b) = out.get_mut(index(*src))
        {
            *b = true;
        }
    }
    out
}
