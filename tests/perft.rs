//! Perft of the six standard positions of the Chess Programming Wiki's "Perft Results" page
//! (published counts), at depths that take well under a second each.

use ferrite::{board::Board, tools::perft::perft};
use shakmaty::CastlingMode;

fn count(fen: &str, depth: u32) -> u64 {
    perft(
        Board::from_fen(fen, CastlingMode::Standard).unwrap().pos(),
        depth,
    )
}

#[test]
fn start_position() {
    let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    assert_eq!(count(fen, 1), 20);
    assert_eq!(count(fen, 3), 8_902);
    assert_eq!(count(fen, 5), 4_865_609);
}

#[test]
fn kiwipete() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    assert_eq!(count(fen, 1), 48);
    assert_eq!(count(fen, 3), 97_862);
    assert_eq!(count(fen, 4), 4_085_603);
}

#[test]
fn position_3_en_passant_and_checks() {
    let fen = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1";
    assert_eq!(count(fen, 5), 674_624);
}

#[test]
fn position_4_castling_and_promotions() {
    let fen = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1";
    assert_eq!(count(fen, 4), 422_333);
    let mirrored = "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1";
    assert_eq!(count(mirrored, 4), 422_333);
}

#[test]
fn position_5() {
    let fen = "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8";
    assert_eq!(count(fen, 4), 2_103_487);
}

#[test]
fn position_6() {
    let fen = "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10";
    assert_eq!(count(fen, 4), 3_894_594);
}
