//! The LLVM emitter: a verified Low module → an LLVM module (through inkwell) → textual IR or a
//! native object file that links with the runtime's C ABI (`nagi-runtime`'s `cabi` module,
//! documented in `docs/c-abi.md`).
//!
//! Entry points: [`emit_ir`] and [`emit_object`]. Both check that the module has something to
//! run, lay out the types (`types.rs`), emit every function (`function.rs`, with arithmetic in
//! `ops.rs`, runtime calls in `runtime_calls.rs` and the database in `database.rs`; an async
//! function becomes a heap frame with a `poll` function, `frames.rs`) with its drop and clone
//! glue (`glue.rs`), the layout descriptors JSON and the database need (`descriptors.rs`), and
//! the C `main`: one that hands Nagi's `main` to `nagi_rt_main`, for an async `main` one that
//! hands its frame functions and the tables to `nagi_rt_main_async`, or for a service one that
//! hands the route and table tables to `nagi_rt_serve` (`service.rs`); then verify the result with LLVM's verifier, and optimize it
//! with LLVM's new pass manager (`default<ON>`). `ir.rs` holds the few builder calls that differ
//! between LLVM versions. The emitter does no IO: it returns text or bytes and reports phases
//! through a callback, so the driver can time them.
//!
//! Semantics that LLVM does not give for free are spelled out (docs/design.md §2): no `nsw`/`nuw` on
//! wrapping arithmetic; division and remainder guarded for zero (trap) and `MIN / -1`; shift
//! counts masked; float → int through `llvm.fptosi.sat`; float `ne` unordered and the other
//! float comparisons ordered; `min`/`max` of floats exactly as the runtime's `fmin`/`fmax`;
//! printing and formatting through the runtime, so output is byte-identical to the Rust path.

mod actors;
mod arrays;
mod awaits;
mod config;
mod constants;
mod database;
mod descriptors;
mod enums;
mod frames;
mod function;
mod glue;
mod ir;
mod jit;
mod maps;
mod ops;
mod queues;
mod rtcalls;
mod runtime_calls;
mod service;
mod strings;
mod tasks;
#[cfg(test)]
mod tests;
mod types;

use std::cell::RefCell;
use std::collections::HashMap;

use inkwell::OptimizationLevel;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::Linkage;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::types::{BasicMetadataTypeEnum, BasicType};
use inkwell::values::{FunctionValue, PointerValue};
use la_arena::ArenaMap;
use nagi_low::{Diagnostic, FuncId, Module, Type};

pub use crate::jit::run_main;
use crate::types::Layouts;

/// How to generate code.
#[derive(Clone, Debug)]
pub struct Options {
    /// The LLVM CPU name code is generated for (`x86-64-v2`, `x86-64-v3`, `skylake`, …), or
    /// `native` for the CPU of this machine with all its features.
    pub target_cpu: String,
    /// LLVM's optimization level, 0 to 3 (the new pass manager's `default<ON>` pipeline and the
    /// code generator's level).
    pub opt_level: u8,
    /// Nagi functions to give external linkage under a C symbol, so that other code can link
    /// the object and call them (the benchmarks call the kernels this way). Empty for a
    /// program. When it is not empty the object is a library: it needs no `main` and defines
    /// no C `main`; every function it does not name keeps internal linkage, so LLVM drops the
    /// ones the exported functions do not reach.
    pub export: Vec<Export>,
    /// The service's OpenAPI document (compact JSON), which the binary serves with
    /// `--openapi-route`; `None` for a service built without one (from Low text).
    pub openapi: Option<String>,
}

/// A Nagi function made callable from outside the object ([`Options::export`]).
///
/// The symbol follows the C calling convention with the parameter and result types of
/// `types.rs`: `i64` and `f64` as themselves, a reference as a pointer (`&[i64]` is a pointer
/// to `{ i64*, i64 len, i64 cap }`). Parameters of type `bool` (an `i1`) or `unit` have no C
/// counterpart; export only functions whose signature has a C spelling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Export {
    /// The Nagi function's name.
    pub function: String,
    /// The symbol it gets, e.g. `nagi_integer_sum`.
    pub symbol: String,
}

impl Export {
    /// Exports `function` as `nagi_<function>`.
    pub fn c_name(function: &str) -> Export {
        Export { function: function.to_string(), symbol: format!("nagi_{function}") }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options { target_cpu: DEFAULT_TARGET_CPU.to_string(), opt_level: 2, export: Vec::new(), openapi: None }
    }
}

