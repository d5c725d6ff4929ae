//! Lowering of tests in the language: `assert` and `assert_eq` (a trap naming the assertion's
//! `file:line:col`, and for `assert_eq` both values), and the `main` of a test build, which runs
//! the test that `rtcall test.selected` names (`nagic test` runs each in a process of its own),
//! awaiting it when it uses the database.

use nagi_low::{BinaryOp, Constant, FuncId, FunctionData, LocalData, LocalId, Module, OpData, OpKind, Operand};
use nagi_low::{RuntimeFn, ScalarType, StrPart, Type, UnaryOp};

use super::FnCx;
use crate::tir::{Expr, ExprKind};

impl FnCx<'_> {
    /// `assert(cond)`: traps with `assertion failed at LOCATION` when `cond` is false.
    pub(super) fn assert(&mut self, cond: &Expr, location: &Expr) {
        let cond = self.operand(cond);
        let failed = self.temp(Type::Bool);
        self.emit(OpKind::Unary { dest: failed, op: UnaryOp::Not, ty: ScalarType::Bool, arg: cond });
        let (then_block, _) = self.emit_if(Operand::Local(failed), false);
        let message = format!("assertion failed at {}", literal(location));
        self.in_block(then_block, |cx| cx.emit(OpKind::Trap { message }));
    }

    /// `assert_eq(a, b)`: when the values differ, ends the program with the location and both
    /// values (`rtcall test.assert_failed`).
    pub(super) fn assert_eq(&mut self, a: &Expr, b: &Expr, location: &Expr) {
        self.pin_clobbered(&[a, b]);
        let equal = self.temp(Type::Bool);
        let (left, right) = match a.ty.scalar() {
            Some(ty) => {
                let (lhs, rhs) = (self.operand(a), self.operand(b));
                self.emit(OpKind::Binary { dest: equal, op: BinaryOp::Eq, ty, lhs, rhs });
                (Side::Scalar(ty, lhs), Side::Scalar(ty, rhs))
            }
            None => {
                let (lhs, rhs) = (self.read(a), self.read(b));
                self.emit(OpKind::StrEq { dest: equal, lhs, rhs });
                (Side::Text(lhs), Side::Text(rhs))
            }
        };
        let differ = self.temp(Type::Bool);
        self.emit(OpKind::Unary { dest: differ, op: UnaryOp::Not, ty: ScalarType::Bool, arg: Operand::Local(equal) });
        let (then_block, _) = self.emit_if(Operand::Local(differ), false);
        let head = format!("assertion failed at {}: the values differ\n  left: ", literal(location));
        self.in_block(then_block, |cx| {
            cx.statement(|cx| {
                let mut message = cx.text(head);
                message = cx.append(message, left);
                let mid = cx.text("\n right: ".to_string());
                message = cx.append(message, Side::Text(mid));
                message = cx.append(message, right);
                let text = cx.temp(Type::reference(false, Type::String));
                cx.emit(OpKind::Borrow { dest: text, src: message, mutable: false });
                cx.runtime_call(RuntimeFn::TestAssertFailed, None, vec![Operand::Local(text)], None);
            });
        });
    }

    /// A new string temporary holding `text`.
    fn text(&mut self, text: String) -> LocalId {
        let dest = self.temp(Type::String);
        self.emit(OpKind::StringLit { dest, value: text });
        dest
    }

    /// `message` followed by `side` (a value formatted as `print` writes it), as a new string.
    fn append(&mut self, message: LocalId, side: Side) -> LocalId {
        let tail = match side {
            Side::Text(local) => local,
            Side::Scalar(ty, value) => {
                let row = match ty {
                    ScalarType::I32 => RuntimeFn::FmtI32,
                    ScalarType::I64 => RuntimeFn::FmtI64,
                    ScalarType::F64 => RuntimeFn::FmtF64,
                    ScalarType::Bool => RuntimeFn::FmtBool,
                };
                let dest = self.temp(Type::String);
                self.runtime_call(row, Some(dest), vec![value], None);
                dest
            }
        };
        let dest = self.temp(Type::String);
        self.emit(OpKind::StrConcat { dest, parts: vec![StrPart::Local(message), StrPart::Local(tail)] });
        dest
    }
}

/// One side of `assert_eq`.
#[derive(Clone, Copy)]
enum Side {
    Scalar(ScalarType, Operand),
    Text(LocalId),
}

/// The text of a string literal the checker put there (an assertion's location).
fn literal(e: &Expr) -> &str {
    match &e.kind {
        ExprKind::Str(text) => text,
        _ => "?",
    }
}

