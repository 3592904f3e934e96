//! The scale run's typed settings and results: [`ScaleConfig`], [`ScaleProgress`], and the rows
//! of `scale.csv` ([`ScaleRow`], gathered in an [`Outcome`]) that `bloomlab_report::scale`
//! renders. The engine that fills one filter for billions of keys from every core is the
//! `bloomlab-scale` crate (crates/scale, with the `scale` binary): kept apart from this crate, it
//! is not compiled into the sweep's build.

use bloomlab_filters::Params;
use serde::{Deserialize, Serialize};

use crate::keys::KeySetKind;

/// One scale run's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleConfig {
    /// Registry name (`bloomlab_scale::SUPPORTED` names the layouts that run).
    pub filter: String,
    /// Members inserted, and the count the filter is sized for.
    pub n: u64,
    /// Target false-positive rate.
    pub p: f64,
    /// An explicit (bits, k) instead of the variant's sizing for (n, p): to put a given number
    /// of keys into a filter of a given size (e.g. past 2^33 bits with few keys, as the tests
    /// do). A layout may round the bits up; the split-block filter always has k = 8.
    pub geometry: Option<Params>,
    /// Key set (the URL-shaped `url` by default).
    pub keys: KeySetKind,
    /// Run seed.
    pub seed: u64,
    /// Worker threads.
    pub threads: usize,
    /// Members looked up after the fill: all of them when `>= n`, else this many, evenly spread
    /// over `0..n` (member `floor(j n / s)` for j < s).
    pub check_members: u64,
    /// Target relative half-width of the false-positive rate's exact interval.
    pub precision: f64,
    /// Confidence level of the interval.
    pub confidence: f64,
    /// Most non-member queries.
    pub max_queries: u64,
    /// Keys skipped past the members before the non-member queries: queries are keys
    /// `n + query_offset` onward. A rerun with another offset queries the same filter (same
    /// seed) with keys disjoint from an earlier run's.
    pub query_offset: u64,
    /// Ask the kernel to back the filter with 2 MiB pages (`madvise`), which spares most of the
    /// page-table walks of random accesses over gigabytes.
    pub huge_pages: bool,
    /// Memory the run may use (`None`: what the machine reports as available).
    pub memory_limit: Option<u64>,
    /// Build revision recorded in the row.
    pub revision: String,
    /// The command that made the row, recorded in it.
    pub command: String,
}

/// A phase's progress, reported from worker threads after every chunk of keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleProgress {
    /// The phase: `insert`, `members` or `non-members`.
    pub phase: &'static str,
    /// Keys done in this phase so far.
    pub done: u64,
    /// Keys this phase will do (for `non-members`, the current target).
    pub total: u64,
}

/// How a scale run ended, written in `scale.csv` as its lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleStatus {
    /// Every phase finished and no member was missing.
    Done,
    /// Stopped (Ctrl-C): the figures are those of the phases finished, `note` says how far.
    Interrupted,
    /// False negatives found (`note` names the first).
    Failed,
    /// Nothing allocated: unknown layout for the scale run, a size the layout cannot take, or
    /// not enough memory (`note` says which).
    Refused,
}

impl ScaleStatus {
    /// The name written in `scale.csv` and the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Interrupted => "interrupted",
            Self::Failed => "failed",
            Self::Refused => "refused",
        }
    }
}

impl std::fmt::Display for ScaleStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every row of a scale report: the typed outcome of one or more scale runs, which
/// `bloomlab_report::scale` renders.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// One row per filter, key set, n, p and query offset, in the order they were first run.
    pub rows: Vec<ScaleRow>,
}

impl Outcome {
    /// Adds `row`, replacing the row of the same filter, key set, n, p and query offset if there
    /// is one (in its place), else after the others.
    pub fn merge(&mut self, row: ScaleRow) {
        let same = |a: &ScaleRow| {
            a.filter == row.filter
                && a.keys == row.keys
                && a.n == row.n
                && a.p == row.p
                && a.query_offset == row.query_offset
        };
        match self.rows.iter_mut().find(|r| same(r)) {
            Some(old) => *old = row,
            None => self.rows.push(row),
        }
    }
}

