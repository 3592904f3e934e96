//! Clauses 2 (promised rate), 3 (theory) and 4 (key families): the false-positive rate measured
//! once on random keys at the promised n, and held to the promise, to the declared layout's
//! theory, and against the rate on structured keys.

use std::sync::Arc;

use bloomlab_theory::rates as theory;

use super::Plan;
use super::decide::{self, pct};
use super::measure::{self, Filled};
use crate::candidate::{Candidate, CandidateError, Declared};
use crate::keys::Family;
use crate::verdict::{Clause, Outcome, RatePoint, Verdict};

/// Long keys (4 KiB each) are capped at this many members and
/// [`LONG_QUERIES`] queries, so one family cannot dominate the run.
pub(crate) const LONG_MEMBERS: u64 = 20_000;
/// Queries of long keys at most.
pub(crate) const LONG_QUERIES: u64 = 200_000;

/// Clause 2's measurement: members `0..n` of random-u64 in a filter built for (n, p), then
/// `plan.queries` non-members. Clauses 2, 3 and 4 share it.
pub(crate) fn measure(
    candidate: &Arc<dyn Candidate>,
    plan: &Plan,
) -> Result<Filled, CandidateError> {
    measure::fill_and_query(
        candidate.as_ref(),
        plan,
        Family::RandomU64,
        plan.n,
        (plan.n, plan.queries),
        false,
    )
}

/// The verdict on a clause whose measurement failed: broken on a crash (the candidate panicked,
/// exited, hung or broke the protocol), undecided on a clean refusal (nothing was measured).
pub(crate) fn failed(plan: &Plan, clause: Clause, during: &str, e: &CandidateError) -> Verdict {
    let (outcome, what) = if measure::is_crash(e) {
        (Outcome::Broken, "crashed")
    } else {
        (Outcome::Undecided, "nothing measured")
    };
    super::verdict(
        plan,
        clause,
        outcome,
        format!("{what} during {during}"),
        vec![format!("{during}: {e}")],
    )
}

/// The declared layout of a measured filter, if it declared one.
fn layout(filled: &Filled) -> Option<&Declared> {
    filled.stats.as_ref().ok().and_then(|s| s.layout.as_ref())
}

/// A measured rate as a plot point, with the declared theory at the keys inserted.
pub(crate) fn point(
    clause: Clause,
    family: Family,
    design_n: u64,
    filled: &Filled,
    plan: &Plan,
) -> RatePoint {
    RatePoint {
        clause,
        family: family.as_str().into(),
        inserted: filled.inserted,
        design_n,
        queries: filled.queries,
        false_positives: filled.false_positives,
        promised: plan.p,
        theory: layout(filled).and_then(|l| theory_at(l, filled.inserted).ok().map(|(t, _)| t)),
    }
}

fn rate(filled: &Filled) -> f64 {
    filled.false_positives as f64 / filled.queries as f64
}

/// Clause 2: the observed rate against `p (1 + margin)`, one-sided exact at false-alarm rate
/// `plan.alpha` ([`decide::against_ceiling`]).
pub(crate) fn promised(
    measured: &Result<Filled, CandidateError>,
    plan: &Plan,
) -> (Verdict, Vec<RatePoint>) {
    let clause = Clause::PromisedRate;
    let filled = match measured {
        Ok(f) => f,
        Err(e) => {
            return (
                failed(plan, clause, "the random-u64 measurement", e),
                vec![],
            );
        }
    };
    let (x, q) = (filled.false_positives, filled.queries);
    let ceiling = plan.p * (1.0 + plan.margin);
    let c = decide::against_ceiling(x, q, ceiling, plan.alpha);
    let mut figure = format!(
        "{} observed vs {} promised ({x}/{q})",
        pct(rate(filled)),
        pct(plan.p)
    );
    let mut evidence = vec![
        format!(
            "random-u64: built for n = {}, p = {}; {} members inserted; {x} of {q} non-members \
             answered present ({})",
            plan.n,
            plan.p,
            filled.inserted,
            pct(rate(filled))
        ),
        format!(
            "one-sided exact (Clopper-Pearson) bounds at 1 - alpha = {}: lower {}, upper {}",
            1.0 - plan.alpha,
            pct(c.lower),
            pct(c.upper)
        ),
        format!(
            "tolerated rate p (1 + margin) = {}: broken iff the lower bound exceeds it, holds iff \
             the upper bound is within it (false-alarm rate alpha = {})",
            pct(ceiling),
            plan.alpha
        ),
    ];
    if c.outcome == Outcome::Undecided {
        let more = match c.queries_to_decide {
            Some(total) => format!("~{} more queries would decide", total.saturating_sub(q)),
            None => "the observed rate is the tolerated rate: no number of queries decides".into(),
        };
        figure = format!("undecided: {more} ({figure})");
        evidence.push(format!("at the observed rate, {more}"));
    }
    if let Ok(Some(bytes)) = filled.stats.as_ref().map(|s| s.memory_bytes) {
        evidence.push(format!(
            "memory: {bytes} bytes ({:.2} bits per key)",
            bytes as f64 * 8.0 / plan.n as f64
        ));
    }
    let points = vec![point(clause, Family::RandomU64, plan.n, filled, plan)];
    (
        super::verdict(plan, clause, c.outcome, figure, evidence),
        points,
    )
}

