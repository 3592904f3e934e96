//! `bloomlab filter ...`: operate a live filter. A filter is named by a Redis server (or cluster)
//! and a name (`--redis URL --name NAME`), or by a file (`--file PATH`). The commands create one,
//! add and check keys, drop it, explain any of its keys, report how full it is (`stat`), check
//! that against thresholds for a cron job or a scrape (`monitor`), copy it to a file and back
//! (`export`, `import`) and rebuild it under readers (`swap`).
//!
//! The logic is the libraries' (`bloomlab_redis::admin`, `bloomlab_filters::fill`); this module
//! parses flags, reads key files and prints.

mod build;
mod dump;
mod live;
pub mod parquet;
mod stat;
mod swap;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bloomlab_cli::progress::{Look, RunProgress};
use bloomlab_harness::keys::read_key_line;
use bloomlab_redis::generation::{self, GenerationError};
use bloomlab_redis::{Connection, RedisFilterError};
use clap::{Args, Subcommand};

pub use stat::{MonitorArgs, StatArgs, Status};

pub use crate::Failure;

impl Failure {
    /// A library error as a failure: the server's (exit 3) or the input's (exit 2). The library's
    /// messages name the URL (credentials redacted), the keys, the value and what was left.
    pub(crate) fn of(server_failure: bool, e: impl std::fmt::Display) -> Self {
        if server_failure {
            Self::Server(e.to_string())
        } else {
            Self::BadInput(e.to_string())
        }
    }
}

impl From<RedisFilterError> for Failure {
    fn from(e: RedisFilterError) -> Self {
        Self::of(e.is_server_failure(), e)
    }
}

impl From<GenerationError> for Failure {
    fn from(e: GenerationError) -> Self {
        Self::of(e.is_server_failure(), e)
    }
}

/// The result of a command: the exit code to leave with (0, or monitor's status), or a failure.
pub type Outcome = Result<ExitCode, Failure>;

/// Which filter a command works on: a Redis filter (`--redis` and `--name`) or a file (`--file`).
#[derive(Debug, Clone, Args)]
pub struct Target {
    /// Redis server URL (`redis://[user:password@]host:port[/db]`), or the comma-separated URLs of
    /// a cluster's nodes. Passwords are never printed.
    #[arg(long, value_name = "URL[,URL...]")]
    pub redis: Option<String>,
    /// The filter's name in Redis: 1 to 200 printable ASCII characters, without spaces or braces.
    /// Its keys are `{NAME}:config` and `{NAME:i}:bits`.
    #[arg(long)]
    pub name: Option<String>,
    /// A filter file instead of Redis.
    #[arg(long, conflicts_with_all = ["redis", "name"])]
    pub file: Option<PathBuf>,
}

/// A [`Target`] checked: exactly one of its two forms.
#[derive(Debug, Clone)]
pub enum Place {
    /// A filter in Redis.
    Redis {
        /// URL or comma-separated cluster URLs (as given; redacted when printed).
        urls: String,
        /// The filter's name.
        name: String,
    },
    /// A filter file.
    File(PathBuf),
}

impl Target {
    /// The target as one of its two forms; an error naming what is missing otherwise.
    pub fn place(&self) -> Result<Place, Failure> {
        match (&self.redis, &self.name, &self.file) {
            (Some(urls), Some(name), None) => Ok(Place::Redis {
                urls: urls.clone(),
                name: name.clone(),
            }),
            (None, None, Some(file)) => Ok(Place::File(file.clone())),
            (Some(_), None, None) => Err(bad("--redis needs --name NAME: which filter?")),
            (None, Some(_), None) => Err(bad(
                "--name needs --redis URL: which server? (or give --file PATH for a file)",
            )),
            _ => Err(bad(
                "say which filter: --redis URL --name NAME for a filter in Redis, or --file PATH",
            )),
        }
    }
}

/// Connects to `urls` (one URL, or a cluster's comma-separated node URLs).
pub fn connect(urls: &str) -> Result<Connection, Failure> {
    Ok(Connection::open(urls)?)
}

/// The filter a name stands for: for a generational filter (one `filter swap` made or adopted,
/// with a pointer `{NAME}:current`), its current generation; otherwise the name itself. A bad
/// pointer (another type, a foreign value) is an error naming it.
pub fn follow(conn: &mut Connection, name: &str) -> Result<String, Failure> {
    match generation::current(conn, name) {
        Ok(Some(generation)) => Ok(generation),
        Ok(None) => Ok(name.to_owned()),
        Err(e) => Err(e.into()),
    }
}