/// The CPU level used unless one is asked for: portable across x86-64 machines of the last
/// decade (SSE4.2, POPCNT), and the same level both emitters are given so that they are
/// compared on equal terms.
pub const DEFAULT_TARGET_CPU: &str = "x86-64-v2";

/// The module's optimized LLVM IR as text (what `llvm-as` and `opt -passes=verify` read).
/// `phase` is called with a name after each phase finishes. A module without `main` gives IR
/// without the C entry point.
pub fn emit_ir(module: &Module, options: &Options, phase: &mut dyn FnMut(&str)) -> Result<String, Diagnostic> {
    compile(module, options, false, Entry::Native, phase, |llmod, _| Ok(llmod.print_to_string().to_string()))
}

/// The module compiled to a relocatable object file for the host's triple and
/// `options.target_cpu`. It defines the C `main`; link it with the runtime's static library
/// (`cc app.o libnagi_runtime.a -Wl,--gc-sections -lpthread -ldl -lm -o app`). With
/// [`Options::export`] set it is a library instead: the exported symbols and no `main`.
pub fn emit_object(module: &Module, options: &Options, phase: &mut dyn FnMut(&str)) -> Result<Vec<u8>, Diagnostic> {
    let program = options.export.is_empty();
    let bytes = compile(module, options, program, Entry::Native, phase, |llmod, machine| {
        let buffer = machine
            .write_to_memory_buffer(llmod, FileType::Object)
            .map_err(|e| Error::internal(format!("LLVM could not write the object file: {e}")))?;
        Ok(buffer.as_slice().to_vec())
    })?;
    phase("llvm object");
    Ok(bytes)
}

/// An error while emitting: a diagnostic for the user, or an internal error.
pub(crate) struct Error(Diagnostic);

impl Error {
    /// An internal compiler error: a verified module that the emitter mishandled.
    pub(crate) fn internal(message: impl Into<String>) -> Error {
        Error(Diagnostic::new(
            "M110",
            format!(
                "internal compiler error in the LLVM emitter: {}; please report this with the input",
                message.into()
            ),
        ))
    }
}

impl From<BuilderError> for Error {
    fn from(e: BuilderError) -> Error {
        Error::internal(format!("the IR builder refused an instruction: {e}"))
    }
}

/// What every part of the emitter shares while one module is emitted.
pub(crate) struct Cx<'ctx, 'm> {
    pub(crate) low: &'m Module,
    pub(crate) context: &'ctx Context,
    pub(crate) module: inkwell::module::Module<'ctx>,
    pub(crate) builder: Builder<'ctx>,
    pub(crate) layouts: Layouts<'ctx>,
    pub(crate) functions: ArenaMap<FuncId, FunctionValue<'ctx>>,
    /// The frame and frame functions of every async function (`frames.rs`).
    pub(crate) frames: ArenaMap<FuncId, frames::Frame<'ctx>>,
    /// The task descriptor of every function the module spawns (`tasks.rs`).
    pub(crate) tasks: ArenaMap<FuncId, PointerValue<'ctx>>,
    /// The descriptors of the module's actor states and handlers (`actors.rs`).
    pub(crate) actors: actors::ActorDescs<'ctx>,
    /// Runtime functions declared so far, by C name.
    pub(crate) runtime: RefCell<HashMap<&'static str, FunctionValue<'ctx>>>,
    /// Drop and clone glue functions declared so far, and those whose bodies are still to emit.
    pub(crate) glue: RefCell<glue::GlueTable<'ctx>>,
    /// Layout descriptors for JSON, declared so far.
    pub(crate) descriptors: RefCell<descriptors::DescriptorTable<'ctx>>,
    /// String literal globals, by content, so equal literals share one constant.
    pub(crate) strings: RefCell<HashMap<String, inkwell::values::GlobalValue<'ctx>>>,
    /// What the module is emitted for.
    pub(crate) entry: Entry,
    /// The service's OpenAPI document ([`Options::openapi`]).
    pub(crate) openapi: Option<&'m str>,
}

