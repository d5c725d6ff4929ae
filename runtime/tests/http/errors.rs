//! Error answers that are not about the body: unknown routes, wrong methods, bad parameters,
//! conflicts, traps, panics, undecodable rows and timeouts.

use nagi_runtime::serde_json::json;

use super::service::{Server, fresh_db_path};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_route_is_404_and_wrong_method_is_405() {
    let server = Server::start().await;
    server.get("/nowhere").await.assert_error(404, "no route for GET /nowhere");
    let wrong = server.send("PATCH", "/people/1", None, "").await;
    wrong.assert_error(405, "/people/1 does not accept PATCH");
    assert_eq!(wrong.json["error"], "method not allowed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_lists_the_methods_and_head_is_answered_by_get() {
    let server = Server::start().await;
    // The path's methods in the order the service declares them, HEAD right after GET.
    let wrong = server.send("PATCH", "/people/1", None, "").await;
    assert_eq!(wrong.headers["allow"], "GET,HEAD,PUT,DELETE");
    assert_eq!(server.send("PUT", "/people", None, "").await.headers["allow"], "POST,GET,HEAD");
    assert_eq!(server.post_json("/people", r#"{"id": 1, "name": "Ada", "age": 36}"#).await.status, 201);
    let get = server.get("/people/1").await;
    let head = server.send("HEAD", "/people/1", None, "").await;
    assert_eq!((head.status, head.body_len), (200, 0));
    assert_eq!(head.headers["content-length"], get.body_len.to_string().as_str());
    // A path parameter that is not UTF-8 once percent-decoded is 400, naming the parameter.
    server.get("/people/%FF").await.assert_error(400, "path parameter `id` is not valid UTF-8");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_and_query_parameters() {
    let server = Server::start().await;
    let ok = server.get("/params/J%C3%BCrgen%20M?n=-7&x=2.5&b=true").await;
    assert_eq!((ok.status, ok.json), (200, json!(["Jürgen M", -7, 2.5, true])));
    let plus = server.get("/params/a?n=1&x=1e3").await;
    assert_eq!(plus.json, json!(["a", 1, 1000.0, null]));

    server.get("/people/abc").await.assert_error(400, "path parameter `id`: expected an i64 integer, got \"abc\"");
    server.get("/params/a").await.assert_error(400, "missing query parameter `n`");
    server.get("/params/a?n=3000000000").await.assert_error(400, "query parameter `n`: expected an i32 integer");
    server.get("/params/a?n=1&x=NaN").await.assert_error(400, "query parameter `x`: expected a finite number");
    server.get("/params/a?n=1&b=yes").await.assert_error(400, "query parameter `b`: expected true or false");
    server.get("/params/a?n=1&b=").await.assert_error(400, "query parameter `b`");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_id_is_409_and_nothing_changes() {
    let server = Server::start().await;
    assert_eq!(server.post_json("/people", r#"{"id": 1, "name": "Ada", "age": 36}"#).await.status, 201);
    let again = server.post_json("/people", r#"{"id": 1, "name": "Eve", "age": 20}"#).await;
    again.assert_error(409, "UNIQUE constraint failed: people.id");
    assert_eq!(again.json["error"], "conflict");
    assert_eq!(server.rows(), vec![(1, "Ada".to_owned(), 36)]);
    assert_eq!(server.post_json("/people", r#"{"id": 2, "name": "Eve", "age": 20}"#).await.status, 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trap_is_500_and_the_next_request_works() {
    let server = Server::start().await;
    let trapped = server.get("/divide/0").await;
    trapped.assert_error(500, "division by zero");
    assert_eq!(trapped.json, json!({"error": "trap", "detail": "division by zero"}));
    assert_eq!(server.get("/divide/5").await.json, json!(20));
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_is_500_and_the_next_request_works() {
    let server = Server::start().await;
    let panicked = server.get("/panic").await;
    panicked.assert_error(500, "a plain panic");
    assert_eq!(panicked.json["error"], "internal error");
    server.assert_untouched().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_that_does_not_fit_is_500_naming_the_column() {
    let server = Server::start().await;
    let conn = rusqlite::Connection::open(&server.db_path).expect("open");
    conn.execute("INSERT INTO people (id, name, age) VALUES (7, 'Big', 3000000000)", []).expect("raw insert");
    conn.execute("INSERT INTO people (id, name, age) VALUES (8, 'Texty', 'old')", []).expect("raw insert");
    drop(conn);

    let big = server.get("/people/7").await;
    big.assert_error(500, "column `age`: INTEGER 3000000000 is out of range for i32");
    server.get("/people/8").await.assert_error(500, "column `age`: TEXT where an INTEGER was expected");
    server.get("/people").await.assert_error(500, "column `age`");
    assert_eq!(server.get("/count").await.json, json!(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_request_times_out_with_503() {
    let server = Server::start_with(fresh_db_path(), |config| config.timeout_ms = 200).await;
    let late = server.get("/sleep?ms=3000").await;
    late.assert_error(503, "200 ms");
    assert_eq!(late.json["error"], "timeout");
    assert_eq!(late.headers["retry-after"], "1");
    assert_eq!(server.get("/sleep?ms=1").await.status, 200);
}
