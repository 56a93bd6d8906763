//! `genfens`, the command with which an OpenBench worker asks an engine for the openings of a
//! DATAGEN workload: `genfens N seed S book <None|FILE> [extra]`, answered with N lines
//! `info string genfens <FEN>`. Each opening is a few random legal plies from the initial
//! position or from a random position of the book, kept when a short search scores it within
//! a window (the same openings `ferrite-lab datagen` plays). The same request gives the same
//! openings.
//!
//! `extra` takes `plies P` (random plies, this many or one more; default 8, or 4 after a book
//! position), `nodes N` (the checking search's budget; default 5000) and `window CP` (default
//! 400).

use super::pgn;
use super::selfplay::{self, Player};
use crate::board::Board;
use crate::eval::Evaluation;
use crate::rng::SplitMix64 as Rng;
use shakmaty::{CastlingMode, EnPassantMode};
use std::path::{Path, PathBuf};

/// A `genfens` command's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub count: usize,
    pub seed: u64,
    pub book: Option<PathBuf>,
    pub plies: Option<usize>,
    pub nodes: u64,
    pub window: i32,
}

/// Openings tried per opening asked for before the request is given up (a book whose every
/// line is out of the window would otherwise never finish).
const TRIES_PER_OPENING: usize = 1000;

/// Parses the words after `genfens`.
pub fn parse(words: &[&str]) -> Result<Request, String> {
    let usage = "genfens N seed S book <None|FILE> [plies P] [nodes N] [window CP]";
    let mut words = words.iter().copied();
    let count = words
        .next()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("genfens needs a count of openings first: {usage}"))?;
    let mut request = Request {
        count,
        seed: 0,
        book: None,
        plies: None,
        nodes: 5000,
        window: selfplay::OPENING_WINDOW,
    };
    let mut seed = None;
    while let Some(key) = words.next() {
        let value = words
            .next()
            .ok_or_else(|| format!("genfens: '{key}' needs a value: {usage}"))?;
        let number = |limit: u64| {
            value
                .parse::<u64>()
                .ok()
                .filter(|&v| v <= limit)
                .ok_or_else(|| format!("genfens: '{key} {value}' is not a number up to {limit}"))
        };
        match key {
            "seed" => seed = Some(number(u64::MAX)?),
            "book" if value.eq_ignore_ascii_case("none") => request.book = None,
            "book" => request.book = Some(PathBuf::from(value)),
            "plies" => request.plies = Some(number(200)? as usize),
            "nodes" => request.nodes = number(10_000_000)?.max(1),
            "window" => request.window = number(3000)? as i32,
            _ => return Err(format!("genfens: unknown argument '{key}': {usage}")),
        }
    }
    request.seed = seed.ok_or_else(|| format!("genfens needs 'seed S': {usage}"))?;
    Ok(request)
}

/// The positions of a book: each line of an EPD or FEN file, or the position at the end of
/// each game of a PGN file (`.pgn`); every one checked legal.
pub fn read_book(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the book {}: {e}", path.display()))?;
    let is_pgn = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pgn"));
    let mut fens = Vec::new();
    if is_pgn {
        for game in pgn::games(&text) {
            let at = format!("{} game at line {}", path.display(), game.line);
            let mut board = game.start().map_err(|e| format!("{at}: {e}"))?;
            for (san, _) in &game.moves {
                let mv = pgn::san_move(&board, san).map_err(|e| format!("{at}: {e}"))?;
                board.play(mv);
            }
            fens.push(
                shakmaty::fen::Fen::from_position(board.pos(), EnPassantMode::Legal).to_string(),
            );
        }
    } else {
        for (number, fen) in crate::board::epd_fens(&text) {
            Board::from_fen(&fen, CastlingMode::Standard)
                .map_err(|e| format!("{} line {number}: {e}", path.display()))?;
            fens.push(fen);
        }
    }
    if fens.is_empty() {
        return Err(format!("no positions in the book {}", path.display()));
    }
    Ok(fens)
}

