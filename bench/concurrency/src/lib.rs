//! The concurrency bench's experiments, on the runtime that compiled programs link (its actors,
//! supervisors and scopes, `nagi_runtime::{actors, supervisors, tasks}`), as the Nagi 0.1
//! prototype measured them (bench/README.md, "The concurrency bench"):
//!
//! - [`pipelining`]: messages through one actor's mailbox, each call awaited before the next
//!   (serial) against a window of calls in flight (pipelined);
//! - [`restart_latency`]: from a handler's trap to the first poll of the restarted actor's
//!   state function, under a supervisor with a fixed backoff;
//! - [`parked_tasks`]: tasks of one scope parked at once, each proven polled before any may
//!   finish, with the resident memory they take;
//! - [`live_actors`]: actors alive at once, with the resident memory each takes.
//!
//! Each experiment checks its own result (the counts it must reach) and returns a
//! [`serde_json::Value`] record; `main.rs` prints them as JSON lines.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use nagi_runtime::actors::Actor;
use nagi_runtime::supervisors::{self, ChildSpec, Spec, Strategy};
use nagi_runtime::tasks::Scope;
use serde_json::json;

/// A multi-thread Tokio runtime with `workers` worker threads, as a service runs.
pub fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().expect("a Tokio runtime")
}

/// The process's resident memory, in bytes (`/proc/self/statm`).
pub fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4096
}

/// The median of `values` (sorted in place); 0 for none.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Where the calling task of [`pipelining`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// A task spawned on a worker of the runtime, as a request's handler runs in a service: the
    /// actor it wakes goes to the same worker's next slot, and its answer wakes the caller there.
    Worker,
    /// The thread that called `block_on`, outside the runtime's workers: every call and every
    /// answer wakes a thread (how this bench measured before issue 39).
    Outside,
}

impl Caller {
    /// The record's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Caller::Worker => "worker",
            Caller::Outside => "outside",
        }
    }
}

/// `messages` calls through one actor with a mailbox of `capacity` on `workers` workers, three
/// ways, interleaved `rounds` times: serial (one caller, each call awaited before the next), a
/// window (one caller keeping `in_flight` calls outstanding, issuing the next as each answer
/// arrives), and callers (`in_flight` tasks, each calling serially: as many calls in flight).
/// The caller of the first two runs where `caller` says. Panics when the actor did not count
/// every message.
pub fn pipelining(
    messages: usize,
    capacity: usize,
    workers: usize,
    in_flight: usize,
    rounds: usize,
    caller: Caller,
) -> serde_json::Value {
    let rt = runtime(workers);
    let (mut serial, mut window, mut callers) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let round = async move {
            let actor = Actor::start("Counter", capacity, || 0_u64);
            let s = timed(serial_calls(&actor, messages)).await;
            let w = timed(window_calls(&actor, messages, in_flight)).await;
            let c = timed(concurrent_callers(&actor, messages, in_flight)).await;
            let total = actor.call(|n| *n).await.expect("the counter answers");
            assert_eq!(total, 3 * messages as u64, "the counter saw every message");
            (s, w, c)
        };
        let (s, w, c) = match caller {
            Caller::Worker => rt.block_on(async { tokio::spawn(round).await.expect("the round finishes") }),
            Caller::Outside => rt.block_on(round),
        };
        serial.push(s);
        window.push(w);
        callers.push(c);
    }
    let ratio = |fast: &[f64]| -> (f64, Vec<f64>) {
        let ratios: Vec<f64> = serial.iter().zip(fast).map(|(s, f)| s / f).collect();
        (median(&mut ratios.clone()), ratios)
    };
    let ((window_ratio, window_ratios), (callers_ratio, callers_ratios)) = (ratio(&window), ratio(&callers));
    let (s, w, c) = (median(&mut serial), median(&mut window), median(&mut callers));
    json!({
        "experiment": "pipelining", "caller": caller.name(), "messages": messages, "capacity": capacity,
        "workers": workers, "in_flight": in_flight, "rounds": rounds, "serial_s": s, "window_s": w, "callers_s": c,
        "serial_msgs_per_s": messages as f64 / s, "window_msgs_per_s": messages as f64 / w,
        "callers_msgs_per_s": messages as f64 / c,
        "window_ratio_median": window_ratio, "window_ratios": window_ratios,
        "callers_ratio_median": callers_ratio, "callers_ratios": callers_ratios,
    })
}

