//! Partitions on one time axis: every instant is a whole number of hours
//! since 1970-01-01T00 UTC, so all grains (hour, day, ISO week, month, year)
//! are spans of hours and impact is integer interval arithmetic. Calendar
//! facts (month lengths, leap years, ISO weeks) come from jiff.

use jiff::ToSpan;
use jiff::civil::Date;

use super::Grain;

/// The last year a date may have (see [`TimeKey::parse`]).
pub const MAX_YEAR: i16 = 4000;

/// Hours since 1970-01-01T00:00 UTC. `i64::MIN` and `i64::MAX` stand for
/// "no bound".
pub type Hour = i64;

/// The earliest instant: "all of history" when a dataset has no start.
pub const UNBOUNDED: Hour = i64::MIN;

const EPOCH: Date = Date::constant(1970, 1, 1);

/// The day number (days since 1970-01-01) of a date.
fn day_number(d: Date) -> i64 {
    // Whole days between two dates is exact: no time zone is involved.
    i64::from(EPOCH.until(d).map(|s| s.get_days()).unwrap_or(0))
}

/// The date of a day number.
fn date_of(day: i64) -> Date {
    let clamped = day.clamp(-4_000_000, 2_900_000);
    EPOCH.checked_add((clamped as i32).days()).unwrap_or(EPOCH)
}

/// The hour at which `date` starts.
pub fn hour_of_date(date: Date) -> Hour {
    day_number(date) * 24
}

/// The calendar date and hour of day of `h`.
pub fn datetime_of(h: Hour) -> (Date, i64) {
    (date_of(h.div_euclid(24)), h.rem_euclid(24))
}

impl Grain {
    /// The start of the partition holding `h` (`h` itself for `none`).
    pub fn floor(self, h: Hour) -> Hour {
        if h == UNBOUNDED || h == i64::MAX {
            return h;
        }
        match self {
            Grain::Hour | Grain::None => h,
            Grain::Day => h.div_euclid(24) * 24,
            Grain::Week => {
                // ISO weeks start on Monday; 1970-01-01 was a Thursday.
                let day = h.div_euclid(24);
                (day - (day + 3).rem_euclid(7)) * 24
            }
            Grain::Month => hour_of_date(datetime_of(h).0.first_of_month()),
            Grain::Year => hour_of_date(datetime_of(h).0.first_of_year()),
        }
    }

    /// The end of the partition that starts at `start`.
    pub fn next(self, start: Hour) -> Hour {
        if start == UNBOUNDED || start == i64::MAX {
            return start;
        }
        match self {
            Grain::Hour | Grain::None => start.saturating_add(1),
            Grain::Day => start.saturating_add(24),
            Grain::Week => start.saturating_add(168),
            Grain::Month | Grain::Year => self.shift(start, 1),
        }
    }

    /// `h` rounded up to a partition boundary.
    pub fn ceil(self, h: Hour) -> Hour {
        let f = self.floor(h);
        if f == h { h } else { self.next(f) }
    }

    /// `h` moved by `k` partitions (`k` may be negative). Month and year
    /// moves are calendar moves of a partition start.
    pub fn shift(self, h: Hour, k: i64) -> Hour {
        if h == UNBOUNDED || h == i64::MAX {
            return h;
        }
        match self {
            Grain::Hour | Grain::None => h.saturating_add(k),
            Grain::Day => h.saturating_add(k.saturating_mul(24)),
            Grain::Week => h.saturating_add(k.saturating_mul(168)),
            Grain::Month | Grain::Year => {
                let months = if self == Grain::Month {
                    k
                } else {
                    k.saturating_mul(12)
                };
                let (date, hour) = datetime_of(h);
                let moved = date
                    .checked_add((months.clamp(-100_000, 100_000) as i32).months())
                    .unwrap_or(date);
                hour_of_date(moved) + hour
            }
        }
    }

