//! The C ABI for emitted code that runs inside the calling process, as `nagic run
//! --backend=jit` runs it with LLVM's JIT: the address of every `nagi_rt_*` function (and of
//! libc's `_setjmp`, which the emitted guard calls), so the JIT can resolve the emitted code's
//! calls without a linker, and the two steps around a run.
//!
//! A trap of JIT-run code must not end the compiler's process: the emitted entry
//! `nagi.jit.main` runs `main` under the same guard as a service's handler (`super::guard`), so
//! a trap is reported by the runtime's panic hook exactly as a compiled program reports it
//! (stdout flushed, `error: <message>` on stderr) and then jumps back to the entry.

use crate::panic_hook::{HookMode, install_hook};

unsafe extern "C" {
    /// libc's `_setjmp`; only emitted code calls it (it returns twice, which Rust cannot model).
    fn _setjmp(env: *mut u8) -> i32;
}

/// The address of the C-ABI function `name`, or `None` for a name the runtime does not export.
pub fn symbol(name: &str) -> Option<usize> {
    if name == "_setjmp" {
        return Some(_setjmp as *const () as usize);
    }
    runtime_symbol(name)
}

/// Makes the JIT's table of `nagi_abi`'s list: every function at its address here, so a function
/// the list names and the runtime lacks is a compile error, not a refusal at run time.
macro_rules! jit_table {
    ($($variant:ident = $symbol:ident($($param:ident),*) -> $result:ident;)*) => {
        /// The address of the runtime function `name`.
        fn runtime_symbol(name: &str) -> Option<usize> {
            use super::actors::*;
            use super::arrays::*;
            use super::configuration::*;
            use super::db::*;
            use super::guard::*;
            use super::ids::*;
            use super::json::*;
            use super::maps::*;
            use super::outbound::*;
            use super::pending::*;
            use super::program::nagi_rt_main_async;
            use super::queues::*;
            use super::service::nagi_rt_serve;
            use super::secrets::*;
            use super::strings::*;
            use super::supervisors::*;
            use super::tasks::*;
            use super::time::*;
            use super::*;
            Some(match name {
                $(stringify!($symbol) => $symbol as *const () as usize,)*
                _ => return None,
            })
        }
    };
}

nagi_abi::runtime_functions!(jit_table);

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
    /// Every function of `nagi_abi`'s list has an address (the table is made of the list, so
    /// this holds by construction); that the runtime exports nothing the list lacks is
    /// `tests/tidy.rs`'s rule.
    #[test]
    fn every_listed_function_resolves() {
        let listed: Vec<&str> = nagi_abi::Function::ALL.iter().map(|f| f.symbol()).collect();
        assert!(listed.len() >= 93, "{listed:?}");
        for name in &listed {
            assert!(super::symbol(name).is_some(), "`{name}` has no address in `symbol`");
        }
        assert!(super::symbol("_setjmp").is_some());
        assert_eq!(super::symbol("nagi_rt_nothing"), None);
    }
}
