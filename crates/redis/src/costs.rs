//! What keeping a filter's bits in Redis costs and keeps, measured against a real server (and a
//! cluster, when given): round trips by batch size against memory ([`measure_round_trips`]), one
//! filter of more than 2^32 bits ([`measure_big`]), and the sweep's Redis rows against their
//! in-memory twins' ([`compare_sweep`]). [`run`] does all three and returns an [`Outcome`], which
//! `bloomlab_report::redis_costs` renders; the `redis-costs` binary only parses flags, calls
//! [`run`] and writes the report.
//!
//! Every filter a measurement creates is fresh ([`RedisBloom::create_new`]), named with a random
//! run id ([`crate::keys::run_id`]), carries an expiry of [`EXPIRY`] and is deleted after its
//! cell, so a killed run leaves nothing that outlives it.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bloomlab_filters::{
    BitPositions, Blocked512, Bloom, BloomError, Filter, FlatBits, GuavaMitz64, KirschMitzenmacher,
    Murmur3, Variant, VariantId, Xxh3,
};
use bloomlab_harness::bloom::preflight::MemoryNeed;
use bloomlab_harness::schema::roundtrip::{
    self, RoundTripOp, RoundTripRow, RoundTripSample, Target,
};
use bloomlab_harness::{
    Grid, HarnessError, KeySetKind, Plan, Selection, Subject, SweepConfig, SweepRow, bloom::sweep,
};

use crate::config::MAX_SHARD_BITS;
use crate::{Connection, RedisBloom, RedisFilterError};

/// The expiry of every key a measurement creates, re-armed while the filter is in use: the
/// sweep's ([`crate::sweep::EXPIRY`]), so a killed run's keys vanish by themselves.
pub use crate::sweep::EXPIRY;

