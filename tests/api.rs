//! Integration tests of a service's described interface (issue 36): `nagic openapi` for every
//! example and service golden checked by a real validator (`openapi-spec-validator`), the
//! document each emitter's binary serves with `--openapi-route`, a property-based API tester
//! (`schemathesis`) run against the users service on both emitters, and the TypeScript client of
//! `nagic client --lang=ts` compiled by `tsc --strict` and run by Node against a running service.
//!
//! The tools come from PyPI and npm; `.ci/run` installs them. A missing tool fails its test with
//! what to install, never a silent skip.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{Backend, Server, build, nagic, root, temp_dir};

const USERS: &str = "examples/users.nagi";

/// The command `name`, found on `PATH`; a test that needs it fails with how to install it.
fn tool(name: &str, install: &str) -> Command {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).map(|dir| dir.join(name)).any(|path| path.is_file()))
        .unwrap_or(false);
    assert!(found, "`{name}` is not installed; install it with `{install}` (.ci/run does)");
    Command::new(name)
}

/// Every service this repository has: the examples and the service goldens and fixtures (a
/// `.nagi` main file with a route).
fn services() -> Vec<PathBuf> {
    let mut found = vec![
        PathBuf::from("examples/users.nagi"),
        PathBuf::from("examples/blog/blog.nagi"),
        PathBuf::from("examples/board/board.nagi"),
    ];
    for dir in ["golden/high", "tests/fixtures"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "nagi"))
            .filter(|path| std::fs::read_to_string(path).unwrap().lines().any(|l| l.starts_with("route ")))
            .map(|path| path.strip_prefix(root()).unwrap().to_path_buf())
            .collect();
        files.sort();
        found.extend(files);
    }
    found
}

/// `nagic openapi FILE` as parsed JSON.
fn document(source: &str) -> serde_json::Value {
    let out = nagic(&["openapi", source]);
    assert!(out.status.success(), "nagic openapi {source}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the document is JSON")
}

