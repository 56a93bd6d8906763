//! A shakmaty position with its Zobrist keys kept incrementally (the whole position's, and
//! the pawns' alone), the keys of every position since the game began (for repetitions), and
//! make/unmake for the search.

use arrayvec::ArrayVec;
use shakmaty::{
    attacks,
    fen::Fen,
    uci::UciMove,
    zobrist::{Zobrist64, ZobristValue},
    Bitboard, CastlingMode, CastlingSide, Chess, Color, EnPassantMode, File, Move, Position, Role,
    Square,
};

#[derive(Clone)]
struct Undo {
    pos: Chess,
    in_check: bool,
    key: u64,
    pawn_key: u64,
    ep_file: Option<File>,
    null_barrier: usize,
}

#[derive(Clone)]
pub struct Board {
    pos: Chess,
    /// Whether the side to move is in check, found once when the position is reached (the
    /// search, its move picker and its pruning all ask).
    in_check: bool,
    key: u64,
    /// The Zobrist key of the pawns alone (the pieces' keys of the full key, pawns only).
    pawn_key: u64,
    /// The en passant file hashed into `key` (only when the capture is legal).
    ep_file: Option<File>,
    undo: Vec<Undo>,
    /// Keys of every position from the game's start up to and including the current one.
    keys: Vec<u64>,
    /// Index in `keys` of the position after the last null move: nothing before it can
    /// repeat, since the null move itself is not a legal move.
    null_barrier: usize,
}

fn full_key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The pawns' key of `pos`, computed from nothing.
fn full_pawn_key(pos: &Chess) -> u64 {
    let board = pos.board();
    board.pawns().into_iter().fold(0, |key, sq| {
        let color = board.color_at(sq).expect("a pawn stands there");
        key ^ z_piece(sq, color, Role::Pawn)
    })
}

/// How the pawns' key changes when `us` plays `mv`: the pawns among the placements it
/// changes.
fn pawn_key_change(us: Color, mv: Move) -> u64 {
    Change::of(us, mv).map_or(0, |change| {
        change
            .removed
            .iter()
            .chain(&change.added)
            .filter(|&&(_, role, _)| role == Role::Pawn)
            .fold(0, |key, &(color, role, square)| {
                key ^ z_piece(square, color, role)
            })
    })
}

/// Whether the legal move `mv` gives check, without playing it: the moved (or promoted) piece
/// attacks the king from its target square, or leaving its square uncovers one of our sliders.
/// Castling and en passant, which move two pieces, are played out on a copy.
pub fn gives_check(pos: &Chess, mv: Move) -> bool {
    let Move::Normal {
        role,
        from,
        to,
        promotion,
        ..
    } = mv
    else {
        let mut child = pos.clone();
        child.play_unchecked(mv);
        return child.is_check();
    };
    let board = pos.board();
    let us = pos.turn();
    let Some(king) = board.king_of(!us) else {
        return false;
    };
    let occupied = (board.occupied() ^ from) | to;
    let piece = promotion.unwrap_or(role).of(us);
    if attacks::attacks(to, piece, occupied).contains(king) {
        return true;
    }
    let ours = board.by_color(us) & !Bitboard::from(from) & !Bitboard::from(to);
    let straight = ours & (board.rooks() | board.queens());
    let diagonal = ours & (board.bishops() | board.queens());
    (attacks::rook_attacks(king, occupied) & straight).any()
        || (attacks::bishop_attacks(king, occupied) & diagonal).any()
}

fn z_piece(sq: Square, color: Color, role: Role) -> u64 {
    Zobrist64::zobrist_for_piece(sq, role.of(color)).0
}

/// What was wrong with a FEN or a move given as text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error("malformed FEN: {0}")]
    MalformedFen(String),
    #[error("illegal position: {0}")]
    IllegalPosition(String),
    #[error("malformed move '{0}'")]
    MalformedMove(String),
    #[error("illegal move '{0}'")]
    IllegalMove(String),
}

