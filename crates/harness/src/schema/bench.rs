//! The schema shared by the `bloom_vs_hashset` criterion bench (the producer) and `bench-table`
//! (the consumer): which keys, which structure family, which operation, the criterion group
//! derived from them, and the JSON log of memory records and paired comparisons.
//!
//! Every identity is a type with serde, so neither side parses names apart. Their text form is
//! fixed: it names criterion's directories (`target/criterion/<group>/<label>/<n>/`) and fills the
//! log, so a run made before these types existed still reads (a test pins every spelling).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use bloomlab_filters::VariantId;

use crate::subject::Subject;

/// File name of the bench's log inside the criterion directory.
pub const LOG_FILE: &str = "bloom_vs_hashset-memory.json";

/// Where criterion writes and where the bench's log goes: `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else this workspace's `target/criterion`. The bench and
/// `bench-table` both call this, so they agree on the place without being told.
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/criterion"
    ))
}

/// Which keys a structure holds and is probed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyKind {
    /// The strings `"article-content-hash-" + i`.
    Str,
    /// Random distinct `u64`s.
    U64,
}

impl KeyKind {
    /// Every kind, in report order.
    pub const ALL: [KeyKind; 2] = [KeyKind::Str, KeyKind::U64];

    /// The text in group names and in the log: `str` or `u64`.
    pub const fn as_str(self) -> &'static str {
        match self {
            KeyKind::Str => "str",
            KeyKind::U64 => "u64",
        }
    }

    /// The exact set every structure holding these keys is compared with: its label (and
    /// structure name) in the bench and in the table.
    pub const fn reference(self) -> &'static str {
        match self {
            KeyKind::Str => "std HashSet<String>",
            KeyKind::U64 => "std HashSet<u64>",
        }
    }
}

impl fmt::Display for KeyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a measured structure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// A registered bloomlab variant.
    Bloomlab,
    /// An exact set (`HashSet` with some hasher).
    HashSet,
    /// Another crate's filter (fastbloom, bloomfilter, xorf).
    Crate,
}

/// What one criterion benchmark times, per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// One `contains` per key of the present batch.
    LookupPresent,
    /// One `contains` per key of the absent batch.
    LookupAbsent,
    /// `contains_batch` over the present batch.
    LookupBatchPresent,
    /// `contains_batch` over the absent batch.
    LookupBatchAbsent,
    /// Inserting a key: in the main series a present key again (a Bloom filter's bits do not
    /// change); in the counting series a member removed a while before (see [`Series::Counting`]).
    Insert,
    /// Hashing a key, nothing else.
    Hash,
    /// Removing a member key (counting series only; see [`Series::Counting`]).
    Remove,
    /// One `contains` per key of a batch whose keys are present at 25% of the positions, chosen
    /// at random (regime series; [`Operation::MIXES`]).
    LookupMix25,
    /// As [`Operation::LookupMix25`], 50% present.
    LookupMix50,
    /// As [`Operation::LookupMix25`], 75% present.
    LookupMix75,
    /// One dependent load (the next address read from the line just loaded) in a random cyclic
    /// walk over a buffer of as many bytes as the structure holds (regime series): the memory
    /// latency at that size.
    Chase,
    /// One independent load of a random cache line of the same buffer (regime series): the cost
    /// of a random access when the next one need not wait for it, as in a batch of lookups.
    Gather,
    /// A flagship's floor (regime series): one loop doing what any filter of its layout must do
    /// per lookup and nothing else: fetch the next key of the batch, hash it with the flagship's
    /// hash, and load the cache line(s) its layout reads (split-block and blocked: one line
    /// chosen by the hash; classic: k words at the hash's k positions) from a buffer of the
    /// filter's size, without testing a bit.
    Floor,
}

impl Operation {
    /// Every operation.
    pub const ALL: [Operation; 13] = [
        Operation::LookupPresent,
        Operation::LookupAbsent,
        Operation::LookupBatchPresent,
        Operation::LookupBatchAbsent,
        Operation::Insert,
        Operation::Hash,
        Operation::Remove,
        Operation::LookupMix25,
        Operation::LookupMix50,
        Operation::LookupMix75,
        Operation::Chase,
        Operation::Gather,
        Operation::Floor,
    ];

