//! `create`, `add`, `check`, `drop` and `describe` on a filter in Redis.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use bloomlab_filters::BitPositions;
use bloomlab_harness::bloom::preflight::MemoryBudget;
use bloomlab_redis::admin::{self, KeyRole};
use bloomlab_redis::generation;
use bloomlab_redis::{Connection, RedisBloom, RedisFilterError, RedisVisitor};
use clap::Args;

use super::{Failure, KeySource, Outcome, Place, Target, bad, connect, for_each_batch};

/// Flags of `filter create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    #[command(flatten)]
    target: Target,
    /// The layout, hash and index scheme, as the catalogue names them: `blocked512/<hash>` (one
    /// round trip per key, the default) or `classic/<hash>/<index>`, with or without the `redis/`
    /// prefix; hashes fnv1a, murmur3, xxh3, xxh3-128, xxh64, lookup3; indexes km, edh, mitz64,
    /// mitz32. `classic/murmur3/mitz64` has Guava's bit positions. `sweep --list` prints every name.
    #[arg(long, default_value_t = super::default_variant())]
    layout: String,
    /// Expected distinct keys the filter is sized for, 1 to 2^53 (e.g. 1e6).
    #[arg(long, value_parser = bloomlab_cli::count_parser("--n", 1))]
    n: u64,
    /// Target false-positive rate at n keys, in the open interval (0, 1).
    #[arg(long, value_parser = bloomlab_cli::float_parser("--p"))]
    p: f64,
    /// Bits per shard (one Redis string each): a multiple of 512 up to 2^32. Default: 2^32 - 4096
    /// on one server (a filter of up to 512 MiB is one string), 2^20 on a cluster (so a filter
    /// spreads over every master).
    #[arg(long)]
    shard_bits: Option<u64>,
    /// Delete an existing bloomlab filter of this name first (never a key of another program).
    #[arg(long)]
    replace: bool,
}

/// Flags of `filter add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    #[command(flatten)]
    target: Target,
    #[command(flatten)]
    source: KeySource,
}

/// Flags of `filter check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    target: Target,
    #[command(flatten)]
    source: KeySource,
    /// Print only the totals (keys, maybe present, absent), not one answer per key.
    #[arg(long)]
    count: bool,
    /// The keys are members: every one must be found (exit 1 naming the first absent one).
    #[arg(long)]
    members: bool,
    /// A Parquet file (--file X.parquet): the column whose Bloom filters answer. Each answer
    /// line then has one field per row group: 1 may be there, 0 is not, - no filter.
    #[arg(long)]
    column: Option<String>,
}

/// Flags of `filter drop`.
#[derive(Debug, Args)]
pub struct DropArgs {
    #[command(flatten)]
    target: Target,
}

/// Flags of `filter describe`.
#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// Redis server URL, or the comma-separated URLs of a cluster's nodes.
    #[arg(long, value_name = "URL[,URL...]")]
    redis: String,
    /// A filter name, or one of its keys (`{NAME}:config`, `{NAME:i}:bits`).
    key: String,
}

/// The catalogue's Redis name for a `--layout` value (`redis/` prefix optional, a trailing
/// `/flat` dropped); an unknown one is an error listing every Redis variant.
pub fn redis_variant(layout: &str) -> Result<String, Failure> {
    let t = layout.trim();
    let t = t.strip_suffix("/flat").unwrap_or(t);
    let name = if t.starts_with("redis/") {
        t.to_owned()
    } else {
        format!("redis/{t}")
    };
    if bloomlab_redis::names().contains(&name) {
        Ok(name)
    } else {
        Err(bad(format!(
            "--layout {layout:?} is not a layout a Redis filter can have: it must be one of {}",
            bloomlab_redis::names().join(", ")
        )))
    }
}

fn redis_place(target: &Target, command: &str) -> Result<(String, String), Failure> {
    match target.place()? {
        Place::Redis { urls, name } => Ok((urls, name)),
        Place::File(p) => Err(bad(format!(
            "filter {command} works on a filter in Redis (--redis URL --name NAME), not a file ({})",
            p.display()
        ))),
    }
}

