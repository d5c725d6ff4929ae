//! A service's HTTP interface as the compiler knows it, with no annotation: each route's method,
//! path, parameters (where each comes from, its type, default and whether it is required),
//! request body, result, the statuses it may answer and its doc comment; and the two
//! descriptions written from it, an OpenAPI 3.1 document ([`openapi`]) and a TypeScript client
//! ([`typescript`]).
//!
//! The statuses follow docs/http.md ("Statuses"): what the runtime answers for a request that
//! does not bind (400, 413, 415, 422), a `T?` route's `none` (404), a failed write (409, 507), a
//! request the server cannot take now (503), a trap (500), an outbound call (502, 504), and the
//! literal statuses of `fail(STATUS, …)` in the handler or in a function it calls with `try`.

pub mod openapi;
pub mod typescript;

use std::collections::BTreeSet;

use nagi_low::{HttpMethod, ParamSource, RouteDecl};

use crate::modules::Sources;
use crate::tir::{Builtin, ExprKind, FnIdx, Literal, Program, Ty};

/// One route of a service, described.
#[derive(Clone, Debug)]
pub struct Operation {
    pub method: HttpMethod,
    /// The path as declared, `{name}` for a path parameter.
    pub path: String,
    /// The handler's name in Low (`get_users_id`), unique in the program: the operation's id.
    pub name: String,
    /// The `///` comment above the route.
    pub doc: Option<String>,
    /// The path, query and header parameters, in the handler's order.
    pub params: Vec<Parameter>,
    /// The class of the JSON request body, if the route takes one.
    pub body: Option<Ty>,
    /// The successful answer's status: 200, 201 (POST) or 204 (no result).
    pub success: u16,
    /// The result's type (the inner type of a `T?` result); `None` for a 204.
    pub result: Option<Ty>,
    /// Whether the result is `T?`, whose `none` is a 404.
    pub optional: bool,
    /// Every error status the route may answer, in order.
    pub errors: BTreeSet<u16>,
    /// The statuses of the `fail(STATUS, …)` calls the handler may reach (literals only): its
    /// own refusals, as opposed to the runtime's.
    pub fails: BTreeSet<u16>,
    /// Whether a `fail` the route may reach has a status the compiler cannot see (not a
    /// literal): the document then allows any 4xx and 5xx.
    pub other_failures: bool,
}

/// A path, query or header parameter of a route.
#[derive(Clone, Debug)]
pub struct Parameter {
    /// The handler parameter's name.
    pub name: String,
    /// The name on the wire: the parameter's name, or for a header its header name
    /// (`x_request_id` is `x-request-id`).
    pub wire_name: String,
    pub source: ParamSource,
    /// The value's type (not an option: an optional parameter is `required: false`).
    pub ty: Ty,
    pub required: bool,
    pub default: Option<Literal>,
}

/// The interface of `program`: one [`Operation`] per route, in declaration order. `sources`
/// gives the doc comments.
pub fn operations(program: &Program, sources: &Sources) -> Vec<Operation> {
    let failures = Failures::of(program);
    let may_write = crate::check::may_write(&program.functions);
    program
        .routes
        .iter()
        .map(|route| {
            let handler = &program.functions[route.handler];
            let mut params = Vec::new();
            let mut body = None;
            for &local in &handler.params {
                let local = &handler.locals[local];
                let (is_option, inner) = match &local.ty {
                    Ty::Option(inner) => (true, (**inner).clone()),
                    other => (false, other.clone()),
                };
                let is_class = matches!(local.ty, Ty::Class(_));
                let source = ParamSource::of(&route.headers, &route.path, &local.name, is_option, is_class);
                if source == ParamSource::Body {
                    body = Some(local.ty.clone());
                    continue;
                }
                let default = handler.defaults.iter().find(|(l, _)| handler.locals[*l].name == local.name);
                let wire_name = match source {
                    ParamSource::Header | ParamSource::OptionalHeader => RouteDecl::header_name(&local.name),
                    _ => local.name.clone(),
                };
                params.push(Parameter {
                    name: local.name.clone(),
                    wire_name,
                    source,
                    ty: inner,
                    required: !is_option,
                    default: default.map(|(_, literal)| literal.clone()),
                });
            }
            let (optional, result) = match &handler.ret {
                Ty::Unit => (false, None),
                Ty::Option(inner) => (true, Some((**inner).clone())),
                other => (false, Some(other.clone())),
            };
            let success = route.method.success_status(result.is_some());
            let reach = failures.reach(route.handler);
            let mut errors: BTreeSet<u16> = reach.statuses.clone();
            // A trap or a panic in any handler, and a request the server cannot take now.
            errors.extend([500, 503]);
            if !params.is_empty() || body.is_some() {
                errors.insert(400);
            }
            if body.is_some() {
                errors.extend([413, 415, 422]);
            }
            if optional {
                errors.insert(404);
            }
            if may_write[route.handler] {
                errors.extend([409, 507]);
            }
            if reach.calls_out {
                errors.extend([502, 504]);
            }
            Operation {
                method: route.method,
                path: route.path.clone(),
                name: handler.name.clone(),
                doc: sources.doc_comment(route.span.start as usize),
                params,
                body,
                success,
                result,
                optional,
                errors,
                fails: reach.statuses,
                other_failures: reach.unknown,
            }
        })
        .collect()
}

