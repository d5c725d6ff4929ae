//! The language server's answers to requests, each from the analysis of the document's program
//! ([`nagi_high::ide`]), converted to the protocol's types.

use std::collections::HashMap;
use std::path::PathBuf;

use lsp_server::ErrorCode;
use lsp_types::request::{
    Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest, Initialize, References, Rename,
    Request as _,
};
use lsp_types::*;
use nagi_high::ide::{self, Analysis, Symbol, complete, symbols};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Server;
use super::position::{offset, range};

/// A request's failure: its JSON-RPC error code and message.
type Failed = (ErrorCode, String);

fn params<P: DeserializeOwned>(value: Value) -> Result<P, Failed> {
    serde_json::from_value(value).map_err(|e| (ErrorCode::InvalidParams, format!("invalid parameters: {e}")))
}

fn to_value<T: serde::Serialize>(value: T) -> Result<Value, Failed> {
    serde_json::to_value(value).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

fn path_of(uri: &Url) -> Result<PathBuf, Failed> {
    uri.to_file_path().map_err(|()| (ErrorCode::InvalidParams, format!("{uri} is not a file")))
}

/// The answer to the request `method`.
pub(super) fn answer(server: &mut Server, method: &str, value: Value) -> Result<Value, Failed> {
    match method {
        Initialize::METHOD => to_value(initialize()),
        HoverRequest::METHOD => {
            let p: HoverParams = params(value)?;
            let at = At::of(server, &p.text_document_position_params)?;
            let hover = at.analysis(server).and_then(|a| a.hover(at.global(a)?)).map(|text| Hover {
                contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: text }),
                range: None,
            });
            to_value(hover)
        }
        GotoDefinition::METHOD => {
            let p: GotoDefinitionParams = params(value)?;
            let at = At::of(server, &p.text_document_position_params)?;
            let found = at.analysis(server).and_then(|a| {
                let symbol = a.symbol_at(at.global(a)?)?.symbol;
                location(a, a.definition(symbol)?)
            });
            to_value(found.map(GotoDefinitionResponse::Scalar))
        }
        References::METHOD => {
            let p: ReferenceParams = params(value)?;
            let at = At::of(server, &p.text_document_position)?;
            let found: Vec<Location> = at
                .analysis(server)
                .and_then(|a| {
                    let symbol = a.symbol_at(at.global(a)?)?.symbol;
                    let all = a.references(symbol);
                    let keep = |o: &&ide::Occurrence| p.context.include_declaration || !o.definition;
                    Some(all.iter().filter(keep).filter_map(|o| location(a, o.span)).collect())
                })
                .unwrap_or_default();
            to_value(found)
        }
        Rename::METHOD => {
            let p: RenameParams = params(value)?;
            let at = At::of(server, &p.text_document_position)?;
            to_value(rename(server, &at, &p.new_name)?)
        }
        Completion::METHOD => {
            let p: CompletionParams = params(value)?;
            let at = At::of(server, &p.text_document_position)?;
            to_value(CompletionResponse::Array(completions(server, &at)))
        }
        DocumentSymbolRequest::METHOD => {
            let p: DocumentSymbolParams = params(value)?;
            let path = path_of(&p.text_document.uri)?;
            let text = server.text(&path).unwrap_or_default();
            let outline: Vec<DocumentSymbol> =
                symbols::outline(&text).iter().map(|o| document_symbol(&text, o)).collect();
            to_value(DocumentSymbolResponse::Nested(outline))
        }
        Formatting::METHOD => {
            let p: DocumentFormattingParams = params(value)?;
            let path = path_of(&p.text_document.uri)?;
            let text = server.text(&path).unwrap_or_default();
            let edits = match nagi_syntax::format::format(&text) {
                Ok(formatted) if formatted != text => {
                    vec![TextEdit { range: range(&text, 0, text.len()), new_text: formatted }]
                }
                // Unchanged, or it does not parse: nothing to do (the diagnostic says why).
                _ => Vec::new(),
            };
            to_value(edits)
        }
        _ => Err((ErrorCode::MethodNotFound, format!("nagic lsp does not answer `{method}`"))),
    }
}

fn initialize() -> InitializeResult {
    InitializeResult {
        capabilities: ServerCapabilities {
            text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            definition_provider: Some(OneOf::Left(true)),
            references_provider: Some(OneOf::Left(true)),
            rename_provider: Some(OneOf::Left(true)),
            document_symbol_provider: Some(OneOf::Left(true)),
            document_formatting_provider: Some(OneOf::Left(true)),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some(vec![".".into()]),
                ..Default::default()
            }),
            ..Default::default()
        },
        server_info: Some(ServerInfo { name: "nagic lsp".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
    }
}

/// A request's document and position: the document's path and text, the byte offset, and its
/// program's main file.
struct At {
    path: PathBuf,
    text: String,
    offset: usize,
    main: PathBuf,
}

impl At {
    fn of(server: &Server, p: &TextDocumentPositionParams) -> Result<At, Failed> {
        let path = path_of(&p.text_document.uri)?;
        let text =
            server.text(&path).ok_or((ErrorCode::InvalidParams, format!("{} cannot be read", path.display())))?;
        let offset = offset(&text, p.position);
        let main = Server::program_of(&path);
        Ok(At { path, text, offset, main })
    }

    /// The last analysis of the program that checked.
    fn analysis<'s>(&self, server: &'s Server) -> Option<&'s Analysis> {
        server.checked.get(&self.main)
    }

    /// The position as an offset into `analysis`'s span space.
    fn global(&self, analysis: &Analysis) -> Option<usize> {
        Some(analysis.sources.base_of(&self.path.display().to_string())? + self.offset)
    }
}

