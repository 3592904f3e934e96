//! Checks made before anything is measured: the bounds of counts and threads, whether outputs can
//! be written, and whether a plan's filters fit in memory. A run that would fail on one of these
//! fails in milliseconds instead of after its measurements.

use std::collections::HashMap;
use std::path::Path;
#[cfg(test)]
use std::path::PathBuf;

use crate::bloom::sweep::{Plan, SweepConfig};
use crate::error::{HarnessError, human_bytes};
use crate::keys::group::group_key_bytes;
use crate::keys::{KeySet, KeySetKind};
use crate::limits::GEN_BATCH;

pub use crate::limits::{MAX_COUNT, MAX_OVERFILL, THREADS_PER_CORE, max_threads};

/// Checks that `dir` is, or can be created as, a directory in which files can be created: creates
/// it (and its parents), then creates and removes a probe file inside it. `what` names the flag in
/// the error, e.g. `output directory (--out)`.
pub fn check_output_dir(what: &str, dir: &Path) -> Result<(), HarnessError> {
    let fail = |reason: String| HarnessError::Unwritable {
        what: what.to_owned(),
        path: dir.to_owned(),
        reason,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(fail("it exists and is not a directory".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    let probe = dir.join(format!(".bloomlab-write-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| fail(format!("cannot create a file in it: {e}")))?;
    std::fs::remove_file(&probe)
        .map_err(|e| fail(format!("cannot remove {}: {e}", probe.display())))
}

/// Checks that the file `path` can be written, without changing it: it must not be a directory,
/// its parent directory is created if missing, an existing file must open for appending (nothing
/// is appended), and a missing one is created and removed again.
pub fn check_output_file(what: &str, path: &Path) -> Result<(), HarnessError> {
    let fail = |reason: String| HarnessError::Unwritable {
        what: what.to_owned(),
        path: path.to_owned(),
        reason,
    };
    if path.is_dir() {
        return Err(fail("it is a directory; give a file path".into()));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            fail(format!(
                "cannot create its directory {}: {e}",
                parent.display()
            ))
        })?;
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| fail(e.to_string()))
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| fail(e.to_string()))?;
        std::fs::remove_file(path).map_err(|e| fail(e.to_string()))
    }
}

/// Memory a run may use at once, and where that figure comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryBudget {
    /// The user's limit (`--memory-limit`), in bytes.
    Limit(u64),
    /// `MemAvailable` of `/proc/meminfo`, in bytes: what the kernel estimates can be allocated
    /// without swapping.
    Available(u64),
    /// Nothing to compare with (not Linux, or `/proc/meminfo` unreadable): the check is skipped.
    Unknown,
}

impl MemoryBudget {
    /// `Limit(limit)` when given, else what this machine reports as available.
    pub fn detect(limit: Option<u64>) -> Self {
        match limit {
            Some(l) => MemoryBudget::Limit(l),
            None => std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|t| mem_available(&t))
                .map_or(MemoryBudget::Unknown, MemoryBudget::Available),
        }
    }

    /// A note for when the check cannot run, else `None`.
    pub fn skipped_note(&self) -> Option<&'static str> {
        match self {
            MemoryBudget::Unknown => Some(
                "memory check skipped: /proc/meminfo has no MemAvailable here; pass \
                 --memory-limit BYTES to check the plan against a limit",
            ),
            _ => None,
        }
    }
}

pub use bloomlab_theory::host::mem_available;

/// What a run holds in memory at its peak, before it allocates any of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryNeed {
    /// Bytes at the peak.
    pub bytes: u64,
    /// Where the peak is and what it is made of, in words.
    pub detail: String,
}

/// Compares `need` with `budget`; the error names both figures and `override_flag`.
pub fn check_memory(
    need: &MemoryNeed,
    budget: &MemoryBudget,
    override_flag: &str,
) -> Result<(), HarnessError> {
    let (available, source) = match budget {
        MemoryBudget::Limit(l) => (*l, "is allowed by --memory-limit"),
        MemoryBudget::Available(a) => (*a, "is available (MemAvailable in /proc/meminfo)"),
        MemoryBudget::Unknown => return Ok(()),
    };
    if need.bytes <= available {
        return Ok(());
    }
    Err(HarnessError::OutOfMemory {
        needed: need.bytes,
        available,
        detail: need.detail.clone(),
        source_of_available: source.into(),
        override_hint: format!("set {override_flag} BYTES to allow more (at your own risk)"),
    })
}

