//! Outbound HTTP for emitted code (Low's `http.fetch` and `http.fetch_json<C>`): a thin adapter
//! over [`crate::outbound`], which holds every rule. A call is a pending operation whose finish
//! decodes the answer through the layout descriptor of the call's `Option<T>` and records a
//! failure there, in the poll where the emitted function goes on to test it.

use super::json::{TypeDesc, write};
use super::pending::{WriteOut, pending};
use super::strings::{read, read_all};
use super::{RawArray, RawString};
use crate::failure::Failure;
use crate::outbound::{self, Call};
use crate::shaped_json::{Kind, Value};

/// `http.fetch` and `http.fetch_json<C>`: starts the call of `method` on `url` with `body` (none
/// when empty), the header lines of the string array `headers` and a timeout of `timeout_us`
/// microseconds (negative: the default); the finish writes the `Option<T>` that `desc` describes
/// (`T` a `String` for `http.fetch`, the class for `http.fetch_json`). Everything is copied
/// before this returns.
///
/// # Safety
/// `method`, `url` and `body` point to strings of emitted code, `headers` to an array of them;
/// `desc` is one of the emitter's descriptor constants, of an option.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_http_fetch(
    method: *const RawString,
    url: *const RawString,
    body: *const RawString,
    headers: *const RawArray,
    timeout_us: i64,
    desc: *const TypeDesc,
) -> *mut super::pending::PendingOp {
    // SAFETY: the emitter passes one of its descriptor constants, which live for the process.
    let desc: &'static TypeDesc = unsafe { &*desc };
    if desc.kind() != Kind::Option {
        super::guard::fail(format!("an outbound call writes an option, not {:?}", desc.kind()));
    }
    // Checked before anything is owned here: `fail` may jump over this frame.
    // SAFETY: forwarded from the caller.
    if let Some(message) = unsafe { outbound::writer_held(read(method), read(url)) } {
        super::guard::fail(message);
    }
    // SAFETY: forwarded from the caller.
    let lines = unsafe { read_all(headers) };
    // SAFETY: forwarded from the caller.
    let call = unsafe { Call::new(read(method), read(url), read(body), lines, timeout_us) };
    let started = outbound::start(call);
    pending(async move {
        let (call, result) = started.await;
        Answer { call, result, desc }
    })
}

/// A finished call and the descriptor of the option its finish writes.
struct Answer {
    call: Call,
    result: Result<Vec<u8>, Failure>,
    desc: &'static TypeDesc,
}

impl WriteOut for Answer {
    unsafe fn write_to(self, out: *mut u8) {
        let Answer { call, result, desc } = self;
        let value = outbound::finish(&call, result, desc.inner());
        // SAFETY: `out` is writable for the option `desc` describes.
        unsafe { write(Value::Option(value.map(Box::new)), desc, out) }
    }
}
