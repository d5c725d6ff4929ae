//! The OTLP export request (`opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`)
//! in protobuf, written straight from the spans' raw parts.
//!
//! Why not `opentelemetry-proto`'s generated messages and `prost`: building them costs an
//! allocation per attribute key and value, and `prost` recomputes every nested message's length
//! at each level it is nested in. Measured with callgrind on the users service (bench/README.md,
//! "Traces' cost"), that was about 15,000 instructions per span on the exporter thread, as much
//! as the request itself, on a machine where that thread shares two cores with the server. This
//! writer produces the same bytes for the few fields Nagi sends at about a tenth of that, with
//! no allocation once its buffers have grown; the tests decode what it writes with
//! `opentelemetry-proto`'s own types, so the two cannot drift apart.
//!
//! Field numbers are those of opentelemetry-proto v1 (`trace.proto`, `common.proto`,
//! `resource.proto`, `trace_service.proto`).

/// Protobuf's wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LENGTH_DELIMITED: u8 = 2;
const FIXED32: u8 = 5;

// ExportTraceServiceRequest
const REQUEST_RESOURCE_SPANS: u32 = 1;
// ResourceSpans
const RESOURCE_SPANS_RESOURCE: u32 = 1;
const RESOURCE_SPANS_SCOPE_SPANS: u32 = 2;
// Resource
const RESOURCE_ATTRIBUTES: u32 = 1;
// ScopeSpans
const SCOPE_SPANS_SCOPE: u32 = 1;
const SCOPE_SPANS_SPANS: u32 = 2;
// InstrumentationScope
const SCOPE_NAME: u32 = 1;
// Span
const SPAN_TRACE_ID: u32 = 1;
const SPAN_SPAN_ID: u32 = 2;
const SPAN_PARENT_SPAN_ID: u32 = 4;
const SPAN_NAME: u32 = 5;
const SPAN_KIND: u32 = 6;
const SPAN_START: u32 = 7;
const SPAN_END: u32 = 8;
const SPAN_ATTRIBUTES: u32 = 9;
const SPAN_STATUS: u32 = 15;
const SPAN_FLAGS: u32 = 16;
// Status
const STATUS_MESSAGE: u32 = 2;
const STATUS_CODE: u32 = 3;
// KeyValue and AnyValue
const KEY_VALUE_KEY: u32 = 1;
const KEY_VALUE_VALUE: u32 = 2;
const ANY_VALUE_STRING: u32 = 1;
const ANY_VALUE_INT: u32 = 3;

/// `Status.code`'s `STATUS_CODE_ERROR`.
pub(super) const STATUS_ERROR: u64 = 2;

#[inline(always)]
fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[inline(always)]
fn varint_len(value: u64) -> usize {
    // One byte per started group of 7 bits, at least one.
    ((64 - (value | 1).leading_zeros() as usize) + 6) / 7
}

#[inline(always)]
fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field) << 3 | u64::from(wire));
}

/// A length-delimited field: bytes, a string or an encoded message.
#[inline(always)]
fn delimited(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, LENGTH_DELIMITED);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// The length of a length-delimited field of `len` bytes whose field number is below 16.
fn delimited_len(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

/// A span's attributes as they are written: `KeyValue` messages, each a repeated field 9.
pub(super) struct Attributes<'a>(&'a mut Vec<u8>);

impl Attributes<'_> {
    /// A string attribute.
    #[inline(always)]
    pub(super) fn text(&mut self, name: &str, value: &str) {
        self.utf8(name, value.as_bytes());
    }

    /// A string attribute whose value's bytes are known to be UTF-8 (copied from a `str`).
    #[inline(always)]
    pub(super) fn utf8(&mut self, name: &str, value: &[u8]) {
        let any = delimited_len(value.len());
        self.key_value(name, any);
        delimited(self.0, ANY_VALUE_STRING, value);
    }

    /// An integer attribute.
    #[inline(always)]
    pub(super) fn int(&mut self, name: &str, value: i64) {
        // int64 is a varint of its two's complement.
        let any = 1 + varint_len(value as u64);
        self.key_value(name, any);
        key(self.0, ANY_VALUE_INT, VARINT);
        varint(self.0, value as u64);
    }

    /// The `KeyValue`'s head and key, and the head of its `AnyValue` of `any` bytes.
    #[inline(always)]
    fn key_value(&mut self, name: &str, any: usize) {
        let out = &mut *self.0;
        let body = delimited_len(name.len()) + delimited_len(any);
        // One capacity check for the whole attribute.
        out.reserve(1 + varint_len(body as u64) + body);
        key(out, SPAN_ATTRIBUTES, LENGTH_DELIMITED);
        varint(out, body as u64);
        delimited(out, KEY_VALUE_KEY, name.as_bytes());
        key(out, KEY_VALUE_VALUE, LENGTH_DELIMITED);
        varint(out, any as u64);
    }
}

