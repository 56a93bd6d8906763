//! Training data as the trainer and `ferrite-lab check` read it: the games of datagen's
//! viriformat files (`.vf`) and of text files (`FEN | score | result | move`, White's view,
//! one line a searched position, as `../shared/data/` keeps the hand-crafted era's games).
//!
//! Every game is known by a hash of its start position and its moves, so a game that reaches
//! the pile twice (a seed reused with a build that searches alike replays its games byte for
//! byte) is counted and read once. The same hash puts each game wholly in the training or the
//! validation set.

use crate::datagen::read_games;
use bulletformat::ChessBoard;
use ferrite::rng::mix;
use ferrite::types::DECISIVE;
use shakmaty::{fen::Fen, uci::UciMove, CastlingMode, Chess, Color, EnPassantMode, Position};
use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Which positions are worth training on.
#[derive(Clone, Copy, Debug)]
pub struct Filter {
    /// Positions before this ply of the game (counted from the initial position) are dropped.
    pub min_ply: u32,
}

impl Filter {
    /// Positions in check, whose best move is a capture or a promotion, or with a mate
    /// score say little about a quiet evaluation: they are dropped, as are the first plies.
    pub fn keeps(&self, in_check: bool, tactical: bool, white_score: i32, ply: u32) -> bool {
        !in_check
            && !tactical
            && white_score.abs() < DECISIVE.min(i32::from(i16::MAX))
            && ply >= self.min_ply
    }
}

/// Why a data file could not be read at all (damage inside a file is reported, not fatal).
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("cannot open {}", .0.display())]
    Open(PathBuf, #[source] std::io::Error),
    #[error("cannot read {}", .0.display())]
    Read(PathBuf, #[source] std::io::Error),
    #[error("cannot write")]
    Write(#[source] std::io::Error),
}

/// What reading one file found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FileReport {
    pub games: u64,
    pub positions: u64,
    /// Games already read (from this file or an earlier one), skipped.
    pub duplicate_games: u64,
    /// Positions of the games read once that the filter keeps.
    pub kept: u64,
    /// Damaged tails and malformed lines.
    pub problems: Vec<String>,
}

/// The positions of every game read so far, split into training and validation by game.
#[derive(Default)]
pub struct Pile {
    pub train: Vec<ChessBoard>,
    pub validation: Vec<ChessBoard>,
    seen: HashSet<u64>,
    /// Validation games per 1024.
    validation_share: u64,
    salt: u64,
}

/// A game as the pile takes it: its identity and its kept positions.
struct GameRead {
    hash: u64,
    positions: u64,
    kept: Vec<ChessBoard>,
}

/// Accumulates a game's identity from its start position and moves.
struct GameHash(u64);

impl GameHash {
    fn new(start: &str) -> GameHash {
        let mut hash = GameHash(0x6A09_E667_F3BC_C908);
        for chunk in start.as_bytes().chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            hash.add(u64::from_le_bytes(word));
        }
        hash
    }

    fn add(&mut self, value: u64) {
        self.0 = mix(self.0 ^ value).wrapping_add(0x9E37_79B9_7F4A_7C15);
    }
}

/// The start position's identity: placement, side, castling and en passant (not the clocks,
/// which the two formats write differently).
fn start_key(pos: &Chess) -> String {
    let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
    fen.split(' ').take(4).collect::<Vec<_>>().join(" ")
}

impl Pile {
    /// A pile that holds out about `validation` of the games (at most a half), chosen by
    /// their hashes and `seed`.
    pub fn new(validation: f64, seed: u64) -> Pile {
        Pile {
            validation_share: (validation.clamp(0.0, 0.5) * 1024.0).round() as u64,
            salt: mix(seed ^ 0x9FB2_1C65_1E98_DF25),
            ..Pile::default()
        }
    }

    /// Games seen so far, duplicates not counted.
    pub fn games(&self) -> usize {
        self.seen.len()
    }

    /// Takes a game of a text file once it has ended, its hash complete.
    fn take_open(&mut self, game: Option<(GameRead, GameHash, Chess)>, report: &mut FileReport) {
        if let Some((read, hash, _)) = game {
            self.take(
                GameRead {
                    hash: hash.0,
                    ..read
                },
                report,
            );
        }
    }