    /// The query mixes of the regime series, from no present key to all present: the absent
    /// batch, the three mixed ones, the present batch.
    pub const MIXES: [Operation; 5] = [
        Operation::LookupAbsent,
        Operation::LookupMix25,
        Operation::LookupMix50,
        Operation::LookupMix75,
        Operation::LookupPresent,
    ];

    /// For a one-by-one lookup, the percentage of its batch's keys that are present (0 for the
    /// absent batch, 100 for the present one); `None` for anything else.
    pub const fn present_percent(self) -> Option<u8> {
        match self {
            Operation::LookupAbsent => Some(0),
            Operation::LookupMix25 => Some(25),
            Operation::LookupMix50 => Some(50),
            Operation::LookupMix75 => Some(75),
            Operation::LookupPresent => Some(100),
            _ => None,
        }
    }

    /// The text in group names: `lookup-present`, `lookup-batch-absent`, `insert`, `hash`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            Operation::LookupPresent => "lookup-present",
            Operation::LookupAbsent => "lookup-absent",
            Operation::LookupBatchPresent => "lookup-batch-present",
            Operation::LookupBatchAbsent => "lookup-batch-absent",
            Operation::Insert => "insert",
            Operation::Hash => "hash",
            Operation::Remove => "remove",
            Operation::LookupMix25 => "lookup-mix25",
            Operation::LookupMix50 => "lookup-mix50",
            Operation::LookupMix75 => "lookup-mix75",
            Operation::Chase => "chase",
            Operation::Gather => "gather",
            Operation::Floor => "floor",
        }
    }

    /// The batched form of a one-by-one lookup (`None` for anything else).
    pub const fn batched(self) -> Option<Operation> {
        match self {
            Operation::LookupPresent => Some(Operation::LookupBatchPresent),
            Operation::LookupAbsent => Some(Operation::LookupBatchAbsent),
            _ => None,
        }
    }

    /// For a lookup, which batch it reads: `present` or `absent`.
    pub const fn batch(self) -> Option<&'static str> {
        match self {
            Operation::LookupPresent | Operation::LookupBatchPresent => Some("present"),
            Operation::LookupAbsent | Operation::LookupBatchAbsent => Some("absent"),
            Operation::LookupMix25 | Operation::LookupMix50 | Operation::LookupMix75 => {
                Some("mixed")
            }
            Operation::Insert
            | Operation::Hash
            | Operation::Remove
            | Operation::Chase
            | Operation::Gather
            | Operation::Floor => None,
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which series of the bench measured something. The main series compares every static filter
/// with the exact sets; the two capability series each measure one capability beside the static
/// filter it extends (its *twin*, [`BenchRecord::twin`]) and std `HashSet`, all on the same keys,
/// so that each series can be read on its own.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Series {
    /// Lookups, re-inserts, batched lookups and hashing of the static structures.
    #[default]
    Main,
    /// Counting filters ([`bloomlab_filters::Removable`]): insert, remove and lookups. One remove
    /// iteration removes one member key; one insert iteration inserts one key that was removed a
    /// while before (the bench's `timing::Cycle` says how the filter is kept at the same state).
    Counting,
    /// Scalable filters ([`bloomlab_filters::Growable`]) holding n keys after growing from an
    /// initial capacity n/G ([`Growth`]): lookups.
    Scalable,
    /// Cache regimes and query mixes: the flagship of each layout ([`flagships`]), std `HashSet`,
    /// fastbloom and xorf on u64 keys at sizes from a core's L2 to DRAM, looked up with batches
    /// of 0, 25, 50, 75 and 100% present keys ([`Operation::MIXES`]), beside the memory's
    /// dependent and independent random-load times over a buffer of each structure's size
    /// ([`Operation::Chase`], [`Operation::Gather`]) and the hashing of a key alone
    /// ([`Operation::Hash`]).
    Regime,
    /// String keys as they arrive from a page or a socket: back to back in one buffer, in lookup
    /// order (the layout of the main series' batches), for the flagships and their peers. Measured
    /// right before [`Series::Scattered`] on the same keys.
    Contiguous,
    /// The same string keys, each in its own heap allocation (`Vec<String>`), allocated in an
    /// order unrelated to the lookup order, so fetching a key is a random access.
    Scattered,
}

