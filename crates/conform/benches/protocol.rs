//! The process protocol's own cost per key (issue 27's target: at most 100 ns per key at 4096
//! keys per batch against the null adapter): insert and query of 4096-key batches of 16-byte and
//! 8-byte keys through [`ProcessCandidate`] to `conform-null-adapter` (Rust), and, for
//! information, to `scripts/conform/null.py` (Python, when `python3` runs).
//!
//! `cargo bench -p bloomlab-conform --bench protocol`; criterion's time per element is ns per key.

use std::hint::black_box;
use std::path::Path;

use bloomlab_conform::process::{Command, ProcessCandidate};
use bloomlab_conform::{Candidate, KeyBatch};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const BATCH: usize = 4096;

/// `BATCH` distinct keys of `width` bytes (a seeded mix of the index, so no two are equal).
fn keys(width: usize) -> KeyBatch {
    let mut b = KeyBatch::new();
    let mut key = vec![0u8; width];
    for i in 0..BATCH as u64 {
        let x = (i ^ 0x9e37_79b9_7f4a_7c15).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        for (j, byte) in key.iter_mut().enumerate() {
            *byte = (x.rotate_left(8 * j as u32) ^ i) as u8;
        }
        key[..8].copy_from_slice(&i.to_le_bytes());
        b.push(&key);
    }
    b
}

fn adapters() -> Vec<(&'static str, Command)> {
    let mut out = vec![(
        "rust-null",
        Command::new([env!("CARGO_BIN_EXE_conform-null-adapter")]),
    )];
    let null_py = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/conform/null.py");
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    if python.is_ok_and(|o| o.status.success()) {
        out.push((
            "python-null",
            Command::new(["python3".into(), null_py.into_os_string()]),
        ));
    } else {
        eprintln!("protocol bench: python3 not found, the Python null adapter is left out");
    }
    out
}

fn protocol(c: &mut Criterion) {
    let mut group = c.benchmark_group("protocol");
    group.throughput(Throughput::Elements(BATCH as u64));
    for (name, command) in adapters() {
        let candidate = ProcessCandidate::connect(command).expect("the null adapter starts");
        let mut filter = candidate.build(1_000_000, 0.01).expect("CREATE");
        let mut out = Vec::with_capacity(BATCH);
        for width in [16, 8] {
            let batch = keys(width);
            group.bench_with_input(
                BenchmarkId::new(format!("{name}/insert"), width),
                &batch,
                |b, batch| b.iter(|| filter.insert(black_box(batch)).unwrap()),
            );
            group.bench_with_input(
                BenchmarkId::new(format!("{name}/query"), width),
                &batch,
                |b, batch| {
                    b.iter(|| {
                        filter.query(black_box(batch), &mut out).unwrap();
                        black_box(&out);
                    })
                },
            );
        }
    }
    group.finish();
}

fn config() -> Criterion {
    // No plots: the HTML report needs fonts registered by the report crate, which this crate
    // does not depend on.
    Criterion::default().without_plots().configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = protocol
}
criterion_main!(benches);
