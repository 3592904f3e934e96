//! The sweep's `HashSet` baseline is built while the group's statistical trials allocate on other
//! threads; its heap bytes come from the building thread's own count, which those allocations
//! must not reach. This binary installs the counting allocator, as the sweep binary does.

use std::sync::atomic::{AtomicBool, Ordering};

use bloomlab_harness::bloom::timing::HashSetBaseline;
use bloomlab_harness::memory::CountingAlloc;
use bloomlab_harness::{KeySet, KeySetKind};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Buckets of std's SwissTable sized for `members` keys: the next power of two of 8/7 of the
/// capacity.
fn buckets_for(members: u64) -> usize {
    ((members * 8 / 7) as usize).next_power_of_two()
}

#[test]
fn a_baseline_counts_its_own_bytes_while_another_thread_allocates() {
    let keys = KeySet::new(KeySetKind::RandomU64, 1).expect("random-u64 keys");
    let members = 100_000u64;
    let building = AtomicBool::new(true);
    let started = AtomicBool::new(false);
    let live_before = CountingAlloc::live_bytes();
    let (bytes, live_change) = std::thread::scope(|s| {
        // Another thread allocates and holds 64 KiB blocks (up to 64 MiB) from before the set is
        // built until it is.
        let other = s.spawn(|| {
            let mut held = vec![vec![1u8; 1 << 16]];
            started.store(true, Ordering::Release);
            while building.load(Ordering::Relaxed) && held.len() < 1024 {
                held.push(vec![1u8; 1 << 16]);
            }
            held
        });
        while !started.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
        let (set, bytes) =
            HashSetBaseline::build(&keys, members, Some(CountingAlloc::thread_bytes));
        building.store(false, Ordering::Relaxed);
        let held = other.join().expect("the allocating thread");
        let live_change = CountingAlloc::live_bytes() - live_before;
        drop((set, held));
        (bytes as usize, live_change)
    });
    // Each bucket an 8-byte slot and a control byte, plus at most one group (16 or 32 bytes on
    // the platforms std supports) of trailing control bytes.
    let buckets = buckets_for(members);
    assert!(
        (buckets * 9..=buckets * 9 + 64).contains(&bytes),
        "the set's own table is {} to {} bytes; counted {bytes}",
        buckets * 9,
        buckets * 9 + 64
    );
    assert!(
        live_change >= bytes + (1 << 16),
        "the process-wide count ({live_change} bytes) includes the other thread's allocations"
    );
}

#[test]
fn dropping_a_string_baseline_frees_every_byte_it_counted() {
    let keys = KeySet::new(KeySetKind::Url, 1).expect("url keys");
    let members = 20_000u64;
    let before = CountingAlloc::thread_bytes();
    let (set, bytes) = HashSetBaseline::build(&keys, members, Some(CountingAlloc::thread_bytes));
    let HashSetBaseline::Str(strings) = &set else {
        panic!("url keys make a HashSet<String>")
    };
    assert_eq!(strings.len(), members as usize, "one string per member");
    // A 24-byte `String` and a control byte per bucket.
    let table = buckets_for(members) * 25;
    assert!(
        bytes as usize > table + members as usize * 10,
        "the set's table ({table} bytes) and its strings' bytes (more than 10 each); counted {bytes}"
    );
    drop(set);
    assert_eq!(
        CountingAlloc::thread_bytes().wrapping_sub(before),
        0,
        "after the drop (strings freed in address order), nothing the set held is still allocated"
    );
}
