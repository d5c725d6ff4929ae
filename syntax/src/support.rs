//! Small helpers the grammar's actions call, kept out of the grammar file so they are
//! ordinary, type-checked Rust.

use crate::ast::{
    ActorDecl, ActorMember, Block, ConfigDecl, ConfigField, Expr, ExprKind, FnDecl, Ident, Item, PatternKind,
    QueueDecl, QueueMember, Span, Stmt, StmtKind, SupervisorDecl, SupervisorMember, TypeExpr, TypeExprKind,
};
use crate::lexer::LexError;

/// The span between two byte offsets.
pub fn sp(l: usize, r: usize) -> Span {
    Span::new(l, r)
}

/// Wraps the `if` of an `else if` in a block, so the AST has one shape for else branches.
pub fn else_if(nested: Stmt) -> Block {
    let span = nested.span;
    Block { stmts: vec![nested], span }
}

/// Checks that `db.NAME` names one of `allowed`.
pub fn check_db_op(op: &Ident, allowed: &[&str]) -> Result<(), LexError> {
    if allowed.contains(&op.name.as_str()) {
        return Ok(());
    }
    let list = allowed.iter().map(|a| format!("`db.{a}`")).collect::<Vec<_>>().join(", ");
    Err(LexError { message: format!("unknown database operation `db.{}`; expected {list}", op.name), span: op.span })
}

/// Checks that `method` names an outbound call: `http.get`, `http.post`, `http.put`,
/// `http.patch` or `http.delete`.
pub fn check_http_method(method: &Ident) -> Result<(), LexError> {
    if ["get", "post", "put", "patch", "delete"].contains(&method.name.as_str()) {
        return Ok(());
    }
    Err(LexError {
        message: format!(
            "unknown outbound call `http.{}`; expected `http.get`, `http.post`, `http.put`, `http.patch` or `http.delete`",
            method.name
        ),
        span: method.span,
    })
}

/// Checks that a contextual word (such as the `key` of a table declaration) is `expected`.
pub fn check_word(word: &Ident, expected: &str) -> Result<(), LexError> {
    if word.name == expected {
        return Ok(());
    }
    Err(LexError { message: format!("expected `{expected}`, found `{}`", word.name), span: word.span })
}

/// A type with type arguments: `Map<K, V>`, `Result<T>`, or an instance of a generic class
/// (`Page<User>`); the built-in ones must have their number of arguments.
pub fn generic_type(name: String, mut args: Vec<TypeExpr>, span: Span) -> Result<TypeExpr, LexError> {
    let expected = match name.as_str() {
        "Map" => 2,
        "Result" => 1,
        _ if args.is_empty() => return Err(LexError { message: format!("`{name}<>` needs a type argument"), span }),
        _ => return Ok(TypeExpr { kind: TypeExprKind::Generic(name, args), span }),
    };
    if args.len() != expected {
        let message = format!("`{name}` takes {expected} type argument{}", if expected == 1 { "" } else { "s" });
        return Err(LexError { message, span });
    }
    let kind = if expected == 2 {
        let value = args.pop().expect("two arguments");
        TypeExprKind::Map(Box::new(args.pop().expect("two arguments")), Box::new(value))
    } else {
        TypeExprKind::Result(Box::new(args.pop().expect("one argument")))
    };
    Ok(TypeExpr { kind, span })
}

/// The pattern a lone name is: `_` is the wildcard, any other name a variant.
pub fn pattern_name(name: Ident) -> PatternKind {
    if name.name == "_" {
        PatternKind::Wildcard
    } else {
        PatternKind::Variant { enum_name: None, variant: name, binding: None }
    }
}

/// The class of `module.Class { … }`, named `module.Class`; `module` must be a plain name.
pub fn qualified_class(module: Expr, class: Ident) -> Result<Ident, LexError> {
    match module.kind {
        ExprKind::Name(module) => Ok(Ident {
            name: format!("{}.{}", module.name, class.name),
            span: Span { start: module.span.start, end: class.span.end },
        }),
        _ => Err(LexError {
            message: "a class literal names a class, or a module and a class (`accounts.Account { … }`)".into(),
            span: module.span,
        }),
    }
}

/// An actor from its parsed members: the state's fields, whose initial values become the body
/// of the function that makes a fresh state (`return Name { field: value, … }`), the handlers,
/// and the `mailbox N`, which may be written once.
pub fn actor_decl(name: Ident, members: Vec<ActorMember>, span: Span) -> Result<ActorDecl, LexError> {
    let mut fields = Vec::new();
    let mut values = Vec::new();
    let mut handlers = Vec::new();
    let mut mailbox = None;
    for member in members {
        match member {
            ActorMember::State(field, value) => {
                values.push((field.name.clone(), value));
                fields.push(field);
            }
            ActorMember::Handler(f) => handlers.push(f),
            ActorMember::Mailbox(_, at) if mailbox.is_some() => {
                return Err(LexError { message: format!("actor `{}` has two `mailbox` lines", name.name), span: at });
            }
            ActorMember::Mailbox(n, at) => mailbox = Some((n, at)),
        }
    }
    let state = Expr { kind: ExprKind::ClassLit { class: name.clone(), fields: values }, span: name.span };
    let init = Block { stmts: vec![Stmt { kind: StmtKind::Return(Some(state)), span: name.span }], span: name.span };
    Ok(ActorDecl { name, fields, handlers, mailbox, init, span })
}

