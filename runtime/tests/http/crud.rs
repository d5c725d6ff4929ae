//! Create, read, list, update and delete, persistence across restarts, and graceful shutdown.

use std::time::{Duration, Instant};

use nagi_runtime::serde_json::json;

use super::service::{Server, fresh_db_path};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_read_list_update_delete() {
    let server = Server::start().await;
    for (id, name, age) in [(1, "Ada", 36), (2, "Grace", 45), (3, "Linus", 28)] {
        let answer = server.post_json("/people", &json!({"id": id, "name": name, "age": age}).to_string()).await;
        assert_eq!(answer.status, 201, "{}", answer.json);
        assert_eq!(answer.json, json!({"id": id, "name": name, "age": age}));
        assert_eq!(answer.content_type, "application/json");
    }

    let one = server.get("/people/2").await;
    assert_eq!((one.status, one.json), (200, json!({"id": 2, "name": "Grace", "age": 45})));

    let all = server.get("/people").await;
    assert_eq!(all.json.as_array().map(Vec::len), Some(3));
    let page = server.get("/people?limit=1&offset=1").await;
    assert_eq!(page.json, json!([{"id": 2, "name": "Grace", "age": 45}]));

    let updated =
        server.send("PUT", "/people/3", Some("application/json"), r#"{"id": 3, "name": "Linus T", "age": 29}"#).await;
    assert_eq!((updated.status, updated.json), (200, json!({"id": 3, "name": "Linus T", "age": 29})));
    let deleted = server.send("DELETE", "/people/1", None, "").await;
    assert_eq!(deleted.status, 200);

    assert_eq!(server.rows(), vec![(2, "Grace".to_owned(), 45), (3, "Linus T".to_owned(), 29)]);

    server.get("/people/1").await.assert_error(404, "GET /people/1");
    server.send("DELETE", "/people/1", None, "").await.assert_error(404, "/people/1");
    let missing =
        server.send("PUT", "/people/77", Some("application/json"), r#"{"id": 77, "name": "x", "age": 1}"#).await;
    missing.assert_error(404, "/people/77");
    server.stop().await.expect("clean stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_text_in_values_is_stored_verbatim() {
    let server = Server::start().await;
    let name = "x'); DROP TABLE people; --";
    let answer = server.post_json("/people", &json!({"id": 5, "name": name, "age": 1}).to_string()).await;
    assert_eq!(answer.status, 201);
    assert_eq!(server.get("/people/5").await.json["name"], name);
    assert_eq!(server.rows(), vec![(5, name.to_owned(), 1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_survives_a_restart_and_the_file_is_in_wal_mode() {
    let path = fresh_db_path();
    let server = Server::start_with(path.clone(), |_| {}).await;
    assert_eq!(server.post_json("/people", r#"{"id": 9, "name": "Kept", "age": 50}"#).await.status, 201);
    server.stop_keeping_file().await.expect("clean stop");

    let conn = rusqlite::Connection::open(&path).expect("open");
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0)).expect("journal mode");
    assert_eq!(mode, "wal");
    drop(conn);

    let again = Server::start_with(path, |_| {}).await;
    assert_eq!(again.get("/people/9").await.json, json!({"id": 9, "name": "Kept", "age": 50}));
    again.stop().await.expect("clean stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_database() {
    let server = Server::start_with(fresh_db_path(), |config| config.db = ":memory:".to_owned()).await;
    assert_eq!(server.post_json("/people", r#"{"id": 1, "name": "Mem", "age": 2}"#).await.status, 201);
    assert_eq!(server.get("/count").await.json, json!(1));
    assert!(!server.db_path.exists(), "no file is created for :memory:");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_finishes_in_flight_requests() {
    let server = Server::start().await;
    let base = server.base.clone();
    let slow = tokio::spawn({
        let client = server.client.clone();
        let url = format!("{base}/sleep?ms=800");
        async move {
            let response = client.get(url).send().await.expect("in-flight request");
            (response.status().as_u16(), response.text().await.expect("body"))
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    server.stop().await.expect("clean stop");
    assert!(started.elapsed() >= Duration::from_millis(300), "shutdown waited for the in-flight request");
    assert_eq!(slow.await.expect("task"), (200, "\"slept\"".to_owned()));
    assert!(reqwest::get(format!("{base}/health")).await.is_err(), "no new connections after shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_posts() {
    let server = Server::start().await;
    let mut tasks = Vec::new();
    for id in 0..50 {
        let client = server.client.clone();
        let url = format!("{}/people", server.base);
        tasks.push(tokio::spawn(async move {
            let body = json!({"id": id, "name": format!("p{id}"), "age": id}).to_string();
            client
                .post(url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .expect("post")
                .status()
                .as_u16()
        }));
    }
    for task in tasks {
        assert_eq!(task.await.expect("task"), 201);
    }
    assert_eq!(server.rows().len(), 50);
}
