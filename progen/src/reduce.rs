//! Shrinking a program that makes the executors disagree: whole lines are removed while the
//! disagreement stays (a line-granular delta debugging, as C-Reduce's first passes do).
//!
//! Generated programs put one statement, or one `{`/`}` of a block, on each line, so removing a
//! line removes a statement, and removing a block's first line with its closing brace unwraps
//! the block; removals that no longer check simply stop being a failure and are kept out. The caller's predicate decides what "still failing" means (for the batch: every
//! executor builds and runs it, and their results still differ).

/// The smallest program reached from `text` by removing lines while `still_fails` holds,
/// trying chunks of halving size, then single lines, until a whole round removes nothing.
/// `text` itself must fail; the result always does.
pub fn reduce(text: &str, still_fails: &mut dyn FnMut(&str) -> bool) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let mut chunk = (lines.len() / 2).max(1);
    loop {
        let mut removed_any = false;
        let mut start = 0;
        while start < lines.len() {
            let end = (start + chunk).min(lines.len());
            let candidate: Vec<&str> = lines[..start].iter().chain(&lines[end..]).copied().collect();
            if still_fails(&join(&candidate)) {
                lines = candidate;
                removed_any = true;
            } else {
                start = end;
            }
        }
        if chunk == 1 && !removed_any {
            // Lines alone are as small as they get; a block's opening line and its closing
            // brace go only together, keeping the body (`if c {` … `}` → the body).
            if !unwrap_one_block(&mut lines, still_fails) {
                return join(&lines);
            }
            continue;
        }
        if !removed_any || chunk > 1 {
            chunk = (chunk / 2).max(1);
        }
    }
}

/// Removes the first block opener (a line ending in `{`) together with its closing `}` line
/// for which `still_fails` holds; whether one was removed.
fn unwrap_one_block(lines: &mut Vec<&str>, still_fails: &mut dyn FnMut(&str) -> bool) -> bool {
    for open in 0..lines.len() {
        if !lines[open].trim_end().ends_with('{') {
            continue;
        }
        let mut depth = 0i64;
        for close in open..lines.len() {
            depth += lines[close].matches('{').count() as i64 - lines[close].matches('}').count() as i64;
            if depth == 0 {
                if lines[close].trim() == "}" {
                    let candidate: Vec<&str> =
                        lines.iter().enumerate().filter(|(i, _)| *i != open && *i != close).map(|(_, l)| *l).collect();
                    if still_fails(&join(&candidate)) {
                        *lines = candidate;
                        return true;
                    }
                }
                break;
            }
        }
    }
    false
}

fn join(lines: &[&str]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Balanced braces stand in for "still checks".
    fn balanced(text: &str) -> bool {
        let mut depth = 0i32;
        for c in text.chars() {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            if depth < 0 {
                return false;
            }
        }
        depth == 0
    }

    #[test]
    fn keeps_only_what_the_failure_needs() {
        let text =
            "fn main() {\n    let a = 1\n    if a > 0 {\n        print(2)\n        print(42)\n    }\n    print(3)\n}\n";
        let mut runs = 0;
        let reduced = reduce(text, &mut |t| {
            runs += 1;
            balanced(t) && t.contains("print(42)") && t.contains("fn main() {")
        });
        assert_eq!(reduced, "fn main() {\n        print(42)\n}\n");
        assert!(runs < 60, "{runs} runs");
    }

    #[test]
    fn a_program_that_cannot_shrink_comes_back_whole() {
        let text = "fn main() {\n    print(42)\n}\n";
        assert_eq!(reduce(text, &mut |t| t == text), text);
    }
}
