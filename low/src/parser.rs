//! The Low text parser: text → [`Module`] plus its [`SourceMap`].
//!
//! The grammar is the printer's output (see `docs/low.md`), read line by line. The parser
//! resolves names (locals, functions, classes, fields, labels) to ids and reports a name that
//! does not resolve; everything else about well-formedness is the verifier's job. Errors stop
//! the parse and give the position, what was found and what was expected; the parser never
//! panics. Nested blocks are parsed with an explicit stack, so nesting depth is bounded by
//! memory, not by the thread's stack.

mod op;

use std::collections::HashMap;

use crate::diagnostic::Diagnostic;
use crate::entities::{
    BlockId, ClassId, EnumId, FieldIndex, FuncId, LabelId, LocalId, OpId, QueueId, SupervisorId, VariantIndex, id_at,
};
use crate::lexer::{Token, TokenKind, lex};
use crate::module::{
    BlockData, ChildDecl, ChildKind, ClassData, ConfigDecl, EnumData, FORMAT_VERSION, FieldData, FunctionData,
    HttpMethod, LocalData, Module, OpData, QueueDecl, RouteDecl, Schedule, Strategy, SupervisorDecl, TableDecl,
    VariantData,
};
use crate::ops::OpKind;
use crate::source::{Anchor, FunctionSpans, SourceMap, Span};
use crate::types::Type;

use op::Opens;

/// Parses a whole Low file.
///
/// Errors: a missing or unsupported version line (`L100`), a lexical error (`L101`–`L103`), a
/// syntax error naming what was found and what was expected (`L110`), or a name that does not
/// resolve or is declared twice (`L120`–`L129`). Only the first error is reported, since what
/// follows a syntax error is rarely meaningful.
pub fn parse(text: &str) -> Result<(Module, SourceMap), Diagnostic> {
    let after_version = check_version(text)?;
    let tokens = lex(text, after_version)?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        module: Module::default(),
        source: SourceMap::default(),
        pending: Vec::new(),
        classes: HashMap::new(),
        enums: HashMap::new(),
        functions: HashMap::new(),
    };
    let type_starts = parser.declare_names()?;
    parser.declare_fields(&type_starts)?;
    parser.module()?;
    Ok((parser.module, parser.source))
}

