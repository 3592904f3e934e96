//! What a filter under test implements: a [`Candidate`] builds [`Instance`]s; an instance inserts
//! and queries batches of byte keys. In-process Rust filters and process adapters
//! ([`crate::process`]) implement the same two traits, so the suite cannot tell them apart.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a candidate could not do what the suite asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CandidateError {
    /// The library refused (returned an error or threw an exception): its message.
    #[error("{subject} refused: {message}")]
    Refused {
        /// The candidate's name.
        subject: String,
        /// The library's own message.
        message: String,
    },
    /// The library panicked (Rust) — caught in process, or reported by a process adapter.
    #[error("{subject} panicked: {message}")]
    Panicked {
        /// The candidate's name.
        subject: String,
        /// The panic message.
        message: String,
    },
    /// The candidate does not offer this operation.
    #[error("{subject} does not support {operation}")]
    Unsupported {
        /// The candidate's name.
        subject: String,
        /// The operation asked for (`serialize`, `stats`, `concurrent insert`, ...).
        operation: String,
    },
    /// A process adapter did not answer in time; bloomlab killed it.
    #[error("{subject} did not answer {operation} within {seconds} s (killed); stderr: {stderr}")]
    Timeout {
        /// The candidate's name.
        subject: String,
        /// The request that went unanswered.
        operation: String,
        /// The time limit.
        seconds: f64,
        /// The last lines the adapter wrote to stderr.
        stderr: String,
    },
    /// A process adapter exited or closed its stdout.
    #[error("{subject} exited during {operation} ({status}); stderr: {stderr}")]
    Exited {
        /// The candidate's name.
        subject: String,
        /// The request in flight.
        operation: String,
        /// Its exit status or signal, as text.
        status: String,
        /// The last lines the adapter wrote to stderr.
        stderr: String,
    },
    /// A process adapter broke the protocol (bad frame, wrong answer size, invalid JSON).
    #[error("{subject} broke the conformance protocol during {operation}: {detail}")]
    Protocol {
        /// The candidate's name.
        subject: String,
        /// The request in flight.
        operation: String,
        /// What was wrong.
        detail: String,
    },
    /// The adapter could not be started or talked to (command not found, pipe error).
    #[error("{subject}: {detail}")]
    Io {
        /// The candidate's name.
        subject: String,
        /// What failed, with the OS error.
        detail: String,
    },
    /// The run's deadline ([`crate::Plan::deadline`]) passed: the suite stopped between batches.
    /// Never the candidate's doing, so never a crash ([`crate::suite::measure::is_crash`]): a
    /// clause that meets it is undecided, with the counts so far.
    #[error("{}", deadline_text(operation, *done, *of, *present))]
    DeadlinePassed {
        /// What was stopped (`insert`, `query`, `build`).
        operation: String,
        /// Keys done before the deadline.
        done: u64,
        /// Keys the operation was to do (0: it had not started).
        of: u64,
        /// For a query: how many of the `done` keys answered "maybe present".
        present: Option<u64>,
    },
}

fn deadline_text(operation: &str, done: u64, of: u64, present: Option<u64>) -> String {
    if of == 0 {
        return format!("the run's deadline passed before {operation}");
    }
    let present = present
        .map(|x| format!(", {x} of them answered present"))
        .unwrap_or_default();
    format!("the run's deadline passed during {operation} after {done} of {of} keys{present}")
}

/// What a candidate can do beyond build, insert and query.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// [`Instance::serialize`] and [`Candidate::deserialize`] work.
    pub serialize: bool,
    /// [`Instance::stats`] reports memory and/or a declared layout.
    pub stats: bool,
    /// [`Instance::shared`] offers inserts through `&self` from many threads.
    pub concurrent: bool,
    /// The filter is built from the whole key set at once (xor, binary fuse): inserts are
    /// buffered and the filter is constructed at the first query; it cannot take keys after that.
    pub static_build: bool,
    /// It can hold more than 2^32 bits (the scale clause runs only where this is true).
    pub large: bool,
    /// It grows past its n and keeps its promised p as it does (a scalable filter that tightens
    /// each new stage): the over-fill clause then holds it to p, with the plan's margin, at every
    /// multiple of n up to 64x. Without it, rates past 1x are reported, not judged.
    #[serde(default)]
    pub growable: bool,
}

