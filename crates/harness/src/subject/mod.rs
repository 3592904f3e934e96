//! The catalogue of what is measured: one typed [`Subject`] for every filter a sweep, the gate,
//! the bench log or a report can name, parsed once where the user typed it.
//!
//! A subject is one of
//! - a registered in-memory variant ([`VariantId`], e.g. `classic/xxh3/km/flat`);
//! - a registered variant's layout with its bits in Redis (`redis/classic/<hash>/<index>`,
//!   `redis/blocked512/<hash>`), run by `bloomlab-redis` against a server;
//! - a filter behind an [`Adapter`]: the third-party peers bloomlab ships
//!   (`peer/growable-bloom-filter`) and any adapter registered at run time with [`register`]
//!   (how a filter bloomlab does not ship joins every sweep, gate and report: one `impl Adapter`
//!   and one `register` call).
//!
//! Each knows its layout, axes (hash, index scheme, store), [`Capabilities`] and theory.
//! `Display`, `FromStr` and serde all use the subject's name, so the `filter` column of a CSV
//! reads back as the same subject, and every name is resolved here and nowhere else.

mod peer;

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, OnceLock, RwLock};

use bloomlab_filters::{Axes, Capabilities, Layout, VariantId};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::HarnessError;

pub use peer::{GROWABLE_BLOOM_FILTER, GrowableBloomFilter, GrowablePeer};

/// The prefix of every Redis subject's name.
const REDIS_PREFIX: &str = "redis/";

/// What a filter a workload runs must answer: the per-key operations and the row's shape columns.
/// Implemented for the registered variants (in `workload`), the peers and any [`Adapter`]'s
/// filter. One dynamic call per key for an adapter's filter, none per probe.
pub trait MeasuredFilter: Send {
    /// Inserts the key with canonical bytes `b`.
    fn insert(&mut self, b: &[u8]);
    /// Looks the key up.
    fn contains(&self, b: &[u8]) -> bool;
    /// The row's shape columns, with the theory for `members` keys held.
    fn shape(&self, members: u64) -> Shape;
    /// Stages of a growable filter; 1 for one that cannot grow.
    fn stages(&self) -> u64 {
        1
    }
    /// Counters stuck at their maximum; 0 without counters.
    fn saturated(&self) -> u64 {
        0
    }
    /// The probability that some counter overflowed with `members` keys held; `None` without
    /// counters. By default the shape's ([`Shape::counter_overflow_p`]).
    fn overflow_p(&self, members: u64) -> Option<f64> {
        self.shape(members).counter_overflow_p
    }
}

impl MeasuredFilter for Box<dyn MeasuredFilter> {
    fn insert(&mut self, b: &[u8]) {
        (**self).insert(b)
    }
    fn contains(&self, b: &[u8]) -> bool {
        (**self).contains(b)
    }
    fn shape(&self, members: u64) -> Shape {
        (**self).shape(members)
    }
    fn stages(&self) -> u64 {
        (**self).stages()
    }
    fn saturated(&self) -> u64 {
        (**self).saturated()
    }
    fn overflow_p(&self, members: u64) -> Option<f64> {
        (**self).overflow_p(members)
    }
}

/// What a row reports of a filter's shape, read once the filter holds its members: the columns of
/// the same names in [`SweepRow`](crate::SweepRow).
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// Layout family.
    pub layout: Layout,
    /// Bits after the layout's rounding.
    pub bits: u64,
    /// Probes per key.
    pub hashes: u32,
    /// Bytes held.
    pub memory_bytes: u64,
    /// Fraction of bits set (NaN when unknown).
    pub fill_ratio: f64,
    /// Distinct keys estimated from the fill (or counted).
    pub estimated_count: f64,
    /// Theoretical FPR at the members held.
    pub fpr_theory: f64,
    /// Textbook approximation at the members held.
    pub fpr_textbook: f64,
    /// The filter's own rate given its bits (NaN when unknown).
    pub fpr_given_bits: f64,
    /// Probability that some counter overflowed at the members held (counting layouts only).
    pub counter_overflow_p: Option<f64>,
}