/// Why a cost measurement stopped. A [`CostsError::Measured`] is a measured failure (a member
/// not found); every other variant is a server, sizing or plan error met before or while
/// measuring. Redis errors name their URL with credentials redacted.
#[derive(Debug, thiserror::Error)]
pub enum CostsError {
    /// A Redis command, connection or filter failed.
    #[error(transparent)]
    Redis(#[from] RedisFilterError),
    /// The plan's (n, p) cannot size the filter.
    #[error(transparent)]
    Sizing(#[from] BloomError),
    /// The sweep comparison's plan or run failed.
    #[error(transparent)]
    Harness(#[from] HarnessError),
    /// The plan is out of range (no keys, no repetition, an empty batch).
    #[error("{0}")]
    Plan(String),
    /// A measurement found what must not be: a member not found, a filter not of the expected
    /// shape, row counts that differ.
    #[error("{0}")]
    Measured(String),
    /// The big filter could not be deleted after its measurement.
    #[error("deleting the big filter {name}: {source}")]
    Cleanup {
        /// The filter's name.
        name: String,
        /// Why it could not be deleted (boxed: it is rare, and keeps every result small).
        source: Box<RedisFilterError>,
    },
}

/// [`CostsError::Plan`] unless `ok`.
fn plan_check(ok: bool, message: impl FnOnce() -> String) -> Result<(), CostsError> {
    if ok {
        Ok(())
    } else {
        Err(CostsError::Plan(message()))
    }
}

/// [`CostsError::Measured`] unless `ok`.
fn measured_check(ok: bool, message: impl FnOnce() -> String) -> Result<(), CostsError> {
    if ok {
        Ok(())
    } else {
        Err(CostsError::Measured(message()))
    }
}

/// The filter every round-trip cell measures: the flagship flat layout.
pub type Measured = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

/// What [`measure_round_trips`] measures.
#[derive(Debug, Clone, PartialEq)]
pub struct CostPlan {
    /// Keys inserted, then looked up, per cell and repetition.
    pub keys: usize,
    /// Keys per round trip (pipeline), each a cell.
    pub batches: Vec<u32>,
    /// Repetitions of every cell.
    pub reps: u32,
    /// Expected count the filter is sized for.
    pub n: u64,
    /// Target false-positive rate it is sized for.
    pub p: f64,
    /// Bits per shard on the cluster: small, so that one filter's shards spread over the masters.
    pub cluster_shard_bits: u64,
    /// In memory, each repetition times this many passes (a pass over `keys` takes well under a
    /// millisecond, too short to time alone).
    pub memory_passes: u32,
}

impl Default for CostPlan {
    fn default() -> Self {
        Self {
            keys: 16_384,
            batches: vec![1, 16, 256, 4096],
            reps: 7,
            n: 1_000_000,
            p: 0.01,
            cluster_shard_bits: crate::config::CLUSTER_SHARD_BITS,
            memory_passes: 32,
        }
    }
}

/// Where to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    /// One server's URL.
    pub server: String,
    /// A cluster's node URLs (none: no cluster cells).
    pub cluster: Option<Vec<String>>,
}

/// Heap bytes of one generated key held as a `String`: its 24-byte header plus its text, which
/// the allocator rounds up (the keys here are 20 to 40 bytes: a 32- or 48-byte block). An upper
/// bound for the keys of [`keys_of`] and the big filter's.
const BYTES_PER_KEY: u64 = 24 + 48;

/// Heap bytes per key in flight in one pipeline, an upper bound: its digest (16 bytes), its
/// BITFIELD command (up to 4 arguments per probe, k <= 30 probes, each argument's bytes and
/// 16-byte record: about 1.5 KiB) and its reply (one 32-byte value per probe: about 1 KiB).
const BYTES_PER_PIPELINED_KEY: u64 = 16 + 1536 + 1024;

/// The n and p of the filter [`measure_big`] creates: more than 2^32 bits.
pub const BIG_N: u64 = 460_000_000;
/// The target rate of the big filter.
pub const BIG_P: f64 = 0.01;

/// Non-members the big filter is asked about.
const BIG_OTHERS: u64 = 100_000;

/// What a `redis-costs` run holds in memory at its peak, computed before anything is allocated
/// (every product saturates, so absurd counts give a huge figure, never an overflow).
///
/// Model, phase by phase (each phase's own data is freed before the next, the round-trip samples
/// are kept to the end):
/// - samples: per repetition, batch size, target (server, and cluster when given) and operation,
///   one 8-byte time per round trip (`ceil(keys / batch)`);
/// - round trips: one repetition's keys (`BYTES_PER_KEY` = 72 bytes each), one pipeline in flight
///   (`min(batch, keys)` keys at `BYTES_PER_PIPELINED_KEY` = 2576 bytes) and the in-memory filter;
/// - the big filter (`big_members`, unless skipped): the in-memory twin's bit array (about
///   550 MB), the members' keys and digests (16 bytes each, all at once), the non-members' keys
///   and one pipeline of 4096 keys;
/// - the sweep comparison (unless skipped): its plan's own [`bloomlab_harness::Plan::memory_need`].
pub fn memory_need(
    plan: &CostPlan,
    cluster: bool,
    big_members: Option<u64>,
    sweep: bool,
) -> Result<MemoryNeed, CostsError> {
    let targets = if cluster { 2 } else { 1 };
    let keys = plan.keys as u64;
    let per_rep: u64 = plan
        .batches
        .iter()
        .map(|&b| keys.div_ceil(u64::from(b.max(1))))
        .fold(0u64, u64::saturating_add);
    let samples = per_rep
        .saturating_mul(8 * 2 * targets)
        .saturating_mul(u64::from(plan.reps));
    let widest = plan.batches.iter().copied().max().unwrap_or(1);
    let in_flight = keys.min(u64::from(widest));
    let filter = Measured::sized_bytes(plan.n, plan.p)?;
    let round_trips = keys
        .saturating_mul(BYTES_PER_KEY)
        .saturating_add(in_flight.saturating_mul(BYTES_PER_PIPELINED_KEY))
        .saturating_add(filter);
    let mut phases = vec![(
        round_trips,
        format!(
            "round trips: --keys {keys} keys and a pipeline of {in_flight}, {} bytes",
            round_trips
        ),
    )];
    if let Some(m) = big_members {
        let twin = Measured::sized_bytes(BIG_N, BIG_P)?;
        let big = twin
            .saturating_add(m.saturating_mul(BYTES_PER_KEY + 16))
            .saturating_add(BIG_OTHERS * BYTES_PER_KEY)
            .saturating_add(4096 * BYTES_PER_PIPELINED_KEY);
        phases.push((
            big,
            format!(
                "the big filter: its {twin}-byte in-memory twin and --big-members {m}, {big} bytes (--skip-big skips it)"
            ),
        ));
    }
    if sweep {
        let config = compare_config()?;
        let need = config.plan()?.memory_need(&config)?;
        phases.push((need.bytes, format!("the sweep comparison: {}", need.detail)));
    }
    let (peak, detail) = phases
        .into_iter()
        .max_by_key(|(b, _)| *b)
        .expect("the round-trip phase is always there");
    Ok(MemoryNeed {
        bytes: samples.saturating_add(peak),
        detail: format!(
            "{samples} bytes of round-trip times (--reps {} x {} --batches sizes x {targets} target(s)) kept to the end, plus the largest phase, {detail}",
            plan.reps,
            plan.batches.len()
        ),
    })
}

fn keys_of(rep: u32, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| format!("bloomlab-costs:{rep}:{i:08}"))
        .collect()
}

/// Times `round` over `keys` in rounds of `batch`: per-round wall times and the total.
fn rounds(
    keys: &[String],
    batch: usize,
    mut round: impl FnMut(&[String]) -> Result<(), RedisFilterError>,
) -> Result<(Vec<u64>, u64), RedisFilterError> {
    let mut each = Vec::with_capacity(keys.len().div_ceil(batch));
    let start = Instant::now();
    for chunk in keys.chunks(batch) {
        let t = Instant::now();
        round(chunk)?;
        each.push(t.elapsed().as_nanos() as u64);
    }
    Ok((each, start.elapsed().as_nanos() as u64))
}

fn sample(
    target: Target,
    op: RoundTripOp,
    per_round_trip: u32,
    rep: u32,
    keys: u64,
    (round_trip_ns, total_ns): (Vec<u64>, u64),
) -> RoundTripSample {
    RoundTripSample {
        target,
        op,
        per_round_trip,
        rep,
        keys,
        total_ns,
        round_trip_ns,
    }
}

fn memory_cells(
    plan: &CostPlan,
    rep: u32,
    keys: &[String],
) -> Result<Vec<RoundTripSample>, CostsError> {
    let passes = plan.memory_passes.max(1);
    let mut insert_ns = 0;
    let mut lookup_ns = 0;
    for _ in 0..passes {
        let mut f = Measured::new(plan.n, plan.p)?;
        let t = Instant::now();
        for k in keys {
            f.insert(k.as_str());
        }
        insert_ns += t.elapsed().as_nanos() as u64;
        let t = Instant::now();
        let mut found = 0usize;
        for k in keys {
            found += usize::from(black_box(&f).contains(k.as_str()));
        }
        lookup_ns += t.elapsed().as_nanos() as u64;
        measured_check(found == keys.len(), || {
            format!(
                "in memory: {} of {} inserted keys not found",
                keys.len() - found,
                keys.len()
            )
        })?;
    }
    let total = keys.len() as u64 * u64::from(passes);
    Ok(vec![
        sample(
            Target::Memory,
            RoundTripOp::Insert,
            0,
            rep,
            total,
            (Vec::new(), insert_ns),
        ),
        sample(
            Target::Memory,
            RoundTripOp::Lookup,
            0,
            rep,
            total,
            (Vec::new(), lookup_ns),
        ),
    ])
}

fn remote_cells(
    plan: &CostPlan,
    target: Target,
    conn: Connection,
    batch: u32,
    rep: u32,
    keys: &[String],
) -> Result<Vec<RoundTripSample>, CostsError> {
    let shard_bits = match target {
        Target::Cluster => plan.cluster_shard_bits,
        _ => crate::config::DEFAULT_SHARD_BITS,
    };
    let name = format!("bloomlab-costs:{}:{rep}:{batch}", run_id()?);
    let mut f =
        RedisBloom::<Measured>::create_new(conn, &name, plan.n, plan.p, shard_bits, Some(EXPIRY))?;
    let per = batch as usize;
    let insert = rounds(keys, per, |chunk| f.insert_batch(chunk, per));
    let mut missing = 0usize;
    let lookup = rounds(keys, per, |chunk| {
        f.contains_batch(chunk, per, |_, hit| missing += usize::from(!hit))
    });
    f.destroy()?;
    let (insert, lookup) = (insert?, lookup?);
    measured_check(missing == 0, || {
        format!(
            "{}: {missing} of {} inserted keys not found at {batch} keys per round trip: a false negative",
            target.label(),
            keys.len()
        )
    })?;
    let n = keys.len() as u64;
    Ok(vec![
        sample(target, RoundTripOp::Insert, batch, rep, n, insert),
        sample(target, RoundTripOp::Lookup, batch, rep, n, lookup),
    ])
}

/// Every cell of `plan`, `plan.reps` times: each repetition measures memory first, then each
/// batch size on the server and on the cluster, each into a fresh filter (created untimed,
/// deleted after), with keys of its own. `progress` gets a line per cell.
pub fn measure_round_trips(
    plan: &CostPlan,
    at: &Endpoints,
    progress: &dyn Fn(&str),
) -> Result<Vec<RoundTripSample>, CostsError> {
    plan_check(plan.keys > 0, || {
        "keys = 0: at least 1 key per cell is needed".into()
    })?;
    plan_check(plan.reps > 0, || {
        "reps = 0: at least 1 repetition is needed".into()
    })?;
    plan_check(!plan.batches.contains(&0), || {
        "keys per round trip = 0: each must be at least 1".into()
    })?;
    let mut out = Vec::new();
    for rep in 0..plan.reps {
        let keys = keys_of(rep, plan.keys);
        progress(&format!("repetition {}/{}: in memory", rep + 1, plan.reps));
        out.extend(memory_cells(plan, rep, &keys)?);
        for &batch in &plan.batches {
            progress(&format!(
                "repetition {}/{}: one server, {batch} keys per round trip",
                rep + 1,
                plan.reps
            ));
            let conn = Connection::single(&at.server)?;
            out.extend(remote_cells(plan, Target::Server, conn, batch, rep, &keys)?);
            if let Some(urls) = &at.cluster {
                progress(&format!(
                    "repetition {}/{}: cluster, {batch} keys per round trip",
                    rep + 1,
                    plan.reps
                ));
                let conn = Connection::cluster(urls)?;
                out.extend(remote_cells(
                    plan,
                    Target::Cluster,
                    conn,
                    batch,
                    rep,
                    &keys,
                )?);
            }
        }
    }
    Ok(out)
}

/// A run id for this process's filter names ([`crate::keys::run_id`]).
fn run_id() -> Result<String, RedisFilterError> {
    crate::keys::run_id()
}

/// The sweep [`compare_sweep`] runs twice: three Redis variants' twins, two key sets, n = 10^5,
/// p = 1% and 0.1%.
fn compare_config() -> Result<SweepConfig, CostsError> {
    let subjects = vec![
        Subject::Redis(VariantId::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>()),
        Subject::Redis(VariantId::of::<Bloom<Murmur3, GuavaMitz64, FlatBits>>()),
        Subject::Redis(VariantId::of::<Blocked512<Xxh3>>()),
    ];
    let mut config = SweepConfig::with_grids(vec![Grid {
        filters: Selection::Only(subjects),
        key_sets: vec![KeySetKind::RandomU64, KeySetKind::Url],
        n: vec![100_000],
        p: vec![0.01, 0.001],
        overfill: vec![1.0],
    }]);
    config.timing = false;
    Ok(config)
}

/// What [`measure_big`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct BigFilter {
    /// Expected count and target rate it was sized for.
    pub n: u64,
    /// Target rate.
    pub p: f64,
    /// Its bits, and the limit of one Redis string.
    pub bits: u64,
    /// Shards (Redis strings) holding them, and bits per full shard.
    pub shards: u64,
    /// Bits in each shard but the last.
    pub shard_bits: u64,
    /// Hash functions.
    pub hashes: u32,
    /// Members inserted (pipelined, 4096 per round trip) and found afterwards.
    pub members: u64,
    /// Members found on lookup (must equal `members`).
    pub found: u64,
    /// Bit positions of the members that fall in the second shard, and how many of them lie at
    /// or above 2^32 (past what one string can address).
    pub positions_past_first_shard: u64,
    /// Of those, at or above 2^32.
    pub positions_at_or_above_2_pow_32: u64,
    /// Whether the shards' bytes equal the in-memory twin's, shard by shard.
    pub bytes_equal_twin: bool,
    /// Non-members looked up, and whether every answer equals the twin's.
    pub non_members: u64,
    /// Every answer the same as the twin's.
    pub non_member_answers_equal_twin: bool,
    /// Server memory before creating the filter and with it filled, in bytes.
    pub used_memory_before: u64,
    /// After filling.
    pub used_memory_after: u64,
    /// Wall times: create (both shards allocated), insert, lookup.
    pub create: Duration,
    /// Inserting the members.
    pub insert: Duration,
    /// Looking the members up.
    pub lookup: Duration,
}

