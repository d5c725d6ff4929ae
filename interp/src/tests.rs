//! Unit tests: small Low programs run on a host that records what they print. The runnable
//! goldens (`tests/programs.rs`) run every program on the interpreter against the emitters'
//! expectations; these tests cover what those cannot show: the depth limit, nesting and
//! recursion that would overflow a recursive interpreter, refusals, and faults instead of
//! panics on Low that did not verify.

use nagi_low::eval::Trap;
use nagi_low::{ClassId, Module};

use crate::value::Value;
use crate::{Host, Options, RunError, Stop, check, run};

/// Records printed lines; the index check and the trap messages follow docs/design.md §2
/// directly (the driver's host uses the runtime's functions instead).
#[derive(Default)]
struct Recorder {
    out: String,
}

impl Host for Recorder {
    /// Mutated constants make sleeps of years; recording a program needs no waiting.
    fn sleep(&mut self, _ms: u64) {}
    fn print_i32(&mut self, v: i32) {
        self.out.push_str(&format!("{v}\n"));
    }
    fn print_i64(&mut self, v: i64) {
        self.out.push_str(&format!("{v}\n"));
    }
    fn print_f64(&mut self, v: f64) {
        self.out.push_str(&format!("{v:?}\n"));
    }
    fn print_bool(&mut self, v: bool) {
        self.out.push_str(&format!("{v}\n"));
    }
    fn print_str(&mut self, v: &str) {
        self.out.push_str(&format!("{v}\n"));
    }
    fn fmt_i32(&mut self, v: i32) -> String {
        v.to_string()
    }
    fn fmt_i64(&mut self, v: i64) -> String {
        v.to_string()
    }
    fn fmt_f64(&mut self, v: f64) -> String {
        format!("{v:?}")
    }
    fn fmt_bool(&mut self, v: bool) -> String {
        v.to_string()
    }
    fn trap_message(&self, trap: Trap) -> String {
        match trap {
            Trap::DivisionByZero => "division by zero".into(),
            Trap::RemainderByZero => "remainder by zero".into(),
        }
    }
    fn index(&self, index: i64, len: usize) -> Result<usize, String> {
        match usize::try_from(index) {
            Ok(at) if at < len => Ok(at),
            _ => Err(format!("index out of range: the length is {len} but the index is {index}")),
        }
    }
    fn json_encode(&mut self, _: &Module, _: ClassId, _: &Value) -> Result<String, String> {
        Err("no JSON in these tests".into())
    }
    fn json_decode(&mut self, _: &Module, _: ClassId, _: &str) -> Option<Value> {
        None
    }
    fn string_call(&mut self, func: nagi_low::RuntimeFn, _: &[Value]) -> Result<Value, String> {
        Err(format!("the tests' host has no `{}`", func.name()))
    }

    fn library_call(&mut self, func: nagi_low::RuntimeFn, _: &[Value]) -> Result<Value, String> {
        Err(format!("the tests' host has no `{}`", func.name()))
    }

    fn fetch(&mut self, _: &nagi_low::Module, _: Option<nagi_low::ClassId>, _: &[Value]) -> Result<Value, String> {
        Err("the tests' host makes no outbound calls".into())
    }

    fn sorted_order(&mut self, _: &[Value]) -> Result<Vec<usize>, String> {
        Err("the tests' host has no array library".into())
    }

    fn array_contains(&mut self, _: &[Value], _: &Value) -> Result<bool, String> {
        Err("the tests' host has no array library".into())
    }

    fn slice_range(&self, _: usize, _: i64, _: i64) -> Result<std::ops::Range<usize>, String> {
        Err("the tests' host has no array library".into())
    }

    fn fail(&mut self, _: i64, _: &str) {}

    fn clear_failure(&mut self) {}

    fn recorded_failure(&mut self, _: bool) -> (i64, String) {
        (500, String::new())
    }

    fn selected_test(&mut self) -> i64 {
        -1
    }

    fn test_failure(&mut self) -> String {
        "the test failed".into()
    }

    fn set_header(&mut self, name: &str, _: &str) -> Result<(), String> {
        Err(format!("the tests' host sets no header {name}"))
    }
}

fn module(text: &str) -> Module {
    nagi_low::parse(text).unwrap_or_else(|d| panic!("{}", d.message)).0
}

/// Parses and verifies `text`, runs it, and gives the output and how it ended.
fn run_with(text: &str, options: &Options) -> (String, Result<(), RunError>) {
    let m = module(text);
    if let Err(errors) = nagi_low::verify(&m, None) {
        panic!("{:?}", errors.iter().map(|d| &d.message).collect::<Vec<_>>());
    }
    let mut host = Recorder::default();
    let result = run(&m, &mut host, options);
    (host.out, result)
}