    fn take(&mut self, game: GameRead, report: &mut FileReport) {
        report.games += 1;
        report.positions += game.positions;
        if !self.seen.insert(game.hash) {
            report.duplicate_games += 1;
            return;
        }
        report.kept += game.kept.len() as u64;
        if mix(game.hash ^ self.salt) % 1024 < self.validation_share {
            self.validation.extend(game.kept);
        } else {
            self.train.extend(game.kept);
        }
    }

    /// Reads the games of a data file into the pile: viriformat (`.vf`, from `ferrite
    /// datagen`) or text lines `FEN | score | result | move`.
    pub fn load(&mut self, path: &Path, filter: Filter) -> Result<FileReport, DataError> {
        let file = std::fs::File::open(path).map_err(|e| DataError::Open(path.into(), e))?;
        let reader = BufReader::new(file);
        let mut report = FileReport::default();
        let read = if path.extension().is_some_and(|e| e == "vf") {
            self.load_games(reader, filter, &mut report)
        } else {
            self.load_text(reader, filter, &mut report)
        };
        read.map_err(|e| DataError::Read(path.into(), e))?;
        Ok(report)
    }

    fn load_games(
        &mut self,
        reader: impl BufRead,
        filter: Filter,
        report: &mut FileReport,
    ) -> std::io::Result<()> {
        let mut failure = None;
        let read = read_games(reader, |game| {
            let start = game.initial_position();
            let mut hash = GameHash::new(
                &start
                    .to_string()
                    .split(' ')
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            for mv in game.moves() {
                hash.add(u64::from(mv.inner()));
            }
            let mut kept = Vec::new();
            let splat = game.splat_to_bulletformat_with_filter_callback(
                |board| {
                    kept.push(board);
                    Ok(())
                },
                |mv, score, board, _, _| {
                    let ply = board.ply() as u32;
                    !filter.keeps(board.in_check(), board.is_tactical(mv), score, ply)
                },
            );
            if let Err(err) = splat {
                failure.get_or_insert(err.to_string());
            }
            let game = GameRead {
                hash: hash.0,
                positions: game.len() as u64,
                kept,
            };
            self.take(game, report);
        })?;
        report.problems.extend(failure);
        if let Some(tail) = read.damaged_tail {
            report
                .problems
                .push(format!("damaged tail skipped ({tail})"));
        }
        Ok(())
    }

    /// Text lines are grouped into games by continuity: a line whose position is the one the
    /// previous line's move leads to continues that game.
    fn load_text(
        &mut self,
        reader: impl BufRead,
        filter: Filter,
        report: &mut FileReport,
    ) -> std::io::Result<()> {
        let mut skipped = 0usize;
        let mut game: Option<(GameRead, GameHash, Chess)> = None;
        for (number, line) in reader.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let parsed = match TextLine::parse(&line) {
                Ok(parsed) => parsed,
                Err(err) => {
                    skipped += 1;
                    if report.problems.len() < 10 {
                        report.problems.push(format!("line {}: {err}", number + 1));
                    }
                    continue;
                }
            };
            let continues = game.as_ref().is_some_and(|(_, _, next)| {
                next.board() == parsed.pos.board()
                    && next.turn() == parsed.pos.turn()
                    && next.castles().castling_rights() == parsed.pos.castles().castling_rights()
            });
            if !continues {
                self.take_open(game.take(), report);
                let read = GameRead {
                    hash: 0,
                    positions: 0,
                    kept: Vec::new(),
                };
                game = Some((
                    read,
                    GameHash::new(&start_key(&parsed.pos)),
                    parsed.pos.clone(),
                ));
            }
            let (read, hash, next) = game.as_mut().expect("a game is open");
            read.positions += 1;
            hash.add(u64::from(parsed.move_code));
            if let Some(board) = parsed.training_board(filter) {
                read.kept.push(board);
            }
            *next = parsed.pos;
            next.play_unchecked(parsed.mv);
        }
        self.take_open(game.take(), report);
        if skipped > report.problems.len() {
            report
                .problems
                .push(format!("{skipped} malformed lines skipped in all"));
        }
        Ok(())
    }
}

/// One line of a text data file: a position, its search score and game result from White's
/// side, and the move played.
pub struct TextLine {
    pub pos: Chess,
    pub white_score: i32,
    pub white_result: f32,
    pub mv: shakmaty::Move,
    /// The move as from, to and promotion, for the game's hash.
    move_code: u16,
}

