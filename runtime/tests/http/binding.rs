//! The JSON body binding rules (docs/http.md), one test each, each followed by a check that no row
//! was written and the server still answers.

use std::io::{Read, Write};

use super::service::{Server, fresh_db_path};

const GOOD: &str = r#"{"id": 1, "name": "Ada", "age": 36}"#;

async fn post(server: &Server, content_type: Option<&str>, body: &str) -> super::service::Answer {
    server.send("POST", "/people", content_type, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_content_types_are_accepted() {
    let server = Server::start().await;
    for (id, content_type) in [
        (1, "application/json"),
        (2, "application/json; charset=utf-8"),
        (3, "Application/JSON"),
        (4, "application/merge-patch+json"),
    ] {
        let body = format!(r#"{{"id": {id}, "name": "n", "age": 1}}"#);
        assert_eq!(post(&server, Some(content_type), &body).await.status, 201, "{content_type}");
    }
    assert_eq!(server.rows().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_content_type_is_415() {
    let server = Server::start().await;
    post(&server, None, GOOD).await.assert_error(415, "content-type");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_json_content_type_is_415() {
    let server = Server::start().await;
    post(&server, Some("text/plain"), GOOD).await.assert_error(415, "text/plain");
    post(&server, Some("application/x-www-form-urlencoded"), GOOD).await.assert_error(415, "not JSON");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_body_is_400() {
    let server = Server::start().await;
    post(&server, Some("application/json"), "").await.assert_error(400, "empty");
    post(&server, Some("application/json"), "  \n").await.assert_error(400, "empty");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_is_400() {
    let server = Server::start().await;
    post(&server, Some("application/json"), r#"{"id": 1, "name": "Ada", "age": 36"#)
        .await
        .assert_error(400, "malformed JSON");
    post(&server, Some("application/json"), r#"{"id": 1, name: "Ada"}"#).await.assert_error(400, "malformed JSON");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trailing_bytes_are_400() {
    let server = Server::start().await;
    post(&server, Some("application/json"), &format!("{GOOD} x")).await.assert_error(400, "trailing");
    post(&server, Some("application/json"), &format!("{GOOD}{GOOD}")).await.assert_error(400, "trailing");
    server.assert_untouched().await;
    // Trailing whitespace is not an error.
    assert_eq!(post(&server, Some("application/json"), &format!("{GOOD} \n")).await.status, 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_field_is_422() {
    let server = Server::start().await;
    post(&server, Some("application/json"), r#"{"id": 1, "name": "Ada"}"#)
        .await
        .assert_error(422, "missing field `age`");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_for_a_non_option_is_422() {
    let server = Server::start().await;
    post(&server, Some("application/json"), r#"{"id": 1, "name": "Ada", "age": null}"#)
        .await
        .assert_error(422, "age: invalid type: null");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_type_is_422() {
    let server = Server::start().await;
    post(&server, Some("application/json"), r#"{"id": 1, "name": 5, "age": 36}"#)
        .await
        .assert_error(422, "name: invalid type: integer");
    post(&server, Some("application/json"), r#"{"id": 1, "name": "Ada", "age": true}"#)
        .await
        .assert_error(422, "age: invalid type: boolean");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fractional_number_for_an_integer_is_422() {
    let server = Server::start().await;
    post(&server, Some("application/json"), r#"{"id": 1, "name": "Ada", "age": 30.5}"#)
        .await
        .assert_error(422, "age: invalid type: floating point `30.5`");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_for_an_integer_is_422() {
    let server = Server::start().await;
    post(&server, Some("application/json"), r#"{"id": 1, "name": "Ada", "age": "30"}"#)
        .await
        .assert_error(422, "age: invalid type: string \"30\"");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integer_out_of_range_is_422() {
    let server = Server::start().await;
    post(&server, Some("application/json"), r#"{"id": 1, "name": "Ada", "age": 3000000000}"#)
        .await
        .assert_error(422, "age: invalid value: integer `3000000000`");
    post(&server, Some("application/json"), r#"{"id": 9223372036854775808, "name": "Ada", "age": 1}"#)
        .await
        .assert_error(422, "id:");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_key_is_422() {
    let server = Server::start().await;
    post(&server, Some("application/json"), r#"{"id": 1, "name": "Ada", "name": "Eve", "age": 36}"#)
        .await
        .assert_error(422, "duplicate field `name`");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_field_is_422() {
    let server = Server::start().await;
    post(&server, Some("application/json"), r#"{"id": 1, "name": "Ada", "age": 36, "email": "a@b"}"#)
        .await
        .assert_error(422, "unknown field `email`");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_over_the_limit_with_content_length_is_413() {
    let server = Server::start_with(fresh_db_path(), |config| config.body_limit = 256).await;
    let long_name = "x".repeat(400);
    let body = format!(r#"{{"id": 1, "name": "{long_name}", "age": 36}}"#);
    post(&server, Some("application/json"), &body).await.assert_error(413, "256 bytes");
    server.assert_untouched().await;
    // Exactly at the limit still passes the limit (and then binds normally).
    let at_limit = format!(r#"{{"id": 2, "name": "{}", "age": 36}}"#, "y".repeat(256 - 32));
    assert_eq!(at_limit.len(), 256);
    assert_eq!(post(&server, Some("application/json"), &at_limit).await.status, 201);
    assert_eq!(server.rows().len(), 1);
}

/// Sends a chunked POST over a raw socket (so no Content-Length is sent) and returns the status and body.
fn chunked_post(base: &str, chunks: &[&str]) -> (u16, String) {
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    let mut request = format!(
        "POST /people HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    for chunk in chunks {
        request.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    request.push_str("0\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status line");
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_body_over_the_limit_is_413() {
    let server = Server::start_with(fresh_db_path(), |config| config.body_limit = 256).await;
    let filler = "x".repeat(100);
    let base = server.base.clone();
    let (status, body) = tokio::task::spawn_blocking(move || {
        let chunks = [r#"{"id": 1, "name": ""#, filler.as_str(), filler.as_str(), filler.as_str(), r#"", "age": 36}"#];
        chunked_post(&base, &chunks)
    })
    .await
    .expect("client");
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("payload too large"), "{body}");
    server.assert_untouched().await;

    // A small chunked body is read and bound normally.
    let base = server.base.clone();
    let (status, _) =
        tokio::task::spawn_blocking(move || chunked_post(&base, &[r#"{"id": 1, "#, r#""name": "Ada", "age": 36}"#]))
            .await
            .expect("client");
    assert_eq!(status, 201);
    assert_eq!(server.rows().len(), 1);
}
