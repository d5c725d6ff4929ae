//! The database engines services are tested on: a SQLite file, or a database on a throwaway
//! PostgreSQL cluster that the test binary starts itself from the installed server binaries
//! (`initdb` and `postgres` in a temporary directory, listening on a free loopback port, run as
//! an unprivileged user when the tests run as root), or on the server `NAGI_TEST_POSTGRES`
//! names. Each test gets a database of its own. A machine without PostgreSQL fails the tests
//! that need it with a message saying what to install; none is skipped.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::temp_dir;

/// The engine a service runs on in a test: one more axis of [`crate::on_every_backend!`]'s
/// lists ([`crate::on_every_backend_and_engine!`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A SQLite file in a fresh temporary directory.
    Sqlite,
    /// A fresh database on the test PostgreSQL server.
    Postgres,
}

/// A test's database: what `--db` is given, and how the test reads it back.
pub struct TestDb {
    /// The engine.
    pub engine: Engine,
    /// The `--db` argument: the SQLite file's path, or the PostgreSQL database's URL.
    pub arg: String,
}

impl TestDb {
    /// A fresh, empty database on `engine`, named after `tag`.
    pub fn new(engine: Engine, tag: &str) -> TestDb {
        let arg = match engine {
            Engine::Sqlite => temp_dir(tag).join(format!("{tag}.db")).display().to_string(),
            Engine::Postgres => server().fresh_database(tag),
        };
        TestDb { engine, arg }
    }

    /// The `--db` argument as a path-like value for [`super::Server::start`].
    pub fn path(&self) -> &Path {
        Path::new(&self.arg)
    }

