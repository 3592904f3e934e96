//! Clause 5, scale: a filter past `plan.scale_bits` bits (2^32 in [`Plan::full`]), filled to its
//! promised n and measured, where the candidate claims large filters and this machine's memory
//! fits one.
//!
//! The n is chosen so that a classic filter at the promised p needs more than `b` bits:
//! `n = ceil(1.05 b ln(2)^2 / -ln p)` (5% over, so rounding down in any layout's sizing still
//! lands past `b`). Where the built filter declares a layout, its bits must exceed `b`: a filter
//! that declares fewer is smaller than its claim (an `int` bit count, the textbook port's flaw),
//! and one that refuses to be built that large while claiming it can is broken too.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

use bloomlab_theory::Geometry;
use bloomlab_theory::host::mem_available;

use super::Plan;
use super::decide::{self, pct};
use super::measure::{self, Buffers};
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
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_available(&t));
    if let Some(avail) = available
        && need > avail as f64
    {
        let gib = |x: f64| x / f64::from(1u32 << 30);
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
    let measured = build_large(candidate.as_ref(), plan, b, n, &mut evidence).and_then(
        |(mut instance, layout)| {
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

/// Builds for `n` keys and checks the declared size against `b`: the instance and its declared
/// layout, with memory and layout added to `evidence`; broken when a candidate that claims large
/// filters refuses or panics, or declares no more than `b` bits.
fn build_large(
    candidate: &dyn Candidate,
    plan: &Plan,
    b: u64,
    n: u64,
    evidence: &mut Vec<String>,
) -> Result<(Box<dyn Instance>, Option<Declared>), Broken> {
    let mut instance = match catch_unwind(AssertUnwindSafe(|| candidate.build(n, plan.p))) {
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
    let layout = match instance.stats() {
        Ok(stats) => {
            if let Some(bytes) = stats.memory_bytes {
                evidence.push(format!("memory: {bytes} bytes"));
            }
            stats.layout
        }
        Err(e) => {
            evidence.push(format!("no stats: {e}"));
            None
        }
    };
    if let Some(layout) = &layout {
        if let Some(bits) = declared_bits(layout)
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
    Ok((instance, layout))
}

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

/// The bits a layout declares, where it says (an xor filter's fingerprint width alone does not).
fn declared_bits(layout: &Declared) -> Option<u64> {
    match *layout {
        Declared::Classic { bits, .. }
        | Declared::Partitioned { bits, .. }
        | Declared::Blocked { bits, .. }
        | Declared::SplitBlock { bits } => Some(bits),
        Declared::Cuckoo {
            buckets,
            bucket_size,
            fingerprint_bits,
        } => Some(
            buckets
                .saturating_mul(u64::from(bucket_size))
                .saturating_mul(u64::from(fingerprint_bits)),
        ),
        Declared::Quotient {
            slots_log2,
            remainder_bits,
        } => 1u64
            .checked_shl(slots_log2)
            .map(|s| s.saturating_mul(u64::from(remainder_bits) + 3)),
        Declared::Xor { .. } => None,
    }
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

    fn plan(bits: u64) -> Plan {
        Plan {
            scale_bits: Some(bits),
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
        let (v, _) = check(&own, &Plan::quick());
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
