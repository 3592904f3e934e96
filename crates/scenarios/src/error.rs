//! Why a scenario could not run or failed. Every variant names what it concerns: the database's
//! address, the table, the value and its allowed range, or the rows that were lost.

/// A scenario's error.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A setting is outside its allowed range (nothing was measured).
    #[error("{0}")]
    BadInput(String),
    /// The database could not be reached or opened.
    #[error("cannot connect to {backend} at {address}: {cause}")]
    Connect {
        /// `SQLite` or `PostgreSQL`.
        backend: &'static str,
        /// The file or host:port/database (never the password).
        address: String,
        /// The driver's message.
        cause: String,
    },
    /// A table of the scenario's name exists with other columns: not the scenario's schema.
    #[error(
        "table {table} in {address} is not this scenario's: it has columns ({found}), the scenario \
         expects ({expected}). Use another database (--db), or drop the table if it is a leftover \
         of an older bloomlab"
    )]
    ForeignSchema {
        /// The database's address.
        address: String,
        /// The table.
        table: String,
        /// Its columns as found, `name type` comma-separated.
        found: String,
        /// The columns the scenario creates.
        expected: String,
    },
    /// A statement failed.
    #[error("{backend} at {address}: {what} failed: {cause}")]
    Query {
        /// `SQLite` or `PostgreSQL`.
        backend: &'static str,
        /// The database's address.
        address: String,
        /// The statement or what it was for.
        what: String,
        /// The driver's message.
        cause: String,
    },
    /// The end state in the database is not what the scenario wrote: rows lost, stored twice, or
    /// an answer that contradicts the database (a false negative).
    #[error("verification failed: {0}")]
    Verification(String),
    /// The run stopped part-way (the database failed after some days were measured): what was
    /// measured is reported, marked as an interrupted run. A measured failure, never a result.
    #[error("{0}")]
    Interrupted(String),
    /// A filter could not be built (unknown name, refused size): the registry's own error.
    #[error(transparent)]
    Filter(#[from] bloomlab_filters::BloomError),
    /// A report file could not be written.
    #[error("cannot write {path}: {cause}")]
    Write {
        /// The file.
        path: String,
        /// The cause.
        cause: String,
    },
}

impl From<bloomlab_report::scenario::ScenarioOutputError> for ScenarioError {
    /// An unusable `--out` is bad input; any other failure to write the report is
    /// [`ScenarioError::Write`], naming the file.
    fn from(e: bloomlab_report::scenario::ScenarioOutputError) -> Self {
        use bloomlab_report::scenario::ScenarioOutputError as E;
        match e {
            E::BadOut(message) => ScenarioError::BadInput(message),
            E::Write { path, cause } => ScenarioError::Write { path, cause },
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = ScenarioError> = std::result::Result<T, E>;
