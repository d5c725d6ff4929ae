//! Unit tests of the checker: the issue's sample programs check, and each rule's violation
//! gives its code and a message that says what is wrong.

use super::{SqlCheck, SqlRequest, check, no_sql_check};
use crate::tir::{self, ExprKind, Program, StmtKind, Ty};
use nagi_low::Diagnostic;

const USERS: &str = r#"
// a CRUD service
class User {
    id: i64
    name: String
    age: i32
}

table users: User key id

route GET "/health" () -> String {
    return "ok"
}

route POST "/users" (body: User) -> User {
    db.exec("INSERT INTO users (id, name, age) VALUES (?, ?, ?)", body.id, body.name, body.age)
    return body
}

route GET "/users/{id}" (id: i64) -> User? {
    return db.query_one<User>("SELECT id, name, age FROM users WHERE id = ?", id)
}

route GET "/users" (limit: i64 = 100, offset: i64 = 0) -> [User] {
    return db.query<User>("SELECT id, name, age FROM users ORDER BY id LIMIT ? OFFSET ?", limit, offset)
}
"#;

const KERNEL: &str = r#"
fn branch(xs: [i64]) -> i64 {
    var acc: i64 = 0
    for x in xs {
        if x % 7 == 0 { acc += x } else { acc -= x }
    }
    return acc
}

fn main() {
    var xs: [i64] = []
    for i in 0..100000 {
        xs.push((i * 17 + 13) % 997 - 498)
    }
    print(branch(xs))
}
"#;

fn run(src: &str) -> Result<Program, Vec<Diagnostic>> {
    let file = nagi_syntax::parse(src).unwrap_or_else(|e| panic!("parse error: {e:?}"));
    check(&file, &no_sql_check, &|span| format!("byte {}", span.start))
}

fn ok(src: &str) -> Program {
    match run(src) {
        Ok(p) => p,
        Err(diags) => panic!("expected no errors, got:\n{}", nagi_low::diagnostic::render_all(&diags, "t.nagi", src)),
    }
}

/// Asserts that checking `src` fails with a diagnostic of `code` whose message contains `text`.
fn fails(src: &str, code: &str, text: &str) {
    let diags = run(src).expect_err("expected errors");
    assert!(
        diags.iter().any(|d| d.code == code && d.message.contains(text)),
        "no {code} containing {text:?} in:\n{}",
        nagi_low::diagnostic::render_all(&diags, "t.nagi", src)
    );
}

fn function<'p>(p: &'p Program, name: &str) -> &'p tir::Function {
    p.functions.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no function {name}"))
}

#[test]
fn users_service_checks() {
    let p = ok(USERS);
    let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["get_health", "post_users", "get_users_id", "get_users"]);
    let asyncs: Vec<bool> = p.functions.iter().map(|f| f.is_async).collect();
    assert_eq!(asyncs, [false, true, true, true]);
    assert!(p.functions.iter().all(|f| f.is_route));
    assert_eq!(p.routes.len(), 4);
    assert_eq!(p.routes[2].path, "/users/{id}");
    assert_eq!(p.routes[2].handler, 2);
    assert_eq!(p.tables.len(), 1);
    assert_eq!(p.tables[0].key, 0);
    let list = function(&p, "get_users");
    assert_eq!(list.defaults, [(0, tir::Literal::I64(100)), (1, tir::Literal::I64(0))]);
    assert_eq!(list.locals[0].ty, Ty::I64);
    assert_eq!(list.locals[0].kind, tir::LocalKind::Param(tir::ParamMode::Owned));
    assert_eq!(list.ret, Ty::Array(Box::new(Ty::Class(0))));
}

#[test]
fn kernel_checks() {
    let p = ok(KERNEL);
    let branch = function(&p, "branch");
    assert!(!branch.is_async);
    // `acc += x` is spelled out as `acc = acc + x`.
    let StmtKind::ForEach { body, .. } = &branch.body.stmts[1].kind else { panic!("expected for") };
    let StmtKind::If { then_block, .. } = &body.stmts[0].kind else { panic!("expected if") };
    let StmtKind::Assign { value, .. } = &then_block.stmts[0].kind else { panic!("expected assign") };
    assert!(matches!(value.kind, ExprKind::Binary { op: nagi_low::BinaryOp::Add, .. }));
    let main = function(&p, "main");
    assert_eq!(main.ret, Ty::Unit);
    let StmtKind::ForRange { start, .. } = &main.body.stmts[1].kind else { panic!("expected range") };
    assert_eq!(start.ty, Ty::I64);
}