/// The false-positive rate a declared layout predicts after `n` distinct keys, with a line
/// naming the layout and the formula; an error names a parameter no filter can have.
pub(crate) fn theory_at(layout: &Declared, n: u64) -> Result<(f64, String), String> {
    let positive = |name: &str, v: u64| {
        if v == 0 {
            Err(format!("declared {name} = 0"))
        } else {
            Ok(())
        }
    };
    let width = |name: &str, v: u32| {
        if v == 0 || v > 64 {
            Err(format!("declared {name} = {v}, not in 1..=64"))
        } else {
            Ok(())
        }
    };
    let nf = n as f64;
    Ok(match *layout {
        Declared::Classic { bits, hashes } => {
            positive("bits", bits)?;
            positive("hashes", hashes.into())?;
            (
                theory::flat(bits, hashes, n),
                format!("classic: {bits} bits, {hashes} hashes; (1 - (1 - 1/m)^(kn))^k"),
            )
        }
        Declared::Partitioned { bits, hashes } => {
            positive("hashes", hashes.into())?;
            let slice = bits / u64::from(hashes);
            positive("bits per slice", slice)?;
            let k = f64::from(hashes);
            let set = -(nf * (-1.0 / slice as f64).ln_1p()).exp_m1();
            (
                set.powf(k),
                format!(
                    "partitioned: {hashes} slices of {slice} bits; (1 - (1 - 1/(m/k))^n)^k \
                     (one probe per slice)"
                ),
            )
        }
        Declared::Blocked {
            bits,
            hashes,
            block_bits,
        } => {
            positive("block_bits", block_bits.into())?;
            positive("hashes", hashes.into())?;
            let blocks = bits / u64::from(block_bits);
            positive("blocks (bits / block_bits)", blocks)?;
            (
                theory::blocked(blocks, block_bits, hashes, n),
                format!(
                    "blocked: {blocks} blocks of {block_bits} bits, {hashes} hashes in one block; \
                     Poisson mixture of block loads (Putze, Sanders & Singler 2007, exact per block)"
                ),
            )
        }
        Declared::SplitBlock { bits } => {
            let blocks = bits / 256;
            positive("blocks (bits / 256)", blocks)?;
            (
                theory::split_block(blocks, 8, 32, n),
                format!(
                    "split-block: {blocks} blocks of 256 bits (8 words of 32 bits, one bit each)"
                ),
            )
        }
        Declared::Xor { fingerprint_bits } => {
            width("fingerprint_bits", fingerprint_bits)?;
            (
                (-f64::from(fingerprint_bits)).exp2(),
                format!("xor/fuse: {fingerprint_bits}-bit fingerprints; 2^-f"),
            )
        }
        Declared::Cuckoo {
            buckets,
            bucket_size,
            fingerprint_bits,
        } => {
            positive("buckets", buckets)?;
            positive("bucket_size", bucket_size.into())?;
            width("fingerprint_bits", fingerprint_bits)?;
            let b = f64::from(bucket_size);
            let load = nf / (buckets as f64 * b);
            let miss = (-(-f64::from(fingerprint_bits)).exp2()).ln_1p();
            (
                -(2.0 * b * load * miss).exp_m1(),
                format!(
                    "cuckoo: {buckets} buckets of {bucket_size} {fingerprint_bits}-bit \
                     fingerprints, load {load:.3}; 1 - (1 - 2^-f)^(2 b load) (the standard \
                     approximation: two candidate buckets, each occupied slot a uniform fingerprint)"
                ),
            )
        }
        Declared::Quotient {
            slots_log2,
            remainder_bits,
        } => {
            width("slots_log2", slots_log2)?;
            width("remainder_bits", remainder_bits)?;
            let alpha = nf / f64::from(slots_log2).exp2();
            (
                -(-alpha / f64::from(remainder_bits).exp2()).exp_m1(),
                format!(
                    "quotient: 2^{slots_log2} slots of {remainder_bits}-bit remainders, load \
                     {alpha:.3}; 1 - exp(-load / 2^r) (the standard approximation)"
                ),
            )
        }
    })
}

