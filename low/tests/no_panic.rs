//! Robustness: the parser, verifier, printer and diagnostic renderer never panic on damaged
//! input. Every golden Low file is mutated many times with a fixed-seed generator (byte flips,
//! deletions, duplicated spans, truncations, token swaps), and each result goes through
//! parse → verify → print → render. This is the deterministic, always-on companion of the
//! coverage-guided fuzz target in `fuzz/`.

use std::path::Path;

/// xorshift64*: a tiny deterministic generator, so a failure reproduces from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// Pieces of Low syntax to splice in, so mutations reach deep into the grammar.
const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "%x",
    "$f",
    "@l",
    "\"",
    "\\u{",
    "1_i64",
    "-9223372036854775808_i64",
    "NaN_f64",
    "..",
    "->",
    "&mut ",
    "[",
    "]",
    "Option<",
    ">",
    "\n",
    "// c\n",
    "break @each\n",
    "return\n",
    "if true {\n",
    "} else {\n",
    "drop %xs\n",
    "move",
    "await ",
    "rtcall db.query<User>(",
    "let %z: i64\n",
    "nagi-low 1\n",
    "\u{1f600}",
];

fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..=rng.below(3) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(5) {
            0 if !bytes.is_empty() => {
                let end = (at + 1 + rng.below(8)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            1 => {
                let fragment = FRAGMENTS[rng.below(FRAGMENTS.len())].as_bytes();
                bytes.splice(at..at, fragment.iter().copied());
            }
            2 if !bytes.is_empty() => {
                let i = at.min(bytes.len() - 1);
                const ALPHABET: &[u8] = b"{}()%$@\"\\ \n.,:=&<>[]-_0aZ";
                bytes[i] = ALPHABET[rng.below(ALPHABET.len())];
            }
            3 => bytes.truncate(at),
            _ if !bytes.is_empty() => {
                let start = at.min(bytes.len() - 1);
                let end = (start + 1 + rng.below(40)).min(bytes.len());
                let copy = bytes[start..end].to_vec();
                let to = rng.below(bytes.len() + 1);
                bytes.splice(to..to, copy);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn exercise(text: &str) {
    match nagi_low::parse(text) {
        Ok((module, source)) => {
            let verified = nagi_low::verifier::verify(&module, Some(&source));
            if let Err(diagnostics) = &verified {
                let _ = nagi_low::diagnostic::render_all(diagnostics, "m.low", text);
            }
            // Whatever parses must print and re-parse to the same module, verified or not.
            let printed = nagi_low::print_module(&module, None);
            let (again, _) = nagi_low::parse(&printed).unwrap_or_else(|d| {
                panic!("printed text does not parse:\n{}\n{printed}", d.render("printed.low", &printed))
            });
            assert!(again == module, "parse(print(m)) != m for:\n{text}");
        }
        Err(diagnostic) => {
            let _ = diagnostic.render("m.low", text);
        }
    }
}

#[test]
fn mutated_goldens_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/low");
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .expect("golden/low exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "low"))
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no golden Low files under {}", dir.display());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut cases = 0;
    for path in &inputs {
        let text = std::fs::read_to_string(path).expect("golden file reads");
        exercise(&text);
        for _ in 0..300 {
            let mutated = mutate(&text, &mut rng);
            let result = std::panic::catch_unwind(|| exercise(&mutated));
            if let Err(panic) = result {
                let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
                panic!("{} mutated to {mutated:?} panics: {message}", path.display());
            }
            cases += 1;
        }
    }
    assert!(cases >= 300);
}
