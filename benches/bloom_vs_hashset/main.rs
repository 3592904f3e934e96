//! `cargo bench --bench bloom_vs_hashset`: lookups (present and absent keys) and inserts of every
//! registered bloomlab variant against `std::collections::HashSet` (SipHash and foldhash) and the
//! filter crates a Rust user would pick instead (fastbloom, bloomfilter, xorf), at 1M and 10M keys,
//! with each structure's heap memory measured by a counting allocator. Each lookup benchmark is
//! followed by a paired comparison with std `HashSet` on the same batch ([`timing::paired`]), so
//! the ratio to the HashSet can also be read from measurements taken side by side.
//!
//! Criterion writes `target/criterion/<group>/<structure>/<n>/new/estimates.json`; this binary
//! writes the memory records and the paired comparisons to
//! `target/criterion/bloom_vs_hashset-memory.json`; then `cargo run --release --bin bench-table`
//! turns both into `reports/bloom_vs_hashset.md`.
//! `BLOOMLAB_BENCH_QUICK=1` measures 1M keys only, briefly (see [`timing::Config::from_env`]).
//!
//! Two capability series follow the main one on the string keys of every n, each with its own
//! criterion groups, twins and std `HashSet` figures, so that each is measured in one stretch:
//! - the counting series ([`counting`], groups `counting-*`): insert, remove and lookups of the
//!   counting filters, beside the flat filter of the same hash and index scheme and std `HashSet`;
//! - the scalable series ([`scalable`], groups `scalable-*`): lookups in scalable filters holding n
//!   keys after growing from n/G (G = 1, 16, 1024), beside a static filter of their stages' layout
//!   sized for n, std `HashSet` and the `growable-bloom-filter` crate.
//!
//! Two more series measure where the time goes:
//! - the layout series ([`layouts`], groups `contiguous-*` and `scattered-*`), on the string keys
//!   of every n: the flagships, std `HashSet<String>`, `fastbloom+foldhash` and xorf with the
//!   lookup batches' keys in one buffer (the main series' layout) and with each key in its own
//!   allocation;
//! - the regime series ([`regimes`], groups `regime-*`), after the main series, on u64 keys at
//!   1e5, 1e6, 1e7 and 1e8 keys: the flagships, std `HashSet<u64>`, fastbloom and xorf looked up
//!   with 0, 25, 50, 75 and 100% present keys, beside the memory's dependent and independent
//!   random-load times over a buffer of each structure's size and the hashing of a key alone.
//!   Peak memory about 4 GB at 1e8 (the keys, plus one structure's build).
//!
//! Each flagship, and on string keys Guava's layout, is also timed against its floor ([`floor`]:
//! key fetch, the filter's own digest, the loads its layout needs), one-by-one and batched, in
//! paired rounds: on u64 keys at every regime size, on string keys at every n of the main series.
//! Guava's layout is also timed against the same floor at the positions its format fixes
//! (`(combined & Long.MAX_VALUE) % m`, the filter's own), which shows what that reduction costs.
//!
//! # One method in every series
//!
//! Every lookup figure, in every series, is criterion timing [`timing::timer`] (one lookup of the
//! next key of a pre-generated 2^20-key batch per iteration, keys through `black_box`, answers
//! summed) with the times [`timing::Config::times`] gives the structure's label: a structure's
//! figure does not depend on which series measured it. The regime series' absent batch *is* the
//! main series' absent batch (`keys::mixed` at 0% returns it key for key), its present batch the
//! main series' present batch, built from the same `random-u64` keys at the same n.
//!
//! Why `sbbf/xxh3` u64 absent read 12.2 ns (main) and 4.5 ns (regime) at 10M in one run: the two
//! series already shared the key batch, the loop ([`timing::timer`]) and the key order; they
//! differed in criterion's times (main 0.5 s + 2 s, 20 samples; regime 0.2 s + 0.5 s, 10
//! samples) and in when they ran. At 10M the filter (about 12 MB) fits in this machine's 32 MB
//! L3, which it shares with the other tenants, so whether a lookup is an L3 hit or a DRAM miss
//! depends on what else runs in those seconds. Restricted runs on the shared machine (non-LTO
//! build, 20:44 and 20:46 UTC, `BLOOMLAB_BENCH_ONLY='sbbf/xxh3 p=1%'` at 10M, load average 1 then
//! 8): main u64 absent 10.3 ns and regime absent 11.1 ns in the same run (they agree when the
//! load is steady), while one structure on one batch in one loop moved 3x between the runs
//! (main-series string present 58.1 ns then 19.2 ns; the layout series' `contiguous` string
//! absent, the main series' batch and loop, 22.0 ns then 57.1 ns). The cause is the machine's
//! state, not the method: the regime's figure was taken minutes later, with its short
//! measurement more exposed to a quiet (or busy) window. Now both series use the same times per
//! structure, and a figure to compare is taken on a quiet machine.
//!
//! The main series leaves counting and scalable variants to those series: its re-insert would
//! change their state (counters, stages) from one iteration to the next.
//!
//! # Running it
//!
//! The default run is planned to take about half an hour on 2 cores (and at most 45 minutes),
//! and needs a few GB of memory for the 10M-key HashSets and the 1e8-key regime. What it runs:
//! - every variant at 1M string keys at 1%, at short criterion times (0.1 s warm-up, 0.3 s
//!   measurement, 10 samples);
//! - the headline structures ([`timing::headline`]: the flagships and Guava's layout at 1%, the
//!   HashSets, fastbloom, xorf, and the hashes alone) at full times (0.3 s + 1 s, 20 samples) in
//!   every series and at every size;
//! - the representative set ([`suite::representative`]) at 10M, at 0.1% and on u64 keys;
//! - paired rounds: 5 rounds of 10 ms parts per lookup.
//!
//! `BLOOMLAB_BENCH_ALL=1` is the long exhaustive run: every variant at every size, at 0.1% and on
//! u64 keys, all at the full times. On stderr, a line per step (`bloom_vs_hashset progress:`)
//! gives the step, i/N, elapsed time, benchmarks done and the time left estimated from the
//! steps so far, and the last line the total.
//!
//! Environment variables (see [`timing::Config::from_env`]):
//! - `BLOOMLAB_BENCH_QUICK=1`: 1M keys only, with short times (a few minutes), for development;
//! - `BLOOMLAB_BENCH_ONLY='sbbf/xxh3 p=1%|std HashSet<String>'`: build and measure only the
//!   structures whose label contains one of the `|`-separated parts (a restricted run keeps the
//!   previous full run's records of the other structures); in the capability series the text
//!   matched is `<series>: <label>` ([`bloomlab_harness::schema::bench::selector`]), so
//!   `BLOOMLAB_BENCH_ONLY='counting: |scalable: '` runs exactly those two series, and `G=1024`
//!   only the grown filters' 1024x rows (`regime: `, `contiguous: |scattered: ` the two others;
//!   `regime: hash` the regime series' hashing alone);
//! - `BLOOMLAB_BENCH_REGIME_SIZES`: the regime series' sizes;
//! - `BLOOMLAB_BENCH_SHORT_WARMUP_SECS`, `BLOOMLAB_BENCH_SHORT_MEASURE_SECS`: the short times of
//!   the structures that are not headline ones;
//! - `BLOOMLAB_BENCH_SIZES`, `BLOOMLAB_BENCH_MEASURE_SECS`, `BLOOMLAB_BENCH_WARMUP_SECS`: sizes and
//!   criterion's times; `BLOOMLAB_BENCH_PAIRED_ROUNDS`: rounds per paired comparison (0 turns them
//!   off).
//! - `BLOOMLAB_BENCH_HTML=1`: criterion's own HTML report too, `target/criterion/report/index.html`
//!   (about 7 s more per benchmark; see `common::criterion`).
//!
//! `cargo test --benches` runs each benchmark once on small inputs (a smoke test that writes no
//! memory file).
//!
//! # How the numbers are made
//!
//! - Keys come from `bloomlab_harness::keys` (the strings `"article-content-hash-" + i`, and the
//!   `random-u64` key set's distinct u64s). Each lookup series walks a pre-generated batch of keys
//!   drawn at random from the inserted keys (present) or from never-inserted ones (absent), through
//!   `black_box`, so the structure is probed at random and never on one hot key. One criterion
//!   iteration is one lookup: the median is ns per lookup.
//! - Compiled with `lto = "fat"`, `codegen-units = 1` and `-C target-cpu=native` (the table names
//!   the CPU features that build used), the same for every structure, ours and theirs.
//! - Every structure is called as its concrete type (bloomlab variants through the registry's
//!   `VariantVisitor`), so all get the same inlining; no `dyn` call in any timed loop.
//! - Memory is measured, not estimated: a counting global allocator records the live heap bytes each
//!   structure holds after its build (a HashSet's table plus every `String`).
//! - *insert ns* re-inserts present keys into the built filter (its state does not change); *build
//!   ns/key* is one wall-clock build from empty, for every structure.
//! - Counting series: one remove iteration removes one member key, one insert iteration inserts
//!   one key removed (untimed) a window of [`timing::WINDOW`] keys earlier, over a batch of
//!   distinct members in random order; the undoing operation runs untimed between timed chunks,
//!   so every iteration meets the same state, and the bench then checks the filter answers as
//!   before ([`timing::Cycle`]). A HashSet's removed `String`s are kept, not freed, and moved back
//!   by its inserts, so neither times the allocator. A twin cannot remove: its insert re-inserts
//!   members, as in the main series.
//! - Scalable series: one iteration is one lookup, as in the main series; the filter's build
//!   (n0 = n/G, then all n keys inserted, so that it allocates its stages) is measured by the
//!   counting allocator like every build, and its stage count is read from the filter.
//! - Batched lookups (`contains_batch`, groups `lookup-batch-*`) are measured for the
//!   representative variants, on the same batches in calls of 1024 keys; the bench first checks
//!   they find exactly as many keys as one-by-one lookups. A HashSet has no batched lookup, so the
//!   table compares them with its one-by-one lookups and says so.
//! - Paired rounds: right after criterion measures a lookup series, the bench times the structure
//!   and std `HashSet` on the same batch alternately, in rounds of two short parts, each part after
//!   an equally long untimed pass over its own data. Criterion's two medians are taken minutes
//!   apart; a paired round's two parts within milliseconds, so both see the same state of the
//!   machine, and the spread of the rounds shows how steady a structure's time was.

