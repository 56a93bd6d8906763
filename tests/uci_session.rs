//! Drives the real binary through stdin/stdout as a GUI would.

use shakmaty::{fen::Fen, uci::UciMove, CastlingMode, Chess, Position};
mod common;

use common::{info_nodes, last_info, Session, PROMPT, SECONDS};
use std::time::{Duration, Instant};

fn assert_legal(fen: &str, moves: &[&str], bestmove_line: &str) {
    assert_legal_in(CastlingMode::Standard, fen, moves, bestmove_line);
}

/// Checks that the move of a `bestmove` line (or a bare move) is legal after `fen` + `moves`.
fn assert_legal_in(mode: CastlingMode, fen: &str, moves: &[&str], bestmove_line: &str) {
    let mut pos: Chess = fen.parse::<Fen>().unwrap().into_position(mode).unwrap();
    for m in moves {
        let mv = m.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(mv);
    }
    let text = bestmove_line
        .strip_prefix("bestmove ")
        .unwrap_or(bestmove_line)
        .split_whitespace()
        .next()
        .expect("a move");
    let mv = text
        .parse::<UciMove>()
        .unwrap_or_else(|_| panic!("{bestmove_line}"));
    assert!(
        mv.to_move(&pos).is_ok(),
        "illegal {bestmove_line} in {fen} {moves:?}"
    );
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[test]
fn handshake_and_fixed_depth_and_movetime() {
    let mut s = Session::start();
    s.send("uci");
    let lines = s.until("uciok", SECONDS);
    assert!(lines.iter().any(|l| l.starts_with("id name Ferrite")));
    for option in ["Hash", "Threads", "Clear Hash", "Move Overhead"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("option name {option} type"))),
            "{option}"
        );
    }
    s.send("isready");
    s.until("readyok", SECONDS);
    s.send("ucinewgame");
    s.send("position startpos moves e2e4 e7e5 g1f3");
    s.send("go depth 6");
    let lines = s.until("bestmove", SECONDS);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("info depth 6 ") && l.contains(" hashfull ")));
    assert_legal(START, &["e2e4", "e7e5", "g1f3"], lines.last().unwrap());

    let fen = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8";
    s.send(&format!("position fen {fen}"));
    let start = Instant::now();
    s.send("go movetime 300");
    let lines = s.until("bestmove", SECONDS);
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(300) + PROMPT,
        "movetime 300 took {took:?}"
    );
    assert_legal(fen, &[], lines.last().unwrap());
    s.send("quit");
    assert_eq!(s.exit_code_within(SECONDS), 0);
}

#[test]
fn isready_and_stop_are_answered_during_infinite_search() {
    let mut s = Session::start();
    s.send("position startpos");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    s.send("isready");
    let lines = s.until("readyok", SECONDS);
    assert!(
        start.elapsed() < PROMPT,
        "readyok took {:?}",
        start.elapsed()
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "infinite search ended by itself"
    );
    let start = Instant::now();
    s.send("stop");
    let lines = s.until("bestmove", SECONDS);
    assert!(start.elapsed() < PROMPT, "stop took {:?}", start.elapsed());
    assert_legal(START, &[], lines.last().unwrap());
}

#[test]
fn quit_during_search_exits_at_once() {
    let mut s = Session::start();
    s.send("position startpos moves d2d4");
    s.send("go wtime 600000 btime 600000");
    std::thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    s.send("quit");
    assert_eq!(s.exit_code_within(SECONDS), 0);
    assert!(start.elapsed() < PROMPT, "quit took {:?}", start.elapsed());
}