impl<'ctx> Cx<'ctx, '_> {
    /// An enum attribute such as `nounwind` or `noalias`.
    pub(crate) fn attribute(&self, name: &str, value: u64) -> Attribute {
        self.context.create_enum_attribute(Attribute::get_named_enum_kind_id(name), value)
    }

    /// Calls `callee` (a function or a function pointer) with `args` and gives its result; `what`
    /// names the callee in the internal error for one that returns nothing.
    pub(crate) fn call_value<F>(
        &self,
        callee: F,
        args: &[inkwell::values::BasicMetadataValueEnum<'ctx>],
        what: &str,
    ) -> Result<inkwell::values::BasicValueEnum<'ctx>, Error>
    where
        F: Into<inkwell::values::CallableValue<'ctx>>,
    {
        self.builder
            .build_call(callee, args, what)?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| Error::internal(format!("{what} returns nothing")))
    }

    /// Marks `f` as never unwinding: traps end the process inside the runtime instead.
    pub(crate) fn nounwind(&self, f: FunctionValue<'ctx>) {
        f.add_attribute(AttributeLoc::Function, self.attribute("nounwind", 0));
    }
}

/// What the module is emitted for: its entry point.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// An executable: the C `main` (a program's or a service's), or a library of exported
    /// functions when [`Options::export`] names some.
    Native,
    /// Run in this process by LLVM's JIT (`jit.rs`): `nagi.jit.main` runs `main` under the trap
    /// guard, and the stack limit is an ordinary global (the JIT runs code on one thread).
    Jit,
}

fn compile<R>(
    module: &Module,
    options: &Options,
    program: bool,
    entry: Entry,
    phase: &mut dyn FnMut(&str),
    finish: impl FnOnce(&inkwell::module::Module<'_>, &TargetMachine) -> Result<R, Error>,
) -> Result<R, Diagnostic> {
    check_supported(module, options, program)?;
    let machine = target_machine(options).map_err(|e| e.0)?;
    let context = Context::create();
    let result = (|| {
        let llmod = generate(&context, module, &machine, options, entry)?;
        phase("llvm codegen");
        optimize(&llmod, &machine, options.opt_level)?;
        phase("llvm optimize");
        finish(&llmod, &machine)
    })();
    result.map_err(|e| e.0)
}

/// The target machine for the host triple and the requested CPU.
fn target_machine(options: &Options) -> Result<TargetMachine, Error> {
    Target::initialize_native(&InitializationConfig::default())
        .map_err(|e| Error::internal(format!("LLVM has no code generator for this machine: {e}")))?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| Error::internal(format!("unknown target triple: {e}")))?;
    let (cpu, features) = if options.target_cpu == "native" {
        (TargetMachine::get_host_cpu_name().to_string(), TargetMachine::get_host_cpu_features().to_string())
    } else {
        (options.target_cpu.clone(), String::new())
    };
    let level = match options.opt_level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    };
    // Position-independent code: the system C compiler links position-independent executables
    // by default.
    target.create_target_machine(&triple, &cpu, &features, level, RelocMode::PIC, CodeModel::Default).ok_or_else(|| {
        Error(Diagnostic::new("M105", format!("LLVM cannot generate code for CPU `{cpu}` on {}", triple)))
    })
}

/// Refuses what cannot be emitted, naming it: an export that names no function, and a
/// program with nothing to run.
fn check_supported(module: &Module, options: &Options, program: bool) -> Result<(), Diagnostic> {
    for export in &options.export {
        if module.function_by_name(&export.function).is_none() {
            return Err(Diagnostic::new(
                "M106",
                format!("cannot export `{}`: module `{}` has no such function", export.function, module.name),
            ));
        }
    }
    if program && module.function_by_name("main").is_none() && !module.is_service() {
        return Err(Diagnostic::new(
            "M100",
            format!("module `{}` has nothing to run: it has neither a `main` function nor routes", module.name),
        ));
    }
    Ok(())
}

