//! `bloomlab guava ...`: build, inspect, audit, union and query Guava `BloomFilter` files.

use std::borrow::Borrow;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use bloomlab_filters::error::Compact;
use bloomlab_filters::guava::{
    BytesFunnel, Funnel, GuavaBloom, GuavaSizing, GuavaStrategy, IntFunnel, LongFunnel, Utf8Funnel,
};
use bloomlab_harness::keys::{quote_prefix, read_key_line};
use bloomlab_harness::stats::{check_confidence, clopper_pearson};
use clap::{Args, Subcommand, ValueEnum};

pub use crate::Failure;

type Outcome = Result<(), Failure>;

fn bad(msg: impl Into<String>) -> Failure {
    Failure::BadInput(msg.into())
}

/// The Guava subcommands.
#[derive(Debug, Subcommand)]
pub enum GuavaCommand {
    /// Build a filter from a key file, exactly as Guava 31.1's `BloomFilter.create(funnel, n, p)`
    /// followed by `put` of every key and `writeTo` would.
    Build(BuildArgs),
    /// Print a filter file's strategy, k, size, fill, and Guava's `approximateElementCount()` and
    /// `expectedFpp()` for it.
    Inspect {
        /// The filter file (Guava's `writeTo` format).
        file: PathBuf,
    },
    /// Check a filter against what it should contain: every member must be found (a miss means the
    /// file is corrupt or was built from other keys or another funnel: exit 1), and the rate of
    /// false positives on the non-members is measured with its exact (Clopper-Pearson) interval
    /// and compared with Guava's `expectedFpp()` (an FPR significantly above it: exit 1). A filter
    /// with every bit set, or whose expectedFpp exceeds twice its design p (--p), fails too
    /// (exit 1): Guava's own estimate calls a saturated filter fine. An empty member or
    /// non-member file leaves nothing to check: exit 2.
    Audit(AuditArgs),
    /// Or two filters into a third, as Guava's `a.putAll(b)` then `a.writeTo(out)`. Both must have
    /// the same strategy, k and bit size. Guava also requires equal funnels, but a file does not
    /// record its funnel: make sure both were built with the same one.
    Union {
        /// First filter file.
        a: PathBuf,
        /// Second filter file.
        b: PathBuf,
        /// Where to write the union.
        #[arg(long)]
        out: PathBuf,
    },
    /// Print Guava's `mightContain` answer for each key of a key file, one `1` or `0` per line.
    Query {
        /// The filter file.
        file: PathBuf,
        /// How each key is read and hashed (--funnel).
        #[command(flatten)]
        funnel: FunnelArg,
        /// Key file, one key per line (format set by --funnel), each line at most 1048576 bytes
        /// (1 MiB).
        #[arg(long)]
        keys: PathBuf,
    },
}

/// Key encodings, Guava's funnels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FunnelKind {
    /// `Funnels.longFunnel()`: each line a decimal Java long (-9223372036854775808..=
    /// 9223372036854775807), hashed as 8 little-endian bytes.
    Long,
    /// `Funnels.integerFunnel()`: each line a decimal Java int (-2147483648..=2147483647), hashed
    /// as 4 little-endian bytes.
    Int,
    /// `Funnels.stringFunnel(UTF_8)`: each line's text (without its "\n" or "\r\n"), hashed as its
    /// raw UTF-8 bytes; an empty line is the empty string.
    Utf8,
    /// `Funnels.byteArrayFunnel()`: each line the key's bytes in hexadecimal, two digits per byte,
    /// either case (e.g. `00ff10`); an empty line is the empty byte array.
    Bytes,
}

/// The --funnel flag.
#[derive(Debug, Args)]
pub struct FunnelArg {
    /// How each key line is read and turned into hash input, as Guava's funnel of the same name
    /// does. The file does not record it: use the funnel the filter was built with.
    #[arg(long, value_enum)]
    funnel: FunnelKind,
}

/// Guava strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyKind {
    /// MURMUR128_MITZ_64 (ordinal 1), what `BloomFilter.create` uses since Guava 13.
    Mitz64,
    /// MURMUR128_MITZ_32 (ordinal 0), Guava before 13: positions never exceed 2^31 - 1, so bits
    /// beyond that in larger filters stay unused.
    Mitz32,
}

/// Guava's rules for k.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KRule {
    /// Guava 31.1 (the installed jar): k = max(1, round(m / n * ln 2)) from the unrounded m.
    Guava31,
    /// Current Guava sources (after google/guava issue 7346): k = max(1, round(-ln p / ln 2)).
    FromP,
}

