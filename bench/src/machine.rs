//! The machine a run measured: CPU model, cores, governor, kernel, toolchains, and whether the
//! run was pinned. Recorded in the results (`machine.json`) and as one line in the report.

use std::path::Path;
use std::process::Command;

use serde_json::json;

/// What is known about the machine and the tools.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: String,
    /// The host CPU as rustc's LLVM names it (`rustc --print target-cpus`: "native").
    pub native_cpu: String,
    /// Logical CPUs this process may run on.
    pub cores: usize,
    /// The cpufreq governor of CPU 0, when readable.
    pub governor: Option<String>,
    /// `uname -r`.
    pub kernel: String,
    /// `rustc -V`.
    pub rustc: String,
    /// The LLVM the LLVM emitter links (`llvm-config-14 --version`).
    pub llvm: String,
    /// The host CPU as that LLVM names it (`llc --version`: "Host CPU"); with `native` the
    /// emitter passes this name and the host's feature list.
    pub llvm_native_cpu: String,
    /// `python3 -V`, when there is a python3.
    pub python: Option<String>,
    /// `node -v`, when there is a node.
    pub node: Option<String>,
    /// The pinning command, e.g. `taskset -c 0`, when the platform allows pinning.
    pub pinned: Option<String>,
    /// Load average when the run started (the machine is shared).
    pub load: String,
}

/// The first line of a command's stdout (or stderr, where older tools print their version).
pub fn command_line(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = if output.stdout.is_empty() { output.stderr } else { output.stdout };
    String::from_utf8_lossy(&text).lines().next().map(|l| l.trim().to_string())
}

/// "Host CPU" from the `llc --version` of the LLVM that `llvm-config-14` describes.
fn llvm_host_cpu() -> Option<String> {
    let bindir = command_line("llvm-config-14", &["--bindir"])?;
    let output = Command::new(Path::new(&bindir).join("llc")).arg("--version").output().ok()?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.trim().strip_prefix("Host CPU:").map(|c| c.trim().to_string()))
}

impl Machine {
    /// Looks at this machine; `pinned` is the pinning prefix the run uses, if any.
    pub fn detect(pinned: Option<&str>) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim()))
            .unwrap_or("unknown")
            .to_string();
        let native_cpu = Command::new("rustc")
            .args(["--print", "target-cpus"])
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .find(|l| l.trim_start().starts_with("native"))
                    .and_then(|l| l.split("currently ").nth(1).map(|s| s.trim_end_matches(&[')', '.'][..]).to_string()))
            })
            .unwrap_or_else(|| "unknown".into());
        let governor = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
            .ok()
            .map(|s| s.trim().to_string());
        Machine {
            cpu_model,
            native_cpu,
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            governor,
            kernel: command_line("uname", &["-r"]).unwrap_or_default(),
            rustc: command_line("rustc", &["-V"]).unwrap_or_default(),
            llvm: command_line("llvm-config-14", &["--version"]).map(|v| format!("LLVM {v}")).unwrap_or_default(),
            llvm_native_cpu: llvm_host_cpu().unwrap_or_else(|| "unknown".into()),
            python: command_line("python3", &["-V"]),
            node: command_line("node", &["-v"]).map(|v| format!("Node {v}")),
            pinned: pinned.map(str::to_string),
            load: std::fs::read_to_string("/proc/loadavg")
                .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
        }
    }

    /// The machine as one line of text, for the report.
    pub fn line(&self) -> String {
        let mut parts = vec![
            format!("{} (rustc's `native` = {})", self.cpu_model, self.native_cpu),
            format!("{} logical CPUs", self.cores),
            format!("governor {}", self.governor.as_deref().unwrap_or("not readable")),
            format!("Linux {}", self.kernel),
            self.rustc.clone(),
            format!(
                "nagi-emit-llvm on {} (its `native` = {} with the host's features)",
                self.llvm, self.llvm_native_cpu
            ),
        ];
        parts.extend(self.python.clone());
        parts.extend(self.node.clone());
        parts.push(match &self.pinned {
            Some(p) => format!("pinned with `{p}`"),
            None => "not pinned (no taskset)".into(),
        });
        parts.push(format!("load average at start {}", self.load));
        parts.join("; ")
    }

    /// The machine as JSON, for `machine.json`.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "cpu_model": self.cpu_model, "native_cpu": self.native_cpu, "cores": self.cores,
            "governor": self.governor, "kernel": self.kernel, "rustc": self.rustc, "llvm": self.llvm, "llvm_native_cpu": self.llvm_native_cpu,
            "python": self.python, "node": self.node, "pinned": self.pinned, "load": self.load,
        })
    }
}