#[test]
fn every_service_description_passes_the_openapi_validator() {
    let dir = temp_dir("openapi");
    let services = services();
    assert!(services.len() >= 10, "found only {services:?}");
    let mut written = Vec::new();
    for (i, source) in services.iter().enumerate() {
        let path = dir.join(format!("{i}.json"));
        let out = nagic(&["openapi", source.to_str().unwrap(), "-o", path.to_str().unwrap()]);
        assert!(out.status.success(), "nagic openapi {}: {}", source.display(), String::from_utf8_lossy(&out.stderr));
        written.push(path);
    }
    let out = tool("openapi-spec-validator", "python3 -m pip install openapi-spec-validator")
        .args(&written)
        .output()
        .expect("the validator runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the validator refused a document:\n{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One `OK` per document: the validator read all of them.
    assert_eq!(report.matches(": OK").count(), written.len(), "{report}");
}

/// The client of every service compiles under `tsc --strict`: enums as unions, modules' classes,
/// header and optional parameters, maps, times.
#[test]
fn every_service_client_compiles_under_tsc_strict() {
    let dir = temp_dir("clients");
    let mut written = Vec::new();
    for (i, source) in services().iter().enumerate() {
        let path = dir.join(format!("client{i}.ts"));
        let out = nagic(&["client", "--lang=ts", source.to_str().unwrap(), "-o", path.to_str().unwrap()]);
        assert!(out.status.success(), "nagic client {}: {}", source.display(), String::from_utf8_lossy(&out.stderr));
        written.push(path);
    }
    let out = tool("tsc", "npm install -g typescript")
        .args(["--strict", "--noEmit", "--target", "es2022", "--lib", "es2022,dom"])
        .args(&written)
        .output()
        .expect("tsc runs");
    assert!(out.status.success(), "tsc --strict refused a client:\n{}", String::from_utf8_lossy(&out.stdout));
}

/// The users service's document says what its routes take and answer.
#[test]
fn the_users_document_describes_its_routes() {
    let doc = document(USERS);
    assert_eq!(doc["openapi"], "3.1.0");
    let user = &doc["components"]["schemas"]["User"];
    assert_eq!(user["required"], serde_json::json!(["id", "name", "age"]));
    assert_eq!(user["additionalProperties"], false);
    assert_eq!(user["properties"]["age"]["maximum"], i64::from(i32::MAX));
    let list = &doc["paths"]["/users"]["get"];
    assert_eq!(list["operationId"], "get_users");
    let limit = &list["parameters"][0];
    assert_eq!(
        (limit["name"].as_str(), limit["in"].as_str(), &limit["schema"]["default"]),
        (Some("limit"), Some("query"), &serde_json::json!(100))
    );
    assert_eq!(limit["required"], false);
    // Its doc comment, and the 422 of its own `fail`.
    assert!(list["description"].as_str().unwrap().starts_with("A page of users."), "{list}");
    assert_eq!(list["x-nagi-fails"], serde_json::json!([422]));
    let create = &doc["paths"]["/users"]["post"];
    let statuses: Vec<&String> = create["responses"].as_object().unwrap().keys().collect();
    assert_eq!(statuses, ["201", "400", "409", "413", "415", "422", "500", "503", "507"]);
    assert_eq!(create["requestBody"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/User");
    let read = &doc["paths"]["/users/{id}"]["get"];
    assert!(read["responses"]["404"].is_object(), "a `User?` route answers 404: {read}");
    assert_eq!(read["parameters"][0]["in"], "path");
}

/// Each emitter's binary serves exactly `nagic openapi`'s document at `--openapi-route`, for
/// `GET` and `HEAD`, and refuses a path a route of the program takes (exit status 2).
fn the_binary_serves_the_document(backend: Backend) {
    let exe = build(USERS, backend);
    let dir = temp_dir("openapi-served");
    let server = Server::start(&exe, &dir.join("users.db"), None, &["--openapi-route", "/openapi.json"]);
    let (status, body) = server.get("/openapi.json");
    assert_eq!(status, 200, "{body}");
    let served: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(served, document(USERS));
    let head = server.raw_head(b"HEAD /openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200") && head.contains("content-type: application/json"), "{head}");
    assert_eq!(server.request("POST", "/openapi.json", None, "").0, 405);
    // Without the flag, the path is not served.
    drop(server);
    let server = Server::start(&exe, &dir.join("users.db"), None, &[]);
    assert_eq!(server.get("/openapi.json").0, 404);
    drop(server);
    let out = Command::new(&exe)
        .args(["--listen", "127.0.0.1:0", "--db", dir.join("users.db").to_str().unwrap()])
        .args(["--openapi-route", "/users/{id}"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&exe)
        .args(["--listen", "127.0.0.1:0", "--db", dir.join("users.db").to_str().unwrap()])
        .args(["--openapi-route", "/users/7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--openapi-route /users/7: the program has a route on this path"), "{stderr}");
}

/// A configuration for schemathesis from the document: an operation's own refusals
/// (`x-nagi-fails`, the statuses of its `fail` calls) are answers to valid input too, so the
/// check that valid input is accepted expects them for that operation, besides its defaults.
fn schemathesis_config(doc: &serde_json::Value) -> String {
    let mut config = String::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            let Some(fails) = op["x-nagi-fails"].as_array() else { continue };
            let mut expected: Vec<String> =
                ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"].iter().map(|s| format!("{s:?}")).collect();
            expected.extend(fails.iter().map(|status| format!("\"{status}\"")));
            config.push_str(&format!(
                "[[operations]]\ninclude-operation-id = {}\nchecks.positive_data_acceptance.expected-statuses = [{}]\n\n",
                op["operationId"],
                expected.join(", ")
            ));
        }
    }
    config
}

/// schemathesis generates requests from the served document (every phase: examples, coverage,
/// fuzzing, stateful sequences through the links it infers) and runs every check: no 5xx, every
/// status, header and body as documented, valid input accepted and invalid input refused.
fn schemathesis_finds_no_failure(backend: Backend) {
    let exe = build(USERS, backend);
    let dir = temp_dir("schemathesis");
    let server = Server::start(&exe, &dir.join("users.db"), None, &["--openapi-route", "/openapi.json"]);
    let base = format!("http://127.0.0.1:{}", server.port);
    let config = dir.join("schemathesis.toml");
    std::fs::write(&config, schemathesis_config(&document(USERS))).unwrap();
    let out = tool("schemathesis", "python3 -m pip install schemathesis")
        .args(["--config-file", config.to_str().unwrap(), "run", &format!("{base}/openapi.json"), "--url", &base])
        .args(["--max-examples", "60"])
        .env("SCHEMATHESIS_HOOKS", "")
        .env("NO_COLOR", "1")
        .current_dir(&dir)
        .output()
        .expect("schemathesis runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "schemathesis found failures:\n{report}{}", String::from_utf8_lossy(&out.stderr));
    // It ran: every operation, and hundreds of cases.
    assert!(report.contains("Tested: 6"), "{report}");
    let generated = report.lines().find_map(|l| {
        l.trim().strip_suffix(" passed").and_then(|l| l.split(" generated").next()?.trim().parse::<u32>().ok())
    });
    assert!(generated.is_some_and(|n| n >= 100), "too few cases:\n{report}");
    assert_eq!(server.get("/health").0, 200);
}

/// The TypeScript client: written by `nagic client`, compiled with `tsc --strict`, and run by Node
/// against the running users service, whose answers it checks (tests/fixtures/client/users_test.ts).
fn the_typescript_client_calls_the_service(backend: Backend) {
    let exe = build(USERS, backend);
    let dir = temp_dir("client");
    let out = nagic(&["client", "--lang=ts", USERS, "-o", dir.join("users.ts").to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::copy(root().join("tests/fixtures/client/users_test.ts"), dir.join("users_test.ts")).unwrap();
    let compiled = tool("tsc", "npm install -g typescript")
        .args(["--strict", "--target", "es2022", "--module", "commonjs", "--lib", "es2022,dom", "--outDir", "out"])
        .args(["users.ts", "users_test.ts"])
        .current_dir(&dir)
        .output()
        .expect("tsc runs");
    assert!(
        compiled.status.success(),
        "tsc --strict refused the client:\n{}",
        String::from_utf8_lossy(&compiled.stdout)
    );
    let server = Server::start(&exe, &dir.join("users.db"), None, &[]);
    let run = node(&dir.join("out/users_test.js"), &format!("http://127.0.0.1:{}", server.port));
    assert!(
        run.status.success(),
        "the client test failed:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let lines: Vec<String> = String::from_utf8_lossy(&run.stdout).lines().map(str::to_owned).collect();
    assert_eq!(
        lines,
        [
            r#"created {"id":7,"name":"Ada","age":36}"#,
            r#"read {"id":7,"name":"Ada","age":36}"#,
            "missing null",
            r#"page [{"id":7,"name":"Ada","age":36}]"#,
            "refused 422 unprocessable entity limit is 1 to 1000",
            "conflict 409 conflict",
            r#"updated {"id":7,"name":"Ada L.","age":37}"#,
            r#"deleted {"id":7,"name":"Ada L.","age":37}"#,
            "after delete null",
        ]
    );
}

fn node(script: &Path, base: &str) -> std::process::Output {
    tool("node", "apt-get install nodejs").arg(script).arg(base).output().expect("node runs")
}

/// A program without routes has no interface to describe; Low text has no doc comments,
/// defaults or failure statuses to describe one with. Both are errors, exit status 1.
#[test]
fn only_a_high_nagi_service_is_described() {
    let out = nagic(&["openapi", "golden/high/arith_i64.nagi"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no routes"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = nagic(&["client", "--lang=ts", "golden/high/users.low"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("from High Nagi"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

on_every_backend_and_llvm_level!(
    the_binary_serves_the_document,
    schemathesis_finds_no_failure,
    the_typescript_client_calls_the_service
);