/// Flags of `guava build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    funnel: FunnelArg,
    /// Expected insertions (Guava's expectedInsertions), a whole number from 1 to 2^53;
    /// scientific notation allowed (e.g. 1e6). Guava itself treats 0 as 1, which sizes a filter
    /// for one key that more keys saturate: 0 is refused. Putting more keys than n is reported
    /// on stderr with the filter's fill and implied FPP.
    #[arg(long, value_parser = |s: &str| bloomlab_cli::parse_count_named("--n", 1, s))]
    n: u64,
    /// Target false-positive probability, in the open interval (0, 1).
    #[arg(long)]
    p: f64,
    /// Key file, one key per line (format set by --funnel), each line at most 1048576 bytes
    /// (1 MiB); every key is put.
    #[arg(long)]
    keys: PathBuf,
    /// Where to write the filter (Guava's writeTo format).
    #[arg(long)]
    out: PathBuf,
    /// Hashing strategy.
    #[arg(long, value_enum, default_value = "mitz64")]
    strategy: StrategyKind,
    /// Which Guava rule picks k; the bit count is the same under both. Use guava31 to get the
    /// file Guava 31.1 (the installed jar) and earlier releases would write, from-p for Guava
    /// sources that compute k from p alone. A file stores k, so reading needs no rule.
    #[arg(long, value_enum, default_value = "guava31")]
    k_rule: KRule,
}

/// Flags of `guava audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The filter file.
    file: PathBuf,
    #[command(flatten)]
    funnel: FunnelArg,
    /// Keys that were put into the filter, one per line (each at most 1048576 bytes): every one
    /// must be found; the file must hold at least one.
    #[arg(long)]
    members: PathBuf,
    /// Keys that were never put, one per line (each at most 1048576 bytes): the share found is the
    /// observed FPR. A member in
    /// this file counts as a false positive, so keep the two sets disjoint.
    #[arg(long)]
    non_members: PathBuf,
    /// Confidence level of the FPR interval, in (0, 1). The FPR check fails when expectedFpp lies
    /// below the interval, which happens by chance with probability at most (1 - confidence) / 2.
    #[arg(long, default_value_t = 0.99)]
    confidence: f64,
    /// The false-positive probability the filter was built for (the fpp given to
    /// `BloomFilter.create`), in (0, 1). Default: 2^-k, the rate for which Guava picks the file's
    /// k. A filter whose expectedFpp exceeds twice this rate (more keys put than it was sized
    /// for), or whose every bit is set, fails the audit (exit 1), whatever the measured FPR.
    #[arg(long)]
    p: Option<f64>,
}

/// How far a filter's implied FPP (Guava's expectedFpp) may exceed its design p before the audit
/// calls it over-filled. At its design load a Guava filter's implied FPP is within a few percent
/// of p (e.g. 1.005 p at p = 0.01: k and m are rounded), and with 2^-k standing in for an
/// unknown p within a factor 2^0.5; the implied FPP doubles at about 14% more keys than designed
/// at k = 7 (its logarithm grows by about k ln 2 per unit of relative overload).
pub const OVERFILL_FACTOR: f64 = 2.0;

/// Why a filter is full beyond its design, if it is: every bit set, or an implied FPP above
/// [`OVERFILL_FACTOR`] x `design_p`. The text states the fill, the implied FPP and the design p.
pub fn overfill_finding(set_bits: u64, bits: u64, k: u32, design_p: f64) -> Option<String> {
    let fill = set_bits as f64 / bits as f64;
    let implied = fill.powf(f64::from(k));
    if set_bits >= bits {
        return Some(format!(
            "SATURATED: every one of the {bits} bits is set (fill 1), so every query answers \
             \"might contain\": implied FPP 1 against the design p = {design_p:.6e}"
        ));
    }
    (implied > OVERFILL_FACTOR * design_p).then(|| {
        format!(
            "OVER-FILLED: fill {fill:.6} with k = {k} implies an FPP of {implied:.6e}, more than \
             {OVERFILL_FACTOR} x the design p = {design_p:.6e}: more keys were put than the \
             filter was sized for"
        )
    })
}

