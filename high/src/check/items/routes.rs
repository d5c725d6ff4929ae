//! Routes as items: each route's method, path and parameters (path, query, header and body
//! parameters, defaults), the handlers' names, and duplicate routes.

use super::*;

impl<'f> Items<'f> {
    pub(super) fn collect_route(&mut self, decl: &'f ast::RouteDecl, diags: &mut Vec<Diagnostic>) {
        let idx = self.fns.len();
        let method = HttpMethod::from_name(&decl.method.name);
        if method.is_none() {
            let mut d = error(
                H220,
                decl.method.span,
                format!("unknown HTTP method `{}`; expected GET, POST, PUT, PATCH or DELETE", decl.method.name),
                "not an HTTP method",
            );
            if HttpMethod::from_name(&decl.method.name.to_ascii_uppercase()).is_some() {
                d = d.note(format!("methods are written in capitals: `{}`", decl.method.name.to_ascii_uppercase()));
            }
            diags.push(d);
        }
        let path_params = parse_path(&decl.path, diags);
        // Route parameters are owned: the runtime decodes them and hands them over.
        let params = self.collect_params(&decl.params, diags, |_, _| ParamMode::Owned);
        let mut defaults = Vec::new();
        let mut headers = Vec::new();
        for (pidx, (param, info)) in decl.params.iter().zip(&params).enumerate() {
            if param.inout {
                diags.push(
                    error(H225, param.span, "route parameters cannot be `inout`", "`inout` not allowed here")
                        .note("a route's parameters come from the request; copy one into a `var` to change it"),
                );
            }
            if let Some(source) = &param.source {
                if self.check_header_param(param, source, info, path_params.contains(&param.name.name), diags) {
                    headers.push(param.name.name.clone());
                }
                continue;
            }
            let is_path = path_params.contains(&param.name.name);
            if is_path {
                self.check_request_scalar(info, "path", diags);
                if let Some(default) = &param.default {
                    diags.push(error(
                        H225,
                        default.span,
                        "a path parameter cannot have a default",
                        "every request names this parameter in its path",
                    ));
                }
            } else if param.name.name == "body" {
                if !matches!(method, Some(HttpMethod::Post | HttpMethod::Put | HttpMethod::Patch) | None) {
                    diags.push(
                        error(
                            H224,
                            param.name.span,
                            format!("a {} route has no request body", decl.method.name),
                            "`body` not allowed here",
                        )
                        .note("only POST, PUT and PATCH routes take a `body` parameter"),
                    );
                }
                if let Some(ty) = &info.ty
                    && !matches!(ty, Ty::Class(_))
                {
                    diags.push(
                        error(
                            H223,
                            param.ty.span,
                            format!("the request `body` must be a class, found `{}`", self.ty_name(ty)),
                            "not a class",
                        )
                        .note("the body is decoded from JSON into a class"),
                    );
                }
                if let Some(default) = &param.default {
                    diags.push(error(
                        H225,
                        default.span,
                        "the request `body` cannot have a default",
                        "default not allowed",
                    ));
                }
            } else {
                self.check_request_scalar(info, "query", diags);
                if let Some(default) = &param.default
                    && let Some(ty) = &info.ty
                {
                    match default_literal(default, ty) {
                        Ok(literal) => defaults.push((pidx, literal)),
                        Err((code, message)) => diags.push(error(code, default.span, message, "invalid default")),
                    }
                }
            }
        }
        for name in &path_params {
            if !decl.params.iter().any(|p| p.name.name == *name) {
                diags.push(
                    error(
                        H222,
                        decl.path.span,
                        format!("path parameter `{{{name}}}` has no matching parameter"),
                        format!("`{{{name}}}` is named here"),
                    )
                    .note(format!("add it to the parameter list, for example `{name}: i64`")),
                );
            }
        }
        let ret = decl.ret.as_ref().map_or(Some(Ty::Unit), |t| self.resolve_ty(t, diags));
        if let Some(method) = method {
            self.routes.push(tir::Route {
                method,
                path: decl.path.value.clone(),
                handler: idx,
                headers,
                span: decl.span,
            });
        }
        self.fns.push(FnInfo {
            name: String::new(),
            params,
            ret,
            defaults,
            body: FnBody::Block(&decl.body),
            span: decl.span,
            route: Some((decl.method.name.clone(), decl.path.value.clone())),
            fails: true,
            test: None,
            queue: None,
        });
    }