/// What a span is written with besides its attributes.
pub(super) struct SpanHead<'a> {
    pub(super) trace_id: u128,
    pub(super) span_id: u64,
    /// 0 for a trace's root.
    pub(super) parent: u64,
    pub(super) name: &'a str,
    /// OTLP's `SpanKind`: 1 internal, 2 server, 3 client, 5 consumer.
    pub(super) kind: u64,
    pub(super) start_unix_ns: u64,
    pub(super) end_unix_ns: u64,
    pub(super) sampled: bool,
    /// The status: `None` unset, else the error's message (possibly empty).
    pub(super) error: Option<&'a str>,
}

/// Writes export requests, reusing its buffers from one batch to the next.
pub(super) struct Encoder {
    /// The `Resource` message (the service's name), written once.
    resource: Vec<u8>,
    /// The `ScopeSpans` message being written, its scope first.
    scope_spans: Vec<u8>,
    /// A span's length when it is not a two-byte varint.
    span: Vec<u8>,
}

impl Encoder {
    /// An encoder for spans of the service named `service` (the resource's `service.name`).
    pub(super) fn new(service: &str) -> Encoder {
        let mut resource = Vec::new();
        for (name, value) in [("service.name", service), ("telemetry.sdk.name", "nagi")] {
            let mut attribute = Vec::new();
            Attributes(&mut attribute).text(name, value);
            // An attribute of a span is field 9; of a resource, field 1: same message.
            let body = &attribute[1..];
            key(&mut resource, RESOURCE_ATTRIBUTES, LENGTH_DELIMITED);
            resource.extend_from_slice(body);
        }
        let mut encoder = Encoder { resource, scope_spans: Vec::new(), span: Vec::new() };
        encoder.begin();
        encoder
    }

    /// Starts a new request (dropping what was written).
    pub(super) fn begin(&mut self) {
        self.scope_spans.clear();
        let mut scope = Vec::with_capacity(8);
        delimited(&mut scope, SCOPE_NAME, b"nagi");
        delimited(&mut self.scope_spans, SCOPE_SPANS_SCOPE, &scope);
    }