/// Runs one Guava subcommand.
pub fn run(cmd: GuavaCommand) -> Outcome {
    match cmd {
        GuavaCommand::Build(args) => match args.funnel.funnel {
            FunnelKind::Long => build::<LongFunnel>(&args),
            FunnelKind::Int => build::<IntFunnel>(&args),
            FunnelKind::Utf8 => build::<Utf8Funnel>(&args),
            FunnelKind::Bytes => build::<BytesFunnel>(&args),
        },
        GuavaCommand::Inspect { file } => inspect(&file),
        GuavaCommand::Audit(args) => match args.funnel.funnel {
            FunnelKind::Long => audit::<LongFunnel>(&args),
            FunnelKind::Int => audit::<IntFunnel>(&args),
            FunnelKind::Utf8 => audit::<Utf8Funnel>(&args),
            FunnelKind::Bytes => audit::<BytesFunnel>(&args),
        },
        GuavaCommand::Union { a, b, out } => union(&a, &b, &out),
        GuavaCommand::Query { file, funnel, keys } => match funnel.funnel {
            FunnelKind::Long => query::<LongFunnel>(&file, &keys),
            FunnelKind::Int => query::<IntFunnel>(&file, &keys),
            FunnelKind::Utf8 => query::<Utf8Funnel>(&file, &keys),
            FunnelKind::Bytes => query::<BytesFunnel>(&file, &keys),
        },
    }
}

/// A funnel whose keys can be read from a line of a key file.
trait LineKey: Funnel {
    /// An owned key, borrowed as the funnel's item.
    type Owned: Borrow<Self::Item>;
    /// Parses one line (without its line ending); the error says what was expected.
    fn parse(line: &[u8]) -> Result<Self::Owned, String>;
}

fn line_text(line: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(line)
        .map_err(|e| format!("{} is not valid UTF-8 ({e})", quote_prefix(line)))
}

/// A key line quoted by its start only: an error never repeats a long line whole.
fn quoted(text: &str) -> String {
    quote_prefix(text.as_bytes())
}

impl LineKey for LongFunnel {
    type Owned = i64;
    fn parse(line: &[u8]) -> Result<i64, String> {
        let text = line_text(line)?;
        text.parse().map_err(|_| {
            format!(
                "{} is not a decimal Java long (in {}..={})",
                quoted(text),
                i64::MIN,
                i64::MAX
            )
        })
    }
}

impl LineKey for IntFunnel {
    type Owned = i32;
    fn parse(line: &[u8]) -> Result<i32, String> {
        let text = line_text(line)?;
        text.parse().map_err(|_| {
            format!(
                "{} is not a decimal Java int (in {}..={})",
                quoted(text),
                i32::MIN,
                i32::MAX
            )
        })
    }
}

impl LineKey for Utf8Funnel {
    type Owned = String;
    fn parse(line: &[u8]) -> Result<String, String> {
        line_text(line).map(str::to_owned)
    }
}

impl LineKey for BytesFunnel {
    type Owned = Vec<u8>;
    fn parse(line: &[u8]) -> Result<Vec<u8>, String> {
        let text = line_text(line)?;
        if text.len() % 2 != 0 {
            return Err(format!(
                "{} is not hexadecimal bytes: odd number of digits ({})",
                quoted(text),
                text.len()
            ));
        }
        // Byte pairs, checked digit by digit: `from_str_radix` alone would take "+f" as 0x0f, and
        // slicing the text at even offsets could cut a multi-byte character.
        line.chunks(2)
            .enumerate()
            .map(|(j, pair)| {
                let digit = |b: u8| char::from(b).to_digit(16);
                match (digit(pair[0]), digit(pair[1])) {
                    (Some(hi), Some(lo)) => Ok((hi * 16 + lo) as u8),
                    _ => Err(format!(
                        "{} is not hexadecimal bytes: {} at column {} is not a hex byte",
                        quoted(text),
                        quote_prefix(pair),
                        2 * j + 1
                    )),
                }
            })
            .collect()
    }
}

/// Calls `f` with each key of `path` and its 1-based line number; stops at the first bad line
/// with an error naming the file, the line number and the start of the text. Lines are read one
/// at a time up to [`bloomlab_harness::keys::MAX_KEY_BYTES`], so no line, however long, is held whole.
fn for_each_key<F: LineKey>(
    path: &Path,
    mut f: impl FnMut(u64, &F::Item) -> Outcome,
) -> Result<u64, Failure> {
    let file = File::open(path)
        .map_err(|e| bad(format!("cannot open key file {}: {e}", path.display())))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        let more = read_key_line(&mut reader, &mut line).map_err(|e| {
            bad(format!(
                "key file {} line {}: {e}",
                path.display(),
                number + 1
            ))
        })?;
        if !more {
            return Ok(number);
        }
        number += 1;
        let key = F::parse(&line).map_err(|e| {
            bad(format!(
                "{} line {number}: {e} (--funnel {})",
                path.display(),
                F::ID
            ))
        })?;
        f(number, key.borrow())?;
    }
}