/// Refuses to write a filter named `name` (`create`, `import`) where readers would not read it:
/// beside the pointer of a generational filter `name` (readers follow the pointer: issue 64
/// found an import there reported as done, invisible to every reader, and left behind by
/// `drop`), or over the current generation of one (replacing it in place is the gap `swap`
/// exists to avoid). `doing` is what was refused (`imported`, `created`), `instead` the command
/// that does it through the pointer. Checks the name first, so nothing is sent for a bad one.
pub fn refuse_generational(
    conn: &mut Connection,
    name: &str,
    doing: &str,
    instead: &str,
) -> Result<(), Failure> {
    bloomlab_redis::keys::check_name(name)?;
    let drop = format!("to remove it whole: `bloomlab filter drop --redis URL --name {name}`");
    if let Some(current) = generation::current(conn, name)? {
        return Err(bad(format!(
            "{name:?} at {} is a generational filter: its readers follow its pointer {} to generation {current:?} and would never read a filter {doing} beside it, so nothing was {doing}. {instead}; {drop}",
            conn.url(),
            generation::pointer_key(name),
        )));
    }
    if let Some((base, _)) = name.rsplit_once('@')
        && generation::check_base_name(base).is_ok()
        && generation::current(conn, base)?.as_deref() == Some(name)
    {
        return Err(bad(format!(
            "{name:?} at {} is the current generation of generational filter {base:?}: its readers would see it vanish or change under them, so nothing was {doing}. Replace it with `bloomlab filter swap --redis URL --name {base}`",
            conn.url(),
        )));
    }
    Ok(())
}

/// The layout `create` (and a first `swap`) gives a filter when --layout is not given: blocked
/// 512-bit blocks with XXH3, one round trip per key.
pub fn default_variant() -> String {
    bloomlab_redis::redis_name::<bloomlab_filters::Blocked512<bloomlab_filters::Xxh3>>()
}

/// A bad-input failure with message `m`.
pub fn bad(m: impl Into<String>) -> Failure {
    Failure::BadInput(m.into())
}

/// The `bloomlab filter` subcommands.
#[derive(Debug, Subcommand)]
pub enum FilterCommand {
    /// Create an empty filter in Redis for n keys at false-positive rate p, in a layout from the
    /// catalogue. Refuses if a filter (or any key) of that name exists, unless --replace, and
    /// always on a generational filter's name (use `swap`).
    Create(live::CreateArgs),
    /// Add keys, one per line, from a file or standard input (pipelined, with progress on stderr:
    /// a bar on a terminal, a line every 10 s otherwise).
    Add(live::AddArgs),
    /// Ask whether keys (one per line, from a file or standard input) may be in the filter: prints
    /// 1 or 0 per key, or with --count only the totals. With --members every key must be found
    /// (exit 1 otherwise: a Bloom filter never forgets a key, so a miss means the wrong filter or
    /// damage).
    Check(live::CheckArgs),
    /// Build a filter offline, in memory, from keys (a file or standard input), and write it as a
    /// file for `import` or `swap --from-file`: the bits `create` + `add` of the same keys give.
    Build(build::BuildArgs),
    /// Delete everything under a name from Redis, after checking it is bloomlab's: a filter's
    /// shards and config or, for a generational filter, every generation, a filter beside its
    /// pointer, its list and its pointer; prints what it deleted.
    Drop(live::DropArgs),
    /// Explain a Redis key of bloomlab's (a filter name, `{NAME}:config` or `{NAME:i}:bits`): the
    /// filter's stored config, shards and keys.
    Describe(live::DescribeArgs),
    /// How full a filter is: bits, k, layout, shards, bytes on the server, set bits, fill, the
    /// estimated number of distinct keys inserted (with its interval), the false-positive rate
    /// the bits imply, and how many more keys reach the design rate or a given fill.
    Stat(StatArgs),
    /// `stat` against thresholds, for cron or a monitoring agent: exit 0 ok, 1 warning,
    /// 2 critical, 3 unknown (the filter could not be read). Optionally writes the figures in
    /// Prometheus's text format.
    Monitor(MonitorArgs),
    /// Copy a filter out of Redis into a file (bloomlab's format, or Guava's for Guava's layout),
    /// bit-exact, streamed in bounded memory, written whole or not at all.
    Export(dump::ExportArgs),
    /// Load a filter file into Redis, bit-exact, in any shard size: the file's header, size and
    /// stated config are checked first, and the filter appears only once its checksum matched.
    /// Refused on a generational filter's name (`swap --from-file` loads a new generation).
    Import(dump::ImportArgs),
    /// Rebuild a generational filter from a key file under a new name and switch every reader to
    /// it at once (one pointer key); the old generation expires after a grace period. With
    /// --readers, measured under concurrent readers (false negatives counted). Ctrl-C before the
    /// switch deletes the half-built generation and switches nothing (exit 130).
    Swap(swap::SwapArgs),
}