fn run_ok(text: &str) -> String {
    let (out, result) = run_with(text, &Options::default());
    assert_eq!(result, Ok(()), "output so far:\n{out}");
    out
}

const COUNTDOWN: &str = "nagi-low 1
module deep

fn $down(%n: i64) -> i64 {
  let %zero: bool
  let %m: i64
  let %r: i64
  %zero = eq.i64 %n, 0_i64
  if %zero {
    return 0_i64
  }
  %m = sub.i64 %n, 1_i64
  %r = call $down(%m)
  %r = add.i64 %r, 1_i64
  return %r
}

fn $main() -> unit {
  let %r: i64
  rtcall print.i64(1_i64)
  %r = call $down(DEPTH_i64)
  rtcall print.i64(%r)
  return
}
";

#[test]
fn recursion_deeper_than_a_thread_stack_holds_runs_on_the_heap() {
    // 90,000 Low frames; a Rust recursion per call would need far more than the 2 MiB of a
    // test thread.
    let out = run_ok(&COUNTDOWN.replace("DEPTH", "90000"));
    assert_eq!(out, "1\n90000\n");
}

#[test]
fn a_call_past_the_depth_limit_is_the_trap_stack_overflow_after_earlier_output() {
    let text = COUNTDOWN.replace("DEPTH", "100");
    let (out, result) = run_with(&text, &Options { max_frames: 50, ..Options::default() });
    assert_eq!(out, "1\n");
    assert_eq!(result, Err(RunError::Stopped(Stop::Trap("stack overflow".into()))));
    // `$main` and 100 + 1 frames of `$down` fit a limit of 102 exactly.
    let (out, result) = run_with(&text, &Options { max_frames: 102, ..Options::default() });
    assert_eq!((out.as_str(), result), ("1\n100\n", Ok(())));
}

#[test]
fn nesting_thousands_of_blocks_deep_needs_no_recursion() {
    let depth = 5000;
    let mut text = String::from("nagi-low 1\nmodule nest\n\nfn $main() -> unit {\n");
    for i in 0..depth {
        text.push_str(&format!("  let %b{i}: bool\n"));
    }
    for i in 0..depth {
        text.push_str(&format!("  %b{i} = const true\n  if %b{i} {{\n"));
    }
    text.push_str("  rtcall print.i64(7_i64)\n");
    for _ in 0..depth {
        text.push_str("  }\n");
    }
    text.push_str("  return\n}\n");
    assert_eq!(run_ok(&text), "7\n");
}

#[test]
fn references_reach_fields_and_elements_of_the_callers_values() {
    let out = run_ok(
        "nagi-low 1
module refs

class P {
  xs: [i64]
  name: String
}

// Appends to the caller's array through `&mut [i64]` and overwrites one element.
fn $grow(%xs: &mut [i64]) -> unit {
  let %e: &mut i64
  array.push %xs, 30_i64
  %e = array.ref_mut %xs, 0_i64
  store %e, 10_i64
  return
}

fn $main() -> unit {
  let %xs: [i64]
  let %name: String
  let %p: P
  let %f: &mut [i64]
  let %r: &P
  let %s: &str
  let %x: i64
  let %n: i64
  let %sum: i64
  let %each: &[i64]
  %xs = array.new
  array.push %xs, 1_i64
  array.push %xs, 2_i64
  %name = string \"pt\"
  %p = new P { xs: %xs, name: %name }
  %f = field.ref_mut %p, xs
  call $grow(%f)
  %r = borrow %p
  %s = field.ref %r, name
  rtcall print.str(%s)
  %each = field.ref %r, xs
  %sum = const 0_i64
  for %x in %each @each {
    %sum = add.i64 %sum, %x
  }
  rtcall print.i64(%sum)
  %n = array.len %each
  rtcall print.i64(%n)
  drop %p
  return
}
",
    );
    assert_eq!(out, "pt\n42\n3\n");
}

#[test]
fn traps_stop_the_run_with_the_runtimes_messages() {
    let program = |body: &str| {
        format!(
            "nagi-low 1\nmodule t\n\nfn $main() -> unit {{\n  let %x: i64\n  let %o: Option<i64>\n  let %xs: [i64]\n  \
             rtcall print.i64(1_i64)\n{body}  return\n}}\n"
        )
    };
    let cases = [
        ("  %x = div.i64 1_i64, 0_i64\n", "division by zero"),
        ("  %x = rem.i64 1_i64, 0_i64\n", "remainder by zero"),
        ("  %o = option.none\n  %x = option.unwrap %o\n", "unwrap of none"),
        (
            "  %xs = array.new\n  %x = array.get %xs, 3_i64\n  drop %xs\n",
            "index out of range: the length is 0 but the index is 3",
        ),
        ("  trap \"custom\"\n", "custom"),
    ];
    for (body, message) in cases {
        let (out, result) = run_with(&program(body), &Options::default());
        assert_eq!(out, "1\n", "{message}");
        assert_eq!(result, Err(RunError::Stopped(Stop::Trap(message.into()))));
    }
}

