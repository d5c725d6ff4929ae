//! Unit tests of the emitter's refusals, of the shape of what it emits for services and async
//! functions, and of inputs that stress its structure; the
//! differential run-tests in `tests/programs.rs` cover what the emitted code does.

use nagi_low::Module;

use crate::{Options, emit_ir, emit_object};

fn module(text: &str) -> Module {
    let (module, source) = nagi_low::parse(text).unwrap_or_else(|d| panic!("{}", d.render("test.low", text)));
    if let Err(ds) = nagi_low::verify(&module, Some(&source)) {
        panic!("{}", nagi_low::diagnostic::render_all(&ds, "test.low", text));
    }
    module
}

fn ir(text: &str) -> Result<String, nagi_low::Diagnostic> {
    emit_ir(&module(text), &Options { opt_level: 0, ..Options::default() }, &mut |_| {})
}

#[test]
fn a_service_gets_its_tables_and_one_guarded_poll() {
    let text = "nagi-low 1\nmodule api\n\nroute GET \"/users\" $list\n\nfn $list() -> i64 {\n  return 1_i64\n}\n";
    let ir = ir(text).expect("routes are supported");
    assert!(ir.contains("@nagi.service = private constant"), "{ir}");
    assert!(ir.contains("call i32 @nagi_rt_serve("), "{ir}");
    // A sync handler gets a small frame whose poll calls it once, made in the runtime's room.
    assert!(ir.contains("define internal i32 @nagi.route0.poll("), "{ir}");
    assert!(ir.contains("define internal i8* @nagi.route0.start(i8* %0, i8* %1)"), "{ir}");
    assert!(!ir.contains("@nagi_rt_alloc(") && !ir.contains("@nagi_rt_free("), "{ir}");
    assert!(ir.contains("call i64 @nagi.fn.list()"), "{ir}");
    // The guard is the one place that calls `_setjmp`, which must be known to return twice.
    assert_eq!(ir.matches("call i32 @_setjmp(").count(), 1, "{ir}");
    assert!(ir.contains("returns_twice"), "{ir}");
}

#[test]
fn an_await_suspends_the_frame_and_a_cancelled_frame_drops_what_is_live_there() {
    let db = "nagi-low 1\nmodule d\n\nasync fn $f() -> unit {\n  let %s: String\n  %s = string \"kept\"\n  \
              await rtcall db.begin()\n  drop %s\n  return\n}\n";
    let ir = ir(db).expect("the database is supported");
    assert!(ir.contains("define internal i32 @nagi.poll.f(i8* %0, i8* %1)"), "{ir}");
    assert!(ir.contains("call i32 @nagi_rt_op_poll("), "{ir}");
    assert!(ir.contains("i32 1, label %resume1"), "{ir}");
    // A failed operation makes the poll answer 2 and leaves the frame suspended, to be dropped.
    assert!(ir.contains("label %failed [\n    i32 0, label %pending\n    i32 1, label %ready1"), "{ir}");
    assert!(ir.contains("ret i32 2"), "{ir}");
    // Cancelled while `db.begin` is pending, the frame drops the string and the operation.
    let drop = &ir[ir.find("define internal void @nagi.drop.f(").expect("a drop function")..];
    let at_await = &drop[drop.find("drop.await1:").expect("a drop block for the await")..];
    let at_await = &at_await[..at_await.find("br label").expect("the block ends")];
    assert!(at_await.contains("call void @nagi.drop.String("), "{at_await}");
    assert!(at_await.contains("call void @nagi_rt_op_drop("), "{at_await}");
}

#[test]
fn json_passes_a_layout_descriptor() {
    let json = "nagi-low 1\nmodule j\n\nclass C {\n  x: i64\n  kids: [C]\n}\n\nfn $f(%c: &C) -> String {\n  \
                let %s: String\n  %s = rtcall json.encode<C>(%c)\n  return %s\n}\n";
    let ir = ir(json).expect("JSON is supported");
    assert!(ir.contains("@nagi_rt_json_encode"), "{ir}");
    // The class reaches itself through its array of kids; the descriptors refer to each other.
    assert!(ir.contains("@nagi.type.C = "), "{ir}");
    assert!(ir.contains("@\"nagi.type.[C]\""), "{ir}");
}

#[test]
fn a_program_needs_main_but_ir_does_not() {
    let text = "nagi-low 1\nmodule lib\n\nfn $one() -> i64 {\n  return 1_i64\n}\n";
    let ir = ir(text).expect("IR without main");
    assert!(ir.contains("@nagi.fn.one"), "{ir}");
    assert!(!ir.contains("@main("), "{ir}");
    let err = emit_object(&module(text), &Options::default(), &mut |_| {}).unwrap_err();
    assert_eq!(err.code, "M100");
}

