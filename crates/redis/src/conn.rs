//! A connection to one Redis server or to a cluster, with every failure turned into an error that
//! names the address and the operation.

use std::time::Duration;

use redis::{Cmd, FromRedisValue, Value};

use crate::error::{RedisFilterError, Result};

/// How long a connection attempt may take before it is a [`RedisFilterError::Connect`].
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one reply may take (sizing a 512 MiB shard is the slowest command sent).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(120);

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
    url: String,
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
    /// Connects to the server at `url` (`redis://HOST:PORT[/DB]`) and checks it answers PING.
    /// Errors name the URL.
    pub fn single(url: &str) -> Result<Self> {
        let connect = |source| RedisFilterError::Connect {
            url: url.to_owned(),
            source,
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
            url: url.to_owned(),
        })
    }

    /// Connects to the cluster whose nodes (some or all) are at `urls`, and loads its slot map.
    /// Errors name the URLs.
    pub fn cluster<S: AsRef<str>>(urls: &[S]) -> Result<Self> {
        let urls: Vec<String> = urls.iter().map(|u| u.as_ref().to_owned()).collect();
        let joined = urls.join(",");
        let connect = |source| RedisFilterError::Connect {
            url: joined.clone(),
            source,
        };
        let client = redis::cluster::ClusterClientBuilder::new(urls.clone())
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(RESPONSE_TIMEOUT)
            .build()
            .map_err(connect)?;
        let con = client.get_connection().map_err(connect)?;
        Ok(Self {
            backend: Backend::Cluster(Box::new(con)),
            url: joined,
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

    /// The URL connected to (for a cluster, the node URLs given, comma-separated).
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
        RedisFilterError::Command {
            url: self.url.clone(),
            operation,
            key: key.to_owned(),
            source,
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