/// A supervisor from its parsed members: the children in order, and each rule written at most
/// once.
pub fn supervisor_decl(name: Ident, members: Vec<SupervisorMember>, span: Span) -> Result<SupervisorDecl, LexError> {
    let mut decl = SupervisorDecl { name, children: Vec::new(), strategy: None, intensity: None, backoff: None, span };
    let twice = |what: &str, at: Span, name: &Ident| LexError {
        message: format!("supervisor `{}` has two `{what}` lines", name.name),
        span: at,
    };
    for member in members {
        match member {
            SupervisorMember::Child(child, ty) => decl.children.push((child, ty)),
            SupervisorMember::Strategy(s) if decl.strategy.is_some() => {
                return Err(twice("strategy", s.span, &decl.name));
            }
            SupervisorMember::Strategy(s) => decl.strategy = Some(s),
            SupervisorMember::Intensity(_, _, at) if decl.intensity.is_some() => {
                return Err(twice("intensity", at, &decl.name));
            }
            SupervisorMember::Intensity(n, period, at) => decl.intensity = Some((n, period, at)),
            SupervisorMember::Backoff(_, _, at) if decl.backoff.is_some() => {
                return Err(twice("backoff", at, &decl.name));
            }
            SupervisorMember::Backoff(min, max, at) => decl.backoff = Some((min, max, at)),
        }
    }
    Ok(decl)
}

/// A queue from its parsed members: `workers`, `max_attempts` and `backoff` each at most once,
/// and exactly one handler, `fn run`.
/// A member of a declaration that starts with a word: a queue's or a config's.
pub enum WordMember {
    Queue(QueueMember),
    Config(ConfigField),
}

/// `queue name { … }` or `config Name { … }`, by `word`; members of the other kind are errors.
pub fn word_decl(word: Ident, name: Ident, members: Vec<WordMember>, span: Span) -> Result<Item, LexError> {
    let misplaced = |what: &str| LexError { message: format!("{what} inside `{}`", word.name), span };
    match word.name.as_str() {
        "queue" => {
            let mut queue = Vec::with_capacity(members.len());
            for member in members {
                match member {
                    WordMember::Queue(m) => queue.push(m),
                    WordMember::Config(_) => return Err(misplaced("a configuration value")),
                }
            }
            queue_decl(name, queue, span).map(Item::Queue)
        }
        "config" => {
            let mut fields = Vec::with_capacity(members.len());
            for member in members {
                match member {
                    WordMember::Config(f) => fields.push(f),
                    WordMember::Queue(_) => return Err(misplaced("a queue's rule or handler")),
                }
            }
            Ok(Item::Config(ConfigDecl { name, fields, span }))
        }
        _ => Err(LexError { message: format!("expected `queue` or `config`, found `{}`", word.name), span: word.span }),
    }
}

pub fn queue_decl(name: Ident, members: Vec<QueueMember>, span: Span) -> Result<QueueDecl, LexError> {
    let mut workers = None;
    let mut max_attempts = None;
    let mut backoff = None;
    let mut handler: Option<FnDecl> = None;
    let twice =
        |what: &str, at: Span| LexError { message: format!("queue `{}` has two `{what}` lines", name.name), span: at };
    for member in members {
        match member {
            QueueMember::Count(word, n, at) => {
                let slot = match word.name.as_str() {
                    "workers" => &mut workers,
                    "max_attempts" => &mut max_attempts,
                    other => {
                        return Err(LexError {
                            message: format!(
                                "expected `workers`, `max_attempts`, `backoff` or `fn run`, found `{other}`"
                            ),
                            span: word.span,
                        });
                    }
                };
                if slot.is_some() {
                    return Err(twice(&word.name, at));
                }
                *slot = Some((n, at));
            }
            QueueMember::Backoff(_, _, at) if backoff.is_some() => return Err(twice("backoff", at)),
            QueueMember::Backoff(min, max, at) => backoff = Some((min, max, at)),
            QueueMember::Handler(f) if handler.is_some() => {
                return Err(LexError {
                    message: format!("queue `{}` has a second function; a queue has one handler, `fn run`", name.name),
                    span: f.name.span,
                });
            }
            QueueMember::Handler(f) if f.name.name != "run" => {
                return Err(LexError {
                    message: format!("a queue's handler is called `run`, not `{}`", f.name.name),
                    span: f.name.span,
                });
            }
            QueueMember::Handler(f) => handler = Some(f),
        }
    }
    let handler = handler.ok_or_else(|| LexError {
        message: format!("queue `{}` has no handler; write `fn run(job: Job, attempt: i64) {{ … }}` in it", name.name),
        span: name.span,
    })?;
    Ok(QueueDecl { name, workers, max_attempts, backoff, handler, span })
}
