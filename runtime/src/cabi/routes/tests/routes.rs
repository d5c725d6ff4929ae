//! LLVM routes end to end: a service whose handlers are frames written by hand as the LLVM
//! emitter writes them (start, poll, drop, finish, and the database through pending operations),
//! polled through a `guarded_poll` as emitted, served next to the same service written as the
//! Rust emitter writes it. Every request must get the same status, content type and body bytes
//! from both, including binding errors, a trap, database errors and `none`.

use std::mem::offset_of;
use std::ptr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::cabi::db::{nagi_rt_db_begin, nagi_rt_db_exec, nagi_rt_db_query, nagi_rt_sql_arg_int, nagi_rt_sql_arg_text};
use crate::cabi::frame::{FrameFn, PollFn};
use crate::cabi::json::TypeDesc;
use crate::cabi::pending::{PendingOp, nagi_rt_op_drop, nagi_rt_op_finish, nagi_rt_op_poll};
use crate::cabi::routes::{ParamDesc, RouteDesc, SOURCE_BODY, SOURCE_PATH, SOURCE_QUERY, SOURCE_QUERY_OPT, StartFn};
use crate::cabi::service::{ServiceDesc, TableDesc};
use crate::cabi::testing as t;
use crate::cabi::{RawArray, RawString, nagi_rt_free, nagi_rt_trap};
use crate::config::Config;
use crate::db::{self, FromRow, Row, RowError};
use crate::http::{self, Handler, HandlerFuture, Request, Route};
use crate::service::{self, ServeError, Service, Table};

const CREATE: &str =
    "CREATE TABLE IF NOT EXISTS people (id INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL, age INTEGER NOT NULL)";
const INSERT: &str = "INSERT INTO people (id, name, age) VALUES (?1, ?2, ?3)";
const SELECT_ONE: &str = "SELECT id, name, age FROM people WHERE id = ?1";
const SELECT_ALL: &str = "SELECT id, name, age FROM people ORDER BY id LIMIT ?1";
const INSERT_BIG: &str = "INSERT INTO people (id, name, age) VALUES (99, 'big', 3000000000)";
const SELECT_NULLS: &str = "SELECT id, NULL AS name, age FROM people";

// The Rust path: the classes and handlers as the Rust emitter writes them.

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Person {
    id: i64,
    name: String,
    age: i32,
}