impl Series {
    /// Every series, in report order.
    pub const ALL: [Series; 6] = [
        Series::Main,
        Series::Counting,
        Series::Scalable,
        Series::Regime,
        Series::Contiguous,
        Series::Scattered,
    ];

    /// The text in group names and in the log: `main`, `counting`, `scalable`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Series::Main => "main",
            Series::Counting => "counting",
            Series::Scalable => "scalable",
            Series::Regime => "regime",
            Series::Contiguous => "contiguous",
            Series::Scattered => "scattered",
        }
    }

    /// Whether this is the main series (left out of the log, so that logs keep their spelling).
    pub fn is_main(&self) -> bool {
        *self == Series::Main
    }
}

impl fmt::Display for Series {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The flagship of each layout, all hashed with XXH3: split-block, blocked, classic (names from
/// their types). The regime and layout series measure these, and the table's restated targets
/// judge them.
pub fn flagships() -> [&'static str; 3] {
    use bloomlab_filters::{Blocked512, Bloom, FlatBits, KirschMitzenmacher, SplitBlock, Xxh3};
    [
        VariantId::of::<SplitBlock<Xxh3>>().name(),
        VariantId::of::<Blocked512<Xxh3>>().name(),
        VariantId::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>().name(),
    ]
}

/// The structures the bench times against their floor: the flagships, and on string keys
/// Guava's layout (Murmur3-128, Guava's index scheme, a flat array: the filter Java users run).
pub fn floor_structures(keys: KeyKind) -> Vec<&'static str> {
    use bloomlab_filters::{Bloom, FlatBits, GuavaMitz64, Murmur3};
    let mut out = flagships().to_vec();
    if keys == KeyKind::Str {
        out.push(VariantId::of::<Bloom<Murmur3, GuavaMitz64, FlatBits>>().name());
    }
    out
}

/// The text `BLOOMLAB_BENCH_ONLY` is matched against for the structure labelled `label` in
/// `series`: the label itself in the main series (as before the series existed), else
/// `<series>: <label>` (`counting: counting4/xxh3/km p=1%`), so that `counting: ` or
/// `scalable: ` selects a whole series, twins and HashSet included.
pub fn selector(series: Series, label: &str) -> String {
    match series {
        Series::Main => label.to_owned(),
        _ => format!("{series}: {label}"),
    }
}

/// A criterion benchmark group: one operation on one key kind in one series. Its name,
/// `<operation>-<keys>` in the main series (e.g. `lookup-present-str`, the names of runs made
/// before the series existed) and `<series>-<operation>-<keys>` in the others (e.g.
/// `counting-remove-str`), comes from [`Group::name`] alone, and reads back with [`FromStr`] by
/// comparing with every group's name, never by splitting the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Group {
    /// Which series.
    pub series: Series,
    /// What is timed.
    pub op: Operation,
    /// On which keys.
    pub keys: KeyKind,
}

impl Group {
    /// Operation `op` on keys `keys` in the main series.
    pub const fn new(op: Operation, keys: KeyKind) -> Self {
        Self::in_series(Series::Main, op, keys)
    }

    /// Operation `op` on keys `keys` in `series`.
    pub const fn in_series(series: Series, op: Operation, keys: KeyKind) -> Self {
        Self { series, op, keys }
    }

    /// The criterion group name: the one place it is made.
    pub fn name(self) -> String {
        match self.series {
            Series::Main => format!("{}-{}", self.op.as_str(), self.keys.as_str()),
            s => format!("{}-{}-{}", s.as_str(), self.op.as_str(), self.keys.as_str()),
        }
    }

