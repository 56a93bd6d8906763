//! Legal moves by kind for the picker's stages: the tactical moves (captures and queen
//! promotions) without the quiet ones, and the quiet moves only when their stage comes.
//! shakmaty generates every legal move at once (its capture generator filters that list), so a
//! quiescence node that wants three captures paid for forty moves.
//!
//! Each kind comes out in the order in which it stands in shakmaty's `legal_moves`: the picker
//! breaks ties of its scores by that order, so generating by kind changes no search. Positions
//! in check are left to shakmaty's evasion generator (`legal_moves`); these are for the rest.

use shakmaty::{attacks, Bitboard, CastlingSide, Chess, File, Move, Position, Rank, Role, Square};

/// What decides whether a pseudo-legal move of a position not in check is legal: the king and
/// the pieces that stand alone between it and an enemy slider.
struct Legality {
    king: Square,
    blockers: Bitboard,
}

impl Legality {
    fn of(pos: &Chess) -> Legality {
        let board = pos.board();
        let king = board
            .king_of(pos.turn())
            .expect("a legal position has its king");
        let snipers = (attacks::rook_attacks(king, Bitboard::EMPTY) & board.rooks_and_queens())
            | (attacks::bishop_attacks(king, Bitboard::EMPTY) & board.bishops_and_queens());
        let mut blockers = Bitboard::EMPTY;
        for sniper in snipers & pos.them() {
            let between = attacks::between(king, sniper) & board.occupied();
            if !between.more_than_one() {
                blockers |= between;
            }
        }
        Legality { king, blockers }
    }

    /// Whether a move of a piece other than the king from `from` to `to` keeps the king safe.
    fn allows(&self, from: Square, to: Square) -> bool {
        !self.blockers.contains(from) || attacks::aligned(from, to, self.king)
    }
}

fn normal(role: Role, from: Square, capture: Option<Role>, to: Square) -> Move {
    Move::Normal {
        role,
        from,
        capture,
        to,
        promotion: None,
    }
}

fn promotion(from: Square, to: Square, capture: Option<Role>, role: Role) -> Move {
    Move::Normal {
        role: Role::Pawn,
        from,
        capture,
        to,
        promotion: Some(role),
    }
}

/// The moves of the knights, bishops, rooks and queens to `targets`, in that order, each
/// piece's moves by target square.
fn piece_moves(pos: &Chess, legality: &Legality, targets: Bitboard, out: &mut impl Extend<Move>) {
    let board = pos.board();
    let occupied = board.occupied();
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for from in pos.our(role) {
            let reach = match role {
                Role::Knight => attacks::knight_attacks(from),
                Role::Bishop => attacks::bishop_attacks(from, occupied),
                Role::Rook => attacks::rook_attacks(from, occupied),
                _ => attacks::queen_attacks(from, occupied),
            };
            out.extend(
                (reach & targets)
                    .into_iter()
                    .filter(|&to| legality.allows(from, to))
                    .map(|to| normal(role, from, board.role_at(to), to)),
            );
        }
    }
}

/// The king's moves to `targets` on squares the opponent does not attack.
fn king_moves(pos: &Chess, legality: &Legality, targets: Bitboard, out: &mut impl Extend<Move>) {
    let board = pos.board();
    let king = legality.king;
    out.extend(
        (attacks::king_attacks(king) & targets)
            .into_iter()
            .filter(|&to| {
                board
                    .attacks_to(to, !pos.turn(), board.occupied())
                    .is_empty()
            })
            .map(|to| normal(Role::King, king, board.role_at(to), to)),
    );
}

/// The squares the pawns of the side to move reach by one step forward, and the step.
fn pawn_pushes(pos: &Chess) -> (Bitboard, i32) {
    let step = pos.turn().fold_wb(8, -8);
    let pushed = pos.our(Role::Pawn).shift(step) & !pos.board().occupied();
    (pushed, step)
}