    /// The partition key of the partition starting at `start`:
    /// `2026-01-10T05`, `2026-01-10`, `2026-01-05` (a week's Monday),
    /// `2026-01`, `2026`.
    pub fn key(self, start: Hour) -> String {
        let (date, hour) = datetime_of(start);
        match self {
            Grain::Hour => format!("{date}T{hour:02}"),
            Grain::Day | Grain::Week | Grain::None => date.to_string(),
            Grain::Month => format!("{:04}-{:02}", date.year(), date.month()),
            Grain::Year => format!("{:04}", date.year()),
        }
    }

    /// Partitions in `[from, to)`, both on boundaries of this grain.
    pub fn count(self, from: Hour, to: Hour) -> u64 {
        if from >= to || from == UNBOUNDED {
            return 0;
        }
        match self {
            Grain::Hour => (to - from) as u64,
            Grain::Day => ((to - from) / 24) as u64,
            Grain::Week => ((to - from) / 168) as u64,
            Grain::None => 1,
            Grain::Month | Grain::Year => {
                let (a, b) = (datetime_of(from).0, datetime_of(to).0);
                let months = (i64::from(b.year()) - i64::from(a.year())) * 12
                    + i64::from(b.month())
                    - i64::from(a.month());
                if self == Grain::Month {
                    months as u64
                } else {
                    (months / 12) as u64
                }
            }
        }
    }
}

/// A point in time as the user writes it: `2026-01-10` (a day) or
/// `2026-01-10T05` (an hour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeKey {
    /// The first hour it covers.
    pub start: Hour,
    /// Hour precision (`T05`) or day precision.
    pub is_hour: bool,
}

impl TimeKey {
    /// Parses `YYYY-MM-DD` or `YYYY-MM-DDTHH` (`:MM` and `:MM:SS` of zero are
    /// accepted after the hour).
    pub fn parse(s: &str) -> Result<TimeKey, String> {
        let s = s.trim();
        let bad = || format!("`{s}` is not a date: write 2026-01-10, or 2026-01-10T05 for an hour");
        let (date_part, hour_part) = match s.split_once(['T', ' ']) {
            Some((d, h)) => (d, Some(h)),
            None => (s, None),
        };
        let date: Date = date_part.parse().map_err(|_| bad())?;
        if date_part.len() != 10 {
            return Err(bad());
        }
        // Past it, hours and the minutes of schedules leave the ranges
        // they are counted in (9999-12-31 became 9909-12-07).
        if date.year() > MAX_YEAR {
            return Err(format!(
                "`{s}` is after the year {MAX_YEAR}, past what ripple plans and schedules; write the real date (for \"until now\", give --as-of)"
            ));
        }
        let start = hour_of_date(date);
        match hour_part {
            None => Ok(TimeKey {
                start,
                is_hour: false,
            }),
            Some(h) => {
                let mut parts = h.split(':');
                let hour: i64 = parts
                    .next()
                    .and_then(|x| x.parse().ok())
                    .filter(|x| (0..24).contains(x))
                    .ok_or_else(bad)?;
                if parts.any(|rest| rest.parse::<u32>().ok() != Some(0)) {
                    return Err(format!(
                        "`{s}`: partitions are whole hours; drop the minutes"
                    ));
                }
                Ok(TimeKey {
                    start: start + hour,
                    is_hour: true,
                })
            }
        }
    }

    /// The instant just after the key (`2026-01-10` → 2026-01-11T00).
    pub fn end(self) -> Hour {
        if self.is_hour {
            self.start + 1
        } else {
            self.start + 24
        }
    }
}

/// Today at 00:00 UTC, the default `--as-of`.
pub fn today() -> Hour {
    // Seconds since the epoch, floored to whole days: UTC by construction.
    jiff::Timestamp::now().as_second().div_euclid(86_400) * 24
}

