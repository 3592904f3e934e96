//! Sweep rows to and from CSV: a header row, then one record per [`SweepRow`] in field order.
//!
//! Floats are written in their shortest round-trip form, so `read_csv(write_csv(rows)) == rows`.

use std::path::Path;

use bloomlab_harness::SweepRow;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ReportError;

/// Writes `rows` to `path` (created or truncated) with a header row.
pub fn write_csv(rows: &[SweepRow], path: &Path) -> Result<(), ReportError> {
    write_rows(rows, path)
}

/// Reads every row of a CSV written by [`write_csv`]. Errors name the path and, for a bad record,
/// its position and the field that failed to parse.
pub fn read_csv(path: &Path) -> Result<Vec<SweepRow>, ReportError> {
    read_rows(path)
}

/// Writes any serde rows to `path` (created or truncated) with a header row.
pub fn write_rows<T: Serialize>(rows: &[T], path: &Path) -> Result<(), ReportError> {
    let csv_err = |source| ReportError::Csv {
        path: path.to_path_buf(),
        cause: source,
    };
    let mut writer = csv::Writer::from_path(path).map_err(csv_err)?;
    for row in rows {
        writer.serialize(row).map_err(csv_err)?;
    }
    writer.flush().map_err(|source| ReportError::Io {
        action: "writing",
        path: path.to_path_buf(),
        cause: source,
    })
}

/// Reads every row of a CSV written by [`write_rows`].
pub fn read_rows<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, ReportError> {
    let file = std::fs::File::open(path).map_err(|source| ReportError::Io {
        action: "opening",
        path: path.to_path_buf(),
        cause: source,
    })?;
    let mut reader = csv::Reader::from_reader(std::io::BufReader::new(file));
    reader
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .map_err(|source| ReportError::Csv {
            path: path.to_path_buf(),
            cause: source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{synthetic_rows, temp_dir};

    #[test]
    fn csv_round_trips_exactly() {
        let rows = synthetic_rows();
        let dir = temp_dir("csv_round_trip");
        let path = dir.join("rows.csv");
        write_csv(&rows, &path).unwrap();
        let back = read_csv(&path).unwrap();
        assert_eq!(back.len(), rows.len(), "row count after round trip");
        for (i, (a, b)) in rows.iter().zip(&back).enumerate() {
            assert_eq!(a, b, "row {i} differs after the CSV round trip");
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let header = text.lines().next().unwrap();
        assert!(
            header.starts_with("filter,layout,key_set,n,p,overfill,"),
            "header row: {header}"
        );
        assert_eq!(
            text.lines().count(),
            rows.len() + 1,
            "one header plus one line per row"
        );
    }

    #[test]
    fn non_finite_figures_round_trip() {
        // A row with no false positive has an infinite log2(1/fpr); a figure may be undefined.
        let mut rows = synthetic_rows();
        rows[0].space_overhead = f64::INFINITY;
        rows[1].space_overhead = f64::NEG_INFINITY;
        rows[2].estimated_count = f64::NAN;
        let dir = temp_dir("csv_non_finite");
        let path = dir.join("rows.csv");
        write_csv(&rows, &path).unwrap();
        let back = read_csv(&path).unwrap();
        assert_eq!(back[0].space_overhead, f64::INFINITY);
        assert_eq!(back[1].space_overhead, f64::NEG_INFINITY);
        assert!(
            back[2].estimated_count.is_nan(),
            "{}",
            back[2].estimated_count
        );
    }

    #[test]
    fn missing_csv_names_the_path() {
        let dir = temp_dir("csv_missing");
        let path = dir.join("no-such.csv");
        let err = read_csv(&path).unwrap_err();
        assert!(matches!(err, ReportError::Io { .. }), "{err:?}");
        assert!(err.to_string().contains("no-such.csv"), "{err}");
    }

    #[test]
    fn malformed_csv_names_the_path_and_field() {
        let dir = temp_dir("csv_malformed");
        let path = dir.join("bad.csv");
        let rows = synthetic_rows();
        write_csv(&rows[..1], &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        let record = lines.next().unwrap();
        // Replace the n column (4th) with a word.
        let mut fields: Vec<&str> = record.split(',').collect();
        fields[3] = "many";
        std::fs::write(&path, format!("{header}\n{}\n", fields.join(","))).unwrap();
        let err = read_csv(&path).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, ReportError::Csv { .. }), "{err:?}");
        assert!(message.contains("bad.csv"), "{message}");
        assert!(message.contains("n"), "{message}");
    }
}
