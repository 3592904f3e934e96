//! Clause 5, scale: a filter past `plan.scale_bits` bits (2^32 in both shipped plans), where the
//! candidate claims large filters and this machine's memory fits one, checked one of two ways
//! ([`Plan::scale_method`]).
//!
//! **Fill** ([`ScaleMethod::Fill`], [`Plan::full`]): the filter is filled to its promised n and
//! measured. The n is chosen so that a classic filter at the promised p needs more than `b` bits:
//! `n = ceil(1.05 b ln(2)^2 / -ln p)` (5% over, so rounding down in any layout's sizing still
//! lands past `b`). Where the built filter declares a layout, its bits must exceed `b`: a filter
//! that declares fewer is smaller than its claim (an `int` bit count, the textbook port's flaw),
//! and one that refuses to be built that large while claiming it can is broken too.
//!
//! **Boundary** ([`ScaleMethod::Boundary`], [`Plan::quick`]): filling past 2^32 bits takes
//! minutes, so the quick plan asks the one question a 32-bit index gets wrong, in seconds. Two
//! filters are built, one after the other, at p = 1/2 (where an optimal filter has k = 1): the
//! *large* one for `n_L = 2 scale_n(b, 1/2)` keys (about 1.05 x 2b bits: 2^33 for b = 2^32,
//! 1.05 GiB) and the *small* one for `n_S = n_L / 2` keys (past `b`). Each takes the same load
//! fraction of fresh random-u64 members (`s = min(4,000,000, n_L / 1024)` in the large one, `s / 2`
//! in the small one) and is asked [`BOUNDARY_QUERIES`] fresh non-members; every key range is
//! disjoint, so the two counts are independent. Where a layout is declared, each must be past `b`
//! bits, as in the fill; members sampled back must all be present.
//!
//! *Why the rates tell.* A filter's false-positive rate at a small load depends on its load per
//! bit: a correct filter of any layout (classic, blocked, cuckoo, quotient) with twice the bits
//! and twice the members has the same rate, so the ratio `rho` of the large filter's rate to the
//! small one's is 1 (up to the sizing's rounding: n_L = 2 n_S exactly, so a power-of-two or
//! word rounding keeps m_L = 2 m_S). A filter whose indices never exceed a cap `C <= m_S` (`(h as
//! u32) % m`, `% min(m, 2^32)`, a 32-bit fastrange, an `int` index: `C` = 2^32 or 2^31) has the
//! same effective size `C` in both, with twice the members in the large one: `rho` = 2 for k = 1
//! (`(1 - e^(-s/C)) / (1 - e^(-s/2C))`, 1.9996 at s = 4 x 10^6, C = 2^32) and about 2^k beyond.
//! The test splits the two at the geometric midpoint [`BOUNDARY_RATIO`] = sqrt 2.
//!
//! *Decision* (the conditional rate-ratio test of clause 4): given the total `t = x_L + x_S` of
//! the two counts, `x_L ~ Bin(t, pi)` with `pi = rho q_L / (rho q_L + q_S)` (exact for Poisson
//! counts, conservative for binomial ones). With `pi0` that share at `rho = sqrt 2` and the
//! one-sided exact bounds of `x_L / t` at `1 - alpha`: **broken** iff the lower bound exceeds `pi0`,
//! **holds** iff the upper bound is at most `pi0`, **undecided** otherwise (with the queries that
//! would decide). False-alarm rate: a filter with `rho <= sqrt 2` is called broken with
//! probability at most `alpha` (1e-4 in both plans), and one capped at `C <= m_S` (`rho >= 2`) is
//! called holding with at most `alpha`.
//!
//! *Power*, for a classic k = 1 filter capped at 2^32 with `b = 2^32` (m_L = 9.02 x 10^9,
//! m_S = 4.51 x 10^9 bits declared): expected counts 3,723 and 1,863 of 4,000,000 queries each,
//! t = 5,586 and `x_L / t` = 2/3 (sd 0.0063); broken needs `x_L / t` above 0.610 (where its
//! one-sided bound at alpha = 1e-4, 3.72 sd, clears pi0 = 0.586), 9.0 sd below its expectation:
//! the probability it is called broken is 1 - 10^-18 or more (normal approximation; t's own
//! spread, sd 75, moves this by nothing that matters; a cap at 2^31 doubles both counts). A
//! correct k = 1 filter expects 1,774 false positives in each (t = 3,548, `x_L / t` = 1/2, sd
//! 0.0084) and holds unless `x_L / t` exceeds 0.555, 6.5 sd out: undecided with probability
//! about 10^-10, broken with at most alpha.
//!
//! *Limits.* A filter with k >= 2 at p = 1/2 (one that rounds k up, or a split-block filter's
//! fixed 8) has almost no false positive at this load (about `(2 s / m)^2` = 8 x 10^-7 for
//! k = 2): the test is then undecided, naming the queries that would decide (the full plan's fill
//! decides it). A cap between the two sizes (past `m_S`, below `m_L`) gives a ratio between 1
//! and 2 and is caught only when that ratio is clearly above sqrt 2.
//!
//! *Cost*: 6,000,000 inserts and 8,200,000 queries, about 3 s of CPU for a classic filter in
//! process. Peak memory is one large filter (the small one is built after the large one is
//! dropped): 1.05 GiB for a Bloom filter (1.44 bits per key at p = 1/2), more for layouts that
//! spend more per key (the quick plan over crates/conform-rust's subjects, qfilter and
//! scalable_cuckoo_filter among them, peaked at 5.0 GB resident). The memory guard asks
//! `2 b / 8 x 1.5` bytes before building (undecided, naming it, when MemAvailable is less), and
//! a declared `memory_bytes` above what was available stops the test before any insert touches
//! that memory.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

