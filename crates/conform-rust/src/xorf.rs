//! `xorf`: `Xor8`, `BinaryFuse8` and `BinaryFuse16`, static filters over `u64` keys.
//!
//! **Keys.** The adapter hashes each key's bytes to a `u64` with XXH3-64 (seed 0) and gives xorf
//! the hashes, sorted and deduplicated (xorf requires distinct keys; two keys whose XXH3-64 agree
//! become one, which can only add a false positive, never a false negative).
//!
//! **Static build** (`capabilities.static_build`). Inserts are buffered; the filter is constructed
//! from the buffer at the first query (or stats or serialize), with `Xor8::from` or
//! `BinaryFuse*::try_from` (a construction error is [`CandidateError::Refused`] with xorf's
//! message). An insert after that is refused: "static filter".
//!
//! **What `p` means here.** xorf takes no rate: a query compares one fingerprint of `f` bits, so
//! its rate is about 2^-f whatever is asked (2^-8 = 0.39% for the 8-bit filters, 2^-16 = 0.0015%
//! for `BinaryFuse16`). The adapter makes that its promise: it accepts any `p` in [2^-f, 1] and
//! refuses a `p` below 2^-f (or not a number) with a message naming the fingerprint's rate. So at
//! the suite's p = 1% `Xor8` is held to 1% by the promised-rate clause and to 2^-8 by the theory
//! clause ([`Declared::Xor`]); at p = 0.1% it is refused rather than silently missing the promise.
//! `n` is not needed (the filter is sized from the keys at construction) and is ignored.
//!
//! **Reproducibility.** xorf's default `uniform-random` feature (on in this workspace: the root
//! benches use the default features) fills the binary fuse filters' unused fingerprint slots from
//! the thread's random generator, so their false positives on the same keys differ slightly from
//! run to run (seen: `BinaryFuse8` 1548 and 1553 of 400,000); `Xor8`'s do not.
//!
//! **Large.** No: the binary fuse filters size their arrays in `u32`, and although `Xor8` sizes
//! in `usize`, 2^32 bits of fingerprints need 2^29 keys, whose construction arrays take about
//! 30 GB, beyond this machine.

use std::marker::PhantomData;

use ::xorf::{BinaryFuse8, BinaryFuse16, Descriptor, DmaSerializable, Filter, Xor8};
use xxhash_rust::xxh3::xxh3_64;

use super::refused;
use bloomlab_conform::candidate::{
    About, Candidate, CandidateError, Capabilities, Declared, Instance, KeyBatch, Stats, Supports,
};

/// xorf's version (the workspace pin).
pub const VERSION: &str = "0.13.0";

/// One xorf filter type as the adapter needs it.
pub trait XorKind: Sized + Send + 'static {
    /// The candidate's name.
    const NAME: &'static str;
    /// Fingerprint width: the rate is about 2^-`FINGERPRINT_BITS`.
    const FINGERPRINT_BITS: u32;
    /// Constructs the filter from distinct hashes.
    fn construct(hashes: &[u64]) -> Result<Self, String>;
    /// Whether `hash` may be in it.
    fn has(&self, hash: u64) -> bool;
    /// Bytes the filter holds.
    fn memory(&self) -> u64;
    /// Its bytes.
    fn to_bytes(&self) -> Vec<u8>;
    /// The filter from [`to_bytes`](Self::to_bytes)'s bytes.
    fn from_bytes(bytes: &[u8]) -> Result<Self, String>;
}

impl XorKind for Xor8 {
    const NAME: &'static str = "rust/xorf/Xor8";
    const FINGERPRINT_BITS: u32 = 8;

    fn construct(hashes: &[u64]) -> Result<Self, String> {
        Ok(Xor8::from(hashes))
    }

    fn has(&self, hash: u64) -> bool {
        self.contains(&hash)
    }

    fn memory(&self) -> u64 {
        self.fingerprints.len() as u64 + 16
    }