/// Reads a whole filter file: at most the bytes its header implies plus one, whatever the file's
/// size ([`GuavaBloom::read_whole`]); a regular file's size is named in the error.
fn read_filter<F: Funnel>(path: &Path) -> Result<GuavaBloom<F>, Failure> {
    let file = bloomlab_redis::dump::open_filter_file(path)
        .map_err(|e| bad(format!("cannot read filter file {}: {e}", path.display())))?;
    let size = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    GuavaBloom::read_whole(BufReader::with_capacity(1 << 16, file)).map_err(|e| {
        bad(match size {
            Some(size) => format!("{} ({size} bytes): {e}", path.display()),
            None => format!("{}: {e}", path.display()),
        })
    })
}

/// Writes the filter to `path` whole or not at all (temporary file beside it, fsync, rename): a
/// full disk or any other failure leaves an earlier file at `path` byte for byte as it was.
fn write_filter<F: Funnel>(filter: &GuavaBloom<F>, path: &Path) -> Outcome {
    bloomlab_report::output::write_atomic_with(path, |out| filter.write_to(out))
        .map_err(|e| bad(format!("cannot write the filter: {e}")))
}

fn build<F: LineKey>(args: &BuildArgs) -> Outcome {
    let strategy = match args.strategy {
        StrategyKind::Mitz64 => GuavaStrategy::Murmur128Mitz64,
        StrategyKind::Mitz32 => GuavaStrategy::Murmur128Mitz32,
    };
    let sizing = match args.k_rule {
        KRule::Guava31 => GuavaSizing::FromBitsPerKey,
        KRule::FromP => GuavaSizing::FromFpp,
    };
    let mut filter = GuavaBloom::<F>::create_with(args.n, args.p, strategy, sizing)
        .map_err(|e| bad(e.to_string()))?;
    let keys = for_each_key::<F>(&args.keys, |_, key| {
        filter.put(key);
        Ok(())
    })?;
    write_filter(&filter, &args.out)?;
    if keys > args.n
        && let Some(finding) = overfill_finding(
            filter.bit_count(),
            filter.bit_size(),
            filter.hashes(),
            args.p,
        )
    {
        eprintln!(
            "warning: {keys} keys put into a filter built for n = {}: {finding}",
            args.n
        );
    }
    println!(
        "wrote {}: {}, k = {}, {} bits, {} keys put, {} bits set",
        args.out.display(),
        filter.strategy(),
        filter.hashes(),
        filter.bit_size(),
        keys,
        filter.bit_count()
    );
    Ok(())
}

fn inspect(path: &Path) -> Outcome {
    // The funnel does not affect anything inspect reports.
    let f = read_filter::<BytesFunnel>(path)?;
    let bits = f.bit_size();
    println!("file:                 {}", path.display());
    println!("strategy:             {}", f.strategy());
    println!("hash functions (k):   {}", f.hashes());
    println!("bits:                 {bits} ({} 64-bit words)", f.words());
    println!("set bits:             {}", f.bit_count());
    println!(
        "fill ratio:           {:.6}",
        f.bit_count() as f64 / bits as f64
    );
    match f.approximate_element_count() {
        Some(n) => println!("approx. element count: {n} (Guava's approximateElementCount)"),
        None => println!(
            "approx. element count: infinite: every bit is set (Guava's \
             approximateElementCount throws ArithmeticException)"
        ),
    }
    println!(
        "expected FPP:         {:.6e} (Guava's expectedFpp = fill ratio ^ k)",
        f.expected_fpp()
    );
    if f.strategy() == GuavaStrategy::Murmur128Mitz32 && bits > 1 << 31 {
        println!(
            "warning:              MURMUR128_MITZ_32 never sets a bit at or above 2^31, so {} of \
             the {bits} bits are unusable and the expected FPP above is too optimistic",
            bits - (1 << 31)
        );
    }
    Ok(())
}

