//! Generational filters (issue 29's `swap`) on a real server and on the 3-master cluster: a swap
//! under 4 reader threads gives 0 false negatives and moves every reader; the old generation
//! expires after the grace period; a failed build switches nothing and leaves no key; a concurrent
//! swap is refused; bad pointers are named. A control shows the reader count does catch false
//! negatives: a naive swap that points readers at a generation before filling it is caught.

use crate::common;

use std::io;
use std::time::Duration;

use bloomlab_filters::{Bloom, FlatBits, KirschMitzenmacher, Xxh3};
use bloomlab_redis::generation::{
    self, GenerationError, Lifetime, Reader, ReaderPlan, SwapOptions, SwapOutcome,
};
use bloomlab_redis::keys::{config_key, shard_key};
use bloomlab_redis::{Connection, RedisBloom};

type Km = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

/// Shards of 4096 bits: a generation for 8000 keys at 1% (about 76,700 bits) has 19 shards,
/// spread over the cluster's nodes, so expiries and deletions are checked key by key.
const SHARD_BITS: u64 = 4096;

/// One server (`urls` one URL) or a cluster (its node URLs).
struct Servers {
    label: &'static str,
    urls: Vec<String>,
}

impl Servers {
    fn joined(&self) -> String {
        self.urls.join(",")
    }

    /// A raw client for checks the library does not offer (routed by slot on a cluster).
    fn raw(&self) -> Box<dyn redis::ConnectionLike> {
        if self.urls.len() == 1 {
            Box::new(
                redis::Client::open(self.urls[0].as_str())
                    .unwrap()
                    .get_connection()
                    .unwrap(),
            )
        } else {
            Box::new(
                redis::cluster::ClusterClient::new(self.urls.clone())
                    .unwrap()
                    .get_connection()
                    .unwrap(),
            )
        }
    }

    fn conn(&self) -> Connection {
        Connection::open(&self.joined()).unwrap()
    }

    /// Every key on every node whose name contains `needle` (SCAN on each node).
    fn keys_containing(&self, needle: &str) -> Vec<String> {
        let mut out = Vec::new();
        for url in &self.urls {
            let mut c = redis::Client::open(url.as_str())
                .unwrap()
                .get_connection()
                .unwrap();
            let iter: redis::Iter<String> = redis::cmd("SCAN")
                .cursor_arg(0)
                .arg("MATCH")
                .arg(format!("*{needle}*"))
                .arg("COUNT")
                .arg(1000)
                .clone()
                .iter(&mut c)
                .unwrap();
            out.extend(iter.map(|k| k.unwrap()));
        }
        out.sort();
        out
    }
}

/// The servers available: the single one and the cluster, each skipped visibly when unset.
fn servers(test: &str) -> Vec<Servers> {
    let mut out = Vec::new();
    if let Some(url) = common::single_url(test) {
        out.push(Servers {
            label: "server",
            urls: vec![url],
        });
    }
    if let Some(urls) = common::cluster_urls(test) {
        out.push(Servers {
            label: "cluster",
            urls,
        });
    }
    out
}

fn options(grace: Duration) -> SwapOptions {
    let mut o = SwapOptions::new(8000, 0.01);
    o.shard_bits = Some(SHARD_BITS);
    o.grace = grace;
    o
}

fn source(keys: &[String]) -> impl Iterator<Item = io::Result<&String>> {
    keys.iter().map(Ok)
}

fn pttl(raw: &mut dyn redis::ConnectionLike, key: &str) -> i64 {
    redis::cmd("PTTL").arg(key).query(raw).unwrap()
}

/// Every key of filter `name` with `shards` shards.
fn filter_keys(name: &str, shards: u64) -> Vec<String> {
    std::iter::once(config_key(name))
        .chain((0..shards).map(|i| shard_key(name, i)))
        .collect()
}

/// Deletes the generational filter (the library's drop) and checks no key of it is left.
fn cleanup(s: &Servers, name: &str) {
    generation::drop_all(&mut s.conn(), name)
        .unwrap_or_else(|e| panic!("{}: drop {name}: {e}", s.label));
    let left = s.keys_containing(name);
    assert!(
        left.is_empty(),
        "{}: left after the drop: {left:?}",
        s.label
    );
}

