//! Traps (Nagi's runtime errors) and HTTP error payloads: the two panics the runtime raises on
//! purpose, and how either reads as text. The hook that reports them is [`crate::panic_hook`].
//!
//! Both kinds of error travel as panics, so that a handler written as straight-line code needs no
//! `Result` plumbing: the per-request wrapper in [`crate::http`] catches them and answers with JSON,
//! and [`crate::program::run_main`] turns them into an exit status.

use std::any::Any;
use std::fmt;
use std::panic;

/// The panic payload of a Nagi trap: a runtime error such as division by zero, an index out of
/// range, `unwrap` of `none`, or an explicit `trap("...")` in Nagi code.
///
/// Traps are raised with [`std::panic::panic_any`], so they unwind like any Rust panic (generated
/// code must be built with `panic = "unwind"`, the default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trap {
    /// The message, without the `error: ` prefix that the reporter adds.
    pub message: String,
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Raises a trap with `message`: panics with a [`Trap`] payload and never returns.
///
/// In a program run by [`crate::program::run_main`] the trap prints `error: <message>` to stderr
/// and exits with status 101; inside an HTTP handler it becomes a 500 answer
/// `{"error":"trap","detail":"<message>"}`.
#[cold]
pub fn trap(message: &str) -> ! {
    panic::panic_any(Trap { message: message.to_owned() })
}

/// An HTTP error answer raised from inside a handler, as a panic payload.
///
/// The runtime raises it for a bad path or query parameter, a body that breaks the binding rules,
/// and a failed database statement; generated code may raise it too (see [`HttpError::raise`]).
/// The per-request wrapper answers with `status` and the JSON body `{"error": error, "detail":
/// detail}`. The panic hook stays quiet for it (it logs at debug level only), because it is an
/// expected answer and not a fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// The HTTP status code, e.g. 400, 409, 422.
    pub status: u16,
    /// A short, stable error kind such as `"unprocessable entity"`.
    pub error: String,
    /// A human-readable explanation that names the offending parameter, field or column.
    pub detail: String,
}

impl HttpError {
    /// Builds an error answer from its parts.
    pub fn new(status: u16, error: impl Into<String>, detail: impl Into<String>) -> HttpError {
        HttpError { status, error: error.into(), detail: detail.into() }
    }

    /// Unwinds out of the current handler with this error as the answer.
    pub fn raise(self) -> ! {
        panic::panic_any(self)
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.error, self.detail)
    }
}

/// Renders any panic payload as text: the message of a [`Trap`], the detail of an [`HttpError`],
/// or the string given to `panic!`.
pub(crate) fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(trap) = payload.downcast_ref::<Trap>() {
        trap.message.clone()
    } else if let Some(error) = payload.downcast_ref::<HttpError>() {
        error.to_string()
    } else if let Some(text) = payload.downcast_ref::<&'static str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}
