//! Rows decoded straight into the emitted layout of their class, on the database thread: the
//! LLVM path's `Collect`. Each row is read by the Rust path's accessors (`db::decode_fields`,
//! so the checks and messages are the Rust path's) and each field written at its offset, into a
//! buffer laid out as emitted code lays out an array of the class, which is handed over as the
//! query's `[C]` without a copy (for `query_one`, one row decoded into room inside the rows
//! themselves, which becomes its `C?`). No value
//! tree and no per-row allocation beyond the row's own strings.

use std::any::Any;
use std::sync::{PoisonError, RwLock};

use super::super::json::{FieldDesc, TypeDesc, drop_array, drop_value, grow_elements};
use super::super::{RawArray, into_raw};
use crate::db::{Accessor, ClassKey, FieldOut, FieldRead, Row, RowError, RowSink, decode_fields};
use crate::shaped_json::Kind;

/// The rows of one query, in the emitted layout of `class`; what is in it is freed when it is
/// dropped, unless [`LayoutRows::take`] or [`LayoutRows::take_first`] handed it over.
pub(super) struct LayoutRows {
    class: &'static TypeDesc,
    /// How each field is read and where it goes, planned once for the class ([`plan_of`]), or
    /// why the class cannot be read, which every row then answers.
    fields: &'static Plan,
    /// The class among the program's, for the database thread's column-index cache.
    key: usize,
    first_only: bool,
    /// The rows: `len` of `cap`, in a buffer from `grow_elements`; or, when `in_one`, the one
    /// row of `query_one` in `one` (then `ptr` and `cap` are unused).
    ptr: *mut u8,
    len: usize,
    cap: usize,
    /// Room for the one row of `query_one` when the class fits: no buffer to allocate and free.
    /// Its address is taken afresh on each use ([`LayoutRows::rows`]), so the rows may move.
    one: OneRow,
    in_one: bool,
}

/// The size of [`OneRow`] in bytes.
const ONE_ROW: usize = 128;

/// One row of a class of up to [`ONE_ROW`] bytes aligned to at most 16 (the largest alignment of
/// a Low type).
#[repr(align(16))]
struct OneRow([std::mem::MaybeUninit<u8>; ONE_ROW]);

// SAFETY: the buffer and the strings in it are owned by this value alone (allocated by the
// global allocator, usable from any thread), so it may move to the database thread and back.
unsafe impl Send for LayoutRows {}

impl LayoutRows {
    /// An empty set of rows of `class` (a class descriptor), keyed by `key`.
    pub(super) fn new(class: &'static TypeDesc, key: usize, first_only: bool) -> LayoutRows {
        let one = OneRow([std::mem::MaybeUninit::uninit(); ONE_ROW]);
        let ptr = class.align as *mut u8;
        LayoutRows { class, fields: plan_of(class), key, first_only, ptr, len: 0, cap: 0, one, in_one: false }
    }

    /// Where the rows are.
    fn rows(&mut self) -> *mut u8 {
        if self.in_one { self.one.0.as_mut_ptr().cast() } else { self.ptr }
    }

    /// Moves the first row, if any, to `out` (a row of the class) and frees the rest and the
    /// buffer: `query_one`'s result. Answers whether there was a row.
    ///
    /// # Safety
    /// `out` is writable for a row of the class and holds no owned value.
    pub(super) unsafe fn take_first(&mut self, out: *mut u8) -> bool {
        let found = self.len > 0;
        if found {
            let (rows, size) = (self.rows(), self.class.size);
            // SAFETY: row 0 is a whole row; it moves to `out`, and the rows after it move down
            // (to be dropped with the rows), so `len` no longer counts it.
            unsafe {
                std::ptr::copy_nonoverlapping(rows, out, size);
                std::ptr::copy(rows.add(size), rows, (self.len - 1) * size);
            }
            self.len -= 1;
        }
        found
    }

    /// The rows as emitted code's `[C]`, handed over: dropping `self` then frees nothing. Only
    /// for a query of every row (whose rows are never in `one`).
    pub(super) fn take(&mut self) -> RawArray {
        debug_assert!(!self.in_one, "the rows of query_one are taken with take_first");
        let rows = RawArray { ptr: self.ptr, len: self.len, cap: self.cap };
        (self.ptr, self.len, self.cap) = (self.class.align as *mut u8, 0, 0);
        rows
    }

    /// Makes room for one more row (the capacity doubles, at least 4 rows); the one row of
    /// `query_one` goes into `one` when it fits.
    fn reserve_one(&mut self) {
        if self.len < self.cap || (self.len == 0 && self.in_one) {
            return;
        }
        if self.first_only && self.len == 0 && self.class.size <= ONE_ROW && self.class.align <= 16 {
            self.in_one = true;
            return;
        }
        let mut rows = RawArray { ptr: self.ptr, len: self.len, cap: self.cap };
        grow_elements(&mut rows, self.class);
        (self.ptr, self.cap) = (rows.ptr, rows.cap);
    }
}

/// The rows of `sql` on `conn` decoded into the emitted layout of `class` as a query of the
/// LLVM path decodes them, then freed: the LLVM path's half of `bench/micro`'s rows experiment
/// (`crate::db::rows_of` is the Rust path's). Returns the number of rows; `per_row` resolves the
/// column indices by name on every row, as there.
pub fn rows_in_layout(
    conn: &rusqlite::Connection,
    sql: &str,
    class: &'static TypeDesc,
    per_row: bool,
) -> Result<usize, crate::db::DbError> {
    let mut rows = LayoutRows::new(class, 0, false);
    crate::db::decode_rows(conn, sql, &mut rows, per_row)
}

impl RowSink for LayoutRows {
    fn class(&self) -> ClassKey {
        ClassKey::Shape(self.key)
    }

