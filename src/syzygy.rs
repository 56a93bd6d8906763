//! Syzygy endgame tablebases, read through the `shakmaty-syzygy` crate: loading the tables of
//! `SyzygyPath`, the WDL probes of the search, and the ranking of root moves by DTZ (or by WDL
//! where a DTZ table is missing) so that a won ending is converted inside the fifty-move rule
//! and a drawn one is held.
//!
//! A table that cannot be used (missing, damaged) is reported once through the reporter given
//! at loading, and the positions that need it are searched as if there were no tables.

use crate::board::Board;
use crate::types::TB_WIN;
use shakmaty::{Chess, Color, Move, Position, Role};
use shakmaty_syzygy::{Dtz, Metric, SyzygyError, Tablebase, Wdl};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

/// The separator of directories in `SyzygyPath`, as other engines and GUIs use it.
pub const PATH_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

/// The tablebase UCI options that shape probing.
#[derive(Clone, Copy, Debug)]
pub struct ProbeRules {
    /// Positions with exactly the largest piece count in the tables are probed only at this
    /// remaining depth or deeper (`SyzygyProbeDepth`).
    pub depth: i32,
    /// Positions with more pieces than this are not probed (`SyzygyProbeLimit`).
    pub limit: usize,
    /// Whether a win or loss beyond the fifty-move rule counts as a draw (`Syzygy50MoveRule`).
    pub rule50: bool,
}

impl Default for ProbeRules {
    fn default() -> ProbeRules {
        ProbeRules {
            depth: 1,
            limit: 7,
            rule50: true,
        }
    }
}

/// The loaded tables.
pub struct Syzygy {
    tables: Tablebase<Chess>,
    /// Signatures (see `signature`) of tables that are missing or failed: not probed again.
    failed: Mutex<HashSet<u64>>,
    /// Says, once per table, why a probe failed (the UCI front end prints an `info string`).
    reporter: fn(&str),
}

/// The result of opening `SyzygyPath`: the tables (if any could be used) and what to tell the
/// user about each directory and file.
pub struct Loaded {
    pub syzygy: Option<Syzygy>,
    pub messages: Vec<String>,
}

/// What a search is given of the tables: the tables, the rules, and the root's ranking where
/// the root is in them.
#[derive(Clone)]
pub struct Probing {
    pub tables: std::sync::Arc<Syzygy>,
    pub rules: ProbeRules,
    pub root: Option<RootRanking>,
}

impl Probing {
    /// The most pieces a position searched may have to be probed: none when the root was
    /// ranked by DTZ, since every root move then already keeps the best outcome.
    pub fn cardinality(&self) -> usize {
        if self.root.as_ref().is_some_and(|r| r.by_dtz) {
            0
        } else {
            self.tables.max_pieces().min(self.rules.limit)
        }
    }
}

/// The root moves that keep the tablebase outcome, and what to show for it.
#[derive(Clone, Debug)]
pub struct RootRanking {
    /// The moves of the best rank; the search chooses among them.
    pub moves: Vec<Move>,
    /// The score the outcome is shown with while the search finds no mate.
    pub score: i32,
    /// Whether the ranking used DTZ (then the search needs no probes of its own).
    pub by_dtz: bool,
    /// Probes made to rank the moves.
    pub probes: u64,
}

/// A number that identifies the material of a position whichever side holds which half
/// (KRPvKN and KNvKRP are one table), and the kind of table (WDL or DTZ).
fn signature(pos: &Chess, metric: Metric) -> u64 {
    let board = pos.board();
    let side = |color: Color| {
        Role::ALL.iter().fold(0u64, |acc, &role| {
            let count = (board.by_color(color) & board.by_role(role)).count() as u64;
            (acc << 4) | count.min(15)
        })
    };
    let (white, black) = (side(Color::White), side(Color::Black));
    let material = (white.max(black) << 24) | white.min(black);
    (material << 1) | u64::from(metric == Metric::Dtz)
}

