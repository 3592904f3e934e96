//! The "Against the JVM" section of `reports/bloom_vs_hashset.md`: Guava 31.1's `BloomFilter` on
//! Java 17 against bloomlab's `classic/murmur3/mitz64/flat`, from the JSON that
//! `scripts/guava-timing.sh` writes (`reports/jvm/guava_vs_bloomlab.json`, committed, so the
//! section survives a regeneration of the report on a machine without Java).
//!
//! The script's Java half times both filters on the same keys in one run, part by part,
//! alternating, so each round's ratio is paired (both parts within about a second of each other);
//! the section gives per operation the medians and ranges over rounds and the median of the
//! rounds' ratios with its range, against the issue's target of 5x.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use bloomlab_harness::stats::median;
use serde::Deserialize;

use super::Error;
use crate::date::date_utc;
use crate::markdown::table;

/// Where the script writes, relative to the report's directory.
pub const DATA: &str = "jvm/guava_vs_bloomlab.json";

/// Issue 16's target: bloomlab at least this many times faster than Guava.
pub const TARGET: f64 = 5.0;

/// One operation's rounds.
#[derive(Debug, Clone, Deserialize)]
pub struct JvmOp {
    /// `insert` (re-inserting members), `lookup-present` or `lookup-absent`.
    pub op: String,
    /// Per round, Guava's ns per key.
    pub guava_ns: Vec<f64>,
    /// Per round, bloomlab's ns per key, timed next to the same round's Guava part.
    pub bloomlab_ns: Vec<f64>,
}

impl JvmOp {
    /// Per round, Guava's time over bloomlab's.
    pub fn ratios(&self) -> Vec<f64> {
        self.guava_ns
            .iter()
            .zip(&self.bloomlab_ns)
            .map(|(g, b)| g / b)
            .filter(|x| x.is_finite())
            .collect()
    }
}

/// What `scripts/java/GuavaTiming.java` writes (its producer is Java, so the schema lives here,
/// with its only consumer).
#[derive(Debug, Clone, Deserialize)]
pub struct JvmRun {
    /// `git describe --always --dirty` when the script ran.
    pub revision: String,
    /// Unix seconds at the end of the run.
    pub unix_time: u64,
    /// The JVM's name and version.
    pub java: String,
    /// The JVM's flags as the script set them.
    pub jvm_flags: String,
    /// The Debian package version of the Guava jar.
    pub guava: String,
    /// Keys inserted.
    pub n: u64,
    /// Target rate both filters were sized for.
    pub p: f64,
    /// Bits of both filters (checked equal before timing).
    pub bits: u64,
    /// Hash functions of both filters (checked equal).
    pub hashes: u32,
    /// Keys per present batch.
    pub present_batch: u64,
    /// Keys per absent batch.
    pub absent_batch: u64,
    /// Absent keys reported present, the same on both sides (checked).
    pub absent_positives: u64,
    /// Guava's build from empty, wall clock, ns per key (the first pass, JVM cold).
    pub guava_build_ns_per_key: f64,
    /// Untimed rounds of every Guava operation before measuring.
    pub warmup_rounds: u32,
    /// Insert, lookups of present and absent keys.
    pub ops: Vec<JvmOp>,
}

/// Reads `<report dir>/`[`DATA`]; `None` when the script has not run.
pub fn read(report_dir: &Path) -> Result<Option<JvmRun>, Error> {
    let path: PathBuf = report_dir.join(DATA);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| Error::Malformed { path, source })
}

fn spread(xs: &[f64], digits: usize) -> String {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if xs.is_empty() {
        return "—".into();
    }
    format!(
        "{:.digits$} ({:.digits$}–{:.digits$})",
        median(xs.iter().copied()),
        lo,
        hi
    )
}

