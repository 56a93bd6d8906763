//! Writing a file whole or not at all: through a temporary file beside it, synced and renamed
//! into place, so a failure, a full disk or a kill leaves any older file as it was. The hash
//! table's `Save Hash`, the trainer's networks and checkpoints and the tuner's weights all
//! write this way.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The temporary file a write to `path` goes through.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Creates the temporary file of `path`, lets `fill` write it (the file is open for reading
/// and writing, empty), syncs it and renames it to `path`. On any failure the temporary file
/// is removed and `path` is untouched.
pub fn write_with(path: &Path, fill: impl FnOnce(&File) -> io::Result<()>) -> io::Result<()> {
    let temp = temp_path(path);
    let write = || -> io::Result<()> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        fill(&file)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    };
    write().inspect_err(|_| {
        let _ = fs::remove_file(&temp);
    })
}

/// Writes `bytes` to `path`, whole or not at all.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |mut file| file.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = std::env::temp_dir().join(format!("ferrite-files-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.bin");
        write(&path, b"first").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"first");
        let failed = write_with(&path, |mut file| {
            file.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"first");
        assert!(!temp_path(&path).exists());
        write(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        fs::remove_dir_all(&dir).unwrap();
    }
}
