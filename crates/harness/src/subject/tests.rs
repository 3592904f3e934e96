use super::*;

#[test]
fn every_subject_round_trips_through_its_name_and_serde() {
    let all = Subject::all();
    assert_eq!(
        all.iter()
            .filter(|s| matches!(s, Subject::Variant(_)))
            .count(),
        bloomlab_filters::registry::names().len()
    );
    // Flat classic (6 hashes x 4 index schemes) and blocked (6 hashes) have Redis twins.
    assert_eq!(
        all.iter()
            .filter(|s| matches!(s, Subject::Redis(_)))
            .count(),
        6 * 4 + 6
    );
    assert!(all.contains(&GROWABLE_PEER));
    for s in &all {
        let name = s.to_string();
        assert_eq!(name.parse::<Subject>().unwrap(), *s, "{name}");
        let json = serde_json::to_string(s).unwrap();
        assert_eq!(json, format!("{name:?}"));
        assert_eq!(serde_json::from_str::<Subject>(&json).unwrap(), *s);
    }
}

#[test]
fn redis_subjects_name_their_twin_without_the_store() {
    let s: Subject = "redis/classic/murmur3/mitz64".parse().unwrap();
    assert_eq!(s.variant().unwrap().name(), "classic/murmur3/mitz64/flat");
    assert!(s.is_remote() && s.capabilities() == Capabilities::default());
    let b: Subject = "redis/blocked512/xxh3".parse().unwrap();
    assert_eq!(b.variant().unwrap().name(), "blocked512/xxh3");
    // Neither the store axis nor a layout Redis does not hold parses.
    for bad in [
        "redis/classic/xxh3/km/flat",
        "redis/classic/xxh3/km/atomic",
        "redis/sbbf/xxh3",
        "redis/",
    ] {
        let e = bad.parse::<Subject>().unwrap_err().to_string();
        assert!(
            e.contains(bad) && e.contains("redis/blocked512/xxh3"),
            "{e}"
        );
    }
}

#[test]
fn capabilities_and_theory_come_from_the_catalogue() {
    let counting: Subject = "counting4/xxh3/km".parse().unwrap();
    assert_eq!(counting.capabilities().names(), ["remove"]);
    let guava: Subject = "classic/murmur3/mitz64/flat".parse().unwrap();
    assert_eq!(guava.capabilities().names(), ["concurrent", "serializable"]);
    assert_eq!(guava.axes().index, Some("mitz64"));
    assert_eq!(GROWABLE_PEER.capabilities().names(), ["grow"]);
    assert_eq!(GROWABLE_PEER.layout(), Layout::Scalable);
    assert_eq!(GROWABLE_PEER.to_string(), GROWABLE_BLOOM_FILTER);
    for s in Subject::all() {
        assert!(!s.theory().is_empty(), "{s}");
    }
    assert_eq!(
        GROWABLE_PEER.list_line(30),
        format!("{GROWABLE_BLOOM_FILTER:<30}  grow (adapter)")
    );
}

#[test]
fn an_unknown_name_lists_every_kind_of_subject() {
    let e = "classic/xxh3/km/flatt".parse::<Subject>().unwrap_err();
    let text = e.to_string();
    for known in [
        "classic/xxh3/km/flat",
        GROWABLE_BLOOM_FILTER,
        "redis/classic/xxh3/km",
    ] {
        assert!(text.contains(known), "{known}: {text}");
    }
}

#[test]
fn selections_parse_all_or_a_list() {
    assert_eq!(Selection::parse_list(" all ").unwrap(), Selection::All);
    let two = Selection::parse_list("sbbf/xxh3, peer/growable-bloom-filter").unwrap();
    assert_eq!(
        two,
        Selection::Only(vec!["sbbf/xxh3".parse().unwrap(), GROWABLE_PEER])
    );
    assert!(Selection::parse_list("sbbf/xxh3,nope").is_err());
    assert!(Selection::parse_list(",").unwrap().is_empty());
}

struct Named(&'static str, bool);

impl Adapter for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            remove: self.1,
            ..Capabilities::default()
        }
    }
    fn theory(&self) -> String {
        "none".into()
    }
    fn sized_bytes(&self, _: u64, _: f64) -> Result<u64, HarnessError> {
        Ok(0)
    }
    fn build(&self, _: u64, _: f64) -> Result<Box<dyn MeasuredFilter>, HarnessError> {
        Err(HarnessError::invalid("adapter", self.0, "builds nothing"))
    }
}

#[test]
fn registering_refuses_names_that_would_be_ambiguous() {
    for bad in [
        "",
        " ext/x",
        "ext/a,b",
        "sbbf/xxh3",
        "redis/classic/xxh3/km",
    ] {
        let e = register(Arc::new(Named(bad, false)))
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("{bad:?}")), "{e}");
    }
    let e = register(Arc::new(Named("ext/removes", true)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("removal"), "{e}");
    let once = register(Arc::new(Named("ext/subject-test", false))).unwrap();
    let again = register(Arc::new(Named("ext/subject-test", false))).unwrap();
    assert_eq!(once, again);
    assert_eq!("ext/subject-test".parse::<Subject>().unwrap(), once);
    assert_eq!(once.layout(), Layout::External);
    assert!(Subject::all().contains(&once));
}

#[test]
fn a_name_takes_the_width_and_alignment_it_is_formatted_with() {
    // The sweep's headline table prints `{:<30}` names: every kind of subject must pad.
    let adapter = register(Arc::new(Named("ext/padded", false))).unwrap();
    let kinds = [
        "sbbf/xxh3".parse::<Subject>().unwrap(),
        "redis/classic/murmur3/mitz64".parse().unwrap(),
        "redis/blocked512/xxh3".parse().unwrap(),
        adapter,
    ];
    for s in kinds {
        let name = s.to_string();
        assert_eq!(
            format!("{s:<40}|"),
            format!("{name}{}|", " ".repeat(40 - name.len()))
        );
        assert_eq!(
            format!("{s:>40}"),
            format!("{}{name}", " ".repeat(40 - name.len()))
        );
        // A width under the name's length truncates nothing.
        assert_eq!(format!("{s:<3}"), name);
    }
}
