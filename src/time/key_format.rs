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
    /// A text day: `'2026-01-10'` (a date's own text, or a timestamp's:
    /// the bounds compare as text either way).
    TextYyyyMmDd,
    /// A text month: `'2026-01'`.
    TextYyyyMm,
    /// Seconds since 1970-01-01 UTC.
    EpochSeconds,
    /// Milliseconds since 1970-01-01 UTC.
    EpochMillis,
}

impl KeyFormat {
    /// Its name in ripple.yml (`int_yyyymmdd`).
    pub fn name(self) -> &'static str {
        match self {
            KeyFormat::Date => "date",
            KeyFormat::IntYyyymmdd => "int_yyyymmdd",
            KeyFormat::TextYyyymmdd => "text_yyyymmdd",
            KeyFormat::TextYyyyMmDd => "text_yyyy_mm_dd",
            KeyFormat::TextYyyyMm => "text_yyyy_mm",
            KeyFormat::EpochSeconds => "epoch_seconds",
            KeyFormat::EpochMillis => "epoch_millis",
        }
    }

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
            KeyFormat::TextYyyyMmDd => format!("'{date}'"),
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
    fn literals_follow_the_format() {
        let h = TimeKey::parse("2026-01-10").unwrap().start;
        assert_eq!(KeyFormat::Date.literal(h, false), "'2026-01-10'");
        assert_eq!(KeyFormat::IntYyyymmdd.literal(h, false), "20260110");
        assert_eq!(KeyFormat::TextYyyymmdd.literal(h, false), "'20260110'");
        assert_eq!(KeyFormat::TextYyyyMm.literal(h, false), "'2026-01'");
        assert_eq!(KeyFormat::TextYyyyMmDd.literal(h, true), "'2026-01-10'");
        assert_eq!(KeyFormat::EpochSeconds.literal(h, false), "1768003200");
        assert_eq!(KeyFormat::EpochMillis.literal(h, false), "1768003200000");
    }
}
