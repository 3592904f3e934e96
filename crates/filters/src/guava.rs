//! Guava-compatible Bloom filters: bit-for-bit the filters, sizes and files of Guava 31.1's
//! `com.google.common.hash.BloomFilter`.
//!
//! A [`GuavaBloom`] is a thin layer over the library's axes: `Bloom<Murmur3, GuavaMitz64,
//! FlatBits>` (or [`GuavaMitz32`] for the legacy strategy) plus what Guava adds on top:
//! - a *strategy ordinal* ([`GuavaStrategy`]), the first byte of Guava's file;
//! - a *funnel* ([`Funnel`]), the key-to-bytes encoding, which Guava's file does not record;
//! - Guava's sizing ([`guava_params`]), argument checks and `writeTo`/`readFrom` format.
//!
//! Guarantees, checked against Guava 31.1 on Java 17 by `scripts/guava-crosscheck.sh`: a filter
//! created here with the same (funnel, strategy, n, p) and the same keys writes the same bytes as
//! Guava's `writeTo`, and reads Guava's bytes to a filter that answers `mightContain` identically.
//!
//! ```
//! use bloomlab_filters::guava::{GuavaBloom, LongFunnel};
//! let mut f = GuavaBloom::<LongFunnel>::create(1000, 0.01)?;
//! f.put(&42);
//! let bytes = f.to_bytes();
//! let g = GuavaBloom::<LongFunnel>::from_bytes(&bytes)?;
//! assert!(g.might_contain(&42));
//! assert_eq!((g.hashes(), g.bit_size()), (7, 9600)); // 9585 bits rounded up to 150 words
//! # Ok::<(), bloomlab_filters::BloomError>(())
//! ```
//!
//! # Guava behaviours that may surprise you
//!
//! - *The filter is bigger than you asked, and k is chosen for the size you did not get.* Guava
//!   truncates m = -n ln p / (ln 2)^2 to a `long`, picks k from that m, then rounds the array up to
//!   whole 64-bit words, and the rounded size is the modulus. For n = 1, p = 0.5 you get 64 bits and
//!   k = 1: an FPR near 1/64, not 1/2. For small n the real FPR is far from p in both directions
//!   (google/guava issue 2767).
//! - *n = 0 is silently n = 1.* And n = 1 with p = 0.9 fails: m truncates to 0 bits, which Guava
//!   refuses ("data length is zero").
//! - *k's rule changed after 31.1.* Current Guava sources compute k = round(-ln p / ln 2) from p
//!   alone (issue 7346). Same bit count, sometimes a different k: n = 1, p = 0.01 gives k = 6 in
//!   31.1 and 7 in newer sources, so the two write different files for the same inputs. The file
//!   stores k, so any version reads any file ([`GuavaSizing`] selects the rule).
//! - *There is no public way to make a `MURMUR128_MITZ_32` filter* in Guava 31.1; the cross-check
//!   (`scripts/guava-crosscheck.sh`) calls the package-private `create(funnel, n, p, strategy)`
//!   (annotated `@VisibleForTesting`) by reflection, and also has Java `readFrom` the ordinal-0
//!   files written here.
//! - *`readFrom` trusts the header.* A word count of 2^31 - 1 makes it allocate before reading:
//!   `OutOfMemoryError` ("Requested array size exceeds VM limit"), an `Error`, not the documented
//!   `IOException`. Trailing bytes are not detected (it is a stream reader and stops after the last
//!   word). Ordinal 2 or -1, k = 0 and word counts of 0 or less become an `IOException` wrapping
//!   the runtime exception; a truncated file is a bare `EOFException`. [`GuavaBloom::from_bytes`]
//!   rejects all of these, trailing bytes included, with a [`BloomError::Corrupt`] that names the
//!   problem, and never allocates more than the input's size; [`GuavaBloom::read_from`] is the
//!   stream version and, like Guava, leaves trailing bytes unread.
//! - *`approximateElementCount()` throws* (`ArithmeticException`) once every bit is set; here it
//!   returns `None`.
//! - *The funnel is not in the file.* Reading with the wrong funnel gives a filter that silently
//!   answers "no" for keys it contains; an audit's member check is how you notice.
//!
//! # Auditing a file
//!
//! A Bloom filter never forgets a key, so *one* member not found means the file is damaged, or was
//! built from other keys or with another funnel. Beyond that, the FPR measured on non-members
//! (exact Clopper-Pearson interval) can be compared with Guava's `expectedFpp()` =
//! (set bits / bits)^k: if the whole interval lies above it (chance of a false alarm at most
//! (1 - confidence)/2), the filter is worse than Guava itself believes. On a legacy
//! `MURMUR128_MITZ_32` file of more than 2^31 bits this is exactly what happens: positions never
//! reach 2^31, so part of the array is dead, the live part is denser than the fill ratio says, and
//! `expectedFpp` is too optimistic. `bloomlab guava audit` runs this check and `inspect` warns
//! about such files.

