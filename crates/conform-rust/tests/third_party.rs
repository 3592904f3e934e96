//! The third-party Rust candidates (`bloomlab_conform_rust`): each builds, never forgets a member,
//! declares a layout that fits its (n, p), and answers the same after a serialization round trip.
//! Every key set is seeded; the only statistical figures are the declared layouts' theory, computed
//! exactly, so these tests have no false-alarm rate.

use std::sync::Arc;

use bloomlab_conform::keys::Family;
use bloomlab_conform::{Candidate, CandidateError, Declared, Instance, KeyBatch};
use bloomlab_conform_rust::{self as third_party, VERSIONS};

const N: u64 = 10_000;
const P: f64 = 0.01;
const SEED: u64 = 0x27_0000_0001;

/// Keys `start..start + len` of `family`.
fn keys(family: Family, start: u64, len: usize) -> KeyBatch {
    let mut b = KeyBatch::new();
    family.fill(SEED, start, len, &mut b);
    b
}

/// A filter of `candidate` for (N, P) holding keys `0..N` of `family`.
fn filled(candidate: &dyn Candidate, family: Family) -> Box<dyn Instance> {
    let name = candidate.about().name;
    let mut f = candidate
        .build(N, P)
        .unwrap_or_else(|e| panic!("{name}: build({N}, {P}) failed: {e}"));
    f.insert(&keys(family, 0, N as usize))
        .unwrap_or_else(|e| panic!("{name}: insert of {N} {family:?} keys failed: {e}"));
    f
}

fn answers(f: &mut dyn Instance, keys: &KeyBatch) -> Vec<bool> {
    let mut out = Vec::new();
    f.query(keys, &mut out).expect("query");
    assert_eq!(out.len(), keys.len(), "one answer per key");
    out
}

#[test]
fn the_versions_in_reports_are_the_versions_in_cargo_lock() {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
        .expect("the workspace's Cargo.lock");
    for (krate, version) in VERSIONS {
        let entry = format!("name = \"{krate}\"\nversion = \"{version}\"\n");
        assert!(
            lock.contains(&entry),
            "Cargo.lock has no {krate} {version}: update bloomlab_conform_rust's VERSION constants"
        );
    }
    for c in third_party::all() {
        let about = c.about();
        assert!(
            VERSIONS.iter().any(|&(_, v)| v == about.version),
            "{} reports version {} that VERSIONS does not list",
            about.name,
            about.version
        );
        assert!(about.name.starts_with("rust/"), "{}", about.name);
    }
}

#[test]
fn every_candidate_remembers_every_member_of_every_family() {
    for c in third_party::all() {
        let name = c.about().name;
        for family in Family::ALL {
            let mut f = filled(c.as_ref(), family);
            let members = keys(family, 0, N as usize);
            let got = answers(f.as_mut(), &members);
            let missing = got.iter().filter(|&&a| !a).count();
            assert_eq!(
                missing, 0,
                "{name}: {missing} of {N} {family:?} members answered absent (n = {N}, p = {P}, \
                 seed = {SEED:#x})"
            );
        }
    }
}

#[test]
fn the_names_are_distinct_and_found_by_name() {
    let all = third_party::all();
    for c in &all {
        let name = c.about().name;
        let found = third_party::by_name(&name).expect("by_name");
        assert_eq!(found.about().name, name);
        assert_eq!(all.iter().filter(|d| d.about().name == name).count(), 1);
    }
}

/// A Bloom filter of m bits, k probes per key, after n keys: (1 - e^(-kn/m))^k.
fn classic_rate(m: f64, k: f64, n: f64) -> f64 {
    (1.0 - (-k * n / m).exp()).powf(k)
}

/// A split-block filter of `bits` after n keys: a block holding j keys has j bits set in each of
/// its eight 32-bit words (at most), so a query passes with (1 - (31/32)^j)^8; j is Poisson with
/// mean n / blocks.
fn split_block_rate(bits: u64, n: f64) -> f64 {
    let lambda = n / (bits / 256) as f64;
    let mut pj = (-lambda).exp();
    let mut sum = 0.0;
    for j in 0..(lambda * 10.0 + 50.0) as u32 {
        sum += pj * (1.0 - (31.0f64 / 32.0).powi(j as i32)).powi(8);
        pj *= lambda / (j + 1) as f64;
    }
    sum
}