#[test]
fn literals_follow_expectations() {
    let p = ok(
        "fn f(x: i32) -> i64? {\n let y: i32 = x + 1\n let m = -9223372036854775808\n if y > 2 { return m }\n return none\n}",
    );
    let f = function(&p, "f");
    let StmtKind::Let { value, .. } = &f.body.stmts[1].kind else { panic!() };
    assert_eq!(value.kind, ExprKind::Int(i64::MIN));
    let StmtKind::If { then_block, .. } = &f.body.stmts[2].kind else { panic!() };
    let StmtKind::Return(Some(r)) = &then_block.stmts[0].kind else { panic!() };
    assert!(matches!(r.kind, ExprKind::OptionSome(_)));
}

#[test]
fn handler_names_avoid_functions() {
    let p =
        ok("fn get_root() {}\nroute GET \"/\" () -> String { return \"x\" }\nroute DELETE \"/a-b/{id}\" (id: i64) {}");
    assert_eq!(p.functions[1].name, "get_root_2");
    assert_eq!(p.functions[2].name, "delete_a_b_id");
}

#[test]
fn async_propagates_through_calls() {
    let p = ok(r#"
class U { id: i64 }
table us: U key id
fn helper() -> i64 { return inner() }
fn inner() -> i64 { return db.exec("DELETE FROM us") }
route POST "/x" () -> i64 { return helper() }
"#);
    assert!(p.functions.iter().all(|f| f.is_async));
}

#[test]
fn sql_requests_reach_the_checker() {
    let make = |classes: &[tir::Class], tables: &[tir::Table]| -> SqlCheck {
        // The declared classes: those made on first use (`Failure`, a generic class's
        // instances) reach a query through its request's fields.
        let names: Vec<&str> = classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["U"]);
        assert_eq!(tables.len(), 1);
        Box::new(|r: &SqlRequest| if r.sql.contains("nope") { Err("no such column: nope".into()) } else { Ok(()) })
    };
    let src = r#"
class U { id: i64 }
table us: U key id
route GET "/u" () -> [U] { return db.query<U>("SELECT nope FROM us") }
"#;
    let file = nagi_syntax::parse(src).unwrap();
    let diags = check(&file, &make, &|span| format!("byte {}", span.start)).expect_err("expected the SQL error");
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, "H501");
    assert!(diags[0].message.contains("no such column"));
}

#[test]
fn unknown_variable() {
    fails("fn f() -> i64 { return y }", "H201", "unknown variable `y`");
}

#[test]
fn mismatched_int_types() {
    fails("fn f(a: i32, b: i64) -> i64 { return a + b }", "H301", "found `i32` and `i64`");
    fails("fn f(a: i32) -> i64 { return a }", "H301", "expected `i64`, found `i32`");
}

#[test]
fn assign_to_let() {
    fails("fn f() { let x = 1\n x = 2 }", "H401", "cannot assign to `x`, which is not declared with `var`");
}

#[test]
fn read_only_locals_say_what_they_are() {
    fails("fn f(n: i64) { n = 0 }", "H401", "cannot assign to `n`, which is a read-only parameter");
    fails("fn f() { for i in 0..3 { i = 1 } }", "H401", "`i`, which is a read-only loop variable");
    fails("fn f(o: i64?) { if let v = o { v += 1 } }", "H401", "`v`, which is read-only (bound by `if let`)");
    fails("route GET \"/a\" (n: i64) -> i64 { n = 1\n return n }", "H401", "a read-only route parameter");
}

#[test]
fn articles_follow_the_type() {
    fails("fn f() -> String { return }", "H404", "returns a `String`, so");
    fails("fn f() -> f64 { return }", "H404", "returns an `f64`, so");
    fails("fn f(b: bool) -> i64 { return b[0] }", "H306", "cannot index a `bool`");
}

#[test]
fn route_defaults_name_the_literal_they_need() {
    fails(
        "route GET \"/a\" (n: i64 = true) -> i64 { return n }",
        "H225",
        "an `i64` parameter must be an integer literal",
    );
    fails(
        "route GET \"/a\" (b: bool = 1) -> bool { return b }",
        "H225",
        "a `bool` parameter must be `true` or `false`",
    );
    fails(
        "route GET \"/a\" (s: String = 1) -> String { return s }",
        "H225",
        "a `String` parameter must be a string literal",
    );
}

