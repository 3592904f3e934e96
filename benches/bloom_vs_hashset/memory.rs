//! Heap memory measured, not estimated: a counting global allocator, and the JSON file of
//! per-structure records (and of the paired comparisons) that `bench-table` reads beside
//! criterion's estimates.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use bloomlab_harness::memory::CountingAlloc;
use bloomlab_harness::schema::bench::{
    BenchLog, BenchRecord, LOG_FILE, Mode, PairedRecord, Series, criterion_dir, selector,
};

/// Live heap bytes requested from the allocator right now.
pub fn live_bytes() -> usize {
    CountingAlloc::live_bytes()
}

/// Builds a structure, returning it with the heap bytes it holds afterwards and the build time.
/// Must run on the only thread that allocates (criterion is idle between benchmarks).
pub fn measure_build<T>(build: impl FnOnce() -> T) -> (T, usize, Duration) {
    let before = live_bytes();
    let start = std::time::Instant::now();
    let value = build();
    let elapsed = start.elapsed();
    let after = live_bytes();
    (value, after.saturating_sub(before), elapsed)
}

/// The memory file ([`BenchLog`], the schema `bench-table` reads): every record and paired
/// comparison of this run, plus when and how it ran, rewritten after each addition.
pub struct Log {
    log: BenchLog,
    /// `None` in test mode, so that `cargo test --benches` never overwrites a real run's file.
    path: Option<PathBuf>,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Log {
    /// A log for this run, written to `<criterion dir>/bloom_vs_hashset-memory.json` unless
    /// `mode` is [`Mode::Test`]. A full run restricted to some sizes (`BLOOMLAB_BENCH_SIZES`,
    /// `BLOOMLAB_BENCH_REGIME_SIZES`) or to some structures (`BLOOMLAB_BENCH_ONLY`) keeps the
    /// previous full run's records of everything it does not measure again, whose criterion
    /// results it leaves alone too: `remeasured` is called with each record's series, [`selector`]
    /// text and n, and says whether this run measures it again.
    pub fn new(mode: Mode, remeasured: impl Fn(Series, &str, u64) -> bool) -> Self {
        let path = (mode != Mode::Test).then(|| criterion_dir().join(LOG_FILE));
        let mut log = BenchLog {
            started_unix: unix_now(),
            updated_unix: unix_now(),
            mode,
            records: Vec::new(),
            paired: Vec::new(),
        };
        if mode == Mode::Full
            && let Some(path) = &path
            && let Ok(text) = std::fs::read_to_string(path)
            && let Ok(old) = serde_json::from_str::<BenchLog>(&text)
            && old.mode == Mode::Full
        {
            log.records = old
                .records
                .into_iter()
                .filter(|r| !remeasured(r.series, &selector(r.series, &r.label), r.n))
                .collect();
            log.paired = old
                .paired
                .into_iter()
                .filter(|r| !remeasured(r.group.series, &selector(r.group.series, &r.label), r.n))
                .collect();
            // The run then spans from the earlier run's start, if anything of it is kept.
            if !log.records.is_empty() {
                log.started_unix = old.started_unix;
            }
        }
        Self { log, path }
    }

    /// Adds a record and rewrites the file, so an interrupted run keeps what it measured.
    pub fn push(&mut self, record: BenchRecord) {
        self.log.records.push(record);
        self.save();
    }

    /// Adds a paired comparison and rewrites the file.
    pub fn push_paired(&mut self, record: PairedRecord) {
        self.log.paired.push(record);
        self.save();
    }

    fn save(&mut self) {
        self.log.updated_unix = unix_now();
        if let Some(path) = &self.path
            && let Err(e) = self.write(path)
        {
            eprintln!("warning: cannot write {}: {e}", path.display());
        }
    }

    fn write(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_string_pretty(&self.log).map_err(std::io::Error::other)?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, json)?;
        std::fs::rename(&tmp, path)
    }
}