/// Checks a declared layout against (N, P); the message names every figure.
///
/// Bounds: any approximate-membership structure with rate p needs at least n log2(1/p) bits
/// (Carter et al. 1978), so a layout's bits below that cannot keep the promise. A Bloom layout's k
/// must beat k - 1 and k + 1 at its own m and n, and its theory rate at n may exceed p only by the
/// cost of an integer k (under 2% for 1e-4 <= p <= 0.1). A split-block layout's theory rate at n
/// must be within p, and its bits a power of two no more than twice the crate's own sizing
/// formula (it rounds up). A quotient layout must hold n at 95% occupancy with 2^q slots, no more
/// than twice what that needs, and r = ceil(log2(1/p)). A cuckoo layout's buckets must hold n and
/// its rate bound 2 b load 2^-f must be within p. A xor layout's 2^-f must be within p.
fn check_layout(name: &str, d: &Declared, memory: Option<u64>) {
    let (n, p) = (N as f64, P);
    let min_bits = n * (1.0 / p).log2();
    match *d {
        Declared::Classic { bits, hashes } => {
            let (m, k) = (bits as f64, hashes as f64);
            let rate = classic_rate(m, k, n);
            assert!(
                m >= min_bits,
                "{name}: {bits} bits < n log2(1/p) = {min_bits:.0}"
            );
            for other in [k - 1.0, k + 1.0].into_iter().filter(|&o| o >= 1.0) {
                let r = classic_rate(m, other, n);
                assert!(
                    rate <= r,
                    "{name}: k = {k} ({rate:e}) loses to k = {other} ({r:e})"
                );
            }
            assert!(
                rate <= 1.02 * p,
                "{name}: m = {bits}, k = {hashes}, n = {N}: theory {rate:e} > 1.02 p = {p}"
            );
            if let Some(bytes) = memory {
                assert!(
                    bytes * 8 >= bits,
                    "{name}: {bytes} bytes hold fewer than {bits} bits"
                );
            }
        }
        Declared::SplitBlock { bits } => {
            let rate = split_block_rate(bits, n);
            let formula = -8.0 * n / (1.0 - p.powf(1.0 / 8.0)).ln();
            assert!(bits.is_power_of_two() && bits >= 256, "{name}: {bits} bits");
            assert!(
                (min_bits..=2.0 * formula).contains(&(bits as f64)),
                "{name}: {bits} bits outside [n log2(1/p) = {min_bits:.0}, 2 x {formula:.0}]"
            );
            assert!(
                rate <= p,
                "{name}: {bits} bits, n = {N}: theory {rate:e} > p = {p}"
            );
        }
        Declared::Xor { fingerprint_bits } => {
            let rate = (-(fingerprint_bits as f64)).exp2();
            assert!(
                matches!(fingerprint_bits, 8 | 16) && rate <= p,
                "{name}: {fingerprint_bits}-bit fingerprints, 2^-f = {rate:e}, p = {p}"
            );
            if let Some(bytes) = memory {
                // About 1.23 n (xor) or 1.13 n (binary fuse) fingerprints: at least n of them.
                assert!(
                    bytes * 8 >= N * fingerprint_bits as u64,
                    "{name}: {bytes} bytes < n fingerprints of {fingerprint_bits} bits"
                );
            }
        }
        Declared::Quotient {
            slots_log2,
            remainder_bits,
        } => {
            let slots = (1u64 << slots_log2) as f64;
            let needed = n / 0.95;
            assert!(
                (needed..=2.0 * needed.max(64.0)).contains(&slots),
                "{name}: 2^{slots_log2} slots for n = {N} at 95% occupancy"
            );
            assert_eq!(
                remainder_bits,
                (1.0 / p).log2().ceil() as u32,
                "{name}: remainder bits"
            );
            let rate = 1.0 - (-(n / slots) * (-(remainder_bits as f64)).exp2()).exp();
            assert!(rate <= p, "{name}: theory {rate:e} > p = {p}");
        }
        Declared::Cuckoo {
            buckets,
            bucket_size,
            fingerprint_bits,
        } => {
            let slots = (buckets * bucket_size as u64) as f64;
            assert!(
                slots >= n,
                "{name}: {buckets} x {bucket_size} slots < n = {N}"
            );
            let bound =
                2.0 * bucket_size as f64 * (n / slots) * (-(fingerprint_bits as f64)).exp2();
            assert!(bound <= p, "{name}: rate bound {bound:e} > p = {p}");
        }
        ref other => panic!("{name}: unexpected layout {other:?}"),
    }
}

