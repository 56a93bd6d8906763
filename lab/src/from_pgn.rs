//! `ferrite-lab from-pgn`: games played elsewhere (fastchess on OpenBench workers) to the
//! viriformat files `ferrite-lab datagen` writes. Each move's score is read from the comment the
//! tournament manager wrote after it, `{+0.25/12 ...}` (fastchess) or `{+0.25/12, line=...}`
//! (OpenBench's compacted upload): pawns, or `+M5`/`-M4` for a mate in that many plies, from
//! the side to move's view. Moves marked `{book}` lead to the recorded start. A game that
//! cannot be read whole is skipped with the reason, never written with a guessed score.

use crate::datagen::{encode, DatagenError};
use ferrite::tools::pgn::{self, PgnGame};
use ferrite::tools::selfplay::GameRecord;
use ferrite::types::{MATE, MAX_PLY};
use shakmaty::{Color, EnPassantMode};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a conversion wrote and what it skipped.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Converted {
    pub games: u64,
    pub positions: u64,
    /// One line per skipped game: where it is and why.
    pub skipped: Vec<String>,
}

/// A score comment's score for the side to move, in centipawns (mates as `MATE - plies`).
fn comment_score(comment: &str) -> Result<i32, String> {
    let first = comment
        .split(|c: char| c.is_whitespace() || c == ',')
        .next()
        .unwrap_or("");
    let Some((score, depth)) = first.split_once('/') else {
        return Err(format!("no score in the comment {{{comment}}}"));
    };
    if depth.parse::<u32>().is_err() {
        return Err(format!("no depth in the comment {{{comment}}}"));
    }
    let (sign, magnitude) = match score.as_bytes().first() {
        Some(b'-') => (-1, &score[1..]),
        Some(b'+') => (1, &score[1..]),
        _ => (1, score),
    };
    if let Some(plies) = magnitude.strip_prefix('M') {
        let plies: i32 = plies
            .parse()
            .ok()
            .filter(|&p| (0..MAX_PLY).contains(&p))
            .ok_or_else(|| format!("a mate score out of reach in {{{comment}}}"))?;
        return Ok(sign * (MATE - plies));
    }
    let pawns: f64 = magnitude
        .parse()
        .ok()
        .filter(|p: &f64| p.is_finite() && *p < 300.0)
        .ok_or_else(|| format!("no score in the comment {{{comment}}}"))?;
    Ok(sign * (pawns * 100.0).round() as i32)
}

/// The game as `ferrite-lab datagen` records it, or why it cannot be.
pub fn record(game: &PgnGame) -> Result<GameRecord, String> {
    if let Some(variant) = game.tag("Variant") {
        if !variant.eq_ignore_ascii_case("standard") {
            return Err(format!(
                "variant '{variant}' (only standard chess is written)"
            ));
        }
    }
    let mut board = game.start()?;
    let result = match (game.tag("Result"), game.termination.as_deref()) {
        (Some(tag), Some(end)) if tag != end => {
            return Err(format!(
                "the Result tag {tag} and the game's end {end} disagree"
            ))
        }
        (Some(result), _) | (None, Some(result)) => result,
        (None, None) => return Err("no result".to_string()),
    };
    let result = match result {
        "1-0" => 2,
        "0-1" => 0,
        "1/2-1/2" => 1,
        other => return Err(format!("result '{other}' (an unfinished game)")),
    };
    let mut start_fen = None;
    let mut moves = Vec::new();
    for (number, (san, comment)) in game.moves.iter().enumerate() {
        let at = format!("move {} ({san})", number + 1);
        let mv = pgn::san_move(&board, san).map_err(|e| format!("{at}: {e}"))?;
        match comment.as_deref() {
            Some("book") if start_fen.is_none() => {}
            Some("book") => return Err(format!("{at}: a book move after scored moves")),
            None => return Err(format!("{at}: no comment with its score")),
            Some(comment) => {
                let score = comment_score(comment).map_err(|e| format!("{at}: {e}"))?;
                if start_fen.is_none() {
                    start_fen = Some(
                        shakmaty::fen::Fen::from_position(board.pos(), EnPassantMode::Legal)
                            .to_string(),
                    );
                }
                let white = if board.turn() == Color::White {
                    score
                } else {
                    -score
                };
                moves.push((mv, white.clamp(-i16::MAX as i32, i16::MAX as i32) as i16));
            }
        }
        board.play(mv);
    }
    let start_fen = start_fen.ok_or("no scored move")?;
    Ok(GameRecord {
        start_fen,
        moves,
        result,
    })
}

