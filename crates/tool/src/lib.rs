//! The `bloomlab` tool (`guava`, `filter`, `conform`) and the `scenario` runner: the commands
//! that need a database (SQLite, PostgreSQL), a Parquet reader or the conformance subjects. They
//! are a package of their own so that `cargo run --release --bin sweep` (README's main command,
//! in `bloomlab-cli`) does not compile those; the flag parsers and the build revision they share
//! with the other binaries come from `bloomlab_cli`.

#![warn(missing_docs)]

pub mod conform;
pub mod filter;
pub mod guava;

/// Why a `bloomlab` command (`guava ...`, `filter ...`) did not succeed; decides the exit code.
#[derive(Debug)]
pub enum Failure {
    /// Unreadable or corrupt input, a malformed key, an invalid flag, credentials a server
    /// refuses, a missing or foreign filter: exit code 2. Nothing was changed.
    BadInput(String),
    /// The command ran and a check it exists to make failed (an audit or `check --members` found
    /// a member missing): exit code 1.
    CheckFailed(String),
    /// A server failed, not the input: it could not be reached, went away mid-command (killed,
    /// crashed), or refused a command for its own reasons (out of memory): exit code 3. The
    /// message says what the command had done by then.
    Server(String),
}

impl Failure {
    /// 1 for a failed check, 2 for bad input, 3 for a server failure.
    pub fn exit_code(&self) -> std::process::ExitCode {
        match self {
            Self::CheckFailed(_) => std::process::ExitCode::from(1),
            Self::BadInput(_) => std::process::ExitCode::from(2),
            Self::Server(_) => std::process::ExitCode::from(3),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadInput(m) => write!(f, "bad input: {m}"),
            Self::CheckFailed(m) => write!(f, "check failed: {m}"),
            Self::Server(m) => write!(f, "server failure: {m}"),
        }
    }
}
