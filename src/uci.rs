//! The UCI protocol: a thread reads standard input for the life of the process, the main
//! thread parses each line and drives the engine, and searches run on a thread of their own,
//! so `isready`, `stop` and `quit` are answered at once while a search runs.
//! Nothing a GUI sends can panic this module: bad input becomes an `info string`.

use crate::board::Board;
use crate::error::chain;
use crate::eval::nnue::Network;
use crate::eval::Evaluation;
use crate::search::history::Memory;
use crate::search::strength::{ELO_MAX, ELO_MIN};
use crate::search::{Iteration, Job, Listener, Progress, Strength};
use crate::syzygy::{ProbeRules, Syzygy};
use crate::threads::{lock_memories, SearchHandle};
use crate::time::{Limits, TimePlan};
use crate::tt::memory::AllocError;
use crate::tt::Tt;
use crate::types::Bound;
use crate::types::{mate_plies, MATE, MATE_BOUND, PLY_LIMIT};
use crossbeam::channel::{Receiver, Sender};
use shakmaty::{uci::UciMove, CastlingMode, Move, Position};
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub const NAME: &str = concat!("Ferrite ", env!("CARGO_PKG_VERSION"));
pub const AUTHOR: &str = "the Ferrite developers";
pub const HASH_MAX: usize = 1 << 20;
pub const THREADS_MAX: usize = 1024;
pub const MULTIPV_MAX: usize = 256;
pub const HASH_FILE_DEFAULT: &str = "ferrite.hash";
/// The commands `handle` knows; anything else before one of them is skipped.
const COMMANDS: [&str; 12] = [
    "uci",
    "isready",
    "ucinewgame",
    "position",
    "go",
    "stop",
    "ponderhit",
    "debug",
    "register",
    "quit",
    "setoption",
    "eval",
];
/// Whether `word` is a UCI command this engine knows.
pub fn is_command(word: &str) -> bool {
    COMMANDS.contains(&word)
}

const OVERHEAD_DEFAULT: u64 = 30;
const OVERHEAD_MAX: u64 = 5000;
const PROBE_DEPTH_MAX: i32 = 100;
/// A tuning build's `Strength Setting` reaches past the top of the settings scale, where the
/// node budget keeps growing.
#[cfg(feature = "tune")]
const STRENGTH_SETTING_MAX: u32 = crate::search::strength::SETTING_MAX as u32 + 500;
/// The largest Syzygy tables published have seven pieces.
const PROBE_LIMIT_MAX: usize = 7;

pub struct Engine {
    tt: Arc<Tt>,
    board: Board,
    threads: usize,
    move_overhead: u64,
    multipv: usize,
    ponder: bool,
    chess960: bool,
    debug: bool,
    hash_file: String,
    /// Whether `info` lines carry `wdl` (`UCI_ShowWDL`).
    show_wdl: bool,
    /// The evaluation the search uses (`EvalFile`, the built-in network unless changed).
    evaluation: Evaluation,
    /// `UCI_LimitStrength` and `UCI_Elo`: play at that level rather than at full strength.
    limit_strength: bool,
    elo: i32,
    /// A tuning build's `Strength Setting`: the point of the settings scale a limited strength
    /// plays at instead of its level's (0: the level's), which is how the calibration measures
    /// settings. Always 0 in other builds.
    strength_setting: u32,
    /// Fixes a limited strength's evaluation noise and choices for one game; drawn anew by
    /// each `ucinewgame`.
    game_seed: u64,
    /// Endgame tablebases (`SyzygyPath`) and how to probe them.
    syzygy: Option<Arc<Syzygy>>,
    probe_rules: ProbeRules,
    /// What each search thread learned about moves and the evaluation, kept from one move of
    /// a game to the next.
    memories: Arc<Mutex<Vec<Memory>>>,
    running: Option<SearchHandle>,
    /// `setoption` commands received while a search ran, applied in order once it ends.
    pending: Vec<Vec<String>>,
    /// Told by each search when it has sent its `bestmove`, so that pending options are
    /// applied at once rather than at the next command.
    search_done: (Sender<()>, Receiver<()>),
}