use bloomlab_theory::Geometry;
use bloomlab_theory::host::mem_available;

use super::decide::{self, pct};
use super::measure::{self, Buffers};
use super::{Plan, ScaleMethod};
use crate::candidate::{Candidate, CandidateError, Declared, Instance};
use crate::keys::{Family, derive_seed};
use crate::verdict::{Clause, Outcome, RatePoint, Verdict};

/// Members queried back after the fill (evenly spread over all of them).
const MEMBER_SAMPLE: u64 = 1_000_000;
/// Non-members queried at least, whatever `plan.queries` says.
const MIN_QUERIES: u64 = 1_000_000;
/// Spread chunks the member sample is taken in.
const SAMPLE_CHUNKS: u64 = 1000;
/// Bytes per bit of the memory estimate: b/8 bytes of bits, half as much again for the layout's
/// rounding, the allocator and the suite's own buffers.
const MEMORY_FACTOR: f64 = 1.5;

/// The keys a classic filter at rate `p` needs more than `bits` bits for, 5% over:
/// `ceil(1.05 bits ln(2)^2 / -ln p)`. `p` must be in (0, 1).
pub(crate) fn scale_n(bits: u64, p: f64) -> u64 {
    let ln2 = std::f64::consts::LN_2;
    (1.05 * bits as f64 * ln2 * ln2 / -p.ln()).ceil() as u64
}

/// Runs the scale clause (see the module docs). Progress goes to stderr every ~10% of the fill.
pub(crate) fn check(candidate: &Arc<dyn Candidate>, plan: &Plan) -> (Verdict, Vec<RatePoint>) {
    let about = candidate.about();
    let verdict = |outcome, figure: String, evidence: Vec<String>| {
        super::verdict(plan, Clause::Scale, outcome, figure, evidence)
    };
    if !about.capabilities.large {
        return (
            verdict(
                Outcome::NotApplicable,
                "not claimed".into(),
                vec![format!(
                    "{} does not claim filters past 2^32 bits (capabilities.large is false)",
                    about.name
                )],
            ),
            Vec::new(),
        );
    }
    let Some(b) = plan.scale_bits else {
        return (
            verdict(
                Outcome::NotApplicable,
                "not run".into(),
                vec!["the plan skips it (scale_bits is None; Plan::full() sets 2^32)".into()],
            ),
            Vec::new(),
        );
    };
    if plan.scale_method == ScaleMethod::Boundary {
        return boundary(candidate.as_ref(), plan, b);
    }
    let p = plan.p;
    if !(p > 0.0 && p < 1.0) {
        return (
            verdict(
                Outcome::NotApplicable,
                format!("p = {p} has no size"),
                vec![format!("the plan's p = {p} is outside (0, 1)")],
            ),
            Vec::new(),
        );
    }
    let n = scale_n(b, p);
    if n < 2 {
        return (
            verdict(
                Outcome::NotApplicable,
                format!("scale_bits = {b} is no scale"),
                vec![format!(
                    "the plan's scale_bits = {b} asks for {n} keys at p = {p}: nothing to fill \
                     (2^32 is the clause's point)"
                )],
            ),
            Vec::new(),
        );
    }
    let need = b as f64 / 8.0 * MEMORY_FACTOR;
    let available = available_memory();
    if let Some(avail) = available
        && need > avail as f64
    {
        return (
            verdict(
                Outcome::NotApplicable,
                format!(
                    "needs {:.1} GiB, {:.1} available",
                    gib(need),
                    gib(avail as f64)
                ),
                vec![format!(
                    "a filter past {b} bits for n = {n} at p = {p} needs about {:.1} GiB \
                     ({b} bits / 8 x {MEMORY_FACTOR}); MemAvailable is {:.1} GiB",
                    gib(need),
                    gib(avail as f64)
                )],
            ),
            Vec::new(),
        );
    }
    let mut evidence = vec![format!("n = {n}, p = {p}, past {b} bits")];
    if available.is_none() {
        evidence.push(
            "memory not checked before the build: /proc/meminfo has no MemAvailable here".into(),
        );
    }
    let measured = build_large(candidate.as_ref(), plan.p, b, n, &mut evidence).and_then(
        |(mut instance, layout, _)| {
            let measured = measure_large(&mut *instance, plan, n, layout, &mut evidence);
            // Freeing ~b/8 bytes takes a moment; the verdict is complete before it.
            drop(instance);
            measured
        },
    );
    match measured {
        Ok((outcome, figure, point)) => (verdict(outcome, figure, evidence), vec![point]),
        Err((figure, line)) => {
            evidence.push(line);
            (verdict(Outcome::Broken, figure, evidence), Vec::new())
        }
    }
}

