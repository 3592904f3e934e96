//! Every bad input, through the registry, for every variant: a typed [`BloomError`] whose message
//! names the offending value, never a panic.

use bloomlab_filters::{BloomError, Spec, registry};

/// Split-block filters, alone or as the stages of a scalable filter: k is fixed at 8.
fn is_sbbf(name: &str) -> bool {
    name.starts_with("sbbf/") || name.starts_with("scalable/sbbf/")
}

/// Bytes per position of a layout's array: counters are 4 or 8 bits wide.
fn bits_per_position(name: &str) -> u64 {
    let inner = name.strip_prefix("scalable/").unwrap_or(name);
    if inner.starts_with("counting4/") {
        4
    } else if inner.starts_with("counting8/") {
        8
    } else {
        1
    }
}

fn err(name: &str, spec: Spec) -> BloomError {
    match registry::build(name, spec) {
        Ok(f) => panic!("{name} with {spec:?} built a filter of {} bits", f.bits()),
        Err(e) => e,
    }
}

fn assert_msg(name: &str, spec: Spec, e: &BloomError, needles: &[&str]) {
    let msg = e.to_string();
    for n in needles {
        assert!(
            msg.contains(n),
            "{name} with {spec:?}: message {msg:?} lacks {n:?}"
        );
    }
}

#[test]
fn zero_count_is_invalid_count() {
    for name in registry::names() {
        for spec in [
            Spec::Target { n: 0, p: 0.01 },
            Spec::BitsFor { bits: 1024, n: 0 },
        ] {
            let e = err(&name, spec);
            assert_eq!(e, BloomError::InvalidCount { n: 0 }, "{name} {spec:?}");
            assert_msg(&name, spec, &e, &["n = 0", "at least 1"]);
        }
    }
}

#[test]
fn rates_outside_the_open_unit_interval_are_invalid_rate() {
    for name in registry::names() {
        for p in [
            0.0,
            1.0,
            -0.1,
            1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let spec = Spec::Target { n: 1000, p };
            let e = err(&name, spec);
            assert!(
                matches!(e, BloomError::InvalidRate { p: got } if got.to_bits() == p.to_bits()),
                "{name} {spec:?}: {e:?}"
            );
            assert_msg(&name, spec, &e, &[&format!("p = {p}"), "(0, 1)"]);
        }
    }
}

#[test]
fn hash_counts_outside_the_variant_range_are_invalid_hashes() {
    for name in registry::names() {
        let sbbf = is_sbbf(&name);
        let ks: &[u32] = if sbbf {
            &[0, 1, 7, 9, 255, 256]
        } else {
            &[0, 256, u32::MAX]
        };
        for &k in ks {
            let spec = Spec::Explicit {
                bits: 4096,
                hashes: k,
            };
            let e = err(&name, spec);
            assert!(
                matches!(e, BloomError::InvalidHashes { k: got, .. } if got == k),
                "{name} {spec:?}: {e:?}"
            );
            assert_msg(&name, spec, &e, &[&format!("k = {k}")]);
        }
        if sbbf {
            // Every k in 1..=255 other than 8 is refused by the layout itself, naming its range.
            let spec = Spec::Explicit {
                bits: 4096,
                hashes: 7,
            };
            assert_eq!(
                err(&name, spec),
                BloomError::InvalidHashes {
                    k: 7,
                    min: 8,
                    max: 8
                }
            );
        }
        // A target so tight that the optimal k exceeds 255: m/n = 1437, k = 996.
        if !sbbf {
            let spec = Spec::Target { n: 1, p: 1e-300 };
            let e = err(&name, spec);
            assert!(
                matches!(e, BloomError::InvalidHashes { k, max: 255, .. } if k > 255),
                "{name} {spec:?}: {e:?}"
            );
        }
    }
}

#[test]
fn zero_bits_are_invalid_bits() {
    for name in registry::names() {
        let k = if is_sbbf(&name) { 8 } else { 3 };
        for spec in [
            Spec::Explicit { bits: 0, hashes: k },
            Spec::BitsFor { bits: 0, n: 10 },
        ] {
            let e = err(&name, spec);
            assert!(
                matches!(e, BloomError::InvalidBits { bits: 0, .. }),
                "{name} {spec:?}: {e:?}"
            );
            assert_msg(&name, spec, &e, &["m = 0"]);
        }
    }
}

