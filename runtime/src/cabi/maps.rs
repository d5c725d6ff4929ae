//! `Map<K, V>` for emitted code: a map is [`RawMap`], its keys and its values in two arrays of
//! emitted code (position `i` of each is entry `i`) and an [`Index`] that the runtime owns.
//!
//! The index is an `IndexMap` from key to nothing, so an entry's position there is its position
//! in the arrays, and the order rules are `indexmap`'s, as on the Rust path ([`crate::map`]):
//! a key inserted again keeps its position, a new key goes last, a removal moves the entries
//! after it up. The runtime moves keys (an `i64` or a [`RawString`]) and values as bytes; only
//! emitted code drops or clones a value, since only it knows the value's type. A null index is
//! an empty map, so `map.new` allocates nothing.

use indexmap::IndexMap;

use super::{RawArray, RawString, nagi_rt_free, nagi_rt_grow, text_unchecked};
use crate::map::Key;

/// A map as emitted code lays it out: `{ [K] keys, [V] values, i8* index }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawMap {
    /// The keys, in position order: `i64`s or strings.
    pub keys: RawArray,
    /// The values, in position order.
    pub values: RawArray,
    /// The index from key to position; null while the map has never held an entry.
    pub index: *mut Index,
}

/// The index of a map of emitted code: its keys, in position order.
#[derive(Clone, Debug, Default)]
pub struct Index(IndexMap<Key, ()>);

/// A new index of `keys` (`i64`s or strings, no two equal), in their order, for a map that a
/// decoder writes; null for no keys, as `map.new` leaves it.
pub(crate) fn index_of(keys: &[crate::shaped_json::Value]) -> *mut Index {
    use crate::shaped_json::Value;
    if keys.is_empty() {
        return std::ptr::null_mut();
    }
    let entries = keys.iter().map(|k| match k {
        Value::I64(v) => (Key::I64(*v), ()),
        Value::Str(s) => (Key::Str(s.as_str().into()), ()),
        _ => (Key::I64(0), ()),
    });
    Box::into_raw(Box::new(Index(entries.collect())))
}

/// The position of `key` in the map at `map`, or -1.
///
/// # Safety
/// `map` points to a map of emitted code.
unsafe fn find(map: *const RawMap, key: &Key) -> i64 {
    // SAFETY: forwarded from the caller; a non-null index is the runtime's.
    match unsafe { (*map).index.as_ref() } {
        Some(index) => index.0.get_index_of(key).map_or(-1, |i| i as i64),
        None => -1,
    }
}

/// `map.find` with an `i64` key: its position, or -1.
///
/// # Safety
/// `map` points to a map of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_map_find_int(map: *const RawMap, key: i64) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { find(map, &Key::I64(key)) }
}

/// `map.find` with a string key: its position, or -1.
///
/// # Safety
/// `map` points to a map of emitted code, `key` to a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_map_find_str(map: *const RawMap, key: *const RawString) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { find(map, &Key::Str(read(key).into())) }
}

/// The text of the string at `s`.
///
/// # Safety
/// `s` points to a string of emitted code.
unsafe fn read<'a>(s: *const RawString) -> &'a str {
    // SAFETY: forwarded from the caller.
    unsafe { text_unchecked((*s).ptr, (*s).len) }
}

/// Enters `key` in the index of the map at `map`: `Ok(position)` for a new key, for which the
/// caller appends the key and room for the value, or `Err(position)` for one already there.
///
/// # Safety
/// `map` points to a map of emitted code.
unsafe fn enter(map: *mut RawMap, key: Key) -> Result<usize, usize> {
    // SAFETY: forwarded from the caller.
    let map = unsafe { &mut *map };
    if map.index.is_null() {
        map.index = Box::into_raw(Box::default());
    }
    // SAFETY: a non-null index is the runtime's, exclusively borrowed with the map.
    let index = unsafe { &mut *map.index };
    match index.0.insert_full(key, ()) {
        (at, None) => Ok(at),
        (at, Some(())) => Err(at),
    }
}

/// Appends room for one value of `size` bytes aligned to `align` to the map's values; the
/// caller writes the value. Returns the new entry's position as the insert functions answer it.
///
/// # Safety
/// `map` points to a map of emitted code whose values have that layout.
unsafe fn append_value(map: *mut RawMap, size: usize, align: usize) -> i64 {
    // SAFETY: forwarded from the caller.
    let values = unsafe { &mut (*map).values };
    if values.len == values.cap {
        // SAFETY: the values are an array of such elements.
        unsafe { nagi_rt_grow(values, size, align) };
    }
    values.len += 1;
    (values.len - 1) as i64
}

/// Appends `key` (`size` bytes at `key`, moved) to the keys of the map at `map`.
///
/// # Safety
/// `map` points to a map of emitted code whose keys are `size`-byte values like the one at `key`.
unsafe fn append_key(map: *mut RawMap, key: *const u8, size: usize) {
    // SAFETY: forwarded from the caller; both key kinds are 8-byte aligned.
    unsafe {
        let keys = &mut (*map).keys;
        if keys.len == keys.cap {
            nagi_rt_grow(keys, size, 8);
        }
        std::ptr::copy_nonoverlapping(key, keys.ptr.add(keys.len * size), size);
        keys.len += 1;
    }
}

