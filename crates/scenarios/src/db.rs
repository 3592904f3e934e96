//! The database of record, over two real backends: SQLite (embedded, built into the binary by
//! `rusqlite`'s bundled build, so nothing needs installing) and PostgreSQL (a networked server,
//! through the synchronous `postgres` client), chosen by URL ([`DbUrl`]).
//!
//! The abstraction is as small as the scenarios need: statements with positional parameters
//! written `$1, $2, ...` (PostgreSQL's syntax, which SQLite reads as parameters bound in order of
//! first appearance), a few typed ways to read results, explicit transactions, and a schema check
//! ([`Db::ensure_table`]) that creates a scenario's table or refuses one of the same name with
//! other columns. Statements are prepared once per connection and cached (SQLite's statement
//! cache; a map of prepared statements for PostgreSQL), so a measured lookup is one execution of a
//! prepared statement: for PostgreSQL, one round trip.
//!
//! A [`Db`] is one connection, used by one thread; scenarios with several threads open one each
//! ([`Db::connect`] again). SQLite files are opened in WAL mode with a busy timeout, so a reader
//! connection can read while another writes.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::error::{Result, ScenarioError};

/// Where the database is: `sqlite:PATH`, `postgres://user@host:port/db` (also `postgresql://`),
/// or PostgreSQL's keyword form (`host=... port=... user=... dbname=...`).
///
/// A PostgreSQL URL may carry a password: it is passed to the client and never shown. `Debug`,
/// `Display`, [`DbUrl::address`] and every error about the URL print it redacted ([`redact`]).
#[derive(Clone, PartialEq, Eq)]
pub enum DbUrl {
    /// An SQLite file (created if missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection string (URL or keyword form), passed to the client as is.
    Postgres(String),
}

impl fmt::Debug for DbUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbUrl::Sqlite(p) => f.debug_tuple("Sqlite").field(p).finish(),
            DbUrl::Postgres(u) => f.debug_tuple("Postgres").field(&redact(u)).finish(),
        }
    }
}

/// `text` with every password in it replaced by `***`: the password of a URL's user info
/// (`scheme://user:PASSWORD@host`), and the value of every `password=` setting (PostgreSQL's
/// keyword form, quoted or not, and a URL's `?password=` parameter). Everything else is kept, so a
/// redacted URL still says which server and user were meant.
pub fn redact(text: &str) -> String {
    let mut out = redact_userinfo(text);
    // A URL's query parameters end at `&`; a keyword-form value ends only at white space.
    let url_form = out.contains("://");
    let lower = out.to_ascii_lowercase();
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find("password") {
        let key_end = from + i + "password".len();
        from = key_end;
        let rest = &out[key_end..];
        let after_ws = rest.len() - rest.trim_start().len();
        if !rest[after_ws..].starts_with('=') {
            continue;
        }
        let mut start = key_end + after_ws + 1;
        start += out[start..].len() - out[start..].trim_start().len();
        let bytes = out.as_bytes();
        let end = if bytes.get(start) == Some(&b'\'') {
            // A quoted value: up to the closing quote not preceded by a backslash (by chars, so
            // the end is a char boundary whatever the value holds).
            let mut escaped = false;
            out[start + 1..]
                .char_indices()
                .find(|&(_, c)| {
                    let close = c == '\'' && !escaped;
                    escaped = c == '\\' && !escaped;
                    close
                })
                .map_or(out.len(), |(k, _)| start + 1 + k + 1)
        } else {
            out[start..]
                .find(|c: char| c.is_whitespace() || (url_form && (c == '&' || c == '#')))
                .map_or(out.len(), |k| start + k)
        };
        if end > start {
            spans.push((start, end));
        }
        from = end.max(from);
    }
    for (start, end) in spans.into_iter().rev() {
        out.replace_range(start..end, "***");
    }
    out
}