    /// Runs `sql` (plain SQL both engines read alike, no parameters) and gives every row's
    /// values as text (`None` for NULL); a boolean reads `1` or `0` on both.
    pub fn rows(&self, sql: &str) -> Vec<Vec<Option<String>>> {
        match self.engine {
            Engine::Sqlite => {
                let conn = rusqlite::Connection::open(&self.arg).expect("the database file opens");
                let mut statement = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
                let count = statement.column_count();
                let rows = statement
                    .query_map([], |row| {
                        (0..count)
                            .map(|i| {
                                Ok(match row.get_ref(i)? {
                                    rusqlite::types::ValueRef::Null => None,
                                    rusqlite::types::ValueRef::Integer(v) => Some(v.to_string()),
                                    rusqlite::types::ValueRef::Real(v) => Some(v.to_string()),
                                    rusqlite::types::ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
                                    rusqlite::types::ValueRef::Blob(_) => Some("<blob>".to_owned()),
                                })
                            })
                            .collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
                rows.map(Result::unwrap).collect()
            }
            Engine::Postgres => {
                let mut client = postgres::Client::connect(&self.arg, postgres::NoTls).expect("the database connects");
                let messages = client.simple_query(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
                messages
                    .iter()
                    .filter_map(|message| match message {
                        postgres::SimpleQueryMessage::Row(row) => Some(
                            (0..row.len())
                                .map(|i| {
                                    row.get(i).map(|v| match v {
                                        "t" => "1".to_owned(),
                                        "f" => "0".to_owned(),
                                        other => other.to_owned(),
                                    })
                                })
                                .collect(),
                        ),
                        _ => None,
                    })
                    .collect()
            }
        }
    }

    /// The one integer `sql` gives (a count, say).
    pub fn integer(&self, sql: &str) -> i64 {
        let rows = self.rows(sql);
        rows.first().and_then(|row| row.first()?.as_deref()?.parse().ok()).unwrap_or_else(|| panic!("{sql}: {rows:?}"))
    }

    /// The SQL that reads the integer field `field` of the JSON text in `column`, which the two
    /// engines spell differently.
    pub fn json_integer(&self, column: &str, field: &str) -> String {
        match self.engine {
            Engine::Sqlite => format!("json_extract({column}, '$.{field}')"),
            Engine::Postgres => format!("(({column})::json->>'{field}')::bigint"),
        }
    }

    /// Runs `sql` (several statements allowed) on the database, for a test's setup.
    pub fn execute(&self, sql: &str) {
        match self.engine {
            Engine::Sqlite => rusqlite::Connection::open(&self.arg)
                .and_then(|conn| conn.execute_batch(sql))
                .unwrap_or_else(|e| panic!("{sql}: {e:?}")),
            Engine::Postgres => postgres::Client::connect(&self.arg, postgres::NoTls)
                .and_then(|mut client| client.batch_execute(sql))
                .unwrap_or_else(|e| panic!("{sql}: {e:?}")),
        }
    }
}

/// A write lock another connection holds on a test's database, until [`WriteLock::release`].
pub enum WriteLock {
    /// SQLite's one writer lock (`BEGIN IMMEDIATE`).
    Sqlite(rusqlite::Connection),
    /// A PostgreSQL table lock that lets readers in (`LOCK TABLE … IN EXCLUSIVE MODE`).
    Postgres(postgres::Client),
}

impl WriteLock {
    /// Gives the lock back.
    pub fn release(self) {
        match self {
            WriteLock::Sqlite(conn) => conn.execute_batch("ROLLBACK").expect("releases the lock"),
            WriteLock::Postgres(mut client) => client.batch_execute("ROLLBACK").expect("releases the lock"),
        }
    }
}

impl TestDb {
    /// Takes a lock that keeps every other connection from writing to `table` (on SQLite, to
    /// any table) while reads go on, as another process would.
    pub fn hold_write_lock(&self, table: &str) -> WriteLock {
        match self.engine {
            Engine::Sqlite => {
                let conn = rusqlite::Connection::open(&self.arg).expect("the file opens");
                conn.execute_batch("BEGIN IMMEDIATE").expect("takes the write lock");
                WriteLock::Sqlite(conn)
            }
            Engine::Postgres => {
                let mut client = postgres::Client::connect(&self.arg, postgres::NoTls).expect("the database connects");
                client.batch_execute(&format!("BEGIN; LOCK TABLE {table} IN EXCLUSIVE MODE")).expect("takes the lock");
                WriteLock::Postgres(client)
            }
        }
    }
}

/// The test PostgreSQL server: an admin URL without a database name, and the cluster this
/// binary started, if it started one.
struct PgServer {
    /// `postgres://user@host:port`, to which a database name is appended.
    base: String,
    admin: Mutex<postgres::Client>,
}

impl PgServer {
    fn fresh_database(&self, tag: &str) -> String {
        static COUNTER: Mutex<u32> = Mutex::new(0);
        let n = {
            let mut n = COUNTER.lock().unwrap();
            *n += 1;
            *n
        };
        let tag: String = tag.chars().filter(char::is_ascii_alphanumeric).collect();
        let name = format!("nagi_{}_{tag}_{n}", std::process::id());
        let mut admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        // Two statements: CREATE DATABASE cannot run inside the implicit transaction of one.
        for sql in [format!("DROP DATABASE IF EXISTS {name}"), format!("CREATE DATABASE {name}")] {
            admin.batch_execute(&sql).unwrap_or_else(|e| panic!("cannot create the test database {name}: {e:?}"));
        }
        format!("{}/{name}", self.base)
    }
}

fn server() -> &'static PgServer {
    static SERVER: OnceLock<PgServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let base = match std::env::var("NAGI_TEST_POSTGRES") {
            Ok(url) => url.trim_end_matches('/').to_owned(),
            Err(_) => start_cluster(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let admin = loop {
            match postgres::Client::connect(&format!("{base}/postgres"), postgres::NoTls) {
                Ok(client) => break client,
                Err(error) if Instant::now() < deadline => {
                    let _ = error;
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(error) => panic!("the test PostgreSQL server at {base} does not answer: {error}"),
            }
        };
        PgServer { base, admin: Mutex::new(admin) }
    })
}

/// The directory of PostgreSQL's server binaries: where `initdb` is on the `PATH`, else the
/// newest `/usr/lib/postgresql/N/bin` (Debian's and Ubuntu's place, off the `PATH`).
fn server_binaries() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .find(|dir| dir.join("initdb").is_file() && dir.join("postgres").is_file());
    let packaged = || {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path().join("bin"))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        dirs.sort_by_key(|dir| dir.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()));
        dirs.pop()
    };
    on_path.or_else(packaged).unwrap_or_else(|| {
        panic!(
            "these tests run services on PostgreSQL, and PostgreSQL's server binaries (initdb, postgres) are not \
             installed: install the distribution's package (`apt-get install postgresql`), or set \
             NAGI_TEST_POSTGRES to the URL of a server the tests may create databases on \
             (postgres://user@host:port)"
        )
    })
}

/// The user the cluster runs as: the current one, or `postgres` (else `nobody`) when that is
/// root, which PostgreSQL refuses to run as.
fn cluster_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    for name in ["postgres", "nobody"] {
        let name = std::ffi::CString::new(name).unwrap();
        // SAFETY: a valid C string; the result is read at once, before another getpwnam call.
        let entry = unsafe { libc::getpwnam(name.as_ptr()) };
        if !entry.is_null() {
            // SAFETY: a non-null result points to a valid passwd record.
            return Some(unsafe { ((*entry).pw_uid, (*entry).pw_gid) });
        }
    }
    panic!(
        "the tests run as root, and PostgreSQL needs another user to run as: neither `postgres` nor `nobody` exists"
    );
}

