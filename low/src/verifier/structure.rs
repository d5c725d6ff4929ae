//! The shape of a function body: block ownership, labels, `break`/`continue` targets, and the
//! pre-order that orders diagnostics; every operation's type check runs from here too.
//!
//! The walk uses an explicit stack of block cursors, so a body nested 5,000 levels deep costs
//! heap, not thread stack. A block is entered only the first time an operation owns it, which
//! is what makes a corrupted body (a block that contains its own owner) terminate.

use std::collections::BTreeMap;

use crate::entities::{ArenaGet, BlockId, LabelId, OpId, index};
use crate::ops::{OpKind, ScopeKind};

use super::{FnCx, code, types};

/// A body that passed the structural checks: every block id in range and owned once, every
/// listed operation id in range and listed once. The flow checks run only on such a body.
pub(super) struct Tree {
    /// The listed operations in pre-order (text order).
    pub(super) preorder: Vec<OpId>,
}

/// A cursor into a block being walked.
struct Frame {
    block: BlockId,
    next: usize,
    /// Whether finishing this block closes the innermost label scope.
    closes_scope: bool,
}

/// Walks the body in pre-order, checking its structure and each operation's types. Returns the
/// tree when the structure is sound enough for the flow checks.
pub(super) fn walk(cx: &mut FnCx<'_>) -> Option<Tree> {
    let func = cx.func;
    if func.blocks.get(func.body).is_none() {
        let message = format!(
            "the body is block #{}, which does not exist; the function has {} blocks",
            index(func.body),
            func.blocks.len()
        );
        cx.error(code::INVALID_ID, message);
        return None;
    }
    let mut sound = true;
    let mut owned = vec![false; func.blocks.len()];
    let mut listed = vec![false; func.ops.len()];
    let mut declared_by: Vec<Option<OpId>> = vec![None; func.labels.len()];
    let mut label_names: BTreeMap<&str, LabelId> = BTreeMap::new();
    let mut scopes: Vec<(LabelId, ScopeKind)> = Vec::new();
    let mut preorder = Vec::new();

    owned[index(func.body)] = true;
    let mut frames = vec![Frame { block: func.body, next: 0, closes_scope: false }];
    while let Some(frame) = frames.last_mut() {
        // Only in-range blocks are ever pushed, so this lookup always succeeds.
        let Some(block) = func.blocks.get(frame.block) else {
            frames.pop();
            continue;
        };
        let Some(&op) = block.ops.get(frame.next) else {
            if frame.closes_scope {
                scopes.pop();
            }
            frames.pop();
            continue;
        };
        let block_id = frame.block;
        frame.next += 1;

        let Some(data) = func.ops.get(op) else {
            sound = false;
            let message = format!(
                "block #{} lists operation #{}, which does not exist; the function has {} operations",
                index(block_id),
                index(op),
                func.ops.len()
            );
            // The operation has no position of its own; order the error where it would be.
            let (_, d) = cx.op_diagnostic(code::INVALID_ID, op, message);
            cx.diagnostics.push((preorder.len() as u32 + 1, d));
            continue;
        };
        if listed[index(op)] {
            sound = false;
            let message = format!(
                "operation #{} is listed a second time (in block #{}); every operation belongs to one block, once",
                index(op),
                index(block_id)
            );
            let (_, d) = cx.op_diagnostic(code::NOT_A_TREE, op, message);
            cx.diagnostics.push((preorder.len() as u32 + 1, d));
            continue;
        }
        listed[index(op)] = true;
        preorder.push(op);
        cx.order[index(op)] = preorder.len() as u32;

        let kind = &data.kind;
        types::check_op(cx, op, kind);
        check_jump(cx, op, kind, &scopes);

        let mut scope = None;
        if let Some(label) = kind.declared_label() {
            match func.labels.get(label) {
                None => {
                    let message = format!(
                        "label #{} does not exist; the function has {} labels",
                        index(label),
                        func.labels.len()
                    );
                    cx.op_error(code::INVALID_ID, op, message);
                }
                Some(label_data) => {
                    if let Some(first) = declared_by[index(label)] {
                        let first = super::op_label(cx.module, func, first).unwrap_or_default();
                        let message = format!(
                            "label @{} is already declared by `{first}`; each label belongs to one loop, for or block",
                            label_data.name
                        );
                        cx.op_error(code::LABEL_REDECLARED, op, message);
                    } else {
                        declared_by[index(label)] = Some(op);
                        if let Some(&other) = label_names.get(label_data.name.as_str()) {
                            if other != label {
                                let message = format!(
                                    "two labels are called @{}; label names are unique in a function",
                                    label_data.name
                                );
                                cx.op_error(code::DUPLICATE_NAME, op, message);
                            }
                        } else {
                            label_names.insert(label_data.name.as_str(), label);
                        }
                    }
                    scope = kind.scope_kind().map(|k| (label, k));
                }
            }
        }

        let mut children = Vec::new();
        for b in kind.blocks() {
            match owned.get(index(b)) {
                None => {
                    sound = false;
                    let message =
                        format!("block #{} does not exist; the function has {} blocks", index(b), func.blocks.len());
                    cx.op_error(code::INVALID_ID, op, message);
                }
                Some(true) => {
                    sound = false;
                    let message = format!(
                        "block #{} already belongs to another operation (or is the body); every block has one owner",
                        index(b)
                    );
                    cx.op_error(code::NOT_A_TREE, op, message);
                }
                Some(false) => {
                    owned[index(b)] = true;
                    children.push(b);
                }
            }
        }
        // Only `loop`, `for` and `block` declare labels, and each owns exactly one block, so
        // the scope opens and closes with that block.
        if let (Some(scope), [_]) = (scope, children.as_slice()) {
            scopes.push(scope);
        }
        let closes_scope = scope.is_some() && children.len() == 1;
        // Pushed in reverse so that the first block (`then` before `else`) is walked first.
        for &b in children.iter().rev() {
            frames.push(Frame { block: b, next: 0, closes_scope });
        }
    }
    sound.then_some(Tree { preorder })
}

/// `break` and `continue` name an enclosing label of the right kind.
fn check_jump(cx: &mut FnCx<'_>, op: OpId, kind: &OpKind, scopes: &[(LabelId, ScopeKind)]) {
    let (label, is_continue) = match kind {
        OpKind::Break { label } => (*label, false),
        OpKind::Continue { label } => (*label, true),
        _ => return,
    };
    let Some(label_data) = cx.func.labels.get(label) else {
        let message =
            format!("label #{} does not exist; the function has {} labels", index(label), cx.func.labels.len());
        cx.op_error(code::INVALID_ID, op, message);
        return;
    };
    let jump = if is_continue { "continue" } else { "break" };
    match scopes.iter().rev().find(|(l, _)| *l == label) {
        None => {
            let message = format!(
                "`{jump} @{name}` is not inside the loop, for or block labelled @{name}; \
                 {jump} may only name an enclosing label",
                name = label_data.name
            );
            cx.op_error(code::BAD_JUMP, op, message);
        }
        Some((_, ScopeKind::Block)) if is_continue => {
            let message = format!(
                "`continue @{}` names a block; continue needs an enclosing loop or for (use break to leave a block)",
                label_data.name
            );
            cx.op_error(code::BAD_JUMP, op, message);
        }
        Some(_) => {}
    }
}