/// The range of n and p a candidate declares it supports: inside it, every build, insert and query
/// must succeed (the accepts-valid-input clause). Without a declaration the suite assumes every
/// n >= 1 and every p in (0, 1). Bounds are inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Supports {
    /// Smallest and largest n.
    pub n: (u64, u64),
    /// Smallest and largest p.
    pub p: (f64, f64),
}

impl Supports {
    /// Every n >= 1 and every p in (0, 1): what a candidate that declares nothing is held to.
    pub const ALL: Supports = Supports {
        n: (1, u64::MAX),
        p: (f64::MIN_POSITIVE, 1.0 - f64::EPSILON),
    };

    /// Whether (n, p) is inside the range (p also inside (0, 1)).
    pub fn contains(&self, n: u64, p: f64) -> bool {
        (self.n.0..=self.n.1).contains(&n) && p > 0.0 && p < 1.0 && p >= self.p.0 && p <= self.p.1
    }

    /// Checks the declaration itself: non-empty ranges, n from 1, p inside (0, 1).
    pub fn validate(&self) -> Result<(), String> {
        let (n, p) = (self.n, self.p);
        if n.0 == 0 || n.0 > n.1 {
            return Err(format!(
                "declared n range [{}, {}] is invalid: it must start at 1 or more and not be empty",
                n.0, n.1
            ));
        }
        if !(p.0 > 0.0 && p.0 <= p.1 && p.1 < 1.0) {
            return Err(format!(
                "declared p range [{}, {}] is invalid: it must lie inside (0, 1) and not be empty",
                p.0, p.1
            ));
        }
        Ok(())
    }
}

impl fmt::Display for Supports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let all = Supports::ALL;
        match self.n {
            (lo, hi) if hi == all.n.1 => write!(f, "n >= {lo}")?,
            (lo, hi) => write!(f, "n in [{lo}, {hi}]")?,
        }
        match self.p {
            (lo, hi) if lo == all.p.0 && hi == all.p.1 => write!(f, ", p in (0, 1)"),
            (lo, hi) if hi == all.p.1 => write!(f, ", p in [{lo}, 1)"),
            (lo, hi) if lo == all.p.0 => write!(f, ", p in (0, {hi}]"),
            (lo, hi) => write!(f, ", p in [{lo}, {hi}]"),
        }
    }
}

/// Who a candidate is: shown in every verdict and report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct About {
    /// Its name in reports (`fastbloom`, `xorf/BinaryFuse8`, `pybloom-live`, ...).
    pub name: String,
    /// The library's version, as pinned by whoever installed it.
    pub version: String,
    /// `rust`, `python`, `node`, `java`, ...
    pub language: String,
    /// What it can do.
    pub capabilities: Capabilities,
    /// The n and p it supports, when it declares a range ([`Supports`]); `None` means every n >= 1
    /// and p in (0, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports: Option<Supports>,
}

impl About {
    /// A Rust candidate with no optional capabilities.
    pub fn rust(name: impl Into<String>, version: impl Into<String>) -> Self {
        About {
            name: name.into(),
            version: version.into(),
            language: "rust".into(),
            capabilities: Capabilities::default(),
            supports: None,
        }
    }

    /// The same, with `capabilities`.
    pub fn with(mut self, capabilities: Capabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// The same, declaring the range of n and p it supports.
    pub fn supporting(mut self, supports: Supports) -> Self {
        self.supports = Some(supports);
        self
    }

    /// The range it is held to by the accepts-valid-input clause: its declaration, or
    /// [`Supports::ALL`].
    pub fn valid_range(&self) -> Supports {
        self.supports.unwrap_or(Supports::ALL)
    }
}

impl fmt::Display for About {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ({})", self.name, self.version, self.language)
    }
}

