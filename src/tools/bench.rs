//! `ferrite bench`: a fixed-depth search of every position in `bench-positions.epd`, with a
//! fresh 16 MiB table for each and the evaluation the caller chose (the built-in network
//! unless `--eval-file` names another), printing the node count (the engine's fingerprint)
//! and nps in the form OpenBench parses.

use crate::board::Board;
use crate::eval::Evaluation;
use crate::search::Job;
use crate::search::Shared;
use crate::threads;
use crate::tt::Tt;
use shakmaty::CastlingMode;
use std::time::Instant;

pub const DEFAULT_DEPTH: i32 = 13;
const POSITIONS: &str = include_str!("../../bench-positions.epd");

/// The FENs of `bench-positions.epd`.
pub fn positions() -> Vec<String> {
    crate::board::epd_fens(POSITIONS)
        .into_iter()
        .map(|(_, fen)| fen)
        .collect()
}

pub struct BenchResult {
    pub nodes: u64,
    pub seconds: f64,
    pub tt_stats: crate::tt::TtStats,
    /// Mean over positions of the table's fill at the end of each search (permille).
    pub hashfull: usize,
}

/// Why the bench could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Table(#[from] crate::tt::memory::AllocError),
    #[error("bench position {0}")]
    Position(usize, #[source] crate::board::BoardError),
}

/// `ferrite bench`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Search depth in plies.
    #[arg(default_value_t = DEFAULT_DEPTH, value_parser = clap::value_parser!(i32).range(1..=64))]
    depth: i32,
    /// Search threads (the node count is deterministic only with 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: u64,
    /// Also print the transposition table's use (probes, hits, cutoffs, stores).
    #[arg(long)]
    tt_stats: bool,
    /// Evaluate with this network file, or `hce` for the hand-crafted evaluation (default:
    /// the built-in network).
    #[arg(long, value_name = "NET")]
    eval_file: Option<String>,
}

/// `ferrite bench`: the search of every position, then the node count and nps as OpenBench
/// reads them.
pub fn command(args: Args) -> anyhow::Result<()> {
    let evaluation = Evaluation::choose(args.eval_file.as_deref().unwrap_or_default())?;
    let result = run(args.depth, args.threads as usize, evaluation, |line| {
        println!("{line}")
    })?;
    if args.tt_stats {
        println!("TT: {}, mean hashfull {}", result.tt_stats, result.hashfull);
    }
    println!(
        "{} positions, depth {}, {:.2} s",
        positions().len(),
        args.depth,
        result.seconds
    );
    println!("Nodes searched  : {}", result.nodes);
    println!(
        "Nodes/second    : {}",
        (result.nodes as f64 / result.seconds.max(1e-9)) as u64
    );
    Ok(())
}

/// Searches every bench position to `depth` with `threads` threads; `log` receives one line
/// per position.
pub fn run(
    depth: i32,
    threads: usize,
    evaluation: Evaluation,
    mut log: impl FnMut(&str),
) -> Result<BenchResult, BenchError> {
    let mut tt = Tt::new(crate::tt::DEFAULT_MIB).map_err(BenchError::Table)?;
    let mut nodes = 0;
    let mut tt_stats = crate::tt::TtStats::default();
    let mut hashfull = 0;
    let start = Instant::now();
    for (i, fen) in positions().iter().enumerate() {
        let board = Board::from_fen(fen, CastlingMode::Standard)
            .map_err(|e| BenchError::Position(i + 1, e))?;
        tt.clear(1);
        tt.new_search();
        let job = Job::fixed_depth(board, depth, evaluation.clone());
        let shared = Shared::new(threads);
        // Each position starts from nothing, as from a new game, so the count is reproducible.
        let outcome = threads::search(&tt, &job, &shared, &mut Vec::new(), None);
        let result = outcome.best;
        tt_stats += outcome.tt_stats;
        hashfull += tt.hashfull();
        let position_nodes = shared.total_nodes();
        nodes += position_nodes;
        log(&format!(
            "position {:>2}: depth {:>2} score {:>6} nodes {:>9} time_ms {:>7.1}  {fen}",
            i + 1,
            result.depth,
            result.score,
            position_nodes,
            job.plan.elapsed().as_secs_f64() * 1e3
        ));
    }
    Ok(BenchResult {
        nodes,
        seconds: start.elapsed().as_secs_f64(),
        tt_stats,
        hashfull: hashfull / positions().len().max(1),
    })
}