impl Syzygy {
    /// Opens every directory of `paths` (separated by `PATH_SEPARATOR`). Unreadable
    /// directories and files that cannot be tables are reported and skipped.
    pub fn open(paths: &str, reporter: fn(&str)) -> Loaded {
        let mut tables = Tablebase::<Chess>::new();
        let mut messages = Vec::new();
        let (mut wdl, mut dtz) = (0, 0);
        let mut directories = Vec::new();
        for dir in paths.split(PATH_SEPARATOR).map(str::trim) {
            if dir.is_empty() {
                continue;
            }
            let entries = match std::fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(err) => {
                    messages.push(format!(
                        "error: tablebase directory '{dir}' cannot be read ({err}); skipped"
                    ));
                    continue;
                }
            };
            let mut found = 0;
            for entry in entries.flatten() {
                let path = entry.path();
                let kind = path.extension().and_then(|e| e.to_str());
                if !matches!(kind, Some("rtbw" | "rtbz")) {
                    continue;
                }
                match tables.add_file(&path) {
                    Ok(()) => {
                        found += 1;
                        if kind == Some("rtbw") {
                            wdl += 1;
                        } else {
                            dtz += 1;
                        }
                    }
                    Err(err) => messages.push(format!(
                        "error: tablebase file '{}' cannot be used ({err}); skipped",
                        path.display()
                    )),
                }
            }
            if found == 0 {
                messages.push(format!("error: no tablebase files in '{dir}'"));
            } else {
                directories.push(dir);
            }
        }
        if wdl + dtz == 0 {
            return Loaded {
                syzygy: None,
                messages,
            };
        }
        messages.push(format!(
            "tablebases: {wdl} WDL and {dtz} DTZ tables, up to {} pieces, from {}",
            tables.max_pieces(),
            directories.join(&PATH_SEPARATOR.to_string())
        ));
        Loaded {
            syzygy: Some(Syzygy {
                tables,
                failed: Mutex::new(HashSet::new()),
                reporter,
            }),
            messages,
        }
    }

    /// The most pieces of any table.
    pub fn max_pieces(&self) -> usize {
        self.tables.max_pieces()
    }

    /// Whether `pos` is one the tables may hold under `rules`: few enough pieces and no
    /// castling rights (which the tables leave out).
    pub fn covers(&self, pos: &Chess, rules: &ProbeRules) -> bool {
        pos.board().occupied().count() <= self.max_pieces().min(rules.limit)
            && pos.castles().is_empty()
    }

    /// Whether a `metric` probe of `pos` failed before (a DTZ probe needs the WDL table too).
    fn has_failed(&self, pos: &Chess, metric: Metric) -> bool {
        let failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        failed.contains(&signature(pos, Metric::Wdl))
            || (metric == Metric::Dtz && failed.contains(&signature(pos, Metric::Dtz)))
    }

    /// Notes a failed `metric` probe of `pos`: said once, and that table of the material is
    /// not probed again. A missing table (an incomplete set) is information, a damaged one
    /// an error.
    fn fail(&self, pos: &Chess, metric: Metric, err: &SyzygyError) {
        let metric = match err {
            SyzygyError::MissingTable { metric, .. } | SyzygyError::ProbeFailed { metric, .. } => {
                *metric
            }
            SyzygyError::Castling | SyzygyError::TooManyPieces => metric,
        };
        let fresh = self
            .failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(signature(pos, metric));
        let message = match err {
            SyzygyError::MissingTable { .. } => format!(
                "tablebases: {err}; positions of this material are searched without tables"
            ),
            SyzygyError::ProbeFailed { .. } => format!(
                "error: tablebase probe failed ({err}); positions of this material are searched without tables"
            ),
            // Ruled out by `covers` before any probe.
            SyzygyError::Castling | SyzygyError::TooManyPieces => return,
        };
        if fresh {
            (self.reporter)(&message);
        }
    }

    /// The WDL value of `pos` for the side to move, where `pos` follows a capture or a pawn
    /// move (its halfmove clock is zero). `None` where the tables cannot say.
    pub fn probe_wdl(&self, pos: &Chess) -> Option<Wdl> {
        if self.has_failed(pos, Metric::Wdl) {
            return None;
        }
        match self.tables.probe_wdl_after_zeroing(pos) {
            Ok(wdl) => Some(wdl),
            Err(err) => {
                self.fail(pos, Metric::Wdl, &err);
                None
            }
        }
    }

    /// The distance to zeroing of `pos` for the side to move, in plies.
    /// The DTZ tables are read only at the root, where a missing one means ranking by WDL.
    fn probe_dtz(&self, pos: &Chess) -> Option<i32> {
        if self.has_failed(pos, Metric::Dtz) {
            return None;
        }
        match self.tables.probe_dtz(pos) {
            Ok(dtz) => Some(dtz.ignore_rounding().0),
            Err(err) => {
                self.fail(pos, Metric::Dtz, &err);
                None
            }
        }
    }

    /// Ranks the root moves of `board` by the tables and keeps those of the best rank:
    /// by DTZ where every move's DTZ is known, else by WDL. `None` where the root is not
    /// covered or a probe fails.
    pub fn rank_root(&self, board: &Board, rules: &ProbeRules) -> Option<RootRanking> {
        let pos = board.pos();
        if !self.covers(pos, rules) {
            return None;
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return None;
        }
        self.rank_by_dtz(board, &moves, rules)
            .or_else(|| self.rank_by_wdl(pos, &moves, rules))
    }

    /// DTZ ranking: a win that the fifty-move rule still allows ranks above everything else
    /// (all such wins alike, so the search picks among them, unless the game has repeated a
    /// position since the last zeroing move: then the shortest way to zeroing ranks first,
    /// so the game makes progress). A loss that the rule does not save is ranked by how long
    /// it resists; wins and losses beyond the rule rank near draws, by how close they are.
    fn rank_by_dtz(
        &self,
        board: &Board,
        moves: &[Move],
        rules: &ProbeRules,
    ) -> Option<RootRanking> {
        const MAX_DTZ: i32 = 1 << 18;
        let pos = board.pos();
        let halfmoves = pos.halfmoves() as i32;
        let repeated = board.repeated_since_zeroing();
        // Whether a move of this DTZ wins (loses) before the fifty-move rule can step in.
        let wins = |dtz: i32| dtz > 0 && (!rules.rule50 || dtz + halfmoves <= 99);
        let loses = |dtz: i32| dtz < 0 && (!rules.rule50 || -dtz + halfmoves <= 100);
        let (kept, _, best_dtz) = keep_best(pos, moves, |child| {
            let dtz = if child.is_checkmate() {
                1
            } else if child.halfmoves() == 0 {
                Dtz::before_zeroing(-self.probe_wdl(child)?).0
            } else {
                let child_dtz = -self.probe_dtz(child)?;
                child_dtz + child_dtz.signum()
            };
            let rank = if wins(dtz) {
                if repeated {
                    MAX_DTZ - dtz
                } else {
                    MAX_DTZ
                }
            } else if dtz > 0 {
                MAX_DTZ / 2 - (dtz + halfmoves)
            } else if dtz < 0 {
                // A loss resists longest; once a draw by the rule is in sight, nearest it.
                if !rules.rule50 || -dtz * 2 + halfmoves < 100 {
                    -MAX_DTZ - dtz
                } else {
                    -MAX_DTZ / 2 + (-dtz + halfmoves)
                }
            } else {
                0
            };
            Some((rank, dtz))
        })?;
        // A win or loss the rule allows shows as such; a result it turns into a draw, as a
        // small score of its sign.
        let score = if wins(best_dtz) {
            TB_WIN - 1
        } else if loses(best_dtz) {
            -TB_WIN + 1
        } else {
            best_dtz.signum()
        };
        Some(RootRanking {
            moves: kept,
            score,
            by_dtz: true,
            probes: moves.len() as u64,
        })
    }

    /// WDL ranking, where DTZ tables are missing: keeps the moves of the best outcome.
    fn rank_by_wdl(&self, pos: &Chess, moves: &[Move], rules: &ProbeRules) -> Option<RootRanking> {
        let (kept, best, ()) = keep_best(pos, moves, |child| {
            let wdl = if child.is_checkmate() {
                Wdl::Win
            } else {
                -self.probe_wdl(child)?
            };
            Some((wdl_value(wdl, rules.rule50), ()))
        })?;
        Some(RootRanking {
            moves: kept,
            score: match best {
                2 => TB_WIN - 1,
                -2 => -TB_WIN + 1,
                other => other,
            },
            by_dtz: false,
            probes: moves.len() as u64,
        })
    }
}

