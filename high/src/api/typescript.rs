//! A typed TypeScript client of a service (`nagic client --lang=ts`): the classes and enums it
//! exchanges as types, one async method per route on `Client`, and every error answer as a
//! thrown `NagiError` carrying the status and the runtime's `{"error", "detail"}` body.
//!
//! It uses the platform's `fetch` (Node 18 and later, browsers, Deno, Bun) and nothing else,
//! and compiles under `tsc --strict`. Numbers are JavaScript numbers: an `i64` beyond 2^53
//! loses precision there, as in any JSON client in JavaScript. `Time`, `Duration` and `Uuid`
//! are their JSON strings.

use std::collections::BTreeSet;
use std::fmt::Write;

use nagi_low::ParamSource;

use super::{Operation, Parameter};
use crate::modules::Sources;
use crate::tir::{Program, Ty};

/// The TypeScript client of `program`, a module called `title`.
pub fn client(program: &Program, sources: &Sources, title: &str) -> String {
    let operations = super::operations(program, sources);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// The typed client of the Nagi service `{title}`, written by `nagic client --lang=ts`.\n\
         // Do not edit: write it again when the service's routes change.\n"
    );
    out.push_str(PRELUDE);
    let mut used: Vec<Ty> = Vec::new();
    let mut methods = String::new();
    for op in &operations {
        method(program, op, &mut used, &mut methods);
    }
    let mut done = BTreeSet::new();
    let mut types = String::new();
    while let Some(ty) = used.pop() {
        let name = type_name(program, &ty);
        if done.insert(name) {
            definition(program, sources, &ty, &mut used, &mut types);
        }
    }
    out.push_str(&types);
    out.push_str(CLIENT_START);
    out.push_str(&methods);
    out.push_str("}\n");
    out
}

/// The error class and the options, the same in every client.
const PRELUDE: &str = r#"/** An answer with an error status: the runtime's `{"error", "detail"}` body and the status. */
export class NagiError extends Error {
  constructor(
    /** The HTTP status, 400 to 599. */
    readonly status: number,
    /** The kind of error, a stable name such as `not found` or `unprocessable entity`. */
    readonly error: string,
    /** What went wrong, for people. */
    readonly detail: string,
  ) {
    super(`${status} ${error}: ${detail}`);
    this.name = "NagiError";
  }
}

/** Where the service is and how to reach it. */
export interface ClientOptions {
  /** The service's base URL, such as `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Headers sent with every request (for example `authorization`). */
  headers?: Record<string, string>;
  /** The `fetch` to use; the platform's by default. */
  fetch?: typeof fetch;
}

"#;