use std::io::{Read, Write};
use std::marker::PhantomData;

use crate::classic::Bloom;
use crate::error::{BloomError, Result};
use crate::filter::{Filter, Geometry, Layout};
use crate::hash::{Digest, HashStrategy, Murmur3};
use crate::index::{GuavaMitz32, GuavaMitz64, IndexScheme};
use crate::key::Key;
use crate::sizing::{MAX_HASHES, Params};
use crate::store::{BitStore, FlatBits};

/// The `format` named in [`BloomError::Corrupt`] errors from this module.
pub const FORMAT: &str = "Guava BloomFilter";

/// Bytes before the words: strategy ordinal, k, big-endian `int` word count.
pub const HEADER_BYTES: usize = 6;

/// The most 64-bit words a Guava filter can hold: its word count is a Java `int`
/// (`Ints.checkedCast` in `LockFreeBitArray`, `writeInt` in `writeTo`).
pub const MAX_WORDS: u64 = i32::MAX as u64;

/// How Guava turns a value into hash input bytes. The funnel is not stored in Guava's file, so a
/// reader must name the one the writer used; Guava's `putAll` requires equal funnels, which here
/// is the type system's job (`GuavaBloom<LongFunnel>` and `GuavaBloom<Utf8Funnel>` are different
/// types).
pub trait Funnel: Send + Sync + 'static {
    /// The values this funnel accepts.
    type Item: ?Sized;
    /// Short name used on the command line and in reports (`long`, `int`, `utf8`, `bytes`).
    const ID: &'static str;
    /// The Guava expression that builds the same funnel.
    const GUAVA: &'static str;
    /// Calls `f` with the bytes Guava's funnel writes into the hasher for `item`.
    fn with_bytes<R>(item: &Self::Item, f: impl FnOnce(&[u8]) -> R) -> R;
}

macro_rules! funnel {
    ($(#[$doc:meta])* $name:ident, $item:ty, $id:literal, $guava:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name;
        impl Funnel for $name {
            type Item = $item;
            const ID: &'static str = $id;
            const GUAVA: &'static str = $guava;
            #[inline]
            fn with_bytes<R>(item: &$item, f: impl FnOnce(&[u8]) -> R) -> R {
                // The library's `Key` encodings are Guava's funnels by design (see `crate::key`).
                Key::with_bytes(item, f)
            }
        }
    };
}

funnel!(
    /// `Funnels.longFunnel()`: a Java `long` as 8 little-endian bytes.
    LongFunnel, i64, "long", "Funnels.longFunnel()"
);
funnel!(
    /// `Funnels.integerFunnel()`: a Java `int` as 4 little-endian bytes.
    IntFunnel, i32, "int", "Funnels.integerFunnel()"
);
funnel!(
    /// `Funnels.stringFunnel(StandardCharsets.UTF_8)`: the raw UTF-8 bytes, no length or terminator.
    Utf8Funnel, str, "utf8", "Funnels.stringFunnel(StandardCharsets.UTF_8)"
);
funnel!(
    /// `Funnels.byteArrayFunnel()`: the bytes themselves.
    BytesFunnel, [u8], "bytes", "Funnels.byteArrayFunnel()"
);

/// Guava's `BloomFilterStrategies`, by ordinal (the first byte of a Guava file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GuavaStrategy {
    /// `MURMUR128_MITZ_32`, ordinal 0: Guava before 13.0. Positions never exceed 2^31 - 1, so the
    /// bits of a larger filter beyond that are never used ([`GuavaMitz32`]).
    Murmur128Mitz32,
    /// `MURMUR128_MITZ_64`, ordinal 1: what `BloomFilter.create` uses since Guava 13.0.
    Murmur128Mitz64,
}

