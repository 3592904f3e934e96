//! What a round trip to a filter held elsewhere costs (a Redis server, a Redis cluster), against
//! the same filter in memory: the samples a measurement records and the rows a report shows.
//!
//! A measurement repeats every (target, operation, keys per round trip) cell in `reps`
//! repetitions; a repetition measures every cell once, in memory first, so each repetition's
//! slowdown against memory is a ratio of two figures taken seconds apart on the same machine (the
//! machine is shared: figures from different minutes are not comparable, ratios within one are).
//! [`aggregate`] turns the samples into one [`RoundTripRow`] per cell: the median over repetitions
//! with its spread (the smallest and largest repetition), and latency quantiles pooled over every
//! round trip of every repetition.

use serde::{Deserialize, Serialize};

use crate::stats::median;

/// Where the filter's bits are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// In this process: no round trip.
    Memory,
    /// One Redis server.
    Server,
    /// A Redis cluster (its shards spread over the masters by hash tag).
    Cluster,
}

impl Target {
    /// How reports name it.
    pub fn label(self) -> &'static str {
        match self {
            Target::Memory => "in memory",
            Target::Server => "one server",
            Target::Cluster => "3-master cluster",
        }
    }
}

/// What a round trip does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundTripOp {
    /// Inserts keys not yet in the filter.
    Insert,
    /// Looks up keys that are in the filter (every answer must be yes).
    Lookup,
}

impl RoundTripOp {
    /// How reports name it.
    pub fn label(self) -> &'static str {
        match self {
            RoundTripOp::Insert => "insert",
            RoundTripOp::Lookup => "lookup",
        }
    }
}

/// One cell of one repetition, as measured.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundTripSample {
    /// Where the bits were.
    pub target: Target,
    /// What was done.
    pub op: RoundTripOp,
    /// Keys per round trip; 0 for [`Target::Memory`] (no round trip).
    pub per_round_trip: u32,
    /// Which repetition (0-based).
    pub rep: u32,
    /// Keys processed.
    pub keys: u64,
    /// Wall time for all `keys`, in nanoseconds.
    pub total_ns: u64,
    /// Each round trip's wall time, in nanoseconds (empty in memory).
    pub round_trip_ns: Vec<u64>,
}

impl RoundTripSample {
    /// Nanoseconds per key.
    pub fn ns_per_key(&self) -> f64 {
        self.total_ns as f64 / self.keys as f64
    }
}

/// One cell over all repetitions: a row of the report's CSV and table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundTripRow {
    /// Where the bits were.
    pub target: Target,
    /// What was done.
    pub op: RoundTripOp,
    /// Keys per round trip; 0 in memory.
    pub per_round_trip: u32,
    /// Repetitions measured.
    pub reps: u32,
    /// Keys per repetition.
    pub keys: u64,
    /// Median over repetitions of the keys processed per second.
    pub keys_per_second: f64,
    /// The slowest repetition's keys per second.
    pub keys_per_second_min: f64,
    /// The fastest repetition's keys per second.
    pub keys_per_second_max: f64,
    /// Median over repetitions of the wall time per key, in microseconds.
    pub us_per_key: f64,
    /// Median of every round trip's wall time over all repetitions, in microseconds (NaN in
    /// memory).
    pub round_trip_p50_us: f64,
    /// 99th percentile (nearest rank) of every round trip's wall time, in microseconds (NaN in
    /// memory).
    pub round_trip_p99_us: f64,
    /// Median over repetitions of (this cell's time per key / the same repetition's time per key
    /// in memory, same operation): how many times slower than memory. 1 in memory.
    pub slowdown_vs_memory: f64,
    /// The smallest repetition's slowdown.
    pub slowdown_min: f64,
    /// The largest repetition's slowdown.
    pub slowdown_max: f64,
}

/// The nearest-rank quantile `q` in (0, 1] of sorted `v`; NaN when empty.
fn nearest_rank(v: &[u64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1] as f64
}

fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// One row per (target, operation, keys per round trip), in that order. Errors when a sample has
/// no keys or no time, or when a repetition lacks its in-memory sample of the same operation (the
/// slowdown's denominator).
pub fn aggregate(samples: &[RoundTripSample]) -> Result<Vec<RoundTripRow>, String> {
    if let Some(s) = samples.iter().find(|s| s.keys == 0 || s.total_ns == 0) {
        return Err(format!(
            "a sample with {} keys in {} ns ({} {} at {} keys per round trip, repetition {}): both must be positive",
            s.keys,
            s.total_ns,
            s.target.label(),
            s.op.label(),
            s.per_round_trip,
            s.rep
        ));
    }
    let memory_ns = |op: RoundTripOp, rep: u32| {
        samples
            .iter()
            .find(|s| s.target == Target::Memory && s.op == op && s.rep == rep)
            .map(RoundTripSample::ns_per_key)
            .ok_or_else(|| {
                format!(
                    "repetition {rep} has no in-memory {} sample to compare with",
                    op.label()
                )
            })
    };
    let mut cells: Vec<(Target, RoundTripOp, u32)> = samples
        .iter()
        .map(|s| (s.target, s.op, s.per_round_trip))
        .collect();
    cells.sort();
    cells.dedup();
    let mut rows = Vec::with_capacity(cells.len());
    for (target, op, per_round_trip) in cells {
        let cell: Vec<&RoundTripSample> = samples
            .iter()
            .filter(|s| (s.target, s.op, s.per_round_trip) == (target, op, per_round_trip))
            .collect();
        let rates: Vec<f64> = cell.iter().map(|s| 1e9 / s.ns_per_key()).collect();
        let slowdowns = cell
            .iter()
            .map(|s| Ok(s.ns_per_key() / memory_ns(op, s.rep)?))
            .collect::<Result<Vec<f64>, String>>()?;
        let mut round_trips: Vec<u64> = cell
            .iter()
            .flat_map(|s| s.round_trip_ns.iter().copied())
            .collect();
        round_trips.sort_unstable();
        let (rate_min, rate_max) = min_max(&rates);
        let (slow_min, slow_max) = min_max(&slowdowns);
        rows.push(RoundTripRow {
            target,
            op,
            per_round_trip,
            reps: cell.len() as u32,
            keys: cell[0].keys,
            keys_per_second: median(rates.iter().copied()),
            keys_per_second_min: rate_min,
            keys_per_second_max: rate_max,
            us_per_key: median(cell.iter().map(|s| s.ns_per_key() / 1e3)),
            round_trip_p50_us: nearest_rank(&round_trips, 0.50) / 1e3,
            round_trip_p99_us: nearest_rank(&round_trips, 0.99) / 1e3,
            slowdown_vs_memory: median(slowdowns.iter().copied()),
            slowdown_min: slow_min,
            slowdown_max: slow_max,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(
        target: Target,
        op: RoundTripOp,
        per: u32,
        rep: u32,
        total_ns: u64,
        rt: &[u64],
    ) -> RoundTripSample {
        RoundTripSample {
            target,
            op,
            per_round_trip: per,
            rep,
            keys: 1000,
            total_ns,
            round_trip_ns: rt.to_vec(),
        }
    }

    #[test]
    fn rows_take_medians_spreads_and_per_repetition_slowdowns() {
        use RoundTripOp::Lookup;
        let samples = vec![
            // Memory: 10, 20, 40 ns per key in repetitions 0, 1, 2.
            sample(Target::Memory, Lookup, 0, 0, 10_000, &[]),
            sample(Target::Memory, Lookup, 0, 1, 20_000, &[]),
            sample(Target::Memory, Lookup, 0, 2, 40_000, &[]),
            // Server: 1000, 3000, 2000 ns per key; slowdowns 100, 150, 50.
            sample(Target::Server, Lookup, 16, 0, 1_000_000, &[5, 1, 3]),
            sample(Target::Server, Lookup, 16, 1, 3_000_000, &[2, 4]),
            sample(Target::Server, Lookup, 16, 2, 2_000_000, &[100]),
        ];
        let rows = aggregate(&samples).unwrap();
        assert_eq!(rows.len(), 2);
        let m = &rows[0];
        assert_eq!((m.target, m.per_round_trip, m.reps), (Target::Memory, 0, 3));
        assert_eq!(m.slowdown_vs_memory, 1.0);
        assert!(m.round_trip_p50_us.is_nan());
        let s = &rows[1];
        assert_eq!(s.target, Target::Server);
        assert_eq!(s.keys_per_second, 1e9 / 2000.0);
        assert_eq!(
            (s.keys_per_second_min, s.keys_per_second_max),
            (1e9 / 3000.0, 1e9 / 1000.0)
        );
        assert_eq!(s.us_per_key, 2.0);
        assert_eq!(
            (s.slowdown_vs_memory, s.slowdown_min, s.slowdown_max),
            (100.0, 50.0, 150.0)
        );
        // Pooled round trips 1, 2, 3, 4, 5, 100 ns: nearest-rank p50 = 3, p99 = 100.
        assert_eq!(s.round_trip_p50_us, 3e-3);
        assert_eq!(s.round_trip_p99_us, 100e-3);
    }

    #[test]
    fn a_repetition_without_its_memory_sample_or_an_empty_sample_is_an_error() {
        use RoundTripOp::Insert;
        let no_memory = [sample(Target::Server, Insert, 1, 4, 10, &[10])];
        let e = aggregate(&no_memory).unwrap_err();
        assert!(e.contains("repetition 4 has no in-memory insert"), "{e}");
        let empty = [sample(Target::Memory, Insert, 0, 0, 0, &[])];
        let e = aggregate(&empty).unwrap_err();
        assert!(e.contains("0 ns"), "{e}");
    }
}
