//! `export` and `import`: a Redis filter to a file and back, through `bloomlab_redis::dump`
//! (bloomlab's own format, or Guava's `writeTo` format for Guava's layout).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bloomlab_redis::RedisFilterError;
use bloomlab_redis::dump::{self, DumpError, Expected, Format, ImportOptions, Summary};
use clap::{Args, ValueEnum};

use super::{Failure, Outcome, bad, connect};

impl From<DumpError> for Failure {
    fn from(e: DumpError) -> Self {
        // Every dump error leaves the file or the server as it was: bad input, exit 2, unless the
        // server failed (exit 3).
        match e {
            // The library's wording is a measuring run's; an import is an operator's.
            DumpError::Redis(RedisFilterError::Exists { url, name, key })
                if key.ends_with(":bits") =>
            {
                bad(format!(
                    "a shard key {key:?} of {name:?} exists at {url} without the filter's config: a leftover of an interrupted import, which expires within {} s, or another program's key; nothing was imported",
                    dump::LOAD_EXPIRY.as_secs()
                ))
            }
            DumpError::Redis(RedisFilterError::Exists { url, name, key }) => bad(format!(
                "filter {name:?} already exists at {url} (key {key:?}): choose another name, or --replace to delete it first; nothing was imported"
            )),
            other => Self::of(other.is_server_failure(), other),
        }
    }
}

/// A filter file's format on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FileFormat {
    /// bloomlab's own format: any Redis filter, with its config and a checksum.
    Bloomlab,
    /// Guava's `BloomFilter.writeTo` format: only `classic/murmur3/mitz64` (or `mitz32`) filters;
    /// an import needs --n and --p, which the file does not store.
    Guava,
}

impl From<FileFormat> for Format {
    fn from(f: FileFormat) -> Self {
        match f {
            FileFormat::Bloomlab => Format::Bloomlab,
            FileFormat::Guava => Format::Guava,
        }
    }
}

/// Flags of `filter export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Redis server URL (`redis://[user:password@]host:port[/db]`), or the comma-separated URLs of
    /// a cluster's nodes. Passwords are never printed.
    #[arg(long, value_name = "URL[,URL...]")]
    redis: String,
    /// The filter's name in Redis.
    #[arg(long)]
    name: String,
    /// The file to write: written whole or not at all (a temporary file beside it, fsynced, then
    /// renamed over it), so a failure (a full disk) leaves an earlier file as it was.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// The file's format.
    #[arg(long, value_enum, default_value = "bloomlab")]
    format: FileFormat,
}

/// Flags of `filter import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Redis server URL, or the comma-separated URLs of a cluster's nodes.
    #[arg(long, value_name = "URL[,URL...]")]
    redis: String,
    /// The name the filter gets in Redis. Refused if a filter (or any of its keys) of that name
    /// exists, unless --replace.
    #[arg(long)]
    name: String,
    /// The filter file to load.
    #[arg(long, value_name = "FILE")]
    file: PathBuf,
    /// The file's format.
    #[arg(long, value_enum, default_value = "bloomlab")]
    format: FileFormat,
    /// Delete an existing bloomlab filter of this name first, once the file has been verified
    /// whole (never a key of another program). Clients that have the old filter open see it
    /// vanish: to switch readers without a gap, use `swap`.
    #[arg(long)]
    replace: bool,
    /// The filter must have this layout (`classic/xxh3/km`, `blocked512/xxh3`, ..., `redis/`
    /// optional): a file of another one is refused before anything is written.
    #[arg(long)]
    layout: Option<String>,
    /// The filter must be sized for this n (a Guava file: required, with --p).
    #[arg(long, value_parser = bloomlab_cli::count_parser("--n", 1))]
    n: Option<u64>,
    /// The filter must be sized for this p (a Guava file: required, with --n).
    #[arg(long, value_parser = bloomlab_cli::float_parser("--p"))]
    p: Option<f64>,
    /// Bits per shard on the server, a multiple of 512 up to 2^32. Default: the file's (a Guava
    /// file: 2^32 - 4096 on one server, 2^20 on a cluster). The bits are the same in any shard
    /// size.
    #[arg(long)]
    shard_bits: Option<u64>,
}

