//! The micro-benchmarks the Nagi 0.1 prototype grew from (`shared/seeds`' report), measured on
//! the runtime functions each emitter's code calls, so the project reproduces the table it
//! grew from on both paths (issue 39, item 4; bench/README.md, "The micro-benchmarks"):
//!
//! - [`json_decode`]: a small JSON user decoded straight into its type (the Rust path's
//!   `rt::json_decode`, the LLVM path's `nagi_rt_json_decode` into the class layout) against
//!   through a value tree (`serde_json::Value`, then the struct; the runtime's shaped tree,
//!   then the layout, which the LLVM path used before issue 39);
//! - [`rows`]: 10,000 rows decoded by the runtime (the Rust path's generated `FromRow`, the
//!   LLVM path's layout rows) with the column indices resolved once per query, as every query
//!   does, against by name on every row;
//! - [`encode`]: a user encoded into a new buffer (the runtime's `rt::json_encode` and
//!   `nagi_rt_json_encode`) against into one buffer reused from call to call.
//!
//! Each experiment first checks every variant's result, then times the variants interleaved
//! (round by round, each variant in turn) and reports the median time per operation and the
//! allocations of one operation (the runtime's counting allocator, this thread's requests).

use std::hint::black_box;
use std::time::Instant;

use nagi_abi::type_kind;
use nagi_runtime::alloc_count::{self, CountingAlloc};
use nagi_runtime::cabi::json::{FieldDesc, TypeDesc};
use nagi_runtime::cabi::{RawString, nagi_rt_free};
use nagi_runtime::db::{FromRow, Row, RowError};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// The class every experiment reads and writes, as the Rust emitter derives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct User {
    /// The id.
    pub id: i64,
    /// The name.
    pub name: String,
    /// The age.
    pub age: i32,
}

/// The Rust emitter's `FromRow` for [`User`], as it generates it.
impl FromRow for User {
    const COLUMNS: &'static [&'static str] = &["id", "name", "age"];

    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
        Ok(User {
            id: row.i64(columns[0], "id")?,
            name: row.string(columns[1], "name")?,
            age: row.i32(columns[2], "age")?,
        })
    }
}

/// [`User`] as the LLVM emitter lays it out: `{ i64, %nagi.String, i32 }`.
#[repr(C)]
struct UserLayout {
    id: i64,
    name: RawString,
    age: i32,
}

static I64: TypeDesc = TypeDesc::plain(type_kind::I64, 8, 8);
static I32: TypeDesc = TypeDesc::plain(type_kind::I32, 4, 4);
static STRING: TypeDesc = TypeDesc::plain(type_kind::STRING, 24, 8);
static USER_FIELDS: [FieldDesc; 3] = [
    FieldDesc { name: b"id".as_ptr(), name_len: 2, offset: 0, ty: &I64 },
    FieldDesc { name: b"name".as_ptr(), name_len: 4, offset: 8, ty: &STRING },
    FieldDesc { name: b"age".as_ptr(), name_len: 3, offset: 32, ty: &I32 },
];
/// The descriptor the LLVM emitter writes for [`User`].
static USER: TypeDesc = TypeDesc {
    fields: USER_FIELDS.as_ptr(),
    field_count: 3,
    name: b"User".as_ptr(),
    name_len: 4,
    ..TypeDesc::plain(type_kind::CLASS, 40, 8)
};
/// `User?`, what `json.decode<User>` gives.
static USER_OPTION: TypeDesc =
    TypeDesc { inner: &USER, payload_offset: 8, ..TypeDesc::plain(type_kind::OPTION, 48, 8) };

/// The prototype's input.
pub const TEXT: &str = r#"{"id":42,"name":"alice","age":18}"#;

fn alice() -> User {
    User { id: 42, name: "alice".into(), age: 18 }
}

