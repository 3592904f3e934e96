//! Progress on stderr for the long runs (`sweep`, `sweep sketch`, `scale`, `scenario`, and
//! `bloomlab filter` add, import and export). On a terminal, an indicatif bar. Otherwise (stderr
//! sent to a file or a pipe: CI, `nohup`, `2> log`) indicatif draws nothing, so a run of many
//! minutes would say nothing until it ends; there a plain line is written instead every
//! [`LOG_EVERY`] (the first after [`LOG_EVERY`], so a run of a few seconds writes none), and one
//! at every [`RunProgress::phase`].

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{HumanCount, ProgressBar, ProgressStyle};

/// The longest a run piped to a log goes without a progress line.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// How a run's progress reads: the bar's template on a terminal, the parts of a log's lines
/// otherwise: `<program>: <elapsed> <done>/<total> <unit> (<percent>), <message>` (`<done> <unit>`
/// when the total is 0, unknown), with the units done per second since the phase (or the run)
/// began after the percent when `rate` holds.
#[derive(Debug, Clone, Copy)]
pub struct Look {
    /// Who writes the lines (`sweep`, `scale`).
    pub program: &'static str,
    /// What is counted (`rows`, `keys`; empty when the message says it).
    pub unit: &'static str,
    /// indicatif's template for the bar (the default bar if it does not parse).
    pub template: &'static str,
    /// Whether a log's line shows the units per second.
    pub rate: bool,
}

/// A run's progress: `done` of `total` units (rows, trials, keys) and a message saying what runs
/// now. Cheap to update from worker threads (a lock per update, no output: on a terminal
/// indicatif draws at its own rate, in a log a thread of this type writes the lines).
pub struct RunProgress {
    bar: ProgressBar,
    log: Option<Arc<Log>>,
    /// The log's thread and the sender whose drop stops it.
    ticker: Mutex<Option<(Sender<()>, JoinHandle<()>)>>,
}

/// What the plain lines need: who writes them, what the units are, and what was last shown.
struct Log {
    program: &'static str,
    unit: &'static str,
    rate: bool,
    every: Duration,
    started: Instant,
    state: Mutex<LogState>,
}

struct LogState {
    done: u64,
    total: u64,
    message: String,
    phase_started: Instant,
    last_line: Instant,
    lines: u64,
}

impl RunProgress {
    /// A bar of `total` units drawn with `look.template` on a terminal; otherwise plain lines
    /// every [`LOG_EVERY`].
    pub fn new(total: u64, look: &Look) -> Self {
        let log = (!std::io::stderr().is_terminal()).then_some(LOG_EVERY);
        Self::with_log(log, total, look)
    }