impl FromRow for Person {
    const COLUMNS: &'static [&'static str] = &["id", "name", "age"];

    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
        Ok(Person {
            id: row.i64(columns[0], "id")?,
            name: row.string(columns[1], "name")?,
            age: row.i32(columns[2], "age")?,
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    name: String,
    n: i32,
    x: Option<f64>,
    b: Option<bool>,
}

fn rust_create(r: Request) -> HandlerFuture {
    Box::pin(async move {
        let p: Person = r.json();
        db::exec(INSERT, vec![p.id.into(), (&p.name).into(), p.age.into()]).await;
        http::reply(201, &p)
    })
}

fn rust_read(r: Request) -> HandlerFuture {
    Box::pin(async move {
        let id: i64 = r.path("id");
        http::reply_option(200, &db::query_one::<Person>(SELECT_ONE, vec![id.into()]).await)
    })
}

fn rust_list(r: Request) -> HandlerFuture {
    Box::pin(async move {
        let limit: Option<i64> = r.query_opt("limit");
        http::reply(200, &db::query::<Person>(SELECT_ALL, vec![limit.unwrap_or(100).into()]).await)
    })
}

fn rust_divide(r: Request) -> HandlerFuture {
    Box::pin(async move {
        let n: i64 = r.path("n");
        http::reply(200, &crate::ops::div_i64(100, n))
    })
}

fn rust_params(r: Request) -> HandlerFuture {
    Box::pin(async move {
        let params = Params { name: r.path("name"), n: r.query("n"), x: r.query_opt("x"), b: r.query_opt("b") };
        http::reply(200, &params)
    })
}

fn rust_tx_trap(r: Request) -> HandlerFuture {
    Box::pin(async move {
        let p: Person = r.json();
        db::begin().await;
        db::exec(INSERT, vec![p.id.into(), (&p.name).into(), p.age.into()]).await;
        crate::trap("boom")
    })
}

fn rust_big(_r: Request) -> HandlerFuture {
    Box::pin(async move { http::reply(201, &db::exec(INSERT_BIG, vec![]).await) })
}

fn rust_nulls(_r: Request) -> HandlerFuture {
    Box::pin(async move { http::reply(200, &db::query::<Person>(SELECT_NULLS, vec![]).await) })
}

fn rust_service() -> Service {
    let route =
        |method, path, handler: fn(Request) -> HandlerFuture| Route { method, path, handler: Handler::new(handler) };
    Service {
        name: "people",
        tables: vec![Table { name: "people", create_sql: CREATE, postgres_sql: CREATE }],
        routes: vec![
            route("POST", "/people", rust_create),
            route("GET", "/people/{id}", rust_read),
            route("GET", "/people", rust_list),
            route("GET", "/divide/{n}", rust_divide),
            route("GET", "/params/{name}", rust_params),
            route("POST", "/tx/trap", rust_tx_trap),
            route("POST", "/big", rust_big),
            route("GET", "/nulls", rust_nulls),
        ],
        queues: Vec::new(),
        openapi: None,
    }
}

// The LLVM path: the same classes laid out as emitted, and the handlers as frames.

#[repr(C)]
#[derive(Clone, Copy)]
struct PersonC {
    id: i64,
    name: RawString,
    age: i32,
}

/// An option as emitted: a tag byte, then the payload.
#[repr(C)]
#[derive(Clone, Copy)]
struct Opt<T> {
    tag: u8,
    value: T,
}

type OptPerson = Opt<PersonC>;
type OptI64 = Opt<i64>;

#[repr(C)]
#[derive(Clone, Copy)]
struct ParamsC {
    name: RawString,
    n: i32,
    x: Opt<f64>,
    b: Opt<u8>,
}

/// The descriptors the emitter would write as constants.
struct Descs {
    person: &'static TypeDesc,
    opt_person: &'static TypeDesc,
    params: &'static TypeDesc,
}

fn descs() -> &'static Descs {
    static DESCS: OnceLock<Descs> = OnceLock::new();
    DESCS.get_or_init(|| {
        let person = t::class("Person", &[("id", t::i64()), ("name", t::string()), ("age", t::i32())]);
        let params = t::class(
            "Params",
            &[("name", t::string()), ("n", t::i32()), ("x", t::option(t::f64())), ("b", t::option(t::bool()))],
        );
        Descs { person, opt_person: t::option(person), params }
    })
}

/// A frame as emitted code keeps it: where the handler is, its pending operation, and its
/// values.
#[repr(C)]
struct Frame<A, R> {
    state: u32,
    op: *mut PendingOp,
    args: A,
    result: R,
}

/// Frees a string that emitted code owns.
unsafe fn free_string(s: RawString) {
    unsafe { nagi_rt_free(s.ptr, s.cap, 1) }
}

unsafe fn frame<'a, A, R>(frame: *mut u8) -> &'a mut Frame<A, R> {
    unsafe { &mut *frame.cast::<Frame<A, R>>() }
}

/// `start` for a frame whose arguments are an `A` and whose result starts zeroed: made in
/// `room` when there is one (a sync route's), else on the heap.
unsafe extern "C" fn start<A, R>(args: *mut u8, room: *mut u8) -> *mut u8 {
    let args = unsafe { args.cast::<A>().read() };
    // SAFETY: every result type here is plain data for which all zeroes is a value.
    let result = unsafe { std::mem::zeroed::<R>() };
    let frame = Frame { state: 0, op: ptr::null_mut(), args, result };
    if room.is_null() {
        return Box::into_raw(Box::new(frame)).cast();
    }
    unsafe { room.cast::<Frame<A, R>>().write(frame) };
    room
}