impl GuavaStrategy {
    /// The ordinal Guava writes.
    pub const fn ordinal(self) -> u8 {
        match self {
            Self::Murmur128Mitz32 => 0,
            Self::Murmur128Mitz64 => 1,
        }
    }

    /// The strategy with this ordinal byte (read as Java's signed `readByte`).
    pub fn from_ordinal(ordinal: i8) -> Result<Self> {
        match ordinal {
            0 => Ok(Self::Murmur128Mitz32),
            1 => Ok(Self::Murmur128Mitz64),
            other => Err(corrupt(format!(
                "unknown strategy ordinal {other}: Guava 31.1 knows 0 (MURMUR128_MITZ_32) and \
                 1 (MURMUR128_MITZ_64)"
            ))),
        }
    }

    /// Guava's enum constant name.
    pub const fn guava_name(self) -> &'static str {
        match self {
            Self::Murmur128Mitz32 => "MURMUR128_MITZ_32",
            Self::Murmur128Mitz64 => "MURMUR128_MITZ_64",
        }
    }
}

impl std::fmt::Display for GuavaStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (ordinal {})", self.guava_name(), self.ordinal())
    }
}

/// Which Guava release's rule picks k when creating a filter. The bit count is the same in both;
/// a file stores k, so reading never needs to know which rule wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GuavaSizing {
    /// Guava up to at least 31.1 (the jar on these machines): `k = max(1, round(m / n * ln 2))`
    /// from the truncated, not yet word-rounded m.
    #[default]
    FromBitsPerKey,
    /// Current Guava sources (`optimalNumOfHashFunctions(double p)` in `BloomFilter.java`, the
    /// change proposed in google/guava issue 7346; not in 31.1):
    /// `k = max(1, round(-ln p / ln 2))`, from p alone. The two differ when truncating m moves
    /// m/n ln 2 across a half-integer, which matters most for small n: n = 1, p = 0.01 gives
    /// m = 9 bits, old k = round(6.24) = 6, new k = round(6.64) = 7.
    FromFpp,
}

/// The (m, k) Guava's `BloomFilter.create(funnel, n, p)` computes, before word rounding.
///
/// Mirrors Guava's checks: p must satisfy `p > 0.0 && p < 1.0` (so NaN is refused), n = 0 is
/// treated as 1 (only in this API: the rest of the library refuses n = 0), n must fit a Java
/// `long`, m must be at least 1 bit and at most [`MAX_WORDS`] words, and k at most 255. m uses
/// [`Params::guava`]: `m = (long)(-n ln p / (ln 2)^2)`.
///
/// Java's `Math.log` and Rust's `f64::ln` are both within 1 ulp and agree on every p tried by the
/// cross-check; a p whose m lands within 1 ulp of an integer could in principle truncate
/// differently.
pub fn guava_params(n: u64, p: f64, sizing: GuavaSizing) -> Result<Params> {
    if n > i64::MAX as u64 {
        return Err(BloomError::OutOfRange {
            what: "expected insertions n",
            value: n.to_string(),
            allowed: format!(
                "Guava's expectedInsertions is a Java long, at most {}",
                i64::MAX
            ),
        });
    }
    let n = n.max(1);
    let mut params = Params::guava(n, p).map_err(|e| match e {
        BloomError::InvalidBits { bits: 0, .. } => BloomError::OutOfRange {
            what: "bit count m",
            value: format!("0 (from n = {n}, p = {})", crate::error::Compact(p)),
            allowed: "Guava refuses a 0-bit filter (\"data length is zero\"): \
                      m = (long)(-n ln p / (ln 2)^2) must be at least 1, so lower p or raise n"
                .into(),
        },
        other => other,
    })?;
    if sizing == GuavaSizing::FromFpp {
        let k = (-p.ln() / std::f64::consts::LN_2).round().max(1.0);
        if k > f64::from(MAX_HASHES) {
            return Err(BloomError::InvalidHashes {
                k: k as u32,
                min: 1,
                max: MAX_HASHES,
            });
        }
        params = Params::explicit(params.bits, k as u32)?;
    }
    if params.bits.div_ceil(64) > MAX_WORDS {
        return Err(BloomError::TooLarge {
            what: format!("n = {n} at p = {}", crate::error::Compact(p)),
            needed: params.bits as f64,
            max: MAX_WORDS * 64,
            variant: "a Guava BloomFilter (its word count is a Java int)".into(),
        });
    }
    Ok(params)
}

