//! Tests of the High Nagi grammar through `nagi_syntax::parse`: AST shapes (precedence,
//! statements, declarations, `db` operations, class literals), spans, how line breaks end or
//! continue statements, contextual words, syntax error messages and positions, and the golden
//! and example programs of the repository.

use nagi_syntax::ast::*;
use nagi_syntax::{SyntaxError, parse};

// ---------------------------------------------------------------------------------------------
// Helpers: a compact S-expression rendering of the AST, so shapes can be compared as strings.

fn ty(t: &TypeExpr) -> String {
    match &t.kind {
        TypeExprKind::Named(n) => n.clone(),
        TypeExprKind::Array(inner) => format!("[{}]", ty(inner)),
        TypeExprKind::Option(inner) => format!("{}?", ty(inner)),
        TypeExprKind::Map(k, v) => format!("Map<{}, {}>", ty(k), ty(v)),
        TypeExprKind::Result(ok) => format!("Result<{}>", ty(ok)),
        TypeExprKind::Generic(name, args) => format!("{name}<{}>", args.iter().map(ty).collect::<Vec<_>>().join(", ")),
        TypeExprKind::Fn(params, ret) => {
            let ret = ret.as_ref().map_or(String::new(), |r| format!(" -> {}", ty(r)));
            format!("fn({}){ret}", params.iter().map(ty).collect::<Vec<_>>().join(", "))
        }
    }
}

fn list(es: &[Expr]) -> String {
    es.iter().map(sx).map(|s| format!(" {s}")).collect()
}

fn sx(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Duration(us) => format!("{us}us"),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Interp { texts, holes } => {
            let holes = holes.iter().map(|h| format!(" {}", sx(h)));
            let texts = texts.iter().map(|t| format!(" {t:?}"));
            let mut parts = String::new();
            for (text, hole) in texts.zip(holes.map(Some).chain(std::iter::once(None))) {
                parts.push_str(&text);
                parts.push_str(&hole.unwrap_or_default());
            }
            format!("(interp{parts})")
        }
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::None => "none".into(),
        ExprKind::Name(n) => n.name.clone(),
        ExprKind::Array(items) => format!("(array{})", list(items)),
        ExprKind::ClassLit { class, fields } => {
            let fields: String = fields.iter().map(|(n, v)| format!(" {}:{}", n.name, sx(v))).collect();
            format!("({}{fields})", class.name)
        }
        ExprKind::Unary { op: UnaryOp::Neg, operand } => format!("(neg {})", sx(operand)),
        ExprKind::Unary { op: UnaryOp::Not, operand } => format!("(not {})", sx(operand)),
        ExprKind::Binary { op, lhs, rhs } => format!("({} {} {})", op.symbol(), sx(lhs), sx(rhs)),
        ExprKind::Cast { expr, ty: t } => format!("(as {} {})", sx(expr), ty(t)),
        ExprKind::Call { callee, args } => format!("(call {}{})", callee.name, list(args)),
        ExprKind::MethodCall { receiver, method, args } => {
            format!("(.{}() {}{})", method.name, sx(receiver), list(args))
        }
        ExprKind::Field { object, field } => format!("(.{} {})", field.name, sx(object)),
        ExprKind::Index { array, index } => format!("(index {} {})", sx(array), sx(index)),
        ExprKind::Try(inner) => format!("(try {})", sx(inner)),
        ExprKind::Spawn(inner) => format!("(spawn {})", sx(inner)),
        ExprKind::SpawnBlocking(inner) => format!("(spawn_blocking {})", sx(inner)),
        ExprKind::TryOption(inner) => format!("(try? {})", sx(inner)),
        ExprKind::Catch(inner) => format!("(catch {})", sx(inner)),
        ExprKind::Closure { params, body } => format!("(fn [{}] {})", closure_params(params), sx(body)),
        ExprKind::BlockClosure { params, ret, body } => {
            let ret = ret.as_ref().map_or(String::new(), |r| format!(" -> {}", ty(r)));
            format!("(fn [{}]{ret} {})", closure_params(params), block(body))
        }
        ExprKind::Send(inner) => format!("(send {})", sx(inner)),
        ExprKind::Db { op, class, args } => {
            let class = class.as_ref().map_or(String::new(), |c| format!("<{}>", ty(c)));
            format!("(db.{}{class}{})", op.name, list(args))
        }
        ExprKind::Http { method, class, args } => {
            let class = class.as_ref().map_or(String::new(), |c| format!("<{}>", ty(c)));
            format!("(http.{}{class}{})", method.name, list(args))
        }
    }
}

fn closure_params(params: &[ClosureParam]) -> String {
    let params: Vec<String> = params
        .iter()
        .map(|p| match &p.ty {
            Some(t) => format!("{}: {}", p.name.name, ty(t)),
            None => p.name.name.clone(),
        })
        .collect();
    params.join(" ")
}

fn block(b: &Block) -> String {
    let stmts: Vec<String> = b.stmts.iter().map(stmt).collect();
    format!("{{{}}}", stmts.join("; "))
}

