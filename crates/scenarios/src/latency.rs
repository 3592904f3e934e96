//! Latency histograms: every request's time recorded without allocating, quantiles read after.
//!
//! Log-linear buckets: exact below 64 ns, then 64 buckets per power of two, so a reported quantile
//! is within 1/128 (0.8%) of the true value, from nanoseconds to hours, in a fixed 30 KB array.
//! Each thread records into its own histogram; [`Histogram::merge`] combines them.

const SUB: u64 = 64;
const BUCKETS: usize = (SUB + (64 - 6) * SUB) as usize;

/// A histogram of durations in nanoseconds.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    total: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Histogram {{ n: {}, mean: {:.0} ns, p50: {} ns, p99: {} ns, max: {} ns }}",
            self.total,
            self.mean_ns(),
            self.quantile_ns(0.5),
            self.quantile_ns(0.99),
            self.max_ns
        )
    }
}

fn index(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let e = 63 - u64::from(ns.leading_zeros()); // >= 6
    let sub = (ns >> (e - 6)) - SUB; // 0..64
    (SUB + (e - 6) * SUB + sub) as usize
}

/// The middle of bucket `i`.
fn value(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let e = (i - SUB) / SUB + 6;
    let sub = (i - SUB) % SUB;
    let width = 1u64 << (e - 6);
    ((SUB + sub) << (e - 6)) + width / 2
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            total: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }

    /// Records one duration.
    #[inline]
    pub fn record(&mut self, d: std::time::Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.record_ns(ns);
    }

    /// Records one duration in nanoseconds.
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.counts[index(ns)] += 1;
        self.total += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
        self.sum_ns += other.sum_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// Number of durations recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Sum of the durations, in seconds.
    pub fn sum_s(&self) -> f64 {
        self.sum_ns as f64 * 1e-9
    }

    /// Mean in nanoseconds (NaN when empty).
    pub fn mean_ns(&self) -> f64 {
        if self.total == 0 {
            f64::NAN
        } else {
            self.sum_ns as f64 / self.total as f64
        }
    }

    /// The largest duration recorded (exact).
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The `q` quantile (0 < q <= 1): the smallest bucket whose cumulative count reaches
    /// `ceil(q * count)`, reported at the bucket's middle (within 0.8%); 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value(i).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_within_one_128th_of_the_value_and_monotone() {
        let mut last = 0;
        for ns in (0..10_000u64).chain((1..60).map(|e| (1u64 << e) + 12_345 % (1u64 << e))) {
            let i = index(ns);
            assert!(i < BUCKETS && i >= last.min(i), "{ns}");
            let v = value(i) as f64;
            assert!(
                (v - ns as f64).abs() <= ns as f64 / 128.0 + 0.5,
                "{ns} -> bucket {i} -> {v}"
            );
            last = i;
        }
        assert!(index(u64::MAX) < BUCKETS);
    }

    #[test]
    fn quantiles_of_a_known_sample() {
        let mut h = Histogram::new();
        for ns in 1..=1000u64 {
            h.record_ns(ns * 1000);
        }
        let p50 = h.quantile_ns(0.5) as f64;
        let p99 = h.quantile_ns(0.99) as f64;
        assert!((p50 - 500_000.0).abs() <= 500_000.0 / 128.0, "{p50}");
        assert!((p99 - 990_000.0).abs() <= 990_000.0 / 128.0, "{p99}");
        assert_eq!(h.count(), 1000);
        assert_eq!(h.max_ns(), 1_000_000);
        let mut g = Histogram::new();
        g.merge(&h);
        g.merge(&h);
        assert_eq!(g.count(), 2000);
        assert_eq!(g.quantile_ns(0.5), h.quantile_ns(0.5));
    }
}
