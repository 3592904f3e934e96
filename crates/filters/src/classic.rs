//! The classic layout: one flat bit array, k probes anywhere in it.

use std::marker::PhantomData;

use crate::error::Result;
use crate::filter::{Filter, Geometry, Variant, forward_filter_methods, keyed_methods};
use crate::hash::{Digest, HashStrategy};
use crate::index::IndexScheme;
use crate::key::Key;
use crate::sizing::Params;
use crate::store::{BitStore, ConcurrentBitStore};

/// A Bloom filter over a flat bit array: hash strategy `H`, index scheme `I`, bit store `S`.
///
/// `Bloom<Murmur3, GuavaMitz64, FlatBits>` is Guava's layout; with [`crate::AtomicBits`] it is
/// Guava's lock-free one and can be filled from many threads at once through
/// [`insert_shared`](Self::insert_shared).
pub struct Bloom<H, I, S> {
    store: S,
    hashes: u32,
    _axes: PhantomData<fn() -> (H, I)>,
}

impl<H, I, S: std::fmt::Debug> std::fmt::Debug for Bloom<H, I, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bloom")
            .field("hashes", &self.hashes)
            .field("store", &self.store)
            .finish()
    }
}

impl<H: HashStrategy, I: IndexScheme, S: BitStore> Bloom<H, I, S> {
    /// A filter of at least `params.bits` bits (rounded up to whole 64-bit words, which is the
    /// modulus the index scheme then uses) and `params.hashes` probes.
    pub fn with_params(params: Params) -> Result<Self> {
        let params = Params::explicit(params.bits, params.hashes)?;
        Ok(Self {
            store: S::zeroed(params.bits)?,
            hashes: params.hashes,
            _axes: PhantomData,
        })
    }

    /// A filter for `n` keys at rate `p`, sized by the index scheme's rule ([`IndexScheme::sizing`]).
    pub fn new(n: u64, p: f64) -> Result<Self> {
        Self::with_params(I::sizing(n, p)?)
    }

    /// Reassembles a filter from a store and k (as a deserializer does); errors for an empty store or
    /// an invalid k.
    pub fn from_parts(store: S, hashes: u32) -> Result<Self> {
        // An empty store would make every probe's modulus zero.
        Params::explicit(store.len_bits(), hashes)?;
        Ok(Self {
            store,
            hashes,
            _axes: PhantomData,
        })
    }

    /// The bit store, e.g. to serialize its words.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Mutable access to the bit store (e.g. to union another filter's words).
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Inserts a precomputed digest.
    #[inline]
    pub fn insert_digest(&mut self, d: Digest) {
        let bits = self.store.len_bits();
        let store = &mut self.store;
        I::probe(d, self.hashes, bits, |i| {
            store.set(i);
            true
        });
    }

    /// Looks up a precomputed digest: all k bits are read, without a branch per probe.
    #[inline]
    pub fn contains_digest(&self, d: Digest) -> bool {
        // Stopping at the first clear bit mispredicts on absent keys (the first clear probe is
        // random); reading all k bits costs k loads that overlap, and measured faster: classic
        // xxh3 absent lookups at 1M went from 22 to 14 ns, present ones from 13.7 to 14.5 ns.
        let mut all = true;
        I::probe(d, self.hashes, self.store.len_bits(), |i| {
            all &= self.store.get(i);
            true
        });
        all
    }

    /// Prefetches the k words a lookup of `d` reads (nothing for schemes whose positions cost a
    /// division each: see [`IndexScheme::PREFETCH`]).
    #[inline]
    pub fn prefetch_digest(&self, d: Digest) {
        if !I::PREFETCH {
            return;
        }
        I::probe(d, self.hashes, self.store.len_bits(), |i| {
            self.store.prefetch(i);
            true
        });
    }

    keyed_methods!(H::digest);
}

impl<H: HashStrategy, I: IndexScheme, S: ConcurrentBitStore> Bloom<H, I, S> {
    /// Inserts `key` through a shared reference; safe from any number of threads at once.
    #[inline]
    pub fn insert_shared<K: Key + ?Sized>(&self, key: &K) {
        key.with_bytes(|b| self.insert_digest_shared(H::digest(b)));
    }

    /// Inserts a precomputed digest through a shared reference.
    #[inline]
    pub fn insert_digest_shared(&self, d: Digest) {
        I::probe(d, self.hashes, self.store.len_bits(), |i| {
            self.store.set_shared(i);
            true
        });
    }
}

impl<H: HashStrategy, I: IndexScheme, S: BitStore> Filter for Bloom<H, I, S> {
    forward_filter_methods!(H::digest);
    fn bits(&self) -> u64 {
        self.store.len_bits()
    }
    fn hashes(&self) -> u32 {
        self.hashes
    }
    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes() + std::mem::size_of::<u32>()
    }
    fn set_bits(&self) -> u64 {
        self.store.count_ones()
    }
    fn geometry(&self) -> Geometry {
        Geometry::Flat {
            bits: self.store.len_bits(),
            hashes: self.hashes,
        }
    }
}

impl<H: HashStrategy, I: IndexScheme, S: BitStore> Variant for Bloom<H, I, S> {
    fn variant_name() -> String {
        format!("classic/{}/{}/{}", H::ID, I::ID, S::ID)
    }
    fn with_params(params: Params) -> Result<Self> {
        Bloom::with_params(params)
    }
    fn sized_for(n: u64, p: f64) -> Result<Self> {
        Bloom::new(n, p)
    }
}
