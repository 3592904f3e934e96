//! Key sets: reproducible to the bit, members and non-members disjoint, clear file errors.

use std::collections::HashSet;
use std::io::Write as _;

use bloomlab_harness::HarnessError;
use bloomlab_harness::keys::{Batch, FileKeys, KeySet, KeySetKind};

fn keys_of(set: &KeySet, start: u64, len: usize) -> Vec<Vec<u8>> {
    let mut batch = set.new_batch();
    set.fill(start, len, &mut batch);
    let mut out = Vec::new();
    batch.for_each_bytes(|b| out.push(b.to_vec()));
    out
}

const BUILT_IN: [KeySetKind; 4] = [
    KeySetKind::RandomU64,
    KeySetKind::Article,
    KeySetKind::Url,
    KeySetKind::Hex,
];

#[test]
fn same_seed_same_keys_and_batches_do_not_matter() {
    for kind in BUILT_IN {
        let a = KeySet::new(kind.clone(), 42).unwrap();
        let b = KeySet::new(kind.clone(), 42).unwrap();
        let whole = keys_of(&a, 0, 10_000);
        assert_eq!(whole, keys_of(&b, 0, 10_000), "{kind}");
        // Keys depend only on their index, not on how the range is cut into batches.
        let mut pieces = keys_of(&b, 0, 3_333);
        pieces.extend(keys_of(&b, 3_333, 6_667));
        assert_eq!(whole, pieces, "{kind}");
    }
}

#[test]
fn different_seed_different_keys_except_the_unseeded_article_set() {
    for kind in [KeySetKind::RandomU64, KeySetKind::Url, KeySetKind::Hex] {
        let a = keys_of(&KeySet::new(kind.clone(), 1).unwrap(), 0, 1_000);
        let b = keys_of(&KeySet::new(kind.clone(), 2).unwrap(), 0, 1_000);
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        // URL keys embed i, so two seeds can agree on a key only if every random choice agrees.
        assert!(
            same <= 10,
            "{kind}: {same} of 1000 keys equal across seeds 1 and 2"
        );
    }
    // The textbook workload is the same strings whatever the seed.
    let a = keys_of(&KeySet::new(KeySetKind::Article, 1).unwrap(), 5, 2);
    assert_eq!(a, vec![b"article-5".to_vec(), b"article-6".to_vec()]);
}

#[test]
fn keys_are_distinct_so_members_and_non_members_are_disjoint() {
    for kind in BUILT_IN {
        let set = KeySet::new(kind.clone(), 7).unwrap();
        let all = keys_of(&set, 0, 200_000);
        let distinct: HashSet<&Vec<u8>> = all.iter().collect();
        assert_eq!(distinct.len(), all.len(), "{kind}: repeated keys");
        // Far indices as well, where a non-member stream of a large trial lives.
        let far = keys_of(&set, (1 << 40) - 10, 20);
        assert!(far.iter().all(|k| !distinct.contains(k)), "{kind}");
    }
}

#[test]
fn shapes_are_as_documented() {
    let hex = KeySet::new(KeySetKind::Hex, 3).unwrap();
    for k in keys_of(&hex, 0, 100) {
        assert_eq!(k.len(), 64);
        assert!(
            k.iter()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
    }
    let url = KeySet::new(KeySetKind::Url, 3).unwrap();
    for (i, k) in keys_of(&url, 0, 100).into_iter().enumerate() {
        let s = String::from_utf8(k).unwrap();
        assert!(s.starts_with("http") && s.contains("://"), "{s}");
        assert!(s.contains(&format!("?id={i}&")), "{s}");
    }
    assert!(matches!(
        KeySet::new(KeySetKind::RandomU64, 3).unwrap().new_batch(),
        Batch::U64(_)
    ));
}

#[test]
fn names_round_trip_and_unknown_names_list_the_allowed_ones() {
    for kind in BUILT_IN {
        assert_eq!(kind.to_string().parse::<KeySetKind>().unwrap(), kind);
    }
    assert_eq!(
        "file:/tmp/x.txt".parse::<KeySetKind>().unwrap(),
        KeySetKind::File("/tmp/x.txt".into())
    );
    let err = "words".parse::<KeySetKind>().unwrap_err().to_string();
    assert!(
        err.contains("\"words\"") && err.contains("random-u64") && err.contains("file:PATH"),
        "{err}"
    );
}

/// A key file holding `text`, in a temporary directory removed when the returned guard drops.
fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("bloomlab-keys-")
        .tempdir()
        .unwrap();
    let path = dir.path().join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    (dir, path)
}

#[test]
fn missing_file_is_an_error_naming_the_path() {
    let path = std::env::temp_dir().join("bloomlab-no-such-key-file.txt");
    let err = KeySet::new(KeySetKind::File(path.clone()), 1).unwrap_err();
    assert!(matches!(err, HarnessError::KeyFile { .. }), "{err:?}");
    assert!(
        err.to_string().contains("bloomlab-no-such-key-file.txt"),
        "{err}"
    );
}

#[test]
fn file_duplicates_are_removed_and_counted_and_order_kept() {
    let (_dir, path) = temp_file("dups.txt", "b\na\r\nb\n\nc\na\nd\n");
    let set = KeySet::new(KeySetKind::File(path.clone()), 1).unwrap();
    let file: &FileKeys = set.file().unwrap();
    assert_eq!(file.lines, ["b", "a", "c", "d"]);
    assert_eq!((file.total_lines, file.duplicates), (6, 2));
    assert_eq!(set.available(), Some(4));
    assert_eq!(keys_of(&set, 2, 10), vec![b"c".to_vec(), b"d".to_vec()]);
}

#[test]
fn too_few_distinct_lines_is_an_error_with_the_counts() {
    let (_dir, path) = temp_file("few.txt", "x\ny\nx\nz\n");
    let set = KeySet::new(KeySetKind::File(path), 1).unwrap();
    let file = set.file().unwrap();
    assert!(file.check_members(2).is_ok());
    let err = file.check_members(3).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            HarnessError::KeyFileTooSmall {
                lines: 4,
                distinct: 3,
                duplicates: 1,
                members: 3,
                needed: 4,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        msg.contains("few.txt") && msg.contains("3 distinct") && msg.contains("1 duplicates"),
        "{msg}"
    );
}
