//! Supervisors: OTP's model of restarting crashed actors. A supervisor owns children (actors
//! and other supervisors, so supervisors form a tree); when a child crashes it restarts it (or,
//! with [`Strategy::OneForAll`], every child) from a fresh state after a backoff, unless more
//! than `intensity` restarts happened within `period`: then it gives up, stops its children and
//! fails upward, to its own supervisor, which treats it as a crashed child. The rules live here
//! once, for both emitters (docs/low.md §8.3, docs/language.md "Supervisors").
//!
//! A supervised actor keeps its mailbox across restarts, so a handle stays valid: while the
//! actor restarts, calls wait in the mailbox (back-pressure still applies), and the new state
//! answers them. The call whose handler crashed the actor fails, as without a supervisor. When
//! the top supervisor gives up, every mailbox of the tree closes: waiting and later calls fail
//! with the reason, as for a crashed actor without a supervisor.
//!
//! Restarts follow Erlang's supervisor rules (`intensity` restarts per `period`, counted over a
//! sliding window), with an exponential backoff between `backoff_min` and `backoff_max`: the
//! `n`-th restart within the window waits `backoff_min · 2^(n-1)`, at most `backoff_max`.

use std::any::Any;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::task::{Id, JoinSet};

use crate::actors::{Actor, Supervised};

/// A caught panic payload: a [`crate::Trap`] or an [`crate::HttpError`].
type Payload = Box<dyn Any + Send>;

/// A child's run: its state made and its messages served until it stops (`Ok`) or crashes.
pub(crate) type Run = Pin<Box<dyn Future<Output = Result<(), Payload>> + Send>>;

/// Which children a crash restarts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Only the child that crashed.
    OneForOne,
    /// Every child: the others are stopped first (their states dropped), then all start again.
    OneForAll,
}

/// A supervised child, whatever its state type.
pub(crate) trait Child: Send + Sync {
    /// Runs the child from a fresh start until it stops or crashes.
    fn run(self: Arc<Self>) -> Run;
    /// Stops the child for good: its mailboxes close, and every waiting and later call fails
    /// with `reason`.
    fn close(&self, reason: &str) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// How to build one supervisor of the tree: its rules and its children.
pub struct Spec {
    /// The supervisor's name, for logs and failures.
    pub name: &'static str,
    /// Which children a crash restarts.
    pub strategy: Strategy,
    /// How many restarts `period` may see before the supervisor gives up.
    pub intensity: u32,
    /// The sliding window restarts are counted in.
    pub period: Duration,
    /// The wait before the first restart within the window.
    pub backoff_min: Duration,
    /// The longest wait before a restart.
    pub backoff_max: Duration,
    /// The children, in order: a child's path names its index.
    pub children: Vec<ChildSpec>,
}

// A supervised actor is a child: its runs serve the one mailbox it keeps across restarts.
impl<S: Send + 'static> Child for Supervised<S> {
    fn run(self: Arc<Self>) -> Run {
        Box::pin(async move { Supervised::run(&self).await })
    }

    fn close(&self, reason: &str) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(Supervised::close(self, reason.to_owned()))
    }
}

/// One child of a [`Spec`]: an actor or a nested supervisor.
pub struct ChildSpec(ChildKind);

enum ChildKind {
    /// An actor: its handle (given to whoever asks for the child) and its run.
    Actor {
        handle: Box<dyn Any + Send + Sync>,
        child: Arc<dyn Child>,
    },
    Supervisor(Spec),
}

impl ChildSpec {
    /// An actor named `name` with a mailbox of `capacity` messages, whose state `init` makes at
    /// each start.
    pub fn actor<S: Send + 'static>(
        name: &'static str,
        capacity: usize,
        init: impl Fn() -> S + Send + Sync + 'static,
    ) -> ChildSpec {
        let (handle, child) = Actor::supervised(name, capacity, init);
        ChildSpec(ChildKind::Actor { handle: Box::new(handle), child: Arc::new(child) })
    }

    /// A nested supervisor.
    pub fn supervisor(spec: Spec) -> ChildSpec {
        ChildSpec(ChildKind::Supervisor(spec))
    }
}

/// A running supervisor as a child of another: its run is its whole life, which ends with the
/// reason it gave up.
struct Supervisor {
    name: &'static str,
    strategy: Strategy,
    intensity: u32,
    period: Duration,
    backoff_min: Duration,
    backoff_max: Duration,
    children: Vec<Arc<dyn Child>>,
}

/// What a supervisor tree gives to code that asks for a child: the handles, by path.
enum Node {
    Actor(Box<dyn Any + Send + Sync>),
    Supervisor(Vec<Node>),
}

impl Spec {
    /// Splits the tree into the handles, by path, and the running supervisor.
    fn build(self) -> (Vec<Node>, Supervisor) {
        let mut nodes = Vec::with_capacity(self.children.len());
        let mut children: Vec<Arc<dyn Child>> = Vec::with_capacity(self.children.len());
        for ChildSpec(child) in self.children {
            match child {
                ChildKind::Actor { handle, child } => {
                    nodes.push(Node::Actor(handle));
                    children.push(child);
                }
                ChildKind::Supervisor(spec) => {
                    let (inner, supervisor) = spec.build();
                    nodes.push(Node::Supervisor(inner));
                    children.push(Arc::new(supervisor));
                }
            }
        }
        let Spec { name, strategy, intensity, period, backoff_min, backoff_max, .. } = self;
        (nodes, Supervisor { name, strategy, intensity, period, backoff_min, backoff_max, children })
    }
}