    /// Every group, the main series' first (in the order of runs made before the series existed).
    pub fn all() -> impl Iterator<Item = Group> {
        Series::ALL.into_iter().flat_map(|series| {
            Operation::ALL.into_iter().flat_map(move |op| {
                KeyKind::ALL
                    .into_iter()
                    .map(move |keys| Group::in_series(series, op, keys))
            })
        })
    }
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A group name that no [`Group`] has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a bloom_vs_hashset benchmark group")]
pub struct UnknownGroup(pub String);

impl FromStr for Group {
    type Err = UnknownGroup;
    fn from_str(s: &str) -> Result<Self, UnknownGroup> {
        Group::all()
            .find(|g| g.name() == s)
            .ok_or_else(|| UnknownGroup(s.to_owned()))
    }
}

impl From<Group> for String {
    fn from(g: Group) -> String {
        g.name()
    }
}

impl TryFrom<String> for Group {
    type Error = UnknownGroup;
    fn try_from(s: String) -> Result<Self, UnknownGroup> {
        s.parse()
    }
}

/// The criterion function id of a structure: its name, plus ` p=<percent>%` for a filter sized
/// for rate `p` (`sbbf/xxh3 p=1%`, `fastbloom p=0.1%`, `std HashSet<String>`).
pub fn label(structure: &str, p: Option<f64>) -> String {
    match p {
        Some(p) => format!("{structure} p={}%", p * 100.0),
        None => structure.to_owned(),
    }
}

/// The criterion function id of a growable filter in the scalable series, grown `growth` times
/// its initial capacity: [`label`] and ` G=<growth>` (`scalable/sbbf/xxh3 p=1% G=16`). The table
/// reads the growth from [`BenchRecord::growth`], never from this text.
pub fn grown_label(structure: &str, p: Option<f64>, growth: u64) -> String {
    format!("{} G={growth}", label(structure, p))
}

/// How a growable filter in the scalable series was built: initial capacity n/G, then all n keys
/// inserted, so that it allocated stages as it filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Growth {
    /// G: the keys held (the record's n) over the initial capacity, rounded down when n/G is
    /// not whole.
    pub factor: u64,
    /// The initial capacity n0 = max(1, floor(n / G)) the filter was built for.
    pub initial_capacity: u64,
    /// Stages allocated after the n inserts, read from the filter.
    pub stages: u64,
}

/// How a bench run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The default: every size, full criterion times.
    Full,
    /// `BLOOMLAB_BENCH_QUICK=1`: 1M keys, short times.
    Quick,
    /// `cargo test --benches`: every benchmark once on 10k keys; no log is written.
    Test,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Full => "full",
            Mode::Quick => "quick",
            Mode::Test => "test",
        })
    }
}

/// The hasher of an exact set the bench measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetHasher {
    /// std's default (SipHash-1-3).
    Std,
    /// foldhash's fast hasher.
    Foldhash,
}

/// Another crate's filter the bench measures beside bloomlab's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CrateFilter {
    /// `fastbloom` with its default hasher (SipHash-1-3).
    Fastbloom,
    /// `fastbloom` with foldhash.
    FastbloomFoldhash,
    /// `bloomfilter` (SipHash-1-3).
    Bloomfilter,
    /// xorf's `BinaryFuse8` over `u64` keys.
    XorfBinaryFuse8,
    /// xorf's `BinaryFuse8`, strings hashed to `u64` with XXH3-64.
    XorfBinaryFuse8Xxh3,
    /// xorf's `BinaryFuse16` over `u64` keys.
    XorfBinaryFuse16,
    /// xorf's `BinaryFuse16`, strings hashed to `u64` with XXH3-64.
    XorfBinaryFuse16Xxh3,
}

impl CrateFilter {
    /// Every crate filter.
    pub const ALL: [CrateFilter; 7] = [
        CrateFilter::Fastbloom,
        CrateFilter::FastbloomFoldhash,
        CrateFilter::Bloomfilter,
        CrateFilter::XorfBinaryFuse8,
        CrateFilter::XorfBinaryFuse8Xxh3,
        CrateFilter::XorfBinaryFuse16,
        CrateFilter::XorfBinaryFuse16Xxh3,
    ];

    /// Its name in the bench's labels and the log.
    pub const fn as_str(self) -> &'static str {
        match self {
            CrateFilter::Fastbloom => "fastbloom",
            CrateFilter::FastbloomFoldhash => "fastbloom+foldhash",
            CrateFilter::Bloomfilter => "bloomfilter",
            CrateFilter::XorfBinaryFuse8 => "xorf BinaryFuse8",
            CrateFilter::XorfBinaryFuse8Xxh3 => "xorf BinaryFuse8+xxh3",
            CrateFilter::XorfBinaryFuse16 => "xorf BinaryFuse16",
            CrateFilter::XorfBinaryFuse16Xxh3 => "xorf BinaryFuse16+xxh3",
        }
    }
}

