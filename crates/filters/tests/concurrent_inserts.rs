//! Shared inserts lose no bits: [`ConcurrentBitStore::set_shared`], and `insert_shared` on every
//! registered atomic variant, from more threads than cores, started together on a barrier, all
//! writing to the same words of a fresh store, round after round.
//!
//! A store that sets a bit with a plain load and then a store of `old | mask`, instead of one atomic
//! read-modify-write, writes back a stale word whenever another thread set a bit of that word
//! between its load and its store: that bit is lost. Two ways make such interleavings frequent:
//! threads running side by side on different cores, and (with more threads than cores, so also on a
//! busy 2-core machine) a thread preempted between its load and its store while the others keep
//! going. Both need many first-time sets of bits in words other threads are setting at the same
//! time, so each round is a fresh store of 1024 words in which every thread owns every 8th bit of
//! every word and visits the words in its own shuffled order: every word is written by all threads,
//! and any two threads at work meet in the same word about once per round. (A store of a few
//! words is too quick to fill: its bits are all set before a woken thread starts.)
//!
//! Validated by mutation on 2026-11-26, on a busy 2-core machine: with `AtomicBits::set_shared`
//! rewritten as `load` then `store(old | mask)`, this binary failed 30 of 30 runs (both tests failed
//! in every run, and each test run alone also failed 30 of 30); unmutated it passed 30 of 30.

use std::sync::Barrier;

use bloomlab_filters::{
    AtomicBits, BitStore, Bloom, ConcurrentBitStore, EnhancedDoubleHash, Filter, FlatBits, Fnv1a,
    GuavaMitz32, GuavaMitz64, HashStrategy, IndexScheme, KirschMitzenmacher, Lookup3, Murmur3,
    Params, Variant, Xxh3, Xxh3Wide, Xxh64, registry,
};
use rand::{SeedableRng, seq::SliceRandom};
use rand_pcg::Pcg64Mcg;

/// More threads than the 2 cores of the CI machine: threads are then also preempted in the middle
/// of a set, not only run side by side.
const THREADS: usize = 8;