#[test]
fn declared_layouts_fit_the_promise() {
    let mut declared = Vec::new();
    for c in third_party::all() {
        let name = c.about().name;
        let mut f = filled(c.as_ref(), Family::RandomU64);
        let stats = f.stats().unwrap_or_else(|e| panic!("{name}: stats: {e}"));
        if let Some(d) = &stats.layout {
            check_layout(&name, d, stats.memory_bytes);
            declared.push(name);
        }
    }
    // The candidates whose layout is one of Declared's all say so.
    for expected in [
        "rust/fastbloom",
        "rust/fastbloom/atomic",
        "rust/fastbloom@0.15.0",
        "rust/bloomfilter",
        "rust/xorf/Xor8",
        "rust/xorf/BinaryFuse8",
        "rust/xorf/BinaryFuse16",
        "rust/qfilter",
        "rust/scalable_cuckoo_filter",
        "rust/parquet/Sbbf",
    ] {
        assert!(
            declared.iter().any(|d| d == expected),
            "{expected} declared no layout"
        );
    }
}

#[test]
fn serialized_filters_answer_exactly_as_the_original() {
    for c in third_party::all() {
        let about = c.about();
        let name = &about.name;
        let mut f = filled(c.as_ref(), Family::Url);
        let probe = {
            let mut b = keys(Family::Url, 0, N as usize);
            keys(Family::Url, N, 100_000).iter().for_each(|k| b.push(k));
            b
        };
        let before = answers(f.as_mut(), &probe);
        let bytes = f
            .serialize()
            .unwrap_or_else(|e| panic!("{name}: serialize: {e}"));
        assert_eq!(
            bytes.is_some(),
            about.capabilities.serialize,
            "{name}: capability"
        );
        let Some(bytes) = bytes else {
            assert!(matches!(
                c.deserialize(&[]),
                Err(CandidateError::Unsupported { .. })
            ));
            continue;
        };
        let mut back = c
            .deserialize(&bytes)
            .unwrap_or_else(|e| panic!("{name}: deserialize of {} bytes: {e}", bytes.len()));
        let after = answers(back.as_mut(), &probe);
        let differ = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ,
            0,
            "{name}: {differ} of {} answers changed",
            probe.len()
        );
        assert_eq!(
            back.stats().unwrap(),
            f.stats().unwrap(),
            "{name}: stats changed"
        );
        // Truncated bytes are an error, never a panic or a filter that answers wrongly.
        let cut = &bytes[..bytes.len() / 2 + 1];
        assert!(
            c.deserialize(cut).is_err(),
            "{name}: accepted a truncated filter"
        );
    }
}

#[test]
fn the_atomic_filter_takes_concurrent_inserts_without_losing_one() {
    let c = third_party::by_name("rust/fastbloom/atomic").unwrap();
    assert!(c.about().capabilities.concurrent);
    let f = c.build(N * 4, P).unwrap();
    let shared = f.shared().expect("shared inserts");
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let b = keys(Family::RandomU64, t * N, N as usize);
                b.iter().for_each(|k| shared.insert_shared(k));
            });
        }
    });
    let mut f = f;
    let got = answers(f.as_mut(), &keys(Family::RandomU64, 0, 4 * N as usize));
    let missing = got.iter().filter(|&&a| !a).count();
    assert_eq!(
        missing,
        0,
        "{missing} of {} members lost under 4 threads",
        4 * N
    );
    // The others offer no shared inserts.
    for c in third_party::all() {
        if c.about().name != "rust/fastbloom/atomic" {
            assert!(
                c.build(N, P).unwrap().shared().is_none(),
                "{}",
                c.about().name
            );
        }
    }
}