#[test]
fn overflowing_sizes_are_errors() {
    for name in registry::names() {
        let k = if is_sbbf(&name) { 8 } else { 3 };
        // m = -n ln p / ln^2 2 is 2.7e22 bits (p = 1e-300) or 2.7e19 (p = 0.5): beyond u64.
        for spec in [
            Spec::Target {
                n: u64::MAX,
                p: 1e-300,
            },
            Spec::Target {
                n: u64::MAX,
                p: 0.5,
            },
        ] {
            let e = err(&name, spec);
            match &e {
                BloomError::TooLarge { what, .. } => {
                    assert!(what.contains(&u64::MAX.to_string()), "{name}: {e}");
                }
                other => panic!("{name} {spec:?}: {other:?} is not TooLarge"),
            }
        }
        // u64::MAX bits: beyond the largest u64-word array.
        let spec = Spec::Explicit {
            bits: u64::MAX,
            hashes: k,
        };
        let e = err(&name, spec);
        assert!(
            matches!(e, BloomError::InvalidBits { bits: u64::MAX, .. }),
            "{name} {spec:?}: {e:?}"
        );
        assert_msg(&name, spec, &e, &[&u64::MAX.to_string()]);
        // 2^62 bits (512 PiB): representable, but no variant can hold it. Layouts with a smaller
        // address limit say so (TooLarge); the others fail to allocate.
        let spec = Spec::Explicit {
            bits: 1 << 62,
            hashes: k,
        };
        let e = err(&name, spec);
        match &e {
            BloomError::TooLarge { .. } => {
                assert!(
                    is_sbbf(&name) || name.starts_with("textbook"),
                    "{name}: {e}"
                );
                // The split-block filter names the size in blocks: 2^62 / 256 = 2^54.
                let value = if is_sbbf(&name) {
                    "18014398509481984 split blocks"
                } else {
                    "4611686018427387904"
                };
                assert_msg(&name, spec, &e, &[value]);
            }
            BloomError::AllocationFailed { bytes } => {
                // 2^62 bits are 2^59 bytes; 2^62 counters of 4 or 8 bits, 4 or 8 times that.
                let want = (1u64 << 59) * bits_per_position(&name);
                assert_eq!(*bytes, want, "{name}");
                assert_msg(&name, spec, &e, &[&want.to_string()]);
            }
            other => panic!("{name} {spec:?}: {other:?}"),
        }
    }
}

#[test]
fn textbook_keeps_its_java_int_limit() {
    let spec = Spec::Target {
        n: 1_000_000_000,
        p: 1e-3,
    };
    let e = err("textbook-fnv1a-i32", spec);
    assert!(
        matches!(e, BloomError::TooLarge { max, .. } if max == i32::MAX as u64),
        "{e:?}"
    );
    assert_msg(
        "textbook-fnv1a-i32",
        spec,
        &e,
        &["2147483647", "textbook-fnv1a-i32"],
    );
    // One bit past the limit, explicitly.
    let spec = Spec::Explicit {
        bits: 1 << 31,
        hashes: 3,
    };
    let e = err("textbook-fnv1a-i32", spec);
    assert!(matches!(e, BloomError::TooLarge { .. }), "{e:?}");
    assert_msg("textbook-fnv1a-i32", spec, &e, &["2147483648"]);
}

#[test]
fn unknown_names_are_unknown_name() {
    for name in [
        "",
        "classic/md5/km/flat",
        "sbbf",
        "blocked512/xxh3 ",
        "CLASSIC/xxh3/km/flat",
    ] {
        let spec = Spec::Target { n: 10, p: 0.01 };
        let e = err(name, spec);
        assert!(
            matches!(&e, BloomError::UnknownName { name: got, .. } if got == name),
            "{name:?}: {e:?}"
        );
        assert_msg(
            name,
            spec,
            &e,
            &[&format!("{name:?}"), "classic/xxh3/km/flat"],
        );
    }
}

type Stage = bloomlab_filters::Bloom<
    bloomlab_filters::Xxh3,
    bloomlab_filters::KirschMitzenmacher,
    bloomlab_filters::FlatBits,
>;
type Chain = bloomlab_filters::Scalable<Stage>;

fn scalable_err(n0: u64, p: f64, growth: f64, tightening: f64) -> BloomError {
    match Chain::new(n0, p, growth, tightening) {
        Ok(_) => panic!("n0 = {n0}, p = {p}, s = {growth}, r = {tightening} built a chain"),
        Err(e) => e,
    }
}

fn assert_names(e: &BloomError, needles: &[&str]) {
    let msg = e.to_string();
    for n in needles {
        assert!(msg.contains(n), "message {msg:?} lacks {n:?}");
    }
}

