//! What an editor asks of a program while someone types (`nagic lsp`): its diagnostics, and
//! for a position, what is there (hover), where it is declared (definition), where else it is
//! used (references, rename), what could come next (completion); and a file's outline (document
//! symbols). Offsets are bytes into the program's span space ([`Sources`]); the language server
//! turns them into its positions.
//!
//! The analysis runs the compiler's own front end — modules, checking, lowering's ownership
//! rules — on the texts it is given, so an editor sees exactly the diagnostics `nagic check`
//! prints. Names are resolved by [`index`], which walks the syntax tree beside the typed program.

pub mod complete;
pub mod index;
pub mod symbols;

use nagi_low::Diagnostic;
use nagi_syntax::ast::{SourceFile, Span};

pub use index::{Index, Occurrence, Symbol};

use crate::modules::{self, Sources};
use crate::tir::{Program, Ty};

/// One analysis of a program: its files, every diagnostic, and when it checks, the typed
/// program and its index.
pub struct Analysis {
    pub sources: Sources,
    /// Every diagnostic, spans in the program's span space.
    pub diagnostics: Vec<Diagnostic>,
    /// The merged syntax tree, when every file parses and the modules resolve.
    pub file: Option<SourceFile>,
    /// The checked program, when it checks.
    pub program: Option<Program>,
    pub index: Index,
}

/// Analyzes the program whose main file is `main_text` (named `main_name`), its modules read
/// through `loader`.
pub fn analyze(main_name: &str, main_text: &str, loader: &mut dyn modules::Loader) -> Analysis {
    let (file, sources) = match modules::load_program(main_name, main_text, loader) {
        Ok(loaded) => loaded,
        Err((diagnostics, sources)) => {
            return Analysis { sources, diagnostics, file: None, program: None, index: Index::default() };
        }
    };
    let locate = |span: Span| sources.locate(span.start as usize);
    let checked = crate::check::check(&file, &|classes, tables| crate::sql::sqlite_checker(classes, tables), &locate);
    match checked {
        Err(diagnostics) => Analysis { sources, diagnostics, file: Some(file), program: None, index: Index::default() },
        Ok(program) => {
            let diagnostics = crate::lower::lower_for(&program, "main", false).err().unwrap_or_default();
            let index = index::build(&file, &program, &sources);
            Analysis { sources, diagnostics, file: Some(file), program: Some(program), index }
        }
    }
}

impl Analysis {
    /// The name at `offset` and what it names (the innermost when names nest).
    pub fn symbol_at(&self, offset: usize) -> Option<Occurrence> {
        let offset = offset as u32;
        self.index
            .occurrences
            .iter()
            .filter(|o| o.span.start <= offset && offset <= o.span.end)
            .min_by_key(|o| o.span.end - o.span.start)
            .copied()
    }

    /// Where `symbol` is declared (a module: its file's start).
    pub fn definition(&self, symbol: Symbol) -> Option<Span> {
        if let Symbol::Module(file) = symbol {
            let (_, base, _) = self.sources.files().nth(file)?;
            return Some(Span { start: base as u32, end: base as u32 });
        }
        self.index.occurrences.iter().find(|o| o.definition && o.symbol == symbol).map(|o| o.span)
    }

    /// Every occurrence of `symbol`, its declaration included, in text order.
    pub fn references(&self, symbol: Symbol) -> Vec<Occurrence> {
        let mut found: Vec<Occurrence> =
            self.index.occurrences.iter().filter(|o| o.symbol == symbol).copied().collect();
        found.sort_by_key(|o| (o.span.start, o.span.end));
        found.dedup_by_key(|o| (o.span.start, o.span.end));
        found
    }

    /// What to show for `offset`: the named thing's declaration (with its doc comment), or the
    /// type of the innermost expression there. Markdown.
    pub fn hover(&self, offset: usize) -> Option<String> {
        let program = self.program.as_ref()?;
        if let Some(occurrence) = self.symbol_at(offset) {
            return Some(self.describe(program, occurrence.symbol));
        }
        let at = offset as u32;
        let (_, ty) = self
            .index
            .types
            .iter()
            .filter(|(span, _)| span.start <= at && at <= span.end)
            .min_by_key(|(span, _)| span.end - span.start)?;
        Some(code(&ty_name(program, ty)))
    }