fn corrupt(reason: String) -> BloomError {
    BloomError::Corrupt {
        format: FORMAT,
        reason,
    }
}

/// The filter under a Guava strategy: one of the library's own flat filters.
#[derive(Debug)]
enum Inner {
    Mitz32(Bloom<Murmur3, GuavaMitz32, FlatBits>),
    Mitz64(Bloom<Murmur3, GuavaMitz64, FlatBits>),
}

/// Runs `$body` with `$f` bound to the inner filter, whichever strategy it has: one branch per
/// call, then the concrete, inlined filter code.
macro_rules! with_inner {
    ($self:expr, $f:ident => $body:expr) => {
        match $self {
            Inner::Mitz32($f) => $body,
            Inner::Mitz64($f) => $body,
        }
    };
}

/// A Guava-compatible Bloom filter of `F::Item`s.
///
/// Guarantees: no false negatives; bytes, sizes and answers identical to Guava 31.1's
/// `BloomFilter<T>` with the same funnel and strategy. Single-threaded (`&mut self` to put):
/// Guava's lock-free concurrent puts have no counterpart here.
pub struct GuavaBloom<F: Funnel> {
    inner: Inner,
    _funnel: PhantomData<fn() -> F>,
}

impl<F: Funnel> std::fmt::Debug for GuavaBloom<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuavaBloom")
            .field("funnel", &F::ID)
            .field("strategy", &self.strategy())
            .field("hashes", &self.hashes())
            .field("bits", &self.bit_size())
            .finish()
    }
}

impl<F: Funnel> GuavaBloom<F> {
    /// `BloomFilter.create(funnel, n, p)`: strategy `MURMUR128_MITZ_64`, Guava 31.1 sizing.
    pub fn create(n: u64, p: f64) -> Result<Self> {
        Self::create_with(
            n,
            p,
            GuavaStrategy::Murmur128Mitz64,
            GuavaSizing::FromBitsPerKey,
        )
    }

    /// Guava's package-private `create(funnel, n, p, strategy)` with the chosen k rule.
    pub fn create_with(
        n: u64,
        p: f64,
        strategy: GuavaStrategy,
        sizing: GuavaSizing,
    ) -> Result<Self> {
        Self::with_params(guava_params(n, p, sizing)?, strategy)
    }

    /// An empty filter of `params.bits` rounded up to whole words (the rounded count is the index
    /// modulus, as in Guava) and `params.hashes` probes.
    pub fn with_params(params: Params, strategy: GuavaStrategy) -> Result<Self> {
        if params.bits.div_ceil(64) > MAX_WORDS {
            return Err(BloomError::InvalidBits {
                bits: params.bits,
                max: MAX_WORDS * 64,
                variant: "a Guava BloomFilter".into(),
            });
        }
        let inner = match strategy {
            GuavaStrategy::Murmur128Mitz32 => Inner::Mitz32(Bloom::with_params(params)?),
            GuavaStrategy::Murmur128Mitz64 => Inner::Mitz64(Bloom::with_params(params)?),
        };
        Ok(Self {
            inner,
            _funnel: PhantomData,
        })
    }

