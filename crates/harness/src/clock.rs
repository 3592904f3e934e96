//! The clock the sweep's per-core query rate divides by: the calling thread's time on a core.
//!
//! A leaf module, shared by the trial runner and the group key store.

use std::time::Instant;

/// The time the calling thread spends on a core: what "per second per core" divides by, so that on
/// a shared machine the figure does not fall with the time the thread waits for a core.
///
/// On Unix it reads the thread's CPU time with `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` (on Linux
/// the scheduler's own account of the thread's run time, the figure `/proc/thread-self/schedstat`
/// shows, not sampled); where that clock is unavailable it falls back to wall time, which equals it
/// on an otherwise idle core. A reading only feeds timing figures, never a statistic.
#[derive(Debug)]
pub struct CoreClock {
    wall: Instant,
    cpu_ns: Option<u64>,
}

impl CoreClock {
    /// Starts the clock on the calling thread.
    pub fn start() -> Self {
        Self {
            cpu_ns: thread_cpu_ns(),
            wall: Instant::now(),
        }
    }

    /// Seconds on a core since [`start`](Self::start), on the same thread; wall seconds if the
    /// thread's CPU clock could not be read at either end.
    pub fn seconds(&self) -> f64 {
        match (self.cpu_ns, thread_cpu_ns()) {
            (Some(a), Some(b)) if b >= a => (b - a) as f64 / 1e9,
            _ => self.wall.elapsed().as_secs_f64(),
        }
    }
}

/// The calling thread's CPU time in nanoseconds, or `None` if the clock cannot be read.
#[cfg(unix)]
fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call, and
    // CLOCK_THREAD_CPUTIME_ID names the calling thread's clock, which needs nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return None;
    }
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u64::try_from(ts.tv_nsec).ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

/// No per-thread CPU clock here: [`CoreClock`] uses wall time.
#[cfg(not(unix))]
fn thread_cpu_ns() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn thread_cpu_clock_is_readable_and_never_goes_back() {
        let a = thread_cpu_ns().expect("CLOCK_THREAD_CPUTIME_ID readable on this Unix");
        // Burn some CPU on this thread so that the clock has something to count.
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        let b = thread_cpu_ns().unwrap();
        assert!(
            b > a,
            "thread CPU time {a} ns then {b} ns after busy work (x = {x})"
        );
    }

    /// A sleeping thread is not on a core: the clock must not count the sleep, which is the
    /// reason the per-core rate uses it rather than wall time. 100 ms asleep against a 50 ms
    /// bound leaves the wake-up's own CPU time (microseconds) a wide margin.
    #[cfg(unix)]
    #[test]
    fn core_clock_does_not_count_sleep() {
        let clock = CoreClock::start();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let s = clock.seconds();
        assert!(
            (0.0..0.05).contains(&s),
            "{s} core seconds over a 100 ms sleep (bound 0.05 s)"
        );
    }

    /// The libc clock counts the figure the hand parser read before: the scheduler's run time of
    /// the thread (first field of `/proc/thread-self/schedstat`). Both are monotone and the clock
    /// also counts the running slice, so a reading taken after a schedstat reading is at least it.
    #[cfg(target_os = "linux")]
    #[test]
    fn thread_cpu_clock_is_at_least_schedstat_read_before_it() {
        let Ok(text) = std::fs::read_to_string("/proc/thread-self/schedstat") else {
            eprintln!("skipped: /proc/thread-self/schedstat unreadable (schedstats off?)");
            return;
        };
        let sched: u64 = text.split_whitespace().next().unwrap().parse().unwrap();
        let clock = thread_cpu_ns().unwrap();
        assert!(
            clock >= sched,
            "CLOCK_THREAD_CPUTIME_ID {clock} ns < schedstat run time {sched} ns read before it"
        );
        // The same quantity, not another unit or another thread's: within a second of each other
        // on a thread that has only just started running tests.
        assert!(
            clock - sched < 1_000_000_000,
            "CLOCK_THREAD_CPUTIME_ID {clock} ns vs schedstat {sched} ns"
        );
    }
}
