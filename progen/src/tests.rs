//! The generator's tests: every seeded program checks and lowers (as a program and as a test
//! build), and the forms each part of the language should produce appear in the first 300.

use super::*;

/// Every seeded program checks and lowers, as a program and as a test build.
#[test]
fn every_seeded_program_checks_and_lowers() {
    for seed in 0..300 {
        let text = from_seed(seed, 4096);
        if let Err(rendered) = compile(&text, "gen") {
            panic!("seed {seed} does not check:\n{rendered}\n{text}");
        }
        if let Err(rendered) = compile_tests(&text, "gen") {
            panic!("seed {seed} does not check as a test build:\n{rendered}\n{text}");
        }
    }
}

/// Interpolated strings appear in the first 300 programs, a hole right after each kind of text
/// the generator writes before one, and an escaped brace.
#[test]
fn interpolated_strings_are_generated() {
    let texts: Vec<String> = (0..300).map(|seed| from_seed(seed, 4096)).collect();
    for opening in ["\"{", "a{", " = {", "x y {", "}}{", "{{{"] {
        let found = texts.iter().any(|t| t.lines().any(|l| !l.trim_start().starts_with("//") && l.contains(opening)));
        assert!(found, "no program of the first 300 has a hole after `{opening}`");
    }
}

/// `catch` of failing calls appears in the first 300 programs, of a call with a value and of one
/// without, and in a `main` (which cannot fail itself).
#[test]
fn caught_failures_are_generated() {
    let texts: Vec<String> = (0..300).map(|seed| from_seed(seed, 4096)).collect();
    let lines = || texts.iter().flat_map(|t| t.lines());
    assert!(lines().any(|l| l.trim_start().starts_with("Ok(ok")), "no `catch` of a call with a value");
    assert!(lines().any(|l| l.trim_start().starts_with("Ok =>")), "no `catch` of a call without a result");
    let in_main = texts.iter().any(|t| t.split("fn main()").nth(1).is_some_and(|m| m.contains("match catch ")));
    assert!(in_main, "no `catch` in a `main`");
}

/// Every closure method appears in the first 300 programs.
#[test]
fn closures_are_generated() {
    let texts: Vec<String> = (0..300).map(|seed| from_seed(seed, 4096)).collect();
    for method in
        [".map(fn(", ".filter(fn(", ".any(fn(", ".all(fn(", ".count(fn(", ".find(fn(", ".fold(", ".sort_by_key(fn("]
    {
        assert!(texts.iter().any(|t| t.contains(method)), "no program of the first 300 calls `{method}`");
    }
    // A `filter` chained before `fold`, which then runs in the filter's loop.
    let chained = |l: &str| l.find(".filter(fn(").is_some_and(|f| l[f..].contains(").fold("));
    assert!(texts.iter().any(|t| t.lines().any(chained)), "no program of the first 300 chains `filter` before `fold`");
}

/// Every string-library method the generator writes appears in the first 300 programs,
/// so the differential runs exercise each runtime row.
#[test]
fn the_string_library_is_generated() {
    let texts: Vec<String> = (0..300).map(|seed| from_seed(seed, 4096)).collect();
    for method in [
        ".trim()",
        ".to_lower()",
        ".to_upper()",
        ".replace(",
        ".slice(",
        ".split(",
        ".join(",
        ".contains(",
        ".starts_with(",
        ".ends_with(",
    ] {
        let count = texts.iter().filter(|text| text.contains(method)).count();
        assert!(count > 0, "no program of the first 300 calls `{method}`");
    }
}