/// A filter bloomlab measures through its own code rather than the registry's types: what it is
/// and how to build one. Implement it (and [`MeasuredFilter`] for what `build` returns), then
/// [`register`] it: its name then parses as a [`Subject`] everywhere (`--filters`, the gate's
/// baseline, a CSV's `filter` column), and sweeps, the gate and reports run it.
pub trait Adapter: Send + Sync + 'static {
    /// Its name: a `/`-separated path that no registered variant uses (`peer/...` for the peers
    /// bloomlab ships; `ext/...` suggested for others).
    fn name(&self) -> &str;
    /// The layout its rows report ([`Layout::External`] unless it is one of bloomlab's layouts).
    fn layout(&self) -> Layout {
        Layout::External
    }
    /// What it can do. Only `grow` changes what runs it (the grow workload); removal through an
    /// adapter is not supported yet, so `remove` must stay false.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    /// One line on the theory its rows' `fpr_theory` column follows.
    fn theory(&self) -> String;
    /// Bytes building it for (n, p) needs at once, without building it; an error for a size it
    /// refuses (checked before anything runs).
    fn sized_bytes(&self, n: u64, p: f64) -> Result<u64, HarnessError>;
    /// An empty filter for `n` keys at target rate `p`.
    fn build(&self, n: u64, p: f64) -> Result<Box<dyn MeasuredFilter>, HarnessError>;
}

/// An adapter in the catalogue (an index into its table of adapters, which only grows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AdapterId(u32);

impl AdapterId {
    /// The adapter.
    pub fn get(self) -> Arc<dyn Adapter> {
        adapters().read().unwrap_or_else(|e| e.into_inner())[self.0 as usize].clone()
    }
}

fn adapters() -> &'static RwLock<Vec<Arc<dyn Adapter>>> {
    static ADAPTERS: OnceLock<RwLock<Vec<Arc<dyn Adapter>>>> = OnceLock::new();
    ADAPTERS.get_or_init(|| RwLock::new(vec![Arc::new(GrowableBloomFilter)]))
}

/// Adds `adapter` to the catalogue (for the rest of the process) and returns its subject.
/// Registering an adapter of the same name again returns the existing subject. Errors when the
/// name is empty, is already a registered variant's or Redis subject's, or claims removal.
pub fn register(adapter: Arc<dyn Adapter>) -> Result<Subject, HarnessError> {
    let name = adapter.name().to_owned();
    let bad = |why: &str| HarnessError::invalid("adapter name", format!("{name:?}"), why);
    if name.is_empty() || name.trim() != name || name.contains(',') {
        return Err(bad(
            "must be non-empty, without surrounding spaces or commas",
        ));
    }
    if VariantId::parse(&name).is_ok() || name.starts_with(REDIS_PREFIX) {
        return Err(bad(
            "is a registered variant's or a Redis subject's name; choose another",
        ));
    }
    if adapter.capabilities().remove {
        return Err(bad(
            "claims removal, which adapters cannot offer yet (the churn workload runs registered \
             variants only)",
        ));
    }
    let mut table = adapters().write().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = table.iter().position(|a| a.name() == name) {
        return Ok(Subject::Adapter(AdapterId(i as u32)));
    }
    table.push(adapter);
    Ok(Subject::Adapter(AdapterId((table.len() - 1) as u32)))
}

/// The subject naming a control filter that its caller builds and runs itself (through
/// [`trial::run_with`](crate::bloom::trial::run_with) or [`gate::check_with`](crate::bloom::gate::check_with)),
/// such as an ideal random filter: `control/<name>`, registered on first use. Its adapter builds
/// nothing (building it by name is an error saying so).
pub fn control(name: &str) -> Result<Subject, HarnessError> {
    struct Control(String);
    impl Adapter for Control {
        fn name(&self) -> &str {
            &self.0
        }
        fn theory(&self) -> String {
            "what its caller computes".into()
        }
        fn sized_bytes(&self, _: u64, _: f64) -> Result<u64, HarnessError> {
            Ok(0)
        }
        fn build(&self, _: u64, _: f64) -> Result<Box<dyn MeasuredFilter>, HarnessError> {
            Err(HarnessError::invalid(
                "filter",
                &self.0,
                "is a control its caller builds; it cannot be built by name",
            ))
        }
    }
    register(Arc::new(Control(format!("control/{name}"))))
}

/// The `growable-bloom-filter` peer ([`GrowableBloomFilter`], the first adapter registered).
pub const GROWABLE_PEER: Subject = Subject::Adapter(AdapterId(0));

