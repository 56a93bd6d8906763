//! Search behaviour on positions with a known answer.

use ferrite::board::Board;
use ferrite::eval::Evaluation;
use ferrite::search::Shared;
use ferrite::search::{Iteration, Job};
use ferrite::threads;
use ferrite::tt::Tt;
use ferrite::types::MATE;
use ferrite::uci::format_score;
use shakmaty::{uci::UciMove, CastlingMode, Position};

fn board(fen: &str, moves: &[&str]) -> Board {
    let mut board = Board::from_fen(fen, CastlingMode::Standard).unwrap();
    for mv in moves {
        board.play_uci(mv).unwrap();
    }
    board
}

fn search_with(tt: &mut Tt, board: &Board, depth: i32, threads: usize) -> Iteration {
    tt.new_search();
    let job = Job::fixed_depth(board.clone(), depth, Evaluation::built_in());
    threads::search(tt, &job, &Shared::new(threads), &mut Vec::new(), None).best
}

fn search(board: &Board, depth: i32) -> Iteration {
    search_with(&mut Tt::new(16).unwrap(), board, depth, 1)
}

fn uci(it: &Iteration) -> String {
    UciMove::from_move(it.pv[0], CastlingMode::Standard).to_string()
}

const MAX_DEPTH: i32 = 64;
const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const MATE_IN_2: &str = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1";
const MATE_IN_3: &str = "r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1";

/// A lone king against a king and a rook, or a queen, is mated well within the fifty-move rule
/// by shallow searches on both sides (depth 5 a move, no tablebases), from starts with the
/// lone king in the centre and the stronger pieces far from it.
#[test]
fn a_lone_king_is_mated_by_a_rook_or_a_queen() {
    for fen in [
        "8/8/8/3k4/8/8/8/R6K w - - 0 1",
        "8/8/8/4k3/8/8/8/K6R w - - 0 1",
        "7K/8/8/8/3k4/8/8/1Q6 w - - 0 1",
        "K7/8/8/8/4k3/8/8/6Q1 w - - 0 1",
    ] {
        let mut game = board(fen, &[]);
        let mut tt = Tt::new(16).unwrap();
        let mut plies = 0;
        while !game.pos().is_game_over() && plies < 100 {
            let it = search_with(&mut tt, &game, 5, 1);
            game.play(it.pv[0]);
            plies += 1;
        }
        assert!(game.pos().is_checkmate(), "{fen}: no mate in {plies} plies");
    }
}

/// At the lowest strength level, against a full-strength defender, KR v K and KQ v K are still
/// mated within the fifty-move rule.
#[test]
fn the_lowest_strength_level_still_mates_a_lone_king() {
    use ferrite::search::strength::ELO_MIN;
    use ferrite::search::Strength;
    for (i, fen) in [
        "8/8/8/3k4/8/8/8/R6K w - - 0 1",
        "7K/8/8/8/3k4/8/8/1Q6 w - - 0 1",
    ]
    .into_iter()
    .enumerate()
    {
        let mut game = board(fen, &[]);
        let mut tt = Tt::new(16).unwrap();
        let mut plies = 0;
        while !game.pos().is_game_over() && plies < 100 {
            tt.new_search();
            let mut job = Job::fixed_depth(game.clone(), MAX_DEPTH, Evaluation::built_in());
            if plies % 2 == 0 {
                job.limits.depth = None;
                job.limit_strength(Strength::new(ELO_MIN, i as u64));
            } else {
                job.limits.depth = Some(5);
            }
            let it = threads::search(&tt, &job, &Shared::new(1), &mut Vec::new(), None).best;
            game.play(it.pv[0]);
            plies += 1;
        }
        assert!(game.pos().is_checkmate(), "{fen}: no mate in {plies} plies");
    }
}