#[test]
fn bad_input_is_reported_and_the_engine_keeps_its_position() {
    let mut s = Session::start();
    s.send("position startpos moves e2e4");
    for bad in [
        "frobnicate",
        "",
        "   ",
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNZ w KQkq - 0 1",
        "position fen rnbqkbnr/pppppppp/8/8",
        "position fen",
        "position startpos moves e2e4 e7e5 e1e3",
        "position startpos moves zz",
        "setoption name Hash value lots",
        "setoption name Hash value 99999999999",
        "setoption name NoSuchOption value 3",
        "go depth x",
    ] {
        s.send(bad);
        s.send("isready");
        s.until("readyok", SECONDS);
    }
    s.send("stop");
    s.until("bestmove", SECONDS);
    // The last valid position (after 1.e4) is still the one searched: Black moves.
    s.send("go depth 4");
    let lines = s.until("bestmove", SECONDS);
    assert_legal(START, &["e2e4"], lines.last().unwrap());
    // End of input: a clean exit.
    s.close_input();
    assert_eq!(s.exit_code_within(SECONDS), 0);
}

#[test]
fn hash_resize_and_no_legal_moves() {
    let mut s = Session::start();
    s.send("setoption name Hash value 64");
    s.send("setoption name Clear Hash");
    s.send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    s.send("go depth 5");
    let lines = s.until("bestmove", SECONDS);
    assert_eq!(lines.last().unwrap(), "bestmove 0000");
    s.send("setoption name Hash value 1048576");
    s.send("isready");
    let lines = s.until("readyok", SECONDS);
    assert!(
        lines.iter().any(|l| l.starts_with("info string error")),
        "{lines:?}"
    );
    s.send("position startpos");
    s.send("go depth 5");
    let lines = s.until("bestmove", SECONDS);
    assert_legal(START, &[], lines.last().unwrap());
}

fn bestmove(lines: &[String]) -> &str {
    lines.last().unwrap().split_whitespace().nth(1).unwrap()
}

#[test]
fn every_option_is_announced_with_type_default_and_range() {
    let mut s = Session::start();
    s.send("uci");
    let lines = s.until("uciok", SECONDS);
    for expected in [
        "option name Hash type spin default 16 min 1 max 1048576",
        "option name Threads type spin default 1 min 1 max 1024",
        "option name Clear Hash type button",
        "option name MultiPV type spin default 1 min 1 max 256",
        "option name Ponder type check default false",
        "option name Move Overhead type spin default 30 min 0 max 5000",
        "option name UCI_Chess960 type check default false",
        "option name UCI_LimitStrength type check default false",
        "option name UCI_Elo type spin default 1350 min 1350 max 2150",
    ] {
        assert!(
            lines.iter().any(|l| l == expected),
            "missing '{expected}' in {lines:?}"
        );
    }
}

#[test]
fn ponder_waits_for_ponderhit_then_plays_on_the_clock() {
    let mut s = Session::start();
    s.send("setoption name Ponder value true");
    s.send("position startpos moves e2e4 e7e5");
    s.send("go ponder wtime 2000 btime 2000 winc 0 binc 0");
    let early = s.quiet_for(Duration::from_millis(600));
    assert!(
        !early.iter().any(|l| l.starts_with("bestmove")),
        "bestmove while pondering: {early:?}"
    );
    s.send("isready");
    s.until("readyok", SECONDS);
    let start = Instant::now();
    s.send("ponderhit");
    let lines = s.until("bestmove", SECONDS);
    assert!(
        start.elapsed() < Duration::from_millis(1000) + PROMPT,
        "ponderhit to bestmove {:?}",
        start.elapsed()
    );
    assert_legal(START, &["e2e4", "e7e5"], lines.last().unwrap());

    // stop during ponder answers at once with a legal move.
    s.send("go ponder wtime 2000 btime 2000");
    std::thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    s.send("stop");
    let lines = s.until("bestmove", SECONDS);
    assert!(start.elapsed() < PROMPT);
    assert_legal(START, &["e2e4", "e7e5"], lines.last().unwrap());
}

