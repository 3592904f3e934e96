//! Clauses 2 (promised rate), 3 (theory) and 4 (key families): the false-positive rate measured
//! once on random keys at the promised n, and held to the promise, to the declared layout's
//! theory, and against the rate on structured keys.

use std::sync::Arc;

use bloomlab_theory::rates as theory;

use super::Plan;
use super::decide::{self, pct};
use super::measure::{self, Cut, Filled};
use crate::candidate::{Candidate, CandidateError, Declared};
use crate::keys::Family;
use crate::verdict::{Clause, Outcome, RatePoint, Verdict};

/// Long keys (1,101 bytes each) are capped at this many members, so one family cannot dominate the run;
/// their queries are [`long_queries`].
pub(crate) const LONG_MEMBERS: u64 = 20_000;
/// The most long-key queries a plan makes: 2,000,000 (2.2 GB of keys). [`Plan::full`]'s decision
/// needs about 1,660,000 ([`long_queries`]).
pub(crate) const LONG_QUERIES_CAP: u64 = 2_000_000;
/// The probability with which the long-key budget lets a filter at exactly p hold.
pub(crate) const LONG_POWER: f64 = 0.99;

/// The long family's query budget and its power: the fewest queries at which a filter whose
/// long-key rate is exactly `plan.p` holds on that family (its one-sided exact upper bound at
/// `plan.alpha / 4` within `p (1 + margin)`) with probability at least 0.99, bounded by
/// `plan.queries` and 2,000,000; the power is that probability at the budget (lower when a bound
/// cut it). Holding through the rate-ratio test as well only adds to it. At the quick plan
/// (p = 1%, margin 15%, alpha 1e-4) this is about 194,000 queries, at the full plan (margin 5%)
/// about 1,660,000; the old fixed 200,000 held a filter at exactly p in the full plan in about 3%
/// of runs.
pub fn long_queries(plan: &Plan) -> (u64, f64) {
    let level = plan.alpha / STRUCTURED.len() as f64;
    decide::queries_for_power(
        plan.p,
        plan.p * (1.0 + plan.margin),
        level,
        LONG_POWER,
        plan.queries.min(LONG_QUERIES_CAP),
    )
}

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
/// exited, hung or broke the protocol), undecided on a clean refusal (nothing was measured) or
/// when the deadline passed (saying what would decide).
pub(crate) fn failed(plan: &Plan, clause: Clause, during: &str, e: &CandidateError) -> Verdict {
    if let CandidateError::DeadlinePassed { .. } = e {
        return super::verdict(
            plan,
            clause,
            Outcome::Undecided,
            format!(
                "deadline passed during {during}; the plan's {} queries would decide",
                plan.queries
            ),
            vec![format!(
                "{during}: {e}; the plan's measurement ({} members, {} non-member queries) would \
                 decide: rerun without the deadline or with a later one",
                plan.n, plan.queries
            )],
        );
    }
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

/// What would decide a count the deadline cut short: `to_decide` queries in all at the observed
/// rate when the count so far does not decide, else the plan's.
fn would_decide(filled: &Filled, cut: Cut, to_decide: Option<u64>) -> String {
    match to_decide {
        Some(t) if t > filled.queries => {
            format!("~{t} queries in all would decide at the observed rate")
        }
        _ => format!("the plan's {} queries would decide", cut.planned),
    }
}

/// The figure and evidence line of a count the deadline cut short: undecided whatever the count
/// says (a count stopped by the clock is not the plan's count), with what would decide.
fn cut_short(filled: &Filled, cut: Cut, to_decide: Option<u64>) -> (String, String) {
    let (x, q) = (filled.false_positives, filled.queries);
    let would = would_decide(filled, cut, to_decide);
    (
        format!(
            "deadline passed after {q} of {} queries ({x}/{q}, {}); {would}",
            cut.planned,
            pct(rate(filled))
        ),
        format!(
            "the run's deadline passed after {q} of the plan's {} non-member queries: {x} \
             positive so far ({}); no decision is taken on a count the clock cut short; {would}",
            cut.planned,
            pct(rate(filled))
        ),
    )
}

/// The verdict on a measurement the deadline cut before its first non-member query.
fn no_queries(plan: &Plan, clause: Clause, filled: &Filled) -> Option<Verdict> {
    if filled.queries > 0 {
        return None;
    }
    let planned = filled.cut.map_or(plan.queries, |c| c.planned);
    Some(super::verdict(
        plan,
        clause,
        Outcome::Undecided,
        format!(
            "deadline passed before the first query; the plan's {planned} queries \
             would decide"
        ),
        vec![format!(
            "random-u64: {} members inserted, then the run's deadline passed before the first of \
             the plan's {planned} non-member queries",
            filled.inserted
        )],
    ))
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
    if let Some(v) = no_queries(plan, clause, filled) {
        return (v, vec![]);
    }
    let (x, q) = (filled.false_positives, filled.queries);
    let ceiling = plan.p * (1.0 + plan.margin);
    let c = decide::against_ceiling(x, q, ceiling, plan.alpha);
    let mut outcome = c.outcome;
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
    if let Some(cut) = filled.cut {
        let (f, line) = cut_short(filled, cut, c.queries_to_decide);
        (outcome, figure) = (Outcome::Undecided, f);
        evidence.push(line);
    } else if c.outcome == Outcome::Undecided {
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
        super::verdict(plan, clause, outcome, figure, evidence),
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
    if let Some(v) = no_queries(plan, clause, filled) {
        return v;
    }
    let (x, q) = (filled.false_positives, filled.queries);
    let rho = 1.0 + plan.margin;
    let band = decide::against_band(x, q, t / rho, t * rho, plan.alpha);
    let mut outcome = band.outcome;
    let mut figure = format!(
        "{} observed vs {} theory ({x}/{q})",
        pct(rate(filled)),
        pct(t)
    );
    let to_decide = || {
        (band.outcome == Outcome::Undecided)
            .then(|| {
                decide::queries_to_decide_band(rate(filled), q, (t / rho, t * rho), plan.alpha)
            })
            .flatten()
    };
    let mut evidence = vec![
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
    if let Some(cut) = filled.cut {
        let (f, line) = cut_short(filled, cut, to_decide());
        (outcome, figure) = (Outcome::Undecided, f);
        evidence.push(line);
    } else if band.outcome == Outcome::Undecided {
        let more = match to_decide() {
            Some(total) => format!("~{} more queries would decide", total.saturating_sub(q)),
            None => "the observed rate is an end of the band: no number of queries decides".into(),
        };
        figure = format!("undecided: {more} ({figure})");
        evidence.push(format!("at the observed rate, {more}"));
    }
    super::verdict(plan, clause, outcome, figure, evidence)
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
    /// Family rate over random rate, and the family's count of queries; `None` when nothing was
    /// measured.
    measured: Option<(f64, (u64, u64))>,
    /// When undecided: what would decide it.
    to_decide: String,
}

impl Judged {
    /// A family whose measurement failed: broken on a crash, else undecided (a clean refusal, or
    /// the deadline).
    fn failed(family: Family, e: &CandidateError, plan: &Plan, queries: u64) -> Judged {
        let outcome = if measure::is_crash(e) {
            Outcome::Broken
        } else {
            Outcome::Undecided
        };
        let to_decide = match e {
            CandidateError::DeadlinePassed { .. } => format!(
                "deadline passed during {}: the plan's {queries} queries of it would decide",
                family.as_str()
            ),
            _ => format!(
                "nothing measured on {} (refused: {e}); a filter that takes these keys would \
                 decide with the plan's {} queries",
                family.as_str(),
                plan.queries
            ),
        };
        Judged {
            family,
            outcome,
            measured: None,
            to_decide,
        }
    }
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
        Family::Long => (plan.n.min(LONG_MEMBERS), long_queries(plan).0),
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
        Ok(f) if f.queries > 0 => f,
        Ok(f) => {
            let e = CandidateError::DeadlinePassed {
                operation: "query".into(),
                done: 0,
                of: f.cut.map_or(queries, |c| c.planned),
                present: Some(0),
            };
            evidence.push(format!("{}: {e}", family.as_str()));
            return Judged::failed(family, &e, plan, queries);
        }
        Err(e) => {
            evidence.push(format!("{}: {e}", family.as_str()));
            return Judged::failed(family, &e, plan, queries);
        }
    };
    // A family measured on a smaller filter (long keys) is compared with random keys in a filter
    // of that same size: a rate that depends on the filter's size (pybloom-live's slices) must not
    // read as a key-family effect. That comparison count is printed beside the family's.
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
            Ok(f) if f.cut.is_none() => {
                same_size = f;
                &same_size
            }
            Ok(f) => {
                let e = CandidateError::DeadlinePassed {
                    operation: "query".into(),
                    done: f.queries,
                    of: queries,
                    present: Some(f.false_positives),
                };
                evidence.push(format!(
                    "{}: random-u64 at {members} members: {e}",
                    family.as_str()
                ));
                return Judged::failed(family, &e, plan, queries);
            }
            Err(e) => {
                evidence.push(format!(
                    "{}: random-u64 at {members} members: {e}",
                    family.as_str()
                ));
                return Judged::failed(family, &e, plan, queries);
            }
        }
    };
    let (xf, qf) = (filled.false_positives, filled.queries);
    let d = decide::family_vs_random(
        (xf, qf),
        (random.false_positives, random.queries),
        plan.p,
        plan.margin,
        level,
    );
    let rho = 1.0 + plan.margin;
    let mut outcome = d.outcome;
    // At the observed rates, against the tolerated (1 + margin) max(random rate, p) by the exact
    // bound: the count of this family's queries that would decide.
    let ceiling = rho * rate(random).max(plan.p);
    let at_rate = (d.outcome == Outcome::Undecided)
        .then(|| decide::queries_to_decide(rate(&filled), qf, ceiling, level))
        .flatten();
    let to_decide = if let Some(cut) = filled.cut {
        outcome = Outcome::Undecided;
        format!(
            "deadline passed after {qf} of {} {} queries; {}",
            cut.planned,
            family.as_str(),
            would_decide(&filled, cut, at_rate)
        )
    } else {
        match at_rate {
            Some(t) => format!(
                "~{} more {} queries would decide at the observed rate",
                t.saturating_sub(qf),
                family.as_str()
            ),
            None => "its rate is the tolerated rate: no number of queries decides".into(),
        }
    };
    let budget = if family == Family::Long {
        let (q, power) = long_queries(plan);
        format!(
            " (budget {q} queries: a filter at exactly p holds on it with probability {:.3})",
            power
        )
    } else {
        String::new()
    };
    evidence.push(format!(
        "{}: {xf} of {qf} ({}; {members} members), {:.3}x random ({} of {} at {} members); \
         equal-rate test (two-sided) p = {:.3e}; ratio > {rho} p = {:.3e}; ratio < {rho} \
         p = {:.3e}; one-sided bounds [{}, {}]: {outcome}{budget}{}",
        family.as_str(),
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
        if outcome == Outcome::Undecided {
            format!("; {to_decide}")
        } else {
            String::new()
        }
    ));
    points.push(point(Clause::KeyFamilies, family, members, &filled, plan));
    Judged {
        family,
        outcome,
        measured: Some((d.ratio, (xf, qf))),
        to_decide,
    }
}

