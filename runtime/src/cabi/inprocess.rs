//! The C ABI for emitted code that runs inside the calling process, as `nagic run
//! --backend=jit` runs it with LLVM's JIT: the address of every `nagi_rt_*` function (and of
//! libc's `_setjmp`, which the emitted guard calls), so the JIT can resolve the emitted code's
//! calls without a linker, and the two steps around a run.
//!
//! A trap of JIT-run code must not end the compiler's process: the emitted entry
//! `nagi.jit.main` runs `main` under the same guard as a service's handler (`super::guard`), so
//! a trap is reported by the runtime's panic hook exactly as a compiled program reports it
//! (stdout flushed, `error: <message>` on stderr) and then jumps back to the entry.

use crate::trap::{HookMode, install_hook};

unsafe extern "C" {
    /// libc's `_setjmp`; only emitted code calls it (it returns twice, which Rust cannot model).
    fn _setjmp(env: *mut u8) -> i32;
}

/// The address of the C-ABI function `name`, or `None` for a name the runtime does not export.
pub fn symbol(name: &str) -> Option<usize> {
    use super::actors::*;
    use super::arrays::*;
    use super::db::*;
    use super::guard::*;
    use super::json::*;
    use super::maps::*;
    use super::program::nagi_rt_main_async;
    use super::queues::*;
    use super::service::nagi_rt_serve;
    use super::strings::*;
    use super::supervisors::*;
    use super::tasks::*;
    use super::*;
    let address = match name {
        "_setjmp" => _setjmp as *const () as usize,
        "nagi_rt_alloc" => nagi_rt_alloc as *const () as usize,
        "nagi_rt_free" => nagi_rt_free as *const () as usize,
        "nagi_rt_grow" => nagi_rt_grow as *const () as usize,
        "nagi_rt_str_from" => nagi_rt_str_from as *const () as usize,
        "nagi_rt_str_concat" => nagi_rt_str_concat as *const () as usize,
        "nagi_rt_str_eq" => nagi_rt_str_eq as *const () as usize,
        "nagi_rt_trap" => nagi_rt_trap as *const () as usize,
        "nagi_rt_index_out_of_range" => nagi_rt_index_out_of_range as *const () as usize,
        "nagi_rt_stack_slow" => nagi_rt_stack_slow as *const () as usize,
        "nagi_rt_print_i32" => nagi_rt_print_i32 as *const () as usize,
        "nagi_rt_print_i64" => nagi_rt_print_i64 as *const () as usize,
        "nagi_rt_print_f64" => nagi_rt_print_f64 as *const () as usize,
        "nagi_rt_print_bool" => nagi_rt_print_bool as *const () as usize,
        "nagi_rt_print_str" => nagi_rt_print_str as *const () as usize,
        "nagi_rt_http_fail" => nagi_rt_http_fail as *const () as usize,
        "nagi_rt_http_clear_failure" => nagi_rt_http_clear_failure as *const () as usize,
        "nagi_rt_http_set_header" => nagi_rt_http_set_header as *const () as usize,
        "nagi_rt_test_selected" => nagi_rt_test_selected as *const () as usize,
        "nagi_rt_test_failed" => nagi_rt_test_failed as *const () as usize,
        "nagi_rt_test_assert_failed" => nagi_rt_test_assert_failed as *const () as usize,
        "nagi_rt_fmt_i32" => nagi_rt_fmt_i32 as *const () as usize,
        "nagi_rt_fmt_i64" => nagi_rt_fmt_i64 as *const () as usize,
        "nagi_rt_fmt_f64" => nagi_rt_fmt_f64 as *const () as usize,
        "nagi_rt_fmt_bool" => nagi_rt_fmt_bool as *const () as usize,
        "nagi_rt_json_encode" => nagi_rt_json_encode as *const () as usize,
        "nagi_rt_json_decode" => nagi_rt_json_decode as *const () as usize,
        "nagi_rt_str_contains" => nagi_rt_str_contains as *const () as usize,
        "nagi_rt_str_starts_with" => nagi_rt_str_starts_with as *const () as usize,
        "nagi_rt_str_ends_with" => nagi_rt_str_ends_with as *const () as usize,
        "nagi_rt_str_find" => nagi_rt_str_find as *const () as usize,
        "nagi_rt_str_split" => nagi_rt_str_split as *const () as usize,
        "nagi_rt_str_trim" => nagi_rt_str_trim as *const () as usize,
        "nagi_rt_str_to_lower" => nagi_rt_str_to_lower as *const () as usize,
        "nagi_rt_str_to_upper" => nagi_rt_str_to_upper as *const () as usize,
        "nagi_rt_str_replace" => nagi_rt_str_replace as *const () as usize,
        "nagi_rt_str_join" => nagi_rt_str_join as *const () as usize,
        "nagi_rt_str_slice" => nagi_rt_str_slice as *const () as usize,
        "nagi_rt_str_parse_i64" => nagi_rt_str_parse_i64 as *const () as usize,
        "nagi_rt_str_parse_f64" => nagi_rt_str_parse_f64 as *const () as usize,
        "nagi_rt_array_sort" => nagi_rt_array_sort as *const () as usize,
        "nagi_rt_array_sort_by" => nagi_rt_array_sort_by as *const () as usize,
        "nagi_rt_array_reverse" => nagi_rt_array_reverse as *const () as usize,
        "nagi_rt_array_contains_int" => nagi_rt_array_contains_int as *const () as usize,
        "nagi_rt_array_contains_f64" => nagi_rt_array_contains_f64 as *const () as usize,
        "nagi_rt_array_contains_str" => nagi_rt_array_contains_str as *const () as usize,
        "nagi_rt_array_slice" => nagi_rt_array_slice as *const () as usize,
        "nagi_rt_map_find_int" => nagi_rt_map_find_int as *const () as usize,
        "nagi_rt_map_find_str" => nagi_rt_map_find_str as *const () as usize,
        "nagi_rt_map_insert_int" => nagi_rt_map_insert_int as *const () as usize,
        "nagi_rt_map_insert_str" => nagi_rt_map_insert_str as *const () as usize,
        "nagi_rt_map_remove_int" => nagi_rt_map_remove_int as *const () as usize,
        "nagi_rt_map_remove_str" => nagi_rt_map_remove_str as *const () as usize,
        "nagi_rt_map_index_free" => nagi_rt_map_index_free as *const () as usize,
        "nagi_rt_map_index_clone" => nagi_rt_map_index_clone as *const () as usize,
        "nagi_rt_main" => nagi_rt_main as *const () as usize,
        "nagi_rt_main_async" => nagi_rt_main_async as *const () as usize,
        "nagi_rt_guard_enter" => nagi_rt_guard_enter as *const () as usize,
        "nagi_rt_guard_leave" => nagi_rt_guard_leave as *const () as usize,
        "nagi_rt_sql_args" => nagi_rt_sql_args as *const () as usize,
        "nagi_rt_sql_arg_int" => nagi_rt_sql_arg_int as *const () as usize,
        "nagi_rt_sql_arg_real" => nagi_rt_sql_arg_real as *const () as usize,
        "nagi_rt_sql_arg_text" => nagi_rt_sql_arg_text as *const () as usize,
        "nagi_rt_sql_arg_null" => nagi_rt_sql_arg_null as *const () as usize,
        "nagi_rt_db_exec" => nagi_rt_db_exec as *const () as usize,
        "nagi_rt_db_exec_commit" => nagi_rt_db_exec_commit as *const () as usize,
        "nagi_rt_db_query" => nagi_rt_db_query as *const () as usize,
        "nagi_rt_db_begin" => nagi_rt_db_begin as *const () as usize,
        "nagi_rt_db_commit" => nagi_rt_db_commit as *const () as usize,
        "nagi_rt_db_rollback" => nagi_rt_db_rollback as *const () as usize,
        "nagi_rt_op_poll" => nagi_rt_op_poll as *const () as usize,
        "nagi_rt_op_finish" => nagi_rt_op_finish as *const () as usize,
        "nagi_rt_op_drop" => nagi_rt_op_drop as *const () as usize,
        "nagi_rt_serve" => nagi_rt_serve as *const () as usize,
        "nagi_rt_actor_call" => nagi_rt_actor_call as *const () as usize,
        "nagi_rt_actor_clone" => nagi_rt_actor_clone as *const () as usize,
        "nagi_rt_actor_drop" => nagi_rt_actor_drop as *const () as usize,
        "nagi_rt_actor_message" => nagi_rt_actor_message as *const () as usize,
        "nagi_rt_actor_send" => nagi_rt_actor_send as *const () as usize,
        "nagi_rt_actor_start" => nagi_rt_actor_start as *const () as usize,
        "nagi_rt_defer_drop" => nagi_rt_defer_drop as *const () as usize,
        "nagi_rt_defer_new" => nagi_rt_defer_new as *const () as usize,
        "nagi_rt_queue_dead_letters" => nagi_rt_queue_dead_letters as *const () as usize,
        "nagi_rt_queue_push" => nagi_rt_queue_push as *const () as usize,
        "nagi_rt_queue_retry" => nagi_rt_queue_retry as *const () as usize,
        "nagi_rt_scope_drop" => nagi_rt_scope_drop as *const () as usize,
        "nagi_rt_scope_end" => nagi_rt_scope_end as *const () as usize,
        "nagi_rt_scope_new" => nagi_rt_scope_new as *const () as usize,
        "nagi_rt_supervisor_child" => nagi_rt_supervisor_child as *const () as usize,
        "nagi_rt_task_drop" => nagi_rt_task_drop as *const () as usize,
        "nagi_rt_task_join" => nagi_rt_task_join as *const () as usize,
        "nagi_rt_task_spawn" => nagi_rt_task_spawn as *const () as usize,
        "nagi_rt_task_spawn_blocking" => nagi_rt_task_spawn_blocking as *const () as usize,
        "nagi_rt_time_sleep" => nagi_rt_time_sleep as *const () as usize,
        _ => return None,
    };
    Some(address)
}

