//! The process-wide panic hook: how a trap, an HTTP error or any other panic is reported, by
//! where it happened (inside a request, an actor's message, a program or a service).
//!
//! It sits above [`crate::trap`] (which only defines the payloads) because reporting needs to
//! know the running request ([`crate::context`]), the running actor message
//! ([`crate::actors`]) and the program's stdout ([`crate::rt`]).

use std::panic::{self, PanicHookInfo};
use std::sync::Once;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::trap::{HttpError, Trap, payload_text};

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
