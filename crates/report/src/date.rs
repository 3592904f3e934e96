//! Calendar dates of Unix times, as the generated reports print them.

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The last Unix second [`date_utc`] prints as a date: 9999-12-30 22:00:00 UTC, jiff's
/// `Timestamp::MAX` (which keeps every time zone's civil time within year 9999).
pub const LAST_DATED: u64 = 253_402_207_200;

/// `YYYY-MM-DD HH:MM UTC` for `unix` seconds since 1970-01-01 00:00 UTC (seconds dropped, not
/// rounded), for every instant up to [`LAST_DATED`] (9999-12-30 22:00 UTC, jiff's last instant);
/// a later one (only a corrupt log holds one) is printed as `Unix time N s (after 9999-12-30
/// 22:00 UTC)` rather than as a wrong date.
pub fn date_utc(unix: u64) -> String {
    let Some(ts) = i64::try_from(unix)
        .ok()
        .and_then(|s| Timestamp::from_second(s).ok())
    else {
        return format!("Unix time {unix} s (after 9999-12-30 22:00 UTC)");
    };
    let t = TimeZone::UTC.to_datetime(ts);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_utc_prints_known_instants() {
        for (unix, text) in [
            (0, "1970-01-01 00:00 UTC"),
            (59, "1970-01-01 00:00 UTC"),
            (90_060, "1970-01-02 01:01 UTC"),
            (951_782_400, "2000-02-29 00:00 UTC"),
            (1_700_000_000, "2023-11-14 22:13 UTC"),
            (4_107_542_399, "2100-02-28 23:59 UTC"),
            (4_107_542_400, "2100-03-01 00:00 UTC"),
            (LAST_DATED, "9999-12-30 22:00 UTC"),
        ] {
            assert_eq!(date_utc(unix), text, "unix {unix}");
        }
    }

    #[test]
    fn last_dated_is_jiffs_last_instant() {
        assert_eq!(Timestamp::MAX.as_second(), LAST_DATED as i64);
    }

    #[test]
    fn date_utc_past_the_last_dated_instant_says_so_instead_of_a_date() {
        for unix in [LAST_DATED + 1, 253_402_300_800, i64::MAX as u64, u64::MAX] {
            assert_eq!(
                date_utc(unix),
                format!("Unix time {unix} s (after 9999-12-30 22:00 UTC)")
            );
        }
    }

    /// The hand-written arithmetic `date_utc` used before jiff (Hinnant's `civil_from_days`),
    /// kept here only to show the printed text did not change.
    fn civil_from_days_reference(unix: u64) -> String {
        let days = (unix / 86_400) as i64;
        let secs = unix % 86_400;
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        format!(
            "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
            secs / 3600,
            secs % 3600 / 60
        )
    }

    #[test]
    fn date_utc_prints_what_the_hand_written_arithmetic_printed() {
        // About 2.5 million instants spread over the whole range (a prime stride, so that times
        // of day and month ends vary), plus every hour of the years 1999 to 2001.
        let strided = (0..=LAST_DATED).step_by(100_003).chain([LAST_DATED]);
        let around_2000 = (915_148_800..1_009_843_200u64).step_by(3_600);
        for unix in strided.chain(around_2000) {
            assert_eq!(
                date_utc(unix),
                civil_from_days_reference(unix),
                "unix {unix}"
            );
        }
    }
}