    fn describe(&self, program: &Program, symbol: Symbol) -> String {
        let (text, doc_at) = match symbol {
            Symbol::Local(f, l) => {
                let function = &program.functions[f];
                let local = &function.locals[l];
                let kind = if function.params.contains(&l) {
                    "parameter"
                } else if local.mutable {
                    "var"
                } else {
                    "let"
                };
                (format!("{kind} {}: {}", local.name, ty_name(program, &local.ty)), None)
            }
            Symbol::Function(f) => (signature(program, f), Some(program.functions[f].span)),
            Symbol::Class(c) => {
                let class = &program.classes[c];
                let fields: Vec<String> =
                    class.fields.iter().map(|f| format!("    {}: {}", f.name, ty_name(program, &f.ty))).collect();
                (format!("class {} {{\n{}\n}}", class.name, fields.join("\n")), Some(class.span))
            }
            Symbol::Field(c, i) => {
                let class = &program.classes[c];
                let field = &class.fields[i];
                (format!("{}.{}: {}", class.name, field.name, ty_name(program, &field.ty)), None)
            }
            Symbol::Enum(e) => {
                let en = &program.enums[e];
                let variants: Vec<String> =
                    en.variants.iter().map(|v| format!("    {}", variant_text(program, v))).collect();
                (format!("enum {} {{\n{}\n}}", en.name, variants.join("\n")), Some(en.span))
            }
            Symbol::Variant(e, v) => {
                let en = &program.enums[e];
                (format!("{}.{}", en.name, variant_text(program, &en.variants[v])), None)
            }
            Symbol::Queue(q) => {
                let queue = &program.queues[q];
                (
                    format!(
                        "queue {} (workers {}, max_attempts {})\n{}",
                        queue.name,
                        queue.workers,
                        queue.max_attempts,
                        signature(program, queue.handler)
                    ),
                    Some(queue.span),
                )
            }
            Symbol::Module(file) => {
                let name = self.sources.files().nth(file).map_or(String::new(), |(name, _, _)| name.to_string());
                (format!("module {name}"), None)
            }
            Symbol::Table(t) => {
                let table = &program.tables[t];
                let class = &program.classes[table.class];
                (format!("table {}: {} key {}", table.name, class.name, class.fields[table.key].name), None)
            }
        };
        let mut out = code(&text);
        if let Some(doc) = doc_at.and_then(|span| self.sources.doc_comment(span.start as usize)) {
            out.push_str("\n\n");
            out.push_str(&doc);
        }
        out
    }
}

/// A function's signature as written, or a route handler's route.
pub(crate) fn signature(program: &Program, f: usize) -> String {
    let function = &program.functions[f];
    let params: Vec<String> = function
        .params
        .iter()
        .map(|&l| format!("{}: {}", function.locals[l].name, ty_name(program, &function.locals[l].ty)))
        .collect();
    let ret = if function.ret == Ty::Unit { String::new() } else { format!(" -> {}", ty_name(program, &function.ret)) };
    match program.routes.iter().find(|r| r.handler == f) {
        Some(route) => format!("route {} \"{}\" ({}){ret}", route.method.name(), route.path, params.join(", ")),
        None => {
            let fails = if function.fails { " fails" } else { "" };
            format!("fn {}({}){fails}{ret}", function.name, params.join(", "))
        }
    }
}

fn variant_text(program: &Program, v: &crate::tir::Variant) -> String {
    match &v.payload {
        Some(ty) => format!("{}({})", v.name, ty_name(program, ty)),
        None => v.name.clone(),
    }
}

fn code(text: &str) -> String {
    format!("```nagi\n{text}\n```")
}

/// A type as the language writes it.
pub fn ty_name(program: &Program, ty: &Ty) -> String {
    match ty {
        Ty::I32 => "i32".into(),
        Ty::I64 => "i64".into(),
        Ty::F64 => "f64".into(),
        Ty::Bool => "bool".into(),
        Ty::Unit => "()".into(),
        Ty::String => "String".into(),
        Ty::Time => "Time".into(),
        Ty::Duration => "Duration".into(),
        Ty::Uuid => "Uuid".into(),
        Ty::Secret => "secret String".into(),
        Ty::Array(item) => format!("[{}]", ty_name(program, item)),
        Ty::Option(inner) => format!("{}?", ty_name(program, inner)),
        Ty::Map(k, v) => format!("Map<{}, {}>", ty_name(program, k), ty_name(program, v)),
        Ty::Class(c) | Ty::Actor(c) => program.classes[*c].name.clone(),
        Ty::Enum(e) => match &program.enums[*e].result_of {
            Some(ok) => format!("Result<{}>", ty_name(program, ok)),
            None => program.enums[*e].name.clone(),
        },
        Ty::Task(inner) => format!("Task<{}>", ty_name(program, inner)),
        Ty::Param(name, _) => name.clone(),
        Ty::Fn(params, ret) => {
            let params: Vec<String> = params.iter().map(|p| ty_name(program, p)).collect();
            format!("fn({}) -> {}", params.join(", "), ty_name(program, ret))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::analyze;

    /// A generic function's body is one set of names whatever its instances: a local's
    /// references are its uses in the body, once each, and its hover shows its first instance.
    #[test]
    fn a_generic_body_is_indexed_once() {
        let text = "fn count_of<T: eq>(xs: [T], want: T) -> i64 {\n    var seen = 0\n    for x in xs {\n        if x == want {\n            seen += 1\n        }\n    }\n    return seen\n}\n\nfn main() {\n    print(count_of([1, 2, 1], 1))\n    print(count_of([\"a\"], \"b\"))\n}\n";
        let analysis = analyze("main.nagi", text, &mut crate::modules::NoImports);
        assert!(analysis.diagnostics.is_empty(), "{:?}", analysis.diagnostics);
        let at = text.find("seen += 1").expect("the use");
        let symbol = analysis.symbol_at(at).expect("a symbol").symbol;
        let found: Vec<usize> = analysis.references(symbol).iter().map(|o| o.span.start as usize).collect();
        let expected: Vec<usize> = text.match_indices("seen").map(|(i, _)| i).collect();
        assert_eq!(found, expected);
        let hover = analysis.hover(text.find("x == want").expect("the parameter") + 5).expect("a hover");
        assert!(hover.contains("i64"), "{hover}");
    }
}