/// What one bench record measured: a catalogue [`Subject`] (a registered variant, or a peer
/// adapter), an exact set, or another crate's filter. Displays (and serializes) as the name the
/// bench's labels and log use, and reads back from it, so the table never parses a label apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Structure {
    /// A subject of the catalogue.
    Subject(Subject),
    /// An exact set of the keys.
    HashSet {
        /// The keys it holds.
        keys: KeyKind,
        /// Its hasher.
        hasher: SetHasher,
    },
    /// Another crate's filter.
    Crate(CrateFilter),
}

impl Structure {
    /// std's `HashSet` for `keys`: the reference every lookup is compared with.
    pub const fn reference(keys: KeyKind) -> Self {
        Structure::HashSet {
            keys,
            hasher: SetHasher::Std,
        }
    }

    /// Where it comes from.
    pub fn family(&self) -> Family {
        match self {
            Structure::Subject(Subject::Variant(_)) => Family::Bloomlab,
            Structure::HashSet { .. } => Family::HashSet,
            Structure::Subject(_) | Structure::Crate(_) => Family::Crate,
        }
    }

    /// The hash it computes per lookup, by the label of the regime series' hashing benchmark
    /// that times it alone; `None` when the series does not time it (xorf's own mixer, and
    /// bloomlab hashes other than XXH3).
    pub fn own_hash(&self) -> Option<&'static str> {
        match self {
            Structure::HashSet {
                hasher: SetHasher::Std,
                ..
            }
            | Structure::Crate(CrateFilter::Fastbloom | CrateFilter::Bloomfilter) => {
                Some("SipHash-1-3")
            }
            Structure::HashSet {
                hasher: SetHasher::Foldhash,
                ..
            }
            | Structure::Crate(CrateFilter::FastbloomFoldhash) => Some("foldhash"),
            Structure::Crate(_) => None,
            Structure::Subject(s) => (s.axes().hash == Some("xxh3")).then_some("digest xxh3"),
        }
    }

    /// The catalogue subject, if it is one.
    pub fn subject(&self) -> Option<Subject> {
        match self {
            Structure::Subject(s) => Some(*s),
            _ => None,
        }
    }
}

impl fmt::Display for Structure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Structure::Subject(s) => write!(f, "{s}"),
            Structure::HashSet {
                keys,
                hasher: SetHasher::Std,
            } => f.write_str(keys.reference()),
            Structure::HashSet {
                keys,
                hasher: SetHasher::Foldhash,
            } => match keys {
                KeyKind::Str => f.write_str("foldhash HashSet<String>"),
                KeyKind::U64 => f.write_str("foldhash HashSet<u64>"),
            },
            Structure::Crate(c) => f.write_str(c.as_str()),
        }
    }
}

impl FromStr for Structure {
    type Err = crate::HarnessError;
    /// The exact sets and crate filters by their names; anything else through the catalogue.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let sets = KeyKind::ALL.into_iter().flat_map(|keys| {
            [SetHasher::Std, SetHasher::Foldhash].map(|hasher| Structure::HashSet { keys, hasher })
        });
        let crates = CrateFilter::ALL.map(Structure::Crate);
        if let Some(found) = sets.chain(crates).find(|x| x.to_string() == s) {
            return Ok(found);
        }
        s.parse().map(Structure::Subject)
    }
}

impl Ord for Structure {
    /// By name, as the tables list structures.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for Structure {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for Structure {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Structure {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// One structure the bench built for one key set: what `bench-table` joins with criterion's
/// timings, by (`keys`, `label`, `n`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRecord {
    /// The keys it holds.
    pub keys: KeyKind,
    /// The criterion function id, [`label`]`(structure, p)`.
    pub label: String,
    /// What it is (its name, without the rate, in the log).
    pub structure: Structure,
    /// Where the structure comes from.
    pub family: Family,
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
    /// The series that measured it (absent from the log for the main series, and in logs of runs
    /// older than the series).
    #[serde(default, skip_serializing_if = "Series::is_main")]
    pub series: Series,
    /// In a capability series: the label of the static filter it is compared with, measured in
    /// the same series on the same keys (for a counting filter the flat filter of the same hash
    /// and index scheme, for a scalable one a filter of its stages' layout sized for all n keys at
    /// the same p). `None` for the twins themselves, the exact sets and peers without a twin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twin: Option<String>,
    /// For a growable filter in the scalable series, how it grew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth: Option<Growth>,
}

