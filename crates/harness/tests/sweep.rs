//! The sweep: thread-count independence and configuration errors.

use bloomlab_harness::bloom::sweep::{self, Grid, SweepConfig};
use bloomlab_harness::keys::KeySetKind;
use bloomlab_harness::{HarnessError, Selection, SweepRow};

fn small_config(threads: usize) -> SweepConfig {
    let mut c = SweepConfig::with_grids(vec![Grid {
        filters: Selection::Only(vec![
            "classic/murmur3/mitz64/flat".parse().unwrap(),
            "blocked512/xxh64".parse().unwrap(),
            "sbbf/fnv1a".parse().unwrap(),
            "textbook-fnv1a-i32".parse().unwrap(),
        ]),
        key_sets: vec![KeySetKind::RandomU64, KeySetKind::Url],
        n: vec![2_000, 8_000],
        p: vec![0.05, 0.01],
        overfill: vec![1.0, 2.0],
    }]);
    c.threads = threads;
    c.timing = false;
    c.sampling.seed = 77;
    c
}

fn run(c: &SweepConfig) -> Vec<SweepRow> {
    let plan = c.plan().unwrap();
    sweep::run(c, &plan, &|_| {}).unwrap()
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let one = run(&small_config(1));
    let two = run(&small_config(2));
    assert_eq!(one.len(), 4 * 2 * 2 * 2 * 2);
    // Timing is off, so every column, floats included, must be bit-identical.
    assert_eq!(one, two);
    let mut other_seed = small_config(2);
    other_seed.sampling.seed = 78;
    assert_ne!(one, run(&other_seed));
}

#[test]
fn the_layout_column_holds_each_family_name_and_reads_back_as_the_same_layout() {
    let mut c = small_config(2);
    c.grids[0].n = vec![2_000];
    c.grids[0].p = vec![0.05];
    c.grids[0].overfill = vec![1.0];
    let rows = run(&c);
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in &rows {
        writer.serialize(row).unwrap();
    }
    let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let column = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "layout")
        .expect("a layout column");
    let expected = [
        ("classic/murmur3/mitz64/flat", "classic"),
        ("blocked512/xxh64", "blocked512"),
        ("sbbf/fnv1a", "sbbf"),
        ("textbook-fnv1a-i32", "textbook"),
    ];
    for (record, row) in reader.records().zip(&rows) {
        let record = record.unwrap();
        let (_, layout) = expected
            .iter()
            .find(|(f, _)| *f == row.filter.to_string())
            .expect("a filter of the grid");
        assert_eq!(&record[column], *layout, "{}", row.filter);
    }
    let back: Vec<SweepRow> = csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back.len(), rows.len());
    for (b, r) in back.iter().zip(&rows) {
        assert_eq!((&b.filter, b.layout), (&r.filter, r.layout));
    }
}

#[test]
fn timing_columns_are_filled_when_timing_is_on() {
    let mut c = small_config(2);
    c.grids[0].n = vec![2_000];
    c.grids[0].p = vec![0.05];
    c.grids[0].overfill = vec![1.0];
    c.timing = true;
    c.timing_passes = 3;
    c.heap_bytes = None;
    for row in run(&c) {
        assert!(
            row.insert_ns > 0.0 && row.lookup_present_ns > 0.0 && row.lookup_absent_ns > 0.0,
            "{row:?}"
        );
        assert!(
            row.hashset_present_ns > 0.0 && row.hashset_absent_ns > 0.0,
            "{row:?}"
        );
        assert_eq!(row.hashset_memory_bytes, 0, "no heap counter: not measured");
    }
}

#[test]
fn duplicate_rows_across_grids_run_once() {
    let mut c = small_config(1);
    c.grids.push(c.grids[0].clone());
    assert_eq!(c.plan().unwrap().rows.len(), 4 * 2 * 2 * 2 * 2);
}

fn error_of(edit: impl FnOnce(&mut SweepConfig)) -> String {
    let mut c = small_config(1);
    edit(&mut c);
    c.plan().unwrap_err().to_string()
}

#[test]
fn bad_configuration_is_an_error_naming_the_value_and_range() {
    type Edit = Box<dyn FnOnce(&mut SweepConfig)>;
    let cases: Vec<(Edit, &[&str])> = vec![
        (
            Box::new(|c| c.grids[0].n = vec![0]),
            &["n = 0", "at least 1"],
        ),
        (
            Box::new(|c| c.grids[0].p = vec![1.5]),
            &["p = 1.5", "(0, 1)"],
        ),
        (Box::new(|c| c.grids[0].p = vec![0.0]), &["p = 0", "(0, 1)"]),
        (
            Box::new(|c| c.sampling.confidence = 1.0),
            &["confidence = 1", "(0, 1)"],
        ),
        (
            Box::new(|c| c.sampling.precision = 0.0),
            &["precision = 0", "> 0"],
        ),
        (
            Box::new(|c| c.sampling.precision = f64::NAN),
            &["precision = NaN", "> 0"],
        ),
        (
            Box::new(|c| c.grids[0].overfill = vec![-1.0]),
            &["overfill = -1", "> 0"],
        ),
        (
            Box::new(|c| c.sampling.max_queries = 0),
            &["max-queries = 0", "at least 1"],
        ),
        (
            Box::new(|c| c.grids[0].filters = Selection::Only(vec![])),
            &["filters", "at least one"],
        ),
        (
            Box::new(|c| c.grids[0].key_sets.clear()),
            &["key sets", "at least one"],
        ),
    ];
    for (edit, wanted) in cases {
        let msg = error_of(edit);
        for w in wanted {
            assert!(msg.contains(w), "{msg:?} lacks {w:?}");
        }
    }
    // An unknown filter cannot reach a config: it is refused where it is parsed, naming the
    // known ones.
    let msg = Selection::parse_list("classic/md5/km/flat")
        .unwrap_err()
        .to_string();
    for w in ["classic/md5/km/flat", "sbbf/xxh3", "textbook-fnv1a-i32"] {
        assert!(msg.contains(w), "{msg:?} lacks {w:?}");
    }
    let err = "nope".parse::<KeySetKind>().unwrap_err();
    assert!(matches!(err, HarnessError::UnknownKeySet { .. }));
}

#[test]
fn all_expands_to_every_registered_filter() {
    let mut c = small_config(1);
    c.grids[0].filters = Selection::All;
    c.grids[0].key_sets = vec![KeySetKind::RandomU64];
    c.grids[0].n = vec![100];
    c.grids[0].p = vec![0.1];
    c.grids[0].overfill = vec![1.0];
    let plan = c.plan().unwrap();
    assert_eq!(plan.rows.len(), bloomlab_filters::registry::names().len());
}

#[test]
fn file_key_set_needs_more_distinct_lines_than_members() {
    let dir = tempfile::Builder::new()
        .prefix("bloomlab-sweep-keys-")
        .tempdir()
        .unwrap();
    let path = dir.path().join("keys.txt");
    std::fs::write(&path, "a\nb\nc\na\n").unwrap();
    let msg = error_of(|c| {
        c.grids[0].key_sets = vec![KeySetKind::File(path.clone())];
        c.grids[0].n = vec![3];
        c.grids[0].overfill = vec![1.0];
    });
    assert!(
        msg.contains("3 distinct") && msg.contains("needed") && msg.contains("bloomlab-sweep-keys"),
        "{msg}"
    );
}