/// One line to the GUI, flushed at once. A closed pipe means the GUI has gone; the end of
/// standard input will end the engine, so the error is dropped rather than panicking.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

fn info_string(message: &str) {
    say(&format!("info string {message}"));
}

/// `score cp N` or `score mate N` (moves, negative when getting mated).
pub fn format_score(score: i32) -> String {
    if score.abs() > MATE_BOUND {
        let plies = mate_plies(score);
        let moves = (plies + 1) / 2;
        format!("mate {}", if score > 0 { moves } else { -moves })
    } else {
        format!("cp {score}")
    }
}

fn move_text(mv: Move, mode: CastlingMode) -> String {
    UciMove::from_move(mv, mode).to_string()
}

/// How `info` lines are written: the move notation, and the root's material when they carry
/// `wdl` (`UCI_ShowWDL`).
#[derive(Clone, Copy)]
struct Report {
    mode: CastlingMode,
    wdl_material: Option<i32>,
    /// The tablebases' score of the root, shown instead of any score short of a mate.
    tablebase_score: Option<i32>,
}

/// An `info` line for PV line `multipv` of an iteration.
fn info_line(report: Report, multipv: usize, it: &Iteration, progress: &Progress) -> String {
    let mode = report.mode;
    let nps = (progress.nodes as f64 / progress.elapsed.as_secs_f64().max(1e-3)) as u64;
    let bound = match it.bound {
        Bound::Lower => " lowerbound",
        Bound::Upper => " upperbound",
        _ => "",
    };
    let score = match report.tablebase_score {
        Some(score) if it.score.abs() <= MATE_BOUND => score,
        _ => it.score,
    };
    let wdl = report.wdl_material.map_or(String::new(), |material| {
        let (w, d, l) = crate::wdl::wdl(score, material);
        format!(" wdl {w} {d} {l}")
    });
    let mut line = format!(
        "info depth {} seldepth {} multipv {multipv} score {}{bound}{wdl} nodes {} nps {nps} hashfull {} tbhits {} time {}",
        it.depth,
        it.seldepth,
        format_score(score),
        progress.nodes,
        progress.hashfull,
        progress.tbhits,
        progress.elapsed.as_millis(),
    );
    if !it.pv.is_empty() {
        line.push_str(" pv");
        for &mv in &it.pv {
            line.push(' ');
            line.push_str(&move_text(mv, mode));
        }
    }
    line
}

/// Prints the main thread's progress as `info` lines.
struct UciListener {
    report: Report,
}

impl Listener for UciListener {
    fn iteration(&self, multipv: usize, it: &Iteration, progress: &Progress) {
        say(&info_line(self.report, multipv, it, progress));
    }

    fn current_move(&self, depth: i32, mv: Move, number: usize, progress: &Progress) {
        say(&format!(
            "info depth {depth} currmove {} currmovenumber {number} hashfull {}",
            move_text(mv, self.report.mode),
            progress.hashfull
        ));
    }
}

impl Engine {
    pub fn new() -> Result<Engine, AllocError> {
        Ok(Engine {
            tt: Arc::new(Tt::new(crate::tt::DEFAULT_MIB)?),
            board: Board::default(),
            threads: 1,
            move_overhead: OVERHEAD_DEFAULT,
            multipv: 1,
            ponder: false,
            chess960: false,
            debug: false,
            hash_file: HASH_FILE_DEFAULT.to_string(),
            show_wdl: false,
            evaluation: Evaluation::built_in(),
            limit_strength: false,
            elo: ELO_MIN,
            strength_setting: 0,
            game_seed: fresh_seed(),
            syzygy: None,
            probe_rules: ProbeRules::default(),
            memories: Arc::default(),
            running: None,
            pending: Vec::new(),
            search_done: crossbeam::channel::unbounded(),
        })
    }