/// Generates the openings, handing each FEN (six fields) to `emit` as soon as it is found.
pub fn run(
    request: &Request,
    evaluation: Evaluation,
    mut emit: impl FnMut(&str),
) -> Result<(), String> {
    let book = match &request.book {
        Some(path) => read_book(path)?,
        None => Vec::new(),
    };
    let plies = request.plies.unwrap_or(if book.is_empty() { 8 } else { 4 });
    let mut player = Player::new(request.nodes, request.nodes.saturating_mul(4), evaluation)
        .map_err(|e| crate::error::chain(&e))?;
    let mut rng = Rng::new(request.seed);
    let mut found = 0;
    let mut tries = 0;
    while found < request.count {
        tries += 1;
        if tries > request.count.saturating_mul(TRIES_PER_OPENING) {
            return Err(format!(
                "genfens: only {found} of {} openings scored within {} cp after {} tries",
                request.count,
                request.window,
                tries - 1
            ));
        }
        let Some(board) = selfplay::opening(&mut rng, &book, plies) else {
            continue;
        };
        let Some((_, score)) = player.search(&board) else {
            continue;
        };
        if score.abs() <= request.window {
            found += 1;
            emit(&shakmaty::fen::Fen::from_position(board.pos(), EnPassantMode::Legal).to_string());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Position;

    #[test]
    fn openbench_arguments_and_extras() {
        // OpenBench leaves a space after the book when there is no extra.
        let words: Vec<&str> = "128 seed 2147483647 book None "
            .split_whitespace()
            .collect();
        assert_eq!(
            parse(&words),
            Ok(Request {
                count: 128,
                seed: 2_147_483_647,
                book: None,
                plies: None,
                nodes: 5000,
                window: 400,
            })
        );
        let words: Vec<&str> = "4 seed 9 book Books/x.epd plies 6 nodes 2000 window 150"
            .split_whitespace()
            .collect();
        let request = parse(&words).unwrap();
        assert_eq!(request.book, Some(PathBuf::from("Books/x.epd")));
        assert_eq!(
            (request.plies, request.nodes, request.window),
            (Some(6), 2000, 150)
        );
        for bad in [
            "",
            "0 seed 1",
            "x seed 1",
            "5 book None",
            "5 seed",
            "5 seed -1",
            "5 seed 1 depth 3",
        ] {
            let words: Vec<&str> = bad.split_whitespace().collect();
            assert!(parse(&words).is_err(), "{bad}");
        }
    }

    fn openings(request: &Request) -> Vec<String> {
        let mut fens = Vec::new();
        run(request, Evaluation::built_in(), |fen| {
            fens.push(fen.to_string())
        })
        .unwrap();
        fens
    }

    #[test]
    fn the_same_seed_gives_the_same_legal_balanced_openings() {
        let request = parse(&["6", "seed", "42", "book", "None", "nodes", "500"]).unwrap();
        let first = openings(&request);
        assert_eq!(first.len(), 6);
        assert_eq!(first, openings(&request));
        for fen in &first {
            assert_eq!(fen.split_whitespace().count(), 6, "{fen}");
            let board = Board::from_fen(fen, CastlingMode::Standard).unwrap();
            assert!(!board.pos().legal_moves().is_empty(), "{fen}");
        }
        let other = openings(&Request {
            seed: 43,
            ..request
        });
        assert_ne!(first, other);
    }

    #[test]
    fn a_pgn_book_gives_its_games_last_positions() {
        let dir = std::env::temp_dir().join(format!("ferrite-genfens-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("book.pgn");
        std::fs::write(
            &path,
            "[Event \"a\"]\n\n1. e4 e5 2. Nf3 *\n\n[Event \"b\"]\n\n1. d4 d5 *\n",
        )
        .unwrap();
        let fens = read_book(&path).unwrap();
        assert_eq!(fens.len(), 2);
        assert!(fens[0].starts_with("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b"));
        std::fs::write(&path, "[Event \"a\"]\n\n1. e4 e4 *\n").unwrap();
        assert!(read_book(&path).unwrap_err().contains("not a legal move"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