/// The section, Markdown.
pub fn section(run: &JvmRun) -> String {
    let mut out = String::new();
    out.push_str("## Against the JVM: Guava 31.1 vs `classic/murmur3/mitz64/flat`\n\n");
    out.push_str(&crate::markdown::dirty_warning([run.revision.as_str()]));
    let _ = writeln!(
        out,
        "Generated from [jvm/guava_vs_bloomlab.json](jvm/guava_vs_bloomlab.json), written by \
         `scripts/guava-timing.sh` (revision {}, {}): Guava {} (`BloomFilter.create(\
         Funnels.stringFunnel(UTF_8), n, p)`) on {} ({}), and bloomlab's twin of its layout \
         (`Bloom<Murmur3, GuavaMitz64, FlatBits>`, built with `target-cpu=native` and the \
         `measure` profile, fat LTO, as the benches are), on the same {} string keys \
         `\"article-content-hash-\" + i`, p = {}. Both filters have {} bits and k = {} \
         (checked), and both report the same {} of the {} absent keys present. The Java \
         program starts the Rust one and times them part by part, alternating which goes \
         first, after {} untimed rounds of every Guava operation (JIT warm-up); each part is \
         one untimed pass and one timed pass over the batch ({} keys). Shown: the median over \
         {} rounds and, in brackets, the fastest and slowest round; the ratio is Guava's time \
         over bloomlab's in the same round (median of the rounds' ratios, and their range). \
         Issue 16 asked for at least {TARGET}x; issue 30 replaced that target with the floor \
         (first section), because Guava's own time moved between days (145 to 329 ns a lookup) \
         and a ratio to it moved with it.\n",
        run.revision,
        date_utc(run.unix_time),
        run.guava,
        run.java,
        if run.jvm_flags.is_empty() {
            "default flags".to_owned()
        } else {
            format!("`{}`", run.jvm_flags)
        },
        run.n,
        run.p,
        run.bits,
        run.hashes,
        run.absent_positives,
        run.absent_batch,
        run.warmup_rounds,
        run.present_batch,
        run.ops.first().map_or(0, |o| o.guava_ns.len()),
    );
    let headers = [
        "operation",
        "Guava ns/key",
        "bloomlab ns/key",
        "Guava / bloomlab, paired",
        "issue 16's 5x",
    ];
    let rows: Vec<Vec<String>> = run
        .ops
        .iter()
        .map(|o| {
            let ratios = o.ratios();
            let m = median(ratios.iter().copied());
            vec![
                o.op.clone(),
                spread(&o.guava_ns, 1),
                spread(&o.bloomlab_ns, 1),
                format!("{}x", spread(&ratios, 2)),
                if !m.is_finite() {
                    "—".into()
                } else if m >= TARGET {
                    "met".into()
                } else {
                    "missed".into()
                },
            ]
        })
        .collect();
    out.push_str(&table(&headers, &rows));
    let _ = writeln!(
        out,
        "\n*insert* re-inserts present keys (the bits are already set). Guava's build from empty, \
         in the JVM's first pass (cold), took {:.0} ns per key.\n",
        run.guava_build_ns_per_key
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_paired_per_round_and_the_target_is_judged_on_their_median() {
        let run: JvmRun = serde_json::from_str(
            r#"{"revision": "abc1234", "unix_time": 0, "java": "OpenJDK 17", "jvm_flags": "-Xmx2g",
                "guava": "31.1-1", "n": 1000, "p": 0.01, "bits": 9600, "hashes": 7,
                "present_batch": 1000, "absent_batch": 1000, "absent_positives": 9,
                "guava_build_ns_per_key": 300.0, "warmup_rounds": 3,
                "ops": [{"op": "lookup-present", "guava_ns": [100.0, 200.0, 160.0],
                         "bloomlab_ns": [50.0, 20.0, 20.0]},
                        {"op": "lookup-absent", "guava_ns": [120.0, 120.0, 120.0],
                         "bloomlab_ns": [20.0, 20.0, 30.0]}]}"#,
        )
        .unwrap();
        let text = section(&run);
        // Ratios 2, 10, 8: median 8 (the ratio of the medians would be 160/20 = 8 too, but the
        // range shows the rounds).
        assert!(
            text.contains("| lookup-present | 160.0 (100.0–200.0) | 20.0 (20.0–50.0) | 8.00 (2.00–10.00)x | met |"),
            "{text}"
        );
        // Ratios 6, 6, 4: median 6, met.
        assert!(
            text.contains("| lookup-absent | 120.0 (120.0–120.0) | 20.0 (20.0–30.0) | 6.00 (4.00–6.00)x | met |"),
            "{text}"
        );
        assert!(text.contains("9600 bits and k = 7"), "{text}");
        assert!(!text.contains("Warning"), "{text}");
        let dirty = JvmRun {
            revision: "abc1234-dirty".into(),
            ..run
        };
        let text = section(&dirty);
        assert!(
            text.lines().nth(2).is_some_and(|l| l.starts_with(
                "> **Warning: generated from uncommitted code (revision abc1234-dirty)"
            )),
            "{text}"
        );
    }
}