    fn mode(&self) -> CastlingMode {
        if self.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        }
    }

    /// Handles one line received at `received`; returns false when the engine should exit.
    /// As the protocol asks, unknown tokens before a command are skipped (`joho isready` is
    /// answered), with a note; a line with no command at all is reported.
    pub fn handle(&mut self, line: &str, received: Instant) -> bool {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(start) = words.iter().position(|w| COMMANDS.contains(w)) else {
            if let Some(first) = words.first() {
                info_string(&format!("unknown command '{}'", truncate(first)));
            }
            return true;
        };
        if start > 0 {
            info_string(&format!(
                "skipped unknown '{}'",
                truncate(&words[..start].join(" "))
            ));
        }
        let (command, rest) = (words[start], words[start + 1..].to_vec());
        self.apply_pending();
        match command {
            "uci" => self.uci(),
            "isready" => say("readyok"),
            "ucinewgame" => self.new_game(),
            "eval" => self.eval(),
            "position" => self.position(&rest),
            "go" => self.go(&rest, received),
            "stop" => self.stop(),
            "ponderhit" => {
                if let Some(running) = &self.running {
                    running.ponderhit();
                }
            }
            "debug" => match rest.first().copied() {
                Some("on") => self.debug = true,
                Some("off") => self.debug = false,
                _ => info_string("debug expects 'on' or 'off'"),
            },
            // Registration is not needed; accept any form silently, as the protocol allows.
            "register" => {}
            "quit" => {
                self.stop();
                self.wait();
                self.apply_pending();
                return false;
            }
            // An option changed under a running search would change it midway (or stop it):
            // it waits for the search to end, in order with any others.
            "setoption" if self.searching() => {
                info_string(&format!(
                    "'{}' waits for the search to end",
                    truncate(&words[start..].join(" "))
                ));
                self.pending
                    .push(rest.iter().map(|w| w.to_string()).collect());
            }
            "setoption" => self.setoption(&rest),
            _ => unreachable!("'{command}' is not in COMMANDS"),
        }
        true
    }

    fn uci(&self) {
        say(&format!("id name {NAME}"));
        say(&format!("id author {AUTHOR}"));
        say(&format!(
            "option name Hash type spin default {} min 1 max {HASH_MAX}",
            crate::tt::DEFAULT_MIB
        ));
        say(&format!(
            "option name Threads type spin default 1 min 1 max {THREADS_MAX}"
        ));
        say("option name Clear Hash type button");
        say(&format!(
            "option name MultiPV type spin default 1 min 1 max {MULTIPV_MAX}"
        ));
        say("option name Ponder type check default false");
        say(&format!(
            "option name Move Overhead type spin default {OVERHEAD_DEFAULT} min 0 max {OVERHEAD_MAX}"
        ));
        say("option name UCI_Chess960 type check default false");
        say(&format!(
            "option name Hash File type string default {HASH_FILE_DEFAULT}"
        ));
        say("option name Save Hash type button");
        say("option name Load Hash type button");
        say("option name EvalFile type string default <default>");
        say("option name UCI_ShowWDL type check default false");
        say("option name SyzygyPath type string default <empty>");
        say(&format!(
            "option name SyzygyProbeDepth type spin default {} min 1 max {PROBE_DEPTH_MAX}",
            ProbeRules::default().depth
        ));
        say(&format!(
            "option name SyzygyProbeLimit type spin default {} min 0 max {PROBE_LIMIT_MAX}",
            ProbeRules::default().limit
        ));
        say("option name Syzygy50MoveRule type check default true");
        say("option name UCI_LimitStrength type check default false");
        say(&format!(
            "option name UCI_Elo type spin default {ELO_MIN} min {ELO_MIN} max {ELO_MAX}"
        ));
        #[cfg(feature = "tune")]
        say(&format!(
            "option name Strength Setting type spin default 0 min 0 max {STRENGTH_SETTING_MAX}"
        ));
        #[cfg(feature = "tune")]
        for p in crate::params::ALL {
            say(&format!(
                "option name {} type spin default {} min {} max {}",
                p.name, p.default, p.min, p.max
            ));
        }
        say("uciok");
    }

    /// Applies the options that arrived during a search, once none runs.
    fn apply_pending(&mut self) {
        if self.pending.is_empty() || self.searching() {
            return;
        }
        for words in std::mem::take(&mut self.pending) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            self.setoption(&words);
        }
    }

    /// Waits for a running search to end; the table is then ours alone again.
    fn wait(&mut self) {
        if let Some(running) = self.running.take() {
            running.wait();
        }
    }

    fn stop(&mut self) {
        if let Some(running) = &self.running {
            running.stop();
        }
    }

    /// The table for exclusive use: any search is stopped and joined first.
    fn tt_mut(&mut self) -> &mut Tt {
        self.stop();
        self.wait();
        Arc::get_mut(&mut self.tt).expect("no search holds the table after wait()")
    }

    /// A new game shares nothing with the last: an empty table, no move histories, and a new
    /// seed for a limited strength's noise and choices.
    fn new_game(&mut self) {
        self.clear_hash();
        lock_memories(&self.memories).clear();
        self.game_seed = fresh_seed();
    }

    fn clear_hash(&mut self) {
        let threads = self.threads;
        self.tt_mut().clear(threads);
    }

    /// Whether a search is running that has not yet sent `bestmove`.
    fn searching(&self) -> bool {
        self.running
            .as_ref()
            .is_some_and(SearchHandle::is_searching)
    }

    fn save_hash(&mut self) {
        let path = std::path::PathBuf::from(&self.hash_file);
        let tt = self.tt_mut();
        let start = Instant::now();
        match tt.save(&path) {
            Ok(bytes) => info_string(&format!(
                "saved {} MiB of hash to {} in {} ms",
                bytes >> 20,
                path.display(),
                start.elapsed().as_millis()
            )),
            Err(err) => info_string(&format!("error: {}; nothing saved", chain(&err))),
        }
    }

    fn load_hash(&mut self) {
        let path = std::path::PathBuf::from(&self.hash_file);
        let tt = self.tt_mut();
        let start = Instant::now();
        match tt.load(&path) {
            Ok(report) => info_string(&format!(
                "loaded {} MiB of hash from {} in {} ms{}, hashfull {}",
                report.mib,
                path.display(),
                start.elapsed().as_millis(),
                if report.resized {
                    " (Hash resized to the file's size)"
                } else {
                    ""
                },
                tt.hashfull()
            )),
            Err(err) => info_string(&format!("error: {}; hash unchanged", chain(&err))),
        }
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
        let text = value.as_deref().unwrap_or("").trim();
        let number = |min: u64, max: u64| -> Option<u64> {
            let parsed = text.parse::<u64>().ok().filter(|v| (min..=max).contains(v));
            if parsed.is_none() {
                info_string(&format!(
                    "error: option '{name}' takes a whole number from {min} to {max}, not '{}'",
                    truncate(text)
                ));
            }
            parsed
        };
        let check = || -> Option<bool> {
            match text.to_ascii_lowercase().as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => {
                    info_string(&format!(
                        "error: option '{name}' takes true or false, not '{}'",
                        truncate(text)
                    ));
                    None
                }
            }
        };
        match name.as_str() {
            "hash" => {
                if let Some(mib) = number(1, HASH_MAX as u64) {
                    if let Err(err) = self.tt_mut().resize(mib as usize) {
                        info_string(&format!(
                            "error: {}; keeping the {} MiB table",
                            chain(&err),
                            self.tt.mib()
                        ));
                    }
                }
            }
            "threads" => {
                if let Some(n) = number(1, THREADS_MAX as u64) {
                    self.stop();
                    self.wait();
                    self.threads = n as usize;
                    lock_memories(&self.memories).truncate(self.threads);
                }
            }
            "multipv" => {
                if let Some(n) = number(1, MULTIPV_MAX as u64) {
                    self.multipv = n as usize;
                }
            }
            "move overhead" => {
                if let Some(ms) = number(0, OVERHEAD_MAX) {
                    self.move_overhead = ms;
                }
            }
            "ponder" => {
                if let Some(on) = check() {
                    self.ponder = on;
                }
            }
            "uci_showwdl" => {
                if let Some(on) = check() {
                    self.show_wdl = on;
                }
            }
            "uci_chess960" => {
                if let Some(on) = check() {
                    self.chess960 = on;
                }
            }
            "clear hash" => self.clear_hash(),
            "hash file" => {
                if text.is_empty() {
                    info_string("error: Hash File needs a path");
                } else {
                    self.hash_file = text.to_string();
                }
            }
            "evalfile" => self.set_eval_file(text),
            "syzygypath" => self.set_syzygy_path(text),
            "syzygyprobedepth" => {
                if let Some(depth) = number(1, PROBE_DEPTH_MAX as u64) {
                    self.probe_rules.depth = depth as i32;
                }
            }
            "syzygyprobelimit" => {
                if let Some(limit) = number(0, PROBE_LIMIT_MAX as u64) {
                    self.probe_rules.limit = limit as usize;
                }
            }
            "syzygy50moverule" => {
                if let Some(on) = check() {
                    self.probe_rules.rule50 = on;
                }
            }
            "uci_limitstrength" => {
                if let Some(on) = check() {
                    self.set_strength(on, self.elo);
                }
            }
            "uci_elo" => {
                if let Some(elo) = number(ELO_MIN as u64, ELO_MAX as u64) {
                    self.set_strength(self.limit_strength, elo as i32);
                }
            }
            #[cfg(feature = "tune")]
            "strength setting" => {
                if let Some(setting) = number(0, u64::from(STRENGTH_SETTING_MAX)) {
                    self.strength_setting = setting as u32;
                    self.new_game();
                }
            }
            "save hash" => self.save_hash(),
            "load hash" => self.load_hash(),
            _ => search_parameter(&name, text),
        }
    }

    /// `UCI_LimitStrength` and `UCI_Elo`. A limited strength puts noise on the evaluations
    /// the table keeps, so a change of what the search plays like starts as a new game does.
    fn set_strength(&mut self, on: bool, elo: i32) {
        let before = self.limit_strength.then_some(self.elo);
        (self.limit_strength, self.elo) = (on, elo);
        if before != self.limit_strength.then_some(self.elo) {
            self.new_game();
        }
    }

    /// `EvalFile`: a network file to evaluate with, `<default>` (or empty) for the built-in
    /// network, or `hce` for the hand-crafted evaluation. A file that cannot be read as a
    /// network is reported and the current evaluation stays. A search already running keeps
    /// the evaluation it began with. A new evaluation starts as a new game does: the table's
    /// entries keep the static evaluations and the correction histories the errors of the one
    /// before.
    fn set_eval_file(&mut self, text: &str) {
        match Evaluation::choose(text) {
            Ok(evaluation) => {
                info_string(&match &evaluation {
                    Evaluation::HandCrafted => "evaluation: hand-crafted".to_string(),
                    Evaluation::Network(net) => format!(
                        "evaluation: {} ({}, {} kernels)",
                        if Arc::ptr_eq(net, &Network::built_in()) {
                            "built-in network".to_string()
                        } else {
                            format!("network {}", truncate(text))
                        },
                        net.describe(),
                        crate::eval::nnue::Kernels::detect().name()
                    ),
                });
                self.evaluation = evaluation;
                self.new_game();
            }
            Err(err) => info_string(&format!("error: {}; evaluation unchanged", chain(&err))),
        }
    }

    /// `SyzygyPath`: directories of tables, or empty (`<empty>`) for none. Each directory and
    /// file that cannot be used is reported; if nothing of a new path can be used, the tables
    /// loaded before stay.
    fn set_syzygy_path(&mut self, text: &str) {
        if text.is_empty() || text == "<empty>" {
            self.syzygy = None;
            info_string("tablebases: none");
            return;
        }
        let loaded = Syzygy::open(text, info_string);
        for message in &loaded.messages {
            info_string(message);
        }
        match loaded.syzygy {
            Some(tables) => self.syzygy = Some(Arc::new(tables)),
            None if self.syzygy.is_some() => {
                info_string("error: no tables found there; keeping the tables loaded before")
            }
            None => info_string("error: no tables found there; searching without tablebases"),
        }
    }

    /// `eval` (not part of UCI; engine developers expect it): the static evaluation of the
    /// current position from the side to move, hand-crafted and, unless `EvalFile` is `hce`,
    /// the network's.
    fn eval(&self) {
        let pos = self.board.pos();
        let mut line = format!(
            "static evaluation from the side to move: hand-crafted {} cp",
            crate::eval::hce::evaluate(pos)
        );
        if let Some(net) = self.evaluation.network() {
            line.push_str(&format!(", network {} cp", net.evaluate(pos)));
        }
        info_string(&line);
    }

    fn position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|&w| w == "moves");
        let (setup, moves) = match moves_at {
            Some(i) => (&args[..i], &args[i + 1..]),
            None => (args, &[][..]),
        };
        let board = match setup.split_first() {
            Some((&"startpos", [])) => Ok(Board::default()),
            Some((&"fen", fields)) if !fields.is_empty() => {
                let fen = fields.join(" ");
                // A Chess960 FEN is read as one even when the GUI did not say so.
                Board::from_fen(&fen, self.mode())
                    .or_else(|err| Board::from_fen(&fen, CastlingMode::Chess960).map_err(|_| err))
                    .map_err(|err| err.to_string())
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

    fn go(&mut self, args: &[&str], received: Instant) {
        self.stop();
        self.wait();
        let limits = parse_go(args);
        let search_moves = parse_search_moves(&self.board, args);
        if self.board.pos().legal_moves().is_empty() {
            say(&format!(
                "info depth 0 score {} time 0",
                format_score(if self.board.in_check() { -MATE } else { 0 })
            ));
            say("bestmove 0000");
            return;
        }
        self.tt_mut().new_search();
        let mut plan = TimePlan::new(&limits, self.board.turn(), self.move_overhead, received);
        if self.ponder {
            plan.expect_pondering();
        }
        let mut job = Job {
            plan,
            board: self.board.clone(),
            limits,
            search_moves,
            multipv: self.multipv,
            evaluation: self.evaluation.clone(),
            tablebases: None,
            strength: None,
        };
        if let Some(tables) = &self.syzygy {
            job.use_tablebases(Arc::clone(tables), self.probe_rules);
        }
        // A limited strength is one thread's node budget and choice.
        let mut threads = self.threads;
        if self.limit_strength {
            let strength = Strength::new(self.elo, self.game_seed);
            job.limit_strength(match self.strength_setting {
                0 => strength,
                setting => strength.at_setting(f64::from(setting)),
            });
            threads = 1;
        }
        let (mode, debug) = (self.mode(), self.debug);
        let report = Report {
            mode,
            wdl_material: self
                .show_wdl
                .then(|| crate::wdl::material(self.board.pos())),
            tablebase_score: job
                .tablebases
                .as_ref()
                .and_then(|p| p.root.as_ref())
                .map(|r| r.score),
        };
        let done = self.search_done.0.clone();
        let finish = move |outcome: &crate::threads::Outcome, progress: &Progress| {
            let result = &outcome.best;
            // The chosen thread's line, so the last info agrees with bestmove.
            if result.depth > 0 {
                say(&info_line(report, 1, result, progress));
            }
            if debug {
                info_string(&format!(
                    "searched {} nodes with {threads} thread(s) in {} ms; tt {} hashfull {}",
                    progress.nodes,
                    progress.elapsed.as_millis(),
                    outcome.tt_stats,
                    progress.hashfull
                ));
            }
            let best = result
                .pv
                .first()
                .map_or("0000".into(), |&m| move_text(m, mode));
            match result.pv.get(1) {
                Some(&ponder) => say(&format!(
                    "bestmove {best} ponder {}",
                    move_text(ponder, mode)
                )),
                None => say(&format!("bestmove {best}")),
            }
            // The engine may be gone (quit); nothing then waits for this.
            let _ = done.send(());
        };
        let started = SearchHandle::start(
            Arc::clone(&self.tt),
            job,
            threads,
            Arc::clone(&self.memories),
            UciListener { report },
            finish,
        );
        match started {
            Ok(handle) => self.running = Some(handle),
            Err(err) => info_string(&format!("error: cannot start the search thread: {err}")),
        }
    }
}

/// A seed no earlier game of this process had, from the clock.
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.as_nanos() as u64);
    crate::rng::mix(nanos ^ 0x5eed)
}