/// The FEN of each line of an EPD (or plain FEN) text, with its line number from 1: the first
/// four fields, and the move counters where they follow (EPD puts operations there instead).
/// Empty lines and lines starting with `#` are skipped; the FENs are not checked.
pub fn epd_fens(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(number, line)| {
            let fields: Vec<&str> = line
                .split(';')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            if fields.is_empty() || fields[0].starts_with('#') {
                return None;
            }
            let counters = fields
                .iter()
                .skip(4)
                .take(2)
                .take_while(|f| f.parse::<u32>().is_ok())
                .count();
            Some((
                number + 1,
                fields[..fields.len().min(4 + counters)].join(" "),
            ))
        })
        .collect()
}

/// A piece of one colour and role on one square.
pub type Placement = (Color, Role, Square);

/// The pieces a move takes off the board and puts on it (a castling move two of each): what
/// the Zobrist key and the network's accumulators both update by.
pub struct Change {
    pub added: ArrayVec<Placement, 2>,
    pub removed: ArrayVec<Placement, 2>,
}

impl Change {
    /// What `mv`, made by `us`, changes; `None` for a move standard chess does not have.
    pub fn of(us: Color, mv: Move) -> Option<Change> {
        let mut change = Change {
            added: ArrayVec::new(),
            removed: ArrayVec::new(),
        };
        match mv {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => {
                change.removed.push((us, role, from));
                if let Some(victim) = capture {
                    change.removed.push((!us, victim, to));
                }
                change.added.push((us, promotion.unwrap_or(role), to));
            }
            Move::EnPassant { from, to } => {
                change.removed.push((us, Role::Pawn, from));
                change
                    .removed
                    .push((!us, Role::Pawn, Square::from_coords(to.file(), from.rank())));
                change.added.push((us, Role::Pawn, to));
            }
            Move::Castle { king, rook } => {
                let side = if rook > king {
                    CastlingSide::KingSide
                } else {
                    CastlingSide::QueenSide
                };
                change.removed.push((us, Role::King, king));
                change.removed.push((us, Role::Rook, rook));
                change.added.push((us, Role::King, side.king_to(us)));
                change.added.push((us, Role::Rook, side.rook_to(us)));
            }
            Move::Put { .. } => return None,
        }
        Some(change)
    }
}

impl Default for Board {
    fn default() -> Board {
        Board::new(Chess::default())
    }
}

impl Board {
    pub fn new(pos: Chess) -> Board {
        let key = full_key(&pos);
        let pawn_key = full_pawn_key(&pos);
        let ep_file = pos.legal_ep_square().map(|sq| sq.file());
        Board {
            in_check: pos.is_check(),
            pos,
            key,
            pawn_key,
            ep_file,
            undo: Vec::with_capacity(256),
            keys: vec![key],
            null_barrier: 0,
        }
    }

    /// Parses a FEN (X-FEN and Shredder-FEN castling included), refusing illegal positions.
    pub fn from_fen(fen: &str, mode: CastlingMode) -> Result<Board, BoardError> {
        let fen: Fen = fen
            .trim()
            .parse()
            .map_err(|e: shakmaty::fen::ParseFenError| BoardError::MalformedFen(e.to_string()))?;
        let pos: Chess = fen
            .into_position(mode)
            .map_err(|e| BoardError::IllegalPosition(e.to_string()))?;
        Ok(Board::new(pos))
    }

    pub fn pos(&self) -> &Chess {
        &self.pos
    }

    /// The position before the last move the search made, if it made one.
    pub fn parent(&self) -> Option<&Chess> {
        self.undo.last().map(|undo| &undo.pos)
    }

    pub fn key(&self) -> u64 {
        self.key
    }

    pub fn turn(&self) -> Color {
        self.pos.turn()
    }

    pub fn in_check(&self) -> bool {
        self.in_check
    }

    /// Parses a UCI move and plays it if it is legal in this position.
    pub fn play_uci(&mut self, text: &str) -> Result<Move, BoardError> {
        let uci: UciMove = text
            .parse()
            .map_err(|_| BoardError::MalformedMove(text.to_string()))?;
        let mv = uci
            .to_move(&self.pos)
            .map_err(|_| BoardError::IllegalMove(text.to_string()))?;
        self.play(mv);
        Ok(mv)
    }