/// `filter export`.
pub fn export(a: &ExportArgs) -> Outcome {
    let mut conn = connect(&a.redis)?;
    // A generational filter exports its current generation.
    let name = super::follow(&mut conn, &a.name)?;
    let url = conn.url().to_owned();
    let bar = super::progress(Some(0));
    let stop = interrupt_flag();
    let summary = dump::export(conn, &name, &a.out, a.format.into(), &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
        keep_going(&stop)
    });
    bar.finish_and_clear();
    let s = match summary {
        Err(DumpError::Interrupted) => return Ok(interrupted("the file was not written")),
        other => other?,
    };
    println!(
        "exported {:?} from {url} to {}: {}",
        a.name,
        a.out.display(),
        describe(&s, a.format)?
    );
    Ok(ExitCode::SUCCESS)
}

/// `filter import`.
pub fn import(a: &ImportArgs) -> Outcome {
    let variant = a
        .layout
        .as_deref()
        .map(super::live::redis_variant)
        .transpose()?;
    if a.format == FileFormat::Guava && (a.n.is_none() || a.p.is_none()) {
        return Err(bad(format!(
            "--format guava needs --n and --p: a Guava file ({}) stores neither, only k and the bits",
            a.file.display()
        )));
    }
    check_readable(&a.file)?;
    let mut conn = connect(&a.redis)?;
    super::refuse_generational(
        &mut conn,
        &a.name,
        "imported",
        &format!(
            "To load the file as its next generation: `bloomlab filter swap --redis URL --name {} --from-file {}`",
            a.name,
            a.file.display()
        ),
    )?;
    let url = conn.url().to_owned();
    let opts = ImportOptions {
        format: a.format.into(),
        replace: a.replace,
        shard_bits: a.shard_bits,
        expected: Expected {
            variant,
            n: a.n,
            p: a.p,
        },
    };
    let bar = super::progress(Some(0));
    let stop = interrupt_flag();
    let summary = dump::import(conn, &a.name, &a.file, &opts, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
        keep_going(&stop)
    });
    bar.finish_and_clear();
    let s = match summary {
        Err(DumpError::Interrupted) => {
            return Ok(interrupted("what was loaded was deleted from the server"));
        }
        other => other?,
    };
    println!(
        "imported {} into {:?} at {url}: {}",
        a.file.display(),
        a.name,
        describe(&s, a.format)?
    );
    Ok(ExitCode::SUCCESS)
}

/// A flag Ctrl-C (SIGINT) sets, so that a transfer stops between chunks and cleans up (an
/// export's temporary file removed, an import's keys deleted; a swap's half-built generation
/// deleted) instead of dying mid-write. If no handler can be installed, Ctrl-C kills the process
/// as usual: an export leaves the old file whole, an import's keys expire within
/// `dump::LOAD_EXPIRY`, a swap's within its build expiry.
pub(super) fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = Arc::clone(&flag);
    let _ = ctrlc::set_handler(move || set.store(true, Ordering::Relaxed));
    flag
}

fn keep_going(stop: &AtomicBool) -> ControlFlow<()> {
    if stop.load(Ordering::Relaxed) {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
}

/// Exit status 130 after saying what an interruption left.
fn interrupted(what: &str) -> ExitCode {
    eprintln!("bloomlab: interrupted: {what}");
    ExitCode::from(130)
}

/// A missing or unreadable file is named before any server is contacted.
fn check_readable(path: &Path) -> Result<(), Failure> {
    bloomlab_redis::dump::open_filter_file(path)
        .map(drop)
        .map_err(|e| bad(format!("cannot open --file {}: {e}", path.display())))
}

/// The one-line summary: variant, size, shards, bytes, set bits, seconds.
pub(super) fn describe(s: &Summary, format: FileFormat) -> Result<String, Failure> {
    let c = &s.config;
    Ok(format!(
        "{}, n = {}, p = {}, {} bits, k = {}, {} shard(s) of {} bits; {} bytes in {} format ({} bytes of bits, {} set: fill {:.4}, implied false-positive rate {:.3e}); {:.2} s",
        c.variant_name()?,
        c.n,
        c.p,
        c.bits,
        c.hashes,
        c.shards,
        c.shard_bits,
        s.file_bytes,
        Format::from(format),
        s.payload_bytes,
        s.fill.set_bits,
        s.fill.fill(),
        s.fill.implied_fpr,
        s.seconds
    ))
}