fn stmt(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Let { mutable, name, ty: t, value } => {
            let t = t.as_ref().map_or(String::new(), |t| format!(": {}", ty(t)));
            format!("{} {}{t} = {}", if *mutable { "var" } else { "let" }, name.name, sx(value))
        }
        StmtKind::Assign { target, op, value } => {
            let op = op.map_or(String::new(), |o| o.symbol().to_string());
            format!("{} {op}= {}", sx(target), sx(value))
        }
        StmtKind::If { cond, then_block, else_block } => {
            let els = else_block.as_ref().map_or(String::new(), |b| format!(" else {}", block(b)));
            format!("if {} {}{els}", sx(cond), block(then_block))
        }
        StmtKind::IfLet { name, value, then_block, else_block } => {
            let els = else_block.as_ref().map_or(String::new(), |b| format!(" else {}", block(b)));
            format!("if let {} = {} {}{els}", name.name, sx(value), block(then_block))
        }
        StmtKind::While { cond, body } => format!("while {} {}", sx(cond), block(body)),
        StmtKind::For { var, iter: ForIter::Range(a, b), body } => {
            format!("for {} in {}..{} {}", var.name, sx(a), sx(b), block(body))
        }
        StmtKind::For { var, iter: ForIter::Each(e), body } => format!("for {} in {} {}", var.name, sx(e), block(body)),
        StmtKind::For { var, iter: ForIter::Entries(value, e), body } => {
            format!("for {}, {} in {} {}", var.name, value.name, sx(e), block(body))
        }
        StmtKind::Break => "break".into(),
        StmtKind::Continue => "continue".into(),
        StmtKind::Return(None) => "return".into(),
        StmtKind::Return(Some(e)) => format!("return {}", sx(e)),
        StmtKind::Transaction(b) => format!("db.transaction {}", block(b)),
        StmtKind::Scope(b) => format!("scope {}", block(b)),
        StmtKind::Defer(e) => format!("defer {}", sx(e)),
        StmtKind::Match { scrutinee, arms } => {
            let arms: Vec<String> = arms
                .iter()
                .map(|arm| {
                    let patterns: Vec<String> = arm.patterns.iter().map(pattern).collect();
                    format!("{} => {}", patterns.join(" | "), block(&arm.body))
                })
                .collect();
            format!("match {} [{}]", sx(scrutinee), arms.join(", "))
        }
        StmtKind::Expr(e) => sx(e),
    }
}

fn pattern(p: &Pattern) -> String {
    match &p.kind {
        PatternKind::Wildcard => "_".into(),
        PatternKind::Variant { enum_name, variant, binding } => {
            let prefix = enum_name.as_ref().map_or(String::new(), |e| format!("{}.", e.name));
            let bound = binding.as_ref().map_or(String::new(), |b| format!("({})", b.name));
            format!("{prefix}{}{bound}", variant.name)
        }
        PatternKind::Int { negative, magnitude } => format!("{}{magnitude}", if *negative { "-" } else { "" }),
        PatternKind::Str(s) => format!("{s:?}"),
        PatternKind::Bool(b) => b.to_string(),
    }
}

fn parse_ok(src: &str) -> SourceFile {
    parse(src).unwrap_or_else(|e| panic!("{src:?} should parse, got {e:?}"))
}

fn parse_err(src: &str) -> SyntaxError {
    match parse(src) {
        Ok(file) => panic!("{src:?} should not parse, got {file:?}"),
        Err(e) => e,
    }
}

/// The only function of `src`.
fn only_fn(file: &SourceFile) -> &FnDecl {
    match file.items.as_slice() {
        [Item::Function(f)] => f,
        other => panic!("expected one function, got {other:?}"),
    }
}

/// The statements of `fn main() { BODY }`, rendered.
fn body(src_body: &str) -> String {
    let src = format!("fn main() {{\n{src_body}\n}}");
    block(&only_fn(&parse_ok(&src)).body)
}

/// The expression `e`, rendered (parsed as the value of a `let`).
fn expr(e: &str) -> String {
    body(&format!("let x = {e}")).strip_prefix("{let x = ").unwrap().strip_suffix('}').unwrap().to_string()
}

fn span(start: u32, end: u32) -> Span {
    Span { start, end }
}

// ---------------------------------------------------------------------------------------------
// Expressions.

