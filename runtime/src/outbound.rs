//! Outbound HTTP: a program's call of another HTTP service (`http.get<T>(url)` and its siblings in
//! High, the `http.fetch` rows in Low), written once for every executor.
//!
//! One client per process (reqwest's: a keep-alive connection pool, rustls with the system's root
//! certificates for `https://`), at most `--outbound-connections` calls in flight per host (a
//! semaphore per scheme, host and port; a call waits for a slot without holding a worker), and a
//! deadline per call (`--outbound-timeout-ms`, or the call's own) that covers all of it: waiting
//! for a slot, connecting, sending, and reading the answer, whose body is bounded by
//! `--outbound-body-limit`. A call is an await: thousands can be in flight on one worker.
//!
//! Every way a call can go wrong is an expected failure of the calling function (`failure.rs`),
//! never a trap, so that `try` passes it on and `try?` handles it:
//!
//! | what happened | status | detail |
//! | --- | --- | --- |
//! | no connection (refused, no such host, TLS) | 502 | `GET http://h/p: cannot connect: …` |
//! | no complete answer within the deadline | 504 | `GET http://h/p: no answer within 2s` |
//! | an answer of status 300–599 | 502 | `GET http://h/p answered 503: <its body, at most 200 bytes>` |
//! | an answer that does not decode into `T` | 502 | `GET http://h/p: the answer does not fit T: <the 400/422 detail>` |
//! | an answer over the body limit | 502 | `GET http://h/p: the answer is over N bytes` |
//! | a URL or header line the program built wrong | 500 | what is wrong (never a header's value) |
//!
//! The URL in a detail or log line is cut before its query, which may carry a key.
//!
//! **The database's writer.** A request's writes are one SQLite transaction, begun at its first
//! write (`db.rs`); while it is open, every other request's statements wait. A call made after
//! the first write would hold that writer for as long as the other service takes, so it is a
//! trap instead (the checker rejects the programs it can see do it, H431): call first, write
//! after, or push a job.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use tokio::sync::Semaphore;

use crate::failure::{self, Failure};
use crate::http::binding;
use crate::shaped_json::{self, Kind, Shape};
use crate::traces::{self, Detail, Span};

/// The default deadline of a call, in milliseconds (`--outbound-timeout-ms`).
static TIMEOUT_MS: AtomicU64 = AtomicU64::new(10_000);
/// Most calls in flight to one host (`--outbound-connections`).
static PER_HOST: AtomicUsize = AtomicUsize::new(100);
/// Largest answer body, in bytes (`--outbound-body-limit`).
static BODY_LIMIT: AtomicUsize = AtomicUsize::new(8 << 20);

/// Sets the default deadline (milliseconds), the calls in flight per host and the largest answer
/// body (bytes) from the service's flags, before it serves. The per-host bound applies to hosts
/// first called after this.
pub fn configure(timeout_ms: u64, per_host: usize, body_limit: usize) {
    TIMEOUT_MS.store(timeout_ms.max(1), Ordering::Relaxed);
    PER_HOST.store(per_host.max(1), Ordering::Relaxed);
    BODY_LIMIT.store(body_limit, Ordering::Relaxed);
}

/// The process's client and its per-host slots.
struct Client {
    http: reqwest::Client,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
}

fn client() -> &'static Client {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(PER_HOST.load(Ordering::Relaxed))
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .unwrap_or_else(|e| crate::trap(&format!("cannot start the outbound HTTP client: {e}")));
        Client { http, hosts: Mutex::new(HashMap::new()) }
    })
}

impl Client {
    /// The slots of the host of `url` (scheme, host and port).
    fn slots(&self, url: &reqwest::Url) -> Arc<Semaphore> {
        let key =
            format!("{}://{}:{}", url.scheme(), url.host_str().unwrap_or(""), url.port_or_known_default().unwrap_or(0));
        let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(hosts.entry(key).or_insert_with(|| Arc::new(Semaphore::new(PER_HOST.load(Ordering::Relaxed)))))
    }
}