/// Enums and every kind of `match` the generator writes appear in the `main` of one of the
/// first 300 programs (the prelude's helpers do not count), so the differential runs
/// exercise each form.
#[test]
fn enums_and_match_are_generated() {
    let mains: Vec<String> = (0..300)
        .map(|seed| {
            let text = from_seed(seed, 4096);
            text[text.find("fn main() {").expect("a main")..].to_string()
        })
        .collect();
    let lines = |main: &String| main.lines().map(str::trim).map(str::to_owned).collect::<Vec<String>>();
    let arms: Vec<String> = mains.iter().flat_map(lines).filter(|line| line.contains(" => {")).collect();
    let all: Vec<String> = mains.iter().flat_map(lines).collect();
    let is_int = |arm: &String| arm.trim_start_matches('-').starts_with(|c: char| c.is_ascii_digit());
    let checks: [(&str, &dyn Fn() -> bool); 14] = [
        ("an enum local", &|| all.iter().any(|l| l.starts_with("let e") || l.starts_with("var e"))),
        ("an enum array", &|| all.iter().any(|l| [": [Tok]", ": [Light]", ": [Item]"].iter().any(|t| l.contains(t)))),
        ("a match on an enum local", &|| all.iter().any(|l| l.starts_with("match e") && l.ends_with(" {"))),
        ("a match on a field", &|| all.iter().any(|l| l.starts_with("match q") && l.contains(".tag {"))),
        ("a bound payload", &|| arms.iter().any(|a| a.contains("(b") && !a.contains(" | "))),
        ("a borrowed class payload", &|| {
            arms.iter().any(|a| a.starts_with("Boxed(b") || a.starts_with("Item.Boxed(b"))
        }),
        ("an ignored payload", &|| arms.iter().any(|a| a.contains("(_)"))),
        ("a `|` pattern", &|| arms.iter().any(|a| a.contains(" | "))),
        ("a qualified pattern", &|| arms.iter().any(|a| ["Tok.", "Light.", "Item."].iter().any(|e| a.starts_with(e)))),
        ("a `_` arm", &|| arms.iter().any(|a| a.starts_with("_ =>"))),
        ("an integer match with an edge value", &|| {
            arms.iter().any(|a| is_int(a) && (a.contains("9223372036854775808") || a.contains("2147483648")))
        }),
        ("a string match", &|| arms.iter().any(|a| a.starts_with('"'))),
        ("a bool match", &|| arms.iter().any(|a| a.starts_with("true") || a.starts_with("false"))),
        ("`break` and `continue` in an arm", &|| {
            ["break", "continue"].iter().all(|w| all.iter().any(|l| l == w || l.contains(&format!("; {w} }}"))))
        }),
    ];
    for (what, found) in checks {
        assert!(found(), "no program of the first 300 has {what}");
    }
}

/// The trimmed lines of the first 300 programs (all their files).
fn lines_of_first_programs() -> Vec<String> {
    let texts: Vec<String> = (0..300).map(|seed| from_seed(seed, 4096)).collect();
    texts.iter().flat_map(|text| text.lines().map(|l| l.trim().to_string()).collect::<Vec<_>>()).collect()
}

/// Whether some array local of `element` (declared `var NAME: [element] = …`) is reordered by
/// `method` in one of `lines`.
fn reordered(lines: &[String], element: &str, method: &str) -> bool {
    let declared = format!(": [{element}] = ");
    let names: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("var xs") && l.contains(&declared))
        .filter_map(|l| l.strip_prefix("var ")?.split(':').next())
        .collect();
    names.iter().any(|name| lines.iter().any(|l| l.starts_with(&format!("{name}.{method}"))))
}

/// Failing functions, `try`, `fail`, tests and assertions appear in the first 300 programs.
#[test]
fn failures_and_tests_are_generated() {
    let all = lines_of_first_programs();
    let any = |pred: &dyn Fn(&String) -> bool| all.iter().any(pred);
    let checks: [(&str, bool); 14] = [
        ("a failing function with a result", any(&|l| l.contains(") fails -> ") && l.ends_with('{'))),
        ("a failing function without a result", any(&|l| l.contains(") fails {"))),
        ("a failing function returning an option", any(&|l| l.contains(") fails -> i64? {"))),
        ("`fail` with a literal status", any(&|l| l.starts_with("fail(4") || l.starts_with("fail(5"))),
        ("`fail` with a status computed in range", any(&|l| l.starts_with("fail(400 + abs("))),
        ("`fail` with any status", any(&|l| l.starts_with("fail(tap_i64(") || l.starts_with("fail(lib.tap_i64("))),
        ("`try` of a call", any(&|l| l.contains("(try check") || l.contains("(try lib.check"))),
        ("`try` of an operation", any(&|l| l.contains("(try ("))),
        ("`try` as a statement", any(&|l| l.starts_with("try check") || l.starts_with("try lib.check"))),
        ("an early `return`", any(&|l| l.starts_with("return none"))),
        ("a test", any(&|l| l.starts_with("test \"") && l.ends_with('{'))),
        ("`assert`", any(&|l| l.starts_with("assert("))),
        ("`assert_eq`", any(&|l| l.starts_with("assert_eq("))),
        ("a call of a generated function", any(&|l| l.contains("calc") && !l.contains("fn calc"))),
    ];
    for (what, found) in checks {
        assert!(found, "no program of the first 300 has {what}");
    }
}