#[test]
fn finds_mate_in_one_two_and_three_with_the_right_distance() {
    let it = search(&board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", &[]), 6);
    assert_eq!(
        (uci(&it).as_str(), format_score(it.score).as_str()),
        ("a1a8", "mate 1")
    );
    let it = search(&board(MATE_IN_2, &[]), 8);
    assert_eq!(
        (uci(&it).as_str(), format_score(it.score).as_str()),
        ("d5f6", "mate 2")
    );
    let it = search(&board(MATE_IN_3, &[]), 6);
    assert_eq!(
        (uci(&it).as_str(), format_score(it.score).as_str()),
        ("f8c5", "mate 3")
    );
}

#[test]
fn mate_distance_stays_right_through_table_hits() {
    // One table for a whole game's worth of searches: entries stored at one ply are probed
    // at others, and the reported distances must still be exact.
    let mut tt = Tt::new(16).unwrap();
    let start = board(MATE_IN_3, &[]);
    for depth in 1..=12 {
        let it = search_with(&mut tt, &start, depth, 1);
        if it.score > MATE - 100 {
            assert_eq!(format_score(it.score), "mate 3", "depth {depth}");
        }
    }
    // After the mating side's first move and the reply, it is mate in 2 from the new root.
    let after = board(MATE_IN_3, &["f8c5", "d4c5"]);
    let it = search_with(&mut tt, &after, 10, 1);
    assert_eq!(format_score(it.score), "mate 2");
    // The defender sees the same mate from its side.
    let defending = board(MATE_IN_3, &["f8c5"]);
    let it = search_with(&mut tt, &defending, 10, 1);
    assert!(it.score < -MATE + 100, "{}", it.score);
    assert!(format_score(it.score).starts_with("mate -"));
}

#[test]
fn avoids_the_stalemate_trap() {
    // Qxg6 wins a pawn and stalemates; Qa7 mates in two.
    let it = search(&board("7k/8/5Kp1/8/8/8/8/6Q1 w - - 0 1", &[]), 12);
    assert_ne!(uci(&it), "g1g6");
    assert_eq!(format_score(it.score), "mate 2");
}

#[test]
fn steers_into_a_repetition_when_behind() {
    // A queen down, White can repeat the position with Nf3; anything else loses.
    let b = board(
        "3qk3/8/8/8/8/8/8/4K1N1 w - - 0 1",
        &["g1f3", "e8e7", "f3g1", "e7e8"],
    );
    let it = search(&b, 8);
    assert_eq!(uci(&it), "g1f3");
    assert_eq!(it.score, 0);
    // Ahead, the other side avoids the same repetition.
    let b = board(
        "4k3/8/8/8/8/8/8/3QK1N1 w - - 0 1",
        &["g1f3", "e8e7", "f3g1", "e7e8"],
    );
    let it = search(&b, 8);
    assert!(it.score > 500, "{}", it.score);
}

/// Two black rooks against a bare king: White's only hope is a repetition.
const ROOKS_UP: &str = "7k/8/6rr/8/8/8/8/K7 w - - 0 1";

#[test]
fn a_threefold_repetition_at_the_horizon_is_a_draw() {
    // Ka1 makes the third occurrence of a position: a draw, seen even by a one-ply search,
    // where the reply is left to the quiescence search.
    let b = board(
        ROOKS_UP,
        &[
            "a1b1", "h8g8", "b1a1", "g8h8", "a1b1", "h8g8", "b1a1", "g8f8", "a1a2", "f8g8",
        ],
    );
    let it = search(&b, 1);
    assert_eq!((uci(&it).as_str(), it.score), ("a2a1", 0));
}

#[test]
fn no_legal_move_means_no_move() {
    let stalemate = board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", &[]);
    assert!(stalemate.pos().legal_moves().is_empty());
    assert!(search(&stalemate, 5).pv.is_empty());
}

#[test]
fn bench_node_count_is_the_same_on_every_run() {
    let first = ferrite::tools::bench::run(6, 1, Evaluation::built_in(), |_| {}).unwrap();
    let second = ferrite::tools::bench::run(6, 1, Evaluation::built_in(), |_| {}).unwrap();
    assert!(first.nodes > 10_000);
    assert_eq!(first.nodes, second.nodes);
}

#[test]
fn multi_threaded_search_plays_legal_moves_with_a_legal_pv() {
    let mut tt = Tt::new(16).unwrap();
    for fen in ferrite::tools::bench::positions().iter().step_by(4) {
        let b = board(fen, &[]);
        let it = search_with(&mut tt, &b, 7, 4);
        let mut pos = b.pos().clone();
        assert!(!it.pv.is_empty(), "{fen}");
        for &mv in &it.pv {
            assert!(pos.is_legal(mv), "{fen}: {mv:?} in pv {:?}", it.pv);
            pos.play_unchecked(mv);
        }
    }
}

#[test]
fn search_memories_outlive_a_search_one_per_thread() {
    use ferrite::search::history::{History, Memory, Surroundings};
    let start = board(STARTPOS, &[]);
    let mut tt = Tt::new(16).unwrap();
    let mut histories: Vec<Memory> = Vec::new();
    let job = Job::fixed_depth(start.clone(), 9, Evaluation::built_in());
    threads::search(&tt, &job, &Shared::new(2), &mut histories, None);
    assert_eq!(histories.len(), 2, "one history per thread");
    let white_scores = |h: &History| -> Vec<i32> {
        start
            .pos()
            .legal_moves()
            .iter()
            .map(|&mv| h.quiet_score(start.turn(), mv, &Surroundings::default()))
            .collect()
    };
    let learned = white_scores(&histories[0].history);
    assert!(
        learned.iter().any(|&s| s != 0),
        "the main thread learned nothing"
    );
    // A one-ply search for Black only rewards Black's moves: White's are carried unchanged.
    tt.clear(1);
    let job = Job::fixed_depth(board(STARTPOS, &["e2e4"]), 1, Evaluation::built_in());
    threads::search(&tt, &job, &Shared::new(1), &mut histories, None);
    assert_eq!(
        histories.len(),
        2,
        "helpers' histories wait for the next search"
    );
    assert_eq!(white_scores(&histories[0].history), learned);
}

#[test]
fn the_pv_ends_where_the_fifty_move_rule_ends_the_game() {
    // Any move of White's makes the hundredth half-move without a capture or pawn move: the
    // game is drawn there and the line must not go on (GUIs and fastchess check this).
    let it = search(&board("8/8/8/4k3/8/8/8/4K2R w - - 99 80", &[]), 8);
    assert_eq!((it.score, it.pv.len()), (0, 1), "{:?}", it.pv);
    // Where the hundredth half-move falls at the horizon, quiescence search now sees the draw
    // too, so its captures and evasions no longer continue the line past it.
    for depth in 1..=4 {
        let it = search(&board("7k/8/8/8/8/8/1n6/R6K w - - 99 80", &[]), depth);
        assert_eq!(
            (it.score, it.pv.len()),
            (0, 1),
            "depth {depth}: {:?}",
            it.pv
        );
    }
}