#[test]
fn a_class_holding_itself_by_value_is_refused() {
    let text = "nagi-low 1\nmodule r\n\nclass A {\n  b: B\n}\n\nclass B {\n  a: Option<A>\n}\n\nfn $main() -> unit {\n  \
                return\n}\n";
    let err = ir(text).unwrap_err();
    assert_eq!(err.code, "M104");
    // Through an array the class is fine: the array holds a pointer.
    let ok = "nagi-low 1\nmodule r\n\nclass Node {\n  kids: [Node]\n}\n\nfn $main() -> unit {\n  let %n: Node\n  \
              let %k: [Node]\n  %k = array.new\n  %n = new Node { kids: %k }\n  drop %n\n  return\n}\n";
    let ir = self::ir(ok).expect("recursive through an array");
    assert!(ir.contains("nagi.drop.Node"), "{ir}");
}

#[test]
fn deep_nesting_emits_without_recursion() {
    // 5,000 nested `if`s: the body walk uses an explicit stack, so depth costs memory only.
    let depth = 5000;
    let mut text = String::from("nagi-low 1\nmodule deep\n\nfn $main() -> unit {\n  let %c: bool\n  %c = const true\n");
    for _ in 0..depth {
        text.push_str("  if %c {\n");
    }
    text.push_str("  rtcall print.bool(%c)\n");
    for _ in 0..depth {
        text.push_str("  }\n");
    }
    text.push_str("  return\n}\n");
    // The parser and verifier are not what is tested here; they get a big stack like nagic's.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024 * 1024)
        .spawn(move || ir(&text).map(|ir| ir.matches("br i1").count()))
        .expect("thread");
    let branches = handle.join().expect("no panic").expect("emits");
    assert_eq!(branches, depth);
}

#[test]
fn exported_functions_get_their_symbol_and_no_main() {
    let text = "nagi-low 1\nmodule lib\n\nfn $one() -> i64 {\n  return 1_i64\n}\n\nfn $two() -> i64 {\n  \
                return 2_i64\n}\n\nfn $main() -> unit {\n  return\n}\n";
    let options = Options { opt_level: 0, export: vec![crate::Export::c_name("one")], ..Options::default() };
    let ir = emit_ir(&module(text), &options, &mut |_| {}).expect("IR");
    assert!(ir.contains("define i64 @nagi_one()"), "{ir}");
    assert!(ir.contains("define internal i64 @nagi.fn.two()"), "{ir}");
    assert!(!ir.contains("@main("), "a library has no C main: {ir}");
    // An object needs no `main` when it exports functions.
    let lib = "nagi-low 1\nmodule lib\n\nfn $one() -> i64 {\n  return 1_i64\n}\n";
    let object = emit_object(&module(lib), &options, &mut |_| {}).expect("a library object");
    assert!(object.windows(b"nagi_one".len()).any(|w| w == b"nagi_one"), "the symbol is in the object");
    let missing = Options { export: vec![crate::Export::c_name("three")], ..Options::default() };
    let err = emit_object(&module(lib), &missing, &mut |_| {}).unwrap_err();
    assert_eq!(err.code, "M106");
    assert!(err.message.contains("cannot export `three`"), "{}", err.message);
}

#[test]
fn a_literal_is_its_constant_with_capacity_zero_wherever_it_goes() {
    // Read, returned, moved to another local or borrowed mutably: the literal is never copied
    // into a buffer of its own; its capacity is 0, so nothing frees it.
    let programs = [
        "fn $f() -> i64 {\n  let %s: String\n  let %r: &str\n  let %n: i64\n  %s = string \"hello\"\n  \
         %r = borrow %s\n  %n = str.len %r\n  drop %s\n  return %n\n}\n",
        "fn $f() -> String {\n  let %s: String\n  %s = string \"hello\"\n  return %s\n}\n",
        "fn $f() -> i64 {\n  let %s: String\n  let %t: String\n  let %n: i64\n  %s = string \"hello\"\n  \
         %t = move %s\n  %n = str.len %t\n  drop %t\n  return %n\n}\n",
        "fn $f() -> unit {\n  let %s: String\n  let %r: &mut String\n  %s = string \"hello\"\n  \
         %r = borrow_mut %s\n  drop %s\n  return\n}\n",
    ];
    for body in programs {
        let text = ir(&format!("nagi-low 1\nmodule m\n\n{body}")).expect("strings are supported");
        assert!(!text.contains("@nagi_rt_str_from("), "{text}");
        assert!(text.contains("c\"hello\""), "the literal's bytes are a constant: {text}");
    }
}