/// One outbound call, its arguments copied out of the program's values.
#[derive(Clone, Debug)]
pub struct Call {
    method: String,
    url: String,
    body: String,
    headers: Vec<String>,
    /// The call's own deadline, when the program gave one.
    timeout: Option<Duration>,
}

impl Call {
    /// A call of `method` (`GET`, `POST`, `PUT`, `PATCH`, `DELETE`) on `url`, sending `body` (none
    /// when empty; JSON unless a header says otherwise) with the header lines `Name: value`, within
    /// `timeout_us` microseconds (a negative one means the default).
    pub fn new<'a>(
        method: &str,
        url: &str,
        body: &str,
        headers: impl IntoIterator<Item = &'a str>,
        timeout_us: i64,
    ) -> Call {
        Call {
            method: method.to_owned(),
            url: url.to_owned(),
            body: body.to_owned(),
            headers: headers.into_iter().map(str::to_owned).collect(),
            timeout: u64::try_from(timeout_us).ok().map(Duration::from_micros),
        }
    }

    /// `GET http://host/path`: the call as a detail or log line names it, without the query.
    fn shown(&self) -> String {
        shown(&self.method, &self.url)
    }

    fn failure(&self, status: u16, what: impl std::fmt::Display) -> Failure {
        Failure { status, message: format!("{}{what}", self.shown()) }
    }

    /// Sends the call and reads the answer's body: the bytes of a 2xx (or 1xx) answer, or the
    /// failure (see the module's table).
    pub async fn send(self) -> Result<Vec<u8>, Failure> {
        let started = Instant::now();
        let deadline = self.timeout.unwrap_or_else(|| Duration::from_millis(TIMEOUT_MS.load(Ordering::Relaxed)));
        let mut span = Span::child(crate::context::trace(), traces::Kind::Client, || Detail::Outbound {
            method: self.method.clone(),
            url: without_query(&self.url).to_owned(),
            status: None,
        });
        let result = match tokio::time::timeout(deadline, self.exchange(span.as_mut())).await {
            Ok(result) => result,
            Err(_) => Err(self.failure(
                504,
                format!(
                    ": no answer within {}",
                    crate::time::format_duration(i64::try_from(deadline.as_micros()).unwrap_or(i64::MAX))
                ),
            )),
        };
        if let (Some(span), Err(failure)) = (&mut span, &result) {
            span.fail(|| failure.message.clone());
        }
        let elapsed = started.elapsed().as_millis();
        match &result {
            Ok(_) => tracing::debug!(target: "nagi::outbound", "{} answered in {elapsed} ms", self.shown()),
            Err(failure) => tracing::warn!(target: "nagi::outbound", "{} (after {elapsed} ms)", failure.message),
        }
        result
    }

    /// The exchange itself, without the deadline.
    async fn exchange(&self, mut span: Option<&mut Span>) -> Result<Vec<u8>, Failure> {
        let client = client();
        let url = reqwest::Url::parse(&self.url)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
            .ok_or_else(|| self.failure(500, ": not an absolute http:// or https:// URL"))?;
        let method = reqwest::Method::from_bytes(self.method.as_bytes())
            .map_err(|_| self.failure(500, ": not an HTTP method"))?;
        let mut request = client.http.request(method, url.clone());
        let mut typed = false;
        for line in &self.headers {
            let (name, value) = header_line(line).map_err(|why| self.failure(500, format!(": {why}")))?;
            typed |= name == reqwest::header::CONTENT_TYPE;
            request = request.header(name, value);
        }
        if !self.body.is_empty() {
            if !typed {
                request = request.header(reqwest::header::CONTENT_TYPE, "application/json");
            }
            request = request.body(self.body.clone());
        }
        // The receiver's span is a child of this call's (W3C Trace Context).
        if let Some(span) = &span {
            request = request.header(traces::TRACEPARENT, span.context().traceparent());
        }
        let slots = client.slots(&url);
        let _slot = slots.acquire().await.map_err(|_| self.failure(502, ": the client is shutting down"))?;
        let mut answer = request.send().await.map_err(|e| self.transport(&e))?;
        if let Some(span) = &mut span {
            span.set_status(answer.status().as_u16());
        }
        let limit = BODY_LIMIT.load(Ordering::Relaxed);
        let mut body = Vec::new();
        while let Some(chunk) = answer.chunk().await.map_err(|e| self.transport(&e))? {
            if body.len() + chunk.len() > limit {
                return Err(self.failure(502, format!(": the answer is over {limit} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        let status = answer.status();
        if status.is_success() || status.is_informational() {
            return Ok(body);
        }
        let text = String::from_utf8_lossy(&body);
        Err(self.failure(502, format!(" answered {}: {}", status.as_u16(), binding::echo(text.trim()))))
    }

    /// The failure of a transport error: 504 for a timeout of the library's own, else 502.
    fn transport(&self, error: &reqwest::Error) -> Failure {
        if error.is_timeout() {
            return self.failure(504, ": no answer in time");
        }
        // The innermost cause says what went wrong (`Connection refused (os error 111)`); the
        // outer ones repeat the URL, query included.
        let mut cause: &dyn std::error::Error = error;
        while let Some(next) = cause.source() {
            cause = next;
        }
        let what = if error.is_connect() { "cannot connect" } else { "the exchange failed" };
        self.failure(502, format!(": {what}: {cause}"))
    }

    /// The failure of an answer that does not decode into the class `class`.
    fn undecodable(&self, class: &str, error: &crate::HttpError) -> Failure {
        self.failure(502, format!(": the answer does not fit {class}: {}", error.detail))
    }
}

/// A header line `Name: value` as a name and a value; the error never repeats the value (it may
/// be a key).
fn header_line(line: &str) -> Result<(reqwest::header::HeaderName, reqwest::header::HeaderValue), String> {
    let Some((name, value)) = line.split_once(':') else {
        return Err("a header is written `Name: value`, and a line has no `:`".to_owned());
    };
    let name = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("`{}` is not a header name", name.trim()))?;
    let value = reqwest::header::HeaderValue::from_str(value.trim())
        .map_err(|_| format!("the value of header `{name}` is not visible ASCII text"))?;
    Ok((name, value))
}

/// The trap's message when the running request holds the database's writer (see the module's
/// doc), for a call of `method` on `url`; `None` when the call may go.
pub fn writer_held(method: &str, url: &str) -> Option<String> {
    crate::db::holds_writer().then(|| {
        format!(
            "{}: an outbound call after the request's first write would hold the database's writer \
             while it waits; make the call before writing, or push a job",
            shown(method, url)
        )
    })
}

/// `GET http://host/path`: a call as details and log lines name it, the URL cut before its query
/// (which may carry a key) and fragment.
fn shown(method: &str, url: &str) -> String {
    format!("{method} {}", without_query(url))
}

/// `url` cut before its query and fragment.
fn without_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or("")
}

/// Traps when the running request holds the database's writer.
fn check_writer(call: &Call) {
    if let Some(message) = writer_held(&call.method, &call.url) {
        crate::trap(&message);
    }
}

/// Records `result`'s failure for the calling function's `try`, giving `None`, or gives its value.
fn recorded<T>(result: Result<T, Failure>) -> Option<T> {
    result.map_err(|failure| failure::fail(i64::from(failure.status), &failure.message)).ok()
}

/// `http.fetch` on the Rust path: the answer's body as text (bytes that are not UTF-8 replaced),
/// or `None` after recording the failure.
pub async fn fetch_text(call: Call) -> Option<String> {
    check_writer(&call);
    let result = call.send().await;
    recorded(result.map(|body| String::from_utf8_lossy(&body).into_owned()))
}

/// `http.fetch_json<C>` on the Rust path: the answer decoded into `T` under the request bodies'
/// rules, or `None` after recording the failure.
pub async fn fetch_json<T: DeserializeOwned>(call: Call) -> Option<T> {
    check_writer(&call);
    let shown = call.clone();
    let result = call.send().await.and_then(|body| {
        binding::decode_typed::<T>(&body).map_err(|e| shown.undecodable(&binding::class_name::<T>(), &e))
    });
    recorded(result)
}

/// A call started for the LLVM path, which decodes its answer with a layout [`Shape`] when it
/// is ready ([`finish`]); the caller has asked [`writer_held`] first.
pub fn start(call: Call) -> impl std::future::Future<Output = (Call, Result<Vec<u8>, Failure>)> + Send + 'static {
    async move {
        let result = call.clone().send().await;
        (call, result)
    }
}

/// The answer of a call as a value of the type `shape` describes (`String`: the body as text;
/// a class: decoded under the request bodies' rules), or `None` after recording the failure.
/// Runs where the calling code goes on, so that the failure is recorded for its `try`.
pub fn finish<S: Shape>(call: &Call, result: Result<Vec<u8>, Failure>, shape: S) -> Option<shaped_json::Value> {
    let value = result.and_then(|body| match shape.kind() {
        Kind::String => Ok(shaped_json::Value::Str(String::from_utf8_lossy(&body).into_owned())),
        _ => binding::decode_shaped(&body, shape).map_err(|e| call.undecodable(shape.class_name(), &e)),
    });
    recorded(value)
}

/// Runs a call to its end on the calling thread (the interpreter, which has no runtime of its
/// own): on one current-thread runtime kept for the process, so that the client's pool lives on.
pub fn run_blocking(call: Call) -> Result<Vec<u8>, Failure> {
    static RUNTIME: OnceLock<Mutex<tokio::runtime::Runtime>> = OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| crate::trap(&format!("cannot start the outbound HTTP client: {e}")));
        Mutex::new(runtime)
    });
    let runtime = runtime.lock().unwrap_or_else(PoisonError::into_inner);
    runtime.block_on(call.send())
}

