//! `nagic`, the Nagi compiler driver: the command line (clap) and its dispatch to [`commands`].
//!
//! The driver is thin (ARCHITECTURE.md): it reads files, calls the compiler crates, writes outputs and
//! diagnostics, and chooses the exit status. Exit status 0 means success, 1 means the input had
//! errors (all of them are printed), 2 means the command line was wrong (clap's convention).
//! A build runs [`pipeline`] ([`load`], then [`passes`]), then a [`backend`]; no module imports
//! this one.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod api;
mod backend;
mod commands;
mod configuration;
mod dev;
mod failure;
mod fmt;
mod importers;
mod interp;
mod jit;
mod llvm_link;
mod load;
mod lsp;
mod new;
mod output;
mod passes;
mod pipeline;
mod runtime_lib;
mod rust_build;
mod target;
mod testing;
mod timer;

use crate::backend::Backend;
use crate::commands::Emit;
use crate::failure::Failure;
use crate::pipeline::FrontEnd;
use crate::target::Target;

/// The Nagi compiler.
#[derive(Parser, Debug)]
#[command(name = "nagic", version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// What to write for the input file.
    #[arg(long, value_enum, value_name = "KIND")]
    emit: Option<Emit>,
    /// Where to write it (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "PATH", requires = "emit")]
    output: Option<PathBuf>,
    /// The input file: High Nagi (`.nagi`) or Low text (`.low`).
    #[arg(value_name = "FILE", requires = "emit")]
    input: Option<PathBuf>,
    /// List the optimization passes and the default pipeline, and exit.
    #[arg(long)]
    list_passes: bool,
    #[command(flatten)]
    options: Options,
}