/// A first generation of `name` holding `keys` (grace irrelevant: there is no old one).
fn first_generation(s: &Servers, name: &str, keys: &[String]) -> SwapOutcome {
    let out = generation::swap::<Km, _, _>(
        &s.joined(),
        name,
        source(keys),
        &options(Duration::from_secs(1)),
    )
    .unwrap_or_else(|e| panic!("{}: first generation: {e}", s.label));
    assert_eq!(out.old_generation, None, "{}", s.label);
    assert_eq!(out.keys_inserted, keys.len() as u64);
    out
}

#[test]
fn a_swap_under_four_readers_has_no_false_negatives_and_the_old_generation_expires() {
    let test = "generation_swap_under_readers";
    for s in servers(test) {
        swap_under_readers(&s);
    }
}

fn swap_under_readers(s: &Servers) {
    let label = s.label;
    let name = common::unique_name("gen-readers");
    let members = common::keys("gen-member", 3000);
    let mut old_keys = members.clone();
    old_keys.extend(common::keys("gen-old-only", 1000));
    let mut new_keys = members.clone();
    new_keys.extend(common::keys("gen-new-only", 4000));
    let first = first_generation(s, &name, &old_keys);

    let grace = Duration::from_secs(1);
    let urls = s.joined();
    let plan = ReaderPlan::new(4);
    let measured = generation::swap_under_readers::<Km, _>(&urls, &name, &members, &plan, || {
        generation::swap::<Km, _, _>(&urls, &name, source(&new_keys), &options(grace))
    })
    .unwrap_or_else(|e| panic!("{label}: {e}"));
    let new = measured.swap.new_generation.clone();
    assert_eq!(
        measured.swap.old_generation.as_deref(),
        Some(first.new_generation.as_str()),
        "{label}"
    );
    assert_eq!(measured.readers.len(), 4, "{label}");
    // The guarantee: members of both generations are found by every reader, before, during and
    // after the switch. Exact, not statistical: a Bloom filter has no false negatives.
    assert_eq!(measured.false_negatives(), 0, "{label}: {measured:#?}");
    for (i, r) in measured.readers.iter().enumerate() {
        assert!(
            r.batches > plan.batches_after && r.false_negatives == 0,
            "{label}: reader {i}: {r:?}"
        );
        assert_eq!(
            r.first_generation, first.new_generation,
            "{label}: reader {i}"
        );
        assert_eq!(r.last_generation, new, "{label}: reader {i}: {r:?}");
        assert!(r.generation_changes >= 1, "{label}: reader {i}: {r:?}");
    }
    assert_eq!(measured.readers_on_new(), 4, "{label}");

    // Right after the swap: the new generation persistent, the old one expiring within the grace.
    let mut raw = s.raw();
    let shards = measured.swap.config.shards;
    assert!(shards > 1, "{label}: {shards} shards");
    for k in filter_keys(&new, shards) {
        assert_eq!(pttl(&mut *raw, &k), -1, "{label}: new generation key {k}");
    }
    let old_keys_list = filter_keys(&first.new_generation, first.config.shards);
    for k in &old_keys_list {
        let t = pttl(&mut *raw, k);
        assert!(
            t > 0 && t <= grace.as_millis() as i64,
            "{label}: old generation key {k}: PTTL {t} ms, grace {grace:?}"
        );
    }
    let listed = generation::generations(&mut s.conn(), &name).unwrap();
    assert_eq!(listed[0].name, new, "{label}: {listed:?}");
    assert!(listed[0].current && listed[0].lifetime == Lifetime::Persistent);
    assert!(
        listed.iter().any(|g| g.name == first.new_generation
            && !g.current
            && matches!(g.lifetime, Lifetime::Expiring(t) if t <= grace)),
        "{label}: {listed:?}"
    );

    // After the grace period the old generation is gone, key by key; the new one answers.
    std::thread::sleep(grace + Duration::from_millis(300));
    for k in &old_keys_list {
        let exists: i64 = redis::cmd("EXISTS").arg(k).query(&mut *raw).unwrap();
        assert_eq!(exists, 0, "{label}: old key {k} outlived the grace period");
    }
    let mut reader = Reader::<Km>::open(&urls, &name).unwrap();
    assert_eq!(reader.generation(), new);
    let mut found = 0;
    reader
        .contains_batch(&new_keys, 512, |_, hit| found += usize::from(hit))
        .unwrap();
    assert_eq!(found, new_keys.len(), "{label}");
    cleanup(s, &name);
}

