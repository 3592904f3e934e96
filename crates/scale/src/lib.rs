//! The scale run: one filter for billions of keys, filled from every core, checked for false
//! negatives, and its false-positive rate measured to a stated precision against the layout's
//! theory, with the hash-width term ([`bloomlab_filters::theory::flat_reduced`],
//! [`bloomlab_filters::theory::split_block`]) and without it.
//!
//! Keys are generated, never held: worker threads take chunks of consecutive key indices from
//! one atomic cursor, hash each key as it is generated (only the digests of a chunk are kept),
//! and insert them through the filter's [`ConcurrentFill`] inserter, prefetching [`LOOKAHEAD`]
//! keys ahead. A layout that keeps each key in one block (split-block, 512-bit blocks) takes
//! chunks of 2^22 keys and touches the filter in region order
//! ([`ConcurrentFill::locality`]), so that a filter larger than the processor keeps translated
//! is written and read one part at a time; its fill goes in rounds of one chunk of 2^23 keys per
//! thread, grouped by region, each thread writing the regions it owns from every thread's chunk
//! with plain writes ([`SharedInsert::insert_digest_unshared`]). The classic layout, whose
//! probes spread over the whole filter, is filled the same way one probe at a time when its
//! positions spread past 2 GiB: chunks of 2^23 / k keys, whose bit positions ([`SharedInsert::positions`]) are grouped
//! by region before they are set (a smaller filter is filled in key order); its member check
//! reads them in the same order, counting the bits not set (a member has none), while its
//! non-member queries, each answered by its own probes, take chunks of [`GEN_BATCH`] in key
//! order. Every thread counts its own answers; the counts are summed when the threads join, so
//! no counter is shared per key. Members are keys `0..n` of the key set; non-members are keys
//! `n..`, as in the sweep.
//!
//! Supported filters: the flat classic layout (`classic/HASH/INDEX/flat`), `blocked512/HASH` and
//! `sbbf/HASH`. Any other registered name is refused with the reason (the textbook port refuses
//! every size past 2^31 - 1 bits: its bit count is a Java `int`).
//!
//! The run's settings and rows ([`ScaleConfig`], [`ScaleRow`], [`Outcome`]) are
//! `bloomlab_harness::scale`'s, re-exported here; `bloomlab_report::scale` renders them.

#![warn(missing_docs)]

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, RwLock};
use std::time::Instant;

use bloomlab_filters::filter::LOOKAHEAD;
use bloomlab_filters::theory::{flat, split_block_selection};
use bloomlab_filters::{
    Blocked512, Bloom, ConcurrentFill, Digest, EnhancedDoubleHash, Filter, FlatBits, Fnv1a,
    Geometry, GuavaMitz32, GuavaMitz64, KirschMitzenmacher, Lookup3, Murmur3, Params, SharedInsert,
    SplitBlock, Xxh3, Xxh3Wide, Xxh64, registry,
};
use bloomlab_harness::bloom::preflight::{MemoryBudget, MemoryNeed, check_memory};
use bloomlab_harness::bloom::trial::relative_half_width;
use bloomlab_harness::error::HarnessError;
use bloomlab_harness::keys::KeySet;
use bloomlab_harness::limits::GEN_BATCH;
use bloomlab_harness::stats::clopper_pearson;

pub use bloomlab_harness::scale::{Outcome, ScaleConfig, ScaleProgress, ScaleRow, ScaleStatus};

/// The layouts the scale run fills concurrently, as the names it accepts.
pub const SUPPORTED: &str = "classic/HASH/INDEX/flat, blocked512/HASH, sbbf/HASH";

/// Runs one scale run. `stop` is polled between chunks (set it from a Ctrl-C handler): the run
/// then finishes the phase's chunks in flight and returns the row marked `interrupted`.
///
/// Errors: an unknown filter name, or bad settings (n = 0, p outside (0, 1), no threads, a
/// precision or confidence out of range). A filter that cannot be built at this size (the
/// textbook port past 2^31 - 1 bits, a layout not filled concurrently) or does not fit in memory
/// is not an error: its row says `refused` and why.
pub fn run(
    config: &ScaleConfig,
    stop: &AtomicBool,
    progress: &(dyn Fn(ScaleProgress) + Sync),
) -> Result<ScaleRow, HarnessError> {
    check_settings(config)?;
    let keys = KeySet::new(config.keys.clone(), config.seed)?;
    if let Some(file) = keys.file() {
        file.check_members(config.n)?;
        let lines = file.lines.len() as u64;
        if config.n + config.query_offset >= lines {
            return Err(HarnessError::invalid(
                "query-offset",
                config.query_offset,
                &format!(
                    "below {} (the key file has {lines} distinct keys and n = {})",
                    lines - config.n,
                    config.n
                ),
            ));
        }
    }
    // Sizing first: an unknown name is an error; a size the variant cannot take is a refusal.
    let sized = match config.geometry {
        Some(g) => registry::capabilities(&config.filter)
            .and_then(|_| Params::explicit(g.bits, g.hashes))
            .map(|g| g.bits.div_ceil(8)),
        None => registry::sized_bytes(&config.filter, config.n, config.p),
    };
    let bytes = match sized {
        Ok(b) => b,
        Err(bloomlab_filters::BloomError::UnknownName { name, known }) => {
            return Err(HarnessError::UnknownFilter { name, known });
        }
        Err(e) => return Ok(ScaleRow::refused(config, e.to_string())),
    };
    let need = MemoryNeed {
        bytes: bytes + config.threads as u64 * BUFFER_BYTES,
        detail: format!(
            "the filter ({bytes} bytes) and up to {BUFFER_BYTES} bytes of digests per thread \
             ({} threads)",
            config.threads
        ),
    };
    if let Err(e) = check_memory(
        &need,
        &MemoryBudget::detect(config.memory_limit),
        "--memory-limit",
    ) {
        return Ok(ScaleRow::refused(config, e.to_string()));
    }
    let Some(row) = dispatch(config, &keys, stop, progress) else {
        return Ok(ScaleRow::refused(
            config,
            format!(
                "{} is not filled concurrently by the scale run (it runs {SUPPORTED}; HASH is \
                 fnv1a, murmur3, xxh3, xxh3-128, xxh64 or lookup3, INDEX km, edh, mitz32 or mitz64)",
                config.filter
            ),
        ));
    };
    Ok(row)
}

fn check_settings(config: &ScaleConfig) -> Result<(), HarnessError> {
    let bad =
        |what: &str, value: String, allowed: &str| Err(HarnessError::invalid(what, value, allowed));
    if config.n == 0 {
        return bad("n", "0".into(), "at least 1");
    }
    if !(config.p > 0.0 && config.p < 1.0) {
        return bad("p", config.p.to_string(), "strictly between 0 and 1");
    }
    if config.threads == 0 {
        return bad("threads", "0".into(), "at least 1");
    }
    if !(config.precision > 0.0 && config.precision.is_finite()) {
        return bad("precision", config.precision.to_string(), "greater than 0");
    }
    if !(config.confidence > 0.0 && config.confidence < 1.0) {
        return bad(
            "confidence",
            config.confidence.to_string(),
            "strictly between 0 and 1",
        );
    }
    if config.check_members == 0 {
        return bad("check-members", "0".into(), "at least 1");
    }
    if config.max_queries == 0 {
        return bad("max-queries", "0".into(), "at least 1");
    }
    let last = config
        .n
        .checked_add(config.query_offset)
        .and_then(|first| first.checked_add(config.max_queries));
    if last.is_none() {
        return bad(
            "query-offset",
            config.query_offset.to_string(),
            &format!(
                "at most 2^64 - 1 - n - max-queries ({})",
                u64::MAX.saturating_sub(config.n.saturating_add(config.max_queries))
            ),
        );
    }
    Ok(())
}

