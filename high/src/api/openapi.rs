//! The OpenAPI 3.1 document of a service (`nagic openapi`, and what a compiled service serves
//! with `--openapi-route`): its routes as operations, their types as JSON Schema 2020-12 in
//! `components/schemas`, and the runtime's error answers (docs/http.md, "API description").
//!
//! The schemas say exactly what the runtime's binding rules take and what its answers hold:
//! a class is an object with `additionalProperties: false` whose non-option fields are
//! required (a missing option field is `none`), an option is its type or `null`, an enum is
//! serde's externally tagged form, and integers carry their range (JSON Schema's `integer`, so
//! `30.0` is 30, as the runtime reads it). An `authorization` header parameter is the security
//! scheme `authorization` (OpenAPI ignores a header parameter of that name).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::{Operation, Parameter, literal_json};
use crate::modules::Sources;
use crate::tir::{Program, Ty};
use nagi_low::ParamSource;

/// The security scheme of an `authorization` header parameter.
const AUTHORIZATION: &str = "authorization";

/// The schema name of the runtime's error answer, `{"error", "detail"}`: a class of the main
/// file has no `.` in its name, so only a class `Error` of a module file `nagi.nagi` could
/// take it (its schema would then replace this one).
pub const ERROR_SCHEMA: &str = "nagi.Error";

/// The OpenAPI 3.1 document of `program`, titled `title` (the module's name).
pub fn document(program: &Program, sources: &Sources, title: &str) -> Value {
    let operations = super::operations(program, sources);
    let mut paths = Map::new();
    let mut used = Vec::new();
    for op in &operations {
        let item = paths.entry(op.path.clone()).or_insert_with(|| json!({}));
        item[op.method.name().to_ascii_lowercase()] = operation(program, op, &mut used);
    }
    let mut schemas = Map::new();
    schemas.insert(
        ERROR_SCHEMA.to_string(),
        json!({
            "description": "The runtime's error answer (docs/http.md, \"Statuses\"): `error` is a stable \
                            name of the kind of error, `detail` is for people.",
            "type": "object",
            "properties": {"error": {"type": "string"}, "detail": {"type": "string"}},
            "required": ["error", "detail"],
            "additionalProperties": false,
        }),
    );
    let mut done = BTreeSet::new();
    while let Some(ty) = used.pop() {
        if !done.insert(type_name(program, &ty)) {
            continue;
        }
        let schema = definition(program, sources, &ty, &mut used);
        schemas.insert(type_name(program, &ty), schema);
    }
    let mut components = json!({"schemas": Value::Object(schemas)});
    if operations.iter().any(|op| op.params.iter().any(|p| p.wire_name == "authorization")) {
        components["securitySchemes"] = json!({AUTHORIZATION: {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "The route's `authorization: header String` parameter: the header's whole value.",
        }});
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": "1",
            "description": format!("The HTTP interface of the Nagi service `{title}`, written by the compiler from its routes."),
        },
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "paths": Value::Object(paths),
        "components": components,
    })
}