/// The doc comment of the class or enum `name`, from its declaration's span.
pub fn type_doc(sources: &Sources, span: nagi_syntax::ast::Span) -> Option<String> {
    sources.doc_comment(span.start as usize)
}

/// What failures a function may pass on: found in its body, then through the calls it makes.
#[derive(Clone, Default)]
struct Reach {
    statuses: BTreeSet<u16>,
    /// A `fail` whose status is not a literal.
    unknown: bool,
    /// An outbound call (502, 504) or an actor call (503, already always listed).
    calls_out: bool,
}

/// Each function's own failures and the functions whose failures it passes on.
struct Failures {
    own: Vec<Reach>,
    callees: Vec<Vec<FnIdx>>,
}

impl Failures {
    fn of(program: &Program) -> Failures {
        let mut own = Vec::with_capacity(program.functions.len());
        let mut callees = Vec::with_capacity(program.functions.len());
        for function in &program.functions {
            let mut reach = Reach::default();
            let mut calls = Vec::new();
            function.body.walk_statements(&mut |_, exprs| {
                for e in exprs {
                    e.walk(&mut |e| match &e.kind {
                        ExprKind::Builtin { builtin: Builtin::Fail, args } => match args.first().map(|a| &a.kind) {
                            Some(ExprKind::Int(status)) if (400..=599).contains(status) => {
                                reach.statuses.insert(*status as u16);
                            }
                            // Another literal is answered 500, which every route lists.
                            Some(ExprKind::Int(_)) => {}
                            _ => reach.unknown = true,
                        },
                        ExprKind::Fetch(_) => reach.calls_out = true,
                        // A call under `try?` passes on nothing, but which calls are under one
                        // is not worth tracking for a description: listing a status a route
                        // cannot answer costs a client nothing.
                        ExprKind::Call { func, .. } => calls.push(*func),
                        _ => {}
                    });
                }
            });
            own.push(reach);
            callees.push(calls);
        }
        Failures { own, callees }
    }

    /// What `function` may pass on, through every function it reaches.
    fn reach(&self, function: FnIdx) -> Reach {
        let mut seen = vec![false; self.own.len()];
        let mut stack = vec![function];
        let mut reach = Reach::default();
        while let Some(f) = stack.pop() {
            if std::mem::replace(&mut seen[f], true) {
                continue;
            }
            reach.statuses.extend(self.own[f].statuses.iter().copied());
            reach.unknown |= self.own[f].unknown;
            reach.calls_out |= self.own[f].calls_out;
            stack.extend(self.callees[f].iter().copied().filter(|&c| !seen[c]));
        }
        reach
    }
}

/// The text of a `Literal` default as JSON.
pub(crate) fn literal_json(literal: &Literal) -> serde_json::Value {
    match literal {
        Literal::I32(v) => (*v).into(),
        Literal::I64(v) => (*v).into(),
        Literal::F64(v) => serde_json::Number::from_f64(*v).map_or(serde_json::Value::Null, serde_json::Value::Number),
        Literal::Bool(v) => (*v).into(),
        Literal::Str(v) => v.clone().into(),
    }
}

/// Whether the program has anything to describe: a service with routes.
pub fn has_routes(program: &Program) -> bool {
    !program.routes.is_empty()
}