    fn column_count(&self) -> usize {
        self.class.fields().len()
    }

    fn column(&self, i: usize) -> &str {
        self.class.fields()[i].name()
    }

    fn accept(&mut self, row: &Row<'_>, columns: &[usize]) -> Result<bool, RowError> {
        self.reserve_one();
        // SAFETY: `reserve_one` made room for row `len`; zeroing it first makes a row cut short
        // by an error safe to drop (an empty string and `none` own nothing).
        let dst = unsafe { self.rows().add(self.len * self.class.size) };
        unsafe { std::ptr::write_bytes(dst, 0, self.class.size) };
        let fields = self.fields.as_ref().map_err(RowError::clone)?;
        match decode_fields(row, columns, fields, &mut Fields { dst }) {
            Ok(()) => {
                self.len += 1;
                Ok(!self.first_only)
            }
            Err(error) => {
                // SAFETY: the row is zeroed, then written field by field by `Fields`; a field not
                // reached yet is zero, which owns nothing.
                unsafe { drop_value(dst, self.class) };
                Err(error)
            }
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

impl Drop for LayoutRows {
    fn drop(&mut self) {
        if self.in_one {
            let rows = self.rows();
            for i in 0..self.len {
                // SAFETY: row `i` is a whole row of the class, in `one`, which is not freed.
                unsafe { drop_value(rows.add(i * self.class.size), self.class) };
            }
            return;
        }
        // SAFETY: rows `0..len` are whole rows of the class, in a buffer from `grow_elements`.
        unsafe { drop_array(RawArray { ptr: self.ptr, len: self.len, cap: self.cap }, self.class) };
    }
}

/// How each field of a class is read and where it goes, or why the class cannot be read.
type Plan = Result<Box<[FieldRead<'static, Slot>]>, RowError>;

/// The plans made so far, by the address of their class descriptor: a service queries a few
/// classes, so a list is searched faster than a map is hashed.
static PLANS: RwLock<Vec<(usize, &'static Plan)>> = RwLock::new(Vec::new());

/// The plan of `class`, made the first time the class is queried and kept for the process, as
/// the descriptor is (`'static`). Planning on every query cost about 350 instructions of
/// `GET /users/1` (the field list allocated, each accessor chosen, each name read as UTF-8);
/// finding the plan costs a read lock (one shared counter updated each way) and a short scan.
fn plan_of(class: &'static TypeDesc) -> &'static Plan {
    let key = std::ptr::from_ref(class) as usize;
    let find = |plans: &[(usize, &'static Plan)]| plans.iter().find(|&&(k, _)| k == key).map(|&(_, plan)| plan);
    // A poisoned lock only means a thread panicked while holding it; the list is still whole
    // (a push either happened or did not).
    if let Some(plan) = find(&PLANS.read().unwrap_or_else(PoisonError::into_inner)) {
        return plan;
    }
    let mut plans = PLANS.write().unwrap_or_else(PoisonError::into_inner);
    // Another thread may have planned the class between the two locks.
    if let Some(plan) = find(&plans) {
        return plan;
    }
    let plan: &'static Plan = Box::leak(Box::new(plan(class)));
    plans.push((key, plan));
    plan
}

/// How each field of `class` is read and where it goes (or why the class cannot be read). A
/// plain loop into a buffer of the right size: collecting the `Result`s cost 400 instructions
/// of `GET /users/1` for a class of three fields.
fn plan(class: &'static TypeDesc) -> Plan {
    let mut fields = Vec::with_capacity(class.fields().len());
    for field in class.fields() {
        let accessor = Accessor::of(field.ty(), field.name())?;
        fields.push(FieldRead { accessor, name: field.name(), place: Slot::of(field) });
    }
    Ok(fields.into_boxed_slice())
}

/// Where one field goes in a row: its offset, and for an option the payload's offset inside it.
#[derive(Clone, Copy, Debug)]
struct Slot {
    offset: usize,
    payload: Option<usize>,
}

impl Slot {
    fn of(field: &FieldDesc) -> Slot {
        let ty = field.ty();
        Slot { offset: field.offset, payload: (ty.kind() == Kind::Option).then_some(ty.payload_offset) }
    }
}

/// Writes each field of one row at its slot in `dst`.
struct Fields {
    dst: *mut u8,
}

impl Fields {
    /// Writes one field: plain, or as an option (tag, then the payload) when the field is one.
    #[inline(always)]
    fn put<T>(&mut self, slot: &Slot, value: Option<T>) {
        // SAFETY (both arms): the row is a zeroed element of the class, so the field's offset
        // (and an option's payload offset inside it) is in bounds and aligned for its type.
        unsafe {
            let at = self.dst.add(slot.offset);
            match (slot.payload, value) {
                (Some(payload), Some(value)) => {
                    at.write(1);
                    at.add(payload).cast::<T>().write(value);
                }
                (None, Some(value)) => at.cast::<T>().write(value),
                (_, None) => {}
            }
        }
    }
}

impl FieldOut<Slot> for Fields {
    fn i32(&mut self, slot: &Slot, value: Option<i32>) {
        self.put(slot, value);
    }

    fn i64(&mut self, slot: &Slot, value: Option<i64>) {
        self.put(slot, value);
    }

    fn f64(&mut self, slot: &Slot, value: Option<f64>) {
        self.put(slot, value);
    }

    fn bool(&mut self, slot: &Slot, value: Option<bool>) {
        self.put(slot, value.map(u8::from));
    }

    fn string(&mut self, slot: &Slot, value: Option<String>) {
        self.put(slot, value.map(|s| into_raw(s.into_bytes())));
    }

    fn uuid(&mut self, slot: &Slot, value: Option<[u8; 16]>) {
        self.put(slot, value);
    }
}
