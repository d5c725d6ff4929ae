//! Actors: a state of type `S` owned by one task, changed only by the messages of its bounded
//! mailbox, one at a time. The rules live here once; the Rust path sends closures over its own
//! state types, the LLVM path (`cabi::actors`) closures that run emitted handlers on a state
//! block.
//!
//! The rules (docs/low.md §8.2, docs/language.md "Actors"):
//!
//! - [`Actor::start`] makes the state with its `init` function on the actor's own task, on the
//!   Tokio runtime that started it, and gives a handle; handles are cloned freely, and the actor
//!   stops once every handle is gone and its mailbox is empty.
//! - A message runs its handler on the state to completion before the next one starts, so a
//!   handler sees the state as the previous one left it and no other code ever sees the state.
//! - The mailbox holds `capacity` messages. [`Actor::call`] and [`Actor::send`] wait while it is
//!   full (back-pressure: a fast sender slows to the actor's pace instead of growing a queue),
//!   then [`Actor::call`] waits for the handler's result.
//! - A trap in `init` or in a handler crashes the actor: the message that trapped, every message
//!   waiting in the mailbox, and every later message fail. A failed [`Actor::call`] records the
//!   failure `503 actor <name> crashed: <trap>` (the call whose handler trapped) or `503 actor
//!   <name> has stopped: <trap>` (the others; `crate::failure`) and gives `None`, which a High
//!   caller passes on with `try`; a failed [`Actor::send`] is a dead letter, counted and logged,
//!   since nobody waits for it. Nobody waits forever for a crashed actor.
//! - A supervised actor (`crate::supervisors`) keeps its mailbox when it crashes: only the call
//!   whose handler trapped fails, and the others wait for the restarted actor.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{mpsc, oneshot};

use crate::traces::{Detail, Kind, Span};

/// A message: the handler of one call or send, applied to the state.
type Message<S> = Box<dyn FnOnce(&mut S) + Send>;

