//! The command line and `NAGI_*` environment of a service, parsed in child processes (this test
//! binary re-runs itself) because the environment cannot be changed safely in a threaded test.

use std::process::Command;

use nagi_runtime::config::{Config, LogFormat, LogLevel, SampleRatio};

const CHILD: &str = "NAGI_RUNTIME_TEST_CONFIG_CHILD";

/// The child's entry point: parses its arguments after `--` and prints the config.
#[test]
fn child() {
    if std::env::var(CHILD).is_ok() {
        let args: Vec<String> =
            std::env::var(CHILD).unwrap_or_default().split_whitespace().map(str::to_owned).collect();
        let parsed = Config::try_parse_for("users", std::iter::once("users".to_owned()).chain(args));
        match parsed {
            Ok(config) => println!("\nCONFIG Ok({config:?})"),
            Err(error) => println!("\nCONFIG Err({:?})", error.kind()),
        }
    }
}

fn parse_in_child(args: &str, env: &[(&str, &str)]) -> String {
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    command.args(["child", "--exact", "--nocapture", "--test-threads=1"]).env(CHILD, args);
    for name in [
        "NAGI_LISTEN",
        "NAGI_DB",
        "NAGI_WORKERS",
        "NAGI_TIMEOUT_MS",
        "NAGI_BODY_LIMIT",
        "NAGI_HEADER_TIMEOUT_MS",
        "NAGI_IDLE_TIMEOUT_MS",
        "NAGI_MAX_CONNECTIONS",
        "NAGI_MAX_HEAD_BYTES",
        "NAGI_MEMORY_LIMIT",
        "NAGI_MAX_QUERY_ROWS",
        "NAGI_DB_MAX_BYTES",
        "NAGI_DB_POOL_SIZE",
        "NAGI_REUSE_PORT",
        "NAGI_DRAIN_MS",
        "NAGI_BUSY_TIMEOUT_MS",
        "NAGI_BLOCKING_THREADS",
        "NAGI_SHUTDOWN_GRACE_MS",
        "NAGI_LOG",
    ] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    let output = command.output().expect("run child");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("CONFIG "))
        .unwrap_or_else(|| panic!("no config in {stdout}"))
        .to_owned()
}

#[test]
fn defaults() {
    let expected = Config {
        listen: "127.0.0.1:8080".to_owned(),
        db: "./users.db".to_owned(),
        db_pool_size: 16,
        workers: 1,
        timeout_ms: 30_000,
        busy_timeout_ms: 5_000,
        body_limit: 1_048_576,
        header_timeout_ms: 10_000,
        idle_timeout_ms: 60_000,
        max_connections: 10_000,
        max_head_bytes: 32_768,
        memory_limit: 268_435_456,
        max_query_rows: 10_000,
        db_max_bytes: None,
        blocking_threads: 4,
        shutdown_grace_ms: 10_000,
        reuse_port: false,
        drain_ms: None,
        outbound_timeout_ms: 10_000,
        outbound_connections: 100,
        outbound_body_limit: 8_388_608,
        metrics_listen: None,
        openapi_route: None,
        otlp_endpoint: None,
        trace_sample_ratio: SampleRatio(1.0),
        log: LogLevel::Info,
        log_format: LogFormat::Text,
    };
    assert_eq!(parse_in_child("", &[]), format!("{:?}", Ok::<_, ()>(expected)));
}