/// `filter create`.
pub fn create(a: &CreateArgs) -> Outcome {
    let (urls, name) = redis_place(&a.target, "create")?;
    let variant = redis_variant(&a.layout)?;
    let mut conn = connect(&urls)?;
    super::refuse_generational(
        &mut conn,
        &name,
        "created",
        &format!(
            "To rebuild it from keys: `bloomlab filter swap --redis URL --name {name} --keys FILE` (with --n, --p, --layout for a new size or layout)"
        ),
    )?;
    match admin::stored_config(&mut conn, &name) {
        Ok(existing) if a.replace => {
            admin::drop_filter(&mut conn, &name)?;
            eprintln!(
                "bloomlab: deleted the existing filter {name:?} ({}, n = {}, p = {})",
                existing.variant_name()?,
                existing.n,
                existing.p
            );
        }
        Ok(existing) => {
            return Err(bad(format!(
                "filter {name:?} already exists at {} ({}, n = {}, p = {}): choose another name, or --replace to delete it first",
                conn.url(),
                existing.variant_name()?,
                existing.n,
                existing.p
            )));
        }
        Err(RedisFilterError::NotFound { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let shard_bits = a.shard_bits.unwrap_or_else(|| conn.default_shard_bits());
    let made = bloomlab_redis::visit(
        &variant,
        Create {
            conn,
            name: &name,
            n: a.n,
            p: a.p,
            shard_bits,
        },
    )??;
    let c = made;
    println!(
        "created {name:?}: {variant}, n = {}, p = {}, {} bits, k = {}, {} shard(s) of {} bits",
        c.n, c.p, c.bits, c.hashes, c.shards, c.shard_bits
    );
    Ok(ExitCode::SUCCESS)
}

struct Create<'a> {
    conn: Connection,
    name: &'a str,
    n: u64,
    p: f64,
    shard_bits: u64,
}

impl RedisVisitor for Create<'_> {
    type Output = Result<bloomlab_redis::Config, Failure>;
    fn visit<F: BitPositions>(self) -> Self::Output {
        let f = RedisBloom::<F>::create_new(
            self.conn,
            self.name,
            self.n,
            self.p,
            self.shard_bits,
            None,
        )?;
        Ok(f.config().clone())
    }
}

/// What to do with an opened filter of any type ([`open_and`]).
trait OnFilter {
    fn run<F: BitPositions>(self, filter: RedisBloom<F>) -> Outcome;
}

struct Open<'a, T> {
    conn: Connection,
    name: &'a str,
    op: T,
}

impl<T: OnFilter> RedisVisitor for Open<'_, T> {
    type Output = Outcome;
    fn visit<F: BitPositions>(self) -> Outcome {
        let filter = RedisBloom::<F>::open(self.conn, self.name)?;
        self.op.run(filter)
    }
}

/// Opens filter `name` with its stored type and runs `op` on it.
/// A generational name is followed to its current generation ([`super::follow`]): that is the
/// filter its readers read, so `add` adds there.
fn open_and<T: OnFilter>(urls: &str, name: &str, op: T) -> Outcome {
    let mut conn = connect(urls)?;
    let name = &super::follow(&mut conn, name)?;
    let config = admin::stored_config(&mut conn, name)?;
    let variant = config.variant_name()?;
    bloomlab_redis::visit(&variant, Open { conn, name, op })?
}

/// `filter add`.
pub fn add(a: &AddArgs) -> Outcome {
    let (urls, name) = redis_place(&a.target, "add")?;
    open_and(&urls, &name, Add(&a.source))
}

struct Add<'a>(&'a KeySource);