/// One scale run's result: a row of `scale.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleRow {
    /// Registry name.
    pub filter: String,
    /// Key set.
    pub keys: String,
    /// Members (and the sized-for count).
    pub n: u64,
    /// Target rate.
    pub p: f64,
    /// How the run ended (see [`ScaleStatus`]).
    pub status: ScaleStatus,
    /// Why a run was refused or interrupted; empty otherwise.
    pub note: String,
    /// Bits of the filter after its layout's rounding.
    pub bits: u64,
    /// Probes per key.
    pub hashes: u32,
    /// Bytes the filter holds.
    pub memory_bytes: u64,
    /// Bits per member.
    pub bits_per_key: f64,
    /// Members inserted (less than n only when interrupted).
    pub inserted: u64,
    /// Members looked up after the fill.
    pub members_checked: u64,
    /// Members not found: must be 0.
    pub false_negatives: u64,
    /// The first member not found, if any (else empty).
    pub first_false_negative: String,
    /// Non-members queried.
    pub queries: u64,
    /// The first non-member is key `n + query_offset` (0 in rows written before the option).
    #[serde(default)]
    pub query_offset: u64,
    /// Non-members reported present.
    pub false_positives: u64,
    /// Observed false-positive rate.
    pub fpr: f64,
    /// Exact (Clopper-Pearson) interval.
    pub ci_low: f64,
    /// Upper end of the interval.
    pub ci_high: f64,
    /// Relative half-width reached, `(high - low) / 2 / fpr`.
    pub precision: f64,
    /// The layout's theory with the hash-width term (`Filter::fpr_theory`).
    pub fpr_theory: f64,
    /// The same layout's theory as if positions were uniform over all bits.
    pub fpr_theory_uniform: f64,
    /// The rate of this filter's own bits (`Filter::fpr_given_bits`).
    pub fpr_given_bits: f64,
    /// Whether `fpr_theory` lies in the interval.
    pub theory_in_interval: bool,
    /// Fraction of bits set.
    pub fill_ratio: f64,
    /// Seconds to allocate and zero the filter (and ask for huge pages).
    pub alloc_secs: f64,
    /// Seconds of the fill.
    pub insert_secs: f64,
    /// Members inserted per second per thread.
    pub insert_per_sec_per_core: f64,
    /// Seconds of the member check.
    pub members_secs: f64,
    /// Members looked up per second per thread.
    pub members_per_sec_per_core: f64,
    /// Seconds of the non-member queries.
    pub queries_secs: f64,
    /// Non-members queried per second per thread.
    pub queries_per_sec_per_core: f64,
    /// Seconds counting bits and computing the given-bits rate.
    pub stats_secs: f64,
    /// Peak resident memory of the process (`VmHWM`), bytes.
    pub peak_rss_bytes: u64,
    /// Bytes of the filter the kernel backed with huge pages after the fill (`AnonHugePages`).
    pub huge_page_bytes: u64,
    /// Worker threads.
    pub threads: usize,
    /// Run seed.
    pub seed: u64,
    /// Build revision.
    pub revision: String,
    /// When the run finished (UTC), filled in by the caller that writes the row.
    pub finished: String,
    /// The command that made this row.
    pub command: String,
}

impl ScaleRow {
    /// A row for a run refused before anything was allocated: `note` says why.
    pub fn refused(config: &ScaleConfig, note: String) -> Self {
        let mut row = Self::empty(config);
        row.status = ScaleStatus::Refused;
        row.note = note;
        row
    }

    /// A row of `config` with nothing measured yet, which the run fills in phase by phase (its
    /// status stays `refused` until the run sets it).
    pub fn empty(config: &ScaleConfig) -> Self {
        Self {
            filter: config.filter.clone(),
            keys: config.keys.to_string(),
            n: config.n,
            p: config.p,
            // Every path through `run` sets the status; a row is `done` only when `finish` says so.
            status: ScaleStatus::Refused,
            note: String::new(),
            bits: 0,
            hashes: 0,
            memory_bytes: 0,
            bits_per_key: 0.0,
            inserted: 0,
            members_checked: 0,
            false_negatives: 0,
            first_false_negative: String::new(),
            queries: 0,
            query_offset: config.query_offset,
            false_positives: 0,
            fpr: 0.0,
            ci_low: 0.0,
            ci_high: 0.0,
            precision: 0.0,
            fpr_theory: 0.0,
            fpr_theory_uniform: 0.0,
            fpr_given_bits: 0.0,
            theory_in_interval: false,
            fill_ratio: 0.0,
            alloc_secs: 0.0,
            insert_secs: 0.0,
            insert_per_sec_per_core: 0.0,
            members_secs: 0.0,
            members_per_sec_per_core: 0.0,
            queries_secs: 0.0,
            queries_per_sec_per_core: 0.0,
            stats_secs: 0.0,
            peak_rss_bytes: 0,
            huge_page_bytes: 0,
            threads: config.threads,
            seed: config.seed,
            revision: config.revision.clone(),
            finished: String::new(),
            command: config.command.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(filter: &str, n: u64, query_offset: u64) -> ScaleConfig {
        ScaleConfig {
            filter: filter.into(),
            n,
            p: 0.01,
            geometry: None,
            keys: KeySetKind::Url,
            seed: 1,
            threads: 1,
            check_members: 1,
            precision: 0.05,
            confidence: 0.95,
            max_queries: 1,
            query_offset,
            huge_pages: false,
            memory_limit: None,
            revision: "abc".into(),
            command: "scale".into(),
        }
    }

    fn row(filter: &str, n: u64, query_offset: u64, fpr: f64) -> ScaleRow {
        let mut row = ScaleRow::empty(&config(filter, n, query_offset));
        row.fpr = fpr;
        row
    }

    #[test]
    fn a_new_row_replaces_the_same_filter_size_and_query_offset_only() {
        let mut outcome = Outcome {
            rows: vec![row("a", 10, 0, 0.01), row("b", 10, 0, 0.01)],
        };
        for r in [
            row("a", 10, 0, 0.02),
            row("a", 20, 0, 0.01),
            row("a", 10, 5, 0.03),
        ] {
            outcome.merge(r);
        }
        let got: Vec<(&str, u64, u64, f64)> = outcome
            .rows
            .iter()
            .map(|r| (r.filter.as_str(), r.n, r.query_offset, r.fpr))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", 10, 0, 0.02),
                ("b", 10, 0, 0.01),
                ("a", 20, 0, 0.01),
                ("a", 10, 5, 0.03)
            ]
        );
    }
}
