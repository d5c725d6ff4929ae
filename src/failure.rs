//! How a command fails: `Failure` (why, and the exit status that gives) and `report`, which
//! prints diagnostics to stderr before the command gives up.

use std::process::ExitCode;

use nagi_low::Diagnostic;

/// Why a command failed; its diagnostics are already printed.
pub(crate) enum Failure {
    /// The input had errors, or could not be read or written.
    Input,
    /// The command line was incomplete.
    Usage,
    /// A program that `nagic run` started exited with this status.
    Exit(u8),
}

impl Failure {
    /// The exit status: 1 for input errors, 2 for usage errors (clap's convention), and a
    /// status of its own otherwise.
    pub(crate) fn exit_code(&self) -> ExitCode {
        match self {
            Failure::Input => ExitCode::from(1),
            Failure::Usage => ExitCode::from(2),
            Failure::Exit(code) => ExitCode::from(*code),
        }
    }
}

/// Prints every diagnostic against `file` (whose text is `source`; empty when the spans do not
/// point into a text) to stderr, and fails with an input error.
pub(crate) fn report(diagnostics: &[Diagnostic], file: &str, source: &str) -> Failure {
    eprint!("{}", nagi_low::diagnostic::render_all(diagnostics, file, source));
    Failure::Input
}
