//! Reading what `cargo bench --bench bloom_vs_hashset` leaves: criterion's per-benchmark
//! `new/benchmark.json` + `new/estimates.json`, and the bench's memory records.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use bloomlab_harness::bench::{BenchLog, Group, LOG_FILE};

use super::Error;

/// A benchmark's identity: criterion group (e.g. `lookup-present-str`), function id (the
/// structure label) and parameter (n).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BenchKey {
    /// Which operation on which keys.
    pub group: Group,
    /// The structure's label, [`bloomlab_harness::bench::label`].
    pub label: String,
    /// Keys inserted.
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

/// Reads the bench's log ([`LOG_FILE`]) from `criterion_dir`. Errors say to run the bench when
/// the log is missing or empty.
pub fn read_memory(criterion_dir: &Path) -> Result<BenchLog, Error> {
    let path = criterion_dir.join(LOG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| Error::NoLog {
        path: path.clone(),
        dir: criterion_dir.to_owned(),
        source,
    })?;
    let log: BenchLog = serde_json::from_str(&text).map_err(|source| Error::Malformed {
        path: path.clone(),
        source,
    })?;
    if log.records.is_empty() {
        return Err(Error::EmptyLog {
            path,
            dir: criterion_dir.to_owned(),
        });
    }
    Ok(log)
}

/// Every `new/benchmark.json` with its `new/estimates.json` under `criterion_dir`, as medians.
/// Benchmarks whose group is not a [`Group`] or whose parameter is not an integer n are skipped
/// (not this bench's).
pub fn read_medians(criterion_dir: &Path) -> Result<Medians, Error> {
    let mut dirs = Vec::new();
    find_new_dirs(criterion_dir, &mut dirs).map_err(|source| Error::List {
        dir: criterion_dir.to_owned(),
        source,
    })?;
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
        let bench: BenchmarkJson =
            serde_json::from_str(&bench).map_err(|source| Error::Malformed {
                path: bench_path,
                source,
            })?;
        let est: EstimatesJson = serde_json::from_str(&est).map_err(|source| Error::Malformed {
            path: est_path,
            source,
        })?;
        let (Ok(group), Some(label), Some(n)) = (
            bench.group_id.parse::<Group>(),
            bench.function_id,
            bench.value_str.and_then(|v| v.parse::<u64>().ok()),
        ) else {
            continue;
        };
        out.insert(BenchKey { group, label, n }, est.median.point_estimate);
    }
    if out.is_empty() {
        return Err(Error::NoEstimates {
            dir: criterion_dir.to_owned(),
        });
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