/// The user at `at`, its name taken over without a copy (so an operation allocates what the
/// decoder allocated, no more).
///
/// # Safety
/// `at` holds a [`UserLayout`] whose name the runtime allocated (a `Vec<u8>`'s buffer, from
/// the global allocator) and nothing else owns.
unsafe fn take_layout(at: *const UserLayout) -> User {
    // SAFETY: as the caller promised; a name with no buffer is empty.
    unsafe {
        let user = &*at;
        let name = if user.name.cap == 0 {
            String::new()
        } else {
            String::from_raw_parts(user.name.ptr, user.name.len, user.name.cap)
        };
        User { id: user.id, name, age: user.age }
    }
}

/// One variant of an experiment: its name and one operation, which returns what it made so
/// that the check can read it (and the timing can keep it from being optimized away).
pub struct Variant<T> {
    /// What it is.
    pub name: &'static str,
    /// One operation.
    pub op: Box<dyn FnMut() -> T>,
}

/// A variant's figures: the median time per operation and one operation's allocations.
#[derive(Clone, Debug)]
pub struct Figures {
    /// The variant.
    pub name: &'static str,
    /// Median nanoseconds per operation over the rounds.
    pub ns_per_op: f64,
    /// Allocation requests of one operation (this thread's, after a warm-up operation).
    pub allocations: u64,
    /// Bytes those requests asked for.
    pub bytes: u64,
}

/// Checks every variant's result with `check`, counts one operation's allocations, then times
/// `rounds` rounds of `per_round` operations per variant, interleaved.
pub fn measure<T>(
    variants: &mut [Variant<T>],
    check: impl Fn(&str, T),
    rounds: usize,
    per_round: usize,
) -> Vec<Figures> {
    let mut counted = Vec::new();
    for v in variants.iter_mut() {
        check(v.name, (v.op)());
        let (result, counts) = alloc_count::count(|| (v.op)());
        drop(result);
        counted.push(counts);
    }
    let mut samples = vec![Vec::new(); variants.len()];
    for _ in 0..rounds {
        for (i, v) in variants.iter_mut().enumerate() {
            let start = Instant::now();
            for _ in 0..per_round {
                black_box((v.op)());
            }
            samples[i].push(start.elapsed().as_nanos() as f64 / per_round as f64);
        }
    }
    variants
        .iter()
        .zip(samples)
        .zip(counted)
        .map(|((v, mut s), c)| {
            s.sort_by(f64::total_cmp);
            Figures { name: v.name, ns_per_op: s[s.len() / 2], allocations: c.allocations, bytes: c.bytes }
        })
        .collect()
}

/// How hard an experiment runs.
#[derive(Clone, Copy)]
pub struct Size {
    /// Interleaved rounds.
    pub rounds: usize,
    /// Operations per round and variant (for [`rows`]: queries).
    pub per_round: usize,
    /// Rows in the table [`rows`] reads.
    pub rows: usize,
}

/// The measurement's size, and a smoke run's (`--quick`, the tests).
impl Size {
    /// The reference run's size.
    pub const FULL: Size = Size { rounds: 15, per_round: 20_000, rows: 10_000 };
    /// A smoke run: every check, tiny timings.
    pub const QUICK: Size = Size { rounds: 2, per_round: 10, rows: 100 };
}

/// The JSON decode experiment: four variants, each giving the user of [`TEXT`].
pub fn json_decode(size: Size) -> Vec<Figures> {
    let mut variants: Vec<Variant<User>> = vec![
        Variant {
            name: "Rust path, typed (`rt::json_decode::<User>`)",
            op: Box::new(|| nagi_runtime::rt::json_decode::<User>(black_box(TEXT)).expect("decodes")),
        },
        Variant {
            name: "Rust path, value tree (`serde_json::Value`, then `User`)",
            op: Box::new(|| {
                let tree: serde_json::Value = serde_json::from_str(black_box(TEXT)).expect("parses");
                User::deserialize(tree).expect("fits")
            }),
        },
        Variant {
            name: "LLVM path, into the layout (`nagi_rt_json_decode`)",
            op: Box::new(|| {
                let mut out = [0u64; 6];
                let text = black_box(TEXT);
                // SAFETY: `out` has room for a `User?`; the text is readable.
                unsafe {
                    nagi_runtime::cabi::json::nagi_rt_json_decode(
                        out.as_mut_ptr().cast(),
                        text.as_ptr(),
                        text.len(),
                        &USER_OPTION,
                    );
                    assert_eq!(out[0] & 1, 1, "decodes");
                    take_layout(out.as_ptr().add(1).cast())
                }
            }),
        },
        Variant {
            name: "LLVM path, value tree (`shaped_json::decode`, then `cabi::json::write`)",
            op: Box::new(|| {
                let tree = nagi_runtime::shaped_json::decode(black_box(TEXT), &USER).expect("decodes");
                let mut out = [0u64; 5];
                // SAFETY: `out` has room for a `User`, whose value the tree is.
                unsafe {
                    nagi_runtime::cabi::json::write(tree, &USER, out.as_mut_ptr().cast());
                    take_layout(out.as_ptr().cast())
                }
            }),
        },
    ];
    measure(&mut variants, |name, user| assert_eq!(user, alice(), "{name}"), size.rounds, size.per_round)
}