/// Builds the LLVM module: declarations, bodies, glue, the C entry point (unless functions are
/// exported: then the object is a library); then LLVM's verifier.
fn generate<'ctx>(
    context: &'ctx Context,
    low: &Module,
    machine: &TargetMachine,
    options: &Options,
    entry: Entry,
) -> Result<inkwell::module::Module<'ctx>, Error> {
    let export = &options.export;
    let llmod = context.create_module(&low.name);
    llmod.set_triple(&machine.get_triple());
    llmod.set_data_layout(&machine.get_target_data().get_data_layout());
    let layouts = Layouts::new(context, low, machine.get_target_data())?;
    let mut cx = Cx {
        low,
        context,
        module: llmod,
        builder: context.create_builder(),
        layouts,
        functions: ArenaMap::default(),
        frames: ArenaMap::default(),
        tasks: ArenaMap::default(),
        actors: actors::ActorDescs::default(),
        runtime: RefCell::new(HashMap::new()),
        glue: RefCell::new(glue::GlueTable::default()),
        descriptors: RefCell::new(descriptors::DescriptorTable::default()),
        strings: RefCell::new(HashMap::new()),
        entry,
        openapi: options.openapi.as_deref(),
    };
    for (id, func) in low.functions.iter() {
        if func.is_async {
            let frame = frames::declare(&cx, id, func)?;
            cx.functions.insert(id, frame.poll);
            cx.frames.insert(id, frame);
        } else {
            let symbol = export.iter().find(|e| e.function == func.name).map(|e| e.symbol.as_str());
            let f = function::declare(&cx, func, symbol);
            cx.functions.insert(id, f);
        }
    }
    cx.tasks = tasks::declare(&cx)?;
    cx.actors = actors::declare(&cx)?;
    let recursive = nagi_low::recursion::recursive_functions(low);
    for (id, func) in low.functions.iter() {
        function::define(&cx, id, func, recursive.contains(&id))?;
    }
    // The entry may ask for glue and descriptors (a service's routes do), so it comes first.
    if entry == Entry::Jit {
        jit::entry_point(&cx)?;
    } else if export.is_empty() && low.is_service() {
        service::emit(&cx)?;
    } else if export.is_empty() && low.function_by_name("main").is_some() {
        entry_point(&cx)?;
    }
    glue::emit_pending(&cx)?;
    descriptors::emit_pending(&cx)?;
    cx.module.verify().map_err(|e| Error::internal(format!("LLVM rejected the generated module: {e}")))?;
    Ok(cx.module)
}

/// `int main(int argc, char **argv)`: hands Nagi's `main` to the runtime, which starts it,
/// flushes stdout and gives the exit status. An async `main` goes to the runtime with the
/// module's tables instead (`service::database_main`).
fn entry_point(cx: &Cx<'_, '_>) -> Result<(), Error> {
    let main_id = cx.low.function_by_name("main").ok_or_else(|| Error::internal("no main"))?;
    if let Some(frame) = cx.frames.get(main_id) {
        return service::database_main(cx, frame);
    }
    let nagi_main = cx.functions[main_id];
    let i32t = cx.context.i32_type();
    let argv = cx.layouts.byte_ptr().ptr_type(inkwell::AddressSpace::default());
    let params: [BasicMetadataTypeEnum; 2] = [i32t.into(), argv.into()];
    let c_main = cx.module.add_function("main", i32t.fn_type(&params, false), Some(Linkage::External));
    cx.nounwind(c_main);
    let entry = cx.context.append_basic_block(c_main, "entry");
    cx.builder.position_at_end(entry);
    config::declare(cx)?;
    let start = runtime_calls::declare(cx, runtime_calls::Rt::Main)?;
    let pointer = nagi_main.as_global_value().as_pointer_value();
    let status = cx.builder.build_call(start, &[pointer.into()], "status")?;
    let status = status.try_as_basic_value().basic().ok_or_else(|| Error::internal("nagi_rt_main returns nothing"))?;
    cx.builder.build_return(Some(&status))?;
    Ok(())
}

/// Runs LLVM's standard pipeline for `level` with the vectorizers on from `-O2`, as rustc and
/// clang do.
fn optimize(llmod: &inkwell::module::Module<'_>, machine: &TargetMachine, level: u8) -> Result<(), Error> {
    let options = PassBuilderOptions::create();
    let vectorize = level >= 2;
    options.set_loop_vectorization(vectorize);
    options.set_loop_slp_vectorization(vectorize);
    options.set_loop_interleaving(vectorize);
    options.set_loop_unrolling(level >= 2);
    llmod
        .run_passes(&format!("default<O{}>", level.min(3)), machine, options)
        .map_err(|e| Error::internal(format!("LLVM's optimizer failed: {e}")))
}

/// The LLVM type of a function's result: `void` for `unit`.
pub(crate) fn fn_type<'ctx>(
    layouts: &Layouts<'ctx>,
    context: &'ctx Context,
    params: &[BasicMetadataTypeEnum<'ctx>],
    ret: &Type,
) -> inkwell::types::FunctionType<'ctx> {
    match ret {
        Type::Unit => context.void_type().fn_type(params, false),
        other => layouts.llvm(other).fn_type(params, false),
    }
}