/// The layout a built filter declares, so the suite can hold it to that layout's theory.
/// Serialized as JSON with a `"layout"` tag (the process protocol's STATS answer uses it as is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "layout", rename_all = "kebab-case")]
pub enum Declared {
    /// One flat array of `bits`, `hashes` probes per key anywhere in it.
    Classic {
        /// Bits in the array.
        bits: u64,
        /// Probes per key.
        hashes: u32,
    },
    /// A partitioned ("sliced") filter: `hashes` slices of `bits / hashes` bits, one probe in each
    /// (pybloom's layout).
    Partitioned {
        /// Bits in all slices.
        bits: u64,
        /// Slices, one probe each.
        hashes: u32,
    },
    /// Blocks of `block_bits`, `hashes` probes per key inside one block.
    Blocked {
        /// Bits in all.
        bits: u64,
        /// Probes per key.
        hashes: u32,
        /// Bits per block (512 for a cache line).
        block_bits: u32,
    },
    /// Parquet's split-block filter: 256-bit blocks, one bit in each of 8 words.
    SplitBlock {
        /// Bits in all.
        bits: u64,
    },
    /// An xor or binary fuse filter: one fingerprint of `fingerprint_bits` compared per query.
    Xor {
        /// Fingerprint width.
        fingerprint_bits: u32,
    },
    /// A cuckoo filter: `buckets` of `bucket_size` fingerprints of `fingerprint_bits`.
    Cuckoo {
        /// Number of buckets.
        buckets: u64,
        /// Fingerprints per bucket.
        bucket_size: u32,
        /// Fingerprint width.
        fingerprint_bits: u32,
    },
    /// A quotient filter with 2^`slots_log2` slots of `remainder_bits`.
    Quotient {
        /// log2 of the number of slots.
        slots_log2: u32,
        /// Remainder width.
        remainder_bits: u32,
    },
}

impl Declared {
    /// The bits a layout declares (a cuckoo or quotient filter's: its table's), where it says (an
    /// xor filter's fingerprint width alone does not).
    pub fn bits(&self) -> Option<u64> {
        match *self {
            Declared::Classic { bits, .. }
            | Declared::Partitioned { bits, .. }
            | Declared::Blocked { bits, .. }
            | Declared::SplitBlock { bits } => Some(bits),
            Declared::Cuckoo {
                buckets,
                bucket_size,
                fingerprint_bits,
            } => Some(
                buckets
                    .saturating_mul(u64::from(bucket_size))
                    .saturating_mul(u64::from(fingerprint_bits)),
            ),
            Declared::Quotient {
                slots_log2,
                remainder_bits,
            } => 1u64
                .checked_shl(slots_log2)
                .map(|s| s.saturating_mul(u64::from(remainder_bits) + 3)),
            Declared::Xor { .. } => None,
        }
    }
}

/// What [`Instance::stats`] reports; each part optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Bytes the filter holds.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
    /// Its declared layout.
    #[serde(default)]
    pub layout: Option<Declared>,
}

/// Keys stored back to back with their end offsets: no allocation per key once grown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyBatch {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Appends one key.
    pub fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds no key.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Key `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// The keys in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Total key bytes.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }
}

/// Inserts through `&self`, from many threads at once (a concurrent filter).
pub trait SharedInsert: Sync {
    /// Inserts one key.
    fn insert_shared(&self, key: &[u8]);
}

/// One built filter under test.
pub trait Instance: Send {
    /// Inserts every key of the batch.
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError>;
    /// Looks every key of the batch up: `out` is cleared, then gets one answer per key
    /// (`true` = maybe present).
    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError>;
    /// Memory and declared layout; by default nothing known.
    fn stats(&mut self) -> Result<Stats, CandidateError> {
        Ok(Stats::default())
    }
    /// Its bytes, for [`Candidate::deserialize`]; `None` when it cannot serialize.
    fn serialize(&mut self) -> Result<Option<Vec<u8>>, CandidateError> {
        Ok(None)
    }
    /// Concurrent inserts through `&self`, where the filter offers them.
    fn shared(&self) -> Option<&dyn SharedInsert> {
        None
    }
}

/// A filter library under test: builds instances. `Send + Sync + 'static` so the suite can run a
/// build on a watchdog thread (a build that hangs is reported, not waited for).
pub trait Candidate: Send + Sync + 'static {
    /// Who it is.
    fn about(&self) -> About;
    /// An empty filter promising rate `p` at `n` keys (`n` and `p` as given, however bad: the
    /// bad-input clause passes 0, NaN and out-of-range values on purpose).
    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError>;
    /// Whether it runs in a child process that bloomlab can kill (a [`crate::process`] adapter):
    /// then the bad-input clause also tries inputs that may allocate without bound.
    fn isolated(&self) -> bool {
        false
    }
    /// A filter from bytes an instance serialized; unsupported by default.
    fn deserialize(&self, _bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        Err(CandidateError::Unsupported {
            subject: self.about().name,
            operation: "deserialize".into(),
        })
    }
}

