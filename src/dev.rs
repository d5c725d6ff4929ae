//! `nagic dev FILE|DIR [-- ARGS]`: builds and runs a service, watches its files, and on every
//! save builds it again and replaces the running process without refusing a request.
//!
//! Each build is the LLVM emitter's at `-O0` (the fastest build that serves; mold links it when
//! installed, `llvm_link.rs`), into a fresh executable (the running one is never overwritten).
//! Every process listens with `--reuse-port` on the one address the arguments give, with the one
//! database: the new process binds beside the old one, and once it logs that it listens, the old
//! one gets SIGTERM and drains (`--drain-ms`, docs/http.md "Several processes behind one port").
//! A build that fails prints the compiler's diagnostics and the old process keeps serving; so
//! does a new process that stops before it listens. Ctrl-C (or SIGTERM) stops everything.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use crate::backend::Backend;
use crate::commands::build_into;
use crate::failure::Failure;
use crate::pipeline::FrontEnd;
use crate::runtime_lib::checkout;
use crate::target::Target;

/// How long a replaced process keeps accepting (`--drain-ms`) unless the arguments say.
const DRAIN_MS: &str = "200";

/// What the loop waits for.
enum Event {
    /// A `.nagi` file under the watched directory changed.
    Changed,
    /// A process's log said it listens (its id).
    Listening(u32),
    /// Ctrl-C or SIGTERM.
    Stop,
}

/// `nagic dev`.
pub(crate) fn dev(input: &Path, args: &[String], front: &FrontEnd, target: &Target) -> Result<(), Failure> {
    let program = program_of(input)?;
    let name = program.file_stem().and_then(|s| s.to_str()).unwrap_or("app").to_string();
    let dir = checkout().join("target/nagic-dev").join(&name);
    std::fs::create_dir_all(&dir).map_err(|e| {
        eprintln!("{}: error: cannot create the build directory: {e}", dir.display());
        Failure::Input
    })?;
    // The service's `listening on` line (info) says when it has bound: a quieter log would
    // never say it.
    let quiet = |level: &str| matches!(level.to_ascii_lowercase().as_str(), "warn" | "error");
    let log_flag = args.iter().position(|a| a == "--log").and_then(|i| args.get(i + 1)).cloned();
    let log_flag = log_flag.or_else(|| args.iter().find_map(|a| a.strip_prefix("--log=").map(str::to_string)));
    if log_flag.or_else(|| std::env::var("NAGI_LOG").ok()).is_some_and(|level| quiet(&level)) {
        eprintln!(
            "nagic: error: nagic dev reads the service's info log (its `listening on` line) to know when a new build serves; use --log info, debug or trace"
        );
        return Err(Failure::Usage);
    }
    let mut args = args.to_vec();
    if !args.iter().any(|a| a == "--reuse-port") {
        args.push("--reuse-port".into());
    }
    // A replaced process answers (the old behaviour) while it drains: a short drain, so that
    // a save shows everywhere soon.
    if !args.iter().any(|a| a == "--drain-ms" || a.starts_with("--drain-ms=")) {
        args.extend(["--drain-ms".into(), DRAIN_MS.into()]);
    }
    let (sender, events) = mpsc::channel();
    let stop = sender.clone();
    ctrlc::set_handler(move || {
        let _ = stop.send(Event::Stop);
    })
    .map_err(|e| {
        eprintln!("nagic: error: cannot handle Ctrl-C: {e}");
        Failure::Input
    })?;
    let watched = program.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let _watcher = watch(&watched, sender.clone())?;
    let target = Target { llvm_opt: 0, ..*target };
    let mut session =
        Session { program, dir, args, front, target, sender, generation: 0, running: None, retiring: Vec::new() };
    // The first build must serve: there is nothing to keep serving when it fails.
    let first = session.start()?;
    match session.wait_listening(first, &events) {
        Ok(child) => session.running = Some(child),
        // Ctrl-C before the first process listened: it is stopped; so is this.
        Err(Failure::Usage) => return Ok(()),
        Err(failure) => return Err(failure),
    }
    eprintln!(
        "nagic: serving {}; watching {} for changes (Ctrl-C stops)",
        session.program.display(),
        watched.display()
    );
    session.serve(&events)
}

/// The running service and what it takes to build and start the next one.
struct Session<'a> {
    program: PathBuf,
    dir: PathBuf,
    args: Vec<String>,
    front: &'a FrontEnd<'a>,
    target: Target<'a>,
    sender: Sender<Event>,
    /// How many builds were made, naming each executable.
    generation: u32,
    running: Option<Child>,
    /// The replaced processes, draining, each reaped by a thread.
    retiring: Vec<std::thread::JoinHandle<()>>,
}

