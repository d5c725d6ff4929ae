//! Deep nesting: 5,000 levels of parentheses, unary operators, arrays and nested `if`/`while`
//! blocks must parse (or fail with an error) on the default test-thread stack, without a stack
//! overflow — in the lexer, in the parser and when the resulting tree is dropped.
//!
//! Each test runs in its own spawned thread with the default stack size (no `stack_size`), so a
//! result is a real statement about the default stack. The tests live in their own test binary:
//! a stack overflow aborts the whole process, and should not take the other tests with it.
//!
//! Measured when these tests were written (debug build, 2 MiB default thread stack): parsing
//! is iterative (lalrpop's table-driven LR parser), so 50,000 nested parentheses parse; the
//! recursion is in the compiler-generated `Drop` of the AST, which overflows at about 10,000
//! nested `if` blocks and 20,000 nested unary minuses. 5,000 levels leave a margin of 2×.

use nagi_syntax::ast::{Expr, ExprKind, Item, Stmt, StmtKind, UnaryOp};
use nagi_syntax::parse;

const DEPTH: usize = 5_000;

/// Runs `f` on a fresh thread with the default stack and returns its result.
fn on_default_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().name("default-stack".into()).spawn(f).expect("spawn").join().expect("no panic")
}

/// The value of `let x = …` in the single statement of `fn main`.
fn main_let_value(file: &nagi_syntax::ast::SourceFile) -> &Expr {
    let Item::Function(f) = &file.items[0] else { panic!("expected a function") };
    match &f.body.stmts[0].kind {
        StmtKind::Let { value, .. } => value,
        other => panic!("expected `let`, found {other:?}"),
    }
}

#[test]
fn five_thousand_nested_parentheses_parse() {
    let inner_start = on_default_stack(|| {
        let src = format!("fn main() {{\n    let x = {}1{}\n}}\n", "(".repeat(DEPTH), ")".repeat(DEPTH));
        let file = parse(&src).expect("deep parentheses parse");
        let value = main_let_value(&file);
        // Parentheses leave no node of their own: the value is the literal, spanning the
        // outermost parentheses.
        assert_eq!(value.kind, ExprKind::Int(1));
        let open = src.find("= (").unwrap() + 2;
        assert_eq!((value.span.start as usize, value.span.end as usize), (open, open + 2 * DEPTH + 1));
        open
    });
    assert_eq!(inner_start, "fn main() {\n    let x = ".len());
}

#[test]
fn five_thousand_nested_parenthesised_sums_parse() {
    // `(1 + (1 + (1 + … 1)))`: a right-leaning tree 5,000 binary nodes deep.
    let depth = on_default_stack(|| {
        let src = format!("fn main() {{\n    let x = {}1{}\n}}\n", "(1 + ".repeat(DEPTH), ")".repeat(DEPTH));
        let file = parse(&src).expect("deep sums parse");
        let mut e = main_let_value(&file);
        let mut depth = 0;
        while let ExprKind::Binary { rhs, .. } = &e.kind {
            depth += 1;
            e = rhs;
        }
        assert_eq!(e.kind, ExprKind::Int(1));
        depth
    });
    assert_eq!(depth, DEPTH);
}

#[test]
fn five_thousand_nested_unary_minus_parse() {
    let depth = on_default_stack(|| {
        let src = format!("fn main() {{\n    let x = {}1\n}}\n", "-".repeat(DEPTH));
        let file = parse(&src).expect("deep unary minus parses");
        let mut e = main_let_value(&file);
        let mut depth = 0;
        while let ExprKind::Unary { op, operand } = &e.kind {
            assert_eq!(*op, UnaryOp::Neg);
            depth += 1;
            e = operand;
        }
        assert_eq!(e.kind, ExprKind::Int(1));
        depth
    });
    assert_eq!(depth, DEPTH);
}

#[test]
fn five_thousand_nested_arrays_parse() {
    let depth = on_default_stack(|| {
        let src = format!("fn main() {{\n    let x = {}1{}\n}}\n", "[".repeat(DEPTH), "]".repeat(DEPTH));
        let file = parse(&src).expect("deep arrays parse");
        let mut e = main_let_value(&file);
        let mut depth = 0;
        while let ExprKind::Array(items) = &e.kind {
            assert_eq!(items.len(), 1);
            depth += 1;
            e = &items[0];
        }
        assert_eq!(e.kind, ExprKind::Int(1));
        depth
    });
    assert_eq!(depth, DEPTH);
}

/// How many `if` statements are nested inside `stmt`, each the only statement of the block
/// of the one around it.
fn if_depth(mut stmt: &Stmt) -> usize {
    let mut depth = 0;
    loop {
        match &stmt.kind {
            StmtKind::If { then_block, .. } | StmtKind::While { body: then_block, .. } => {
                depth += 1;
                match then_block.stmts.first() {
                    Some(inner) => stmt = inner,
                    None => return depth,
                }
            }
            _ => return depth,
        }
    }
}

#[test]
fn five_thousand_nested_if_blocks_parse() {
    let depth = on_default_stack(|| {
        let mut src = String::from("fn main() {\n");
        for _ in 0..DEPTH {
            src.push_str("if true {\n");
        }
        src.push_str("print(1)\n");
        for _ in 0..DEPTH {
            src.push_str("}\n");
        }
        src.push_str("}\n");
        let file = parse(&src).expect("deep ifs parse");
        let Item::Function(f) = &file.items[0] else { panic!("expected a function") };
        assert_eq!(f.body.stmts.len(), 1);
        if_depth(&f.body.stmts[0])
    });
    assert_eq!(depth, DEPTH);
}

#[test]
fn five_thousand_nested_while_blocks_on_one_line_parse() {
    let depth = on_default_stack(|| {
        let src = format!("fn main() {{ {}break{} }}", "while x { ".repeat(DEPTH), " }".repeat(DEPTH));
        let file = parse(&src).expect("deep whiles parse");
        let Item::Function(f) = &file.items[0] else { panic!("expected a function") };
        if_depth(&f.body.stmts[0])
    });
    assert_eq!(depth, DEPTH);
}

#[test]
fn five_thousand_unclosed_blocks_report_the_innermost_brace() {
    let (message, start) = on_default_stack(|| {
        let src = format!("fn main() {{\n{}", "if true {\n".repeat(DEPTH));
        let err = parse(&src).expect_err("unclosed blocks");
        (err.message, err.span.start)
    });
    assert_eq!(message, "unexpected end of file: a `{` is never closed");
    // The innermost `{` is the last one in the file, on the last `if true {` line.
    let last_brace = 12 + (DEPTH - 1) * 10 + 8;
    assert_eq!(start as usize, last_brace);
}
