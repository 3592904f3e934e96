//! Heap memory measured, not estimated: a counting global allocator, installed by the sweep binary
//! and by the criterion bench (whose records, [`crate::schema::bench::BenchRecord`], carry the bytes).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A global allocator that forwards to [`System`] and counts live requested heap bytes, so that a
/// binary can measure what a data structure holds (the sweep's `HashSet` baseline). Install it
/// with `#[global_allocator]` and read the count with [`CountingAlloc::live_bytes`].
pub struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Bytes the current thread allocated less the bytes it freed, wrapping (a `const`
    /// initialiser and no destructor: reading it never allocates, so the allocator may use it).
    static THREAD_NET: Cell<usize> = const { Cell::new(0) };
}

/// Adds `add` and subtracts `sub` on the current thread's count (nothing once the thread's
/// locals are gone, while it exits).
#[inline]
fn thread_count(add: usize, sub: usize) {
    let _ = THREAD_NET.try_with(|c| c.set(c.get().wrapping_add(add).wrapping_sub(sub)));
}

impl CountingAlloc {
    /// Bytes currently allocated through this allocator (requested sizes, not allocator
    /// overhead). Meaningful only in a binary that installed it.
    pub fn live_bytes() -> usize {
        LIVE.load(Ordering::Relaxed)
    }

    /// Bytes the calling thread has allocated through this allocator less those it has freed
    /// (requested sizes, wrapping). The change across a piece of code that runs on one thread and
    /// frees only what it allocated is what that code still holds, whatever other threads
    /// allocate meanwhile (which [`live_bytes`](Self::live_bytes) would count). Meaningful only
    /// in a binary that installed it.
    pub fn thread_bytes() -> usize {
        THREAD_NET.try_with(Cell::get).unwrap_or(0)
    }
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; the counter is
// bookkeeping only.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
            thread_count(layout.size(), 0);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
            thread_count(layout.size(), 0);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        thread_count(0, layout.size());
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
            thread_count(new_size, layout.size());
        }
        p
    }
}
