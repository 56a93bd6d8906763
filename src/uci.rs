//! The UCI protocol: a thread reads standard input for the life of the process, the main
//! thread parses each line and drives the engine, and searches run on a thread of their own,
//! so `isready`, `stop` and `quit` are answered at once while a search runs.
//! Nothing a GUI sends can panic this module: bad input becomes an `info string`.

use crate::board::Board;
use crate::threads::{self, Shared};
use crate::time::{Limits, TimePlan};
use crate::tt::{Bound, Tt, MATE, MATE_BOUND};
use shakmaty::{uci::UciMove, CastlingMode, Move, Position};
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub const NAME: &str = concat!("Ferrite ", env!("CARGO_PKG_VERSION"));
pub const AUTHOR: &str = "the Ferrite developers";
pub const HASH_DEFAULT: usize = 16;
pub const HASH_MAX: usize = 1 << 20;
pub const THREADS_MAX: usize = 1024;
const OVERHEAD_DEFAULT: u64 = 30;
const OVERHEAD_MAX: u64 = 5000;
const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A running search: its shared state, the GUI's own stop (which ends `go infinite`) and the
/// thread that prints `bestmove`.
struct Running {
    shared: Arc<Shared>,
    gui_stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

pub struct Engine {
    tt: Arc<Tt>,
    board: Board,
    threads: usize,
    move_overhead: u64,
    running: Option<Running>,
}

fn say(line: &str) {
    println!("{line}");
}

fn info_string(message: &str) {
    say(&format!("info string {message}"));
}

/// `score cp N` or `score mate N` (moves, negative when getting mated).
pub fn format_score(score: i32) -> String {
    if score.abs() > MATE_BOUND {
        let plies = MATE - score.abs();
        let moves = (plies + 1) / 2;
        format!("mate {}", if score > 0 { moves } else { -moves })
    } else {
        format!("cp {score}")
    }
}

fn move_text(mv: Move) -> String {
    UciMove::from_move(mv, CastlingMode::Standard).to_string()
}

impl Engine {
    pub fn new() -> Result<Engine, String> {
        Ok(Engine {
            tt: Arc::new(Tt::new(HASH_DEFAULT).map_err(|e| e.to_string())?),
            board: Board::default(),
            threads: 1,
            move_overhead: OVERHEAD_DEFAULT,
            running: None,
        })
    }

    /// Handles one line; returns false when the engine should exit.
    pub fn handle(&mut self, line: &str) -> bool {
        let mut words = line.split_whitespace();
        let Some(command) = words.next() else {
            return true;
        };
        let rest: Vec<&str> = words.collect();
        match command {
            "uci" => self.uci(),
            "isready" => say("readyok"),
            "ucinewgame" => self.clear_hash(),
            "position" => self.position(&rest),
            "go" => self.go(&rest),
            "stop" => self.stop(),
            "quit" => {
                self.stop();
                self.wait();
                return false;
            }
            "setoption" => self.setoption(&rest),
            "debug" | "register" | "ponderhit" => {}
            _ => info_string(&format!("unknown command '{}'", truncate(command))),
        }
        true
    }

    fn uci(&self) {
        say(&format!("id name {NAME}"));
        say(&format!("id author {AUTHOR}"));
        say(&format!(
            "option name Hash type spin default {HASH_DEFAULT} min 1 max {HASH_MAX}"
        ));
        say(&format!(
            "option name Threads type spin default 1 min 1 max {THREADS_MAX}"
        ));
        say("option name Clear Hash type button");
        say(&format!(
            "option name Move Overhead type spin default {OVERHEAD_DEFAULT} min 0 max {OVERHEAD_MAX}"
        ));
        say("uciok");
    }

    /// Waits for a running search to end; the table is then ours alone again.
    fn wait(&mut self) {
        if let Some(running) = self.running.take() {
            // A panic in the search thread was already reported on stderr; carry on.
            let _ = running.handle.join();
        }
    }

    fn stop(&mut self) {
        if let Some(running) = &self.running {
            running.gui_stop.store(true, Relaxed);
            running.shared.stop();
        }
    }

    /// The table for exclusive use: any search is stopped and joined first.
    fn tt_mut(&mut self) -> &mut Tt {
        self.stop();
        self.wait();
        Arc::get_mut(&mut self.tt).expect("no search holds the table after wait()")
    }

    fn clear_hash(&mut self) {
        let threads = self.threads;
        self.tt_mut().clear(threads);
    }

