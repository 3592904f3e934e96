//! A connection to one Redis server or to a cluster, with every failure turned into an error that
//! names the address (credentials redacted, see [`crate::redact::redact`]) and the operation; on a
//! cluster, a failure also names the nodes that are down or unreachable, after a bounded retry.

use std::time::Duration;

use redis::{Cmd, FromRedisValue, Value};

use crate::error::{RedisFilterError, Result};
use crate::redact::redact;

/// How long a connection attempt may take before it is a [`RedisFilterError::Connect`].
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one reply may take (sizing a 512 MiB shard is the slowest command sent).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(120);

/// The environment variable that sets how long a cluster connection keeps retrying a command the
/// cluster refuses (`CLUSTERDOWN`, a node gone, a slot moving), in whole seconds.
pub const RETRY_VAR: &str = "BLOOMLAB_REDIS_RETRY_SECS";

/// The default of [`RETRY_VAR`]: long enough to ride out a slot migration or a failover's
/// redirections on loopback, short enough that a cluster that lost a master without a replica
/// (`cluster_state:fail`, which lasts until a person acts) is reported within seconds rather than
/// after the client library's default of 16 growing sleeps (about 8.5 minutes, issue 28).
pub const DEFAULT_RETRY: Duration = Duration::from_secs(3);

/// The largest [`RETRY_VAR`] accepted.
pub const MAX_RETRY_SECS: u64 = 600;

/// Retries of one cluster command within the retry time.
const CLUSTER_RETRIES: u32 = 6;

/// How long a node is given to answer when a failure is being explained.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The cluster retry time from [`RETRY_VAR`] (unset or empty: [`DEFAULT_RETRY`]). An error names
/// the variable, the value and the allowed range (whole seconds, 0 to [`MAX_RETRY_SECS`]).
pub fn retry_time_from_env() -> Result<Duration> {
    match std::env::var(RETRY_VAR) {
        Ok(v) if !v.trim().is_empty() => parse_retry_secs(&v),
        _ => Ok(DEFAULT_RETRY),
    }
}

/// Parses a retry time in whole seconds, 0 to [`MAX_RETRY_SECS`].
pub fn parse_retry_secs(v: &str) -> Result<Duration> {
    match v.trim().parse::<u64>() {
        Ok(s) if s <= MAX_RETRY_SECS => Ok(Duration::from_secs(s)),
        _ => Err(RedisFilterError::OutOfRange {
            what: RETRY_VAR,
            value: format!("{v:?}"),
            allowed: format!(
                "whole seconds from 0 (no retry) to {MAX_RETRY_SECS}; unset means {}",
                DEFAULT_RETRY.as_secs()
            ),
        }),
    }
}

enum Backend {
    Single(redis::Connection),
    Cluster(Box<redis::cluster::ClusterConnection>),
}

/// A synchronous connection to one server or to a cluster (one connection per node, commands
/// routed by key slot). Not shared between threads: open one per thread, as the concurrency test
/// does; Redis executes each command atomically, so connections racing on the same filter lose
/// no bit.
pub struct Connection {
    backend: Backend,
    /// The URL(s) with credentials redacted: the only form ever shown.
    url: String,
    /// The URLs as given (credentials included), to probe nodes when explaining a failure.
    /// Never printed.
    nodes: Vec<String>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("url", &self.url)
            .field("cluster", &self.is_cluster())
            .finish()
    }
}

impl Connection {
    /// Connects to the server at `url` (`redis://[[USER]:PASSWORD@]HOST:PORT[/DB]`) and checks
    /// it answers PING. Errors name the URL with its credentials redacted.
    pub fn single(url: &str) -> Result<Self> {
        let shown = redact(url);
        let connect = |source| RedisFilterError::Connect {
            url: shown.clone(),
            source,
            hint: String::new(),
        };
        let client = redis::Client::open(url).map_err(connect)?;
        let mut con = client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(connect)?;
        con.set_read_timeout(Some(RESPONSE_TIMEOUT))
            .map_err(connect)?;
        con.set_write_timeout(Some(RESPONSE_TIMEOUT))
            .map_err(connect)?;
        redis::cmd("PING")
            .query::<String>(&mut con)
            .map_err(connect)?;
        Ok(Self {
            backend: Backend::Single(con),
            url: shown.clone(),
            nodes: vec![url.to_owned()],
        })
    }

    /// Connects to the cluster whose nodes (some or all) are at `urls`, and loads its slot map,
    /// with the retry time of [`retry_time_from_env`]. See [`Connection::cluster_with_retry`].
    pub fn cluster<S: AsRef<str>>(urls: &[S]) -> Result<Self> {
        Self::cluster_with_retry(urls, retry_time_from_env()?)
    }