/// One filter of more than 2^32 bits on the server at `url` (460M keys at 1%: about 4.41e9 bits,
/// two shards, about 550 MB of server memory and as much here for the in-memory twin): `members`
/// keys inserted and found, positions past 2^32 counted, bytes and non-member answers compared
/// with the twin.
pub fn measure_big(
    url: &str,
    members: u64,
    progress: &dyn Fn(&str),
) -> Result<BigFilter, CostsError> {
    let (n, p) = (BIG_N, BIG_P);
    let name = format!("bloomlab-costs-big:{}", run_id()?);
    let mut conn = Connection::single(url)?;
    let used_memory_before = conn.used_memory()?;
    progress("big filter: creating two shards (about 550 MB)");
    let start = Instant::now();
    let mut f = RedisBloom::<Measured>::create_new(
        conn,
        &name,
        n,
        p,
        crate::config::DEFAULT_SHARD_BITS,
        Some(EXPIRY),
    )?;
    let create = start.elapsed();
    let result = fill_and_check(&mut f, members, progress);
    let used_memory_after = match &result {
        Ok(_) => Connection::single(url)?.used_memory()?,
        Err(_) => 0,
    };
    f.destroy().map_err(|source| CostsError::Cleanup {
        name,
        source: Box::new(source),
    })?;
    let mut big = result?;
    big.create = create;
    big.used_memory_before = used_memory_before;
    big.used_memory_after = used_memory_after;
    Ok(big)
}