/// The array library on every element type it orders, `sort_by` on a class (twice in a row
/// too), `reverse`, `contains` and `slice` of arrays appear in the first 300 programs.
#[test]
fn the_array_library_is_generated() {
    let all = lines_of_first_programs();
    for element in ["i32", "i64", "f64", "String"] {
        assert!(reordered(&all, element, "sort()"), "no array of {element} is sorted");
    }
    assert!(
        reordered(&all, "P", "sort_by(") || reordered(&all, "lib.P", "sort_by("),
        "no array of P is sorted by a field"
    );
    let twice = all.windows(2).any(|w| w[0].contains(".sort_by(") && w[1].contains(".sort_by("));
    assert!(twice, "no array is sorted by one field, then another");
    assert!(reordered(&all, "Tok", "reverse()") || reordered(&all, "Item", "reverse()"), "no enum array is reversed");
    let array_method = |method: &str| {
        all.iter().any(|l| {
            l.split(&format!(".{method}(")).next().is_some_and(|before| {
                before.rsplit(|c: char| !c.is_ascii_alphanumeric()).next().is_some_and(|name| name.starts_with("xs"))
            })
        })
    };
    assert!(array_method("contains"), "no array's `contains`");
    assert!(array_method("slice"), "no array's `slice`");
    assert!(all.iter().any(|l| l.starts_with("for x") && l.contains(".slice(")), "no loop over a slice");
}

/// Programs with a module `lib` appear in the first 300, using it every way the generator
/// knows.
#[test]
fn modules_are_generated() {
    let all = lines_of_first_programs();
    let any = |pred: &dyn Fn(&String) -> bool| all.iter().any(pred);
    let checks: [(&str, bool); 9] = [
        ("a module", any(&|l| l == MODULE_LINE)),
        ("`import lib`", any(&|l| l == "import lib")),
        ("`import lib.{…}`", any(&|l| l.starts_with("import lib.{"))),
        ("a `pub` function of the module", any(&|l| l.starts_with("pub fn calc") || l.starts_with("pub fn check"))),
        ("a private function of the module", any(&|l| l.starts_with("fn calc") || l.starts_with("fn check"))),
        ("a qualified call", any(&|l| l.contains("lib.calc") || l.contains("lib.check"))),
        ("a qualified class literal", any(&|l| l.contains("lib.P { "))),
        ("a qualified variant", any(&|l| l.contains("lib.Tok.") || l.contains("lib.Item."))),
        ("a qualified type", any(&|l| l.contains(": lib.Tok") || l.contains(": [lib."))),
    ];
    for (what, found) in checks {
        assert!(found, "no program of the first 300 has {what}");
    }
    // A test inside the module: its lines come after the module's line in its program.
    let in_lib = (0..300).map(|seed| from_seed(seed, 4096)).any(|text| {
        text.split_once(MODULE_LINE).is_some_and(|(_, module)| module.lines().any(|l| l.starts_with("test \"")))
    });
    assert!(in_lib, "no module has a test");
}