    /// Connects to the cluster whose nodes (some or all) are at `urls`, and loads its slot map.
    ///
    /// A command the cluster refuses or cannot route (`CLUSTERDOWN`, a node gone) is retried
    /// for at most about `retry` in all (6 retries, sleeps that grow but each at most `retry / 6`;
    /// a node that refuses connections adds no wait), then fails with an error naming the nodes
    /// that are down or unreachable. Errors name the URLs with credentials redacted; URLs of a
    /// server that is not in cluster mode are named as such.
    pub fn cluster_with_retry<S: AsRef<str>>(urls: &[S], retry: Duration) -> Result<Self> {
        let nodes: Vec<String> = urls.iter().map(|u| u.as_ref().to_owned()).collect();
        let shown = redact(&nodes.join(","));
        let connect = |source, hint: String| RedisFilterError::Connect {
            url: shown.clone(),
            source,
            hint,
        };
        let max_wait_ms = (retry.as_millis() as u64 / u64::from(CLUSTER_RETRIES)).max(2);
        let builder = redis::cluster::ClusterClientBuilder::new(nodes.clone())
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(RESPONSE_TIMEOUT)
            .retries(if retry.is_zero() { 0 } else { CLUSTER_RETRIES })
            .min_retry_wait((max_wait_ms / 4).min(50))
            .max_retry_wait(max_wait_ms)
            // 100 ms, 200 ms, 400 ms, ... each capped at max_wait_ms.
            .retry_wait_formula(100, 2);
        let client = builder.build().map_err(|e| connect(e, String::new()))?;
        let con = client
            .get_connection()
            .map_err(|e| connect(e, diagnose_cluster(&nodes)))?;
        Ok(Self {
            backend: Backend::Cluster(Box::new(con)),
            url: shown.clone(),
            nodes,
        })
    }

    /// [`Connection::cluster`] when `urls` lists several comma-separated URLs (a cluster's
    /// nodes), [`Connection::single`] for one.
    pub fn open(urls: &str) -> Result<Self> {
        if urls.contains(',') {
            let nodes: Vec<&str> = urls.split(',').map(str::trim).collect();
            Self::cluster(&nodes)
        } else {
            Self::single(urls.trim())
        }
    }

    /// The shard size a filter created through this connection should use:
    /// [`config::DEFAULT_SHARD_BITS`](crate::config::DEFAULT_SHARD_BITS) on one server,
    /// [`config::CLUSTER_SHARD_BITS`](crate::config::CLUSTER_SHARD_BITS) on a cluster, so its
    /// shards spread over the nodes.
    pub fn default_shard_bits(&self) -> u64 {
        if self.is_cluster() {
            crate::config::CLUSTER_SHARD_BITS
        } else {
            crate::config::DEFAULT_SHARD_BITS
        }
    }

    /// The URL connected to (for a cluster, the node URLs given, comma-separated), with
    /// credentials redacted ([`crate::redact::redact`]).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether this is a cluster connection.
    pub fn is_cluster(&self) -> bool {
        matches!(self.backend, Backend::Cluster(_))
    }

    /// Field `field` of `INFO section` (e.g. `memory`, `used_memory`; `server`,
    /// `redis_version`). On a cluster, the node that answers (the one the empty key's slot maps
    /// to).
    pub fn info_field(&mut self, section: &str, field: &str) -> Result<String> {
        let info: String = self.query(redis::cmd("INFO").arg(section), "read INFO", section)?;
        info.lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .map(|v| v.trim().to_owned())
            .ok_or_else(|| RedisFilterError::Reply {
                url: self.url.clone(),
                operation: "read INFO",
                key: section.to_owned(),
                reply: format!("no {field} line"),
            })
    }

    /// The server's `used_memory`: bytes it has allocated (`INFO memory`).
    pub fn used_memory(&mut self) -> Result<u64> {
        let v = self.info_field("memory", "used_memory")?;
        v.parse().map_err(|_| RedisFilterError::Reply {
            url: self.url.clone(),
            operation: "read INFO",
            key: "memory".into(),
            reply: format!("used_memory:{v} is not a byte count"),
        })
    }

    fn command_error(
        &self,
        operation: &'static str,
        key: &str,
        source: redis::RedisError,
    ) -> RedisFilterError {
        // On a cluster, a failure to reach or use a node is explained by probing the nodes (a
        // few short connections, once, on the way out of a failed run).
        let hint = if self.is_cluster()
            && (source.is_io_error()
                || source.is_connection_refusal()
                || source.is_connection_dropped()
                || source.is_timeout()
                || source.is_cluster_error()
                || source.kind() == redis::ErrorKind::ClusterConnectionNotFound)
        {
            diagnose_cluster(&self.nodes)
        } else {
            String::new()
        };
        RedisFilterError::Command {
            url: self.url.clone(),
            operation,
            key: key.to_owned(),
            source,
            hint,
        }
    }