/// How long `work` takes, in seconds.
async fn timed(work: impl std::future::Future<Output = ()>) -> f64 {
    let start = Instant::now();
    work.await;
    start.elapsed().as_secs_f64()
}

async fn serial_calls(actor: &Actor<u64>, messages: usize) {
    for _ in 0..messages {
        actor.call(|n| *n += 1).await.expect("the counter answers");
    }
}

async fn window_calls(actor: &Actor<u64>, messages: usize, in_flight: usize) {
    let mut window = FuturesUnordered::new();
    for _ in 0..messages {
        if window.len() == in_flight {
            window.next().await.flatten().expect("the counter answers");
        }
        window.push(actor.call(|n| *n += 1));
    }
    while let Some(answer) = window.next().await {
        answer.expect("the counter answers");
    }
}

async fn concurrent_callers(actor: &Actor<u64>, messages: usize, callers: usize) {
    let mut running = FuturesUnordered::new();
    for caller in 0..callers {
        let actor = actor.clone();
        let share = messages / callers + usize::from(caller < messages % callers);
        running.push(tokio::spawn(async move { serial_calls(&actor, share).await }));
    }
    while let Some(done) = running.next().await {
        done.expect("a caller finishes");
    }
}

/// What the restart experiment's actor records: when its handler trapped and when its state
/// function ran.
#[derive(Default)]
struct Moments {
    crashed: Option<Instant>,
    started: Vec<Instant>,
}

/// `samples` crashes of a supervised actor with a `backoff` between crash and restart: the time
/// from the trap to the restarted actor's state function, in milliseconds (median, p10, p90).
/// Uses the process's one supervisor tree, so it runs once per process.
pub fn restart_latency(samples: usize, backoff: Duration, workers: usize) -> serde_json::Value {
    let rt = runtime(workers);
    let moments = Arc::new(Mutex::new(Moments::default()));
    let mut latencies = rt.block_on(async {
        let seen = Arc::clone(&moments);
        let spec = Spec {
            name: "Bench",
            strategy: Strategy::OneForOne,
            intensity: u32::MAX,
            period: Duration::from_secs(1),
            backoff_min: backoff,
            backoff_max: backoff,
            children: vec![ChildSpec::actor("Crasher", 64, move || {
                seen.lock().expect("moments").started.push(Instant::now());
                Arc::clone(&seen)
            })],
        };
        let actor: Actor<Arc<Mutex<Moments>>> = supervisors::child(|| vec![spec], 0, &[0]);
        let mut latencies = Vec::with_capacity(samples);
        for _ in 0..samples {
            let crashed = actor
                .call(|moments| {
                    moments.lock().expect("moments").crashed = Some(Instant::now());
                    nagi_runtime::trap("a crash on purpose")
                })
                .await;
            assert!(crashed.is_none(), "the crashing call fails");
            nagi_runtime::failure::take();
            // Answered by the restarted actor, whose state function ran first.
            let (crashed, started) = actor
                .call(|moments| {
                    let m = moments.lock().expect("moments");
                    (m.crashed, m.started.last().copied())
                })
                .await
                .expect("the restarted actor answers");
            let (crashed, started) = (crashed.expect("a crash"), started.expect("a start"));
            latencies.push(started.duration_since(crashed).as_secs_f64() * 1e3);
        }
        latencies
    });
    assert_eq!(moments.lock().expect("moments").started.len(), samples + 1, "one start, then one per crash");
    let p = |q: f64, v: &[f64]| v[((v.len() - 1) as f64 * q).round() as usize];
    let m = median(&mut latencies);
    json!({
        "experiment": "restart_latency", "samples": samples, "backoff_ms": backoff.as_secs_f64() * 1e3,
        "median_ms": m, "p10_ms": p(0.1, &latencies), "p90_ms": p(0.9, &latencies),
        "max_ms": latencies.last().copied().unwrap_or(0.0),
    })
}