/// `scheme://user:PASSWORD@host...` with the password replaced by `***`, wherever such a URL
/// appears in `text`.
fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first '/', '?', '#' or white space.
        let auth_end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..auth_end];
        match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                match userinfo.find(':') {
                    Some(colon) => {
                        out.push_str(&userinfo[..=colon]);
                        out.push_str("***");
                    }
                    None => out.push_str(userinfo),
                }
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[auth_end..];
    }
    out.push_str(rest);
    out
}

impl FromStr for DbUrl {
    type Err = ScenarioError;
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        if let Some(path) = t.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err(ScenarioError::BadInput(format!(
                    "--db {s:?} names no file: write sqlite:PATH"
                )));
            }
            Ok(DbUrl::Sqlite(PathBuf::from(path)))
        } else if t.starts_with("postgres://")
            || t.starts_with("postgresql://")
            || (!t.contains("://") && t.contains('='))
        {
            postgres::Config::from_str(t).map_err(|e| {
                ScenarioError::BadInput(format!(
                    "--db {:?} is not a valid PostgreSQL URL: {e}; write \
                     postgres://USER@HOST:PORT/DATABASE or \
                     host=HOST port=PORT user=USER dbname=DATABASE",
                    redact(s)
                ))
            })?;
            Ok(DbUrl::Postgres(t.to_owned()))
        } else {
            Err(ScenarioError::BadInput(format!(
                "--db {:?} is not a database URL this tool knows: use sqlite:PATH or \
                 postgres://USER@HOST:PORT/DATABASE",
                redact(s)
            )))
        }
    }
}

/// A fresh SQLite database in a private directory of the system's temp dir, removed (with the
/// directory) on drop.
///
/// The directory is made by `tempfile` with exclusive creation (`mkdir` fails if the name exists),
/// an unpredictable name and mode 0700, so no other user can have planted a file or a symlink at
/// the database's path: a scenario never writes into someone else's file.
pub struct TempSqlite {
    dir: tempfile::TempDir,
    url: DbUrl,
}

impl TempSqlite {
    /// Creates the private directory (`bloomlab-scenario-LABEL-XXXXXX` in the temp dir); the
    /// database file `db.sqlite` in it is created when first opened.
    pub fn create(label: &str) -> Result<Self> {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::Builder::new()
            .prefix(&format!("bloomlab-scenario-{label}-"))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .map_err(|e| ScenarioError::Connect {
                backend: "SQLite",
                address: std::env::temp_dir().display().to_string(),
                cause: format!("cannot create a private temp dir for the database: {e}"),
            })?;
        let url = DbUrl::Sqlite(dir.path().join("db.sqlite"));
        Ok(TempSqlite { dir, url })
    }

    /// The database's URL (`sqlite:` of the file in the private directory).
    pub fn url(&self) -> &DbUrl {
        &self.url
    }

    /// The private directory.
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }
}

