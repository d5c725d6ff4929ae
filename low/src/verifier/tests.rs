//! Verifier tests on modules built in memory: one test per check kind, a clean kernel, deep
//! nesting, and randomly corrupted functions that must not panic.

use la_arena::{Idx, RawIdx};

use crate::diagnostic::Diagnostic;
use crate::entities::{BlockId, ClassId, FuncId, LabelId, LocalId, OpId};
use crate::module::{
    BlockData, ClassData, FieldData, FunctionData, HttpMethod, LabelData, LocalData, Module, RouteDecl, TableDecl,
};
use crate::ops::{BinaryOp, OpKind, Operand, StrPart, UnaryOp};
use crate::runtime::RuntimeFn;
use crate::types::{Constant, ScalarType, Type};

use super::{verify, verify_function};

/// Builds one function.
struct F {
    f: FunctionData,
}

impl F {
    fn new(name: &str, ret: Type) -> F {
        F { f: FunctionData::new(name, ret) }
    }

    fn asynchronous(mut self) -> F {
        self.f.is_async = true;
        self
    }

    fn param(&mut self, name: &str, ty: Type) -> LocalId {
        let id = self.local(name, ty);
        self.f.params.push(id);
        id
    }

    fn local(&mut self, name: &str, ty: Type) -> LocalId {
        self.f.locals.alloc(LocalData { name: name.to_string(), ty })
    }

    fn label(&mut self, name: &str) -> LabelId {
        self.f.labels.alloc(LabelData { name: name.to_string() })
    }

    fn block(&mut self) -> BlockId {
        self.f.blocks.alloc(BlockData::default())
    }

    fn body(&self) -> BlockId {
        self.f.body
    }

    /// Appends an operation to `block`.
    fn push(&mut self, block: BlockId, kind: OpKind) -> OpId {
        let op = self.f.ops.alloc(kind.into());
        self.f.blocks[block].ops.push(op);
        op
    }

    /// Appends an operation to the body.
    fn op(&mut self, kind: OpKind) -> OpId {
        let body = self.body();
        self.push(body, kind)
    }

    fn ret(&mut self, value: Option<Operand>) -> OpId {
        self.op(OpKind::Return { value })
    }
}

fn local(l: LocalId) -> Operand {
    Operand::Local(l)
}

fn int(v: i64) -> Operand {
    Operand::Const(Constant::I64(v))
}

fn shared(t: Type) -> Type {
    Type::reference(false, t)
}

fn exclusive(t: Type) -> Type {
    Type::reference(true, t)
}

fn array(t: Type) -> Type {
    Type::Array(Box::new(t))
}

fn call(dest: Option<LocalId>, callee: FuncId, args: Vec<Operand>) -> OpKind {
    OpKind::Call { dest, callee, args, awaited: false }
}

fn module(functions: Vec<F>) -> Module {
    let mut m = Module::new("test");
    for f in functions {
        m.functions.alloc(f.f);
    }
    m
}

/// The id the `i`-th function of a module built by [`module`] will get.
fn func(i: u32) -> FuncId {
    Idx::from_raw(RawIdx::from(i))
}

fn errors(m: &Module) -> Vec<Diagnostic> {
    verify(m, None).err().unwrap_or_default()
}

fn render(diagnostics: &[Diagnostic]) -> String {
    diagnostics.iter().map(|d| format!("{}: {}\n", d.code, d.message)).collect()
}

/// Asserts that verification gives exactly one diagnostic, with `code` and a message
/// containing `text`, and returns it.
fn one(m: &Module, code: &str, text: &str) -> Diagnostic {
    let diagnostics = errors(m);
    assert_eq!(diagnostics.len(), 1, "expected one diagnostic, got:\n{}", render(&diagnostics));
    let d = diagnostics.into_iter().next().unwrap();
    assert_eq!(d.code, code, "{}", d.message);
    assert!(d.message.contains(text), "message {:?} does not contain {:?}", d.message, text);
    d
}

/// Asserts that some diagnostic has `code` and a message containing `text`.
fn has(m: &Module, code: &str, text: &str) {
    let diagnostics = errors(m);
    assert!(
        diagnostics.iter().any(|d| d.code == code && d.message.contains(text)),
        "no {code} diagnostic containing {text:?} in:\n{}",
        render(&diagnostics)
    );
}

/// `$consume(%s: String) -> unit`, which drops its argument.
fn consume() -> F {
    let mut f = F::new("consume", Type::Unit);
    let s = f.param("s", Type::String);
    f.op(OpKind::Drop { local: s });
    f.ret(None);
    f
}

/// `$integer_sum(%xs: &[i64]) -> i64`, the first kernel of docs/design.md §6.
fn integer_sum() -> F {
    let mut f = F::new("integer_sum", Type::I64);
    let xs = f.param("xs", shared(array(Type::I64)));
    let acc = f.local("acc", Type::I64);
    let x = f.local("x", Type::I64);
    let each = f.label("each");
    f.op(OpKind::Const { dest: acc, value: Constant::I64(0) });
    let body = f.block();
    f.op(OpKind::ForEach { var: x, seq: xs, label: each, body });
    f.push(body, OpKind::Binary { dest: acc, op: BinaryOp::Add, ty: ScalarType::I64, lhs: local(acc), rhs: local(x) });
    f.ret(Some(local(acc)));
    f
}

