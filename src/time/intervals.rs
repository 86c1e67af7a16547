//! Sets of half-open hour intervals `[from, to)`, kept sorted and coalesced.

use super::{Grain, Hour};

/// A union of disjoint, non-adjacent `[from, to)` intervals, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntervalSet {
    spans: Vec<(Hour, Hour)>,
}

impl IntervalSet {
    /// The empty set.
    pub fn new() -> Self {
        IntervalSet::default()
    }

    /// One interval (empty when `from >= to`).
    pub fn single(from: Hour, to: Hour) -> Self {
        let mut s = IntervalSet::new();
        s.add(from, to);
        s
    }

    /// Whether nothing is in the set.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The intervals, sorted.
    pub fn spans(&self) -> &[(Hour, Hour)] {
        &self.spans
    }

    /// Adds `[from, to)`, merging what overlaps or touches.
    pub fn add(&mut self, from: Hour, to: Hour) {
        if from >= to {
            return;
        }
        let i = self.spans.partition_point(|&(_, b)| b < from);
        let mut j = i;
        let (mut lo, mut hi) = (from, to);
        while j < self.spans.len() && self.spans[j].0 <= hi {
            lo = lo.min(self.spans[j].0);
            hi = hi.max(self.spans[j].1);
            j += 1;
        }
        self.spans.splice(i..j, [(lo, hi)]);
    }

    /// Adds every interval of `other`.
    pub fn union(&mut self, other: &IntervalSet) {
        for &(a, b) in &other.spans {
            self.add(a, b);
        }
    }

    /// The set cut to `[from, to)`.
    pub fn clamp(&self, from: Hour, to: Hour) -> IntervalSet {
        let mut out = IntervalSet::new();
        for &(a, b) in &self.spans {
            out.add(a.max(from), b.min(to));
        }
        out
    }

    /// Every interval widened outward to partition boundaries of `grain`.
    pub fn align(&self, grain: Grain) -> IntervalSet {
        let mut out = IntervalSet::new();
        for &(a, b) in &self.spans {
            out.add(grain.floor(a), grain.ceil(b));
        }
        out
    }

    /// Partitions of `grain` in the (aligned) set.
    pub fn partitions(&self, grain: Grain) -> u64 {
        self.spans.iter().map(|&(a, b)| grain.count(a, b)).sum()
    }

    /// Whether `[from, to)` meets the set.
    pub fn intersects(&self, from: Hour, to: Hour) -> bool {
        let i = self.spans.partition_point(|&(_, b)| b <= from);
        i < self.spans.len() && self.spans[i].0 < to
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_merges_overlaps_and_neighbours() {
        let mut s = IntervalSet::new();
        s.add(10, 20);
        s.add(30, 40);
        s.add(20, 25);
        assert_eq!(s.spans(), [(10, 25), (30, 40)]);
        s.add(5, 35);
        assert_eq!(s.spans(), [(5, 40)]);
        s.add(50, 50);
        assert_eq!(s.spans(), [(5, 40)]);
    }

    #[test]
    fn intersection_test_is_half_open() {
        let s = IntervalSet::single(10, 20);
        assert!(s.intersects(19, 30));
        assert!(!s.intersects(20, 30));
        assert!(!s.intersects(0, 10));
        assert!(s.intersects(0, 11));
    }
}