/// The captures (en passant first, then pawns, pieces and king) and then the queen promotions
/// by a push, of a position not in check.
pub fn tactical_moves(pos: &Chess, out: &mut impl Extend<Move>) {
    debug_assert!(!pos.is_check(), "evasions come from legal_moves");
    let legality = Legality::of(pos);
    let board = pos.board();
    if pos.maybe_ep_square().is_some() {
        out.extend(pos.en_passant_moves().iter().copied());
    }
    // Pawn captures towards the a-file, then towards the h-file, each to the other ranks
    // before the back rank (where each capture is four promotions).
    let pawns = pos.our(Role::Pawn);
    let them = pos.them();
    let (west, east) = pos.turn().fold_wb((7, 9), (-9, -7));
    for (offset, edge) in [(west, File::A), (east, File::H)] {
        let targets = (pawns & !Bitboard::from_file(edge)).shift(offset) & them;
        let legal = |&to: &Square| legality.allows(to.offset(-offset).expect("on the board"), to);
        for to in (targets & !Bitboard::BACKRANKS).into_iter().filter(legal) {
            let from = to.offset(-offset).expect("on the board");
            out.extend([normal(Role::Pawn, from, board.role_at(to), to)]);
        }
        for to in (targets & Bitboard::BACKRANKS).into_iter().filter(legal) {
            let from = to.offset(-offset).expect("on the board");
            let capture = board.role_at(to);
            out.extend(
                [Role::Queen, Role::Rook, Role::Bishop, Role::Knight]
                    .map(|role| promotion(from, to, capture, role)),
            );
        }
    }
    piece_moves(pos, &legality, them, out);
    king_moves(pos, &legality, them, out);
    let (pushed, step) = pawn_pushes(pos);
    for to in pushed & Bitboard::BACKRANKS {
        let from = to.offset(-step).expect("on the board");
        if legality.allows(from, to) {
            out.extend([promotion(from, to, None, Role::Queen)]);
        }
    }
}

/// The quiet moves of a position not in check: pawn pushes (underpromotions by a push among
/// them), then pieces, king and castling.
pub fn quiet_moves(pos: &Chess, out: &mut impl Extend<Move>) {
    debug_assert!(!pos.is_check(), "evasions come from legal_moves");
    let legality = Legality::of(pos);
    let (pushed, step) = pawn_pushes(pos);
    let from_of = |to: Square, step: i32| to.offset(-step).expect("on the board");
    for to in pushed & !Bitboard::BACKRANKS {
        let from = from_of(to, step);
        if legality.allows(from, to) {
            out.extend([normal(Role::Pawn, from, None, to)]);
        }
    }
    for to in pushed & Bitboard::BACKRANKS {
        let from = from_of(to, step);
        if legality.allows(from, to) {
            out.extend(
                [Role::Rook, Role::Bishop, Role::Knight]
                    .map(|role| promotion(from, to, None, role)),
            );
        }
    }
    let double_rank = pos.turn().fold_wb(Rank::Fourth, Rank::Fifth);
    let doubled = pushed.shift(step) & Bitboard::from_rank(double_rank) & !pos.board().occupied();
    for to in doubled {
        let from = from_of(to, 2 * step);
        if legality.allows(from, to) {
            out.extend([normal(Role::Pawn, from, None, to)]);
        }
    }
    let empty = !pos.board().occupied();
    piece_moves(pos, &legality, empty, out);
    king_moves(pos, &legality, empty, out);
    for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
        if pos.castles().has(pos.turn(), side) {
            out.extend(pos.castling_moves(side).iter().copied());
        }
    }
}

