//! No false negatives, ever: every registered variant, built by name with each kind of [`Spec`],
//! finds every key inserted into it, for random key sets (u64 and strings, including filters far
//! too small for their keys). Inserts from several threads at once are tested in
//! `concurrent_inserts.rs`.

use bloomlab_filters::{
    AtomicBits, Bloom, FilterExt, FlatBits, GuavaMitz64, KirschMitzenmacher, Murmur3, Spec,
    Variant, Xxh3, registry,
};
use proptest::prelude::*;

/// Builds `name` to `spec` (k = 8 forced for the split-block layout, which only has 8), inserts
/// `keys` and returns the keys it then fails to find, one by one or in a batch; checks that the
/// batched lookup (`contains_batch`) answers exactly as `contains` does, on the keys and on
/// `probes` (mostly non-members).
fn missing<K: bloomlab_filters::Key>(name: &str, spec: Spec, keys: &[K], probes: &[K]) -> usize {
    let spec = match spec {
        Spec::Explicit { bits, .. }
            if name.starts_with("sbbf/") || name.starts_with("scalable/sbbf/") =>
        {
            Spec::Explicit { bits, hashes: 8 }
        }
        s => s,
    };
    let mut f = registry::build(name, spec)
        .unwrap_or_else(|e| panic!("{name} with {spec:?} should build: {e}"));
    for k in keys {
        f.insert(k);
    }
    for batch in [keys, probes] {
        let one_by_one: Vec<bool> = batch.iter().map(|k| f.contains(k)).collect();
        let mut batched = vec![None; batch.len()];
        f.contains_batch(batch, |i, found| batched[i] = Some(found));
        let batched: Vec<bool> = batched
            .into_iter()
            .map(|b| b.unwrap_or_else(|| panic!("{name}: a key of the batch got no answer")))
            .collect();
        assert_eq!(
            batched, one_by_one,
            "{name} with {spec:?}: batched answers differ from one-by-one answers"
        );
    }
    keys.iter().filter(|k| !f.contains(*k)).count()
}

fn spec_strategy() -> impl Strategy<Value = Spec> {
    prop_oneof![
        (1u64..2000, 1e-4f64..0.5).prop_map(|(n, p)| Spec::Target { n, p }),
        (1u64..20_000, 1u32..=24).prop_map(|(bits, hashes)| Spec::Explicit { bits, hashes }),
        // bits/n at most 100 keeps the optimal k (about 0.69 bits/n) within 1..=255.
        (1u64..500, 1u64..=100).prop_map(|(n, ratio)| Spec::BitsFor { bits: n * ratio, n }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, rng_seed: proptest::test_runner::RngSeed::Fixed(0xB100_F11E), ..ProptestConfig::default() })]

    #[test]
    fn every_variant_finds_every_u64_key(
        spec in spec_strategy(),
        keys in prop::collection::vec(any::<u64>(), 0..600),
        probes in prop::collection::vec(any::<u64>(), 0..100),
    ) {
        for name in registry::names() {
            let lost = missing(&name, spec, &keys, &probes);
            prop_assert_eq!(lost, 0, "{} with {:?}: {} of {} u64 keys not found", name, spec, lost, keys.len());
        }
    }

    #[test]
    fn every_variant_finds_every_string_key(
        spec in spec_strategy(),
        keys in prop::collection::vec("\\PC{0,24}", 0..400),
        probes in prop::collection::vec("\\PC{0,24}", 0..100),
    ) {
        for name in registry::names() {
            let lost = missing(&name, spec, &keys, &probes);
            prop_assert_eq!(lost, 0, "{} with {:?}: {} of {} string keys not found", name, spec, lost, keys.len());
        }
    }
}

/// The layouts' own (inherent) `contains_batch`, which users of a concrete type call, answers as
/// `contains` does, on members and on non-members.
#[test]
fn inherent_batched_lookups_answer_as_one_by_one_lookups() {
    fn check<F: Variant>(
        name: &str,
        f: &F,
        batch: impl Fn(&F, &[u64], &mut dyn FnMut(usize, bool)),
    ) {
        let keys: Vec<u64> = (0..300_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut answers = vec![false; keys.len()];
        batch(f, &keys, &mut |i, found| answers[i] = found);
        let one_by_one: Vec<bool> = keys.iter().map(|k| f.contains(k)).collect();
        assert_eq!(answers, one_by_one, "{name}");
        assert!(
            answers[..100_000].iter().all(|&a| a),
            "{name}: a member not found"
        );
    }
    let keys = (0..100_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut sbbf = bloomlab_filters::SplitBlock::<Xxh3>::new(100_000, 0.01).unwrap();
    let mut blocked = bloomlab_filters::Blocked512::<Xxh3>::new(100_000, 0.01).unwrap();
    let mut classic = Bloom::<Xxh3, KirschMitzenmacher, FlatBits>::new(100_000, 0.01).unwrap();
    let mut atomic = Bloom::<Murmur3, GuavaMitz64, AtomicBits>::new(100_000, 0.01).unwrap();
    let mut textbook = bloomlab_filters::TextbookFnv1aI32::new(100_000, 0.01).unwrap();
    let mut counting =
        bloomlab_filters::Counting4::<Xxh3, KirschMitzenmacher>::new(100_000, 0.01).unwrap();
    let mut textbook_counting =
        bloomlab_filters::TextbookCountingFnv1aI32::new(100_000, 0.01).unwrap();
    for k in keys {
        counting.insert(&k);
        textbook_counting.insert(&k);
        sbbf.insert(&k);
        blocked.insert(&k);
        classic.insert(&k);
        atomic.insert(&k);
        textbook.insert(&k);
    }
    check("sbbf", &sbbf, |f, k, out| f.contains_batch(k, out));
    check("blocked512", &blocked, |f, k, out| f.contains_batch(k, out));
    check("classic", &classic, |f, k, out| f.contains_batch(k, out));
    check("atomic", &atomic, |f, k, out| f.contains_batch(k, out));
    check("textbook", &textbook, |f, k, out| f.contains_batch(k, out));
    check("counting4", &counting, |f, k, out| f.contains_batch(k, out));
    check("textbook-counting", &textbook_counting, |f, k, out| {
        f.contains_batch(k, out)
    });
}
