//! The prelude every generated program starts from: two classes, three enums and the helpers
//! that the statements call. A program with a module keeps it in the module `lib`, every item
//! `pub`, and the main file imports what it names unqualified.

/// The declarations every program has: the classes `P` and `Q` (which holds a `Tok`), the
/// enums `Tok`, `Light` and `Item`, and helpers: `tap_T` prints its argument and returns it
/// (a visible side effect inside expressions), `bump_T` changes an `inout` argument and
/// returns the new value, `rec` recurses `n` levels, `half` returns an option, and the enum
/// helpers `match` on a borrowed parameter (`tok_score`, `tok_text`, `light_code`,
/// `light_name`, `item_value`, `item_of`), make a variant from an integer (`tok_of`), change an
/// `inout` enum inside an arm (`tok_bump`), and return, `break` and `continue` from a `match`
/// inside a loop (`first_word`); and the generic class `Duo<T>` and generic functions
/// (`generics.rs`): `pick`, `bigger` (`T: ord + copy`), `same` (`T: eq`), `shown` (`T: text`),
/// `duo`, `swapped` (a `Duo<T>` in and out) and `first_or`; the generic enum `Slot<T>` and
/// `slot_or`; and functions with function-typed parameters, `count_if` and `map_each`.
pub(super) const PRELUDE: &str = "class P {
    a: i64
    b: f64
    c: String
}

class Q {
    tag: Tok
    n: i64
}

enum Tok {
    Num(i64)
    Word(String)
    Flag(bool)
    End
}

enum Light {
    Red
    Amber
    Green
}

enum Item {
    Boxed(P)
    Ratio(f64)
    Small(i32)
    Nothing
}

fn tap_i32(x: i32) -> i32 {
    print(x)
    return x
}

fn tap_i64(x: i64) -> i64 {
    print(x)
    return x
}

fn tap_f64(x: f64) -> f64 {
    print(x)
    return x
}

fn tap_bool(x: bool) -> bool {
    print(x)
    return x
}

fn bump_i32(inout n: i32) -> i32 {
    n += 3
    return n
}

fn bump_i64(inout n: i64) -> i64 {
    n = n * 2 + 1
    return n
}

fn bump_f64(inout x: f64) -> f64 {
    x = x * 0.5 - 1.0
    return x
}

fn rec(n: i64) -> i64 {
    if n <= 0 {
        return 1
    }
    return (rec(n - 1) * 3 + n) % 1000003
}

fn half(o: i64?) -> i64? {
    if let v = o {
        if v % 2 == 0 {
            return v / 2
        }
    }
    return none
}

fn tok_score(t: Tok) -> i64 {
    match t {
        Num(n) => { return n }
        Tok.Word(s) => { return s.len() * 10 }
        Flag(b) => {
            if b {
                return 1
            }
            return 0
        }
        End => { return -1 }
    }
}