/// Whether `mv` is a legal move of `pos` (`in_check` says whether its side to move is in
/// check): a move from elsewhere (a killer, a counter-move, a decoded table move). An ordinary
/// piece move of a position not in check is checked here on the board; en passant, castling
/// and every move in check are asked of shakmaty.
pub fn is_legal(pos: &Chess, in_check: bool, mv: Move) -> bool {
    let Move::Normal {
        role,
        from,
        capture,
        to,
        promotion,
    } = mv
    else {
        return pos.is_legal(mv);
    };
    if in_check {
        return pos.is_legal(mv);
    }
    let board = pos.board();
    let us = pos.turn();
    if board.piece_at(from) != Some(role.of(us))
        || board.role_at(to) != capture
        || pos.us().contains(to)
        || capture == Some(Role::King)
    {
        return false;
    }
    let occupied = board.occupied();
    let promotes = matches!(
        promotion,
        Some(Role::Queen | Role::Rook | Role::Bishop | Role::Knight)
    );
    let reaches = match role {
        Role::Pawn => {
            let step = us.fold_wb(8, -8);
            let one = from.offset(step);
            let moves_there = if capture.is_some() {
                attacks::pawn_attacks(us, from).contains(to)
            } else {
                one == Some(to)
                    || (from.rank() == us.fold_wb(Rank::Second, Rank::Seventh)
                        && from.offset(2 * step) == Some(to)
                        && one.is_some_and(|sq| !occupied.contains(sq)))
            };
            moves_there
                && (promotes == Bitboard::BACKRANKS.contains(to))
                && (promotes || promotion.is_none())
        }
        Role::King => {
            return promotion.is_none()
                && attacks::king_attacks(from).contains(to)
                && board.attacks_to(to, !us, occupied).is_empty();
        }
        _ => promotion.is_none() && attacks::attacks(from, role.of(us), occupied).contains(to),
    };
    reaches && Legality::of(pos).allows(from, to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::movepick::is_tactical;
    use shakmaty::{fen::Fen, CastlingMode};

    fn position(fen: &str, mode: CastlingMode) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(mode).unwrap()
    }

    /// Every position of a few random games from each start, and some built to test pins,
    /// en passant, promotions and castling: each kind equals shakmaty's legal moves of that
    /// kind in the same order.
    #[test]
    fn each_kind_is_the_legal_moves_of_that_kind_in_shakmatys_order() {
        let starts = [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                CastlingMode::Standard,
            ),
            (
                "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
                CastlingMode::Standard,
            ),
            // En passant that would expose the king along the rank; pinned pawns.
            ("8/8/8/KPp4r/8/8/8/7k w - c6 0 2", CastlingMode::Standard),
            ("4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 2", CastlingMode::Standard),
            // Promotions by capture and by push, for both sides.
            (
                "1n2k1n1/P1P3P1/8/8/8/8/p1p3p1/1N2K1N1 w - - 0 1",
                CastlingMode::Standard,
            ),
            (
                "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
                CastlingMode::Chess960,
            ),
        ];
        let mut rng = crate::rng::SplitMix64::new(7);
        let mut checked = 0;
        for (fen, mode) in starts {
            for _game in 0..6 {
                let mut pos = position(fen, mode);
                for _ply in 0..80 {
                    let legal = pos.legal_moves();
                    if legal.is_empty() {
                        break;
                    }
                    if !pos.is_check() {
                        let mut tactical = Vec::new();
                        tactical_moves(&pos, &mut tactical);
                        let captures = legal.iter().filter(|m| m.is_capture());
                        let pushes = legal
                            .iter()
                            .filter(|m| !m.is_capture() && m.promotion() == Some(Role::Queen));
                        let expected: Vec<Move> = captures.chain(pushes).copied().collect();
                        assert_eq!(
                            tactical,
                            expected,
                            "{}",
                            Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
                        );
                        let mut quiet = Vec::new();
                        quiet_moves(&pos, &mut quiet);
                        let expected: Vec<Move> =
                            legal.iter().copied().filter(|&m| !is_tactical(m)).collect();
                        assert_eq!(
                            quiet,
                            expected,
                            "{}",
                            Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
                        );
                        checked += 1;
                    }
                    let pick = legal[rng.below(legal.len())];
                    pos.play_unchecked(pick);
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }
    /// The moves of other positions (as killers and table moves arrive) are legal here exactly
    /// when shakmaty says so.
    #[test]
    fn is_legal_agrees_with_shakmaty_on_moves_from_other_positions() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            "8/8/8/KPp4r/8/8/8/7k w - c6 0 2",
            "1n2k1n1/P1P3P1/8/8/8/8/p1p3p1/1N2K1N1 w - - 0 1",
            "1n2k1n1/P1P3P1/8/8/8/8/p1p3p1/1N2K1N1 b - - 0 1",
            "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",
        ];
        let positions: Vec<Chess> = fens
            .iter()
            .map(|fen| position(fen, CastlingMode::Standard))
            .collect();
        let mut rng = crate::rng::SplitMix64::new(11);
        let mut pool: Vec<Move> = Vec::new();
        for start in &positions {
            let mut pos = start.clone();
            for _ in 0..40 {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                pool.extend(legal.iter().copied());
                pos.play_unchecked(legal[rng.below(legal.len())]);
            }
        }
        let mut legal_found = 0;
        for pos in &positions {
            for &mv in &pool {
                assert_eq!(
                    is_legal(pos, pos.is_check(), mv),
                    pos.is_legal(mv),
                    "{mv:?} in {}",
                    Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
                );
                legal_found += usize::from(pos.is_legal(mv));
            }
        }
        assert!(legal_found > 100, "{legal_found}");
    }
}