    /// `seed` and `block_length` (u64 LE each), then the fingerprints.
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.seed.to_le_bytes().to_vec();
        out.extend_from_slice(&(self.block_length as u64).to_le_bytes());
        out.extend_from_slice(&self.fingerprints);
        out
    }

    fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        let (seed, rest) = bytes.split_first_chunk::<8>().ok_or("no seed")?;
        let (block, fingerprints) = rest.split_first_chunk::<8>().ok_or("no block length")?;
        let block_length =
            usize::try_from(u64::from_le_bytes(*block)).map_err(|e| e.to_string())?;
        if block_length.checked_mul(3) != Some(fingerprints.len()) {
            return Err(format!(
                "block length {block_length} does not match {} fingerprint bytes (3 blocks)",
                fingerprints.len()
            ));
        }
        Ok(Xor8 {
            seed: u64::from_le_bytes(*seed),
            block_length,
            fingerprints: fingerprints.into(),
        })
    }
}

/// The DMA descriptor of a binary fuse filter (xorf's own 20-byte little-endian layout: seed,
/// segment length, its mask, segment count length), parsed back.
/// Also the number of fingerprints a query may read.
fn descriptor(bytes: &[u8]) -> Result<(Descriptor, &[u8], u64), String> {
    let (d, rest) = bytes
        .split_first_chunk::<{ Descriptor::DMA_LEN }>()
        .ok_or_else(|| format!("{} bytes: shorter than the descriptor", bytes.len()))?;
    let word = |at: usize| u32::from_le_bytes(d[at..at + 4].try_into().expect("4 bytes"));
    let descriptor = Descriptor {
        seed: u64::from_le_bytes(d[..8].try_into().expect("8 bytes")),
        segment_length: word(8),
        segment_length_mask: word(12),
        segment_count_length: word(16),
    };
    // A query reads fingerprints up to segment_count_length + 2 segment lengths (xorf's
    // `hash_of_hash`: h0 below segment_count_length, h1 and h2 one and two segments on, moved
    // within their segment by the mask); fewer bytes would index out of bounds at a query.
    let (len, mask) = (descriptor.segment_length, descriptor.segment_length_mask);
    let reach = u64::from(descriptor.segment_count_length) + 2 * u64::from(len);
    if !len.is_power_of_two() || mask != len - 1 {
        return Err(format!(
            "segment length {len} with mask {mask}: not a power of two and its mask"
        ));
    }
    Ok((descriptor, rest, reach))
}

/// Whether `have` fingerprints cover the `reach` a query may read.
fn whole(have: usize, reach: u64) -> Result<(), String> {
    if (have as u64) < reach {
        return Err(format!(
            "{have} fingerprints, but the descriptor reaches {reach}"
        ));
    }
    Ok(())
}

/// The descriptor's bytes followed by `fingerprints`.
fn with_descriptor<F: DmaSerializable>(f: &F, fingerprints: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; F::DESCRIPTOR_LEN];
    f.dma_copy_descriptor_to(&mut out);
    out.extend_from_slice(fingerprints);
    out
}

impl XorKind for BinaryFuse8 {
    const NAME: &'static str = "rust/xorf/BinaryFuse8";
    const FINGERPRINT_BITS: u32 = 8;

    fn construct(hashes: &[u64]) -> Result<Self, String> {
        BinaryFuse8::try_from(hashes).map_err(str::to_string)
    }

    fn has(&self, hash: u64) -> bool {
        self.contains(&hash)
    }

    fn memory(&self) -> u64 {
        (self.fingerprints.len() + Descriptor::DMA_LEN) as u64
    }

    fn to_bytes(&self) -> Vec<u8> {
        with_descriptor(self, &self.fingerprints)
    }

    fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        let (descriptor, fingerprints, reach) = descriptor(bytes)?;
        whole(fingerprints.len(), reach)?;
        Ok(BinaryFuse8 {
            descriptor,
            fingerprints: fingerprints.into(),
        })
    }
}

impl XorKind for BinaryFuse16 {
    const NAME: &'static str = "rust/xorf/BinaryFuse16";
    const FINGERPRINT_BITS: u32 = 16;

    fn construct(hashes: &[u64]) -> Result<Self, String> {
        BinaryFuse16::try_from(hashes).map_err(str::to_string)
    }

    fn has(&self, hash: u64) -> bool {
        self.contains(&hash)
    }

    fn memory(&self) -> u64 {
        (self.fingerprints.len() * 2 + Descriptor::DMA_LEN) as u64
    }