/// Options shared by the commands that compile.
#[derive(clap::Args, Debug, Clone, Default)]
struct Options {
    /// A Low file whose functions replace the lowered functions of the same name (repeatable).
    #[arg(long = "replace", value_name = "FILE.low", global = true)]
    replace: Vec<PathBuf>,
    /// Print how long each phase (and each pass) took, to stderr.
    #[arg(long, global = true)]
    timings: bool,
    #[command(flatten)]
    passes: passes::PassOptions,
    /// The CPU to generate code for, on both backends (LLVM's `--target-cpu`, rustc's
    /// `-C target-cpu`): a level such as `x86-64-v2` or `x86-64-v3`, a CPU name, or `native`.
    #[arg(long, value_name = "CPU", global = true, default_value = nagi_emit_llvm::DEFAULT_TARGET_CPU)]
    target_cpu: String,
    /// LLVM's optimization level for `--backend=llvm` and `--emit=llvm` (the new pass manager's
    /// `default<ON>` pipeline); `-O` chooses the Low passes.
    #[arg(long, value_name = "N", global = true, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=3))]
    llvm_opt: u8,
    /// The interpreter's call-depth limit for `--backend=interp`: a call deeper than N frames
    /// is the trap `stack overflow`.
    #[arg(long, value_name = "N", global = true, default_value_t = nagi_interp::DEFAULT_MAX_FRAMES)]
    max_frames: usize,
    /// How `build` and `run` link an executable's C library, on both backends.
    #[arg(long, value_enum, value_name = "HOW", global = true, default_value = "static")]
    link: target::Link,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and verify files; print every diagnostic and exit 1 if any file has errors.
    Check {
        /// Input files: High Nagi (`.nagi`) or Low text (`.low`).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Compile a program or service to a native executable (through the Rust emitter by default).
    Build {
        /// The input file: High Nagi (`.nagi`) or Low text (`.low`).
        #[arg(value_name = "FILE")]
        input: PathBuf,
        /// The executable to write (default: the input's name without extension).
        #[arg(short = 'o', long = "output", value_name = "PATH")]
        output: Option<PathBuf>,
        /// The code generator.
        #[arg(long, value_enum, default_value = "rust")]
        backend: Backend,
    },
    /// Build every program's tests (`test "name" { … }`) and run each in a process of its own,
    /// reporting as cargo does; exit 1 if any fails.
    Test {
        /// Programs (`.nagi`), or directories whose programs are their `.nagi` files that no
        /// other one imports (default: the current directory).
        #[arg(value_name = "FILE|DIR")]
        inputs: Vec<PathBuf>,
        /// The code generator.
        #[arg(long, value_enum, default_value = "rust")]
        backend: Backend,
    },
    /// Rewrite High Nagi files in the canonical layout (docs/language.md §2.8); directories are
    /// walked for `.nagi` files.
    Fmt {
        /// Change nothing: list the files that are not formatted, and exit 1 if there are any.
        #[arg(long)]
        check: bool,
        /// Files and directories (default: the current directory).
        #[arg(value_name = "FILE|DIR")]
        inputs: Vec<PathBuf>,
    },
    /// Build and serve a service, and on every save of its files build it again and swap the
    /// running process without refusing a request (LLVM at -O0; `--reuse-port`). Arguments after
    /// `--` go to the service (e.g. `--listen`, `--db`).
    Dev {
        /// The service (`.nagi`), or a directory holding one program (default: the current
        /// directory).
        #[arg(value_name = "FILE|DIR", default_value = ".")]
        input: PathBuf,
        /// Arguments for the service.
        #[arg(last = true, value_name = "ARGS")]
        args: Vec<String>,
    },
    /// Create a starter service in the directory NAME (a table, CRUD routes, tests, a README).
    New {
        /// The service's name and directory (lower case, digits and `_`).
        #[arg(value_name = "NAME")]
        name: PathBuf,
    },
    /// Serve the editor: the language server, over stdio (diagnostics, hover, go to definition,
    /// references, completion, document symbols, formatting, rename).
    Lsp,
    /// Write the OpenAPI 3.1 document of a service: its routes, parameters, bodies, results and
    /// error answers, from its source (no annotation needed).
    Openapi {
        /// The service (`.nagi`).
        #[arg(value_name = "FILE")]
        input: PathBuf,
        /// Where to write it (default: standard output).
        #[arg(short = 'o', long = "output", value_name = "PATH")]
        output: Option<PathBuf>,
    },
    /// Write a typed client of a service: one function per route, its classes as types.
    Client {
        /// The client's language.
        #[arg(long, value_enum, default_value = "ts")]
        lang: api::Lang,
        /// The service (`.nagi`).
        #[arg(value_name = "FILE")]
        input: PathBuf,
        /// Where to write it (default: standard output).
        #[arg(short = 'o', long = "output", value_name = "PATH")]
        output: Option<PathBuf>,
    },
    /// Build and run (or, with `--backend=interp`, interpret); arguments after `--` go to the
    /// program (e.g. a service's `--listen`).
    Run {
        /// The input file: High Nagi (`.nagi`) or Low text (`.low`).
        #[arg(value_name = "FILE")]
        input: PathBuf,
        /// Arguments for the program.
        #[arg(last = true, value_name = "ARGS")]
        args: Vec<String>,
        /// The code generator.
        #[arg(long, value_enum, default_value = "rust")]
        backend: Backend,
    },
}

/// The compiler walks nested syntax recursively; a large stack keeps deeply nested input (a
/// generated file, a fuzzer's) from overflowing it, as rustc does with its own big stack.
const COMPILER_STACK_BYTES: usize = 256 * 1024 * 1024;

fn main() -> ExitCode {
    let worker = std::thread::Builder::new().name("nagic".into()).stack_size(COMPILER_STACK_BYTES).spawn(run);
    match worker.map(|handle| handle.join()) {
        Ok(Ok(code)) => code,
        _ => {
            eprintln!("nagic: internal compiler error: the compiler thread failed; please report this with the input");
            ExitCode::from(101)
        }
    }
}

fn run() -> ExitCode {
    let cli = Cli::parse_from(passes::normalize_args(std::env::args_os()));
    if cli.list_passes {
        print!("{}", passes::list_passes());
        return ExitCode::SUCCESS;
    }
    let options = &cli.options;
    let front = FrontEnd { replace: &options.replace, passes: &options.passes, timings: options.timings };
    let target = Target {
        cpu: &options.target_cpu,
        llvm_opt: options.llvm_opt,
        max_frames: options.max_frames,
        link: options.link,
    };
    let result = match (&cli.command, cli.emit, &cli.input) {
        (Some(Command::Check { files }), _, _) => commands::check(files, &options.replace),
        (Some(Command::Build { input, output, backend }), _, _) => {
            commands::build(input, output.as_deref(), *backend, &front, &target)
        }
        (Some(Command::Run { input, args, backend }), _, _) => commands::run(input, args, *backend, &front, &target),
        (Some(Command::Test { inputs, backend }), _, _) => {
            let inputs = if inputs.is_empty() { vec![PathBuf::from(".")] } else { inputs.clone() };
            testing::test(&inputs, *backend, &options.passes, &target)
        }
        (Some(Command::Fmt { check, inputs }), _, _) => {
            let inputs = if inputs.is_empty() { vec![PathBuf::from(".")] } else { inputs.clone() };
            fmt::fmt(&inputs, *check)
        }
        (Some(Command::Lsp), _, _) => lsp::serve(),
        (Some(Command::Dev { input, args }), _, _) => dev::dev(input, args, &front, &target),
        (Some(Command::New { name }), _, _) => new::new(name),
        (Some(Command::Openapi { input, output }), _, _) => api::openapi(input, output.as_deref()),
        (Some(Command::Client { lang, input, output }), _, _) => api::client(*lang, input, output.as_deref()),
        (None, Some(emit), Some(input)) => commands::emit(emit, input, cli.output.as_deref(), &front, &target),
        _ => {
            eprintln!("nagic: nothing to do; try `nagic check FILE` or `nagic --emit=low FILE` (see `nagic --help`)");
            Err(Failure::Usage)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit_code(),
    }
}