#[test]
fn environment_and_flags() {
    let from_env = parse_in_child(
        "",
        &[
            ("NAGI_LISTEN", "0.0.0.0:9000"),
            ("NAGI_DB", ":memory:"),
            ("NAGI_WORKERS", "4"),
            ("NAGI_TIMEOUT_MS", "500"),
            ("NAGI_BUSY_TIMEOUT_MS", "250"),
            ("NAGI_BODY_LIMIT", "10"),
            ("NAGI_HEADER_TIMEOUT_MS", "1000"),
            ("NAGI_IDLE_TIMEOUT_MS", "2000"),
            ("NAGI_MAX_CONNECTIONS", "50"),
            ("NAGI_MAX_HEAD_BYTES", "16384"),
            ("NAGI_MEMORY_LIMIT", "1000000"),
            ("NAGI_MAX_QUERY_ROWS", "500"),
            ("NAGI_DB_MAX_BYTES", "1000000"),
            ("NAGI_BLOCKING_THREADS", "8"),
            ("NAGI_SHUTDOWN_GRACE_MS", "300"),
            ("NAGI_OUTBOUND_TIMEOUT_MS", "1500"),
            ("NAGI_OUTBOUND_CONNECTIONS", "3"),
            ("NAGI_OUTBOUND_BODY_LIMIT", "4096"),
            ("NAGI_METRICS_LISTEN", "127.0.0.1:9100"),
            ("NAGI_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("NAGI_TRACE_SAMPLE_RATIO", "0.25"),
            ("NAGI_LOG", "debug"),
            ("NAGI_LOG_FORMAT", "json"),
            ("NAGI_DB_POOL_SIZE", "4"),
            ("NAGI_REUSE_PORT", "true"),
            ("NAGI_DRAIN_MS", "250"),
        ],
    );
    let expected = Config {
        listen: "0.0.0.0:9000".to_owned(),
        db: ":memory:".to_owned(),
        db_pool_size: 4,
        workers: 4,
        timeout_ms: 500,
        busy_timeout_ms: 250,
        body_limit: 10,
        header_timeout_ms: 1_000,
        idle_timeout_ms: 2_000,
        max_connections: 50,
        max_head_bytes: 16_384,
        memory_limit: 1_000_000,
        max_query_rows: 500,
        db_max_bytes: Some(1_000_000),
        blocking_threads: 8,
        shutdown_grace_ms: 300,
        reuse_port: true,
        drain_ms: Some(250),
        outbound_timeout_ms: 1_500,
        outbound_connections: 3,
        outbound_body_limit: 4_096,
        metrics_listen: Some("127.0.0.1:9100".to_owned()),
        openapi_route: None,
        otlp_endpoint: Some("http://127.0.0.1:4318".to_owned()),
        trace_sample_ratio: SampleRatio(0.25),
        log: LogLevel::Debug,
        log_format: LogFormat::Json,
    };
    assert_eq!(from_env, format!("{:?}", Ok::<_, ()>(expected.clone())));
    // A flag wins over its variable.
    let flag_wins = parse_in_child("--workers 2 --db other.db", &[("NAGI_WORKERS", "4"), ("NAGI_DB", ":memory:")]);
    assert!(flag_wins.contains("workers: 2") && flag_wins.contains("db: \"other.db\""), "{flag_wins}");
    let limits = parse_in_child(
        "--header-timeout-ms 1500 --idle-timeout-ms 2500 --max-connections 7",
        &[("NAGI_HEADER_TIMEOUT_MS", "1000"), ("NAGI_MAX_CONNECTIONS", "50")],
    );
    assert!(
        limits.contains("header_timeout_ms: 1500")
            && limits.contains("idle_timeout_ms: 2500")
            && limits.contains("max_connections: 7"),
        "{limits}"
    );
}

#[test]
fn bad_values_are_refused() {
    assert!(parse_in_child("--workers 0", &[]).starts_with("Err("));
    assert!(parse_in_child("--blocking-threads 0", &[]).starts_with("Err("));
    assert!(parse_in_child("--timeout-ms soon", &[]).starts_with("Err("));
    assert!(parse_in_child("--header-timeout-ms 0", &[]).starts_with("Err("));
    assert!(parse_in_child("--idle-timeout-ms 0", &[]).starts_with("Err("));
    assert!(parse_in_child("--max-connections 0", &[]).starts_with("Err("));
    assert!(parse_in_child("--frobnicate", &[]).starts_with("Err("));
    // A memory limit under the body limit could never read a body at the limit.
    assert_eq!(parse_in_child("--memory-limit 1000 --body-limit 2000", &[]), "Err(ArgumentConflict)");
    assert!(parse_in_child("--memory-limit 2000 --body-limit 2000", &[]).starts_with("Ok("));
    assert!(parse_in_child("--max-query-rows 0", &[]).starts_with("Err("));
    assert!(parse_in_child("--trace-sample-ratio 1.5", &[]).starts_with("Err("));
    assert!(parse_in_child("--trace-sample-ratio NaN", &[]).starts_with("Err("));
    assert!(parse_in_child("--trace-sample-ratio 0", &[]).starts_with("Ok("));
    assert!(parse_in_child("--db-max-bytes 100", &[]).starts_with("Err("), "under SQLite's smallest useful size");
}

#[test]
fn help_lists_every_flag_with_its_variable() {
    let help = Config::command_for("users").render_long_help().to_string();
    for (flag, variable) in [
        ("--listen", "NAGI_LISTEN"),
        ("--db", "NAGI_DB"),
        ("--workers", "NAGI_WORKERS"),
        ("--timeout-ms", "NAGI_TIMEOUT_MS"),
        ("--busy-timeout-ms", "NAGI_BUSY_TIMEOUT_MS"),
        ("--body-limit", "NAGI_BODY_LIMIT"),
        ("--header-timeout-ms", "NAGI_HEADER_TIMEOUT_MS"),
        ("--idle-timeout-ms", "NAGI_IDLE_TIMEOUT_MS"),
        ("--max-connections", "NAGI_MAX_CONNECTIONS"),
        ("--max-head-bytes", "NAGI_MAX_HEAD_BYTES"),
        ("--memory-limit", "NAGI_MEMORY_LIMIT"),
        ("--max-query-rows", "NAGI_MAX_QUERY_ROWS"),
        ("--db-max-bytes", "NAGI_DB_MAX_BYTES"),
        ("--log", "NAGI_LOG"),
    ] {
        assert!(help.contains(flag) && help.contains(variable), "{flag} / {variable} missing from:\n{help}");
    }
    assert!(help.contains("./users.db"));
}
