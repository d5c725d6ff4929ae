//! Route handlers (binding path, query and body parameters, calling the Low handler, encoding
//! its answer) and the entry of a service, which hands the tables and routes to the runtime.

use std::fmt::Write;

use nagi_low::{FunctionData, Module, ParamSource, RouteDecl, Type};

use crate::names::{ident, rust_type};

/// A route's handler `name` (a queue's too, through [`nagi_low::QueueDecl::as_route`]): binds
/// path, query, header and body parameters by the Low handler's parameter names and types,
/// calls it, and encodes the result (POST answers 201, `none` answers 404).
pub fn route_handler(out: &mut String, module: &Module, name: &str, route: &RouteDecl, handler: &FunctionData) {
    let _ = writeln!(
        out,
        "    pub fn {name}(request: nagi_runtime::http::Request) -> nagi_runtime::http::HandlerFuture {{"
    );
    out.push_str("        ::std::boxed::Box::pin(async move {\n");
    let mut args = Vec::new();
    for (i, &param) in handler.params.iter().enumerate() {
        let local = &handler.locals[param];
        let ty = rust_type(module, &local.ty);
        let binding = match (route.param_source(&local.name, &local.ty), &local.ty) {
            (ParamSource::Path, _) => format!("request.path::<{ty}>({:?})", local.name),
            (ParamSource::Body, _) => format!("request.json::<{ty}>()"),
            (ParamSource::OptionalQuery, Type::Option(inner)) => {
                format!("request.query_opt::<{}>({:?})", rust_type(module, inner), local.name)
            }
            (ParamSource::Header, _) => format!("request.header::<{ty}>({:?})", RouteDecl::header_name(&local.name)),
            (ParamSource::OptionalHeader, Type::Option(inner)) => {
                format!("request.header_opt::<{}>({:?})", rust_type(module, inner), RouteDecl::header_name(&local.name))
            }
            _ => format!("request.query::<{ty}>({:?})", local.name),
        };
        let _ = writeln!(out, "            let p{i}: {ty} = {binding};");
        args.push(format!("p{i}"));
    }
    let awaited = if handler.is_async { ".await" } else { "" };
    let _ = writeln!(out, "            let result = self::{}({}){awaited};", ident(&handler.name), args.join(", "));
    let status = route.success_status(&handler.ret);
    let reply = if matches!(handler.ret, Type::Option(_)) { "reply_option" } else { "reply" };
    let _ = writeln!(out, "            nagi_runtime::http::{reply}({status}, &result)");
    out.push_str("        })\n    }\n\n");
}

/// The `CREATE TABLE IF NOT EXISTS` statements the runtime runs for `table` at start: SQLite's
/// and PostgreSQL's.
pub fn create_sql(module: &Module, table: &nagi_low::TableDecl) -> (String, String) {
    let class = &module.classes[table.class];
    let fields = || class.fields.iter().map(|f| (f.name.as_str(), &f.ty));
    let key = &class.fields[table.key as usize].name;
    (
        nagi_low::runtime::create_table_sql(&table.name, fields(), key),
        nagi_low::runtime::create_table_sql_postgres(&table.name, fields(), key),
    )
}

/// `fn main`: the service's tables (with their `CREATE TABLE` statements), routes, queues and
/// OpenAPI document, served by the runtime.
pub fn service_main(out: &mut String, module: &Module, openapi: Option<&str>) {
    crate::crate_root::main_header(out, module);
    out.push_str("    nagi_runtime::service::serve(nagi_runtime::service::Service {\n");
    let _ = writeln!(out, "        name: {:?},", module.name);
    out.push_str("        tables: ::std::vec![\n");
    for table in &module.tables {
        let (sql, postgres) = create_sql(module, table);
        let _ = writeln!(
            out,
            "            nagi_runtime::service::Table {{ name: {:?}, create_sql: {sql:?}, postgres_sql: {postgres:?} }},",
            table.name
        );
    }
    out.push_str("        ],\n        routes: ::std::vec![\n");
    for (index, route) in module.routes.iter().enumerate() {
        let _ = writeln!(
            out,
            "            nagi_runtime::http::Route {{ method: {:?}, path: {:?}, handler: nagi_runtime::http::Handler::new(program::route_{index}) }},",
            route.method.name(),
            route.path
        );
    }
    out.push_str("        ],\n        queues: ::std::vec![\n");
    for (id, queue) in module.queues.iter() {
        // The handler's name in `mod program` (`crate_root.rs`), by the queue's position.
        let index = nagi_low::entities::index(id);
        let (min, max) = queue.backoff_ms;
        let schedule = match &queue.schedule {
            Some(nagi_low::Schedule::Every { ms }) => format!("Some(nagi_runtime::schedule::Schedule::every_ms({ms}))"),
            Some(nagi_low::Schedule::Cron(expression)) => {
                format!("Some(nagi_runtime::schedule::cron_or_exit({:?}, {expression:?}))", queue.name)
            }
            None => "None".to_owned(),
        };
        let _ = writeln!(
            out,
            "            nagi_runtime::queues::Queue {{ name: {:?}, handler: nagi_runtime::http::Handler::new(program::queue_{index}), \
             workers: {}, max_attempts: {}, backoff_min_ms: {min}, backoff_max_ms: {max}, schedule: {schedule} }},",
            queue.name, queue.workers, queue.max_attempts
        );
    }
    out.push_str("        ],\n");
    match openapi {
        Some(document) => {
            let _ = writeln!(out, "        openapi: Some({document:?}),");
        }
        None => out.push_str("        openapi: None,\n"),
    }
    out.push_str("    })\n}\n");
}