/// What was wrong with a line of a text data file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("expected 'FEN | score | result | move'")]
    Fields,
    #[error("{0}")]
    Fen(String),
    #[error("bad score '{0}'")]
    Score(String),
    #[error("bad result '{0}'")]
    Result(String),
    #[error("bad move '{0}'")]
    Move(String),
    #[error("illegal move '{0}'")]
    IllegalMove(String),
}

impl TextLine {
    pub fn parse(line: &str) -> Result<TextLine, LineError> {
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        let [fen, score, result, mv] = fields[..] else {
            return Err(LineError::Fields);
        };
        let pos: Chess = fen
            .parse::<Fen>()
            .map_err(|e| LineError::Fen(e.to_string()))?
            .into_position(CastlingMode::Standard)
            .map_err(|e| LineError::Fen(e.to_string()))?;
        let white_score: i32 = score
            .parse()
            .map_err(|_| LineError::Score(score.to_string()))?;
        let white_result: f32 = match result {
            "1.0" | "1" => 1.0,
            "0.5" => 0.5,
            "0.0" | "0" => 0.0,
            _ => return Err(LineError::Result(result.to_string())),
        };
        let uci = mv
            .parse::<UciMove>()
            .map_err(|_| LineError::Move(mv.to_string()))?;
        let mv = uci
            .to_move(&pos)
            .map_err(|_| LineError::IllegalMove(mv.to_string()))?;
        let move_code = ferrite::types::encode_move(mv);
        Ok(TextLine {
            pos,
            white_score,
            white_result,
            mv,
            move_code,
        })
    }

    /// Whether the filter keeps this position.
    pub fn kept_by(&self, filter: Filter) -> bool {
        let pos = &self.pos;
        let ply = 2 * (u32::from(pos.fullmoves()) - 1) + u32::from(pos.turn() == Color::Black);
        let tactical = self.mv.is_capture() || self.mv.is_promotion();
        filter.keeps(pos.is_check(), tactical, self.white_score, ply)
    }

    fn training_board(&self, filter: Filter) -> Option<ChessBoard> {
        if !self.kept_by(filter) {
            return None;
        }
        let pos = &self.pos;
        let score = self
            .white_score
            .clamp(-i32::from(i16::MAX), i32::from(i16::MAX)) as i16;
        training_board(pos, score, self.white_result).ok()
    }
}

/// A position in bulletformat's board, from the side to move, with White's score and result.
pub fn training_board(
    pos: &Chess,
    white_score: i16,
    white_result: f32,
) -> Result<ChessBoard, String> {
    let board = pos.board();
    let bbs = [
        board.white().0,
        board.black().0,
        board.pawns().0,
        board.knights().0,
        board.bishops().0,
        board.rooks().0,
        board.queens().0,
        board.kings().0,
    ];
    ChessBoard::from_raw(
        bbs,
        usize::from(pos.turn() == Color::Black),
        white_score,
        white_result,
    )
}

/// Writes every position of the viriformat games in `path` as a text line `FEN | score |
/// result | move` (White's view, the move in UCI), the format of `../shared/data/`'s text files
/// and of `scripts/fit_wdl.py`'s input: `ferrite-lab export`.
pub fn export_text(path: &Path, out: &mut impl std::io::Write) -> Result<FileReport, DataError> {
    let file = std::fs::File::open(path).map_err(|e| DataError::Open(path.into(), e))?;
    let mut report = FileReport::default();
    let mut failure = None;
    let read = read_games(BufReader::new(file), |game| {
        report.games += 1;
        let result = match game.outcome() {
            viriformat::dataformat::WDL::Win => "1.0",
            viriformat::dataformat::WDL::Draw => "0.5",
            viriformat::dataformat::WDL::Loss => "0.0",
        };
        let mut board = game.initial_position();
        for (mv, score) in &game.moves {
            report.positions += 1;
            if failure.is_none() {
                let line = writeln!(
                    out,
                    "{board} | {} | {result} | {}",
                    score.get(),
                    mv.display(false)
                );
                failure = line.err();
            }
            board.make_move_simple(*mv);
        }
    })
    .map_err(|e| DataError::Read(path.into(), e))?;
    if let Some(err) = failure {
        return Err(DataError::Write(err));
    }
    if let Some(tail) = read.damaged_tail {
        report
            .problems
            .push(format!("damaged tail skipped ({tail})"));
    }
    Ok(report)
}

