//! The lab's command line on real data: `check` counts a replayed game once and fails on a
//! missing file; `export` writes a line per position; `train` refuses bad arguments.

use ferrite::rng::SplitMix64;
use ferrite::tools::selfplay::Player;
use ferrite_lab::datagen::encode;

fn lab(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ferrite-lab"))
        .args(args)
        .output()
        .unwrap()
}

/// Two files of datagen's format: the first holds one game twice (a replayed seed), the second
/// that game once more and another. Returns their paths and the first game's position count.
fn files(dir: &std::path::Path) -> (String, String, usize) {
    let mut player = Player::new(200, 800, ferrite::eval::Evaluation::built_in()).unwrap();
    let mut rng = SplitMix64::new(11);
    let mut games = Vec::new();
    while games.len() < 2 {
        if let Some(game) = player.play(&mut rng, &[], 8) {
            games.push(game);
        }
    }
    let first = encode(&games[0]).unwrap();
    let second = encode(&games[1]).unwrap();
    let a = dir.join("a-s1.vf");
    let b = dir.join("b-s2.vf");
    std::fs::write(&a, [first.clone(), first.clone()].concat()).unwrap();
    std::fs::write(&b, [first, second].concat()).unwrap();
    let path = |p: &std::path::Path| p.display().to_string();
    (path(&a), path(&b), games[0].moves.len())
}

#[test]
fn check_counts_a_replayed_game_once_and_export_writes_each_position() {
    let dir = std::env::temp_dir().join(format!("ferrite-lab-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b, positions) = files(&dir);

    let check = lab(&["check", &a, &b]);
    assert!(check.status.success());
    let out = String::from_utf8_lossy(&check.stdout);
    assert!(
        out.contains("2 games") && out.contains("1 duplicate games"),
        "{out}"
    );
    assert!(
        out.contains("in all: 4 games") && out.contains(" 2 duplicate games,"),
        "{out}"
    );

    let export = lab(&["export", &a]);
    assert!(export.status.success());
    let lines = String::from_utf8_lossy(&export.stdout);
    assert_eq!(lines.lines().count(), 2 * positions);
    assert!(
        lines.lines().all(|line| line.split(" | ").count() == 4),
        "{lines}"
    );

    let absent = dir.join("absent.vf").display().to_string();
    let no_file = lab(&["check", &absent]);
    assert!(!no_file.status.success());
    assert!(String::from_utf8_lossy(&no_file.stderr).contains("absent.vf"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_are_refused_with_a_message() {
    let wdl = lab(&[
        "train", "--data", "x.vf", "--output", "x.nnue", "--wdl", "2",
    ]);
    assert!(!wdl.status.success());
    assert!(String::from_utf8_lossy(&wdl.stderr).contains("--wdl must lie in 0..1"));
    let scale = lab(&["tune", "--data", "x.txt", "--wdl", "0.5"]);
    assert!(!scale.status.success());
    assert!(String::from_utf8_lossy(&scale.stderr).contains("--score-scale"));
    let unknown = lab(&["bench"]);
    assert!(!unknown.status.success());
}
