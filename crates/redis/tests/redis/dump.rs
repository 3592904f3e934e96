//! Export and import (issue 29, `bloomlab_redis::dump`) against real servers: bit-exact round
//! trips on a server and from a server into the cluster with another shard size, Guava files both
//! ways, a filter larger than the chunk, and bad files (truncated, damaged, another config, a
//! taken name) that leave nothing on the server.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bloomlab_filters::guava::{GuavaBloom, GuavaSizing, GuavaStrategy, Utf8Funnel};
use bloomlab_filters::{
    BitPositions, Blocked512, Bloom, FilterExt, FlatBits, GuavaMitz32, GuavaMitz64,
    KirschMitzenmacher, Murmur3, Xxh3,
};
use bloomlab_redis::config::CLUSTER_SHARD_BITS;
use bloomlab_redis::dump::{
    self, CHUNK_BYTES, DumpError, Expected, Format, ImportOptions, LOAD_EXPIRY,
};
use bloomlab_redis::{Connection, RedisBloom, RedisFilterError};

type Km = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;
type Guava64 = Bloom<Murmur3, GuavaMitz64, FlatBits>;
type Guava32 = Bloom<Murmur3, GuavaMitz32, FlatBits>;

fn no_progress() -> impl FnMut(u64, u64) {
    |_, _| {}
}

/// Every key of filter `name` on the server(s) at `urls` (SCAN, each node of a cluster).
fn keys_of(urls: &[String], name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for url in urls {
        let mut con = redis::Client::open(url.as_str())
            .unwrap()
            .get_connection()
            .unwrap();
        let mut cursor = 0u64;
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(format!("{{{name}*"))
                .arg("COUNT")
                .arg(1000)
                .query(&mut con)
                .unwrap();
            out.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
    }
    out
}

/// A filter of type `F` on `conn`, `members` inserted.
fn filled<F: BitPositions>(
    conn: Connection,
    name: &str,
    n: u64,
    p: f64,
    shard_bits: u64,
    members: &[String],
) -> RedisBloom<F> {
    let mut f = RedisBloom::<F>::create_or_open_sharded(conn, name, n, p, shard_bits).unwrap();
    f.insert_batch(members, 1024).unwrap();
    f
}

