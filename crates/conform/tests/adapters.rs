//! The process adapters of `scripts/conform/`: the four libraries (pybloom-live, rbloom,
//! bloom-filters, Guava 31.1) and the two reference adapters (exact-set, null), each started
//! through `scripts/conform/adapter NAME` and driven by [`ProcessCandidate`], exactly as the CLI
//! starts them.
//!
//! Each test checks: the handshake declares the expected name and a non-empty version; members
//! inserted (random 8-byte keys, plus an empty and a 64 KiB key) are all found; non-members give a
//! rate below 10 x p; the serialization round trip, where declared, answers as the original did;
//! STATS, where declared, gives the library's layout.
//!
//! The 10 x p bound is a sanity check that the adapter drives the filter it claims (keys reach the
//! hash intact, answers are not inverted), not the promised-rate clause (the suite's clause 2).
//! For a filter at its promise the false positives among Q = 4096 queries are Binomial(Q, p'),
//! p' <= p; by the Chernoff bound P(X >= 10 Q p) <= exp(-(10 ln 10 - 9) Q p) = exp(-575) at
//! p = 1%, so a correct adapter fails it with probability below 1e-249 (and the keys are seeded:
//! a run is reproducible).
//!
//! The `no_false_negatives_*` tests run clause 1 (no false negatives) of the suite's
//! `Plan::quick()` (at its promised point, without the hunt) on each library, print its readable
//! verdict and assert that it holds; on the
//! null adapter they assert that the suite finds it broken (it answers "absent" to all). The other
//! clauses are what the report is for, not a test's gate: the whole quick pass on every library is
//! `bloomlab conform --quick --all`, which CI runs (node's bloom-filters alone takes about 100 s
//! of it, 67 s in the key-families clause, so running it here as well would double that).
//!
//! When an adapter's libraries are not installed (`scripts/conform/adapter --check NAME` exits 2)
//! its test prints `skipped: ...` and passes, unless `BLOOMLAB_REQUIRE_SERVICES=1` (CI), where it
//! fails naming what is missing. Install them with `scripts/conform-deps.sh`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bloomlab_conform::keys::Family;
use bloomlab_conform::process::{Command, ProcessCandidate};
use bloomlab_conform::{Candidate, Clause, Declared, Instance, KeyBatch, Outcome, Plan};

/// Keys built into each filter.
const N: u64 = 2000;
/// The promised rate each filter is built for.
const P: f64 = 0.01;
/// Non-member queries of the sanity bound.
const QUERIES: u64 = 4096;
/// Keys per INSERT/QUERY request.
const BATCH: usize = 1000;
/// Seed of every key set here.
const SEED: u64 = 0x0ada_9707;

/// What an adapter answers for, in its own terms.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// A Bloom filter declaring this layout in STATS (`None`: an exact set, no false positive).
    Filter(Option<Layout>),
    /// The null adapter: keeps nothing, answers "absent" to everything (it measures the
    /// protocol's cost; it fails clause 1 by design).
    Null,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Layout {
    Classic,
    Partitioned,
}

struct Expect {
    /// The launcher's NAME.
    adapter: &'static str,
    /// The name its HELLO declares.
    name: &'static str,
    kind: Kind,
    /// Whether it declares `serialize`.
    serialize: bool,
}

fn launcher() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/conform/adapter")
}

fn require_services() -> bool {
    std::env::var("BLOOMLAB_REQUIRE_SERVICES").is_ok_and(|v| v == "1")
}

/// The adapter's candidate, or `None` (after printing `skipped: ...`) when its libraries are not
/// installed and CI does not require them.
fn connect(adapter: &str) -> Option<ProcessCandidate> {
    let check = std::process::Command::new(launcher())
        .args(["--check", adapter])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", launcher().display()));
    if !check.status.success() {
        let why = String::from_utf8_lossy(&check.stderr).trim().to_string();
        assert!(
            !require_services(),
            "adapter {adapter} is not installed and BLOOMLAB_REQUIRE_SERVICES=1: {why}"
        );
        // The launcher's message already ends by naming the installer: say it once.
        let why = why
            .trim_end_matches("(run scripts/conform-deps.sh)")
            .trim_end();
        println!("skipped: the {adapter} adapter: {why} (run scripts/conform-deps.sh)");
        return None;
    }
    let command = Command {
        argv: vec![launcher().into_os_string(), OsString::from(adapter)],
        timeout: Duration::from_secs(60),
    };
    Some(
        ProcessCandidate::connect(command)
            .unwrap_or_else(|e| panic!("the {adapter} adapter failed to start: {e}")),
    )
}