/// One thing bloomlab measures; see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    /// A registered in-memory variant.
    Variant(VariantId),
    /// A registered variant's layout in Redis; the id is its in-memory twin (flat classic, or
    /// blocked), whose answers the Redis filter reproduces key for key.
    Redis(VariantId),
    /// A filter behind an [`Adapter`].
    Adapter(AdapterId),
}

impl Subject {
    /// The subject for a registered variant type.
    pub fn of<F: bloomlab_filters::Variant>() -> Self {
        Subject::Variant(VariantId::of::<F>())
    }

    /// Every subject in the catalogue: the registered variants (sorted), the adapters (in
    /// registration order), then the Redis subjects (sorted).
    pub fn all() -> Vec<Subject> {
        let mut out: Vec<Subject> = VariantId::all().map(Subject::Variant).collect();
        let adapters = adapters().read().unwrap_or_else(|e| e.into_inner()).len();
        out.extend((0..adapters).map(|i| Subject::Adapter(AdapterId(i as u32))));
        let mut redis: Vec<Subject> = VariantId::all()
            .filter(|&id| redis_twin(id))
            .map(Subject::Redis)
            .collect();
        redis.sort_by_key(|s| s.to_string());
        out.extend(redis);
        out
    }

    /// The registered variants that can remove keys (what `all` means for churn).
    pub fn removable() -> Vec<Subject> {
        VariantId::all()
            .filter(|id| id.capabilities().remove)
            .map(Subject::Variant)
            .collect()
    }

    /// The in-memory variant behind it: itself, or a Redis subject's twin; `None` for an adapter.
    pub fn variant(&self) -> Option<VariantId> {
        match *self {
            Subject::Variant(id) | Subject::Redis(id) => Some(id),
            Subject::Adapter(_) => None,
        }
    }

    /// Its layout family.
    pub fn layout(&self) -> Layout {
        match *self {
            Subject::Variant(id) | Subject::Redis(id) => id.layout(),
            Subject::Adapter(a) => a.get().layout(),
        }
    }

    /// Its axes (none for an adapter).
    pub fn axes(&self) -> Axes {
        self.variant().map(VariantId::axes).unwrap_or_default()
    }

    /// What it can do beyond inserting and looking up keys (none for a Redis subject, whose
    /// one difference is [`is_remote`](Self::is_remote)).
    pub fn capabilities(&self) -> Capabilities {
        match *self {
            Subject::Variant(id) => id.capabilities(),
            Subject::Redis(_) => Capabilities::default(),
            Subject::Adapter(a) => a.get().capabilities(),
        }
    }

    /// Whether its bits live on a server (a Redis subject).
    pub fn is_remote(&self) -> bool {
        matches!(self, Subject::Redis(_))
    }

    /// One line on the theory its `fpr_theory` column follows.
    pub fn theory(&self) -> String {
        match *self {
            Subject::Variant(id) | Subject::Redis(id) => layout_theory(id.layout()).to_owned(),
            Subject::Adapter(a) => a.get().theory(),
        }
    }

    /// Bytes building it for (n, p) needs at once, computed without building it; the build's
    /// error for a size it refuses. A Redis subject's are its twin's (held by the server).
    pub fn sized_bytes(&self, n: u64, p: f64) -> Result<u64, HarnessError> {
        match *self {
            Subject::Variant(id) | Subject::Redis(id) => {
                bloomlab_filters::registry::sized_bytes(id.name(), n, p).map_err(|source| {
                    HarnessError::Build {
                        filter: self.to_string(),
                        n,
                        p,
                        source,
                    }
                })
            }
            Subject::Adapter(a) => a.get().sized_bytes(n, p),
        }
    }

    /// The `--list` line: name, capabilities, and how it runs when that is not in memory.
    pub fn list_line(&self, width: usize) -> String {
        let mut what = self.capabilities().names();
        let how: &[&str] = match self {
            Subject::Variant(_) => &[],
            Subject::Redis(_) => &["remote", "(with --redis URL)"],
            Subject::Adapter(_) => &["(adapter)"],
        };
        what.extend(how);
        format!("{:<width$}  {}", self.to_string(), what.join(" "))
            .trim_end()
            .to_owned()
    }
}