    /// Plays a legal move as part of the game: it becomes history, not something to unmake.
    pub fn play(&mut self, mv: Move) {
        let key = self.key_after(mv);
        self.make(mv, key);
        self.undo.clear();
    }

    /// The key of the position after the legal move `mv`, without making it: search calls this
    /// to prefetch the child's bucket before making the move.
    pub fn key_after(&self, mv: Move) -> u64 {
        if let Some(key) =
            self.pos
                .update_zobrist_hash(Zobrist64(self.key), mv, EnPassantMode::Legal)
        {
            return key.0;
        }
        self.key_after_general(mv)
    }

    /// The incremental update for what shakmaty leaves to the caller: king and castling moves,
    /// moves that change castling rights, en passant, and positions with an en passant file.
    fn key_after_general(&self, mv: Move) -> u64 {
        let us = self.pos.turn();
        let mut key = self.key ^ Zobrist64::zobrist_for_white_turn().0;
        if let Some(file) = self.ep_file {
            key ^= Zobrist64::zobrist_for_en_passant_file(file).0;
        }
        let Some(change) = Change::of(us, mv) else {
            return self.key_after_slow(mv);
        };
        for &(color, role, square) in change.removed.iter().chain(&change.added) {
            key ^= z_piece(square, color, role);
        }
        if let Move::Normal {
            role: Role::Pawn,
            from,
            to,
            ..
        } = mv
        {
            if from.rank().to_u32().abs_diff(to.rank().to_u32()) == 2 {
                let middle = Square::from_coords(
                    from.file(),
                    shakmaty::Rank::new((from.rank().to_u32() + to.rank().to_u32()) / 2),
                );
                let their_pawns = self.pos.board().by_piece(Role::Pawn.of(!us));
                if (attacks::pawn_attacks(us, middle) & their_pawns).any() {
                    // Whether the en passant capture is legal (pins) needs the child.
                    return self.key_after_slow(mv);
                }
            }
        }
        let castles = self.pos.castles();
        for color in Color::ALL {
            for side in CastlingSide::ALL {
                let Some(rook) = castles.rook(color, side) else {
                    continue;
                };
                let king_moved = color == us && mv.role() == Role::King;
                if king_moved || mv.from() == Some(rook) || mv.to() == rook {
                    key ^= Zobrist64::zobrist_for_castling_right(color, side).0;
                }
            }
        }
        key
    }

    fn key_after_slow(&self, mv: Move) -> u64 {
        let mut child = self.pos.clone();
        child.play_unchecked(mv);
        full_key(&child)
    }

    /// Makes a legal move whose resulting key (from `key_after`) is `key`.
    pub fn make(&mut self, mv: Move, key: u64) {
        self.undo.push(Undo {
            pos: self.pos.clone(),
            in_check: self.in_check,
            key: self.key,
            pawn_key: self.pawn_key,
            ep_file: self.ep_file,
            null_barrier: self.null_barrier,
        });
        self.pawn_key ^= pawn_key_change(self.pos.turn(), mv);
        self.pos.play_unchecked(mv);
        self.in_check = self.pos.is_check();
        self.key = key;
        self.ep_file = self.pos.legal_ep_square().map(|sq| sq.file());
        self.keys.push(key);
        debug_assert_eq!(key, full_key(&self.pos), "incremental key of {mv:?}");
        debug_assert_eq!(
            self.pawn_key,
            full_pawn_key(&self.pos),
            "pawn key of {mv:?}"
        );
    }

    pub fn unmake(&mut self) {
        let undo = self.undo.pop().expect("unmake without make");
        self.pos = undo.pos;
        self.in_check = undo.in_check;
        self.key = undo.key;
        self.pawn_key = undo.pawn_key;
        self.ep_file = undo.ep_file;
        self.null_barrier = undo.null_barrier;
        self.keys.pop();
    }