/// Keys `start..start + len` of the random family, plus (for `extra`) an empty and a 64 KiB key.
fn keys(start: u64, len: usize, extra: bool) -> KeyBatch {
    let mut batch = KeyBatch::new();
    Family::RandomU64.fill(SEED, start, len, &mut batch);
    if extra {
        batch.push(b"");
        batch.push(&vec![0xa5; 64 << 10]);
    }
    batch
}

/// Every answer for keys `range` (plus the extra keys after the members), `BATCH` at a time.
fn answers(instance: &mut dyn Instance, range: std::ops::Range<u64>, extra: bool) -> Vec<bool> {
    let mut all = Vec::new();
    let mut out = Vec::new();
    let mut at = range.start;
    while at < range.end {
        let len = (range.end - at).min(BATCH as u64) as usize;
        let last = at + len as u64 == range.end;
        let batch = keys(at, len, extra && last);
        instance.query(&batch, &mut out).expect("QUERY");
        assert_eq!(out.len(), batch.len(), "answers to {} keys", batch.len());
        all.extend_from_slice(&out);
        at += len as u64;
    }
    all
}

fn insert_members(instance: &mut dyn Instance) {
    let mut at = 0;
    while at < N {
        let len = (N - at).min(BATCH as u64) as usize;
        let batch = keys(at, len, at + len as u64 == N);
        instance.insert(&batch).expect("INSERT");
        at += len as u64;
    }
}

fn check_adapter(expect: &Expect) {
    let Some(candidate) = connect(expect.adapter) else {
        return;
    };
    let about = candidate.about();
    let adapter = expect.adapter;
    assert_eq!(about.name, expect.name, "{adapter}: HELLO's name");
    assert!(
        !about.version.trim().is_empty(),
        "{adapter}: HELLO's version is empty"
    );
    assert_eq!(
        about.capabilities.serialize, expect.serialize,
        "{adapter}: declares serialize"
    );
    let mut filter = candidate
        .build(N, P)
        .unwrap_or_else(|e| panic!("{adapter}: CREATE n = {N}, p = {P}: {e}"));
    insert_members(filter.as_mut());
    let members = answers(filter.as_mut(), 0..N, true);
    let others = answers(filter.as_mut(), N..N + QUERIES, false);
    let positives = others.iter().filter(|&&a| a).count() as u64;
    let found = members.iter().filter(|&&a| a).count();
    match expect.kind {
        Kind::Null => {
            assert_eq!(
                found + positives as usize,
                0,
                "{adapter}: the null adapter answered present"
            );
            return;
        }
        Kind::Filter(layout) => {
            let missed: Vec<usize> = (0..members.len()).filter(|&i| !members[i]).collect();
            assert!(
                missed.is_empty(),
                "{adapter}: {} false negatives of {} members (n = {N}, p = {P}, seed = {SEED:#x}; \
                 indices {:?}; index {N} is the empty key, {} the 64 KiB key)",
                missed.len(),
                members.len(),
                &missed[..missed.len().min(10)],
                N + 1
            );
            let bound = 10.0 * P * QUERIES as f64;
            assert!(
                (positives as f64) < bound,
                "{adapter}: {positives} false positives of {QUERIES} non-members, bound 10 x p x Q \
                 = {bound} (n = {N}, p = {P}, seed = {SEED:#x})"
            );
            if layout.is_none() {
                assert_eq!(
                    positives, 0,
                    "{adapter}: an exact set answered a non-member present"
                );
            }
            check_stats(adapter, filter.as_mut(), layout);
        }
    }
    if expect.serialize {
        let bytes = filter
            .serialize()
            .unwrap_or_else(|e| panic!("{adapter}: SERIALIZE: {e}"))
            .unwrap_or_else(|| panic!("{adapter}: declares serialize but SERIALIZE gave nothing"));
        let mut back = candidate
            .deserialize(&bytes)
            .unwrap_or_else(|e| panic!("{adapter}: DESERIALIZE of its {} bytes: {e}", bytes.len()));
        assert_eq!(
            answers(back.as_mut(), 0..N, true),
            members,
            "{adapter}: members' answers changed through SERIALIZE/DESERIALIZE ({} bytes)",
            bytes.len()
        );
        assert_eq!(
            answers(back.as_mut(), N..N + QUERIES, false),
            others,
            "{adapter}: non-members' answers changed through SERIALIZE/DESERIALIZE"
        );
    }
}