#[test]
fn xor_filters_are_static_and_refuse_a_rate_their_fingerprints_cannot_give() {
    for (name, floor) in [
        ("rust/xorf/Xor8", 2f64.powi(-8)),
        ("rust/xorf/BinaryFuse8", 2f64.powi(-8)),
        ("rust/xorf/BinaryFuse16", 2f64.powi(-16)),
    ] {
        let c: Arc<dyn Candidate> = third_party::by_name(name).unwrap();
        assert!(c.about().capabilities.static_build);
        for bad in [floor / 2.0, 0.0, -1.0, f64::NAN, 1.5] {
            match c.build(N, bad) {
                Err(CandidateError::Refused { message, .. }) => {
                    assert!(message.contains(&format!("p = {bad}")), "{name}: {message}")
                }
                Err(e) => panic!("{name}: p = {bad}: {e}"),
                Ok(_) => panic!("{name}: accepted p = {bad} below its floor {floor:e}"),
            }
        }
        assert!(c.build(N, floor).is_ok(), "{name}: refused p = its floor");
        let mut f = filled(c.as_ref(), Family::SequentialU64);
        answers(f.as_mut(), &keys(Family::SequentialU64, 0, 10));
        match f.insert(&keys(Family::SequentialU64, N, 1)) {
            Err(CandidateError::Refused { message, .. }) => {
                assert!(message.contains("static filter"), "{name}: {message}")
            }
            other => panic!("{name}: insert after construction gave {other:?}"),
        }
        // Built from nothing, it answers (absent, or a false positive) rather than failing.
        let mut empty = c.build(0, P).unwrap();
        answers(empty.as_mut(), &keys(Family::Url, 0, 100));
    }
}

#[test]
fn a_full_quotient_filter_refuses_more_keys_instead_of_answering_wrongly() {
    let c = third_party::by_name("rust/qfilter").unwrap();
    let mut f = c.build(1000, P).unwrap();
    let err = f
        .insert(&keys(Family::RandomU64, 0, 10_000))
        .expect_err("10x its capacity");
    assert!(matches!(err, CandidateError::Refused { .. }), "{err}");
    assert!(err.to_string().contains("rust/qfilter"), "{err}");
}

/// Inserts keys `0..n` of `family`, then counts positives among `queries` non-members (keys from
/// `n` on), 4096 keys a batch.
fn fill_and_count(f: &mut dyn Instance, n: u64, queries: u64) -> u64 {
    let mut b = KeyBatch::new();
    let mut out = Vec::new();
    let mut at = 0;
    while at < n {
        let len = (n - at).min(4096) as usize;
        Family::RandomU64.fill(SEED, at, len, &mut b);
        f.insert(&b).expect("insert");
        at += len as u64;
    }
    let mut positive = 0;
    while at < n + queries {
        let len = (n + queries - at).min(4096) as usize;
        Family::RandomU64.fill(SEED, at, len, &mut b);
        f.query(&b, &mut out).expect("query");
        positive += out.iter().filter(|&&a| a).count() as u64;
        at += len as u64;
    }
    positive
}