/// Frees a frame, its pending operation first; its values must have been dropped.
unsafe fn free<A, R>(f: *mut u8) {
    let boxed = unsafe { Box::from_raw(f.cast::<Frame<A, R>>()) };
    if !boxed.op.is_null() {
        unsafe { nagi_rt_op_drop(boxed.op) };
    }
}

/// Polls the frame's operation as emitted code does: 0 while it waits, 2 when it failed (the
/// operation stays in the frame, which its owner drops), else writes its result at `out` and 1.
unsafe fn await_op<A, R>(f: &mut Frame<A, R>, cx: *mut u8, out: *mut u8) -> i32 {
    let polled = unsafe { nagi_rt_op_poll(f.op, cx) };
    if polled != 1 {
        return polled;
    }
    unsafe { nagi_rt_op_finish(f.op, out) };
    f.op = ptr::null_mut();
    1
}

unsafe fn insert_args(p: &PersonC) -> *mut crate::cabi::db::SqlArgs {
    unsafe {
        let args = crate::cabi::testing::sql_args();
        nagi_rt_sql_arg_int(args, p.id);
        nagi_rt_sql_arg_text(args, p.name.ptr, p.name.len);
        nagi_rt_sql_arg_int(args, i64::from(p.age));
        args
    }
}

unsafe extern "C" fn create_poll(fp: *mut u8, cx: *mut u8) -> i32 {
    let f = unsafe { frame::<PersonC, PersonC>(fp) };
    unsafe {
        if f.state == 0 {
            f.op = nagi_rt_db_exec(INSERT.as_ptr(), INSERT.len(), insert_args(&f.args));
            f.state = 1;
        }
        let mut changed = 0_i64;
        let polled = await_op(f, cx, ptr::from_mut(&mut changed).cast());
        if polled != 1 {
            return polled;
        }
        f.result = f.args;
    }
    1
}

unsafe extern "C" fn create_drop(fp: *mut u8) {
    unsafe {
        free_string(frame::<PersonC, PersonC>(fp).args.name);
        free::<PersonC, PersonC>(fp);
    }
}

unsafe extern "C" fn create_finish(fp: *mut u8) {
    unsafe {
        free_string(frame::<PersonC, PersonC>(fp).result.name);
        free::<PersonC, PersonC>(fp);
    }
}

unsafe extern "C" fn read_poll(fp: *mut u8, cx: *mut u8) -> i32 {
    let f = unsafe { frame::<i64, OptPerson>(fp) };
    unsafe {
        if f.state == 0 {
            let args = crate::cabi::testing::sql_args();
            nagi_rt_sql_arg_int(args, f.args);
            f.op = nagi_rt_db_query(SELECT_ONE.as_ptr(), SELECT_ONE.len(), args, descs().opt_person, 1);
            f.state = 1;
        }
        let out = ptr::from_mut(&mut f.result).cast();
        await_op(f, cx, out)
    }
}

unsafe extern "C" fn read_drop(fp: *mut u8) {
    unsafe { free::<i64, OptPerson>(fp) }
}

unsafe extern "C" fn read_finish(fp: *mut u8) {
    unsafe {
        let f = frame::<i64, OptPerson>(fp);
        if f.result.tag & 1 != 0 {
            free_string(f.result.value.name);
        }
        free::<i64, OptPerson>(fp);
    }
}

/// A query of people with `args` into the frame's array, for `list` and `nulls`.
unsafe fn people_poll<A>(fp: *mut u8, cx: *mut u8, sql: &'static str, args: impl FnOnce(&A) -> i64) -> i32 {
    let f = unsafe { frame::<A, RawArray>(fp) };
    unsafe {
        if f.state == 0 {
            let list = crate::cabi::testing::sql_args();
            if !sql.contains("NULL") {
                nagi_rt_sql_arg_int(list, args(&f.args));
            }
            f.op = nagi_rt_db_query(sql.as_ptr(), sql.len(), list, descs().person, 0);
            f.state = 1;
        }
        let out = ptr::from_mut(&mut f.result).cast();
        await_op(f, cx, out)
    }
}

unsafe extern "C" fn list_poll(fp: *mut u8, cx: *mut u8) -> i32 {
    unsafe { people_poll::<OptI64>(fp, cx, SELECT_ALL, |limit| if limit.tag & 1 != 0 { limit.value } else { 100 }) }
}