#[test]
fn a_string_query_parameter_takes_a_string_default() {
    let p = ok("route GET \"/a\" (sort: String = \"new\", n: i64 = 2) -> String { return sort }");
    let f = function(&p, "get_a");
    assert_eq!(f.defaults, [(0, tir::Literal::Str("new".to_string())), (1, tir::Literal::I64(2))]);
}

#[test]
fn string_plus_number_suggests_to_string() {
    let diags = run("fn f(n: i64) -> String { return \"n = \" + n }").expect_err("errors");
    assert_eq!(diags[0].code, "H301");
    assert!(diags[0].notes.iter().any(|n| n.contains("to_string")), "{diags:?}");
}

#[test]
fn missing_return() {
    fails(
        "fn f(c: bool) -> i64 { if c { return 1 } }",
        "H403",
        "function `f` can reach its end without returning an `i64`",
    );
}

#[test]
fn while_true_diverges() {
    ok("fn f() -> i64 { while true { } }");
    fails("fn f() -> i64 { while true { break } }", "H403", "can reach its end");
}

#[test]
fn wrong_argument_count() {
    fails(
        "fn g(a: i64) -> i64 { return a }\nfn f() -> i64 { return g(1, 2) }",
        "H307",
        "takes 1 argument but 2 were given",
    );
}

#[test]
fn unknown_field() {
    fails("class P { x: i64 }\nfn f(p: P) -> i64 { return p.y }", "H204", "class `P` has no field `y`");
}

#[test]
fn missing_class_literal_field() {
    fails("class P { x: i64, y: i64 }\nfn f() -> P { return P { x: 1 } }", "H215", "missing field `y`");
}

#[test]
fn path_param_not_in_params() {
    fails(
        "route GET \"/users/{id}\" () -> i64 { return 1 }",
        "H222",
        "path parameter `{id}` has no matching parameter",
    );
}

#[test]
fn placeholder_count_mismatch() {
    let src = r#"
class U { id: i64, name: String, age: i32 }
table us: U key id
route POST "/u" (body: U) -> i64 { return db.exec("INSERT INTO us VALUES (?, ?, ?)", body.id, body.name) }
"#;
    fails(src, "H503", "the SQL has 3 `?` placeholders but 2 arguments are given");
}

#[test]
fn sql_must_be_literal() {
    let src = "route POST \"/u\" (q: String) -> i64 { return db.exec(q) }";
    fails(src, "H502", "SQL must be a string literal");
}

#[test]
fn none_without_type() {
    fails("fn f() { let x = none }", "H304", "`none` is unknown");
    fails("fn f() { var xs = [] }", "H304", "empty array");
}

#[test]
fn break_outside_loop() {
    fails("fn f() { break }", "H405", "`break` outside of a loop");
}

#[test]
fn push_to_immutable() {
    fails("fn f(xs: [i64]) { xs.push(1) }", "H401", "cannot push to `xs`");
}

#[test]
fn places_are_named_as_written() {
    fails("class P { x: i64 }\nfn f(p: P) { p.x = 1 }", "H401", "cannot assign to `p.x`: `p` is a read-only parameter");
    let src = "class B { xs: [i64], n: i64 }\nfn f() { var b = B { xs: [], n: 0 }\n for x in b.xs { b.n += x\n b.xs[0] = 1 } }";
    fails(src, "H406", "cannot modify `b.xs` while iterating over it");
    // The loop borrows from all of `b` (Low tracks a borrow by its local), so another field of
    // it may not change either.
    fails(src, "H406", "cannot modify `b.n` while iterating over `b.xs`");
    let diags = run(src).expect_err("errors");
    assert_eq!(diags.len(), 2, "{diags:?}");
}

#[test]
fn modify_while_iterating() {
    fails(
        "fn f() { var xs: [i64] = [1]\n for x in xs { xs.push(x) } }",
        "H406",
        "cannot modify `xs` while iterating over it",
    );
}

#[test]
fn unknown_class() {
    fails("fn f(u: Usr) {}", "H203", "unknown type `Usr`");
    fails("table t: Nope key id", "H203", "unknown class `Nope`");
}

#[test]
fn duplicate_function() {
    fails("fn f() {}\nfn f() {}", "H207", "function `f` is declared twice");
    fails("fn print() {}", "H207", "builtin function");
}