/// fastbloom issue #22 ("thousands of false positives at p = 1e-12 and 500M items", reported on
/// 0.15.0, fixed in 0.16.0). The defect needs a filter past 2^32 bits (0.15.0's
/// `((h >> 32) * num_bits) >> 32` wraps there, so every index lands below 2^32), and shows most
/// when the bits past 2^32 are most of the filter, just under 2^33. At p = 1e-12 (k = 40, 57.5 bits
/// a key) that is n = 149M keys: 1.07 GB per filter, one filter alive at a time, about 6e9 probes
/// to fill. (The only scale tried; a filter nearer 2^32 bits would lose fewer bits and need far
/// more queries to decide.)
///
/// Decision: with 4M non-member queries a filter keeping p = 1e-12 shows 2 or more false positives
/// with probability under 1e-11 (Poisson, mean 4e-6), so "at most 1" is the bound for the fixed
/// release and "2 or more" already proves the old one broken. Theory for the wrapped index: at
/// best a filter of 2^32 bits, (1 - e^(-k n / 2^32))^k = 1.0e-5 if its probes spread evenly (they
/// do not, so more). Seen once (17:49 UTC, 27 Nov): 0.15.0 67 false positives (1.7e-5), 0.17.0
/// none; 298 s, 1.05 GB peak.
///
/// Run: `cargo test --release -p bloomlab-conform --test third_party -- --ignored fastbloom_issue_22`
#[test]
#[ignore = "fills two filters of 1.07 GB with 149M keys each (minutes)"]
fn fastbloom_issue_22_reproduces_on_0_15_0_and_not_on_the_pinned_release() {
    const N22: u64 = 149_000_000;
    const P22: f64 = 1e-12;
    const QUERIES: u64 = 4_000_000;
    let mut counts = Vec::new();
    for name in ["rust/fastbloom@0.15.0", "rust/fastbloom"] {
        let c = third_party::by_name(name).unwrap();
        let started = std::time::Instant::now();
        let mut f = c.build(N22, P22).unwrap();
        let Some(Declared::Classic { bits, hashes }) = f.stats().unwrap().layout else {
            panic!("{name}: no classic layout")
        };
        assert!(bits > 1 << 32, "{name}: {bits} bits do not pass 2^32");
        let fp = fill_and_count(f.as_mut(), N22, QUERIES);
        let wrapped =
            (1.0 - (-(hashes as f64) * N22 as f64 / 2f64.powi(31)).exp()).powi(hashes as i32);
        println!(
            "{name}: n = {N22}, p = {P22:e}, m = {bits} bits, k = {hashes}: {fp} false positives \
             in {QUERIES} queries (rate {:.3e}; a 2^32-bit filter's theory {wrapped:.3e}) in {:.0?}",
            fp as f64 / QUERIES as f64,
            started.elapsed()
        );
        counts.push(fp);
    }
    assert!(
        counts[0] >= 2,
        "0.15.0 kept p = {P22:e}: {} false positives",
        counts[0]
    );
    assert!(
        counts[1] <= 1,
        "the pinned fastbloom: {} false positives",
        counts[1]
    );
}

/// The same defect through the quick plan's scale clause (its boundary test, seconds and 1.05 GiB at
/// its peak, see `bloomlab_conform::suite::scale`): 0.15.0's indices stop below 2^32, so its
/// filter past 2^33 bits has about twice the rate of its filter past 2^32 bits at the same load
/// (seen: 2.92x, 6,093 and 2,084 false positives of 4,000,000 each) and it is broken; the pinned
/// release holds. A correct filter is called broken with probability at most alpha = 1e-4.
#[test]
fn the_quick_plans_scale_clause_finds_issue_22_in_0_15_0_and_not_in_the_pinned_release() {
    let plan = bloomlab_conform::Plan {
        clauses: vec![bloomlab_conform::Clause::Scale],
        ..bloomlab_conform::Plan::quick()
    };
    let outcome = |name: &str| {
        let c = bloomlab_conform::run(third_party::by_name(name).unwrap(), &plan);
        println!("{c}");
        c.verdict(bloomlab_conform::Clause::Scale).unwrap().clone()
    };
    let old = outcome("rust/fastbloom@0.15.0");
    assert_eq!(old.outcome, bloomlab_conform::Outcome::Broken, "{old:?}");
    assert!(old.figure.contains("same load per bit"), "{old:?}");
    let pinned = outcome("rust/fastbloom");
    assert_eq!(
        pinned.outcome,
        bloomlab_conform::Outcome::Holds,
        "{pinned:?}"
    );
}

/// xor_singleheader #77 (2026): its binary fuse construction fails for 20-40% of key sets of about
/// 11,480 to 11,521 keys (the top of a segment-count plateau). xorf 0.13 retries with a smaller
/// segment there; this holds it to that: 20 seeded key sets of 11,504 keys, each type, all built.
/// (A failure would be the adapter's refusal naming the construction.)
#[test]
fn binary_fuse_builds_at_the_plateau_where_the_c_implementation_fails() {
    for name in ["rust/xorf/BinaryFuse8", "rust/xorf/BinaryFuse16"] {
        let c = third_party::by_name(name).unwrap();
        for seed in 0..20 {
            let mut f = c.build(11_504, P).unwrap();
            let mut b = KeyBatch::new();
            Family::RandomU64.fill(seed, 0, 11_504, &mut b);
            f.insert(&b).unwrap();
            let mut out = Vec::new();
            f.query(&b, &mut out)
                .unwrap_or_else(|e| panic!("{name}: 11,504 keys of seed {seed}: {e}"));
            assert!(
                out.iter().all(|&a| a),
                "{name}: seed {seed}: a member answered absent"
            );
        }
    }
}

