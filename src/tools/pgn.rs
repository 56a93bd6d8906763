//! A PGN reader for the games other programs write: tag pairs, then moves in SAN, each with
//! the comment that follows it (fastchess writes the engine's score and depth there), and the
//! result. Move numbers, NAGs, `;` comments and variations are skipped. `PgnGame::start` and
//! `san_move` replay a game from its `FEN` tag (or the initial position).

use crate::board::Board;
use shakmaty::{san::San, CastlingMode, Move};

/// One game's text, split.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgnGame {
    /// The tag pairs in file order, as (name, value).
    pub tags: Vec<(String, String)>,
    /// Each move in SAN with the comment right after it, if any (braces removed, trimmed).
    pub moves: Vec<(String, Option<String>)>,
    /// The game termination marker after the moves (`1-0`, `0-1`, `1/2-1/2`, `*`), if any.
    pub termination: Option<String>,
    /// The line of the file on which the game starts, from 1.
    pub line: usize,
}

impl PgnGame {
    /// The value of tag `name`, if the game has it.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(tag, _)| tag == name)
            .map(|(_, value)| value.as_str())
    }

    /// The position the game starts from: its `FEN` tag (standard castling), or the initial
    /// position.
    pub fn start(&self) -> Result<Board, String> {
        match self.tag("FEN") {
            Some(fen) => Board::from_fen(fen, CastlingMode::Standard)
                .map_err(|e| format!("start position: {e}")),
            None => Ok(Board::default()),
        }
    }
}

/// The legal move of `board` that `san` names, or why there is none.
pub fn san_move(board: &Board, san: &str) -> Result<Move, String> {
    San::from_ascii(san.as_bytes())
        .ok()
        .and_then(|parsed| parsed.to_move(board.pos()).ok())
        .ok_or_else(|| format!("{san} is not a legal move here"))
}

const RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