#[test]
fn integer_sum_is_clean() {
    let m = module(vec![integer_sum()]);
    assert_eq!(verify(&m, None), Ok(()));
}

#[test]
fn a_main_that_borrows_calls_and_drops_is_clean() {
    let mut main = F::new("main", Type::Unit);
    let xs = main.local("xs", array(Type::I64));
    let xr = main.local("xr", shared(array(Type::I64)));
    let r = main.local("r", Type::I64);
    main.op(OpKind::ArrayNew { dest: xs });
    main.op(OpKind::ArrayPush { array: xs, value: int(3) });
    main.op(OpKind::Borrow { dest: xr, src: xs, mutable: false });
    main.op(call(Some(r), func(0), vec![local(xr)]));
    let print = RuntimeFn::PrintI64;
    main.op(OpKind::RuntimeCall { dest: None, func: print, class: None, args: vec![local(r)], awaited: false });
    main.op(OpKind::Drop { local: xs });
    main.ret(None);
    let m = module(vec![integer_sum(), main]);
    assert_eq!(verify(&m, None), Ok(()));
}

#[test]
fn add_with_a_wrongly_typed_operand() {
    let mut f = F::new("f", Type::I64);
    let a = f.param("a", Type::I32);
    let b = f.param("b", Type::I64);
    let c = f.local("c", Type::I64);
    f.op(OpKind::Binary { dest: c, op: BinaryOp::Add, ty: ScalarType::I64, lhs: local(a), rhs: local(b) });
    f.ret(Some(local(c)));
    let d = one(&module(vec![f]), "V220", "in $f: operand %a of `add.i64` has type i32, expected i64");
    assert_eq!(d.label.as_deref(), Some("%c = add.i64 %a, %b"));
    assert_eq!(d.span, None);
}

#[test]
fn operations_undefined_at_their_type() {
    let mut f = F::new("f", Type::Unit);
    let x = f.param("x", Type::F64);
    let y = f.local("y", Type::F64);
    f.op(OpKind::Binary { dest: y, op: BinaryOp::Shl, ty: ScalarType::F64, lhs: local(x), rhs: local(x) });
    f.ret(None);
    one(&module(vec![f]), "V221", "`shl.f64` is not defined: `shl` takes i32 or i64");

    let mut f = F::new("f", Type::Unit);
    let x = f.param("x", Type::Bool);
    let y = f.local("y", Type::Bool);
    f.op(OpKind::Unary { dest: y, op: UnaryOp::Neg, ty: ScalarType::Bool, arg: local(x) });
    f.ret(None);
    one(&module(vec![f]), "V221", "`neg.bool` is not defined");
}

#[test]
fn comparison_and_checked_results() {
    let mut f = F::new("f", Type::Unit);
    let x = f.param("x", Type::I64);
    let lt = f.local("lt", Type::I64);
    let sum = f.local("sum", Type::Option(Box::new(Type::I64)));
    f.op(OpKind::Binary { dest: lt, op: BinaryOp::Lt, ty: ScalarType::I64, lhs: local(x), rhs: int(1) });
    f.op(OpKind::Binary { dest: sum, op: BinaryOp::CheckedAdd, ty: ScalarType::I64, lhs: local(x), rhs: int(1) });
    f.ret(None);
    one(&module(vec![f]), "V220", "destination %lt of `lt.i64` has type i64, expected bool");
}

#[test]
fn call_with_the_wrong_number_of_arguments() {
    let mut f = F::new("f", Type::Unit);
    f.op(call(None, func(1), vec![]));
    f.ret(None);
    one(&module(vec![f, consume()]), "V222", "in $f: `call $consume` passes 0 arguments, but $consume takes 1");
}

#[test]
fn string_concatenation_parts() {
    let mut f = F::new("f", Type::Unit);
    let s = f.local("s", Type::String);
    f.op(OpKind::StrConcat { dest: s, parts: vec![] });
    f.op(OpKind::Drop { local: s });
    f.ret(None);
    one(&module(vec![f]), "V222", "`str.concat` needs at least one part");

    let mut f = F::new("f", Type::Unit);
    let n = f.param("n", Type::I64);
    let s = f.local("s", Type::String);
    f.op(OpKind::StrConcat { dest: s, parts: vec![StrPart::Text("n = ".into()), StrPart::Local(n)] });
    f.op(OpKind::Drop { local: s });
    f.ret(None);
    one(&module(vec![f]), "V220", "operand %n of `str.concat` has type i64, expected String or &str");
}

#[test]
fn call_passing_a_mut_reference_for_a_shared_parameter() {
    let mut f = F::new("f", Type::I64);
    let xs = f.param("xs", exclusive(array(Type::I64)));
    let r = f.local("r", Type::I64);
    f.op(call(Some(r), func(1), vec![local(xs)]));
    f.ret(Some(local(r)));
    one(
        &module(vec![f, integer_sum()]),
        "V220",
        "argument 1 (%xs) of `call $integer_sum` has type &mut [i64], expected &[i64]",
    );
}

#[test]
fn discarded_call_result() {
    let mut f = F::new("f", Type::Unit);
    let xs = f.param("xs", shared(array(Type::I64)));
    f.op(call(None, func(1), vec![local(xs)]));
    f.ret(None);
    one(&module(vec![f, integer_sum()]), "V223", "the result of $integer_sum (type i64) is discarded");
}

