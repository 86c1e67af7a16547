//! Time: grains, partitions on one hour-based axis, interval sets, and the
//! time mappings on edges.

mod calendar;
mod clock;
mod grain;
mod intervals;
mod key_format;
mod zone;

pub use calendar::{Hour, TimeKey, UNBOUNDED, datetime_of, display, hour_of_date, today};
pub use clock::{parse_cron, parse_duration, parse_window};
pub use grain::{Grain, REACH_ALL, TimeMapping};
pub use intervals::IntervalSet;
pub use key_format::KeyFormat;
pub use zone::{offset_range, zoned_literal};