/// Why a conversion could not go on (a game that cannot be read is skipped, not an error).
#[derive(Debug, thiserror::Error)]
pub enum FromPgnError {
    #[error("cannot read {}", .0.display())]
    Read(PathBuf, #[source] std::io::Error),
    /// A compressed file (OpenBench's uploads are bzip2): decompress it first.
    #[error("{} is bzip2-compressed: decompress it first (bzip2 -dc FILE > FILE.pgn)", .0.display())]
    Compressed(PathBuf),
    #[error(transparent)]
    Write(#[from] DatagenError),
}

/// `ferrite-lab from-pgn`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// PGN files: fastchess's, or OpenBench's DATAGEN uploads (decompressed).
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// The viriformat file the games are appended to (created if missing).
    #[arg(long)]
    output: PathBuf,
}

/// `ferrite-lab from-pgn`: converts, reports each skipped game on stderr and the totals on
/// stdout.
pub fn command(args: Args) -> Result<(), FromPgnError> {
    let converted = convert(&args.files, &args.output)?;
    for skipped in &converted.skipped {
        eprintln!("skipped: {skipped}");
    }
    println!(
        "{} games, {} positions appended to {}; {} games skipped",
        converted.games,
        converted.positions,
        args.output.display(),
        converted.skipped.len()
    );
    Ok(())
}

/// Converts the games of `paths` and appends them to `output` in viriformat, game by game.
pub fn convert(paths: &[PathBuf], output: &Path) -> Result<Converted, FromPgnError> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(output)
        .map_err(|e| FromPgnError::Write(DatagenError::Open(output.to_path_buf(), e)))?;
    let mut converted = Converted::default();
    for path in paths {
        let bytes = std::fs::read(path).map_err(|e| FromPgnError::Read(path.clone(), e))?;
        if bytes.starts_with(b"BZh") {
            return Err(FromPgnError::Compressed(path.clone()));
        }
        let text = String::from_utf8_lossy(&bytes);
        for game in pgn::games(&text) {
            let record = match record(&game) {
                Ok(record) => record,
                Err(why) => {
                    converted.skipped.push(format!(
                        "{} game at line {}: {why}",
                        path.display(),
                        game.line
                    ));
                    continue;
                }
            };
            let bytes = encode(&record).map_err(FromPgnError::Write)?;
            file.write_all(&bytes)
                .map_err(|e| FromPgnError::Write(DatagenError::Write(output.to_path_buf(), e)))?;
            converted.games += 1;
            converted.positions += record.moves.len() as u64;
        }
    }
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_in_pawns_and_mates_in_plies() {
        assert_eq!(comment_score("+0.25/12 0.123s, n=40012, sd=18"), Ok(25));
        assert_eq!(comment_score("-1.30/9"), Ok(-130));
        assert_eq!(comment_score("0.00/10, line=x"), Ok(0));
        assert_eq!(comment_score("+M1/1"), Ok(MATE - 1));
        assert_eq!(comment_score("-M4/20"), Ok(-(MATE - 4)));
        for bad in [
            "book", "unknown", "+0.25", "abc/5", "+M999/3", "+0.25/x", "",
        ] {
            assert!(comment_score(bad).is_err(), "{bad}");
        }
    }

    fn one(text: &str) -> Result<GameRecord, String> {
        record(&pgn::games(text)[0])
    }

    #[test]
    fn a_game_from_after_its_book_moves_with_white_view_scores() {
        let game =
            one("[Result \"0-1\"]\n\n1. f3 {book} e6 {+0.40/10} 2. g4 {-M2/20} Qh4# {+M1/1} 0-1\n")
                .unwrap();
        assert_eq!(
            game.start_fen,
            "rnbqkbnr/pppppppp/8/8/8/5P2/PPPPP1PP/RNBQKBNR b KQkq - 0 1"
        );
        let scores: Vec<i16> = game.moves.iter().map(|&(_, s)| s).collect();
        // Black's +0.40 is White's -40; White mated in 2 plies stays negative; Black's mate in
        // 1 is White's loss.
        assert_eq!(scores, [-40, -(MATE - 2) as i16, -(MATE - 1) as i16]);
        assert_eq!(game.result, 0);
        assert!(encode(&game).is_ok());
    }

    #[test]
    fn a_malformed_game_says_why_it_is_skipped() {
        let cases = [
            ("[Result \"1-0\"]\n\n1. e4 {+0.20/5} e5 1-0", "no comment"),
            (
                "[Result \"1-0\"]\n\n1. e4 {+0.20/5} e5 {unknown} 1-0",
                "no score",
            ),
            (
                "[Result \"1-0\"]\n\n1. e4 {+0.20/5} e5 {book} 1-0",
                "book move after",
            ),
            (
                "[Result \"1-0\"]\n\n1. e4 {+0.20/5} Ke7 {+0.1/3} 1-0",
                "not a legal move",
            ),
            ("[Result \"*\"]\n\n1. e4 {+0.20/5} *", "unfinished"),
            ("[Result \"1-0\"]\n\n1. e4 {+0.20/5} 0-1", "disagree"),
            ("[Result \"1-0\"]\n\n1. e4 {book} 1-0", "no scored move"),
            (
                "[Variant \"fischerandom\"]\n[Result \"1-0\"]\n\n1. e4 {+0.2/5} 1-0",
                "variant",
            ),
        ];
        for (text, reason) in cases {
            let why = one(text).unwrap_err();
            assert!(why.contains(reason), "{text}: {why}");
        }
    }
}
