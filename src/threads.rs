//! The Lazy SMP pool and a search's lifecycle. N workers search the same root in a
//! `std::thread::scope` (the one way threads are scoped here) and share only the table, the
//! stop flag and their node counters; the best thread is chosen by a vote. `SearchHandle` runs
//! such a search on a thread of its own, so the caller (the UCI loop) stays free to answer
//! `isready`, `stop` and `ponderhit`.

use crate::search::history::Memory;
use crate::search::{Iteration, Job, Listener, Progress, Shared, Worker};
use crate::tt::{Tt, TtStats};
use shakmaty::Move;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Stack for each worker: the search recurses up to MAX_PLY plies with a move list per ply.
/// Stack of every thread that runs a search: the recursion goes up to MAX_PLY plies deep.
pub const SEARCH_STACK: usize = 32 << 20;

/// The result of a search: the chosen thread's line and the table use of all threads.
pub struct Outcome {
    pub best: Iteration,
    pub tt_stats: TtStats,
}

/// Searches `job` with `shared`'s number of threads until a limit or `shared.stop()`; returns
/// the chosen iteration. Only the main thread (0) reports progress, and its end (a limit, or
/// a panic) stops the helpers. A helper that cannot be started is left out; if none can, the
/// main thread searches on the caller's thread. Worker `i` learns into `memories[i]`, which
/// is grown to one per thread and kept by the caller for the next search of the game.
pub fn search(
    tt: &Tt,
    job: &Job,
    shared: &Shared,
    memories: &mut Vec<Memory>,
    listener: Option<&dyn Listener>,
) -> Outcome {
    let threads = shared.threads();
    if memories.len() < threads {
        memories.resize_with(threads, Memory::default);
    }
    // Indexed by thread: `None` for a thread that did not start or panicked.
    let results: Vec<Option<(Iteration, TtStats)>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (id, memory) in memories.iter_mut().take(threads).enumerate() {
            let worker = move || {
                let _main_ends_all = (id == 0).then(|| StopOnDrop(shared));
                let listener = if id == 0 { listener } else { None };
                let mut worker = Worker::new(id, job, tt, shared, listener, memory);
                let result = worker.iterate();
                (result, worker.tt_stats())
            };
            let spawned = std::thread::Builder::new()
                .name(format!("search-{id}"))
                .stack_size(SEARCH_STACK)
                .spawn_scoped(scope, worker);
            match spawned {
                Ok(handle) => handles.push(handle),
                // Without the main thread nobody watches the clock: start no helpers.
                Err(_) => break,
            }
        }
        // Every thread is joined here, so a panicking one is a `None`, not a panic of the
        // scope.
        handles.into_iter().map(|h| h.join().ok()).collect()
    });
    if results.is_empty() {
        let mut worker = Worker::new(0, job, tt, shared, listener, &mut memories[0]);
        let best = worker.iterate();
        return Outcome {
            best,
            tt_stats: worker.tt_stats(),
        };
    }
    let mut tt_stats = TtStats::default();
    for (_, stats) in results.iter().flatten() {
        tt_stats += *stats;
    }
    let main = results[0].as_ref().map(|(it, _)| it.clone());
    let helpers: Vec<Iteration> = results
        .into_iter()
        .skip(1)
        .flatten()
        .map(|(it, _)| it)
        .collect();
    let best = match main {
        Some(main) => choose_best(&main, &helpers),
        // The main thread panicked (reported on stderr): the helpers' vote decides alone.
        None => match helpers.split_first() {
            Some((first, rest)) => choose_best(first, rest),
            None => Iteration::first_legal(&job.board),
        },
    };
    Outcome { best, tt_stats }
}

/// Stops every thread of a search when the main thread's search ends, however it ends.
struct StopOnDrop<'a>(&'a Shared);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Each thread votes for its best move with weight growing with its depth and score; the
/// thread with the most-voted move and the best score for it is chosen. `main` alone decides
/// when no helper has a line or it has none itself.
pub fn choose_best(main: &Iteration, helpers: &[Iteration]) -> Iteration {
    if helpers.is_empty() || main.pv.is_empty() {
        return main.clone();
    }
    let all = || {
        std::iter::once(main)
            .chain(helpers)
            .filter(|r| !r.pv.is_empty())
    };
    let min_score = all().map(|r| r.score).min().unwrap_or(0);
    let mut votes: HashMap<Move, i64> = HashMap::new();
    for r in all() {
        *votes.entry(r.pv[0]).or_default() += (r.score - min_score + 10) as i64 * r.depth as i64;
    }
    all()
        .max_by_key(|r| (votes[&r.pv[0]], r.depth, r.score))
        .unwrap_or(main)
        .clone()
}

/// Where a search started by `SearchHandle` is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Searching, or holding a finished result for the GUI's `stop` or `ponderhit` (under
    /// `go infinite`, or while pondering).
    Running,
    /// `stop` arrived; the result is on its way.
    Stopping,
    /// Over: the result is being reported or has been. Whatever the caller does next joins
    /// the thread first, so it comes after the report.
    Done,
}