#[test]
fn main_cannot_use_db() {
    let src = "class U { id: i64 }\ntable us: U key id\nfn g() -> i64 { return db.exec(\"DELETE FROM us\") }\nfn main() { print(g()) }";
    fails(src, "H409", "`main` cannot call `g`");
}

#[test]
fn inout_aliasing_and_places() {
    let decl = "fn g(inout a: [i64], b: [i64]) {}\n";
    fails(&format!("{decl}fn f() {{ var xs: [i64] = []\n g(xs, xs) }}"), "H410", "passed twice");
    fails(&format!("{decl}fn f() {{ g([1], [2]) }}"), "H410", "must be a variable");
    ok(&format!("{decl}fn f() {{ var xs: [i64] = []\n let ys: [i64] = []\n g(xs, ys) }}"));
}

#[test]
fn unused_value_and_redeclaration() {
    fails("fn f(x: i64) { x == 1 }", "H407", "value is unused");
    fails("fn f() { let x = 1\n let x = 2 }", "H209", "already declared");
    ok("fn f() { let x = 1\n if true { let x = 2\n print(x) }\n print(x) }");
}

#[test]
fn route_shapes() {
    fails("route FETCH \"/a\" () {}", "H220", "unknown HTTP method");
    fails("route GET \"a\" () {}", "H221", "must start with `/`");
    fails("class U { id: i64 }\nroute GET \"/a\" (body: U) {}", "H224", "no request body");
    fails("route GET \"/a\" (n: i32 = 5000000000) {}", "H303", "does not fit");
    fails("route GET \"/a\" () {}\nroute GET \"/a\" () {}", "H212", "declared twice");
}

#[test]
fn literal_out_of_range() {
    fails("fn f() -> i32 { return 2147483648 }", "H303", "does not fit in `i32`");
    ok("fn f() -> i32 { return -2147483648 }");
}

#[test]
fn diagnostics_are_sorted_and_all_reported() {
    let diags = run("fn f() -> i64 { return a }\nfn g() -> i64 { return b }").expect_err("errors");
    assert_eq!(diags.len(), 2);
    assert!(diags[0].span.unwrap().start < diags[1].span.unwrap().start);
}

/// A program that uses every construct, for the positive test and as the seed of the
/// mutation test below.
const EVERYTHING: &str = r#"
class Point { x: f64, y: f64 }
class Tag { name: String, weight: i32? }
class Item { id: i64, tags: [Tag], at: Point?, done: bool }
table items_done: Tag key name

fn scale(inout p: Point, k: f64) {
    p.x *= k
    p.y = p.y * k
}

fn total(xs: [i64]) -> i64 {
    var s = 0
    for x in xs { s += x }
    return s
}

fn describe(it: Item) -> String {
    var out = "item " + to_string(it.id)
    if let at = it.at {
        out += " at " + to_string(at.x)
    } else {
        if it.done { out += " done" } else if it.id > 0 { out += " open" }
    }
    var i = 0
    while i < it.tags.len() {
        if it.tags[i].name == "skip" { i += 1
            continue }
        if let w = it.tags[i].weight { out += to_string(w) }
        i += 1
    }
    return out
}

fn bits(a: i32, b: i32) -> i32 {
    let m = (a & b) | (a ^ !b)
    return (m << 3) >> (b % 5) + min(a, b) - max(abs(a), 2) + (2.5 as i32)
}

fn pick(c: bool) -> i64? {
    if c { return 1 }
    return none
}

route PUT "/tags/{name}" (name: String, body: Tag) -> Tag? {
    var t = body.clone()
    t.name = name
    db.transaction {
        db.exec("DELETE FROM items_done WHERE name = ?", t.name)
        db.exec("INSERT INTO items_done (name, weight) VALUES (?, ?)", t.name, t.weight)
    }
    return db.query_one<Tag>("SELECT name, weight FROM items_done WHERE name = ?", name)
}

route GET "/sum" (n: i32 = -3, f: f64 = 1.5, flag: bool = true) -> f64 {
    var p = Point { y: 2.0, x: f }
    scale(p, 2.0)
    var xs: [i64] = [1, 2, 3]
    xs.push(n as i64)
    xs[0] = total(xs)
    let ys = [n, 4]
    if flag && !(ys.len() == 0) || false { return p.x + (xs[0] as f64) }
    return -p.y
}

fn main() {
    let it = Item { id: 1, tags: [Tag { name: "a", weight: 3 }, Tag { name: "b", weight: none }], at: Point { x: 1.0, y: 2.0 }, done: false }
    print(describe(it))
    print(bits(6, 3))
    for i in 0..3 { if i == 2 { break } }
    print(-9223372036854775808)
}
"#;

