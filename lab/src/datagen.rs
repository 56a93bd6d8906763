//! `ferrite-lab datagen`: self-play games for training the network. Each thread plays games
//! with the engine's `selfplay::Player` and appends every finished game to one file in
//! viriformat: a 32-byte packed start position with the game's result, then 4 bytes (move,
//! White's score) a position.
//!
//! A game is written whole, in one write, once it is over, so a killed run loses only the games
//! in flight; `read_games` reports and skips a damaged tail.

use ferrite::eval::Evaluation;
use ferrite::rng::SplitMix64 as Rng;
use ferrite::tools::selfplay::{GameRecord, Player};
use ferrite::BUILD_COMMIT;
use shakmaty::{uci::UciMove, CastlingMode};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use viriformat::chess::board::{Board as ViriBoard, DrawType, GameOutcome, WinType};
use viriformat::dataformat::Game;

/// What `ferrite-lab datagen` was asked for.
#[derive(Clone, Debug)]
pub struct Settings {
    pub output: PathBuf,
    pub threads: usize,
    /// Stop once this many games are written (none: until killed or `positions`).
    pub games: Option<u64>,
    /// Stop once this many positions are written.
    pub positions: Option<u64>,
    /// No new iteration after this many nodes.
    pub soft_nodes: u64,
    /// Stop the search at this many nodes.
    pub hard_nodes: u64,
    pub seed: u64,
    /// Start positions (FENs) to pick from instead of the initial position.
    pub book: Vec<String>,
    /// Random legal plies played from the start (this many or one more).
    pub random_plies: usize,
    /// The evaluation the games are played with.
    pub evaluation: Evaluation,
}