impl DbUrl {
    /// `SQLite` or `PostgreSQL`.
    pub fn backend(&self) -> &'static str {
        match self {
            DbUrl::Sqlite(_) => "SQLite",
            DbUrl::Postgres(_) => "PostgreSQL",
        }
    }

    /// The file, or `host:port/database` without user or password: what messages and reports
    /// show.
    pub fn address(&self) -> String {
        match self {
            DbUrl::Sqlite(p) => p.display().to_string(),
            DbUrl::Postgres(url) => match postgres::Config::from_str(url) {
                Ok(c) => {
                    let host = c
                        .get_hosts()
                        .first()
                        .map(|h| match h {
                            postgres::config::Host::Tcp(h) => h.clone(),
                            postgres::config::Host::Unix(p) => p.display().to_string(),
                        })
                        .unwrap_or_else(|| "localhost".into());
                    let port = c.get_ports().first().copied().unwrap_or(5432);
                    format!("{host}:{port}/{}", c.get_dbname().unwrap_or("(default)"))
                }
                Err(_) => "(invalid URL)".into(),
            },
        }
    }

    /// What to check when a connection to this database fails, by the cause: names the setting
    /// (host and port, user, password, database name) the server's answer points at. Never shows
    /// the password.
    fn pg_advice(&self, e: &postgres::Error) -> &'static str {
        use postgres::error::SqlState;
        match e.code() {
            Some(c) if *c == SqlState::INVALID_PASSWORD => {
                "check the user and the password in --db (the password is not shown)"
            }
            Some(c) if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
                "check the user in --db, and that the server's pg_hba.conf lets it log in from \
                 this host"
            }
            Some(c) if *c == SqlState::INVALID_CATALOG_NAME => {
                "check the database name in --db (the part after the port); create it with \
                 createdb, or name an existing one"
            }
            Some(c) if *c == SqlState::TOO_MANY_CONNECTIONS => {
                "the server has no free connection slot: retry later, or raise max_connections"
            }
            Some(_) => "check the user, password and database name in --db",
            None if e.is_closed() => {
                "the server closed the connection: check that it still runs (its log says why)"
            }
            None => {
                "check the host and port in --db: is PostgreSQL running there and listening on \
                 TCP (listen_addresses, port)?"
            }
        }
    }
}

/// A PostgreSQL error as a sentence: the server's own message (severity, text, SQLSTATE, detail
/// and hint) when the server answered, else the client's error with its whole `source()` chain
/// (e.g. "error connecting to server: Connection refused (os error 111)"). The client never puts
/// the password in either.
pub fn pg_cause(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut s = format!(
            "the server says {}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        );
        if let Some(d) = db.detail() {
            s.push_str(&format!("; detail: {d}"));
        }
        if let Some(h) = db.hint() {
            s.push_str(&format!("; hint: {h}"));
        }
        return s;
    }
    let mut s = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(c) = source {
        let text = c.to_string();
        // tokio-postgres's Display may already end with its cause: do not say it twice.
        if !s.ends_with(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = c.source();
    }
    s
}

impl fmt::Display for DbUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.backend(), self.address())
    }
}

/// A statement parameter.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    /// `BIGINT`.
    Int(i64),
    /// `BLOB` / `BYTEA`.
    Bytes(&'a [u8]),
    /// `TEXT`.
    Text(&'a str),
}

/// A value read back.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// Bytes.
    Bytes(Vec<u8>),
    /// Text.
    Text(String),
    /// SQL NULL.
    Null,
}

impl Value {
    /// The integer, if this is one.
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }
}

/// A column type the scenarios use, spelled per backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColType {
    /// 64-bit integer.
    Int,
    /// Byte string.
    Bytes,
    /// Text.
    Text,
}

impl ColType {
    fn sql(self, pg: bool) -> &'static str {
        match (self, pg) {
            (ColType::Int, _) => "BIGINT",
            (ColType::Bytes, false) => "BLOB",
            (ColType::Bytes, true) => "BYTEA",
            (ColType::Text, _) => "TEXT",
        }
    }
}

/// A table a scenario owns: its name, columns, and primary key.
#[derive(Debug, Clone, Copy)]
pub struct TableSpec {
    /// Table name (every scenario's table starts with `bloomlab_`).
    pub name: &'static str,
    /// Columns in order, as (name, type); the first column is the primary key.
    pub columns: &'static [(&'static str, ColType)],
}

enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres {
        client: Box<postgres::Client>,
        statements: HashMap<String, postgres::Statement>,
    },
}

/// One connection to the database of record.
pub struct Db {
    url: DbUrl,
    conn: Conn,
}

fn pg_params<'a>(params: &'a [Param<'a>]) -> Vec<&'a (dyn postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|p| match p {
            Param::Int(v) => v as &(dyn postgres::types::ToSql + Sync),
            Param::Bytes(b) => b as &(dyn postgres::types::ToSql + Sync),
            Param::Text(s) => s as &(dyn postgres::types::ToSql + Sync),
        })
        .collect()
}

