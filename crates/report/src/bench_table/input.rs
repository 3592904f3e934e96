//! Reading what `cargo bench --bench bloom_vs_hashset` leaves: criterion's per-benchmark
//! `new/benchmark.json` + `new/estimates.json`, and the bench's memory records.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

pub use bloomlab_harness::memory::{
    BENCH_MEMORY_FILE as MEMORY_FILE, BenchRecord as Record, PairedRecord,
};

/// The bench's memory log.
#[derive(Debug, Clone, Deserialize)]
pub struct MemoryLog {
    pub started_unix: u64,
    pub updated_unix: u64,
    pub mode: String,
    pub records: Vec<Record>,
    /// The paired comparisons with the reference (absent from logs of older runs).
    #[serde(default)]
    pub paired: Vec<PairedRecord>,
}

/// A benchmark's identity: criterion group (e.g. `lookup-present-str`), function id (the
/// structure label) and parameter (n).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BenchKey {
    pub group: String,
    pub label: String,
    pub n: u64,
}

/// Criterion's median estimates in ns per iteration (one operation per iteration in this bench).
pub type Medians = HashMap<BenchKey, f64>;

#[derive(Deserialize)]
struct BenchmarkJson {
    group_id: String,
    function_id: Option<String>,
    value_str: Option<String>,
}

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
}

#[derive(Deserialize)]
struct EstimatesJson {
    median: Estimate,
}

fn run_bench_first(dir: &Path) -> String {
    format!(
        "run `cargo bench --bench bloom_vs_hashset` first (looked in {})",
        dir.display()
    )
}

/// Reads the memory log from `criterion_dir`.
pub fn read_memory(criterion_dir: &Path) -> Result<MemoryLog> {
    let path = criterion_dir.join(MEMORY_FILE);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read the memory records {}: {}",
            path.display(),
            run_bench_first(criterion_dir)
        )
    })?;
    let log: MemoryLog =
        serde_json::from_str(&text).with_context(|| format!("malformed {}", path.display()))?;
    if log.records.is_empty() {
        bail!(
            "{} holds no records: {}",
            path.display(),
            run_bench_first(criterion_dir)
        );
    }
    Ok(log)
}

/// Every `new/benchmark.json` with its `new/estimates.json` under `criterion_dir`, as medians.
/// Benchmarks whose parameter is not an integer n are skipped (not this bench's).
pub fn read_medians(criterion_dir: &Path) -> Result<Medians> {
    let mut dirs = Vec::new();
    find_new_dirs(criterion_dir, &mut dirs)
        .with_context(|| format!("cannot list {}", criterion_dir.display()))?;
    let mut out = Medians::new();
    for dir in dirs {
        let bench_path = dir.join("benchmark.json");
        let est_path = dir.join("estimates.json");
        let (Ok(bench), Ok(est)) = (
            std::fs::read_to_string(&bench_path),
            std::fs::read_to_string(&est_path),
        ) else {
            continue;
        };
        let bench: BenchmarkJson = serde_json::from_str(&bench)
            .with_context(|| format!("malformed {}", bench_path.display()))?;
        let est: EstimatesJson = serde_json::from_str(&est)
            .with_context(|| format!("malformed {}", est_path.display()))?;
        let (Some(label), Some(n)) = (
            bench.function_id,
            bench.value_str.and_then(|v| v.parse::<u64>().ok()),
        ) else {
            continue;
        };
        out.insert(
            BenchKey {
                group: bench.group_id,
                label,
                n,
            },
            est.median.point_estimate,
        );
    }
    if out.is_empty() {
        bail!(
            "no criterion estimates (new/estimates.json) found: {}",
            run_bench_first(criterion_dir)
        );
    }
    Ok(out)
}

fn find_new_dirs(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let path = entry.path();
        if entry.file_name() == "new" {
            out.push(path);
        } else {
            find_new_dirs(&path, out)?;
        }
    }
    Ok(())
}