/// Makes `module` a test build: without routes, its `main` (if any) becomes `main.program`, and
/// a new `main` calls the test whose index `rtcall test.selected` gives, in `tests` order, or
/// none. When a test is async (it uses the database), so is the new `main`, which awaits it:
/// the program then runs with the module's tables, which the build keeps, in a fresh in-memory
/// database (Low's rule for an async `main`), so every test process starts empty.
pub(super) fn test_main(module: &mut Module, tests: &[FuncId]) {
    // A test build of a service is a program: it serves nothing, so its handlers are plain
    // functions.
    module.routes.clear();
    // A test that may fail returns an option; `none` ends it with its failure (`test.failed`).
    if let Some(main) = module.function_by_name("main") {
        module.functions[main].name = "main.program".to_string();
    }
    let mut f = FunctionData::new("main".to_string(), Type::Unit);
    f.is_async = tests.iter().any(|&test| module.functions[test].is_async);
    let selected = f.locals.alloc(LocalData { name: "selected".into(), ty: Type::I64 });
    let body = f.body;
    let push = |f: &mut FunctionData, block: nagi_low::BlockId, kind: OpKind| {
        let op = f.ops.alloc(OpData { kind });
        f.blocks[block].ops.push(op);
    };
    push(
        &mut f,
        body,
        OpKind::RuntimeCall {
            dest: Some(selected),
            func: RuntimeFn::TestSelected,
            class: None,
            args: Vec::new(),
            awaited: false,
        },
    );
    for (i, &test) in tests.iter().enumerate() {
        let is = f.locals.alloc(LocalData { name: format!("is_{i}"), ty: Type::Bool });
        let (lhs, rhs) = (Operand::Local(selected), Operand::Const(Constant::I64(i as i64)));
        push(&mut f, body, OpKind::Binary { dest: is, op: BinaryOp::Eq, ty: ScalarType::I64, lhs, rhs });
        let then_block = f.blocks.alloc(Default::default());
        push(&mut f, body, OpKind::If { cond: Operand::Local(is), then_block, else_block: None });
        let awaited = module.functions[test].is_async;
        if module.functions[test].ret == Type::Unit {
            push(&mut f, then_block, OpKind::Call { dest: None, callee: test, args: Vec::new(), awaited });
            continue;
        }
        let result = f.locals.alloc(LocalData { name: format!("result_{i}"), ty: module.functions[test].ret.clone() });
        let passed = f.locals.alloc(LocalData { name: format!("passed_{i}"), ty: Type::Bool });
        let failed = f.locals.alloc(LocalData { name: format!("failed_{i}"), ty: Type::Bool });
        push(&mut f, then_block, OpKind::Call { dest: Some(result), callee: test, args: Vec::new(), awaited });
        push(&mut f, then_block, OpKind::OptionIsSome { dest: passed, option: result });
        let arg = Operand::Local(passed);
        push(&mut f, then_block, OpKind::Unary { dest: failed, op: UnaryOp::Not, ty: ScalarType::Bool, arg });
        let report = f.blocks.alloc(Default::default());
        push(&mut f, then_block, OpKind::If { cond: Operand::Local(failed), then_block: report, else_block: None });
        let call = OpKind::RuntimeCall {
            dest: None,
            func: RuntimeFn::TestFailed,
            class: None,
            args: Vec::new(),
            awaited: false,
        };
        push(&mut f, report, call);
    }
    push(&mut f, body, OpKind::Return { value: None });
    module.functions.alloc(f);
}

#[cfg(test)]
mod tests {
    use nagi_low::{Module, OpKind};

    /// A test build of `text`, verified.
    fn test_build(text: &str) -> Module {
        match crate::compile_tests("app.nagi", text, "app", &mut crate::modules::NoImports) {
            Ok((module, _)) => module,
            Err((diagnostics, sources)) => panic!("{}", sources.render(&diagnostics)),
        }
    }

    /// The calls of `main`, by callee name, with whether each is awaited.
    fn main_calls(module: &Module) -> Vec<(String, bool)> {
        let main = module.function_by_name("main").expect("a test build has a main");
        let calls = module.functions[main].ops.values().filter_map(|op| match &op.kind {
            OpKind::Call { callee, awaited, .. } => Some((module.functions[*callee].name.clone(), *awaited)),
            _ => None,
        });
        calls.collect()
    }

    const NOTES: &str = r#"
class Note {
    id: i64
    text: String
}

table notes: Note key id

route GET "/notes" () -> [Note] {
    return db.query<Note>("SELECT id, text FROM notes")
}

fn add(id: i64) {
    db.exec("INSERT INTO notes (id, text) VALUES (?, 'a')", id)
}

test "computes" {
    assert(1 + 1 == 2)
}

test "writes" {
    add(1)
    assert_eq(db.query<Note>("SELECT id, text FROM notes").len(), 1)
}
"#;

    #[test]
    fn a_test_build_whose_tests_use_the_database_keeps_the_tables_and_awaits_them() {
        let module = test_build(NOTES);
        assert!(module.routes.is_empty());
        assert_eq!(module.tables.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["notes"]);
        let main = module.function_by_name("main").expect("main");
        assert!(module.functions[main].is_async);
        assert_eq!(main_calls(&module), [("test.0".to_string(), false), ("test.1".to_string(), true)]);
    }

    #[test]
    fn a_test_build_whose_tests_compute_has_a_main_that_is_not_async() {
        let module = test_build("fn main() {\n    print(1)\n}\n\ntest \"computes\" {\n    assert(1 + 1 == 2)\n}\n");
        let main = module.function_by_name("main").expect("main");
        assert!(!module.functions[main].is_async);
        assert_eq!(main_calls(&module), [("test.0".to_string(), false)]);
    }
}