#[test]
fn use_after_move() {
    let mut f = F::new("f", Type::Unit);
    let s = f.local("s", Type::String);
    f.op(OpKind::StringLit { dest: s, value: "a".into() });
    f.op(call(None, func(1), vec![local(s)]));
    f.op(call(None, func(1), vec![local(s)]));
    f.ret(None);
    one(&module(vec![f, consume()]), "V241", "in $f: %s is used after it was moved by `call $consume(%s)`");
}

#[test]
fn move_in_a_loop_is_a_use_after_move_on_the_next_iteration() {
    let mut f = F::new("f", Type::Unit);
    let s = f.local("s", Type::String);
    let i = f.local("i", Type::I64);
    let l = f.label("l");
    f.op(OpKind::StringLit { dest: s, value: "a".into() });
    let body = f.block();
    f.op(OpKind::ForRange { var: i, start: int(0), end: int(3), label: l, body });
    f.push(body, call(None, func(1), vec![local(s)]));
    f.ret(None);
    let m = module(vec![f, consume()]);
    has(&m, "V241", "%s is used, but on some path it was moved by `call $consume(%s)`");
    // The loop may run zero times, so %s may still own its string at the return.
    has(&m, "V243", "%s still owns a value at `return` (on some path)");
}

#[test]
fn read_before_assign() {
    let mut f = F::new("f", Type::I64);
    let x = f.local("x", Type::I64);
    f.ret(Some(local(x)));
    one(&module(vec![f]), "V240", "in $f: %x is read before it is assigned");

    let mut f = F::new("f", Type::I64);
    let c = f.param("c", Type::Bool);
    let x = f.local("x", Type::I64);
    let then_block = f.block();
    f.op(OpKind::If { cond: local(c), then_block, else_block: None });
    f.push(then_block, OpKind::Const { dest: x, value: Constant::I64(1) });
    f.ret(Some(local(x)));
    one(&module(vec![f]), "V240", "%x is read before it is assigned (on some path)");
}

#[test]
fn both_arms_assigning_is_definite_assignment() {
    let mut f = F::new("f", Type::I64);
    let c = f.param("c", Type::Bool);
    let x = f.local("x", Type::I64);
    let then_block = f.block();
    let else_block = f.block();
    f.op(OpKind::If { cond: local(c), then_block, else_block: Some(else_block) });
    f.push(then_block, OpKind::Const { dest: x, value: Constant::I64(1) });
    f.push(else_block, OpKind::Const { dest: x, value: Constant::I64(2) });
    f.ret(Some(local(x)));
    assert_eq!(verify(&module(vec![f]), None), Ok(()));
}

#[test]
fn leak_at_return() {
    let mut f = F::new("f", Type::Unit);
    let s = f.local("s", Type::String);
    f.op(OpKind::StringLit { dest: s, value: "a".into() });
    f.ret(None);
    one(&module(vec![f]), "V243", "in $f: %s still owns a value at `return`; drop or move it first");

    let mut f = F::new("f", Type::Unit);
    f.param("owned", Type::String);
    f.ret(None);
    one(&module(vec![f]), "V243", "%owned still owns a value at `return`");
}

#[test]
fn returning_an_owned_value_moves_it() {
    let mut f = F::new("f", Type::String);
    let s = f.local("s", Type::String);
    f.op(OpKind::StringLit { dest: s, value: "a".into() });
    f.ret(Some(local(s)));
    assert_eq!(verify(&module(vec![f]), None), Ok(()));
}

#[test]
fn overwrite_of_a_live_owned_value() {
    let mut f = F::new("f", Type::Unit);
    let s = f.local("s", Type::String);
    f.op(OpKind::StringLit { dest: s, value: "a".into() });
    f.op(OpKind::StringLit { dest: s, value: "b".into() });
    f.op(OpKind::Drop { local: s });
    f.ret(None);
    let d = one(&module(vec![f]), "V242", "assigns %s while it still owns a value; drop or move it first");
    assert_eq!(d.label.as_deref(), Some("%s = string \"b\""));
}

#[test]
fn missing_return() {
    let mut f = F::new("f", Type::Unit);
    let x = f.local("x", Type::I64);
    f.op(OpKind::Const { dest: x, value: Constant::I64(1) });
    one(&module(vec![f]), "V245", "in $f: control reaches the end of the function without `return`");

    // A loop that nothing breaks out of never reaches the end.
    let mut f = F::new("f", Type::Unit);
    let l = f.label("forever");
    let body = f.block();
    f.op(OpKind::Loop { label: l, body });
    assert_eq!(verify(&module(vec![f]), None), Ok(()));

    // One that is broken out of does.
    let mut f = F::new("f", Type::Unit);
    let l = f.label("once");
    let body = f.block();
    f.op(OpKind::Loop { label: l, body });
    f.push(body, OpKind::Break { label: l });
    one(&module(vec![f]), "V245", "control reaches the end");
}

#[test]
fn break_to_a_label_that_does_not_enclose_it() {
    let mut f = F::new("f", Type::Unit);
    let a = f.label("a");
    let body = f.block();
    f.op(OpKind::Block { label: a, body });
    f.op(OpKind::Break { label: a });
    one(&module(vec![f]), "V213", "in $f: `break @a` is not inside the loop, for or block labelled @a");
}