#[test]
fn everything_checks() {
    let p = ok(EVERYTHING);
    let sum = function(&p, "get_sum");
    assert_eq!(sum.defaults, [(0, tir::Literal::I32(-3)), (1, tir::Literal::F64(1.5)), (2, tir::Literal::Bool(true))]);
    assert!(!sum.is_async);
    assert!(function(&p, "put_tags_name").is_async);
    assert_eq!(function(&p, "scale").locals[0].kind, tir::LocalKind::Param(tir::ParamMode::Inout));
}

/// Deletes, duplicates and swaps words of the sample programs and checks whatever still
/// parses: the checker must report errors, never panic.
#[test]
fn mutated_programs_never_panic() {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    let mut parsed = 0;
    for source in [USERS, KERNEL, EVERYTHING] {
        let words: Vec<&str> = source.split_inclusive(|c: char| !c.is_alphanumeric() && c != '_').collect();
        for _ in 0..1500 {
            let mut w = words.clone();
            for _ in 0..1 + next(3) {
                let i = next(w.len());
                match next(3) {
                    0 => {
                        w.remove(i);
                    }
                    1 => w.insert(i, words[next(words.len())]),
                    _ => {
                        let j = next(w.len());
                        w.swap(i, j);
                    }
                }
            }
            let text: String = w.concat();
            if let Ok(file) = nagi_syntax::parse(&text) {
                parsed += 1;
                let _ = check(&file, &no_sql_check, &|span| format!("byte {}", span.start));
            }
        }
    }
    assert!(parsed > 100, "too few mutants parsed ({parsed}) to mean anything");
}

/// docs/language.md §11.2: `try` covers the method calls after its call; a field of the call's
/// result is a field of a temporary (H312), as §6.8 says.
#[test]
fn try_covers_the_methods_after_its_call_and_a_field_of_the_result_is_h312() {
    let fns = "class Post { id: i64, title: String }\n\
        fn title_of(id: i64) fails -> String {\n    if id < 0 { fail(404, \"no\") }\n    return \"t\"\n}\n\
        fn find(id: i64) fails -> Post {\n    if id < 0 { fail(404, \"no\") }\n    return Post { id: id, title: \"t\" }\n}\n";
    ok(&format!("{fns}route GET \"/a/{{id}}\" (id: i64) -> i64 {{ return try title_of(id).len() }}"));
    fails(
        &format!("{fns}route GET \"/a/{{id}}\" (id: i64) -> String {{ return try find(id).title }}"),
        "H312",
        "cannot read a field of a temporary",
    );
}

#[test]
fn generic_instances_are_ordinary_functions_and_classes() {
    let p = ok(r#"
class Box<T> { value: T }
fn unbox<T>(b: Box<T>) -> T { return b.value.clone() }
fn again<T>(b: Box<T>) -> T? {
    let v = unbox(b)
    return v
}
fn largest<T: ord + copy>(xs: [T], start: T) -> T {
    var best = start
    for x in xs { if x > best { best = x } }
    return best
}
fn first<T>(xs: [T]) -> T? {
    var out: T? = none
    if xs.len() > 0 { out = xs[0].clone() }
    return out
}
fn main() {
    if let v = again(Box { value: 4 }) { print(v) }
    let best: i64? = largest([3, 9, 4], 0)
    let xs: [i64?] = [none, 3]
    let f = first(xs)
    let t = largest([now()], now())
}
"#);
    let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["main", "again.i64", "largest.i64", "first.Option.i64", "largest.Time", "unbox.i64"]);
    assert_eq!(p.classes.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["Box.i64"]);
    // `T?` of `T = i64?` is `i64?`: there is no option of an option.
    assert_eq!(function(&p, "first.Option.i64").ret, Ty::Option(Box::new(Ty::I64)));
    // The template's own failure-free body, a class with `Failure` in it and `Failure.start()`
    // are checked without a panic.
    ok("class Report { failure: Failure }\nfn main() { print(1) }");
    fails("fn main() { Failure.start() }", "H201", "unknown variable `Failure`");
}