/// The longest key (in bytes) a key set can produce: exact for files, an upper bound from the
/// generator's format otherwise (an index has at most 20 digits).
fn longest_key(keys: &KeySet) -> u64 {
    let digits = 20;
    match keys.kind() {
        KeySetKind::RandomU64 => 8,
        // "article-" and the index.
        KeySetKind::Article => 8 + digits,
        // "https://" + the longest host (18) + 3 x "/" + the longest segment (8) + "?id=" + the
        // index + "&lang=xx" + "&v=99".
        KeySetKind::Url => 8 + 18 + 3 * 9 + 4 + digits + 8 + 5,
        KeySetKind::Hex => 64,
        KeySetKind::File(_) => keys.file().map_or(0, |f| {
            f.lines.iter().map(|l| l.len() as u64).max().unwrap_or(0)
        }),
    }
}

/// Heap bytes of one batch of `len` keys of at most `key` bytes each (string batches keep an end
/// offset per key and a text buffer that may have doubled past its content).
fn batch_bytes(keys: &KeySet, len: u64, key: u64) -> u64 {
    if keys.is_u64() {
        len * 8
    } else {
        len * 8 + 2 * len * key
    }
}

/// Heap bytes of the sweep's `HashSet` baseline of `members` keys of at most `key` bytes: a
/// `with_capacity(members)` table of std's SwissTable (buckets: the next power of two of 8/7 of
/// the capacity, one slot plus one control byte each) and, for strings, one allocation per key
/// (its bytes plus the allocator's 8-byte header, in 16-byte steps).
fn hashset_bytes(keys: &KeySet, members: u64, key: u64) -> u64 {
    let buckets = if members < 8 {
        16
    } else {
        (members.saturating_mul(8) / 7)
            .checked_next_power_of_two()
            .unwrap_or(u64::MAX)
    };
    let (slot, per_key) = if keys.is_u64() {
        (8, 0)
    } else {
        (24, (key + 8).div_ceil(16) * 16)
    };
    buckets
        .saturating_mul(slot + 1)
        .saturating_add(members.saturating_mul(per_key))
}

impl Plan {
    /// The memory the sweep holds at its peak, from each filter's sizing rule
    /// ([`Subject::sized_bytes`](crate::subject::Subject::sized_bytes)) without allocating anything.
    ///
    /// Model (it mirrors [`crate::bloom::sweep::run`]): rows run in groups of equal (key set, members);
    /// a group's filled filters are all kept until its timing pass, so a group holds the sum of
    /// its filters, plus one key batch per worker thread (at most `threads` run at once) and the
    /// keys the group shares ([`crate::keys::group`], at most its budget), plus,
    /// when timing, the group's `HashSet` baseline and its two timing batches. Groups run one
    /// after another, so the peak is the largest group's. Key files are already read when the
    /// plan exists, so they are in the figure this is compared with, not in this one.
    ///
    /// Errors: a row whose filter cannot be built at its (n, p), as the build would report it.
    pub fn memory_need(&self, config: &SweepConfig) -> Result<MemoryNeed, HarnessError> {
        let threads = if config.threads == 0 {
            std::thread::available_parallelism().map_or(1, |c| c.get())
        } else {
            config.threads
        } as u64;
        let mut groups: Vec<((KeySetKind, u64), Vec<usize>)> = Vec::new();
        let mut filter_bytes = Vec::with_capacity(self.rows.len());
        for (i, r) in self.rows.iter().enumerate() {
            let bytes = r.spec.filter.sized_bytes(r.spec.n, r.spec.p)?;
            filter_bytes.push(bytes);
            let key = (r.key_set.clone(), r.spec.n_inserted());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(i),
                None => groups.push((key, vec![i])),
            }
        }
        let mut best = MemoryNeed {
            bytes: 0,
            detail: "no rows".into(),
        };
        let mut longest: HashMap<&KeySetKind, u64> = HashMap::new();
        for ((kind, members), rows) in &groups {
            let Some(keys) = self.key_set(kind) else {
                continue;
            };
            let key = *longest.entry(kind).or_insert_with(|| longest_key(keys));
            let filters: u64 = rows
                .iter()
                .fold(0u64, |a, &i| a.saturating_add(filter_bytes[i]));
            let workers = threads.min(rows.len() as u64);
            let batches = workers * batch_bytes(keys, GEN_BATCH as u64, key);
            let non_members = keys
                .available()
                .map_or(u64::MAX - members, |a| a.saturating_sub(*members));
            let shared = if keys.file().is_some() {
                0
            } else {
                group_key_bytes(
                    *members,
                    config.sampling.max_queries.min(non_members),
                    |len| batch_bytes(keys, len, key),
                )
            };
            let batches = batches.saturating_add(shared);
            let timing = if config.timing {
                let set = hashset_bytes(keys, *members, key);
                let timing_batches = 2 * batch_bytes(keys, (*members).min(1 << 16), key);
                set.saturating_add(timing_batches)
            } else {
                0
            };
            let total = filters.saturating_add(batches).saturating_add(timing);
            if total > best.bytes {
                best = MemoryNeed {
                    bytes: total,
                    detail: format!(
                        "key set {kind} with {members} members: {} filter(s) holding {}{}, key \
                         batches of {workers} thread(s) and the group's shared keys {}",
                        rows.len(),
                        human_bytes(filters),
                        if config.timing {
                            format!(", the timing HashSet and batches {}", human_bytes(timing))
                        } else {
                            String::new()
                        },
                        human_bytes(batches)
                    ),
                };
            }
        }
        Ok(best)
    }
}

