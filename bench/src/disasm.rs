//! Disassembly of the native variants: for each variant and kernel, the machine code of the
//! function the bench calls, and whether `integer_sum` adds packed integers (`paddq`/`vpaddq`,
//! i.e. the loop was vectorized).
//!
//! The functions are found by (demangled) symbol in the bench executable of one CPU level (the
//! one `nagi-bench kernels` built): the hand-written Rust as
//! `nagi_bench_native::handwritten::NAME`, the Rust emitter's as
//! `nagi_bench_native::emitted::rust::program::NAME`, the LLVM emitter's as the exported
//! `nagi_o2_NAME` / `nagi_o3_NAME`. It uses binutils' `nm -C` and `objdump -C
//! --disassemble=SYMBOL`.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;
use std::process::Command;

use crate::kernels::Kernel;

/// The native variants, in report order.
pub const NATIVE_VARIANTS: [&str; 4] = ["rust", "nagi-rust", "nagi-llvm-O2", "nagi-llvm-O3"];

/// One function's disassembly and what was counted in it.
#[derive(Clone, Debug)]
pub struct Function {
    /// The variant.
    pub variant: &'static str,
    /// The kernel.
    pub kernel: Kernel,
    /// The (demangled) symbol.
    pub symbol: String,
    /// The instructions, one per line, as objdump prints them (without addresses).
    pub instructions: Vec<String>,
    /// Another symbol at the same address, when the linker folded two functions of identical
    /// code into one (objdump then lists the code under that name only).
    pub same_code_as: Option<String>,
}

impl Function {
    /// Instructions that add packed 64-bit integers (`paddq`, `vpaddq`).
    pub fn packed_int_adds(&self) -> usize {
        self.count(|m| m == "paddq" || m == "vpaddq")
    }

    /// Instructions that subtract packed 64-bit integers (`psubq`, `vpsubq`).
    pub fn packed_int_subs(&self) -> usize {
        self.count(|m| m == "psubq" || m == "vpsubq")
    }

    /// `call` instructions (e.g. into the runtime).
    pub fn calls(&self) -> usize {
        self.count(|m| m.starts_with("call"))
    }

    /// The widest vector register used: `zmm`, `ymm`, `xmm` or none.
    pub fn widest_register(&self) -> &'static str {
        let text = self.instructions.join("\n");
        ["zmm", "ymm", "xmm"].into_iter().find(|r| text.contains(&format!("%{r}"))).unwrap_or("none")
    }

    /// The call targets, for the report: the symbol of a direct call or of a resolved call
    /// through the GOT, else the operand of an indirect one.
    pub fn call_targets(&self) -> Vec<String> {
        let mut targets: Vec<String> = self
            .instructions
            .iter()
            .filter(|i| i.starts_with("call"))
            .map(|i| {
                if let Some((_, target)) = i.split_once(" # ") {
                    target.trim_end_matches(" (through the GOT)").to_string()
                } else if let Some((_, target)) = i.split_once('<') {
                    target.trim_end_matches('>').to_string()
                } else {
                    i.split_whitespace().nth(1).unwrap_or("?").to_string()
                }
            })
            .collect();
        targets.dedup();
        targets
    }

    fn count(&self, pred: impl Fn(&str) -> bool) -> usize {
        self.instructions.iter().filter(|i| i.split_whitespace().next().is_some_and(&pred)).count()
    }
}

/// The demangled symbol of `variant`'s `kernel`.
fn symbol(variant: &str, kernel: Kernel) -> String {
    let name = if kernel == Kernel::Loop { "loop_sum" } else { kernel.name() };
    match variant {
        "rust" => format!("nagi_bench_native::handwritten::{name}"),
        "nagi-rust" => format!("nagi_bench_native::emitted::rust::program::{name}"),
        "nagi-llvm-O2" => format!("nagi_o2_{name}"),
        _ => format!("nagi_o3_{name}"),
    }
}