#[test]
fn a_naive_swap_that_points_readers_at_an_unfilled_generation_is_caught() {
    // The control: the same measurement, with a "swap" that switches the pointer first and fills
    // after, must count false negatives; otherwise the zero above would prove nothing.
    let test = "generation_naive_swap_control";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let s = Servers {
        label: "server",
        urls: vec![url.clone()],
    };
    let name = common::unique_name("gen-naive");
    let members = common::keys("gen-member", 2000);
    let first = first_generation(&s, &name, &members);
    let naive = || {
        let generation = generation::generation_name(&name, "00000000000000aa");
        let mut f = RedisBloom::<Km>::create_new(
            Connection::single(&url).unwrap(),
            &generation,
            8000,
            0.01,
            SHARD_BITS,
            None,
        )?;
        let mut raw = s.raw();
        let _: () = redis::cmd("SET")
            .arg(generation::pointer_key(&name))
            .arg(&generation)
            .query(&mut *raw)
            .unwrap();
        // Readers read the empty generation meanwhile.
        std::thread::sleep(Duration::from_millis(500));
        f.insert_batch(&members, 256)?;
        Ok(SwapOutcome {
            name: name.clone(),
            new_generation: generation,
            old_generation: Some(first.new_generation.clone()),
            config: f.config().clone(),
            keys_inserted: members.len() as u64,
            verified: 0,
            build: Duration::ZERO,
            grace: Duration::ZERO,
        })
    };
    let measured =
        generation::swap_under_readers::<Km, _>(&url, &name, &members, &ReaderPlan::new(4), naive)
            .unwrap();
    assert!(
        measured.false_negatives() > 0,
        "the naive swap went unnoticed: {measured:#?}"
    );
    cleanup(&s, &name);
}

#[test]
fn a_failed_or_empty_build_switches_nothing_and_leaves_no_key() {
    let test = "generation_failed_build";
    for s in servers(test) {
        let label = s.label;
        let name = common::unique_name("gen-failed");
        let first = first_generation(&s, &name, &common::keys("gen-member", 1000));
        let before = s.keys_containing(&format!("{name}@"));

        // A key file that fails after 20,000 keys (beyond the first pipelined chunk).
        let keys = common::keys("gen-new", 20_000);
        let failing = keys
            .iter()
            .map(Ok)
            .chain(std::iter::once(Err(io::Error::other(
                "simulated read error",
            ))));
        let e = generation::swap::<Km, _, _>(
            &s.joined(),
            &name,
            failing,
            &options(Duration::from_secs(1)),
        )
        .unwrap_err();
        assert!(
            matches!(
                &e,
                GenerationError::Keys {
                    keys_read: 20_000,
                    ..
                }
            ) && e.to_string().contains("simulated read error")
                && e.to_string().contains("nothing was switched"),
            "{label}: {e}"
        );
        let empty: Vec<String> = Vec::new();
        let e = generation::swap::<Km, _, _>(
            &s.joined(),
            &name,
            source(&empty),
            &options(Duration::from_secs(1)),
        )
        .unwrap_err();
        assert!(matches!(e, GenerationError::NoKeys { .. }), "{label}: {e}");

        let mut conn = s.conn();
        assert_eq!(
            generation::current(&mut conn, &name).unwrap().as_deref(),
            Some(first.new_generation.as_str()),
            "{label}: the pointer moved"
        );
        assert_eq!(
            s.keys_containing(&format!("{name}@")),
            before,
            "{label}: keys left by the failed builds"
        );
        let listed = generation::generations(&mut conn, &name).unwrap();
        assert_eq!(listed.len(), 1, "{label}: {listed:?}");
        // The old generation is untouched: persistent.
        assert_eq!(listed[0].lifetime, Lifetime::Persistent, "{label}");
        cleanup(&s, &name);
    }
}