#[cfg(test)]
mod tests {
    use super::{Call, header_line};

    fn run(call: Call) -> Result<Vec<u8>, crate::failure::Failure> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(call.send())
    }

    #[test]
    fn a_url_or_header_line_built_wrong_is_a_500_that_never_shows_a_value() {
        let failure = run(Call::new("GET", "ftp://example.com/?key=k-123", "", [], -1)).unwrap_err();
        assert_eq!(
            (failure.status, failure.message.as_str()),
            (500, "GET ftp://example.com/: not an absolute http:// or https:// URL")
        );
        let failure = run(Call::new("GET", "http://127.0.0.1:1/", "", ["Authorization Bearer k-123"], -1)).unwrap_err();
        assert_eq!(failure.status, 500);
        assert!(failure.message.contains("has no `:`") && !failure.message.contains("k-123"), "{}", failure.message);
        let error = header_line("X-Key: k-1\u{1}23").unwrap_err();
        assert!(!error.contains("k-1"), "{error}");
        assert_eq!(header_line(" Accept :  application/json ").map(|(n, v)| (n.to_string(), v)).unwrap().0, "accept");
    }

    /// An `https://` URL goes through rustls: a peer that does not speak TLS is a failed
    /// connection (502), named without the URL's query.
    #[test]
    fn a_peer_that_does_not_speak_tls_is_a_502() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let peer = std::thread::spawn(move || {
            use std::io::Write;
            let (mut stream, _) = listener.accept().unwrap();
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
        });
        let url = format!("https://127.0.0.1:{port}/x?token=k-123");
        let failure = run(Call::new("GET", &url, "", [], 2_000_000)).unwrap_err();
        peer.join().unwrap();
        assert_eq!(failure.status, 502, "{}", failure.message);
        assert!(failure.message.starts_with(&format!("GET https://127.0.0.1:{port}/x: ")), "{}", failure.message);
        assert!(!failure.message.contains("k-123"), "{}", failure.message);
    }
}