fn fill_and_check(
    f: &mut RedisBloom<Measured>,
    members: u64,
    progress: &dyn Fn(&str),
) -> Result<BigFilter, CostsError> {
    let config = f.config().clone();
    measured_check(config.bits > MAX_SHARD_BITS && config.shards == 2, || {
        format!(
            "the big filter has {} bits in {} shards, not more than 2^32 bits in 2",
            config.bits, config.shards
        )
    })?;
    let mut twin = Measured::new(config.n, config.p)?;
    measured_check(twin.bits() == config.bits, || {
        "twin bits differ from Redis's".into()
    })?;
    let keys: Vec<String> = (0..members)
        .map(|i| format!("big-member-{i:010}"))
        .collect();
    progress(&format!("big filter: inserting {members} members"));
    let t = Instant::now();
    f.insert_batch(&keys, 4096)?;
    let insert = t.elapsed();
    for k in &keys {
        twin.insert(k.as_str());
    }
    progress("big filter: looking the members up");
    let mut found = 0u64;
    let t = Instant::now();
    f.contains_batch(&keys, 4096, |_, hit| found += u64::from(hit))?;
    let lookup = t.elapsed();

    let (past, above) = positions_past_the_first_shard(&config, &keys);
    progress("big filter: comparing both shards' bytes with the in-memory twin");
    let bytes_equal_twin = shards_equal_twin(f, &twin)?;

    let others: Vec<String> = (0..BIG_OTHERS)
        .map(|i| format!("big-other-{i:08}"))
        .collect();
    let mut same = true;
    f.contains_batch(&others, 4096, |i, hit| {
        same &= hit == twin.contains(others[i].as_str())
    })?;

    Ok(BigFilter {
        n: config.n,
        p: config.p,
        bits: config.bits,
        shards: config.shards,
        shard_bits: config.shard_bits,
        hashes: config.hashes,
        members,
        found,
        positions_past_first_shard: past,
        positions_at_or_above_2_pow_32: above,
        bytes_equal_twin,
        non_members: others.len() as u64,
        non_member_answers_equal_twin: same,
        used_memory_before: 0,
        used_memory_after: 0,
        create: Duration::ZERO,
        insert,
        lookup,
    })
}

