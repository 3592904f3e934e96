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

mod keys;
mod memory;
mod suite;
mod timing;

use criterion::Criterion;

#[global_allocator]
static ALLOC: memory::CountingAlloc = memory::CountingAlloc;

fn main() {
    let cfg = timing::Config::from_env();
    let mut c = Criterion::default().configure_from_args();
    let mut log = memory::Log::new(cfg.mode, &cfg.sizes, |label| cfg.wants(label));
    eprintln!(
        "bloom_vs_hashset: mode {}, n in {:?}, warm-up {:?}, measurement {:?}, {} samples",
        cfg.mode, cfg.sizes, cfg.warm_up, cfg.measurement, cfg.sample_size
    );
    for &n in &cfg.sizes {
        let mut suite = suite::Suite {
            c: &mut c,
            cfg: &cfg,
            log: &mut log,
        };
        {
            let keys = keys::StrKeys::new(n);
            suite.strings(&keys, n);
        }
        let keys = keys::U64Keys::new(n);
        suite.u64s(&keys, n);
    }
    c.final_summary();
}