struct Control {
    job: Job,
    shared: Shared,
    phase: Mutex<Phase>,
    changed: Condvar,
}

impl Control {
    fn phase(&self) -> MutexGuard<'_, Phase> {
        // Nothing that holds this lock can panic; a poisoned lock still holds a valid phase.
        self.phase.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_phase(&self, phase: Phase) {
        *self.phase() = phase;
        self.changed.notify_all();
    }
}

/// The search thread's end, however it ends (a panic included), makes the search `Done`.
struct DoneOnDrop(Arc<Control>);

impl Drop for DoneOnDrop {
    fn drop(&mut self) {
        self.0.set_phase(Phase::Done);
    }
}

/// A search running on a thread of its own: `start`, then `stop`, `ponderhit` and `wait`.
pub struct SearchHandle {
    control: Arc<Control>,
    thread: JoinHandle<()>,
}

impl SearchHandle {
    /// Starts searching `job` with `threads` threads. `listener` hears the main thread's
    /// progress; `finish` receives the result once the search is over (and, under `go
    /// infinite` or pondering, once the GUI has said `stop` or `ponderhit`).
    pub fn start<L, F>(
        tt: Arc<Tt>,
        job: Job,
        threads: usize,
        memories: Arc<Mutex<Vec<Memory>>>,
        listener: L,
        finish: F,
    ) -> std::io::Result<SearchHandle>
    where
        L: Listener + Send + 'static,
        F: FnOnce(&Outcome, &Progress) + Send + 'static,
    {
        let control = Arc::new(Control {
            job,
            shared: Shared::new(threads),
            phase: Mutex::new(Phase::Running),
            changed: Condvar::new(),
        });
        let inner = Arc::clone(&control);
        let thread = std::thread::Builder::new()
            .name("search".into())
            .stack_size(SEARCH_STACK)
            .spawn(move || {
                let control = DoneOnDrop(inner);
                let Control { job, shared, .. } = &*control.0;
                let outcome = search(
                    &tt,
                    job,
                    shared,
                    &mut lock_memories(&memories),
                    Some(&listener),
                );
                let mut phase = control.0.phase();
                while *phase == Phase::Running && (job.limits.infinite || job.plan.is_pondering()) {
                    phase = control
                        .0
                        .changed
                        .wait(phase)
                        .unwrap_or_else(|e| e.into_inner());
                }
                *phase = Phase::Done;
                drop(phase);
                finish(&outcome, &Progress::of(&tt, job, shared));
            })?;
        Ok(SearchHandle { control, thread })
    }

    /// Ends the search at once; its result is still reported.
    pub fn stop(&self) {
        self.control.shared.stop();
        let mut phase = self.control.phase();
        if *phase == Phase::Running {
            *phase = Phase::Stopping;
        }
        self.control.changed.notify_all();
    }

    /// The opponent played the expected move: the clock starts, and a result held for it is
    /// released.
    pub fn ponderhit(&self) {
        // Under the lock, so the search thread cannot miss the change between its test and
        // its wait.
        let _phase = self.control.phase();
        self.control.job.plan.ponderhit();
        self.control.changed.notify_all();
    }

    /// Whether only `stop` (or `ponderhit`) can end the search: `go infinite` or pondering.
    pub fn is_open_ended(&self) -> bool {
        self.control.job.limits.infinite || self.control.job.plan.is_pondering()
    }

    /// Whether the search is still running or holding its result for the GUI.
    pub fn is_searching(&self) -> bool {
        *self.control.phase() != Phase::Done
    }

    /// Waits for the search thread to end (without stopping it).
    pub fn wait(self) {
        // A panic in the search thread was already reported on stderr; carry on.
        let _ = self.thread.join();
    }
}

pub fn lock_memories(memories: &Mutex<Vec<Memory>>) -> MutexGuard<'_, Vec<Memory>> {
    // A search thread that panicked leaves memories that are still valid numbers.
    memories.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Bound;
    use shakmaty::{Chess, Position};

    fn line(depth: i32, score: i32, first: Move) -> Iteration {
        Iteration {
            depth,
            seldepth: depth as usize,
            score,
            bound: Bound::Exact,
            pv: vec![first],
        }
    }

    #[test]
    fn the_vote_follows_depth_and_score() {
        let moves = Chess::default().legal_moves();
        let (a, b) = (moves[0], moves[1]);
        let main = line(10, 20, a);
        assert_eq!(choose_best(&main, &[]), main);
        // Two helpers agree on b, deeper and better: b wins, with the deepest line for it.
        let helpers = [line(12, 40, b), line(11, 35, b)];
        assert_eq!(choose_best(&main, &helpers), helpers[0]);
        // A lone shallow helper cannot outvote the main thread.
        assert_eq!(choose_best(&main, &[line(4, 25, b)]), main);
    }
}
