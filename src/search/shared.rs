//! What the threads of one search share besides the table: the stop flag and a node counter
//! for each thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// A node counter on a cache line of its own, written only by its worker.
#[repr(align(64))]
#[derive(Default)]
struct NodeCounter(AtomicU64);

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

    pub fn set_nodes(&self, worker: usize, nodes: u64) {
        self.nodes[worker].0.store(nodes, Relaxed);
    }

    pub fn threads(&self) -> usize {
        self.nodes.len()
    }

    pub fn total_nodes(&self) -> u64 {
        self.nodes.iter().map(|n| n.0.load(Relaxed)).sum()
    }
}
