//! Traps (Nagi's runtime errors), HTTP error payloads, and the process-wide panic hook that reports
//! both.
//!
//! Both kinds of error travel as panics, so that a handler written as straight-line code needs no
//! `Result` plumbing: the per-request wrapper in [`crate::http`] catches them and answers with JSON,
//! and [`crate::program::run_main`] turns them into an exit status.

use std::any::Any;
use std::fmt;
use std::panic::{self, PanicHookInfo};
use std::sync::Once;
use std::sync::atomic::{AtomicU8, Ordering};

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

/// How panics outside an HTTP request are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum HookMode {
    /// A library user (for example a test binary): non-Nagi panics go to the previous hook.
    Library = 0,
    /// A Nagi program under [`crate::program::run_main`] or
    /// [`crate::program::run_main_with_database`]: every panic prints one `error:` line.
    Program = 1,
    /// A Nagi service under [`crate::http::serve`]: every panic is logged through `tracing`.
    Serve = 2,
}

static MODE: AtomicU8 = AtomicU8::new(HookMode::Library as u8);
static INSTALL: Once = Once::new();

/// Installs the runtime's panic hook once per process and selects how it reports panics that
/// happen outside an HTTP request. A later call may raise the mode (Library → Program or Serve).
pub(crate) fn install_hook(mode: HookMode) {
    if mode != HookMode::Library {
        MODE.store(mode as u8, Ordering::Relaxed);
    }
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| report(info, &*previous)));
    });
}

/// The panic hook's body. Inside a request, traps and panics are logged through `tracing` (the
/// request then answers 500); HTTP errors are logged at debug level only.
fn report(info: &PanicHookInfo<'_>, previous: &(dyn Fn(&PanicHookInfo<'_>) + Send + Sync)) {
    let payload = info.payload();
    let text = payload_text(payload);
    let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
    let in_request = crate::context::in_request();
    let mode = MODE.load(Ordering::Relaxed);
    if in_request && payload.is::<HttpError>() {
        tracing::debug!(target: "nagi::http", request = crate::context::request_id(), "error answer: {text}");
    } else if in_request || mode == HookMode::Serve as u8 {
        // An actor's message runs on the actor's task, outside any request: it names the actor
        // and the request that sent the message. Request 0 names no request, so the field is
        // left out (a `None` field is not written); a message no request sent says so.
        let (actor, request) = match crate::actors::running_message() {
            Some((actor, request)) => (Some(actor), request),
            None => (None, crate::context::request_id()),
        };
        let unsent = if actor.is_some() && request == 0 { " (in a message no request sent)" } else { "" };
        let request = (request != 0).then_some(request);
        if payload.is::<Trap>() {
            tracing::error!(target: "nagi::trap", request, actor, "trap: {text}{unsent}");
        } else {
            tracing::error!(target: "nagi::panic", request, actor, "internal error at {location}: {text}{unsent}");
        }
    } else if mode == HookMode::Program as u8 {
        // Flushing first keeps the program's printed output before the error line when both go
        // to one terminal.
        crate::rt::flush_stdout();
        // A failed statement of a program with a database (a test) is the program's own error,
        // worded as the answer a request would get (`409 conflict: UNIQUE constraint failed: …`).
        if payload.is::<Trap>() || payload.is::<HttpError>() {
            eprintln!("error: {text}");
        } else {
            eprintln!("error: internal error: {text}");
        }
    } else if payload.is::<Trap>() {
        eprintln!("error: {text}");
    } else {
        previous(info);
    }
}
