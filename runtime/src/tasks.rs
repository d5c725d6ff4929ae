//! Structured concurrency: a [`Scope`] owns the tasks spawned in it, [`Task::join`] awaits one
//! task's result, and [`Scope::end`] awaits them all. The rules live here once; the Rust path
//! calls them on the futures of its `async fn`s, the LLVM path (`cabi::tasks`) on futures that
//! poll emitted frames.
//!
//! The rules (docs/low.md §8.1, docs/language.md "Tasks and scopes"):
//!
//! - A task runs on the Tokio runtime that polls its parent, concurrently with the parent and
//!   its siblings, from the moment it is spawned.
//! - A task cannot outlive its scope: [`Scope::end`] waits for every task of the scope, joined
//!   or not, and dropping a scope (its owner was cancelled or trapped) cancels every task still
//!   running in it.
//! - When a task traps, its scope has failed: the next [`Task::join`] or [`Scope::end`] of the
//!   parent, and one already waiting, cancels every other task of the scope one at a time, in
//!   the order they were spawned, waiting until each is gone before the next (a cancelled
//!   task's future is dropped, which runs its drops and its deferred calls), and then
//!   raises the first trap in the parent with the same payload (the panic hook reported it when
//!   it was raised, so it is not reported twice). A parent busy elsewhere sees the failure at
//!   its next join or end.
//! - A task whose handle was dropped keeps running; its scope still waits for it, and its
//!   result is dropped when it arrives.
//! - A blocking task ([`Scope::spawn_blocking`]) runs a plain function on a thread of the bounded
//!   blocking pool: at most `--blocking-threads` of them (`NAGI_BLOCKING_THREADS`, default 4)
//!   run at once, and the others wait for a thread without holding one of the workers, so
//!   CPU-bound work never starves the tasks and requests that wait. It is a task of its scope
//!   like any other (joined, ended, its trap failing the scope), except that cancelling it
//!   cannot stop a function that is running: its result is dropped when it returns.

use std::any::Any;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::FutureExt;
use tokio::sync::{Notify, Semaphore, oneshot};
use tokio::task::JoinHandle;

/// The blocking pool's default size, in threads.
pub const DEFAULT_BLOCKING_THREADS: usize = 4;

/// The blocking pool's permits, one per thread that may run blocking work at once.
static BLOCKING: std::sync::OnceLock<Arc<Semaphore>> = std::sync::OnceLock::new();

/// Sets the blocking pool's size (`--blocking-threads`); only the first call counts, and only
/// before the first blocking task, which otherwise fixes it from `NAGI_BLOCKING_THREADS`.
pub fn set_blocking_threads(threads: usize) {
    let _ = BLOCKING.set(Arc::new(Semaphore::new(threads.max(1))));
}

fn blocking_pool() -> &'static Arc<Semaphore> {
    BLOCKING.get_or_init(|| {
        let threads = std::env::var("NAGI_BLOCKING_THREADS").ok().and_then(|v| v.parse().ok());
        Arc::new(Semaphore::new(threads.unwrap_or(DEFAULT_BLOCKING_THREADS).max(1)))
    })
}

/// A caught panic payload: a [`crate::Trap`] or an [`crate::HttpError`].
type Payload = Box<dyn Any + Send>;

/// What a scope and its tasks share.
struct Shared {
    state: Mutex<State>,
    /// Woken whenever a task of the scope finishes or fails.
    changed: Notify,
}

#[derive(Default)]
struct State {
    /// The first failure of a task of the scope, until the parent raises it.
    failure: Option<Payload>,
    /// Whether a task has failed (stays set once the failure is taken).
    failed: bool,
    /// The tasks spawned in the scope, finished or not, so that they can be cancelled.
    children: Vec<JoinHandle<()>>,
    /// How many tasks of the scope have not finished.
    running: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a task panicked while holding it, which no code here does
        // between its updates; the state is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that a task ended, with `failure` when it trapped, and wakes whoever waits.
    fn finished(&self, failure: Option<Payload>) {
        {
            let mut state = self.lock();
            state.running -= 1;
            if let Some(payload) = failure
                && !state.failed
            {
                state.failed = true;
                state.failure = Some(payload);
            }
        }
        self.changed.notify_waiters();
    }