/// A program's text splits into its files at each `// file:` line, which belongs to neither;
/// a text without one is a main file alone.
#[test]
fn a_program_text_splits_into_its_files() {
    let split = files("import lib\nfn main() {\n}\n// file: lib.nagi\npub fn f() {\n}\n");
    assert_eq!(split.main, "import lib\nfn main() {\n}\n");
    assert_eq!(split.modules, [("lib".to_string(), "pub fn f() {\n}\n".to_string())]);
    let alone = files("fn main() {\n}\n");
    assert_eq!((alone.main.as_str(), alone.modules.len()), ("fn main() {\n}\n", 0));
}

#[test]
fn programs_differ_by_seed_and_repeat_for_one_seed() {
    assert_eq!(from_seed(7, 4096), from_seed(7, 4096));
    assert_ne!(from_seed(7, 4096), from_seed(8, 4096));
    let text = from_seed(7, 4096);
    assert!(text.contains("fn main() {"), "{text}");
}

/// Every map operation the generator writes appears in the first 300 programs.
#[test]
fn maps_are_generated() {
    let texts: Vec<String> = (0..300).map(|seed| from_seed(seed, 4096)).collect();
    for form in ["= Map.new()", ".insert(", ".get(", ".remove(", ".contains(", ".len())", ".clone() {"] {
        let count = texts.iter().filter(|text| text.contains(form) && text.contains("Map<")).count();
        assert!(count > 0, "no program of the first 300 with a map has `{form}`");
    }
    assert!(texts.iter().any(|t| t.lines().any(|l| l.trim_start().starts_with("for k") && l.contains(", v"))));
    // The closure methods of maps, each taking the key and the value.
    for method in [".count(fn(k", ".any(fn(k", ".all(fn(k", ".filter(fn(k", ".map(fn(k", ".fold(\"\", fn(acc"] {
        assert!(texts.iter().any(|t| t.contains(method)), "no program of the first 300 calls a map's `{method}`");
    }
}

/// Every time operation the generator writes appears in the first 300 programs.
#[test]
fn times_are_generated() {
    let texts: Vec<String> = (0..300).map(|seed| from_seed(seed, 4096)).collect();
    for form in [
        "= parse_time(\"",
        ".unix_ms())",
        ".ms() + ",
        "print(to_string(",
        "not a time",
        "9999-12-31T",
        "= parse_uuid(\"",
        "== uuid_v7()",
    ] {
        assert!(texts.iter().any(|t| t.contains(form)), "no program of the first 300 has `{form}`");
    }
}

/// The configuration and its reads appear in the first 300 programs.
#[test]
fn configuration_is_generated() {
    let texts: Vec<String> = (0..300).map(|seed| from_seed(seed, 4096)).collect();
    for form in [
        "config Knobs {",
        "Knobs.progen_level",
        "Knobs.progen_ratio",
        "Knobs.progen_on",
        "Knobs.progen_name",
        "to_string(Knobs.progen_wait)",
    ] {
        assert!(texts.iter().any(|t| t.contains(form)), "no program of the first 300 has `{form}`");
    }
}

/// The first 300 programs with [`Config::waits`].
fn waiting_programs() -> Vec<String> {
    let config = Config { waits: true };
    (0..300).map(|seed| from_seed_with(seed, 4096, &config)).collect()
}

/// With [`Config::waits`], every seeded program checks and lowers, as a program and as a test
/// build; without it, no program waits.
#[test]
fn every_waiting_program_checks_and_lowers() {
    for (seed, text) in waiting_programs().iter().enumerate() {
        if let Err(rendered) = compile(text, "gen") {
            panic!("seed {seed} (waits) does not check:\n{rendered}\n{text}");
        }
        if let Err(rendered) = compile_tests(text, "gen") {
            panic!("seed {seed} (waits) does not check as a test build:\n{rendered}\n{text}");
        }
    }
    for seed in 0..300 {
        let text = from_seed(seed, 4096);
        assert!(!text.contains("sleep(") && !text.contains("scope {"), "seed {seed} waits by default:\n{text}");
    }
}