/// The suite's quick pass on every third-party candidate: the readable verdicts printed (run with
/// `--nocapture` to read them), and clause 1 asserted, the one a correct filter must hold whatever
/// its rate: no member forgotten, on any family, after a round trip, under concurrent inserts.
#[test]
fn the_quick_pass_finds_no_false_negative_in_any_third_party_crate() {
    let plan = bloomlab_conform::Plan::quick();
    for c in third_party::all() {
        let name = c.about().name;
        let started = std::time::Instant::now();
        let verdict = bloomlab_conform::run(c, &plan);
        println!("{verdict}\n({name}: {:.1?})\n", started.elapsed());
        let clause1 = verdict
            .verdict(bloomlab_conform::Clause::NoFalseNegatives)
            .unwrap_or_else(|| panic!("{name}: the quick plan ran no clause 1"));
        assert_eq!(
            clause1.outcome,
            bloomlab_conform::Outcome::Holds,
            "{name}: clause 1: {clause1:?}"
        );
    }
}

/// Every candidate declaring a classic Bloom layout keeps that layout's rate on random keys:
/// 400,000 non-member queries after N members, the count held to a Chernoff upper bound at
/// false-alarm rate 1e-6: P(X >= (1 + d) mu) <= exp(-d^2 mu / (2 + d)), so
/// d = (L + sqrt(L^2 + 8 L mu)) / (2 mu) with L = ln(1e6). mu is the theory rate times 1.01, which
/// covers the finite-m excess of the exact Bloom rate over (1 - e^(-kn/m))^k (Bose et al. 2008)
/// at m near 10^5. This caught the bloomfilter adapter giving both SipHash keys the same seed
/// half, which made its first two probes one bit (3.8% observed against 1%).
#[test]
fn classic_layouts_keep_their_theory_rate_on_random_keys() {
    const QUERIES: u64 = 400_000;
    let l = 1e6f64.ln();
    for c in third_party::all() {
        let name = c.about().name;
        let mut f = filled(c.as_ref(), Family::RandomU64);
        let Some(Declared::Classic { bits, hashes }) = f.stats().unwrap().layout else {
            continue;
        };
        let theory = classic_rate(bits as f64, hashes as f64, N as f64);
        let mu = theory * 1.01 * QUERIES as f64;
        let bound = mu * (1.0 + (l + (l * l + 8.0 * l * mu).sqrt()) / (2.0 * mu));
        let got = answers(f.as_mut(), &keys(Family::RandomU64, N, QUERIES as usize));
        let fp = got.iter().filter(|&&a| a).count();
        assert!(
            (fp as f64) <= bound,
            "{name}: {fp} of {QUERIES} non-members present; m = {bits}, k = {hashes}, n = {N}, \
             theory {theory:e}, bound {bound:.0} (false alarm 1e-6), seed {SEED:#x}"
        );
    }
}

/// A known sizing defect of parquet's split-block filter (raised in arrow-rs PR #9206, closed
/// unmerged; still in 60.1.0): `new_with_ndv_fpp` sizes with the flat-filter formula
/// m = -8 n / ln(1 - p^(1/8)), which ignores how unevenly keys fall into blocks; rounding up to a
/// power of two usually hides that, but not at n = 100, p = 1%: 968 bits round to 1024 (4 blocks).
/// The declared layout's exact theory (block loads Binomial(n, 1/B); a block holding j keys passes
/// a query with (1 - (31/32)^j)^8) is then above p (1.053%), so no seed of it can be expected to
/// keep the promise. The suite's promised-rate clause would need ~10^7 queries over many filters
/// to see a 5% excess; the theory shows it exactly.
#[test]
fn parquet_sbbf_sizing_misses_the_promise_at_small_n() {
    let c = third_party::by_name("rust/parquet/Sbbf").unwrap();
    let (n, p) = (100u64, 0.01);
    let mut f = c.build(n, p).unwrap();
    let Some(Declared::SplitBlock { bits }) = f.stats().unwrap().layout else {
        panic!("no split-block layout")
    };
    let blocks = (bits / 256) as i32;
    let q = 1.0 / blocks as f64;
    // Binomial(n, q) probabilities by the recurrence P(j+1) = P(j) (n - j) q / ((j + 1)(1 - q)).
    let mut pj = (1.0 - q).powi(n as i32);
    let mut theory = 0.0;
    for j in 0..=n {
        theory += pj * (1.0 - (31.0f64 / 32.0).powi(j as i32)).powi(8);
        pj *= (n - j) as f64 * q / ((j + 1) as f64 * (1.0 - q));
    }
    println!(
        "rust/parquet/Sbbf at n = {n}, p = {p}: {bits} bits ({blocks} blocks), theory {theory:.5}"
    );
    assert_eq!(bits, 1024, "the sizing changed: revisit this test");
    assert!(
        theory > p,
        "theory {theory} within p = {p}: the sizing was fixed upstream?"
    );
}