/// A search parameter, which a tuning build (`--features tune`) offers as an option; any other
/// name is an unknown option.
fn search_parameter(name: &str, text: &str) {
    #[cfg(feature = "tune")]
    if crate::params::ALL.iter().any(|p| p.name == name) {
        let set = text
            .parse::<i32>()
            .map_err(|_| {
                format!(
                    "option '{name}' takes a whole number, not '{}'",
                    truncate(text)
                )
            })
            .and_then(|value| crate::params::set(name, value).map_err(|e| e.to_string()));
        if let Err(err) = set {
            info_string(&format!("error: {err}"));
        }
        return;
    }
    let _ = text;
    info_string(&format!("unknown option '{}'", truncate(name)));
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
            "depth" => count().map(|v| limits.depth = Some(v.clamp(1, PLY_LIMIT as u64) as i32)),
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

/// Why the UCI loop could not start.
#[derive(Debug, thiserror::Error)]
pub enum UciError {
    #[error(transparent)]
    Table(#[from] AllocError),
    #[error("cannot start the input thread")]
    InputThread(#[source] std::io::Error),
}

/// Speaks UCI on stdin and stdout until `quit` or the end of input.
pub fn run() -> Result<(), UciError> {
    let mut engine = Engine::new().map_err(UciError::Table)?;
    let (tx, rx) = crossbeam::channel::unbounded::<(Instant, String)>();
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
                        // Stamped on arrival: time spent queued counts against the clock.
                        let line = String::from_utf8_lossy(&buffer).into_owned();
                        if tx.send((Instant::now(), line)).is_err() {
                            break;
                        }
                    }
                }
            }
        })
        .map_err(UciError::InputThread)?;
    let search_done = engine.search_done.1.clone();
    loop {
        crossbeam::channel::select! {
            recv(rx) -> message => {
                let Ok((received, line)) = message else { break };
                if !engine.handle(&line, received) {
                    return Ok(());
                }
            }
            recv(search_done) -> _ => engine.apply_pending(),
        }
    }
    finish(&mut engine);
    Ok(())
}

/// Runs `lines` as UCI commands, one a line, instead of reading stdin (which is never read):
/// the command line's way in. `extension` sees each line first and answers the commands that
/// are not UCI's, returning true when it did. Ends at `quit` or after the last line.
pub fn run_commands<E: From<UciError>>(
    lines: &[String],
    mut extension: impl FnMut(&str) -> Result<bool, E>,
) -> Result<(), E> {
    let mut engine = Engine::new().map_err(UciError::Table)?;
    for line in lines {
        if extension(line)? {
            continue;
        }
        if !engine.handle(line, Instant::now()) {
            return Ok(());
        }
    }
    finish(&mut engine);
    Ok(())
}

/// The end of input (a script piped its commands): a search with a limit of its own (depth,
/// nodes, movetime, a clock) finishes and prints its move; one that only `stop` would end
/// (infinite, pondering) stops now.
fn finish(engine: &mut Engine) {
    if engine
        .running
        .as_ref()
        .is_some_and(SearchHandle::is_open_ended)
    {
        engine.stop();
    }
    engine.wait();
    engine.apply_pending();
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
