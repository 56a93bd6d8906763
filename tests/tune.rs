//! The tuning build (`cargo test --features tune`): what the SPSA driver (`scripts/spsa.py`)
//! and the strength calibration (`scripts/strength_calibration.py`) drive through UCI.
#![cfg(feature = "tune")]

mod common;

use common::{info_nodes, last_info, Session, SECONDS};

/// Every search parameter is a spin option that takes values in its range and refuses others.
#[test]
fn search_parameters_are_options() {
    let mut s = Session::start();
    s.send("uci");
    let lines = s.until("uciok", SECONDS);
    for p in ferrite::params::ALL {
        let option = format!(
            "option name {} type spin default {} min {} max {}",
            p.name, p.default, p.min, p.max
        );
        assert!(lines.contains(&option), "{option}");
    }
    s.send("setoption name rfp_margin value 71");
    s.send("setoption name rfp_margin value 9999");
    s.send("isready");
    let lines = s.until("readyok", SECONDS);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("info string error: rfp_margin takes 30 to 150"));
}

/// `Strength Setting` plays a level at a chosen point of the settings scale: at its bottom,
/// the bottom's node budget whatever the level.
#[test]
fn strength_setting_overrides_the_levels_setting() {
    let mut s = Session::start();
    s.send("uci");
    let lines = s.until("uciok", SECONDS);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("option name Strength Setting type spin default 0 min 0 ")));
    s.send("setoption name UCI_LimitStrength value true");
    s.send("setoption name UCI_Elo value 2000");
    let nodes = |s: &mut Session| {
        s.send("position startpos moves e2e4 e7e5");
        s.send("go wtime 60000 btime 60000");
        info_nodes(last_info(&s.until("bestmove", SECONDS)))
    };
    let at_level = nodes(&mut s);
    s.send("setoption name Strength Setting value 1350");
    let at_bottom = nodes(&mut s);
    assert!(at_bottom <= 250, "{at_bottom}");
    assert!(at_level > 1000, "{at_level}");
    s.send("setoption name Strength Setting value 0");
    assert!(nodes(&mut s) > 1000);
}