    fn from_words(words: Vec<u64>, hashes: u32, strategy: GuavaStrategy) -> Result<Self> {
        let store = FlatBits::from_words(words);
        let inner = match strategy {
            GuavaStrategy::Murmur128Mitz32 => Inner::Mitz32(Bloom::from_parts(store, hashes)?),
            GuavaStrategy::Murmur128Mitz64 => Inner::Mitz64(Bloom::from_parts(store, hashes)?),
        };
        Ok(Self {
            inner,
            _funnel: PhantomData,
        })
    }

    /// The Murmur3 digest Guava computes for `item`.
    #[inline]
    fn digest(item: &F::Item) -> Digest {
        F::with_bytes(item, Murmur3::digest)
    }

    /// Adds `item`; returns true if any bit changed (Guava's `put` contract: false means the
    /// filter already claimed to contain it).
    #[inline]
    pub fn put(&mut self, item: &F::Item) -> bool {
        let d = Self::digest(item);
        with_inner!(&mut self.inner, f => {
            let present = f.contains_digest(d);
            if !present {
                f.insert_digest(d);
            }
            !present
        })
    }

    /// Guava's `mightContain`: false means `item` was certainly never put.
    #[inline]
    pub fn might_contain(&self, item: &F::Item) -> bool {
        let d = Self::digest(item);
        with_inner!(&self.inner, f => f.contains_digest(d))
    }

    /// The strategy (the file's first byte).
    pub fn strategy(&self) -> GuavaStrategy {
        match self.inner {
            Inner::Mitz32(_) => GuavaStrategy::Murmur128Mitz32,
            Inner::Mitz64(_) => GuavaStrategy::Murmur128Mitz64,
        }
    }

    /// k, Guava's `numHashFunctions`.
    pub fn hashes(&self) -> u32 {
        with_inner!(&self.inner, f => Filter::hashes(f))
    }

    /// Guava's `bitSize()`: 64 times the word count, the modulus of every position.
    pub fn bit_size(&self) -> u64 {
        with_inner!(&self.inner, f => f.store().len_bits())
    }

    /// Number of 64-bit words (the file's word count).
    pub fn words(&self) -> usize {
        (self.bit_size() / 64) as usize
    }

    /// Number of set bits (Guava's `bitCount()`).
    pub fn bit_count(&self) -> u64 {
        with_inner!(&self.inner, f => f.store().count_ones())
    }

    /// Guava's `expectedFpp()`: `(bitCount / bitSize)^k`, computed with `pow` as Java's
    /// `Math.pow` is. An estimate from the fill, not a measurement: it assumes the k positions of
    /// a key are independent and uniform over all bits (which `MURMUR128_MITZ_32` breaks above
    /// 2^31 bits).
    pub fn expected_fpp(&self) -> f64 {
        (self.bit_count() as f64 / self.bit_size() as f64).powf(f64::from(self.hashes()))
    }

    /// Guava's `approximateElementCount()`: `-ln(1 - bitCount/bitSize) * bitSize / k`, rounded
    /// half up, evaluated in Guava's order. `None` when every bit is set, where Guava's
    /// `DoubleMath.roundToLong` throws `ArithmeticException` (the estimate is infinite).
    pub fn approximate_element_count(&self) -> Option<u64> {
        let bit_size = self.bit_size() as f64;
        let fraction = self.bit_count() as f64 / bit_size;
        let estimate = -(-fraction).ln_1p() * bit_size / f64::from(self.hashes());
        // Positive finite values: Rust's round (half away from zero) is HALF_UP.
        estimate
            .is_finite()
            .then(|| estimate.round().min(i64::MAX as f64) as u64)
    }