/// STATS of a library declares its layout, with a bit count near (-n ln p / ln^2 2) and a hash
/// count near log2(1/p), as each of these libraries sizes itself (rounding aside).
fn check_stats(adapter: &str, filter: &mut dyn Instance, layout: Option<Layout>) {
    let Some(layout) = layout else {
        return;
    };
    let stats = filter
        .stats()
        .unwrap_or_else(|e| panic!("{adapter}: STATS: {e}"));
    let (bits, hashes, got) = match stats.layout {
        Some(Declared::Classic { bits, hashes }) => (bits, hashes, Layout::Classic),
        Some(Declared::Partitioned { bits, hashes }) => (bits, hashes, Layout::Partitioned),
        other => panic!("{adapter}: STATS declares {other:?}, expected {layout:?}"),
    };
    assert_eq!(got, layout, "{adapter}: declared layout");
    let optimal = -(N as f64) * P.ln() / std::f64::consts::LN_2.powi(2);
    assert!(
        (optimal * 0.99..optimal * 1.01 + 64.0).contains(&(bits as f64)),
        "{adapter}: declares {bits} bits; -n ln p / ln^2 2 = {optimal:.0} (n = {N}, p = {P})"
    );
    assert!(
        (6..=7).contains(&hashes),
        "{adapter}: declares {hashes} hashes; log2(1/p) = {:.2}",
        -P.log2()
    );
    let memory = stats.memory_bytes.expect("memory_bytes");
    assert!(
        memory >= bits / 8,
        "{adapter}: {memory} bytes cannot hold {bits} bits"
    );
}

#[test]
fn pybloom_live() {
    check_adapter(&Expect {
        adapter: "pybloom-live",
        name: "python/pybloom-live",
        kind: Kind::Filter(Some(Layout::Partitioned)),
        serialize: true,
    });
}

#[test]
fn rbloom() {
    // rbloom cannot persist a filter on Python's built-in hash (salted per process): no serialize.
    check_adapter(&Expect {
        adapter: "rbloom",
        name: "python/rbloom",
        kind: Kind::Filter(Some(Layout::Classic)),
        serialize: false,
    });
}

#[test]
fn bloom_filters() {
    check_adapter(&Expect {
        adapter: "bloom-filters",
        name: "node/bloom-filters",
        kind: Kind::Filter(Some(Layout::Classic)),
        serialize: true,
    });
}

#[test]
fn guava() {
    check_adapter(&Expect {
        adapter: "guava",
        name: "java/guava",
        kind: Kind::Filter(Some(Layout::Classic)),
        serialize: true,
    });
}

#[test]
fn exact_set() {
    check_adapter(&Expect {
        adapter: "exact-set",
        name: "python/exact-set",
        kind: Kind::Filter(None),
        serialize: true,
    });
}

#[test]
fn null() {
    check_adapter(&Expect {
        adapter: "null",
        name: "python/null",
        kind: Kind::Null,
        serialize: false,
    });
}

/// Runs clause 1 of `Plan::quick()` on the adapter, prints its verdict and asserts that it holds
/// (the adapter started, every build answered, no member was lost).
fn no_false_negatives(adapter: &str, test: &str) {
    let Some(candidate) = connect(adapter) else {
        return;
    };
    let plan = Plan {
        clauses: vec![Clause::NoFalseNegatives],
        reproduce: format!(
            "cargo test --release -p bloomlab-conform --test adapters {test} -- --nocapture"
        ),
        // The promised point only: the hunt over ~200 points on every library is
        // `bloomlab conform --quick --all`, which CI runs.
        hunt: None,
        ..Plan::quick()
    };
    let started = std::time::Instant::now();
    let conformance = bloomlab_conform::run(Arc::new(candidate), &plan);
    println!(
        "{conformance}({:.1} s through scripts/conform/adapter {adapter})",
        started.elapsed().as_secs_f64()
    );
    let verdict = conformance
        .verdict(Clause::NoFalseNegatives)
        .unwrap_or_else(|| panic!("{adapter}: the quick plan ran no clause 1\n{conformance}"));
    assert_eq!(
        verdict.outcome,
        Outcome::Holds,
        "{adapter}: clause 1 (no false negatives) does not hold\n{conformance}"
    );
}

#[test]
fn no_false_negatives_pybloom_live() {
    no_false_negatives("pybloom-live", "no_false_negatives_pybloom_live");
}

#[test]
fn no_false_negatives_rbloom() {
    no_false_negatives("rbloom", "no_false_negatives_rbloom");
}

#[test]
fn no_false_negatives_bloom_filters() {
    no_false_negatives("bloom-filters", "no_false_negatives_bloom_filters");
}

#[test]
fn no_false_negatives_guava() {
    no_false_negatives("guava", "no_false_negatives_guava");
}

#[test]
fn no_false_negatives_exact_set() {
    no_false_negatives("exact-set", "no_false_negatives_exact_set");
}