#[test]
fn scalable_schedule_out_of_range_is_named() {
    assert_eq!(
        scalable_err(0, 0.01, 2.0, 0.5),
        BloomError::InvalidCount { n: 0 }
    );
    for p in [0.0, 1.0, 1.5, -0.1, f64::INFINITY] {
        assert_eq!(
            scalable_err(100, p, 2.0, 0.5),
            BloomError::InvalidRate { p }
        );
    }
    assert!(matches!(
        scalable_err(100, f64::NAN, 2.0, 0.5),
        BloomError::InvalidRate { p } if p.is_nan()
    ));
    for s in [1.0, 0.5, 0.0, -2.0, f64::NAN, f64::INFINITY] {
        let e = scalable_err(100, 0.01, s, 0.5);
        assert!(
            matches!(
                e,
                BloomError::OutOfRange {
                    what: "scalable growth s",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_names(&e, &[&format!("growth s = {s}"), "greater than 1"]);
    }
    for r in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::NEG_INFINITY] {
        let e = scalable_err(100, 0.01, 2.0, r);
        assert!(
            matches!(
                e,
                BloomError::OutOfRange {
                    what: "scalable tightening r",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_names(&e, &[&format!("tightening r = {r}"), "(0, 1)"]);
    }
}

#[test]
fn scalable_growth_beyond_u64_is_refused_before_anything_is_allocated() {
    // The second stage's key count n0 s = 1e23 does not fit in u64.
    let e = scalable_err(1000, 0.01, 1e20, 0.5);
    assert!(matches!(e, BloomError::OutOfRange { .. }), "{e:?}");
    assert_names(
        &e,
        &["growth s = 100000000000000000000", "n0 = 1000", "u64"],
    );
    // 1e19 keys fit in u64, but their bits at p_1 = 0.0025 (1.2e20) do not.
    let e = scalable_err(1, 0.01, 1e19, 0.5);
    assert!(matches!(e, BloomError::TooLarge { .. }), "{e:?}");
    assert_names(&e, &["n = 10000000000000000000", "p = 0.0025"]);
}

#[test]
fn scalable_growth_that_fails_later_keeps_every_key_and_says_why() {
    // r = 1e-60: stage 1 runs at 1e-62 (k = 206), stage 2 at 1e-122, which needs k = 405 > 255.
    let mut f = Chain::new(10, 0.01, 2.0, 1e-60).unwrap();
    let mut first_error = None;
    for i in 0..100u64 {
        let d = bloomlab_filters::Filter::digest(&f, &i.to_le_bytes());
        if let Err(e) = f.try_insert_digest(d) {
            first_error.get_or_insert((i, e));
        }
    }
    let (at, e) = first_error.expect("the third stage cannot be sized");
    assert_eq!(at, 30, "10 + 20 keys fill two stages");
    assert!(
        matches!(e, BloomError::InvalidHashes { max: 255, .. }),
        "{e:?}"
    );
    assert_eq!(f.growth_error(), Some(&e));
    assert_eq!(bloomlab_filters::Growable::stages(&f), 2);
    assert!((0..100u64).all(|i| f.contains(&i)), "no key is lost");
}

#[test]
fn removing_from_a_layout_without_counters_is_an_error_naming_it() {
    for name in registry::names() {
        let caps = registry::capabilities(&name).unwrap();
        let spec = Spec::Target { n: 100, p: 0.01 };
        match registry::build_removable(&name, spec) {
            Ok(_) => assert!(caps.remove, "{name}"),
            Err(e) => {
                assert!(!caps.remove, "{name}: {e}");
                assert!(
                    matches!(&e, BloomError::Unsupported { name: got, .. } if *got == name),
                    "{name}: {e:?}"
                );
                assert_msg(
                    &name,
                    spec,
                    &e,
                    &[&name, "cannot remove keys", "counting4/xxh3/km"],
                );
            }
        }
        match registry::build_growable(&name, spec) {
            Ok(_) => assert!(caps.grow, "{name}"),
            Err(e) => {
                assert!(!caps.grow, "{name}: {e}");
                assert_msg(
                    &name,
                    spec,
                    &e,
                    &[&name, "cannot grow", "textbook-scalable"],
                );
            }
        }
    }
    let e = registry::build_removable("counting16/xxh3/km", Spec::Target { n: 10, p: 0.1 })
        .unwrap_err();
    assert!(matches!(e, BloomError::UnknownName { .. }), "{e:?}");
}
