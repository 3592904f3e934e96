//! The one error type of the Redis store: every failure names the server, the filter and the value
//! at fault.

use bloomlab_filters::BloomError;
use thiserror::Error;

/// Why a Redis-backed filter could not be created, opened, read or written.
#[derive(Debug, Error)]
pub enum RedisFilterError {
    /// The server (or no node of the cluster) could be reached.
    // The client library's own message is redacted too: it may quote a node's URL.
    #[error("cannot connect to Redis at {url}: {}{hint}", crate::redact::redact_words(&source.to_string()))]
    Connect {
        /// The URL given (for a cluster, the node URLs joined by commas), credentials redacted.
        url: String,
        /// The client library's error (shown redacted).
        source: redis::RedisError,
        /// For a cluster: which nodes are down, unreachable or not in cluster mode (empty, or
        /// starting with "; ").
        hint: String,
    },
    /// A command failed after the connection was made: the server went away, refused the
    /// command (e.g. out of memory under `maxmemory`) or answered something unexpected. No
    /// answer is invented: the operation's result is this error.
    #[error("Redis at {url}: {operation} (key {key:?}) failed: {}{hint}", crate::redact::redact_words(&source.to_string()))]
    Command {
        /// The URL(s), credentials redacted.
        url: String,
        /// What the filter was doing (`insert`, `lookup`, `create`, `open`, ...).
        operation: &'static str,
        /// The first Redis key the failed command or pipeline addressed.
        key: String,
        /// The client library's error (shown redacted).
        source: redis::RedisError,
        /// For a cluster: which nodes are down or unreachable (empty, or starting with "; ").
        hint: String,
    },
    /// A fresh filter was asked for (a measuring run), but one of its keys already exists: a
    /// leftover of an earlier run, or another client's. It is not opened (its bits would be
    /// reused) nor overwritten (it may be someone's data).
    #[error(
        "Redis at {url}: key {key:?} of filter {name:?} already exists; a measuring run creates its filter fresh and will not reuse or overwrite it (a leftover of a killed run expires by itself; to remove bloomlab's leftovers now: scripts/redis-local.sh clean URL)"
    )]
    Exists {
        /// The URL(s), credentials redacted.
        url: String,
        /// The filter's name.
        name: String,
        /// The Redis key found (the config hash or a shard).
        key: String,
    },
    /// A key of a filter created with an expiry was gone when its expiry was re-armed: the run
    /// stalled longer than the expiry, or something deleted the key. Its bits are lost.
    #[error(
        "Redis at {url}: key {key:?} of filter {name:?} expired or was deleted during the run (expiry {ttl_secs} s); its bits are lost"
    )]
    Expired {
        /// The URL(s), credentials redacted.
        url: String,
        /// The filter's name.
        name: String,
        /// The Redis key that was gone.
        key: String,
        /// The expiry the filter was created with, in seconds.
        ttl_secs: u64,
    },
    /// The server answered with a value of an unexpected type or shape.
    #[error("Redis at {url}: {operation} (key {key:?}) got an unexpected reply: {reply}")]
    Reply {
        /// The URL(s), credentials redacted.
        url: String,
        /// What the filter was doing (`insert`, `lookup`, `create`, `open`, ...).
        operation: &'static str,
        /// The first Redis key the command addressed.
        key: String,
        /// The reply received, as the client library prints it.
        reply: String,
    },
    /// A filter of this name exists with other parameters: opening it with the requested ones
    /// would silently move every key's bits, so it is refused.
    #[error(
        "filter {name:?} exists with {field} = {stored}, but {requested} was requested; open it with its stored parameters, or choose another name"
    )]
    ConfigMismatch {
        /// The filter's name.
        name: String,
        /// The config field that differs (the first one, in [`crate::config::FIELDS`] order).
        field: &'static str,
        /// The field's value in the stored config.
        stored: String,
        /// The value the caller asked for.
        requested: String,
    },
    /// The config hash (or a shard beside it) is not what this crate writes: a field missing or
    /// unreadable, values that contradict each other, a checksum that does not match (a hand
    /// edit), or a shard whose length is not the config's.
    #[error("filter {name:?}: corrupt config or data in {key:?}: {reason}")]
    Corrupt {
        /// The filter's name.
        name: String,
        /// The Redis key found corrupt (the config hash or a shard).
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `open` found no config hash under this name.
    #[error("no filter {name:?} at {url} (no hash {key:?}); create it first")]
    NotFound {
        /// The URL(s), credentials redacted.
        url: String,
        /// The filter's name.
        name: String,
        /// The config hash's key that was missing.
        key: String,
    },
    /// A key exists where a bloomlab filter's key would be, but it is not one: a key of another
    /// type, or another program's filter (a Redisson config hash, a RedisBloom module key). It is
    /// neither read as a filter nor changed.
    #[error("Redis at {url}: key {key:?} is {what}; not a bloomlab filter, left untouched")]
    Foreign {
        /// The URL(s), credentials redacted.
        url: String,
        /// The key found.
        key: String,
        /// What it is instead.
        what: String,
    },
    /// A name, size or shard parameter outside what the store supports.
    #[error("{what} = {value} is invalid: {allowed}")]
    OutOfRange {
        /// The parameter (e.g. `shard bits`, `name`).
        what: &'static str,
        /// The value given.
        value: String,
        /// The range or form allowed.
        allowed: String,
    },
    /// The filter's sizing itself is invalid (n, p, m or k), as the in-memory filter reports it.
    #[error(transparent)]
    Sizing(#[from] BloomError),
}

impl RedisFilterError {
    /// Whether the server (or the way to it) failed, rather than what the caller asked: the
    /// server could not be reached, went away mid-command, refused a command for its own reasons
    /// (out of memory, loading, a cluster that is down) or answered something unexpected. Wrong
    /// credentials or a malformed URL are the caller's, and so is everything else here (a
    /// missing, foreign, corrupt or mismatched filter, a value out of range).
    pub fn is_server_failure(&self) -> bool {
        match self {
            Self::Connect { source, .. } | Self::Command { source, .. } => !is_callers(source),
            Self::Reply { .. } => true,
            _ => false,
        }
    }
}

/// Whether a client error comes from what the caller gave: credentials the server refused, a
/// user without the permission, a URL the client cannot use.
fn is_callers(e: &redis::RedisError) -> bool {
    matches!(
        e.kind(),
        redis::ErrorKind::AuthenticationFailed | redis::ErrorKind::InvalidClientConfig
    ) || matches!(e.code(), Some("WRONGPASS" | "NOAUTH" | "NOPERM"))
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, RedisFilterError>;
