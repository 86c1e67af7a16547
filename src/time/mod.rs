//! Time: grains and the time mappings on edges. (The interval arithmetic of
//! impact analysis builds on these.)

mod grain;

pub use grain::{Grain, TimeMapping};
