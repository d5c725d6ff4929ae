//! The generator's tests: every seeded program checks and lowers, and the forms each part of
//! the language should produce appear.

use super::*;

#[test]
fn every_seeded_program_checks_and_lowers() {
    for seed in 0..300 {
        let text = from_seed(seed, 4096);
        if let Err(diagnostics) = nagi_high::compile(&text, "gen") {
            let rendered = nagi_low::diagnostic::render_all(&diagnostics, "gen.nagi", &text);
            panic!("seed {seed} does not check:\n{rendered}\n{text}");
        }
    }
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

#[test]
fn programs_differ_by_seed_and_repeat_for_one_seed() {
    assert_eq!(from_seed(7, 4096), from_seed(7, 4096));
    assert_ne!(from_seed(7, 4096), from_seed(8, 4096));
    let text = from_seed(7, 4096);
    assert!(text.contains("fn main() {"), "{text}");
}
