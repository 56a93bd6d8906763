//! Data generation: games replay to the positions the engine saw, files survive a killed run,
//! and the command line writes a readable file.

use ferrite::board::Board;
use ferrite::rng::SplitMix64;
use ferrite::tools::selfplay::{GameRecord, Player};
use ferrite_lab::datagen::{encode, read_games};
use shakmaty::{CastlingMode, EnPassantMode};
use std::io::BufReader;

fn games(seed: u64, count: usize) -> Vec<GameRecord> {
    let mut player = Player::new(300, 1200, ferrite::eval::Evaluation::built_in()).unwrap();
    let mut rng = SplitMix64::new(seed);
    let mut games = Vec::new();
    while games.len() < count {
        if let Some(game) = player.play(&mut rng, &[], 8) {
            games.push(game);
        }
    }
    games
}

fn fen(board: &Board) -> String {
    shakmaty::fen::Fen::from_position(board.pos(), EnPassantMode::Legal).to_string()
}

#[test]
fn written_games_replay_to_the_positions_played() {
    let games = games(7, 3);
    let mut bytes = Vec::new();
    for game in &games {
        bytes.extend(encode(game).unwrap());
    }
    let mut read = Vec::new();
    let report = read_games(BufReader::new(&bytes[..]), |game| {
        let mut seen = Vec::new();
        game.visit_positions(|board, score| seen.push((board.to_string(), score)));
        read.push((seen, game.outcome()));
    })
    .unwrap();
    assert_eq!(report.games, 3);
    assert_eq!(report.damaged_tail, None);
    for (game, (seen, outcome)) in games.iter().zip(&read) {
        assert!(!game.moves.is_empty());
        assert_eq!(seen.len(), game.moves.len());
        let mut board = Board::from_fen(&game.start_fen, CastlingMode::Standard).unwrap();
        for (&(mv, score), (viri_fen, viri_score)) in game.moves.iter().zip(seen) {
            // Same placement, side, castling and clocks (en passant squares are written
            // differently: viriformat keeps pseudo-legal ones).
            let ours: Vec<String> = fen(&board).split(' ').map(str::to_string).collect();
            let theirs: Vec<&str> = viri_fen.split(' ').collect();
            assert_eq!(ours[..3], theirs[..3], "{}", fen(&board));
            assert_eq!(ours[4..], theirs[4..], "{}", fen(&board));
            assert_eq!(i32::from(score), *viri_score);
            board.play(mv);
        }
        let expected = match game.result {
            2 => viriformat::dataformat::WDL::Win,
            0 => viriformat::dataformat::WDL::Loss,
            _ => viriformat::dataformat::WDL::Draw,
        };
        assert_eq!(*outcome, expected);
    }
}

#[test]
fn games_are_reproducible_from_the_seed() {
    assert_eq!(games(11, 1), games(11, 1));
    assert_ne!(games(11, 1), games(12, 1));
}

#[test]
fn a_damaged_tail_is_reported_and_skipped() {
    let games = games(3, 2);
    let first = encode(&games[0]).unwrap();
    let second = encode(&games[1]).unwrap();
    let mut bytes = first.clone();
    bytes.extend(&second[..second.len() - 3]);
    let mut count = 0;
    let report = read_games(BufReader::new(&bytes[..]), |_| count += 1).unwrap();
    assert_eq!(count, 1);
    assert_eq!(report.games, 1);
    assert_eq!(report.positions, games[0].moves.len() as u64);
    assert!(report.damaged_tail.is_some());
}

fn ferrite(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ferrite-lab"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_command_names_files_by_seed_appends_whole_games_and_counts_replayed_ones() {
    let dir = std::env::temp_dir().join(format!("ferrite-datagen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    // Seed 1 twice (its games replayed byte for byte, into the same named file), seed 2 once.
    for seed in ["1", "1", "2"] {
        let run = ferrite(&[
            "datagen", "--games", "1", "--nodes", "200", "--seed", seed, "--output", d,
        ]);
        assert!(run.status.success());
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(&format!("seed {seed},")), "{stderr}");
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names[0].starts_with(&format!("{}-", ferrite::eval::nnue::BUILT_IN_NAME))
            && names[0].ends_with("-200n-s1.vf"),
        "{names:?}"
    );
    assert!(names[1].ends_with("-200n-s2.vf"), "{names:?}");
    let first = dir.join(&names[0]);
    let file = std::fs::File::open(&first).unwrap();
    let report = read_games(BufReader::new(file), |_| {}).unwrap();
    assert_eq!(report.games, 2);
    assert_eq!(report.damaged_tail, None);

    // The replayed game is the first byte for byte (`ferrite-lab check` counts it once).
    let bytes = std::fs::read(&first).unwrap();
    let (once, again) = bytes.split_at(bytes.len() / 2);
    assert_eq!(once, again);

    // A file name must carry the seed; a directory that does not exist cannot be written.
    let named = |name: &str| dir.join(name).display().to_string();
    let one_game_to =
        |output: &str| ferrite(&["datagen", "--games", "1", "--seed", "7", "--output", output]);
    let unnamed = one_game_to(&named("games.vf"));
    assert!(!unnamed.status.success());
    assert!(String::from_utf8_lossy(&unnamed.stderr).contains("-s7"));
    let other_seed = one_game_to(&named("x-s71.vf"));
    assert!(!other_seed.status.success());
    let missing = one_game_to("/nonexistent-dir/x-s7.vf");
    assert!(!missing.status.success());
    std::fs::remove_dir_all(&dir).unwrap();
}