#[test]
fn continue_to_a_block_label() {
    let mut f = F::new("f", Type::Unit);
    let a = f.label("a");
    let body = f.block();
    f.op(OpKind::Block { label: a, body });
    f.push(body, OpKind::Continue { label: a });
    f.ret(None);
    one(&module(vec![f]), "V213", "`continue @a` names a block");
}

#[test]
fn label_declared_twice_and_label_names_reused() {
    let mut f = F::new("f", Type::Unit);
    let a = f.label("a");
    let b1 = f.block();
    let b2 = f.block();
    f.op(OpKind::Block { label: a, body: b1 });
    f.op(OpKind::Block { label: a, body: b2 });
    f.ret(None);
    one(&module(vec![f]), "V212", "label @a is already declared by `block @a {`");

    let mut f = F::new("f", Type::Unit);
    let a1 = f.label("a");
    let a2 = f.label("a");
    let b1 = f.block();
    let b2 = f.block();
    f.op(OpKind::Block { label: a1, body: b1 });
    f.op(OpKind::Block { label: a2, body: b2 });
    f.ret(None);
    one(&module(vec![f]), "V201", "two labels are called @a");
}

#[test]
fn reference_in_a_class_field() {
    let mut m = Module::new("test");
    m.classes
        .alloc(ClassData { name: "C".into(), fields: vec![FieldData { name: "r".into(), ty: shared(Type::String) }] });
    one(&m, "V202", "field `r` of class C has type &str; a class field may not hold a reference");
}

#[test]
fn reference_nested_in_a_local_type_or_in_a_result() {
    let mut f = F::new("f", Type::Unit);
    f.local("rs", array(shared(Type::I64)));
    f.ret(None);
    one(&module(vec![f]), "V202", "%rs has type [&i64]; a reference may only be the whole type of a local");

    let mut f = F::new("f", shared(Type::I64));
    let x = f.param("x", shared(Type::I64));
    f.ret(Some(local(x)));
    one(&module(vec![f]), "V202", "the result type &i64 holds a reference");
}

#[test]
fn await_in_a_function_that_is_not_async() {
    let mut g = F::new("g", Type::Unit).asynchronous();
    g.ret(None);
    let mut f = F::new("f", Type::Unit);
    f.op(OpKind::Call { dest: None, callee: func(1), args: vec![], awaited: true });
    f.ret(None);
    one(&module(vec![f, g]), "V225", "in $f: `await` is only allowed in async functions, and $f is not async");
}

#[test]
fn async_calls_must_be_awaited() {
    let mut g = F::new("g", Type::Unit).asynchronous();
    g.ret(None);
    let mut f = F::new("f", Type::Unit).asynchronous();
    f.op(call(None, func(1), vec![]));
    f.ret(None);
    one(&module(vec![f, g]), "V224", "$g is async, so the call must be awaited");
}

#[test]
fn mut_alias_at_a_call() {
    let mut two = F::new("two", Type::Unit);
    two.param("x", exclusive(array(Type::I64)));
    two.param("y", shared(array(Type::I64)));
    two.ret(None);
    let mut f = F::new("f", Type::Unit);
    let xs = f.local("xs", array(Type::I64));
    let m = f.local("m", exclusive(array(Type::I64)));
    let r = f.local("r", shared(array(Type::I64)));
    f.op(OpKind::ArrayNew { dest: xs });
    f.op(OpKind::Borrow { dest: m, src: xs, mutable: true });
    f.op(OpKind::Borrow { dest: r, src: xs, mutable: false });
    f.op(call(None, func(0), vec![local(m), local(r)]));
    f.op(OpKind::Drop { local: xs });
    f.ret(None);
    one(&module(vec![two, f]), "V244", "in $f: passes %m (a `&mut`) and %r, which may both reach %xs");
}

#[test]
fn mut_alias_through_a_parameter_and_a_field_of_it() {
    let mut class = Module::new("test");
    let c = class
        .classes
        .alloc(ClassData { name: "C".into(), fields: vec![FieldData { name: "n".into(), ty: Type::I64 }] });
    let mut two = F::new("two", Type::Unit);
    two.param("x", exclusive(Type::Class(c)));
    two.param("y", shared(Type::I64));
    two.ret(None);
    let mut f = F::new("f", Type::Unit);
    let p = f.param("p", exclusive(Type::Class(c)));
    let n = f.local("n", shared(Type::I64));
    f.op(OpKind::FieldRef { dest: n, object: p, field: 0, mutable: false });
    f.op(call(None, func(0), vec![local(p), local(n)]));
    f.ret(None);
    class.functions.alloc(two.f);
    class.functions.alloc(f.f);
    one(&class, "V244", "passes %p (a `&mut`) and %n, which may both reach %p");
}

