//! The supervisor rules on real actors: restarts from a fresh state on the same mailbox, the
//! intensity after which a supervisor gives up (and the calls that then fail), one_for_all, a
//! nested supervisor failing upward, and the backoff's growth.

use std::time::Duration;

use super::*;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime")
}

fn spec(strategy: Strategy, intensity: u32, children: Vec<ChildSpec>) -> Spec {
    Spec {
        name: "Workers",
        strategy,
        intensity,
        period: Duration::from_secs(10),
        backoff_min: Duration::from_millis(1),
        backoff_max: Duration::from_millis(4),
        children,
    }
}

/// A counter whose handler traps on a negative amount.
fn counter() -> ChildSpec {
    ChildSpec::actor("Counter", 8, || 0_i64)
}

async fn add(actor: &Actor<i64>, n: i64) -> Option<i64> {
    actor
        .call(move |total| {
            if n < 0 {
                crate::trap("a negative amount");
            }
            *total += n;
            *total
        })
        .await
}

#[test]
fn a_crashed_child_restarts_from_a_fresh_state_and_its_handle_still_works() {
    let answers = runtime().block_on(async {
        let trees = start(vec![spec(Strategy::OneForOne, 3, vec![counter(), counter()])]);
        let (a, b) = (lookup::<i64>(&trees, 0, &[0]).unwrap(), lookup::<i64>(&trees, 0, &[1]).unwrap());
        vec![add(&a, 5).await, add(&b, 7).await, add(&a, -1).await, add(&a, 2).await, add(&b, 1).await]
    });
    // The crash fails its own call only; `a` starts again from 0, `b` keeps its state.
    assert_eq!(answers, vec![Some(5), Some(7), None, Some(2), Some(8)]);
}

#[test]
fn after_intensity_restarts_the_supervisor_gives_up_and_every_call_fails() {
    let (answers, failure) = runtime().block_on(async {
        let trees = start(vec![spec(Strategy::OneForOne, 3, vec![counter()])]);
        let a = lookup::<i64>(&trees, 0, &[0]).unwrap();
        let mut answers = Vec::new();
        for _ in 0..4 {
            answers.push(add(&a, 1).await);
            answers.push(add(&a, -1).await);
        }
        crate::failure::take();
        answers.push(add(&a, 1).await);
        (answers, crate::failure::take())
    });
    // Three restarts are allowed; the fourth crash makes the supervisor give up.
    assert_eq!(answers, vec![Some(1), None, Some(1), None, Some(1), None, Some(1), None, None]);
    let failure = failure.expect("the last call records its failure");
    assert_eq!(failure.status, 503);
    assert!(
        failure.message.starts_with("actor Counter has stopped: supervisor Workers gave up after 3 restarts"),
        "{}",
        failure.message
    );
}

#[test]
fn one_for_all_restarts_the_siblings_too() {
    let answers = runtime().block_on(async {
        let trees = start(vec![spec(Strategy::OneForAll, 3, vec![counter(), counter()])]);
        let (a, b) = (lookup::<i64>(&trees, 0, &[0]).unwrap(), lookup::<i64>(&trees, 0, &[1]).unwrap());
        let before = vec![add(&b, 7).await, add(&a, -1).await];
        // The crashed call is answered before the supervisor sees the crash; the supervisor
        // stops the sibling as soon as it runs, before its backoff.
        tokio::time::sleep(Duration::from_millis(10)).await;
        [before, vec![add(&b, 1).await]].concat()
    });
    assert_eq!(answers, vec![Some(7), None, Some(1)]);
}

#[test]
fn a_nested_supervisor_that_gives_up_is_restarted_by_its_parent() {
    let answers = runtime().block_on(async {
        let inner = spec(Strategy::OneForOne, 0, vec![counter()]);
        let trees = start(vec![spec(Strategy::OneForOne, 3, vec![ChildSpec::supervisor(inner), counter()])]);
        let a = lookup::<i64>(&trees, 0, &[0, 0]).unwrap();
        let b = lookup::<i64>(&trees, 0, &[1]).unwrap();
        vec![add(&a, 5).await, add(&b, 3).await, add(&a, -1).await, add(&a, 2).await, add(&b, 1).await]
    });
    // The inner supervisor allows no restart, so it gives up and fails upward; the outer one
    // restarts it, and with it its child from a fresh state; the outer's other child is kept.
    assert_eq!(answers, vec![Some(5), Some(3), None, Some(2), Some(4)]);
}

#[test]
fn the_backoff_doubles_from_its_minimum_up_to_its_maximum() {
    let (_, supervisor) = spec(Strategy::OneForOne, 3, Vec::new()).build();
    let waits: Vec<u128> = (1..=5).map(|n| supervisor.backoff(n).as_millis()).collect();
    assert_eq!(waits, vec![1, 2, 4, 4, 4]);
}

#[test]
fn a_path_that_names_no_actor_of_the_state_type_gives_none() {
    runtime().block_on(async {
        let trees = start(vec![spec(Strategy::OneForOne, 3, vec![counter()])]);
        assert!(lookup::<i64>(&trees, 0, &[1]).is_none());
        assert!(lookup::<String>(&trees, 0, &[0]).is_none());
        assert!(lookup::<i64>(&trees, 1, &[0]).is_none());
    });
}
