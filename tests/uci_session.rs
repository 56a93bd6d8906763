//! Drives the real binary through stdin/stdout as a GUI would.

use shakmaty::{fen::Fen, uci::UciMove, CastlingMode, Chess, Position};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Session {
    fn start() -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferrite"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ferrite");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Session {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `prefix`.
    fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no '{prefix}' within {timeout:?}: {seen:?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("engine exited waiting for '{prefix}': {seen:?}")
                }
            }
        }
    }

    fn exit_code_within(&mut self, timeout: Duration) -> i32 {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "engine did not exit within {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_legal(fen: &str, moves: &[&str], bestmove_line: &str) {
    let mut pos: Chess = fen
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    for m in moves {
        let mv = m.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(mv);
    }
    let text = bestmove_line
        .split_whitespace()
        .nth(1)
        .expect("bestmove has a move");
    let mv = text
        .parse::<UciMove>()
        .unwrap_or_else(|_| panic!("{bestmove_line}"));
    assert!(
        mv.to_move(&pos).is_ok(),
        "illegal {bestmove_line} in {fen} {moves:?}"
    );
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const SECONDS: Duration = Duration::from_secs(20);

#[test]
fn handshake_and_fixed_depth_and_movetime() {
    let mut s = Session::start();
    s.send("uci");
    let lines = s.until("uciok", SECONDS);
    assert!(lines.iter().any(|l| l.starts_with("id name Ferrite")));
    for option in ["Hash", "Threads", "Clear Hash", "Move Overhead"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("option name {option} type"))),
            "{option}"
        );
    }
    s.send("isready");
    s.until("readyok", SECONDS);
    s.send("ucinewgame");
    s.send("position startpos moves e2e4 e7e5 g1f3");
    s.send("go depth 6");
    let lines = s.until("bestmove", SECONDS);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("info depth 6 ") && l.contains(" hashfull ")));
    assert_legal(START, &["e2e4", "e7e5", "g1f3"], lines.last().unwrap());

    let fen = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8";
    s.send(&format!("position fen {fen}"));
    let start = Instant::now();
    s.send("go movetime 300");
    let lines = s.until("bestmove", SECONDS);
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(1000),
        "movetime 300 took {took:?}"
    );
    assert_legal(fen, &[], lines.last().unwrap());
    s.send("quit");
    assert_eq!(s.exit_code_within(SECONDS), 0);
}

#[test]
fn isready_and_stop_are_answered_during_infinite_search() {
    let mut s = Session::start();
    s.send("position startpos");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    s.send("isready");
    let lines = s.until("readyok", SECONDS);
    assert!(
        start.elapsed() < Duration::from_millis(200),
        "readyok took {:?}",
        start.elapsed()
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "infinite search ended by itself"
    );
    let start = Instant::now();
    s.send("stop");
    let lines = s.until("bestmove", SECONDS);
    assert!(
        start.elapsed() < Duration::from_millis(200),
        "stop took {:?}",
        start.elapsed()
    );
    assert_legal(START, &[], lines.last().unwrap());
}

#[test]
fn quit_during_search_exits_at_once() {
    let mut s = Session::start();
    s.send("position startpos moves d2d4");
    s.send("go wtime 600000 btime 600000");
    std::thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    s.send("quit");
    assert_eq!(s.exit_code_within(SECONDS), 0);
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "quit took {:?}",
        start.elapsed()
    );
}

#[test]
fn bad_input_is_reported_and_the_engine_keeps_its_position() {
    let mut s = Session::start();
    s.send("position startpos moves e2e4");
    for bad in [
        "frobnicate",
        "",
        "   ",
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNZ w KQkq - 0 1",
        "position fen rnbqkbnr/pppppppp/8/8",
        "position fen",
        "position startpos moves e2e4 e7e5 e1e3",
        "position startpos moves zz",
        "setoption name Hash value lots",
        "setoption name Hash value 99999999999",
        "setoption name NoSuchOption value 3",
        "go depth x",
    ] {
        s.send(bad);
        s.send("isready");
        s.until("readyok", SECONDS);
    }
    s.send("stop");
    s.until("bestmove", SECONDS);
    // The last valid position (after 1.e4) is still the one searched: Black moves.
    s.send("go depth 4");
    let lines = s.until("bestmove", SECONDS);
    assert_legal(START, &["e2e4"], lines.last().unwrap());
    // End of input: a clean exit.
    drop(s.stdin.take());
    assert_eq!(s.exit_code_within(SECONDS), 0);
}

#[test]
fn hash_resize_and_no_legal_moves() {
    let mut s = Session::start();
    s.send("setoption name Hash value 64");
    s.send("setoption name Clear Hash");
    s.send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    s.send("go depth 5");
    let lines = s.until("bestmove", SECONDS);
    assert_eq!(lines.last().unwrap(), "bestmove 0000");
    s.send("setoption name Hash value 1048576");
    s.send("isready");
    let lines = s.until("readyok", SECONDS);
    assert!(
        lines.iter().any(|l| l.starts_with("info string error")),
        "{lines:?}"
    );
    s.send("position startpos");
    s.send("go depth 5");
    let lines = s.until("bestmove", SECONDS);
    assert_legal(START, &[], lines.last().unwrap());
}
