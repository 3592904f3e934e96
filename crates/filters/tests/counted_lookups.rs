//! The false-positive engine's lookups answer as the one-by-one lookup does: for every registered
//! variant, `contains_digest_early_exit` equals `contains_digest` on every digest, and
//! `count_present` over a slice equals the number of digests `contains_digest` finds (the flat
//! layout's probe-by-probe rounds included), at every fill from nearly empty to saturated. The
//! batched insert and member check the sweep fills and checks with (`insert_digests`,
//! `contains_all_digests`) give the filter and the answers of one `insert_digest` and one
//! `contains_digest` per digest.

use bloomlab_filters::{Digest, FilterExt, Spec, registry};
use proptest::prelude::*;
use rand::{RngExt as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Builds `name` for `n` keys at `p`, inserts `round(n * fill)` seeded keys, then checks both
/// lookups and the count on the members' digests and on `probes` random keys' digests, counted
/// whole and in uneven slices (lengths that are not multiples of any internal chunk).
fn check(name: &str, n: u64, p: f64, fill: f64, probes: usize, seed: u64) {
    let mut f = registry::build(name, Spec::Target { n, p })
        .unwrap_or_else(|e| panic!("{name} n={n} p={p} should build: {e}"));
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let members: Vec<u64> = (0..(n as f64 * fill).round() as u64)
        .map(|_| rng.random())
        .collect();
    for k in &members {
        f.insert(k);
    }
    let digests: Vec<Digest> = members
        .iter()
        .chain(&(0..probes).map(|_| rng.random::<u64>()).collect::<Vec<_>>())
        .map(|k| f.digest(&k.to_le_bytes()))
        .collect();
    let mut expected = 0u64;
    for (i, &d) in digests.iter().enumerate() {
        let branch_free = f.contains_digest(d);
        assert_eq!(
            f.contains_digest_early_exit(d),
            branch_free,
            "{name} n={n} p={p} fill={fill} seed={seed}: digest {i} ({d:?})"
        );
        expected += u64::from(branch_free);
    }
    assert!(
        expected >= members.len() as u64,
        "{name}: members must be found"
    );
    assert_eq!(
        f.count_present(&digests),
        expected,
        "{name} n={n} p={p} fill={fill} seed={seed}: count over all {} digests",
        digests.len()
    );
    let step = 1 + (seed % 611) as usize;
    let sliced: u64 = digests.chunks(step).map(|c| f.count_present(c)).sum();
    assert_eq!(
        sliced, expected,
        "{name} n={n} p={p} fill={fill} seed={seed}: count in slices of {step}"
    );
    assert_eq!(f.count_present(&[]), 0, "{name}: an empty slice");

    // The same members through the batched insert, in uneven slices: the same bits set and the
    // same answer for every digest.
    let mut g = registry::build(name, Spec::Target { n, p }).expect("built above");
    let member_digests = &digests[..members.len()];
    for c in member_digests.chunks(step) {
        g.insert_digests(c);
    }
    g.insert_digests(&[]);
    assert_eq!(
        g.set_bits(),
        f.set_bits(),
        "{name} n={n} p={p} fill={fill} seed={seed}: bits set by insert_digests"
    );
    for (i, &d) in digests.iter().enumerate() {
        assert_eq!(
            g.contains_digest(d),
            f.contains_digest(d),
            "{name} n={n} p={p} fill={fill} seed={seed}: digest {i} after insert_digests"
        );
    }
    assert!(
        f.contains_all_digests(member_digests) && f.contains_all_digests(&[]),
        "{name} n={n} p={p} fill={fill} seed={seed}: every member is present"
    );
    for c in digests.chunks(step) {
        assert_eq!(
            f.contains_all_digests(c),
            c.iter().all(|&d| f.contains_digest(d)),
            "{name} n={n} p={p} fill={fill} seed={seed}: contains_all_digests over {} digests",
            c.len()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random variants, sizes, rates and fills (down to 2% and up to 6 times the sized-for
    /// count, where almost every probe finds its bit set and the rounds run to k).
    #[test]
    fn counted_and_early_exit_lookups_answer_as_contains_digest(
        which in any::<prop::sample::Index>(),
        n in 1u64..3_000,
        p in prop::sample::select(vec![0.3, 0.05, 1e-3, 1e-5]),
        fill in prop::sample::select(vec![0.02, 0.5, 1.0, 2.0, 6.0]),
        seed in any::<u64>(),
    ) {
        let names = registry::names();
        let name = which.get(&names);
        check(name, n, p, fill, 2_000, seed);
    }
}

/// Every registered variant once, as sized, with enough probes for thousands of absent keys.
#[test]
fn every_variant_counts_as_it_looks_up() {
    for (i, name) in registry::names().iter().enumerate() {
        check(name, 5_000, 0.01, 1.0, 20_000, i as u64);
    }
}