/// An in-memory database with `n` users (id 1..=n, named `alice`, aged 18), as the prototype's.
pub fn database(n: usize) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open_in_memory().expect("an in-memory database");
    conn.execute_batch("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL)")
        .expect("the table");
    let tx = conn.unchecked_transaction().expect("a transaction");
    for id in 1..=n as i64 {
        tx.execute("INSERT INTO users (id, name, age) VALUES (?1, 'alice', 18)", [id]).expect("a row");
    }
    tx.commit().expect("the rows");
    conn
}

const SELECT: &str = "SELECT id, name, age FROM users";

/// The rows experiment: one query of `size.rows` rows per operation, four variants, each
/// giving the number of rows it decoded.
pub fn rows(size: Size) -> Vec<Figures> {
    let conn = std::rc::Rc::new(database(size.rows));
    let rust = |per_row: bool| {
        let conn = conn.clone();
        Box::new(move || {
            let users = nagi_runtime::db::rows_of::<User>(&conn, SELECT, per_row).expect("rows");
            assert_eq!(users.last().map(|u| (u.id, u.age)), Some((users.len() as i64, 18)));
            users.len()
        }) as Box<dyn FnMut() -> usize>
    };
    let llvm = |per_row: bool| {
        let conn = conn.clone();
        Box::new(move || nagi_runtime::cabi::db::rows_in_layout(&conn, SELECT, &USER, per_row).expect("rows"))
            as Box<dyn FnMut() -> usize>
    };
    let mut variants = vec![
        Variant { name: "Rust path, column indices once (`FromRow`)", op: rust(false) },
        Variant { name: "Rust path, column indices per row", op: rust(true) },
        Variant { name: "LLVM path, column indices once (layout rows)", op: llvm(false) },
        Variant { name: "LLVM path, column indices per row", op: llvm(true) },
    ];
    let per_round = (size.per_round / 2_000).max(1);
    measure(&mut variants, |name, n| assert_eq!(n, size.rows, "{name}"), size.rounds, per_round)
}

/// The encode experiment: four variants, each giving the text's length.
pub fn encode(size: Size) -> Vec<Figures> {
    let user = alice();
    let layout = UserLayout { id: 42, name: RawString { ptr: b"alice".as_ptr().cast_mut(), len: 5, cap: 0 }, age: 18 };
    let at = std::ptr::addr_of!(layout).cast::<u8>();
    let (rust_user, mut rust_buffer, mut llvm_buffer) = (user.clone(), Vec::new(), Vec::new());
    let mut variants: Vec<Variant<usize>> = vec![
        Variant {
            name: "Rust path, a new buffer (`rt::json_encode`)",
            op: Box::new(move || nagi_runtime::rt::json_encode(black_box(&user)).len()),
        },
        Variant {
            name: "Rust path, a reused buffer (`serde_json::to_writer`)",
            op: Box::new(move || {
                rust_buffer.clear();
                serde_json::to_writer(&mut rust_buffer, black_box(&rust_user)).expect("encodes");
                rust_buffer.len()
            }),
        },
        Variant {
            name: "LLVM path, a new buffer (`nagi_rt_json_encode`)",
            op: Box::new(move || {
                let mut out = RawString { ptr: std::ptr::null_mut(), len: 0, cap: 0 };
                // SAFETY: `at` holds a `User` laid out as `USER` says; `out` is writable, and the
                // text it receives is freed here.
                unsafe {
                    nagi_runtime::cabi::json::nagi_rt_json_encode(&mut out, black_box(at), &USER);
                    nagi_rt_free(out.ptr, out.cap, 1);
                }
                out.len
            }),
        },
        Variant {
            name: "LLVM path, a reused buffer (`cabi::json::encode_into`)",
            op: Box::new(move || {
                llvm_buffer.clear();
                // SAFETY: as above.
                unsafe { nagi_runtime::cabi::json::encode_into(black_box(at), &USER, &mut llvm_buffer) }
                    .expect("encodes");
                llvm_buffer.len()
            }),
        },
    ];
    let figures =
        measure(&mut variants, |name, len| assert_eq!(len, TEXT.len(), "{name}"), size.rounds, size.per_round);
    drop(layout);
    figures
}