#[test]
fn a_concurrent_swap_is_refused_and_the_first_swap_generation_stays() {
    let test = "generation_concurrent_swap";
    for s in servers(test) {
        let label = s.label;
        let name = common::unique_name("gen-race");
        let first = first_generation(&s, &name, &common::keys("gen-member", 1000));
        let urls = s.joined();
        let a_keys = common::keys("gen-a", 5000);
        let b_keys = common::keys("gen-b", 5000);
        // Swap A's key source runs swap B to completion halfway: B switches while A builds.
        let mut b_outcome = None;
        let a_source = a_keys.iter().enumerate().map(|(i, k)| {
            if i == 2500 {
                b_outcome = Some(
                    generation::swap::<Km, _, _>(
                        &urls,
                        &name,
                        source(&b_keys),
                        &options(Duration::from_secs(30)),
                    )
                    .unwrap(),
                );
            }
            Ok(k)
        });
        let e =
            generation::swap::<Km, _, _>(&urls, &name, a_source, &options(Duration::from_secs(30)))
                .unwrap_err();
        let b = b_outcome.expect("swap B ran");
        let GenerationError::Conflict {
            expected,
            found,
            built,
            ..
        } = &e
        else {
            panic!("{label}: {e}")
        };
        assert_eq!(*expected, format!("{:?}", first.new_generation), "{label}");
        assert_eq!(*found, format!("{:?}", b.new_generation), "{label}");
        let mut conn = s.conn();
        assert_eq!(
            generation::current(&mut conn, &name).unwrap(),
            Some(b.new_generation.clone()),
            "{label}: {e}"
        );
        assert!(
            s.keys_containing(built).is_empty(),
            "{label}: refused generation {built} left keys"
        );
        let mut reader = Reader::<Km>::open(&urls, &name).unwrap();
        let mut found_b = 0;
        reader
            .contains_batch(&b_keys, 256, |_, hit| found_b += usize::from(hit))
            .unwrap();
        assert_eq!(found_b, b_keys.len(), "{label}");
        cleanup(&s, &name);
    }
}

#[test]
fn bad_pointers_are_named_and_nothing_is_changed() {
    let test = "generation_bad_pointers";
    for s in servers(test) {
        let label = s.label;
        let name = common::unique_name("gen-bad");
        let key = generation::pointer_key(&name);
        let mut raw = s.raw();
        let mut conn = s.conn();
        let urls = s.joined();
        let keys = common::keys("gen-member", 100);

        // Not a generational filter at all.
        let e = Reader::<Km>::open(&urls, &name).unwrap_err();
        assert!(
            matches!(e, GenerationError::NoPointer { .. }),
            "{label}: {e}"
        );

        // A pointer of another type.
        let _: i64 = redis::cmd("HSET")
            .arg(&key)
            .arg("a")
            .arg("b")
            .query(&mut *raw)
            .unwrap();
        let e = generation::current(&mut conn, &name).unwrap_err();
        assert!(
            matches!(e, GenerationError::BadPointer { .. }) && e.to_string().contains("a hash"),
            "{label}: {e}"
        );
        let e = generation::swap::<Km, _, _>(
            &urls,
            &name,
            source(&keys),
            &options(Duration::from_secs(1)),
        )
        .unwrap_err();
        assert!(
            matches!(e, GenerationError::BadPointer { .. }),
            "{label}: {e}"
        );
        let kind: String = redis::cmd("TYPE").arg(&key).query(&mut *raw).unwrap();
        assert_eq!(kind, "hash", "{label}: the foreign key was changed");
        let _: i64 = redis::cmd("DEL").arg(&key).query(&mut *raw).unwrap();

        // A string naming something else.
        let _: () = redis::cmd("SET")
            .arg(&key)
            .arg("someone-else")
            .query(&mut *raw)
            .unwrap();
        let e = generation::current(&mut conn, &name).unwrap_err();
        assert!(
            matches!(e, GenerationError::BadPointer { .. })
                && e.to_string().contains("someone-else"),
            "{label}: {e}"
        );

        // A pointer naming a generation that does not exist.
        let ghost = generation::generation_name(&name, "0123456789abcdef");
        let _: () = redis::cmd("SET")
            .arg(&key)
            .arg(&ghost)
            .query(&mut *raw)
            .unwrap();
        for e in [
            generation::resolve(&mut conn, &name).unwrap_err(),
            Reader::<Km>::open(&urls, &name).unwrap_err(),
            generation::swap::<Km, _, _>(
                &urls,
                &name,
                source(&keys),
                &options(Duration::from_secs(1)),
            )
            .unwrap_err(),
        ] {
            assert!(
                matches!(&e, GenerationError::MissingGeneration { generation, .. } if *generation == ghost),
                "{label}: {e}"
            );
        }
        let still: String = redis::cmd("GET").arg(&key).query(&mut *raw).unwrap();
        assert_eq!(still, ghost, "{label}");
        assert!(
            s.keys_containing(&format!("{name}@")).is_empty(),
            "{label}: a refused swap created keys"
        );
        cleanup(&s, &name);
    }
}

