//! `sweep --redis URL`: the sweep's static rows for Redis-backed filters
//! (`redis/classic/<hash>/<index>`, `redis/blocked512/<hash>`; see `bloomlab_redis`).
//!
//! The plan holds Redis subjects ([`Subject::Redis`], each with its in-memory twin
//! `classic/<hash>/<index>/flat` or `blocked512/<hash>`, whose sizing the plan's checks use), so
//! grids, key sets and checks are the sweep's own. Each row then runs
//! [`bloomlab_harness::bloom::trial::run_batched`] against a fresh filter in Redis, pipelining [`PER_ROUND_TRIP`] keys per round trip. The Redis filter
//! sets the twin's bits, so every statistical column equals the twin's row bit for bit; the
//! `filter` column is the Redis name, `memory_bytes` the bytes the shards hold on the server, and
//! the timing columns are 0 (the round-trip cost is measured by the `redis-costs` binary, see
//! [`crate::costs`]).
//!
//! # Names, expiry, leftovers
//!
//! Row `i` of a run uses the filter `bloomlab-sweep:<run id>:<i>`, the run id 64 random bits
//! from the OS ([`crate::keys::run_id`]), so runs never share a name (the pid alone
//! repeats across containers and restarts). The filter is created fresh
//! ([`RedisBloom::create_new`]): if any of its keys exists, the row is not run and the sweep stops
//! with exit 2 naming the key ([`is_refusal`]), never measuring an old, filled filter. Every key
//! gets an expiry of [`EXPIRY`], re-armed while the row runs and deleted after it, so a killed
//! run's keys vanish by themselves; `scripts/redis-local.sh clean URL` removes bloomlab's
//! leftovers at once (SCAN for `{bloomlab-*`, nothing else).

use crate::{Connection, RedisBloom, RedisFilterError, RedisVisitor};
use bloomlab_filters::{BitPositions, Digest, Geometry};
use bloomlab_harness::bloom::trial::{self, BatchMembership, Shape};
use bloomlab_harness::keys::Batch;
use bloomlab_harness::{
    Grid, HarnessError, Plan, Progress, Selection, Subject, SweepConfig, SweepRow,
};

/// Keys per pipeline (one round trip to a server).
pub const PER_ROUND_TRIP: usize = 4096;

/// The expiry of every key a sweep row creates: 10 minutes, 5 times the longest a single reply
/// may take ([`crate::conn::RESPONSE_TIMEOUT`], 2 min). The expiry is re-armed whenever
/// a quarter of it (2.5 min) has passed and the row sends a command, so a live row's keys cannot
/// expire while it waits for a reply or computes between two round trips (microseconds per
/// batch); a killed run's keys are gone 10 minutes after its last command.
pub const EXPIRY: std::time::Duration = std::time::Duration::from_secs(600);

/// What [`run`] reports as [`HarnessError::InvalidConfig`] with this `what` when a row's filter
/// key already exists on the server: the sweep's exit 2 (nothing wrong was measured; the
/// server's state refused the run).
pub const EXISTS_WHAT: &str = "Redis key";

/// Whether `e` (from [`run`]) is a refusal before measuring (a row's key already exists): exit 2,
/// not a measured failure.
pub fn is_refusal(e: &HarnessError) -> bool {
    matches!(e, HarnessError::InvalidConfig { what, .. } if what == EXISTS_WHAT)
}

/// The name of row `index`'s filter in the run `run_id`.
pub fn filter_name(run_id: &str, index: usize) -> String {
    format!("bloomlab-sweep:{run_id}:{index}")
}