/// Checks the first line and returns the offset after it.
fn check_version(text: &str) -> Result<usize, Diagnostic> {
    let line_end = text.find('\n').unwrap_or(text.len());
    let line = text[..line_end].trim_end_matches('\r');
    let expected = format!("nagi-low {FORMAT_VERSION}");
    let bad = |message: String| {
        Err(Diagnostic::new("L100", message)
            .at(Some(Span::new(0, line.len())))
            .label(format!("expected `{expected}`"))
            .note("every Low file starts with its format version line"))
    };
    let Some(version) = line.strip_prefix("nagi-low ") else {
        let found = if line.is_empty() { "an empty line".to_string() } else { format!("`{line}`") };
        return bad(format!("bad version line: expected `{expected}`, found {found}"));
    };
    match version.trim().parse::<u32>() {
        Ok(FORMAT_VERSION) => Ok(line_end),
        Ok(other) => bad(format!("unsupported Low format version {other}; this nagic reads version {FORMAT_VERSION}")),
        Err(_) => bad(format!("bad version line: expected `{expected}`, found `{line}`")),
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    module: Module,
    source: SourceMap,
    /// Comments read since the last anchor.
    pending: Vec<String>,
    classes: HashMap<String, ClassId>,
    enums: HashMap<String, EnumId>,
    functions: HashMap<String, FuncId>,
}

/// A class or enum declaration found by the first pass, with the token index it starts at.
#[derive(Clone, Copy)]
enum TypeStart {
    Class(usize, ClassId),
    Enum(usize, EnumId),
}

/// The function being parsed.
struct FnCtx {
    id: FuncId,
    data: FunctionData,
    spans: FunctionSpans,
    locals: HashMap<String, LocalId>,
}

/// One open block during body parsing.
struct Frame {
    block: BlockId,
    /// The label this block's operation declares, for `break`/`continue` resolution.
    label: Option<(String, LabelId)>,
    /// The `if` whose then-block this is, so that `} else {` can attach an else-block.
    if_op: Option<OpId>,
}

type PResult<T> = Result<T, Diagnostic>;

impl Parser {
    fn peek(&self) -> &TokenKind {
        &self.tokens[self.pos].kind
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    fn prev_span(&self) -> Span {
        self.tokens[self.pos.saturating_sub(1)].span
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    fn error(&self, expected: &str) -> Diagnostic {
        let found = self.peek().describe();
        Diagnostic::new("L110", format!("expected {expected}, found {found}"))
            .at(Some(self.span()))
            .label(format!("expected {expected}"))
    }

    fn expect(&mut self, kind: TokenKind, expected: &str) -> PResult<Span> {
        if *self.peek() == kind { Ok(self.bump().span) } else { Err(self.error(expected)) }
    }

    fn keyword(&mut self, word: &str) -> PResult<Span> {
        match self.peek() {
            TokenKind::Ident(s) if s == word => Ok(self.bump().span),
            _ => Err(self.error(&format!("`{word}`"))),
        }
    }

    fn ident(&mut self, expected: &str) -> PResult<(String, Span)> {
        match self.peek().clone() {
            TokenKind::Ident(s) => Ok((s, self.bump().span)),
            _ => Err(self.error(expected)),
        }
    }

    fn is_keyword(&self, word: &str) -> bool {
        matches!(self.peek(), TokenKind::Ident(s) if s == word)
    }

    /// Skips blank lines, collecting comments for the next anchor.
    fn skip_blank(&mut self) {
        loop {
            match self.peek().clone() {
                TokenKind::Newline => {
                    self.bump();
                }
                TokenKind::Comment(text) => {
                    self.pending.push(text);
                    self.bump();
                }
                _ => return,
            }
        }
    }

    /// Expects the end of the line (a trailing comment is kept for the next line's anchor).
    fn end_of_line(&mut self) -> PResult<()> {
        if let TokenKind::Comment(text) = self.peek().clone() {
            self.pending.push(text);
            self.bump();
        }
        match self.peek() {
            TokenKind::Newline => {
                self.bump();
                Ok(())
            }
            TokenKind::Eof => Ok(()),
            _ => Err(self.error("end of line")),
        }
    }

    fn anchor(&mut self, anchor: Anchor) {
        if !self.pending.is_empty() {
            let comments = std::mem::take(&mut self.pending);
            self.source.comments.entry(anchor).or_default().extend(comments);
        }
    }

    /// Allocates every class and function named at the top level, so that types and calls can
    /// refer to items declared further down.
    /// Whether token `i` starts a line (only blank lines or comments before it on its line).
    fn starts_line(&self, i: usize) -> bool {
        i == 0 || matches!(self.tokens[i - 1].kind, TokenKind::Newline | TokenKind::Comment(_))
    }

    /// Allocates every class, enum and function declared at the top level, so that types and
    /// calls can refer to items declared further down, and returns where each class and enum
    /// declaration starts. Declarations start a line (`class Name {`, `enum Name {`, `fn $f(`,
    /// `async fn $f(`). Classes and enums share one namespace.
    fn declare_names(&mut self) -> PResult<Vec<TypeStart>> {
        let mut type_starts = Vec::new();
        let mut depth = 0usize;
        for i in 0..self.tokens.len() {
            match &self.tokens[i].kind {
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => depth = depth.saturating_sub(1),
                TokenKind::Ident(kw) if depth == 0 && (kw == "class" || kw == "enum") && self.starts_line(i) => {
                    let is_class = kw == "class";
                    let Some(next) = self.tokens.get(i + 1) else { continue };
                    let TokenKind::Ident(name) = &next.kind else { continue };
                    if self.classes.contains_key(name) || self.enums.contains_key(name) {
                        return Err(duplicate("type", name, next.span));
                    }
                    if is_reserved_type_name(name) {
                        return Err(Diagnostic::new(
                            "L127",
                            format!(
                                "`{name}` is a built-in type name; {} cannot be called that",
                                if is_class { "a class" } else { "an enum" }
                            ),
                        )
                        .at(Some(next.span))
                        .label("reserved name"));
                    }
                    if is_class {
                        let id = self.module.classes.alloc(ClassData { name: name.clone(), fields: Vec::new() });
                        self.classes.insert(name.clone(), id);
                        type_starts.push(TypeStart::Class(i, id));
                    } else {
                        let id = self.module.enums.alloc(EnumData { name: name.clone(), variants: Vec::new() });
                        self.enums.insert(name.clone(), id);
                        type_starts.push(TypeStart::Enum(i, id));
                    }
                }
                TokenKind::Ident(kw) if depth == 0 && kw == "fn" => {
                    let after_async = i > 0
                        && matches!(&self.tokens[i - 1].kind, TokenKind::Ident(a) if a == "async")
                        && self.starts_line(i - 1);
                    if !(self.starts_line(i) || after_async) {
                        continue;
                    }
                    let Some(next) = self.tokens.get(i + 1) else { continue };
                    let TokenKind::Function(name) = &next.kind else { continue };
                    if self.functions.contains_key(name) {
                        return Err(duplicate("function", &format!("${name}"), next.span));
                    }
                    let id = self.module.functions.alloc(FunctionData::new(name.clone(), Type::Unit));
                    self.functions.insert(name.clone(), id);
                }
                _ => {}
            }
        }
        Ok(type_starts)
    }

    /// Reads every class's fields and every enum's variants before anything else, so that
    /// `table … key`, `new`, `field.*` and `enum.*` may name fields and variants of types
    /// written further down. The main pass reads the declarations again for their comments and
    /// spans; this pass leaves no trace but the fields and variants.
    fn declare_fields(&mut self, type_starts: &[TypeStart]) -> PResult<()> {
        for start in type_starts {
            match *start {
                TypeStart::Class(at, id) => {
                    self.pos = at;
                    self.class(id)?;
                }
                TypeStart::Enum(at, id) => {
                    self.pos = at;
                    self.enum_decl(id)?;
                }
            }
        }
        self.pos = 0;
        self.pending.clear();
        self.source = SourceMap::default();
        Ok(())
    }

    fn module(&mut self) -> PResult<()> {
        self.skip_blank();
        self.anchor(Anchor::ModuleHeader);
        self.keyword("module")?;
        let (name, _) = self.ident("a module name")?;
        self.module.name = name;
        self.end_of_line()?;
        let mut next_class = self.module.classes.iter().map(|(id, _)| id).collect::<Vec<_>>().into_iter();
        let mut next_enum = self.module.enums.iter().map(|(id, _)| id).collect::<Vec<_>>().into_iter();
        let mut next_function = self.module.functions.iter().map(|(id, _)| id).collect::<Vec<_>>().into_iter();
        loop {
            self.skip_blank();
            match self.peek().clone() {
                TokenKind::Eof => {
                    self.anchor(Anchor::End);
                    return Ok(());
                }
                TokenKind::Ident(kw) => match kw.as_str() {
                    "class" => {
                        let id = next_class.next().ok_or_else(|| self.error("`class Name {`"))?;
                        self.class(id)?;
                    }
                    "enum" => {
                        let id = next_enum.next().ok_or_else(|| self.error("`enum Name {`"))?;
                        self.enum_decl(id)?;
                    }
                    "table" => self.table()?,
                    "config" => self.config()?,
                    "route" => self.route()?,
                    "supervisor" => self.supervisor()?,
                    "queue" => self.queue()?,
                    "fn" | "async" => {
                        let id = next_function.next().ok_or_else(|| self.error("`fn $name`"))?;
                        self.function(id)?;
                    }
                    _ => {
                        return Err(self.error(
                            "`class`, `enum`, `table`, `config`, `route`, `supervisor`, `queue`, `fn` or `async fn`",
                        ));
                    }
                },
                _ => {
                    return Err(
                        self.error("`class`, `enum`, `table`, `route`, `supervisor`, `queue`, `fn` or `async fn`")
                    );
                }
            }
        }
    }

    fn class(&mut self, id: ClassId) -> PResult<()> {
        self.anchor(Anchor::Class(id));
        let start = self.keyword("class")?;
        let (_, name_span) = self.ident("a class name")?;
        self.source.classes.insert(id, start.to(name_span));
        self.expect(TokenKind::LBrace, "`{`")?;
        self.end_of_line()?;
        let mut fields: Vec<FieldData> = Vec::new();
        loop {
            self.skip_blank();
            if *self.peek() == TokenKind::RBrace {
                self.anchor(Anchor::ClassEnd(id));
                self.bump();
                self.end_of_line()?;
                break;
            }
            self.anchor(Anchor::Field(id, fields.len() as FieldIndex));
            let (name, span) = self.ident("a field name or `}`")?;
            if fields.iter().any(|f| f.name == name) {
                return Err(duplicate("field", &name, span));
            }
            self.expect(TokenKind::Colon, "`:`")?;
            let ty = self.ty()?;
            self.end_of_line()?;
            fields.push(FieldData { name, ty });
        }
        self.module.classes[id].fields = fields;
        Ok(())
    }

    /// `enum Name {` then one variant per line, `Variant` or `Variant(Type)`, then `}`.
    fn enum_decl(&mut self, id: EnumId) -> PResult<()> {
        self.anchor(Anchor::Enum(id));
        let start = self.keyword("enum")?;
        let (name, name_span) = self.ident("an enum name")?;
        self.source.enums.insert(id, start.to(name_span));
        self.expect(TokenKind::LBrace, "`{`")?;
        self.end_of_line()?;
        let mut variants: Vec<VariantData> = Vec::new();
        loop {
            self.skip_blank();
            if *self.peek() == TokenKind::RBrace {
                if variants.is_empty() {
                    return Err(Diagnostic::new("L128", format!("enum {name} has no variants"))
                        .at(Some(self.span()))
                        .label("an enum needs at least one variant"));
                }
                self.anchor(Anchor::EnumEnd(id));
                self.bump();
                self.end_of_line()?;
                break;
            }
            self.anchor(Anchor::Variant(id, variants.len() as VariantIndex));
            let (variant, span) = self.ident("a variant name or `}`")?;
            if variants.iter().any(|v| v.name == variant) {
                return Err(duplicate("variant", &variant, span));
            }
            let payload = if *self.peek() == TokenKind::LParen {
                self.bump();
                let ty = self.ty()?;
                self.expect(TokenKind::RParen, "`)`")?;
                Some(ty)
            } else {
                None
            };
            self.end_of_line()?;
            variants.push(VariantData { name: variant, payload });
        }
        self.module.enums[id].variants = variants;
        Ok(())
    }

    fn table(&mut self) -> PResult<()> {
        self.anchor(Anchor::Table(self.module.tables.len()));
        let start = self.keyword("table")?;
        let (name, _) = self.ident("a table name")?;
        self.expect(TokenKind::Colon, "`:`")?;
        let (class_name, class_span) = self.ident("a class name")?;
        let class = self.class_id(&class_name, class_span)?;
        self.keyword("key")?;
        let (key, key_span) = self.ident("the key field's name")?;
        let key = self.module.classes[class].field_index(&key).ok_or_else(|| {
            Diagnostic::new("L123", format!("class {class_name} has no field `{key}`"))
                .at(Some(key_span))
                .label("unknown field")
        })?;
        self.source.tables.push(start.to(key_span));
        self.module.tables.push(TableDecl { name, class, key });
        self.end_of_line()
    }

    /// `config NAME: TYPE env "VAR" [secret] [default "TEXT"]`.
    fn config(&mut self) -> PResult<()> {
        self.anchor(Anchor::Config(self.module.configs.len()));
        self.keyword("config")?;
        let (name, _) = self.ident("a configuration value's name")?;
        self.expect(TokenKind::Colon, "`:`")?;
        let ty = self.ty()?;
        self.keyword("env")?;
        let env = self.string("the environment variable's name")?;
        let secret = self.is_keyword("secret");
        if secret {
            self.bump();
        }
        let default = if self.is_keyword("default") {
            self.bump();
            Some(self.string("the default's text")?)
        } else {
            None
        };
        self.module.configs.push(ConfigDecl { name, ty, env, secret, default });
        self.end_of_line()
    }

    /// `supervisor Name STRATEGY intensity N per Tms backoff Ams Bms {` and its `child` lines.
    fn supervisor(&mut self) -> PResult<()> {
        // The id the supervisor gets, allocated once its children are read, for its comments and span.
        let id: SupervisorId = id_at(self.module.supervisors.len());
        self.anchor(Anchor::Supervisor(id));
        let start = self.keyword("supervisor")?;
        let (name, name_span) = self.ident("a supervisor name")?;
        self.source.supervisors.insert(id, start.to(name_span));
        let strategy = match self.ident("`one_for_one` or `one_for_all`")? {
            (s, _) if s == "one_for_one" => Strategy::OneForOne,
            (s, _) if s == "one_for_all" => Strategy::OneForAll,
            (s, span) => {
                return Err(Diagnostic::new("L110", format!("unknown strategy `{s}`"))
                    .at(Some(span))
                    .label("expected `one_for_one` or `one_for_all`"));
            }
        };
        self.keyword("intensity")?;
        let intensity = self.count("the number of restarts allowed")?;
        self.keyword("per")?;
        let period_ms = self.millis()?;
        self.keyword("backoff")?;
        let backoff_ms = (self.millis()?, self.millis()?);
        self.expect(TokenKind::LBrace, "`{`")?;
        self.end_of_line()?;
        let mut children = Vec::new();
        loop {
            self.skip_blank();
            if *self.peek() == TokenKind::RBrace {
                self.bump();
                self.end_of_line()?;
                break;
            }
            self.keyword("child")?;
            let (child, _) = self.ident("a child name")?;
            let kind = match self.peek().clone() {
                TokenKind::Function(f) => {
                    let span = self.bump().span;
                    let init = self.function_id(&f, span)?;
                    self.keyword("mailbox")?;
                    ChildKind::Actor { init, capacity: self.count("the mailbox's capacity")? }
                }
                _ => {
                    let (nested, span) = self.ident("a state function `$init` or a supervisor declared earlier")?;
                    let nested = self.module.supervisor_by_name(&nested).ok_or_else(|| {
                        Diagnostic::new("L122", format!("unknown supervisor `{nested}`"))
                            .at(Some(span))
                            .label("a nested supervisor is declared before its parent")
                    })?;
                    ChildKind::Supervisor(nested)
                }
            };
            children.push(ChildDecl { name: child, kind });
            self.end_of_line()?;
        }
        let decl = SupervisorDecl { name, strategy, intensity, period_ms, backoff_ms, children };
        self.module.supervisors.alloc(decl);
        Ok(())
    }

    /// `queue NAME $handler workers N max_attempts M backoff Ams Bms`.
    fn queue(&mut self) -> PResult<()> {
        // The id the queue gets, allocated once its line is read, for its comments and span.
        let id: QueueId = id_at(self.module.queues.len());
        self.anchor(Anchor::Queue(id));
        let start = self.keyword("queue")?;
        let (name, _) = self.ident("a queue name")?;
        let handler = match self.peek().clone() {
            TokenKind::Function(f) => {
                let span = self.bump().span;
                self.function_id(&f, span)?
            }
            _ => return Err(self.error("the handler function `$name`")),
        };
        self.keyword("workers")?;
        let workers = self.count("the number of workers")?;
        self.keyword("max_attempts")?;
        let max_attempts = self.count("the number of attempts a job gets")?;
        self.keyword("backoff")?;
        let backoff_ms = (self.millis()?, self.millis()?);
        let schedule = match self.peek().clone() {
            TokenKind::Ident(word) if word == "every" => {
                self.bump();
                Some(Schedule::Every { ms: self.millis()? })
            }
            TokenKind::Ident(word) if word == "cron" => {
                self.bump();
                match self.peek().clone() {
                    TokenKind::Str(text) => {
                        self.bump();
                        Some(Schedule::Cron(text))
                    }
                    _ => return Err(self.error("a cron expression in quotes")),
                }
            }
            _ => None,
        };
        self.source.queues.insert(id, start.to(self.prev_span()));
        self.module.queues.alloc(QueueDecl { name, handler, workers, max_attempts, backoff_ms, schedule });
        self.end_of_line()
    }

    /// A count without a type suffix, such as a mailbox's capacity.
    fn count(&mut self, what: &str) -> PResult<u32> {
        let value = match self.peek().clone() {
            TokenKind::Number(text) => text.parse::<u32>().ok(),
            _ => None,
        };
        let value = value.ok_or_else(|| self.error(what))?;
        self.bump();
        Ok(value)
    }

    /// A duration in milliseconds, written `250ms`.
    fn millis(&mut self) -> PResult<u64> {
        let value = match self.peek().clone() {
            TokenKind::Number(text) => text.strip_suffix("ms").and_then(|n| n.parse::<u64>().ok()),
            _ => None,
        };
        let value = value.ok_or_else(|| self.error("a duration in milliseconds such as `250ms`"))?;
        self.bump();
        Ok(value)
    }

    fn route(&mut self) -> PResult<()> {
        self.anchor(Anchor::Route(self.module.routes.len()));
        let start = self.keyword("route")?;
        let (method_name, method_span) = self.ident("an HTTP method")?;
        let method = HttpMethod::from_name(&method_name).ok_or_else(|| {
            Diagnostic::new("L110", format!("unknown HTTP method `{method_name}`"))
                .at(Some(method_span))
                .label("expected GET, POST, PUT, PATCH or DELETE")
        })?;
        let path = match self.peek().clone() {
            TokenKind::Str(s) => {
                self.bump();
                s
            }
            _ => return Err(self.error("a route path string")),
        };
        let handler = match self.peek().clone() {
            TokenKind::Function(name) => {
                let span = self.bump().span;
                self.function_id(&name, span)?
            }
            _ => return Err(self.error("a handler function `$name`")),
        };
        // `headers(a, b)`: the handler's parameters that come from request headers.
        let mut headers = Vec::new();
        if self.is_keyword("headers") {
            self.bump();
            self.expect(TokenKind::LParen, "`(`")?;
            loop {
                headers.push(self.ident("a parameter name")?.0);
                if *self.peek() == TokenKind::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
            self.expect(TokenKind::RParen, "`)` or `,`")?;
        }
        self.source.routes.push(start.to(self.prev_span()));
        self.module.routes.push(RouteDecl { method, path, handler, headers });
        self.end_of_line()
    }

    fn class_id(&self, name: &str, span: Span) -> PResult<ClassId> {
        self.classes.get(name).copied().ok_or_else(|| {
            Diagnostic::new("L121", format!("unknown class `{name}`")).at(Some(span)).label("no class of this name")
        })
    }

    fn function_id(&self, name: &str, span: Span) -> PResult<FuncId> {
        self.functions.get(name).copied().ok_or_else(|| {
            Diagnostic::new("L122", format!("unknown function `${name}`"))
                .at(Some(span))
                .label("no function of this name in the module")
        })
    }

    /// Parses a type. Nesting of `[…]`, `Option<…>` and `&` is iterative, so deep types
    /// cannot overflow the stack.
    fn ty(&mut self) -> PResult<Type> {
        // Wrappers read left to right, applied innermost-first once the base type is known.
        enum Wrap {
            Array,
            Option,
            Task,
            Map(Type),
            Ref(bool),
        }
        let mut wraps = Vec::new();
        let base = loop {
            match self.peek().clone() {
                TokenKind::LBracket => {
                    self.bump();
                    wraps.push(Wrap::Array);
                }
                TokenKind::Amp => {
                    self.bump();
                    let mutable = self.is_keyword("mut");
                    if mutable {
                        self.bump();
                    }
                    if self.is_keyword("str") {
                        self.bump();
                        wraps.push(Wrap::Ref(mutable));
                        break Type::String;
                    }
                    wraps.push(Wrap::Ref(mutable));
                }
                TokenKind::Ident(name) => {
                    let span = self.bump().span;
                    match name.as_str() {
                        "i32" => break Type::I32,
                        "i64" => break Type::I64,
                        "f64" => break Type::F64,
                        "bool" => break Type::Bool,
                        "unit" => break Type::Unit,
                        "String" => break Type::String,
                        "Scope" => break Type::Scope,
                        "Defer" => break Type::Defer,
                        "Time" => break Type::Time,
                        "Duration" => break Type::Duration,
                        "Uuid" => break Type::Uuid,
                        // `Task<T>` is the task type; a class may still be called `Task`, since
                        // a class name is never followed by `<`.
                        "Task" if matches!(self.peek(), TokenKind::Lt) => {
                            self.bump();
                            wraps.push(Wrap::Task);
                        }
                        // `Actor<C>` names the class of the actor's state, as `Task` it is a type
                        // only when followed by `<`.
                        "Actor" if matches!(self.peek(), TokenKind::Lt) => {
                            self.bump();
                            let span = self.span();
                            let TokenKind::Ident(class) = self.peek().clone() else {
                                return Err(self.error("the class of the actor's state"));
                            };
                            self.bump();
                            let class = self.class_id(&class, span)?;
                            self.expect(TokenKind::Gt, "`>`")?;
                            break Type::Actor(class);
                        }
                        "Option" => {
                            self.expect(TokenKind::Lt, "`<`")?;
                            wraps.push(Wrap::Option);
                        }
                        "Map" => {
                            self.expect(TokenKind::Lt, "`<`")?;
                            let key = match self.peek().clone() {
                                TokenKind::Ident(k) if k == "i64" => Type::I64,
                                TokenKind::Ident(k) if k == "String" => Type::String,
                                _ => return Err(self.error("a map key type, `i64` or `String`")),
                            };
                            self.bump();
                            self.expect(TokenKind::Comma, "`,`")?;
                            wraps.push(Wrap::Map(key));
                        }
                        _ => match self.enums.get(&name) {
                            Some(&id) => break Type::Enum(id),
                            None => break Type::Class(self.class_id(&name, span)?),
                        },
                    }
                }
                _ => return Err(self.error("a type")),
            }
        };
        let mut ty = base;
        while let Some(wrap) = wraps.pop() {
            ty = match wrap {
                Wrap::Array => {
                    self.expect(TokenKind::RBracket, "`]`")?;
                    Type::Array(Box::new(ty))
                }
                Wrap::Option => {
                    self.expect(TokenKind::Gt, "`>`")?;
                    Type::Option(Box::new(ty))
                }
                Wrap::Task => {
                    self.expect(TokenKind::Gt, "`>`")?;
                    Type::Task(Box::new(ty))
                }
                Wrap::Map(key) => {
                    self.expect(TokenKind::Gt, "`>`")?;
                    Type::Map(Box::new(key), Box::new(ty))
                }
                Wrap::Ref(mutable) => Type::reference(mutable, ty),
            };
        }
        Ok(ty)
    }

    fn function(&mut self, id: FuncId) -> PResult<()> {
        self.anchor(Anchor::Function(id));
        let is_async = self.is_keyword("async");
        if is_async {
            self.bump();
        }
        self.keyword("fn")?;
        let name_span = self.span();
        let name = match self.peek().clone() {
            TokenKind::Function(name) => {
                self.bump();
                name
            }
            _ => return Err(self.error("a function name `$name`")),
        };
        let mut cx = FnCtx {
            id,
            data: FunctionData::new(name, Type::Unit),
            spans: FunctionSpans { name: name_span, ..FunctionSpans::default() },
            locals: HashMap::new(),
        };
        cx.data.is_async = is_async;
        self.expect(TokenKind::LParen, "`(`")?;
        while *self.peek() != TokenKind::RParen {
            if !cx.data.params.is_empty() {
                self.expect(TokenKind::Comma, "`,` or `)`")?;
            }
            let local = self.declare_local(&mut cx)?;
            cx.data.params.push(local);
        }
        self.bump();
        self.expect(TokenKind::Arrow, "`->` and the result type")?;
        cx.data.ret = self.ty()?;
        self.expect(TokenKind::LBrace, "`{`")?;
        self.end_of_line()?;
        // `let` lines come first, so every local's type is known before any operation.
        loop {
            self.skip_blank();
            if !self.is_keyword("let") {
                break;
            }
            let next_local = la_arena::Idx::from_raw((cx.data.locals.len() as u32).into());
            self.anchor(Anchor::Local(id, next_local));
            self.bump();
            self.declare_local(&mut cx)?;
            self.end_of_line()?;
        }
        self.body(&mut cx)?;
        self.source.functions.insert(id, cx.spans);
        self.module.functions[id] = cx.data;
        Ok(())
    }

    /// Parses `%name: Type` and allocates the local.
    fn declare_local(&mut self, cx: &mut FnCtx) -> PResult<LocalId> {
        let (name, span) = match self.peek().clone() {
            TokenKind::Local(name) => (name, self.bump().span),
            _ => return Err(self.error("a local `%name`")),
        };
        if cx.locals.contains_key(&name) {
            return Err(duplicate("local", &format!("%{name}"), span));
        }
        self.expect(TokenKind::Colon, "`:` and a type")?;
        let ty = self.ty()?;
        let id = cx.data.locals.alloc(LocalData { name: name.clone(), ty });
        cx.locals.insert(name, id);
        cx.spans.locals.insert(id, span.to(self.prev_span()));
        Ok(id)
    }

    fn body(&mut self, cx: &mut FnCtx) -> PResult<()> {
        let mut stack = vec![Frame { block: cx.data.body, label: None, if_op: None }];
        loop {
            self.skip_blank();
            match self.peek().clone() {
                TokenKind::RBrace => {
                    let top = stack.last().expect("the stack holds at least the body until it closes");
                    self.anchor(Anchor::BlockEnd(cx.id, top.block));
                    self.bump();
                    if let Some(if_op) = top.if_op
                        && self.is_keyword("else")
                    {
                        self.bump();
                        self.expect(TokenKind::LBrace, "`{` after `else`")?;
                        self.end_of_line()?;
                        let else_block = cx.data.blocks.alloc(BlockData::default());
                        if let OpKind::If { else_block: slot, .. } = &mut cx.data.ops[if_op].kind {
                            *slot = Some(else_block);
                        }
                        let top = stack.last_mut().expect("checked above");
                        *top = Frame { block: else_block, label: None, if_op: None };
                        continue;
                    }
                    stack.pop();
                    self.end_of_line()?;
                    if stack.is_empty() {
                        return Ok(());
                    }
                }
                TokenKind::Eof => return Err(self.error("`}` closing the block")),
                _ => {
                    let start = self.span();
                    let (kind, opens) = self.op(cx, &stack)?;
                    let op = cx.data.ops.alloc(OpData { kind });
                    let parent = stack.last().expect("non-empty while parsing a body").block;
                    cx.data.blocks[parent].ops.push(op);
                    cx.spans.ops.insert(op, start.to(self.prev_span()));
                    // The comments read before this line belong to it; a trailing comment on
                    // it is read by `end_of_line` below and goes to the next line.
                    self.anchor(Anchor::Op(cx.id, op));
                    if let Some(opens) = opens {
                        // The first block (`then` for `if`) is the one the brace opens.
                        let block =
                            cx.data.ops[op].kind.blocks().next().expect("an operation that opens a brace owns a block");
                        let if_op = matches!(opens, Opens::If).then_some(op);
                        let label = match opens {
                            Opens::Labelled(name, id) => Some((name, id)),
                            Opens::If => None,
                        };
                        self.expect(TokenKind::LBrace, "`{`")?;
                        stack.push(Frame { block, label, if_op });
                    }
                    self.end_of_line()?;
                }
            }
        }
    }
}

/// Names that spell built-in types, which a class or enum may not take.
fn is_reserved_type_name(name: &str) -> bool {
    matches!(
        name,
        "i32"
            | "i64"
            | "f64"
            | "bool"
            | "unit"
            | "String"
            | "Option"
            | "Map"
            | "Scope"
            | "Defer"
            | "Time"
            | "Duration"
            | "Uuid"
            | "str"
            | "mut"
    )
}

fn duplicate(what: &str, name: &str, span: Span) -> Diagnostic {
    Diagnostic::new("L126", format!("{what} `{name}` is declared twice"))
        .at(Some(span))
        .label("a second declaration of this name")
}

#[cfg(test)]
mod tests {
    use super::op::parse_number;
    use super::*;
    use crate::printer::print_module;
    use crate::types::Constant;

    fn round_trip(text: &str) {
        let (m, src) = parse(text).unwrap_or_else(|d| panic!("{}", d.render("test.low", text)));
        assert_eq!(print_module(&m, Some(&src)), text);
        let (m2, _) = parse(&print_module(&m, None)).expect("printed text parses");
        assert_eq!(m, m2);
    }

    #[test]
    fn kernel_round_trips() {
        round_trip(
            "nagi-low 1\nmodule k\n\n// Sum of a slice.\nfn $sum(%xs: &[i64]) -> i64 {\n  let %acc: i64\n  let %x: i64\n  %acc = const 0_i64\n  for %x in %xs @each {\n    %acc = add.i64 %acc, %x\n  }\n  return %acc\n}\n",
        );
    }

    #[test]
    fn constants_keep_their_bits() {
        for text in ["NaN_f64", "-0.0_f64", "1e21_f64", "-inf_f64", "0.30000000000000004_f64", "5e-324_f64"] {
            let c = parse_number(text).unwrap();
            assert_eq!(c.to_string(), text);
        }
        assert_eq!(parse_number("-9223372036854775808_i64"), Some(Constant::I64(i64::MIN)));
        assert_eq!(parse_number("2147483648_i32"), None);
        assert_eq!(parse_number("5"), None);
    }

    #[test]
    fn bad_version_is_reported_at_line_one() {
        let err = parse("nagi-low 9\nmodule m\n").unwrap_err();
        assert_eq!(err.code, "L100");
        assert!(err.message.contains("unsupported Low format version 9"), "{}", err.message);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 5000;
        let mut text = String::from("nagi-low 1\nmodule deep\n\nfn $f() -> unit {\n");
        for _ in 0..depth {
            text.push_str("if true {\n");
        }
        for _ in 0..depth {
            text.push_str("}\n");
        }
        text.push_str("return\n}\n");
        let (m, _) = parse(&text).expect("deep nesting parses");
        let f = m.functions.values().next().unwrap();
        assert_eq!(f.ops.len(), depth + 1);
        let printed = print_module(&m, None);
        assert_eq!(parse(&printed).unwrap().0, m);
    }
}