fn bind_sqlite(stmt: &mut rusqlite::Statement<'_>, params: &[Param<'_>]) -> rusqlite::Result<()> {
    for (i, p) in params.iter().enumerate() {
        match p {
            Param::Int(v) => stmt.raw_bind_parameter(i + 1, v)?,
            Param::Bytes(b) => stmt.raw_bind_parameter(i + 1, b)?,
            Param::Text(s) => stmt.raw_bind_parameter(i + 1, s)?,
        }
    }
    Ok(())
}

fn sqlite_value(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(r) => Value::Int(r as i64),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
    }
}

fn pg_value(row: &postgres::Row, i: usize) -> Value {
    use postgres::types::Type;
    let ty = row.columns()[i].type_().clone();
    let v = if ty == Type::INT8 {
        row.get::<_, Option<i64>>(i).map(Value::Int)
    } else if ty == Type::INT4 {
        row.get::<_, Option<i32>>(i).map(|v| Value::Int(v.into()))
    } else if ty == Type::INT2 {
        row.get::<_, Option<i16>>(i).map(|v| Value::Int(v.into()))
    } else if ty == Type::BYTEA {
        row.get::<_, Option<Vec<u8>>>(i).map(Value::Bytes)
    } else if ty == Type::BOOL {
        row.get::<_, Option<bool>>(i).map(|b| Value::Int(b.into()))
    } else {
        row.get::<_, Option<String>>(i).map(Value::Text)
    };
    v.unwrap_or(Value::Null)
}

impl Db {
    /// Opens a connection. An SQLite file that cannot be opened, or a PostgreSQL server that does
    /// not answer within 10 s, is [`ScenarioError::Connect`] naming the file or host:port.
    pub fn connect(url: &DbUrl) -> Result<Db> {
        let fail = |cause: String| ScenarioError::Connect {
            backend: url.backend(),
            address: url.address(),
            cause,
        };
        let conn = match url {
            DbUrl::Sqlite(path) => {
                let c = rusqlite::Connection::open(path).map_err(|e| fail(e.to_string()))?;
                c.busy_timeout(Duration::from_secs(30))
                    .map_err(|e| fail(e.to_string()))?;
                // WAL: readers do not block the writer (swap's rebuild reads while it writes).
                // synchronous=NORMAL is SQLite's recommended setting for WAL: a commit is durable
                // against an application crash, and the database stays consistent on power loss.
                c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
                    .map_err(|e| fail(e.to_string()))?;
                c.set_prepared_statement_cache_capacity(32);
                Conn::Sqlite(c)
            }
            DbUrl::Postgres(u) => {
                let mut config = postgres::Config::from_str(u).map_err(|e| fail(e.to_string()))?;
                config.connect_timeout(Duration::from_secs(10));
                let client = config.connect(postgres::NoTls).map_err(|e| {
                    fail(format!("{}; {}", redact(&pg_cause(&e)), url.pg_advice(&e)))
                })?;
                Conn::Postgres {
                    client: Box::new(client),
                    statements: HashMap::new(),
                }
            }
        };
        Ok(Db {
            url: url.clone(),
            conn,
        })
    }

    /// The URL this connection was opened with.
    pub fn url(&self) -> &DbUrl {
        &self.url
    }

    fn err(&self, what: &str, cause: impl fmt::Display) -> ScenarioError {
        ScenarioError::Query {
            backend: self.url.backend(),
            address: self.url.address(),
            what: what.to_owned(),
            cause: redact(&cause.to_string()),
        }
    }

    /// A PostgreSQL error of a statement: the server's message, and what to check when the
    /// connection is gone.
    fn pg_err(e: &postgres::Error) -> String {
        let cause = pg_cause(e);
        let fatal = e
            .as_db_error()
            .is_some_and(|d| matches!(d.severity(), "FATAL" | "PANIC"));
        if fatal || e.is_closed() || e.as_db_error().is_none() {
            format!(
                "{cause}; the connection to the server is gone: check that the server still \
                 runs (its log says why it stopped)"
            )
        } else {
            cause
        }
    }

