//! `filter swap`: rebuild a generational filter from a key file and switch its readers at once
//! (`bloomlab_redis::generation`), optionally measured under concurrent readers.

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use bloomlab_filters::BitPositions;
use bloomlab_harness::keys::read_key_line;
use bloomlab_redis::dump::{Expected, Format, ImportOptions};
use bloomlab_redis::generation::{
    self, GenerationError, Lifetime, ReaderPlan, SwapOptions, SwapOutcome, SwapUnderReaders,
};
use bloomlab_redis::{Config, RedisVisitor};
use clap::Args;

use super::live::redis_variant;
use super::{Failure, Outcome, Place, Target, bad, connect};

/// The most probe keys `--probe-keys` may hold (each reader looks up all of them, in batches).
pub const MAX_PROBE_KEYS: usize = 1_000_000;

/// Flags of `filter swap`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").args(["keys", "from_file", "list"])))]
pub struct SwapArgs {
    #[command(flatten)]
    target: Target,
    /// The new generation's keys, one per line (the line's bytes without `\n` or `\r\n`), each at
    /// most 1 MiB. `-` or absent (without --from-file or --list): standard input. A file that
    /// cannot be read to its end switches nothing.
    #[arg(long, value_name = "PATH")]
    keys: Option<PathBuf>,
    /// Load the new generation from a filter file written by `filter export` (bloomlab's format)
    /// instead of building it from keys: its layout, n and p are the file's (--layout, --n, --p,
    /// if given, must match them). A damaged or truncated file switches nothing.
    #[arg(long, value_name = "PATH")]
    from_file: Option<PathBuf>,
    /// Only list the generations (the current one first) with their expiries; change nothing.
    #[arg(long)]
    list: bool,
    /// The new generation's layout (as `filter create` names it). Default: the current
    /// generation's, or `blocked512/xxh3` for a first generation.
    #[arg(long)]
    layout: Option<String>,
    /// Expected distinct keys of the new generation, 1 to 2^53. Default: the current
    /// generation's n (required for a first generation).
    #[arg(long, value_parser = bloomlab_cli::count_parser("--n", 1))]
    n: Option<u64>,
    /// Target false-positive rate of the new generation, in (0, 1). Default: the current
    /// generation's p (required for a first generation).
    #[arg(long, value_parser = bloomlab_cli::float_parser("--p"))]
    p: Option<f64>,
    /// Bits per shard, a multiple of 512 up to 2^32. Default: the current generation's, else
    /// 2^32 - 4096 on one server and 2^20 on a cluster.
    #[arg(long)]
    shard_bits: Option<u64>,
    /// Seconds the old generation stays readable after the switch, 1 to 2592000 (30 days).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=2_592_000))]
    grace: u64,
    /// Seconds a half-built generation lives if the build is killed (re-armed while it runs),
    /// 10 to 86400.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(10..=86_400))]
    build_expiry: u64,
    /// Keys per pipelined round trip, 1 to 65536.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=65536))]
    batch: u32,
    /// If NAME is a plain filter (no pointer yet), make it the old generation: it is replaced and
    /// expires after the grace period. Without this flag such a swap is refused. With --readers
    /// the pointer is set to the plain filter before the build, so the readers have a generation
    /// to follow.
    #[arg(long)]
    adopt: bool,
    /// Measure the swap: this many reader threads (1 to 256) look up --probe-keys from the
    /// current generation in a loop while the swap runs, and the lookups, false negatives and
    /// generation changes they saw are printed. A false negative, or a reader that never reached
    /// the new generation, exits 1.
    #[arg(long, requires = "probe_keys", value_parser = clap::value_parser!(u32).range(1..=256))]
    readers: Option<u32>,
    /// Keys that are members of both the current and the new generation, one per line (at most
    /// 1,000,000), for --readers.
    #[arg(long, value_name = "PATH", requires = "readers")]
    probe_keys: Option<PathBuf>,
    /// Keys per reader batch (one pointer read per batch), 1 to 65536.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65536))]
    reader_batch: u32,
}

/// Keys the reading thread of [`KeyLines`] may hold ahead of the swap (bounds its memory).
const READ_AHEAD: usize = 16_384;

/// How often [`KeyLines`] looks at the interrupt while its source sends nothing.
const INTERRUPT_POLL: Duration = Duration::from_millis(100);

/// The lines of a key file (or standard input) as keys; a line that cannot be read is an error
/// naming the file and the line, which stops the swap before anything is switched.
///
/// The lines are read on a thread of their own, so that an interrupt is seen within
/// [`INTERRUPT_POLL`] even while the source sends nothing (a producer on a pipe that stalls):
/// the swap then deletes what it built instead of waiting for a line that may never come.
struct KeyLines {
    lines: mpsc::Receiver<io::Result<Vec<u8>>>,
    stop: Option<Arc<AtomicBool>>,
}

