//! `nagic`, the Nagi compiler driver: command-line parsing and pipeline wiring.
//!
//! The driver is thin (DESIGN.md): it reads files, calls the compiler crates, writes outputs and
//! diagnostics, and chooses the exit status. Exit status 0 means success, 1 means the input had
//! errors (all of them are printed), 2 means the command line was wrong (clap's convention).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use nagi_low::{Diagnostic, Module, SourceMap};

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
    /// The input file: Low text (`.low`).
    #[arg(value_name = "FILE", requires = "emit")]
    input: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and verify files; print every diagnostic and exit 1 if any file has errors.
    Check {
        /// Input files: Low text (`.low`).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

/// Output kinds for `--emit`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Emit {
    /// Canonical Low text, comments kept.
    Low,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match (&cli.command, cli.emit, &cli.input) {
        (Some(Command::Check { files }), _, _) => check(files),
        (None, Some(emit), Some(input)) => emit_file(emit, input, cli.output.as_deref()),
        _ => {
            eprintln!("nagic: nothing to do; try `nagic check FILE` or `nagic --emit=low FILE` (see `nagic --help`)");
            Err(Failure::Usage)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input) => ExitCode::from(1),
        Err(Failure::Usage) => ExitCode::from(2),
    }
}

/// Why a command failed; its diagnostics are already printed.
enum Failure {
    /// The input had errors, or could not be read or written.
    Input,
    /// The command line was incomplete.
    Usage,
}

/// A Low module read from a file, with what is needed to report on it.
struct Loaded {
    module: Module,
    source: SourceMap,
}

/// Reads, parses and verifies one Low file, printing every diagnostic to stderr.
fn load(path: &Path) -> Result<Loaded, Failure> {
    let name = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("{name}: error: cannot read the file: {e}");
            return Err(Failure::Input);
        }
    };
    match path.extension().and_then(|e| e.to_str()) {
        Some("low") => {}
        Some("nagi") => {
            eprintln!("{name}: error: High Nagi (`.nagi`) input is not supported by this nagic yet; give a `.low` file");
            return Err(Failure::Input);
        }
        _ => {
            eprintln!("{name}: error: unknown input kind; nagic reads Low text from files ending in `.low`");
            return Err(Failure::Input);
        }
    }
    let report = |diagnostics: &[Diagnostic]| eprint!("{}", nagi_low::diagnostic::render_all(diagnostics, &name, &text));
    let (module, source) = nagi_low::parse(&text).map_err(|d| {
        report(std::slice::from_ref(&d));
        Failure::Input
    })?;
    if let Err(diagnostics) = nagi_low::verifier::verify(&module, Some(&source)) {
        report(&diagnostics);
        return Err(Failure::Input);
    }
    Ok(Loaded { module, source })
}

fn check(files: &[PathBuf]) -> Result<(), Failure> {
    let mut failed = false;
    for file in files {
        failed |= load(file).is_err();
    }
    if failed { Err(Failure::Input) } else { Ok(()) }
}

fn emit_file(emit: Emit, input: &Path, output: Option<&Path>) -> Result<(), Failure> {
    let loaded = load(input)?;
    let text = match emit {
        Emit::Low => nagi_low::print_module(&loaded.module, Some(&loaded.source)),
    };
    write_output(output, &text)
}

/// Writes `text` to `path`, or to stdout when there is none.
fn write_output(path: Option<&Path>, text: &str) -> Result<(), Failure> {
    match path {
        None => {
            print!("{text}");
            Ok(())
        }
        Some(path) => std::fs::write(path, text).map_err(|e| {
            eprintln!("{}: error: cannot write the file: {e}", path.display());
            Failure::Input
        }),
    }
}