/// The scale K at which scores (side to move, centipawns) best predict results (0 to 1): the
/// least squared error of sigmoid(score / K) against the result, by golden-section search
/// over 50..2000 (the error is unimodal in K).
pub fn fit_scale(scores_and_results: &[(f32, f32)]) -> f32 {
    let error = |k: f64| -> f64 {
        let total: f64 = scores_and_results
            .iter()
            .map(|&(score, result)| {
                let predicted = 1.0 / (1.0 + (-f64::from(score) / k).exp());
                (predicted - f64::from(result)).powi(2)
            })
            .sum();
        total / scores_and_results.len().max(1) as f64
    };
    let (mut lo, mut hi) = (50.0f64, 2000.0f64);
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..50 {
        let a = hi - ratio * (hi - lo);
        let b = lo + ratio * (hi - lo);
        if error(a) < error(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    ((lo + hi) / 2.0) as f32
}

/// The scores and results of training boards, from the side to move, for `fit_scale`.
pub fn scores_and_results(boards: &[ChessBoard]) -> Vec<(f32, f32)> {
    boards
        .iter()
        .map(|b| (f32::from(b.score), f32::from(b.result) / 2.0))
        .collect()
}

/// Reads `paths` into one pile and prints, for each file and in all, the games, positions,
/// duplicate games and kept positions: `ferrite-lab check`.
pub fn check(
    paths: &[PathBuf],
    filter: Filter,
    mut out: impl FnMut(&str),
) -> Result<u64, DataError> {
    let mut pile = Pile::new(0.0, 0);
    let mut total = FileReport::default();
    for path in paths {
        let report = pile.load(path, filter)?;
        out(&describe(path, &report));
        for problem in &report.problems {
            out(&format!("{}: {problem}", path.display()));
        }
        total.games += report.games;
        total.positions += report.positions;
        total.duplicate_games += report.duplicate_games;
        total.kept += report.kept;
    }
    out(&format!(
        "in all: {} games, {} positions, {} duplicate games, {} positions kept by the filter",
        total.games, total.positions, total.duplicate_games, total.kept
    ));
    if !pile.train.is_empty() {
        out(&format!(
            "scale K of the kept positions' scores against their results: {:.1}",
            fit_scale(&scores_and_results(&pile.train))
        ));
    }
    Ok(total.duplicate_games)
}

/// `ferrite-lab check`'s arguments.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// Data files: viriformat (.vf) or text lines `FEN | score | result | move`.
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// Positions before this ply of their game are not counted as kept.
    #[arg(long, default_value_t = 16)]
    min_ply: u32,
}

/// `ferrite-lab check`: the games, positions, duplicates and kept positions of each file and
/// of all of them, and the scale K of their scores.
pub fn check_command(args: CheckArgs) -> Result<(), DataError> {
    let filter = Filter {
        min_ply: args.min_ply,
    };
    check(&args.files, filter, |line| println!("{line}"))?;
    Ok(())
}

/// `ferrite-lab export`'s arguments.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Viriformat files (.vf).
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
}

/// `ferrite-lab export`: every position of the files on stdout as a text line; a damaged
/// game is reported on stderr.
pub fn export_command(args: ExportArgs) -> Result<(), DataError> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for path in &args.files {
        let report = export_text(path, &mut out)?;
        for problem in &report.problems {
            eprintln!("{}: {problem}", path.display());
        }
    }
    std::io::Write::flush(&mut out).map_err(DataError::Write)
}