/// Starts a throwaway cluster and gives its base URL. The server is started from a thread that
/// lives as long as the test binary, with the parent-death signal set, so it stops when the
/// binary ends however it ends; clusters left by earlier binaries that were killed are removed.
fn start_cluster() -> String {
    let bin = server_binaries();
    let tmp = std::env::temp_dir();
    for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("nagi-test-postgres-").and_then(|p| p.parse::<i32>().ok())
            // SAFETY: kill with signal 0 only asks whether the process exists.
            && unsafe { libc::kill(pid, 0) } != 0
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = tmp.join(format!("nagi-test-postgres-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let user = cluster_user();
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).expect("the cluster's directory changes owner");
    }
    let data = dir.join("data");
    let as_user = |command: &mut Command| {
        if let Some((uid, gid)) = user {
            command.uid(uid).gid(gid);
        }
    };
    let mut initdb = Command::new(bin.join("initdb"));
    initdb.args(["-D", data.to_str().unwrap(), "-U", "nagi", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
    as_user(&mut initdb);
    let output = initdb.output().expect("initdb starts");
    assert!(output.status.success(), "initdb failed: {}", String::from_utf8_lossy(&output.stderr));
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let log = dir.join("postgres.log");
    let mut postgres = Command::new(bin.join("postgres"));
    postgres
        .args(["-D", data.to_str().unwrap(), "-p", &port.to_string(), "-k", dir.to_str().unwrap()])
        .args(["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "fsync=off"])
        .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(dir.join("postgres.err")).unwrap());
    as_user(&mut postgres);
    // SAFETY: prctl is async-signal-safe; the closure allocates nothing.
    unsafe {
        postgres.pre_exec(|| {
            // SIGQUIT: PostgreSQL's immediate shutdown, which stops its backends too.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT);
            Ok(())
        });
    }
    let (started, wait) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("test-postgres".to_owned())
        .spawn(move || {
            let child = postgres.spawn();
            let ok = child.is_ok();
            let _ = started.send(child.map(|_| ()).map_err(|e| e.to_string()));
            if ok {
                loop {
                    std::thread::park();
                }
            }
        })
        .unwrap();
    wait.recv().unwrap().unwrap_or_else(|e| panic!("{} does not start: {e}", bin.join("postgres").display()));
    format!("postgres://nagi@127.0.0.1:{port}")
}

/// A TCP relay in front of the test PostgreSQL server, which a test can cut (every relayed
/// connection shut, new ones closed at once, as a server that went away) and restore.
pub struct Relay {
    /// The port services connect to instead of the server's.
    pub port: u16,
    open: std::sync::Arc<std::sync::atomic::AtomicBool>,
    connections: std::sync::Arc<Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    /// A relay to the server of `db` (a PostgreSQL test database); gives it and the URL of `db`
    /// through it.
    pub fn to(db: &TestDb) -> (Relay, String) {
        use std::sync::atomic::AtomicBool;
        let (before, after) = db.arg.rsplit_once('/').expect("a database URL");
        let upstream: u16 = before.rsplit(':').next().and_then(|p| p.parse().ok()).expect("the server's port");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("the relay binds");
        let port = listener.local_addr().unwrap().port();
        let open = std::sync::Arc::new(AtomicBool::new(true));
        let connections: std::sync::Arc<Mutex<Vec<std::net::TcpStream>>> = Default::default();
        let (accepting, kept) = (std::sync::Arc::clone(&open), std::sync::Arc::clone(&connections));
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if !accepting.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else { continue };
                let mut kept = kept.lock().unwrap();
                for (from, to) in [(&client, &server), (&server, &client)] {
                    let (mut from, mut to) = (from.try_clone().unwrap(), to.try_clone().unwrap());
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
                kept.push(client);
                kept.push(server);
            }
        });
        let url = format!("{}:{port}/{after}", before.rsplit_once(':').expect("a port").0);
        (Relay { port, open, connections }, url)
    }

    /// The server goes away: every relayed connection is shut, and new ones are closed.
    pub fn cut(&self) {
        self.open.store(false, std::sync::atomic::Ordering::SeqCst);
        for stream in self.connections.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    /// The server is back.
    pub fn restore(&self) {
        self.open.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}