impl Session<'_> {
    /// Waits for changes and Ctrl-C, swapping the process after each good build.
    fn serve(&mut self, events: &Receiver<Event>) -> Result<(), Failure> {
        loop {
            match events.recv() {
                Ok(Event::Changed) => {
                    // Editors write a file in several steps: one rebuild for the burst (Ctrl-C
                    // meanwhile still stops).
                    loop {
                        match events.recv_timeout(Duration::from_millis(20)) {
                            Ok(Event::Changed | Event::Listening(_)) => {}
                            Ok(Event::Stop) => return self.shut_down(),
                            Err(_) => break,
                        }
                    }
                    let started = Instant::now();
                    let Ok(next) = self.start() else { continue };
                    match self.wait_listening(next, events) {
                        Ok(next) => {
                            if let Some(old) = self.running.replace(next) {
                                self.retiring.retain(|t| !t.is_finished());
                                self.retiring.push(retire(old));
                            }
                            eprintln!("nagic: rebuilt and swapped in {} ms", started.elapsed().as_millis());
                        }
                        Err(Failure::Usage) => return self.shut_down(),
                        Err(_) => eprintln!("nagic: the new build did not start; the previous one keeps serving"),
                    }
                }
                Ok(Event::Listening(_)) => {}
                Ok(Event::Stop) | Err(_) => return self.shut_down(),
            }
        }
    }

    /// Builds the program into a fresh executable and starts it; a build error is printed (by
    /// the compiler) and returned.
    fn start(&mut self) -> Result<Child, Failure> {
        self.generation += 1;
        let exe = self.dir.join(format!("app-{}", self.generation));
        build_into(&self.program, &exe, Backend::Llvm, self.front, &self.target)?;
        // Earlier executables are no longer needed once this one exists (a running process keeps
        // its own file open).
        for old in 1..self.generation.saturating_sub(1) {
            let _ = std::fs::remove_file(self.dir.join(format!("app-{old}")));
        }
        let mut child = Command::new(&exe).args(&self.args).stdout(Stdio::piped()).spawn().map_err(|e| {
            eprintln!("{}: error: cannot start the service: {e}", exe.display());
            Failure::Input
        })?;
        let id = child.id();
        let stdout = child.stdout.take();
        let sender = self.sender.clone();
        // The process's log goes on to this one's standard output; its `listening on` line says
        // that it has bound its port.
        std::thread::spawn(move || {
            let Some(stdout) = stdout else { return };
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                println!("{line}");
                if line.contains(" listening on ") {
                    let _ = sender.send(Event::Listening(id));
                }
            }
        });
        Ok(child)
    }

    /// Waits until `child` listens; `Err(Input)` when it stops first, `Err(Usage)` on Ctrl-C.
    fn wait_listening(&mut self, mut child: Child, events: &Receiver<Event>) -> Result<Child, Failure> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut changed = false;
        loop {
            match events.recv_timeout(Duration::from_millis(20)) {
                Ok(Event::Listening(id)) if id == child.id() => {
                    if changed {
                        // A save while this build started: build again once it serves.
                        let _ = self.sender.send(Event::Changed);
                    }
                    return Ok(child);
                }
                Ok(Event::Stop) => {
                    stop_and_wait(child);
                    let _ = self.shut_down();
                    return Err(Failure::Usage);
                }
                Ok(Event::Changed) => changed = true,
                Ok(Event::Listening(_)) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Failure::Input),
            }
            if child.try_wait().ok().flatten().is_some() || Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                if changed {
                    // A save while this one failed to start: it may be the fix.
                    let _ = self.sender.send(Event::Changed);
                }
                return Err(Failure::Input);
            }
        }
    }

    /// Stops the running process and waits for it and for the replaced ones still draining, so
    /// that nothing listens once this returns.
    fn shut_down(&mut self) -> Result<(), Failure> {
        if let Some(child) = self.running.take() {
            stop_and_wait(child);
        }
        for reaper in self.retiring.drain(..) {
            let _ = reaper.join();
        }
        Ok(())
    }
}

/// SIGTERM to `child` (it drains, then exits), and a thread that reaps it.
fn retire(child: Child) -> std::thread::JoinHandle<()> {
    terminate(&child);
    std::thread::spawn(move || {
        let mut child = child;
        let _ = child.wait();
    })
}

/// SIGTERM to `child`, and its exit waited for.
fn stop_and_wait(mut child: Child) {
    terminate(&child);
    let _ = child.wait();
}

/// Sends SIGTERM: the service's graceful shutdown.
fn terminate(child: &Child) {
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
}

/// Watches `dir` (and below) for changes of `.nagi` files.
fn watch(dir: &Path, sender: Sender<Event>) -> Result<notify::RecommendedWatcher, Failure> {
    use notify::Watcher;
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        let relevant = matches!(
            event.kind,
            notify::EventKind::Create(_) | notify::EventKind::Modify(_) | notify::EventKind::Remove(_)
        ) && event.paths.iter().any(|p| p.extension().is_some_and(|e| e == "nagi"));
        if relevant {
            let _ = sender.send(Event::Changed);
        }
    })
    .map_err(|e| {
        eprintln!("nagic: error: cannot watch {}: {e}", dir.display());
        Failure::Input
    })?;
    watcher.watch(dir, notify::RecursiveMode::Recursive).map_err(|e| {
        eprintln!("nagic: error: cannot watch {}: {e}", dir.display());
        Failure::Input
    })?;
    Ok(watcher)
}

/// The program `input` names: the file, or the one program (a `.nagi` file no other imports)
/// of a directory.
fn program_of(input: &Path) -> Result<PathBuf, Failure> {
    if !input.is_dir() {
        return Ok(input.to_path_buf());
    }
    let programs = crate::testing::roots(input);
    match programs.as_slice() {
        [one] => Ok(one.clone()),
        [] => {
            eprintln!("{}: error: no .nagi program in this directory", input.display());
            Err(Failure::Input)
        }
        many => {
            let names: Vec<String> = many.iter().map(|p| p.display().to_string()).collect();
            eprintln!("{}: error: several programs here ({}); name one", input.display(), names.join(", "));
            Err(Failure::Input)
        }
    }
}
