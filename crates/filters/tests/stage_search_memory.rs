//! A scalable filter's stage search allocates the first stage and the stage it returns, nothing
//! between: building `scalable/sbbf/xxh3` for 1000 keys at p = 1e-80 (a rate split-block's fixed
//! k = 8 cannot reach) once built every candidate on the way to refusing, up to 10 GB.
//!
//! The only test of its binary, so that the peak it reads is its own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use bloomlab_filters::{Spec, registry};

struct Peak;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` with the same arguments; the counters only observe.
unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Peak = Peak;

/// Bytes allocated at the peak of `f`, above what was live when it started.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - before)
}

#[test]
fn a_scalable_build_holds_at_most_its_first_and_its_returned_stage() {
    // Room for the chain's bookkeeping (its stage vector, names in errors), not for a stage.
    const SLACK: usize = 64 << 10;
    let names: Vec<String> = registry::names()
        .into_iter()
        .filter(|n| n.starts_with("scalable/"))
        .collect();
    assert!(names.len() >= 4, "{names:?}");
    for name in &names {
        for (n, p) in [(1000, 1e-80), (1000, 1e-7), (100_000, 0.01), (1, 0.5)] {
            // A lower bound of the first stage's array (`Scalable::sized_bytes`): the search may
            // enlarge the first stage, which it then returns.
            let first = registry::sized_bytes(name, n, p).unwrap_or(0) as usize;
            let (built, peak) = peak_of(|| registry::build(name, Spec::Target { n, p }));
            let held = built.as_ref().map_or(0, |f| f.memory_bytes());
            assert!(
                peak <= first + held + SLACK,
                "{name} n = {n} p = {p}: peak {peak} B, first stage {first} B, \
                 returned {held} B ({})",
                built.map_or_else(|e| e.to_string(), |f| format!("{} bits", f.bits()))
            );
        }
    }
}
