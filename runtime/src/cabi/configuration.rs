//! The program's configuration for emitted code: the C `main` declares the module's `config`
//! lines ([`nagi_rt_config_declare`]), and `config.*` rows read a value by its position; thin
//! adapters over [`crate::configuration`], which holds every rule.

use nagi_abi::config_kind;

use super::strings::write_string;
use super::{RawString, bytes};
use crate::configuration::{self, ConfigDecl, ConfigKind};

/// One `config` line as the emitter lays it out: `%nagi.ConfigDesc = { i8* name, i64 name_len,
/// i8* env, i64 env_len, i64 kind, i64 secret, i8* default, i64 default_len, i64 has_default }`.
/// Every text is a constant of the program.
#[repr(C)]
pub struct ConfigDesc {
    name: *const u8,
    name_len: usize,
    env: *const u8,
    env_len: usize,
    kind: u64,
    secret: u64,
    default: *const u8,
    default_len: usize,
    has_default: u64,
}

/// A text of a descriptor, for as long as the program runs.
///
/// # Safety
/// `ptr` points to `len` bytes of UTF-8 that live as long as the program (a constant of it).
unsafe fn constant_text(ptr: *const u8, len: usize) -> &'static str {
    // SAFETY: forwarded from the caller; the emitter writes identifiers and string literals of
    // the source, which are UTF-8 (checked here all the same: this runs once per value).
    std::str::from_utf8(unsafe { bytes(ptr, len) }).unwrap_or("")
}

/// Declares the program's configuration: `count` descriptors at `descs`.
///
/// # Safety
/// `descs` points to `count` descriptors, constants of the program.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_config_declare(descs: *const ConfigDesc, count: usize) {
    // SAFETY: forwarded from the caller.
    let descs = if count == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(descs, count) } };
    let decls: Vec<ConfigDecl> = descs
        .iter()
        .map(|d| {
            // SAFETY: every text of a descriptor is a constant of the program.
            let text = |ptr, len| unsafe { constant_text(ptr, len) };
            ConfigDecl {
                name: text(d.name, d.name_len),
                env: text(d.env, d.env_len),
                kind: match d.kind {
                    config_kind::I64 => ConfigKind::I64,
                    config_kind::F64 => ConfigKind::F64,
                    config_kind::BOOL => ConfigKind::Bool,
                    config_kind::DURATION => ConfigKind::Duration,
                    _ => ConfigKind::Str,
                },
                secret: d.secret != 0,
                default: (d.has_default != 0).then(|| text(d.default, d.default_len)),
            }
        })
        .collect();
    // Declared once per process, for as long as it runs.
    configuration::declare(Vec::leak(decls));
}

/// `config.str`: the `String` value at `index`, into `out`.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_config_str(out: *mut RawString, index: i64) {
    // SAFETY: `out` is writable.
    unsafe { write_string(out, configuration::str(index)) }
}

/// `config.i64`.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_config_i64(index: i64) -> i64 {
    configuration::int(index)
}

/// `config.f64`.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_config_f64(index: i64) -> f64 {
    configuration::float(index)
}

/// `config.bool` (1 or 0).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_config_bool(index: i64) -> i32 {
    i32::from(configuration::boolean(index))
}

/// `config.duration`: microseconds.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_config_duration(index: i64) -> i64 {
    configuration::int(index)
}