    /// Runs one or more statements without parameters (DDL, `BEGIN`, `COMMIT`).
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        let r = match &mut self.conn {
            Conn::Sqlite(c) => c.execute_batch(sql).map_err(|e| e.to_string()),
            Conn::Postgres { client, .. } => {
                client.batch_execute(sql).map_err(|e| Self::pg_err(&e))
            }
        };
        r.map_err(|e| self.err(sql, e))
    }

    /// Starts a transaction.
    pub fn begin(&mut self) -> Result<()> {
        self.batch("BEGIN")
    }

    /// Commits the transaction.
    pub fn commit(&mut self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn pg_statement(
        client: &mut postgres::Client,
        statements: &mut HashMap<String, postgres::Statement>,
        sql: &str,
    ) -> Result<postgres::Statement, postgres::Error> {
        if let Some(s) = statements.get(sql) {
            return Ok(s.clone());
        }
        let s = client.prepare(sql)?;
        statements.insert(sql.to_owned(), s.clone());
        Ok(s)
    }

    /// Executes a statement; returns the number of rows changed.
    pub fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        let r = match &mut self.conn {
            Conn::Sqlite(c) => (|| {
                let mut st = c.prepare_cached(sql)?;
                bind_sqlite(&mut st, params)?;
                st.raw_execute().map(|n| n as u64)
            })()
            .map_err(|e| e.to_string()),
            Conn::Postgres { client, statements } => Self::pg_statement(client, statements, sql)
                .and_then(|st| client.execute(&st, &pg_params(params)))
                .map_err(|e| Self::pg_err(&e)),
        };
        r.map_err(|e| self.err(sql, e))
    }

    /// Whether the query returns at least one row.
    pub fn exists(&mut self, sql: &str, params: &[Param<'_>]) -> Result<bool> {
        let r = match &mut self.conn {
            Conn::Sqlite(c) => (|| {
                let mut st = c.prepare_cached(sql)?;
                bind_sqlite(&mut st, params)?;
                let mut rows = st.raw_query();
                Ok::<_, rusqlite::Error>(rows.next()?.is_some())
            })()
            .map_err(|e| e.to_string()),
            Conn::Postgres { client, statements } => Self::pg_statement(client, statements, sql)
                .and_then(|st| client.query_opt(&st, &pg_params(params)))
                .map(|r| r.is_some())
                .map_err(|e| Self::pg_err(&e)),
        };
        r.map_err(|e| self.err(sql, e))
    }

    /// Every row the query returns, each as its values.
    pub fn rows(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Value>>> {
        let r = match &mut self.conn {
            Conn::Sqlite(c) => (|| {
                let mut st = c.prepare_cached(sql)?;
                bind_sqlite(&mut st, params)?;
                let n = st.column_count();
                let mut rows = st.raw_query();
                let mut out = Vec::new();
                while let Some(row) = rows.next()? {
                    let mut v = Vec::with_capacity(n);
                    for i in 0..n {
                        v.push(sqlite_value(row.get_ref(i)?));
                    }
                    out.push(v);
                }
                Ok::<_, rusqlite::Error>(out)
            })()
            .map_err(|e| e.to_string()),
            Conn::Postgres { client, statements } => Self::pg_statement(client, statements, sql)
                .and_then(|st| client.query(&st, &pg_params(params)))
                .map(|rows| {
                    rows.iter()
                        .map(|r| (0..r.len()).map(|i| pg_value(r, i)).collect())
                        .collect()
                })
                .map_err(|e| Self::pg_err(&e)),
        };
        r.map_err(|e| self.err(sql, e))
    }

    /// The first column of every row, as integers (NULL or non-integers are an error).
    pub fn ints(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<i64>> {
        let rows = self.rows(sql, params)?;
        rows.iter()
            .map(|r| {
                r.first()
                    .and_then(Value::int)
                    .ok_or_else(|| self.err(sql, format!("expected an integer, got {r:?}")))
            })
            .collect()
    }

    /// The single integer a query such as `SELECT COUNT(*) ...` returns.
    pub fn int(&mut self, sql: &str, params: &[Param<'_>]) -> Result<i64> {
        let v = self.ints(sql, params)?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(self.err(sql, format!("expected one row, got {}", v.len()))),
        }
    }

    /// The columns of `table` as (name, declared type), or `None` when there is no such table.
    pub fn columns(&mut self, table: &str) -> Result<Option<Vec<(String, String)>>> {
        let rows = match self.conn {
            Conn::Sqlite(_) => self.rows(
                "SELECT name, type FROM pragma_table_info($1) ORDER BY cid",
                &[Param::Text(table)],
            )?,
            Conn::Postgres { .. } => self.rows(
                "SELECT column_name::text, data_type::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 \
                 ORDER BY ordinal_position",
                &[Param::Text(table)],
            )?,
        };
        if rows.is_empty() {
            return Ok(None);
        }
        let text = |v: &Value| match v {
            Value::Text(s) => s.clone(),
            other => format!("{other:?}"),
        };
        Ok(Some(
            rows.iter()
                .map(|r| (text(&r[0]), text(&r[1]).to_ascii_uppercase()))
                .collect(),
        ))
    }

    /// The server's or library's version string (`SELECT version()` / `sqlite_version()`).
    pub fn version(&mut self) -> Result<String> {
        let sql = if self.is_pg() {
            "SELECT version()"
        } else {
            "SELECT 'SQLite ' || sqlite_version()"
        };
        match self.rows(sql, &[])?.first().and_then(|r| r.first()) {
            Some(Value::Text(v)) => Ok(v.split(" on ").next().unwrap_or(v).to_owned()),
            other => Err(self.err(sql, format!("unexpected result {other:?}"))),
        }
    }

    fn is_pg(&self) -> bool {
        matches!(self.conn, Conn::Postgres { .. })
    }

    /// Creates `spec`'s table when it does not exist. When a table of that name exists, its
    /// columns must be exactly the spec's (names, order and types): otherwise it is someone
    /// else's table and the error ([`ScenarioError::ForeignSchema`]) names both column lists.
    /// Extra `indexes` (`CREATE INDEX IF NOT EXISTS` statements) are run after.
    pub fn ensure_table(&mut self, spec: &TableSpec, indexes: &[&str]) -> Result<()> {
        let pg = self.is_pg();
        let expected: Vec<(String, String)> = spec
            .columns
            .iter()
            .map(|(n, t)| ((*n).to_owned(), t.sql(pg).to_owned()))
            .collect();
        let show = |cols: &[(String, String)]| {
            cols.iter()
                .map(|(n, t)| format!("{n} {t}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.columns(spec.name)? {
            None => {
                let cols: Vec<String> = spec
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, (n, t))| {
                        let pk = if i == 0 { " PRIMARY KEY" } else { " NOT NULL" };
                        format!("{n} {}{pk}", t.sql(pg))
                    })
                    .collect();
                self.batch(&format!(
                    "CREATE TABLE IF NOT EXISTS {} ({})",
                    spec.name,
                    cols.join(", ")
                ))?;
            }
            Some(found) => {
                // PostgreSQL reports `bigint`/`bytea`/`text` (uppercased above), SQLite the
                // declared type as written: both compare equal to the spec's spelling.
                if found != expected {
                    return Err(ScenarioError::ForeignSchema {
                        address: self.url.address(),
                        table: spec.name.to_owned(),
                        found: show(&found),
                        expected: show(&expected),
                    });
                }
            }
        }
        for ix in indexes {
            self.batch(ix)?;
        }
        Ok(())
    }
}