impl Supervisor {
    /// The wait before the `n`-th restart (from 1) within the window.
    fn backoff(&self, n: usize) -> Duration {
        crate::backoff::exponential(self.backoff_min, self.backoff_max, u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Supervises the children until more than `intensity` restarts happen within `period`;
    /// gives why it gave up. The children's tasks are stopped then (not their mailboxes: the
    /// caller closes those, or restarts this supervisor).
    async fn supervise(&self) -> String {
        let mut running = JoinSet::new();
        let mut ids: Vec<Option<Id>> = (0..self.children.len()).map(|i| Some(self.spawn(&mut running, i))).collect();
        let mut restarts: VecDeque<Instant> = VecDeque::new();
        loop {
            let Some(finished) = running.join_next_with_id().await else {
                // Every child stopped normally; none is left to supervise.
                std::future::pending::<()>().await;
                unreachable!("a pending future never finishes");
            };
            let (id, crashed) = match finished {
                Ok((id, outcome)) => (id, outcome.err().map(|p| crate::trap::payload_text(&*p))),
                Err(error) => (error.id(), Some("the child's task ended abnormally".to_owned())),
            };
            let Some(index) = ids.iter().position(|slot| *slot == Some(id)) else { continue };
            ids[index] = None;
            let Some(reason) = crashed else { continue };
            let now = Instant::now();
            restarts.push_back(now);
            while restarts.front().is_some_and(|t| now.duration_since(*t) > self.period) {
                restarts.pop_front();
            }
            if restarts.len() > self.intensity as usize {
                running.shutdown().await;
                let why = format!(
                    "supervisor {} gave up after {} restarts in {:?}: {reason}",
                    self.name, self.intensity, self.period
                );
                tracing::error!(supervisor = self.name, reason = %why, "a supervisor gave up");
                crate::metrics::supervisor_event(self.name, false);
                return why;
            }
            tracing::warn!(supervisor = self.name, child = index, reason = %reason, "restarting a crashed child");
            crate::metrics::supervisor_event(self.name, true);
            let restart: Vec<usize> = match self.strategy {
                Strategy::OneForOne => vec![index],
                Strategy::OneForAll => {
                    running.shutdown().await;
                    ids.iter_mut().for_each(|slot| *slot = None);
                    (0..self.children.len()).collect()
                }
            };
            wait(self.backoff(restarts.len())).await;
            for index in restart {
                ids[index] = Some(self.spawn(&mut running, index));
            }
        }
    }

    fn spawn(&self, running: &mut JoinSet<Result<(), Payload>>, index: usize) -> Id {
        running.spawn(Arc::clone(&self.children[index]).run()).id()
    }
}

impl Child for Supervisor {
    fn run(self: Arc<Self>) -> Run {
        Box::pin(async move {
            let reason = self.supervise().await;
            // Failing upward: the parent sees a crashed child.
            Err(Box::new(crate::Trap { message: reason }) as Payload)
        })
    }

    fn close(&self, reason: &str) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        let reason = reason.to_owned();
        Box::pin(async move {
            for child in &self.children {
                child.close(&reason).await;
            }
        })
    }
}

/// Waits `duration` without blocking the thread, to within a scheduling round rather than to
/// the timer's millisecond: Tokio's timer rounds every sleep up to its next 1 ms tick, which
/// would make a 1 ms backoff cost about 2 ms. The whole milliseconds but the last go to the
/// timer; the rest is spent yielding to the other tasks until the deadline.
async fn wait(duration: Duration) {
    let deadline = Instant::now() + duration;
    if let Some(coarse) = duration.checked_sub(Duration::from_millis(1))
        && !coarse.is_zero()
    {
        tokio::time::sleep(coarse).await;
    }
    while Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
}

/// The handles of the program's supervisor trees, once started.
static TREES: OnceLock<Vec<Node>> = OnceLock::new();

/// Starts the program's supervisor trees the first time a child is asked for, and gives the
/// actor at `path` below the tree `tree` (Low's `supervisor.child`): another handle of it.
/// `specs` builds the trees, in declaration order.
///
/// # Panics
/// When `path` does not name an actor whose state is `S` (the verifier rules that out), or
/// outside a Tokio runtime.
pub fn child<S: Send + 'static>(specs: impl FnOnce() -> Vec<Spec>, tree: usize, path: &[u32]) -> Actor<S> {
    let trees = TREES.get_or_init(|| start(specs()));
    lookup(trees, tree, path).unwrap_or_else(|| crate::trap("no child of this state type at this place of the tree"))
}

/// The actor at `path` below the tree `tree` of `trees`, if it is one whose state is `S`.
fn lookup<S: Send + 'static>(trees: &[Node], tree: usize, path: &[u32]) -> Option<Actor<S>> {
    let mut node = trees.get(tree);
    for &step in path {
        node = match node {
            Some(Node::Supervisor(children)) => children.get(step as usize),
            _ => None,
        };
    }
    match node {
        Some(Node::Actor(handle)) => handle.downcast_ref::<Actor<S>>().cloned(),
        _ => None,
    }
}

/// Starts every tree: one task per top supervisor, which closes every mailbox of its tree when
/// it gives up. Gives the trees' handles.
fn start(specs: Vec<Spec>) -> Vec<Node> {
    let mut trees = Vec::with_capacity(specs.len());
    for spec in specs {
        let (nodes, supervisor) = spec.build();
        let supervisor = Arc::new(supervisor);
        tokio::spawn(async move {
            let reason = supervisor.supervise().await;
            supervisor.close(&reason).await;
        });
        trees.push(Node::Supervisor(nodes));
    }
    trees
}

#[cfg(test)]
mod tests;