/// `count` tasks of one scope parked at once: each counts itself when first polled and then
/// waits on a barrier that opens only when all have arrived, so none finishes before every one
/// has been polled. Time from the first spawn until all are parked, and resident bytes per
/// parked task beyond the baseline: the process with its runtime started and each worker warm
/// (each has run tasks, so its allocator arena exists), measured before the spawns.
pub fn parked_tasks(count: usize, workers: usize) -> serde_json::Value {
    let rt = runtime(workers);
    rt.block_on(async {
        warm_up(workers).await;
        let before = resident_bytes();
        let polled = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(tokio::sync::Barrier::new(count + 1));
        let scope = Scope::new();
        let start = Instant::now();
        for _ in 0..count {
            let (polled, barrier) = (Arc::clone(&polled), Arc::clone(&barrier));
            drop(scope.spawn(async move {
                polled.fetch_add(1, Ordering::SeqCst);
                barrier.wait().await;
            }));
        }
        while polled.load(Ordering::SeqCst) < count {
            tokio::task::yield_now().await;
        }
        let parked = start.elapsed();
        let during = resident_bytes();
        barrier.wait().await;
        scope.end().await;
        let per_task = during.saturating_sub(before) as f64 / count as f64;
        json!({
            "experiment": "parked_tasks", "tasks": count, "workers": workers,
            "park_s": parked.as_secs_f64(), "rss_before_bytes": before, "rss_parked_bytes": during,
            "bytes_per_task": per_task,
        })
    })
}

/// Runs a few short tasks on every worker, each allocating, so that the workers' first
/// allocations (their allocator arenas) belong to the baseline rather than to what is measured.
async fn warm_up(workers: usize) {
    let tasks: Vec<_> = (0..workers * 16).map(|i| tokio::spawn(async move { vec![i; 64].len() })).collect();
    for task in tasks {
        task.await.expect("a warm-up task");
    }
}

/// `count` actors alive at once, each having answered one call (so its task and mailbox
/// exist): resident bytes per actor beyond the process before they started.
pub fn live_actors(count: usize, capacity: usize, workers: usize) -> serde_json::Value {
    let rt = runtime(workers);
    rt.block_on(async {
        warm_up(workers).await;
        let before = resident_bytes();
        let start = Instant::now();
        let actors: Vec<Actor<u64>> = (0..count).map(|i| Actor::start("Cell", capacity, move || i as u64)).collect();
        let mut sum = 0;
        for actor in &actors {
            sum += actor.call(|n| *n).await.expect("the actor answers");
        }
        assert_eq!(sum, (0..count as u64).sum::<u64>(), "every actor answered with its own state");
        let elapsed = start.elapsed();
        let during = resident_bytes();
        drop(actors);
        json!({
            "experiment": "live_actors", "actors": count, "capacity": capacity, "workers": workers,
            "start_and_call_s": elapsed.as_secs_f64(), "rss_before_bytes": before, "rss_live_bytes": during,
            "bytes_per_actor": during.saturating_sub(before) as f64 / count as f64,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_experiment_checks_its_counts_at_a_small_size() {
        for caller in [Caller::Worker, Caller::Outside] {
            let record = pipelining(200, 8, 2, 4, 1, caller);
            assert_eq!(record["messages"], 200);
            assert_eq!(record["caller"], caller.name());
            assert!(record["serial_s"].as_f64().unwrap() > 0.0);
        }
        let record = parked_tasks(100, 2);
        assert_eq!(record["tasks"], 100);
        let record = live_actors(50, 8, 2);
        assert_eq!(record["actors"], 50);
    }

    #[test]
    fn the_restart_latency_is_at_least_the_backoff() {
        std::panic::set_hook(Box::new(|_| {}));
        let record = restart_latency(5, Duration::from_millis(2), 2);
        assert!(record["median_ms"].as_f64().unwrap() >= 2.0, "{record}");
    }
}