    /// A bar when `log` is `None`, else lines every `log`.
    fn with_log(log: Option<Duration>, total: u64, look: &Look) -> Self {
        let Look {
            program,
            unit,
            template,
            rate,
        } = *look;
        let Some(every) = log else {
            let bar = ProgressBar::new(total).with_style(
                // The templates are constants; one that did not parse would draw the default bar
                // rather than stop a run.
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            return Self {
                bar,
                log: None,
                ticker: Mutex::new(None),
            };
        };
        let now = Instant::now();
        let log = Arc::new(Log {
            program,
            unit,
            rate,
            every,
            started: now,
            state: Mutex::new(LogState {
                done: 0,
                total,
                message: String::new(),
                phase_started: now,
                last_line: now,
                lines: 0,
            }),
        });
        let (stop, stopped) = mpsc::channel::<()>();
        let ticking = Arc::clone(&log);
        // A line when `every` has passed since the last one, until the sender is dropped.
        let thread = std::thread::spawn(move || {
            loop {
                let due = ticking.lock().last_line + ticking.every;
                match stopped.recv_timeout(due.saturating_duration_since(Instant::now())) {
                    Err(RecvTimeoutError::Timeout) => ticking.tick(Instant::now()),
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        });
        Self {
            bar: ProgressBar::hidden(),
            log: Some(log),
            ticker: Mutex::new(Some((stop, thread))),
        }
    }

    /// Sets the units done so far.
    pub fn set_position(&self, done: u64) {
        self.bar.set_position(done);
        self.update(|s| s.done = done);
    }

    /// Sets the total the units done count towards.
    pub fn set_length(&self, total: u64) {
        self.bar.set_length(total);
        self.update(|s| s.total = total);
    }

    /// Says what runs now (shown with the next line, not a line of its own).
    pub fn set_message(&self, message: impl Into<String>) {
        let message = message.into();
        self.bar.set_message(message.clone());
        self.update(|s| s.message = message);
    }

    /// Starts a phase of `total` units named `message`: the bar restarts from 0, and a log
    /// gets a line at once.
    pub fn phase(&self, message: impl Into<String>, total: u64) {
        let message = message.into();
        self.bar.reset();
        self.bar.set_length(total);
        self.bar.set_message(message.clone());
        if let Some(log) = &self.log {
            let mut s = log.lock();
            let now = Instant::now();
            (s.done, s.total, s.message, s.phase_started) = (0, total, message, now);
            log.write(&mut s, now);
        }
    }

    /// Removes the bar and stops the log's lines, waiting for its thread to end (a log gets no
    /// final line: the run prints its own summary).
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
        let ticker = self.ticker.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((stop, thread)) = ticker {
            drop(stop);
            // The thread only writes lines; a panic there changes no result.
            let _ = thread.join();
        }
    }

    fn update(&self, change: impl FnOnce(&mut LogState)) {
        if let Some(log) = &self.log {
            change(&mut log.lock());
        }
    }
}

impl Drop for RunProgress {
    /// A run that returns early (an error) stops the lines too.
    fn drop(&mut self) {
        self.finish_and_clear();
    }
}

impl Log {
    fn lock(&self) -> std::sync::MutexGuard<'_, LogState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes a line if `every` has passed since the last one.
    fn tick(&self, now: Instant) {
        let mut s = self.lock();
        if now.duration_since(s.last_line) >= self.every {
            self.write(&mut s, now);
        }
    }

    fn write(&self, s: &mut LogState, now: Instant) {
        eprintln!("{}", self.line(s, now));
        s.last_line = now;
        s.lines += 1;
    }

    fn line(&self, s: &LogState, now: Instant) -> String {
        let elapsed = now.duration_since(self.started).as_secs();
        let (h, m, sec) = (elapsed / 3600, elapsed / 60 % 60, elapsed % 60);
        let mut line = format!(
            "{}: {h}:{m:02}:{sec:02} {}",
            self.program,
            HumanCount(s.done)
        );
        // A total of 0 is unknown (keys from standard input): the count alone.
        if s.total > 0 {
            line += &format!("/{}", HumanCount(s.total));
        }
        if !self.unit.is_empty() {
            line += &format!(" {}", self.unit);
        }
        if s.total > 0 {
            line += &format!(" ({:.0}%)", 100.0 * s.done as f64 / s.total as f64);
        }
        let phase_secs = now.duration_since(s.phase_started).as_secs_f64();
        if self.rate && phase_secs > 0.0 && s.done > 0 {
            let per_s = s.done as f64 / phase_secs;
            line += &format!(", {}/s", HumanCount(per_s as u64));
        }
        if !s.message.is_empty() {
            line += ", ";
            line += &s.message;
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCALE: Look = Look {
        program: "scale",
        unit: "keys",
        template: "{bar}",
        rate: true,
    };

    fn logged(every: Duration) -> RunProgress {
        RunProgress::with_log(Some(every), 10, &SCALE)
    }

    #[test]
    fn a_log_line_says_elapsed_done_of_total_percent_rate_and_message() {
        let p = logged(Duration::from_secs(3600));
        let log = p.log.as_ref().unwrap();
        let mut s = log.lock();
        (s.done, s.total, s.message) = (2_500_000, 10_000_000, "sbbf/xxh3: insert".into());
        let line = log.line(&s, log.started + Duration::from_secs(3723));
        assert!(
            line.starts_with("scale: 1:02:03 2,500,000/10,000,000 keys (25%), "),
            "{line}"
        );
        // 2.5e6 keys in the 3723 s since the phase began.
        assert!(line.ends_with(", 671/s, sbbf/xxh3: insert"), "{line}");
        // An unknown total (0): the count alone.
        s.total = 0;
        let line = log.line(&s, log.started + Duration::from_secs(10));
        assert!(
            line.starts_with("scale: 0:00:10 2,500,000 keys, 250,000/s, "),
            "{line}"
        );
    }

    #[test]
    fn a_log_writes_a_line_per_phase_and_per_interval_until_finished() {
        let every = Duration::from_secs(3600);
        let p = logged(every);
        let log = Arc::clone(p.log.as_ref().unwrap());
        p.set_position(5);
        p.set_message("members");
        // Updates write nothing themselves: a phase does, at once.
        assert_eq!(log.lock().lines, 0);
        p.phase("non-members", 40);
        let since = {
            let s = log.lock();
            assert_eq!((s.lines, s.done, s.total), (1, 0, 40));
            assert_eq!(s.message, "non-members");
            s.last_line
        };
        // The thread's tick: nothing before an interval has passed since the last line, then one.
        log.tick(since + every / 2);
        assert_eq!(log.lock().lines, 1);
        log.tick(since + every);
        assert_eq!(log.lock().lines, 2);
        log.tick(since + every + every / 2);
        assert_eq!(log.lock().lines, 2);
        // Finishing stops the thread (an hour's wait would hang this test otherwise).
        p.finish_and_clear();
        assert!(p.ticker.lock().unwrap().is_none());
    }

    #[test]
    fn a_template_that_does_not_parse_draws_the_default_bar() {
        let bad = Look {
            // A width that is not a number.
            template: "{bar:abc}",
            ..SCALE
        };
        assert!(ProgressStyle::with_template(bad.template).is_err());
        let p = RunProgress::with_log(None, 3, &bad);
        p.set_position(1);
        assert_eq!(p.bar.position(), 1);
    }

    #[test]
    fn a_terminal_gets_a_bar_and_no_log() {
        let p = RunProgress::with_log(None, 3, &SCALE);
        p.set_position(2);
        assert!(p.log.is_none());
        assert_eq!(p.bar.position(), 2);
    }
}