/// An hour as `2026-01-10T05:00Z`, for messages.
pub fn display(h: Hour) -> String {
    if h == UNBOUNDED {
        return "the beginning".to_string();
    }
    let (date, hour) = datetime_of(h);
    format!("{date}T{hour:02}:00Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Hour {
        TimeKey::parse(s).unwrap().start
    }

    #[test]
    fn keys_round_trip_per_grain() {
        assert_eq!(Grain::Hour.key(h("2026-01-10T05")), "2026-01-10T05");
        assert_eq!(Grain::Day.key(h("2026-01-10")), "2026-01-10");
        assert_eq!(
            Grain::Week.key(Grain::Week.floor(h("2026-01-10"))),
            "2026-01-05"
        );
        assert_eq!(
            Grain::Month.key(Grain::Month.floor(h("2026-01-10"))),
            "2026-01"
        );
        assert_eq!(Grain::Year.key(Grain::Year.floor(h("2026-01-10"))), "2026");
    }

    #[test]
    fn iso_weeks_start_on_monday_across_year_ends() {
        // 2026-01-01 is a Thursday: its ISO week starts on 2025-12-29.
        assert_eq!(
            Grain::Week.key(Grain::Week.floor(h("2026-01-01"))),
            "2025-12-29"
        );
        // 2020 has an ISO week 53: 2020-12-28 .. 2021-01-03.
        assert_eq!(
            Grain::Week.key(Grain::Week.floor(h("2021-01-03"))),
            "2020-12-28"
        );
        assert_eq!(
            Grain::Week.key(Grain::Week.floor(h("2021-01-04"))),
            "2021-01-04"
        );
        // A Monday is its own week start; dates before 1970 work too.
        assert_eq!(
            Grain::Week.key(Grain::Week.floor(h("1969-12-31"))),
            "1969-12-29"
        );
    }

    #[test]
    fn months_and_leap_years() {
        let feb = Grain::Month.floor(h("2024-02-29"));
        assert_eq!(Grain::Month.key(feb), "2024-02");
        assert_eq!(Grain::Day.count(feb, Grain::Month.next(feb)), 29);
        let feb25 = Grain::Month.floor(h("2025-02-10"));
        assert_eq!(Grain::Day.count(feb25, Grain::Month.next(feb25)), 28);
        assert_eq!(
            Grain::Month.key(Grain::Month.next(h("2025-12-01"))),
            "2026-01"
        );
        assert_eq!(Grain::Month.count(h("2025-11-01"), h("2026-02-01")), 3);
        assert_eq!(Grain::Year.count(h("2024-01-01"), h("2026-01-01")), 2);
        assert_eq!(Grain::Day.count(h("2024-01-01"), h("2025-01-01")), 366);
    }

    #[test]
    fn hours_and_days_at_boundaries() {
        let last = h("2025-12-31T23");
        assert_eq!(Grain::Hour.key(Grain::Hour.next(last)), "2026-01-01T00");
        assert_eq!(Grain::Day.floor(last), h("2025-12-31"));
        assert_eq!(Grain::Day.ceil(last), h("2026-01-01"));
        assert_eq!(Grain::Day.ceil(h("2026-01-01")), h("2026-01-01"));
        assert_eq!(Grain::Day.shift(h("2026-01-10"), -6), h("2026-01-04"));
        assert_eq!(Grain::Month.shift(h("2026-03-01"), -1), h("2026-02-01"));
    }

    #[test]
    fn time_keys_parse_strictly() {
        assert!(!TimeKey::parse("2026-01-10").unwrap().is_hour);
        assert!(TimeKey::parse("2026-01-10T05").unwrap().is_hour);
        assert_eq!(
            TimeKey::parse("2026-01-10T05:00").unwrap(),
            TimeKey::parse("2026-01-10T05").unwrap()
        );
        assert!(TimeKey::parse("2026-1-10").is_err());
        assert!(TimeKey::parse("2026-02-30").is_err());
        assert!(TimeKey::parse("2026-01-10T24").is_err());
        assert!(TimeKey::parse("2026-01-10T05:30").is_err());
        assert!(TimeKey::parse("yesterday").is_err());
    }
}