/// What each library does with n = 0, p = 0, NaN and p >= 1, as its module documents it (the
/// bad-input clause judges these; this pins the documentation to the pinned versions). A panic is
/// caught here as the suite catches it.
#[test]
fn bad_input_behaves_as_each_module_documents() {
    #[derive(Debug, PartialEq)]
    enum Got {
        Built(Option<Declared>),
        Refused,
        Panicked,
    }
    let try_build = |name: &str, n: u64, p: f64| {
        let c = third_party::by_name(name).unwrap();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.build(n, p))) {
            Ok(Ok(mut f)) => Got::Built(f.stats().unwrap().layout),
            Ok(Err(CandidateError::Refused { .. })) => Got::Refused,
            Ok(Err(e)) => panic!("{name}: {e}"),
            Err(_) => Got::Panicked,
        }
    };
    let classic = |bits, hashes| Got::Built(Some(Declared::Classic { bits, hashes }));
    let split = |bits| Got::Built(Some(Declared::SplitBlock { bits }));
    for name in [
        "rust/fastbloom",
        "rust/fastbloom/atomic",
        "rust/fastbloom@0.15.0",
    ] {
        assert_eq!(try_build(name, N, 0.0), Got::Panicked, "{name}");
        assert_eq!(try_build(name, N, f64::NAN), Got::Panicked, "{name}");
        assert_eq!(
            try_build(name, N, 1.5),
            classic(64, 1),
            "{name}: p > 1 accepted"
        );
        assert_eq!(
            try_build(name, 0, P),
            classic(64, 44),
            "{name}: n = 0 as n = 1"
        );
    }
    for (n, p) in [(0, P), (N, 0.0), (N, f64::NAN), (N, 1.0)] {
        assert_eq!(
            try_build("rust/bloomfilter", n, p),
            Got::Panicked,
            "n = {n}, p = {p}"
        );
    }
    for p in [0.0, f64::NAN, 1.0] {
        let got = try_build("rust/growable-bloom-filter", N, p);
        assert_eq!(got, Got::Panicked, "growable p = {p}");
    }
    // n = 0 builds (the check is a debug_assert!) and the first insert panics.
    let growable = third_party::by_name("rust/growable-bloom-filter").unwrap();
    let mut empty = growable.build(0, P).unwrap();
    let insert = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        empty.insert(&keys(Family::Url, 0, 1))
    }));
    assert!(insert.is_err(), "growable n = 0: insert did not panic");
    assert_eq!(try_build("rust/qfilter", N, 0.0), Got::Refused);
    let silent = Got::Built(Some(Declared::Quotient {
        slots_log2: 14,
        remainder_bits: 1,
    }));
    assert_eq!(
        try_build("rust/qfilter", N, f64::NAN),
        silent,
        "qfilter NaN as 0.5"
    );
    assert_eq!(
        try_build("rust/qfilter", N, 1.5),
        silent,
        "qfilter p > 0.5 clamped"
    );
    for p in [0.0, 1e-300] {
        assert_eq!(
            try_build("rust/parquet/Sbbf", N, p),
            split(256),
            "Sbbf p = {p}: 256 bits"
        );
    }
    for p in [f64::NAN, 1.0, -0.1] {
        assert_eq!(
            try_build("rust/parquet/Sbbf", N, p),
            Got::Refused,
            "Sbbf p = {p}"
        );
    }
    for p in [0.0, f64::NAN, 1.5] {
        let got = try_build("rust/scalable_cuckoo_filter", N, p);
        assert_eq!(got, Got::Panicked, "cuckoo p = {p}");
    }
}
