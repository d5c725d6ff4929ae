//! Rows decoded by descriptor against rows decoded by `FromRow`: the same rows of an in-memory
//! database, queried once through `db::query::<T>` with a `FromRow` written as the Rust emitter
//! writes it and once through `db::query_shaped` with the equivalent descriptor, must give the
//! same values or the same answer (out-of-range integers, NULLs, wrong storage classes, a
//! missing column).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use futures_util::FutureExt;

use crate::HttpError;
use crate::cabi::json::TypeDesc;
use crate::cabi::testing as t;
use crate::context::{self, RequestContext};
use crate::db::{self, Database, DbHandle, FromRow, Row, RowError, SqlValue};
use crate::shaped_json::Value;

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
    let context = RequestContext { id, db: db.clone(), began: Arc::new(AtomicBool::new(false)) };
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
    let database = Database::open(":memory:", &[create], Duration::from_secs(5)).expect("opens");
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
    db.request_ended(1, true).await.expect("commits");

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
