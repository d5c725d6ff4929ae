//! Unit tests of the emitter's refusals and of inputs that stress its structure; the
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
fn routes_are_refused_by_name() {
    let text = "nagi-low 1\nmodule api\n\nroute GET \"/users\" $list\n\nfn $list() -> i64 {\n  return 1_i64\n}\n";
    let err = ir(text).unwrap_err();
    assert_eq!(err.code, "M101");
    assert!(err.message.contains("does not support routes yet (route GET /users)"), "{}", err.message);
    assert!(err.message.contains("--backend=rust"), "{}", err.message);
}

#[test]
fn the_database_is_refused_by_name() {
    let db = "nagi-low 1\nmodule d\n\nasync fn $f() -> unit {\n  await rtcall db.begin()\n  return\n}\n";
    let err = ir(db).unwrap_err();
    assert_eq!(err.code, "M102");
    assert!(err.message.contains("does not support the database yet (rtcall db.begin in $f)"), "{}", err.message);
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
