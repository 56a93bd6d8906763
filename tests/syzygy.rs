//! Syzygy tablebases through UCI, against the real binary: won endings are converted within
//! the fifty-move rule and drawn ones are held with the engine playing both sides, castling
//! positions are never probed, `tbhits` is reported, and bad paths or files change nothing
//! but a message. The tables are `syzygy` in the shared folder (`$FERRITE_SHARED`, default
//! `../shared`); without them each test says so and passes without checking anything, unless
//! `FERRITE_REQUIRE_TABLEBASES` is set (CI sets it).

mod common;

use common::{Session, SECONDS};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};
use shakmaty_syzygy::{AmbiguousWdl, Tablebase};
use std::collections::HashMap;
use std::path::PathBuf;

/// Nodes per move: enough for a sensible move, few enough for long games to stay quick.
const NODES: u64 = 5000;

/// Whether the tables are there; without them a test checks nothing, unless CI requires them
/// (`ferrite::syzygy::tables_for_tests`).
fn tables_present() -> bool {
    ferrite::syzygy::tables_for_tests().is_some()
}

fn position(fen: &str) -> Chess {
    let fen: Fen = fen.parse().expect("test FEN");
    fen.into_position(CastlingMode::Standard)
        .expect("legal test FEN")
}

fn session_with_tables() -> Session {
    let mut engine = Session::start();
    let tables = ferrite::syzygy::tables_for_tests().expect("checked by tables_present");
    let messages = engine.messages(&format!("setoption name SyzygyPath value {tables}"));
    assert!(
        messages.iter().any(|m| m.contains("tablebases: ")),
        "{messages:?}"
    );
    engine
}

/// How a game the engine played against itself ended.
#[derive(Debug, PartialEq)]
enum End {
    Mate {
        winner: Color,
    },
    FiftyMoves,
    Threefold,
    Stalemate,
    InsufficientMaterial,
    /// Still going after the plies allowed.
    Unfinished,
}

/// The engine plays both sides from `fen` for at most `max_plies`; `check` sees every position
/// after each move.
fn self_play(
    engine: &mut Session,
    fen: &str,
    max_plies: usize,
    check: &mut dyn FnMut(&Chess),
) -> End {
    let mut pos = position(fen);
    let mut moves: Vec<String> = Vec::new();
    let mut seen: HashMap<u64, usize> = HashMap::new();
    engine.send("ucinewgame");
    for _ in 0..max_plies {
        engine.send(&format!("position fen {fen} moves {}", moves.join(" ")));
        engine.send(&format!("go nodes {NODES}"));
        let lines = engine.until("bestmove", SECONDS);
        let best = lines
            .last()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string();
        let mv = best
            .parse::<UciMove>()
            .ok()
            .and_then(|uci| uci.to_move(&pos).ok())
            .unwrap_or_else(|| panic!("illegal bestmove {best} after {moves:?}"));
        pos.play_unchecked(mv);
        moves.push(best);
        check(&pos);
        let key: Zobrist64 = pos.zobrist_hash(EnPassantMode::Legal);
        let count = seen.entry(key.0).or_default();
        *count += 1;
        if pos.is_checkmate() {
            return End::Mate {
                winner: !pos.turn(),
            };
        }
        if pos.is_stalemate() {
            return End::Stalemate;
        }
        if pos.is_insufficient_material() {
            return End::InsufficientMaterial;
        }
        if *count >= 3 {
            return End::Threefold;
        }
        if pos.halfmoves() >= 100 {
            return End::FiftyMoves;
        }
    }
    End::Unfinished
}

fn reference_tables() -> Tablebase<Chess> {
    let mut tables = Tablebase::new();
    let dir = ferrite::syzygy::tables_for_tests().expect("checked by tables_present");
    tables.add_directory(dir).expect("tables");
    tables
}

#[test]
fn won_endings_are_converted_within_the_fifty_move_rule() {
    if !tables_present() {
        return;
    }
    let mut engine = session_with_tables();
    for (name, fen) in [
        ("KRvK", "8/8/8/4k3/8/8/8/R3K3 w - - 0 1"),
        ("KQvKR", "8/8/8/3k4/8/2r5/8/KQ6 w - - 0 1"),
        ("KPvK", "4k3/8/4K3/4P3/8/8/8/8 w - - 0 1"),
        ("KRPvKR (Lucena)", "1K1k4/1P6/8/8/8/8/r7/2R5 w - - 0 1"),
    ] {
        let end = self_play(&mut engine, fen, 400, &mut |_| {});
        assert_eq!(
            end,
            End::Mate {
                winner: Color::White
            },
            "{name}: {fen}"
        );
    }
}

/// The lowest strength level, with tables, still converts won endings on both sides of the
/// board: the tables' root ranking leaves it only the moves that keep the win.
#[test]
fn the_lowest_strength_level_converts_with_tables() {
    if !tables_present() {
        return;
    }
    let mut engine = session_with_tables();
    engine.send("setoption name UCI_LimitStrength value true");
    engine.send("setoption name UCI_Elo value 1350");
    for (name, fen) in [
        ("KQvKR", "8/8/8/3k4/8/2r5/8/KQ6 w - - 0 1"),
        ("KPvK", "4k3/8/4K3/4P3/8/8/8/8 w - - 0 1"),
    ] {
        let end = self_play(&mut engine, fen, 400, &mut |_| {});
        assert_eq!(
            end,
            End::Mate {
                winner: Color::White
            },
            "{name}: {fen}"
        );
    }
}

