//! `nagic lsp` (issue 35) in a scripted session over stdio, as an editor drives it (JSON-RPC
//! with LSP's framing, no editor): the blog example (six modules) opened, a type error
//! introduced and its diagnostic checked by range, hover on a field, go to definition across
//! modules, completion after `post.`, rename of a function across modules, document symbols,
//! formatting, a malformed message answered with a parse error, and shutdown then exit with
//! status 0. It also measures how long a change takes to come back as diagnostics.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::root;

/// A client of one `nagic lsp` process.
struct Client {
    child: Child,
    input: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nagic"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("nagic lsp starts");
        let input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            loop {
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if output.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.parse().unwrap();
                    }
                }
                let mut body = vec![0; length];
                output.read_exact(&mut body).unwrap();
                if sender.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Client { child, input, messages, next_id: 1 }
    }

    fn raw(&mut self, body: &str) {
        write!(self.input, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.input.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.raw(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
    }

    /// Sends a request and waits for its response (notifications meanwhile are kept aside).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        self.wait(|m| m["id"] == id)
    }

    /// The next message `matches` accepts, within ten seconds.
    fn wait(&mut self, matches: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.messages.recv_timeout(left).expect("the server answers within 10 s");
            if matches(&message) {
                return message;
            }
        }
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let message = self.wait(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri);
        message["params"]["diagnostics"].as_array().cloned().unwrap_or_default()
    }
}

fn uri(file: &str) -> String {
    format!("file://{}", root().join("examples/blog").join(file).display())
}

fn text(file: &str) -> String {
    std::fs::read_to_string(root().join("examples/blog").join(file)).unwrap()
}

/// The LSP position of the `nth` occurrence of `needle` in `text`, `plus` bytes into it.
fn at(text: &str, needle: &str, plus: usize) -> Value {
    let offset = text.find(needle).unwrap_or_else(|| panic!("no {needle:?}")) + plus;
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let character = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": character})
}

fn open(client: &mut Client, file: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(file), "languageId": "nagi", "version": 1, "text": text(file)}}),
    );
}

fn change(client: &mut Client, file: &str, version: i64, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(file), "version": version}, "contentChanges": [{"text": text}]}),
    );
}

