//! How a table stores its partition key: a date or timestamp, or the same
//! instant encoded as an integer, a text, or seconds since the epoch. A
//! filter on a key ripple writes in the format the column holds.

use super::{Hour, datetime_of};

/// The format of a partition column (`partition_format` in ripple.yml).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyFormat {
    /// A `date` or `timestamp` column (the default).
    #[default]
    Date,
    /// An integer day: `20260110`.
    IntYyyymmdd,
    /// A text day without dashes: `'20260110'`.
    TextYyyymmdd,
    /// A text month: `'2026-01'`.
    TextYyyyMm,
    /// Seconds since 1970-01-01 UTC.
    EpochSeconds,
    /// Milliseconds since 1970-01-01 UTC.
    EpochMillis,
}

/// The instant a partition bound `h` (a local calendar hour) is in `zone`,
/// written with its offset: `'2026-03-29 00:00:00+01:00'`. A daylight
/// saving day is 23 or 25 hours long, and so is its partition.
pub fn zoned_literal(h: Hour, zone: &str) -> Option<String> {
    let (date, hour) = datetime_of(h);
    let civil = date.at(hour as i8, 0, 0, 0);
    let zoned = civil.in_tz(zone).ok()?;
    Some(format!("'{}'", zoned.strftime("%Y-%m-%d %H:%M:%S%:z")))
}

impl KeyFormat {
    /// The literal of the instant `h` in this format (`hourly`: with its
    /// hour, for date/timestamp columns).
    pub fn literal(self, h: Hour, hourly: bool) -> String {
        let (date, hour) = datetime_of(h);
        let ymd = format!("{:04}{:02}{:02}", date.year(), date.month(), date.day());
        match self {
            KeyFormat::Date if hourly => format!("'{date} {hour:02}:00:00'"),
            KeyFormat::Date => format!("'{date}'"),
            KeyFormat::IntYyyymmdd => ymd,
            KeyFormat::TextYyyymmdd => format!("'{ymd}'"),
            KeyFormat::TextYyyyMm => format!("'{:04}-{:02}'", date.year(), date.month()),
            KeyFormat::EpochSeconds => (h * 3600).to_string(),
            KeyFormat::EpochMillis => (h * 3_600_000).to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeKey;

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

    #[test]
    fn literals_follow_the_format() {
        let h = TimeKey::parse("2026-01-10").unwrap().start;
        assert_eq!(KeyFormat::Date.literal(h, false), "'2026-01-10'");
        assert_eq!(KeyFormat::IntYyyymmdd.literal(h, false), "20260110");
        assert_eq!(KeyFormat::TextYyyymmdd.literal(h, false), "'20260110'");
        assert_eq!(KeyFormat::TextYyyyMm.literal(h, false), "'2026-01'");
        assert_eq!(KeyFormat::EpochSeconds.literal(h, false), "1768003200");
        assert_eq!(KeyFormat::EpochMillis.literal(h, false), "1768003200000");
    }
}