    /// Waits until `ready` says the state is final (`Some`), re-checking each time a task of the
    /// scope finishes. A failure of the scope is raised first.
    async fn wait_until<R>(&self, mut ready: impl FnMut(&mut State) -> Option<R>) -> R {
        loop {
            // The waiter is registered before the state is read, so a task that finishes in
            // between still wakes it.
            let mut notified = pin!(self.changed.notified());
            notified.as_mut().enable();
            let failed = {
                let mut state = self.lock();
                if !state.failed
                    && let Some(r) = ready(&mut state)
                {
                    return r;
                }
                state.failed
            };
            if failed {
                self.raise().await;
            }
            notified.await;
        }
    }

    /// Cancels every task of the failed scope, waits until each is gone, and raises the
    /// scope's first failure in the parent.
    async fn raise(&self) -> ! {
        let (children, failure) = {
            let mut state = self.lock();
            (std::mem::take(&mut state.children), state.failure.take())
        };
        // One at a time, in the order they were spawned, each gone before the next is
        // cancelled: what their drops do (deferred calls) happens in an order the program can
        // rely on. A task that was cancelled or finished answers at once; what it answers is
        // not needed, since the failure is already recorded.
        for child in children {
            child.abort();
            let _ = child.await;
        }
        match failure {
            Some(payload) => panic::resume_unwind(payload),
            // The failure was raised already (the parent caught it and joined again), which no
            // emitted code does; raise a trap rather than hang.
            None => crate::trap("a task of this scope trapped"),
        }
    }
}

/// Tasks of the program's scopes whose future exists now.
static ALIVE: AtomicUsize = AtomicUsize::new(0);

/// How many tasks the program's scopes have spawned that have not finished (`nagi_tasks_alive`).
pub(crate) fn alive() -> usize {
    ALIVE.load(Ordering::Relaxed)
}

/// One task counted in [`alive`] while this lives.
struct Alive;

impl Alive {
    fn new() -> Alive {
        ALIVE.fetch_add(1, Ordering::Relaxed);
        Alive
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        ALIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The tasks spawned by one `scope` of the program. Dropping it cancels every task still
/// running in it.
pub struct Scope {
    shared: Arc<Shared>,
}

/// The handle of a task spawned in a [`Scope`], giving its result of type `T` once.
pub struct Task<T> {
    result: oneshot::Receiver<T>,
    scope: Arc<Shared>,
}

impl Default for Scope {
    fn default() -> Self {
        Self::new()
    }
}

impl Scope {
    /// A scope with no tasks (Low's `scope.new`).
    pub fn new() -> Scope {
        Scope { shared: Arc::new(Shared { state: Mutex::new(State::default()), changed: Notify::new() }) }
    }

    /// Starts `task` on the current Tokio runtime as a task of this scope (Low's `scope.spawn`).
    ///
    /// # Panics
    /// Outside a Tokio runtime, which only a program that does not start through the runtime's
    /// entries can be.
    pub fn spawn<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> Task<T> {
        let (sender, result) = oneshot::channel();
        let shared = Arc::clone(&self.shared);
        let mut state = self.shared.lock();
        state.running += 1;
        // Counted until the task's future is gone: finished, cancelled, or dropped unpolled.
        let alive = Alive::new();
        let handle = tokio::spawn(async move {
            let _alive = alive;
            // A cancelled task is dropped inside `Cancellable`, so that its deferred calls run
            // as a cancellation's (`crate::defers`).
            let outcome = AssertUnwindSafe(crate::defers::Cancellable::new(task)).catch_unwind().await;
            let failure = match outcome {
                // A handle that was dropped leaves nobody to take the result, which is dropped.
                Ok(value) => {
                    let _ = sender.send(value);
                    None
                }
                Err(payload) => Some(payload),
            };
            shared.finished(failure);
        });
        state.children.push(handle);
        Task { result, scope: Arc::clone(&self.shared) }
    }

    /// Starts `work`, a plain function, on the bounded blocking pool as a task of this scope
    /// (Low's `scope.spawn_blocking`): it waits for one of the pool's threads without holding a
    /// worker, then runs to completion there. A trap in it fails the scope as a task's does.
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn spawn_blocking<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Task<T> {
        self.spawn(run_blocking(work))
    }

    /// Waits until every task of the scope has finished (Low's `scope.end`); raises the first
    /// trap of a task after cancelling the others.
    pub async fn end(self) {
        self.shared.wait_until(|state| (state.running == 0).then_some(())).await;
    }
}

/// Runs `work`, a plain function, on the bounded blocking pool and gives its result: it waits
/// for one of the pool's threads without holding a worker, then runs to completion there (a
/// blocking task's body, and the password hashes of `secrets`). A trap in `work` is raised here.
///
/// # Panics
/// Outside a Tokio runtime.
pub async fn run_blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    // The permit goes with the work, so that the function of a cancelled caller, which runs on
    // to its end, still counts against the pool until it returns.
    let permit = Arc::clone(blocking_pool()).acquire_owned().await.expect("the pool is never closed");
    let running = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work()
    });
    match running.await {
        Ok(value) => value,
        Err(error) => match error.try_into_panic() {
            Ok(payload) => panic::resume_unwind(payload),
            Err(_) => crate::trap("a blocking task was cancelled"),
        },
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        for child in &self.shared.lock().children {
            child.abort();
        }
    }
}