/// One operation object.
fn operation(program: &Program, op: &Operation, used: &mut Vec<Ty>) -> Value {
    let mut object = Map::new();
    object.insert("operationId".into(), op.name.clone().into());
    if let Some(doc) = &op.doc {
        let summary = doc.lines().next().unwrap_or_default();
        object.insert("summary".into(), summary.into());
        object.insert("description".into(), doc.clone().into());
    }
    // OpenAPI ignores a header parameter named Authorization: it is a security scheme.
    let is_authorization = |p: &&Parameter| {
        matches!(p.source, ParamSource::Header | ParamSource::OptionalHeader) && p.wire_name == "authorization"
    };
    let params: Vec<Value> =
        op.params.iter().filter(|p| !is_authorization(p)).map(|p| parameter(program, p, used)).collect();
    if !params.is_empty() {
        object.insert("parameters".into(), params.into());
    }
    if let Some(p) = op.params.iter().find(is_authorization) {
        let mut alternatives = vec![json!({AUTHORIZATION: []})];
        if !p.required {
            alternatives.push(json!({}));
        }
        object.insert("security".into(), alternatives.into());
    }
    if let Some(body) = &op.body {
        object.insert(
            "requestBody".into(),
            json!({
                "required": true,
                "content": {"application/json": {"schema": schema(program, body, used)}},
            }),
        );
    }
    let mut responses = Map::new();
    let success = match &op.result {
        Some(result) => json!({
            "description": reason(op.success),
            "content": {"application/json": {"schema": schema(program, result, used)}},
        }),
        None => json!({"description": reason(op.success)}),
    };
    responses.insert(op.success.to_string(), success);
    for status in &op.errors {
        responses.insert(status.to_string(), error_response(*status, op));
    }
    if op.other_failures {
        for range in ["4XX", "5XX"] {
            responses.insert(range.into(), error_answer("a status the handler's `fail` computes"));
        }
    }
    object.insert("responses".into(), responses.into());
    if !op.fails.is_empty() {
        // Which error answers are the handler's own refusals (`fail`), not the runtime's: a
        // specification extension, for tools that tell valid input from input the handler turns
        // down by its own rules.
        object.insert("x-nagi-fails".into(), op.fails.iter().copied().collect::<Vec<u16>>().into());
    }
    Value::Object(object)
}

/// A path, query or header parameter object.
fn parameter(program: &Program, p: &Parameter, used: &mut Vec<Ty>) -> Value {
    let place = match p.source {
        ParamSource::Path => "path",
        ParamSource::Header | ParamSource::OptionalHeader => "header",
        _ => "query",
    };
    let mut schema = schema(program, &p.ty, used);
    if p.source == ParamSource::Path && p.ty == Ty::String {
        // A path parameter is one non-empty segment.
        schema["minLength"] = 1.into();
    }
    if let Some(default) = &p.default {
        schema["default"] = literal_json(default);
    }
    json!({"name": p.wire_name, "in": place, "required": p.required && p.default.is_none(), "schema": schema})
}

/// The response object of an error status of `op`.
fn error_response(status: u16, op: &Operation) -> Value {
    let fails = op.fails.contains(&status);
    let why = match status {
        404 if op.optional && fails => "the handler found nothing (`none`), or failed with 404",
        404 if op.optional => "the handler found nothing (`none`)",
        422 if op.body.is_some() && fails => {
            "the body is JSON but does not fit the class, or the handler failed with 422"
        }
        422 if op.body.is_some() => "the body is JSON but does not fit the class",
        409 if fails => {
            "a UNIQUE or PRIMARY KEY constraint failed (nothing was written), or the handler failed with 409"
        }
        _ if fails => "the handler failed with this status (`fail`)",
        400 => {
            "a path, query or header parameter that does not parse or is missing, or a body that is not one JSON value"
        }
        409 => "a UNIQUE or PRIMARY KEY constraint failed: nothing was written",
        413 => "the body is larger than the service's --body-limit",
        415 => "the body's content type is missing or not JSON",
        500 => "a trap in the handler, or a failed database statement",
        502 => "an outbound call failed: no connection, an error answer, or an answer that does not decode",
        503 => "the server cannot take the request now (timeout, overloaded, database busy or unavailable)",
        504 => "an outbound call got no answer in time",
        507 => "the database's disk is full: nothing was written",
        _ => "the handler failed with this status",
    };
    error_answer(why)
}

/// An error answer's response object, with the error body.
fn error_answer(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{ERROR_SCHEMA}")}}},
    })
}

/// A status's reason phrase, as the response's description.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        _ => "Success",
    }
}

/// The components' name of a class or enum type.
fn type_name(program: &Program, ty: &Ty) -> String {
    match ty {
        Ty::Class(c) => program.classes[*c].name.clone(),
        Ty::Enum(e) => program.enums[*e].name.clone(),
        _ => String::new(),
    }
}