/// Clause 3: the rate of clause 2's measurement against the declared layout's theory `t`, two-sided
/// exact at `1 - plan.alpha` against the band `[t / (1 + margin), t (1 + margin)]`
/// ([`decide::against_band`]); n/a when nothing is declared.
pub(crate) fn theory(measured: &Result<Filled, CandidateError>, plan: &Plan) -> Verdict {
    let clause = Clause::Theory;
    let filled = match measured {
        Ok(f) => f,
        Err(e) => return failed(plan, clause, "the random-u64 measurement", e),
    };
    let declared = match &filled.stats {
        Err(e) if measure::is_crash(e) => return failed(plan, clause, "stats", e),
        Err(e) => {
            return super::verdict(
                plan,
                clause,
                Outcome::NotApplicable,
                "no layout declared (stats failed)".into(),
                vec![format!("stats: {e}")],
            );
        }
        Ok(s) => s.layout.as_ref(),
    };
    let Some(layout) = declared else {
        return super::verdict(
            plan,
            clause,
            Outcome::NotApplicable,
            "no layout declared".into(),
            vec!["stats() declared no layout, so there is no theory to hold the rate to".into()],
        );
    };
    let (t, about) = match theory_at(layout, filled.inserted) {
        Ok(v) => v,
        Err(e) => {
            return super::verdict(
                plan,
                clause,
                Outcome::Broken,
                format!("declares an impossible layout: {e}"),
                vec![format!("declared layout: {layout:?}: {e}")],
            );
        }
    };
    let (x, q) = (filled.false_positives, filled.queries);
    let rho = 1.0 + plan.margin;
    let band = decide::against_band(x, q, t / rho, t * rho, plan.alpha);
    let figure = format!(
        "{} observed vs {} theory ({x}/{q})",
        pct(rate(filled)),
        pct(t)
    );
    let evidence = vec![
        format!("declared layout: {about}"),
        format!(
            "theory after {} keys: {}; tolerated band [t / (1 + margin), t (1 + margin)] = [{}, {}]",
            filled.inserted,
            pct(t),
            pct(t / rho),
            pct(t * rho)
        ),
        format!(
            "observed {x} of {q} ({}); two-sided exact interval at 1 - alpha = {}: [{}, {}]",
            pct(rate(filled)),
            1.0 - plan.alpha,
            pct(band.lower),
            pct(band.upper)
        ),
        format!(
            "holds iff the interval is inside the band, broken iff it is entirely outside \
             (false-alarm rate alpha = {})",
            plan.alpha
        ),
    ];
    super::verdict(plan, clause, band.outcome, figure, evidence)
}

/// The structured families of clause 4, in report order.
const STRUCTURED: [Family; 4] = [
    Family::SequentialU64,
    Family::Url,
    Family::SharedPrefix,
    Family::Long,
];

/// One structured family judged against the random keys.
struct Judged {
    family: Family,
    outcome: Outcome,
    /// Family rate over random rate and the family rate; `None` when the candidate failed.
    measured: Option<(f64, f64)>,
}

