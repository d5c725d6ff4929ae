//! The string library: the rules of High Nagi's string methods (`contains`, `split`, `trim`,
//! `slice`, `parse_i64`, …), one function per row of Low's runtime interface (`str.*`).
//!
//! Each rule is written once, here. The Rust path's generated code calls these functions
//! directly; the LLVM path calls them through `cabi::strings`; the Low interpreter through its
//! host. A rule that can trap returns its trap's message as the error (`try_` in the name, as in
//! [`crate::ops`]), and the Rust path's wrapper traps with it.
//!
//! Positions and lengths are in UTF-8 bytes, as `len()` counts them. Case mapping and
//! whitespace follow Unicode as Rust's `str` does (`to_lowercase`, `to_uppercase`, `trim`).

use std::borrow::Borrow;

use crate::trap;

/// Whether `s` contains `t` (every string contains `""`).
pub fn contains(s: &str, t: &str) -> bool {
    s.contains(t)
}

/// Whether `s` starts with `t`.
pub fn starts_with(s: &str, t: &str) -> bool {
    s.starts_with(t)
}

/// Whether `s` ends with `t`.
pub fn ends_with(s: &str, t: &str) -> bool {
    s.ends_with(t)
}

/// The byte position of the first `t` in `s`, or `None`; `""` is found at 0.
pub fn find(s: &str, t: &str) -> Option<i64> {
    // A `str` is at most `isize::MAX` bytes long, so its positions fit an `i64`.
    s.find(t).map(|at| at as i64)
}

/// The message of the trap `split` with an empty separator raises.
pub const SPLIT_BY_EMPTY: &str = "split with an empty separator";

/// The parts of `s` between the separators `sep`, in order: `"a,b,,c"` split by `","` is
/// `["a", "b", "", "c"]`, and `""` gives `[""]`. An empty separator is a trap
/// ([`SPLIT_BY_EMPTY`]): it has no one meaning (Rust splits around every character and adds
/// an empty part at each end; Python refuses it), so Nagi refuses it too.
pub fn try_split(s: &str, sep: &str) -> Result<Vec<String>, &'static str> {
    if sep.is_empty() {
        return Err(SPLIT_BY_EMPTY);
    }
    Ok(s.split(sep).map(str::to_owned).collect())
}

/// [`try_split`], trapping with its message.
pub fn split(s: &str, sep: &str) -> Vec<String> {
    try_split(s, sep).unwrap_or_else(|message| trap(message))
}

/// `s` without leading and trailing Unicode whitespace.
pub fn trim(s: &str) -> String {
    s.trim().to_owned()
}

/// `s` in lower case (Unicode's full mapping: `"ẞ"` becomes `"ß"`, and a string may grow).
pub fn to_lower(s: &str) -> String {
    s.to_lowercase()
}

/// `s` in upper case (Unicode's full mapping: `"ß"` becomes `"SS"`).
pub fn to_upper(s: &str) -> String {
    s.to_uppercase()
}

/// `s` with every non-overlapping `from`, left to right, replaced by `to`. An empty `from`
/// matches between characters and at both ends: `"ab"` with `""` replaced by `"-"` is `"-a-b-"`.
pub fn replace(s: &str, from: &str, to: &str) -> String {
    s.replace(from, to)
}

/// The strings of `parts` with `sep` between each two: `["a", "b"]` joined by `", "` is
/// `"a, b"`, and no parts give `""`.
pub fn join<S: Borrow<str>>(parts: &[S], sep: &str) -> String {
    parts.join(sep)
}