/// Of the bit positions of `keys` in a filter of `config`'s geometry: how many fall in the
/// second shard or later, and how many at or above 2^32.
fn positions_past_the_first_shard(config: &crate::Config, keys: &[String]) -> (u64, u64) {
    let boundary = config.shard_bits;
    let (mut past, mut above) = (0u64, 0u64);
    for k in keys {
        let d = Measured::digest_of(k.as_bytes());
        Measured::for_each_position(config.bits, config.hashes, d, |g| {
            past += u64::from(g >= boundary);
            above += u64::from(g >= MAX_SHARD_BITS);
        });
    }
    (past, above)
}

/// Whether every shard's bytes on the server equal the in-memory twin's words they hold.
fn shards_equal_twin(f: &mut RedisBloom<Measured>, twin: &Measured) -> Result<bool, CostsError> {
    let config = f.config().clone();
    let boundary = config.shard_bits;
    let mut equal = true;
    for shard in 0..config.shards {
        let first_word = shard * boundary / 64;
        let last_word = ((shard + 1) * boundary).min(config.bits) / 64;
        let got = f.shard_bytes(shard)?;
        let expected = (first_word..last_word).flat_map(|w| twin.bit_word(w).to_le_bytes());
        equal &=
            got.len() as u64 == (last_word - first_word) * 8 && got.iter().copied().eq(expected);
    }
    Ok(equal)
}