    /// Guava's `putAll`: ors `other`'s bits into this filter. Errors, naming both values, unless
    /// both have the same k, bit size and strategy (equal funnels are guaranteed by the type;
    /// combining a filter with itself, which Guava refuses, cannot be expressed).
    pub fn put_all(&mut self, other: &Self) -> Result<()> {
        let incompatible = |what: &str, a: String, b: String| BloomError::Incompatible {
            reason: format!("Guava filters must have the same {what} ({a} != {b})"),
        };
        if self.hashes() != other.hashes() {
            return Err(incompatible(
                "number of hash functions",
                self.hashes().to_string(),
                other.hashes().to_string(),
            ));
        }
        if self.bit_size() != other.bit_size() {
            return Err(incompatible(
                "bit size",
                self.bit_size().to_string(),
                other.bit_size().to_string(),
            ));
        }
        match (&mut self.inner, &other.inner) {
            (Inner::Mitz32(a), Inner::Mitz32(b)) => a.union(b)?,
            (Inner::Mitz64(a), Inner::Mitz64(b)) => a.union(b)?,
            _ => {
                return Err(incompatible(
                    "strategy",
                    self.strategy().to_string(),
                    other.strategy().to_string(),
                ));
            }
        }
        Ok(())
    }

    /// Word `w` of the bit array (bit j of word w is position 64w + j, as in Guava).
    pub fn word(&self, w: usize) -> u64 {
        with_inner!(&self.inner, f => f.store().word(w))
    }

