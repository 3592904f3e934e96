//! The Rust half of `scripts/guava-timing.sh`: Guava's layout in bloomlab
//! (`classic/murmur3/mitz64/flat`, as the concrete type `Bloom<Murmur3, GuavaMitz64, FlatBits>`),
//! timed on request by the Java half (`scripts/java/GuavaTiming.java`), which times Guava 31.1 on
//! the same keys in the same run, part by part, alternating with this process.
//!
//! Usage: `guava_peer N P DIR`. Writes the key batches to `DIR/present.txt` and `DIR/absent.txt`
//! (one key per line), builds the filter from the keys `"article-content-hash-" + i`, i in 0..N
//! (the Java half builds the same keys itself), and prints
//! `ready <bits> <k> <present hits> <absent hits>`. Then it answers one line per request on stdin:
//! - `time <op>`, op `insert`, `lookup-present` or `lookup-absent`: one untimed pass over the
//!   op's batch (present keys for `insert`: re-inserting members, the state never changes), then
//!   one timed pass; prints the ns per key of the timed pass. The ops `lookup-present-early-exit`
//!   and `lookup-absent-early-exit` time the lookup that stops at the first clear bit, as Guava's
//!   `mightContain` does (`contains_digest_early_exit`), for comparing it paired with bloomlab's
//!   branch-free `contains` (the Java half does not ask for them);
//! - `quit`.
//!
//! The batches are those of `benches/bloom_vs_hashset` (same prefix, same seeds): up to 2^20
//! inserted keys drawn at random with repetition (present) and never-inserted keys, i in n..2n
//! (absent).

use std::hint::black_box;
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use bloomlab_filters::{Bloom, Filter, FlatBits, GuavaMitz64, Murmur3};
use bloomlab_harness::keys::StrBatch;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The ops `time` accepts.
const OPS: [&str; 5] = [
    "insert",
    "lookup-present",
    "lookup-absent",
    "lookup-present-early-exit",
    "lookup-absent-early-exit",
];

type Guava = Bloom<Murmur3, GuavaMitz64, FlatBits>;

const PREFIX: &str = "article-content-hash-";
/// `bloom_vs_hashset`'s seeds for the present and absent batches.
const SEED_PRESENT: u64 = 0x5EED_0001;
const SEED_ABSENT: u64 = 0x5EED_0002;
const MAX_BATCH: u64 = 1 << 20;

fn batch(n: u64, seed: u64, offset: u64) -> StrBatch {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut out = StrBatch::default();
    for _ in 0..n.min(MAX_BATCH) {
        out.push_indexed(PREFIX, offset + rng.random_range(0..n));
    }
    out
}

fn write_keys(path: &Path, keys: &[&str]) -> std::io::Result<()> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    for k in keys {
        writeln!(w, "{k}")?;
    }
    w.flush()
}

/// One timed pass of `op` over `keys`, after an untimed one: ns per key.
fn time(f: &mut Guava, op: &str, present: &[&str], absent: &[&str]) -> Result<f64, String> {
    let pass = |f: &mut Guava| -> (std::time::Duration, u64) {
        let mut acc = 0u64;
        let start = Instant::now();
        match op {
            "insert" => {
                for &k in present {
                    f.insert(black_box(k));
                }
            }
            "lookup-present" => {
                for &k in present {
                    acc += u64::from(f.contains(black_box(k)));
                }
            }
            "lookup-absent" => {
                for &k in absent {
                    acc += u64::from(f.contains(black_box(k)));
                }
            }
            "lookup-present-early-exit" => acc = early_exit(f, present),
            _ => acc = early_exit(f, absent),
        }
        (start.elapsed(), black_box(acc))
    };
    if !OPS.contains(&op) {
        return Err(format!("unknown op {op:?}: one of {}", OPS.join(", ")));
    }
    let len = if op.starts_with("lookup-absent") {
        absent.len()
    } else {
        present.len()
    };
    pass(f);
    let (elapsed, _) = pass(f);
    Ok(elapsed.as_secs_f64() * 1e9 / len as f64)
}

/// How many of `keys` the early-exit lookup reports present, one key at a time.
fn early_exit(f: &Guava, keys: &[&str]) -> u64 {
    keys.iter()
        .map(|&k| u64::from(f.contains_digest_early_exit(f.digest(black_box(k).as_bytes()))))
        .sum()
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [n, p, dir] = args.as_slice() else {
        return Err("usage: guava_peer N P DIR".into());
    };
    let n: u64 = n
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("N = {n:?} must be a positive integer"))?;
    let p: f64 = p
        .parse()
        .map_err(|_| format!("P = {p:?} is not a number"))?;
    let mut f = Guava::new(n, p).map_err(|e| e.to_string())?;
    let mut key = String::new();
    for i in 0..n {
        key.clear();
        key.push_str(PREFIX);
        key.push_str(&i.to_string());
        f.insert(key.as_str());
    }
    let present = batch(n, SEED_PRESENT, 0);
    let absent = batch(n, SEED_ABSENT, n);
    let present: Vec<&str> = present.iter().collect();
    let absent: Vec<&str> = absent.iter().collect();
    let dir = Path::new(dir);
    let io = |e: std::io::Error| format!("cannot write the keys to {}: {e}", dir.display());
    write_keys(&dir.join("present.txt"), &present).map_err(io)?;
    write_keys(&dir.join("absent.txt"), &absent).map_err(io)?;
    let hits = |keys: &[&str]| keys.iter().filter(|&&k| f.contains(k)).count();
    let geometry = f.geometry();
    let (bits, k) = match geometry {
        bloomlab_filters::Geometry::Flat { bits, hashes } => (bits, hashes),
        other => return Err(format!("unexpected geometry {other:?}")),
    };
    println!("ready {bits} {k} {} {}", hits(&present), hits(&absent));
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("time"), Some(op)) => println!("{}", time(&mut f, op, &present, &absent)?),
            (Some("quit"), _) | (None, _) => break,
            _ => return Err(format!("unknown request {line:?}: `time <op>` or `quit`")),
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("guava_peer: error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