#[test]
fn a_mut_reference_reborrows_as_shared_but_not_as_mut() {
    let mut f = F::new("f", Type::I64);
    let xs = f.param("xs", exclusive(array(Type::I64)));
    let r = f.local("r", shared(array(Type::I64)));
    let n = f.local("n", Type::I64);
    f.op(OpKind::Borrow { dest: r, src: xs, mutable: false });
    f.op(call(Some(n), func(1), vec![local(r)]));
    f.ret(Some(local(n)));
    assert_eq!(verify(&module(vec![f, integer_sum()]), None), Ok(()));

    let mut f = F::new("f", Type::Unit);
    let xs = f.param("xs", exclusive(array(Type::I64)));
    let m = f.local("m", exclusive(exclusive(array(Type::I64))));
    f.op(OpKind::Borrow { dest: m, src: xs, mutable: true });
    f.ret(None);
    has(&module(vec![f]), "V220", "operand %xs of `borrow_mut` has type &mut [i64], expected an owned value");
}

#[test]
fn reference_used_after_its_source_is_dropped() {
    let mut f = F::new("f", Type::Unit);
    let s = f.local("s", Type::String);
    let r = f.local("r", shared(Type::String));
    let n = f.local("n", Type::I64);
    f.op(OpKind::StringLit { dest: s, value: "a".into() });
    f.op(OpKind::Borrow { dest: r, src: s, mutable: false });
    f.op(OpKind::Drop { local: s });
    f.op(OpKind::StrLen { dest: n, string: r });
    f.ret(None);
    one(&module(vec![f]), "V241", "%r is used after its source %s was dropped by `drop %s`");
}

#[test]
fn for_each_over_an_array_dropped_in_the_body() {
    let mut f = F::new("f", Type::Unit);
    let xs = f.local("xs", array(Type::String));
    let x = f.local("x", shared(Type::String));
    let l = f.label("l");
    f.op(OpKind::ArrayNew { dest: xs });
    let body = f.block();
    f.op(OpKind::ForEach { var: x, seq: xs, label: l, body });
    f.push(body, OpKind::Drop { local: xs });
    f.ret(None);
    has(&module(vec![f]), "V241", "%xs is used, but on some path it was dropped by `drop %xs`");
}

#[test]
fn copy_kinds() {
    let mut f = F::new("f", Type::Unit);
    let s = f.param("s", Type::String);
    let t = f.local("t", Type::String);
    f.op(OpKind::Copy { dest: t, src: s });
    f.op(OpKind::Drop { local: s });
    f.op(OpKind::Drop { local: t });
    f.ret(None);
    one(&module(vec![f]), "V229", "`copy` of %s, whose type String is not a copy type");
}

#[test]
fn mutation_through_a_shared_reference() {
    let mut f = F::new("f", Type::Unit);
    let xs = f.param("xs", shared(array(Type::I64)));
    f.op(OpKind::ArrayPush { array: xs, value: int(1) });
    f.ret(None);
    one(&module(vec![f]), "V228", "`array.push` appends through %xs, a shared reference (&[i64])");
}

#[test]
fn return_value_presence() {
    let mut f = F::new("f", Type::I64);
    f.ret(None);
    one(&module(vec![f]), "V230", "`return` without a value in a function that returns i64");

    let mut f = F::new("f", Type::Unit);
    f.ret(Some(Operand::Const(Constant::Unit)));
    assert_eq!(verify(&module(vec![f]), None), Ok(()));
}

#[test]
fn runtime_calls() {
    let print = RuntimeFn::PrintI64;
    let exec = RuntimeFn::DbExec;
    let encode = RuntimeFn::JsonEncode;
    let mut f = F::new("f", Type::Unit).asynchronous();
    let s = f.param("s", shared(Type::String));
    let n = f.local("n", Type::I64);
    let out = f.local("out", Type::String);
    f.op(OpKind::RuntimeCall { dest: None, func: print, class: None, args: vec![local(s)], awaited: false });
    f.op(OpKind::RuntimeCall { dest: Some(n), func: exec, class: None, args: vec![local(s), int(1)], awaited: false });
    f.op(OpKind::RuntimeCall { dest: Some(out), func: encode, class: None, args: vec![local(s)], awaited: false });
    f.op(OpKind::Drop { local: out });
    f.ret(None);
    let diagnostics = errors(&module(vec![f]));
    let codes: Vec<_> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["V220", "V224", "V226"], "{}", render(&diagnostics));
    assert!(diagnostics[0].message.contains("argument 1 (%s) of `rtcall print.i64` has type &str, expected i64"));
}

#[test]
fn main_rules() {
    let mut f = F::new("main", Type::I64).asynchronous();
    f.param("x", Type::I64);
    f.ret(Some(int(0)));
    let diagnostics = errors(&module(vec![f]));
    let codes: Vec<_> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["V208", "V208"], "{}", render(&diagnostics));
    // An async `main` is a program that runs with a database.
    let mut f = F::new("main", Type::Unit).asynchronous();
    f.ret(None);
    assert!(errors(&module(vec![f])).is_empty());
}

#[test]
fn parameters_must_be_the_first_locals() {
    let mut f = F::new("f", Type::Unit);
    let x = f.local("x", Type::I64);
    let y = f.local("y", Type::I64);
    f.f.params = vec![y, x];
    f.ret(None);
    let diagnostics = errors(&module(vec![f]));
    assert_eq!(diagnostics.len(), 2, "{}", render(&diagnostics));
    assert!(diagnostics.iter().all(|d| d.code == "V207"));
}