/// Runs [`run_typed`] for the concrete type `config.filter` names, or `None` for a name the
/// scale run does not fill concurrently.
fn dispatch(
    config: &ScaleConfig,
    keys: &KeySet,
    stop: &AtomicBool,
    progress: &(dyn Fn(ScaleProgress) + Sync),
) -> Option<ScaleRow> {
    let parts: Vec<&str> = config.filter.split('/').collect();
    macro_rules! with_hash {
        ($h:expr, $f:ident, $($rest:tt)*) => {
            match $h {
                "fnv1a" => { type $f = Fnv1a; $($rest)* }
                "murmur3" => { type $f = Murmur3; $($rest)* }
                "xxh3" => { type $f = Xxh3; $($rest)* }
                "xxh3-128" => { type $f = Xxh3Wide; $($rest)* }
                "xxh64" => { type $f = Xxh64; $($rest)* }
                "lookup3" => { type $f = Lookup3; $($rest)* }
                _ => None,
            }
        };
    }
    macro_rules! with_index {
        ($i:expr, $f:ident, $($rest:tt)*) => {
            match $i {
                "km" => { type $f = KirschMitzenmacher; $($rest)* }
                "edh" => { type $f = EnhancedDoubleHash; $($rest)* }
                "mitz32" => { type $f = GuavaMitz32; $($rest)* }
                "mitz64" => { type $f = GuavaMitz64; $($rest)* }
                _ => None,
            }
        };
    }
    match parts.as_slice() {
        ["classic", h, i, "flat"] => with_hash!(
            *h,
            H,
            with_index!(*i, I, {
                Some(run_typed::<Bloom<H, I, FlatBits>>(
                    config,
                    keys,
                    stop,
                    progress,
                    uniform_flat,
                ))
            })
        ),
        ["blocked512", h] => with_hash!(*h, H, {
            Some(run_typed::<Blocked512<H>>(
                config,
                keys,
                stop,
                progress,
                |g, n| g.fpr(n),
            ))
        }),
        ["sbbf", h] => with_hash!(*h, H, {
            Some(run_typed::<SplitBlock<H>>(
                config,
                keys,
                stop,
                progress,
                uniform_split_block,
            ))
        }),
        _ => None,
    }
}

/// The flat theory as if every position were equally likely (no hash-width term).
fn uniform_flat(g: Geometry, n: u64) -> f64 {
    flat(g.bits(), g.hashes(), n)
}

/// The split-block theory as if the block were chosen from 64 hash bits (no hash-width term).
fn uniform_split_block(g: Geometry, n: u64) -> f64 {
    match g {
        Geometry::SplitBlock {
            blocks,
            words,
            word_bits,
        } => split_block_selection(blocks, words, word_bits, n, 64),
        other => other.fpr(n),
    }
}

/// Key indices `from..to` in chunks, handed out to threads by one cursor.
struct Chunks {
    next: AtomicU64,
    to: u64,
    len: usize,
}

impl Chunks {
    /// Chunks of [`GEN_BATCH`] keys or, when `F` keeps a key in one block (its digests are
    /// then grouped by region before the filter is touched), of up to [`GROUPED_CHUNK`]: no
    /// more than an even share of `threads`, so that a short range still keeps every thread busy.
    fn of<F: ConcurrentFill>(from: u64, to: u64, threads: usize) -> Self {
        match grouped::<F>() {
            true => Self::up_to(from, to, threads, GROUPED_CHUNK),
            false => Self::up_to(from, to, threads, GEN_BATCH),
        }
    }
    /// Chunks of up to `most` keys (at least [`GEN_BATCH`]), no more than an even share of
    /// `threads`.
    fn up_to(from: u64, to: u64, threads: usize, most: usize) -> Self {
        let share = to.saturating_sub(from).div_ceil(threads.max(1) as u64);
        let len = (most as u64).min(share).max(GEN_BATCH as u64) as usize;
        Self {
            next: AtomicU64::new(from),
            to,
            len,
        }
    }
    fn take(&self) -> Option<(u64, usize)> {
        let start = self.next.fetch_add(self.len as u64, Ordering::Relaxed);
        (start < self.to).then(|| (start, (self.to - start).min(self.len as u64) as usize))
    }
}

/// Keys per chunk for a layout that keeps each key in one block: large, so that once grouped
/// by region ([`Buffers::in_memory_order`]) each region's accesses fall densely in one part of
/// the filter, whose page translations then stay cached while it is worked on. A filter of
/// 12 GB is past what this project's machine keeps translated (reports/scale: filled in key
/// order at about half the rate of a 1.2 GB one).
const GROUPED_CHUNK: usize = 1 << 22;
/// Keys per chunk in the fill of a layout that keeps each key in one block
/// ([`Phases::fill_by_owner`]): twice [`GROUPED_CHUNK`], so that each round writes more keys per
/// page of the filter (10^9 keys into the 10^10 row's 12 GB array, alternated runs: 2^23 filled
/// in 19.9 / 19.8 s against 21.6 / 21.9 s for 2^22, 2^24 in 19.2 / 18.9 s for twice the memory).
const OWNED_CHUNK: usize = 1 << 23;
/// The classic fill and member check group positions only when they spread past this many bits
/// (2 GiB): a smaller filter stays within what this project's machine keeps translated (random
/// writes into 1 GB ran at about twice the rate of 12 GB), and grouping costs two passes over
/// the positions (Guava's 32-bit scheme, whose positions stay in the first 256 MB of any filter,
/// filled its 12 GB row in 511 s grouped, against its committed key-order row's 410 s).
const GROUP_POSITIONS_PAST: u64 = 1 << 34;
/// How many bit positions (one line each) ahead a grouped classic fill or member check
/// prefetches (10^9 keys into the 10^10 row's 12 GB array: 16 positions ahead filled slower than
/// 32, and 64 to 128 no slower).
const POSITION_LOOKAHEAD: usize = 4 * LOOKAHEAD;
/// How many keys ahead [`Phases::fill_by_owner`] prefetches: plain writes, unlike locked ones,
/// let that many misses overlap (10^9 keys into the 12 GB array, chunks of 2^24, alternated:
/// 16 ahead 21.9 / 21.9 s, 32 ahead 19.8 / 19.6 s, 64 ahead 19.5 / 19.3 s, 128 ahead 18.9 / 19.3 s).
const OWNED_LOOKAHEAD: usize = 4 * LOOKAHEAD;
/// Regions a grouped chunk is split into, as bits: 2^9 regions (23 MB each in a 12 GB filter).
const REGION_BITS: u32 = 9;
/// How many regions that is.
const REGIONS: usize = 1 << REGION_BITS;
/// Bit positions per chunk when a layout's probes spread over the whole filter (the classic
/// one): its fill sorts each chunk's positions by region ([`Buffers::positions_in_memory_order`]),
/// 2^23 / k keys of k positions each (2^22, half as many positions per region and pass,
/// filled 10^9 keys into the 10^10 row's 12 GB array 13% slower, alternated runs).
const GROUPED_POSITIONS: usize = 1 << 23;
/// Keys per classic chunk at most: with few probes per key, [`GROUPED_POSITIONS`] keys' digests
/// would outweigh their positions.
const GROUPED_POSITION_KEYS: usize = 1 << 21;
/// Bytes of buffers one worker thread holds at most (256 MiB): a block layout's fill chunk of
/// digests, in key order and grouped (a classic chunk's digests and its positions, in key order
/// and grouped by region, are less).
const BUFFER_BYTES: u64 = (2 * OWNED_CHUNK * size_of::<Digest>()) as u64;
const _: () = assert!(
    GROUPED_POSITION_KEYS * size_of::<Digest>() + 2 * GROUPED_POSITIONS * size_of::<u64>()
        <= BUFFER_BYTES as usize
);