unsafe extern "C" fn nulls_poll(fp: *mut u8, cx: *mut u8) -> i32 {
    unsafe { people_poll::<()>(fp, cx, SELECT_NULLS, |()| 0) }
}

unsafe extern "C" fn people_finish<A>(fp: *mut u8) {
    unsafe {
        let array = frame::<A, RawArray>(fp).result;
        for i in 0..array.len {
            free_string(array.ptr.cast::<PersonC>().add(i).read().name);
        }
        nagi_rt_free(array.ptr, array.cap * size_of::<PersonC>(), 8);
        free::<A, RawArray>(fp);
    }
}

unsafe extern "C" fn divide_poll(fp: *mut u8, _cx: *mut u8) -> i32 {
    let f = unsafe { frame::<i64, i64>(fp) };
    if f.args == 0 {
        let message = crate::ops::DIVISION_BY_ZERO;
        unsafe { nagi_rt_trap(message.as_ptr(), message.len()) }
    }
    f.result = 100_i64.wrapping_div(f.args);
    1
}

/// `drop` and `finish` of a frame that holds no heap values.
unsafe extern "C" fn plain_free<A, R>(fp: *mut u8) {
    unsafe { free::<A, R>(fp) }
}

/// `drop` and `finish` of a frame in the runtime's room that holds no heap values.
unsafe extern "C" fn in_room_nothing(_fp: *mut u8) {}

unsafe extern "C" fn params_poll(fp: *mut u8, _cx: *mut u8) -> i32 {
    let f = unsafe { frame::<ParamsC, ParamsC>(fp) };
    f.result = f.args;
    1
}

// `/params` is a sync route: its frame is in the runtime's room, which it does not free.
unsafe extern "C" fn params_drop(fp: *mut u8) {
    unsafe { free_string(frame::<ParamsC, ParamsC>(fp).args.name) }
}

unsafe extern "C" fn params_finish(fp: *mut u8) {
    unsafe { free_string(frame::<ParamsC, ParamsC>(fp).result.name) }
}

unsafe extern "C" fn tx_trap_poll(fp: *mut u8, cx: *mut u8) -> i32 {
    let f = unsafe { frame::<PersonC, ()>(fp) };
    unsafe {
        if f.state == 0 {
            f.op = nagi_rt_db_begin();
            f.state = 1;
        }
        if f.state == 1 {
            let polled = await_op(f, cx, ptr::null_mut());
            if polled != 1 {
                return polled;
            }
            f.op = nagi_rt_db_exec(INSERT.as_ptr(), INSERT.len(), insert_args(&f.args));
            f.state = 2;
        }
        let mut changed = 0_i64;
        let polled = await_op(f, cx, ptr::from_mut(&mut changed).cast());
        if polled != 1 {
            return polled;
        }
        nagi_rt_trap(b"boom".as_ptr(), 4)
    }
}

unsafe extern "C" fn tx_trap_drop(fp: *mut u8) {
    unsafe {
        free_string(frame::<PersonC, ()>(fp).args.name);
        free::<PersonC, ()>(fp);
    }
}

unsafe extern "C" fn big_poll(fp: *mut u8, cx: *mut u8) -> i32 {
    let f = unsafe { frame::<(), i64>(fp) };
    unsafe {
        if f.state == 0 {
            f.op = nagi_rt_db_exec(INSERT_BIG.as_ptr(), INSERT_BIG.len(), crate::cabi::testing::sql_args());
            f.state = 1;
        }
        let out = ptr::from_mut(&mut f.result).cast();
        await_op(f, cx, out)
    }
}

/// How many frames of `/forever` were dropped.
static FOREVER_DROPPED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn forever_poll(_fp: *mut u8, _cx: *mut u8) -> i32 {
    0
}

unsafe extern "C" fn forever_drop(fp: *mut u8) {
    FOREVER_DROPPED.fetch_add(1, Ordering::SeqCst);
    unsafe { free::<(), i64>(fp) }
}

