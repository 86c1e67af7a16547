//! A dataset's partitioning grain and an edge's time mapping, as declared.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How a dataset is partitioned in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grain {
    /// Hourly partitions.
    Hour,
    /// Daily partitions.
    Day,
    /// ISO weeks, Monday first.
    Week,
    /// Calendar months.
    Month,
    /// Calendar years.
    Year,
    /// Unpartitioned: rebuilt whole.
    None,
}

impl Grain {
    /// How many `fine` partitions make one partition of this grain, when
    /// that is a fixed number (hour, day, week).
    pub fn ratio(self, fine: Grain) -> Option<i64> {
        let hours = |g: Grain| match g {
            Grain::Hour => Some(1),
            Grain::Day => Some(24),
            Grain::Week => Some(168),
            _ => None,
        };
        if self == fine {
            return Some(1);
        }
        let (x, y) = (hours(self)?, hours(fine)?);
        (x % y == 0).then_some(x / y)
    }

    /// Every grain, finest first.
    pub const ALL: [Grain; 6] = [
        Grain::Hour,
        Grain::Day,
        Grain::Week,
        Grain::Month,
        Grain::Year,
        Grain::None,
    ];

    /// The grain's name as written in `ripple.yml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Grain::Hour => "hour",
            Grain::Day => "day",
            Grain::Week => "week",
            Grain::Month => "month",
            Grain::Year => "year",
            Grain::None => "none",
        }
    }
}

impl fmt::Display for Grain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Grain {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Grain::ALL
            .into_iter()
            .find(|g| g.as_str() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| {
                format!("unknown grain '{s}'; use one of hour, day, week, month, year, none")
            })
    }
}

/// Which upstream time a downstream partition reads (DESIGN.md, Concepts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeMapping {
    /// Partition `p` reads upstream `[p.start, p.end)`.
    Identity,
    /// Partition `p` reads upstream `[p.start + lo·g, p.end + hi·g)`.
    Window(i64, i64),
    /// Every partition reads all of the upstream.
    All,
    /// Changes do not propagate along the edge.
    None,
}

/// A window bound this far reaches all of time that way (a running total,
/// `unbounded preceding`): far past any as-of date, small enough to
/// multiply by hours without overflow.
pub const REACH_ALL: i64 = 1_000_000;

impl fmt::Display for TimeMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bound = |n: i64| match n {
            n if n <= -REACH_ALL => "-∞".to_string(),
            n if n >= REACH_ALL => "∞".to_string(),
            n => n.to_string(),
        };
        match self {
            TimeMapping::Identity => f.write_str("identity"),
            TimeMapping::Window(lo, hi) => write!(f, "window [{}, {}]", bound(*lo), bound(*hi)),
            TimeMapping::All => f.write_str("all"),
            TimeMapping::None => f.write_str("none"),
        }
    }
}