impl KeyLines {
    /// Opens `path` (`-`: standard input); an error naming the file if it cannot be opened.
    /// `stop`, once set, makes the next key an error (see [`SwapOptions::interrupt`]).
    fn open(path: &Path, stop: Option<Arc<AtomicBool>>) -> Result<Self, Failure> {
        let (opened_tx, opened) = mpsc::channel();
        let (tx, lines) = mpsc::sync_channel(READ_AHEAD);
        let path = path.to_owned();
        // Detached: it ends at the end of its source, or at its next line once the swap is
        // over (the receiver dropped), or with the process.
        std::thread::spawn(move || {
            let super::KeyReader {
                mut reader, label, ..
            } = match super::open_keys(Some(&path)) {
                Ok(r) => r,
                Err(e) => {
                    let _ = opened_tx.send(Err(e));
                    return;
                }
            };
            let _ = opened_tx.send(Ok(()));
            for line in 1u64.. {
                let mut key = Vec::new();
                let item = match read_key_line(&mut reader, &mut key) {
                    Ok(true) => Ok(key),
                    Ok(false) => return,
                    Err(e) => Err(io::Error::other(format!("{label}, line {line}: {e}"))),
                };
                let failed = item.is_err();
                if tx.send(item).is_err() || failed {
                    return;
                }
            }
        });
        opened
            .recv()
            .map_err(|_| bad("the thread reading the keys ended before opening them"))??;
        Ok(Self { lines, stop })
    }
}

impl Iterator for KeyLines {
    type Item = io::Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
            {
                return Some(Err(io::Error::new(
                    io::ErrorKind::Interrupted,
                    "interrupted (Ctrl-C)",
                )));
            }
            match self.lines.recv_timeout(INTERRUPT_POLL) {
                Ok(item) => return Some(item),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    }
}

/// `filter swap`.
pub fn swap(a: &SwapArgs) -> Outcome {
    let (urls, name) = match a.target.place()? {
        Place::Redis { urls, name } => (urls, name),
        Place::File(p) => {
            return Err(bad(format!(
                "filter swap works on a filter in Redis (--redis URL --name NAME), not a file ({})",
                p.display()
            )));
        }
    };
    generation::check_base_name(&name)?;
    // Ctrl-C sets it, and the swap then deletes what it built and switches nothing (issue 64: it
    // used to die there, leaving the half-built generation and its name on the list). Unset if
    // no handler can be installed: Ctrl-C then kills, and the build expiry removes the keys.
    let stop = (!a.list).then(super::dump::interrupt_flag);
    // Opened first: a key file that cannot be opened is refused before anything is sent.
    let keys = if a.from_file.is_none() && !a.list {
        Some(KeyLines::open(
            a.keys.as_deref().unwrap_or(Path::new("-")),
            stop.clone(),
        )?)
    } else {
        None
    };
    let mut conn = connect(&urls)?;
    if a.list {
        return list(&mut conn, &name);
    }
    let current = current_config(&mut conn, &name, a.adopt)?;
    if a.adopt && a.readers.is_some() && current.is_some() {
        // Readers follow the pointer: adopt the plain filter now (its readers by name are
        // unaffected) so that they have a generation to read while the new one is built.
        match generation::adopt(&mut conn, &name) {
            Ok(()) | Err(GenerationError::AlreadyGenerational { .. }) => {}
            Err(e) => return Err(Failure::from(e)),
        }
    }
    let variant = match (&a.layout, &current) {
        (Some(l), _) => Some(redis_variant(l)?),
        (None, Some(c)) if a.from_file.is_none() => Some(c.variant_name()?),
        (None, None) if a.from_file.is_none() => Some(super::default_variant()),
        // From a file: the file's, checked against the current one's when readers measure.
        (None, _) => None,
    };
    let (n, p) = match (a.n, a.p, &current) {
        (Some(n), Some(p), _) => (n, p),
        (n, p, Some(c)) => (n.unwrap_or(c.n), p.unwrap_or(c.p)),
        // From a file: the file's (n, p); these are not used.
        _ if a.from_file.is_some() => (1, 0.5),
        _ => {
            return Err(bad(
                "a first generation needs --n N and --p P (there is no current generation to take them from)",
            ));
        }
    };
    let mut options = SwapOptions::new(n, p);
    options.shard_bits = a.shard_bits.or(current
        .as_ref()
        .filter(|_| a.from_file.is_none())
        .map(|c| c.shard_bits));
    options.grace = Duration::from_secs(a.grace);
    options.build_expiry = Duration::from_secs(a.build_expiry);
    options.per_round_trip = a.batch as usize;
    options.adopt_plain = a.adopt;
    options.interrupt = stop.clone();
    // Readers read both generations with the current one's type.
    let reader_variant = match (&a.probe_keys, &current) {
        (Some(_), Some(c)) => {
            let old_variant = c.variant_name()?;
            if let Some(v) = variant.as_ref().filter(|v| **v != old_variant) {
                return Err(bad(format!(
                    "--readers read the current generation ({old_variant}) and the new one ({v}) with one type: measure a swap that keeps the layout"
                )));
            }
            Some(old_variant)
        }
        (Some(_), None) => {
            return Err(bad(format!(
                "--readers need a current generation to read while the swap runs, and {name:?} has none yet: swap in a first generation, then measure the next swap"
            )));
        }
        (None, _) => None,
    };
    let readers = match (&a.probe_keys, a.readers) {
        (Some(path), Some(r)) => {
            let mut plan = ReaderPlan::new(r as usize);
            plan.batch = a.reader_batch as usize;
            plan.per_round_trip = a.reader_batch as usize;
            Some((read_probes(path)?, plan))
        }
        _ => None,
    };
    let source = match (keys, &a.from_file) {
        (Some(keys), _) => Source::Keys(keys),
        (None, Some(path)) => Source::File {
            path,
            import: ImportOptions {
                format: Format::Bloomlab,
                replace: false,
                shard_bits: a.shard_bits,
                expected: Expected {
                    variant: variant.clone().or(reader_variant.clone()),
                    n: a.n,
                    p: a.p,
                },
            },
        },
        (None, None) => {
            return Err(bad(
                "give --keys PATH (or keys on standard input), --from-file PATH or --list",
            ));
        }
    };
    let run = Run {
        urls: &urls,
        name: &name,
        source,
        options: &options,
        readers,
    };
    let typed = reader_variant
        .or(variant)
        .unwrap_or_else(super::default_variant);
    let done = match bloomlab_redis::visit(&typed, run)? {
        Ok(done) => done,
        Err(e @ GenerationError::Interrupted { .. }) => {
            eprintln!("bloomlab: {e}");
            return Ok(ExitCode::from(130));
        }
        Err(e) => return Err(Failure::from(e)),
    };
    if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
        eprintln!("bloomlab: Ctrl-C came after the switch: the swap below is complete");
    }
    let shown = done_swap(&done).config.variant_name()?;
    report(conn.url(), &shown, &done)
}

