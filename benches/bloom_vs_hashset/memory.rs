//! Heap memory measured, not estimated: a counting global allocator, and the JSON file of
//! per-structure records (and of the paired comparisons) that `bench-table` reads beside
//! criterion's estimates.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub use bloomlab_harness::memory::{
    BENCH_MEMORY_FILE as FILE_NAME, BenchRecord as Record, CountingAlloc, PairedRecord,
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

/// The memory file: every record and paired comparison of this run, plus when and how it ran.
#[derive(Debug, Serialize)]
pub struct Log {
    /// Unix seconds when the run started.
    pub started_unix: u64,
    /// Unix seconds of the last record.
    pub updated_unix: u64,
    /// `"full"`, `"quick"` or `"test"`.
    pub mode: &'static str,
    pub records: Vec<Record>,
    /// The paired comparisons with the reference, one per lookup benchmark.
    pub paired: Vec<PairedRecord>,
    /// `None` in test mode, so that `cargo test --benches` never overwrites a real run's file.
    #[serde(skip)]
    path: Option<PathBuf>,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Where criterion writes (`$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else the
/// workspace's `target/criterion`), which is also where the memory file goes.
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return Path::new(&target).join("criterion");
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/criterion")
}

/// The parts of an earlier log that a partial re-run keeps.
#[derive(Deserialize)]
struct Previous {
    started_unix: u64,
    mode: String,
    records: Vec<Record>,
    #[serde(default)]
    paired: Vec<PairedRecord>,
}

impl Log {
    /// A log for this run, written to `<criterion dir>/bloom_vs_hashset-memory.json` unless
    /// `mode` is `"test"`. A full run restricted to some sizes (`BLOOMLAB_BENCH_SIZES`) or to some
    /// structures (`BLOOMLAB_BENCH_ONLY`, whose filter is `remeasured`) keeps the previous full
    /// run's records of everything it does not measure again, whose criterion results it leaves
    /// alone too.
    pub fn new(mode: &'static str, sizes: &[u64], remeasured: impl Fn(&str) -> bool) -> Self {
        let path = (mode != "test").then(|| criterion_dir().join(FILE_NAME));
        let mut log = Self {
            started_unix: unix_now(),
            updated_unix: unix_now(),
            mode,
            records: Vec::new(),
            paired: Vec::new(),
            path,
        };
        if mode == "full"
            && let Some(path) = &log.path
            && let Ok(text) = std::fs::read_to_string(path)
            && let Ok(old) = serde_json::from_str::<Previous>(&text)
            && old.mode == "full"
        {
            log.records = old
                .records
                .into_iter()
                .filter(|r| !(sizes.contains(&r.n) && remeasured(&r.label)))
                .collect();
            log.paired = old
                .paired
                .into_iter()
                .filter(|r| !(sizes.contains(&r.n) && remeasured(&r.label)))
                .collect();
            // The run then spans from the earlier run's start, if anything of it is kept.
            if !log.records.is_empty() {
                log.started_unix = old.started_unix;
            }
        }
        log
    }

    /// Adds a record and rewrites the file, so an interrupted run keeps what it measured.
    pub fn push(&mut self, record: Record) {
        self.records.push(record);
        self.save();
    }

    /// Adds a paired comparison and rewrites the file.
    pub fn push_paired(&mut self, record: PairedRecord) {
        self.paired.push(record);
        self.save();
    }

    fn save(&mut self) {
        self.updated_unix = unix_now();
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
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, json)?;
        std::fs::rename(&tmp, path)
    }
}
