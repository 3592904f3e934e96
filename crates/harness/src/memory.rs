//! Heap memory measured, not estimated: a counting global allocator, installed by the sweep binary
//! and by the criterion bench (whose records, [`crate::schema::bench::BenchRecord`], carry the bytes).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A global allocator that forwards to [`System`] and counts live requested heap bytes, so that a
/// binary can measure what a data structure holds (the sweep's `HashSet` baseline). Install it
/// with `#[global_allocator]` and read the count with [`CountingAlloc::live_bytes`].
pub struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);

impl CountingAlloc {
    /// Bytes currently allocated through this allocator (requested sizes, not allocator
    /// overhead). Meaningful only in a binary that installed it.
    pub fn live_bytes() -> usize {
        LIVE.load(Ordering::Relaxed)
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
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}