/// Measures `family` (members `0..m` in a filter built for m, then non-members) and judges it at
/// `level` against `random`; the evidence line goes to `evidence`, the plot point to `points`.
fn judge(
    candidate: &dyn Candidate,
    plan: &Plan,
    random: &Filled,
    family: Family,
    level: f64,
    (evidence, points): (&mut Vec<String>, &mut Vec<RatePoint>),
) -> Judged {
    let (members, queries) = match family {
        Family::Long => (plan.n.min(LONG_MEMBERS), plan.queries.min(LONG_QUERIES)),
        _ => (plan.n, plan.queries),
    };
    let filled = match measure::fill_and_query(
        candidate,
        plan,
        family,
        members,
        (members, queries),
        false,
    ) {
        Ok(f) => f,
        Err(e) => {
            evidence.push(format!("{}: {e}", family.as_str()));
            let outcome = if measure::is_crash(&e) {
                Outcome::Broken
            } else {
                Outcome::Undecided
            };
            return Judged {
                family,
                outcome,
                measured: None,
            };
        }
    };
    // A family measured on a smaller filter (long keys) is compared with random keys in a filter
    // of that same size: a rate that depends on the filter's size (pybloom-live's slices) must not
    // read as a key-family effect.
    let same_size;
    let random = if members == random.inserted {
        random
    } else {
        match measure::fill_and_query(
            candidate,
            plan,
            Family::RandomU64,
            members,
            (members, queries),
            false,
        ) {
            Ok(f) => {
                same_size = f;
                &same_size
            }
            Err(e) => {
                evidence.push(format!(
                    "{}: random-u64 at {members} members: {e}",
                    family.as_str()
                ));
                let outcome = if measure::is_crash(&e) {
                    Outcome::Broken
                } else {
                    Outcome::Undecided
                };
                return Judged {
                    family,
                    outcome,
                    measured: None,
                };
            }
        }
    };
    let d = decide::family_vs_random(
        (filled.false_positives, filled.queries),
        (random.false_positives, random.queries),
        plan.p,
        plan.margin,
        level,
    );
    let rho = 1.0 + plan.margin;
    evidence.push(format!(
        "{}: {} of {} ({}; {members} members), {:.3}x random ({} of {} at {} members); \
         equal-rate test (two-sided) p = {:.3e}; ratio > {rho} p = {:.3e}; ratio < {rho} \
         p = {:.3e}; one-sided bounds [{}, {}]: {}",
        family.as_str(),
        filled.false_positives,
        filled.queries,
        pct(rate(&filled)),
        d.ratio,
        random.false_positives,
        random.queries,
        random.inserted,
        d.p_equal,
        d.p_above,
        d.p_below,
        pct(d.lower),
        pct(d.upper),
        d.outcome
    ));
    points.push(point(Clause::KeyFamilies, family, members, &filled, plan));
    Judged {
        family,
        outcome: d.outcome,
        measured: Some((d.ratio, rate(&filled))),
    }
}