/// Ranks each of `moves` by `rank` of the position it leads to (`None`: a probe failed, and
/// so does the ranking) and keeps the moves of the best rank, with that rank and its detail.
fn keep_best<D: Copy>(
    pos: &Chess,
    moves: &[Move],
    mut rank: impl FnMut(&Chess) -> Option<(i32, D)>,
) -> Option<(Vec<Move>, i32, D)> {
    let mut ranked = Vec::with_capacity(moves.len());
    for &mv in moves {
        let mut child = pos.clone();
        child.play_unchecked(mv);
        ranked.push((mv, rank(&child)?));
    }
    let &(_, (best, detail)) = ranked.iter().max_by_key(|&&(_, (rank, _))| rank)?;
    let kept = ranked
        .iter()
        .filter(|&&(_, (rank, _))| rank == best)
        .map(|&(mv, _)| mv)
        .collect();
    Some((kept, best, detail))
}

/// A WDL outcome as -2 (loss) to 2 (win); under the fifty-move rule a cursed win and a
/// blessed loss are draws with a lean (1 and -1), without it they are a win and a loss.
fn wdl_value(wdl: Wdl, rule50: bool) -> i32 {
    match (wdl, rule50) {
        (Wdl::Win, _) | (Wdl::CursedWin, false) => 2,
        (Wdl::CursedWin, true) => 1,
        (Wdl::Draw, _) => 0,
        (Wdl::BlessedLoss, true) => -1,
        (Wdl::Loss, _) | (Wdl::BlessedLoss, false) => -2,
    }
}