impl OnFilter for Add<'_> {
    fn run<F: BitPositions>(self, mut filter: RedisBloom<F>) -> Outcome {
        let started = Instant::now();
        let batch = self.0.batch as usize;
        let count = for_each_batch(self.0, |keys| Ok(filter.insert_batch(keys, batch)?))?;
        let secs = started.elapsed().as_secs_f64();
        println!(
            "added {count} keys to {:?} in {secs:.2} s ({:.0} keys/s)",
            filter.name(),
            count as f64 / secs.max(1e-9)
        );
        Ok(ExitCode::SUCCESS)
    }
}

/// `filter check`.
pub fn check(a: &CheckArgs) -> Outcome {
    let parquet = super::parquet::Request::Check {
        column: a.column.as_deref(),
        source: &a.source,
        count: a.count,
        members: a.members,
    };
    if let Some(outcome) = super::parquet::run(&a.target, parquet) {
        return outcome;
    }
    match a.target.place()? {
        Place::File(path) => check_file(a, &path),
        Place::Redis { urls, name } => open_and(&urls, &name, Check(a)),
    }
}

struct Check<'a>(&'a CheckArgs);

impl OnFilter for Check<'_> {
    fn run<F: BitPositions>(self, mut filter: RedisBloom<F>) -> Outcome {
        let batch = self.0.source.batch as usize;
        let name = format!("{:?}", filter.name());
        answer(self.0, &name, |keys, found| {
            Ok(filter.contains_batch(keys, batch, &mut *found)?)
        })
    }
}

/// Answers `a`'s keys with `ask` (which reports each key of a batch by its index): one 1 or 0
/// per key, or the totals with --count; with --members a key absent is exit 1, naming its line.
fn answer(
    a: &CheckArgs,
    filter: &str,
    mut ask: impl FnMut(&[Vec<u8>], &mut dyn FnMut(usize, bool)) -> Result<(), Failure>,
) -> Outcome {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut present, mut seen) = (0u64, 0u64);
    let mut first_absent: Option<(u64, Vec<u8>)> = None;
    let mut write_err = None;
    let count = for_each_batch(&a.source, |keys| {
        ask(keys, &mut |i, hit| {
            present += u64::from(hit);
            if !hit && first_absent.is_none() {
                first_absent = Some((seen + i as u64 + 1, keys[i].clone()));
            }
            if !a.count
                && let Err(e) = out.write_all(if hit { b"1\n" } else { b"0\n" })
            {
                write_err.get_or_insert(e);
            }
        })?;
        seen += keys.len() as u64;
        Ok(())
    })?;
    if let Some(e) = write_err.or_else(|| out.flush().err()) {
        return Err(bad(format!(
            "cannot write the answers to standard output: {e}"
        )));
    }
    drop(out);
    if a.count {
        println!(
            "{count} keys: {present} maybe present, {} absent",
            count - present
        );
    }
    match first_absent {
        Some((line, key)) if a.members => Err(Failure::CheckFailed(format!(
            "{} of {count} member keys are not in {filter} (the first on line {line}: {}); a Bloom filter never forgets a key, so this is another filter, or its bits were lost",
            count - present,
            bloomlab_harness::keys::quote_prefix(&key)
        ))),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// `check --file` of a bloomlab filter file: its bits read whole and verified (after a memory
/// check against the file's size), keys answered as the filter in Redis would answer them.
fn check_file(a: &CheckArgs, path: &std::path::Path) -> Outcome {
    let shown = path.display().to_string();
    let mut head = [0u8; 16];
    let read = bloomlab_redis::dump::open_filter_file(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| bad(format!("cannot read {shown}: {e}")))?;
    if read != head.len() || &head != bloomlab_redis::dump::MAGIC {
        return Err(bad(format!(
            "check --file reads bloomlab's filter files (filter export, filter build) and Parquet files; {shown} is neither. For a Guava file use `bloomlab guava query --funnel ...`, which knows how Guava encoded the keys"
        )));
    }
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    if let MemoryBudget::Available(available) = MemoryBudget::detect(None)
        && size > available
    {
        return Err(bad(format!(
            "{shown} is {size} bytes, more than the {available} bytes of memory available (MemAvailable) to hold its bits: import it into Redis and check the keys there"
        )));
    }
    let (config, bits) = bloomlab_redis::dump::read_bits(path).map_err(|e| bad(e.to_string()))?;
    let variant = config.variant_name()?;
    let file = FileCheck {
        a,
        shown: &shown,
        config: &config,
        bits: &bits,
    };
    bloomlab_redis::visit(&variant, file)?
}

struct FileCheck<'a> {
    a: &'a CheckArgs,
    shown: &'a str,
    config: &'a bloomlab_redis::Config,
    bits: &'a [u8],
}