    /// Guava's `writeTo`: ordinal byte, k byte, big-endian `int` word count, big-endian words.
    pub fn write_to<W: Write>(&self, mut out: W) -> std::io::Result<()> {
        // k <= 255 and words <= i32::MAX are invariants of every constructor.
        out.write_all(&header(self.strategy(), self.hashes(), self.words() as u64))?;
        let mut buf = Vec::with_capacity(8 * 1024);
        for w in 0..self.words() {
            buf.extend_from_slice(&self.word(w).to_be_bytes());
            if buf.len() == buf.capacity() {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
        out.write_all(&buf)
    }

    /// The bytes [`write_to`](Self::write_to) writes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES + self.words() * 8);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Reads a whole Guava file: exactly one filter and nothing after it.
    ///
    /// Every malformed input is a [`BloomError::Corrupt`] naming the problem, never a panic:
    /// fewer than 6 header bytes, an ordinal other than 0 or 1, k = 0, a word count below 1,
    /// a body shorter or longer than the word count says. Nothing is allocated beyond the input's
    /// own size, however large the stated word count.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (strategy, hashes, words) = parse_header(bytes)?;
        let body = &bytes[HEADER_BYTES..];
        let extra = (body.len() as u64).saturating_sub(words * 8);
        let words = whole_body(body, words, || {
            format!("{extra} trailing bytes after the {words} words the header promises")
        })?;
        Self::from_words(words, hashes, strategy)
    }

    /// Reads a whole Guava file from a stream, as [`from_bytes`](Self::from_bytes) reads a slice:
    /// exactly one filter and nothing after it, with the same checks. It reads the header, then at
    /// most the bytes the header's word count implies plus one (to tell that something follows),
    /// so an endless input (`/dev/zero`) or a huge file behind a small header costs no more
    /// memory than the filter the header describes; a trailing-bytes error says at least one
    /// byte follows (a caller that knows the input's length can say how many).
    pub fn read_whole<R: Read>(mut input: R) -> Result<Self> {
        let mut header = [0u8; HEADER_BYTES];
        let got = read_up_to(&mut input, &mut header)?;
        let (strategy, hashes, words) = parse_header(&header[..got])?;
        let want = words * 8;
        let mut body = Vec::new();
        input
            .take(want + 1)
            .read_to_end(&mut body)
            .map_err(|e| corrupt(format!("reading the words failed: {e}")))?;
        let words = whole_body(&body, words, || {
            format!(
                "trailing bytes after the {words} words the header promises (the file should \
                 end after byte {})",
                HEADER_BYTES as u64 + want
            )
        })?;
        Self::from_words(words, hashes, strategy)
    }

    /// Guava's `readFrom`: reads one filter from a stream and stops after its last word, leaving
    /// anything after it unread (so trailing bytes are not detected: use
    /// [`from_bytes`](Self::from_bytes) for a whole file). The same checks otherwise; I/O errors
    /// other than an early end are returned as `Corrupt` naming them.
    pub fn read_from<R: Read>(mut input: R) -> Result<Self> {
        let mut header = [0u8; HEADER_BYTES];
        let got = read_up_to(&mut input, &mut header)?;
        let (strategy, hashes, words) = parse_header(&header[..got])?;
        // `take` + `read_to_end` grows the buffer with the data actually present, so a forged
        // word count cannot make us allocate gigabytes up front (Guava allocates first).
        let mut body = Vec::new();
        input
            .take(words * 8)
            .read_to_end(&mut body)
            .map_err(|e| corrupt(format!("reading the words failed: {e}")))?;
        if (body.len() as u64) < words * 8 {
            return Err(corrupt(format!(
                "truncated: the header promises {words} words ({} bytes) but the stream ended \
                 after {} bytes",
                words * 8,
                body.len()
            )));
        }
        let words = body
            .chunks_exact(8)
            .map(|c| u64::from_be_bytes(c.try_into().expect("chunks of 8")))
            .collect();
        Self::from_words(words, hashes, strategy)
    }

    /// The filter as a library [`Filter`] (e.g. for the harness), with Guava's hashing and
    /// positions; keys given to it as bytes must be the funnel's bytes.
    pub fn as_filter(&self) -> &dyn Filter {
        with_inner!(&self.inner, f => f)
    }
}

/// The big-endian words of a body that must hold exactly `words` of them: shorter is
/// "truncated", longer is `trailing()` (each reader says what it knows of the excess).
fn whole_body(body: &[u8], words: u64, trailing: impl FnOnce() -> String) -> Result<Vec<u64>> {
    let want = words * 8;
    if (body.len() as u64) < want {
        return Err(corrupt(format!(
            "truncated: the header promises {words} words ({want} bytes) but only {} bytes \
             follow it",
            body.len()
        )));
    }
    if body.len() as u64 > want {
        return Err(corrupt(trailing()));
    }
    Ok(body
        .chunks_exact(8)
        .map(|c| u64::from_be_bytes(c.try_into().expect("chunks of 8")))
        .collect())
}

/// Fills `buf` as far as the stream allows; returns how many bytes were read.
fn read_up_to<R: Read>(input: &mut R, buf: &mut [u8]) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(corrupt(format!("reading the header failed: {e}"))),
        }
    }
    Ok(got)
}

/// Validates the 6 header bytes; returns (strategy, k, word count).
/// Guava's 6-byte header: strategy ordinal, k, and the word count as a big-endian `int`. The
/// caller keeps k <= 255 and 1 <= words <= [`MAX_WORDS`] (every constructor here does).
pub fn header(strategy: GuavaStrategy, hashes: u32, words: u64) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[0] = strategy.ordinal();
    h[1] = hashes as u8;
    h[2..].copy_from_slice(&(words as i32).to_be_bytes());
    h
}

/// Reads Guava's header from the first [`HEADER_BYTES`] of `bytes`: (strategy, k, word count).
/// A short header, an ordinal other than 0 or 1, k = 0 or a word count below 1 is a
/// [`BloomError::Corrupt`] naming it.
pub fn parse_header(bytes: &[u8]) -> Result<(GuavaStrategy, u32, u64)> {
    if bytes.len() < HEADER_BYTES {
        return Err(corrupt(format!(
            "truncated: {} bytes, but the header alone is {HEADER_BYTES} bytes (strategy ordinal, \
             k, big-endian int word count)",
            bytes.len()
        )));
    }
    let strategy = GuavaStrategy::from_ordinal(bytes[0] as i8)?;
    let hashes = u32::from(bytes[1]);
    if hashes == 0 {
        return Err(corrupt(
            "k = 0 hash functions: Guava requires 1..=255".to_owned(),
        ));
    }
    let words = i32::from_be_bytes(bytes[2..6].try_into().expect("4 bytes"));
    if words < 1 {
        return Err(corrupt(format!(
            "word count {words}: it must be in 1..={}",
            i32::MAX
        )));
    }
    Ok((strategy, hashes, words as u64))
}

