//! One interface for every cardinality sketch the sweep drives: ours on each hash, a crates.io
//! implementation, and (in `bloomlab-redis`) Redis's own HyperLogLog.

use std::hash::{BuildHasher, Hasher};
use std::marker::PhantomData;

use bloomlab_filters::{Fnv1a, HashStrategy, Key, Lookup3, Murmur3, Xxh3, Xxh3Wide, Xxh64};
use hyperloglogplus::{HyperLogLog as _, HyperLogLogPlus};

use crate::error::SketchError;
use crate::hll::{Estimator, HyperLogLog, check_precision};

/// A distinct-count sketch fed `u64` keys (hashed as their 8 little-endian bytes, the filters'
/// encoding) in batches, so that a networked sketch can send one batch per round trip. One
/// dynamic call per batch, none per key.
pub trait CardinalitySketch {
    /// What can go wrong (nothing, in memory; the network, for a server's sketch).
    type Error: std::error::Error + Send + Sync + 'static;
    /// The name reports print (`hll/xxh3/p14`, `peer/hyperloglogplus/xxh3/p14`, `redis/pfadd/p14`).
    fn name(&self) -> String;
    /// The precision `p` (`2^p` registers).
    fn precision(&self) -> u8;
    /// Adds the keys.
    fn insert_batch(&mut self, keys: &[u64]) -> Result<(), Self::Error>;
    /// The current estimate of the number of distinct keys added.
    fn estimate(&mut self) -> Result<f64, Self::Error>;
    /// Which estimator [`estimate`](Self::estimate) uses, for reports.
    fn estimator(&self) -> &'static str;
    /// Bytes the sketch's registers take where they live.
    fn memory_bytes(&mut self) -> Result<u64, Self::Error>;
    /// Releases what the sketch holds outside this process (a server's key); nothing in memory.
    fn discard(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
    /// The (name, estimator label) of each estimate [`estimate_into`](Self::estimate_into)
    /// pushes: one, this sketch's own, unless several estimators read the same registers
    /// ([`HllEstimators`]).
    fn outputs(&self) -> Vec<(String, &'static str)> {
        vec![(self.name(), self.estimator())]
    }
    /// Pushes one estimate per [`outputs`](Self::outputs) entry, in that order.
    fn estimate_into(&mut self, out: &mut Vec<f64>) -> Result<(), Self::Error> {
        out.push(self.estimate()?);
        Ok(())
    }
}

/// Estimator labels reports print.
pub mod estimator {
    /// Flajolet et al. 2007: raw estimate, linear counting below 5/2 m, no large-range correction.
    pub const ORIGINAL: &str = "flajolet+linear-counting";
    /// HyperLogLog++ (Heule et al. 2013): sparse mode, empirical bias correction.
    pub const HLL_PLUS_PLUS: &str = "hll++";
    /// Ertl 2017's improved estimator (Redis 5.0 and later).
    pub const ERTL: &str = "ertl";
}

impl<H: HashStrategy> CardinalitySketch for HyperLogLog<H> {
    type Error = SketchError;
    fn name(&self) -> String {
        HyperLogLog::name(self)
    }
    fn precision(&self) -> u8 {
        HyperLogLog::precision(self)
    }
    fn insert_batch(&mut self, keys: &[u64]) -> Result<(), SketchError> {
        for k in keys {
            self.insert(k);
        }
        Ok(())
    }
    fn estimate(&mut self) -> Result<f64, SketchError> {
        Ok(HyperLogLog::estimate(self))
    }
    fn estimator(&self) -> &'static str {
        HyperLogLog::estimator(self).label()
    }
    fn memory_bytes(&mut self) -> Result<u64, SketchError> {
        Ok(HyperLogLog::memory_bytes(self) as u64)
    }
}

/// One of our HyperLogLogs read by several estimators at once: the same registers, so a trial
/// of the sweep compares the estimators on exactly the same keys (a paired comparison) for the
/// price of one pass. [`CardinalitySketch::outputs`] lists one (name, label) per estimator.
pub struct HllEstimators<H: HashStrategy> {
    hll: HyperLogLog<H>,
    estimators: Vec<Estimator>,
}