#[test]
fn multipv_searchmoves_and_mate() {
    let mut s = Session::start();
    s.send("setoption name MultiPV value 3");
    s.send("position startpos");
    s.send("go depth 6");
    let lines = s.until("bestmove", SECONDS);
    let firsts: std::collections::HashSet<&str> = lines
        .iter()
        .filter(|l| l.starts_with("info depth 6 ") && l.contains(" multipv "))
        .filter_map(|l| l.split(" pv ").nth(1)?.split_whitespace().next())
        .collect();
    assert_eq!(
        firsts.len(),
        3,
        "three different first moves at depth 6: {lines:?}"
    );
    for k in 1..=3 {
        assert!(lines
            .iter()
            .any(|l| l.starts_with("info depth 6 ") && l.contains(&format!(" multipv {k} "))));
    }
    s.send("setoption name MultiPV value 1");
    s.send("go depth 5 searchmoves a2a3 h2h3");
    let lines = s.until("bestmove", SECONDS);
    assert!(["a2a3", "h2h3"].contains(&bestmove(&lines)), "{lines:?}");

    s.send("position fen r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1");
    s.send("go mate 2");
    let lines = s.until("bestmove", SECONDS);
    assert_eq!(bestmove(&lines), "d5f6");
    assert!(
        lines.iter().any(|l| l.contains("score mate 2 ")),
        "{lines:?}"
    );
}

#[test]
fn chess960_castling_is_king_takes_rook_and_standard_otherwise() {
    let mut s = Session::start();
    // Shredder-FEN castling field (H) as well as the standard one.
    s.send("position fen 4k3/8/8/8/8/8/8/4K2R w H - 0 1");
    s.send("go depth 3 searchmoves e1h1");
    assert_eq!(bestmove(&s.until("bestmove", SECONDS)), "e1g1");
    s.send("setoption name UCI_Chess960 value true");
    s.send("position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1");
    s.send("go depth 3 searchmoves e1h1");
    assert_eq!(bestmove(&s.until("bestmove", SECONDS)), "e1h1");
    // A Chess960 start position with castling played as king takes rook.
    s.send("position fen r4kr1/pppppppp/8/8/8/8/PPPPPPPP/R4KR1 w AGag - 0 1 moves f1g1");
    s.send("isready");
    let lines = s.until("readyok", SECONDS);
    assert!(!lines.iter().any(|l| l.contains("error")), "{lines:?}");
    s.send("go depth 4");
    let lines = s.until("bestmove", SECONDS);
    assert_legal_in(
        CastlingMode::Chess960,
        "r4kr1/pppppppp/8/8/8/8/PPPPPPPP/R4KR1 w AGag - 0 1",
        &["f1g1"],
        bestmove(&lines),
    );
}

#[test]
fn hostile_input_never_kills_the_engine() {
    let mut s = Session::start();
    // go before any position searches the start position.
    s.send("go depth 3");
    assert_legal(START, &[], s.until("bestmove", SECONDS).last().unwrap());
    s.send("stop");
    s.send("ponderhit");
    s.send_bytes(b"\xff\xfe\x00garbage \xc3\x28\n");
    s.send(&"x".repeat(100_000));
    s.send("debug on");
    s.send("register later");
    s.send("register name Someone code 1234");
    for bad in [
        "setoption name Threads value 0",
        "setoption name Threads value -3",
        "setoption name MultiPV value 1000",
        "setoption name Move Overhead value 1e9",
        "setoption name UCI_Chess960 value maybe",
        "setoption",
        "setoption name",
        "go wtime abc",
        "position fen 4k3/8/8/8/8/8/8/4K3 w - - 0 1 moves e1e2 e8e8",
        "position fen 4k3/8/8/8/8/8/8/4KK2 w - - 0 1",
        "position fen 4k3/8/8/8/8/8/4r3/4K3 b - - 0 1",
        "position fen r3k2r/8/8/8/8/8/8/4K3 w KQkq - 0 1",
        "position fen 4k3/8/8/8/8/8/8/4K3 w - e3 0 1",
        "position fen rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "position fen rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -5 1",
        "setoption name Hash value 99999999999999999999999",
        "go wtime 99999999999999999999999 depth 2",
    ] {
        s.send(bad);
        s.send("isready");
        let lines = s.until("readyok", SECONDS);
        if bad.starts_with("position") || bad.starts_with("setoption") {
            assert!(
                lines.iter().any(|l| l.starts_with("info string")),
                "no message for '{bad}': {lines:?}"
            );
        }
    }
    // Negative and zero clocks: answer at once with a legal move, never hang.
    s.send("position startpos");
    let start = Instant::now();
    s.send("go wtime -100 btime -100 winc 0 binc 0");
    let lines = s.until("bestmove", SECONDS);
    assert!(start.elapsed() < PROMPT, "{:?}", start.elapsed());
    assert_legal(START, &[], lines.last().unwrap());
    s.send("go movetime 0");
    assert_legal(START, &[], s.until("bestmove", SECONDS).last().unwrap());
    // A second go without stop ends the first search (one bestmove each) and runs the second.
    s.send("go infinite");
    s.send("go depth 3");
    let first = s.until("bestmove", SECONDS);
    assert_legal(START, &[], first.last().unwrap());
    let second = s.until("bestmove", SECONDS);
    assert_legal(START, &[], second.last().unwrap());
    s.send("quit");
    assert_eq!(s.exit_code_within(SECONDS), 0);
}

