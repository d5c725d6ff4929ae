//! Where the instructions of a request go: the callgrind profiles of `nagi-bench http
//! --instructions N` read back with `callgrind_annotate` (each function's own instructions,
//! every thread), each function put into one component by the crate or library it belongs to,
//! and reported per request beside the other servers of the case. This is the profile that
//! says where a server's instructions go where a ratio falls short (issue 39).
//!
//! A function is put in a component by its name: a Rust function by its crate (the crate of
//! the type for a trait method, `<Type as Trait>::f`, unless the type is a primitive), with
//! the runtime's database, JSON and logging modules apart from the rest of the runtime; a C
//! function by its name (the allocator, memory copies, libc) or else SQLite, the only other C
//! library the servers link. Emitted code (`nagi.*` on the LLVM path, `program::` on the Rust
//! path) and the baseline's own handlers are one component.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The components, in the order the table lists them.
pub const COMPONENTS: [&str; 13] = [
    "handlers (emitted code; the baseline's own)",
    "HTTP (hyper, http, httparse, axum, bytes)",
    "Tokio (scheduler, I/O, channels, timers)",
    "JSON (serde, serde_json, itoa, ryu)",
    "database binding (rusqlite, the runtime's db)",
    "SQLite (C)",
    "request log (tracing, the runtime's log queue)",
    "Nagi runtime (other)",
    "allocator (malloc, free)",
    "memory copies (memcpy, memmove, memset)",
    "libc and compiler runtime (locks, clocks, system calls)",
    "Rust std",
    "other",
];

/// Each component's instructions in the profile at `out` (a callgrind output file).
pub fn components(out: &Path) -> Result<BTreeMap<&'static str, u64>, String> {
    let annotated = Command::new("callgrind_annotate")
        .args(["--threshold=100", "--inclusive=no", "--auto=no"])
        .arg(out)
        .output()
        .map_err(|e| format!("callgrind_annotate: {e}"))?;
    if !annotated.status.success() {
        return Err(format!("callgrind_annotate {}: {}", out.display(), String::from_utf8_lossy(&annotated.stderr)));
    }
    Ok(group(&String::from_utf8_lossy(&annotated.stdout)))
}

/// Sums the functions of `callgrind_annotate`'s listing by component.
pub fn group(listing: &str) -> BTreeMap<&'static str, u64> {
    let mut sums = BTreeMap::new();
    for (count, function) in listing.lines().filter_map(function_line) {
        *sums.entry(component(function)).or_insert(0) += count;
    }
    sums
}

/// `1,234 ( 0.5%)  file:function [object]` → (1234, `function`).
fn function_line(line: &str) -> Option<(u64, &str)> {
    let line = line.trim_start();
    let (count, rest) = line.split_once(' ')?;
    let count: u64 = count.replace(',', "").parse().ok()?;
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('(').and_then(|r| r.split_once(')')).map_or(rest, |(_, r)| r).trim_start();
    if rest.starts_with("PROGRAM TOTALS") {
        return None;
    }
    let function = rest.split_once(':').map_or(rest, |(_, f)| f);
    let function = function.rsplit_once(" [").map_or(function, |(f, _)| f);
    Some((count, function.trim()))
}

/// The component of the function named `name`.
pub fn component(name: &str) -> &'static str {
    let path = owner(name);
    let c = |i: usize| COMPONENTS[i];
    if name.starts_with("nagi.") || path.contains("::program::") || path.starts_with("http_baseline") {
        return c(0);
    }
    if !path.contains("::") && !name.contains("::") {
        return c_function(name);
    }
    let krate = path.split("::").next().unwrap_or("");
    if krate == "nagi_runtime" {
        let module = path.split("::").nth(1).unwrap_or("");
        let sub = path.split("::").nth(2).unwrap_or("");
        return match (module, sub) {
            ("db", _) | ("cabi", "db") => c(4),
            ("json" | "shaped_json", _) | ("cabi", "json") => c(3),
            ("logging", _) => c(6),
            _ => c(7),
        };
    }
    match krate {
        "hyper" | "hyper_util" | "http" | "http_body" | "http_body_util" | "httparse" | "axum" | "axum_core"
        | "tower" | "tower_http" | "matchit" | "bytes" => c(1),
        "tokio" | "mio" | "atomic_waker" | "futures_util" | "futures_core" | "futures_channel" => c(2),
        "serde" | "serde_core" | "serde_json" | "serde_path_to_error" | "itoa" | "ryu" => c(3),
        "rusqlite" | "hashlink" | "fallible_streaming_iterator" => c(4),
        "tracing" | "tracing_core" | "tracing_subscriber" | "tracing_appender" | "sharded_slab" | "humantime" => c(6),
        "std" | "core" | "alloc" | "hashbrown" | "foldhash" => c(11),
        "__rustc" | "__rust_alloc" | "__rust_dealloc" | "__rust_realloc" => c(8),
        _ => c(12),
    }
}

/// The path that decides a Rust function's crate: the type's for `<Type as Trait>::f` (the
/// trait's when the type is a primitive or a reference to one), the function's own otherwise.
fn owner(name: &str) -> &str {
    let inner = name.trim_start_matches('<');
    if inner.len() == name.len() {
        return name;
    }
    let Some((ty, rest)) = inner.split_once(" as ") else { return inner };
    let ty = ty.trim_start_matches(['&', '*']).trim_start_matches("mut ").trim_start_matches("const ");
    let primitive = !ty.contains("::") || ty.starts_with('[') || ty.starts_with('(');
    if primitive { rest } else { ty }
}