/// How many frames of `/stuck` were dropped.
static STUCK_DROPPED: AtomicUsize = AtomicUsize::new(0);

/// A sync route's frame that waits, which a sync frame must never do.
unsafe extern "C" fn stuck_poll(_fp: *mut u8, _cx: *mut u8) -> i32 {
    0
}

unsafe extern "C" fn stuck_drop(_fp: *mut u8) {
    STUCK_DROPPED.fetch_add(1, Ordering::SeqCst);
}

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

fn param(name: &'static str, source: u64, ty: &'static TypeDesc, offset: usize) -> ParamDesc {
    ParamDesc { name: name.as_ptr(), name_len: name.len(), source, ty, offset }
}

/// One route's descriptor; `A` is its argument block, `R` its result, at `Frame::result`.
fn route<A, R>(
    method: &'static str,
    path: &'static str,
    params: Vec<ParamDesc>,
    (poll, drop, finish): (PollFn, FrameFn, FrameFn),
    result: &'static TypeDesc,
) -> RouteDesc {
    let params: &'static [ParamDesc] = Box::leak(params.into_boxed_slice());
    RouteDesc {
        method: method.as_ptr(),
        method_len: method.len(),
        path: path.as_ptr(),
        path_len: path.len(),
        params: params.as_ptr(),
        param_count: params.len(),
        args_size: size_of::<A>(),
        args_align: align_of::<A>(),
        frame_size: 0,
        frame_align: 0,
        start: start::<A, R> as StartFn,
        poll,
        drop,
        finish,
        result_offset: offset_of!(Frame<A, R>, result),
        result,
        status: if method == "POST" { 201 } else { 200 },
    }
}

/// `route` as a sync route, whose frame `start` makes in `room` bytes the runtime gives it.
fn in_room<A, R>(route: RouteDesc, room: usize) -> RouteDesc {
    assert!(room >= size_of::<Frame<A, R>>());
    RouteDesc { frame_size: room, frame_align: align_of::<Frame<A, R>>(), ..route }
}

unsafe extern "C" fn guarded_poll(poll: PollFn, frame: *mut u8, cx: *mut u8) -> i32 {
    unsafe { t::guarded_poll(poll, frame, cx) }
}

fn llvm_service() -> &'static ServiceDesc {
    let d = descs();
    let p = d.params;
    let person_body = || vec![param("body", SOURCE_BODY, d.person, 0)];
    let routes = vec![
        route::<PersonC, PersonC>(
            "POST",
            "/people",
            person_body(),
            (create_poll, create_drop, create_finish),
            d.person,
        ),
        route::<i64, OptPerson>(
            "GET",
            "/people/{id}",
            vec![param("id", SOURCE_PATH, t::i64(), 0)],
            (read_poll, read_drop, read_finish),
            d.opt_person,
        ),
        route::<OptI64, RawArray>(
            "GET",
            "/people",
            vec![param("limit", SOURCE_QUERY_OPT, t::option(t::i64()), 0)],
            (list_poll, plain_free::<OptI64, RawArray>, people_finish::<OptI64>),
            t::array(d.person),
        ),
        // Two sync routes: one whose frame fits the runtime's room on its stack, one given more
        // room than the stack keeps (256 bytes), so the runtime allocates it.
        in_room::<i64, i64>(
            route::<i64, i64>(
                "GET",
                "/divide/{n}",
                vec![param("n", SOURCE_PATH, t::i64(), 0)],
                (divide_poll, in_room_nothing, in_room_nothing),
                t::i64(),
            ),
            size_of::<Frame<i64, i64>>(),
        ),
        in_room::<ParamsC, ParamsC>(
            route::<ParamsC, ParamsC>(
                "GET",
                "/params/{name}",
                vec![
                    param("name", SOURCE_PATH, t::string(), t::offset(p, 0)),
                    param("n", SOURCE_QUERY, t::i32(), t::offset(p, 1)),
                    param("x", SOURCE_QUERY_OPT, t::option(t::f64()), t::offset(p, 2)),
                    param("b", SOURCE_QUERY_OPT, t::option(t::bool()), t::offset(p, 3)),
                ],
                (params_poll, params_drop, params_finish),
                p,
            ),
            512,
        ),
        route::<PersonC, ()>("POST", "/tx/trap", person_body(), (tx_trap_poll, tx_trap_drop, tx_trap_drop), t::unit()),
        route::<(), i64>("POST", "/big", vec![], (big_poll, plain_free::<(), i64>, plain_free::<(), i64>), t::i64()),
        route::<(), RawArray>(
            "GET",
            "/nulls",
            vec![],
            (nulls_poll, plain_free::<(), RawArray>, people_finish::<()>),
            t::array(d.person),
        ),
        route::<(), i64>("GET", "/forever", vec![], (forever_poll, forever_drop, forever_drop), t::i64()),
        in_room::<(), i64>(
            route::<(), i64>("GET", "/stuck", vec![], (stuck_poll, stuck_drop, stuck_drop), t::i64()),
            size_of::<Frame<(), i64>>(),
        ),
    ];
    let routes: &'static [RouteDesc] = Box::leak(routes.into_boxed_slice());
    let tables: &'static [TableDesc] = leak([TableDesc {
        name: "people".as_ptr(),
        name_len: 6,
        create_sql: CREATE.as_ptr(),
        create_sql_len: CREATE.len(),
        postgres_sql: CREATE.as_ptr(),
        postgres_sql_len: CREATE.len(),
    }]);
    leak(ServiceDesc {
        name: "people".as_ptr(),
        name_len: 6,
        tables: tables.as_ptr(),
        table_count: tables.len(),
        routes: routes.as_ptr(),
        route_count: routes.len(),
        guarded_poll,
        queues: std::ptr::null(),
        queue_count: 0,
        openapi: std::ptr::null(),
        openapi_len: 0,
    })
}