/// The search's score and bound for a probe's result `ply` plies from the root: a win is a
/// lower bound (a mate may be better), a loss an upper bound, anything else exact.
pub fn search_score(wdl: Wdl, rules: &ProbeRules, ply: i32) -> (i32, crate::types::Bound) {
    use crate::types::Bound;
    match wdl_value(wdl, rules.rule50) {
        2 => (TB_WIN - ply, Bound::Lower),
        -2 => (-TB_WIN + ply, Bound::Upper),
        lean => (lean, Bound::Exact),
    }
}

/// Whether `dir` is a directory of tables (used by the tests to skip without them).
pub fn has_tables(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "rtbw"))
    })
}

/// The folder of shared data beside the checkout (tablebases, openings, data, tools): the
/// environment's `FERRITE_SHARED`, or `../shared` from the crate. The one place the tests name
/// it.
#[doc(hidden)]
pub fn shared_dir() -> std::path::PathBuf {
    std::env::var_os("FERRITE_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// The directory of Syzygy tables the tests use, `syzygy` in the shared folder
/// (`shared_dir`): `Some` where it holds tables. Where it does not, a test checks nothing and
/// says so, unless `FERRITE_REQUIRE_TABLEBASES` is set (CI sets it): then their absence fails
/// the test.
#[doc(hidden)]
pub fn tables_for_tests() -> Option<String> {
    use std::io::Write;
    let tables = shared_dir().join("syzygy");
    let shown = tables.display();
    if has_tables(&tables) {
        return Some(tables.to_string_lossy().into_owned());
    }
    assert!(
        std::env::var_os("FERRITE_REQUIRE_TABLEBASES").is_none(),
        "FERRITE_REQUIRE_TABLEBASES is set, and there are no Syzygy tables at {shown}"
    );
    // Written to stderr directly rather than with eprintln!, which the test harness captures,
    // so that a plain `cargo test` on a fresh clone lists each test that checked nothing.
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {test}: no Syzygy tables at {shown} (set FERRITE_SHARED to the shared folder)"
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{DECISIVE, MATE_BOUND};

    fn shared_tables() -> Option<Syzygy> {
        Syzygy::open(&tables_for_tests()?, |_| {}).syzygy
    }

    fn board(fen: &str) -> Board {
        Board::from_fen(fen, shakmaty::CastlingMode::Standard).expect("test FEN")
    }

    #[test]
    fn bad_paths_load_nothing_and_say_why() {
        let loaded = Syzygy::open("/nonexistent/tables:/", |_| {});
        assert!(loaded.syzygy.is_none());
        assert_eq!(loaded.messages.len(), 2, "{:?}", loaded.messages);
        assert!(loaded.messages[0].contains("/nonexistent/tables"));
        assert!(loaded.messages[1].contains("no tablebase files"));
    }

    #[test]
    fn root_ranking_keeps_only_winning_moves() {
        let Some(tb) = shared_tables() else { return };
        // KRvK: every move that does not hang the rook (Rd2, Rd3+, Rd4) keeps the win.
        let b = board("8/8/8/8/8/4k3/8/3R3K w - - 0 1");
        let ranking = tb.rank_root(&b, &ProbeRules::default()).expect("covered");
        assert!(ranking.by_dtz);
        assert_eq!(ranking.score, TB_WIN - 1);
        assert!(!ranking.moves.is_empty());
        assert_eq!(ranking.moves.len(), b.pos().legal_moves().len() - 3);
        use shakmaty::Square::{D2, D3, D4};
        assert!(ranking
            .moves
            .iter()
            .all(|mv| ![D2, D3, D4].contains(&mv.to())));
        // The rook is en prise: only taking it holds the draw.
        let b = board("8/8/8/8/8/8/3k4/3R3K b - - 0 1");
        let ranking = tb.rank_root(&b, &ProbeRules::default()).expect("covered");
        assert_eq!(ranking.score, 0, "Kxd1 draws");
        assert_eq!(ranking.moves.len(), 1);
    }

    #[test]
    fn castling_rights_are_never_probed() {
        let Some(tb) = shared_tables() else { return };
        let b = board("r3k3/8/8/8/8/8/8/4K2R w Kq - 0 1");
        assert!(!tb.covers(b.pos(), &ProbeRules::default()));
        assert!(tb.rank_root(&b, &ProbeRules::default()).is_none());
    }

    #[test]
    fn wdl_probes_give_scores_between_mates_and_evaluations() {
        let Some(tb) = shared_tables() else { return };
        let rules = ProbeRules::default();
        let win = board("8/8/8/4k3/8/8/8/1Q2K3 w - - 0 1");
        let wdl = tb.probe_wdl(win.pos()).expect("KQvK");
        let (score, bound) = search_score(wdl, &rules, 3);
        assert_eq!((score, bound), (TB_WIN - 3, crate::types::Bound::Lower));
        assert!(score > DECISIVE && score < MATE_BOUND);
        let draw = board("8/8/8/4k3/8/8/8/1B2K3 w - - 0 1");
        assert_eq!(tb.probe_wdl(draw.pos()), Some(Wdl::Draw));
    }
}
