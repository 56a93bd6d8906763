//! The Lazy SMP pool: N workers search the same root in a crossbeam scope and share only the
//! table, the stop flag and their node counters; the best thread is chosen by a vote.

use crate::search::history::History;
use crate::search::{Iteration, Job, Listener, Worker};
use crate::tt::{Tt, TtStats};
use shakmaty::Move;
use std::collections::HashMap;
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

/// Stack for each worker: the search recurses up to MAX_PLY plies with a move list per ply.
const WORKER_STACK: usize = 32 << 20;

/// The result of a search: the chosen thread's line and the table use of all threads.
pub struct Outcome {
    pub best: Iteration,
    pub tt_stats: TtStats,
}

/// Searches `job` with `shared`'s number of threads until a limit or `shared.stop()`; returns
/// the chosen iteration. Only the main thread (0) reports progress. A helper that cannot be
/// started is left out; if none can, the main thread searches on the caller's thread.
/// Worker `i` learns into `histories[i]`, which is grown to one per thread and kept by the
/// caller for the next search of the game.
pub fn search(
    tt: &Tt,
    job: &Job,
    shared: &Shared,
    histories: &mut Vec<History>,
    listener: Option<&dyn Listener>,
) -> Outcome {
    let threads = shared.nodes.len();
    if histories.len() < threads {
        histories.resize_with(threads, History::default);
    }
    let results: Vec<(Iteration, TtStats)> = crossbeam::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (id, history) in histories.iter_mut().take(threads).enumerate() {
            let worker = move |_: &crossbeam::thread::Scope| {
                let listener = if id == 0 { listener } else { None };
                let mut worker = Worker::new(id, job, tt, shared, listener, history);
                let result = worker.iterate();
                // The main thread's end is everyone's end.
                if id == 0 {
                    shared.stop();
                }
                (result, worker.tt_stats())
            };
            let spawned = scope
                .builder()
                .name(format!("search-{id}"))
                .stack_size(WORKER_STACK)
                .spawn(worker);
            match spawned {
                Ok(handle) => handles.push(handle),
                // Without the main thread nobody watches the clock: start no helpers.
                Err(_) => break,
            }
        }
        handles
            .into_iter()
            .filter_map(|h| h.join().ok())
            .collect::<Vec<_>>()
    })
    .unwrap_or_default();
    if results.is_empty() {
        let mut worker = Worker::new(0, job, tt, shared, listener, &mut histories[0]);
        let best = worker.iterate();
        return Outcome {
            best,
            tt_stats: worker.tt_stats(),
        };
    }
    let mut tt_stats = TtStats::default();
    for (_, stats) in &results {
        tt_stats += *stats;
    }
    let iterations: Vec<Iteration> = results.into_iter().map(|(it, _)| it).collect();
    Outcome {
        best: choose_best(&iterations),
        tt_stats,
    }
}

/// Each thread votes for its best move with weight growing with its depth and score; the
/// thread with the most-voted move and the best score for it is chosen.
pub fn choose_best(results: &[Iteration]) -> Iteration {
    let main = &results[0];
    if results.len() == 1 || main.pv.is_empty() {
        return main.clone();
    }
    let min_score = results.iter().map(|r| r.score).min().unwrap_or(0);
    let mut votes: HashMap<Move, i64> = HashMap::new();
    for r in results.iter().filter(|r| !r.pv.is_empty()) {
        *votes.entry(r.pv[0]).or_default() += (r.score - min_score + 10) as i64 * r.depth as i64;
    }
    results
        .iter()
        .filter(|r| !r.pv.is_empty())
        .max_by_key(|r| (votes[&r.pv[0]], r.depth, r.score))
        .unwrap_or(main)
        .clone()
}