    fn setoption(&mut self, args: &[&str]) {
        // setoption name <name words> [value <value words>]
        let value_at = args.iter().position(|&w| w.eq_ignore_ascii_case("value"));
        let (name_words, value) = match value_at {
            Some(i) => (&args[..i], Some(args[i + 1..].join(" "))),
            None => (args, None),
        };
        if name_words
            .first()
            .is_none_or(|w| !w.eq_ignore_ascii_case("name"))
        {
            info_string("setoption expects 'name <option> [value <value>]'");
            return;
        }
        let name = name_words[1..].join(" ").to_ascii_lowercase();
        let number = |max: u64| -> Option<u64> {
            let text = value.as_deref().unwrap_or("").trim();
            match text.parse::<u64>() {
                Ok(v) if v <= max => Some(v),
                _ => {
                    info_string(&format!(
                        "error: option '{name}' needs a whole number up to {max}, got '{}'",
                        truncate(text)
                    ));
                    None
                }
            }
        };
        match name.as_str() {
            "hash" => {
                if let Some(mib) = number(HASH_MAX as u64).filter(|&v| v >= 1) {
                    if let Err(err) = self.tt_mut().resize(mib as usize) {
                        info_string(&format!(
                            "error: {err}; keeping the {} MiB table",
                            self.tt.mib()
                        ));
                    }
                } else if value.as_deref().map(str::trim) == Some("0") {
                    info_string("error: Hash must be at least 1 MiB");
                }
            }
            "threads" => {
                if let Some(n) = number(THREADS_MAX as u64) {
                    if n == 0 {
                        info_string("error: Threads must be at least 1");
                    } else {
                        self.stop();
                        self.wait();
                        self.threads = n as usize;
                    }
                }
            }
            "move overhead" => {
                if let Some(ms) = number(OVERHEAD_MAX) {
                    self.move_overhead = ms;
                }
            }
            "clear hash" => self.clear_hash(),
            _ => info_string(&format!("unknown option '{}'", truncate(&name))),
        }
    }

    fn position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|&w| w == "moves");
        let (setup, moves) = match moves_at {
            Some(i) => (&args[..i], &args[i + 1..]),
            None => (args, &[][..]),
        };
        let board = match setup.split_first() {
            Some((&"startpos", [])) => Board::from_fen(STARTPOS, CastlingMode::Standard),
            Some((&"fen", fields)) if !fields.is_empty() => {
                Board::from_fen(&fields.join(" "), CastlingMode::Standard)
            }
            _ => Err("position expects 'startpos' or 'fen <FEN>', then 'moves ...'".to_string()),
        };
        let mut board = match board {
            Ok(board) => board,
            Err(err) => {
                info_string(&format!("error: {err}; position unchanged"));
                return;
            }
        };
        for text in moves {
            if let Err(err) = board.play_uci(text) {
                info_string(&format!("error: {err}; position unchanged"));
                return;
            }
        }
        self.board = board;
    }

    fn go(&mut self, args: &[&str]) {
        self.stop();
        self.wait();
        let limits = parse_go(args);
        let search_moves = parse_search_moves(&self.board, args);
        let start = Instant::now();
        if self.board.pos().legal_moves().is_empty() {
            say(&format!(
                "info depth 0 score {} time 0",
                format_score(if self.board.in_check() { -MATE } else { 0 })
            ));
            say("bestmove 0000");
            return;
        }
        let threads = self.threads;
        if let Some(tt) = Arc::get_mut(&mut self.tt) {
            tt.new_search();
        }
        let tt = Arc::clone(&self.tt);
        let board = self.board.clone();
        let shared = Arc::new(Shared::new(threads));
        let gui_stop = Arc::new(AtomicBool::new(false));
        let plan = TimePlan::new(&limits, board.turn(), self.move_overhead, start);
        let (shared_in, gui_stop_in) = (Arc::clone(&shared), Arc::clone(&gui_stop));
        let handle = std::thread::Builder::new()
            .name("search".into())
            .spawn(move || {
                let reporter = |it: &crate::search::Iteration| {
                    report(it, &shared_in, &tt, &plan);
                };
                let result = threads::search(
                    &tt,
                    &board,
                    &limits,
                    &plan,
                    &search_moves,
                    &shared_in,
                    Some(&reporter),
                );
                // `go infinite` (and depth or mate limits reached early under it) must not
                // answer before the GUI says stop.
                while limits.infinite && !gui_stop_in.load(Relaxed) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                let best = result.pv.first().map_or("0000".into(), |&m| move_text(m));
                match result.pv.get(1) {
                    Some(&ponder) => say(&format!("bestmove {best} ponder {}", move_text(ponder))),
                    None => say(&format!("bestmove {best}")),
                }
            });
        match handle {
            Ok(handle) => {
                self.running = Some(Running {
                    shared,
                    gui_stop,
                    handle,
                })
            }
            Err(err) => info_string(&format!("error: cannot start the search thread: {err}")),
        }
    }
}