/// Runs a `bloomlab filter` subcommand.
pub fn run(cmd: FilterCommand) -> Outcome {
    match cmd {
        FilterCommand::Create(a) => live::create(&a),
        FilterCommand::Build(a) => build::build(&a),
        FilterCommand::Add(a) => live::add(&a),
        FilterCommand::Check(a) => live::check(&a),
        FilterCommand::Drop(a) => live::drop_filter(&a),
        FilterCommand::Describe(a) => live::describe(&a),
        FilterCommand::Stat(a) => stat::stat(&a),
        FilterCommand::Monitor(a) => Ok(stat::monitor(&a)),
        FilterCommand::Export(a) => dump::export(&a),
        FilterCommand::Import(a) => dump::import(&a),
        FilterCommand::Swap(a) => swap::swap(&a),
    }
}

/// Where keys come from: `--keys PATH`, or standard input when absent or `-`.
#[derive(Debug, Clone, Args)]
pub struct KeySource {
    /// Key file, one key per line (the line's bytes, without `\n` or `\r\n`, are the key), each
    /// at most 1 MiB. `-` or absent: standard input.
    #[arg(long, value_name = "PATH")]
    pub keys: Option<PathBuf>,
    /// Keys per round trip (pipelined), 1 to 65536.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub batch: u32,
}

/// Reads keys in batches of `source.batch` and hands each batch to `f`, with progress on stderr
/// (a bar on a terminal, a line every 10 s otherwise). Returns the number of keys read.
pub fn for_each_batch(
    source: &KeySource,
    mut f: impl FnMut(&[Vec<u8>]) -> Result<(), Failure>,
) -> Result<u64, Failure> {
    let KeyReader {
        mut reader,
        label,
        size,
    } = open_keys(source.keys.as_deref())?;
    let bar = progress(size);
    let batch = source.batch as usize;
    // The batch's key buffers are reused from batch to batch: no allocation per key once the
    // first batch has grown them.
    let mut keys: Vec<Vec<u8>> = vec![Vec::new(); batch];
    let mut used = 0;
    let (mut count, mut read_bytes) = (0u64, 0u64);
    loop {
        let more = read_key_line(&mut reader, &mut keys[used])
            .map_err(|e| bad(format!("{label}, line {}: {e}", count + 1)))?;
        if more {
            read_bytes += keys[used].len() as u64 + 1;
            used += 1;
            count += 1;
        }
        if used == batch || (!more && used > 0) {
            f(&keys[..used])?;
            used = 0;
            bar.set_position(if size.is_some() { read_bytes } else { count });
        }
        if !more {
            break;
        }
    }
    bar.finish_and_clear();
    Ok(count)
}

/// An opened key source ([`open_keys`]).
pub struct KeyReader {
    /// The lines.
    pub reader: Box<dyn BufRead>,
    /// How to name the source in errors: the file's path, or "standard input".
    pub label: String,
    /// The file's size in bytes, when known (for progress).
    pub size: Option<u64>,
}

/// Opens a key source: the file at `path`, or standard input when `path` is absent or `-`. A file
/// that cannot be opened is an error naming it.
pub fn open_keys(path: Option<&Path>) -> Result<KeyReader, Failure> {
    match path {
        Some(p) if p.as_os_str() != "-" => {
            let file = File::open(p)
                .map_err(|e| bad(format!("cannot open key file {}: {e}", p.display())))?;
            Ok(KeyReader {
                size: file.metadata().ok().map(|m| m.len()),
                reader: Box::new(BufReader::with_capacity(1 << 20, file)),
                label: p.display().to_string(),
            })
        }
        _ => Ok(KeyReader {
            reader: Box::new(std::io::stdin().lock()),
            label: "standard input".into(),
            size: None,
        }),
    }
}

/// Progress on stderr (bytes of a file of known size, else a key count): a bar on a terminal,
/// otherwise a line every 10 s ([`RunProgress`]).
fn progress(size: Option<u64>) -> RunProgress {
    let (total, unit, template) = match size {
        Some(total) => (
            total,
            "bytes",
            "{bar:40} {binary_bytes}/{binary_total_bytes} {eta}",
        ),
        None => (0, "keys", "{spinner} {pos} keys {per_sec}"),
    };
    RunProgress::new(
        total,
        &Look {
            program: "bloomlab filter",
            unit,
            template,
            rate: true,
        },
    )
}
