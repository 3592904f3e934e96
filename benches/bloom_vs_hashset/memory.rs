//! Heap memory measured, not estimated: a counting global allocator, and the JSON file of
//! per-structure records that `bench-table` reads beside criterion's estimates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The system allocator, keeping a running total of live requested bytes. Allocator overhead
/// (headers, size-class rounding) is not included: the figure is what the structure asked for.
pub struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` unchanged; the counter has no effect on allocation.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (all allocations go through here).
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; `new_size` is the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

/// Live heap bytes requested from the allocator right now.
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
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

/// One structure built for one key set: what the table joins with criterion's timings, by
/// (`keys`, `label`, `n`). The schema is mirrored by `bench-table` (crates/cli).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// `"str"` or `"u64"`.
    pub keys: String,
    /// The criterion function id: structure name plus ` p=<percent>%` for filters.
    pub label: String,
    /// Structure name without the rate.
    pub structure: String,
    /// `"bloomlab"`, `"hashset"` or `"crate"`.
    pub family: String,
    /// Target false-positive rate; `None` for exact sets.
    pub p: Option<f64>,
    /// Keys inserted.
    pub n: u64,
    /// Live heap bytes held after the build (allocator's count, strings included).
    pub heap_bytes: u64,
    /// Wall time of the one build, divided by n (a single run, not a criterion estimate).
    pub build_ns_per_key: f64,
    /// Absent keys of the lookup batch reported present, over the batch size.
    pub observed_fpr: f64,
    /// Size of the absent batch the FPR was observed on.
    pub absent_batch: u64,
}

/// The memory file: every record of this run plus when and how it ran.
#[derive(Debug, Serialize)]
pub struct Log {
    /// Unix seconds when the run started.
    pub started_unix: u64,
    /// Unix seconds of the last record.
    pub updated_unix: u64,
    /// `"full"`, `"quick"` or `"test"`.
    pub mode: &'static str,
    pub records: Vec<Record>,
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
}

/// File name of the memory log inside [`criterion_dir`].
pub const FILE_NAME: &str = "bloom_vs_hashset-memory.json";

impl Log {
    /// A log for this run, written to `<criterion dir>/bloom_vs_hashset-memory.json` unless
    /// `mode` is `"test"`. A full run restricted to some sizes (`BLOOMLAB_BENCH_SIZES`) keeps the
    /// previous full run's records of the other sizes, whose criterion results it leaves alone too.
    pub fn new(mode: &'static str, sizes: &[u64]) -> Self {
        let path = (mode != "test").then(|| criterion_dir().join(FILE_NAME));
        let mut log = Self {
            started_unix: unix_now(),
            updated_unix: unix_now(),
            mode,
            records: Vec::new(),
            path,
        };
        if mode == "full"
            && let Some(path) = &log.path
            && let Ok(text) = std::fs::read_to_string(path)
            && let Ok(old) = serde_json::from_str::<Previous>(&text)
            && old.mode == "full"
        {
            log.started_unix = old.started_unix;
            log.records = old
                .records
                .into_iter()
                .filter(|r| !sizes.contains(&r.n))
                .collect();
        }
        log
    }

    /// Adds a record and rewrites the file, so an interrupted run keeps what it measured.
    pub fn push(&mut self, record: Record) {
        self.records.push(record);
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
