//! Synthetic sweep rows for tests: shaped like a real sweep (several filters, families, key sets,
//! n, p and overfill factors, some rows with zero false positives, one family off its theory), but
//! computed from formulas, never measured.

use bloomlab_harness::SweepRow;
use bloomlab_harness::stats::{clopper_pearson, wilson};

const CONFIDENCE: f64 = 0.95;

/// Rows over 5 filters x 2 key sets x 2 n x 3 p (as sized), plus overfill 0.5x..3x for one slice.
pub(crate) fn synthetic_rows() -> Vec<SweepRow> {
    let filters = [
        ("classic/xxh3/km/flat", "classic"),
        ("classic/fnv1a/edh/flat", "classic"),
        ("blocked512/xxh3", "blocked512"),
        ("sbbf/xxh64", "sbbf"),
        ("textbook-fnv1a-i32", "textbook"),
    ];
    let mut rows = Vec::new();
    for (filter, layout) in filters {
        for key_set in ["random-u64", "article"] {
            for n in [1_000u64, 100_000] {
                for p in [0.1, 0.01, 0.001] {
                    rows.push(row(filter, layout, key_set, n, p, 1.0));
                }
            }
        }
        for overfill in [0.5, 2.0, 3.0] {
            rows.push(row(filter, layout, "random-u64", 100_000, 0.01, overfill));
        }
    }
    rows
}

/// One row whose figures follow from the textbook formulas; the textbook family gets three times
/// its theory (a departure to report) and the `article` key set at p = 0.001 gets too few queries
/// to see any false positive.
pub(crate) fn row(
    filter: &str,
    layout: &str,
    key_set: &str,
    n: u64,
    p: f64,
    overfill: f64,
) -> SweepRow {
    let ln2 = std::f64::consts::LN_2;
    let bits = ((-(n as f64) * p.ln() / (ln2 * ln2)).ceil() as u64).div_ceil(64) * 64;
    let hashes = ((bits as f64 / n as f64) * ln2).round().max(1.0) as u32;
    let n_inserted = (n as f64 * overfill).round() as u64;
    let k = f64::from(hashes);
    let theory = (1.0 - (-k * n_inserted as f64 / bits as f64).exp()).powf(k);
    let queries = if key_set == "article" && p < 0.005 {
        300
    } else {
        (400.0 / p) as u64
    };
    let factor = if layout == "textbook" { 3.0 } else { 1.0 };
    let false_positives = ((theory * factor * queries as f64).round() as u64).min(queries);
    let (ci_low, ci_high) = clopper_pearson(false_positives, queries, CONFIDENCE);
    let (wilson_low, wilson_high) = wilson(false_positives, queries, CONFIDENCE);
    let fpr = false_positives as f64 / queries as f64;
    let bits_per_key = bits as f64 / n as f64;
    let lookup = 8.0 + 1.5 * k + (n as f64).log10();
    SweepRow {
        filter: filter.to_string(),
        layout: layout.to_string(),
        key_set: key_set.to_string(),
        n,
        p,
        overfill,
        n_inserted,
        bits,
        hashes,
        bits_per_key,
        bound_bits_per_key: -p.log2(),
        space_overhead: bits_per_key / -fpr.max(f64::MIN_POSITIVE).log2(),
        memory_bytes: bits / 8,
        fill_ratio: 1.0 - (-k * n_inserted as f64 / bits as f64).exp(),
        estimated_count: n_inserted as f64 * 1.01,
        queries,
        false_positives,
        fpr,
        ci_low,
        ci_high,
        wilson_low,
        wilson_high,
        fpr_theory: theory,
        fpr_textbook: theory,
        theory_in_interval: ci_low <= theory && theory <= ci_high,
        capped: key_set == "article" && p < 0.005,
        insert_ns: lookup * 1.2,
        lookup_present_ns: lookup,
        lookup_absent_ns: lookup * 0.6,
        hashset_present_ns: 20.0 + (n as f64).log10() * 3.0,
        hashset_absent_ns: 15.0 + (n as f64).log10() * 3.0,
        hashset_memory_bytes: n_inserted * 48,
        confidence: CONFIDENCE,
        seed: 42,
        revision: "abc1234-dirty".to_string(),
    }
}

/// A fresh, empty directory under the system temp dir, unique to this test and process.
pub(crate) fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("bloomlab-report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
