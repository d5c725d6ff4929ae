//! `--replace`: functions of a hand-written Low file replace the lowered functions of the same
//! name, on a real example, and a mismatched signature stops the build naming both.

mod support;

use support::{nagic, temp_dir};

#[test]
fn a_replacement_shows_in_the_low_and_keeps_the_results() {
    let out = nagic(&["--emit=low", "examples/kernels.nagi", "--replace", "tests/fixtures/fast_branch.low"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let low = String::from_utf8_lossy(&out.stdout);
    assert!(low.contains("%r = mul.i64 %x, %sign"), "the replacement body is not in the module:\n{low}");

    let dir = temp_dir("replace");
    let plain = dir.join("plain");
    let fast = dir.join("fast");
    let built = nagic(&["build", "examples/kernels.nagi", "-o", plain.to_str().unwrap()]);
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let built = nagic(&[
        "build",
        "examples/kernels.nagi",
        "--replace",
        "tests/fixtures/fast_branch.low",
        "-o",
        fast.to_str().unwrap(),
    ]);
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let run = |exe: &std::path::Path| std::process::Command::new(exe).output().expect("runs").stdout;
    // What the example says it prints, its `// out:` lines.
    let source = std::fs::read_to_string("examples/kernels.nagi").expect("the example");
    let expected: String =
        source.lines().filter_map(|l| l.strip_prefix("// out: ")).map(|l| format!("{l}\n")).collect();
    assert_eq!(expected.lines().count(), 7, "the seven kernels' results");
    assert_eq!(String::from_utf8_lossy(&run(&plain)), expected);
    assert_eq!(String::from_utf8_lossy(&run(&fast)), expected);
}

#[test]
fn a_mismatched_signature_is_rejected_naming_both() {
    let out =
        nagic(&["build", "examples/kernels.nagi", "--replace", "tests/fixtures/wrong_branch.low", "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[L131]"), "{stderr}");
    assert!(stderr.contains("fn $branch(&[i64]) -> i64") && stderr.contains("fn $branch(&[i64]) -> i32"), "{stderr}");
}

#[test]
fn a_replacement_for_an_unknown_function_is_rejected() {
    let dir = temp_dir("replace-unknown");
    let file = dir.join("extra.low");
    std::fs::write(&file, "nagi-low 1\nmodule extra\n\nfn $nope() -> unit {\n  return\n}\n").unwrap();
    let out = nagic(&["check", "examples/kernels.nagi", "--replace", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no function of that name"));
}