#[test]
fn root_moves_are_reported_after_a_few_seconds() {
    let mut s = Session::start();
    s.send("position startpos");
    let start = Instant::now();
    s.send("go infinite");
    // The first root move started after three seconds is announced; one root move can take a
    // while at depth, so wait for it rather than for a fixed time.
    let mut lines = s.until("info depth", SECONDS);
    while !lines.last().unwrap().contains(" currmove ") {
        lines.extend(s.until("info depth", SECONDS));
    }
    assert!(
        start.elapsed() >= Duration::from_millis(3000),
        "currmove before 3 s"
    );
    assert!(lines.last().unwrap().contains(" currmovenumber "));
    s.send("stop");
    lines.extend(s.until("bestmove", SECONDS));
    assert!(lines
        .iter()
        .filter(|l| l.starts_with("info depth") && l.contains(" pv "))
        .all(|l| l.contains(" hashfull ")));
}

#[test]
fn eval_file_loads_a_network_and_refuses_a_bad_one() {
    use ferrite::eval::nnue::{Network, INPUTS};
    let dir = std::env::temp_dir().join(format!("ferrite-evalfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A small network whose weights depend on the feature, so that it prefers some moves.
    let hidden = 8;
    let net = Network {
        hidden,
        buckets: 1,
        mirrored: false,
        king_buckets: 1,
        scale: 400,
        feature_weights: (0..INPUTS * hidden)
            .map(|i| ((i * 37) % 101) as i16 - 50)
            .collect(),
        feature_bias: vec![40; hidden],
        output_weights: (0..2 * hidden).map(|i| (i as i16 % 7) * 9 - 27).collect(),
        output_bias: vec![0],
    };
    let good = dir.join("small.nnue");
    std::fs::write(&good, net.to_bytes()).unwrap();
    let bad = dir.join("bad.nnue");
    std::fs::write(&bad, b"FENN but nothing more").unwrap();
    // A whole file with one header word changed: the version, the output scale, the king
    // buckets; and a file cut short.
    let changed = |at: usize, value: u32, name: &str| {
        let mut bytes = net.to_bytes();
        bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let future = changed(4, 9, "future.nnue");
    let unscaled = changed(20, 0, "unscaled.nnue");
    let kings = changed(24, 3, "kings.nnue");
    let truncated = dir.join("truncated.nnue");
    let bytes = net.to_bytes();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();

    let mut s = Session::start();
    let loaded = s.messages(&format!("setoption name EvalFile value {}", good.display()));
    assert!(
        loaded.iter().any(|l| l.contains("evaluation: network")),
        "{loaded:?}"
    );
    s.send("position startpos moves e2e4");
    s.send("go depth 4");
    let lines = s.until("bestmove", SECONDS);
    assert!(
        lines.iter().any(|l| l.starts_with("info depth 4 ")),
        "{lines:?}"
    );
    s.send("ucinewgame");
    let with_network = s.nodes_to_depth(5);

    for (path, reason) in [
        (bad.display().to_string(), "format version"),
        (
            dir.join("missing.nnue").display().to_string(),
            "missing.nnue",
        ),
        (future.display().to_string(), "version 9"),
        (unscaled.display().to_string(), "output scale 0"),
        (kings.display().to_string(), "3 king input buckets"),
        (truncated.display().to_string(), "truncated"),
    ] {
        let refused = s.messages(&format!("setoption name EvalFile value {path}"));
        assert!(
            refused.iter().any(|l| l.starts_with("info string error")
                && l.contains(reason)
                && l.contains("evaluation unchanged")),
            "{refused:?}"
        );
        // The CLI refuses it too, with the reason and a non-zero exit.
        let bench = std::process::Command::new(env!("CARGO_BIN_EXE_ferrite"))
            .args(["bench", "2", "--eval-file", &path])
            .output()
            .unwrap();
        assert!(!bench.status.success());
        assert!(String::from_utf8_lossy(&bench.stderr).contains(reason));
    }
    // The network stayed: from a new game, the same search visits the same nodes.
    s.send("ucinewgame");
    assert_eq!(s.nodes_to_depth(5), with_network);
    // A switch of evaluation starts afresh by itself: the table holds static evaluations of
    // the one before, so the next search matches one after `ucinewgame`.
    let hce = s.messages("setoption name EvalFile value hce");
    assert!(hce.iter().any(|l| l.contains("hand-crafted")), "{hce:?}");
    let after_switch = s.nodes_to_depth(5);
    assert_ne!(after_switch, with_network, "the network made no difference");
    s.send("ucinewgame");
    assert_eq!(s.nodes_to_depth(5), after_switch);
    s.send(&format!("setoption name EvalFile value {}", good.display()));
    assert_eq!(s.nodes_to_depth(5), with_network);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_built_in_network_plays_unless_told_otherwise() {
    let mut s = Session::start();
    let eval = s.messages("eval");
    assert!(
        eval.iter()
            .any(|l| l.contains("hand-crafted") && l.contains("network")),
        "{eval:?}"
    );
    let built_in = s.nodes_to_depth(5);
    let hce = s.messages("setoption name EvalFile value HCE");
    assert!(hce.iter().any(|l| l.contains("hand-crafted")), "{hce:?}");
    let eval = s.messages("eval");
    assert!(!eval.iter().any(|l| l.contains("network")), "{eval:?}");
    assert_ne!(
        s.nodes_to_depth(5),
        built_in,
        "the network made no difference"
    );
    // `<default>` (what the option list offers) and an empty value (a cleared GUI field) both
    // bring the built-in network back, starting afresh as a new game does.
    for value in ["<default>", ""] {
        let back = s.messages(format!("setoption name EvalFile value {value}").trim_end());
        assert!(
            back.iter()
                .any(|l| l.contains("evaluation: built-in network")),
            "{back:?}"
        );
        assert_eq!(s.nodes_to_depth(5), built_in);
        s.send("setoption name EvalFile value hce");
    }
}

#[test]
fn unknown_tokens_before_a_command_are_skipped() {
    let mut s = Session::start();
    s.send("joho isready");
    let lines = s.until("readyok", SECONDS);
    assert!(
        lines.iter().any(|l| l.contains("skipped unknown 'joho'")),
        "{lines:?}"
    );
    s.send("joho debug on");
    s.send("position startpos");
    s.send("go depth 3");
    let lines = s.until("bestmove", SECONDS);
    // Debug output (the search's summary) shows that `debug on` was obeyed.
    assert!(
        lines.iter().any(|l| l.starts_with("info string searched")),
        "{lines:?}"
    );
    let unknown = s.messages("joho");
    assert!(
        unknown.iter().any(|l| l.contains("unknown command 'joho'")),
        "{unknown:?}"
    );
}

#[test]
fn end_of_input_lets_a_finite_search_finish_and_stops_an_infinite_one() {
    // A script that pipes its commands: the search it asked for is the one it gets.
    let mut s = Session::start();
    s.send("position startpos moves e2e4");
    s.send("go depth 9");
    s.close_input();
    let lines = s.until("bestmove", SECONDS);
    assert!(
        lines.iter().any(|l| l.starts_with("info depth 9 ")),
        "{lines:?}"
    );
    assert_legal(START, &["e2e4"], lines.last().unwrap());
    assert_eq!(s.exit_code_within(SECONDS), 0);

    let mut s = Session::start();
    s.send("position startpos");
    s.send("go infinite");
    s.until("info depth 2 ", SECONDS);
    let start = Instant::now();
    s.close_input();
    s.until("bestmove", SECONDS);
    assert_eq!(s.exit_code_within(SECONDS), 0);
    assert!(start.elapsed() < PROMPT, "exit took {:?}", start.elapsed());
}

#[test]
fn options_sent_during_a_search_apply_when_it_ends_in_order() {
    let dir = std::env::temp_dir().join(format!("ferrite-pending-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("table.hash");
    let mut s = Session::start();
    s.send("position startpos");
    s.send("go infinite");
    s.until("info depth 2 ", SECONDS);
    // A resize, a file name and a save, in that order, while the search runs: isready is
    // answered at once and the search goes on.
    s.send("setoption name Hash value 4");
    s.send(&format!(
        "setoption name Hash File value {}",
        file.display()
    ));
    s.send("setoption name Save Hash");
    let start = Instant::now();
    s.send("isready");
    let lines = s.until("readyok", SECONDS);
    assert!(
        start.elapsed() < PROMPT,
        "readyok took {:?}",
        start.elapsed()
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("bestmove") || l.contains("saved")),
        "{lines:?}"
    );
    s.send("stop");
    s.until("bestmove", SECONDS);
    // Applied in order once the search ended: the 4 MiB table went to the new file.
    let saved = s.messages("isready");
    assert!(saved.iter().any(|l| l.contains("saved 4 MiB")), "{saved:?}");
    assert!(file.exists());

    // A script that pipes a finite search and then an option gets both, in order.
    let mut s = Session::start();
    s.send("setoption name Hash value 2");
    s.send(&format!(
        "setoption name Hash File value {}",
        file.display()
    ));
    s.send("position startpos");
    s.send("go depth 8");
    s.send("setoption name Save Hash");
    s.close_input();
    let lines = s.until("info string saved 2 MiB", SECONDS);
    assert!(lines.iter().any(|l| l.starts_with("bestmove")), "{lines:?}");
    assert_eq!(s.exit_code_within(SECONDS), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn show_wdl_adds_win_draw_loss_per_mille_to_info_lines() {
    let mut s = Session::start();
    s.send("position startpos moves e2e4");
    s.send("go depth 5");
    let lines = s.until("bestmove", SECONDS);
    assert!(!lines.iter().any(|l| l.contains(" wdl ")), "{lines:?}");
    s.send("setoption name UCI_ShowWDL value true");
    // A queen up: mostly a win for the side to move.
    s.send("position fen rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    s.send("go depth 5");
    let lines = s.until("bestmove", SECONDS);
    let infos: Vec<&String> = lines.iter().filter(|l| l.contains(" score ")).collect();
    assert!(!infos.is_empty());
    for line in infos {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words.iter().position(|&w| w == "wdl").expect(line);
        let wdl: Vec<u32> = words[at + 1..at + 4]
            .iter()
            .map(|w| w.parse().unwrap())
            .collect();
        assert_eq!(wdl.iter().sum::<u32>(), 1000, "{line}");
        assert!(wdl[0] > 800, "{line}");
    }
}

#[test]
fn eval_prints_the_static_evaluation_from_the_side_to_move() {
    let mut s = Session::start();
    let cp = |s: &mut Session, fen: &str| -> i32 {
        let messages = s.messages(&format!("position fen {fen}\neval"));
        let line = messages
            .iter()
            .find(|m| m.contains("hand-crafted"))
            .unwrap_or_else(|| panic!("{messages:?}"));
        let mut words = line.split_whitespace();
        words.find(|&w| w == "hand-crafted");
        words.next().unwrap().parse().unwrap()
    };
    // White has an extra queen: far ahead for White to move, far behind for Black to move.
    assert!(cp(&mut s, "4k3/8/8/8/8/8/8/3QK3 w - - 0 1") > 500);
    assert!(cp(&mut s, "4k3/8/8/8/8/8/8/3QK3 b - - 0 1") < -500);
}

/// `UCI_LimitStrength` with `UCI_Elo`: the level's node budget, one line shown for MultiPV 1
/// though more are searched, the last `info` line the move played, MultiPV honoured, and a
/// level outside the range refused with the engine still answering.
#[test]
fn limited_strength_searches_its_budget_and_shows_the_move_it_plays() {
    let mut s = Session::start();
    s.send("setoption name UCI_Elo value 9999");
    s.send("setoption name UCI_Elo value 1200");
    s.send("isready");
    let lines = s.until("readyok", SECONDS);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with(
                "info string error: option 'uci_elo' takes a whole number from 1350 to 2150"
            ))
            .count(),
        2,
        "{lines:?}"
    );
    s.send("setoption name UCI_LimitStrength value true");
    s.send("setoption name UCI_Elo value 1350");
    s.send("ucinewgame");
    for moves in ["", " moves e2e4", " moves e2e4 c7c5 g1f3"] {
        s.send(&format!("position startpos{moves}"));
        s.send("go wtime 60000 btime 60000 winc 1000 binc 1000");
        let lines = s.until("bestmove", SECONDS);
        let played = bestmove(&lines);
        let infos: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with("info depth"))
            .collect();
        let last = infos.last().expect("an info line");
        assert!(last.contains(&format!(" pv {played}")), "{lines:?}");
        for info in &infos {
            assert!(info.contains(" multipv 1 "), "{lines:?}");
            let nodes = info_nodes(info);
            assert!(nodes <= 2500, "{lines:?}");
        }
        let moves: Vec<&str> = moves.split_whitespace().skip(1).collect();
        assert_legal(START, &moves, lines.last().unwrap());
    }
    // More threads: a limited search is still one thread's budget.
    s.send("setoption name Threads value 2");
    s.send("position startpos moves d2d4");
    s.send("go wtime 60000 btime 60000");
    let lines = s.until("bestmove", SECONDS);
    let nodes = info_nodes(last_info(&lines));
    assert!(nodes <= 2500, "{lines:?}");
    assert_legal(START, &["d2d4"], lines.last().unwrap());
    // Pondering: the search waits for ponderhit, then plays a legal move.
    s.send("setoption name Ponder value true");
    s.send("position startpos moves e2e4 e7e5");
    s.send("go ponder wtime 60000 btime 60000");
    std::thread::sleep(Duration::from_millis(100));
    s.send("ponderhit");
    let lines = s.until("bestmove", SECONDS);
    assert_legal(START, &["e2e4", "e7e5"], lines.last().unwrap());
    s.send("setoption name Ponder value false");
    // Chess960: castling as king takes rook is among the moves it may play, and it plays legally.
    s.send("setoption name UCI_Chess960 value true");
    let fen960 = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9";
    s.send(&format!("position fen {fen960}"));
    s.send("go wtime 60000 btime 60000");
    let lines = s.until("bestmove", SECONDS);
    assert_legal_in(CastlingMode::Chess960, fen960, &[], lines.last().unwrap());
    s.send("setoption name UCI_Chess960 value false");
    // MultiPV still shows the lines asked for.
    s.send("setoption name MultiPV value 2");
    s.send("setoption name UCI_Elo value 2000");
    s.send("position startpos");
    s.send("go wtime 60000 btime 60000");
    let lines = s.until("bestmove", SECONDS);
    assert!(lines.iter().any(|l| l.contains(" multipv 2 ")), "{lines:?}");
    assert!(
        !lines.iter().any(|l| l.contains(" multipv 3 ")),
        "{lines:?}"
    );
}