/// Whether `F`'s chunks are grouped by region before the filter is touched.
fn grouped<F: ConcurrentFill>() -> bool {
    F::locality(Digest::from_u64(0)).is_some()
}

/// One thread's chunk in [`Phases::fill_by_owner`]: its digests in key order and grouped by
/// region, where each region starts, and the keys it holds (0: none this round).
struct Slot {
    keyed: Vec<Digest>,
    grouped: Vec<Digest>,
    starts: [usize; REGIONS + 1],
    len: usize,
}

impl Default for Slot {
    fn default() -> Self {
        Self {
            keyed: Vec::new(),
            grouped: Vec::new(),
            starts: [0; REGIONS + 1],
            len: 0,
        }
    }
}

/// The barrier between [`Phases::fill_by_owner`]'s steps, which a thread that panics breaks
/// (through [`BreakOnPanic`]) instead of leaving the others waiting for it forever.
struct Rounds {
    state: Mutex<RoundState>,
    turn: Condvar,
    threads: usize,
}

#[derive(Default)]
struct RoundState {
    /// Threads arrived in this round.
    arrived: usize,
    round: u64,
    /// A thread panicked: nobody waits any more.
    broken: bool,
}

impl Rounds {
    fn new(threads: usize) -> Self {
        Self {
            state: Mutex::default(),
            turn: Condvar::new(),
            threads,
        }
    }

    /// Waits until every thread has arrived: `false` when a thread panicked instead.
    fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if s.broken {
            return false;
        }
        s.arrived += 1;
        if s.arrived == self.threads {
            s.arrived = 0;
            s.round += 1;
            self.turn.notify_all();
            return true;
        }
        let round = s.round;
        while s.round == round && !s.broken {
            s = self.turn.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        !s.broken
    }
}

/// Breaks its [`Rounds`] when its thread unwinds.
struct BreakOnPanic<'a>(&'a Rounds);

impl Drop for BreakOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut s = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
            s.broken = true;
            self.0.turn.notify_all();
        }
    }
}

/// One worker thread's reused buffers: a chunk's digests in key order, and grouped by region; a
/// classic chunk's bit positions in key order, and grouped by region.
#[derive(Default)]
struct Buffers {
    keyed: Vec<Digest>,
    by_region: Vec<Digest>,
    positions: Vec<u64>,
    positions_by_region: Vec<u64>,
}

impl Buffers {
    /// The chunk's digests in the order to touch the filter in: grouped by the top
    /// [`REGION_BITS`] bits of [`ConcurrentFill::locality`] (a counting sort: one pass to count,
    /// one to place, region 0 first), or in key order when `F` spreads a key over the filter.
    fn in_memory_order<F: ConcurrentFill>(&mut self) -> &[Digest] {
        if !grouped::<F>() {
            return &self.keyed;
        }
        let region = |d: Digest| F::locality(d).map_or(0, |l| (l >> (64 - REGION_BITS)) as usize);
        by_region(
            &self.keyed,
            &mut self.by_region,
            Digest::from_u64(0),
            region,
        )
    }

    /// The bit positions the chunk's digests (in `keyed`) set, grouped by region: by their top
    /// [`REGION_BITS`] bits below `span` ([`SharedInsert::position_span`]; a counting sort, as
    /// [`in_memory_order`](Self::in_memory_order) does for whole keys).
    fn positions_in_memory_order<S: SharedInsert>(&mut self, shared: &S, span: u64) -> &[u64] {
        self.positions.clear();
        for &d in &self.keyed {
            shared.positions(d, |p| self.positions.push(p));
        }
        let width = u64::BITS - span.saturating_sub(1).leading_zeros();
        let shift = width.saturating_sub(REGION_BITS);
        by_region(&self.positions, &mut self.positions_by_region, 0, |p| {
            (p >> shift) as usize
        })
    }
}

/// `items` grouped by `region` (below 2^[`REGION_BITS`]) into `out` (reused, grown with `zero`),
/// region 0 first, each region in its original order: a counting sort, one pass to count and one
/// to place.
fn by_region<'a, T: Copy>(
    items: &[T],
    out: &'a mut Vec<T>,
    zero: T,
    region: impl Fn(T) -> usize,
) -> &'a [T] {
    by_region_from(items, out, zero, region, &mut [0; REGIONS + 1])
}

/// [`by_region`], also leaving in `starts` where each region begins in the result (region `r`
/// is `starts[r]..starts[r + 1]`).
fn by_region_from<'a, T: Copy>(
    items: &[T],
    out: &'a mut Vec<T>,
    zero: T,
    region: impl Fn(T) -> usize,
    starts: &mut [usize; REGIONS + 1],
) -> &'a [T] {
    let mut counts = [0usize; REGIONS + 1];
    for &t in items {
        counts[region(t) + 1] += 1;
    }
    for r in 1..counts.len() {
        counts[r] += counts[r - 1];
    }
    *starts = counts;
    if out.len() < items.len() {
        out.resize(items.len(), zero);
    }
    for &t in items {
        let slot = &mut counts[region(t)];
        out[*slot] = t;
        *slot += 1;
    }
    &out[..items.len()]
}

/// Digests of the keys at `indices`, in order, into `out` (reused): each key is hashed as it is
/// generated, never stored.
fn digests(
    keys: &KeySet,
    indices: impl IntoIterator<Item = u64>,
    digest: impl Fn(&[u8]) -> Digest,
    out: &mut Vec<Digest>,
) {
    out.clear();
    keys.for_each_key(indices, |b| out.push(digest(b)));
}

/// Runs `work` on `threads` scoped threads and returns their results. `work` is a trait object,
/// called once per thread (never per key): the thread machinery is compiled once per result type
/// instead of once per layout and phase (216 copies, about a tenth of this crate's code).
fn on_threads<T: Send>(threads: usize, work: &(dyn Fn() -> T + Sync)) -> Vec<T> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(work)).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("scale worker panicked"))
            .collect()
    })
}

/// What every phase of one run shares: its settings, keys, stop flag and progress callback.
struct Phases<'a> {
    config: &'a ScaleConfig,
    keys: &'a KeySet,
    stop: &'a AtomicBool,
    progress: &'a (dyn Fn(ScaleProgress) + Sync),
    /// Bits past which a classic filter's probes are grouped one by one
    /// ([`GROUP_POSITIONS_PAST`]; the unit tests lower it to take that path on small filters).
    group_positions_past: u64,
}

