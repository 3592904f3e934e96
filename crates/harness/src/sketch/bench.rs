//! The schema shared by the `sketches` criterion bench (the producer) and `bench-table` (the
//! consumer): which question a structure answers, which operation is timed, the criterion group
//! derived from them, and the JSON log of per-structure records (memory, build time, the answer
//! after the build).
//!
//! The bench lives beside `bloom_vs_hashset` but writes its own log ([`LOG_FILE`]) and its own
//! criterion groups (`sketch-<op>-<keys>`), so either bench can run without the other and
//! `bench-table` renders whichever it finds.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use crate::schema::bench::{KeyKind, Mode};

/// File name of the sketch bench's log inside the criterion directory.
pub const LOG_FILE: &str = "sketches-memory.json";

/// The question a structure answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Question {
    /// How many distinct keys (HyperLogLog; exactly: a `HashSet`'s length).
    Distinct,
    /// How often was this key added (Count-Min; exactly: a `HashMap` of counters).
    Frequency,
}

impl Question {
    /// Every question, in report order.
    pub const ALL: [Question; 2] = [Question::Distinct, Question::Frequency];

    /// The exact structure every sketch answering this question on `keys` is compared with.
    pub const fn reference(self, keys: KeyKind) -> &'static str {
        match (self, keys) {
            (Question::Distinct, KeyKind::Str) => "std HashSet<String>",
            (Question::Distinct, KeyKind::U64) => "std HashSet<u64>",
            (Question::Frequency, KeyKind::Str) => "std HashMap<String, u64>",
            (Question::Frequency, KeyKind::U64) => "std HashMap<u64, u64>",
        }
    }
}

/// What one criterion iteration does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SketchOp {
    /// Adds one key of the present batch (already counted): a sketch's insert or add-1, a
    /// `HashSet`'s "insert if absent", a `HashMap`'s counter increment.
    Insert,
    /// One answer to the whole-structure question: a HyperLogLog's estimate, a `HashSet`'s length.
    Estimate,
    /// One point query of a present key: a Count-Min's estimate, a `HashMap`'s lookup.
    Query,
}

impl SketchOp {
    /// Every operation, in report order.
    pub const ALL: [SketchOp; 3] = [SketchOp::Insert, SketchOp::Estimate, SketchOp::Query];

    /// The text in group names: `insert`, `estimate`, `query`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SketchOp::Insert => "insert",
            SketchOp::Estimate => "estimate",
            SketchOp::Query => "query",
        }
    }
}

/// A criterion group of the sketch bench: `sketch-<op>-<keys>`, read back by comparing with every
/// group's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SketchGroup {
    /// What is timed.
    pub op: SketchOp,
    /// On which keys.
    pub keys: KeyKind,
}

impl SketchGroup {
    /// The criterion group name: the one place it is made.
    pub fn name(self) -> String {
        format!("sketch-{}-{}", self.op.as_str(), self.keys.as_str())
    }

    /// Every group.
    pub fn all() -> impl Iterator<Item = SketchGroup> {
        SketchOp::ALL.into_iter().flat_map(|op| {
            KeyKind::ALL
                .into_iter()
                .map(move |keys| SketchGroup { op, keys })
        })
    }
}

impl fmt::Display for SketchGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for SketchGroup {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SketchGroup::all()
            .find(|g| g.name() == s)
            .ok_or_else(|| format!("{s:?} is not a sketches benchmark group"))
    }
}

/// One structure the bench built on one key set: what `bench-table` joins with criterion's
/// medians by (`keys`, `label`, `n`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SketchRecord {
    /// The keys it holds.
    pub keys: KeyKind,
    /// The question it answers.
    pub question: Question,
    /// The criterion function id (`hll/xxh3/p14`, `cms/xxh3/2719x5/conservative`,
    /// `std HashSet<String>`).
    pub label: String,
    /// Whether it is the exact reference ([`Question::reference`]).
    pub exact: bool,
    /// Distinct keys added, each once.
    pub n: u64,
    /// Live heap bytes held after the build (allocator's count, strings included).
    pub heap_bytes: u64,
    /// Wall time of the one build from empty (every key added once), divided by n.
    pub build_ns_per_key: f64,
    /// The answer after the build: the distinct count for [`Question::Distinct`]; for
    /// [`Question::Frequency`] the mean point estimate of the present batch's keys (each was
    /// added once, so 1 is exact).
    pub answer: f64,
}

/// The sketch bench's log ([`LOG_FILE`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SketchLog {
    /// Unix seconds when the run started.
    pub started_unix: u64,
    /// Unix seconds of the last record.
    pub updated_unix: u64,
    /// How the run measured.
    pub mode: Mode,
    /// One per structure and key set.
    pub records: Vec<SketchRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_read_back_and_are_not_the_bloom_bench_s() {
        let names: Vec<String> = SketchGroup::all().map(SketchGroup::name).collect();
        assert_eq!(names.len(), 6);
        assert!(names.contains(&"sketch-insert-str".to_owned()));
        assert!(names.contains(&"sketch-estimate-u64".to_owned()));
        for g in SketchGroup::all() {
            assert_eq!(g.name().parse::<SketchGroup>(), Ok(g));
            assert!(g.name().parse::<crate::schema::bench::Group>().is_err());
        }
        assert!("sketch-lookup-str".parse::<SketchGroup>().is_err());
        assert!("insert-str".parse::<SketchGroup>().is_err());
    }
}