#[test]
fn drawn_endings_are_held() {
    if !tables_present() {
        return;
    }
    let tables = reference_tables();
    let mut engine = session_with_tables();
    for (name, fen) in [
        ("KRvKR", "8/8/3k4/1r6/8/8/8/R3K3 w - - 0 1"),
        ("KPvK", "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"),
        ("KRPvKR (Philidor)", "4k3/8/r7/4PK2/8/8/8/7R b - - 0 1"),
    ] {
        let mut check = |pos: &Chess| {
            if pos.is_checkmate() {
                return;
            }
            let wdl = tables.probe_wdl(pos).expect("probe");
            assert!(
                matches!(
                    wdl,
                    AmbiguousWdl::Draw | AmbiguousWdl::CursedWin | AmbiguousWdl::BlessedLoss
                ),
                "{name}: {wdl:?} after a move in {}",
                Fen::from_position(pos, EnPassantMode::Legal)
            );
        };
        let end = self_play(&mut engine, fen, 60, &mut check);
        assert!(!matches!(end, End::Mate { .. }), "{name}: {end:?}");
    }
}

/// tbhits of the last info line before bestmove.
fn tbhits(lines: &[String]) -> u64 {
    let info = lines
        .iter()
        .rev()
        .find(|l| l.contains(" tbhits "))
        .expect("an info line with tbhits");
    let mut words = info.split_whitespace();
    words.find(|&w| w == "tbhits");
    words.next().unwrap().parse().unwrap()
}

#[test]
fn castling_positions_are_never_probed_and_tbhits_are_reported() {
    if !tables_present() {
        return;
    }
    let mut engine = session_with_tables();
    // Four pieces with castling rights: not in the tables, whatever the piece count says, so
    // the root moves are not ranked (the search's own guard is tested in the library).
    engine.send("position fen r3k3/8/8/8/8/8/8/4K2R w Kq - 0 1");
    engine.send("go depth 1");
    assert_eq!(tbhits(&engine.until("bestmove", SECONDS)), 0);
    // The same pieces without the rights: the root moves are ranked by the tables.
    engine.send("position fen r3k3/8/8/8/8/8/8/4K2R w - - 0 1");
    engine.send("go depth 1");
    assert!(tbhits(&engine.until("bestmove", SECONDS)) > 0);
    // A root above the probe limit is searched, and captures into four pieces are probed.
    engine.send("setoption name SyzygyProbeLimit value 4");
    engine.send("position fen 8/8/1k6/8/2r5/2P5/8/1K1R4 w - - 0 1");
    engine.send("go depth 8");
    let lines = engine.until("bestmove", SECONDS);
    assert!(tbhits(&lines) > 0, "{lines:?}");
}

#[test]
fn a_bad_path_changes_nothing_but_a_message() {
    let fen = "8/8/8/4k3/8/8/8/R3K3 w - - 0 1";
    let mut plain = Session::start();
    plain.send(&format!("position fen {fen}"));
    let expected = plain.nodes_to_depth(8);

    let mut engine = Session::start();
    let messages = engine.messages("setoption name SyzygyPath value /no/such/tables");
    assert!(
        messages.iter().any(|m| m.contains("/no/such/tables")),
        "{messages:?}"
    );
    engine.send(&format!("position fen {fen}"));
    assert_eq!(engine.nodes_to_depth(8), expected);
    engine.send("isready");
    engine.until("readyok", SECONDS);
}

/// A directory made for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("ferrite-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn damaged_tables_are_reported_once_and_the_engine_plays_on() {
    let dir = TempDir::new("damaged-tables");
    // A size no table can have, and a table-sized file of zeros (its magic number is wrong).
    std::fs::write(dir.0.join("KQvK.rtbw"), vec![0u8; 100]).unwrap();
    std::fs::write(dir.0.join("KRvK.rtbw"), vec![0u8; 64 * 8 + 16]).unwrap();
    let mut engine = Session::start();
    let messages = engine.messages(&format!(
        "setoption name SyzygyPath value {}",
        dir.0.display()
    ));
    assert!(
        messages.iter().any(|m| m.contains("KQvK.rtbw")),
        "{messages:?}"
    );
    engine.send("position fen 8/8/8/4k3/8/8/8/R3K3 w - - 0 1");
    let mut failures = 0;
    for _ in 0..2 {
        engine.send("go depth 6");
        let lines = engine.until("bestmove", SECONDS);
        failures += lines
            .iter()
            .filter(|l| l.starts_with("info string") && l.contains("probe failed"))
            .count();
        assert_ne!(lines.last().unwrap(), "bestmove 0000");
    }
    assert_eq!(failures, 1);
    engine.send("isready");
    engine.until("readyok", SECONDS);
}