/// A record per variant, as JSON lines.
pub fn records(experiment: &str, figures: &[Figures]) -> Vec<serde_json::Value> {
    figures
        .iter()
        .map(|f| {
            json!({"experiment": experiment, "variant": f.name, "ns_per_op": f.ns_per_op,
                "allocations": f.allocations, "bytes": f.bytes})
        })
        .collect()
}

/// The table of bench/README.md: each experiment's ratio on each path beside the prototype's,
/// then every variant's figures (`row_count`: the rows each query of [`rows`] read).
pub fn table(decode: &[Figures], rows: &[Figures], row_count: usize, encode: &[Figures]) -> String {
    let ratio = |f: &[Figures], slow: usize, fast: usize| f[slow].ns_per_op / f[fast].ns_per_op;
    let allocs = |f: &[Figures], slow: usize, fast: usize| format!("{} → {}", f[slow].allocations, f[fast].allocations);
    let mut out = String::from("| experiment | Rust path | LLVM path | prototype |\n| --- | --- | --- | --- |\n");
    out += &format!(
        "| typed JSON decode vs a value tree (`{TEXT}`) | {:.2}× ({} allocations) | {:.2}× ({} allocations) | 2.29× (5 → 1 allocations) |\n",
        ratio(decode, 1, 0),
        allocs(decode, 1, 0),
        ratio(decode, 3, 2),
        allocs(decode, 3, 2)
    );
    out += &format!(
        "| column indices once vs per row ({} rows) | {:.2}× | {:.2}× | 1.55× |\n",
        row_count,
        ratio(rows, 1, 0),
        ratio(rows, 3, 2)
    );
    out += &format!(
        "| encode into a reused buffer vs a new one | {:.2}× ({} allocations) | {:.2}× ({} allocations) | 0 allocations |\n",
        ratio(encode, 0, 1),
        allocs(encode, 0, 1),
        ratio(encode, 2, 3),
        allocs(encode, 2, 3)
    );
    out += "\n| variant | ns per operation | allocations | bytes |\n| --- | ---: | ---: | ---: |\n";
    for f in decode.iter().chain(rows).chain(encode) {
        out += &format!("| {} | {:.0} | {} | {} |\n", f.name, f.ns_per_op, f.allocations, f.bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_gives_the_prototypes_answer_and_the_table_has_each_experiment() {
        let (d, r, e) = (json_decode(Size::QUICK), rows(Size::QUICK), encode(Size::QUICK));
        // Decoding straight into the type allocates the name alone, on both paths; the value
        // trees allocate more.
        assert_eq!((d[0].allocations, d[2].allocations), (1, 1), "{d:?}");
        assert!(d[1].allocations > 1 && d[3].allocations > 1, "{d:?}");
        // A reused buffer allocates nothing once it has grown; a new one allocates.
        assert_eq!((e[1].allocations, e[3].allocations), (0, 0));
        assert!(e[0].allocations >= 1 && e[2].allocations >= 1, "{e:?}");
        let table = table(&d, &r, Size::QUICK.rows, &e);
        assert_eq!(table.lines().count(), 2 + 3 + 3 + 12, "{table}");
    }
}