#[test]
fn a_scripted_session_on_the_blog_example() {
    let mut client = Client::start();
    let init = client.request("initialize", json!({"processId": null, "rootUri": null, "capabilities": {}}));
    let capabilities = &init["result"]["capabilities"];
    for capability in
        ["hoverProvider", "definitionProvider", "referencesProvider", "renameProvider", "documentFormattingProvider"]
    {
        assert_eq!(capabilities[capability], true, "{capability}: {init}");
    }
    client.notify("initialized", json!({}));

    // Opened: the program checks, so posts.nagi has no diagnostics.
    open(&mut client, "posts.nagi");
    assert_eq!(client.diagnostics(&uri("posts.nagi")), Vec::<Value>::new());

    // A type error: the diagnostic names it, with the range of the offending expression.
    let posts = text("posts.nagi");
    let broken = posts.replacen("    return post\n}\n\npub fn write", "    return 5\n}\n\npub fn write", 1);
    assert_ne!(broken, posts);
    let mut latencies = Vec::new();
    let started = Instant::now();
    change(&mut client, "posts.nagi", 2, &broken);
    let diagnostics = client.diagnostics(&uri("posts.nagi"));
    latencies.push(started.elapsed());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"]["start"], at(&broken, "return 5", 7), "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"]["end"], at(&broken, "return 5", 8), "{diagnostics:?}");
    assert!(diagnostics[0]["code"].as_str().is_some_and(|c| c.starts_with('H')), "{diagnostics:?}");
    // Fixed again, ten times, each re-check timed.
    for version in 3..13 {
        let started = Instant::now();
        change(&mut client, "posts.nagi", version, if version % 2 == 0 { &broken } else { &posts });
        let diagnostics = client.diagnostics(&uri("posts.nagi"));
        latencies.push(started.elapsed());
        assert_eq!(diagnostics.len(), usize::from(version % 2 == 0), "{diagnostics:?}");
    }
    latencies.sort();
    println!(
        "re-check of the blog example (5 modules), change to diagnostics: median {:?}, max {:?}",
        latencies[latencies.len() / 2],
        latencies.last().unwrap()
    );

    // Hover on a field: its type.
    let position = at(&posts, "post.author != account.id", 5);
    let hover =
        client.request("textDocument/hover", json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position}));
    let shown = hover["result"]["contents"]["value"].as_str().unwrap_or_default().to_string();
    assert!(shown.contains("Post.author: i64"), "{hover}");

    // A name in an interpolated string's hole is a name like any other: hover shows its type,
    // and its definition is the parameter.
    let position = at(&posts, "{id} belongs to", 1);
    let hover =
        client.request("textDocument/hover", json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position}));
    let shown = hover["result"]["contents"]["value"].as_str().unwrap_or_default().to_string();
    assert!(shown.contains("id: i64"), "{hover}");
    let definition = client
        .request("textDocument/definition", json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position}));
    let line = |v: &Value| v["line"].as_u64();
    assert_eq!(line(&definition["result"]["range"]["start"]), line(&at(&posts, "id: i64, account", 0)), "{definition}");

    // Go to definition across modules: `text.check` is declared in text.nagi.
    let position = at(&posts, "text.check(\"the title\"", 5);
    let definition = client
        .request("textDocument/definition", json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position}));
    assert_eq!(definition["result"]["uri"], uri("text.nagi"), "{definition}");
    assert_eq!(definition["result"]["range"]["start"], at(&text("text.nagi"), "check(what", 0), "{definition}");

    // A module's name goes to its file; a field's references include its declaration and uses in
    // other modules.
    let position = at(&posts, "text.check(\"the title\"", 1);
    let module = client
        .request("textDocument/definition", json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position}));
    assert_eq!(module["result"]["uri"], uri("text.nagi"), "{module}");
    assert_eq!(module["result"]["range"]["start"], json!({"line": 0, "character": 0}), "{module}");
    let position = at(&posts, "    title: String", 4);
    let references = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position, "context": {"includeDeclaration": true}}),
    );
    let found = references["result"].as_array().unwrap();
    assert!(found.iter().any(|l| l["uri"] == uri("posts.nagi") && l["range"]["start"] == position), "{references}");
    // The declaration, the two class literals that set it (posts.nagi's `write`, blog.nagi's
    // `PUT /posts/{id}`) and the read in `by_author`'s closure (`p.title`); `draft.title` is
    // another class's field.
    assert_eq!(found.len(), 4, "{references}");
    let posts_text = text("posts.nagi");
    assert!(
        found
            .iter()
            .any(|l| l["uri"] == uri("posts.nagi") && l["range"]["start"] == at(&posts_text, "p.title.clone()", 2)),
        "{references}"
    );
    let blog_text = text("blog.nagi");
    assert!(
        found
            .iter()
            .any(|l| l["uri"] == uri("blog.nagi") && l["range"]["start"] == at(&blog_text, "title: body.title", 0)),
        "{references}"
    );

    // Completion after `post.`: the class's fields.
    let typing = posts.replacen("    let post = try find(id)\n", "    let post = try find(id)\n    post.\n", 1);
    change(&mut client, "posts.nagi", 20, &typing);
    client.diagnostics(&uri("posts.nagi"));
    let position = at(&typing, "    post.\n", 9);
    let completion = client
        .request("textDocument/completion", json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position}));
    let labels: Vec<&str> =
        completion["result"].as_array().unwrap().iter().filter_map(|i| i["label"].as_str()).collect();
    for field in ["id", "author", "title", "body"] {
        assert!(labels.contains(&field), "{labels:?}");
    }
    // The half-typed text does not parse; hover still answers, from the last analysis that
    // checked (above the edit, where nothing moved).
    let position = at(&typing, "draft.title, 80", 6);
    let hover =
        client.request("textDocument/hover", json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position}));
    assert!(
        hover["result"]["contents"]["value"].as_str().unwrap_or_default().contains("Draft.title: String"),
        "{hover}"
    );
    change(&mut client, "posts.nagi", 21, &posts);
    client.diagnostics(&uri("posts.nagi"));

    // Rename `find` across modules: its declaration and call in posts.nagi, and the three calls
    // `posts.find` in blog.nagi (only the name after the dot).
    let position = at(&posts, "fn find(", 3);
    let rename = client.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position, "newName": "lookup"}),
    );
    let changes = &rename["result"]["changes"];
    let edits = |file: &str| -> Vec<(Value, String)> {
        changes[uri(file)]
            .as_array()
            .unwrap_or_else(|| panic!("no edits in {file}: {rename}"))
            .iter()
            .map(|e| (e["range"]["start"].clone(), e["newText"].as_str().unwrap().to_string()))
            .collect()
    };
    let in_posts = edits("posts.nagi");
    assert_eq!(in_posts.len(), 2, "{rename}");
    assert!(in_posts.contains(&(at(&posts, "find(id: i64)", 0), "lookup".into())), "{rename}");
    assert!(in_posts.contains(&(at(&posts, "find(id)\n", 0), "lookup".into())), "{rename}");
    let blog = text("blog.nagi");
    let in_blog = edits("blog.nagi");
    assert_eq!(in_blog.len(), 3, "{rename}");
    assert!(in_blog.contains(&(at(&blog, "posts.find(id)", 6), "lookup".into())), "{rename}");

    // Rename a local: its declaration and each use, in its function only.
    let position = at(&posts, "let post = try find(id)", 4);
    let rename = client.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri("posts.nagi")}, "position": position, "newName": "found"}),
    );
    let edits = rename["result"]["changes"][uri("posts.nagi")].as_array().cloned().unwrap_or_default();
    let starts: Vec<&Value> = edits.iter().map(|e| &e["range"]["start"]).collect();
    // `let post`, `post.author`, `return post` (and not the word in "post " + to_string(id)).
    let owned = posts.find("pub fn owned").unwrap();
    let expected = [
        at(&posts, "post = try find(id)", 0),
        at(&posts, "post.author != account.id", 0),
        at(&posts[owned..], "return post\n", 7),
    ];
    let expected_last = {
        let line = expected[2]["line"].as_u64().unwrap() + posts[..owned].matches('\n').count() as u64;
        json!({"line": line, "character": expected[2]["character"]})
    };
    assert_eq!(starts, [&expected[0], &expected[1], &expected_last], "{rename}");
    assert!(edits.iter().all(|e| e["newText"] == "found"), "{rename}");

    // The outline, and formatting (the example is formatted: no edits).
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri("posts.nagi")}}));
    let names: Vec<&str> = symbols["result"].as_array().unwrap().iter().filter_map(|s| s["name"].as_str()).collect();
    for name in ["Post", "posts", "Draft", "find", "owned", "write", "page"] {
        assert!(names.contains(&name), "{names:?}");
    }
    let format = client.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri("posts.nagi")}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    assert_eq!(format["result"], json!([]), "{format}");

    // A malformed message, an unknown method and bad parameters are errors, and the server goes on.
    client.raw("{ this is not json");
    let error = client.wait(|m| m["error"]["code"] == -32700);
    assert_eq!(error["id"], Value::Null);
    let unknown = client.request("textDocument/frobnicate", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let bad = client.request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    let shutdown = client.request("shutdown", Value::Null);
    assert_eq!(shutdown["result"], Value::Null);
    client.notify("exit", Value::Null);
    let status = client.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}