/// The games of a PGN text. A game ends at its termination marker or where the tags of the
/// next one begin; text that belongs to no game is ignored.
pub fn games(text: &str) -> Vec<PgnGame> {
    let mut games = Vec::new();
    let mut game = PgnGame::default();
    let mut line_number = 1;
    let mut chars = text.char_indices().peekable();
    let finish = |game: &mut PgnGame, games: &mut Vec<PgnGame>| {
        if !game.tags.is_empty() || !game.moves.is_empty() || game.termination.is_some() {
            games.push(std::mem::take(game));
        }
    };
    while let Some(&(at, c)) = chars.peek() {
        match c {
            '\n' => {
                line_number += 1;
                chars.next();
            }
            c if c.is_whitespace() => {
                chars.next();
            }
            '[' => {
                // Tags after moves start the next game.
                if !game.moves.is_empty() || game.termination.is_some() {
                    finish(&mut game, &mut games);
                }
                if game.tags.is_empty() {
                    game.line = line_number;
                }
                let end = text[at..].find(['\n', ']']).map_or(text.len(), |e| at + e);
                if let Some(tag) = tag_pair(&text[at + 1..end]) {
                    game.tags.push(tag);
                }
                skip_to(&mut chars, end + 1, &mut line_number, text);
            }
            '{' => {
                let end = text[at..].find('}').map_or(text.len(), |e| at + e);
                let comment = text[at + 1..end].trim().to_string();
                match game.moves.last_mut() {
                    Some((_, slot @ None)) => *slot = Some(comment),
                    // A second comment on one move joins the first.
                    Some((_, Some(first))) => {
                        first.push(' ');
                        first.push_str(&comment);
                    }
                    None => {}
                }
                skip_to(&mut chars, end + 1, &mut line_number, text);
            }
            ';' => {
                let end = text[at..].find('\n').map_or(text.len(), |e| at + e);
                skip_to(&mut chars, end, &mut line_number, text);
            }
            '(' => {
                // A variation, nested to any depth (comments inside may hold parentheses).
                let mut depth = 0;
                let mut in_comment = false;
                let mut end = text.len();
                for (i, c) in text[at..].char_indices() {
                    match c {
                        '{' => in_comment = true,
                        '}' => in_comment = false,
                        '(' if !in_comment => depth += 1,
                        ')' if !in_comment => {
                            depth -= 1;
                            if depth == 0 {
                                end = at + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                skip_to(&mut chars, end, &mut line_number, text);
            }
            _ => {
                let end = text[at..]
                    .find(|c: char| c.is_whitespace() || "{}[]();".contains(c))
                    .map_or(text.len(), |e| at + e);
                let end = end.max(at + c.len_utf8());
                let token = &text[at..end];
                skip_to(&mut chars, end, &mut line_number, text);
                if RESULTS.contains(&token) {
                    if game.tags.is_empty() && game.moves.is_empty() {
                        game.line = line_number;
                    }
                    game.termination = Some(token.to_string());
                    finish(&mut game, &mut games);
                    continue;
                }
                // A move number ("12." or "12...") may be glued to its move ("12.e4").
                let token = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                if token.is_empty() || token.starts_with('$') {
                    continue;
                }
                if game.tags.is_empty() && game.moves.is_empty() {
                    game.line = line_number;
                }
                game.moves.push((token.to_string(), None));
            }
        }
    }
    finish(&mut game, &mut games);
    games
}

/// Advances `chars` to byte `end`, counting the newlines passed.
fn skip_to(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    end: usize,
    line_number: &mut usize,
    text: &str,
) {
    while let Some(&(at, c)) = chars.peek() {
        if at >= end.min(text.len()) {
            break;
        }
        if c == '\n' {
            *line_number += 1;
        }
        chars.next();
    }
}

/// `Name "value"` (the inside of a tag's brackets), with `\"` and `\\` unescaped.
fn tag_pair(inside: &str) -> Option<(String, String)> {
    let inside = inside.trim();
    let (name, rest) = inside.split_once(char::is_whitespace)?;
    let rest = rest.trim();
    let quoted = rest.strip_prefix('"')?.strip_suffix('"')?;
    let value = quoted.replace("\\\"", "\"").replace("\\\\", "\\");
    Some((name.to_string(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_moves_comments_and_results_of_two_games() {
        let text = "[Event \"Fastchess Tournament\"]\n[White \"Ferrite-dev\"]\n\
            [FEN \"rnbqkbnr/pppp2pp/4pp2/8/2P2P2/P7/1P1PP1PP/RNBQKBNR w KQkq - 0 4\"]\n\n\
            4. Nc3 {+0.25/12 0.123s, n=40012, sd=18} Bc5 {0.00/10} (5...Bb4 {a line (with} 6. a3)\n\
            5. g4 $1 {-M4/20} Qh4# {+M1/1 0.010s, n=12, sd=1, Black mates} 0-1\n\n\
            [Event \"?\"]\n\n1. e4 {book} e5 {-1.30/9} ; a remark\n2.Nf3 {+0.31/11} 1/2-1/2\n";
        let games = games(text);
        assert_eq!(games.len(), 2);
        let first = &games[0];
        assert_eq!(first.tag("White"), Some("Ferrite-dev"));
        assert_eq!(
            first.tag("FEN"),
            Some("rnbqkbnr/pppp2pp/4pp2/8/2P2P2/P7/1P1PP1PP/RNBQKBNR w KQkq - 0 4")
        );
        let sans: Vec<&str> = first.moves.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(sans, ["Nc3", "Bc5", "g4", "Qh4#"]);
        assert_eq!(
            first.moves[0].1.as_deref(),
            Some("+0.25/12 0.123s, n=40012, sd=18")
        );
        assert_eq!(first.moves[2].1.as_deref(), Some("-M4/20"));
        assert_eq!(first.termination.as_deref(), Some("0-1"));
        assert_eq!(first.line, 1);
        let second = &games[1];
        let sans: Vec<&str> = second.moves.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(sans, ["e4", "e5", "Nf3"]);
        assert_eq!(second.moves[0].1.as_deref(), Some("book"));
        assert_eq!(second.termination.as_deref(), Some("1/2-1/2"));
        assert_eq!(second.line, 8);
    }

    #[test]
    fn a_game_cut_short_keeps_what_it_has() {
        let games = games("[Event \"x\"]\n1. e4 {+0.20/5} e5");
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].moves.len(), 2);
        assert_eq!(games[0].termination, None);
        assert!(super::games("").is_empty());
    }
}