/// A service served in-process on a free port with an in-memory database.
struct Running {
    base: String,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), ServeError>>,
}

async fn serve(service: Service, timeout_ms: u64) -> Running {
    let mut config = Config::new(":memory:");
    config.timeout_ms = timeout_ms;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(service::serve_until(listener, service, config, async move {
        let _ = stopped.await;
    }));
    Running { base, stop: Some(stop), task }
}

impl Running {
    async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.await.expect("server task").expect("served");
    }
}

/// Status, content type and body bytes of one answer.
async fn send(base: &str, method: &str, path: &str, content_type: Option<&str>, body: &str) -> (u16, String, Vec<u8>) {
    let client = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut request = client.request(method, format!("{base}{path}"));
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    if !body.is_empty() {
        request = request.body(body.to_owned());
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    (status, content_type, response.bytes().await.expect("body").to_vec())
}

#[test]
fn descriptors_match_the_frames_layouts() {
    let d = descs();
    assert_eq!((d.person.size, d.person.align), (size_of::<PersonC>(), align_of::<PersonC>()));
    assert_eq!(t::offset(d.person, 1), offset_of!(PersonC, name));
    assert_eq!(t::offset(d.person, 2), offset_of!(PersonC, age));
    assert_eq!(d.opt_person.payload_offset, offset_of!(OptPerson, value));
    assert_eq!(d.params.size, size_of::<ParamsC>());
    assert_eq!(t::offset(d.params, 2), offset_of!(ParamsC, x));
    assert_eq!(t::offset(d.params, 3), offset_of!(ParamsC, b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llvm_routes_answer_byte_for_byte_as_rust_routes() {
    // SAFETY: the descriptors are leaked, never written, and their frames follow the protocol.
    let llvm = serve(unsafe { crate::cabi::service::to_service(llvm_service()) }, 30_000).await;
    let rust = serve(rust_service(), 30_000).await;
    let json = Some("application/json");
    let ada = r#"{"id": 1, "name": "Ada", "age": 36}"#;
    let requests: [(&str, &str, Option<&str>, &str, u16); 29] = [
        ("GET", "/people/1", None, "", 404),
        ("POST", "/people", json, ada, 201),
        ("POST", "/people", json, ada, 409),
        ("POST", "/people", None, ada, 415),
        ("POST", "/people", Some("text/plain"), ada, 415),
        ("POST", "/people", json, "", 400),
        ("POST", "/people", json, r#"{"id": 2,"#, 400),
        ("POST", "/people", json, r#"{"id": 2, "name": "Bo", "age": 5} x"#, 400),
        ("POST", "/people", json, r#"{"id": 2, "name": "Bo"}"#, 422),
        ("POST", "/people", json, r#"{"id": 2, "name": "Bo", "age": 3000000000}"#, 422),
        ("POST", "/people", json, r#"{"id": 2, "name": "Bo", "age": 5, "x": 1}"#, 422),
        ("POST", "/people", json, r#"{"id": 2, "name": "Bo", "name": "Cy", "age": 5}"#, 422),
        // serde's sequence form of a class is refused: a class body is a JSON object.
        ("POST", "/people", json, r#"[3, "Jürgen \u00e9", 7]"#, 422),
        ("POST", "/people", json, r#"{"id": 3, "name": "Jürgen \u00e9", "age": 7}"#, 201),
        ("GET", "/people/1", None, "", 200),
        ("GET", "/people/x", None, "", 400),
        ("GET", "/people", None, "", 200),
        ("GET", "/people?limit=1", None, "", 200),
        ("GET", "/people?limit=x", None, "", 400),
        ("GET", "/divide/4", None, "", 200),
        ("GET", "/divide/0", None, "", 500),
        ("GET", "/params/J%C3%BCrgen?n=3&x=2.5", None, "", 200),
        ("GET", "/params/a?n=x", None, "", 400),
        ("GET", "/params/a?n=1&b=yes", None, "", 400),
        ("POST", "/tx/trap", json, r#"{"id": 5, "name": "Eve", "age": 1}"#, 500),
        ("GET", "/people/5", None, "", 404),
        ("POST", "/big", None, "", 201),
        ("GET", "/people/99", None, "", 500),
        ("GET", "/nulls", None, "", 500),
    ];
    for (method, path, content_type, body, status) in requests {
        let expected = send(&rust.base, method, path, content_type, body).await;
        let got = send(&llvm.base, method, path, content_type, body).await;
        assert_eq!(expected.0, status, "{method} {path} {body}: {}", String::from_utf8_lossy(&expected.2));
        assert_eq!(
            (got.0, &got.1, String::from_utf8_lossy(&got.2)),
            (expected.0, &expected.1, String::from_utf8_lossy(&expected.2)),
            "{method} {path} {body}"
        );
    }
    // Both still serve after the traps and failures.
    assert_eq!(send(&llvm.base, "GET", "/people/1", None, "").await.0, 200);
    llvm.shutdown().await;
    rust.shutdown().await;
}

/// Sends `GET path` to the LLVM service (with a request timeout of `timeout_ms`), checks that
/// it answers `status` and that `dropped` counted exactly one frame drop, and answers the body.
async fn answers_and_drops_once(path: &str, timeout_ms: u64, dropped: &AtomicUsize, status: u16) -> String {
    // SAFETY: as above.
    let llvm = serve(unsafe { crate::cabi::service::to_service(llvm_service()) }, timeout_ms).await;
    let before = dropped.load(Ordering::SeqCst);
    let (got, _, body) = send(&llvm.base, "GET", path, None, "").await;
    let body = String::from_utf8_lossy(&body).into_owned();
    assert_eq!(got, status, "{body}");
    assert_eq!(dropped.load(Ordering::SeqCst), before + 1);
    // The service still answers.
    assert_eq!(send(&llvm.base, "GET", "/divide/4", None, "").await.0, 200);
    llvm.shutdown().await;
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_frame_that_waits_traps_and_is_dropped_once_in_its_room() {
    let body = answers_and_drops_once("/stuck", 30_000, &STUCK_DROPPED, 500).await;
    assert!(body.contains("a sync route's frame waited"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_of_a_timed_out_request_is_dropped_once() {
    answers_and_drops_once("/forever", 200, &FOREVER_DROPPED, 503).await;
}