/// Why data generation could not go on.
#[derive(Debug, thiserror::Error)]
pub enum DatagenError {
    /// The output file's name does not carry the seed; the suggestion does.
    #[error(
        "the output file name '{name}' does not carry the seed as '-s{seed}' (for example \
         {suggestion}); give a directory to have the file named"
    )]
    FileName {
        name: String,
        seed: u64,
        suggestion: String,
    },
    #[error(transparent)]
    Table(#[from] ferrite::tt::memory::AllocError),
    #[error("cannot open {}", .0.display())]
    Open(PathBuf, #[source] std::io::Error),
    #[error("cannot write {}", .0.display())]
    Write(PathBuf, #[source] std::io::Error),
    /// A game that viriformat cannot hold (a bug, not bad input).
    #[error("cannot encode a game: {0}")]
    Encode(String),
    #[error("cannot start a game thread")]
    Thread(#[source] std::io::Error),
}

/// A short name for the evaluation `--eval-file` names: `net2` for the built-in network
/// (`nnue::BUILT_IN_NAME`), `hce`, or the network file's stem.
pub fn evaluation_tag(eval_file: Option<&str>) -> String {
    match eval_file.map(str::trim) {
        None | Some("" | "<default>" | "<empty>") => ferrite::eval::nnue::BUILT_IN_NAME.to_string(),
        Some(hce) if hce.eq_ignore_ascii_case("hce") => "hce".to_string(),
        Some(path) => std::path::Path::new(path)
            .file_stem()
            .map(|s| {
                s.to_string_lossy()
                    .replace(|c: char| !c.is_ascii_alphanumeric(), "")
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "net".to_string()),
    }
}

/// Where datagen writes: in a directory, a file named after the evaluation, the build, the
/// nodes a move and the seed (`net2-ec34b77-5000n-s42.vf`); a file named by the caller must
/// carry the seed as `-s<seed>` followed by `-`, `.` or nothing, so that every file says which
/// seed made it and a reused seed shows.
pub fn output_path(
    output: &Path,
    evaluation: &str,
    nodes: u64,
    seed: u64,
) -> Result<PathBuf, DatagenError> {
    let named = format!("{evaluation}-{BUILD_COMMIT}-{nodes}n-s{seed}.vf");
    if output.is_dir() {
        return Ok(output.join(named));
    }
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let token = format!("-s{seed}");
    let carries_seed = name.match_indices(&token).any(|(at, _)| {
        matches!(
            name[at + token.len()..].chars().next(),
            None | Some('-' | '.')
        )
    });
    if carries_seed {
        Ok(output.to_path_buf())
    } else {
        Err(DatagenError::FileName {
            name,
            seed,
            suggestion: named,
        })
    }
}

/// The game in viriformat's bytes.
pub fn encode(game: &GameRecord) -> Result<Vec<u8>, DatagenError> {
    let mut board = ViriBoard::new();
    board
        .set_from_fen(&game.start_fen, false)
        .map_err(|e| DatagenError::Encode(format!("start position {}: {e}", game.start_fen)))?;
    let mut out = Game::new(&board);
    for &(mv, score) in &game.moves {
        let text = UciMove::from_move(mv, CastlingMode::Standard).to_string();
        let viri_move = board
            .parse_uci(&text)
            .map_err(|e| DatagenError::Encode(format!("move {text} in {board}: {e}")))?;
        out.add_move(viri_move, score);
        board.make_move_simple(viri_move);
    }
    out.set_outcome(match game.result {
        2 => GameOutcome::WhiteWin(WinType::Adjudication),
        0 => GameOutcome::BlackWin(WinType::Adjudication),
        _ => GameOutcome::Draw(DrawType::Adjudication),
    });
    let mut bytes = Vec::new();
    out.serialise_into(&mut bytes)
        .map_err(|e| DatagenError::Encode(e.to_string()))?;
    Ok(bytes)
}

/// What reading a data file found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ReadReport {
    pub games: u64,
    pub positions: u64,
    /// Bytes at the end that do not form a whole game (a run killed mid-write).
    pub damaged_tail: Option<String>,
}

/// Calls `visit` with each whole game of a viriformat stream; a damaged tail ends the reading
/// and is reported, not treated as an error.
pub fn read_games(
    mut reader: impl BufRead,
    mut visit: impl FnMut(&Game),
) -> std::io::Result<ReadReport> {
    let mut report = ReadReport::default();
    let mut buffer = Vec::new();
    loop {
        if reader.fill_buf()?.is_empty() {
            return Ok(report);
        }
        match Game::deserialise_from(&mut reader, buffer) {
            Ok(game) => {
                report.games += 1;
                report.positions += game.len() as u64;
                visit(&game);
                buffer = game.into_move_buffer();
            }
            Err(err) => {
                report.damaged_tail = Some(format!("after game {}: {err}", report.games));
                return Ok(report);
            }
        }
    }
}

/// `ferrite-lab datagen`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A directory, where the file is named after the evaluation, build, nodes and seed
    /// (`net2-ec34b77-5000n-s42.vf`), or a file whose name carries the seed as `-s<seed>`.
    /// Appended to, created if missing.
    #[arg(long)]
    output: PathBuf,
    /// Game threads, one search each.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: u64,
    /// Stop after this many games (default: run until killed).
    #[arg(long)]
    games: Option<u64>,
    /// Stop after this many positions.
    #[arg(long)]
    positions: Option<u64>,
    /// Nodes a move: no new iteration after this many.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    nodes: u64,
    /// The search stops at this many nodes (default: 4 x --nodes).
    #[arg(long)]
    hard_nodes: Option<u64>,
    /// Seed of the random openings (default: from the clock, printed at the start). Never
    /// reuse one with a build that searches alike: it replays the same games.
    #[arg(long)]
    seed: Option<u64>,
    /// Start from random positions of this book (EPD, FEN, or PGN: each game's last position)
    /// instead of the initial position.
    #[arg(long)]
    book: Option<PathBuf>,
    /// Random plies played before the game is recorded (this many or one more; default 8,
    /// or 0 with --book).
    #[arg(long)]
    random_plies: Option<usize>,
    /// Play with this network file, or `hce` for the hand-crafted evaluation (default: the
    /// built-in network).
    #[arg(long, value_name = "NET")]
    eval_file: Option<String>,
}

/// `ferrite-lab datagen`: plays until the target is met or the process is killed, with a status
/// line on stderr every ten seconds.
pub fn command(args: Args) -> anyhow::Result<()> {
    let evaluation = Evaluation::choose(args.eval_file.as_deref().unwrap_or_default())?;
    let book = match &args.book {
        Some(path) => ferrite::tools::genfens::read_book(path).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let output = output_path(
        &args.output,
        &evaluation_tag(args.eval_file.as_deref()),
        args.nodes,
        seed,
    )?;
    let settings = Settings {
        output,
        threads: args.threads as usize,
        games: args.games,
        positions: args.positions,
        soft_nodes: args.nodes,
        hard_nodes: args.hard_nodes.unwrap_or(args.nodes.saturating_mul(4)),
        seed,
        random_plies: args
            .random_plies
            .unwrap_or(if book.is_empty() { 8 } else { 0 }),
        book,
        evaluation,
    };
    eprintln!(
        "datagen: seed {seed}, {} thread(s), {} nodes a move (hard {}), appending to {}",
        settings.threads,
        settings.soft_nodes,
        settings.hard_nodes,
        settings.output.display()
    );
    run(&settings, Duration::from_secs(10), |line| {
        eprintln!("{line}")
    })?;
    Ok(())
}

/// Runs the generator until the target is met (or forever without one), appending to
/// `settings.output`; `progress` receives a status line every `every`.
pub fn run(
    settings: &Settings,
    every: Duration,
    mut progress: impl FnMut(&str),
) -> Result<(u64, u64), DatagenError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&settings.output)
        .map_err(|e| DatagenError::Open(settings.output.clone(), e))?;
    let output = Arc::new(Mutex::new(file));
    let games = Arc::new(AtomicU64::new(0));
    let positions = Arc::new(AtomicU64::new(0));
    let rejected = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let failure: Arc<Mutex<Option<DatagenError>>> = Arc::default();
    let target_met = {
        let (games, positions) = (Arc::clone(&games), Arc::clone(&positions));
        let settings = settings.clone();
        move || {
            settings.games.is_some_and(|n| games.load(Relaxed) >= n)
                || settings
                    .positions
                    .is_some_and(|n| positions.load(Relaxed) >= n)
        }
    };
    let mut handles = Vec::new();
    for id in 0..settings.threads.max(1) {
        let (output, games, positions, rejected, done, failure) = (
            Arc::clone(&output),
            Arc::clone(&games),
            Arc::clone(&positions),
            Arc::clone(&rejected),
            Arc::clone(&done),
            Arc::clone(&failure),
        );
        let settings = settings.clone();
        let target_met = target_met.clone();
        let thread = move || {
            let fail = |err: DatagenError| {
                *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(err);
                done.store(true, Relaxed);
            };
            let mut player = match Player::new(
                settings.soft_nodes,
                settings.hard_nodes,
                settings.evaluation.clone(),
            ) {
                Ok(player) => player,
                Err(err) => return fail(DatagenError::Table(err)),
            };
            let mut rng = Rng::new(settings.seed ^ (id as u64).wrapping_mul(0xA076_1D64_78BD_642F));
            while !done.load(Relaxed) && !target_met() {
                let Some(game) = player.play(&mut rng, &settings.book, settings.random_plies)
                else {
                    rejected.fetch_add(1, Relaxed);
                    continue;
                };
                let bytes = match encode(&game) {
                    Ok(bytes) => bytes,
                    Err(err) => return fail(err),
                };
                let mut file = output.lock().unwrap_or_else(|e| e.into_inner());
                if let Err(err) = file.write_all(&bytes).and_then(|()| file.flush()) {
                    return fail(DatagenError::Write(settings.output.clone(), err));
                }
                drop(file);
                games.fetch_add(1, Relaxed);
                positions.fetch_add(game.moves.len() as u64, Relaxed);
            }
        };
        let handle = std::thread::Builder::new()
            .name(format!("datagen-{id}"))
            .stack_size(ferrite::threads::SEARCH_STACK)
            .spawn(thread)
            .map_err(DatagenError::Thread)?;
        handles.push(handle);
    }
    let start = Instant::now();
    let mut last = Instant::now();
    while handles.iter().any(|h| !h.is_finished()) {
        std::thread::sleep(Duration::from_millis(50));
        if last.elapsed() >= every {
            last = Instant::now();
            progress(&status_line(
                settings,
                games.load(Relaxed),
                positions.load(Relaxed),
                rejected.load(Relaxed),
                start.elapsed(),
            ));
        }
    }
    for handle in handles {
        let _ = handle.join();
    }
    if let Some(err) = failure.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(err);
    }
    let (games, positions) = (games.load(Relaxed), positions.load(Relaxed));
    progress(&status_line(
        settings,
        games,
        positions,
        rejected.load(Relaxed),
        start.elapsed(),
    ));
    Ok((games, positions))
}

fn status_line(
    settings: &Settings,
    games: u64,
    positions: u64,
    rejected: u64,
    elapsed: Duration,
) -> String {
    let seconds = elapsed.as_secs_f64().max(1e-3);
    let rate = positions as f64 / seconds;
    let fraction = match (settings.games, settings.positions) {
        (Some(g), _) => Some(games as f64 / g.max(1) as f64),
        (None, Some(p)) => Some(positions as f64 / p.max(1) as f64),
        _ => None,
    };
    let left = match fraction {
        Some(f) if f > 0.0 => format!(", {:.0} s left", seconds * (1.0 - f.min(1.0)) / f),
        Some(_) => ", time left unknown".to_string(),
        None => String::new(),
    };
    format!(
        "games {games}, positions {positions}, {rate:.0} positions/s, {rejected} openings rejected, {seconds:.0} s{left}"
    )
}