const CLIENT_START: &str = r#"/** One method per route of the service. Each throws a `NagiError` for an error answer. */
export class Client {
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.headers = options.headers ?? {};
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  private async request(
    method: string,
    path: string,
    query: Record<string, string | number | boolean | null | undefined>,
    headers: Record<string, string | number | boolean | null | undefined>,
    body: unknown,
  ): Promise<Response> {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) search.append(name, String(value));
    }
    const all: Record<string, string> = { ...this.headers };
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined && value !== null) all[name] = String(value);
    }
    if (body !== undefined) all["content-type"] = "application/json";
    const text = search.toString();
    return this.fetchImpl(this.baseUrl + path + (text ? "?" + text : ""), {
      method,
      headers: all,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  private static async failure(response: Response): Promise<NagiError> {
    const text = await response.text();
    try {
      const parsed = JSON.parse(text) as { error?: unknown; detail?: unknown };
      return new NagiError(response.status, String(parsed.error ?? ""), String(parsed.detail ?? ""));
    } catch {
      return new NagiError(response.status, response.statusText.toLowerCase(), text);
    }
  }
"#;

/// One route's method on `Client`.
fn method(program: &Program, op: &Operation, used: &mut Vec<Ty>, out: &mut String) {
    let mut args = Vec::new();
    for p in op.params.iter().filter(|p| p.source == ParamSource::Path) {
        args.push(format!("{}: {}", ident(&p.name), ts_type(program, &p.ty, used)));
    }
    if let Some(body) = &op.body {
        args.push(format!("body: {}", ts_type(program, body, used)));
    }
    let named: Vec<&Parameter> = op.params.iter().filter(|p| p.source != ParamSource::Path).collect();
    if !named.is_empty() {
        let fields: Vec<String> = named
            .iter()
            .map(|p| {
                let optional = if p.required && p.default.is_none() { "" } else { "?" };
                format!("{}{optional}: {}", quoted_key(&p.name), ts_type(program, &p.ty, used))
            })
            .collect();
        let all_optional = named.iter().all(|p| !p.required || p.default.is_some());
        let default = if all_optional { " = {}" } else { "" };
        args.push(format!("{}: {{ {} }}{default}", params_name(op), fields.join("; ")));
    }
    let result = match &op.result {
        None => "void".to_string(),
        Some(ty) if op.optional => format!("{} | null", ts_type(program, ty, used)),
        Some(ty) => ts_type(program, ty, used),
    };
    let _ = writeln!(out);
    let doc = op.doc.clone().unwrap_or_default();
    let _ = writeln!(
        out,
        "  /** `{} {}`{}{} */",
        op.method.name(),
        doc_text(&op.path),
        if doc.is_empty() { "" } else { ": " },
        doc_text(&doc)
    );
    let _ = writeln!(out, "  async {}({}): Promise<{result}> {{", camel(&op.name), args.join(", "));
    let path = path_expression(&op.path, &op.params);
    let pick = |source: fn(ParamSource) -> bool| -> String {
        let items: Vec<String> = named
            .iter()
            .filter(|p| source(p.source))
            .map(|p| format!("{}: {}.{}", quoted_key(&p.wire_name), params_name(op), p.name))
            .collect();
        if items.is_empty() { "{}".to_string() } else { format!("{{ {} }}", items.join(", ")) }
    };
    let query = pick(|s| matches!(s, ParamSource::Query | ParamSource::OptionalQuery));
    let headers = pick(|s| matches!(s, ParamSource::Header | ParamSource::OptionalHeader));
    let body = if op.body.is_some() { "body" } else { "undefined" };
    let _ = writeln!(
        out,
        "    const $response = await this.request({:?}, {path}, {query}, {headers}, {body});",
        op.method.name()
    );
    if op.optional {
        out.push_str("    if ($response.status === 404) {\n      const $failure = await Client.failure($response);\n      if ($failure.error === \"not found\") return null;\n      throw $failure;\n    }\n");
    }
    let _ = writeln!(out, "    if ($response.status !== {}) throw await Client.failure($response);", op.success);
    match &op.result {
        None => out.push_str("    await $response.body?.cancel();\n"),
        Some(_) => {
            let _ = writeln!(out, "    return (await $response.json()) as {};", result.trim_end_matches(" | null"));
        }
    }
    out.push_str("  }\n");
}

/// The name of a method's object of query and header parameters: `params`, or `params_` when a
/// path parameter is called `params`.
fn params_name(op: &Operation) -> &'static str {
    if op.params.iter().any(|p| p.source == ParamSource::Path && p.name == "params") { "params_" } else { "params" }
}

/// The template literal of a route's path, its parameters percent-encoded.
fn path_expression(path: &str, params: &[Parameter]) -> String {
    let mut out = String::from("`");
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
        out.push_str(&escape_template(&rest[..open]));
        let name = &rest[open + 1..close];
        let name = params.iter().find(|p| p.name == name).map_or(name, |p| p.name.as_str());
        let _ = write!(out, "${{encodeURIComponent(String({}))}}", ident(name));
        rest = rest.get(close + 1..).unwrap_or("");
    }
    out.push_str(&escape_template(rest));
    out.push('`');
    out
}

fn escape_template(text: &str) -> String {
    text.replace('\\', "\\\\").replace('`', "\\`").replace("${", "\\${")
}