#[test]
fn duplicate_names() {
    let mut m = module(vec![F::new("f", Type::Unit), F::new("f", Type::Unit)]);
    for (_, f) in m.functions.iter_mut() {
        let body = f.body;
        let op = f.ops.alloc(OpKind::Return { value: None }.into());
        f.blocks[body].ops.push(op);
        f.locals.alloc(LocalData { name: "x".into(), ty: Type::I64 });
        f.locals.alloc(LocalData { name: "x".into(), ty: Type::I64 });
    }
    let diagnostics = errors(&m);
    let codes: Vec<_> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["V201", "V201", "V201"], "{}", render(&diagnostics));
    assert!(diagnostics[0].message.contains("function $f is declared twice"));
    assert!(diagnostics[1].message.contains("in $f: local %x is declared twice"));
}

/// A module with one class `User { id: i64, name: String }`.
fn user_module() -> (Module, ClassId) {
    let mut m = Module::new("test");
    let user = m.classes.alloc(ClassData {
        name: "User".into(),
        fields: vec![
            FieldData { name: "id".into(), ty: Type::I64 },
            FieldData { name: "name".into(), ty: Type::String },
            FieldData { name: "score".into(), ty: Type::F64 },
        ],
    });
    (m, user)
}

#[test]
fn tables() {
    let (mut m, user) = user_module();
    m.tables.push(TableDecl { name: "users".into(), class: user, key: 0 });
    assert_eq!(verify(&m, None), Ok(()));
    m.tables.push(TableDecl { name: "users".into(), class: user, key: 2 });
    m.tables.push(TableDecl { name: "more".into(), class: user, key: 7 });
    m.tables.push(TableDecl { name: "none".into(), class: Idx::from_raw(RawIdx::from(9)), key: 0 });
    let diagnostics = errors(&m);
    let codes: Vec<_> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["V201", "V204", "V204", "V204"], "{}", render(&diagnostics));
    assert!(diagnostics[1].message.contains("the key of table users is field `score` of type f64"));
}

#[test]
fn routes() {
    let (mut m, user) = user_module();
    let mut h = F::new("get_user", Type::Class(user));
    let id = h.param("id", Type::I64);
    let q = h.param("q", Type::Option(Box::new(Type::String)));
    let body = h.param("body", Type::Class(user));
    let _ = id;
    h.op(OpKind::Drop { local: q });
    h.ret(Some(local(body)));
    let handler = m.functions.alloc(h.f);
    m.routes.push(RouteDecl { method: HttpMethod::Get, path: "/users/{id}".into(), handler, headers: Vec::new() });
    assert_eq!(verify(&m, None), Ok(()));

    m.routes.push(RouteDecl { method: HttpMethod::Get, path: "/users/{id}".into(), handler, headers: Vec::new() });
    m.routes.push(RouteDecl { method: HttpMethod::Post, path: "/users/{uid}".into(), handler, headers: Vec::new() });
    m.routes.push(RouteDecl { method: HttpMethod::Put, path: "/users/{id".into(), handler, headers: Vec::new() });
    m.routes.push(RouteDecl { method: HttpMethod::Delete, path: "/x".into(), handler: func(5), headers: Vec::new() });
    let diagnostics = errors(&m);
    let codes: Vec<_> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["V206", "V205", "V205", "V205"], "{}", render(&diagnostics));
    assert!(diagnostics[1].message.contains("path parameter `{uid}` is not a parameter of $get_user"));
}

#[test]
fn diagnostics_come_in_text_order() {
    // The flow error of the first operation comes before the type error of the second,
    // although the type checks run first.
    let mut f = F::new("f", Type::Unit);
    let x = f.local("x", Type::I64);
    let y = f.local("y", Type::I32);
    f.op(OpKind::Binary {
        dest: y,
        op: BinaryOp::Add,
        ty: ScalarType::I32,
        lhs: Operand::Const(Constant::I32(1)),
        rhs: local(y),
    });
    f.op(OpKind::Binary { dest: x, op: BinaryOp::Add, ty: ScalarType::I32, lhs: local(y), rhs: local(y) });
    f.ret(None);
    let diagnostics = errors(&module(vec![f]));
    let codes: Vec<_> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["V240", "V220"], "{}", render(&diagnostics));
}

#[test]
fn unreachable_operations_raise_no_flow_errors() {
    let mut f = F::new("f", Type::Unit);
    let x = f.local("x", Type::I64);
    let y = f.local("y", Type::I64);
    f.ret(None);
    f.op(OpKind::Copy { dest: y, src: x });
    assert_eq!(verify(&module(vec![f]), None), Ok(()));
}

#[test]
fn out_of_range_ids_are_reported_without_panicking() {
    let bad_local: LocalId = Idx::from_raw(RawIdx::from(99));
    let bad_label: LabelId = Idx::from_raw(RawIdx::from(42));
    let bad_block: BlockId = Idx::from_raw(RawIdx::from(77));
    let bad_op: OpId = Idx::from_raw(RawIdx::from(55));
    let bad_class: ClassId = Idx::from_raw(RawIdx::from(3));
    let mut f = F::new("f", Type::Unit);
    let x = f.local("x", Type::Class(bad_class));
    f.op(OpKind::Copy { dest: x, src: bad_local });
    f.op(call(None, func(12), vec![local(bad_local)]));
    f.op(OpKind::New { dest: x, class: bad_class, fields: vec![] });
    f.op(OpKind::Break { label: bad_label });
    f.op(OpKind::Loop { label: bad_label, body: bad_block });
    let body = f.body();
    f.f.blocks[body].ops.push(bad_op);
    // A block that contains the operation that owns it.
    let l = f.label("l");
    let cyclic = f.block();
    let owner = f.push(cyclic, OpKind::Loop { label: l, body: cyclic });
    f.f.blocks[body].ops.push(owner);
    f.ret(None);
    let m = module(vec![f]);
    let diagnostics = errors(&m);
    for code in ["V203", "V210", "V211"] {
        assert!(diagnostics.iter().any(|d| d.code == code), "no {code} in:\n{}", render(&diagnostics));
    }
    assert!(verify_function(&m, func(7), None).iter().all(|d| d.code == "V210"));
    let bad_body = {
        let mut f = F::new("f", Type::Unit);
        f.f.body = bad_block;
        module(vec![f])
    };
    one(&bad_body, "V210", "the body is block #77, which does not exist");
}