/// A broken verdict's figure and its deciding evidence line.
type Broken = (String, String);

/// Builds for `n` keys at `p` and checks the declared size against `b`: the instance and its declared
/// layout, with memory and layout added to `evidence`; broken when a candidate that claims large
/// filters refuses or panics, or declares no more than `b` bits.
fn build_large(
    candidate: &dyn Candidate,
    p: f64,
    b: u64,
    n: u64,
    evidence: &mut Vec<String>,
) -> Result<Built, Broken> {
    let mut instance = match catch_unwind(AssertUnwindSafe(|| candidate.build(n, p))) {
        Ok(Ok(i)) => i,
        Ok(Err(e)) => {
            return Err((
                "claims large filters, refuses one".into(),
                format!("claims filters past 2^32 bits (capabilities.large) but: {e}"),
            ));
        }
        Err(panic) => {
            return Err((
                "panics building a large filter".into(),
                format!("build panicked: {}", panic_message(&*panic)),
            ));
        }
    };
    let (layout, memory) = match instance.stats() {
        Ok(stats) => {
            if let Some(bytes) = stats.memory_bytes {
                evidence.push(format!("memory: {bytes} bytes"));
            }
            (stats.layout, stats.memory_bytes)
        }
        Err(e) => {
            evidence.push(format!("no stats: {e}"));
            (None, None)
        }
    };
    if let Some(layout) = &layout {
        if let Some(bits) = layout.bits()
            && bits <= b
        {
            return Err((
                format!("{bits} bits: smaller than claimed"),
                format!(
                    "declares {layout:?}: {bits} bits, not past {b}; the filter is smaller than \
                     claimed (a 32-bit bit count?)"
                ),
            ));
        }
        evidence.push(format!("declares {layout:?}"));
    }
    Ok((instance, layout, memory))
}

/// A built instance, its declared layout and its declared memory in bytes.
type Built = (Box<dyn Instance>, Option<Declared>, Option<u64>);

/// Fills `instance` with `n` random-u64 members, queries a sample of them back (a miss is
/// broken) and at least [`MIN_QUERIES`] non-members: the rate's outcome, figure and point.
fn measure_large(
    instance: &mut dyn Instance,
    plan: &Plan,
    n: u64,
    layout: Option<Declared>,
    evidence: &mut Vec<String>,
) -> Result<(Outcome, String, RatePoint), Broken> {
    let seed = derive_seed(plan.seed, "scale");
    let mut buf = Buffers::default();
    caught(
        "insert",
        catch_unwind(AssertUnwindSafe(|| {
            fill(instance, seed, n, plan.batch, &mut buf)
        })),
    )?;
    let (found, missed_at) = caught(
        "query of members",
        catch_unwind(AssertUnwindSafe(|| {
            sample_members(instance, seed, n, plan.batch, &mut buf)
        })),
    )?;
    let sampled = n.min(MEMBER_SAMPLE);
    if let Some(index) = missed_at {
        return Err((
            format!("{} of {sampled} members missed", sampled - found),
            format!(
                "false negatives: {} of {sampled} sampled members answered absent, the first \
                 {} key index {index}",
                sampled - found,
                Family::RandomU64.as_str()
            ),
        ));
    }
    evidence.push(format!(
        "{found} of {sampled} sampled members found (no false negative)"
    ));
    let queries = plan.queries.max(MIN_QUERIES);
    let (fp, _) = caught(
        "query of non-members",
        catch_unwind(AssertUnwindSafe(|| {
            let range = n..n + queries;
            measure::count_positive(
                instance,
                Family::RandomU64,
                seed,
                range,
                plan.batch,
                &mut buf,
            )
        })),
    )?;
    let (outcome, line) = decide(fp, queries, plan.p, plan.margin, plan.alpha);
    evidence.push(line);
    let point = RatePoint {
        clause: Clause::Scale,
        family: Family::RandomU64.as_str().into(),
        inserted: n,
        design_n: n,
        queries,
        false_positives: fp,
        promised: plan.p,
        theory: layout.as_ref().and_then(|l| theory(l, n)),
    };
    let figure = format!(
        "{} observed vs {} promised at n = {n}",
        pct(fp as f64 / queries as f64),
        pct(plan.p)
    );
    Ok((outcome, figure, point))
}

/// A caught call's value, or a broken verdict naming `what` failed or panicked.
fn caught<T>(what: &str, r: std::thread::Result<Result<T, CandidateError>>) -> Result<T, Broken> {
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err((format!("{what} failed"), format!("{what}: {e}"))),
        Err(panic) => Err((
            format!("{what} panics"),
            format!("{what} panicked: {}", panic_message(&*panic)),
        )),
    }
}