impl RedisVisitor for FileCheck<'_> {
    type Output = Outcome;
    fn visit<F: BitPositions>(self) -> Outcome {
        let (m, k, bits) = (self.config.bits, self.config.hashes, self.bits);
        answer(self.a, self.shown, |keys, found| {
            for (i, key) in keys.iter().enumerate() {
                let mut all = true;
                F::for_each_position(m, k, F::digest_of(key), |g| {
                    all &= bits[(g / 8) as usize] >> (g % 8) & 1 == 1;
                });
                found(i, all);
            }
            Ok(())
        })
    }
}

/// `filter drop`: everything under the name (every generation, a plain filter beside the
/// pointer, the list, the pointer), one line per filter and one for the generational keys.
pub fn drop_filter(a: &DropArgs) -> Outcome {
    let (urls, name) = redis_place(&a.target, "drop")?;
    let mut conn = connect(&urls)?;
    let dropped = generation::drop_all(&mut conn, &name)?;
    println!(
        "dropped {name:?} at {} ({} keys deleted)",
        conn.url(),
        dropped.keys()
    );
    for f in &dropped.filters {
        println!("  {} {:?} ({} keys)", f.role, f.name, f.keys);
    }
    if !dropped.generational_keys.is_empty() {
        println!("  {}", dropped.generational_keys.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

/// `filter describe`.
pub fn describe(a: &DescribeArgs) -> Outcome {
    let mut conn = connect(&a.redis)?;
    let key = describe_pointer(&mut conn, &a.key)?;
    let d = admin::describe(&mut conn, &key)?;
    let c = &d.config;
    let role = match d.role {
        KeyRole::Filter => format!("filter {:?}", d.name),
        KeyRole::Shard { index } => format!("shard {index} of filter {:?}", d.name),
    };
    let server = admin::server_figures(&mut conn, &d.name, c)?;
    println!("{}: {role} at {}", a.key, conn.url());
    println!("variant       {}", c.variant_name()?);
    for (field, value) in c.fields() {
        println!("{field:<13} {value}");
    }
    println!(
        "keys          {{{}}}:config, {{{}:0..{}}}:bits",
        d.name,
        d.name,
        c.shards - 1
    );
    println!(
        "expiry        {}",
        server
            .ttl_ms
            .map_or("none".to_owned(), |ms| format!("{:.1} s", ms as f64 / 1e3))
    );
    Ok(ExitCode::SUCCESS)
}

/// For a generational filter's name or pointer key (`{NAME}:current`), prints its generations
/// and returns the current one, which is then described; any other key is returned as it is.
fn describe_pointer(conn: &mut Connection, key: &str) -> Result<String, Failure> {
    let base = key
        .strip_prefix('{')
        .and_then(|k| k.strip_suffix("}:current"))
        .unwrap_or(key);
    if generation::check_base_name(base).is_err() {
        return Ok(key.to_owned());
    }
    let Some(current) = generation::current(conn, base)? else {
        return Ok(key.to_owned());
    };
    println!(
        "{key}: generational filter {base:?} at {} (pointer {})",
        conn.url(),
        generation::pointer_key(base)
    );
    for g in generation::generations(conn, base)? {
        let mark = if g.current { " (current)" } else { "" };
        println!("  generation {}{mark}: {:?}", g.name, g.lifetime);
    }
    Ok(current)
}