fn report(it: &crate::search::Iteration, shared: &Shared, tt: &Tt, plan: &TimePlan) {
    let elapsed = plan.elapsed();
    let nodes = shared.total_nodes();
    let nps = (nodes as f64 / elapsed.as_secs_f64().max(1e-3)) as u64;
    let bound = match it.bound {
        Bound::Lower => " lowerbound",
        Bound::Upper => " upperbound",
        _ => "",
    };
    let pv: Vec<String> = it.pv.iter().map(|&m| move_text(m)).collect();
    say(&format!(
        "info depth {} seldepth {} multipv 1 score {}{bound} nodes {nodes} nps {nps} hashfull {} time {} pv {}",
        it.depth,
        it.seldepth,
        format_score(it.score),
        tt.hashfull(),
        elapsed.as_millis(),
        pv.join(" ")
    ));
}

fn truncate(text: &str) -> String {
    text.chars().take(64).collect()
}

/// Reads `go` parameters; values that are missing or not numbers are reported and ignored.
pub fn parse_go(args: &[&str]) -> Limits {
    let mut limits = Limits::default();
    let mut i = 0;
    while i < args.len() {
        let key = args[i];
        let value = args.get(i + 1).copied();
        // Negative clock values (a GUI's clock past zero) count as no time left.
        let ms = || -> Option<u64> {
            let v: i64 = value?.parse().ok()?;
            Some(v.max(0) as u64)
        };
        let count = || -> Option<u64> { value?.parse::<i64>().ok().map(|v| v.max(0) as u64) };
        let consumed = match key {
            "wtime" => ms().map(|v| limits.wtime = Some(v)),
            "btime" => ms().map(|v| limits.btime = Some(v)),
            "winc" => ms().map(|v| limits.winc = Some(v)),
            "binc" => ms().map(|v| limits.binc = Some(v)),
            "movetime" => ms().map(|v| limits.movetime = Some(v)),
            "movestogo" => count().map(|v| limits.movestogo = Some(v.max(1))),
            "nodes" => count().map(|v| limits.nodes = Some(v.max(1))),
            "depth" => count().map(|v| limits.depth = Some(v.clamp(1, 127) as i32)),
            "mate" => count().map(|v| limits.mate = Some(v.clamp(1, 63) as i32)),
            "infinite" => {
                limits.infinite = true;
                i += 1;
                continue;
            }
            "ponder" => {
                limits.ponder = true;
                i += 1;
                continue;
            }
            "searchmoves" => break,
            _ => {
                info_string(&format!(
                    "ignoring unknown go parameter '{}'",
                    truncate(key)
                ));
                i += 1;
                continue;
            }
        };
        if consumed.is_none() {
            info_string(&format!(
                "ignoring go parameter '{key}': '{}' is not a number",
                truncate(value.unwrap_or(""))
            ));
            i += 1;
        } else {
            i += 2;
        }
    }
    limits
}

fn parse_search_moves(board: &Board, args: &[&str]) -> Vec<Move> {
    let Some(at) = args.iter().position(|&w| w == "searchmoves") else {
        return Vec::new();
    };
    args[at + 1..]
        .iter()
        .map_while(|text| {
            text.parse::<UciMove>()
                .ok()
                .and_then(|uci| uci.to_move(board.pos()).ok())
        })
        .collect()
}

/// Runs the UCI loop on standard input until `quit` or end of input.
pub fn run() -> Result<(), String> {
    let mut engine = Engine::new()?;
    let (tx, rx) = crossbeam::channel::unbounded::<String>();
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            let mut input = stdin.lock();
            let mut buffer = Vec::new();
            loop {
                buffer.clear();
                match input.read_until(b'\n', &mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buffer).into_owned();
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        })
        .map_err(|e| format!("cannot start the input thread: {e}"))?;
    for line in rx {
        if !engine.handle(&line) {
            return Ok(());
        }
    }
    // End of input: finish like `quit`.
    engine.stop();
    engine.wait();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_parameters() {
        let limits = parse_go(&[
            "wtime", "1000", "btime", "-5", "winc", "x", "depth", "7", "infinite",
        ]);
        assert_eq!(limits.wtime, Some(1000));
        assert_eq!(limits.btime, Some(0));
        assert_eq!(limits.winc, None);
        assert_eq!(limits.depth, Some(7));
        assert!(limits.infinite);
    }

    #[test]
    fn scores() {
        assert_eq!(format_score(35), "cp 35");
        assert_eq!(format_score(MATE - 1), "mate 1");
        assert_eq!(format_score(MATE - 4), "mate 2");
        assert_eq!(format_score(-MATE + 2), "mate -1");
    }
}