/// Inserts random-u64 keys `0..n` in ten parts, with a line on stderr after each.
fn fill(
    instance: &mut dyn Instance,
    seed: u64,
    n: u64,
    batch: usize,
    buf: &mut Buffers,
) -> Result<(), CandidateError> {
    let start = Instant::now();
    let step = n.div_ceil(10).max(1);
    let mut at = 0;
    while at < n {
        let end = (at + step).min(n);
        measure::insert(instance, Family::RandomU64, seed, at..end, batch, buf)?;
        at = end;
        eprintln!(
            "scale: inserted {at} of {n} keys ({}%) in {:.0} s",
            at * 100 / n,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// Queries up to [`MEMBER_SAMPLE`] members in [`SAMPLE_CHUNKS`] runs spread evenly over `0..n`:
/// how many answered present, and the key index of the first that did not.
fn sample_members(
    instance: &mut dyn Instance,
    seed: u64,
    n: u64,
    batch: usize,
    buf: &mut Buffers,
) -> Result<(u64, Option<u64>), CandidateError> {
    if n <= MEMBER_SAMPLE {
        return measure::count_positive(instance, Family::RandomU64, seed, 0..n, batch, buf);
    }
    let run = MEMBER_SAMPLE / SAMPLE_CHUNKS;
    let stride = n / SAMPLE_CHUNKS;
    let (mut found, mut first) = (0, None);
    for c in 0..SAMPLE_CHUNKS {
        let at = c * stride;
        let (f, miss) =
            measure::count_positive(instance, Family::RandomU64, seed, at..at + run, batch, buf)?;
        found += f;
        first = first.or(miss);
    }
    Ok((found, first))
}

/// The bloom layouts' theory at `members` keys, where bloomlab has it for the declared layout.
fn theory(layout: &Declared, members: u64) -> Option<f64> {
    let geometry = match *layout {
        Declared::Classic { bits, hashes } => Geometry::Flat { bits, hashes },
        Declared::Blocked {
            bits,
            hashes,
            block_bits,
        } if block_bits > 0 => Geometry::Blocked {
            blocks: bits / u64::from(block_bits),
            block_bits,
            hashes,
        },
        Declared::SplitBlock { bits } => Geometry::SplitBlock {
            blocks: bits / 256,
            words: 8,
            word_bits: 32,
        },
        _ => return None,
    };
    Some(geometry.fpr(members))
}

/// Clause 2's decision at scale: the one-sided exact bounds against `promised (1 + margin)` at
/// false-alarm rate `alpha` ([`decide::against_ceiling`]); the evidence line says which way.
fn decide(fp: u64, queries: u64, promised: f64, margin: f64, alpha: f64) -> (Outcome, String) {
    let ceiling = promised * (1.0 + margin);
    let c = decide::against_ceiling(fp, queries, ceiling, alpha);
    let head = format!(
        "{fp} of {queries} non-members answered present ({}); one-sided exact bounds at \
         1 - alpha = {}: [{}, {}] against p (1 + margin) = {}",
        pct(fp as f64 / queries as f64),
        1.0 - alpha,
        pct(c.lower),
        pct(c.upper),
        pct(ceiling)
    );
    let line = match (c.outcome, c.queries_to_decide) {
        (Outcome::Undecided, Some(q)) => {
            format!("{head}: undecided; about {q} queries would decide")
        }
        (Outcome::Undecided, None) => format!("{head}: undecided at any number of queries"),
        (o, _) => format!("{head}: {o}"),
    };
    (c.outcome, line)
}

/// The boundary test's rate: an optimal classic filter has k = max(1, round(log2(1/p))) = 1
/// there, the k whose rate at a small load is largest (about the load per bit).
pub(crate) const BOUNDARY_P: f64 = 0.5;
/// Members of the large filter at most (the small one takes half as many).
const BOUNDARY_MEMBERS: u64 = 4_000_000;
/// Non-members queried in each filter.
pub(crate) const BOUNDARY_QUERIES: u64 = 4_000_000;
/// Members queried back in each filter (the first ones inserted).
const BOUNDARY_MEMBER_SAMPLE: u64 = 100_000;
/// The rate ratio, large filter over small, the boundary test tolerates: the geometric midpoint
/// of a correct filter's 1 and a filter capped at the small one's size's 2 (k = 1).
pub(crate) const BOUNDARY_RATIO: f64 = std::f64::consts::SQRT_2;

/// One of the boundary test's two filters, measured.
struct Side {
    /// `large` or `small`.
    name: &'static str,
    /// The n it was built for.
    design_n: u64,
    /// Members inserted.
    inserted: u64,
    /// Non-members queried.
    queries: u64,
    /// False positives among them.
    false_positives: u64,
    /// Its declared layout, if any.
    layout: Option<Declared>,
}

impl Side {
    fn rate(&self) -> f64 {
        self.false_positives as f64 / self.queries as f64
    }

    fn point(&self) -> RatePoint {
        RatePoint {
            clause: Clause::Scale,
            family: Family::RandomU64.as_str().into(),
            inserted: self.inserted,
            design_n: self.design_n,
            queries: self.queries,
            false_positives: self.false_positives,
            promised: BOUNDARY_P,
            theory: self.layout.as_ref().and_then(|l| theory(l, self.inserted)),
        }
    }
}

/// What ends the boundary test early: its outcome, figure and deciding evidence line.
type Stop = (Outcome, String, String);

/// The boundary test ([`ScaleMethod::Boundary`], see the module docs) past `b` bits.
fn boundary(candidate: &dyn Candidate, plan: &Plan, b: u64) -> (Verdict, Vec<RatePoint>) {
    let verdict = |outcome, figure: String, evidence: Vec<String>| {
        super::verdict(plan, Clause::Scale, outcome, figure, evidence)
    };
    let p = BOUNDARY_P;
    let n_small = scale_n(b, p);
    let n_large = n_small.saturating_mul(2);
    if n_small < 2 {
        return (
            verdict(
                Outcome::NotApplicable,
                format!("scale_bits = {b} is no scale"),
                vec![format!(
                    "the plan's scale_bits = {b} asks for {n_small} keys at p = {p}: nothing to \
                     fill (2^32 is the clause's point)"
                )],
            ),
            Vec::new(),
        );
    }
    let need = 2.0 * b as f64 / 8.0 * MEMORY_FACTOR;
    let available = available_memory();
    if let Some(avail) = available
        && need > avail as f64
    {
        return (
            verdict(
                Outcome::Undecided,
                format!(
                    "needs {:.1} GiB, {:.1} available",
                    gib(need),
                    gib(avail as f64)
                ),
                vec![format!(
                    "the boundary test's larger filter (past {} bits, n = {n_large} at p = {p}) \
                     needs about {:.1} GiB ({} bits / 8 x {MEMORY_FACTOR}); MemAvailable is \
                     {:.1} GiB: not run",
                    2 * b,
                    gib(need),
                    2 * b,
                    gib(avail as f64)
                )],
            ),
            Vec::new(),
        );
    }
    let members = BOUNDARY_MEMBERS.min(n_large / 1024).max(2);
    let q = BOUNDARY_QUERIES;
    let mut evidence = vec![format!(
        "boundary test at p = {p}: n = {n_large} (past {} bits) with {members} members, then \
         n = {n_small} (past {b} bits) with {} members; {q} non-members each",
        2 * b,
        members / 2
    )];
    if available.is_none() {
        evidence.push(
            "memory not checked before the build: /proc/meminfo has no MemAvailable here".into(),
        );
    }
    let seed = derive_seed(plan.seed, "scale-boundary");
    // Disjoint key ranges: members and non-members of the two filters never share a key, so the
    // two counts are independent even where both filters map a key to the same bits.
    let large = measure_side(
        candidate,
        plan,
        ("large", n_large, b, seed),
        (0, members),
        (members, q),
        available,
        &mut evidence,
    );
    let small = large.and_then(|large| {
        let at = members + q;
        measure_side(
            candidate,
            plan,
            ("small", n_small, b, seed),
            (at, members / 2),
            (at + members / 2, q),
            available,
            &mut evidence,
        )
        .map(|small| (large, small))
    });
    let (large, small) = match small {
        Ok(sides) => sides,
        Err((outcome, figure, line)) => {
            evidence.push(line);
            return (verdict(outcome, figure, evidence), Vec::new());
        }
    };
    let (outcome, figure, line) = decide_ratio(&large, &small, plan.alpha);
    evidence.push(line);
    (
        verdict(outcome, figure, evidence),
        vec![large.point(), small.point()],
    )
}

/// Builds one side of the boundary test (`name`, for `n` keys at [`BOUNDARY_P`], its declared
/// bits past `b`), inserts `members` = (first key index, count) of random-u64 keys, checks a
/// sample of them back and counts false positives among `non_members` = (first index, count);
/// the instance is dropped before it returns. `available` is MemAvailable before any build: a
/// declared memory above it stops the test before the first insert touches that memory.
fn measure_side(
    candidate: &dyn Candidate,
    plan: &Plan,
    (name, n, b, seed): (&'static str, u64, u64, u64),
    (first_member, members): (u64, u64),
    (first_query, queries): (u64, u64),
    available: Option<u64>,
    evidence: &mut Vec<String>,
) -> Result<Side, Stop> {
    let broken = |(figure, line): Broken| (Outcome::Broken, format!("{name}: {figure}"), line);
    let mut lines = Vec::new();
    let (mut instance, layout, memory) =
        build_large(candidate, BOUNDARY_P, b, n, &mut lines).map_err(broken)?;
    evidence.extend(lines.into_iter().map(|l| format!("{name}: {l}")));
    if let (Some(bytes), Some(avail)) = (memory, available)
        && bytes > avail
    {
        return Err((
            Outcome::Undecided,
            format!(
                "needs {:.1} GiB, {:.1} available",
                gib(bytes as f64),
                gib(avail as f64)
            ),
            format!(
                "{name}: declares {bytes} bytes for n = {n} at p = {BOUNDARY_P}, more than the \
                 {avail} bytes MemAvailable: not filled"
            ),
        ));
    }
    let mut buf = Buffers::default();
    let inserted = first_member..first_member + members;
    caught(
        "insert",
        catch_unwind(AssertUnwindSafe(|| {
            measure::insert(
                &mut *instance,
                Family::RandomU64,
                seed,
                inserted.clone(),
                plan.batch,
                &mut buf,
            )
        })),
    )
    .map_err(broken)?;
    let sampled = members.min(BOUNDARY_MEMBER_SAMPLE);
    let (found, missed_at) = caught(
        "query of members",
        catch_unwind(AssertUnwindSafe(|| {
            measure::count_positive(
                &mut *instance,
                Family::RandomU64,
                seed,
                first_member..first_member + sampled,
                plan.batch,
                &mut buf,
            )
        })),
    )
    .map_err(broken)?;
    if let Some(index) = missed_at {
        return Err(broken((
            format!("{} of {sampled} members missed", sampled - found),
            format!(
                "false negatives: {} of {sampled} sampled members answered absent, the first {} \
                 key index {index}",
                sampled - found,
                Family::RandomU64.as_str()
            ),
        )));
    }
    let (false_positives, _) = caught(
        "query of non-members",
        catch_unwind(AssertUnwindSafe(|| {
            measure::count_positive(
                &mut *instance,
                Family::RandomU64,
                seed,
                first_query..first_query + queries,
                plan.batch,
                &mut buf,
            )
        })),
    )
    .map_err(broken)?;
    // Freeing ~1 GiB takes a moment; the small filter is built only after it.
    drop(instance);
    let side = Side {
        name,
        design_n: n,
        inserted: members,
        queries,
        false_positives,
        layout,
    };
    evidence.push(format!(
        "{name}: {found} of {sampled} sampled members found; {false_positives} of {queries} \
         non-members answered present ({})",
        pct(side.rate())
    ));
    Ok(side)
}

/// The boundary test's decision (module docs): the large filter's share of all false positives
/// against the share at a rate ratio of [`BOUNDARY_RATIO`], with one-sided exact bounds at
/// `1 - alpha`.
fn decide_ratio(large: &Side, small: &Side, alpha: f64) -> Stop {
    let (xl, ql) = (large.false_positives, large.queries);
    let (xs, qs) = (small.false_positives, small.queries);
    let t = xl + xs;
    let rho0 = BOUNDARY_RATIO;
    let share0 = rho0 * ql as f64 / (rho0 * ql as f64 + qs as f64);
    // The share's bounds as bounds on the rate ratio: rho = share / (1 - share) x q_S / q_L.
    let ratio = |share: f64| share / (1.0 - share) * qs as f64 / ql as f64;
    let head = format!(
        "{name_l} {} vs {name_s} {}",
        pct(large.rate()),
        pct(small.rate()),
        name_l = large.name,
        name_s = small.name
    );
    if t == 0 {
        return (
            Outcome::Undecided,
            format!("{head}: no false positive to compare"),
            format!(
                "no false positive in either filter at this load (k > 1 at p = {BOUNDARY_P}?): \
                 the boundary test cannot tell at any number of queries; the full plan's fill \
                 decides"
            ),
        );
    }
    let (lower, upper) = decide::one_sided_bounds(xl, t, alpha);
    let observed = if xs == 0 {
        f64::INFINITY
    } else {
        ratio(xl as f64 / t as f64)
    };
    let bounds = format!(
        "rate ratio large / small = {observed:.3}, one-sided exact bounds at 1 - alpha = {}: \
         [{:.3}, {}] (conditional on the {t} false positives in all) against sqrt 2 = {rho0:.3} \
         (1 for a filter that scales past {} bits, 2 or more for one whose indices stop there)",
        1.0 - alpha,
        ratio(lower),
        if upper >= 1.0 {
            "inf".to_string()
        } else {
            format!("{:.3}", ratio(upper))
        },
        declared_or(small),
    );
    if lower > share0 {
        (
            Outcome::Broken,
            format!(
                "{head} at the same load per bit: {observed:.2}x, no index past {} bits?",
                declared_or(small)
            ),
            format!(
                "{bounds}: broken: the filter for n = {} has {observed:.2} times the rate of the \
                 one for n = {} at the same load per bit, so its indices do not reach past about \
                 {} bits (a 32-bit index?)",
                large.design_n,
                small.design_n,
                declared_or(small)
            ),
        )
    } else if upper <= share0 {
        (
            Outcome::Holds,
            format!("{head} at the same load per bit: {observed:.2}x, scales past the boundary"),
            format!("{bounds}: holds"),
        )
    } else {
        let more = decide::queries_to_decide(xl as f64 / t as f64, t, share0, alpha)
            .map(|total| (ql as f64 * total as f64 / t as f64).ceil() as u64);
        let tail = match more {
            Some(q) => format!("undecided; about {q} queries per filter would decide"),
            None => "undecided at any number of queries".into(),
        };
        (
            Outcome::Undecided,
            format!("{head} at the same load per bit: {observed:.2}x, too few to tell"),
            format!("{bounds}: {tail}"),
        )
    }
}

/// The small filter's declared bits, or the bits a classic filter for its n has at
/// [`BOUNDARY_P`] where it declares none (for the messages).
fn declared_or(small: &Side) -> u64 {
    small
        .layout
        .as_ref()
        .and_then(Declared::bits)
        .unwrap_or_else(|| (small.design_n as f64 / std::f64::consts::LN_2).ceil() as u64)
}

/// MemAvailable from /proc/meminfo, where there is one.
fn available_memory() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_available(&t))
}

/// Bytes in GiB.
fn gib(bytes: f64) -> f64 {
    bytes / f64::from(1u32 << 30)
}

/// A caught panic's message.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic without a message)".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::{About, Capabilities, KeyBatch, PerKey, Stats};
    use crate::subjects::own::Own;

    /// The fill at `bits` (the quick plan's queries).
    fn plan(bits: u64) -> Plan {
        Plan {
            scale_bits: Some(bits),
            scale_method: ScaleMethod::Fill,
            queries: 200_000,
            ..Plan::quick()
        }
    }

    #[test]
    fn scale_n_needs_more_than_the_bits_in_a_classic_filter() {
        for (b, p) in [(1u64 << 32, 0.01), (1 << 20, 1e-3), (1 << 33, 0.1)] {
            let n = scale_n(b, p);
            let m = bloomlab_filters::Params::optimal(n, p).unwrap().bits;
            assert!(
                m > b && (m as f64) < 1.06 * b as f64,
                "b {b} p {p}: n {n}, m {m}"
            );
        }
    }

    #[test]
    fn not_applicable_without_the_claim_or_the_plan() {
        let c: Arc<dyn Candidate> = Arc::new(Small { declared_bits: 1 });
        let (v, _) = check(&c, &plan(1 << 20));
        assert_eq!(v.outcome, Outcome::NotApplicable, "{v:?}");
        assert!(v.evidence[0].contains("capabilities.large"), "{v:?}");
        let own: Arc<dyn Candidate> = Arc::new(Own::new("sbbf/xxh3").unwrap());
        let skip = Plan {
            scale_bits: None,
            ..Plan::quick()
        };
        let (v, _) = check(&own, &skip);
        assert_eq!(v.outcome, Outcome::NotApplicable, "{v:?}");
        assert!(v.evidence[0].contains("scale_bits"), "{v:?}");
        let (v, _) = check(&own, &plan(0));
        assert_eq!(v.outcome, Outcome::NotApplicable, "{v:?}");
        assert!(v.figure.contains("scale_bits = 0"), "{v:?}");
        let (v, _) = check(&own, &plan(u64::MAX / 2));
        assert_eq!(v.outcome, Outcome::NotApplicable, "{v:?}");
        assert!(
            v.figure.contains("GiB") && v.figure.contains("available"),
            "{v:?}"
        );
    }

    /// A filter that claims large sizes but declares `declared_bits` (a 32-bit count, say).
    struct Small {
        declared_bits: u64,
    }

    impl Candidate for Small {
        fn about(&self) -> About {
            About::rust("small", "0").with(Capabilities {
                large: self.declared_bits > 1,
                stats: true,
                ..Capabilities::default()
            })
        }
        fn build(&self, _n: u64, _p: f64) -> Result<Box<dyn Instance>, CandidateError> {
            let f = PerKey::new(
                std::collections::HashSet::<Vec<u8>>::new(),
                |s, k| {
                    s.insert(k.to_vec());
                },
                |s, k| s.contains(k),
            );
            Ok(Box::new(f.declare(Declared::Classic {
                bits: self.declared_bits,
                hashes: 7,
            })))
        }
    }

    #[test]
    fn a_filter_declaring_fewer_bits_than_asked_is_broken_before_any_fill() {
        let c: Arc<dyn Candidate> = Arc::new(Small {
            declared_bits: (1 << 31) - 1,
        });
        let (v, points) = check(&c, &plan(1 << 32));
        assert_eq!(v.outcome, Outcome::Broken, "{v:?}");
        assert!(v.figure.contains("smaller than claimed"), "{v:?}");
        assert!(
            v.evidence.last().unwrap().contains("2147483647 bits"),
            "{v:?}"
        );
        assert!(points.is_empty());
    }

    #[test]
    fn the_textbook_port_claims_large_filters_and_refuses_one_past_2_pow_32_bits() {
        // Its build checks the Java int bit count before allocating: this costs no memory.
        let c: Arc<dyn Candidate> = Arc::new(Own::new("textbook-fnv1a-i32").unwrap());
        let (v, _) = check(&c, &plan(1 << 32));
        assert_eq!(v.outcome, Outcome::Broken, "{v:?}");
        assert!(
            v.figure.contains("refuses") && v.evidence.last().unwrap().contains("Java int"),
            "{v:?}"
        );
    }

    #[test]
    fn a_flagship_holds_at_a_small_scale_and_reports_one_rate() {
        // 2^20 bits: the clause's mechanics at ~100,000 keys (the real 2^32 is the ignored test).
        let c: Arc<dyn Candidate> = Arc::new(Own::new("blocked512/xxh3").unwrap());
        let plan = Plan {
            p: 0.05,
            ..plan(1 << 20)
        };
        let (v, points) = check(&c, &plan);
        assert_eq!(points.len(), 1, "{v:?}");
        let pt = &points[0];
        assert_eq!(pt.inserted, scale_n(1 << 20, 0.05));
        assert_eq!(pt.queries, MIN_QUERIES);
        assert!(pt.theory.is_some());
        // blocked512 runs ~17% above its nominal p at 1%, less at 5%; the margin is 15%, so the
        // verdict may be holds or undecided but never broken for a correct filter.
        assert_ne!(v.outcome, Outcome::Broken, "{v:?}");
        assert!(
            v.evidence.iter().any(|e| e.contains("no false negative")),
            "{v:?}"
        );
    }

    #[test]
    fn a_lossy_filter_at_scale_is_broken_naming_the_missing_key() {
        struct Lossy;
        impl Candidate for Lossy {
            fn about(&self) -> About {
                About::rust("lossy", "0").with(Capabilities {
                    large: true,
                    ..Capabilities::default()
                })
            }
            fn build(&self, _: u64, _: f64) -> Result<Box<dyn Instance>, CandidateError> {
                Ok(Box::new(PerKey::new(
                    std::collections::HashSet::<Vec<u8>>::new(),
                    // Drops every key whose first byte is 0 (1 in 256).
                    |s, k| {
                        if k[0] != 0 {
                            s.insert(k.to_vec());
                        }
                    },
                    |s, k| s.contains(k),
                )))
            }
        }
        let c: Arc<dyn Candidate> = Arc::new(Lossy);
        let (v, _) = check(&c, &plan(1 << 16));
        assert_eq!(v.outcome, Outcome::Broken, "{v:?}");
        assert!(v.evidence.last().unwrap().contains("key index"), "{v:?}");
        let _ = (KeyBatch::new(), Stats::default());
    }

    #[test]
    fn decide_follows_the_one_sided_bounds() {
        assert_eq!(decide(0, 1_000_000, 0.01, 0.15, 1e-4).0, Outcome::Holds);
        assert_eq!(
            decide(20_000, 1_000_000, 0.01, 0.15, 1e-4).0,
            Outcome::Broken
        );
        let (o, line) = decide(11, 1000, 0.01, 0.15, 1e-4);
        assert_eq!(o, Outcome::Undecided);
        assert!(line.contains("queries would decide"), "{line}");
    }

    fn side(name: &'static str, false_positives: u64) -> Side {
        Side {
            name,
            design_n: 1000,
            inserted: 10,
            queries: BOUNDARY_QUERIES,
            false_positives,
            layout: None,
        }
    }

    #[test]
    fn the_boundary_decision_splits_a_ratio_of_1_from_one_of_2_at_sqrt_2() {
        let decide = |xl, xs| decide_ratio(&side("large", xl), &side("small", xs), 1e-4);
        // The module docs' expected counts: a correct filter, and one capped at 2^32.
        let (o, figure, line) = decide(1774, 1774);
        assert_eq!(o, Outcome::Holds, "{line}");
        assert!(figure.contains("1.00x"), "{figure}");
        let (o, figure, line) = decide(3723, 1863);
        assert_eq!(o, Outcome::Broken, "{line}");
        assert!(figure.contains("2.00x"), "{figure}");
        assert!(line.contains("32-bit index"), "{line}");
        // At sqrt 2 itself nothing decides; with few counts near it, the line says how many more.
        let (o, _, line) = decide(30, 20);
        assert_eq!(o, Outcome::Undecided, "{line}");
        assert!(line.contains("queries per filter would decide"), "{line}");
        let (o, _, line) = decide(0, 0);
        assert_eq!(o, Outcome::Undecided, "{line}");
        assert!(line.contains("no false positive"), "{line}");
        let (o, figure, _) = decide(100, 0);
        assert_eq!(o, Outcome::Broken, "{figure}");
    }

    #[test]
    fn the_boundary_test_breaks_a_filter_declaring_no_more_than_the_boundary() {
        let c: Arc<dyn Candidate> = Arc::new(Small {
            declared_bits: 1 << 20,
        });
        let boundary = Plan {
            scale_bits: Some(1 << 20),
            ..Plan::quick()
        };
        let (v, points) = check(&c, &boundary);
        assert_eq!(v.outcome, Outcome::Broken, "{v:?}");
        assert!(
            v.figure.starts_with("large: ") && v.figure.contains("smaller than claimed"),
            "{v:?}"
        );
        assert!(points.is_empty());
    }

    #[test]
    fn the_boundary_test_holds_for_a_flagship_at_a_small_boundary() {
        // 2^20 bits: the test's mechanics at ~1,500 members (the real 2^32 is in
        // tests/scale_boundary.rs).
        let c: Arc<dyn Candidate> = Arc::new(Own::new("classic/xxh3/km/flat").unwrap());
        let boundary = Plan {
            scale_bits: Some(1 << 20),
            ..Plan::quick()
        };
        let (v, points) = check(&c, &boundary);
        assert_eq!(v.outcome, Outcome::Holds, "{v:?}");
        assert_eq!(points.len(), 2, "{v:?}");
        assert_eq!(points[0].design_n, 2 * points[1].design_n);
        assert_eq!(points[0].inserted, 2 * points[1].inserted);
        assert!(
            points
                .iter()
                .all(|p| p.promised == BOUNDARY_P && p.theory.is_some())
        );
    }

    /// The real clause on the classic flagship: past 2^32 bits (~470 million keys, ~570 MB,
    /// minutes). Run by hand:
    /// `cargo test --release -p bloomlab-conform --lib scale_past_2_pow_32 -- --ignored --nocapture`.
    #[test]
    #[ignore = "fills a filter past 2^32 bits: ~570 MB and minutes"]
    fn scale_past_2_pow_32_bits_holds_for_the_classic_flagship() {
        let c: Arc<dyn Candidate> = Arc::new(Own::new("classic/xxh3/km/flat").unwrap());
        let (v, points) = check(&c, &Plan::full());
        eprintln!("{v:#?}\n{points:#?}");
        assert_eq!(points.len(), 1, "{v:?}");
        assert_eq!(v.outcome, Outcome::Holds, "{v:?}");
    }
}