/// Whether a registered variant has a Redis twin: the flat classic layout and the blocked one.
fn redis_twin(id: VariantId) -> bool {
    match id.layout() {
        Layout::Classic => id.axes().store == Some("flat"),
        Layout::Blocked512 => true,
        _ => false,
    }
}

/// The theory each layout's `fpr_theory` column follows.
fn layout_theory(layout: Layout) -> &'static str {
    match layout {
        Layout::Classic => "exact for m bits and k independent probes (Bose et al.)",
        Layout::Blocked512 | Layout::SplitBlock => {
            "per-block fill averaged over the Poisson load of each block (Putze et al.)"
        }
        Layout::Textbook => "the textbook (1 - e^(-kn/m))^k the port promises",
        Layout::Counting4 | Layout::Counting8 => {
            "the classic layout's rate, counters overflowing with the binomial tail"
        }
        Layout::Scalable => "1 - prod(1 - f_i) over the stages' own rates",
        Layout::External => "what the adapter reports",
    }
}

impl fmt::Display for Subject {
    /// The subject's name, padded to the formatter's width and alignment (`{:<30}` aligns a
    /// column of names).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Subject::Variant(id) => f.pad(id.name()),
            Subject::Redis(id) => f.pad(&match id.layout() {
                Layout::Classic => {
                    let axes = id.axes();
                    format!(
                        "{REDIS_PREFIX}{}/{}/{}",
                        id.layout(),
                        axes.hash.unwrap_or_default(),
                        axes.index.unwrap_or_default()
                    )
                }
                _ => format!("{REDIS_PREFIX}{}", id.name()),
            }),
            Subject::Adapter(a) => f.pad(a.get().name()),
        }
    }
}

impl FromStr for Subject {
    type Err = HarnessError;
    /// The one resolver of names: a registered variant, a Redis subject or an adapter; anything
    /// else is [`HarnessError::UnknownFilter`] listing every known name.
    fn from_str(s: &str) -> Result<Self, HarnessError> {
        if let Ok(id) = VariantId::parse(s) {
            return Ok(Subject::Variant(id));
        }
        if let Some(twin) = s.strip_prefix(REDIS_PREFIX) {
            for candidate in [format!("{twin}/flat"), twin.to_owned()] {
                if let Ok(id) = VariantId::parse(&candidate)
                    && redis_twin(id)
                    && Subject::Redis(id).to_string() == s
                {
                    return Ok(Subject::Redis(id));
                }
            }
        }
        let table = adapters().read().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = table.iter().position(|a| a.name() == s) {
            return Ok(Subject::Adapter(AdapterId(i as u32)));
        }
        drop(table);
        Err(HarnessError::UnknownFilter {
            name: s.to_owned(),
            known: Subject::all()
                .iter()
                .map(Subject::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// Subjects order by name, as the reports list them (consistent with `Eq`: two subjects never
/// share a name).
impl Ord for Subject {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (Subject::Variant(a), Subject::Variant(b)) => a.name().cmp(b.name()),
            _ => self.to_string().cmp(&other.to_string()),
        }
    }
}

impl PartialOrd for Subject {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for Subject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Subject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// Which subjects a grid names: every subject that can run the grid's workload, or a list.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection {
    /// Every subject that can run the workload (`--filters all`).
    All,
    /// These subjects.
    Only(Vec<Subject>),
}

impl Selection {
    /// Parses a `--filters` list: `all`, or comma-separated names.
    pub fn parse_list(s: &str) -> Result<Self, HarnessError> {
        if s.trim() == "all" {
            return Ok(Selection::All);
        }
        let subjects = s
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(Subject::from_str)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Selection::Only(subjects))
    }

    /// Whether the selection names nothing.
    pub fn is_empty(&self) -> bool {
        matches!(self, Selection::Only(v) if v.is_empty())
    }
}

impl FromIterator<Subject> for Selection {
    fn from_iter<I: IntoIterator<Item = Subject>>(iter: I) -> Self {
        Selection::Only(iter.into_iter().collect())
    }
}

impl<const N: usize> From<[Subject; N]> for Selection {
    fn from(subjects: [Subject; N]) -> Self {
        Selection::Only(subjects.to_vec())
    }
}

#[cfg(test)]
mod tests;
