//! `ferrite datagen`: self-play games for training the network. Each thread plays games from a
//! few random plies (or a book position) with a fixed node budget a move and appends every
//! finished game to one file in viriformat: a 32-byte packed start position with the game's
//! result, then 4 bytes (move, White's score) a position.
//!
//! A game is written whole, in one write, once it is over, so a killed run loses only the games
//! in flight; `read_games` reports and skips a damaged tail.

use crate::board::Board;
use crate::eval::Evaluation;
use crate::rng::SplitMix64 as Rng;
use crate::search::history::Memory;
use crate::search::{Job, Shared, Worker};
use crate::time::{Limits, TimePlan};
use crate::tt::Tt;
use shakmaty::{uci::UciMove, CastlingMode, Color, Move, Position};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use viriformat::chess::board::{Board as ViriBoard, DrawType, GameOutcome, WinType};
use viriformat::dataformat::Game;

/// An opening whose first search scores outside this window is not played.
pub const OPENING_WINDOW: i32 = 400;
/// A score of at least this for `WIN_PLIES` plies in a row (White's view, same sign) wins.
const WIN_SCORE: i32 = 2500;
const WIN_PLIES: usize = 4;
/// After `DRAW_AFTER` plies, a score within `DRAW_SCORE` for `DRAW_PLIES` plies draws.
const DRAW_AFTER: usize = 80;
const DRAW_SCORE: i32 = 10;
const DRAW_PLIES: usize = 12;
/// A game still going after this many plies is called a draw.
const MAX_GAME_PLIES: usize = 600;

/// What `ferrite datagen` was asked for.
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
#[derive(Debug)]
pub enum DatagenError {
    /// The output file's name does not carry the seed; the suggestion does.
    FileName {
        name: String,
        seed: u64,
        suggestion: String,
    },
    Table(crate::tt::memory::AllocError),
    Open(PathBuf, std::io::Error),
    Write(PathBuf, std::io::Error),
    /// A game that viriformat cannot hold (a bug, not bad input).
    Encode(String),
    Thread(std::io::Error),
}

impl std::fmt::Display for DatagenError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            DatagenError::FileName {
                name,
                seed,
                suggestion,
            } => write!(
                f,
                "the output file name '{name}' does not carry the seed as '-s{seed}' (for example \
                 {suggestion}); give a directory to have the file named"
            ),
            DatagenError::Table(err) => write!(f, "{err}"),
            DatagenError::Open(path, err) => write!(f, "cannot open {}: {err}", path.display()),
            DatagenError::Write(path, err) => write!(f, "cannot write {}: {err}", path.display()),
            DatagenError::Encode(why) => write!(f, "cannot encode a game: {why}"),
            DatagenError::Thread(err) => write!(f, "cannot start a game thread: {err}"),
        }
    }
}

impl std::error::Error for DatagenError {}

/// The commit this binary was built from (`build.rs`), or "unknown".
pub const BUILD_COMMIT: &str = env!("FERRITE_COMMIT");