impl Phases<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Whether `F`'s probes, below `span` ([`SharedInsert::position_span`]), are grouped one by
    /// one: a layout that spreads a key over a filter too large to touch in key order.
    fn by_position<F: ConcurrentFill>(&self, span: u64) -> bool {
        !grouped::<F>() && span > self.group_positions_past
    }

    /// Keys `0..n` in chunks: of up to [`GROUPED_POSITIONS`] probes of `hashes` (and at most
    /// [`GROUPED_POSITION_KEYS`] keys) when grouped `by_position`, else as `F` takes them
    /// ([`Chunks::of`]).
    fn chunks<F: ConcurrentFill>(&self, n: u64, by_position: bool, hashes: u32) -> Chunks {
        match by_position {
            true => {
                let most = (GROUPED_POSITIONS / hashes.max(1) as usize).min(GROUPED_POSITION_KEYS);
                Chunks::up_to(0, n, self.config.threads, most)
            }
            false => Chunks::of::<F>(0, n, self.config.threads),
        }
    }

    /// Hands the chunks of `chunks` to every thread until they run out or the run is stopped:
    /// each thread calls `work(tally, start, len, buffers)` per chunk with its own reused
    /// buffers, then reports `phase` progress as `base` plus the keys done in this call, out of
    /// `total`. Returns each thread's tally.
    fn each_chunk<T: Default + Send>(
        &self,
        chunks: &Chunks,
        (phase, base, total): (&'static str, u64, u64),
        work: impl Fn(&mut T, u64, usize, &mut Buffers) + Sync,
    ) -> Vec<T> {
        let done = AtomicU64::new(0);
        on_threads(self.config.threads, &|| {
            let mut buffers = Buffers {
                keyed: Vec::with_capacity(chunks.len),
                ..Buffers::default()
            };
            let mut tally = T::default();
            while !self.stopped() {
                let Some((start, len)) = chunks.take() else {
                    break;
                };
                work(&mut tally, start, len, &mut buffers);
                let so_far = done.fetch_add(len as u64, Ordering::Relaxed) + len as u64;
                (self.progress)(ScaleProgress {
                    phase,
                    done: base + so_far,
                    total,
                });
            }
            tally
        })
    }

    /// Allocates the filter (sized for (n, p), or the explicit geometry) and records its size
    /// and the allocation time; `Err` says why the layout cannot take the size (the refusal).
    fn allocate<F: ConcurrentFill + Filter>(&self, row: &mut ScaleRow) -> Result<F, String> {
        let t = Instant::now();
        let built = match self.config.geometry {
            Some(g) => F::with_params(g),
            None => F::sized_for(self.config.n, self.config.p),
        };
        let filter = built.map_err(|e| e.to_string())?;
        let (start, len) = filter.bits_region();
        if self.config.huge_pages {
            os::advise_huge_pages(start, len);
        }
        // Fault the (still untouched, zero) pages in now, from every worker thread at once, so
        // the kernel's zeroing runs on all cores here instead of on one thread (the former
        // MADV_COLLAPSE over the whole filter) or one page fault at a time inside the fill.
        let region = os::Region {
            start,
            len,
            huge: self.config.huge_pages,
        };
        let slices = os::slices(start as usize, len, self.config.threads);
        let next = AtomicU64::new(0);
        on_threads(self.config.threads, &|| {
            while let Some((from, to)) = slices.get(next.fetch_add(1, Ordering::Relaxed) as usize) {
                region.populate(*from, *to);
            }
        });
        row.alloc_secs = t.elapsed().as_secs_f64();
        row.bits = filter.bits();
        row.hashes = filter.hashes();
        row.memory_bytes = filter.memory_bytes() as u64;
        row.bits_per_key = row.bits as f64 / self.config.n as f64;
        Ok(filter)
    }

    /// Inserts members `0..n` through the shared inserter, prefetching [`LOOKAHEAD`] keys ahead.
    fn fill<F: ConcurrentFill>(&self, filter: &mut F, row: &mut ScaleRow) {
        let n = self.config.n;
        let t = Instant::now();
        let shared = filter.shared();
        let span = shared.position_span();
        let by_position = self.by_position::<F>(span);
        let threads = self.config.threads;
        let inserted: u64 = match shared.blocks() {
            Some(blocks) => {
                let chunks = Chunks::up_to(0, n, threads, OWNED_CHUNK);
                self.fill_by_owner(&shared, blocks, &chunks)
            }
            None => {
                let chunks = self.chunks::<F>(n, by_position, row.hashes);
                self.fill_shared(&shared, span, by_position, &chunks)
            }
        };
        row.insert_secs = t.elapsed().as_secs_f64();
        row.inserted = inserted;
        row.insert_per_sec_per_core = per_core(inserted, row.insert_secs, self.config.threads);
    }

    /// The fill of a layout whose keys spread over the whole filter: every thread inserts its
    /// own chunks with atomic writes, in key order or, `by_position`, one probe at a time
    /// grouped by region. Returns the keys inserted.
    fn fill_shared<S: SharedInsert>(
        &self,
        shared: &S,
        span: u64,
        by_position: bool,
        chunks: &Chunks,
    ) -> u64 {
        let n = self.config.n;
        self.each_chunk(chunks, ("insert", 0, n), |mine: &mut u64, start, len, b| {
            let indices = start..start + len as u64;
            digests(self.keys, indices, |k| shared.digest(k), &mut b.keyed);
            if !by_position {
                for i in 0..b.keyed.len() {
                    if let Some(&ahead) = b.keyed.get(i + LOOKAHEAD) {
                        shared.prefetch_digest(ahead);
                    }
                    shared.insert_digest(b.keyed[i]);
                }
            } else {
                // Probes spread over the whole filter: grouped one by one instead.
                let ps = b.positions_in_memory_order(shared, span);
                for i in 0..ps.len() {
                    if let Some(&ahead) = ps.get(i + POSITION_LOOKAHEAD) {
                        shared.prefetch_position(ahead);
                    }
                    shared.set_position(ps[i]);
                }
            }
            *mine += len as u64;
        })
        .into_iter()
        .sum()
    }

    /// The fill of a layout that keeps each key in one block ([`SharedInsert::blocks`]), in
    /// rounds. Every thread generates a chunk and groups its digests by region, a region being
    /// a run of whole blocks; past a barrier, each thread inserts, from every thread's chunk, the
    /// digests of its own share of the regions, with plain writes (no locked instruction: no
    /// other thread ever writes its blocks); a second barrier frees the chunks for the next
    /// round. Returns the keys inserted.
    fn fill_by_owner<S: SharedInsert>(&self, shared: &S, blocks: u64, chunks: &Chunks) -> u64 {
        let (n, threads) = (self.config.n, self.config.threads);
        // Region `block >> shift`: at most REGIONS of them, and at least half as many.
        let width = u64::BITS - blocks.saturating_sub(1).leading_zeros();
        let shift = width.saturating_sub(REGION_BITS);
        let regions = (blocks.saturating_sub(1) >> shift) as usize + 1;
        let slots: Vec<RwLock<Slot>> = (0..threads).map(|_| RwLock::default()).collect();
        let rounds = Rounds::new(threads);
        let (ids, done) = (AtomicUsize::new(0), AtomicU64::new(0));
        on_threads(threads, &|| {
            let _breaks = BreakOnPanic(&rounds);
            let me = ids.fetch_add(1, Ordering::Relaxed);
            let (lo, hi) = (me * regions / threads, (me + 1) * regions / threads);
            let mut inserted = 0u64;
            loop {
                {
                    let mut slot = slots[me].write().unwrap_or_else(PoisonError::into_inner);
                    let slot = &mut *slot;
                    slot.len = 0;
                    let chunk = if self.stopped() { None } else { chunks.take() };
                    if let Some((start, len)) = chunk {
                        let indices = start..start + len as u64;
                        digests(self.keys, indices, |k| shared.digest(k), &mut slot.keyed);
                        let region = |d: Digest| (shared.block(d) >> shift) as usize;
                        let out = &mut slot.grouped;
                        by_region_from(
                            &slot.keyed,
                            out,
                            Digest::from_u64(0),
                            region,
                            &mut slot.starts,
                        );
                        slot.len = len;
                        inserted += len as u64;
                    }
                }
                if !rounds.wait() {
                    break;
                }
                let mut any = false;
                for slot in &slots {
                    let slot = slot.read().unwrap_or_else(PoisonError::into_inner);
                    if slot.len == 0 {
                        // No chunk this round: its buffers still hold the last round's keys.
                        continue;
                    }
                    any = true;
                    let ds = &slot.grouped[slot.starts[lo]..slot.starts[hi]];
                    for i in 0..ds.len() {
                        if let Some(&ahead) = ds.get(i + OWNED_LOOKAHEAD) {
                            shared.prefetch_digest(ahead);
                        }
                        // SAFETY: block `b` is in region `b >> shift`; this thread alone
                        // inserts the regions `lo..hi`, and only here, between two barriers;
                        // nothing else touches the filter during the fill.
                        unsafe { shared.insert_digest_unshared(ds[i]) };
                    }
                }
                let mine = slots[me].read().unwrap_or_else(PoisonError::into_inner).len;
                let so_far = done.fetch_add(mine as u64, Ordering::Relaxed) + mine as u64;
                (self.progress)(ScaleProgress {
                    phase: "insert",
                    done: so_far,
                    total: n,
                });
                if !any || !rounds.wait() {
                    break;
                }
            }
            inserted
        })
        .into_iter()
        .sum()
    }

    /// Looks up every member, or an even sample of `check_members` of them, and records the
    /// false negatives and the first member not found. A classic filter whose probes the fill
    /// grouped is read the same way: a chunk's probes in region order, counting the bits not
    /// set; only a chunk with one is looked up again key by key, to name its missing members.
    fn check_members<F: ConcurrentFill + Filter>(&self, filter: &mut F, row: &mut ScaleRow) {
        let n = self.config.n;
        let t = Instant::now();
        let sample = self.config.check_members.min(n);
        let index = |j: u64| sampled_member(j, sample, n);
        let progress = ("members", 0, sample);
        let span = filter.shared().position_span();
        let by_position = self.by_position::<F>(span);
        let chunks = self.chunks::<F>(sample, by_position, row.hashes);
        let tallies = match by_position {
            true => {
                let shared = filter.shared();
                self.each_chunk(
                    &chunks,
                    progress,
                    |mine: &mut MemberTally, start, len, b| {
                        let indices = (start..start + len as u64).map(index);
                        digests(self.keys, indices, |k| shared.digest(k), &mut b.keyed);
                        let ps = b.positions_in_memory_order(&shared, span);
                        if unset_positions(&shared, ps) > 0 {
                            let found = b.keyed.iter().map(|&d| shared.all_positions_set(d));
                            mine.record_missing(found, |i| index(start + i as u64));
                        }
                        mine.checked += len as u64;
                    },
                )
            }
            false => {
                let filter = &*filter;
                self.each_chunk(
                    &chunks,
                    progress,
                    |mine: &mut MemberTally, start, len, b| {
                        let indices = (start..start + len as u64).map(index);
                        digests(self.keys, indices, |k| filter.digest(k), &mut b.keyed);
                        let found = lookups(filter, b.in_memory_order::<F>())
                            .filter(|&f| f)
                            .count();
                        if found < len {
                            // A grouped chunk lost the key order: look its keys up again.
                            let found = lookups(filter, &b.keyed);
                            mine.record_missing(found, |i| index(start + i as u64));
                        }
                        mine.checked += len as u64;
                    },
                )
            }
        };
        row.members_secs = t.elapsed().as_secs_f64();
        row.members_checked = tallies.iter().map(|r| r.checked).sum();
        row.false_negatives = tallies.iter().map(|r| r.missing).sum();
        row.first_false_negative = tallies
            .iter()
            .filter_map(|r| r.first)
            .min()
            .map_or(String::new(), |i| i.to_string());
        row.members_per_sec_per_core =
            per_core(row.members_checked, row.members_secs, self.config.threads);
    }

    /// Queries non-members from key `n + query_offset` on, in rounds, until the exact interval
    /// is as narrow as `precision` asks, `max_queries` (or the key file) runs out, or the run is
    /// stopped; records the counts and the interval.
    fn query_non_members<F: ConcurrentFill + Filter>(&self, filter: &F, row: &mut ScaleRow) {
        let config = self.config;
        let t = Instant::now();
        let first = config.n + config.query_offset;
        // A key file has only so many non-members past the offset (`run` checked there is one).
        let max_queries = self
            .keys
            .available()
            .map_or(config.max_queries, |a| config.max_queries.min(a - first));
        let (mut queries, mut positives) = (0u64, 0u64);
        let mut target = (1u64 << 20).min(max_queries);
        loop {
            let tallies = self.each_chunk(
                &Chunks::of::<F>(first + queries, first + target, self.config.threads),
                ("non-members", queries, target),
                |(asked, yes): &mut (u64, u64), start, len, b| {
                    let indices = start..start + len as u64;
                    digests(self.keys, indices, |k| filter.digest(k), &mut b.keyed);
                    let ds = b.in_memory_order::<F>();
                    *yes += lookups(filter, ds).filter(|&f| f).count() as u64;
                    *asked += len as u64;
                },
            );
            queries += tallies.iter().map(|c| c.0).sum::<u64>();
            positives += tallies.iter().map(|c| c.1).sum::<u64>();
            if self.stopped() || queries >= max_queries {
                break;
            }
            if relative_half_width(positives, queries, config.confidence) <= config.precision {
                break;
            }
            target = next_target(queries, positives, config).min(max_queries);
        }
        row.queries_secs = t.elapsed().as_secs_f64();
        row.queries = queries;
        row.false_positives = positives;
        row.queries_per_sec_per_core = per_core(queries, row.queries_secs, config.threads);
        if queries > 0 {
            let (lo, hi) = clopper_pearson(positives, queries, config.confidence);
            row.fpr = positives as f64 / queries as f64;
            row.ci_low = lo;
            row.ci_high = hi;
            row.precision = relative_half_width(positives, queries, config.confidence);
        }
    }

    /// Records the filter's fill, its theories (with and without the hash-width term) and the
    /// rate its own bits imply, and the bytes the kernel backed with huge pages.
    fn describe_bits<F: ConcurrentFill + Filter>(
        &self,
        filter: &F,
        uniform_theory: fn(Geometry, u64) -> f64,
        row: &mut ScaleRow,
    ) {
        let n = self.config.n;
        let t = Instant::now();
        row.fill_ratio = filter.fill_ratio();
        row.fpr_given_bits = filter.fpr_given_bits();
        row.fpr_theory = filter.fpr_theory(n);
        row.fpr_theory_uniform = uniform_theory(filter.geometry(), n);
        row.theory_in_interval = row.ci_low <= row.fpr_theory && row.fpr_theory <= row.ci_high;
        row.stats_secs = t.elapsed().as_secs_f64();
        let (start, len) = filter.bits_region();
        row.huge_page_bytes = os::huge_page_bytes(start, len);
    }
}