/// One sweep row in Redis against its twin's.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPair {
    /// The Redis variant.
    pub redis: String,
    /// Its in-memory twin.
    pub twin: String,
    /// Key set, n and p of the row.
    pub key_set: String,
    /// Expected count.
    pub n: u64,
    /// Target rate.
    pub p: f64,
    /// Non-member queries and false positives (the Redis row's).
    pub queries: u64,
    /// False positives among them.
    pub false_positives: u64,
    /// The observed rate and its interval.
    pub fpr: f64,
    /// Interval.
    pub ci: (f64, f64),
    /// Every statistical column equal, bit for bit.
    pub equal: bool,
}

/// Runs the sweep's rows of a plan against Redis at a URL, returning its rows in plan order with
/// their Redis names: the `sweep --redis` runner ([`crate::sweep::run`]), given by the caller.
pub type SweepInRedis<'a> =
    dyn Fn(&SweepConfig, &Plan, &str) -> Result<Vec<SweepRow>, HarnessError> + 'a;

/// The sweep run twice on the same plan, once with the filters in memory and once in Redis (at
/// `url`, through `in_redis`), and every row compared in every column but the name and the memory
/// held.
pub fn compare_sweep(
    url: &str,
    in_redis: &SweepInRedis<'_>,
    progress: &dyn Fn(&str),
) -> Result<Vec<SweepPair>, CostsError> {
    let config = compare_config()?;
    let plan = config.plan()?;
    let twins = crate::sweep::twins(&config);
    progress("sweep: in memory");
    let memory = sweep::run(&twins, &twins.plan()?, &|_| {})?;
    progress("sweep: in Redis");
    let in_redis = in_redis(&config, &plan, url)?;
    measured_check(memory.len() == in_redis.len(), || {
        "row counts differ".into()
    })?;
    Ok(memory
        .iter()
        .zip(&in_redis)
        .map(|(m, r)| SweepPair {
            redis: r.filter.to_string(),
            twin: m.filter.to_string(),
            key_set: r.key_set.clone(),
            n: r.n,
            p: r.p,
            queries: r.queries,
            false_positives: r.false_positives,
            fpr: r.fpr,
            ci: (r.ci_low, r.ci_high),
            equal: crate::sweep::equals_twin(r, m),
        })
        .collect())
}

