//! What the threads of one search share besides the table: the stop flag and the node and
//! tablebase hit counters of each thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// A worker's counters on a cache line of their own, written only by that worker.
#[repr(align(64))]
#[derive(Default)]
struct NodeCounter {
    nodes: AtomicU64,
    tbhits: AtomicU64,
}

/// What the workers of one search share besides the table.
pub struct Shared {
    stop: AtomicBool,
    nodes: Vec<NodeCounter>,
}

impl Shared {
    pub fn new(threads: usize) -> Shared {
        Shared {
            stop: AtomicBool::new(false),
            nodes: (0..threads.max(1))
                .map(|_| NodeCounter::default())
                .collect(),
        }
    }

    pub fn stop(&self) {
        self.stop.store(true, Relaxed);
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }

    pub fn set_nodes(&self, worker: usize, nodes: u64, tbhits: u64) {
        self.nodes[worker].nodes.store(nodes, Relaxed);
        self.nodes[worker].tbhits.store(tbhits, Relaxed);
    }

    pub fn threads(&self) -> usize {
        self.nodes.len()
    }

    pub fn total_nodes(&self) -> u64 {
        self.nodes.iter().map(|n| n.nodes.load(Relaxed)).sum()
    }

    pub fn total_tbhits(&self) -> u64 {
        self.nodes.iter().map(|n| n.tbhits.load(Relaxed)).sum()
    }
}
