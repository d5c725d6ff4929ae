//! Rows decoded by descriptor against rows decoded by `FromRow`: the same rows of an in-memory
//! database, queried once through `db::query::<T>` with a `FromRow` written as the Rust emitter
//! writes it and once through `db::query_shaped` with the equivalent descriptor, must give the
//! same values or the same answer (out-of-range integers, NULLs, wrong storage classes, a
//! missing column). Then the C functions themselves: operations polled through a guard as a
//! handler frame polls them, their results in emitted memory, their failures as the Rust path's.

use std::ptr;
use std::task::Poll;

use futures_util::FutureExt;

use super::{
    nagi_rt_db_begin, nagi_rt_db_commit, nagi_rt_db_exec, nagi_rt_db_query, nagi_rt_sql_arg_int, nagi_rt_sql_arg_null,
    nagi_rt_sql_arg_real, nagi_rt_sql_arg_text,
};
use crate::cabi::guard::{Payload, take_failure};
use crate::cabi::json::TypeDesc;
use crate::cabi::pending::{PendingOp, nagi_rt_op_drop, nagi_rt_op_finish, nagi_rt_op_poll};
use crate::cabi::testing as t;
use crate::cabi::{RawArray, RawString, nagi_rt_free};
use crate::context::{self, RequestContext};
use crate::db::{self, Database, DbHandle, DbOptions, FromRow, Row, RowError, SqlValue};
use crate::shaped_json::Value;
use crate::{HttpError, Trap};

/// A class with a field of every type a column can hold.
#[derive(Debug)]
struct Wide {
    i: i32,
    l: i64,
    f: f64,
    b: bool,
    s: String,
    oi: Option<i32>,
    ol: Option<i64>,
    ofl: Option<f64>,
    ob: Option<bool>,
    os: Option<String>,
}

const COLUMNS: [&str; 10] = ["i", "l", "f", "b", "s", "oi", "ol", "ofl", "ob", "os"];

impl FromRow for Wide {
    const COLUMNS: &'static [&'static str] = &COLUMNS;

    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
        Ok(Wide {
            i: row.i32(columns[0], "i")?,
            l: row.i64(columns[1], "l")?,
            f: row.f64(columns[2], "f")?,
            b: row.bool(columns[3], "b")?,
            s: row.string(columns[4], "s")?,
            oi: row.opt_i32(columns[5], "oi")?,
            ol: row.opt_i64(columns[6], "ol")?,
            ofl: row.opt_f64(columns[7], "ofl")?,
            ob: row.opt_bool(columns[8], "ob")?,
            os: row.opt_string(columns[9], "os")?,
        })
    }
}

impl Wide {
    fn value(self) -> Value {
        let opt = |v: Option<Value>| Value::Option(v.map(Box::new));
        Value::Class(vec![
            Value::I32(self.i),
            Value::I64(self.l),
            Value::F64(self.f),
            Value::Bool(self.b),
            Value::Str(self.s),
            opt(self.oi.map(Value::I32)),
            opt(self.ol.map(Value::I64)),
            opt(self.ofl.map(Value::F64)),
            opt(self.ob.map(Value::Bool)),
            opt(self.os.map(Value::Str)),
        ])
    }
}

fn wide() -> &'static TypeDesc {
    let (i32, i64, f64, bool, string) = (t::i32(), t::i64(), t::f64(), t::bool(), t::string());
    let types = [
        i32,
        i64,
        f64,
        bool,
        string,
        t::option(i32),
        t::option(i64),
        t::option(f64),
        t::option(bool),
        t::option(string),
    ];
    let fields: Vec<(&'static str, &'static TypeDesc)> = COLUMNS.iter().copied().zip(types).collect();
    t::class("Wide", &fields)
}

/// The good value of each column, as SQL.
const GOOD: [&str; 10] = ["7", "-9", "1.5", "1", "'text'", "NULL", "3", "2", "0", "'o'"];

/// Values that some column types refuse (and others accept).
const ODD: [&str; 10] =
    ["NULL", "3000000000", "-2147483649", "'x'", "2.5", "2", "-1", "X'00ff'", "'\u{e9}'", "9223372036854775807"];