/// The most memory a set of trials running `concurrent` at a time holds: the sum of the
/// `concurrent` largest filters among `filter_bytes`, each from [`Subject::sized_bytes`](crate::subject::Subject::sized_bytes) (the
/// gate re-runs its points this way).
pub fn concurrent_need(mut filter_bytes: Vec<(String, u64)>, concurrent: usize) -> MemoryNeed {
    filter_bytes.sort_by_key(|b| std::cmp::Reverse(b.1));
    filter_bytes.truncate(concurrent.max(1));
    let bytes = filter_bytes
        .iter()
        .fold(0u64, |a, (_, b)| a.saturating_add(*b));
    let names: Vec<String> = filter_bytes
        .iter()
        .map(|(name, b)| format!("{name} {}", human_bytes(*b)))
        .collect();
    MemoryNeed {
        bytes,
        detail: format!(
            "the {} largest filters that run at once: {}",
            filter_bytes.len(),
            names.join(", ")
        ),
    }
}

/// The memory of re-running baseline `points`, `concurrent` at a time: the sum of the largest
/// `concurrent` filters, sized without allocating (each trial's key batches add a few MB).
///
/// Errors: a point whose filter cannot be built at its (n, p).
pub fn points_need(
    points: &[crate::bloom::gate::BaselinePoint],
    concurrent: usize,
) -> Result<MemoryNeed, HarnessError> {
    let sizes = points
        .iter()
        .map(|pt| pt.filter.sized_bytes(pt.n, pt.p).map(|b| (pt.label(), b)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(concurrent_need(sizes, concurrent))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::sweep::Grid;
    use crate::keys::KeySetKind;
    use crate::subject::Selection;
    use bloomlab_filters::registry;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("bloomlab-preflight-{}-{name}", std::process::id()))
    }

    #[test]
    fn mem_available_is_read_in_bytes_from_meminfo() {
        let text = "MemTotal:       24576000 kB\nMemFree:         1000 kB\n\
                    MemAvailable:   20000000 kB\nBuffers: 1 kB\n";
        assert_eq!(mem_available(text), Some(20_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots\n"), None);
    }

    fn config(n: u64, p: f64, filters: &[&str], timing: bool) -> SweepConfig {
        let mut c = SweepConfig::with_grids(vec![Grid {
            filters: Selection::parse_list(&filters.join(",")).unwrap(),
            key_sets: vec![KeySetKind::RandomU64],
            n: vec![n],
            p: vec![p],
            overfill: vec![1.0],
        }]);
        c.threads = 2;
        c.timing = timing;
        c
    }

    #[test]
    fn a_plan_needs_the_sum_of_a_groups_filters_and_is_refused_above_the_budget() {
        // n = 1e10 at p = 1e-3: 1.44e11 bits = 17.97 GB per flat filter; the group's two rows
        // are held at once.
        let c = config(
            10_000_000_000,
            1e-3,
            &["classic/xxh3/km/flat", "sbbf/xxh3"],
            false,
        );
        let plan = c.plan().unwrap();
        let need = plan.memory_need(&c).unwrap();
        let one = registry::sized_bytes("classic/xxh3/km/flat", 10_000_000_000, 1e-3).unwrap();
        let two = registry::sized_bytes("sbbf/xxh3", 10_000_000_000, 1e-3).unwrap();
        assert!(one > 17_900_000_000 && two >= one, "{one} {two}");
        // Plus one key batch per thread (2 x 2^16 u64 keys) and the keys the group shares: 10^10
        // members and 2e7 queries are past its budget, so the whole budget.
        assert_eq!(
            need.bytes,
            one + two + 2 * (1 << 16) * 8 + crate::keys::group::GROUP_KEY_BYTES,
            "{need:?}"
        );
        assert!(need.detail.contains("2 filter(s)"), "{need:?}");

        let budget = MemoryBudget::Available(24 << 30);
        let err = check_memory(&need, &budget, "--memory-limit")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&need.bytes.to_string())
                && err.contains(&(24u64 << 30).to_string())
                && err.contains("MemAvailable")
                && err.contains("--memory-limit"),
            "{err}"
        );
        // A limit that covers it passes, and an unknown budget skips the check.
        assert!(check_memory(&need, &MemoryBudget::Limit(need.bytes), "--memory-limit").is_ok());
        assert!(check_memory(&need, &MemoryBudget::Unknown, "--memory-limit").is_ok());
        assert!(MemoryBudget::Unknown.skipped_note().is_some());
    }

    #[test]
    fn timing_adds_the_hashset_baseline_of_the_members() {
        let plain = config(1_000_000, 0.01, &["classic/xxh3/km/flat"], false);
        let timed = config(1_000_000, 0.01, &["classic/xxh3/km/flat"], true);
        let a = plain.plan().unwrap().memory_need(&plain).unwrap().bytes;
        let b = timed.plan().unwrap().memory_need(&timed).unwrap().bytes;
        // 1e6 u64 members: 2^21 buckets of 8 bytes and a control byte, two batches of 2^16 keys.
        assert_eq!(b - a, (1 << 21) * 9 + 2 * (1 << 16) * 8);
    }

    #[test]
    fn concurrent_need_sums_the_largest_filters_that_run_together() {
        let sizes = vec![("a".into(), 10), ("b".into(), 30), ("c".into(), 20)];
        let need = concurrent_need(sizes, 2);
        assert_eq!(need.bytes, 50);
        assert!(need.detail.contains("2 largest filters") && need.detail.contains("b 30 B"));
    }

    #[test]
    fn outputs_are_probed_without_leaving_anything_behind() {
        let file = temp("file");
        std::fs::write(&file, "keep").unwrap();
        // A regular file is not an output directory.
        let err = check_output_dir("output directory (--out)", &file)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not a directory") && err.contains("--out"),
            "{err}"
        );
        // An existing file is writable and left unchanged.
        check_output_file("report", &file).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
        // A directory is not a file.
        let dir = temp("dir");
        check_output_dir("output directory", &dir.join("sub")).unwrap();
        assert_eq!(std::fs::read_dir(dir.join("sub")).unwrap().count(), 0);
        let err = check_output_file("report (--report)", &dir)
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a directory"), "{err}");
        // A missing file in a missing directory: created, probed and removed.
        let new = dir.join("deeper").join("report.md");
        check_output_file("report", &new).unwrap();
        assert!(!new.exists());
        // Below a regular file nothing can be created.
        let err = check_output_file("report", &file.join("x.md"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot create its directory"), "{err}");
        std::fs::remove_file(&file).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn threads_and_overfill_have_stated_upper_bounds() {
        let mut c = config(10_000, 0.01, &["sbbf/xxh3"], false);
        c.threads = 20_000;
        let err = c.validate().unwrap_err().to_string();
        assert!(
            err.contains("threads = 20000") && err.contains("per core"),
            "{err}"
        );
        c.threads = max_threads();
        assert!(c.validate().is_ok());

        for (o, shown) in [(1e300, "1e300"), (65.0, "65"), (f64::INFINITY, "inf")] {
            c.grids[0].overfill = vec![o];
            let err = c.validate().unwrap_err().to_string();
            assert!(
                err.contains(&format!("overfill = {shown} ")) && err.contains("64"),
                "{err}"
            );
        }
        // 2^53 members at most, whatever the factor.
        c.grids[0].overfill = vec![2.0];
        c.grids[0].n = vec![MAX_COUNT];
        let err = c.validate().unwrap_err().to_string();
        assert!(
            err.contains("2^53") && err.contains("1.8014398509481984e16"),
            "{err}"
        );
    }

    #[test]
    fn a_row_that_cannot_be_built_fails_the_plan() {
        // k would be 997 > 255 (p = 1e-300 printed compactly, once).
        let c = config(1000, 1e-300, &["classic/xxh3/km/flat"], false);
        let err = c.plan().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("p = 1e-300") && msg.len() < 200, "{msg}");
        let cause = std::error::Error::source(&err)
            .map(ToString::to_string)
            .unwrap();
        assert!(
            cause.contains("255") && !msg.contains(&cause),
            "{msg} / {cause}"
        );
    }
}