/// With [`Config::waits`], calls of the recursive async helper, of both mutually recursive
/// pairs and of both self-spawning helpers, and a `scope` spawning them, appear outside the
/// prelude (in a `main`, a test or a generated function of the main file) in the first 300
/// programs; so do a wait inside an expression, inside a loop and in a test.
#[test]
fn recursive_waits_and_self_spawning_tasks_are_generated() {
    // The main file after its prelude: its functions, `main` and its tests.
    let bodies: Vec<String> = waiting_programs()
        .iter()
        .map(|text| {
            let main = files(text).main;
            let first = ["\nfn calc", "\nfn check", "\nfn main() {"].iter().filter_map(|f| main.find(f)).min();
            main[first.expect("a main")..].to_string()
        })
        .collect();
    let lines: Vec<String> =
        bodies.iter().flat_map(|b| b.lines().map(|l| l.trim().to_string()).collect::<Vec<_>>()).collect();
    let calls = |name: &str| lines.iter().any(|l| l.contains(&format!("{name}(")) && !l.starts_with("fn "));
    for name in ["wait_down", "wait_even", "wait_odd", "wait_ping", "wait_pong", "split_sum", "split_text"] {
        assert!(calls(name), "no program of the first 300 calls `{name}`");
    }
    let any = |pred: &dyn Fn(&String) -> bool| lines.iter().any(pred);
    let checks: [(&str, bool); 6] = [
        ("a `scope`", any(&|l| l == "scope {")),
        (
            "a spawn of a self-spawning task",
            any(&|l| l.contains("= spawn split_sum(") || l.contains("= spawn lib.split_sum(")),
        ),
        ("a spawn whose handle is dropped", any(&|l| l.starts_with("spawn "))),
        ("a join inside an expression", any(&|l| l.starts_with("print((") && l.ends_with(".join()))"))),
        (
            "a wait inside an expression",
            any(&|l| {
                ["wait_down(", "split_sum(", "wait_even(", "wait_ping("].iter().any(|c| l.contains(c))
                    && !l.starts_with("print(wait_")
                    && !l.starts_with("print(split_")
                    && !l.starts_with("print(lib.")
                    && !l.contains("spawn ")
            }),
        ),
        (
            "a wait in a function the generator wrote",
            bodies.iter().any(|b| {
                b.split("\nfn main() {")
                    .next()
                    .is_some_and(|functions| functions.contains("wait_") || functions.contains("split_"))
            }),
        ),
    ];
    for (what, found) in checks {
        assert!(found, "no program of the first 300 (waits) has {what}");
    }
    let in_test = bodies
        .iter()
        .any(|b| b.split("\ntest \"").skip(1).any(|t| ["wait_", "split_", "scope {"].iter().any(|w| t.contains(w))));
    assert!(in_test, "no test of the first 300 programs (waits) waits");
    // A call on a line indented deeper than a `for` or `while` line above it, before the
    // loop's closing brace.
    let indent = |l: &str| l.len() - l.trim_start().len();
    let in_loop = bodies.iter().any(|b| {
        let mut loop_at: Option<usize> = None;
        b.lines().any(|l| {
            let t = l.trim_start();
            if loop_at.is_some_and(|at| indent(l) <= at) {
                loop_at = None;
            }
            if loop_at.is_none() && (t.starts_with("for ") || t.starts_with("while ")) {
                loop_at = Some(indent(l));
                return false;
            }
            loop_at.is_some() && (t.contains("wait_") || t.contains("split_"))
        })
    });
    assert!(in_loop, "no program of the first 300 (waits) waits inside a loop");
}

/// Every generic function of the prelude is called in the first 300 programs, and the class
/// `Duo<T>` made.
#[test]
fn generic_calls_are_generated() {
    let texts: Vec<String> = (0..300).map(|seed| from_seed(seed, 4096)).collect();
    for call in [
        "pick(",
        "bigger(",
        "same(",
        "shown(",
        "duo(",
        "swapped(",
        "first_or(",
        "slot_or(",
        "count_if(",
        "map_each(",
        "-> bool {",
    ] {
        let called = texts
            .iter()
            .any(|t| t.lines().any(|l| !l.starts_with("fn ") && !l.starts_with("pub fn ") && l.contains(call)));
        assert!(called, "no program of the first 300 calls `{call}`");
    }
}
