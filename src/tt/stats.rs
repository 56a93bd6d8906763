//! Counters of how the table is used, kept by each search thread in plain integers (no shared
//! atomic traffic) and summed when the search ends.

use std::fmt;

/// What a store did to its bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreOutcome {
    /// Filled an empty entry.
    Empty,
    /// Overwrote the entry of the same key.
    SameKey,
    /// Evicted the entry of a different key.
    Replaced,
    /// Kept the same key's deeper entry from this search (the depth rule).
    Refused,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TtStats {
    pub probes: u64,
    pub hits: u64,
    /// Hits that decided the node on their own (depth and bound sufficed).
    pub cutoffs: u64,
    pub stores: u64,
    pub replaced: u64,
    pub refused: u64,
}

impl TtStats {
    pub fn record_probe(&mut self, hit: bool) {
        self.probes += 1;
        self.hits += u64::from(hit);
    }

    pub fn record_store(&mut self, outcome: StoreOutcome) {
        self.stores += 1;
        self.replaced += u64::from(outcome == StoreOutcome::Replaced);
        self.refused += u64::from(outcome == StoreOutcome::Refused);
    }

    pub fn hit_rate(&self) -> f64 {
        self.hits as f64 / self.probes.max(1) as f64
    }
}

impl std::ops::AddAssign for TtStats {
    fn add_assign(&mut self, other: TtStats) {
        self.probes += other.probes;
        self.hits += other.hits;
        self.cutoffs += other.cutoffs;
        self.stores += other.stores;
        self.replaced += other.replaced;
        self.refused += other.refused;
    }
}

impl fmt::Display for TtStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "probes {} hits {} ({:.1}%) cutoffs {} stores {} replaced {} refused {}",
            self.probes,
            self.hits,
            100.0 * self.hit_rate(),
            self.cutoffs,
            self.stores,
            self.replaced,
            self.refused
        )
    }
}