/// A type's declaration: an interface for a class, a union for an enum.
fn definition(program: &Program, sources: &Sources, ty: &Ty, used: &mut Vec<Ty>, out: &mut String) {
    let (doc, body) = match ty {
        Ty::Class(c) => {
            let class = &program.classes[*c];
            let mut text = format!("export interface {} {{\n", type_name(program, ty));
            for field in &class.fields {
                let optional = if matches!(field.ty, Ty::Option(_)) { "?" } else { "" };
                let _ =
                    writeln!(text, "  {}{optional}: {};", quoted_key(&field.name), ts_type(program, &field.ty, used));
            }
            text.push_str("}\n\n");
            (super::type_doc(sources, class.span), text)
        }
        Ty::Enum(e) => {
            let en = &program.enums[*e];
            let variants: Vec<String> = en
                .variants
                .iter()
                .map(|v| match &v.payload {
                    None => format!("{:?}", v.name),
                    Some(payload) => format!("{{ {}: {} }}", quoted_key(&v.name), ts_type(program, payload, used)),
                })
                .collect();
            (
                super::type_doc(sources, en.span),
                format!("export type {} = {};\n\n", type_name(program, ty), variants.join(" | ")),
            )
        }
        _ => return,
    };
    if let Some(doc) = doc {
        let _ = writeln!(out, "/** {} */", doc_text(&doc));
    }
    out.push_str(&body);
}

/// A type in TypeScript.
fn ts_type(program: &Program, ty: &Ty, used: &mut Vec<Ty>) -> String {
    match ty {
        Ty::I32 | Ty::I64 | Ty::F64 => "number".into(),
        Ty::Bool => "boolean".into(),
        Ty::String | Ty::Secret | Ty::Time | Ty::Duration | Ty::Uuid => "string".into(),
        Ty::Unit => "null".into(),
        Ty::Array(item) => {
            let inner = ts_type(program, item, used);
            if inner.contains(' ') { format!("Array<{inner}>") } else { format!("{inner}[]") }
        }
        Ty::Option(inner) => format!("{} | null", ts_type(program, inner, used)),
        Ty::Map(_, value) => format!("Record<string, {}>", ts_type(program, value, used)),
        Ty::Class(_) | Ty::Enum(_) => {
            used.push(ty.clone());
            type_name(program, ty)
        }
        // A type parameter never reaches a checked program (only instances do).
        Ty::Task(_) | Ty::Actor(_) | Ty::Param(..) | Ty::Fn(..) => "unknown".into(),
    }
}

/// A class's or enum's name as a TypeScript identifier: a module's `posts.Post` is `posts_Post`.
fn type_name(program: &Program, ty: &Ty) -> String {
    let name = match ty {
        Ty::Class(c) => &program.classes[*c].name,
        Ty::Enum(e) => &program.enums[*e].name,
        _ => return String::new(),
    };
    let name = name.replace('.', "_");
    // The globals and the client's own names a generated type must not shadow.
    const TAKEN: &[&str] = &[
        "Array",
        "Boolean",
        "Client",
        "ClientOptions",
        "Error",
        "Map",
        "NagiError",
        "Number",
        "Object",
        "Promise",
        "Record",
        "Response",
        "String",
        "URLSearchParams",
    ];
    if TAKEN.contains(&name.as_str()) { format!("{name}_") } else { name }
}

/// `get_users_id` as a method name: `getUsersId`.
fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' || c == '.' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    ident(&out)
}

/// A name usable as a TypeScript parameter: a reserved word gets a trailing `_`.
fn ident(name: &str) -> String {
    const RESERVED: &[&str] = &[
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "new",
        "null",
        "return",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "let",
        "static",
        "arguments",
        "eval",
        "yield",
        "await",
        "implements",
        "interface",
        "package",
        "private",
        "protected",
        "public",
    ];
    if RESERVED.contains(&name) { format!("{name}_") } else { name.to_string() }
}

/// A property name, quoted when it is not a plain identifier.
fn quoted_key(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain { name.to_string() } else { format!("{name:?}") }
}

/// A doc comment's text inside `/** … */`.
fn doc_text(doc: &str) -> String {
    doc.replace("*/", "* /").replace('\n', " ")
}