    /// Adds one span: its head, then the attributes `attributes` writes.
    pub(super) fn span(&mut self, head: &SpanHead<'_>, attributes: impl FnOnce(&mut Attributes<'_>)) {
        // The span is written in place after a two-byte slot for its length, which is a
        // two-byte varint for any span of 128 to 16,383 bytes (nearly all); another length moves
        // the span to fit its varint, so that the encoding stays canonical.
        let out = &mut self.scope_spans;
        key(out, SCOPE_SPANS_SPANS, LENGTH_DELIMITED);
        let slot = out.len();
        out.extend_from_slice(&[0, 0]);
        delimited(out, SPAN_TRACE_ID, &head.trace_id.to_be_bytes());
        delimited(out, SPAN_SPAN_ID, &head.span_id.to_be_bytes());
        if head.parent != 0 {
            delimited(out, SPAN_PARENT_SPAN_ID, &head.parent.to_be_bytes());
        }
        delimited(out, SPAN_NAME, head.name.as_bytes());
        key(out, SPAN_KIND, VARINT);
        varint(out, head.kind);
        key(out, SPAN_START, FIXED64);
        out.extend_from_slice(&head.start_unix_ns.to_le_bytes());
        key(out, SPAN_END, FIXED64);
        out.extend_from_slice(&head.end_unix_ns.to_le_bytes());
        attributes(&mut Attributes(out));
        if let Some(message) = head.error {
            let mut status = Vec::with_capacity(message.len() + 8);
            if !message.is_empty() {
                delimited(&mut status, STATUS_MESSAGE, message.as_bytes());
            }
            key(&mut status, STATUS_CODE, VARINT);
            varint(&mut status, STATUS_ERROR);
            delimited(out, SPAN_STATUS, &status);
        }
        // SpanFlags: bit 0 sampled, bit 8 "whether the parent is remote is known" (0x100).
        key(out, SPAN_FLAGS, FIXED32);
        out.extend_from_slice(&(0x100 | u32::from(head.sampled)).to_le_bytes());
        let len = out.len() - slot - 2;
        if (128..16_384).contains(&len) {
            out[slot] = (len as u8) | 0x80;
            out[slot + 1] = (len >> 7) as u8;
        } else {
            self.span.clear();
            varint(&mut self.span, len as u64);
            out.splice(slot..slot + 2, self.span.iter().copied());
        }
    }

    /// The request of the spans added since [`Encoder::begin`], written with one copy of them:
    /// the enclosing messages' heads are known from their bodies' lengths.
    pub(super) fn finish(&self) -> Vec<u8> {
        let resource_spans =
            delimited_len(self.resource.len()) + 1 + varint_len(self.scope_spans.len() as u64) + self.scope_spans.len();
        let mut request = Vec::with_capacity(1 + varint_len(resource_spans as u64) + resource_spans);
        key(&mut request, REQUEST_RESOURCE_SPANS, LENGTH_DELIMITED);
        varint(&mut request, resource_spans as u64);
        delimited(&mut request, RESOURCE_SPANS_RESOURCE, &self.resource);
        delimited(&mut request, RESOURCE_SPANS_SCOPE_SPANS, &self.scope_spans);
        debug_assert_eq!(request.len(), request.capacity());
        request
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    use prost::Message;

    use super::*;

    #[test]
    fn varints_are_as_long_as_protobuf_writes_them() {
        for value in [0, 1, 127, 128, 16_383, 16_384, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            varint(&mut out, value);
            assert_eq!(out.len(), varint_len(value), "{value}");
            assert_eq!(out.len(), prost::length_delimiter_len(value as usize), "{value}");
        }
    }

    /// What the encoder writes is what OpenTelemetry's own types decode: every field Nagi sends.
    #[test]
    fn opentelemetry_proto_decodes_what_the_encoder_writes() {
        let mut encoder = Encoder::new("users");
        for round in 0..2 {
            encoder.begin();
            let long = "x".repeat(300);
            let head = SpanHead {
                trace_id: 0x0af7_6519_16cd_43dd_8448_eb21_1c80_319c,
                span_id: 0xb7ad_6b71_6920_3331,
                parent: 0,
                name: "GET /users/{id}",
                kind: 2,
                start_unix_ns: 1_764_596_823_631_678_000,
                end_unix_ns: 1_764_596_823_631_999_000,
                sampled: true,
                error: None,
            };
            encoder.span(&head, |a| {
                a.text("http.route", "/users/{id}");
                a.int("http.response.status_code", 200);
                a.int("negative", -5);
                a.text("long", &long);
            });
            let failed = SpanHead { parent: 7, name: "examples/users.nagi:20", kind: 3, error: Some("no"), ..head };
            encoder.span(&failed, |_| {});
            let bare = SpanHead { error: Some(""), sampled: false, ..head };
            encoder.span(&bare, |_| {});
            // Spans under 128 bytes (above) and over 16 KiB have lengths of other sizes.
            let huge = "q".repeat(20_000);
            encoder.span(&head, |a| a.text("db.query.text", &huge));
            let request = ExportTraceServiceRequest::decode(&encoder.finish()[..]).expect("it decodes");
            assert_eq!(request.resource_spans.len(), 1, "round {round}");
            let resource_spans = &request.resource_spans[0];
            let resource = resource_spans.resource.as_ref().unwrap();
            assert_eq!(resource.attributes[0].key, "service.name");
            assert_eq!(
                resource.attributes[0].value.as_ref().and_then(|v| v.value.clone()),
                Some(Value::StringValue("users".to_owned()))
            );
            let scope = &resource_spans.scope_spans[0];
            assert_eq!(scope.scope.as_ref().unwrap().name, "nagi");
            assert_eq!(scope.spans.len(), 4);
            let span = &scope.spans[0];
            assert_eq!(span.trace_id, head.trace_id.to_be_bytes());
            assert_eq!(span.span_id, head.span_id.to_be_bytes());
            assert!(span.parent_span_id.is_empty());
            assert_eq!((span.name.as_str(), span.kind), ("GET /users/{id}", 2));
            assert_eq!((span.start_time_unix_nano, span.end_time_unix_nano), (head.start_unix_ns, head.end_unix_ns));
            assert_eq!(span.flags, 0x101);
            assert_eq!(span.status, None);
            let values: Vec<(&str, Option<Value>)> = span
                .attributes
                .iter()
                .map(|a| (a.key.as_str(), a.value.as_ref().and_then(|v| v.value.clone())))
                .collect();
            assert_eq!(
                values,
                vec![
                    ("http.route", Some(Value::StringValue("/users/{id}".to_owned()))),
                    ("http.response.status_code", Some(Value::IntValue(200))),
                    ("negative", Some(Value::IntValue(-5))),
                    ("long", Some(Value::StringValue(long.clone()))),
                ]
            );
            let failed = &scope.spans[1];
            assert_eq!(failed.parent_span_id, 7u64.to_be_bytes());
            let status = failed.status.as_ref().unwrap();
            assert_eq!((status.message.as_str(), status.code), ("no", STATUS_ERROR as i32));
            let bare = &scope.spans[2];
            assert_eq!((bare.status.as_ref().map(|s| s.code), bare.flags), (Some(STATUS_ERROR as i32), 0x100));
            let huge_value = scope.spans[3].attributes[0].value.as_ref().and_then(|v| v.value.clone());
            assert_eq!(huge_value, Some(Value::StringValue(huge)));
        }
    }
}