    /// The descriptor, then the fingerprints as u16 LE (not xorf's native-endian DMA bytes, so
    /// the bytes mean the same on every machine).
    fn to_bytes(&self) -> Vec<u8> {
        let le: Vec<u8> = self
            .fingerprints
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        with_descriptor(self, &le)
    }

    fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        let (descriptor, rest, reach) = descriptor(bytes)?;
        if rest.len() % 2 != 0 {
            return Err(format!("{} fingerprint bytes: not whole u16s", rest.len()));
        }
        whole(rest.len() / 2, reach)?;
        let fingerprints = rest
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        Ok(BinaryFuse16 {
            descriptor,
            fingerprints,
        })
    }
}

/// A candidate for xorf's filter type `K` (`rust/xorf/<K>`).
pub struct Static<K>(PhantomData<fn() -> K>);

impl<K> Default for Static<K> {
    fn default() -> Self {
        Static(PhantomData)
    }
}

/// The smallest `p` a `K` can promise: 2^-fingerprint bits.
fn floor_rate<K: XorKind>() -> f64 {
    (-(K::FINGERPRINT_BITS as f64)).exp2()
}

impl<K: XorKind> Candidate for Static<K> {
    fn about(&self) -> About {
        About::rust(K::NAME, VERSION)
            .with(Capabilities {
                serialize: true,
                stats: true,
                concurrent: false,
                static_build: true,
                large: false,
                growable: false,
            })
            // xorf takes no rate: its fingerprint width fixes one, 2^-f, and this adapter refuses a
            // promise tighter than that (accepts-valid-input holds it to the rest).
            .supporting(Supports {
                p: (floor_rate::<K>(), Supports::ALL.p.1),
                ..Supports::ALL
            })
    }

    fn build(&self, _n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let floor = floor_rate::<K>();
        if !(floor..=1.0).contains(&p) {
            return Err(refused(
                K::NAME,
                format!(
                    "p = {p} is outside [2^-{bits} = {floor:e}, 1]: xorf takes no rate, its \
                     {bits}-bit fingerprints give about 2^-{bits}",
                    bits = K::FINGERPRINT_BITS
                ),
            ));
        }
        Ok(Box::new(StaticInstance::<K> {
            pending: Vec::new(),
            built: None,
        }))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let f = K::from_bytes(bytes)
            .map_err(|e| refused(K::NAME, format!("serialized filter: {e}")))?;
        Ok(Box::new(StaticInstance {
            pending: Vec::new(),
            built: Some(f),
        }))
    }
}

/// Buffered hashes until the first query, then the constructed filter.
struct StaticInstance<K> {
    pending: Vec<u64>,
    built: Option<K>,
}

impl<K: XorKind> StaticInstance<K> {
    /// The filter, constructed from the buffered hashes on first use.
    fn filter(&mut self) -> Result<&K, CandidateError> {
        if self.built.is_none() {
            let mut hashes = std::mem::take(&mut self.pending);
            hashes.sort_unstable();
            hashes.dedup();
            let f = K::construct(&hashes).map_err(|e| {
                refused(
                    K::NAME,
                    format!("construction from {} distinct hashes: {e}", hashes.len()),
                )
            })?;
            self.built = Some(f);
        }
        Ok(self.built.as_ref().expect("built above"))
    }
}

impl<K: XorKind> Instance for StaticInstance<K> {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        if self.built.is_some() {
            return Err(refused(
                K::NAME,
                "static filter: it was constructed at the first query and takes no more keys",
            ));
        }
        self.pending.extend(keys.iter().map(xxh3_64));
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        let f = self.filter()?;
        out.clear();
        out.extend(keys.iter().map(|k| f.has(xxh3_64(k))));
        Ok(())
    }

    fn stats(&mut self) -> Result<Stats, CandidateError> {
        let f = self.filter()?;
        Ok(Stats {
            memory_bytes: Some(f.memory()),
            layout: Some(Declared::Xor {
                fingerprint_bits: K::FINGERPRINT_BITS,
            }),
        })
    }

    fn serialize(&mut self) -> Result<Option<Vec<u8>>, CandidateError> {
        Ok(Some(self.filter()?.to_bytes()))
    }
}