/// The bytes `start..end` of `s` as a new string. It traps unless `0 <= start <= end <= len`
/// and both ends fall on character boundaries: a slice is never silently shortened, and never
/// splits a character.
pub fn try_slice(s: &str, start: i64, end: i64) -> Result<String, String> {
    let len = s.len();
    let in_range = 0 <= start && start <= end && usize::try_from(end).is_ok_and(|end| end <= len);
    if !in_range {
        return Err(format!("slice {start}..{end} out of range for a string of {len} bytes"));
    }
    // Both ends are in `0..=len` now, so they fit a `usize`.
    let (from, to) = (start as usize, end as usize);
    for at in [from, to] {
        if !s.is_char_boundary(at) {
            return Err(format!("slice {start}..{end}: byte {at} is inside a character"));
        }
    }
    Ok(s[from..to].to_owned())
}

/// [`try_slice`], trapping with its message.
pub fn slice(s: &str, start: i64, end: i64) -> String {
    try_slice(s, start, end).unwrap_or_else(|message| trap(&message))
}

/// `s` as a decimal `i64`: an optional `+` or `-`, then ASCII digits, nothing around them (no
/// spaces: `trim` first), and in range; anything else is `None`.
pub fn parse_i64(s: &str) -> Option<i64> {
    s.parse().ok()
}

/// `s` as an `f64`, as Rust's `f64::from_str` reads it: decimal with an optional exponent
/// (`"1.5"`, `"-2e3"`, `".5"`, `"5."`), or `inf`, `infinity` and `NaN` in any case; nothing
/// around it. Anything else is `None`. The value is the nearest `f64`.
pub fn parse_f64(s: &str) -> Option<f64> {
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searching() {
        assert!(contains("hello", "ell") && contains("hello", "") && !contains("hello", "L"));
        assert!(starts_with("héllo", "hé") && !starts_with("héllo", "e"));
        assert!(ends_with("héllo", "llo") && !ends_with("", "o"));
        assert_eq!(find("héllo", "l"), Some(3));
        assert_eq!(find("abc", ""), Some(0));
        assert_eq!(find("abc", "x"), None);
    }

    #[test]
    fn splitting_and_joining() {
        assert_eq!(try_split("a,b,,c", ","), Ok(vec!["a".into(), "b".into(), "".into(), "c".into()]));
        assert_eq!(try_split("", ","), Ok(vec![String::new()]));
        assert_eq!(try_split("a--b", "--"), Ok(vec!["a".into(), "b".into()]));
        assert_eq!(try_split("abc", ""), Err(SPLIT_BY_EMPTY));
        assert_eq!(join(&["a".to_string(), "b".to_string()], ", "), "a, b");
        assert_eq!(join::<&str>(&[], ", "), "");
    }

    #[test]
    fn mapping() {
        assert_eq!(trim(" \t a b \n"), "a b");
        assert_eq!(to_lower("ÀB"), "àb");
        assert_eq!(to_upper("straße"), "STRASSE");
        assert_eq!(replace("a.b.c", ".", "::"), "a::b::c");
        assert_eq!(replace("ab", "", "-"), "-a-b-");
    }

    #[test]
    fn slicing_checks_range_and_boundaries() {
        assert_eq!(try_slice("héllo", 0, 3), Ok("hé".into()));
        assert_eq!(try_slice("héllo", 6, 6), Ok(String::new()));
        assert_eq!(try_slice("héllo", 0, 2), Err("slice 0..2: byte 2 is inside a character".into()));
        assert_eq!(try_slice("abc", 2, 1), Err("slice 2..1 out of range for a string of 3 bytes".into()));
        assert_eq!(try_slice("abc", -1, 2), Err("slice -1..2 out of range for a string of 3 bytes".into()));
        assert_eq!(try_slice("abc", 0, 4), Err("slice 0..4 out of range for a string of 3 bytes".into()));
    }

    #[test]
    fn parsing() {
        assert_eq!(parse_i64("-42"), Some(-42));
        assert_eq!(parse_i64("+7"), Some(7));
        assert_eq!(parse_i64(" 7"), None);
        assert_eq!(parse_i64("9223372036854775808"), None);
        assert_eq!(parse_f64("2.5e3"), Some(2500.0));
        assert_eq!(parse_f64("x"), None);
        assert!(parse_f64("NaN").is_some_and(f64::is_nan));
    }
}