    /// Runs one command; `operation` and `key` label a failure.
    pub(crate) fn query<T: FromRedisValue>(
        &mut self,
        cmd: &Cmd,
        operation: &'static str,
        key: &str,
    ) -> Result<T> {
        let result = match &mut self.backend {
            Backend::Single(con) => cmd.query(con),
            Backend::Cluster(con) => cmd.query(con.as_mut()),
        };
        result.map_err(|e| self.command_error(operation, key, e))
    }

    /// Sends `cmds` in one pipeline (one round trip to a server; on a cluster, one per node the
    /// commands' keys live on) and returns their replies in order. A command that fails fails the
    /// whole call; `operation` and `key` label the failure.
    pub(crate) fn pipeline(
        &mut self,
        cmds: Vec<Cmd>,
        operation: &'static str,
        key: &str,
    ) -> Result<Vec<Value>> {
        let result = match &mut self.backend {
            Backend::Single(con) => {
                let mut pipe = redis::pipe();
                for c in cmds {
                    pipe.add_command(c);
                }
                pipe.query::<Vec<Value>>(con)
            }
            Backend::Cluster(con) => {
                let mut pipe = redis::cluster::cluster_pipe();
                for c in cmds {
                    pipe.add_command(c);
                }
                pipe.query::<Vec<Value>>(con.as_mut())
            }
        };
        result.map_err(|e| self.command_error(operation, key, e))
    }
}

/// `host:port` of a node URL (credentials never included), or the redacted URL if it has none.
fn address(url: &str) -> String {
    match url::Url::parse(url.trim()) {
        Ok(u) if u.host_str().is_some() => format!(
            "{}:{}",
            u.host_str().unwrap_or_default(),
            u.port().unwrap_or(6379)
        ),
        _ => redact(url),
    }
}

/// What is wrong with a cluster, as a sentence to append to an error (empty if nothing is found):
/// each given node that cannot be reached, each that is not in cluster mode, and each node the
/// reachable ones flag as failed (`fail`, `fail?`) or cannot reach (`disconnected`), with its
/// address. Probes each given URL with a short timeout.
pub fn diagnose_cluster(nodes: &[String]) -> String {
    let mut unreachable = Vec::new();
    let mut not_cluster = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let mut state = None;
    let mut seen = Vec::new();
    for node in nodes {
        let addr = address(node);
        if seen.contains(&addr) {
            continue;
        }
        seen.push(addr.clone());
        let probe = redis::Client::open(node.trim())
            .and_then(|c| c.get_connection_with_timeout(PROBE_TIMEOUT))
            .and_then(|mut c| {
                c.set_read_timeout(Some(PROBE_TIMEOUT))?;
                let info: String = redis::cmd("INFO").arg("cluster").query(&mut c)?;
                Ok((c, info))
            });
        let (mut con, info) = match probe {
            Ok(x) => x,
            Err(e) => {
                unreachable.push(format!("{addr} ({e})"));
                continue;
            }
        };
        if info.lines().any(|l| l.trim() == "cluster_enabled:0") {
            not_cluster.push(addr);
            continue;
        }
        if let Ok(ci) = redis::cmd("CLUSTER").arg("INFO").query::<String>(&mut con)
            && let Some(s) = ci
                .lines()
                .find_map(|l| l.trim().strip_prefix("cluster_state:"))
        {
            state.get_or_insert_with(|| format!("cluster_state:{s} at {addr}"));
        }
        if let Ok(text) = redis::cmd("CLUSTER").arg("NODES").query::<String>(&mut con) {
            for line in text.lines() {
                // <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slots>
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.len() < 8 {
                    continue;
                }
                let flags = f[2];
                let bad =
                    flags.split(',').any(|x| x == "fail" || x == "fail?") || f[7] == "disconnected";
                if bad {
                    let at = f[1].split(['@', ',']).next().unwrap_or(f[1]);
                    let what = format!("{at} (flags {flags}, link {})", f[7]);
                    if !failed.contains(&what) {
                        failed.push(what);
                    }
                }
            }
        }
    }
    let mut parts: Vec<String> = Vec::new();
    if !not_cluster.is_empty() {
        parts.push(format!(
            "{} {} not a cluster node (cluster mode disabled); use a single-server URL (one URL, no commas) for a server, or the URLs of a cluster's nodes",
            not_cluster.join(", "),
            if not_cluster.len() == 1 { "is" } else { "are" }
        ));
    }
    if !failed.is_empty() {
        parts.push(format!("nodes down: {}", failed.join("; ")));
    }
    // A node already named as down is not named again as unreachable.
    unreachable.retain(|u: &String| {
        let addr = u.split(' ').next().unwrap_or_default();
        !failed.iter().any(|f| f.starts_with(&format!("{addr} ")))
    });
    if !unreachable.is_empty() {
        parts.push(format!("unreachable: {}", unreachable.join("; ")));
    }
    if let Some(s) = state
        && parts.iter().all(|p| !p.starts_with("nodes down"))
        && !s.starts_with("cluster_state:ok")
    {
        parts.push(s);
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join("; "))
    }
}