/// Which measurements a [`run`] makes beyond the round trips.
pub struct Steps<'a> {
    /// Members of the filter of more than 2^32 bits ([`measure_big`]); `None` skips it.
    pub big_members: Option<u64>,
    /// The `sweep --redis` runner for the sweep comparison ([`compare_sweep`]); `None` skips it.
    pub sweep: Option<&'a SweepInRedis<'a>>,
}

/// Everything one `redis-costs` run measured: what `bloomlab_report::redis_costs` renders.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The round-trip plan measured.
    pub plan: CostPlan,
    /// Whether a cluster was measured (its rows are in `rows`).
    pub cluster: bool,
    /// The server's `redis_version` (`unknown` if it did not say).
    pub server_version: String,
    /// Bits of the measured filter in memory, sized for the plan's (n, p).
    pub memory_bits: u64,
    /// Round trips by target, operation and batch size, medians over the repetitions.
    pub rows: Vec<RoundTripRow>,
    /// The filter of more than 2^32 bits, unless skipped.
    pub big: Option<BigFilter>,
    /// The sweep's Redis rows against their twins', unless skipped.
    pub sweep: Option<Vec<SweepPair>>,
}

impl Outcome {
    /// What the measurements found wrong, if anything: the big filter differing from its
    /// in-memory twin (a member not found, a byte or an answer that differs), or a sweep row
    /// differing from its twin's. `None`: everything agreed.
    pub fn failure(&self) -> Option<String> {
        if let Some(b) = &self.big
            && (b.found != b.members || !b.bytes_equal_twin || !b.non_member_answers_equal_twin)
        {
            return Some(format!(
                "the big filter differs from its in-memory twin: {b:?}"
            ));
        }
        let bad = self.sweep.as_deref()?.iter().find(|p| !p.equal)?;
        Some(format!(
            "sweep row {} {} n={} p={} differs from its twin {}",
            bad.redis, bad.key_set, bad.n, bad.p, bad.twin
        ))
    }
}

