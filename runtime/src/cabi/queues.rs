//! Job queues on the LLVM path (docs/c-abi.md, "Job queues"): the descriptor of a queue that a
//! service hands the runtime beside its routes, and `queue.push` as a pending operation. The
//! rules themselves are `crate::queues`, shared with the Rust path: a queue's handler is a
//! [`RouteDesc`] run as a route's is, and a pushed job is encoded with the layout descriptor
//! that encodes a route's result.

use super::frame::GuardedPollFn;
use super::json::TypeDesc;
use super::pending::{PendingOp, pending};
use super::routes::{self, RouteDesc};
use super::static_text;
use crate::queues::{self, Queue};

/// One queue: `{ i8* name, i64 name_len, %RouteDesc* handler, i64 workers, i64 max_attempts,
/// i64 backoff_min_ms, i64 backoff_max_ms }`.
#[repr(C)]
pub struct QueueDesc {
    /// The queue's name, UTF-8.
    pub name: *const u8,
    /// The name's length in bytes.
    pub name_len: usize,
    /// The handler, described as the route `POST /queues/<name>` whose `body` is the job and
    /// whose query parameter `attempt` (if it has one) is the attempt's number.
    pub handler: *const RouteDesc,
    /// How many attempts run at once, 1 to 1024.
    pub workers: u64,
    /// How many attempts a job gets, at least 1.
    pub max_attempts: u64,
    /// The delay after a first failed attempt, in milliseconds.
    pub backoff_min_ms: u64,
    /// The longest delay between attempts, in milliseconds.
    pub backoff_max_ms: u64,
    /// A scheduled job's period in milliseconds; 0 for none.
    pub every_ms: u64,
    /// A scheduled job's cron expression, UTF-8; null for none.
    pub cron: *const u8,
    /// The cron expression's length in bytes.
    pub cron_len: usize,
}

// SAFETY: a descriptor is an immutable constant of the program.
unsafe impl Sync for QueueDesc {}

impl QueueDesc {
    /// The [`Queue`] this describes, its handler polled through `guarded_poll`.
    ///
    /// # Safety
    /// The descriptor and what it points to are the emitter's constants.
    pub(super) unsafe fn to_queue(&'static self, guarded_poll: GuardedPollFn) -> Queue {
        // SAFETY: forwarded from the caller.
        let (name, route) = unsafe { (static_text(self.name, self.name_len), &*self.handler) };
        let schedule = match (self.every_ms, self.cron.is_null()) {
            (0, true) => None,
            (0, false) => {
                // SAFETY: forwarded from the caller.
                let cron = unsafe { static_text(self.cron, self.cron_len) };
                Some(crate::schedule::cron_or_exit(name, cron))
            }
            (ms, _) => Some(crate::schedule::Schedule::every_ms(ms)),
        };
        Queue {
            name,
            handler: routes::handler(route, guarded_poll),
            workers: u16::try_from(self.workers).unwrap_or(u16::MAX),
            max_attempts: u32::try_from(self.max_attempts).unwrap_or(u32::MAX),
            backoff_min_ms: self.backoff_min_ms,
            backoff_max_ms: self.backoff_max_ms,
            schedule,
        }
    }
}

/// Starts `queue.push`: the job at `job` (described by `ty`, a class) is encoded as JSON at
/// once, then pushed on the queue `name` to run no sooner than `delay_ms` from now, as
/// `queues::push` does (inside a request, as part of its transaction). The operation's result
/// is the job's id, an `i64`. A job that cannot be encoded traps, as `json.encode` does.
///
/// # Safety
/// `name` points to `name_len` bytes of a program constant; `job` holds a value laid out as the
/// descriptor constant `ty` says, which this only reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_queue_push(
    name: *const u8,
    name_len: usize,
    job: *const u8,
    ty: *const TypeDesc,
    delay_ms: i64,
) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let (name, ty) = unsafe { (static_text(name, name_len), &*ty) };
    // SAFETY: forwarded from the caller.
    match unsafe { super::json::encode(job, ty) } {
        Ok(payload) => pending(async move { queues::push(name, payload, delay_ms).await }),
        Err(message) => super::fail(message),
    }
}

/// Starts `queue.dead_letters<C>`: the dead letters of queue `name`, oldest first, as an array
/// of the class `row` describes (the language's `DeadLetter`: `id`, `attempts`, `last_error`,
/// `job`), decoded as a query's rows are.
///
/// # Safety
/// `name` points to `name_len` bytes of a program constant; `row` is a descriptor constant of
/// a class.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_queue_dead_letters(
    name: *const u8,
    name_len: usize,
    row: *const TypeDesc,
) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let (name, row) = unsafe { (static_text(name, name_len), &*row) };
    let args = vec![crate::db::SqlValue::Text(name.to_owned())];
    super::db::query_rows(queues::DEAD_LETTERS_SQL.to_owned(), args, row, row, false)
}

/// Starts `queue.retry`: pushes the dead letter `id` of queue `name` again as a new job; the
/// result, an `i64`, is the new job's id, or 0 when there is no such dead letter.
///
/// # Safety
/// `name` points to `name_len` bytes of a program constant.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_queue_retry(name: *const u8, name_len: usize, id: i64) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let name = unsafe { static_text(name, name_len) };
    pending(async move { queues::retry(name, id).await })
}