/// Runs `work(thread, round)` for every round on `THREADS` threads, all threads starting each round
/// together (released by one barrier), and returns what each call returned, `[round][thread]`.
/// Each round has threads of its own: new threads are placed and scheduled afresh, which
/// interleaves them more than threads that go back to sleep on a barrier between rounds do.
fn rounds_together<T: Send>(rounds: usize, work: impl Fn(usize, usize) -> T + Sync) -> Vec<Vec<T>> {
    (0..rounds)
        .map(|r| {
            let barrier = Barrier::new(THREADS);
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..THREADS)
                    .map(|t| {
                        let (barrier, work) = (&barrier, &work);
                        s.spawn(move || {
                            barrier.wait();
                            work(t, r)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            })
        })
        .collect()
}

#[test]
fn set_shared_from_many_threads_loses_no_bit() {
    const WORDS: usize = 1024;
    const ROUNDS: usize = 64;
    let stores: Vec<AtomicBits> = (0..ROUNDS)
        .map(|_| AtomicBits::zeroed(WORDS as u64 * 64).unwrap())
        .collect();
    // Thread t owns bits t, t + 8, ..., t + 56 of every word.
    let owned = |t: usize, w: usize| (t..64).step_by(THREADS).map(move |j| (w * 64 + j) as u64);
    // newly[round][thread]: how often `set_shared` reported one of the thread's bits as clear before.
    let newly = rounds_together(ROUNDS, |t, r| {
        let mut order: Vec<usize> = (0..WORDS).collect();
        order.shuffle(&mut Pcg64Mcg::seed_from_u64((r * THREADS + t) as u64));
        let mut newly = 0;
        for w in order {
            for i in owned(t, w) {
                newly += usize::from(stores[r].set_shared(i));
            }
        }
        newly
    });

    let bits_per_thread = WORDS * 64 / THREADS;
    for (round, (store, newly)) in stores.iter().zip(&newly).enumerate() {
        let context = format!(
            "round {round} of {ROUNDS}: {THREADS} threads each setting every {THREADS}th bit of \
             {WORDS} words ({bits_per_thread} bits), in shuffled word orders"
        );
        for t in 0..THREADS {
            let lost: Vec<u64> = (0..WORDS)
                .flat_map(|w| owned(t, w))
                .filter(|&i| !store.get(i))
                .collect();
            assert!(
                lost.is_empty(),
                "thread {t} lost {} of its bits, the first at {:?}; {context}",
                lost.len(),
                &lost[..lost.len().min(8)]
            );
        }
        for w in 0..WORDS {
            assert_eq!(
                store.word(w),
                u64::MAX,
                "word {w} is not the OR of all threads' bits; {context}"
            );
        }
        // Each bit has one owner and is never cleared, so its owner finds it clear exactly once.
        assert_eq!(
            newly,
            &vec![bits_per_thread; THREADS],
            "set_shared's 'was clear' answers per thread; {context}"
        );
        assert_eq!(
            store.count_ones(),
            WORDS as u64 * 64,
            "running count of set bits; {context}"
        );
    }
}

/// Fills `ROUNDS` fresh atomic filters, each from `THREADS` threads released together (each thread
/// inserting its own share of `keys`); checks every filter finds every key, holds exactly the words
/// a flat filter built sequentially from the same keys holds, and counts each set bit once.
/// Returns the variant's name.
fn concurrent_fill<H: HashStrategy, I: IndexScheme>(keys: &[u64]) -> String {
    // 1024 words and k = 4 for 15 000 keys: about 60% of the bits end up set, so most probes set a
    // new bit in a word that other threads are writing too.
    const ROUNDS: usize = 8;
    let params = Params {
        bits: 1024 * 64,
        hashes: 4,
    };
    let name = <Bloom<H, I, AtomicBits> as Variant>::variant_name();
    let filters: Vec<Bloom<H, I, AtomicBits>> = (0..ROUNDS)
        .map(|_| Bloom::with_params(params).unwrap())
        .collect();
    let share = keys.len().div_ceil(THREADS);
    rounds_together(ROUNDS, |t, r| {
        keys.chunks(share)
            .nth(t)
            .unwrap_or_default()
            .iter()
            .for_each(|k| filters[r].insert_shared(k));
    });

    let mut flat = Bloom::<H, I, FlatBits>::with_params(params).unwrap();
    keys.iter().for_each(|k| flat.insert(k));
    let words = (flat.store().len_bits() / 64) as usize;
    for (round, shared) in filters.iter().enumerate() {
        let context = format!(
            "{name}, round {round} of {ROUNDS}: {} keys from {THREADS} threads into {params:?}",
            keys.len()
        );
        let lost = keys.iter().filter(|k| !shared.contains(*k)).count();
        assert_eq!(lost, 0, "{lost} keys not found; {context}");
        for w in 0..words {
            assert_eq!(
                shared.store().word(w),
                flat.store().word(w),
                "word {w} differs from the sequentially filled flat filter's; {context}"
            );
        }
        assert_eq!(
            shared.set_bits(),
            flat.store().count_ones(),
            "running count of set bits; {context}"
        );
    }
    name
}

#[test]
fn atomic_variants_filled_from_many_threads_lose_no_bit() {
    use rand::RngExt as _;
    let mut rng = Pcg64Mcg::seed_from_u64(0x5EED_A70C);
    let keys: Vec<u64> = (0..15_000).map(|_| rng.random()).collect();
    let mut covered = Vec::new();
    macro_rules! each_index {
        ($h:ty) => {
            covered.push(concurrent_fill::<$h, KirschMitzenmacher>(&keys));
            covered.push(concurrent_fill::<$h, EnhancedDoubleHash>(&keys));
            covered.push(concurrent_fill::<$h, GuavaMitz64>(&keys));
            covered.push(concurrent_fill::<$h, GuavaMitz32>(&keys));
        };
    }
    each_index!(Fnv1a);
    each_index!(Murmur3);
    each_index!(Xxh3);
    each_index!(Xxh3Wide);
    each_index!(Xxh64);
    each_index!(Lookup3);
    covered.sort();
    let registered: Vec<String> = registry::names()
        .into_iter()
        .filter(|n| n.ends_with("/atomic"))
        .collect();
    assert_eq!(
        covered, registered,
        "every registered atomic variant is exercised"
    );
}