fn all_found<F: BitPositions>(f: &mut RedisBloom<F>, members: &[String]) {
    let mut missing = Vec::new();
    f.contains_batch(members, 1024, |i, hit| {
        if !hit {
            missing.push(i)
        }
    })
    .unwrap();
    assert!(
        missing.is_empty(),
        "{}: {} of {} keys not found after the import (first {:?})",
        f.name(),
        missing.len(),
        members.len(),
        missing.first().map(|&i| &members[i])
    );
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn export_to(url: &str, name: &str, path: &Path, format: Format) -> dump::Summary {
    dump::export(
        Connection::open(url).unwrap(),
        name,
        path,
        format,
        &mut no_progress(),
    )
    .unwrap_or_else(|e| panic!("export {name}: {e}"))
}

fn import_from(
    url: &str,
    name: &str,
    path: &Path,
    opts: &ImportOptions,
) -> dump::Result<dump::Summary> {
    dump::import(
        Connection::open(url).unwrap(),
        name,
        path,
        opts,
        &mut no_progress(),
    )
}

/// Export -> import under a new name -> same bytes, every key found, keys persistent.
fn round_trip<F: BitPositions>(url: &str, shard_bits: u64) {
    let label = bloomlab_redis::redis_name::<F>();
    let (n, p) = (20_000, 0.01);
    let members = common::keys("dumped", n);
    let name = common::unique_name("dump-src");
    let mut src = filled::<F>(
        Connection::single(url).unwrap(),
        &name,
        n,
        p,
        shard_bits,
        &members,
    );
    let dir = tmp();
    let file = dir.path().join("f.bloomlab");
    let out = export_to(url, &name, &file, Format::Bloomlab);
    let bytes = src.bytes().unwrap();
    assert_eq!(out.payload_bytes, bytes.len() as u64, "{label}");
    assert_eq!(
        out.file_bytes,
        std::fs::metadata(&file).unwrap().len(),
        "{label}"
    );
    assert_eq!(out.set_bits, src.set_bits().unwrap(), "{label}");
    // Only the target is left in the directory: the temporary file was renamed.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    let copy = common::unique_name("dump-dst");
    let summary = import_from(url, &copy, &file, &ImportOptions::default()).unwrap();
    assert_eq!(summary.config, *src.config(), "{label}");
    let mut dst = RedisBloom::<F>::open(Connection::single(url).unwrap(), &copy).unwrap();
    assert!(
        dst.bytes().unwrap() == bytes,
        "{label}: bytes differ after the round trip"
    );
    all_found(&mut dst, &members);
    // The load's expiry is gone once committed.
    let mut raw = redis::Client::open(url).unwrap().get_connection().unwrap();
    for key in dst.keys() {
        let ttl: i64 = redis::cmd("PTTL").arg(key).query(&mut raw).unwrap();
        assert_eq!(ttl, -1, "{label}: {key} still expires");
    }
    // The in-memory twin agrees bit for bit.
    let mut twin = F::sized_for(n, p).unwrap();
    for k in &members {
        twin.insert(k);
    }
    assert!(
        common::twin_bytes(&twin) == bytes,
        "{label}: not the twin's bytes"
    );
    src.destroy().unwrap();
    dst.destroy().unwrap();
}

#[test]
fn export_then_import_is_bit_exact_on_a_server() {
    let test = "export_then_import_is_bit_exact_on_a_server";
    let Some(url) = common::single_url(test) else {
        return;
    };
    round_trip::<Km>(&url, 1 << 16);
    round_trip::<Blocked512<Xxh3>>(&url, 1 << 16);
    round_trip::<Guava64>(&url, bloomlab_redis::config::DEFAULT_SHARD_BITS);
}

#[test]
fn a_many_shard_filter_moves_from_a_server_into_the_cluster_with_other_shards() {
    let test = "a_many_shard_filter_moves_from_a_server_into_the_cluster_with_other_shards";
    let (Some(url), Some(cluster)) = (common::single_url(test), common::cluster_urls(test)) else {
        return;
    };
    let (n, p) = (300_000, 0.01);
    let members = common::keys("moved", n);
    let name = common::unique_name("dump-move");
    let mut src = filled::<Km>(
        Connection::single(&url).unwrap(),
        &name,
        n,
        p,
        1 << 16,
        &members,
    );
    assert!(src.config().shards >= 40, "{:?}", src.config());
    let dir = tmp();
    let file = dir.path().join("moved.bloomlab");
    export_to(&url, &name, &file, Format::Bloomlab);

    let urls = cluster.join(",");
    let opts = ImportOptions {
        shard_bits: Some(CLUSTER_SHARD_BITS),
        ..ImportOptions::default()
    };
    let summary = import_from(&urls, &name, &file, &opts).unwrap();
    assert_eq!(summary.config.shard_bits, CLUSTER_SHARD_BITS);
    assert_eq!(
        summary.config.shards,
        src.config().bits.div_ceil(CLUSTER_SHARD_BITS)
    );
    let mut dst = RedisBloom::<Km>::open(Connection::cluster(&cluster).unwrap(), &name).unwrap();
    let bytes = src.bytes().unwrap();
    assert!(dst.bytes().unwrap() == bytes, "bytes differ after the move");
    all_found(&mut dst, &members);

    // And back out of the cluster: the same bit array, now with the cluster's shard size.
    let back = dir.path().join("back.bloomlab");
    let out = export_to(&urls, &name, &back, Format::Bloomlab);
    assert_eq!(out.config.shard_bits, CLUSTER_SHARD_BITS);
    let payload = |f: &Path| {
        let all = std::fs::read(f).unwrap();
        let header = all.len() - bytes.len() - 8;
        all[header..].to_vec()
    };
    assert!(
        payload(&file) == payload(&back),
        "payload and trailer differ"
    );
    src.destroy().unwrap();
    dst.destroy().unwrap();
}

#[test]
fn a_filter_larger_than_the_chunk_streams_in_chunks() {
    let test = "a_filter_larger_than_the_chunk_streams_in_chunks";
    let Some(url) = common::single_url(test) else {
        return;
    };
    // 4e6 keys at 1%: about 38e6 bits = 4.8 MB, more than one 4 MiB chunk, in one shard. A few
    // thousand members are enough to check the bytes.
    let (n, p) = (4_000_000, 0.01);
    let members = common::keys("chunked", 5000);
    let name = common::unique_name("dump-big");
    let mut src = filled::<Km>(
        Connection::single(&url).unwrap(),
        &name,
        n,
        p,
        bloomlab_redis::config::DEFAULT_SHARD_BITS,
        &members,
    );
    let total = src.config().bits / 8;
    assert!(total > CHUNK_BYTES, "{total} bytes");
    let dir = tmp();
    let file = dir.path().join("big.bloomlab");
    let mut steps = Vec::new();
    dump::export(
        Connection::single(&url).unwrap(),
        &name,
        &file,
        Format::Bloomlab,
        &mut |done, all| steps.push((done, all)),
    )
    .unwrap();
    // Every read was at most one chunk: the bound on the export's memory.
    let mut last = 0;
    for &(done, all) in &steps {
        assert_eq!(all, total);
        assert!(done - last <= CHUNK_BYTES && done > last, "{steps:?}");
        last = done;
    }
    assert_eq!(
        (last, steps.len() as u64),
        (total, total.div_ceil(CHUNK_BYTES))
    );

    let copy = common::unique_name("dump-big-copy");
    let mut steps = Vec::new();
    dump::import(
        Connection::single(&url).unwrap(),
        &copy,
        &file,
        &ImportOptions::default(),
        &mut |done, _| steps.push(done),
    )
    .unwrap();
    assert_eq!(steps.len() as u64, total.div_ceil(CHUNK_BYTES));
    let mut dst = RedisBloom::<Km>::open(Connection::single(&url).unwrap(), &copy).unwrap();
    assert!(dst.bytes().unwrap() == src.bytes().unwrap());
    all_found(&mut dst, &members);
    src.destroy().unwrap();
    dst.destroy().unwrap();
}

/// A source filter exported to a file in a temp dir: (file, its bytes, dir guard).
fn exported(url: &str, test: &str) -> (PathBuf, Vec<u8>, tempfile::TempDir) {
    let name = common::unique_name(test);
    let members = common::keys("bad-input", 2000);
    let src = filled::<Km>(
        Connection::single(url).unwrap(),
        &name,
        2000,
        0.01,
        1 << 16,
        &members,
    );
    let dir = tmp();
    let file = dir.path().join("good.bloomlab");
    export_to(url, &name, &file, Format::Bloomlab);
    src.destroy().unwrap();
    let bytes = std::fs::read(&file).unwrap();
    (file, bytes, dir)
}

fn format_error(e: &DumpError) -> &str {
    match e {
        DumpError::Format { reason, .. } => reason,
        other => panic!("expected a format error, got {other}"),
    }
}

#[test]
fn truncated_and_damaged_files_are_named_and_leave_nothing_on_the_server() {
    let test = "truncated_and_damaged_files_are_named_and_leave_nothing_on_the_server";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let (_, good, dir) = exported(&url, "dump-bad");
    let total = good.len();
    let header_len = bloomlab_redis::dump::header_bytes(
        &bloomlab_redis::Config::sized::<Km>(2000, 0.01, 1 << 16).unwrap(),
    )
    .len();
    for cut in [
        0,
        7,
        16,
        30,
        header_len,
        header_len + 1000,
        total - 8,
        total - 1,
    ] {
        let file = dir.path().join(format!("cut-{cut}"));
        std::fs::write(&file, &good[..cut]).unwrap();
        let name = common::unique_name("dump-cut");
        let e = import_from(&url, &name, &file, &ImportOptions::default()).unwrap_err();
        let reason = format_error(&e);
        assert!(reason.contains("truncated"), "cut at {cut}: {e}");
        if cut >= header_len {
            assert!(
                reason.contains(&format!("truncated at byte {cut} of {total}")),
                "cut at {cut}: {e}"
            );
        } else {
            assert!(
                reason.contains(&format!("the file ends at byte {cut}")),
                "cut at {cut}: {e}"
            );
        }
        assert_eq!(
            keys_of(std::slice::from_ref(&url), &name),
            Vec::<String>::new(),
            "cut at {cut}"
        );
    }

    // A flipped bit in the payload: written to the server, caught by the trailer, undone.
    let mut damaged = good.clone();
    damaged[header_len + 100] ^= 0x10;
    let file = dir.path().join("damaged");
    std::fs::write(&file, &damaged).unwrap();
    let name = common::unique_name("dump-damaged");
    let e = import_from(&url, &name, &file, &ImportOptions::default()).unwrap_err();
    assert!(format_error(&e).contains("checksum mismatch"), "{e}");
    assert_eq!(
        keys_of(std::slice::from_ref(&url), &name),
        Vec::<String>::new()
    );

    // Trailing bytes and a bad magic.
    let mut longer = good.clone();
    longer.push(0);
    std::fs::write(&file, &longer).unwrap();
    let e = import_from(&url, &name, &file, &ImportOptions::default()).unwrap_err();
    assert!(format_error(&e).contains("trailing bytes"), "{e}");
    std::fs::write(&file, b"hello, this is not a filter at all").unwrap();
    let e = import_from(&url, &name, &file, &ImportOptions::default()).unwrap_err();
    assert!(format_error(&e).contains("bad magic"), "{e}");
    assert_eq!(
        keys_of(std::slice::from_ref(&url), &name),
        Vec::<String>::new()
    );
}

#[test]
fn a_stated_config_that_differs_and_a_taken_name_are_refused() {
    let test = "a_stated_config_that_differs_and_a_taken_name_are_refused";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let (file, good, dir) = exported(&url, "dump-cfg");
    let name = common::unique_name("dump-cfg-dst");
    for (expected, field, file_value, given) in [
        (
            Expected {
                n: Some(3000),
                ..Expected::default()
            },
            "n",
            "2000",
            "3000",
        ),
        (
            Expected {
                p: Some(0.001),
                ..Expected::default()
            },
            "p",
            "0.01",
            "0.001",
        ),
        (
            Expected {
                variant: Some("blocked512/xxh3".into()),
                ..Expected::default()
            },
            "variant",
            "redis/classic/xxh3/km",
            "redis/blocked512/xxh3",
        ),
    ] {
        let opts = ImportOptions {
            expected,
            ..ImportOptions::default()
        };
        match import_from(&url, &name, &file, &opts).unwrap_err() {
            DumpError::Mismatch {
                field: f,
                file: a,
                requested: b,
                ..
            } => {
                assert_eq!((f, a.as_str(), b.as_str()), (field, file_value, given));
            }
            other => panic!("{field}: {other}"),
        }
        assert_eq!(
            keys_of(std::slice::from_ref(&url), &name),
            Vec::<String>::new()
        );
    }
    // The right statement is accepted.
    let opts = ImportOptions {
        expected: Expected {
            variant: Some("redis/classic/xxh3/km".into()),
            n: Some(2000),
            p: Some(0.01),
        },
        ..ImportOptions::default()
    };
    import_from(&url, &name, &file, &opts).unwrap();

    // The name is now taken: refused, the filter untouched.
    let mut before = RedisBloom::<Km>::open(Connection::single(&url).unwrap(), &name).unwrap();
    let bytes = before.bytes().unwrap();
    let e = import_from(&url, &name, &file, &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(e, DumpError::Redis(RedisFilterError::Exists { .. })),
        "{e}"
    );

    // With replace, a damaged file is refused before the old filter is touched.
    let mut damaged = good.clone();
    let at = good.len() - 100;
    damaged[at] ^= 1;
    let bad = dir.path().join("damaged");
    std::fs::write(&bad, &damaged).unwrap();
    let replace = ImportOptions {
        replace: true,
        ..ImportOptions::default()
    };
    let e = import_from(&url, &name, &bad, &replace).unwrap_err();
    assert!(format_error(&e).contains("checksum mismatch"), "{e}");
    assert!(before.bytes().unwrap() == bytes, "the old filter changed");

    // With replace, a good file of another filter replaces it.
    let other = common::unique_name("dump-cfg-other");
    let mut o = filled::<Blocked512<Xxh3>>(
        Connection::single(&url).unwrap(),
        &other,
        500,
        0.05,
        1 << 16,
        &common::keys("replacement", 500),
    );
    let other_file = dir.path().join("other.bloomlab");
    export_to(&url, &other, &other_file, Format::Bloomlab);
    import_from(&url, &name, &other_file, &replace).unwrap();
    let mut replaced =
        RedisBloom::<Blocked512<Xxh3>>::open(Connection::single(&url).unwrap(), &name).unwrap();
    assert!(replaced.bytes().unwrap() == o.bytes().unwrap());
    replaced.destroy().unwrap();
    o.destroy().unwrap();
    assert_eq!(
        keys_of(std::slice::from_ref(&url), &name),
        Vec::<String>::new()
    );
}

#[test]
fn a_load_is_invisible_and_expiring_until_committed() {
    let test = "a_load_is_invisible_and_expiring_until_committed";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let name = common::unique_name("dump-load");
    let mut loading = RedisBloom::<Km>::begin_load(
        Connection::single(&url).unwrap(),
        &name,
        10_000,
        0.01,
        1 << 16,
        false,
        LOAD_EXPIRY,
    )
    .unwrap();
    loading.write(0, &[0xff; 64]).unwrap();
    let total = loading.config().bits / 8;
    let e = loading.write(total - 8, &[0; 16]).unwrap_err();
    assert!(matches!(e, RedisFilterError::OutOfRange { .. }), "{e}");
    let e = RedisBloom::<Km>::open(Connection::single(&url).unwrap(), &name).unwrap_err();
    assert!(matches!(e, RedisFilterError::NotFound { .. }), "{e}");
    let mut raw = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    for key in loading.shard_keys() {
        let ttl: i64 = redis::cmd("PTTL").arg(key).query(&mut raw).unwrap();
        assert!(
            ttl > 0 && ttl <= LOAD_EXPIRY.as_millis() as i64,
            "{key}: PTTL {ttl} while loading"
        );
    }
    let mut f = loading.commit().unwrap();
    assert_eq!(f.bytes().unwrap()[..64], [0xff; 64]);
    for key in f.keys() {
        let ttl: i64 = redis::cmd("PTTL").arg(key).query(&mut raw).unwrap();
        assert_eq!(ttl, -1, "{key}");
    }
    f.destroy().unwrap();

    // An aborted load leaves nothing.
    let loading = RedisBloom::<Km>::begin_load(
        Connection::single(&url).unwrap(),
        &name,
        10_000,
        0.01,
        1 << 16,
        false,
        Duration::from_secs(60),
    )
    .unwrap();
    loading.abort().unwrap();
    assert_eq!(
        keys_of(std::slice::from_ref(&url), &name),
        Vec::<String>::new()
    );
}

/// A Guava filter of `strategy` with `members`, as Guava's `writeTo` bytes.
fn guava_file(strategy: GuavaStrategy, n: u64, p: f64, members: &[String]) -> Vec<u8> {
    let mut g =
        GuavaBloom::<Utf8Funnel>::create_with(n, p, strategy, GuavaSizing::FromBitsPerKey).unwrap();
    for k in members {
        g.put(k.as_str());
    }
    g.to_bytes()
}

fn guava_round_trip<F: BitPositions>(url: &str, strategy: GuavaStrategy) {
    let (n, p) = (5000, 0.01);
    let members = common::keys("guava", n);
    let bytes = guava_file(strategy, n, p, &members);
    let dir = tmp();
    let file = dir.path().join("guava.bin");
    std::fs::write(&file, &bytes).unwrap();
    let name = common::unique_name("dump-guava");
    let opts = ImportOptions {
        format: Format::Guava,
        expected: Expected {
            n: Some(n),
            p: Some(p),
            variant: None,
        },
        ..ImportOptions::default()
    };
    import_from(url, &name, &file, &opts).unwrap();
    let mut f = RedisBloom::<F>::open(Connection::open(url).unwrap(), &name).unwrap();
    all_found(&mut f, &members);
    let back = dir.path().join("back.bin");
    export_to(url, &name, &back, Format::Guava);
    assert!(
        std::fs::read(&back).unwrap() == bytes,
        "{strategy}: Guava bytes differ"
    );
    f.destroy().unwrap();
}

#[test]
fn guava_files_import_and_export_bit_exact() {
    let test = "guava_files_import_and_export_bit_exact";
    let Some(url) = common::single_url(test) else {
        return;
    };
    guava_round_trip::<Guava64>(&url, GuavaStrategy::Murmur128Mitz64);
    guava_round_trip::<Guava32>(&url, GuavaStrategy::Murmur128Mitz32);
    if let Some(cluster) = common::cluster_urls(test) {
        guava_round_trip::<Guava64>(&cluster.join(","), GuavaStrategy::Murmur128Mitz64);
    }

    let dir = tmp();
    let file = dir.path().join("guava.bin");
    std::fs::write(
        &file,
        guava_file(GuavaStrategy::Murmur128Mitz64, 5000, 0.01, &[]),
    )
    .unwrap();
    let name = common::unique_name("dump-guava-bad");
    let guava = |n, p| ImportOptions {
        format: Format::Guava,
        expected: Expected {
            n,
            p,
            variant: None,
        },
        ..ImportOptions::default()
    };
    // n and p are not in the file: both required.
    let e = import_from(&url, &name, &file, &guava(Some(5000), None)).unwrap_err();
    assert!(
        matches!(&e, DumpError::Unsupported(m) if m.contains("--n and --p")),
        "{e}"
    );
    // (n, p) that Guava sizes otherwise: the field and both values.
    match import_from(&url, &name, &file, &guava(Some(6000), Some(0.01))).unwrap_err() {
        DumpError::Mismatch {
            field,
            file,
            requested,
            ..
        } => {
            assert_eq!(field, "bits");
            assert!(
                file == "47936" && requested.starts_with("57536"),
                "{file} {requested}"
            );
        }
        other => panic!("{other}"),
    }
    // A truncated Guava file.
    let whole = std::fs::read(&file).unwrap();
    std::fs::write(&file, &whole[..whole.len() - 3]).unwrap();
    let e = import_from(&url, &name, &file, &guava(Some(5000), Some(0.01))).unwrap_err();
    assert!(format_error(&e).contains("truncated at byte"), "{e}");
    assert_eq!(
        keys_of(std::slice::from_ref(&url), &name),
        Vec::<String>::new()
    );

    // A filter without Guava's layout is not exported as one, and no file appears.
    let km = filled::<Km>(
        Connection::single(&url).unwrap(),
        &name,
        1000,
        0.01,
        1 << 16,
        &[],
    );
    let out = dir.path().join("km.guava");
    let e = dump::export(
        Connection::single(&url).unwrap(),
        &name,
        &out,
        Format::Guava,
        &mut no_progress(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, DumpError::Unsupported(m) if m.contains("hash xxh3, index km")),
        "{e}"
    );
    assert!(!out.exists());
    km.destroy().unwrap();
}