#[test]
fn generic_rules_have_their_diagnostics() {
    fails(
        "fn clear<T>(inout x: T?) { x = none }\nfn main() {\n    var n = 5\n    clear(n)\n}",
        "H301",
        "the `inout` parameter is `i64?`, found `i64`",
    );
    fails(
        "fn grow<T>(inout xs: [T], x: T) { xs.push(x.clone()) }\nfn main() { grow([1], 2) }",
        "H410",
        "must be a variable",
    );
    fails(
        "fn keep<T>(x: T) -> i64 { return 1 }\nfn work() -> i64 { return 2 }\nfn main() {\n    scope {\n        let t = spawn work()\n        print(keep(t))\n    }\n}",
        "H417",
        "a type argument cannot be `Task<i64>`",
    );
    fails(
        "class Tree<T> {\n    value: T\n    kids: [Tree<[T]>]\n}\nfn main() { print(1) }",
        "H433",
        "ever larger type arguments",
    );
    fails("fn empty<T>() -> [T] { return [] }\nfn main() { let e = empty() }", "H433", "does not say what `T`");
    fails("fn f<T: big>(x: T) {}\nfn main() { f(1) }", "H433", "unknown capability `big`");
    fails("class Page<T> { items: [T] }\nfn main() { let p: Page = none }", "H433", "needs its type arguments");
    fails("fn f<T>(x: T) fails {}\nfn main() {\n    scope {\n        spawn f(1)\n    }\n}", "H417", "can fail");
}

const COUNT_WHERE: &str = "fn count_where(xs: [i64], keep: fn(i64) -> bool) -> i64 {
    var keep_n = 0
    for x in xs { if keep(x) { keep_n += 1 } }
    return keep_n
}
";

#[test]
fn closures_passed_to_functions_are_lifted_with_their_captures() {
    let p = ok(&format!(
        "{COUNT_WHERE}
fn apply_all<T, U>(xs: [T], f: fn(T) -> U) -> [U] {{
    var out: [U] = []
    for x in xs {{ out.push(f(x)) }}
    return out
}}
fn each(xs: [i64], visit: fn(i64)) {{
    for x in xs {{ visit(x) }}
}}
fn main() {{
    let n = 10
    print(count_where([1, 20], fn(x) => x > n))
    each([1], fn(x: i64) {{
        print(n)
        let n = x * 2
        print(n)
    }})
    let ys = apply_all([1, 2], fn(x: i64) -> i64 {{ return x * n }})
}}
"
    ));
    let closure = function(&p, "main.closure1");
    // The closure's parameter, then its capture.
    let params: Vec<&str> = closure.params.iter().map(|&l| closure.locals[l].name.as_str()).collect();
    assert_eq!(params, ["x", "n"]);
    assert!(p.functions.iter().any(|f| f.name == "count_where.main.closure1"));
    assert!(p.functions.iter().any(|f| f.name == "apply_all.i64.i64.main.closure3"));
}

#[test]
fn function_parameters_have_their_rules() {
    fails(
        "fn bump_until(inout n: i64, done: fn() -> bool) {\n    while !done() { n += 1 }\n}\nfn main() {\n    var n = 0\n    bump_until(n, fn() => n >= 3)\n}",
        "H410",
        "passed twice",
    );
    fails(
        &format!(
            "{COUNT_WHERE}fn rows(rows: [[i64]], big: fn(i64) -> bool) -> i64 {{\n    return count_where([0], fn(i) => count_where(rows[i], big) > 0)\n}}\nfn main() {{ print(1) }}"
        ),
        "H432",
        "cannot use `big`",
    );
    fails(
        "fn ten(x: i64) -> i64 { return x * 10 }\nfn hit(pick: fn(i64) -> i64?) -> i64 { return 0 }\nfn main() { print(hit(ten)) }",
        "H432",
        "takes `fn(i64) -> i64?` here, and `ten` is `fn(i64) -> i64`",
    );
    fails(
        "fn keep(t: fn(i64) -> bool) -> bool {\n    let s = t\n    return true\n}\nfn main() { print(1) }",
        "H432",
        "not a value",
    );
    fails("route GET \"/x\" (f: fn(i64)) -> i64 { return 1 }", "H432", "only the type of a function's parameter");
    // A closure's error inside a template is reported by the template's check, once.
    let diags = run(&format!(
        "{COUNT_WHERE}fn outer(xs: [i64]) -> i64 {{\n    return count_where(xs, fn(y: i64) -> bool {{ if y > 1 {{ return true }} }})\n}}\nfn main() {{ print(1) }}"
    ))
    .expect_err("H403");
    assert_eq!(diags.iter().filter(|d| d.code == "H403").count(), 1, "{diags:?}");
}