/// Disassembles every native variant's every kernel in `exe`.
///
/// Calls through the GOT (`mov GOT(%rip),%r13` … `call *%r13`, which is how rustc calls into
/// another crate's rlib in a position-independent executable) are resolved to the function the
/// GOT slot holds, from the executable's dynamic relocations, and annotated in the listing
/// (`call *%r13 # nagi_runtime::ops::rem_i64 (through the GOT)`).
pub fn disassemble(exe: &Path) -> Result<Vec<Function>, String> {
    let nm = tool("nm", &["-C", "--defined-only"], exe)?;
    // `ADDRESS TYPE NAME`, where a demangled name may contain spaces.
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut symbols: Vec<String> = Vec::new();
    // Every name at each address: identical functions folded into one share it.
    let mut aliases: HashMap<u64, Vec<String>> = HashMap::new();
    let mut address_of: HashMap<String, u64> = HashMap::new();
    for line in nm.lines() {
        let mut parts = line.splitn(3, ' ');
        let (Some(address), Some(_), Some(name)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if let Ok(address) = u64::from_str_radix(address, 16) {
            names.entry(address).or_insert_with(|| name.to_string());
            aliases.entry(address).or_default().push(name.to_string());
            address_of.insert(name.to_string(), address);
        }
        symbols.push(name.to_string());
    }
    let got = got_slots(&tool("objdump", &["-R"], exe)?, &names);
    let mut out = Vec::new();
    for variant in NATIVE_VARIANTS {
        for kernel in Kernel::ALL {
            let symbol = symbol(variant, kernel);
            if !symbols.contains(&symbol) {
                return Err(format!("no symbol `{symbol}` for {variant} {kernel} in {}", exe.display()));
            }
            let listing = |name: &str| -> Result<Vec<String>, String> {
                let dump = tool("objdump", &["-d", "-C", "--no-show-raw-insn", &format!("--disassemble={name}")], exe)?;
                Ok(instructions(&dump, &got))
            };
            let mut code = listing(&symbol)?;
            let mut same_code_as = None;
            if code.is_empty() {
                let others = address_of.get(&symbol).and_then(|a| aliases.get(a)).cloned().unwrap_or_default();
                for other in others.iter().filter(|o| **o != symbol) {
                    code = listing(other)?;
                    if !code.is_empty() {
                        same_code_as = Some(other.clone());
                        break;
                    }
                }
            }
            out.push(Function { variant, kernel, symbol, instructions: code, same_code_as });
        }
    }
    Ok(out)
}

/// Runs a binutils tool on `exe` and returns its stdout.
fn tool(program: &str, args: &[&str], exe: &Path) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .arg(exe)
        .output()
        .map_err(|e| format!("cannot run {program} (binutils) on {}: {e}", exe.display()))?;
    if !output.status.success() {
        return Err(format!("{program} failed on {}: {}", exe.display(), String::from_utf8_lossy(&output.stderr)));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// GOT slot address → what it points to, from `objdump -R`: `R_X86_64_RELATIVE *ABS*+0xADDR`
/// names the function at ADDR; `R_X86_64_GLOB_DAT`/`JUMP_SLOT` name the symbol.
fn got_slots(relocations: &str, names: &HashMap<u64, String>) -> HashMap<u64, String> {
    let mut slots = HashMap::new();
    for line in relocations.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [slot, kind, value] = parts[..] else { continue };
        let Ok(slot) = u64::from_str_radix(slot, 16) else { continue };
        let target = match kind {
            "R_X86_64_RELATIVE" => value
                .strip_prefix("*ABS*+0x")
                .and_then(|a| u64::from_str_radix(a, 16).ok())
                .and_then(|a| names.get(&a).cloned()),
            "R_X86_64_GLOB_DAT" | "R_X86_64_JUMP_SLOT" => Some(value.to_string()),
            _ => None,
        };
        if let Some(target) = target {
            slots.insert(slot, target);
        }
    }
    slots
}

/// The instructions of one function from `objdump -d` output, without addresses and objdump's
/// comments, with calls through the GOT annotated with their target.
fn instructions(dump: &str, got: &HashMap<u64, String>) -> Vec<String> {
    // Which GOT slot each register was last loaded from.
    let mut loaded: HashMap<String, u64> = HashMap::new();
    let mut out = Vec::new();
    for line in dump.lines() {
        // `   978ae:\tmov    0xf3f03(%rip),%r13        # 18b7b8 <_DYNAMIC+0x7e8>`
        let Some((address, rest)) = line.split_once(":\t") else { continue };
        if u64::from_str_radix(address.trim(), 16).is_err() {
            continue;
        }
        let (text, comment) = match rest.split_once('#') {
            Some((t, c)) => (t, Some(c.trim())),
            None => (rest, None),
        };
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let slot = comment.and_then(|c| c.split_whitespace().next()).and_then(|a| u64::from_str_radix(a, 16).ok());
        let mut annotation = None;
        if let Some(slot) = slot.filter(|_| text.contains("(%rip)")) {
            if let Some(register) = text.strip_prefix("mov ").and_then(|t| t.rsplit_once(',')).map(|(_, r)| r) {
                loaded.insert(register.to_string(), slot);
            }
            if text.starts_with("call") || text.starts_with("jmp") {
                annotation = got.get(&slot).cloned();
            }
        } else if let Some(register) = text.strip_prefix("call *") {
            annotation = loaded.get(register).and_then(|slot| got.get(slot)).cloned();
        }
        out.push(match annotation {
            Some(target) => format!("{text} # {target} (through the GOT)"),
            None => text,
        });
    }
    out
}

/// The Markdown summary: `integer_sum`'s packed adds per variant, then every kernel's
/// instruction count, packed adds/subtracts, widest vector register and calls.
pub fn summary(functions: &[Function]) -> String {
    let mut out = String::new();
    out.push_str(
        "| variant | `integer_sum`: packed integer adds (`paddq`/`vpaddq`) | vectorized? | widest register |\n",
    );
    out.push_str("| --- | ---: | --- | --- |\n");
    for f in functions.iter().filter(|f| f.kernel == Kernel::IntegerSum) {
        let adds = f.packed_int_adds();
        let _ = writeln!(
            out,
            "| {} | {adds} | {} | {} |",
            f.variant,
            if adds > 0 { "yes" } else { "no" },
            f.widest_register()
        );
    }
    out.push_str("\nEvery kernel (instructions · packed i64 adds+subs · widest register · calls):\n\n");
    out.push_str("| kernel |");
    for v in NATIVE_VARIANTS {
        let _ = write!(out, " {v} |");
    }
    out.push_str("\n| --- |");
    for _ in NATIVE_VARIANTS {
        out.push_str(" --- |");
    }
    out.push('\n');
    for kernel in Kernel::ALL {
        let _ = write!(out, "| {kernel} |");
        for v in NATIVE_VARIANTS {
            match functions.iter().find(|f| f.kernel == kernel && f.variant == v) {
                Some(f) => {
                    let calls = f.call_targets();
                    let calls =
                        if calls.is_empty() { String::from("no calls") } else { format!("calls {}", calls.join(", ")) };
                    let _ = write!(
                        out,
                        " {} · {} · {} · {calls} |",
                        f.instructions.len(),
                        f.packed_int_adds() + f.packed_int_subs(),
                        f.widest_register()
                    );
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}

/// Writes each function's disassembly to `dir/VARIANT-KERNEL.s`.
pub fn write_listings(functions: &[Function], dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for f in functions {
        let folded = match &f.same_code_as {
            Some(other) => format!("\n# the same code as {other}: the linker folded the two into one"),
            None => String::new(),
        };
        let text = format!("# {} {} ({}){folded}\n{}\n", f.variant, f.kernel, f.symbol, f.instructions.join("\n"));
        std::fs::write(dir.join(format!("{}-{}.s", f.variant, f.kernel)), text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_packed_adds_registers_and_calls() {
        let f = Function {
            variant: "rust",
            kernel: Kernel::IntegerSum,
            symbol: "s".into(),
            same_code_as: None,
            instructions: vec![
                "vpaddq %ymm0,%ymm1,%ymm1".into(),
                "paddq %xmm2,%xmm3".into(),
                "vpsubq %ymm0,%ymm1,%ymm1".into(),
                "call 1234 <nagi_runtime::ops::rem_i64>".into(),
                "ret".into(),
            ],
        };
        assert_eq!((f.packed_int_adds(), f.packed_int_subs(), f.calls()), (2, 1, 1));
        assert_eq!(f.widest_register(), "ymm");
        assert_eq!(f.call_targets(), ["nagi_runtime::ops::rem_i64"]);
        assert_eq!(symbol("nagi-rust", Kernel::Loop), "nagi_bench_native::emitted::rust::program::loop_sum");
        assert_eq!(symbol("nagi-llvm-O3", Kernel::IntegerSum), "nagi_o3_integer_sum");
        let indirect = Function { instructions: vec!["call *%r15".into()], ..f };
        assert_eq!(indirect.call_targets(), ["*%r15"]);
    }

    #[test]
    fn calls_through_the_got_are_resolved() {
        let names = HashMap::from([(0x98cc0, "nagi_runtime::ops::rem_i64".to_string())]);
        let got = got_slots(
            "\nDYNAMIC RELOCATION RECORDS\nOFFSET           TYPE              VALUE\n\
             000000000018b7b8 R_X86_64_RELATIVE  *ABS*+0x0000000000098cc0\n\
             000000000018b800 R_X86_64_GLOB_DAT  memcpy@GLIBC_2.14\n",
            &names,
        );
        assert_eq!(got.get(&0x18b800).map(String::as_str), Some("memcpy@GLIBC_2.14"));
        let dump = "\n<f>:\n   978ae:\tmov    0xf3f03(%rip),%r13        # 18b7b8 <_DYNAMIC+0x7e8>\n\
                    \x20  978b5:\tcall   *%r13\n   978b8:\tjne    978a0 <f+0x30>\n";
        let listing = instructions(dump, &got);
        assert_eq!(
            listing,
            [
                "mov 0xf3f03(%rip),%r13",
                "call *%r13 # nagi_runtime::ops::rem_i64 (through the GOT)",
                "jne 978a0 <f+0x30>"
            ]
        );
        let f = Function {
            variant: "nagi-rust",
            kernel: Kernel::Branch,
            symbol: "f".into(),
            instructions: listing,
            same_code_as: None,
        };
        assert_eq!(f.call_targets(), ["nagi_runtime::ops::rem_i64"]);
    }
}