thread_local! {
    /// While a message's handler runs on this thread: the actor's name and the id of the
    /// request that sent the message (0 when no request did), so that a trap's log line names
    /// the request whose message crashed the actor rather than the actor's own task.
    static RUNNING: Cell<Option<(&'static str, u64)>> = const { Cell::new(None) };
}

/// The actor whose message is running on this thread and the request that sent it (0: none),
/// for the trap hook.
pub(crate) fn running_message() -> Option<(&'static str, u64)> {
    RUNNING.with(Cell::get)
}

/// Runs `handler` as a message of actor `name` sent by `request`; the panic hook sees both
/// while it runs, also when it traps (the hook runs before unwinding leaves `handler`).
fn as_message<R>(name: &'static str, request: u64, handler: impl FnOnce() -> R) -> R {
    struct Reset(Option<(&'static str, u64)>);
    impl Drop for Reset {
        fn drop(&mut self) {
            RUNNING.with(|r| r.set(self.0));
        }
    }
    let _reset = Reset(RUNNING.with(|r| r.replace(Some((name, request)))));
    handler()
}

/// Messages sent to actors that had stopped, since the process started.
static DEAD_LETTERS: AtomicU64 = AtomicU64::new(0);

/// How many messages were sent to actors that had stopped (dead letters), since the process
/// started.
pub fn dead_letters() -> u64 {
    DEAD_LETTERS.load(Ordering::Relaxed)
}

/// What the metrics read of the actors of one name (`nagi_actor_*`, docs/http.md "Metrics"):
/// counts since the start, and the mailboxes of the live ones.
pub(crate) struct ActorCounts {
    /// The actors' declared name.
    pub(crate) name: &'static str,
    /// Calls and sends made to them.
    pub(crate) calls: Arc<AtomicU64>,
    pub(crate) sends: Arc<AtomicU64>,
    mailboxes: Vec<std::sync::Weak<dyn Mailbox>>,
}

impl ActorCounts {
    /// Messages waiting in the mailboxes of the live actors of this name.
    pub(crate) fn depth(&mut self) -> usize {
        self.mailboxes.retain(|m| m.strong_count() > 0);
        self.mailboxes.iter().filter_map(std::sync::Weak::upgrade).map(|m| m.depth()).sum()
    }
}

/// A mailbox whose depth can be read.
trait Mailbox: Send + Sync {
    fn depth(&self) -> usize;
}

impl<S: 'static> Mailbox for Shared<S> {
    fn depth(&self) -> usize {
        self.mailbox.max_capacity() - self.mailbox.capacity()
    }
}

/// Every actor name started so far, in start order.
static ACTORS: Mutex<Vec<ActorCounts>> = Mutex::new(Vec::new());

/// Runs `read` on the counts of every actor name, for a metrics scrape.
pub(crate) fn with_counts<R>(read: impl FnOnce(&mut [ActorCounts]) -> R) -> R {
    read(&mut ACTORS.lock().unwrap_or_else(PoisonError::into_inner))
}

/// The handle of an actor whose state is an `S`. Cloning it gives another handle of the same
/// actor.
pub struct Actor<S> {
    shared: Arc<Shared<S>>,
}

/// What the handles of one actor share.
struct Shared<S> {
    /// The actor's name in failures and logs: its High declaration's.
    name: &'static str,
    mailbox: mpsc::Sender<Message<S>>,
    /// Why the actor stopped, once it crashed (or its supervisor gave up): the reason.
    crash: Mutex<Option<String>>,
    /// The calls and sends counts of the actors of its name.
    calls: Arc<AtomicU64>,
    sends: Arc<AtomicU64>,
}

/// The messages and the state function of a supervised actor: it outlives each run, so that
/// a restart serves the same mailbox from a fresh state.
pub(crate) struct Supervised<S> {
    shared: Arc<Shared<S>>,
    messages: tokio::sync::Mutex<mpsc::Receiver<Message<S>>>,
    init: Box<dyn Fn() -> S + Send + Sync>,
}

impl<S: Send + 'static> Supervised<S> {
    /// Serves the mailbox from a fresh state until the actor stops (`Ok`) or crashes (the
    /// panic's payload): one run of a supervised child.
    pub(crate) async fn run(&self) -> Result<(), Box<dyn std::any::Any + Send>> {
        let mut messages = self.messages.lock().await;
        serve(&mut messages, || (self.init)()).await
    }

    /// Closes the mailbox for good with `reason`: every waiting and later call fails with it.
    pub(crate) async fn close(&self, reason: String) {
        *self.shared.crash.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
        let mut messages = self.messages.lock().await;
        messages.close();
        // The messages still waiting are dropped, so their callers fail now.
        while messages.try_recv().is_ok() {}
    }
}

impl<S> Shared<S> {
    /// An actor's shared part with a mailbox of `capacity` messages (clamped to 1 to
    /// [`MAX_CAPACITY`]), and the mailbox's receiving end.
    fn new(name: &'static str, capacity: usize) -> (Arc<Shared<S>>, mpsc::Receiver<Message<S>>)
    where
        S: 'static,
    {
        let (mailbox, messages) = mpsc::channel(capacity.clamp(1, MAX_CAPACITY));
        let mut actors = ACTORS.lock().unwrap_or_else(PoisonError::into_inner);
        let at = match actors.iter().position(|a| a.name == name) {
            Some(at) => at,
            None => {
                actors.push(ActorCounts { name, calls: Arc::default(), sends: Arc::default(), mailboxes: Vec::new() });
                actors.len() - 1
            }
        };
        let counts = &mut actors[at];
        let shared = Arc::new(Shared {
            name,
            mailbox,
            crash: Mutex::new(None),
            calls: Arc::clone(&counts.calls),
            sends: Arc::clone(&counts.sends),
        });
        // Actors started and gone leave dead entries; they are swept when they could double
        // the list, so it stays within twice the live actors.
        if counts.mailboxes.len() >= 64 && counts.mailboxes.len().is_power_of_two() {
            counts.mailboxes.retain(|m| m.strong_count() > 0);
        }
        let weak: std::sync::Weak<dyn Mailbox> = Arc::downgrade(&shared) as std::sync::Weak<Shared<S>>;
        counts.mailboxes.push(weak);
        (shared, messages)
    }
}

impl<S> Clone for Actor<S> {
    fn clone(&self) -> Self {
        Actor { shared: Arc::clone(&self.shared) }
    }
}

/// The largest mailbox capacity (Low's V251 bounds `actor.start`'s constant by it).
pub const MAX_CAPACITY: usize = 1 << 20;

impl<S: Send + 'static> Actor<S> {
    /// Starts an actor named `name` with a mailbox of `capacity` messages (at least 1, at most
    /// [`MAX_CAPACITY`]) whose state `init` makes (Low's `actor.start`).
    ///
    /// # Panics
    /// Outside a Tokio runtime, which only a program that does not start through the runtime's
    /// entries can be.
    pub fn start(name: &'static str, capacity: usize, init: impl FnOnce() -> S + Send + 'static) -> Actor<S> {
        let (shared, messages) = Shared::new(name, capacity);
        let watcher = Arc::downgrade(&shared);
        tokio::spawn(async move {
            let mut messages = messages;
            if let Err(payload) = serve(&mut messages, init).await {
                let reason = crate::trap::payload_text(&*payload);
                tracing::warn!(actor = name, reason = %reason, "an actor crashed");
                // The reason is kept before the mailbox goes, so that every caller whose message
                // the crash drops finds it (they wait for the mailbox to close first).
                if let Some(shared) = watcher.upgrade() {
                    *shared.crash.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
                }
            }
            drop(messages);
        });
        Actor { shared }
    }

    /// A supervised actor (`crate::supervisors`): its handle, and the child its supervisor runs
    /// (and runs again after a crash) on the same mailbox.
    pub(crate) fn supervised(
        name: &'static str,
        capacity: usize,
        init: impl Fn() -> S + Send + Sync + 'static,
    ) -> (Actor<S>, Supervised<S>) {
        let (shared, messages) = Shared::new(name, capacity);
        let child = Supervised {
            shared: Arc::clone(&shared),
            messages: tokio::sync::Mutex::new(messages),
            init: Box::new(init),
        };
        (Actor { shared }, child)
    }

    /// Runs `handler` on the actor's state and gives its result (Low's `actor.call`): waits for
    /// room in the mailbox, then for the result. `None` when the actor has stopped or stops
    /// before it answers, after recording the failure (503) for the caller to pass on.
    pub async fn call<R: Send + 'static>(&self, handler: impl FnOnce(&mut S) -> R + Send + 'static) -> Option<R> {
        let (reply, result) = oneshot::channel();
        let (name, request) = (self.shared.name, crate::context::request_id());
        let mut span = Span::child(crate::context::trace(), Kind::Internal, || Detail::ActorCall { actor: name });
        self.shared.calls.fetch_add(1, Ordering::Relaxed);
        let message: Message<S> = Box::new(move |state| {
            // A caller that went away leaves nobody to take the answer, which is dropped. A trap
            // is answered with its message before it goes on to crash the actor, so the caller
            // whose message crashed it learns why without waiting for the crash to be recorded.
            match panic::catch_unwind(AssertUnwindSafe(|| as_message(name, request, || handler(state)))) {
                Ok(value) => drop(reply.send(Ok(value))),
                Err(payload) => {
                    let _ = reply.send(Err(crate::trap::payload_text(&*payload)));
                    panic::resume_unwind(payload)
                }
            }
        });
        if self.shared.mailbox.send(message).await.is_ok() {
            match result.await {
                Ok(Ok(value)) => return Some(value),
                Ok(Err(reason)) => {
                    let message = format!("actor {} crashed: {reason}", self.shared.name);
                    if let Some(span) = &mut span {
                        span.fail(|| message.clone());
                    }
                    crate::failure::fail(503, &message);
                    return None;
                }
                Err(_) => {}
            }
        }
        // The message was dropped unrun, or never queued: the mailbox closes once the reason
        // is recorded.
        self.shared.mailbox.closed().await;
        let message = format!("actor {} has stopped{}", self.shared.name, self.crash_reason());
        if let Some(span) = &mut span {
            span.fail(|| message.clone());
        }
        crate::failure::fail(503, &message);
        None
    }

    /// Runs `handler` on the actor's state without waiting for it (Low's `actor.send`): waits
    /// only for room in the mailbox. When the actor has stopped, the message is a dead letter:
    /// counted ([`dead_letters`]) and logged, and dropped.
    pub async fn send(&self, handler: impl FnOnce(&mut S) + Send + 'static) {
        let (name, request) = (self.shared.name, crate::context::request_id());
        self.shared.sends.fetch_add(1, Ordering::Relaxed);
        let message: Message<S> = Box::new(move |state| as_message(name, request, || handler(state)));
        if self.shared.mailbox.send(message).await.is_err() {
            DEAD_LETTERS.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(actor = self.shared.name, "a message to a stopped actor was dropped (a dead letter)");
        }
    }

    /// `": <trap>"` when the actor crashed, else nothing (it stopped because its last handle
    /// went, which no live caller can see).
    fn crash_reason(&self) -> String {
        match &*self.shared.crash.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(reason) => format!(": {reason}"),
            None => String::new(),
        }
    }
}