/// An [`Instance`] from a filter's own per-key insert and contains: what most library authors
/// need (`PerKey::new(filter, |f, k| f.insert(k), |f, k| f.contains(k))`). One function-pointer
/// call per key, none per probe.
pub struct PerKey<F> {
    filter: F,
    insert: fn(&mut F, &[u8]),
    contains: fn(&F, &[u8]) -> bool,
    memory: Option<fn(&F) -> u64>,
    layout: Option<Declared>,
}

impl<F: Send> PerKey<F> {
    /// Wraps `filter` with its insert and contains.
    pub fn new(filter: F, insert: fn(&mut F, &[u8]), contains: fn(&F, &[u8]) -> bool) -> Self {
        PerKey {
            filter,
            insert,
            contains,
            memory: None,
            layout: None,
        }
    }

    /// Reports memory through `memory`.
    pub fn memory(mut self, memory: fn(&F) -> u64) -> Self {
        self.memory = Some(memory);
        self
    }

    /// Declares the built filter's layout.
    pub fn declare(mut self, layout: Declared) -> Self {
        self.layout = Some(layout);
        self
    }

    /// The wrapped filter.
    pub fn inner(&self) -> &F {
        &self.filter
    }
}

impl<F: Send> Instance for PerKey<F> {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        for k in keys.iter() {
            (self.insert)(&mut self.filter, k);
        }
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.extend(keys.iter().map(|k| (self.contains)(&self.filter, k)));
        Ok(())
    }

    fn stats(&mut self) -> Result<Stats, CandidateError> {
        Ok(Stats {
            memory_bytes: self.memory.map(|m| m(&self.filter)),
            layout: self.layout.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_batch_round_trips_empty_and_long_keys() {
        let mut b = KeyBatch::new();
        let long = vec![7u8; 70_000];
        b.push(b"");
        b.push(b"abc");
        b.push(&long);
        b.push(b"");
        assert_eq!(b.len(), 4);
        let got: Vec<&[u8]> = b.iter().collect();
        assert_eq!(got, vec![&b""[..], b"abc", &long[..], b""]);
        b.clear();
        assert!(b.is_empty());
    }

    #[test]
    fn a_declared_range_contains_its_ends_reads_plainly_and_refuses_an_empty_one() {
        let xor8 = Supports {
            p: (1.0 / 256.0, Supports::ALL.p.1),
            ..Supports::ALL
        };
        assert!(xor8.contains(1, 1.0 / 256.0) && xor8.contains(u64::MAX, 0.5));
        assert!(!xor8.contains(1, 0.001) && !xor8.contains(0, 0.5) && !xor8.contains(5, 1.0));
        assert!(Supports::ALL.contains(1, 1e-300) && !Supports::ALL.contains(1, f64::NAN));
        assert_eq!(xor8.to_string(), "n >= 1, p in [0.00390625, 1)");
        assert_eq!(Supports::ALL.to_string(), "n >= 1, p in (0, 1)");
        let json = serde_json::to_string(&Supports {
            n: (8, 1000),
            p: (1e-9, 0.5),
        })
        .unwrap();
        assert_eq!(json, r#"{"n":[8,1000],"p":[1e-9,0.5]}"#);
        let empty = Supports {
            n: (10, 5),
            ..Supports::ALL
        };
        assert!(empty.validate().unwrap_err().contains("[10, 5] is invalid"));
        xor8.validate().unwrap();
    }

    #[test]
    fn declared_layouts_use_the_documented_json() {
        let d = Declared::Classic {
            bits: 9586,
            hashes: 7,
        };
        let s = serde_json::to_string(&d).unwrap();
        assert_eq!(s, r#"{"layout":"classic","bits":9586,"hashes":7}"#);
        let back: Stats = serde_json::from_str(&format!(r#"{{"layout":{s}}}"#)).unwrap();
        assert_eq!(back.layout, Some(d));
        assert_eq!(back.memory_bytes, None);
    }
}