/// Checks that every subject the grids name runs where the sweep runs it: Redis subjects
/// (`redis/...`) with `--redis`, in-memory ones without it. The error names the subject.
pub fn check_subjects(grids: &[Grid], redis: bool) -> Result<(), HarnessError> {
    for g in grids {
        let subjects: &[Subject] = match &g.filters {
            Selection::All if redis => {
                return Err(HarnessError::invalid(
                    "filters",
                    "all",
                    "with --redis, name the Redis subjects (redis/classic/<hash>/<index>, \
                     redis/blocked512/<hash>; see --list)",
                ));
            }
            Selection::All => &[],
            Selection::Only(v) => v,
        };
        for &s in subjects {
            let remote = s.is_remote();
            if remote && !redis {
                return Err(HarnessError::invalid(
                    "filters",
                    s,
                    "keeps its bits in Redis: give --redis URL",
                ));
            }
            if !remote && redis {
                return Err(HarnessError::invalid(
                    "filters",
                    s,
                    "is an in-memory filter; with --redis give Redis subjects \
                     (redis/classic/<hash>/<index>, redis/blocked512/<hash>; see --list)",
                ));
            }
        }
    }
    Ok(())
}

struct Adapter<F> {
    filter: RedisBloom<F>,
    digests: Vec<Digest>,
}

impl<F: BitPositions> Adapter<F> {
    fn digest(&mut self, keys: &Batch) {
        self.digests.clear();
        let digests = &mut self.digests;
        keys.for_each_bytes(|b| digests.push(F::digest_of(b)));
    }
}

impl<F: BitPositions> BatchMembership for Adapter<F> {
    fn insert_batch(&mut self, keys: &Batch) -> Result<(), String> {
        self.digest(keys);
        self.filter
            .insert_digests(&self.digests, PER_ROUND_TRIP)
            .map_err(|e| e.to_string())
    }

    fn contains_batch(
        &mut self,
        keys: &Batch,
        found: &mut dyn FnMut(usize, bool),
    ) -> Result<(), String> {
        self.digest(keys);
        self.filter
            .contains_digests(&self.digests, PER_ROUND_TRIP, found)
            .map_err(|e| e.to_string())
    }

    fn shape(&mut self, members: u64) -> Result<Shape, String> {
        let config = self.filter.config().clone();
        let set = self.filter.set_bits().map_err(|e| e.to_string())?;
        let geometry: Geometry = self.filter.geometry();
        let fill = set as f64 / config.bits as f64;
        Ok(Shape {
            layout: config.layout,
            bits: config.bits,
            hashes: config.hashes,
            memory_bytes: config.bits / 8,
            fill_ratio: fill,
            // The estimate every flat filter reports (Filter::estimated_len), from the same fill.
            estimated_count: -(config.bits as f64 / f64::from(config.hashes)) * (-fill).ln_1p(),
            fpr_theory: self.filter.fpr_theory(members),
            fpr_textbook: geometry.textbook_fpr(members),
            // From the server's copy of the bits, as the in-memory twin computes it (a flat
            // filter needs only the count of set bits).
            fpr_given_bits: match geometry {
                Geometry::Flat { hashes, .. } => fill.powi(hashes as i32),
                _ => geometry.fpr_given_bytes(&self.filter.bytes().map_err(|e| e.to_string())?),
            },
            counter_overflow_p: None,
        })
    }
}

/// `config` with every Redis subject replaced by its in-memory twin: the same plan, row for row,
/// in memory (what a Redis row is compared with).
pub fn twins(config: &SweepConfig) -> SweepConfig {
    let mut twins = config.clone();
    for g in &mut twins.grids {
        if let Selection::Only(v) = &mut g.filters {
            for s in v.iter_mut() {
                if let Subject::Redis(id) = *s {
                    *s = Subject::Variant(id);
                }
            }
        }
    }
    twins
}

/// Whether Redis row `r` equals its in-memory twin's row `m` in every column but the two that
/// legitimately differ (the filter's name and the memory held), compared through `Debug`, which
/// prints every f64 exactly (NaN included).
pub fn equals_twin(r: &SweepRow, m: &SweepRow) -> bool {
    let same = as_twin(r, m);
    format!("{same:?}") == format!("{m:?}")
}

/// Redis row `r` with the two columns that legitimately differ from its in-memory twin `m` (the
/// filter's name and the memory held) taken from `m`: every other column must then equal `m`'s,
/// compared through `Debug`, which prints every f64 exactly (NaN included).
pub fn as_twin(r: &SweepRow, m: &SweepRow) -> SweepRow {
    let mut same = r.clone();
    same.filter = m.filter;
    same.memory_bytes = m.memory_bytes;
    same
}