/// `filter swap --list`: the generations, current first, with their expiries.
fn list(conn: &mut bloomlab_redis::Connection, name: &str) -> Outcome {
    let gens = generation::generations(conn, name)?;
    if !gens.iter().any(|g| g.current) {
        return Err(Failure::from(GenerationError::NoPointer {
            url: conn.url().to_owned(),
            name: name.to_owned(),
            key: generation::pointer_key(name),
        }));
    }
    println!("generational filter {name:?} at {}", conn.url());
    for g in gens {
        let what = match &g.config {
            Some(c) => format!(
                "{}, n = {}, p = {}, {} bits, {} shard(s)",
                c.variant_name()?,
                c.n,
                c.p,
                c.bits,
                c.shards
            ),
            None => "no config".into(),
        };
        let life = match g.lifetime {
            Lifetime::Persistent => "persistent".to_owned(),
            Lifetime::Expiring(t) => format!("expires in {:.1} s", t.as_secs_f64()),
            Lifetime::Gone => "gone".to_owned(),
        };
        println!(
            "{} {} ({what}; {life})",
            if g.current { "current" } else { "old    " },
            g.name
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The current generation's config (or, with `adopt`, a plain filter's), if there is one.
fn current_config(
    conn: &mut bloomlab_redis::Connection,
    name: &str,
    adopt: bool,
) -> Result<Option<Config>, Failure> {
    match generation::resolve(conn, name) {
        Ok((_, c)) => Ok(Some(c)),
        Err(GenerationError::NoPointer { url, key, .. }) => {
            match bloomlab_redis::admin::stored_config(conn, name) {
                Ok(c) if adopt => Ok(Some(c)),
                // Refused before anything is read or sent: the library would refuse it too.
                Ok(_) => Err(Failure::from(GenerationError::PlainExists {
                    url,
                    name: name.to_owned(),
                    key,
                })),
                Err(bloomlab_redis::RedisFilterError::NotFound { .. }) => Ok(None),
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(Failure::from(e)),
    }
}

/// The probe keys, all in memory (at most [`MAX_PROBE_KEYS`]).
fn read_probes(path: &Path) -> Result<Vec<Vec<u8>>, Failure> {
    let mut probes = Vec::new();
    for key in KeyLines::open(path, None)? {
        probes.push(key.map_err(|e| bad(format!("--probe-keys: {e}")))?);
        if probes.len() > MAX_PROBE_KEYS {
            return Err(bad(format!(
                "--probe-keys {} holds more than {MAX_PROBE_KEYS} keys, the most a measurement reads",
                path.display()
            )));
        }
    }
    if probes.is_empty() {
        return Err(bad(format!("--probe-keys {} holds no key", path.display())));
    }
    Ok(probes)
}

/// Where the new generation comes from.
enum Source<'a> {
    Keys(KeyLines),
    File {
        path: &'a Path,
        import: ImportOptions,
    },
}

/// The swap, run with a concrete type: the new generation's (keys), or the readers' (the
/// current generation's).
struct Run<'a> {
    urls: &'a str,
    name: &'a str,
    source: Source<'a>,
    options: &'a SwapOptions,
    readers: Option<(Vec<Vec<u8>>, ReaderPlan)>,
}

/// What ran: the swap alone, or the swap under readers.
enum Done {
    Swap(SwapOutcome),
    Measured(SwapUnderReaders),
}

fn done_swap(done: &Done) -> &SwapOutcome {
    match done {
        Done::Swap(s) => s,
        Done::Measured(m) => &m.swap,
    }
}

impl Run<'_> {
    fn swap<F: BitPositions>(self) -> generation::Result<SwapOutcome> {
        match self.source {
            Source::Keys(keys) => {
                generation::swap::<F, _, _>(self.urls, self.name, keys, self.options)
            }
            Source::File { path, import } => {
                generation::swap_from_file(self.urls, self.name, path, &import, self.options)
            }
        }
    }
}

impl RedisVisitor for Run<'_> {
    type Output = generation::Result<Done>;
    fn visit<F: BitPositions>(mut self) -> Self::Output {
        match self.readers.take() {
            None => self.swap::<F>().map(Done::Swap),
            Some((probes, plan)) => {
                let (urls, name) = (self.urls, self.name);
                generation::swap_under_readers::<F, _>(urls, name, &probes, &plan, || {
                    self.swap::<F>()
                })
                .map(Done::Measured)
            }
        }
    }
}