/// `map.insert` with an `i64` key, for a value of `size` bytes aligned to `align`: the position
/// of a new entry, whose value slot (uninitialized) the caller writes, or `-1 - position` for a
/// key that is there already, whose old value the caller drops and overwrites.
///
/// # Safety
/// `map` points to a map of emitted code whose values have that layout.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_map_insert_int(map: *mut RawMap, key: i64, size: usize, align: usize) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe {
        match enter(map, Key::I64(key)) {
            Err(at) => -1 - at as i64,
            Ok(_) => {
                append_key(map, (&raw const key).cast(), size_of::<i64>());
                append_value(map, size, align)
            }
        }
    }
}

/// `map.insert` with a string key, which the map takes over (a key already there keeps its
/// own string, and this one is freed); the result as [`nagi_rt_map_insert_int`]'s.
///
/// # Safety
/// `map` points to a map of emitted code whose values have that layout; `key` to an owned
/// string, which the caller no longer owns afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_map_insert_str(
    map: *mut RawMap,
    key: *mut RawString,
    size: usize,
    align: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe {
        match enter(map, Key::Str(read(key).into())) {
            Err(at) => {
                free_string(&*key);
                -1 - at as i64
            }
            Ok(_) => {
                append_key(map, key.cast_const().cast(), size_of::<RawString>());
                append_value(map, size, align)
            }
        }
    }
}

/// Frees the buffer of an owned string of emitted code.
///
/// # Safety
/// `s` is an owned string nothing uses afterwards.
unsafe fn free_string(s: &RawString) {
    // SAFETY: a string's buffer is `cap` bytes at alignment 1 (docs/c-abi.md).
    unsafe { nagi_rt_free(s.ptr, s.cap, 1) }
}

/// Removes entry `at` of the map at `map`, whose keys are `key_size` bytes and values
/// `value_size`: the value's bytes go to `out`, a string key is freed, the later entries move up.
///
/// # Safety
/// `map` points to a map of emitted code with an entry `at` of that layout; `out` has room for
/// the value.
unsafe fn remove_at(map: *mut RawMap, at: usize, key_is_string: bool, out: *mut u8, value_size: usize) {
    // SAFETY: forwarded from the caller; the arrays hold `len > at` elements.
    unsafe {
        let map = &mut *map;
        let (keys, values) = (&mut map.keys, &mut map.values);
        let key_size = if key_is_string { size_of::<RawString>() } else { size_of::<i64>() };
        if key_is_string {
            free_string(&*keys.ptr.add(at * key_size).cast::<RawString>());
        }
        std::ptr::copy_nonoverlapping(values.ptr.add(at * value_size), out, value_size);
        for (array, size) in [(keys, key_size), (values, value_size)] {
            let after = array.len - at - 1;
            std::ptr::copy(array.ptr.add((at + 1) * size), array.ptr.add(at * size), after * size);
            array.len -= 1;
        }
    }
}

/// `map.remove`: removes the entry with `key` from the index, and then from the arrays.
///
/// # Safety
/// As [`remove_at`].
unsafe fn remove(map: *mut RawMap, key: &Key, out: *mut u8, value_size: usize) -> i32 {
    // SAFETY: forwarded from the caller.
    let Some(index) = (unsafe { (*map).index.as_mut() }) else { return 0 };
    match index.0.shift_remove_full(key) {
        // SAFETY: the index and the arrays hold the same entries.
        Some((at, _, ())) => unsafe {
            remove_at(map, at, matches!(key, Key::Str(_)), out, value_size);
            1
        },
        None => 0,
    }
}

/// `map.remove` with an `i64` key: 1 after moving the value (`value_size` bytes) to `out`, or 0
/// when the key is not there.
///
/// # Safety
/// `map` points to a map of emitted code whose values are `value_size` bytes; `out` has room
/// for one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_map_remove_int(map: *mut RawMap, key: i64, out: *mut u8, value_size: usize) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { remove(map, &Key::I64(key), out, value_size) }
}

/// `map.remove` with a string key, as [`nagi_rt_map_remove_int`].
///
/// # Safety
/// As [`nagi_rt_map_remove_int`], and `key` points to a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_map_remove_str(
    map: *mut RawMap,
    key: *const RawString,
    out: *mut u8,
    value_size: usize,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { remove(map, &Key::Str(read(key).into()), out, value_size) }
}

/// Frees the index of a map that is dropped (emitted code drops its arrays).
///
/// # Safety
/// `index` is null or a map's index that nothing uses afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_map_index_free(index: *mut Index) {
    if !index.is_null() {
        // SAFETY: a non-null index came from `Box::into_raw`.
        drop(unsafe { Box::from_raw(index) });
    }
}

/// A copy of the index of a map that is cloned (null for null).
///
/// # Safety
/// `index` is null or a live map's index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_map_index_clone(index: *const Index) -> *mut Index {
    // SAFETY: forwarded from the caller.
    match unsafe { index.as_ref() } {
        Some(index) => Box::into_raw(Box::new(index.clone())),
        None => std::ptr::null_mut(),
    }
}
