//! Supervisors on the LLVM path: the module's supervisor trees as constant descriptors, which
//! the runtime turns into [`crate::supervisors::Spec`]s the first time a child is asked for
//! (`supervisor.child`), with the rules of [`crate::supervisors`], which the Rust path uses too.

use std::time::Duration;

use super::actors::{ActorDesc, RawState, described, raw_state};
use crate::actors::Actor;
use crate::supervisors::{ChildSpec, Spec, Strategy};

/// One supervisor: `{ i8* name, i64 name_len, i64 strategy (0 one_for_one, 1 one_for_all),
/// i64 intensity, i64 period_ms, i64 backoff_min_ms, i64 backoff_max_ms, ChildDesc* children,
/// i64 count }`.
#[repr(C)]
pub struct SupervisorDesc {
    /// The supervisor's name: UTF-8, not NUL-terminated.
    pub name: *const u8,
    /// The name's length in bytes.
    pub name_len: usize,
    /// 0 for one_for_one, 1 for one_for_all.
    pub strategy: i64,
    /// How many restarts the period may see before the supervisor gives up.
    pub intensity: i64,
    /// The window restarts are counted in, in milliseconds.
    pub period_ms: i64,
    /// The backoff's minimum, in milliseconds.
    pub backoff_min_ms: i64,
    /// The backoff's maximum, in milliseconds.
    pub backoff_max_ms: i64,
    /// The children, `count` of them.
    pub children: *const ChildDesc,
    /// How many children.
    pub count: usize,
}

/// One child: `{ i64 kind (0 actor, 1 supervisor), i8* desc (an ActorDesc or a SupervisorDesc),
/// i64 capacity (an actor's mailbox) }`.
#[repr(C)]
pub struct ChildDesc {
    /// 0 for an actor, 1 for a nested supervisor.
    pub kind: i64,
    /// The child's descriptor.
    pub desc: *const u8,
    /// An actor's mailbox, in messages.
    pub capacity: i64,
}

/// The module's trees: `{ i64 count, SupervisorDesc** trees }`.
#[repr(C)]
pub struct SupervisorTable {
    /// How many trees.
    pub count: usize,
    /// The trees' descriptors, in declaration order.
    pub trees: *const *const SupervisorDesc,
}

/// The spec of the supervisor `desc` describes, with its children's.
///
/// # Safety
/// `desc` and everything it points to are constants of the program.
unsafe fn spec(desc: &'static SupervisorDesc) -> Spec {
    let millis = |ms: i64| Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    // SAFETY: forwarded from the caller: the children are `count` constants, and the name is
    // the UTF-8 of a Low name.
    let (children, name) = unsafe {
        (
            std::slice::from_raw_parts(desc.children, desc.count),
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(desc.name, desc.name_len)),
        )
    };
    let children = children
        .iter()
        .map(|child| match child.kind {
            0 => {
                // SAFETY: a kind-0 child's descriptor is an `ActorDesc` constant.
                let (actor, name) = unsafe { described(child.desc.cast::<ActorDesc>()) };
                let capacity = usize::try_from(child.capacity).unwrap_or(1);
                ChildSpec::actor(name, capacity, move || raw_state(actor))
            }
            // SAFETY: any other child's descriptor is a `SupervisorDesc` constant.
            _ => ChildSpec::supervisor(unsafe { spec(&*child.desc.cast::<SupervisorDesc>()) }),
        })
        .collect();
    Spec {
        name,
        strategy: if desc.strategy == 1 { Strategy::OneForAll } else { Strategy::OneForOne },
        intensity: u32::try_from(desc.intensity).unwrap_or(0),
        period: millis(desc.period_ms),
        backoff_min: millis(desc.backoff_min_ms),
        backoff_max: millis(desc.backoff_max_ms),
        children,
    }
}

/// `supervisor.child`: another handle of the actor at `path` (`len` child indexes) below the
/// tree `tree` of `table`; starts the trees the first time it is called.
///
/// # Safety
/// `table` is the program's table constant, `path` points to `len` indexes. Called inside the
/// Tokio runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_supervisor_child(
    table: *const SupervisorTable,
    tree: i64,
    path: *const i64,
    len: i64,
) -> *mut Actor<RawState> {
    // SAFETY: forwarded from the caller.
    let (table, path): (&'static SupervisorTable, &[i64]) =
        unsafe { (&*table, std::slice::from_raw_parts(path, usize::try_from(len).unwrap_or(0))) };
    let path: Vec<u32> = path.iter().map(|&i| u32::try_from(i).unwrap_or(u32::MAX)).collect();
    let specs = || {
        // SAFETY: the table's trees are `count` constants.
        let trees = unsafe { std::slice::from_raw_parts(table.trees, table.count) };
        // SAFETY: each is a supervisor descriptor constant.
        trees.iter().map(|&tree| unsafe { spec(&*tree) }).collect()
    };
    let actor = crate::supervisors::child::<RawState>(specs, usize::try_from(tree).unwrap_or(usize::MAX), &path);
    Box::into_raw(Box::new(actor))
}