/// The actor's loop: makes the state, then runs each message on it until every handle is gone
/// and the mailbox is empty. A trap ends the loop with its payload; the caller then drops the
/// mailbox, which drops the messages still in it, so that their callers' calls fail.
async fn serve<S>(
    messages: &mut mpsc::Receiver<Message<S>>,
    init: impl FnOnce() -> S,
) -> Result<(), Box<dyn Any + Send>> {
    let mut state = panic::catch_unwind(AssertUnwindSafe(init))?;
    while let Some(message) = messages.recv().await {
        // The handler runs to completion here, so a trap leaves the state as the handler left it;
        // the actor stops and nothing reads that state again.
        panic::catch_unwind(AssertUnwindSafe(|| message(&mut state)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime")
    }

    #[test]
    fn calls_run_in_order_on_one_state_and_sends_are_seen_by_later_calls() {
        let totals = runtime().block_on(async {
            let counter = Actor::start("Counter", 2, || 0_i64);
            let other = counter.clone();
            let calls = (1..=3).map(|n| {
                counter.call(move |total| {
                    *total += n;
                    *total
                })
            });
            // Three calls in flight through a mailbox of two: the third waits for room.
            let mut answers = futures_util::future::join_all(calls).await;
            other.send(|total| *total *= 10).await;
            answers.push(other.call(|total| *total).await);
            answers
        });
        assert_eq!(totals, vec![Some(1), Some(3), Some(6), Some(60)]);
    }

    #[test]
    fn a_trap_crashes_the_actor_and_every_caller_sees_the_failure() {
        let (crashed, later, failure) = runtime().block_on(async {
            let actor = Actor::start("Divider", 8, || 10_i64);
            let crashed = actor.call(|n| {
                if *n == 10 {
                    crate::trap("division by zero");
                }
                *n
            });
            let crashed = crashed.await;
            crate::failure::take();
            let later = actor.call(|n| *n).await;
            (crashed, later, crate::failure::take())
        });
        assert_eq!((crashed, later), (None, None));
        let failure = failure.expect("the failed call records a failure");
        assert_eq!(failure.status, 503);
        assert_eq!(failure.message, "actor Divider has stopped: division by zero");
    }

    #[test]
    fn a_send_to_a_crashed_actor_is_a_dead_letter() {
        let before = dead_letters();
        runtime().block_on(async {
            let actor = Actor::start("Broken", 1, || -> i64 { crate::trap("no state") });
            assert_eq!(actor.call(|n| *n).await, None);
            actor.send(|n| *n += 1).await;
        });
        assert!(dead_letters() > before);
    }

    /// The metrics' view of an actor name: messages waiting behind a running one, and the calls
    /// and sends made, summed over the live actors of the name.
    #[test]
    fn the_counts_of_an_actor_name_show_its_mailboxes_depth_and_messages() {
        let counts = |name: &str| {
            with_counts(|actors| {
                let actor = actors.iter_mut().find(|a| a.name == name).expect("the name is registered");
                (actor.depth(), actor.calls.load(Ordering::Relaxed), actor.sends.load(Ordering::Relaxed))
            })
        };
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (release, held) = std::sync::mpsc::channel::<()>();
        let held = Mutex::new(held);
        runtime.block_on(async {
            let actor = Actor::start("Deep", 8, || 0_i64);
            assert_eq!(actor.call(|n| *n).await, Some(0));
            // The first message holds the actor until released; three more wait behind it.
            let (started, running) = oneshot::channel();
            actor
                .send(move |n| {
                    let _ = started.send(());
                    let _ = held.lock().unwrap().recv();
                    *n += 1;
                })
                .await;
            running.await.unwrap();
            for _ in 0..3 {
                actor.send(|n| *n += 1).await;
            }
            assert_eq!(counts("Deep"), (3, 1, 4));
            release.send(()).unwrap();
            assert_eq!(actor.call(|n| *n).await, Some(4));
            assert_eq!(counts("Deep"), (0, 2, 4));
        });
    }
}