/// Clause 4: each structured family's rate against clause 2's random-key rate
/// ([`decide::family_vs_random`] at `plan.alpha / 4` per family, Bonferroni, so a correct filter
/// is called broken with probability at most `plan.alpha`). Long keys: at most
/// [`LONG_MEMBERS`] members in a filter built for that many and [`long_queries`] queries (a
/// filter at exactly p holds on them with probability [`LONG_POWER`] at the shipped plans),
/// compared with random keys measured the same way in a filter of that size. Broken if any
/// family is, undecided if any is, else holds; the figure names the family that decided it.
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
    if let Some(v) = no_queries(plan, clause, random) {
        return (v, vec![]);
    }
    if let Some(cut) = random.cut {
        // Every family is compared with this count: with it cut short, nothing can be.
        let (figure, line) = cut_short(random, cut, None);
        let evidence = vec![format!(
            "random-u64 (the rate each family is held to): {line}"
        )];
        return (
            super::verdict(plan, clause, Outcome::Undecided, figure, evidence),
            vec![],
        );
    }
    let level = plan.alpha / STRUCTURED.len() as f64;
    let mut evidence = vec![format!(
        "random-u64: {} of {} ({}), the count clauses 2 and 3 judge; each family tolerated up \
         to (1 + margin) x max(random rate, p) = {} x max({}, {}); one-sided tests at alpha / {} \
         = {level:e} each (Bonferroni: false-alarm rate alpha = {} in all)",
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
    let counted = |j: &Judged| match j.measured {
        Some((ratio, (x, q))) => format!(
            "{} {ratio:.2}x the random-key rate ({x}/{q}, {} vs {})",
            j.family.as_str(),
            pct(x as f64 / q as f64),
            pct(rate(random))
        ),
        None => format!("{} not measured", j.family.as_str()),
    };
    let (outcome, figure) = if let Some(j) = any(Outcome::Broken) {
        let figure = match j.measured {
            Some(_) => counted(j),
            None => format!("crashed on {} keys", j.family.as_str()),
        };
        (Outcome::Broken, figure)
    } else if let Some(j) = any(Outcome::Undecided) {
        let others = judged
            .iter()
            .filter(|o| o.outcome == Outcome::Undecided && o.family != j.family)
            .map(|o| o.family.as_str())
            .collect::<Vec<_>>();
        let also = if others.is_empty() {
            String::new()
        } else {
            format!(" (also undecided: {})", others.join(", "))
        };
        (
            Outcome::Undecided,
            format!("{}: {}{also}", counted(j), j.to_decide),
        )
    } else {
        let worst = judged
            .iter()
            .filter_map(|j| j.measured.map(|(ratio, _)| (j.family, ratio)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let figure = match worst {
            Some((family, ratio)) => format!(
                "worst {} {ratio:.2}x the random-key rate (holds)",
                family.as_str()
            ),
            None => "nothing measured".into(),
        };
        (Outcome::Holds, figure)
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

    #[test]
    fn the_long_budget_lets_a_filter_at_exactly_p_hold() {
        // The old fixed 200,000 queries at the full plan (p = 1%, margin 5%, alpha / 4 = 2.5e-5):
        // the upper bound of a count at p sits ~4.06 sd above it, and the sd is 2.2% of p, so
        // the bound falls within p (1 + 5%) only when the count comes out ~1.8 sd low: ~3%.
        let old = decide::power_to_hold(0.01, 200_000, 0.0105, 2.5e-5);
        assert!((0.01..0.06).contains(&old), "{old}");
        // Normal approximation of the budget: ((z_{1 - 2.5e-5} + z_{0.99}) sqrt(p (1 - p)) /
        // (margin p))^2 = ((4.06 + 2.33) x 0.0995 / (margin x 0.01))^2: 1.62e6 at margin 5%,
        // 1.80e5 at 15%. The exact Clopper-Pearson bound is wider than the normal one, the more
        // so the wider the margin, so the exact count is above it, but by less than 10%.
        for (plan, approx) in [(Plan::full(), 1.62e6), (Plan::quick(), 1.80e5)] {
            let (q, power) = long_queries(&plan);
            eprintln!("margin {}: {q} long queries, power {power}", plan.margin);
            assert!(power >= LONG_POWER, "{q}: {power}");
            assert!(
                q as f64 >= approx && (q as f64) < 1.1 * approx,
                "{q} queries vs ~{approx} (margin {})",
                plan.margin
            );
            // 2% fewer queries fall short of the power (the search's precision is 0.1%).
            let fewer = q * 98 / 100;
            let level = plan.alpha / 4.0;
            let ceiling = plan.p * (1.0 + plan.margin);
            assert!(decide::power_to_hold(plan.p, fewer, ceiling, level) < LONG_POWER);
        }
        // A plan with fewer queries bounds the budget, and says the power it has.
        let thin = Plan {
            queries: 50_000,
            ..Plan::full()
        };
        let (q, power) = long_queries(&thin);
        assert_eq!(q, 50_000);
        assert!(power < 0.01, "{power}");
    }
}