#[test]
fn a_plain_filter_is_adopted_only_when_asked_and_then_expires_after_the_grace() {
    let test = "generation_adopt_plain";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let s = Servers {
        label: "server",
        urls: vec![url.clone()],
    };
    let name = common::unique_name("gen-plain");
    let members = common::keys("gen-member", 1000);
    let mut plain = RedisBloom::<Km>::create_or_open_sharded(
        Connection::single(&url).unwrap(),
        &name,
        8000,
        0.01,
        SHARD_BITS,
    )
    .unwrap();
    plain.insert_batch(&members, 256).unwrap();
    let e = generation::swap::<Km, _, _>(
        &url,
        &name,
        source(&members),
        &options(Duration::from_secs(5)),
    )
    .unwrap_err();
    assert!(matches!(e, GenerationError::PlainExists { .. }), "{e}");
    assert_eq!(generation::current(&mut s.conn(), &name).unwrap(), None);

    let mut o = options(Duration::from_secs(5));
    o.adopt_plain = true;
    // A failed adopting swap changes nothing: no pointer, the plain filter persistent.
    let none: Vec<String> = Vec::new();
    let e = generation::swap::<Km, _, _>(&url, &name, source(&none), &o).unwrap_err();
    assert!(matches!(e, GenerationError::NoKeys { .. }), "{e}");
    assert_eq!(generation::current(&mut s.conn(), &name).unwrap(), None);
    assert_eq!(pttl(&mut *s.raw(), &config_key(&name)), -1);

    let out = generation::swap::<Km, _, _>(&url, &name, source(&members), &o).unwrap();
    assert_eq!(out.old_generation.as_deref(), Some(name.as_str()));
    let mut raw = s.raw();
    for k in filter_keys(&name, plain.config().shards) {
        let t = pttl(&mut *raw, &k);
        assert!(t > 0 && t <= 5000, "{k}: PTTL {t}");
    }
    let listed = generation::generations(&mut s.conn(), &name).unwrap();
    assert!(
        listed
            .iter()
            .any(|g| g.name == name && !g.current && matches!(g.lifetime, Lifetime::Expiring(_))),
        "{listed:?}"
    );
    let e = generation::adopt(&mut s.conn(), &name).unwrap_err();
    assert!(
        matches!(e, GenerationError::AlreadyGenerational { .. }),
        "{e}"
    );
    plain.destroy().unwrap();
    cleanup(&s, &name);
}

#[test]
fn a_swap_from_an_exported_file_under_readers_and_a_truncated_file_switches_nothing() {
    let test = "generation_swap_from_file";
    for s in servers(test) {
        swap_from_file(&s);
    }
}