#[path = "../common.rs"]
mod common;
mod counting;
mod floor;
mod keys;
mod layouts;
mod memory;
mod regimes;
mod scalable;
mod suite;
mod timing;

#[global_allocator]
static ALLOC: memory::CountingAlloc = memory::CountingAlloc;

fn main() {
    let cfg = timing::Config::from_env();
    let mut c = common::criterion("bloom_vs_hashset");
    // The regime series has sizes of its own; every other series runs at `cfg.sizes`.
    let mut log = memory::Log::new(cfg.mode, |series, label, n| {
        let sizes = match series {
            bloomlab_harness::schema::bench::Series::Regime => &cfg.regime_sizes,
            _ => &cfg.sizes,
        };
        sizes.contains(&n) && cfg.wants(label)
    });
    eprintln!(
        "bloom_vs_hashset: mode {}, n in {:?}, warm-up {:?}, measurement {:?}, {} samples",
        cfg.mode, cfg.sizes, cfg.warm_up, cfg.measurement, cfg.sample_size
    );
    // One step per key kind and n of the main series (the layout and capability series run
    // inside the string step), then one per regime size.
    let mut progress =
        timing::Progress::new(cfg.sizes.len() * 2 + usize::from(!cfg.regime_sizes.is_empty()));
    for &n in &cfg.sizes {
        progress.step(&format!(
            "strings n={n} (main, layout, scalable, counting series)"
        ));
        let mut suite = suite::Suite {
            c: &mut c,
            cfg: &cfg,
            log: &mut log,
        };
        {
            let keys = keys::StrKeys::new(n);
            suite.strings(&keys, n);
        }
        progress.step(&format!("u64 keys n={n} (main series)"));
        let keys = keys::U64Keys::new(n);
        suite.u64s(&keys, n);
    }
    progress.step(&format!("regime series n in {:?}", cfg.regime_sizes));
    suite::Suite {
        c: &mut c,
        cfg: &cfg,
        log: &mut log,
    }
    .regimes();
    c.final_summary();
    progress.finish();
}