/// Runs `future` as request `id` of `db`, catching its answer if it unwinds with one.
async fn in_request<T>(db: &DbHandle, id: u64, future: impl Future<Output = T>) -> Result<T, HttpError> {
    let context = RequestContext { id, state: Default::default(), trace: None };
    let future = crate::db::scope(crate::db::Session::new(db.clone()), future);
    match std::panic::AssertUnwindSafe(context::scope(context, future)).catch_unwind().await {
        Ok(value) => Ok(value),
        Err(payload) => match payload.downcast::<HttpError>() {
            Ok(error) => Err(*error),
            Err(other) => panic!("the query unwound with {}", crate::trap::payload_text(other.as_ref())),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_decode_by_descriptor_as_by_from_row() {
    let create = "CREATE TABLE IF NOT EXISTS wide (k INTEGER PRIMARY KEY, i, l, f, b, s, oi, ol, ofl, ob, os)";
    let database = Database::open(":memory:", &[create], &DbOptions::default()).expect("opens");
    let db = database.handle();
    // One good row, then each column in turn given each odd value.
    let mut rows = vec![GOOD.map(str::to_owned)];
    for column in 0..GOOD.len() {
        for odd in ODD {
            let mut row = GOOD.map(str::to_owned);
            row[column] = odd.to_owned();
            rows.push(row);
        }
    }
    let insert = async {
        for (k, row) in rows.iter().enumerate() {
            let sql = format!("INSERT INTO wide VALUES ({k}, {})", row.join(", "));
            db::exec(&sql, vec![]).await;
        }
    };
    in_request(&db, 1, insert).await.expect("inserts");
    db.request_ended(&crate::db::Session::new(db.clone()), 1, true).await.expect("commits");

    let desc = wide();
    let key = std::ptr::from_ref(desc) as usize;
    let select = "SELECT i, l, f, b, s, oi, ol, ofl, ob, os FROM wide WHERE k = ?1";
    let (mut decoded, mut failed) = (0, 0);
    for k in 0..rows.len() {
        let args = || vec![SqlValue::Integer(k as i64)];
        let expected = in_request(&db, 2, db::query::<Wide>(select, args())).await;
        let expected = expected.map(|rows| rows.into_iter().map(Wide::value).collect::<Vec<_>>());
        let got = in_request(&db, 2, db::query_shaped(select, args(), desc, key, false)).await;
        assert_eq!(got, expected, "row {k}: {}", rows[k].join(", "));
        match got {
            Ok(_) => decoded += 1,
            Err(_) => failed += 1,
        }
        let first = in_request(&db, 2, db::query_shaped(select, args(), desc, key, true)).await;
        assert_eq!(first.map(|rows| rows.len()), expected.map(|rows| rows.len()));
    }
    assert!(decoded > 10 && failed > 30, "{decoded} rows decoded, {failed} failed");

    // A result column the class needs is missing; an empty result.
    let missing = "SELECT i, l, f, b, s, oi, ol, ofl, ob FROM wide";
    let expected = in_request(&db, 3, db::query::<Wide>(missing, vec![])).await.map(|_| ());
    let got = in_request(&db, 3, db::query_shaped(missing, vec![], desc, key, false)).await.map(|_| ());
    assert_eq!(got, expected);
    assert!(got.is_err());
    let none = in_request(&db, 3, db::query_shaped(select, vec![SqlValue::Integer(-1)], desc, key, true)).await;
    assert_eq!(none, Ok(vec![]));
    database.close().await;
}

/// A frame that holds one operation, polled as a handler frame polls it.
unsafe extern "C" fn poll_op_frame(frame: *mut u8, cx: *mut u8) -> i32 {
    // SAFETY: the frame is the test's pointer to a live operation.
    unsafe { nagi_rt_op_poll(frame.cast::<*mut PendingOp>().read(), cx) }
}

/// Polls `op` to completion under a guard, as a handler's future does: ready, or the failure's
/// payload (the failed operation is then dropped, as its frame's owner would).
async fn run_op(mut op: *mut PendingOp) -> Result<(), Payload> {
    std::future::poll_fn(|cx| {
        let frame = ptr::from_mut(&mut op).cast::<u8>();
        // SAFETY: the frame holds a live operation; `cx` is this poll's context.
        match unsafe { t::guarded_poll(poll_op_frame, frame, ptr::from_mut(cx).cast()) } {
            0 => Poll::Pending,
            1 => Poll::Ready(Ok(())),
            _ => {
                // SAFETY: the failed operation is not used again.
                unsafe { nagi_rt_op_drop(op) };
                Poll::Ready(Err(take_failure().expect("a failure's payload")))
            }
        }
    })
    .await
}

/// A class `Pair { id: i64, name: String, score: Option<f64> }` as emitted code lays it out.
#[repr(C)]
#[derive(Clone, Copy)]
struct PairC {
    id: i64,
    name: RawString,
    score: OptF64,
}

/// An `Option<f64>` as emitted code lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct OptF64 {
    tag: u8,
    value: f64,
}

#[repr(C)]
struct OptPair {
    tag: u8,
    value: PairC,
}

const PAIRS: &str =
    "CREATE TABLE IF NOT EXISTS pairs (id INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL, score REAL)";
const INSERT: &str = "INSERT INTO pairs (id, name, score) VALUES (?1, ?2, ?3)";

/// `exec(INSERT, [id, name, score])` through the C functions.
fn insert(id: i64, name: &str, score: Option<f64>) -> *mut PendingOp {
    // SAFETY: a fresh argument list, consumed by the statement; `name` is `len` bytes.
    unsafe {
        let args = crate::cabi::testing::sql_args();
        nagi_rt_sql_arg_int(args, id);
        nagi_rt_sql_arg_text(args, name.as_ptr(), name.len());
        match score {
            Some(score) => nagi_rt_sql_arg_real(args, score),
            None => nagi_rt_sql_arg_null(args),
        }
        nagi_rt_db_exec(INSERT.as_ptr(), INSERT.len(), args)
    }
}

/// A query of pairs by id (`one`) or of all pairs, through the C functions.
fn select(one: bool, row: &'static TypeDesc) -> *mut PendingOp {
    let sql = if one { "SELECT id, name, score FROM pairs WHERE id = ?1" } else { "SELECT * FROM pairs ORDER BY id" };
    // SAFETY: a fresh argument list, consumed by the statement; `row` is a descriptor.
    unsafe {
        let args = crate::cabi::testing::sql_args();
        if one {
            nagi_rt_sql_arg_int(args, 1);
        }
        nagi_rt_db_query(sql.as_ptr(), sql.len(), args, row, i32::from(one))
    }
}

fn text(s: RawString) -> String {
    // SAFETY: the runtime wrote `len` bytes of UTF-8 at `ptr`.
    let text = unsafe { std::str::from_utf8(std::slice::from_raw_parts(s.ptr, s.len)) }.expect("utf-8").to_owned();
    // SAFETY: the string's buffer came from the runtime's allocator.
    unsafe { nagi_rt_free(s.ptr, s.cap, 1) };
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_run_the_rust_path_statements() {
    let database = Database::open(":memory:", &[PAIRS], &DbOptions::default()).expect("opens");
    let db = database.handle();
    let pair = t::class("Pair", &[("id", t::i64()), ("name", t::string()), ("score", t::option(t::f64()))]);
    assert_eq!((pair.size, t::option(pair).payload_offset), (size_of::<PairC>(), std::mem::offset_of!(OptPair, value)));

    // exec, in an explicit transaction: the changed rows, and the row committed with the request.
    let writes = async {
        run_op(nagi_rt_db_begin()).await.expect("begins");
        let op = insert(1, "Ada", Some(2.5));
        run_op(op).await.expect("inserts");
        let mut changed = 0_i64;
        // SAFETY: the operation is ready; `changed` is an i64.
        unsafe { nagi_rt_op_finish(op, ptr::from_mut(&mut changed).cast()) };
        let op = insert(2, "Bo", None);
        run_op(op).await.expect("inserts");
        // SAFETY: as above.
        unsafe { nagi_rt_op_finish(op, ptr::from_mut(&mut changed).cast()) };
        let op = nagi_rt_db_commit();
        run_op(op).await.expect("commits");
        // SAFETY: ready; begin/commit/rollback write nothing.
        unsafe { nagi_rt_op_finish(op, ptr::null_mut()) };
        changed
    };
    assert_eq!(in_request(&db, 1, writes).await, Ok(1));
    db.request_ended(&crate::db::Session::new(db.clone()), 1, true).await.expect("commits");

    // A failed statement fails with the Rust path's answer.
    let failure = in_request(&db, 2, async { run_op(insert(1, "Cy", None)).await.expect_err("conflicts") }).await;
    let failure = failure.expect("no unwinding").downcast::<HttpError>().expect("an HTTP error");
    let rust = in_request(&db, 3, db::exec(INSERT, vec![1.into(), "Cy".into(), SqlValue::Null])).await;
    assert_eq!(rust, Err(*failure));
    assert_eq!(rust.map_err(|e| e.status), Err(409));

    // query_one writes the option, query the array.
    let found = in_request(&db, 4, async {
        let op = select(true, t::option(pair));
        run_op(op).await.expect("queries");
        // SAFETY: all zeroes is an empty option; the operation writes an `Option<Pair>`.
        let mut out: OptPair = unsafe { std::mem::zeroed() };
        unsafe { nagi_rt_op_finish(op, ptr::from_mut(&mut out).cast()) };
        (out.tag, out.value.id, text(out.value.name), out.value.score)
    });
    assert_eq!(found.await, Ok((1, 1, "Ada".to_owned(), OptF64 { tag: 1, value: 2.5 })));
    let all = in_request(&db, 4, async {
        let op = select(false, pair);
        run_op(op).await.expect("queries");
        let mut out = RawArray { ptr: ptr::null_mut(), len: 0, cap: 0 };
        // SAFETY: the operation writes a `[Pair]`.
        unsafe { nagi_rt_op_finish(op, ptr::from_mut(&mut out).cast()) };
        // SAFETY: the array holds `len` pairs in a buffer of `cap`, from the runtime's allocator.
        let rows: Vec<PairC> = (0..out.len).map(|i| unsafe { out.ptr.cast::<PairC>().add(i).read() }).collect();
        unsafe { nagi_rt_free(out.ptr, out.cap * size_of::<PairC>(), align_of::<PairC>()) };
        rows.into_iter().map(|p| (p.id, text(p.name), p.score.tag)).collect::<Vec<_>>()
    });
    assert_eq!(all.await, Ok(vec![(1, "Ada".to_owned(), 1), (2, "Bo".to_owned(), 0)]));

    // A descriptor of the wrong kind traps; an operation never polled is dropped.
    let wrong = in_request(&db, 5, async {
        /// A frame holding a class descriptor, which it passes where `query_one` wants an option.
        unsafe extern "C" fn query_with_a_class(frame: *mut u8, _cx: *mut u8) -> i32 {
            let sql = "SELECT id, name, score FROM pairs";
            // SAFETY: a fresh argument list; the class descriptor is static.
            unsafe {
                let pair = frame.cast::<*const TypeDesc>().read();
                nagi_rt_db_query(sql.as_ptr(), sql.len(), crate::cabi::testing::sql_args(), pair, 1);
            }
            1
        }
        let mut class: *const TypeDesc = pair;
        // SAFETY: the poll follows the protocol.
        let outcome = unsafe { t::guarded_poll(query_with_a_class, ptr::from_mut(&mut class).cast(), ptr::null_mut()) };
        let never = insert(9, "never", None);
        // SAFETY: the operation is live and not used afterwards.
        unsafe { nagi_rt_op_drop(never) };
        (outcome, take_failure().and_then(|p| p.downcast::<Trap>().ok()).map(|trap| trap.message))
    });
    let (outcome, message) = wrong.await.expect("no unwinding");
    assert_eq!(outcome, 3, "a trap");
    assert!(message.is_some_and(|m| m.contains("not of Class")));
    database.close().await;
}
