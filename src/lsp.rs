//! `nagic lsp`: the language server, over stdio (JSON-RPC with LSP's framing, read and written by
//! rust-analyzer's `lsp-server`; the protocol's types from `lsp-types`).
//!
//! It keeps the open documents' texts, analyzes a document's program ([`nagi_high::ide`]) from
//! them (a module in the context of the program that imports it) on every open and change, and
//! publishes the diagnostics of each of the program's files. Requests are answered from the last
//! analysis; when the text being typed does not check, from the last one of its program that
//! did. One thread reads messages; this one answers them in order, so a change is analyzed
//! before a request that follows it. A message that is not JSON gets a parse error and the
//! server reads on; an unknown request gets "method not found"; bad parameters "invalid params".

mod position;
mod requests;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::Notification as _;
use lsp_types::{PublishDiagnosticsParams, Url};
use nagi_high::ide::{self, Analysis};

use crate::failure::Failure;

/// The server's state: the open documents and the analyses of their programs.
pub(crate) struct Server {
    /// Open documents by path, with their current text.
    documents: HashMap<PathBuf, String>,
    /// The latest analysis of each program (by its main file) that checked: requests are
    /// answered from it, also while the text being typed does not check.
    checked: HashMap<PathBuf, Analysis>,
    /// The files each program's last diagnostics went to, so that fixed ones are cleared.
    published: HashMap<PathBuf, Vec<PathBuf>>,
    out: std::io::Stdout,
}

/// `nagic lsp`. Exit status 0 after `shutdown` then `exit`; 1 when the client leaves without.
pub(crate) fn serve() -> Result<(), Failure> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            let message = Message::read(&mut input);
            let end = matches!(message, Ok(None))
                || matches!(&message, Err(e) if e.kind() != std::io::ErrorKind::InvalidData);
            if sender.send(message).is_err() || end {
                return;
            }
        }
    });
    let mut server = Server {
        documents: HashMap::new(),
        checked: HashMap::new(),
        published: HashMap::new(),
        out: std::io::stdout(),
    };
    let mut shut_down = false;
    for message in receiver {
        match message {
            Ok(Some(Message::Request(request))) => {
                if request.method == "shutdown" {
                    shut_down = true;
                    server.send(Message::Response(Response::new_ok(request.id, serde_json::Value::Null)));
                } else {
                    let response = server.request(request);
                    server.send(Message::Response(response));
                }
            }
            Ok(Some(Message::Notification(notification))) => {
                if notification.method == "exit" {
                    return if shut_down { Ok(()) } else { Err(Failure::Input) };
                }
                server.notification(notification);
            }
            Ok(Some(Message::Response(_))) => {}
            Ok(None) => break,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => server.parse_error(&e.to_string()),
            Err(_) => break,
        }
    }
    if shut_down { Ok(()) } else { Err(Failure::Input) }
}

impl Server {
    fn send(&mut self, message: Message) {
        let mut out = self.out.lock();
        let _ = message.write(&mut out);
        let _ = out.flush();
    }

