//! The conformance report rendered from a hand-built [`Conformance`]: the summary's table and
//! links, a page's evidence and reproduce commands, the pictures, and the whole-or-nothing write.

use bloomlab_conform::verdict::{RatePoint, Speed, Verdict};
use bloomlab_conform::{About, Capabilities, Clause, Conformance, Outcome, Plan};

use super::*;
use crate::testing::temp_dir;

fn point(clause: Clause, family: &str, inserted: u64, fp: u64, theory: Option<f64>) -> RatePoint {
    RatePoint {
        clause,
        family: family.into(),
        inserted,
        design_n: 10_000,
        queries: 400_000,
        false_positives: fp,
        promised: 0.01,
        theory,
    }
}

fn verdict(clause: Clause, outcome: Outcome, figure: &str) -> Verdict {
    Verdict {
        clause,
        outcome,
        figure: figure.into(),
        evidence: vec![format!("evidence line of {clause}")],
        reproduce: format!("bloomlab conform --quick --subject rust/demo --clause {clause}"),
    }
}

/// A subject with every clause but scale, promised-rate broken, over-fill and key-family points
/// (one family with no false positive at all), and speed figures.
fn demo(name: &str) -> Conformance {
    let mut verdicts: Vec<Verdict> = Clause::ALL
        .into_iter()
        .filter(|&c| c != Clause::Scale)
        .map(|c| verdict(c, Outcome::Holds, "fine"))
        .collect();
    verdicts[1] = verdict(
        Clause::PromisedRate,
        Outcome::Broken,
        "2.01% vs 1% promised",
    );
    Conformance {
        subject: About::rust(name, "1.2.3").with(Capabilities {
            serialize: true,
            ..Capabilities::default()
        }),
        n: 10_000,
        p: 0.01,
        seed: 42,
        verdicts,
        points: vec![
            point(Clause::OverFill, "random-u64", 5_000, 50, Some(1.3e-4)),
            point(Clause::OverFill, "random-u64", 10_000, 8_000, Some(0.01)),
            point(Clause::OverFill, "random-u64", 20_000, 64_000, Some(0.16)),
            point(Clause::OverFill, "random-u64", 40_000, 220_000, Some(0.55)),
            point(Clause::KeyFamilies, "random-u64", 10_000, 4_000, None),
            point(Clause::KeyFamilies, "sequential-u64", 10_000, 0, None),
            point(Clause::KeyFamilies, "url", 10_000, 4_100, None),
        ],
        speed: Some(Speed {
            insert_ns: 20.0,
            present_ns: 15.0,
            absent_ns: 12.0,
            batch: 4096,
        }),
    }
}

fn report(results: Vec<Conformance>) -> ConformanceReport {
    ConformanceReport {
        run: RunInfo {
            plan: Plan::quick(),
            date_unix: 1_800_000_000,
            machine: Machine {
                arch: "x86_64".into(),
                cores: 2,
                memory_bytes: Some(8 << 30),
            },
            revision: "abc1234".into(),
            command: "bloomlab conform --quick --all".into(),
        },
        results,
    }
}

#[test]
fn stems_replace_slashes_and_cannot_escape_the_directory() {
    assert_eq!(stem("rust/xorf/BinaryFuse8"), "rust_xorf_BinaryFuse8");
    assert_eq!(stem("../../etc/passwd"), "_.._etc_passwd");
    assert_eq!(stem(""), "subject");
    let names = page_names(&[demo("a/b"), demo("a_b"), demo("README")]);
    assert_eq!(names[0].page, "a_b.md");
    assert_eq!(names[1].page, "a_b_2.md");
    assert_eq!(
        names[2].page, "README_2.md",
        "a page may not replace the summary"
    );
    assert_eq!(names[0].fpr_vs_inserted, "a_b_fpr_vs_inserted.png");
}

