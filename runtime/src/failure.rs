//! Expected failures: what `fail(status, message)` in High records for the request's answer.
//!
//! A failing function returns `none` in Low (its result type is an option) after recording
//! the failure here, and every caller passes that `none` on with `try` up to the route
//! handler, whose `none` the reply turns into the recorded answer ([`crate::http::reply_option`]).
//! Between `fail` and the reply, code only drops values and returns: `fail` and `try` are not
//! allowed inside `db.transaction` (whose end awaits), so the whole path runs within one poll
//! of the handler's future, on one thread, and a thread-local slot is enough. Where leaving a
//! function runs code (a `scope`'s end awaits; a deferred call), the emitted code takes the
//! failure ([`status`], [`take_message`]) before and records it again after. The slot is
//! cleared before every handler runs, so nothing a request left behind reaches another.

use std::cell::RefCell;

/// A recorded failure: the HTTP status (400–599) and the message, the answer's `detail`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The answer's status, 400–599.
    pub status: u16,
    /// The answer's `detail`.
    pub message: String,
}

thread_local! {
    static PENDING: RefCell<Option<Failure>> = const { RefCell::new(None) };
}

/// Records the failure `fail(status, message)`. A status outside 400–599 (which the compiler
/// rejects when it is a literal) is answered 500, with the status named in the message.
pub fn fail(status: i64, message: &str) {
    let failure = match u16::try_from(status) {
        Ok(status @ 400..=599) => Failure { status, message: message.to_owned() },
        _ => Failure { status: 500, message: format!("fail with status {status}, which is not 400-599: {message}") },
    };
    PENDING.with(|slot| *slot.borrow_mut() = Some(failure));
}

/// Forgets the recorded failure, if any: a failing call whose failure the caller handled
/// (`try?`), so that it answers no later request or reply.
pub fn clear() {
    take();
}

/// The status of the recorded failure, which `catch` reads before it takes the message; 500
/// when none is recorded (a failing call always records one, but hand-written Low may not).
pub fn status() -> u16 {
    PENDING.with(|slot| slot.borrow().as_ref().map_or(500, |f| f.status))
}

/// The message of the recorded failure, which is cleared: the second half of `catch`.
pub fn take_message() -> String {
    take().map_or_else(|| UNRECORDED.to_string(), |f| f.message)
}

/// The message of a failure `catch` finds no record of.
const UNRECORDED: &str = "the call failed without recording a failure";

/// The recorded failure, if any, which is cleared.
pub fn take() -> Option<Failure> {
    PENDING.with(|slot| slot.borrow_mut().take())
}

#[cfg(test)]
mod tests {
    use super::{Failure, fail, take};

    #[test]
    fn a_failure_is_taken_once_and_a_bad_status_becomes_500() {
        assert_eq!(take(), None);
        fail(409, "name taken");
        assert_eq!(take(), Some(Failure { status: 409, message: "name taken".into() }));
        assert_eq!(take(), None);
        fail(200, "ok?");
        assert_eq!(take().map(|f| f.status), Some(500));
        fail(-1, "x");
        assert_eq!(
            take().map(|f| (f.status, f.message)),
            Some((500, "fail with status -1, which is not 400-599: x".into()))
        );
    }
}