fn audit<F: LineKey>(args: &AuditArgs) -> Outcome {
    check_confidence(args.confidence).map_err(bad)?;
    if let Some(p) = args.p
        && !(p > 0.0 && p < 1.0)
    {
        return Err(bad(format!(
            "--p = {} is invalid: the design false-positive probability must be in the open \
             interval (0, 1)",
            Compact(p)
        )));
    }
    let filter = read_filter::<F>(&args.file)?;
    let mut missing = Vec::new();
    let mut missing_count = 0u64;
    let members = for_each_key::<F>(&args.members, |line, key| {
        if !filter.might_contain(key) {
            missing_count += 1;
            if missing.len() < 10 {
                missing.push(line);
            }
        }
        Ok(())
    })?;
    if members == 0 {
        return Err(bad(format!(
            "member file {} has no keys: an audit checks that every member is found and needs at \
             least one",
            args.members.display()
        )));
    }
    let mut positives = 0u64;
    let trials = for_each_key::<F>(&args.non_members, |_, key| {
        positives += u64::from(filter.might_contain(key));
        Ok(())
    })?;
    if trials == 0 {
        return Err(bad(format!(
            "non-member file {} has no keys: the FPR needs at least one",
            args.non_members.display()
        )));
    }
    let expected = filter.expected_fpp();
    let observed = positives as f64 / trials as f64;
    let (low, high) = clopper_pearson(positives, trials, args.confidence);
    println!("file:         {}", args.file.display());
    println!(
        "filter:       {}, k = {}, {} bits, fill {:.6}",
        filter.strategy(),
        filter.hashes(),
        filter.bit_size(),
        filter.bit_count() as f64 / filter.bit_size() as f64
    );
    println!(
        "members:      {} found of {members}",
        members - missing_count
    );
    println!(
        "non-members:  {positives} false positives of {trials}: FPR {observed:.6e}, \
         {}% Clopper-Pearson interval [{low:.6e}, {high:.6e}]",
        Compact(args.confidence * 100.0)
    );
    println!("expected FPP: {expected:.6e} (Guava's expectedFpp)");
    let design_p = args
        .p
        .unwrap_or_else(|| 0.5f64.powi(filter.hashes() as i32));
    println!(
        "design p:     {design_p:.6e} ({})",
        if args.p.is_some() {
            "--p"
        } else {
            "2^-k: no --p given"
        }
    );
    if missing_count > 0 {
        let lines: Vec<String> = missing.iter().map(u64::to_string).collect();
        return Err(Failure::CheckFailed(format!(
            "CORRUPT: {missing_count} of {members} members are not in the filter (member file \
             lines {}{}); a Bloom filter never loses a key it was given, so the file is damaged \
             or was built from other keys or with another funnel than --funnel {}",
            lines.join(", "),
            if missing_count > 10 { ", ..." } else { "" },
            F::ID
        )));
    }
    let mut findings = Vec::new();
    if expected < low {
        findings.push(format!(
            "FPR {observed:.6e} is significantly above the expected FPP {expected:.6e}: the \
             interval [{low:.6e}, {high:.6e}] at confidence {} excludes it",
            Compact(args.confidence)
        ));
    }
    // Guava's expectedFpp is 1 for a saturated filter, so the FPR check alone passes it.
    findings.extend(overfill_finding(
        filter.bit_count(),
        filter.bit_size(),
        filter.hashes(),
        design_p,
    ));
    if !findings.is_empty() {
        return Err(Failure::CheckFailed(findings.join("; ")));
    }
    if expected > high {
        println!(
            "verdict:      OK (every member found); FPR significantly BELOW the expected FPP \
             (the interval excludes it from below)"
        );
    } else {
        println!(
            "verdict:      OK (every member found; the expected FPP lies in the FPR interval)"
        );
    }
    Ok(())
}

fn union(a: &Path, b: &Path, out: &Path) -> Outcome {
    let mut fa = read_filter::<BytesFunnel>(a)?;
    let fb = read_filter::<BytesFunnel>(b)?;
    fa.put_all(&fb)
        .map_err(|e| bad(format!("{} and {}: {e}", a.display(), b.display())))?;
    write_filter(&fa, out)?;
    println!(
        "wrote {}: {}, k = {}, {} bits, {} bits set",
        out.display(),
        fa.strategy(),
        fa.hashes(),
        fa.bit_size(),
        fa.bit_count()
    );
    Ok(())
}

fn query<F: LineKey>(file: &Path, keys: &Path) -> Outcome {
    let filter = read_filter::<F>(file)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let write_err = |e: std::io::Error| bad(format!("cannot write to standard output: {e}"));
    for_each_key::<F>(keys, |_, key| {
        out.write_all(if filter.might_contain(key) {
            b"1\n"
        } else {
            b"0\n"
        })
        .map_err(write_err)
    })?;
    out.flush().map_err(write_err)
}
