//! Time zones: how far a zone's days are from UTC's, and the instant a
//! local partition bound is.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The smallest and largest offsets from UTC, in minutes, that `zone`
/// has taken from 1990 to 2040 (`None`: not a zone the tz database knows).
/// Sampled weekly (no daylight saving period is shorter), and remembered:
/// every edge between two zones asks.
pub fn offset_range(zone: &str) -> Option<(i64, i64)> {
    type Known = Mutex<HashMap<String, Option<(i64, i64)>>>;
    static KNOWN: OnceLock<Known> = OnceLock::new();
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(r) = known.lock().ok().and_then(|k| k.get(zone).copied()) {
        return r;
    }
    let range = jiff::tz::TimeZone::get(zone).ok().map(|tz| {
        let start = jiff::Timestamp::from_second(631_152_000).unwrap_or_default(); // 1990-01-01
        let week = jiff::SignedDuration::from_hours(24 * 7);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        let mut t = start;
        for _ in 0..(52 * 50 + 2) {
            let off = i64::from(tz.to_offset(t).seconds()) / 60;
            lo = lo.min(off);
            hi = hi.max(off);
            t = t.checked_add(week).unwrap_or(t);
        }
        (lo, hi)
    });
    if let Ok(mut k) = known.lock() {
        k.insert(zone.to_string(), range);
    }
    range
}

/// The instant a partition bound `h` (a local calendar hour) is in `zone`,
/// written with its offset: `'2026-03-29 00:00:00+01:00'`. A daylight
/// saving day is 23 or 25 hours long, and so is its partition.
pub fn zoned_literal(h: super::Hour, zone: &str) -> Option<String> {
    let (date, hour) = super::datetime_of(h);
    let civil = date.at(hour as i8, 0, 0, 0);
    let zoned = civil.in_tz(zone).ok()?;
    Some(format!("'{}'", zoned.strftime("%Y-%m-%d %H:%M:%S%:z")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeKey;

    #[test]
    fn offsets_span_standard_and_daylight_saving_time() {
        assert_eq!(offset_range("UTC"), Some((0, 0)));
        assert_eq!(offset_range("America/New_York"), Some((-300, -240)));
        assert_eq!(offset_range("Asia/Kolkata"), Some((330, 330)));
        assert_eq!(offset_range("Not/AZone"), None);
    }

    #[test]
    fn a_zoned_bound_carries_its_offset_across_daylight_saving() {
        let at = |d: &str| TimeKey::parse(d).unwrap().start;
        assert_eq!(
            zoned_literal(at("2026-03-29"), "Europe/Paris").unwrap(),
            "'2026-03-29 00:00:00+01:00'"
        );
        assert_eq!(
            zoned_literal(at("2026-03-30"), "Europe/Paris").unwrap(),
            "'2026-03-30 00:00:00+02:00'"
        );
        assert_eq!(
            zoned_literal(at("2026-01-10"), "UTC").unwrap(),
            "'2026-01-10 00:00:00+00:00'"
        );
    }
}
