//! The Redis-backed variants by name: `redis/classic/<hash>/<index>` and `redis/blocked512/<hash>`,
//! every hash and index scheme of the in-memory registry. Names come from the types' IDs, as in
//! [`bloomlab_filters::registry`].

use bloomlab_filters::{
    BitPositions, Blocked512, Bloom, EnhancedDoubleHash, FlatBits, Fnv1a, GuavaMitz32, GuavaMitz64,
    KirschMitzenmacher, Lookup3, Murmur3, VariantId, Xxh3, Xxh3Wide, Xxh64,
};
use bloomlab_harness::Subject;

use crate::error::{RedisFilterError, Result};

/// Calls `$cb!(Type)` for the in-memory type of every Redis-backed variant.
macro_rules! for_each_redis_variant {
    ($cb:ident) => {
        for_each_redis_variant!(@hashes $cb; Fnv1a, Murmur3, Xxh3, Xxh3Wide, Xxh64, Lookup3);
    };
    (@hashes $cb:ident; $($h:ty),*) => {$(
        for_each_redis_variant!(@index $cb; $h; KirschMitzenmacher, EnhancedDoubleHash, GuavaMitz64, GuavaMitz32);
        $cb!(Blocked512<$h>);
    )*};
    (@index $cb:ident; $h:ty; $($i:ty),*) => {$(
        $cb!(Bloom<$h, $i, FlatBits>);
    )*};
}

/// Generic code to run on the variant chosen by a Redis name, with its in-memory twin's type.
pub trait RedisVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the twin's concrete type.
    fn visit<F: BitPositions>(self) -> Self::Output;
}

/// The Redis name of twin type `F`, as the catalogue names it ([`Subject::Redis`]): `redis/` and
/// the twin's name without its store axis (`redis/classic/xxh3/km` for `classic/xxh3/km/flat`,
/// `redis/blocked512/xxh3`).
pub fn redis_name<F: BitPositions>() -> String {
    Subject::Redis(VariantId::of::<F>()).to_string()
}

/// Every Redis variant name, sorted.
pub fn names() -> Vec<String> {
    let mut out = Vec::new();
    macro_rules! push {
        ($t:ty) => {
            out.push(redis_name::<$t>());
        };
    }
    for_each_redis_variant!(push);
    out.sort();
    out
}

/// Runs `visitor` with the twin type of the Redis variant `name`; an unknown name is an error
/// listing the known ones.
pub fn visit<V: RedisVisitor>(name: &str, visitor: V) -> Result<V::Output> {
    macro_rules! try_one {
        ($t:ty) => {
            if name == redis_name::<$t>() {
                return Ok(visitor.visit::<$t>());
            }
        };
    }
    for_each_redis_variant!(try_one);
    Err(RedisFilterError::OutOfRange {
        what: "Redis filter name",
        value: format!("{name:?}"),
        allowed: format!("it must be one of {}", names().join(", ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cover_every_flat_and_blocked_axis_and_name_their_twin() {
        let names = names();
        // Six hashes x 4 index schemes (flat classic) + six blocked.
        assert_eq!(names.len(), 6 * 4 + 6);
        assert!(names.contains(&"redis/classic/xxh3/km".to_owned()));
        assert!(names.contains(&"redis/classic/lookup3/mitz32".to_owned()));
        assert!(names.contains(&"redis/classic/murmur3/mitz64".to_owned()));
        assert!(names.contains(&"redis/blocked512/xxh64".to_owned()));
        struct Twin;
        impl RedisVisitor for Twin {
            type Output = String;
            fn visit<F: BitPositions>(self) -> String {
                F::variant_name()
            }
        }
        for name in &names {
            let twin = visit(name, Twin).unwrap();
            let expected = name.strip_prefix("redis/").unwrap();
            assert!(
                twin == expected || twin == format!("{expected}/flat"),
                "{name} -> {twin}"
            );
        }
        // The types registered here are the catalogue's Redis subjects, one for one.
        let catalogue: Vec<String> = Subject::all()
            .iter()
            .filter(|s| s.is_remote())
            .map(Subject::to_string)
            .collect();
        assert_eq!(names, catalogue);
        let e = visit("redis/sbbf/xxh64", Twin).unwrap_err().to_string();
        assert!(
            e.contains("redis/sbbf/xxh64") && e.contains("redis/blocked512/xxh3"),
            "{e}"
        );
    }
}