/// One thread's member check: members looked up, not found, and the first not found.
#[derive(Default)]
struct MemberTally {
    checked: u64,
    missing: u64,
    first: Option<u64>,
}

impl MemberTally {
    /// Counts the members a chunk did not find (`found`, in key order; `member(i)` is the i-th
    /// one's index) and keeps the lowest.
    fn record_missing(&mut self, found: impl Iterator<Item = bool>, member: impl Fn(usize) -> u64) {
        for (i, found) in found.enumerate() {
            if !found {
                self.missing += 1;
                let m = member(i);
                self.first = Some(self.first.map_or(m, |f| f.min(m)));
            }
        }
    }
}

/// How many of the bits at `positions` are not set, read in the order given, prefetching
/// [`POSITION_LOOKAHEAD`] ahead.
fn unset_positions<S: SharedInsert>(shared: &S, positions: &[u64]) -> usize {
    let mut unset = 0;
    for i in 0..positions.len() {
        if let Some(&ahead) = positions.get(i + POSITION_LOOKAHEAD) {
            shared.prefetch_position(ahead);
        }
        unset += usize::from(!shared.position_is_set(positions[i]));
    }
    unset
}

/// One run of filter type `F`, phase by phase: allocate, fill, member check, non-member
/// queries, the filter's own statistics, then the verdict. A stop request ends it after the
/// phase in flight, with the row `interrupted` and saying how far it got.
fn run_typed<F: ConcurrentFill + Filter>(
    config: &ScaleConfig,
    keys: &KeySet,
    stop: &AtomicBool,
    progress: &(dyn Fn(ScaleProgress) + Sync),
    uniform_theory: fn(Geometry, u64) -> f64,
) -> ScaleRow {
    let phases = Phases {
        config,
        keys,
        stop,
        progress,
        group_positions_past: GROUP_POSITIONS_PAST,
    };
    let n = config.n;
    let mut row = ScaleRow::empty(config);
    let mut filter = match phases.allocate::<F>(&mut row) {
        Ok(f) => f,
        Err(why) => return ScaleRow::refused(config, why),
    };

    phases.fill(&mut filter, &mut row);
    if phases.stopped() {
        // Chunks are taken in order, so the members inserted are not a prefix when threads
        // stopped at different chunks; the run reports how far it got and measures nothing more.
        let note = format!(
            "stopped during the fill after {} of {n} members",
            row.inserted
        );
        return finish(row, ScaleStatus::Interrupted, note);
    }

    phases.check_members(&mut filter, &mut row);
    if phases.stopped() {
        let note = format!(
            "stopped during the member check after {} of {} members (all {n} were inserted)",
            row.members_checked,
            config.check_members.min(n)
        );
        return finish(row, ScaleStatus::Interrupted, note);
    }

    phases.query_non_members(&filter, &mut row);
    phases.describe_bits(&filter, uniform_theory, &mut row);
    drop(filter);
    verdict(row, phases.stopped())
}