#[test]
fn routes_the_database_and_a_missing_main_are_refused_before_anything_runs() {
    let service = module(
        "nagi-low 1\nmodule s\n\nroute GET \"/x\" $h\n\nfn $h() -> String {\n  let %s: String\n  %s = string \"x\"\n  \
         return %s\n}\n",
    );
    assert_eq!(check(&service).unwrap_err().code, "I101");
    let db = module(
        "nagi-low 1\nmodule d\n\nasync fn $f() -> unit {\n  await rtcall db.begin()\n  return\n}\n\nfn $main() -> unit \
         {\n  return\n}\n",
    );
    let refused = check(&db).unwrap_err();
    assert_eq!(refused.code, "I102");
    assert!(refused.message.contains("rtcall db.begin in $f"), "{}", refused.message);
    let no_main = module("nagi-low 1\nmodule n\n\nfn $f() -> unit {\n  return\n}\n");
    assert_eq!(check(&no_main).unwrap_err().code, "I100");
}

#[test]
fn low_that_did_not_verify_is_a_fault_not_a_panic() {
    // A read after a move, and running off the end of a body: the verifier rejects both.
    for text in [
        "nagi-low 1\nmodule f\n\nfn $main() -> unit {\n  let %a: String\n  let %b: String\n  let %r: &str\n  %a = \
         string \"x\"\n  %b = move %a\n  %r = borrow %a\n  rtcall print.str(%r)\n  return\n}\n",
        "nagi-low 1\nmodule f\n\nfn $main() -> unit {\n  rtcall print.i64(1_i64)\n}\n",
    ] {
        let m = module(text);
        assert!(nagi_low::verify(&m, None).is_err());
        let result = run(&m, &mut Recorder::default(), &Options::default());
        assert!(matches!(result, Err(RunError::Stopped(Stop::Fault(_)))), "{result:?}");
    }
}

/// xorshift64*: a tiny deterministic generator, so a failure reproduces from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// `text` with some of its integer constants (`12_i64`, `-3_i32`) replaced by edge values, so
/// that the program still verifies but divides by zero, indexes out of range, loops long or
/// recurses deep.
fn mutate_constants(text: &str, rng: &mut Rng) -> String {
    const VALUES: &[&str] = &["0", "1", "-1", "2", "7", "100000", "-2147483648", "2147483647"];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("_i") {
        let suffix = rest[at..].starts_with("_i32") || rest[at..].starts_with("_i64");
        let before = rest[..at].trim_end_matches(|c: char| c.is_ascii_digit());
        let before = before.strip_suffix('-').unwrap_or(before);
        if suffix && before.len() < at && rng.next().is_multiple_of(3) {
            // Every value fits an i32, so the constant stays in range.
            out.push_str(before);
            out.push_str(VALUES[(rng.next() % VALUES.len() as u64) as usize]);
        } else {
            out.push_str(&rest[..at]);
        }
        out.push_str("_i");
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

#[test]
fn goldens_with_mutated_constants_run_to_an_end_without_panicking() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut inputs = Vec::new();
    for dir in ["golden/low", "golden/high"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("the golden directory exists").flatten() {
            if entry.path().extension().is_some_and(|e| e == "low") {
                inputs.push(entry.path());
            }
        }
    }
    inputs.sort();
    let options = Options { max_frames: 2000, max_steps: 200_000 };
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut ran = 0;
    for path in &inputs {
        let text = std::fs::read_to_string(path).expect("a golden file reads");
        for _ in 0..8 {
            let mutated = mutate_constants(&text, &mut rng);
            let Ok((m, _)) = nagi_low::parse(&mutated) else { continue };
            if nagi_low::verify(&m, None).is_err() || check(&m).is_err() {
                continue;
            }
            let result = std::panic::catch_unwind(|| run(&m, &mut Recorder::default(), &options));
            match result {
                Ok(Err(RunError::Stopped(Stop::Fault(fault)))) => {
                    panic!("{} with mutated constants faults: {fault}\n{mutated}", path.display())
                }
                Ok(_) => ran += 1,
                Err(_) => panic!("{} with mutated constants panics:\n{mutated}", path.display()),
            }
        }
    }
    println!("{ran} mutated programs ran");
    assert!(ran >= 100, "only {ran} mutated programs verified and ran");
}