/// One `redis-costs` run: the server's version, the round trips of `plan` (aggregated), then the
/// steps asked for, in that order. `progress` gets a line per cell and step. A measured failure
/// that still lets the run finish (the big filter or a sweep row differing from its twin) is in
/// the outcome ([`Outcome::failure`]), not an error, so that the report shows it.
pub fn run(
    plan: &CostPlan,
    at: &Endpoints,
    steps: &Steps<'_>,
    progress: &dyn Fn(&str),
) -> Result<Outcome, CostsError> {
    let server_version = Connection::single(&at.server)?
        .info_field("server", "redis_version")
        .unwrap_or_else(|_| "unknown".into());
    let samples = measure_round_trips(plan, at, progress)?;
    let rows = roundtrip::aggregate(&samples).map_err(CostsError::Measured)?;
    let big = steps
        .big_members
        .map(|members| measure_big(&at.server, members, progress))
        .transpose()?;
    let sweep = steps
        .sweep
        .map(|in_redis| compare_sweep(&at.server, in_redis, progress))
        .transpose()?;
    Ok(Outcome {
        plan: plan.clone(),
        cluster: at.cluster.is_some(),
        server_version,
        memory_bits: Measured::new(plan.n, plan.p)?.bits(),
        rows,
        big,
        sweep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(equal: bool) -> SweepPair {
        SweepPair {
            redis: "redis/classic/xxh3/km".into(),
            twin: "classic/xxh3/km/flat".into(),
            key_set: "url".into(),
            n: 100,
            p: 0.01,
            queries: 10,
            false_positives: 1,
            fpr: 0.1,
            ci: (0.0, 0.5),
            equal,
        }
    }

    fn outcome(sweep: Option<Vec<SweepPair>>) -> Outcome {
        Outcome {
            plan: CostPlan::default(),
            cluster: false,
            server_version: "7".into(),
            memory_bits: 1,
            rows: Vec::new(),
            big: None,
            sweep,
        }
    }

    #[test]
    fn a_sweep_row_that_differs_from_its_twin_is_the_failure() {
        assert_eq!(outcome(None).failure(), None);
        assert_eq!(outcome(Some(vec![pair(true)])).failure(), None);
        let failure = outcome(Some(vec![pair(true), pair(false)])).failure();
        assert_eq!(
            failure.as_deref(),
            Some(
                "sweep row redis/classic/xxh3/km url n=100 p=0.01 differs from its twin \
                 classic/xxh3/km/flat"
            )
        );
    }

    #[test]
    fn a_redis_row_equals_its_twin_but_for_the_name_and_memory() {
        // A real row: a tiny seeded sweep of the twin, in memory.
        let mut config = SweepConfig::with_grids(vec![Grid {
            filters: Selection::Only(vec!["classic/xxh3/km/flat".parse().unwrap()]),
            key_sets: vec![KeySetKind::RandomU64],
            n: vec![1000],
            p: vec![0.01],
            overfill: vec![1.0],
        }]);
        config.timing = false;
        let rows = sweep::run(&config, &config.plan().unwrap(), &|_| {}).unwrap();
        let m = rows[0].clone();
        let mut r = m.clone();
        r.filter = "redis/classic/xxh3/km".parse().unwrap();
        r.memory_bytes = m.memory_bytes + 1;
        assert!(crate::sweep::equals_twin(&r, &m));
        r.false_positives += 1;
        assert!(!crate::sweep::equals_twin(&r, &m));
    }

    #[test]
    fn a_plan_with_nothing_to_measure_is_refused_before_any_server_is_contacted() {
        let at = Endpoints {
            // Port 1: nothing listens there; the plan is refused before connecting.
            server: "redis://127.0.0.1:1".into(),
            cluster: None,
        };
        for (plan, word) in [
            (
                CostPlan {
                    keys: 0,
                    ..CostPlan::default()
                },
                "keys = 0",
            ),
            (
                CostPlan {
                    reps: 0,
                    ..CostPlan::default()
                },
                "reps = 0",
            ),
            (
                CostPlan {
                    batches: vec![1, 0],
                    ..CostPlan::default()
                },
                "keys per round trip = 0",
            ),
        ] {
            let err = measure_round_trips(&plan, &at, &|_| {}).unwrap_err();
            assert!(
                matches!(&err, CostsError::Plan(m) if m.starts_with(word)),
                "{err}"
            );
        }
    }
}