/// The finished row's status: interrupted during the queries, failed with false negatives, or
/// done.
fn verdict(row: ScaleRow, stopped: bool) -> ScaleRow {
    if stopped {
        let note = format!(
            "stopped after {} non-member queries (fill and member check complete)",
            row.queries
        );
        return finish(row, ScaleStatus::Interrupted, note);
    }
    if row.false_negatives > 0 {
        let note = format!(
            "{} of {} members checked were not found (first: member {})",
            row.false_negatives, row.members_checked, row.first_false_negative
        );
        return finish(row, ScaleStatus::Failed, note);
    }
    finish(row, ScaleStatus::Done, String::new())
}

/// Answers for a batch of digests, prefetching [`LOOKAHEAD`] ahead.
fn lookups<'a, F: Filter>(filter: &'a F, ds: &'a [Digest]) -> impl Iterator<Item = bool> + 'a {
    (0..ds.len()).map(move |i| {
        if let Some(&ahead) = ds.get(i + LOOKAHEAD) {
            filter.prefetch_digest(ahead);
        }
        filter.contains_digest(ds[i])
    })
}

/// Member `floor(j n / s)`: s indices spread evenly over `0..n` (all of them when s = n).
fn sampled_member(j: u64, s: u64, n: u64) -> u64 {
    (u128::from(j) * u128::from(n) / u128::from(s)) as u64
}

fn per_core(keys: u64, secs: f64, threads: usize) -> f64 {
    if secs > 0.0 {
        keys as f64 / secs / threads as f64
    } else {
        0.0
    }
}

/// The query count at which the interval should reach the precision: the half-width shrinks as
/// 1/sqrt(positives), so scale by the squared ratio (at least doubling when nothing was seen),
/// with 10% to spare.
fn next_target(queries: u64, positives: u64, config: &ScaleConfig) -> u64 {
    if positives == 0 {
        return queries.saturating_mul(4);
    }
    let reached = relative_half_width(positives, queries, config.confidence);
    let factor = (reached / config.precision).powi(2) * 1.1;
    ((queries as f64 * factor.max(1.1)).ceil() as u64).max(queries + GEN_BATCH as u64)
}

fn finish(mut row: ScaleRow, status: ScaleStatus, note: String) -> ScaleRow {
    row.status = status;
    row.note = note;
    row.peak_rss_bytes = os::peak_rss();
    row
}