/// The component of a C function: the allocator, memory copies, the runtime's C ABI, SQLite's
/// (by its prefixes, or a camel-case name as SQLite spells its own), or else libc and the
/// compiler's runtime (lower-case names, or names beginning with `_`). A heuristic: the
/// servers link no other C library, and glibc's and compiler-rt's names are lower case.
fn c_function(name: &str) -> &'static str {
    let c = |i: usize| COMPONENTS[i];
    // `pthread_mutex_lock@@GLIBC_2.2.5`, `yy_reduce.constprop.0`: the symbol alone.
    let name = name.split(['@', '.']).next().unwrap_or(name);
    let allocator = ["malloc", "free", "realloc", "calloc", "cfree", "unlink_chunk", "alloc_perturb"];
    if allocator.contains(&name)
        || ["malloc_", "_int_", "tcache", "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc"]
            .iter()
            .any(|p| name.starts_with(p))
    {
        return c(8);
    }
    if ["memcpy", "memmove", "memset", "__memcpy", "__memmove", "__memset", "__mempcpy"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        return c(9);
    }
    if name.starts_with("nagi_rt_") {
        return if name.starts_with("nagi_rt_db_") || name.starts_with("nagi_rt_sql_") { c(4) } else { c(7) };
    }
    let sqlite = ["sqlite3", "yy_", "pager", "pcache", "btree", "vdbe", "wal", "unix", "robust_", "posix"];
    if sqlite.iter().any(|p| name.starts_with(p))
        || (!name.starts_with('_') && name.bytes().any(|b| b.is_ascii_uppercase()))
    {
        return c(5);
    }
    c(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_go_to_their_components() {
        assert_eq!(component("nagi.poll.post_users"), COMPONENTS[0]);
        assert_eq!(component("users_bench::program::route_1::{{closure}}"), COMPONENTS[0]);
        assert_eq!(component("http_baseline::db::Columns::user"), COMPONENTS[0]);
        assert_eq!(component("httparse::parse_headers_iter_uninit"), COMPONENTS[1]);
        assert_eq!(
            component("<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::parse"),
            COMPONENTS[1]
        );
        assert_eq!(
            component("<tokio::task::task_local::TaskLocalFuture<T,F> as core::future::future::Future>::poll"),
            COMPONENTS[2]
        );
        assert_eq!(component("<u64 as itoa::Unsigned>::fmt"), COMPONENTS[3]);
        assert_eq!(component("nagi_runtime::db::thread::run"), COMPONENTS[4]);
        assert_eq!(component("nagi_rt_sql_arg_int"), COMPONENTS[4]);
        assert_eq!(component("walChecksumBytes"), COMPONENTS[5]);
        assert_eq!(component("sqlite3VdbeExec"), COMPONENTS[5]);
        assert_eq!(component("nagi_runtime::logging::request_line"), COMPONENTS[6]);
        assert_eq!(
            component(
                "<nagi_runtime::http::connections::Counted as hyper::service::service::Service<http::request::Request<hyper::body::incoming::Incoming>>>::call::{{closure}}"
            ),
            COMPONENTS[7]
        );
        assert_eq!(component("_int_free"), COMPONENTS[8]);
        assert_eq!(component("__memcpy_avx_unaligned_erms"), COMPONENTS[9]);
        assert_eq!(component("pthread_mutex_lock"), COMPONENTS[10]);
        assert_eq!(component("pthread_mutex_lock@@GLIBC_2.2.5"), COMPONENTS[10]);
        assert_eq!(component("__floattidf"), COMPONENTS[10]);
        assert_eq!(component("readDbPage"), COMPONENTS[5]);
        assert_eq!(component("pager_end_transaction"), COMPONENTS[5]);
        assert_eq!(component("yy_reduce.constprop.0"), COMPONENTS[5]);
        assert_eq!(component("alloc_perturb"), COMPONENTS[8]);
        assert_eq!(component("serde_core::ser::Serializer::collect_seq"), COMPONENTS[3]);
        assert_eq!(
            component("<<std::io::Write::write_fmt::Adapter<T> as core::fmt::Write>::write_str"),
            COMPONENTS[11]
        );
        assert_eq!(component("core::fmt::write"), COMPONENTS[11]);
    }

    #[test]
    fn the_listing_is_summed_by_component() {
        let listing = "\
--------------------------------------------------------------------------------
132,038,192 (100.0%)  PROGRAM TOTALS
--------------------------------------------------------------------------------
12,437,766 ( 9.42%)  ???:__memcpy_avx_unaligned_erms [/bin/users-llvm]
 4,775,787 ( 3.62%)  ???:_int_free [/bin/users-llvm]
 2,794,946 ( 2.12%)  ???:malloc [/bin/users-llvm]
 2,715,560 ( 2.06%)  ???:sqlite3VdbeExec [/bin/users-llvm]
";
        let sums = group(listing);
        assert_eq!(sums[COMPONENTS[9]], 12_437_766);
        assert_eq!(sums[COMPONENTS[8]], 4_775_787 + 2_794_946);
        assert_eq!(sums[COMPONENTS[5]], 2_715_560);
        assert_eq!(sums.values().sum::<u64>(), 12_437_766 + 4_775_787 + 2_794_946 + 2_715_560);
    }
}