#[test]
fn no_false_negatives_finds_the_null_adapter_broken() {
    let Some(candidate) = connect("null") else {
        return;
    };
    let plan = Plan {
        clauses: vec![Clause::NoFalseNegatives],
        ..Plan::quick()
    };
    let conformance = bloomlab_conform::run(Arc::new(candidate), &plan);
    println!("{conformance}");
    assert_eq!(
        conformance.broken(),
        vec![Clause::NoFalseNegatives],
        "the null adapter answers absent to every member\n{conformance}"
    );
}

/// pybloom-live 4.0.0 takes each slice's probe as a 16-bit chunk of its digest modulo
/// `bits_per_slice` whenever a slice has fewer than 2^15 bits (32-bit chunks below 2^31), so for
/// slices just under 2^15 bits some positions are 1.5x likelier than others and the rate exceeds
/// both the uniform theory and the promise. The expected rate under that bias, from pybloom's own
/// sizing: per slice, sum over positions of q (1 - (1 - q)^n), where `R mod m` positions have
/// q = (floor(R / m) + 1) / R and the rest q = floor(R / m) / R, R = 2^chunk bits; to the k-th power.
fn pybloom_rates(n: u64, p: f64) -> (f64, f64) {
    let k = (1.0 / p).log2().ceil();
    let m = ((n as f64 * -p.ln()) / (k * std::f64::consts::LN_2.powi(2))).ceil() as u64;
    let chunk = if m >= 1 << 31 {
        64
    } else if m >= 1 << 15 {
        32
    } else {
        16
    };
    let r = 2f64.powi(chunk);
    let (per, extra) = ((r / m as f64).floor(), (r % m as f64));
    let set = |q: f64| 1.0 - (n as f64 * (-q).ln_1p()).exp();
    let (q_hi, q_lo) = ((per + 1.0) / r, per / r);
    let biased = extra * q_hi * set(q_hi) + (m as f64 - extra) * q_lo * set(q_lo);
    let uniform = set(1.0 / m as f64);
    (biased.powf(k), uniform.powf(k))
}

/// Reproduces a defect of pybloom-live 4.0.0 found with this suite (see [`pybloom_rates`]): at
/// n = 19,600, p = 1e-4 its slices have 26,839 bits and the modulo bias predicts a rate of
/// 1.286e-4, 1.28x the uniform theory (1.008e-4) and the promise. Not a CI gate (the report
/// shows library verdicts; this takes about 25 s): run it with
/// `cargo test --release -p bloomlab-conform --test adapters -- --ignored pybloom_live_modulo_bias`.
/// Asserts the suite calls the promised rate broken, and that the false positives among Q
/// queries lie within 5 standard deviations of the biased model and more than 5 above the
/// uniform theory (normal approximation of the binomial count; false-alarm rate about 6e-7 each).
#[test]
#[ignore = "about 25 s; reproduces an upstream defect, run with --ignored"]
fn pybloom_live_modulo_bias() {
    let Some(candidate) = connect("pybloom-live") else {
        return;
    };
    let plan = Plan {
        n: 19_600,
        p: 1e-4,
        queries: 16_000_000,
        clauses: vec![Clause::PromisedRate],
        reproduce: "cargo test --release -p bloomlab-conform --test adapters -- --ignored \
                    pybloom_live_modulo_bias"
            .into(),
        ..Plan::quick()
    };
    let conformance = bloomlab_conform::run(Arc::new(candidate), &plan);
    println!("{conformance}");
    let point = conformance
        .points
        .iter()
        .find(|p| p.clause == Clause::PromisedRate)
        .expect("the promised-rate clause measured a rate");
    let (biased, uniform) = pybloom_rates(plan.n, plan.p);
    let q = point.queries as f64;
    let fp = point.false_positives as f64;
    let sd = |rate: f64| (q * rate * (1.0 - rate)).sqrt();
    let detail = format!(
        "n = {}, p = {}, seed = {:#x}: {fp} of {q} false positives; biased model {:.4e} \
         (expects {:.0} +- {:.0}), uniform theory {:.4e} (expects {:.0} +- {:.0})",
        plan.n,
        plan.p,
        plan.seed,
        biased,
        q * biased,
        sd(biased),
        uniform,
        q * uniform,
        sd(uniform)
    );
    assert!((fp - q * biased).abs() < 5.0 * sd(biased), "{detail}");
    assert!(fp > q * uniform + 5.0 * sd(uniform), "{detail}");
    assert_eq!(
        conformance.broken(),
        vec![Clause::PromisedRate],
        "{detail}\n{conformance}"
    );
}