impl<H: HashStrategy> HllEstimators<H> {
    /// An empty sketch of precision `p` read by `estimators` (in that order; at least one).
    pub fn new(p: u32, estimators: &[Estimator]) -> Result<Self, SketchError> {
        if estimators.is_empty() {
            return Err(SketchError::UnknownSketch {
                name: String::new(),
                known: "at least one estimator".into(),
            });
        }
        Ok(Self {
            hll: HyperLogLog::new(p)?,
            estimators: estimators.to_vec(),
        })
    }
}

impl<H: HashStrategy> CardinalitySketch for HllEstimators<H> {
    type Error = SketchError;
    fn name(&self) -> String {
        format!(
            "hll/{}/p{}{}",
            H::ID,
            self.hll.precision(),
            self.estimators[0].suffix()
        )
    }
    fn precision(&self) -> u8 {
        self.hll.precision()
    }
    fn insert_batch(&mut self, keys: &[u64]) -> Result<(), SketchError> {
        for k in keys {
            self.hll.insert(k);
        }
        Ok(())
    }
    fn estimate(&mut self) -> Result<f64, SketchError> {
        Ok(self.hll.estimate_with(self.estimators[0]))
    }
    fn estimator(&self) -> &'static str {
        self.estimators[0].label()
    }
    fn memory_bytes(&mut self) -> Result<u64, SketchError> {
        Ok(self.hll.memory_bytes() as u64)
    }
    fn outputs(&self) -> Vec<(String, &'static str)> {
        self.estimators
            .iter()
            .map(|&e| {
                (
                    format!("hll/{}/p{}{}", H::ID, self.hll.precision(), e.suffix()),
                    e.label(),
                )
            })
            .collect()
    }
    fn estimate_into(&mut self, out: &mut Vec<f64>) -> Result<(), SketchError> {
        out.extend(self.estimators.iter().map(|&e| self.hll.estimate_with(e)));
        Ok(())
    }
}

/// The hashes a sketch can be built on, by their `ID`.
pub const HASHES: [&str; 6] = [
    Xxh3::ID,
    Murmur3::ID,
    Fnv1a::ID,
    Xxh3Wide::ID,
    Xxh64::ID,
    Lookup3::ID,
];

/// A boxed in-memory cardinality sketch.
pub type DynSketch = Box<dyn CardinalitySketch<Error = SketchError> + Send>;

fn unknown_hash(name: &str) -> SketchError {
    SketchError::UnknownHash {
        name: name.to_owned(),
        known: HASHES.join(", "),
    }
}

/// Calls `f::<H>()` for the hash strategy named `hash` (one of [`HASHES`]).
macro_rules! by_hash {
    ($hash:expr, $f:ident, $($arg:expr),*) => {
        match $hash {
            "xxh3" => $f::<Xxh3>($($arg),*),
            "murmur3" => $f::<Murmur3>($($arg),*),
            "fnv1a" => $f::<Fnv1a>($($arg),*),
            "xxh3-128" => $f::<Xxh3Wide>($($arg),*),
            "xxh64" => $f::<Xxh64>($($arg),*),
            "lookup3" => $f::<Lookup3>($($arg),*),
            other => Err(unknown_hash(other)),
        }
    };
}

fn ours<H: HashStrategy>(p: u32, e: Estimator) -> Result<DynSketch, SketchError> {
    Ok(Box::new(HyperLogLog::<H>::new(p)?.with_estimator(e)))
}

fn ours_shared<H: HashStrategy>(p: u32, e: &[Estimator]) -> Result<DynSketch, SketchError> {
    Ok(Box::new(HllEstimators::<H>::new(p, e)?))
}

fn peer<H: HashStrategy>(p: u32) -> Result<DynSketch, SketchError> {
    Ok(Box::new(PeerHll::<H>::new(p)?))
}

/// Our HyperLogLog on the hash named `hash`, precision `p`, original estimator.
pub fn build_ours(hash: &str, p: u32) -> Result<DynSketch, SketchError> {
    by_hash!(hash, ours, p, Estimator::Original)
}

/// The crates.io HyperLogLog ([`PeerHll`]) on the hash named `hash`, precision `p`.
pub fn build_peer(hash: &str, p: u32) -> Result<DynSketch, SketchError> {
    by_hash!(hash, peer, p)
}

/// A [`BuildHasher`] that gives a third-party sketch the same 64-bit hash our sketches use: the
/// hash strategy `H` over the bytes the key writes (for a `u64`, its 8 little-endian bytes, so a
/// `u64` key hashes exactly as [`Key`] encodes it). Keys of up to 32 written bytes are hashed
/// whole; a longer one is hashed in 32-byte pieces, each folded into the next (still a fixed
/// function of the bytes, but not `H` of them).
#[derive(Debug)]
pub struct StrategyHasher<H>(PhantomData<fn() -> H>);