    /// Passes the move (null-move pruning). Must not be called in check.
    pub fn make_null(&mut self) {
        let mut key = self.key ^ Zobrist64::zobrist_for_white_turn().0;
        if let Some(file) = self.ep_file {
            key ^= Zobrist64::zobrist_for_en_passant_file(file).0;
        }
        let passed = self
            .pos
            .clone()
            .swap_turn()
            .expect("null move is only made when not in check");
        self.undo.push(Undo {
            pos: std::mem::replace(&mut self.pos, passed),
            in_check: std::mem::replace(&mut self.in_check, false),
            key: self.key,
            pawn_key: self.pawn_key,
            ep_file: self.ep_file,
            null_barrier: self.null_barrier,
        });
        self.key = key;
        self.ep_file = None;
        self.keys.push(key);
        self.null_barrier = self.keys.len() - 1;
    }

    /// Whether the current position occurred before within the reach of the fifty-move
    /// counter: the search scores a single repetition as a draw.
    pub fn is_repetition(&self) -> bool {
        self.earlier_occurrences() > 0
    }

    /// How many times the current position occurred earlier within the reach of the
    /// fifty-move counter (two means a threefold repetition, a draw by the rules).
    pub fn earlier_occurrences(&self) -> usize {
        let reach = (self.pos.halfmoves() as usize).min(self.keys.len() - 1 - self.null_barrier);
        let current = self.key;
        self.keys
            .iter()
            .rev()
            .take(reach + 1)
            .skip(4)
            .step_by(2)
            .filter(|&&key| key == current)
            .count()
    }

    /// Whether any position since the last capture or pawn move occurred twice (the
    /// tablebase ranking of root moves then insists on progress).
    pub fn repeated_since_zeroing(&self) -> bool {
        let reach = (self.pos.halfmoves() as usize).min(self.keys.len() - 1 - self.null_barrier);
        let recent = &self.keys[self.keys.len() - 1 - reach..];
        recent
            .iter()
            .enumerate()
            .any(|(i, key)| recent[i + 1..].contains(key))
    }

    /// Draw by the fifty-move rule, repetition or insufficient material (not stalemate).
    pub fn is_draw(&self) -> bool {
        (self.pos.halfmoves() >= 100 && !self.pos.is_checkmate())
            || self.is_repetition()
            || self.pos.is_insufficient_material()
    }

    /// A hash of the pawns alone, which key the correction history: positions that share a
    /// pawn structure tend to share the evaluation's errors.
    pub fn pawn_key(&self) -> u64 {
        self.pawn_key
    }

    /// The squares the side not to move attacks, through the pieces as they stand: where a
    /// piece of the side to move is threatened, and where a quiet move would step into an
    /// attack (the quiet history is kept apart by both).
    pub fn threats(&self) -> Bitboard {
        let board = self.pos.board();
        let theirs = board.by_color(!self.turn());
        let occupied = board.occupied();
        let mut attacked = Bitboard::EMPTY;
        for sq in board.pawns() & theirs {
            attacked |= attacks::pawn_attacks(!self.turn(), sq);
        }
        for sq in board.knights() & theirs {
            attacked |= attacks::knight_attacks(sq);
        }
        for sq in (board.bishops() | board.queens()) & theirs {
            attacked |= attacks::bishop_attacks(sq, occupied);
        }
        for sq in (board.rooks() | board.queens()) & theirs {
            attacked |= attacks::rook_attacks(sq, occupied);
        }
        for sq in board.kings() & theirs {
            attacked |= attacks::king_attacks(sq);
        }
        attacked
    }