/// A short name for the evaluation `--eval-file` names: `net2` for the built-in network
/// (`nnue::BUILT_IN_NAME`), `hce`, or the network file's stem.
pub fn evaluation_tag(eval_file: Option<&str>) -> String {
    match eval_file.map(str::trim) {
        None | Some("" | "<default>" | "<empty>") => crate::eval::nnue::BUILT_IN_NAME.to_string(),
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

/// A finished game: where it started, each position's chosen move with White's score, and
/// the result from White's side (2 win, 1 draw, 0 loss).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    pub start_fen: String,
    pub moves: Vec<(Move, i16)>,
    pub result: u8,
}

/// One game thread's state: its table and search memory, reused from game to game.
pub struct Player {
    tt: Tt,
    memory: Memory,
    soft_nodes: u64,
    hard_nodes: u64,
    evaluation: Evaluation,
}

impl Player {
    pub fn new(
        soft_nodes: u64,
        hard_nodes: u64,
        evaluation: Evaluation,
    ) -> Result<Player, DatagenError> {
        Ok(Player {
            tt: Tt::new(crate::tt::DEFAULT_MIB).map_err(DatagenError::Table)?,
            memory: Memory::default(),
            soft_nodes,
            hard_nodes: hard_nodes.max(soft_nodes),
            evaluation,
        })
    }

    /// Searches `board` with the node budget: the best move and its score for the side to move.
    pub fn search(&mut self, board: &Board) -> Option<(Move, i32)> {
        let limits = Limits {
            nodes: Some(self.hard_nodes),
            soft_nodes: Some(self.soft_nodes),
            ..Limits::default()
        };
        let job = Job {
            plan: TimePlan::new(&limits, board.turn(), 0, Instant::now()),
            board: board.clone(),
            limits,
            search_moves: Vec::new(),
            multipv: 1,
            evaluation: self.evaluation.clone(),
            tablebases: None,
            strength: None,
        };
        let shared = Shared::new(1);
        self.tt.new_search();
        let best = Worker::new(0, &job, &self.tt, &shared, None, &mut self.memory).iterate();
        best.pv.first().map(|&mv| (mv, best.score))
    }

    /// Plays one game from a random opening; `None` if the opening was rejected.
    pub fn play(
        &mut self,
        rng: &mut Rng,
        book: &[String],
        random_plies: usize,
    ) -> Option<GameRecord> {
        let mut board = opening(rng, book, random_plies)?;
        let start_fen =
            shakmaty::fen::Fen::from_position(board.pos(), shakmaty::EnPassantMode::Legal)
                .to_string();
        // A new game, as after `ucinewgame`.
        self.tt.clear(1);
        self.memory = Memory::default();
        let mut moves: Vec<(Move, i16)> = Vec::new();
        let mut win_run = 0;
        let mut draw_run = 0;
        let result = loop {
            if let Some(result) = result_by_rules(&board) {
                break result;
            }
            if moves.len() >= MAX_GAME_PLIES {
                break 1;
            }
            let (mv, score) = self.search(&board)?;
            let white_score = if board.turn() == Color::White {
                score
            } else {
                -score
            };
            if moves.is_empty() && white_score.abs() > OPENING_WINDOW {
                return None;
            }
            moves.push((
                mv,
                white_score.clamp(-i16::MAX as i32, i16::MAX as i32) as i16,
            ));
            // Adjudication: a decisive score held by both sides' searches, or a long dead draw.
            let previous_sign = moves
                .len()
                .checked_sub(2)
                .map_or(0, |i| i32::from(moves[i].1).signum());
            win_run = if white_score.abs() >= WIN_SCORE
                && (win_run == 0 || white_score.signum() == previous_sign)
            {
                win_run + 1
            } else {
                0
            };
            if win_run >= WIN_PLIES {
                break if white_score > 0 { 2 } else { 0 };
            }
            draw_run = if white_score.abs() <= DRAW_SCORE {
                draw_run + 1
            } else {
                0
            };
            if moves.len() >= DRAW_AFTER && draw_run >= DRAW_PLIES {
                break 1;
            }
            board.play(mv);
        };
        Some(GameRecord {
            start_fen,
            moves,
            result,
        })
    }
}

/// The result by the rules, if the game is over: checkmate, stalemate, insufficient material,
/// threefold repetition or the fifty-move rule.
fn result_by_rules(board: &Board) -> Option<u8> {
    let pos = board.pos();
    if pos.legal_moves().is_empty() {
        return Some(match (pos.is_check(), pos.turn()) {
            (false, _) => 1,
            (true, Color::White) => 0,
            (true, Color::Black) => 2,
        });
    }
    let drawn = pos.is_insufficient_material()
        || pos.halfmoves() >= 100
        || board.earlier_occurrences() >= 2;
    drawn.then_some(1)
}

/// A start position: a book line or the initial position, then `plies` or `plies + 1` random
/// legal moves; `None` if the random moves ended the game.
pub fn opening(rng: &mut Rng, book: &[String], plies: usize) -> Option<Board> {
    let mut board = if book.is_empty() {
        Board::default()
    } else {
        Board::from_fen(&book[rng.below(book.len())], CastlingMode::Standard).ok()?
    };
    for _ in 0..plies + rng.below(2) {
        let moves = board.pos().legal_moves();
        if moves.is_empty() {
            return None;
        }
        board.play(moves[rng.below(moves.len())]);
    }
    (!board.pos().legal_moves().is_empty()).then_some(board)
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
                Err(err) => return fail(err),
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
            .stack_size(crate::threads::SEARCH_STACK)
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