/// Prepares this process to run emitted code: the runtime's panic hook, reporting traps as a
/// compiled program does (`nagi_rt_main` does the same for a linked program).
pub fn begin() {
    install_hook(HookMode::Program);
}

/// After a run that trapped (the entry answered 3): takes the trap's message, which the hook
/// has already reported.
pub fn take_trap() -> Option<String> {
    let payload = super::guard::take_failure()?;
    payload.downcast::<crate::Trap>().ok().map(|trap| trap.message)
}

#[cfg(test)]
mod tests {
    /// Every function the runtime exports to emitted code has an address here: the exported
    /// names are read from every source file of the runtime (the directories are listed, so a
    /// new file is read too), so a new function cannot be forgotten.
    #[test]
    fn every_exported_function_resolves() {
        let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
        let mut files = Vec::new();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("a source directory lists") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        let mut names = Vec::new();
        for file in files {
            let source = std::fs::read_to_string(&file).expect("a C-ABI source reads");
            for line in source.lines() {
                let Some(rest) = line.split("extern \"C\" fn ").nth(1) else { continue };
                if line.trim_start().starts_with("pub") {
                    names.push(rest.split('(').next().unwrap_or("").to_string());
                }
            }
        }
        assert!(names.len() >= 93, "{} exported functions: {names:?}", names.len());
        for name in names {
            assert!(super::symbol(&name).is_some(), "`{name}` is exported but has no address in `symbol`");
        }
        assert!(super::symbol("_setjmp").is_some());
        assert_eq!(super::symbol("nagi_rt_nothing"), None);
    }
}