fn swap_from_file(s: &Servers) {
    use bloomlab_redis::dump::{self, Format, ImportOptions};
    let label = s.label;
    let urls = s.joined();
    let name = common::unique_name("gen-file");
    let members = common::keys("gen-member", 3000);
    let first = first_generation(s, &name, &members);

    // The new generation, built elsewhere and exported: members plus 2000 new keys.
    let mut new_keys = members.clone();
    new_keys.extend(common::keys("gen-file-only", 2000));
    let built = common::unique_name("gen-file-src");
    let mut src = RedisBloom::<Km>::create_new(
        Connection::open(&urls).unwrap(),
        &built,
        8000,
        0.01,
        SHARD_BITS,
        None,
    )
    .unwrap();
    src.insert_batch(&new_keys, 256).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gen.blf");
    dump::export(
        Connection::open(&urls).unwrap(),
        &built,
        &file,
        Format::Bloomlab,
        &mut |_, _| std::ops::ControlFlow::Continue(()),
    )
    .unwrap();
    src.destroy().unwrap();

    // A truncated copy: refused, nothing switched, no key left.
    let bytes = std::fs::read(&file).unwrap();
    let cut = dir.path().join("cut.blf");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let before = s.keys_containing(&format!("{name}@"));
    let import = ImportOptions::default();
    let opts = options(Duration::from_secs(1));
    let e = generation::swap_from_file(&urls, &name, &cut, &import, &opts).unwrap_err();
    assert!(
        matches!(e, GenerationError::Import(_))
            && e.to_string().contains("truncated")
            && e.to_string().contains("nothing was switched"),
        "{label}: {e}"
    );
    assert_eq!(s.keys_containing(&format!("{name}@")), before, "{label}");
    assert_eq!(
        generation::current(&mut s.conn(), &name).unwrap(),
        Some(first.new_generation.clone()),
        "{label}"
    );

    let measured = generation::swap_under_readers::<Km, _>(
        &urls,
        &name,
        &members,
        &ReaderPlan::new(4),
        || generation::swap_from_file(&urls, &name, &file, &import, &opts),
    )
    .unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(measured.false_negatives(), 0, "{label}: {measured:#?}");
    assert_eq!(measured.readers_on_new(), 4, "{label}: {measured:#?}");
    let new = &measured.swap.new_generation;
    for k in filter_keys(new, measured.swap.config.shards) {
        assert_eq!(pttl(&mut *s.raw(), &k), -1, "{label}: {k}");
    }
    let mut reader = Reader::<Km>::open(&urls, &name).unwrap();
    let mut found = 0;
    reader
        .contains_batch(&new_keys, 512, |_, hit| found += usize::from(hit))
        .unwrap();
    assert_eq!(found, new_keys.len(), "{label}");
    cleanup(s, &name);
}

#[test]
fn a_reader_of_one_layout_refuses_a_generation_of_another() {
    let test = "generation_layout_change";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let s = Servers {
        label: "server",
        urls: vec![url.clone()],
    };
    let name = common::unique_name("gen-layout");
    let members = common::keys("gen-member", 500);
    first_generation(&s, &name, &members);
    let mut reader = Reader::<Km>::open(&url, &name).unwrap();
    reader.contains_batch(&members, 256, |_, _| {}).unwrap();
    generation::swap::<bloomlab_filters::Blocked512<Xxh3>, _, _>(
        &url,
        &name,
        source(&members),
        &options(Duration::from_secs(5)),
    )
    .unwrap();
    let mut answered = 0;
    let e = reader
        .contains_batch(&members, 256, |_, _| answered += 1)
        .unwrap_err();
    assert!(
        matches!(
            &e,
            GenerationError::Redis(bloomlab_redis::RedisFilterError::ConfigMismatch {
                field: "layout",
                ..
            })
        ),
        "{e}"
    );
    assert_eq!(
        answered, 0,
        "answers were given from a generation of another layout"
    );
    cleanup(&s, &name);
}