#[test]
fn interpolated_strings_hold_expressions_strings_and_braces() {
    assert_eq!(expr(r#""a{x}b""#), r#"(interp "a" x "b")"#);
    assert_eq!(expr(r#""{a + 1} of {f(b)}""#), r#"(interp "" (+ a 1) " of " (call f b) "")"#);
    assert_eq!(expr(r#""{{x}} {y}""#), r#"(interp "{x} " y "")"#);
    assert_eq!(expr(r#""\u{41}{n}\"""#), r#"(interp "A" n "\"")"#);
    // A hole's string may have holes of its own, whose strings have braces of their own.
    assert_eq!(expr(r#""{"{"}}"}"}""#), r#"(interp "" (interp "" "}" "") "")"#);
    // A string in a hole interpolates too: its own braces are doubled.
    assert_eq!(expr(r#""<{"a\"}}"}>""#), r#"(interp "<" "a\"}" ">")"#);
    // Without a hole a string is a plain literal, braces escaped or not.
    assert_eq!(expr(r#""{{}}""#), r#""{}""#);
}

#[test]
fn route_paths_and_test_names_are_literal() {
    let file = parse_ok(
        "route GET \"/users/{id}\" (id: i64) -> i64 {\n    return id\n}\ntest \"GET /users/{id} is 404\" {\n}\n",
    );
    match file.items.as_slice() {
        [Item::Route(route), Item::Test(test)] => {
            assert_eq!(route.path.value, "/users/{id}");
            assert_eq!(test.name.value, "GET /users/{id} is 404");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn broken_interpolations_are_syntax_errors_at_the_brace() {
    let cases = [
        ("    let s = \"a {b\"", "unclosed `{` in a string; write `{{` for a brace", 15),
        ("    let s = \"a } b\"", "a lone `}` in a string; write `}}` for a brace", 15),
        ("    let s = \"a {} b\"", "an empty `{}` in a string; write `{{}}` for braces", 15),
        ("    let s = \"a {b // c} d\"", "a comment inside a string's `{…}`", 18),
        ("    let s = \"a {\"b} d\"", "unclosed `{` in a string; write `{{` for a brace", 15),
        ("    let s = \"a {\"b}\"} d\"", "a lone `}` in a string; write `}}` for a brace", 18),
    ];
    for (line, message, column) in cases {
        let src = format!("fn main() {{\n{line}\n}}");
        let e = parse_err(&src);
        assert_eq!(e.message, message, "{line}");
        // The error's offset, from the start of the line.
        assert_eq!(e.span.start as usize - "fn main() {\n".len(), column, "{line}");
    }
}

#[test]
fn duration_literals_are_microseconds_in_every_unit() {
    assert_eq!(expr("1500us + 250ms"), "(+ 1500us 250000us)");
    assert_eq!(expr("5s - 2m"), "(- 5000000us 120000000us)");
    assert_eq!(expr("1h * 2"), "(* 3600000000us 2)");
    assert_eq!(expr("-1d"), "(neg 86400000000us)");
    assert_eq!(expr("1_000ms"), "1000000us");
}

#[test]
fn binary_operators_follow_the_precedence_table_and_associate_left() {
    assert_eq!(expr("1 + 2 * 3"), "(+ 1 (* 2 3))");
    assert_eq!(expr("(1 + 2) * 3"), "(* (+ 1 2) 3)");
    assert_eq!(expr("a - b - c"), "(- (- a b) c)");
    assert_eq!(expr("a / b % c * d"), "(* (% (/ a b) c) d)");
    assert_eq!(expr("a || b && c"), "(|| a (&& b c))");
    assert_eq!(expr("a && b == c"), "(&& a (== b c))");
    assert_eq!(expr("a == b | c"), "(== a (| b c))");
    assert_eq!(expr("a | b ^ c"), "(| a (^ b c))");
    assert_eq!(expr("a ^ b & c"), "(^ a (& b c))");
    assert_eq!(expr("a & b << c"), "(& a (<< b c))");
    assert_eq!(expr("a >> b + c"), "(>> a (+ b c))");
    assert_eq!(expr("a + b * c as i64"), "(+ a (* b (as c i64)))");
    assert_eq!(expr("-a * b"), "(* (neg a) b)");
    assert_eq!(expr("!a.b && c"), "(&& (not (.b a)) c)");
    assert_eq!(expr("- -x"), "(neg (neg x))");
    assert_eq!(expr("x as i32 as f64"), "(as (as x i32) f64)");
    assert_eq!(expr("-x as f64"), "(as (neg x) f64)");
    for (op, sym) in [("==", "=="), ("!=", "!="), ("<", "<"), ("<=", "<="), (">", ">"), (">=", ">=")] {
        assert_eq!(expr(&format!("a + 1 {op} b")), format!("({sym} (+ a 1) b)"));
    }
}

#[test]
fn comparisons_do_not_chain() {
    let e = parse_err("fn main() {\n    if a < b < c {\n    }\n}");
    assert_eq!(e.message, "expected one of `&&`, `{`, `||`, found `<`");
    assert_eq!(e.label, "unexpected `<`");
    assert_eq!(e.span, span(25, 26));
    // Parenthesised, a comparison is an operand like any other.
    assert_eq!(expr("(a < b) == c"), "(== (< a b) c)");
}

#[test]
fn postfix_forms_calls_literals_and_casts() {
    assert_eq!(expr("f(1, g(2), )"), "(call f 1 (call g 2))");
    assert_eq!(expr("f()"), "(call f)");
    assert_eq!(expr("xs.len()"), "(.len() xs)");
    assert_eq!(expr("a.b.c[i].push(1, 2)"), "(.push() (index (.c (.b a)) i) 1 2)");
    assert_eq!(expr("m[i][j]"), "(index (index m i) j)");
    assert_eq!(expr("[1, [2], []]"), "(array 1 (array 2) (array))");
    assert_eq!(expr("[\n  1,\n  2,\n]"), "(array 1 2)");
    assert_eq!(expr("f().g().h"), "(.h (.g() (call f)))");
    // Only a name can be called: the result of a call cannot.
    let e = parse_err("fn main() { f(a)(b) }");
    assert_eq!((e.label.as_str(), e.span), ("unexpected `(`", span(16, 17)));
}

#[test]
fn every_literal_form_reaches_the_ast() {
    assert_eq!(expr("0"), "0");
    assert_eq!(expr("1_000_000"), "1000000");
    assert_eq!(expr("18446744073709551615"), "18446744073709551615");
    assert_eq!(expr("-9223372036854775808"), "(neg 9223372036854775808)");
    assert_eq!(expr("2.5e-3"), "0.0025");
    assert_eq!(expr("1e3"), "1000.0");
    assert_eq!(expr(r#""tab\there \"q\" \u{2713}\n""#), r#""tab\there \"q\" ✓\n""#);
    assert_eq!(expr("true && false"), "(&& true false)");
    assert_eq!(expr("none"), "none");
}

#[test]
fn class_literals_and_the_class_literal_brace_rule() {
    assert_eq!(expr("Point { x: 1, y: f(2) }"), "(Point x:1 y:(call f 2))");
    assert_eq!(expr("Point {}"), "(Point)");
    assert_eq!(
        expr("Line {\n    a: Point { x: 1, },\n    b: Point {\n        x: 2\n    },\n}"),
        "(Line a:(Point x:1) b:(Point x:2))"
    );
    assert_eq!(expr("[Point { x: 1 }]"), "(array (Point x:1))");
    // A lowercase name before `{` is not a class literal: here the `{` opens the `if` block.
    assert_eq!(body("if ready { go() }"), "{if ready {(call go)}}");
    // The documented trap: `Running {}` is read as a class literal, so the `while` has no body
    // (the error is at the zero-width `;` inserted at the line break).
    let e = parse_err("fn main() {\n    while Running {}\n}");
    assert_eq!((e.message.as_str(), e.span), ("expected `{`, found end of statement", span(32, 32)));
    // Line breaks inside a class literal do not separate fields: commas are needed.
    let e = parse_err("fn main() {\n    let p = P {\n        x: 1\n        y: 2\n    }\n}");
    assert_eq!((e.label.as_str(), e.span), ("unexpected `y`", span(49, 50)));
    assert!(e.message.starts_with("expected one of ") && e.message.contains("`,`"), "{}", e.message);
}

#[test]
fn outbound_calls_and_their_type_arguments() {
    assert_eq!(expr(r#"http.get(url)"#), "(http.get url)");
    // `<` after `http.name` opens type arguments, as after `db.name`.
    assert_eq!(expr(r#"http.post<Verdict>(u, b, [h], 2s)"#), "(http.post<Verdict> u b (array h) 2000000us)");
    assert_eq!(expr("try? http.delete(u)"), "(try? (http.delete u))");
    let e = parse_err("fn main() {\n    http.head(u)\n}");
    assert_eq!(
        e.message,
        "unknown outbound call `http.head`; expected `http.get`, `http.post`, `http.put`, `http.patch` or `http.delete`"
    );
    assert_eq!(e.span, span(21, 25));
    // `http` is a keyword: not a name.
    let e = parse_err("fn main() {\n    let http = 1\n}");
    assert_eq!((e.message.as_str(), e.span), ("expected a name, found `http`", span(20, 24)));
}

#[test]
fn db_operations_and_their_type_arguments() {
    assert_eq!(expr(r#"db.exec("DELETE FROM t WHERE id = ?", id)"#), r#"(db.exec "DELETE FROM t WHERE id = ?" id)"#);
    assert_eq!(expr(r#"db.query<User>("SELECT * FROM users")"#), r#"(db.query<User> "SELECT * FROM users")"#);
    assert_eq!(expr("db.query_one<User>(q, 1) == none"), "(== (db.query_one<User> q 1) none)");
    assert_eq!(body("db.transaction {\n    db.exec(q)\n}"), "{db.transaction {(db.exec q)}}");
    // `db.` names outside the list are errors at the name.
    let e = parse_err("fn main() {\n    db.select(q)\n}");
    assert_eq!(e.message, "unknown database operation `db.select`; expected `db.exec`, `db.query`, `db.query_one`");
    assert_eq!(e.span, span(19, 25));
    let e = parse_err("fn main() {\n    db.commit {\n    }\n}");
    assert_eq!(e.message, "unknown database operation `db.commit`; expected `db.transaction`");
    assert_eq!(e.span, span(19, 25));
    // `db` is a keyword: not a name.
    let e = parse_err("fn main() {\n    let db = 1\n}");
    assert_eq!((e.message.as_str(), e.span), ("expected a name, found `db`", span(20, 22)));
}

// ---------------------------------------------------------------------------------------------
// Statements and line breaks.

#[test]
fn every_statement_form() {
    let src = "\
let a = 1
let b: [i64]? = none
var c: i32 = 2
c = 3
c += 1; c -= 1; c *= 2; c /= 2; c %= 5
xs[0].f = c
while c > 0 {
    c -= 1
    if c == 5 { break }
    continue
}
for i in 0..n { print(i) }
for x in xs { print(x) }
if let v = opt { print(v) } else { return }
db.transaction { db.exec(q) }
scope { defer close(a, \"x\") }
print(a)
return a + 1";
    assert_eq!(
        body(src),
        "{let a = 1; let b: [i64]? = none; var c: i32 = 2; c = 3; c += 1; c -= 1; c *= 2; c /= 2; c %= 5; \
         (.f (index xs 0)) = c; while (> c 0) {c -= 1; if (== c 5) {break}; continue}; \
         for i in 0..n {(call print i)}; for x in xs {(call print x)}; \
         if let v = opt {(call print v)} else {return}; db.transaction {(db.exec q)}; \
         scope {defer (call close a \"x\")}; (call print a); return (+ a 1)}"
    );
}

#[test]
fn map_types_and_two_variable_for_loops() {
    // `Map` opens type arguments, nested ones close one `>` at a time, and a line break after
    // the closing `>` ends the statement.
    let src = "var m: Map<String, Map<i64, [f64]>> = Map.new()
let n: Map<i64, String?> = Map.new()
for k, v in m { print(k) }
print(a < b)";
    assert_eq!(
        body(src),
        "{var m: Map<String, Map<i64, [f64]>> = (.new() Map); let n: Map<i64, String?> = (.new() Map); \
         for k, v in m {(call print k)}; (call print (< a b))}"
    );
    // Any capitalised type takes type arguments (a generic class's instance); `Map` takes two.
    let e = parse_err("fn main() { let x: Map<i64> = y }");
    assert!(e.message.contains("takes 2 type arguments"), "{}", e.message);
}

#[test]
fn if_else_chains_and_else_on_the_next_line() {
    assert_eq!(
        body("if a { f() } else if b { g() } else { h() }"),
        "{if a {(call f)} else {if b {(call g)} else {(call h)}}}"
    );
    // `}` and `else` on separate lines, with blank and comment lines between them.
    assert_eq!(body("if a {\n    f()\n}\nelse {\n    g()\n}"), "{if a {(call f)} else {(call g)}}");
    assert_eq!(body("if a {\n}\n\n// why not\nelse {\n}"), "{if a {} else {}}");
    assert_eq!(body("if a {\n} // trailing\nelse if b {\n}\nelse {\n}"), "{if a {} else {if b {} else {}}}");
    // The `else if` block spans the nested `if`.
    let src = "fn main() { if a {} else if b {} }";
    let file = parse_ok(src);
    let f = only_fn(&file);
    let StmtKind::If { else_block: Some(els), .. } = &f.body.stmts[0].kind else { panic!() };
    assert_eq!((els.span, els.stmts[0].span), (span(25, 32), span(25, 32)));
}

#[test]
fn else_without_if_has_its_own_message() {
    let src = "fn main() {\n    let x = 1\n    print(x)\n    else {\n        print(0)\n    }\n}\n";
    assert_eq!(
        parse_err(src),
        SyntaxError {
            message: "`else` without an `if`: `else` must follow the `}` of an `if` block".into(),
            label: "no `if` block ends right before this".into(),
            span: span(43, 47),
        }
    );
}

#[test]
fn line_breaks_continue_expressions_after_operators_and_inside_brackets() {
    assert_eq!(
        body("let total = 1 +\n    2\nlet s = (total\n    + 4)\nf(\n    a,\n    b,\n)"),
        "{let total = (+ 1 2); let s = (+ total 4); (call f a b)}"
    );
    assert_eq!(body("let ok = a &&\n    b ||\n    c"), "{let ok = (|| (&& a b) c)}");
    // After a comment at the end of an operator line, too.
    assert_eq!(body("let t = 1 + // one\n    2"), "{let t = (+ 1 2)}");
}

#[test]
fn line_breaks_end_statements_after_a_token_that_can_end_one() {
    // `return` and its value must share a line: here `return` stands alone, and `5` is a
    // separate statement.
    assert_eq!(body("return\n5"), "{return; 5}");
    // A line starting with `-` is a new statement (a negation), not a subtraction.
    assert_eq!(body("let x = 1\n- 2"), "{let x = 1; (neg 2)}");
    // A line starting with a binary-only operator or `.` is a syntax error at that token.
    let e = parse_err("fn main() {\n    let x = 1\n        + 2\n}");
    assert_eq!((e.label.as_str(), e.span), ("unexpected `+`", span(34, 35)));
    assert!(
        e.message.starts_with("expected one of `!`, `(`, `-`, `[`, `break`, `catch`, `continue`, `db`"),
        "{}",
        e.message
    );
    let e = parse_err("fn main() {\n    xs\n        .len()\n}");
    assert_eq!((e.label.as_str(), e.span), ("unexpected `.`", span(27, 28)));
    // Two statements on a line need a `;`.
    assert_eq!(body("let a = 1; let b = 2; print(a + b)"), "{let a = 1; let b = 2; (call print (+ a b))}");
    let e = parse_err("fn main() { let a = 1 let b = 2 }");
    assert_eq!((e.label.as_str(), e.span), ("unexpected `let`", span(22, 25)));
    assert!(e.message.starts_with("expected one of `!=`, `%`, `&&`, `&`, `*`, `+`, `-`, `.`"), "{}", e.message);
    assert!(e.message.ends_with(" more, found `let`"), "{}", e.message);
    // Extra `;` and blank lines are fine anywhere between statements and items.
    assert_eq!(body(";;\n\nlet a = 1;;\n\n;"), "{let a = 1}");
    assert_eq!(parse_ok(";\nfn a() {};\n\n;fn b() {}\n").items.len(), 2);
}

#[test]
fn the_body_brace_must_be_on_the_line_of_its_statement() {
    let e = parse_err("fn main() {\n    if x\n    {\n    }\n}");
    assert_eq!((e.message.as_str(), e.span), ("expected `{`, found end of statement", span(20, 20)));
    let e = parse_err("fn main()\n{\n}");
    assert_eq!((e.message.as_str(), e.span), ("expected one of `->`, `{`, a name, found end of statement", span(9, 9)));
}

// ---------------------------------------------------------------------------------------------
// Declarations and contextual words.

#[test]
fn class_declarations_separate_fields_by_line_breaks_commas_or_semis() {
    let src = "class P {\n    x: i32\n    tags: [String], n: i64?; m: [[f64]]?\n}\nclass E {}\nclass One { a: bool }";
    let file = parse_ok(src);
    let classes: Vec<String> = file
        .items
        .iter()
        .map(|i| match i {
            Item::Class(c) => {
                let fields: Vec<String> = c.fields.iter().map(|f| format!("{}: {}", f.name.name, ty(&f.ty))).collect();
                format!("{}({})", c.name.name, fields.join(", "))
            }
            other => panic!("expected classes, got {other:?}"),
        })
        .collect();
    assert_eq!(classes, ["P(x: i32, tags: [String], n: i64?, m: [[f64]]?)", "E()", "One(a: bool)"]);
    let Item::Class(p) = &file.items[0] else { unreachable!() };
    assert_eq!(p.span, span(0, 63));
    assert_eq!(p.fields[3].ty.span, span(53, 61));
}

#[test]
fn key_is_a_contextual_word_of_table_declarations_only() {
    let file = parse_ok("table users: User key id\n");
    let [Item::Table(t)] = file.items.as_slice() else { panic!("{file:?}") };
    assert_eq!((t.name.name.as_str(), t.class.name.as_str(), t.key.name.as_str()), ("users", "User", "id"));
    assert_eq!((t.span, t.name.span, t.class.span, t.key.span), (span(0, 24), span(6, 11), span(13, 17), span(22, 24)));
    // Any other word in its place is an error at that word.
    let e = parse_err("table users: User primary id");
    assert_eq!(
        e,
        SyntaxError { message: "expected `key`, found `primary`".into(), label: "here".into(), span: span(18, 25) }
    );
    // Elsewhere `key` is an ordinary name: a field, a variable, a table's key field itself.
    let src = "class Entry { key: String }\ntable entries: Entry key key\nfn f(key: i64) { let key = key + 1 }";
    let file = parse_ok(src);
    let Item::Table(t) = &file.items[1] else { panic!() };
    assert_eq!(t.key.name, "key");
    let Item::Function(f) = &file.items[2] else { panic!() };
    assert_eq!(block(&f.body), "{let key = (+ key 1)}");
}

#[test]
fn routes_functions_and_parameters() {
    let src = "route GET \"/users/{id}\" (id: i64, limit: i32 = 10) -> User? {\n    return none\n}\n\
               fn swap(inout a: [i32], i: i64,) {\n}\n";
    let file = parse_ok(src);
    let [Item::Route(r), Item::Function(f)] = file.items.as_slice() else { panic!("{file:?}") };
    assert_eq!((r.method.name.as_str(), r.path.value.as_str()), ("GET", "/users/{id}"));
    assert_eq!(r.path.span, span(10, 23));
    let params: Vec<(bool, &str, String, Option<String>)> =
        r.params.iter().map(|p| (p.inout, p.name.name.as_str(), ty(&p.ty), p.default.as_ref().map(sx))).collect();
    assert_eq!(params, [(false, "id", "i64".into(), None), (false, "limit", "i32".into(), Some("10".into()))]);
    assert_eq!(r.params[1].span, span(34, 49));
    assert_eq!(r.ret.as_ref().map(ty), Some("User?".into()));
    assert_eq!(block(&r.body), "{return none}");
    assert_eq!(f.name.name, "swap");
    assert_eq!((f.params[0].inout, f.params[1].inout, f.params.len()), (true, false, 2));
    assert_eq!(f.ret, None);
    // Route methods are names, checked later: the grammar takes any.
    assert!(matches!(&parse_ok("route FETCH \"/\" () {}").items[0], Item::Route(r) if r.method.name == "FETCH"));
}

// ---------------------------------------------------------------------------------------------
// Spans.

#[test]
fn spans_of_identifiers_expressions_statements_blocks_and_items() {
    let src = "fn main() {\n    let total = (a + b) * c\n    print(total)\n}\n";
    let file = parse_ok(src);
    let f = only_fn(&file);
    assert_eq!((f.span, f.name.span, f.body.span), (span(0, 58), span(3, 7), span(10, 58)));
    let let_stmt = &f.body.stmts[0];
    // The statement ends at its last token, not at the inserted `;`.
    assert_eq!(let_stmt.span, span(16, 39));
    assert_eq!(&src[16..39], "let total = (a + b) * c");
    let StmtKind::Let { name, value, .. } = &let_stmt.kind else { panic!() };
    assert_eq!(name.span, span(20, 25));
    assert_eq!(&src[20..25], "total");
    // The binary expression spans from its left operand's start to its right operand's end;
    // the parenthesised operand includes its parentheses.
    assert_eq!(value.span, span(28, 39));
    let ExprKind::Binary { lhs, rhs, .. } = &value.kind else { panic!() };
    assert_eq!((lhs.span, rhs.span), (span(28, 35), span(38, 39)));
    let ExprKind::Binary { lhs: a, rhs: b, .. } = &lhs.kind else { panic!() };
    assert_eq!((a.span, b.span), (span(29, 30), span(33, 34)));
    let ExprKind::Name(c) = &rhs.kind else { panic!() };
    assert_eq!(c.span, span(38, 39));
    // A call statement, and the call's argument.
    let print = &f.body.stmts[1];
    assert_eq!(print.span, span(44, 56));
    let StmtKind::Expr(Expr { kind: ExprKind::Call { callee, args }, span: call }) = &print.kind else { panic!() };
    assert_eq!((*call, callee.span, args[0].span), (span(44, 56), span(44, 49), span(50, 55)));
}

#[test]
fn spans_of_compound_statements_and_postfix_expressions() {
    let src = "fn f() {\n    if x.len() > 0 {\n        return\n    } else {\n    }\n    xs[i] += 2\n}";
    let file = parse_ok(src);
    let f = only_fn(&file);
    let if_stmt = &f.body.stmts[0];
    assert_eq!(if_stmt.span, span(13, 63));
    let StmtKind::If { cond, then_block, else_block: Some(els) } = &if_stmt.kind else { panic!() };
    assert_eq!((cond.span, then_block.span, els.span), (span(16, 27), span(28, 50), span(56, 63)));
    let ExprKind::Binary { lhs, .. } = &cond.kind else { panic!() };
    assert_eq!(lhs.span, span(16, 23));
    assert_eq!(then_block.stmts[0].span, span(38, 44));
    let assign = &f.body.stmts[1];
    assert_eq!(assign.span, span(68, 78));
    let StmtKind::Assign { target, op: Some(BinaryOp::Add), value } = &assign.kind else { panic!() };
    assert_eq!((target.span, value.span), (span(68, 73), span(77, 78)));
}

// ---------------------------------------------------------------------------------------------
// Syntax errors.

#[test]
fn lexical_errors_come_out_as_syntax_errors_labelled_here() {
    assert_eq!(
        parse_err("fn main() {\n    let big = 99999999999999999999\n}"),
        SyntaxError {
            message: "integer literal is too large for 64 bits".into(),
            label: "here".into(),
            span: span(26, 46)
        }
    );
    let e = parse_err("fn main() {\n    let s = \"hello\n}");
    assert_eq!((e.message.as_str(), e.span), ("unterminated string literal", span(24, 30)));
}

#[test]
fn end_of_file_errors_point_at_the_unclosed_brace_or_the_end() {
    let e = parse_err("fn main() {\n    let x = 1\n    if x > 0 {\n        print(x)\n    }\n");
    assert_eq!(
        e,
        SyntaxError {
            message: "unexpected end of file: a `{` is never closed".into(),
            label: "this `{` has no matching `}`".into(),
            span: span(10, 11),
        }
    );
    // The innermost unclosed brace, and a class literal's brace too.
    assert_eq!(parse_err("fn main() {\n    if x {\n").span, span(21, 22));
    assert_eq!(parse_err("fn main() {\n    let p = P {").span, span(26, 27));
    // No brace open: the end of the file, with what was expected.
    assert_eq!(
        parse_err("fn main("),
        SyntaxError {
            message: "unexpected end of file; expected one of `)`, `inout`, a name".into(),
            label: "the file ends here".into(),
            span: span(8, 8),
        }
    );
    assert_eq!(parse_err("fn f() ->").message, "unexpected end of file; expected one of `[`, a name");
    // A `;` is inserted at the end of a file that ends with a name, so the error is that `;`.
    assert_eq!(
        (parse_err("table t: T key").message.as_str(), parse_err("table t: T key").span),
        ("expected a name, found end of statement", span(14, 14))
    );
}

#[test]
fn misplaced_tokens_name_what_was_expected_and_found() {
    let e = parse_err("let x = 1");
    assert_eq!(
        e,
        SyntaxError {
            message: "expected one of `actor`, `class`, `enum`, `fn`, `import`, `pub`, `route`, `supervisor` and 3 more, found `let`"
                .into(),
            label: "unexpected `let`".into(),
            span: span(0, 3),
        }
    );
    let e = parse_err("fn main() {}\n}");
    assert_eq!((e.label.as_str(), e.span), ("unexpected `}`", span(13, 14)));
    let e = parse_err("fn f(x i32) {}");
    assert_eq!((e.message.as_str(), e.span), ("expected `:`, found `i32`", span(7, 10)));
    let e = parse_err("fn f() { let s = \"a\" \"b\" }");
    assert!(e.message.ends_with("found a string literal"), "{}", e.message);
    assert_eq!(e.span, span(21, 24));
    let e = parse_err("class C { x: 1 }");
    assert_eq!((e.message.as_str(), e.span), ("expected one of `[`, a name, found `1`", span(13, 14)));
}

// ---------------------------------------------------------------------------------------------
// The repository's programs.

fn repo_file(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn nagi_files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(repo_file(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "nagi"))
        .collect();
    files.sort();
    files
}

#[test]
fn golden_and_example_programs_parse() {
    let mut count = 0;
    for dir in ["golden/high", "examples", "golden/high/errors"] {
        for path in nagi_files(dir) {
            if path.file_name().unwrap().to_str().unwrap().starts_with("syntax_") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let file = parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
            assert!(!file.items.is_empty(), "{} has no items", path.display());
            count += 1;
        }
    }
    assert!(count >= 60, "only {count} programs found");
}

/// Line and column (1-based, in characters) of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, col)
}

#[test]
fn syntax_error_goldens_report_the_same_message_and_position() {
    let mut count = 0;
    for path in nagi_files("golden/high/errors") {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.starts_with("syntax_") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let golden = std::fs::read_to_string(path.with_extension("err")).unwrap();
        // The first line reads `PATH:LINE:COL: error[H100]: MESSAGE`.
        let first = golden.lines().next().unwrap();
        let (location, message) = first.split_once(": error[H100]: ").expect("an H100 header");
        let mut parts = location.rsplitn(3, ':');
        let col: usize = parts.next().unwrap().parse().unwrap();
        let line: usize = parts.next().unwrap().parse().unwrap();
        let err = parse(&text).expect_err(&name);
        assert_eq!(err.message, message, "{name}");
        assert_eq!(line_col(&text, err.span.start as usize), (line, col), "{name}");
        // The caret line of the golden ends with the label.
        assert!(golden.lines().any(|l| l.trim_end().ends_with(&err.label)), "{name}: label {:?}", err.label);
        count += 1;
    }
    assert!(count >= 6, "only {count} syntax goldens found");
}

// ---------------------------------------------------------------------------------------------
// Enums and `match`.

#[test]
fn enum_declarations_take_variants_with_and_without_payloads() {
    let file = parse_ok("enum Role {\n    Admin\n    Member(i64), Guest\n    Tags([String]?)\n}\n");
    let [Item::Enum(decl)] = file.items.as_slice() else { panic!("one enum: {file:?}") };
    assert_eq!(decl.name.name, "Role");
    let variants: Vec<(String, Option<String>)> =
        decl.variants.iter().map(|v| (v.name.name.clone(), v.payload.as_ref().map(ty))).collect();
    assert_eq!(
        variants,
        [
            ("Admin".to_string(), None),
            ("Member".to_string(), Some("i64".to_string())),
            ("Guest".to_string(), None),
            ("Tags".to_string(), Some("[String]?".to_string())),
        ]
    );
}

#[test]
fn match_arms_take_every_pattern_form_on_one_line_or_several() {
    assert_eq!(
        body(
            "match r {\n    Admin => { f() }\n    Member(n) | Role.Guest => {}\n    Role.Named(_) => { g() }, _ => {}\n}"
        ),
        "{match r [Admin => {(call f)}, Member(n) | Role.Guest => {}, Role.Named(_) => {(call g)}, _ => {}]}"
    );
    assert_eq!(body("match n { 0 | -1 => { a() } _ => {} }"), "{match n [0 | -1 => {(call a)}, _ => {}]}");
    assert_eq!(body("match s { \"a\" => {} true => {} }"), "{match s [\"a\" => {}, true => {}]}");
    // A class literal may be matched on (its `{` is the literal's), and an arm needs a block.
    assert_eq!(body("match f(P { x: 1 }) { _ => {} }"), "{match (call f (P x:1)) [_ => {}]}");
    let err = parse_err("fn main() {\n    match r { Admin => f() }\n}");
    assert!(err.message.contains("expected"), "{err:?}");
}

// ---------------------------------------------------------------------------------------------
// Failing functions and `try`.

#[test]
fn fails_marks_a_function_and_try_binds_like_a_prefix_operator() {
    let file = parse_ok("fn find(id: i64) fails -> i64 {\n    return id\n}\nfn check() fails {}\nfn plain() {}\n");
    let fails: Vec<(String, bool)> = file
        .items
        .iter()
        .map(|i| match i {
            Item::Function(f) => (f.name.name.clone(), f.fails),
            other => panic!("a function: {other:?}"),
        })
        .collect();
    assert_eq!(fails, [("find".to_string(), true), ("check".to_string(), true), ("plain".to_string(), false)]);
    assert_eq!(expr("try f(1) + 2"), "(+ (try (call f 1)) 2)");
    assert_eq!(expr("try f(1).len()"), "(try (.len() (call f 1)))");
    let err = parse_err("fn f() throws {}");
    assert!(err.message.contains("fails"), "{err:?}");
}

// ---------------------------------------------------------------------------------------------
// Modules.

#[test]
fn imports_pub_items_and_qualified_names_parse() {
    let file = parse_ok(
        "import accounts\nimport billing/invoices.{total,\n    Invoice}\npub class A {}\npub enum E { X }\npub fn f(a: accounts.Account) -> billing.Invoice {}\n",
    );
    let [Item::Import(a), Item::Import(b), Item::Class(c), Item::Enum(e), Item::Function(f)] = file.items.as_slice()
    else {
        panic!("{file:?}")
    };
    assert_eq!(a.path.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["accounts"]);
    assert!(a.names.is_none());
    assert_eq!(b.path.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["billing", "invoices"]);
    let names: Vec<&str> = b.names.iter().flatten().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["total", "Invoice"]);
    assert!(c.public && e.public && f.public);
    assert_eq!(ty(&f.params[0].ty), "accounts.Account");
    assert_eq!(expr("accounts.Account { id: 1 }"), "(accounts.Account id:1)");
    assert_eq!(expr("accounts.find(1)"), "(.find() accounts 1)");
}

#[test]
fn catch_binds_as_a_prefix_operator_and_result_takes_one_type() {
    assert_eq!(expr("catch find(id)"), "(catch (call find id))");
    // Like `try?`, it covers its operand only, not the other side of an operator.
    assert_eq!(expr("catch f(1) + 2"), "(+ (catch (call f 1)) 2)");
    let file = parse("fn f(r: Result<[accounts.Account]>) {\n}\n").expect("parses");
    let Item::Function(f) = &file.items[0] else { panic!("a function") };
    assert_eq!(ty(&f.params[0].ty), "Result<[accounts.Account]>");
    // `Result` opens type arguments as `Map` does, so `Result < x` is not a comparison.
    assert!(parse("fn main() {\n    let b = Result < 2\n}\n").is_err());
}

#[test]
fn a_closure_body_reaches_as_far_right_as_it_can() {
    assert_eq!(expr("xs.filter(fn(x) => x > 2 && x < 9)"), "(.filter() xs (fn [x] (&& (> x 2) (< x 9))))");
    assert_eq!(
        expr("xs.fold(0, fn(acc, p: Post) => acc + p.views)"),
        "(.fold() xs 0 (fn [acc p: Post] (+ acc (.views p))))"
    );
    // Nested: the inner closure ends at the `)` of its own call.
    assert_eq!(expr("xs.map(fn(x) => ys.any(fn(y) => y == x))"), "(.map() xs (fn [x] (.any() ys (fn [y] (== y x)))))");
}

#[test]
fn type_parameters_and_arguments_parse_where_types_are_and_nowhere_else() {
    let file = parse("fn largest<T: ord + copy, U>(xs: [T], p: paging.Page<[U]>) -> Map<String, Pair<T, U?>> {\n}\n")
        .expect("parses");
    let f = only_fn(&file);
    let params: Vec<String> = f
        .type_params
        .iter()
        .map(|p| format!("{}:{}", p.name.name, p.bounds.iter().map(|b| b.name.as_str()).collect::<Vec<_>>().join("+")))
        .collect();
    assert_eq!(params, ["T:ord+copy", "U:"]);
    assert_eq!(ty(&f.params[1].ty), "paging.Page<[U]>");
    assert_eq!(ty(f.ret.as_ref().expect("a result")), "Map<String, Pair<T, U?>>");
    let file = parse("class Page<T> {\n    items: [T]\n}\n").expect("parses");
    let Item::Class(c) = &file.items[0] else { panic!("a class") };
    assert_eq!(c.type_params.len(), 1);
    // A capitalised name before `<` opens type arguments only when a list of types and its `>`
    // follow; comparisons stay comparisons.
    assert_eq!(expr("a < B"), "(< a B)");
    assert_eq!(expr("Limit < n && m > 2"), "(&& (< Limit n) (> m 2))");
    // The built-in generic types keep their number of arguments.
    assert!(parse("fn f(m: Map<String>) {\n}\n").is_err());
}

#[test]
fn function_types_are_parameter_types_and_closures_take_blocks() {
    let file = parse("fn apply(xs: [i64], keep: fn(i64, String) -> bool?, visit: fn(i64)) {\n}\n").expect("parses");
    let f = only_fn(&file);
    assert_eq!(ty(&f.params[1].ty), "fn(i64, String) -> bool?");
    assert_eq!(ty(&f.params[2].ty), "fn(i64)");
    assert_eq!(
        expr("apply(xs, fn(x: i64) -> bool {\n    return x > 1\n})"),
        "(call apply xs (fn [x: i64] -> bool {return (> x 1)}))"
    );
    assert_eq!(expr("each(xs, fn(x) {\n    print(x)\n})"), "(call each xs (fn [x] {(call print x)}))");
    // A function type is a parameter's type only: not a local's.
    assert!(parse("fn main() {\n    let f: fn(i64) = g\n}\n").is_err());
}