/// One line about a file's report.
pub fn describe(path: &Path, report: &FileReport) -> String {
    format!(
        "{}: {} games, {} positions, {} duplicate games, {} positions kept",
        path.display(),
        report.games,
        report.positions,
        report.duplicate_games,
        report.kept
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(pile: &mut Pile, text: &str) -> FileReport {
        let mut report = FileReport::default();
        pile.load_text(text.as_bytes(), Filter { min_ply: 0 }, &mut report)
            .unwrap();
        report
    }

    const GAME: &str = "\
r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3 | 30 | 1.0 | f1c4
r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3 | 35 | 1.0 | g8f6
r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4 | 40 | 1.0 | e1g1
";

    #[test]
    fn text_lines_are_grouped_into_games_and_a_repeated_game_is_read_once() {
        let mut pile = Pile::new(0.0, 1);
        let first = read_text(&mut pile, GAME);
        assert_eq!((first.games, first.positions, first.kept), (1, 3, 3));
        // The same game again, then a game from another start.
        let other = "8/5k2/8/8/8/3Q4/2K5/8 w - - 0 40 | 900 | 1.0 | d3d5\n";
        let again = read_text(&mut pile, &format!("{GAME}{other}"));
        assert_eq!(again.games, 2);
        assert_eq!(again.duplicate_games, 1);
        assert_eq!(again.kept, 1);
        assert_eq!(pile.train.len(), 4);
        assert_eq!(pile.games(), 2);
    }

    #[test]
    fn text_lines_are_filtered_and_read_from_the_side_to_move() {
        let line = TextLine::parse(
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3 | 35 | 1.0 | g8f6",
        )
        .unwrap();
        let board = line.training_board(Filter { min_ply: 0 }).unwrap();
        assert_eq!(
            (board.score, board.result),
            (-35, 0),
            "Black to move: White's +35 and win"
        );
        assert_eq!(line.training_board(Filter { min_ply: 16 }), None);
        let capture = TextLine::parse(
            "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 | 20 | 0.5 | e4d5",
        )
        .unwrap();
        assert_eq!(capture.training_board(Filter { min_ply: 0 }), None);
        assert!(TextLine::parse("not a line").is_err());
        assert!(TextLine::parse("8/8/8/8/8/8/8/8 w - - 0 1 | 0 | 0.5 | e2e4").is_err());
    }

    #[test]
    fn malformed_lines_are_reported_and_skipped() {
        let mut pile = Pile::new(0.0, 1);
        let report = read_text(&mut pile, &format!("garbage\n{GAME}"));
        assert_eq!(report.games, 1);
        assert_eq!(report.problems.len(), 1);
        assert!(
            report.problems[0].starts_with("line 1:"),
            "{:?}",
            report.problems
        );
    }

    #[test]
    fn exported_games_read_back_as_the_same_games() {
        let dir = std::env::temp_dir().join(format!("ferrite-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut player =
            ferrite::tools::selfplay::Player::new(300, 1200, ferrite::eval::Evaluation::built_in())
                .unwrap();
        let mut rng = ferrite::rng::SplitMix64::new(4);
        let mut bytes = Vec::new();
        let mut games = 0;
        while games < 2 {
            if let Some(game) = player.play(&mut rng, &[], 8) {
                bytes.extend(crate::datagen::encode(&game).unwrap());
                games += 1;
            }
        }
        let vf = dir.join("games.vf");
        std::fs::write(&vf, &bytes).unwrap();
        let mut text = Vec::new();
        let exported = export_text(&vf, &mut text).unwrap();
        let txt = dir.join("games.txt");
        std::fs::write(&txt, &text).unwrap();
        let filter = Filter { min_ply: 0 };
        let (mut from_vf, mut from_text) = (Pile::new(0.0, 1), Pile::new(0.0, 1));
        let a = from_vf.load(&vf, filter).unwrap();
        let b = from_text.load(&txt, filter).unwrap();
        assert_eq!(exported.positions, a.positions);
        assert_eq!(
            (a.games, a.positions, a.kept),
            (b.games, b.positions, b.kept)
        );
        assert_eq!(from_vf.train, from_text.train);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn validation_takes_whole_games_by_their_hash() {
        let mut pile = Pile::new(0.5, 3);
        let mut text = String::new();
        // Forty games of one position each: the same start, different moves.
        let moves = [
            "d3d4", "d3d5", "d3d6", "d3e4", "d3f5", "d3e3", "d3f3", "d3g3",
        ];
        for m in moves {
            for k in ["40", "41", "42", "43", "44"] {
                text.push_str(&format!(
                    "8/5k2/8/8/8/3Q4/2K5/8 w - - 0 {k} | 900 | 1.0 | {m}\n"
                ));
            }
        }
        let report = read_text(&mut pile, &text);
        // The move counters are not part of a game's identity: eight games, not forty.
        assert_eq!((report.games, report.duplicate_games), (40, 32));
        assert_eq!(pile.train.len() + pile.validation.len(), 8);
        assert!(!pile.train.is_empty() && !pile.validation.is_empty());
    }
}