/// The location of the span `span` of `analysis`'s span space.
fn location(analysis: &Analysis, span: nagi_syntax::ast::Span) -> Option<Location> {
    let (name, base, text) = analysis.sources.file_at(span.start as usize)?;
    let uri = Url::from_file_path(name).ok()?;
    Some(Location { uri, range: range(text, span.start as usize - base, span.end as usize - base) })
}

/// A rename of a local or a function: every occurrence's name (the last segment of a qualified
/// one, `accounts.find` → `find`) replaced, in every file of the program.
fn rename(server: &Server, at: &At, new_name: &str) -> Result<WorkspaceEdit, Failed> {
    let valid = new_name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && new_name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !valid {
        return Err((ErrorCode::InvalidParams, format!("`{new_name}` is not a name")));
    }
    let not_here = || (ErrorCode::InvalidParams, "no local or function is named here".to_string());
    let analysis = at.analysis(server).ok_or_else(not_here)?;
    // Edits are placed by the analysis's spans: its texts must be the documents' now.
    let current = analysis
        .sources
        .files()
        .all(|(name, _, text)| server.text(std::path::Path::new(name)).as_deref() == Some(text));
    if !current {
        return Err((
            ErrorCode::ContentModified,
            "the program does not check as it is now; fix it, then rename".into(),
        ));
    }
    let occurrence = analysis.symbol_at(at.global(analysis).ok_or_else(not_here)?).ok_or_else(not_here)?;
    if !matches!(occurrence.symbol, Symbol::Local(..) | Symbol::Function(_)) {
        return Err((ErrorCode::InvalidParams, "only locals and functions can be renamed".into()));
    }
    let mut changes: HashMap<Url, Vec<TextEdit>> = HashMap::new();
    for o in analysis.references(occurrence.symbol) {
        let Some((name, base, text)) = analysis.sources.file_at(o.span.start as usize) else {
            continue;
        };
        let (start, end) = (o.span.start as usize - base, o.span.end as usize - base);
        // A qualified reference: only its last segment is the name.
        let start = text[start..end].rfind('.').map_or(start, |dot| start + dot + 1);
        let Ok(uri) = Url::from_file_path(name) else { continue };
        changes
            .entry(uri)
            .or_default()
            .push(TextEdit { range: range(text, start, end), new_text: new_name.to_string() });
    }
    Ok(WorkspaceEdit { changes: Some(changes), ..Default::default() })
}

/// Completions at the request's position: from an analysis of the text with the unfinished
/// member access (or name) taken out when that checks, else from the last that did.
fn completions(server: &Server, at: &At) -> Vec<CompletionItem> {
    let (chain, word) = complete::context(&at.text, at.offset);
    let cut_start = at.offset - word.len() - if chain.is_some() { 1 } else { 0 };
    let mut repaired = at.text.clone();
    repaired.replace_range(cut_start..at.offset, "");
    let fresh = server.run_analysis(&at.main, Some((at.path.as_path(), repaired.as_str())));
    let analysis = match &fresh {
        Some(a) if a.program.is_some() => Some(a),
        _ => at.analysis(server),
    };
    let Some(analysis) = analysis else { return Vec::new() };
    let Some(base) = analysis.sources.base_of(&at.path.display().to_string()) else { return Vec::new() };
    complete::completions(analysis, base + cut_start, chain.as_deref())
        .into_iter()
        .filter(|c| c.label.starts_with(&word))
        .map(|c| CompletionItem {
            label: c.label,
            kind: Some(match c.kind {
                complete::Kind::Field => CompletionItemKind::FIELD,
                complete::Kind::Method => CompletionItemKind::METHOD,
                complete::Kind::Function => CompletionItemKind::FUNCTION,
                complete::Kind::Class => CompletionItemKind::CLASS,
                complete::Kind::Enum => CompletionItemKind::ENUM,
                complete::Kind::Variant => CompletionItemKind::ENUM_MEMBER,
                complete::Kind::Local => CompletionItemKind::VARIABLE,
                complete::Kind::Keyword => CompletionItemKind::KEYWORD,
                complete::Kind::Module => CompletionItemKind::MODULE,
            }),
            detail: c.detail,
            ..Default::default()
        })
        .collect()
}

#[allow(deprecated, reason = "DocumentSymbol's `deprecated` field must be written, as None")]
fn document_symbol(text: &str, o: &symbols::Outline) -> DocumentSymbol {
    let kind = match o.kind {
        symbols::Kind::Class | symbols::Kind::Actor | symbols::Kind::Config => SymbolKind::CLASS,
        symbols::Kind::Enum => SymbolKind::ENUM,
        symbols::Kind::Function | symbols::Kind::Schedule => SymbolKind::FUNCTION,
        symbols::Kind::Route => SymbolKind::METHOD,
        symbols::Kind::Table | symbols::Kind::Queue | symbols::Kind::Supervisor => SymbolKind::OBJECT,
        symbols::Kind::Test => SymbolKind::EVENT,
        symbols::Kind::Field => SymbolKind::FIELD,
        symbols::Kind::Variant => SymbolKind::ENUM_MEMBER,
    };
    let children: Vec<DocumentSymbol> = o.children.iter().map(|c| document_symbol(text, c)).collect();
    DocumentSymbol {
        name: o.name.clone(),
        detail: None,
        kind,
        tags: None,
        deprecated: None,
        range: range(text, o.span.start as usize, o.span.end as usize),
        selection_range: range(text, o.name_span.start as usize, o.name_span.end as usize),
        children: (!children.is_empty()).then_some(children),
    }
}