/// Nesting `depth` levels of `block`, `loop` (broken out of), `if` and `for`, with a local
/// per `for` level; must verify clean without overflowing the test thread's stack.
fn deeply_nested(depth: usize) -> Module {
    let mut f = F::new("deep", Type::I64);
    let c = f.param("c", Type::Bool);
    let acc = f.local("acc", Type::I64);
    f.op(OpKind::Const { dest: acc, value: Constant::I64(0) });
    let mut block = f.body();
    let mut loops = Vec::new();
    for level in 0..depth {
        let inner = f.block();
        let label = f.label(&format!("l{level}"));
        let kind = match level % 4 {
            0 => OpKind::Block { label, body: inner },
            1 => {
                loops.push(label);
                OpKind::Loop { label, body: inner }
            }
            2 => OpKind::If { cond: local(c), then_block: inner, else_block: None },
            _ => {
                let i = f.local(&format!("i{level}"), Type::I64);
                OpKind::ForRange { var: i, start: int(0), end: int(2), label, body: inner }
            }
        };
        f.push(block, kind);
        block = inner;
    }
    f.push(block, OpKind::Binary { dest: acc, op: BinaryOp::Add, ty: ScalarType::I64, lhs: local(acc), rhs: int(1) });
    // The innermost `loop` is left by a `break`; the outer ones then loop forever.
    if let Some(&label) = loops.last() {
        f.push(block, OpKind::Break { label });
    }
    f.ret(Some(local(acc)));
    module(vec![f])
}

#[test]
fn five_thousand_deep_nesting() {
    let m = deeply_nested(5000);
    let diagnostics = errors(&m);
    // Only the breaks to the innermost loop leave it; the outer loops never exit, so the
    // final `return` is unreachable, which is fine.
    assert!(diagnostics.is_empty(), "{}", render(&diagnostics));
}

/// A small deterministic generator (an LCG), so the corruption test needs no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }

    fn below(&mut self, n: u32) -> u32 {
        self.next() % n.max(1)
    }
}

fn random_type(rng: &mut Rng, classes: u32) -> Type {
    let mut ty = match rng.below(8) {
        0 => Type::I32,
        1 => Type::I64,
        2 => Type::F64,
        3 => Type::Bool,
        4 => Type::Unit,
        5 => Type::String,
        _ => Type::Class(Idx::from_raw(RawIdx::from(rng.below(classes + 1)))),
    };
    for _ in 0..rng.below(3) {
        ty = match rng.below(3) {
            0 => Type::Array(Box::new(ty)),
            1 => Type::Option(Box::new(ty)),
            _ => Type::reference(rng.below(2) == 0, ty),
        };
    }
    ty
}