impl<H> Default for StrategyHasher<H> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<H> Clone for StrategyHasher<H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<H> Copy for StrategyHasher<H> {}

/// The [`Hasher`] of [`StrategyHasher`].
#[derive(Debug, Clone)]
pub struct StrategyState<H> {
    buf: [u8; 32],
    len: usize,
    folded: Option<u64>,
    hash: PhantomData<fn() -> H>,
}

impl<H: HashStrategy> BuildHasher for StrategyHasher<H> {
    type Hasher = StrategyState<H>;
    fn build_hasher(&self) -> StrategyState<H> {
        StrategyState {
            buf: [0; 32],
            len: 0,
            folded: None,
            hash: PhantomData,
        }
    }
}

impl<H: HashStrategy> Hasher for StrategyState<H> {
    fn write(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.len == self.buf.len() {
                let mut kb = bloomlab_filters::KeyBytes::new();
                kb.put_u64(self.folded.unwrap_or(0)).put_bytes(&self.buf);
                self.folded = Some(H::digest(kb.as_slice()).h1);
                self.len = 0;
            }
            let take = bytes.len().min(self.buf.len() - self.len);
            self.buf[self.len..self.len + take].copy_from_slice(&bytes[..take]);
            self.len += take;
            bytes = &bytes[take..];
        }
    }
    fn finish(&self) -> u64 {
        match self.folded {
            None => H::digest(&self.buf[..self.len]).h1,
            Some(f) => {
                let mut kb = bloomlab_filters::KeyBytes::new();
                kb.put_u64(f).put_bytes(&self.buf[..self.len]);
                H::digest(kb.as_slice()).h1
            }
        }
    }
}

/// `hyperloglogplus`'s `HyperLogLogPlus` (HyperLogLog++, Heule, Nunkesser and Hall 2013: 64-bit
/// hash, sparse representation at small cardinalities, empirical bias correction), fed our hash
/// through [`StrategyHasher`].
///
/// Why this crate: it is the HyperLogLog crate Rust users most often pick (the most downloaded
/// one on crates.io, maintained, precisions 4..=18 like ours), and its `HyperLogLogPlus` is the
/// estimator most databases ship, so it differs from ours exactly where it matters (the small
/// range). Cloudflare's `cardinality-estimator` was the other candidate; it fixes precision and
/// hash as type parameters of its own and offers no merge between differently-built sketches to
/// check, so it fits this driver less well.
pub struct PeerHll<H: HashStrategy> {
    inner: HyperLogLogPlus<u64, StrategyHasher<H>>,
    precision: u8,
}

impl<H: HashStrategy> PeerHll<H> {
    /// An empty sketch of precision `p`, checked against our range first (the crate accepts the
    /// same 4..=18).
    pub fn new(p: u32) -> Result<Self, SketchError> {
        let precision = check_precision(p)?;
        let inner = HyperLogLogPlus::new(precision, StrategyHasher::default()).map_err(|e| {
            SketchError::Peer {
                sketch: format!("peer/hyperloglogplus/{}/p{precision}", H::ID),
                reason: format!("{e:?}"),
            }
        })?;
        Ok(Self { inner, precision })
    }
}

impl<H: HashStrategy> CardinalitySketch for PeerHll<H> {
    type Error = SketchError;
    fn name(&self) -> String {
        format!("peer/hyperloglogplus/{}/p{}", H::ID, self.precision)
    }
    fn precision(&self) -> u8 {
        self.precision
    }
    fn insert_batch(&mut self, keys: &[u64]) -> Result<(), SketchError> {
        for k in keys {
            self.inner.insert(k);
        }
        Ok(())
    }
    fn estimate(&mut self) -> Result<f64, SketchError> {
        Ok(self.inner.count())
    }
    fn estimator(&self) -> &'static str {
        estimator::HLL_PLUS_PLUS
    }
    /// The dense representation's size, `6 m / 8` bytes (the crate packs 6-bit registers; its
    /// sparse mode, below a few thousand keys, is smaller and not counted).
    fn memory_bytes(&mut self) -> Result<u64, SketchError> {
        Ok((1u64 << self.precision) * 6 / 8)
    }
}