    /// Whether the side to move has pieces other than pawns and king (null-move guard).
    pub fn has_non_pawn_material(&self) -> bool {
        let board = self.pos.board();
        let ours = board.by_color(self.turn());
        (ours & !board.pawns() & !board.kings()).any()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epd_lines_give_their_fens_and_line_numbers() {
        let text = "# a comment\n\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n\
                    8/8/8/4k3/8/8/8/4K2R w - - bm Rh8; id \"x\";\n";
        assert_eq!(
            epd_fens(text),
            vec![
                (
                    3,
                    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_string()
                ),
                (4, "8/8/8/4k3/8/8/8/4K2R w - -".to_string()),
            ]
        );
    }

    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Along random games: the incremental keys equal the keys computed from nothing,
    /// `gives_check` agrees with playing each legal move out, and `threats` holds exactly the
    /// squares shakmaty finds an attacker of the side not to move for.
    #[test]
    fn incremental_keys_and_gives_check_hold_on_random_games() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbqkb1r/pp1p1ppp/5n2/2pPp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 4",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        ];
        let mut state = 0x1234_5678_9ABC_DEF1;
        for fen in fens {
            for _ in 0..60 {
                let mut board = Board::from_fen(fen, CastlingMode::Standard).unwrap();
                for _ in 0..80 {
                    let moves = board.pos().legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    for &any in &moves {
                        let mut child = board.pos().clone();
                        child.play_unchecked(any);
                        assert_eq!(gives_check(board.pos(), any), child.is_check(), "{any:?}");
                    }
                    let mv = moves[next(&mut state) as usize % moves.len()];
                    let key = board.key_after(mv);
                    board.make(mv, key);
                    assert_eq!(board.key(), full_key(board.pos()), "after {mv:?}");
                    assert_eq!(board.pawn_key(), full_pawn_key(board.pos()), "after {mv:?}");
                    let b = board.pos().board();
                    let attacked: Bitboard = Square::ALL
                        .into_iter()
                        .filter(|&sq| b.attacks_to(sq, !board.turn(), b.occupied()).any())
                        .collect();
                    assert_eq!(board.threats(), attacked, "after {mv:?}");
                }
            }
        }
    }

    #[test]
    fn unmake_restores_position_and_key() {
        let mut board = Board::default();
        let start = board.key();
        for text in ["e2e4", "d7d5", "e4d5", "g8f6"] {
            let mv = UciMove::from_ascii(text.as_bytes())
                .unwrap()
                .to_move(board.pos())
                .unwrap();
            let key = board.key_after(mv);
            board.make(mv, key);
        }
        for _ in 0..4 {
            board.unmake();
        }
        assert_eq!(board.key(), start);
        assert_eq!(board.pos().board(), Chess::default().board());
    }

    #[test]
    fn repetition_is_seen_after_a_knight_dance() {
        let mut board = Board::default();
        for text in ["g1f3", "g8f6", "f3g1"] {
            board.play_uci(text).unwrap();
            assert!(!board.is_repetition());
        }
        board.play_uci("f6g8").unwrap();
        assert!(board.is_repetition());
    }

    #[test]
    fn no_repetition_is_seen_across_a_null_move() {
        let mut board = Board::default();
        board.play_uci("g1f3").unwrap();
        board.make_null();
        let mv = |board: &Board, text: &str| {
            UciMove::from_ascii(text.as_bytes())
                .unwrap()
                .to_move(board.pos())
                .unwrap()
        };
        // Knight back and forth around a null move would recreate the position after Nf3.
        let m = mv(&board, "f3g1");
        board.make(m, board.key_after(m));
        board.make_null();
        let m = mv(&board, "g1f3");
        board.make(m, board.key_after(m));
        assert!(!board.is_repetition());
    }

    #[test]
    fn null_move_flips_the_side_and_key() {
        let mut board = Board::default();
        board.play_uci("e2e4").unwrap();
        let before = board.key();
        board.make_null();
        assert_eq!(board.turn(), Color::White);
        assert_eq!(board.key(), full_key(board.pos()));
        board.unmake();
        assert_eq!(board.key(), before);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(Board::from_fen("not a fen", CastlingMode::Standard).is_err());
        assert!(Board::from_fen("8/8/8/8/8/8/8/8 w - - 0 1", CastlingMode::Standard).is_err());
        let mut board = Board::default();
        assert!(board.play_uci("e2e5").is_err());
        assert!(board.play_uci("zz").is_err());
        assert_eq!(board.key(), Board::default().key());
    }
}