/// Prints what the swap did (and what the readers saw); exit 1 if a reader saw a false
/// negative or never reached the new generation.
fn report(url: &str, variant: &str, done: &Done) -> Outcome {
    let s = done_swap(done);
    let c = &s.config;
    println!("swapped {:?} at {url}", s.name);
    println!(
        "new generation  {} ({variant}, n = {}, p = {}, {} bits, k = {}, {} shard(s))",
        s.new_generation, c.n, c.p, c.bits, c.hashes, c.shards
    );
    match &s.old_generation {
        Some(old) => println!(
            "old generation  {old} (expires in {} s)",
            s.grace.as_secs_f64()
        ),
        None => println!("old generation  none (first generation)"),
    }
    if s.keys_inserted == 0 {
        println!(
            "build           loaded from a filter file in {:.2} s, every key present and persistent before the switch",
            s.build.as_secs_f64()
        );
    } else {
        println!(
            "build           {} keys in {:.2} s, {} sampled keys checked before the switch",
            s.keys_inserted,
            s.build.as_secs_f64(),
            s.verified
        );
    }
    let Done::Measured(m) = done else {
        return Ok(ExitCode::SUCCESS);
    };
    println!(
        "readers         {} threads, {} lookups of member keys, {} false negatives, {} of {} on the new generation at the end",
        m.readers.len(),
        m.queries(),
        m.false_negatives(),
        m.readers_on_new(),
        m.readers.len()
    );
    for (i, r) in m.readers.iter().enumerate() {
        println!(
            "  reader {i}: {} lookups in {} batches, {} false negatives, {} generation change(s), {} batch(es) asked again after a switch",
            r.queries, r.batches, r.false_negatives, r.generation_changes, r.reasked_batches
        );
    }
    if m.false_negatives() > 0 {
        return Err(Failure::CheckFailed(format!(
            "{} false negatives among {} lookups of member keys during the swap",
            m.false_negatives(),
            m.queries()
        )));
    }
    if m.readers_on_new() < m.readers.len() {
        return Err(Failure::CheckFailed(format!(
            "{} of {} readers did not reach the new generation before the deadline",
            m.readers.len() - m.readers_on_new(),
            m.readers.len()
        )));
    }
    Ok(ExitCode::SUCCESS)
}