/// What a sketch name says: ours (with its estimator) or the crates.io peer, hash and precision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SketchName {
    /// `None` for the crates.io `hyperloglogplus`, else our estimator.
    pub ours: Option<Estimator>,
    /// Hash strategy `ID`.
    pub hash: String,
    /// Precision `p`.
    pub precision: u32,
}

/// Parses `hll/<hash>/p<precision>[/ertl]` (ours) or `peer/hyperloglogplus/<hash>/p<precision>`
/// without building anything. Errors name the whole name and the accepted forms.
pub fn parse_name(name: &str) -> Result<SketchName, SketchError> {
    let bad = || SketchError::UnknownSketch {
        name: name.to_owned(),
        known: "hll/<hash>/p<precision>, hll/<hash>/p<precision>/ertl, \
                peer/hyperloglogplus/<hash>/p<precision>"
            .to_owned(),
    };
    let (ours, rest) = if let Some(r) = name.strip_prefix("hll/") {
        match r.strip_suffix("/ertl") {
            Some(r) => (Some(Estimator::Ertl), r),
            None => (Some(Estimator::Original), r),
        }
    } else if let Some(r) = name.strip_prefix("peer/hyperloglogplus/") {
        (None, r)
    } else {
        return Err(bad());
    };
    let (hash, p) = rest.rsplit_once("/p").ok_or_else(bad)?;
    let precision: u32 = p.parse().map_err(|_| bad())?;
    Ok(SketchName {
        ours,
        hash: hash.to_owned(),
        precision,
    })
}

/// An in-memory sketch by name: `hll/<hash>/p<precision>` (ours, original estimator),
/// `hll/<hash>/p<precision>/ertl` (ours, Ertl's estimator) or
/// `peer/hyperloglogplus/<hash>/p<precision>`. Errors name the part at fault.
pub fn build_by_name(name: &str) -> Result<DynSketch, SketchError> {
    let n = parse_name(name)?;
    match n.ours {
        Some(e) => by_hash!(n.hash.as_str(), ours, n.precision, e),
        None => build_peer(&n.hash, n.precision),
    }
}

/// Splits sketch names into groups a single sketch can measure in one pass: our sketches on
/// the same hash and precision share their registers (one [`HllEstimators`] per group, the
/// estimators in the order named); every other name is a group of its own. Groups keep the
/// order of their first name. Errors on a name [`parse_name`] refuses.
pub fn group_names(names: &[String]) -> Result<Vec<Vec<String>>, SketchError> {
    // (hash and precision shared by the group's registers, or None for a group of one; names)
    type Registers = Option<(String, u32)>;
    let mut groups: Vec<(Registers, Vec<String>)> = Vec::new();
    for name in names {
        let n = parse_name(name)?;
        let key = n.ours.map(|_| (n.hash.clone(), n.precision));
        match groups
            .iter_mut()
            .find(|(k, g)| key.is_some() && *k == key && !g.contains(name))
        {
            Some((_, g)) => g.push(name.clone()),
            None => groups.push((key, vec![name.clone()])),
        }
    }
    Ok(groups.into_iter().map(|(_, g)| g).collect())
}

/// One sketch measuring every name of a group made by [`group_names`]: our sketches of one hash
/// and precision become one [`HllEstimators`]; a single name is [`build_by_name`].
pub fn build_group(names: &[String]) -> Result<DynSketch, SketchError> {
    if names.len() == 1 {
        return build_by_name(&names[0]);
    }
    let parsed: Vec<SketchName> = names
        .iter()
        .map(|n| parse_name(n))
        .collect::<Result<_, _>>()?;
    let first = &parsed[0];
    let estimators: Option<Vec<Estimator>> = parsed
        .iter()
        .map(|n| {
            (n.hash == first.hash && n.precision == first.precision)
                .then_some(n.ours)
                .flatten()
        })
        .collect();
    let estimators = estimators.ok_or_else(|| SketchError::UnknownSketch {
        name: names.join(","),
        known: "one group: our sketches of one hash and precision".into(),
    })?;
    by_hash!(
        first.hash.as_str(),
        ours_shared,
        first.precision,
        &estimators
    )
}

/// The key bytes every cardinality sketch here sees for a `u64` key.
pub fn key_bytes(key: u64) -> [u8; 8] {
    key.with_bytes(|b| {
        let mut out = [0u8; 8];
        out.copy_from_slice(b);
        out
    })
}
