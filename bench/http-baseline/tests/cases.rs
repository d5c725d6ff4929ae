//! The baseline answers every case of the HTTP bench with the status and the JSON body that the
//! bench expects of every server (the answers of the Nagi users service, whose own tests are in
//! `tests/service.rs`): with and without `--access-log`, on a seeded database. No timing.

use std::fs::File;
use std::path::PathBuf;

use nagi_bench::http::cases::{self, CASES};
use nagi_bench::http::server::{self, Contender};
use nagi_bench::http::{check_answer, client};

fn baseline(name: &'static str, flags: Vec<&'static str>) -> Contender {
    Contender { name, exe: PathBuf::from(env!("CARGO_BIN_EXE_http-baseline")), flags }
}

#[test]
fn the_baseline_answers_the_bench_cases_as_the_nagi_service_does() {
    let dir = std::env::temp_dir().join(format!("nagi-http-baseline-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, contender) in
        [baseline("baseline", vec![]), baseline("baseline+log", vec!["--access-log"])].iter().enumerate()
    {
        let stderr = File::create(dir.join(format!("{i}.stderr"))).unwrap();
        let db = dir.join(format!("{i}.db"));
        let server = server::start(contender, None, &db, server::Stdout::Null, stderr).unwrap();
        server.seed().unwrap();
        for case in CASES {
            let (ok, answer) = check_answer(&server, &case).unwrap();
            let (status, body) = cases::expected(&case);
            assert!(
                ok,
                "{}: {} {}: got {} {:?}, expected {status} {body:?}",
                contender.name, case.method, case.path, answer.status, answer.body
            );
        }
        // The same id again is a conflict, answered in the runtime's error shape.
        let again = client::request(server.address, "POST", "/users", Some(&cases::seed_user(1))).unwrap();
        assert_eq!(again.status, 409, "{}", again.body);
        assert!(again.body.starts_with(r#"{"error":"conflict","detail":"#), "{}", again.body);
        let missing = client::request(server.address, "GET", "/users/7000", None).unwrap();
        assert_eq!(
            (missing.status, missing.body.as_str()),
            (404, r#"{"error":"not found","detail":"GET /users/7000: no such resource"}"#)
        );
        let page = client::request(server.address, "GET", "/users?limit=2&offset=1", None).unwrap();
        assert_eq!(page.body, format!("[{},{}]", cases::seed_user(2), cases::seed_user(3)));
        server.stop().unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