    /// A route parameter with a source (`token: header String`): the source must be `header`,
    /// on a parameter that is neither a path parameter nor the `body`, without a default
    /// (`inout` is checked for every route parameter), of a scalar type, `String`, or an option of one (an optional header). True
    /// when it is a header parameter, even if its type was reported.
    fn check_header_param(
        &self,
        param: &ast::Param,
        source: &Ident,
        info: &ParamInfo,
        is_path: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> bool {
        if source.name != "header" {
            diags.push(
                error(H227, source.span, format!("unknown parameter source `{}`", source.name), "not a source")
                    .note("a route parameter comes from the path, the query, the `body`, or a `header`"),
            );
            return false;
        }
        let clash = if is_path {
            Some("it is named in the path")
        } else if param.name.name == "body" {
            Some("`body` is the request body")
        } else {
            None
        };
        if let Some(why) = clash {
            diags.push(error(
                H227,
                source.span,
                format!("`{}` cannot be a header parameter: {why}", param.name.name),
                "not a header here",
            ));
            return false;
        }
        if let Some(default) = &param.default {
            diags.push(
                error(H225, default.span, "a header parameter cannot have a default", "default not allowed")
                    .note("declare it optional, `name: header T?`, and choose a value when it is `none`"),
            );
        }
        if let Some(ty) = &info.ty {
            let base = match ty {
                Ty::Option(inner) => &**inner,
                other => other,
            };
            if !is_param_scalar(base) {
                diags.push(error(
                    H310,
                    param.ty.span,
                    format!(
                        "header parameter `{}` has type `{}`; header parameters must be i32, i64, f64, bool, \
                         String, Time, Duration or Uuid, or an option of one",
                        param.name.name,
                        self.ty_name(ty)
                    ),
                    "not allowed here",
                ));
            }
        }
        true
    }

    /// Path and query parameters arrive as text and are parsed into a scalar or kept as a
    /// `String`; a query parameter may be an option of one (absent: `none`).
    fn check_request_scalar(&self, info: &ParamInfo, kind: &str, diags: &mut Vec<Diagnostic>) {
        let Some(ty) = &info.ty else { return };
        let scalar = is_param_scalar;
        // A query parameter may also be optional (`q: String?`): `none` when it is absent.
        if scalar(ty) || (kind == "query" && matches!(ty, Ty::Option(inner) if scalar(inner))) {
            return;
        }
        let mut d = error(
            H310,
            info.name.span,
            format!(
                "{kind} parameter `{}` has type `{}`; {kind} parameters must be i32, i64, f64, bool, String, Time, \
                 Duration or Uuid{}",
                info.name.name,
                self.ty_name(ty),
                if kind == "query" { ", or an option of one" } else { "" }
            ),
            "not allowed here",
        );
        if matches!(ty, Ty::Class(_)) {
            d = d.note("only a parameter named `body` receives the JSON request body");
        }
        diags.push(d);
    }

    /// Route handlers are named after method and path; a clash with a function (or another
    /// handler) gets a numeric suffix.
    pub(super) fn name_handlers(&mut self) {
        let mut used: HashSet<String> = builtin_fn_names().map(str::to_string).collect();
        used.extend(self.fns.iter().filter(|f| f.route.is_none()).map(|f| f.name.clone()));
        for info in &mut self.fns {
            let Some((method, path)) = &info.route else { continue };
            let base = handler_base(method, path);
            let mut name = base.clone();
            let mut n = 2;
            while used.contains(&name) {
                name = format!("{base}_{n}");
                n += 1;
            }
            used.insert(name.clone());
            info.name = name;
        }
    }

    /// Two routes with the same method and the same path shape (parameter names aside) would
    /// answer the same requests.
    pub(super) fn check_duplicate_routes(&self, file: &SourceFile, diags: &mut Vec<Diagnostic>) {
        let mut seen: HashMap<(String, String), String> = HashMap::new();
        for item in &file.items {
            let Item::Route(route) = item else { continue };
            let shape = normalize_path(&route.path.value);
            let key = (route.method.name.clone(), shape);
            match seen.get(&key) {
                Some(first) => {
                    let mut d = error(
                        H212,
                        route.path.span,
                        format!("route `{} {}` is declared twice", route.method.name, route.path.value),
                        "declared again here",
                    );
                    if *first != route.path.value {
                        d = d.note(format!("`{first}` matches the same requests; parameter names do not matter"));
                    }
                    diags.push(d);
                }
                None => {
                    seen.insert(key, route.path.value.clone());
                }
            }
        }
    }
}

/// Checks a route path and returns its `{name}` parameters.
fn parse_path(path: &ast::StrLit, diags: &mut Vec<Diagnostic>) -> Vec<String> {
    let text = &path.value;
    let mut bad = |message: String| diags.push(error(H221, path.span, message, "invalid path"));
    let mut names = Vec::new();
    if !text.starts_with('/') {
        bad(format!("the route path `{text}` must start with `/`"));
        return names;
    }
    if let Some(c) = text.chars().find(|c| c.is_whitespace() || matches!(c, '?' | '#' | '%')) {
        bad(format!("the route path `{text}` contains `{}`, which is not allowed in a path", c.escape_default()));
        return names;
    }
    let segments: Vec<&str> = text[1..].split('/').collect();
    for (i, segment) in segments.iter().enumerate() {
        // A trailing `/` is allowed; an empty segment in the middle (`//`) is not.
        if segment.is_empty() {
            if i + 1 < segments.len() {
                bad(format!("the route path `{text}` has an empty segment (`//`)"));
            }
            continue;
        }
        if !segment.contains(['{', '}']) {
            continue;
        }
        let inner = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}'));
        match inner {
            Some(name) if is_ident(name) => {
                if names.iter().any(|n| n == name) {
                    bad(format!("path parameter `{{{name}}}` appears twice"));
                } else {
                    names.push(name.to_string());
                }
            }
            _ => bad(format!(
                "malformed path segment `{segment}`; a parameter is a whole segment `{{name}}` with a name of letters, digits and `_`"
            )),
        }
    }
    names
}