impl<F: Funnel> Filter for GuavaBloom<F> {
    fn name(&self) -> String {
        format!(
            "guava/{}/{}",
            F::ID,
            match self.strategy() {
                GuavaStrategy::Murmur128Mitz32 => GuavaMitz32::ID,
                GuavaStrategy::Murmur128Mitz64 => GuavaMitz64::ID,
            }
        )
    }
    fn digest(&self, bytes: &[u8]) -> Digest {
        Murmur3::digest(bytes)
    }
    fn insert_digest(&mut self, d: Digest) {
        with_inner!(&mut self.inner, f => f.insert_digest(d));
    }
    fn contains_digest(&self, d: Digest) -> bool {
        with_inner!(&self.inner, f => f.contains_digest(d))
    }
    fn bits(&self) -> u64 {
        self.bit_size()
    }
    fn hashes(&self) -> u32 {
        GuavaBloom::hashes(self)
    }
    fn memory_bytes(&self) -> usize {
        with_inner!(&self.inner, f => f.memory_bytes())
    }
    fn set_bits(&self) -> u64 {
        self.bit_count()
    }
    fn geometry(&self) -> Geometry {
        Geometry::Flat {
            bits: self.bit_size(),
            hashes: GuavaBloom::hashes(self),
        }
    }
    /// Guava's filter is the classic flat layout (`classic/murmur3/mitz64/flat` is its twin).
    fn layout(&self) -> Layout {
        Layout::Classic
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_matches_guava_31_1() {
        // Hand-computed from Guava's formulas: m = (long)(-n ln p / ln2^2), k = round(m/n ln 2).
        let p = guava_params(1000, 0.01, GuavaSizing::FromBitsPerKey).unwrap();
        assert_eq!((p.bits, p.hashes), (9585, 7));
        // n = 0 is treated as 1: m = (long)(1.4427) = 1, k = max(1, round(0.69)) = 1.
        let p = guava_params(0, 0.5, GuavaSizing::FromBitsPerKey).unwrap();
        assert_eq!((p.bits, p.hashes), (1, 1));
        // n = 1, p = 0.01: m = 9, old k = round(6.238) = 6, new k = round(6.644) = 7.
        let old = guava_params(1, 0.01, GuavaSizing::FromBitsPerKey).unwrap();
        let new = guava_params(1, 0.01, GuavaSizing::FromFpp).unwrap();
        assert_eq!((old.bits, old.hashes, new.bits, new.hashes), (9, 6, 9, 7));
    }

    #[test]
    fn sizing_mirrors_guavas_checks() {
        let s = GuavaSizing::FromBitsPerKey;
        for p in [0.0, 1.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(
                matches!(guava_params(10, p, s), Err(BloomError::InvalidRate { .. })),
                "p = {p}"
            );
        }
        // n = 1 at p = 0.9: m = (long)0.219 = 0 bits, which Guava refuses ("data length is zero").
        let err = guava_params(1, 0.9, s).unwrap_err();
        assert!(
            matches!(err, BloomError::OutOfRange { .. }) && err.to_string().contains("p = 0.9"),
            "{err}"
        );
        assert!(matches!(
            guava_params(u64::MAX, 0.5, s),
            Err(BloomError::OutOfRange { .. })
        ));
        // 2^31 words is one more than a Java int can count.
        assert!(matches!(
            guava_params(1 << 40, 0.01, s),
            Err(BloomError::TooLarge { .. })
        ));
        // p = 1e-80 needs k = 266 > 255.
        assert!(matches!(
            guava_params(1, 1e-80, s),
            Err(BloomError::InvalidHashes { .. })
        ));
    }
}