/// Clause 4: each structured family's rate against clause 2's random-key rate
/// ([`decide::family_vs_random`] at `plan.alpha / 4` per family, Bonferroni, so a correct filter
/// is called broken with probability at most `plan.alpha`). Long keys: at most
/// [`LONG_MEMBERS`] members in a filter built for that many and [`LONG_QUERIES`] queries, compared
/// with random keys measured the same way in a filter of that size. Broken if any family is, undecided if any is, else holds.
pub(crate) fn families(
    candidate: &Arc<dyn Candidate>,
    plan: &Plan,
    random: &Result<Filled, CandidateError>,
) -> (Verdict, Vec<RatePoint>) {
    let clause = Clause::KeyFamilies;
    let random = match random {
        Ok(f) => f,
        Err(e) => {
            return (
                failed(plan, clause, "the random-u64 measurement", e),
                vec![],
            );
        }
    };
    let level = plan.alpha / STRUCTURED.len() as f64;
    let mut evidence = vec![format!(
        "random-u64: {} of {} ({}); each family tolerated up to (1 + margin) x max(random rate, \
         p) = {} x max({}, {}); one-sided tests at alpha / {} = {level:e} each (Bonferroni: \
         false-alarm rate alpha = {} in all)",
        random.false_positives,
        random.queries,
        pct(rate(random)),
        1.0 + plan.margin,
        pct(rate(random)),
        pct(plan.p),
        STRUCTURED.len(),
        plan.alpha
    )];
    let mut points = Vec::new();
    let judged: Vec<Judged> = STRUCTURED
        .into_iter()
        .map(|family| {
            let out = (&mut evidence, &mut points);
            judge(candidate.as_ref(), plan, random, family, level, out)
        })
        .collect();
    let any = |o: Outcome| judged.iter().find(|j| j.outcome == o);
    let (outcome, figure) = if let Some(j) = any(Outcome::Broken) {
        let figure = match j.measured {
            Some((ratio, r)) => format!(
                "{} {ratio:.2}x the random-key rate ({} vs {})",
                j.family.as_str(),
                pct(r),
                pct(rate(random))
            ),
            None => format!("crashed on {} keys", j.family.as_str()),
        };
        (Outcome::Broken, figure)
    } else {
        let outcome = any(Outcome::Undecided).map_or(Outcome::Holds, |j| j.outcome);
        let worst = judged
            .iter()
            .filter_map(|j| j.measured.map(|(ratio, _)| (j.family, ratio)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let figure = match worst {
            Some((family, ratio)) => format!(
                "worst {} {ratio:.2}x the random-key rate ({outcome})",
                family.as_str()
            ),
            None => "nothing measured".into(),
        };
        (outcome, figure)
    };
    (
        super::verdict(plan, clause, outcome, figure, evidence),
        points,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theories_match_their_formulas() {
        let (t, _) = theory_at(
            &Declared::Xor {
                fingerprint_bits: 8,
            },
            1000,
        )
        .unwrap();
        assert_eq!(t, 1.0 / 256.0);
        let (t, _) = theory_at(
            &Declared::Classic {
                bits: 95_851,
                hashes: 7,
            },
            10_000,
        )
        .unwrap();
        assert!((t - 0.01).abs() < 0.0002, "{t}");
        // Partitioned with one slice is the flat filter with one hash.
        let (a, _) = theory_at(
            &Declared::Partitioned {
                bits: 1000,
                hashes: 1,
            },
            300,
        )
        .unwrap();
        assert!((a - theory::flat(1000, 1, 300)).abs() < 1e-12);
        // Cuckoo: 4-slot buckets, 8-bit fingerprints, 95% load: 1 - (255/256)^(7.6) = 2.93%.
        let (c, _) = theory_at(
            &Declared::Cuckoo {
                buckets: 1000,
                bucket_size: 4,
                fingerprint_bits: 8,
            },
            3800,
        )
        .unwrap();
        let want = 1.0 - (255.0f64 / 256.0).powf(2.0 * 4.0 * 0.95);
        assert!((c - want).abs() < 1e-12, "{c} vs {want}");
        // Quotient: 2^16 slots at load 0.75, 8-bit remainders: 1 - exp(-0.75 / 256).
        let (qt, _) = theory_at(
            &Declared::Quotient {
                slots_log2: 16,
                remainder_bits: 8,
            },
            49_152,
        )
        .unwrap();
        assert!((qt - (1.0 - (-0.75f64 / 256.0).exp())).abs() < 1e-12);
        let (sb, _) = theory_at(&Declared::SplitBlock { bits: 256 * 1000 }, 10_000).unwrap();
        assert!((sb - theory::split_block(1000, 8, 32, 10_000)).abs() < 1e-15);
    }

    #[test]
    fn impossible_layouts_are_named() {
        let e = theory_at(&Declared::Classic { bits: 0, hashes: 7 }, 10).unwrap_err();
        assert!(e.contains("bits = 0"), "{e}");
        let e = theory_at(
            &Declared::Xor {
                fingerprint_bits: 65,
            },
            10,
        )
        .unwrap_err();
        assert!(e.contains("fingerprint_bits = 65"), "{e}");
        let e = theory_at(
            &Declared::Blocked {
                bits: 100,
                hashes: 3,
                block_bits: 512,
            },
            10,
        )
        .unwrap_err();
        assert!(e.contains("blocks"), "{e}");
    }
}
