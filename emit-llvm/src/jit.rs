//! Running a program in this process with LLVM's JIT (MCJIT through inkwell), for `nagic run
//! --backend=jit`: the same IR as an executable's (the same layouts, runtime calls and
//! optimization pipeline), with two differences — the entry is `i32 nagi.jit.main()`, which
//! runs `main` under the runtime's trap guard (0: `main` returned; 3: it trapped, and the
//! runtime has reported the trap), and the stack limit is an ordinary global. Calls to the
//! runtime are resolved through the caller's `resolve`, which gives the address of each C-ABI
//! function (`nagi_runtime::cabi::inprocess::symbol`); no linker runs.

use inkwell::OptimizationLevel;
use inkwell::module::Linkage;
use nagi_low::{Diagnostic, Module};

use crate::{Cx, Entry, Error, Options, compile};

/// The JIT's entry function.
const ENTRY: &str = "nagi.jit.main";

/// Compiles `module` at `options.opt_level` and runs its `main` here, on the calling thread
/// (whose stack the program's recursion uses and the stack check measures). Returns 0 when
/// `main` returned and 3 when it trapped (the runtime's hook has reported the trap). Printing
/// goes to the runtime's buffered stdout; the caller flushes it.
///
/// Errors: the module has no `main` (M100) or has routes (M107: a service needs the runtime's
/// server, `--backend=llvm`), its `main` is async (M109: it needs the runtime's database,
/// `--backend=llvm`), a runtime function `resolve` does not know (M108), or LLVM's JIT cannot
/// be created (M110).
pub fn run_main(
    module: &Module,
    options: &Options,
    resolve: &dyn Fn(&str) -> Option<usize>,
    phase: &mut dyn FnMut(&str),
) -> Result<i32, Diagnostic> {
    if let Some(route) = module.routes.first() {
        return Err(Diagnostic::new(
            "M107",
            format!(
                "--backend=jit runs programs, not services (route {} {}); build a service with --backend=llvm",
                route.method.name(),
                route.path
            ),
        ));
    }
    if module.function_by_name("main").is_some_and(|main| module.functions[main].is_async) {
        return Err(Diagnostic::new(
            "M109",
            "--backend=jit runs a `main` that is not async, and this one waits (tasks, actors, sleep, password \
             hashing or the database), which needs the runtime's scheduler: build it with --backend=llvm",
        ));
    }
    let options = Options { export: Vec::new(), ..options.clone() };
    let run = |llmod: &inkwell::module::Module<'_>, _: &inkwell::targets::TargetMachine| -> Result<i32, Error> {
        let level = match options.opt_level {
            0 => OptimizationLevel::None,
            1 => OptimizationLevel::Less,
            2 => OptimizationLevel::Default,
            _ => OptimizationLevel::Aggressive,
        };
        let engine = llmod
            .create_jit_execution_engine(level)
            .map_err(|e| Error::internal(format!("LLVM could not create its JIT: {e}")))?;
        for f in llmod.get_functions() {
            let name = f.get_name().to_string_lossy().into_owned();
            if f.count_basic_blocks() > 0 || name.starts_with("llvm.") {
                continue;
            }
            let address = resolve(&name).ok_or_else(|| {
                Error(Diagnostic::new("M108", format!("the runtime has no function `{name}` for the JIT")))
            })?;
            engine.add_global_mapping(&f, address);
        }
        // SAFETY: `nagi.jit.main` is the entry written below, `i32 ()`; the code it runs is the
        // verified module's, whose runtime calls were just mapped to the runtime's functions.
        let entry = unsafe { engine.get_function::<unsafe extern "C" fn() -> i32>(ENTRY) }
            .map_err(|e| Error::internal(format!("the JIT has no entry: {e}")))?;
        // SAFETY: as above; the entry takes no arguments.
        Ok(unsafe { entry.call() })
    };
    let mut outcome = None;
    compile(module, &options, true, Entry::Jit, phase, |llmod, machine| {
        outcome = Some(run(llmod, machine)?);
        Ok(())
    })?;
    outcome.ok_or_else(|| Diagnostic::new("M110", "the JIT did not run"))
}

/// `i32 nagi.jit.main()`: Nagi's `main` under the trap guard (see `service::guarded`).
pub(crate) fn entry_point(cx: &Cx<'_, '_>) -> Result<(), Error> {
    let main_id = cx.low.function_by_name("main").ok_or_else(|| Error::internal("no main"))?;
    let nagi_main = cx.functions[main_id];
    let i32t = cx.context.i32_type();
    let f = cx.module.add_function(ENTRY, i32t.fn_type(&[], false), Some(Linkage::External));
    crate::service::guarded(cx, f, || {
        cx.builder.build_call(nagi_main, &[], "")?;
        Ok(i32t.const_zero())
    })
}
