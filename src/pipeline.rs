//! The front half every compiling command shares, written once: load the input (High or Low,
//! with `--replace`), which leaves a verified Low module, then run the pass pipeline, timing
//! both with the command's one [`Timer`]. What follows is the command's own: print, report
//! costs, or hand the module to a backend.

use std::path::{Path, PathBuf};

use nagi_low::{Module, SourceMap};
use nagi_passes::manager::Pipeline;

use crate::failure::Failure;
use crate::load::load;
use crate::passes::{self, PassOptions};
use crate::timer::Timer;

/// What the front half is asked to do, from the command line.
pub(crate) struct FrontEnd<'a> {
    /// Low files whose functions replace the input's (`--replace`).
    pub(crate) replace: &'a [PathBuf],
    /// The pass flags (`-O…`, `--passes`, `--print-low-after`, …).
    pub(crate) passes: &'a PassOptions,
    /// Whether the timer prints (`--timings`).
    pub(crate) timings: bool,
}

/// A module through the front half.
pub(crate) struct Compiled {
    /// Verified, and optimized by `pipeline`.
    pub(crate) module: Module,
    /// The input's spans and comments; empty once a pass ran, since they no longer match.
    pub(crate) source: SourceMap,
    /// The service's OpenAPI document (compact JSON), for its binary to serve; `None` for a
    /// program without routes and for Low input.
    pub(crate) openapi: Option<String>,
    /// The passes that ran (empty for none).
    pub(crate) pipeline: Pipeline,
    /// The command's timer, for the phases still to come.
    pub(crate) timer: Timer,
}

/// Loads `input` and runs the pipeline the flags ask for (`default` when they name none),
/// timing the phases "front end" and, when any pass ran, "passes".
pub(crate) fn compile(input: &Path, front: &FrontEnd, default: passes::Default) -> Result<Compiled, Failure> {
    let mut timer = Timer::new(front.timings);
    let mut loaded = load(input, front.replace)?;
    timer.phase("front end");
    let pipeline = passes::optimize(&mut loaded.module, front.passes, default, |pass, elapsed, verify| {
        timer.pass(pass, elapsed, verify)
    })?;
    if !pipeline.is_empty() {
        loaded.source = SourceMap::default();
        timer.phase("passes");
    }
    Ok(Compiled { module: loaded.module, source: loaded.source, openapi: loaded.openapi, pipeline, timer })
}
