//! The Redis round-trip report's rows: CSV (`roundtrips.csv`), the Markdown table, and the picture
//! ([`crate::plot::roundtrips`]).

use std::path::Path;

use bloomlab_harness::schema::roundtrip::{RoundTripRow, Target};

use crate::{ReportError, fmt, markdown};

/// File name of the CSV.
pub const CSV_NAME: &str = "roundtrips.csv";
/// File name of the picture.
pub const PNG_NAME: &str = "roundtrips.png";

/// Writes `rows` to `path` with a header row.
pub fn write_csv(rows: &[RoundTripRow], path: &Path) -> Result<(), ReportError> {
    crate::csv_io::write_rows(rows, path)
}

/// Reads rows written by [`write_csv`].
pub fn read_csv(path: &Path) -> Result<Vec<RoundTripRow>, ReportError> {
    crate::csv_io::read_rows(path)
}

fn us(x: f64) -> String {
    if x.is_finite() {
        fmt::sig(x, 3)
    } else {
        "-".into()
    }
}

/// The table: one line per cell, memory first, then by operation, target and batch size.
pub fn table(rows: &[RoundTripRow]) -> String {
    let mut sorted: Vec<&RoundTripRow> = rows.iter().collect();
    sorted.sort_by_key(|r| (r.op, r.target != Target::Memory, r.target, r.per_round_trip));
    let body: Vec<Vec<String>> = sorted
        .iter()
        .map(|r| {
            vec![
                r.op.label().to_string(),
                r.target.label().to_string(),
                if r.per_round_trip == 0 {
                    "no round trip".into()
                } else {
                    r.per_round_trip.to_string()
                },
                format!(
                    "{} ({} to {})",
                    fmt::sig(r.keys_per_second, 3),
                    fmt::sig(r.keys_per_second_min, 3),
                    fmt::sig(r.keys_per_second_max, 3)
                ),
                us(r.us_per_key),
                us(r.round_trip_p50_us),
                us(r.round_trip_p99_us),
                if r.target == Target::Memory {
                    "1".into()
                } else {
                    format!(
                        "{} ({} to {})",
                        fmt::sig(r.slowdown_vs_memory, 3),
                        fmt::sig(r.slowdown_min, 3),
                        fmt::sig(r.slowdown_max, 3)
                    )
                },
            ]
        })
        .collect();
    markdown::table(
        &[
            "operation",
            "where the bits are",
            "keys per round trip",
            "keys/s, median (slowest to fastest repetition)",
            "µs per key",
            "round trip p50 (µs)",
            "round trip p99 (µs)",
            "times slower than memory, median (range)",
        ],
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_harness::schema::roundtrip::RoundTripOp;

    fn row(target: Target, per: u32, rate: f64) -> RoundTripRow {
        RoundTripRow {
            target,
            op: RoundTripOp::Lookup,
            per_round_trip: per,
            reps: 3,
            keys: 100,
            keys_per_second: rate,
            keys_per_second_min: rate / 2.0,
            keys_per_second_max: rate * 2.0,
            us_per_key: 1e6 / rate,
            round_trip_p50_us: if per == 0 { f64::NAN } else { 10.0 },
            round_trip_p99_us: if per == 0 { f64::NAN } else { 20.0 },
            slowdown_vs_memory: 1e7 / rate,
            slowdown_min: 1e7 / rate / 2.0,
            slowdown_max: 1e7 / rate * 2.0,
        }
    }

    #[test]
    fn csv_round_trips_and_the_table_puts_memory_first() {
        let rows = vec![
            row(Target::Server, 16, 1e5),
            row(Target::Memory, 0, 1e7),
            row(Target::Server, 1, 2e4),
        ];
        let dir = std::env::temp_dir().join(format!("bloomlab-rt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(CSV_NAME);
        write_csv(&rows, &path).unwrap();
        let back = read_csv(&path).unwrap();
        // NaN != NaN: compare through Debug, which prints NaN.
        assert_eq!(format!("{back:?}"), format!("{rows:?}"));
        let t = table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[2].contains("in memory") && lines[2].contains("no round trip"),
            "{t}"
        );
        assert!(
            lines[3].contains("| 1 |") && lines[4].contains("| 16 |"),
            "{t}"
        );
        assert!(lines[4].contains("100 (50.0 to 200)"), "{t}");
        let png = crate::plot::roundtrips::draw(&rows, &dir.join(PNG_NAME)).unwrap();
        assert!(std::fs::metadata(&png).unwrap().len() > 1000);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
