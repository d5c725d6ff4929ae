//! The baseline's database: one rusqlite connection on a dedicated thread, fed by a bounded
//! channel of 64 jobs, each answered through its own oneshot channel — the shape of the Nagi
//! runtime's `db` module, written for this one table.
//!
//! Statements go through rusqlite's prepared-statement cache (128 entries, as in the runtime);
//! the column indices the rows are decoded from are resolved once, when the thread starts. The
//! pragmas are the runtime's: WAL, `synchronous = NORMAL`, foreign keys on, a 5 s busy timeout.

use std::time::Duration;

use rusqlite::{Connection, ErrorCode, Statement};
use tokio::sync::{mpsc, oneshot};

use crate::User;

/// The table, as `nagic` creates it for `table users: User key id`.
pub const CREATE: &str = "CREATE TABLE IF NOT EXISTS \"users\" (\"id\" INTEGER NOT NULL, \"name\" TEXT NOT NULL, \"age\" INTEGER NOT NULL, PRIMARY KEY (\"id\"))";
const GET: &str = "SELECT id, name, age FROM users WHERE id = ?";
const LIST: &str = "SELECT id, name, age FROM users ORDER BY id LIMIT ? OFFSET ?";
const INSERT: &str = "INSERT INTO users (id, name, age) VALUES (?, ?, ?)";

/// What went wrong with a statement.
#[derive(Debug)]
pub enum DbError {
    /// A UNIQUE or PRIMARY KEY constraint failed (409).
    Conflict(String),
    /// Anything else (500).
    Failed(String),
}

impl From<rusqlite::Error> for DbError {
    fn from(error: rusqlite::Error) -> DbError {
        match &error {
            rusqlite::Error::SqliteFailure(failure, _)
                if failure.code == ErrorCode::ConstraintViolation
                    && matches!(
                        failure.extended_code,
                        rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                    ) =>
            {
                DbError::Conflict(error.to_string())
            }
            _ => DbError::Failed(error.to_string()),
        }
    }
}

type Reply<T> = oneshot::Sender<Result<T, DbError>>;

/// One unit of work for the database thread.
enum Job {
    Get { id: i64, reply: Reply<Option<User>> },
    List { limit: i64, offset: i64, reply: Reply<Vec<User>> },
    Insert { user: User, reply: Reply<User> },
}

/// A cloneable sender to the database thread.
#[derive(Clone)]
pub struct Db {
    sender: mpsc::Sender<Job>,
}

/// The column indices of `id`, `name` and `age` in a query's result.
#[derive(Clone, Copy)]
struct Columns {
    id: usize,
    name: usize,
    age: usize,
}

impl Columns {
    fn of(statement: &Statement<'_>) -> rusqlite::Result<Columns> {
        Ok(Columns {
            id: statement.column_index("id")?,
            name: statement.column_index("name")?,
            age: statement.column_index("age")?,
        })
    }

    fn user(&self, row: &rusqlite::Row<'_>) -> rusqlite::Result<User> {
        Ok(User { id: row.get(self.id)?, name: row.get(self.name)?, age: row.get(self.age)? })
    }
}

/// The thread's state: the connection and the column indices of its two queries.
struct Worker {
    conn: Connection,
    get: Columns,
    list: Columns,
}

impl Db {
    /// Opens `path` (`:memory:` for an in-memory database) on a new thread, creates the table,
    /// and blocks until that is done.
    pub fn open(path: &str) -> Result<Db, String> {
        let (sender, receiver) = mpsc::channel(64);
        let (opened_tx, opened_rx) = std::sync::mpsc::channel();
        let path = path.to_owned();
        std::thread::Builder::new()
            .name("baseline-db".into())
            .spawn(move || match Worker::open(&path) {
                Ok(worker) => {
                    let _ = opened_tx.send(Ok(()));
                    worker.serve(receiver);
                }
                Err(error) => {
                    let _ = opened_tx.send(Err(format!("cannot open {path}: {error}")));
                }
            })
            .map_err(|e| e.to_string())?;
        opened_rx.recv().map_err(|e| e.to_string())??;
        Ok(Db { sender })
    }

    async fn submit<T>(&self, make: impl FnOnce(Reply<T>) -> Job) -> Result<T, DbError> {
        let (reply, answer) = oneshot::channel();
        let closed = || DbError::Failed("the database is closed".into());
        self.sender.send(make(reply)).await.map_err(|_| closed())?;
        answer.await.map_err(|_| closed())?
    }

    /// The user with this id, if any.
    pub async fn get(&self, id: i64) -> Result<Option<User>, DbError> {
        self.submit(|reply| Job::Get { id, reply }).await
    }

    /// Users by id, `limit` of them from `offset`.
    pub async fn list(&self, limit: i64, offset: i64) -> Result<Vec<User>, DbError> {
        self.submit(|reply| Job::List { limit, offset, reply }).await
    }

    /// Inserts `user` and hands it back.
    pub async fn insert(&self, user: User) -> Result<User, DbError> {
        self.submit(|reply| Job::Insert { user, reply }).await
    }
}

impl Worker {
    fn open(path: &str) -> rusqlite::Result<Worker> {
        let conn = if path == ":memory:" { Connection::open_in_memory()? } else { Connection::open(path)? };
        conn.set_prepared_statement_cache_capacity(128);
        conn.busy_timeout(Duration::from_secs(5))?;
        if path != ":memory:" {
            let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
            conn.execute_batch("PRAGMA synchronous = NORMAL")?;
        }
        conn.execute_batch("PRAGMA foreign_keys = ON")?;
        conn.execute_batch(CREATE)?;
        let get = Columns::of(&*conn.prepare_cached(GET)?)?;
        let list = Columns::of(&*conn.prepare_cached(LIST)?)?;
        conn.prepare_cached(INSERT)?;
        Ok(Worker { conn, get, list })
    }

    fn serve(self, mut receiver: mpsc::Receiver<Job>) {
        while let Some(job) = receiver.blocking_recv() {
            match job {
                Job::Get { id, reply } => {
                    let _ = reply.send(self.get(id));
                }
                Job::List { limit, offset, reply } => {
                    let _ = reply.send(self.list(limit, offset));
                }
                Job::Insert { user, reply } => {
                    let _ = reply.send(self.insert(user));
                }
            }
        }
    }

    fn get(&self, id: i64) -> Result<Option<User>, DbError> {
        let mut statement = self.conn.prepare_cached(GET)?;
        let mut rows = statement.query([id])?;
        match rows.next()? {
            Some(row) => Ok(Some(self.get.user(row)?)),
            None => Ok(None),
        }
    }

    fn list(&self, limit: i64, offset: i64) -> Result<Vec<User>, DbError> {
        let mut statement = self.conn.prepare_cached(LIST)?;
        let mut rows = statement.query([limit, offset])?;
        let mut users = Vec::new();
        while let Some(row) = rows.next()? {
            users.push(self.list.user(row)?);
        }
        Ok(users)
    }

    fn insert(&self, user: User) -> Result<User, DbError> {
        let mut statement = self.conn.prepare_cached(INSERT)?;
        statement.execute(rusqlite::params![user.id, user.name, user.age])?;
        Ok(user)
    }
}