/// A random operation whose ids are mostly, but not always, in range.
fn random_op(rng: &mut Rng, locals: u32, blocks: u32, labels: u32) -> OpKind {
    let mut l = || -> LocalId { Idx::from_raw(RawIdx::from(rng.next() % (locals + 1))) };
    let (a, b, c) = (l(), l(), l());
    let block: BlockId = Idx::from_raw(RawIdx::from(rng.below(blocks + 1)));
    let block2: BlockId = Idx::from_raw(RawIdx::from(rng.below(blocks + 1)));
    let label: LabelId = Idx::from_raw(RawIdx::from(rng.below(labels + 1)));
    let o = |x: LocalId| Operand::Local(x);
    let scalar = ScalarType::ALL[rng.below(4) as usize];
    let rt = RuntimeFn::all().nth(rng.below(RuntimeFn::all().count() as u32) as usize).unwrap();
    let class = Some(Idx::from_raw(RawIdx::from(rng.below(2)))).filter(|_| rng.below(2) == 0);
    match rng.below(40) {
        0 => OpKind::Const { dest: a, value: Constant::I64(1) },
        1 => OpKind::Copy { dest: a, src: b },
        2 => OpKind::Unary { dest: a, op: UnaryOp::ALL[rng.below(3) as usize], ty: scalar, arg: o(b) },
        3 => OpKind::Binary { dest: a, op: BinaryOp::ALL[rng.below(21) as usize], ty: scalar, lhs: o(b), rhs: o(c) },
        4 => OpKind::Cast { dest: a, to: scalar, arg: o(b) },
        5 => OpKind::Call {
            dest: Some(a),
            callee: func(rng.below(3)),
            args: vec![o(b), o(c)],
            awaited: rng.below(2) == 0,
        },
        6 => OpKind::RuntimeCall { dest: Some(a), func: rt, class, args: vec![o(b)], awaited: rng.below(2) == 0 },
        7 => OpKind::New { dest: a, class: Idx::from_raw(RawIdx::from(rng.below(2))), fields: vec![o(b), o(c)] },
        8 => OpKind::FieldGet { dest: a, object: b, field: rng.below(3) },
        9 => OpKind::FieldRef { dest: a, object: b, field: rng.below(3), mutable: rng.below(2) == 0 },
        10 => OpKind::FieldSet { object: a, field: rng.below(3), value: o(b) },
        11 => OpKind::ArrayNew { dest: a },
        12 => OpKind::ArrayLen { dest: a, array: b },
        13 => OpKind::ArrayGet { dest: a, array: b, index: o(c) },
        14 => OpKind::ArrayRef { dest: a, array: b, index: o(c), mutable: rng.below(2) == 0 },
        15 => OpKind::ArraySet { array: a, index: o(b), value: o(c) },
        16 => OpKind::ArrayPush { array: a, value: o(b) },
        17 => OpKind::StringLit { dest: a, value: "s".into() },
        18 => OpKind::StrLen { dest: a, string: b },
        19 => {
            OpKind::StrConcat { dest: a, parts: vec![StrPart::Local(b), StrPart::Text("t".into()), StrPart::Local(c)] }
        }
        20 => OpKind::StrEq { dest: a, lhs: b, rhs: c },
        21 => OpKind::OptionSome { dest: a, value: o(b) },
        22 => OpKind::OptionNone { dest: a },
        23 => OpKind::OptionIsSome { dest: a, option: b },
        24 => OpKind::OptionUnwrap { dest: a, option: b },
        25 => OpKind::Move { dest: a, src: b },
        26 => OpKind::Clone { dest: a, src: b },
        27 => OpKind::Drop { local: a },
        28 => OpKind::Borrow { dest: a, src: b, mutable: rng.below(2) == 0 },
        29 => OpKind::Load { dest: a, reference: b },
        30 => OpKind::Store { reference: a, value: o(b) },
        31 => OpKind::If { cond: o(a), then_block: block, else_block: Some(block2).filter(|_| rng.below(2) == 0) },
        32 => OpKind::Loop { label, body: block },
        33 => OpKind::Block { label, body: block },
        34 => OpKind::ForRange { var: a, start: o(b), end: o(c), label, body: block },
        35 => OpKind::ForEach { var: a, seq: b, label, body: block },
        36 => OpKind::Break { label },
        37 => OpKind::Continue { label },
        38 => OpKind::Return { value: Some(o(a)).filter(|_| rng.below(2) == 0) },
        _ => OpKind::Trap { message: "t".into() },
    }
}

#[test]
fn random_corrupt_functions_never_panic_and_verify_deterministically() {
    let mut rng = Rng(0x5eed);
    for _ in 0..1500 {
        let mut m = Module::new("fuzz");
        for c in 0..2 {
            let fields =
                (0..rng.below(3)).map(|i| FieldData { name: format!("f{i}"), ty: random_type(&mut rng, 2) }).collect();
            m.classes.alloc(ClassData { name: format!("C{c}"), fields });
        }
        for fi in 0..2 {
            let mut f = F::new(&format!("f{fi}"), random_type(&mut rng, 2));
            f.f.is_async = rng.below(2) == 0;
            let locals = 1 + rng.below(6);
            for i in 0..locals {
                let ty = random_type(&mut rng, 2);
                if i < 2 {
                    f.param(&format!("p{i}"), ty)
                } else {
                    f.local(&format!("x{i}"), ty)
                };
            }
            for _ in 0..rng.below(4) {
                f.block();
            }
            for i in 0..rng.below(3) {
                f.label(&format!("l{i}"));
            }
            let blocks = f.f.blocks.len() as u32;
            let labels = f.f.labels.len() as u32;
            for _ in 0..rng.below(14) {
                let kind = random_op(&mut rng, locals, blocks, labels);
                let target: BlockId = Idx::from_raw(RawIdx::from(rng.below(blocks)));
                f.push(target, kind);
            }
            m.functions.alloc(f.f);
        }
        let first = verify(&m, None);
        let second = verify(&m, None);
        assert_eq!(first, second);
    }
}

#[test]
fn a_move_under_five_thousand_nested_loops_is_found() {
    // Every level has its own loop variable, so each state is 5,000 locals wide and the
    // move at the bottom must travel back up through 5,000 loop heads.
    let mut f = F::new("deep", Type::Unit);
    let s = f.local("s", Type::String);
    f.op(OpKind::StringLit { dest: s, value: "a".into() });
    let mut block = f.body();
    for level in 0..5000 {
        let inner = f.block();
        let label = f.label(&format!("l{level}"));
        let i = f.local(&format!("i{level}"), Type::I64);
        f.push(block, OpKind::ForRange { var: i, start: int(0), end: int(2), label, body: inner });
        block = inner;
    }
    f.push(block, call(None, func(1), vec![local(s)]));
    f.ret(None);
    let diagnostics = errors(&module(vec![f, consume()]));
    let codes: Vec<_> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["V241", "V243"], "{}", render(&diagnostics));
    assert!(diagnostics[0].message.contains("on some path it was moved by `call $consume(%s)`"));
}