/// The label of the regime series' key-fetch benchmark (group `regime-hash-u64`): the loop over
/// a batch that fetches each key and does nothing else, the first part of a flagship's floor.
pub const KEY_FETCH: &str = "key fetch";

/// The reference of the regime series' paired rounds ([`PairedRecord::reference`]): the flagship's
/// floor loop (group `regime-floor-u64`), timed round by round beside the flagship's lookups.
pub const FLOOR_REFERENCE: &str = "floor";

/// The reference of the paired rounds that time Guava's layout (on string keys) against its floor
/// at the positions its format fixes: the floor's loads at the filter's own positions
/// (`(combined & Long.MAX_VALUE) % m`) instead of multiply-shift ones.
pub const FORMAT_FLOOR_REFERENCE: &str = "floor at its format's positions";

/// One paired comparison the bench makes right after criterion measures a lookup: short timed runs
/// of the structure and of the exact-set reference (std `HashSet` on the same batch), alternated
/// round by round, so both see the same state of a shared machine. Joined with criterion's results
/// by (`group`, `label`, `n`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedRecord {
    /// The criterion group of the measured lookup, e.g. `lookup-absent-str`.
    pub group: Group,
    /// The structure's criterion function id.
    pub label: String,
    /// Keys inserted.
    pub n: u64,
    /// The reference's label (its own one-by-one lookups of the same kind of key).
    pub reference: String,
    /// Per round: the reference's ns per lookup.
    pub reference_ns: Vec<f64>,
    /// Per round: the structure's ns per lookup, timed next to `reference_ns` of the same round.
    pub structure_ns: Vec<f64>,
}

impl PairedRecord {
    /// Per round, `reference ns / structure ns` (rounds with a zero time left out).
    pub fn ratios(&self) -> impl Iterator<Item = f64> + '_ {
        self.reference_ns
            .iter()
            .zip(&self.structure_ns)
            .map(|(r, s)| r / s)
            .filter(|x| x.is_finite())
    }

    /// The median of [`ratios`](Self::ratios): how many times faster than the reference, each
    /// round's pair measured within milliseconds of each other. `None` without rounds.
    pub fn speedup(&self) -> Option<f64> {
        Some(crate::stats::median(self.ratios())).filter(|x| x.is_finite())
    }

    /// Per round, `structure ns / reference ns`: how many times the reference's time the
    /// structure took (rounds with a zero time left out). Against a floor, 1x is the floor.
    pub fn slowdowns(&self) -> impl Iterator<Item = f64> + '_ {
        self.ratios().map(f64::recip).filter(|x| x.is_finite())
    }

    /// The median of [`slowdowns`](Self::slowdowns). `None` without rounds.
    pub fn slowdown(&self) -> Option<f64> {
        Some(crate::stats::median(self.slowdowns())).filter(|x| x.is_finite())
    }
}

