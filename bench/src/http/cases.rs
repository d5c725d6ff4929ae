//! The HTTP bench's cases: what wrk sends for each (a path, and a Lua script for the POSTs), the
//! rows every server is seeded with, and the one request per case whose answer is checked on
//! every server before anything is timed.

/// How many users every server's database is seeded with (ids 1 to 100).
pub const SEEDED: i64 = 100;

/// The id of the row the `POST /users` check writes (wrk's ids start at [`WRK_ID_BASE`]).
pub const CHECK_ID: i64 = 900_000_000;

/// The first id wrk's `POST /users` script writes; each wrk run gets its own block of ids (see
/// [`script`]).
pub const WRK_ID_BASE: i64 = 1_000_000_000;

/// The length of the name in the big echo.
pub const BIG_NAME: usize = 4096;

/// One case of the bench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    /// Short name, used in records and tables.
    pub name: &'static str,
    /// What it is, for the report (`GET /health`).
    pub title: &'static str,
    /// The request's method.
    pub method: &'static str,
    /// The request's path and query.
    pub path: &'static str,
}

/// Every case, in report order.
pub const CASES: [Case; 6] = [
    Case { name: "health", title: "GET /health", method: "GET", path: "/health" },
    Case { name: "echo", title: "POST /echo (small JSON)", method: "POST", path: "/echo" },
    Case { name: "echo-4k", title: "POST /echo (4 KiB name)", method: "POST", path: "/echo" },
    Case { name: "get-user", title: "GET /users/1", method: "GET", path: "/users/1" },
    Case { name: "list-100", title: "GET /users?limit=100", method: "GET", path: "/users?limit=100" },
    Case { name: "post-users", title: "POST /users (fresh id)", method: "POST", path: "/users" },
];

/// The case named `name`.
pub fn case(name: &str) -> Option<Case> {
    CASES.iter().copied().find(|c| c.name == name)
}

/// A user as the service writes it in JSON (fields in declaration order).
pub fn user_json(id: i64, name: &str, age: i64) -> String {
    format!(r#"{{"id":{id},"name":"{name}","age":{age}}}"#)
}

/// The body of seeded user `id` (name `user ID`, age `ID % 90`).
pub fn seed_user(id: i64) -> String {
    user_json(id, &format!("user {id}"), id % 90)
}

/// The body of the small echo.
pub fn small_echo() -> String {
    user_json(1, "Ada", 36)
}

/// The body of the big echo: a name of [`BIG_NAME`] bytes.
pub fn big_echo() -> String {
    user_json(2, &"n".repeat(BIG_NAME), 40)
}

/// The request body a case sends (`None` for a GET); for `post-users`, the check's.
pub fn body(case: &Case) -> Option<String> {
    match case.name {
        "echo" => Some(small_echo()),
        "echo-4k" => Some(big_echo()),
        "post-users" => Some(seed_user(CHECK_ID)),
        _ => None,
    }
}

/// The status and body every server must answer to the case's check request, on a database
/// seeded with users 1 to [`SEEDED`].
pub fn expected(case: &Case) -> (u16, String) {
    match case.name {
        "health" => (200, "\"ok\"".into()),
        "echo" => (201, small_echo()),
        "echo-4k" => (201, big_echo()),
        "get-user" => (200, seed_user(1)),
        "list-100" => (200, format!("[{}]", (1..=SEEDED).map(seed_user).collect::<Vec<_>>().join(","))),
        "post-users" => (201, seed_user(CHECK_ID)),
        other => unreachable!("no case {other}"),
    }
}

/// The wrk Lua script of a case, if it needs one (the POSTs). The echo scripts send a constant
/// body; `post-users` sends a fresh id per request: thread `t` of a run given the base `B`
/// (wrk's first script argument) writes ids `B + t * 100,000,000 + 1, + 2, …`, so that wrk's
/// threads, and the warm-up and the measured run, never write the same id.
pub fn script(case: &Case) -> Option<String> {
    let constant = |body: String| {
        format!(
            "-- {}: the same body on every request.\nwrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.body = '{body}'\n",
            case.title
        )
    };
    match case.name {
        "echo" => Some(constant(small_echo())),
        "echo-4k" => Some(constant(big_echo())),
        "post-users" => Some(POST_USERS.to_string()),
        _ => None,
    }
}

const POST_USERS: &str = r#"-- POST /users with a fresh id per request: thread t of a run with base B (the first script
-- argument) writes B + t * 100000000 + 1, + 2, ...
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
function init(args)
  base = tonumber(args[1]) + tid * 100000000
  n = 0
end
function request()
  n = n + 1
  local id = base + n
  local body = string.format('{"id":%.0f,"name":"user %.0f","age":%.0f}', id, id, id % 90)
  return wrk.format("POST", "/users", {["Content-Type"] = "application/json"}, body)
end
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_and_expectations_agree() {
        assert_eq!(small_echo(), r#"{"id":1,"name":"Ada","age":36}"#);
        assert_eq!(big_echo().len(), BIG_NAME + r#"{"id":2,"name":"","age":40}"#.len());
        for case in CASES {
            let (status, body) = expected(&case);
            assert!(status == 200 || status == 201, "{}", case.name);
            assert!(body.starts_with('{') || body.starts_with('[') || body.starts_with('"'), "{}", case.name);
            assert_eq!(case.method == "POST", script(&case).is_some(), "{}", case.name);
        }
        let list = expected(&case("list-100").unwrap()).1;
        assert_eq!(list.matches("\"id\"").count(), SEEDED as usize);
        assert!(script(&case("echo").unwrap()).unwrap().contains(&small_echo()));
    }
}
