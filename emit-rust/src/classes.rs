//! Class structs and enums with their serde derives, and the row decoders of classes that
//! queries return.

use std::collections::BTreeSet;
use std::fmt::Write;

use nagi_low::{ClassId, Module, OpKind, Type};

use crate::names::{ident, rust_type};

/// One `pub struct` per class (serde derives, unknown JSON fields refused), each followed by its
/// row decoder when some `db.query`/`db.query_one` decodes rows into it.
pub fn structs(out: &mut String, module: &Module) {
    let queried = queried_classes(module);
    for (id, class) in module.classes.iter() {
        let name = serde_header(out, &class.name, "struct", ", deny_unknown_fields");
        let _ = writeln!(out, "    pub struct {name} {{");
        for field in &class.fields {
            let field_name = ident(&field.name);
            if field_name != field.name {
                let _ = writeln!(out, "        #[serde(rename = {:?})]", field.name);
            }
            let _ = writeln!(out, "        pub {field_name}: {},", rust_type(module, &field.ty));
        }
        out.push_str("    }\n\n");
        if queried.contains(&id) {
            row_decoder(out, module, id);
        }
    }
}

/// One `pub enum` per Low enum, with serde's default (externally tagged) representation, which
/// the LLVM path's descriptors and the interpreter reproduce (`shaped_json`).
pub fn enums(out: &mut String, module: &Module) {
    for (_, data) in module.enums.iter() {
        let name = serde_header(out, &data.name, "enum", "");
        let _ = writeln!(out, "    pub enum {name} {{");
        for variant in &data.variants {
            let variant_name = ident(&variant.name);
            if variant_name != variant.name {
                let _ = writeln!(out, "        #[serde(rename = {:?})]", variant.name);
            }
            match &variant.payload {
                Some(ty) => {
                    let _ = writeln!(out, "        {variant_name}({}),", rust_type(module, ty));
                }
                None => {
                    let _ = writeln!(out, "        {variant_name},");
                }
            }
        }
        out.push_str("    }\n\n");
    }
}

/// The derives and serde attributes of a class (`kind` "struct") or enum ("enum") with the Low
/// name `low`, `extra` added to its `serde` attribute; returns the Rust name.
///
/// JSON keys and the decoder's messages use the Low names, as on the LLVM path and in the
/// interpreter, also where a name had to change to be a Rust identifier (`n_self`): `rename`
/// gives the name. A module's item (`accounts.User`) also gets `expecting`, since the derive
/// words "expected struct NAME" with the Rust name (`accounts__User`) otherwise; with
/// `expecting` it says no more for a short sequence, which `shaped_json` words alike.
fn serde_header(out: &mut String, low: &str, kind: &str, extra: &str) -> String {
    out.push_str("    #[derive(::std::clone::Clone, ::std::fmt::Debug, nagi_runtime::serde::Serialize, nagi_runtime::serde::Deserialize)]\n");
    let _ = writeln!(out, "    #[serde(crate = \"nagi_runtime::serde\"{extra})]");
    let name = ident(low);
    if low.contains('.') {
        let _ = writeln!(out, "    #[serde(rename = {low:?}, expecting = {:?})]", format!("{kind} {low}"));
    } else if name != low {
        let _ = writeln!(out, "    #[serde(rename = {low:?})]");
    }
    name
}

/// Classes that `db.query` / `db.query_one` decode rows into.
fn queried_classes(module: &Module) -> BTreeSet<ClassId> {
    let mut classes = BTreeSet::new();
    for func in module.functions.values() {
        for op in func.ops.values() {
            if let OpKind::RuntimeCall { class: Some(class), func: rt, .. } = &op.kind
                && rt.uses_database()
            {
                classes.insert(*class);
            }
        }
    }
    classes
}

/// `impl FromRow`: each field read from its precomputed column index, with the runtime's
/// range and type checks.
fn row_decoder(out: &mut String, module: &Module, id: ClassId) {
    let class = &module.classes[id];
    let name = ident(&class.name);
    let columns: Vec<String> = class.fields.iter().map(|f| format!("{:?}", f.name)).collect();
    let _ = writeln!(out, "    impl nagi_runtime::db::FromRow for {name} {{");
    let _ = writeln!(out, "        const COLUMNS: &'static [&'static str] = &[{}];", columns.join(", "));
    let _ = writeln!(
        out,
        "        fn from_row(row: &nagi_runtime::db::Row<'_>, columns: &[usize]) -> ::std::result::Result<Self, nagi_runtime::db::RowError> {{"
    );
    let _ = writeln!(out, "            ::std::result::Result::Ok({name} {{");
    for (i, field) in class.fields.iter().enumerate() {
        let getter = match &field.ty {
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::F64 => "f64",
            Type::Bool => "bool",
            Type::String => "string",
            Type::Time => "time",
            Type::Duration => "duration",
            Type::Uuid => "uuid",
            Type::Option(inner) => match **inner {
                Type::I32 => "opt_i32",
                Type::I64 => "opt_i64",
                Type::F64 => "opt_f64",
                Type::Bool => "opt_bool",
                Type::Time => "opt_time",
                Type::Duration => "opt_duration",
                Type::Uuid => "opt_uuid",
                _ => "opt_string",
            },
            _ => "string",
        };
        let _ = writeln!(out, "                {}: row.{getter}(columns[{i}], {:?})?,", ident(&field.name), field.name);
    }
    out.push_str("            })\n        }\n    }\n\n");
}
