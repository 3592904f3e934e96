//! The suite's answer: one [`Verdict`] per [`Clause`], gathered in a [`Conformance`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::candidate::About;

/// The nine clauses, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Clause {
    /// 1. No member ever answers "absent": every key family, after a serialization round trip,
    ///    under concurrent inserts where claimed.
    NoFalseNegatives,
    /// 2. The observed rate at the promised n against the promised p (one-sided exact test).
    PromisedRate,
    /// 3. The observed rate against the declared layout's theory (two-sided).
    Theory,
    /// 4. The rate on structured keys against random keys (a hash weakness shows here).
    KeyFamilies,
    /// 5. A filter past 2^32 bits, filled and measured.
    Scale,
    /// 6. The rate at 0.5x to 4x the promised n (to 64x, held to p, for a growable filter), or how
    ///    construction fails.
    OverFill,
    /// 6b. Every build, insert and query at a valid (n, p) succeeds: inside the candidate's declared
    ///    range, or for any n >= 1 and p in (0, 1) when it declares none (an error, panic, abort or
    ///    hang there is a defect).
    AcceptsValidInput,
    /// 7. n = 0, p at and beyond its edges, NaN: what the library does.
    BadInput,
    /// 8. Insert and lookup nanoseconds (for information).
    Speed,
}

impl Clause {
    /// Every clause, in report order.
    pub const ALL: [Clause; 9] = [
        Clause::NoFalseNegatives,
        Clause::PromisedRate,
        Clause::Theory,
        Clause::KeyFamilies,
        Clause::Scale,
        Clause::OverFill,
        Clause::AcceptsValidInput,
        Clause::BadInput,
        Clause::Speed,
    ];

    /// Its kebab-case name (`no-false-negatives`, `promised-rate`, ...), as on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Clause::NoFalseNegatives => "no-false-negatives",
            Clause::PromisedRate => "promised-rate",
            Clause::Theory => "theory",
            Clause::KeyFamilies => "key-families",
            Clause::Scale => "scale",
            Clause::OverFill => "over-fill",
            Clause::AcceptsValidInput => "accepts-valid-input",
            Clause::BadInput => "bad-input",
            Clause::Speed => "speed",
        }
    }

    /// Parses [`as_str`](Self::as_str)'s names; the error lists them.
    pub fn parse(s: &str) -> Result<Clause, String> {
        Clause::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown clause {s:?}; allowed: {}",
                    Clause::ALL.map(Clause::as_str).join(", ")
                )
            })
    }
}

impl fmt::Display for Clause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, not `write_str`: the readable verdict aligns these in columns (`{:<19}`).
        f.pad(self.as_str())
    }
}

/// A clause's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The evidence shows the clause holds.
    Holds,
    /// The evidence shows it does not.
    Broken,
    /// The clause does not apply (no declared layout, no large filters, ...).
    NotApplicable,
    /// The evidence cannot decide at the stated false-alarm rate; the verdict says how many
    /// more queries would.
    Undecided,
}

impl Outcome {
    /// `holds`, `broken`, `n/a`, `undecided`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Holds => "holds",
            Outcome::Broken => "broken",
            Outcome::NotApplicable => "n/a",
            Outcome::Undecided => "undecided",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, not `write_str`: the readable verdict aligns these in columns (`{:<19}`).
        f.pad(self.as_str())
    }
}

/// One clause's verdict with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Which clause.
    pub clause: Clause,
    /// What it came to.
    pub outcome: Outcome,
    /// The one figure behind it, for a summary table cell (`0 / 1,000,000 missed`,
    /// `1.07% vs 1% promised`, `panics on p = NaN`).
    pub figure: String,
    /// Lines of evidence: the counts, intervals, tests and parameters that decided it.
    pub evidence: Vec<String>,
    /// The command that reproduces this verdict alone.
    pub reproduce: String,
}

/// One measured rate, for the plots (FPR against n and against key family).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatePoint {
    /// The clause that measured it.
    pub clause: Clause,
    /// Key family of members and queries.
    pub family: String,
    /// Keys inserted.
    pub inserted: u64,
    /// The n the filter was built for.
    pub design_n: u64,
    /// Non-member queries.
    pub queries: u64,
    /// False positives among them.
    pub false_positives: u64,
    /// The promised p.
    pub promised: f64,
    /// The declared layout's theory at `inserted`, where declared.
    pub theory: Option<f64>,
}

/// Nanoseconds per key, for information (clause 8).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    /// Insert, per key.
    pub insert_ns: f64,
    /// Lookup of members, per key.
    pub present_ns: f64,
    /// Lookup of non-members, per key.
    pub absent_ns: f64,
    /// Keys per batch the figures were taken with.
    pub batch: usize,
}

/// Everything the suite found about one candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conformance {
    /// The candidate.
    pub subject: About,
    /// The promised n and p the suite held it to.
    pub n: u64,
    /// The promised p.
    pub p: f64,
    /// The seed every key set came from.
    pub seed: u64,
    /// One verdict per clause run, in clause order.
    pub verdicts: Vec<Verdict>,
    /// The rates measured, for plots.
    pub points: Vec<RatePoint>,
    /// Clause 8's figures, when it ran.
    pub speed: Option<Speed>,
}

impl Conformance {
    /// The verdict on `clause`, if it ran.
    pub fn verdict(&self, clause: Clause) -> Option<&Verdict> {
        self.verdicts.iter().find(|v| v.clause == clause)
    }

    /// The clauses found broken.
    pub fn broken(&self) -> Vec<Clause> {
        self.verdicts
            .iter()
            .filter(|v| v.outcome == Outcome::Broken)
            .map(|v| v.clause)
            .collect()
    }

    /// Panics with the whole readable verdict when any clause is broken: what a library author's
    /// `#[test]` calls.
    #[track_caller]
    pub fn assert_conforms(&self) {
        if !self.broken().is_empty() {
            panic!("{self}");
        }
    }
}

impl fmt::Display for Conformance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let broken = self.broken();
        writeln!(
            f,
            "conformance of {} at n = {}, p = {} (seed {}): {}",
            self.subject,
            self.n,
            self.p,
            self.seed,
            if broken.is_empty() {
                "no clause broken".to_owned()
            } else {
                format!(
                    "BROKEN: {}",
                    broken
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        )?;
        for v in &self.verdicts {
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

/// One line with the clause, outcome and figure (an undecided figure says what would decide);
/// a broken or undecided verdict adds its evidence and the command that reproduces it.
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "  {:<19} {:<9} {}",
            self.clause, self.outcome, self.figure
        )?;
        if self.outcome == Outcome::Broken || self.outcome == Outcome::Undecided {
            for e in &self.evidence {
                writeln!(f, "      {e}")?;
            }
            writeln!(f, "      reproduce: {}", self.reproduce)?;
        }
        Ok(())
    }
}