#[test]
fn summary_has_the_run_a_linked_row_per_library_and_the_null_cost() {
    let mut null = demo("null");
    null.verdicts.clear();
    let r = report(vec![demo("rust/demo"), null]);
    let md = render_summary(&r);
    let seed = format!("seed {}", Plan::quick().seed);
    for want in [
        "n = 10000, p = 0.01",
        seed.as_str(),
        "x86_64 (2 cores, 8.0 GiB)",
        "revision `abc1234`",
        "2027-01-15 08:00 UTC",
        "| library | no-false-negatives | promised-rate |",
        "[rust/demo](rust_demo.md) 1.2.3 (rust)",
        "| holds: fine | **broken**: 2.01% vs 1% promised |",
        "not run",
        "null adapter",
        "20.0 ns per key inserted",
        "How to read a verdict",
    ] {
        assert!(md.contains(want), "summary lacks {want:?}:\n{md}");
    }
}

#[test]
fn page_lists_each_verdict_with_its_evidence_and_reproduce_command() {
    let r = report(vec![demo("rust/demo")]);
    let names = page_names(&r.results);
    let md = render_page(&r.results[0], &names[0], &r.run);
    for want in [
        "# rust/demo 1.2.3 (rust)",
        "Broken: promised-rate.",
        "Capabilities: serialize.",
        "### promised-rate: **broken**",
        "- evidence line of promised-rate",
        "bloomlab conform --quick --subject rust/demo --clause promised-rate",
        "![FPR against keys inserted](rust_demo_fpr_vs_inserted.png)",
        "![FPR by key family](rust_demo_fpr_by_family.png)",
        "[Back to the summary](README.md)",
    ] {
        assert!(md.contains(want), "page lacks {want:?}:\n{md}");
    }
    assert_eq!(
        md.matches("Reproduce:").count(),
        Clause::ALL.len() - 1,
        "one per verdict run (every clause but scale)"
    );
}

/// Pixels that are neither white nor near-white: something was drawn.
fn drawn_pixels(path: &Path) -> usize {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|px| px.iter().take(3).any(|&c| c < 200))
        .count()
}

#[test]
fn write_places_json_summary_pages_and_pictures_together() {
    let dir = temp_dir("conformance_write");
    let out = OutputDir::lock(&dir.join("out")).unwrap();
    let mut bare = demo("python/bare");
    bare.points.clear();
    let r = report(vec![demo("rust/demo"), bare]);
    let files = write(&out, &r).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "README.md",
            "conformance.json",
            "python_bare.md",
            "python_bare_fpr_by_family.png",
            "python_bare_fpr_vs_inserted.png",
            "rust_demo.md",
            "rust_demo_fpr_by_family.png",
            "rust_demo_fpr_vs_inserted.png",
        ]
    );
    assert_eq!(read(&dir.join("out").join(JSON_NAME)).unwrap(), r);
    // The pictures with points hold more ink than the ones that only say why they are empty.
    let full = drawn_pixels(&dir.join("out/rust_demo_fpr_vs_inserted.png"));
    let empty = drawn_pixels(&dir.join("out/python_bare_fpr_vs_inserted.png"));
    assert!(full > 2 * empty && empty > 0, "full {full}, empty {empty}");
    assert!(drawn_pixels(&dir.join("out/rust_demo_fpr_by_family.png")) > 2 * empty);
}

#[test]
fn a_failed_write_places_nothing() {
    let dir = temp_dir("conformance_fail");
    let out = OutputDir::lock(&dir.join("out")).unwrap();
    let mut r = report(vec![demo("rust/demo")]);
    // A page that cannot be written (a directory stands where it goes), after the JSON and the
    // pictures were staged: none of them may be placed.
    r.results[0].subject.name = "x".into();
    let staging = out.staging().unwrap();
    std::fs::create_dir(staging.join("x.md")).unwrap();
    assert!(write(&out, &r).is_err());
    let left: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != crate::output::LOCK_NAME)
        .collect();
    assert!(left.is_empty(), "a failed write left {left:?}");
}