    /// JSON-RPC's answer to a message that is not JSON: a parse error, with a null id.
    fn parse_error(&mut self, why: &str) {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": ErrorCode::ParseError as i32, "message": format!("the message is not JSON-RPC: {why}")},
        })
        .to_string();
        let mut out = self.out.lock();
        let _ = write!(out, "Content-Length: {}\r\n\r\n{body}", body.len());
        let _ = out.flush();
    }

    fn request(&mut self, request: Request) -> Response {
        match requests::answer(self, &request.method, request.params) {
            Ok(result) => Response::new_ok(request.id, result),
            Err((code, message)) => Response::new_err(request.id, code as i32, message),
        }
    }

    fn notification(&mut self, notification: Notification) {
        use lsp_types::notification::{DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument};
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(params) = serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(notification.params)
                    && let Ok(path) = params.text_document.uri.to_file_path()
                {
                    self.documents.insert(path.clone(), params.text_document.text);
                    self.analyze(&path);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(params) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(notification.params)
                    && let Ok(path) = params.text_document.uri.to_file_path()
                {
                    // Full synchronization: the last change is the whole text.
                    if let Some(change) = params.content_changes.into_iter().last() {
                        self.documents.insert(path.clone(), change.text);
                        self.analyze(&path);
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(params) = serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(notification.params)
                    && let Ok(path) = params.text_document.uri.to_file_path()
                {
                    self.documents.remove(&path);
                }
            }
            _ => {}
        }
    }

    /// The text of `path`: the open document's, else the file's.
    fn text(&self, path: &Path) -> Option<String> {
        self.documents.get(path).cloned().or_else(|| std::fs::read_to_string(path).ok())
    }

    /// The main file of the program `path` belongs to: a file that imports it, or itself; an
    /// absolute path, as the documents' are.
    fn program_of(path: &Path) -> PathBuf {
        let main = crate::importers::programs_importing(path).into_iter().next().unwrap_or_else(|| path.to_path_buf());
        std::path::absolute(&main).unwrap_or(main)
    }

    /// Analyzes the program of `path` with `replace` standing for one document's text.
    fn run_analysis(&self, main: &Path, replace: Option<(&Path, &str)>) -> Option<Analysis> {
        let text = match replace {
            Some((path, text)) if path == main => text.to_string(),
            _ => self.text(main)?,
        };
        let documents = &self.documents;
        let read = |file: &Path| -> std::io::Result<Vec<u8>> {
            if let Some((path, text)) = replace
                && path == file
            {
                return Ok(text.as_bytes().to_vec());
            }
            match documents.get(file) {
                Some(text) => Ok(text.clone().into_bytes()),
                None => std::fs::read(file),
            }
        };
        let mut loader =
            nagi_high::modules::Directory { dir: main.parent().map(Path::to_path_buf).unwrap_or_default(), read };
        Some(ide::analyze(&main.display().to_string(), &text, &mut loader))
    }

    /// Analyzes the program of `path` and publishes its files' diagnostics.
    fn analyze(&mut self, path: &Path) {
        let main = Self::program_of(path);
        let Some(analysis) = self.run_analysis(&main, None) else { return };
        let mut by_file: HashMap<PathBuf, Vec<lsp_types::Diagnostic>> = HashMap::new();
        for (name, _, _) in analysis.sources.files() {
            by_file.entry(PathBuf::from(name)).or_default();
        }
        for d in &analysis.diagnostics {
            let at = d.span.map_or(0, |s| s.start as usize);
            let Some((name, base, text)) = analysis.sources.file_at(at) else { continue };
            let span = d.span.unwrap_or_default();
            let range =
                position::range(text, span.start as usize - base, (span.end as usize).max(span.start as usize) - base);
            let mut message = d.message.clone();
            for note in &d.notes {
                message.push_str(&format!("\nnote: {note}"));
            }
            by_file.entry(PathBuf::from(name)).or_default().push(lsp_types::Diagnostic {
                range,
                severity: Some(lsp_types::DiagnosticSeverity::ERROR),
                code: Some(lsp_types::NumberOrString::String(d.code.to_string())),
                source: Some("nagic".into()),
                message,
                ..Default::default()
            });
        }
        for stale in self.published.remove(&main).unwrap_or_default() {
            by_file.entry(stale).or_default();
        }
        let files: Vec<PathBuf> = by_file.keys().cloned().collect();
        for (file, diagnostics) in by_file {
            let Ok(uri) = Url::from_file_path(&file) else { continue };
            let params = PublishDiagnosticsParams { uri, diagnostics, version: None };
            let method = lsp_types::notification::PublishDiagnostics::METHOD.to_string();
            let params = serde_json::to_value(params).unwrap_or_default();
            self.send(Message::Notification(Notification { method, params }));
        }
        self.published.insert(main.clone(), files);
        if analysis.program.is_some() {
            self.checked.insert(main, analysis);
        }
    }
}