/// Runs every planned row (planned with twin names) against Redis at `url` (several
/// comma-separated URLs: a cluster's nodes, the filter in shards of
/// [`crate::config::CLUSTER_SHARD_BITS`] spread over them), one row at a time,
/// and returns the rows in plan order with their Redis names. `progress` is called after each row.
/// Each row's filter is [`filter_name`] of a fresh [`crate::keys::run_id`]; see the
/// module docs for expiry and leftovers. Errors name the server with credentials redacted.
pub fn run(
    config: &SweepConfig,
    plan: &Plan,
    url: &str,
    progress: &dyn Fn(&Progress),
) -> Result<Vec<SweepRow>, HarnessError> {
    let run_id = crate::keys::run_id().map_err(|e| HarnessError::InvalidConfig {
        what: "Redis run id".into(),
        value: "(none)".into(),
        allowed: e.to_string(),
    })?;
    run_as(config, plan, url, &run_id, progress)
}

/// [`run`] with the run id given (tests plant a filter under a name a run will use).
pub fn run_as(
    config: &SweepConfig,
    plan: &Plan,
    url: &str,
    run_id: &str,
    progress: &dyn Fn(&Progress),
) -> Result<Vec<SweepRow>, HarnessError> {
    struct Row<'a> {
        spec: &'a trial::TrialSpec,
        keys: &'a bloomlab_harness::KeySet,
        config: &'a SweepConfig,
        url: &'a str,
        run_id: &'a str,
        index: usize,
    }
    impl RedisVisitor for Row<'_> {
        type Output = Result<SweepRow, HarnessError>;
        fn visit<F: BitPositions>(self) -> Self::Output {
            let external = |e: RedisFilterError| match e {
                RedisFilterError::Exists { ref key, .. } => HarnessError::InvalidConfig {
                    what: EXISTS_WHAT.into(),
                    value: format!("{key:?}"),
                    allowed: e.to_string(),
                },
                e => HarnessError::External {
                    filter: self.spec.filter.to_string(),
                    n: self.spec.n,
                    p: self.spec.p,
                    reason: e.to_string(),
                },
            };
            let conn = Connection::open(self.url).map_err(external)?;
            let shard_bits = conn.default_shard_bits();
            let name = filter_name(self.run_id, self.index);
            let filter = RedisBloom::<F>::create_new(
                conn,
                &name,
                self.spec.n,
                self.spec.p,
                shard_bits,
                Some(EXPIRY),
            )
            .map_err(external)?;
            let mut adapter = Adapter {
                filter,
                digests: Vec::new(),
            };
            let row = trial::run_batched(self.spec, self.keys, &self.config.sampling, &mut adapter);
            // Deleted whatever the row's outcome; a row's own error comes first.
            let destroyed = adapter.filter.destroy().map_err(external);
            let row = row?;
            destroyed?;
            Ok(row)
        }
    }
    let total = plan.rows.len();
    let mut out = Vec::with_capacity(total);
    for (index, planned) in plan.rows.iter().enumerate() {
        let spec = planned.spec.clone();
        let redis = spec.filter.to_string();
        if !spec.filter.is_remote() {
            return Err(HarnessError::invalid(
                "filter",
                spec.filter,
                "is an in-memory filter, not a Redis subject",
            ));
        }
        let keys = plan
            .key_set(&planned.key_set)
            .expect("the plan holds every key set its rows use");
        let row = crate::visit(
            &redis,
            Row {
                spec: &spec,
                keys,
                config,
                url,
                run_id,
                index,
            },
        )
        .map_err(|e| HarnessError::UnknownFilter {
            name: redis.clone(),
            known: e.to_string(),
        })??;
        out.push(row);
        progress(&Progress {
            done: index + 1,
            total,
            current: format!(
                "{redis} {} n={} p={}",
                planned.key_set, planned.spec.n, planned.spec.p
            ),
        });
    }
    Ok(out)
}
