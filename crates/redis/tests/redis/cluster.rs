//! Against a real 3-master Redis cluster (`BLOOMLAB_REDIS_CLUSTER_URLS`) and, for comparison, a
//! single server (`BLOOMLAB_REDIS_URL`): a sharded filter spreads over every node and gives the
//! single server's answers and bytes.

use crate::common;

use bloomlab_filters::{
    BitPositions, Blocked512, Bloom, FlatBits, GuavaMitz64, KirschMitzenmacher, Murmur3, Xxh3,
};
use bloomlab_redis::{Connection, RedisBloom};

/// Shards of 512 bits: a filter for 4000 keys at 1% (about 38,000 bits) has about 75 shards,
/// and the chance that one of 3 nodes gets none of them, (2/3)^75 per node, is negligible.
const SHARD_BITS: u64 = 512;

fn same_on_cluster_and_server<F: BitPositions>(cluster: &[String], single: &str) {
    let label = bloomlab_redis::redis_name::<F>();
    let (n, p) = (4000, 0.01);
    let name = common::unique_name("cluster");
    let mut on_cluster = RedisBloom::<F>::create_or_open_sharded(
        Connection::cluster(cluster).unwrap(),
        &name,
        n,
        p,
        SHARD_BITS,
    )
    .unwrap();
    let mut on_server = RedisBloom::<F>::create_or_open_sharded(
        Connection::single(single).unwrap(),
        &name,
        n,
        p,
        SHARD_BITS,
    )
    .unwrap();
    assert!(
        on_cluster.config().shards >= 64,
        "{label}: {:?}",
        on_cluster.config()
    );

    let members = common::keys("clustered", n);
    for f in [&mut on_cluster, &mut on_server] {
        for k in &members[..50] {
            f.insert(k).unwrap();
        }
        f.insert_batch(&members[50..], 256).unwrap();
    }

    // Every node holds some of the shards.
    let mut per_node = Vec::new();
    for url in cluster {
        let mut raw = redis::Client::open(url.as_str())
            .unwrap()
            .get_connection()
            .unwrap();
        let local: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{{{name}:*}}:bits"))
            .query(&mut raw)
            .unwrap();
        per_node.push(local.len() as u64);
    }
    assert_eq!(
        per_node.iter().sum::<u64>(),
        on_cluster.config().shards,
        "{label}: {per_node:?}"
    );
    assert!(
        per_node.iter().all(|&c| c > 0),
        "{label}: shards per node {per_node:?}"
    );

    let mut twin = F::sized_for(n, p).unwrap();
    for k in &members {
        bloomlab_filters::FilterExt::insert(&mut twin, k);
    }
    let cluster_bytes = on_cluster.bytes().unwrap();
    assert_eq!(
        cluster_bytes,
        on_server.bytes().unwrap(),
        "{label}: cluster vs server bytes"
    );
    assert_eq!(
        cluster_bytes,
        common::twin_bytes(&twin),
        "{label}: cluster vs in-memory bytes"
    );

    let mut probes = members.clone();
    probes.extend(common::keys("not-clustered", n));
    let mut a = Vec::new();
    let mut b = Vec::new();
    on_cluster
        .contains_batch(&probes, 512, |_, hit| a.push(hit))
        .unwrap();
    on_server
        .contains_batch(&probes, 512, |_, hit| b.push(hit))
        .unwrap();
    assert_eq!(a, b, "{label}: cluster vs server answers");
    assert!(
        a[..members.len()].iter().all(|&h| h),
        "{label}: a member was not found on the cluster"
    );
    for (k, &expected) in probes.iter().zip(&b).step_by(37) {
        assert_eq!(
            on_cluster.contains(k).unwrap(),
            expected,
            "{label}: {k} one per round trip"
        );
    }
    on_cluster.destroy().unwrap();
    on_server.destroy().unwrap();
}

#[test]
fn a_sharded_filter_spreads_over_the_cluster_and_answers_as_one_server() {
    let test = "a_sharded_filter_spreads_over_the_cluster_and_answers_as_one_server";
    let Some(cluster) = common::cluster_urls(test) else {
        return;
    };
    let Some(single) = common::single_url(test) else {
        return;
    };
    same_on_cluster_and_server::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>(&cluster, &single);
    same_on_cluster_and_server::<Bloom<Murmur3, GuavaMitz64, FlatBits>>(&cluster, &single);
    same_on_cluster_and_server::<Blocked512<Xxh3>>(&cluster, &single);
}

#[test]
fn reopening_on_the_cluster_checks_the_config() {
    let Some(cluster) = common::cluster_urls("reopening_on_the_cluster_checks_the_config") else {
        return;
    };
    let name = common::unique_name("cluster-reopen");
    type Km = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;
    let mut f = RedisBloom::<Km>::create_or_open_sharded(
        Connection::cluster(&cluster).unwrap(),
        &name,
        1000,
        0.01,
        1024,
    )
    .unwrap();
    f.insert("kept").unwrap();
    let mut g = RedisBloom::<Km>::open(Connection::cluster(&cluster).unwrap(), &name).unwrap();
    assert!(g.contains("kept").unwrap());
    let e = RedisBloom::<Km>::create_or_open_sharded(
        Connection::cluster(&cluster).unwrap(),
        &name,
        1000,
        0.02,
        1024,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("p = 0.01") && e.to_string().contains("0.02"),
        "{e}"
    );
    f.destroy().unwrap();
}
