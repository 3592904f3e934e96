//! What both benches share, included by path (`#[path = "../common.rs"] mod common;`).

use criterion::{Criterion, PlottingBackend};

/// Criterion, with its HTML report (`target/criterion/report/index.html`, each benchmark's sample
/// and bootstrap distributions) when `BLOOMLAB_BENCH_HTML=1`, drawn by plotters so the pictures are
/// the same with or without gnuplot (`--plotting-backend` and `--noplot` still override). Off by
/// default: criterion's density estimates over its 100,000 bootstrap resamples add about 7 s per
/// benchmark on 2 cores (32 sketch benchmarks: 9.5 s without, 239 s with), hours on a full run.
/// Plotters renders text here with ab_glyph, which knows only registered fonts: if the report
/// crate's embedded fonts cannot be registered, the run goes on without plots and says why
/// (naming `bench`), instead of criterion panicking with `FontUnavailable` after the first
/// benchmark.
pub fn criterion(bench: &str) -> Criterion {
    let html = std::env::var("BLOOMLAB_BENCH_HTML").is_ok_and(|v| v == "1" || v == "true");
    match bloomlab_report::plot::register_fonts() {
        Ok(()) if html => Criterion::default().plotting_backend(PlottingBackend::Plotters),
        Ok(()) => Criterion::default().without_plots(),
        Err(e) => {
            eprintln!("{bench}: no criterion HTML report in this run: {e}");
            Criterion::default().without_plots()
        }
    }
    .configure_from_args()
}