impl<T> Task<T> {
    /// Waits for the task's result (Low's `task.join`). When a task of the scope traps first,
    /// this one included, cancels the others and raises that trap.
    pub async fn join(self) -> T {
        let Task { mut result, scope } = self;
        // An error is "not finished yet", or the task failed, which the next look at the state
        // sees (a task records its failure before its sender goes).
        scope.wait_until(|_| result.try_recv().ok()).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime")
    }

    /// Counts its drops, to see that a cancelled task's values are dropped.
    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn trap_message(payload: Payload) -> String {
        payload.downcast::<crate::Trap>().map(|t| t.message).unwrap_or_default()
    }

    #[test]
    fn join_gives_each_result_and_end_waits_for_unjoined_tasks() {
        let finished = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&finished);
        let sum = runtime().block_on(async move {
            let scope = Scope::new();
            let a = scope.spawn(async { 40 });
            let b = scope.spawn(async { 2 });
            let counter = Arc::clone(&seen);
            drop(scope.spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                counter.fetch_add(1, Ordering::SeqCst);
            }));
            let sum = b.join().await + a.join().await;
            scope.end().await;
            sum
        });
        assert_eq!((sum, finished.load(Ordering::SeqCst)), (42, 1));
    }

    #[test]
    fn a_trap_cancels_the_siblings_drops_their_values_and_reaches_the_parent() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&dropped);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            runtime().block_on(async move {
                let scope = Scope::new();
                let held = Counted(Arc::clone(&seen));
                let slow = scope.spawn(async move {
                    let _held = held;
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    1
                });
                let _fails = scope.spawn(async {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    crate::trap("child 2 failed")
                });
                // The parent waits on the slow sibling; the trap still reaches it at once.
                slow.join().await
            })
        }));
        let payload = outcome.expect_err("the parent traps");
        assert_eq!(trap_message(payload), "child 2 failed");
        assert_eq!(dropped.load(Ordering::SeqCst), 1, "the cancelled sibling dropped what it held");
    }

    #[test]
    fn end_raises_a_trap_of_an_unjoined_task() {
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            runtime().block_on(async {
                let scope = Scope::new();
                drop(scope.spawn(async { crate::trap("lost") }));
                scope.end().await;
            })
        }));
        assert_eq!(trap_message(outcome.expect_err("end traps")), "lost");
    }

    #[test]
    fn blocking_tasks_run_at_most_the_pool_size_at_once_and_their_traps_fail_the_scope() {
        set_blocking_threads(2);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let sum = runtime().block_on(async {
            let scope = Scope::new();
            let tasks: Vec<Task<usize>> = (0..8)
                .map(|i| {
                    let (running, most) = (Arc::clone(&running), Arc::clone(&most));
                    scope.spawn_blocking(move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(10));
                        running.fetch_sub(1, Ordering::SeqCst);
                        i
                    })
                })
                .collect();
            let mut sum = 0;
            for task in tasks {
                sum += task.join().await;
            }
            scope.end().await;
            sum
        });
        assert_eq!((sum, most.load(Ordering::SeqCst) <= 2), (28, true));
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            runtime().block_on(async {
                let scope = Scope::new();
                let failing: Task<i64> = scope.spawn_blocking(|| crate::trap("blocking work failed"));
                failing.join().await
            })
        }));
        assert_eq!(trap_message(outcome.expect_err("the join traps")), "blocking work failed");
    }

    #[test]
    fn dropping_a_scope_cancels_its_tasks() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&dropped);
        runtime().block_on(async move {
            let scope = Scope::new();
            let held = Counted(Arc::clone(&seen));
            drop(scope.spawn(async move {
                let _held = held;
                tokio::time::sleep(Duration::from_secs(30)).await;
            }));
            tokio::task::yield_now().await;
            drop(scope);
            // Cancellation happens when the runtime next runs the task.
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
        });
        assert_eq!(dropped.load(Ordering::SeqCst), 1);
    }
}
