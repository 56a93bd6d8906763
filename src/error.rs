//! An error with its causes in one line, for the places that show an error to a person without
//! anyhow's `{:#}`: the UCI `info string` lines and the messages genfens returns.

use std::error::Error;

/// `err`'s message followed by each of its sources', joined by ": " (`cannot allocate 4096 MiB
/// for the hash table: Cannot allocate memory (os error 12)`).
pub fn chain(err: &dyn Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_follows_its_error() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let err = crate::eval::nnue::LoadError::Read("net.nnue".into(), io);
        assert_eq!(chain(&err), "net.nnue: gone");
        let plain = crate::board::BoardError::IllegalMove("e2e5".into());
        assert_eq!(chain(&plain), "illegal move 'e2e5'");
    }
}