fn tok_text(t: Tok) -> String {
    match t {
        Word(s) => { return \"w:\" + s }
        Num(n) => { return \"n:\" + to_string(n) }
        Flag(_) | Tok.End => { return \"other\" }
    }
}

fn tok_of(n: i64) -> Tok {
    match n % 4 {
        0 => { return Tok.Num(n) }
        1 | -1 => { return Tok.Word(to_string(n)) }
        2 | -2 => { return Tok.Flag(n > 0) }
        _ => { return Tok.End }
    }
}

fn tok_bump(inout t: Tok) -> i64 {
    match t {
        Num(n) => {
            t = Tok.Num(n + 1)
            return n
        }
        Word(_) => {
            t = Tok.End
            return 100
        }
        _ => { return 0 }
    }
}

fn first_word(ts: [Tok]) -> String {
    for t in ts {
        match t {
            Word(s) => { return s.clone() }
            End => { break }
            _ => { continue }
        }
    }
    return \"-\"
}

fn light_next(l: Light) -> Light {
    match l {
        Red => { return Light.Green }
        Light.Green => { return Light.Amber }
        Amber => { return Light.Red }
    }
}

fn light_code(l: Light) -> i32 {
    match l {
        Amber => { return 1 }
        Light.Red => { return 0 }
        _ => { return -1 }
    }
}

fn light_name(l: Light) -> String {
    match l {
        Red => { return \"red\" }
        Amber | Light.Green => {
            if light_code(l) == 1 {
                return \"amber\"
            }
            return \"green\"
        }
    }
}

fn item_value(it: Item) -> f64 {
    match it {
        Boxed(p) => {
            print(p.c)
            return p.b + (p.a as f64)
        }
        Ratio(r) => { return r }
        Small(k) => { return k as f64 }
        Nothing => { return -0.5 }
    }
}

fn item_of(t: Tok) -> Item {
    match t {
        Num(n) => { return Item.Small(n as i32) }
        Word(s) => { return Item.Boxed(P { a: s.len(), b: 0.25, c: s + \"!\" }) }
        Flag(b) => {
            if b {
                return Item.Ratio(1.5)
            }
            return Item.Nothing
        }
        _ => { return Item.Nothing }
    }
}


class Duo<T> {
    first: T
    second: T
}

fn pick<T>(c: bool, a: T, b: T) -> T {
    if c {
        return a.clone()
    }
    return b.clone()
}

fn bigger<T: ord + copy>(a: T, b: T) -> T {
    if a > b {
        return a
    }
    return b
}

fn same<T: eq>(a: T, b: T) -> bool {
    return a == b
}

fn shown<T: text>(x: T) -> String {
    return \"<{x}>\"
}

fn duo<T>(a: T, b: T) -> Duo<T> {
    return Duo { first: a.clone(), second: b.clone() }
}

fn swapped<T>(d: Duo<T>) -> Duo<T> {
    return Duo { first: d.second.clone(), second: d.first.clone() }
}

fn first_or<T>(xs: [T], fallback: T) -> T {
    if xs.len() > 0 {
        return xs[0].clone()
    }
    return fallback.clone()
}

enum Slot<T> {
    Full(T)
    Vacant
}

fn slot_or<T>(s: Slot<T>, fallback: T) -> T {
    match s {
        Full(v) => { return v.clone() }
        Vacant => { return fallback.clone() }
    }
}

fn count_if(xs: [i64], keep: fn(i64) -> bool) -> i64 {
    var n = 0
    for x in xs {
        if keep(x) {
            n += 1
        }
    }
    return n
}

fn map_each<T, U>(xs: [T], f: fn(T) -> U) -> [U] {
    var out: [U] = []
    for x in xs {
        out.push(f(x))
    }
    return out
}
";

/// The prelude of a program generated with `config`: [`PRELUDE`], and the helpers that wait
/// when it asks for them ([`super::waits::PRELUDE`]).
pub(super) fn text(config: &super::Config) -> String {
    let mut text = PRELUDE.to_string();
    if config.waits {
        text.push_str(super::waits::PRELUDE);
    }
    text
}

/// The names of the prelude's classes, enums and functions (as [`text`] gives it for
/// `config`), in order, for the main file's `import lib.{…}` of a program with a module.
pub(super) fn items(config: &super::Config) -> Vec<&'static str> {
    let waits = if config.waits { super::waits::PRELUDE } else { "" };
    let names = PRELUDE.lines().chain(waits.lines()).filter_map(|line| {
        let rest = line.strip_prefix("class ").or(line.strip_prefix("enum ")).or(line.strip_prefix("fn "))?;
        rest.split([' ', '(', '<']).next()
    });
    names.collect()
}

/// The prelude (as [`text`] gives it for `config`) as the module `lib` declares it: every
/// class, enum and function `pub`.
pub(super) fn public(config: &super::Config) -> String {
    let prelude = text(config);
    let mut out = String::with_capacity(prelude.len() + 200);
    for line in prelude.lines() {
        if line.starts_with("class ") || line.starts_with("enum ") || line.starts_with("fn ") {
            out.push_str("pub ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