/// Whether `s` is a Nagi name.
fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `/users/{id}` → `/users/{}`.
fn normalize_path(path: &str) -> String {
    path.split('/').map(|s| if s.starts_with('{') && s.ends_with('}') { "{}" } else { s }).collect::<Vec<_>>().join("/")
}

/// `GET /users/{id}` → `get_users_id`; `GET /` → `get_root`.
pub(super) fn handler_base(method: &str, path: &str) -> String {
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.chars()
                .filter(|c| !matches!(c, '{' | '}'))
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect()
        })
        .collect();
    let rest = if segments.is_empty() { "root".to_string() } else { segments.join("_") };
    format!("{}_{rest}", method.to_ascii_lowercase())
}

/// A route default: an integer, float or bool literal (with an optional `-`) of the
/// parameter's type.
fn default_literal(e: &ast::Expr, ty: &Ty) -> Result<Literal, (&'static str, String)> {
    let (negative, inner) = match &e.kind {
        ast::ExprKind::Unary { op: ast::UnaryOp::Neg, operand } => (true, &operand.kind),
        kind => (false, kind),
    };
    // Say what the parameter's type needs, rather than listing every kind of literal.
    let wrong = || {
        let message = match ty {
            Ty::I32 => "a default for an `i32` parameter must be an integer literal, such as `10`",
            Ty::I64 => "a default for an `i64` parameter must be an integer literal, such as `10`",
            Ty::F64 => "a default for an `f64` parameter must be a float literal, such as `1.0`",
            Ty::Bool => "a default for a `bool` parameter must be `true` or `false`",
            Ty::String => "a default for a `String` parameter must be a string literal, such as `\"new\"`",
            _ => "a default must be an integer, float, bool or string literal of the parameter's type",
        };
        (H225, message.to_string())
    };
    match (inner, ty) {
        (ast::ExprKind::Int(v), Ty::I32 | Ty::I64) => {
            let value = if negative { -i128::from(*v) } else { i128::from(*v) };
            let fits = match ty {
                Ty::I32 => i32::try_from(value).map(Literal::I32).ok(),
                _ => i64::try_from(value).map(Literal::I64).ok(),
            };
            let name = if *ty == Ty::I32 { "i32" } else { "i64" };
            fits.ok_or((H303, format!("the integer literal `{value}` does not fit in `{name}`")))
        }
        (ast::ExprKind::Float(f), Ty::F64) => Ok(Literal::F64(if negative { -f } else { *f })),
        (ast::ExprKind::Int(v), Ty::F64) => {
            Err((H225, format!("a default for an `f64` parameter must be a float literal, such as `{v}.0`")))
        }
        (ast::ExprKind::Bool(b), Ty::Bool) if !negative => Ok(Literal::Bool(*b)),
        (ast::ExprKind::Str(text), Ty::String) if !negative => Ok(Literal::Str(text.clone())),
        _ => Err(wrong()),
    }
}

/// Whether a path, query or header parameter may have type `ty`: a scalar the request's text is
/// parsed into (a `Time` as RFC 3339, a `Duration` as its literal, a `Uuid` in any form), or a
/// `String` kept as it is.
fn is_param_scalar(ty: &Ty) -> bool {
    matches!(ty, Ty::I32 | Ty::I64 | Ty::F64 | Ty::Bool | Ty::String | Ty::Time | Ty::Duration | Ty::Uuid)
}