/// The schema of a value of `ty` (a reference for a class or an enum, which is then `used`).
pub(crate) fn schema(program: &Program, ty: &Ty, used: &mut Vec<Ty>) -> Value {
    match ty {
        Ty::I32 => integer("int32", i64::from(i32::MIN), i64::from(i32::MAX)),
        Ty::I64 => integer("int64", i64::MIN, i64::MAX),
        Ty::F64 => json!({"type": "number", "format": "double"}),
        Ty::Bool => json!({"type": "boolean"}),
        Ty::String | Ty::Secret => json!({"type": "string"}),
        Ty::Unit => json!({"type": "null"}),
        Ty::Time => json!({"type": "string", "format": "date-time"}),
        Ty::Duration => json!({
            "type": "string",
            "pattern": "^-?[0-9]+(d|h|m|s|ms|us)$",
            "description": "a duration: an integer and its unit (250ms, 90s, 1h)",
        }),
        Ty::Uuid => json!({"type": "string", "format": "uuid"}),
        Ty::Array(item) => json!({"type": "array", "items": schema(program, item, used)}),
        Ty::Option(inner) => {
            let inner = schema(program, inner, used);
            match inner.get("type").and_then(Value::as_str) {
                Some(t) => {
                    let mut nullable = inner.clone();
                    nullable["type"] = json!([t, "null"]);
                    nullable
                }
                None => json!({"anyOf": [inner, {"type": "null"}]}),
            }
        }
        Ty::Map(key, value) => {
            let mut map = json!({"type": "object", "additionalProperties": schema(program, value, used)});
            if **key == Ty::I64 {
                map["propertyNames"] = json!({"pattern": "^-?[0-9]+$"});
            }
            map
        }
        Ty::Class(_) | Ty::Enum(_) => {
            used.push(ty.clone());
            json!({"$ref": format!("#/components/schemas/{}", type_name(program, ty))})
        }
        // Neither can be a route's parameter, body or result (the checker refuses them).
        // A type parameter never reaches a checked program (only instances do).
        Ty::Task(_) | Ty::Actor(_) | Ty::Param(..) | Ty::Fn(..) => json!({}),
    }
}

/// An integer schema with its range.
fn integer(format: &str, min: i64, max: i64) -> Value {
    json!({"type": "integer", "format": format, "minimum": min, "maximum": max})
}

/// The definition of a class or an enum, in `components/schemas`.
fn definition(program: &Program, sources: &Sources, ty: &Ty, used: &mut Vec<Ty>) -> Value {
    let mut def = match ty {
        Ty::Class(c) => {
            let class = &program.classes[*c];
            let mut properties = Map::new();
            let mut required = Vec::new();
            for field in &class.fields {
                properties.insert(field.name.clone(), schema(program, &field.ty, used));
                if !matches!(field.ty, Ty::Option(_)) {
                    required.push(Value::from(field.name.clone()));
                }
            }
            json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
        }
        Ty::Enum(e) => {
            let en = &program.enums[*e];
            let units: Vec<Value> =
                en.variants.iter().filter(|v| v.payload.is_none()).map(|v| v.name.clone().into()).collect();
            let mut one_of = Vec::new();
            if !units.is_empty() {
                one_of.push(json!({"type": "string", "enum": units}));
            }
            for variant in &en.variants {
                // A variant without a payload may also be written `{"Low": null}`.
                let payload = match &variant.payload {
                    Some(payload) => schema(program, payload, used),
                    None => json!({"type": "null"}),
                };
                one_of.push(json!({
                    "type": "object",
                    "properties": {variant.name.clone(): payload},
                    "required": [variant.name],
                    "additionalProperties": false,
                }));
            }
            json!({"oneOf": one_of})
        }
        _ => json!({}),
    };
    let span = match ty {
        Ty::Class(c) => Some(program.classes[*c].span),
        Ty::Enum(e) => Some(program.enums[*e].span),
        _ => None,
    };
    if let Some(doc) = span.and_then(|span| super::type_doc(sources, span)) {
        def["description"] = doc.into();
    }
    def
}