/// The bench's log ([`LOG_FILE`]): every record and paired comparison of a run, and when and how
/// it ran. The bench writes it, `bench-table` reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchLog {
    /// Unix seconds when the run started.
    pub started_unix: u64,
    /// Unix seconds of the last record.
    pub updated_unix: u64,
    /// How the run measured.
    pub mode: Mode,
    /// One per structure and key set.
    pub records: Vec<BenchRecord>,
    /// The paired comparisons with the reference, one per lookup benchmark (absent from logs of
    /// runs older than the paired rounds).
    #[serde(default)]
    pub paired: Vec<PairedRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_speedup_is_the_median_of_the_rounds_ratios() {
        let record = |reference_ns: Vec<f64>, structure_ns: Vec<f64>| PairedRecord {
            group: Group::new(Operation::LookupAbsent, KeyKind::Str),
            label: "sbbf/xxh3 p=1%".into(),
            n: 1000,
            reference: "std HashSet<String>".into(),
            reference_ns,
            structure_ns,
        };
        // Ratios 2, 10, 4: the median is 4 (the ratio of the medians would be 100/20 = 5).
        let r = record(vec![100.0, 200.0, 80.0], vec![50.0, 20.0, 20.0]);
        assert_eq!(r.ratios().collect::<Vec<_>>(), vec![2.0, 10.0, 4.0]);
        assert_eq!(r.speedup(), Some(4.0));
        // A zero-length round is left out; no rounds, no speedup.
        assert_eq!(
            record(vec![10.0, 30.0], vec![0.0, 10.0]).speedup(),
            Some(3.0)
        );
        assert_eq!(record(Vec::new(), Vec::new()).speedup(), None);
        // Against a floor, the same rounds read the other way: 0.5, 0.1, 0.25, median 0.25.
        assert_eq!(r.slowdowns().collect::<Vec<_>>(), vec![0.5, 0.1, 0.25]);
        assert_eq!(r.slowdown(), Some(0.25));
        assert_eq!(record(Vec::new(), Vec::new()).slowdown(), None);
    }

    #[test]
    fn group_names_are_the_directory_names_of_earlier_runs() {
        let names: Vec<String> = Group::all().map(Group::name).collect();
        // The main series' groups keep the names of runs made before the series existed, first.
        assert_eq!(
            names[..12],
            [
                "lookup-present-str",
                "lookup-present-u64",
                "lookup-absent-str",
                "lookup-absent-u64",
                "lookup-batch-present-str",
                "lookup-batch-present-u64",
                "lookup-batch-absent-str",
                "lookup-batch-absent-u64",
                "insert-str",
                "insert-u64",
                "hash-str",
                "hash-u64",
            ]
        );
        assert_eq!(names.len(), 6 * 13 * 2);
        for name in [
            "remove-str",
            "counting-insert-str",
            "counting-remove-str",
            "counting-lookup-present-str",
            "scalable-lookup-absent-str",
            "scalable-lookup-present-u64",
            "regime-lookup-mix25-u64",
            "regime-lookup-mix75-u64",
            "regime-chase-u64",
            "regime-gather-u64",
            "regime-floor-u64",
            "regime-hash-u64",
            "contiguous-lookup-absent-str",
            "scattered-lookup-present-str",
        ] {
            assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
        }
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "two groups share a name");
        for g in Group::all() {
            assert_eq!(g.name().parse::<Group>(), Ok(g));
            assert_eq!(g.to_string(), g.name());
        }
        assert_eq!(
            "counting-remove-str".parse::<Group>(),
            Ok(Group::in_series(
                Series::Counting,
                Operation::Remove,
                KeyKind::Str
            ))
        );
        for bad in [
            "lookup-str",
            "lookup-present",
            "lookup-present-str ",
            "hash-u32",
            "main-lookup-present-str",
            "counting-str",
            "",
        ] {
            assert_eq!(bad.parse::<Group>(), Err(UnknownGroup(bad.to_owned())));
        }
    }

    #[test]
    fn mixes_run_from_no_present_key_to_all_present() {
        let shares: Vec<Option<u8>> = Operation::MIXES
            .iter()
            .map(|op| op.present_percent())
            .collect();
        assert_eq!(shares, [Some(0), Some(25), Some(50), Some(75), Some(100)]);
        assert_eq!(Operation::Chase.present_percent(), None);
        assert_eq!(Operation::LookupBatchPresent.present_percent(), None);
    }

    #[test]
    fn only_selects_a_series_by_its_prefix_and_the_main_series_by_the_label() {
        assert_eq!(selector(Series::Main, "sbbf/xxh3 p=1%"), "sbbf/xxh3 p=1%");
        assert_eq!(
            selector(Series::Counting, "classic/xxh3/km/flat p=1%"),
            "counting: classic/xxh3/km/flat p=1%"
        );
        assert_eq!(
            grown_label("scalable/sbbf/xxh3", Some(0.01), 16),
            "scalable/sbbf/xxh3 p=1% G=16"
        );
    }

    #[test]
    fn labels_carry_the_rate_in_percent() {
        assert_eq!(label("sbbf/xxh3", Some(0.01)), "sbbf/xxh3 p=1%");
        assert_eq!(label("fastbloom", Some(0.001)), "fastbloom p=0.1%");
        assert_eq!(label(KeyKind::Str.reference(), None), "std HashSet<String>");
    }
}
