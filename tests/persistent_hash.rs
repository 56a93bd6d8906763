//! The persistent hash through the real binary: save in one process, load in another.

mod common;

use common::{Session, SECONDS};
use std::process::{Command, Stdio};

/// The depth of the searches whose table is saved and reloaded by the main test.
const DEPTH: u32 = 13;

const POSITION: &str =
    "position fen r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8";

/// Analysis resumed from a saved table is nearly free: at each depth, the same search in a
/// fresh process after `Load Hash` takes at most a quarter of the nodes of the search that
/// filled the table, and shows a PV at least as long.
#[test]
fn a_loaded_analysis_is_resumed_not_repeated() {
    let dir = std::env::temp_dir().join(format!("ferrite-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let option = format!(
        "setoption name Hash File value {}",
        dir.join("resume.hash").display()
    );
    for depth in [12, 13, 14] {
        let (cold, warm) = fresh_then_loaded(&option, depth);
        assert!(
            warm.0 * 4 <= cold.0,
            "depth {depth}: {} nodes after loading, {} cold",
            warm.0,
            cold.0
        );
        assert!(
            warm.1 >= cold.1,
            "depth {depth}: PV of {} moves after loading, {} cold",
            warm.1,
            cold.1
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn analysis_survives_a_restart() {
    let dir = std::env::temp_dir().join(format!("ferrite-hashfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("analysis.hash");
    let option = format!("setoption name Hash File value {}", file.display());

    let mut first = Session::start();
    first.send("setoption name Hash value 8");
    first.send(&option);
    first.send(POSITION);
    // Saving while a search runs waits for the search to end, never races it.
    first.send("go infinite");
    let during = first.messages("setoption name Save Hash");
    assert!(!during.iter().any(|l| l.contains("saved")), "{during:?}");
    first.send("stop");
    first.until("bestmove", SECONDS);
    let after = first.messages("isready");
    assert!(after.iter().any(|l| l.contains("saved 8 MiB")), "{after:?}");
    // Start the measured search from an empty table, so that what is saved does not depend on
    // how long the refused search ran.
    first.send("ucinewgame");
    first.send(POSITION);
    let fresh_nodes = first.nodes_to_depth(DEPTH);
    let saved = first.messages("setoption name Save Hash");
    assert!(saved.iter().any(|l| l.contains("saved 8 MiB")), "{saved:?}");
    first.send("quit");

    let mut second = Session::start();
    second.send(&option);
    let loaded = second.messages("setoption name Load Hash");
    assert!(
        loaded
            .iter()
            .any(|l| l.contains("loaded 8 MiB") && l.contains("resized")),
        "{loaded:?}"
    );
    second.send(POSITION);
    let warm_nodes = second.nodes_to_depth(DEPTH);
    assert!(
        warm_nodes < fresh_nodes,
        "{warm_nodes} after loading, {fresh_nodes} fresh"
    );

    // What a second search finds in the loaded table, from a third process with no failed load
    // in between. One thread at a fixed depth searches the same tree every time.
    let mut reference = Session::start();
    reference.send(&option);
    reference.messages("setoption name Load Hash");
    reference.send(POSITION);
    reference.nodes_to_depth(DEPTH);
    let second_search = reference.nodes_to_depth(DEPTH);
    reference.send("quit");

    // A damaged file is reported and the loaded table stays exactly as it was.
    std::fs::write(&file, b"not a hash file").unwrap();
    let bad = second.messages("setoption name Load Hash");
    assert!(
        bad.iter()
            .any(|l| l.contains("error") && l.contains("hash unchanged")),
        "{bad:?}"
    );
    let still_warm = second.nodes_to_depth(DEPTH);
    assert_eq!(
        still_warm, second_search,
        "fresh {fresh_nodes}, first load {warm_nodes}"
    );

    let missing = second.messages(&format!(
        "setoption name Hash File value {}",
        dir.join("missing.hash").display()
    ));
    assert!(missing.is_empty());
    let missing = second.messages("setoption name Load Hash");
    assert!(
        missing.iter().any(|l| l.contains("does not exist")),
        "{missing:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A search to `depth` in a fresh process that then saves its table to the file
/// `hash_file_option` names, and the same search in another process that loads it: the
/// nodes and PV length of each.
fn fresh_then_loaded(hash_file_option: &str, depth: u32) -> ((u64, usize), (u64, usize)) {
    let mut first = Session::start();
    first.send("setoption name Hash value 8");
    first.send(hash_file_option);
    first.send(POSITION);
    let fresh = first.search_to_depth(depth);
    first.messages("setoption name Save Hash");
    first.send("quit");
    let mut second = Session::start();
    second.send(hash_file_option);
    second.messages("setoption name Load Hash");
    second.send(POSITION);
    let warm = second.search_to_depth(depth);
    second.send("quit");
    (fresh, warm)
}

#[test]
fn debug_reports_table_statistics_after_each_search() {
    let mut engine = Session::start();
    engine.send("debug on");
    engine.send("position startpos");
    engine.send("go depth 8");
    let lines = engine.until("bestmove", SECONDS);
    let stats = lines
        .iter()
        .find(|l| l.starts_with("info string") && l.contains("probes"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    for field in [
        "probes", "hits", "cutoffs", "stores", "replaced", "refused", "hashfull",
    ] {
        assert!(stats.contains(field), "{field} missing in {stats}");
    }
}

/// The same table, built the same way in any process: 30,000 entries with data derived from
/// their keys.
fn reference_table() -> (ferrite::tt::Tt, Vec<u64>) {
    use ferrite::tt::{Record, Tt};
    use ferrite::types::Bound;
    let mut tt = Tt::new(4).unwrap();
    tt.new_search();
    let keys: Vec<u64> = (1..=30_000u64)
        .map(|i| i.wrapping_mul(0xD6E8_FEB8_6659_FD93).rotate_left(17))
        .collect();
    for &key in &keys {
        let bound = [Bound::Upper, Bound::Lower, Bound::Exact][(key % 3) as usize];
        tt.store(&Record {
            key,
            ply: (key % 7) as i32,
            mv: key as u16 | 1,
            score: (key >> 20) as i16 as i32 / 3,
            raw_eval: (key >> 40) as i16 as i32 / 3,
            depth: (key % 40) as i32 - 8,
            bound,
        });
    }
    (tt, keys)
}

#[test]
fn saved_entries_probe_the_same_in_a_fresh_process() {
    const CHILD: &str = "FERRITE_HASH_FILE_TO_CHECK";
    if let Ok(path) = std::env::var(CHILD) {
        // The fresh process: load the file and compare every probe with a rebuilt table.
        let (expected, keys) = reference_table();
        let mut loaded = ferrite::tt::Tt::new(1).unwrap();
        loaded.load(std::path::Path::new(&path)).unwrap();
        assert_eq!(loaded.mib(), 4);
        for &key in &keys {
            for ply in [0, 5] {
                assert_eq!(
                    loaded.probe(key, ply),
                    expected.probe(key, ply),
                    "key {key:#x}"
                );
            }
        }
        assert!(
            keys.iter()
                .filter(|&&k| loaded.probe(k, 0).is_some())
                .count()
                > 25_000
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("ferrite-fresh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("reference.hash");
    let (mut tt, _) = reference_table();
    tt.save(&file).unwrap();
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "saved_entries_probe_the_same_in_a_fresh_process",
            "--test-threads",
            "1",
        ])
        .env(CHILD, &file)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        status.success(),
        "the fresh process found different entries"
    );
}