/// What the operating system tells about this process's memory (Linux; zeros elsewhere).
mod os {
    /// Peak resident set size, bytes (`VmHWM` of `/proc/self/status`).
    pub fn peak_rss() -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines().find_map(|l| {
                    let kib = l.strip_prefix("VmHWM:")?.trim().strip_suffix("kB")?;
                    kib.trim().parse::<u64>().ok()
                })
            })
            .map_or(0, |kib| kib * 1024)
    }

    const HUGE: usize = 2 << 20;

    /// Asks for 2 MiB pages over `[start, start + len)` (`MADV_HUGEPAGE`), before any page is
    /// touched, so the first fault of each 2 MiB takes a huge page (THP `madvise` mode). Only a
    /// hint: failures are ignored, and [`huge_page_bytes`] reports what the kernel did.
    ///
    /// `MADV_COLLAPSE` is left to [`Region::populate`]: over the untouched pages of a fresh
    /// allocation it zeroes the range synchronously, which on one thread was the 36 s of a
    /// 12 GB filter; per slice, every thread does its share.
    #[cfg(target_os = "linux")]
    pub fn advise_huge_pages(start: *const u8, len: usize) {
        let begin = (start as usize).div_ceil(HUGE) * HUGE;
        let end = (start as usize + len) / HUGE * HUGE;
        if end <= begin {
            return;
        }
        // SAFETY: the range lies inside one live allocation of this process (the filter's
        // words, aligned inwards to whole huge pages); the advice changes how the pages are
        // backed, never their contents.
        unsafe {
            libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE);
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn advise_huge_pages(_start: *const u8, _len: usize) {}

    /// Byte ranges `[from, to)` cutting `0..len` (a region starting at address `start`) into
    /// about four pieces per thread, so a slow thread does not hold up the others, with every
    /// boundary inside the region on a 2 MiB address boundary: no huge page is split between
    /// two threads (each would leave it to the other to collapse).
    pub fn slices(start: usize, len: usize, threads: usize) -> Vec<(usize, usize)> {
        let pieces = threads.max(1) * 4;
        let step = len.div_ceil(pieces).div_ceil(HUGE).max(1) * HUGE;
        // Offsets of the region's 2 MiB address boundaries: head, head + step, ...
        let head = start.div_ceil(HUGE) * HUGE - start;
        let mut cuts = vec![0];
        cuts.extend((head..len).step_by(step).filter(|&c| c > 0));
        cuts.push(len);
        cuts.windows(2).map(|w| (w[0], w[1])).collect()
    }

    /// The filter's memory, as the run hands it to the kernel: never read or written
    /// through this, only faulted in.
    pub struct Region {
        pub start: *const u8,
        pub len: usize,
        /// Back it with huge pages (`MADV_COLLAPSE` before populating).
        pub huge: bool,
    }

    // SAFETY: a `Region` is only passed to `madvise`, which neither reads nor writes the bytes.
    unsafe impl Sync for Region {}

    impl Region {
        /// Faults in the pages of bytes `[from, to)` of the region for writing without changing
        /// their contents (zero): with `huge`, first `MADV_COLLAPSE` (Linux 6.1) over its whole
        /// 2 MiB pages, which backs them with huge pages even where a plain fault would fall
        /// back to 4 KiB ones; then `MADV_POPULATE_WRITE` (Linux 5.14) for the rest. Only an
        /// early start: on failure (an older kernel) the fill faults them in as before.
        #[cfg(target_os = "linux")]
        pub fn populate(&self, from: usize, to: usize) {
            // Page-aligned outwards: the pages lie in the same allocation (the allocator's
            // mapping is page-granular), and populating never alters a byte.
            const PAGE: usize = 4096;
            // Not in every libc crate version.
            const MADV_POPULATE_WRITE: libc::c_int = 23;
            const MADV_COLLAPSE: libc::c_int = 25;
            let lo = (self.start as usize + from.min(self.len)) / PAGE * PAGE;
            let hi = (self.start as usize + to.min(self.len)).div_ceil(PAGE) * PAGE;
            if hi <= lo {
                return;
            }
            let (h_lo, h_hi) = (lo.div_ceil(HUGE) * HUGE, hi / HUGE * HUGE);
            if self.huge && h_lo < h_hi {
                // SAFETY: `[h_lo, h_hi)` lies inside `[lo, hi)`, pages of the filter's live
                // allocation; collapsing changes how they are backed, never their contents.
                unsafe {
                    libc::madvise(h_lo as *mut libc::c_void, h_hi - h_lo, MADV_COLLAPSE);
                }
            }
            // SAFETY: `[lo, hi)` covers only pages of the filter's live allocation; this advice
            // faults them in and leaves their contents unchanged.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, MADV_POPULATE_WRITE);
            }
        }

        #[cfg(not(target_os = "linux"))]
        pub fn populate(&self, _from: usize, _to: usize) {}
    }

    /// Bytes of `[start, start + len)` backed by huge pages: the `AnonHugePages` of the mappings
    /// overlapping it in `/proc/self/smaps` (a mapping may be larger than the filter).
    pub fn huge_page_bytes(start: *const u8, len: usize) -> u64 {
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return 0;
        };
        let (lo, hi) = (start as usize, start as usize + len);
        let mut inside = false;
        let mut total = 0;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((a, b)) = range.split_once('-')
                && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                inside = a < hi && b > lo;
                continue;
            }
            if inside
                && let Some(kib) = line.strip_prefix("AnonHugePages:")
                && let Some(kib) = kib.trim().strip_suffix("kB")
                && let Ok(kib) = kib.trim().parse::<u64>()
            {
                total += kib * 1024;
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_harness::keys::KeySetKind;

    /// Chunks cover their range once, in order; a grouped layout's chunks are as large as
    /// [`GROUPED_CHUNK`] over a long range but an even share of the threads over a short one
    /// (never below [`GEN_BATCH`]); the classic layout's are [`GEN_BATCH`].
    #[test]
    fn chunks_cover_the_range_once_and_share_a_short_one_between_threads() {
        type Sbbf = SplitBlock<Xxh3>;
        type Classic = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;
        let lens = |c: Chunks, from: u64| {
            let mut next = from;
            let mut lens = Vec::new();
            while let Some((start, len)) = c.take() {
                assert_eq!(start, next);
                next += len as u64;
                lens.push(len);
            }
            (next, lens)
        };
        let (end, l) = lens(Chunks::of::<Sbbf>(5, 5 + (1 << 20), 2), 5);
        assert_eq!((end, l), (5 + (1 << 20), vec![1 << 19; 2]));
        let (end, l) = lens(Chunks::of::<Sbbf>(0, 3 * GROUPED_CHUNK as u64 + 1, 2), 0);
        assert_eq!(end, 3 * GROUPED_CHUNK as u64 + 1);
        assert_eq!(l, vec![GROUPED_CHUNK, GROUPED_CHUNK, GROUPED_CHUNK, 1]);
        let (end, l) = lens(Chunks::of::<Sbbf>(0, 1000, 8), 0);
        assert_eq!((end, l), (1000, vec![1000]));
        let (end, l) = lens(Chunks::of::<Classic>(0, 1 << 20, 2), 0);
        assert_eq!((end, l.len(), l[0]), (1 << 20, 16, GEN_BATCH));
    }

    /// Grouping a chunk by region keeps every digest (a permutation of the chunk, duplicates
    /// included) and puts the regions in increasing order; a layout without locality keeps the
    /// key order. The buffers are reused across chunks of different lengths.
    #[test]
    fn a_grouped_chunk_is_the_same_digests_in_region_order() {
        type Sbbf = SplitBlock<Xxh3>;
        type Classic = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;
        let region = |d: &Digest| Sbbf::locality(*d).unwrap() >> (64 - REGION_BITS);
        let mut b = Buffers::default();
        let mut x = 7u64;
        for len in [0usize, 1, 5000, 700, 1 << 14] {
            b.keyed.clear();
            for _ in 0..len {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                b.keyed.push(Digest { h1: x, h2: !x });
            }
            if len > 2 {
                b.keyed[2] = b.keyed[0];
            }
            let keyed = b.keyed.clone();
            assert_eq!(b.in_memory_order::<Classic>(), &keyed[..]);
            let grouped = b.in_memory_order::<Sbbf>().to_vec();
            assert!(grouped.iter().map(region).is_sorted(), "{len} digests");
            let key = |d: &Digest| (d.h1, d.h2);
            let (mut a, mut g) = (keyed.clone(), grouped);
            a.sort_by_key(key);
            g.sort_by_key(key);
            assert_eq!(a, g, "{len} digests");
        }
    }

    /// A classic chunk's positions, grouped: every position of every digest once (duplicates
    /// kept), in region order, at sizes whose bit count is and is not a power of two, with the
    /// buffers reused between chunks.
    #[test]
    fn a_grouped_classic_chunk_is_the_same_positions_in_region_order() {
        type Classic = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;
        let mut b = Buffers::default();
        let mut x = 11u64;
        for (bits, len) in [
            (1u64 << 20, 3000usize),
            (1_000_003, 0),
            (6_000_000_007, 5000),
            (64, 7),
        ] {
            let mut filter = Classic::with_params(Params { bits, hashes: 7 }).unwrap();
            let bits = filter.bits();
            let shared = filter.shared();
            b.keyed.clear();
            for _ in 0..len {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                b.keyed.push(Digest {
                    h1: x,
                    h2: x.rotate_left(29) | 1,
                });
            }
            let mut expected = Vec::new();
            for &d in &b.keyed {
                shared.positions(d, |p| expected.push(p));
            }
            let width = u64::BITS - (bits - 1).leading_zeros();
            let region = |p: &u64| p >> width.saturating_sub(REGION_BITS);
            let grouped = b.positions_in_memory_order(&shared, bits).to_vec();
            assert_eq!(grouped.len(), 7 * len, "{bits} bits");
            assert!(
                grouped
                    .iter()
                    .all(|&p| p < bits && region(&p) < 1 << REGION_BITS)
            );
            assert!(grouped.iter().map(region).is_sorted(), "{bits} bits");
            let mut g = grouped;
            expected.sort_unstable();
            g.sort_unstable();
            assert_eq!(expected, g, "{bits} bits");
        }
    }

    /// The classic fill and member check answer the same grouped by position as in key order:
    /// the same bits, every member found; and, checking members `0..n` of a filter holding only
    /// `0..n/2` (all of them, and an even sample), the same count of missing members and the
    /// same first one, as a lookup of each member says.
    #[test]
    fn a_grouped_classic_fill_and_member_check_answer_as_key_order_does() {
        type Classic = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;
        let n = 200_000;
        let full = ScaleConfig {
            threads: 2,
            check_members: n,
            ..config("classic/xxh3/km/flat", n, 0)
        };
        let half = ScaleConfig {
            n: n / 2,
            check_members: n / 2,
            ..full.clone()
        };
        let samples = [n, n / 3].map(|check_members| ScaleConfig {
            check_members,
            ..full.clone()
        });
        let keys = KeySet::new(full.keys.clone(), full.seed).unwrap();
        let stop = AtomicBool::new(false);
        let phases = |config, group_positions_past| Phases {
            config,
            keys: &keys,
            stop: &stop,
            progress: &|_| {},
            group_positions_past,
        };
        let params = Params {
            bits: 1 << 22,
            hashes: 7,
        };
        for full in &samples {
            let sample = full.check_members;
            let mut answers = Vec::new();
            for past in [0, u64::MAX] {
                let mut row = ScaleRow::empty(&half);
                row.hashes = params.hashes;
                let mut filter = Classic::with_params(params).unwrap();
                phases(&half, past).fill(&mut filter, &mut row);
                phases(&half, past).check_members(&mut filter, &mut row);
                assert_eq!(row.inserted, n / 2);
                assert_eq!((row.members_checked, row.false_negatives), (n / 2, 0));
                phases(full, past).check_members(&mut filter, &mut row);
                assert_eq!(row.members_checked, sample);
                answers.push((
                    filter.store().words().to_vec(),
                    row.false_negatives,
                    row.first_false_negative.clone(),
                ));
                // What one lookup per sampled member says.
                let mut missing = Vec::new();
                for j in 0..sample {
                    let m = sampled_member(j, sample, n);
                    keys.for_each_key([m], |k| {
                        if !filter.contains_bytes(k) {
                            missing.push(m);
                        }
                    });
                }
                assert!(
                    missing.len() as u64 > sample / 3,
                    "{} missing",
                    missing.len()
                );
                assert_eq!(row.false_negatives, missing.len() as u64);
                assert_eq!(row.first_false_negative, missing[0].to_string());
            }
            assert!(
                answers[0] == answers[1],
                "grouped and key-order answers differ"
            );
        }
    }

    /// The block layouts' fill by owner ([`Phases::fill_by_owner`]) leaves exactly the bits of
    /// one-by-one inserts, from one to three threads (several rounds, rounds where some threads
    /// have no chunk, a short last chunk), and counts every key once.
    #[test]
    fn a_fill_by_owner_sets_the_bits_of_one_by_one_inserts() {
        fn check<F: ConcurrentFill + Filter>(name: &str, words: impl Fn(&F) -> Vec<u64>) {
            let n = 5 * GEN_BATCH as u64 + 123;
            let params = Params {
                bits: 1 << 22,
                hashes: 8,
            };
            let keys = KeySet::new(KeySetKind::Url, 3).unwrap();
            let mut one = F::with_params(params).unwrap();
            keys.for_each_key(0..n, |k| one.insert_bytes(k));
            let stop = AtomicBool::new(false);
            for threads in 1..=3 {
                let config = ScaleConfig {
                    threads,
                    ..config(name, n, 0)
                };
                let phases = Phases {
                    config: &config,
                    keys: &keys,
                    stop: &stop,
                    progress: &|_| {},
                    group_positions_past: GROUP_POSITIONS_PAST,
                };
                let mut filter = F::with_params(params).unwrap();
                let chunks = Chunks::up_to(0, n, 1, GEN_BATCH);
                {
                    let shared = filter.shared();
                    let blocks = shared.blocks().unwrap();
                    let inserted = phases.fill_by_owner(&shared, blocks, &chunks);
                    assert_eq!(inserted, n, "{name}, {threads} threads");
                }
                assert!(words(&filter) == words(&one), "{name}, {threads} threads");
                // The phase itself, as the run calls it (one round here).
                let mut row = ScaleRow::empty(&config);
                let mut filter = F::with_params(params).unwrap();
                phases.fill(&mut filter, &mut row);
                assert_eq!(row.inserted, n, "{name}, {threads} threads");
                assert!(words(&filter) == words(&one), "{name}, {threads} threads");
            }
        }
        check::<SplitBlock<Xxh3>>("sbbf/xxh3", |f| {
            f.to_le_bytes()
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        });
        check::<Blocked512<Xxh3>>("blocked512/xxh3", |f| f.words().to_vec());
    }

    /// A thread that panics between rounds releases the threads waiting for it (they see the
    /// rounds broken) instead of leaving them waiting forever; the panic reaches the caller.
    #[test]
    fn a_panicking_thread_breaks_the_rounds() {
        let rounds = Rounds::new(3);
        let waits = AtomicUsize::new(0);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            on_threads(3, &|| {
                let _breaks = BreakOnPanic(&rounds);
                assert!(rounds.wait(), "the first round is whole");
                if waits.fetch_add(1, Ordering::Relaxed) == 0 {
                    panic!("one thread fails");
                }
                assert!(!rounds.wait(), "the second round is broken");
            })
        }));
        assert!(outcome.is_err());
        assert_eq!(waits.load(Ordering::Relaxed), 3);
    }

    fn config(filter: &str, n: u64, query_offset: u64) -> ScaleConfig {
        ScaleConfig {
            filter: filter.into(),
            n,
            p: 0.01,
            geometry: None,
            keys: KeySetKind::Url,
            seed: 1,
            threads: 1,
            check_members: 1,
            precision: 0.05,
            confidence: 0.95,
            max_queries: 1,
            query_offset,
            huge_pages: false,
            memory_limit: None,
            revision: "abc".into(),
            command: "scale".into(),
        }
    }

    #[test]
    fn population_slices_cover_the_region_once_cut_on_huge_page_addresses() {
        const HUGE: usize = 2 << 20;
        for (start, len, threads) in [
            (HUGE, 1, 1),
            (HUGE, HUGE, 2),
            (HUGE + 4096, 5 * HUGE + 3, 2),
            (7 * HUGE - 16, 12_000_000_000, 2),
            (3 * HUGE + 64, 7 * HUGE, 64),
        ] {
            let slices = os::slices(start, len, threads);
            let what = format!("start {start}, len {len}, threads {threads}: {slices:?}");
            assert_eq!(slices.first().map(|s| s.0), Some(0), "{what}");
            assert_eq!(slices.last().map(|s| s.1), Some(len), "{what}");
            for pair in slices.windows(2) {
                assert_eq!(pair[0].1, pair[1].0, "{what}: gap or overlap");
                assert_eq!((start + pair[0].1) % HUGE, 0, "{what}: cut mid huge page");
            }
            for &(from, to) in &slices {
                assert!(from < to, "{what}: empty slice");
            }
            assert!(slices.len() <= threads * 4 + 1, "{what}: too many slices");
        }
    }

    #[test]
    fn sampled_members_spread_over_the_range_and_include_all_when_asked() {
        assert_eq!(sampled_member(0, 10, 100), 0);
        assert_eq!(sampled_member(9, 10, 100), 90);
        let all: Vec<u64> = (0..7).map(|j| sampled_member(j, 7, 7)).collect();
        assert_eq!(all, (0..7).collect::<Vec<_>>());
        // 10^10 members sampled 10^9 times: no overflow, last index below n.
        assert_eq!(
            sampled_member(999_999_999, 1_000_000_000, 10_000_000_000),
            9_999_999_990
        );
    }
}
