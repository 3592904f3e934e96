//! Reading what `cargo bench --bench bloom_vs_hashset` leaves: criterion's per-benchmark
//! `new/benchmark.json` + `new/estimates.json`, and the bench's memory records.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use bloomlab_harness::schema::bench::{BenchLog, Group, LOG_FILE};

use super::Error;

/// A benchmark's identity: criterion group (e.g. `lookup-present-str`), function id (the
/// structure label) and parameter (n).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BenchKey {
    /// Which operation on which keys.
    pub group: Group,
    /// The structure's label, [`bloomlab_harness::schema::bench::label`].
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

/// One criterion benchmark's median: its group, function (label) and integer parameter n.
pub(crate) struct Estimated {
    pub group: String,
    pub label: String,
    pub n: u64,
    pub median_ns: f64,
}

/// Every `new/benchmark.json` with its `new/estimates.json` under `dir`, as medians. Benchmarks
/// without a function id or an integer parameter are skipped (not bloomlab's); unreadable pairs
/// too; malformed JSON is an error naming the file.
pub(crate) fn read_estimates(dir: &Path) -> Result<Vec<Estimated>, Error> {
    let mut dirs = Vec::new();
    find_new_dirs(dir, &mut dirs).map_err(|source| Error::List {
        dir: dir.to_owned(),
        source,
    })?;
    let mut out = Vec::new();
    for new in dirs {
        let (Ok(bench), Ok(est)) = (
            std::fs::read_to_string(new.join("benchmark.json")),
            std::fs::read_to_string(new.join("estimates.json")),
        ) else {
            continue;
        };
        let malformed = |name: &str| {
            let path = new.join(name);
            move |source| Error::Malformed { path, source }
        };
        let bench: BenchmarkJson =
            serde_json::from_str(&bench).map_err(malformed("benchmark.json"))?;
        let est: EstimatesJson = serde_json::from_str(&est).map_err(malformed("estimates.json"))?;
        let (Some(label), Some(n)) = (
            bench.function_id,
            bench.value_str.and_then(|v| v.parse::<u64>().ok()),
        ) else {
            continue;
        };
        out.push(Estimated {
            group: bench.group_id,
            label,
            n,
            median_ns: est.median.point_estimate,
        });
    }
    Ok(out)
}

/// Every `new/benchmark.json` with its `new/estimates.json` under `criterion_dir`, as medians.
/// Benchmarks whose group is not a [`Group`] or whose parameter is not an integer n are skipped
/// (not this bench's).
pub fn read_medians(criterion_dir: &Path) -> Result<Medians, Error> {
    let mut out = Medians::new();
    for e in read_estimates(criterion_dir)? {
        if let Ok(group) = e.group.parse::<Group>() {
            out.insert(
                BenchKey {
                    group,
                    label: e.label,
                    n: e.n,
                },
                e.median_ns,
            );
        }
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
