//! One harness for the tests that drive the real binary through stdin and stdout, as a GUI
//! would. Each test crate uses part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Generous: on a loaded 2-core machine a search of a few plies can take seconds.
pub const SECONDS: Duration = Duration::from_secs(30);

/// What an answer promised within milliseconds (`isready`, `stop`, `quit` during a search)
/// must come within here. Wide on purpose, since the machine may be loaded: it catches a hang
/// or a lost wake-up, and `scripts/uci_latency.py` measures the real figure.
pub const PROMPT: Duration = Duration::from_secs(2);

pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Session {
    pub fn start() -> Session {
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

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `prefix`.
    pub fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
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

    pub fn exit_code_within(&mut self, timeout: Duration) -> i32 {
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

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Lines that arrive within `wait` (none expected to end anything).
    pub fn quiet_for(&mut self, wait: Duration) -> Vec<String> {
        let deadline = Instant::now() + wait;
        let mut seen = Vec::new();
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            seen.push(line);
        }
        seen
    }

    /// Closes the engine's standard input (end of input, as when a pipe ends).
    pub fn close_input(&mut self) {
        drop(self.stdin.take());
    }

    /// Sends `command` then `isready`; returns the `info string` lines in between.
    pub fn messages(&mut self, command: &str) -> Vec<String> {
        self.send(command);
        self.send("isready");
        self.until("readyok", SECONDS)
            .into_iter()
            .filter(|l| l.starts_with("info string"))
            .collect()
    }

    /// Nodes of a fixed-depth search, from its last info line.
    pub fn nodes_to_depth(&mut self, depth: u32) -> u64 {
        self.search_to_depth(depth).0
    }

    /// `go depth N`: the nodes and the length of the PV of the last `info` line.
    pub fn search_to_depth(&mut self, depth: u32) -> (u64, usize) {
        self.send(&format!("go depth {depth}"));
        let lines = self.until("bestmove", SECONDS);
        let info = lines.iter().rev().find(|l| l.contains(" nodes ")).unwrap();
        let mut words = info.split_whitespace();
        words.find(|&w| w == "nodes");
        let nodes = words.next().unwrap().parse().unwrap();
        let pv = info
            .split_once(" pv ")
            .map_or(0, |(_, moves)| moves.split_whitespace().count());
        (nodes, pv)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The last `info depth` line of a search's output.
pub fn last_info(lines: &[String]) -> &str {
    lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .expect("an info depth line")
}

/// The node count of an `info` line.
pub fn info_nodes(line: &str) -> u64 {
    line.split(" nodes ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no node count in {line}"))
}
