//! Saving the table to a file and loading it back, so that hours of analysis survive a
//! restart. The file is a 4 KiB header followed by the buckets exactly as they lie in memory;
//! both directions go through a memmap2 file mapping.
//!
//! Header (little-endian): magic `FRTHASH\0`, format version (u32), bucket size in bytes
//! (u32), bucket count (u64), generation (u8), then an FNV-1a checksum (u64) of those first
//! 32 bytes at offset 32. Every check is made before the table is touched.

use super::{Bucket, Tt};
use memmap2::{Mmap, MmapMut};
use std::fs::File;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"FRTHASH\0";
pub const FORMAT_VERSION: u32 = 1;
/// Page-sized, so the entries start page-aligned in the file.
pub const HEADER_LEN: usize = 4096;
const CHECKSUMMED: usize = 32;

/// Why a hash file could not be saved or loaded; the table is unchanged by a failed load.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("hash file {} does not exist", .0.display())]
    Missing(PathBuf),
    #[error("hash file {}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("hash file is truncated ({len} bytes, shorter than its header)")]
    Truncated { len: u64 },
    #[error("not a Ferrite hash file (wrong magic)")]
    Foreign,
    #[error("hash file format version {0} is not supported (this build reads {FORMAT_VERSION})")]
    Version(u32),
    #[error("hash file header is corrupt (checksum mismatch)")]
    Checksum,
    #[error("hash file is {len} bytes but its header promises {expected}")]
    SizeMismatch { len: u64, expected: u64 },
    #[error(transparent)]
    Alloc(#[from] super::memory::AllocError),
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> PersistError + '_ {
    move |source| PersistError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// FNV-1a, 64 bit: enough to tell a damaged header from a good one.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[derive(Debug, PartialEq, Eq)]
struct Header {
    n_buckets: u64,
    generation: u8,
}

impl Header {
    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut bytes = [0u8; HEADER_LEN];
        bytes[..8].copy_from_slice(MAGIC);
        bytes[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes[12..16].copy_from_slice(&(size_of::<Bucket>() as u32).to_le_bytes());
        bytes[16..24].copy_from_slice(&self.n_buckets.to_le_bytes());
        bytes[24] = self.generation;
        let sum = checksum(&bytes[..CHECKSUMMED]);
        bytes[CHECKSUMMED..CHECKSUMMED + 8].copy_from_slice(&sum.to_le_bytes());
        bytes
    }

    fn decode(bytes: &[u8]) -> Result<Header, PersistError> {
        let word = |range: std::ops::Range<usize>| -> u64 {
            let mut buf = [0u8; 8];
            buf[..range.len()].copy_from_slice(&bytes[range]);
            u64::from_le_bytes(buf)
        };
        if &bytes[..8] != MAGIC {
            return Err(PersistError::Foreign);
        }
        let version = word(8..12) as u32;
        if version != FORMAT_VERSION {
            return Err(PersistError::Version(version));
        }
        if word(CHECKSUMMED..CHECKSUMMED + 8) != checksum(&bytes[..CHECKSUMMED]) {
            return Err(PersistError::Checksum);
        }
        if word(12..16) != size_of::<Bucket>() as u64 || word(16..24) == 0 {
            return Err(PersistError::Foreign);
        }
        Ok(Header {
            n_buckets: word(16..24),
            generation: bytes[24],
        })
    }
}

/// What a load did, for the `info string` that reports it.
#[derive(Debug)]
pub struct LoadReport {
    pub mib: usize,
    pub resized: bool,
}

/// Reserves the file's blocks, so a full disk is an error here and not a fault when the
/// mapping is written.
#[cfg(target_os = "linux")]
fn reserve(file: &File, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: posix_fallocate only reads its integer arguments and acts on an open descriptor
    // that `file` keeps alive for the duration of the call.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

#[cfg(not(target_os = "linux"))]
fn reserve(file: &File, len: u64) -> std::io::Result<()> {
    file.set_len(len)
}

impl Tt {
    /// Writes the table to `path` (through a temporary file renamed into place, so a failed
    /// write leaves any older file intact). Returns the bytes written.
    pub fn save(&mut self, path: &Path) -> Result<u64, PersistError> {
        let header = Header {
            n_buckets: self.n_buckets as u64,
            generation: self.generation,
        }
        .encode();
        let table = self.memory.bytes();
        let len = (HEADER_LEN + table.len()) as u64;
        crate::files::write_with(path, |file| {
            reserve(file, len)?;
            file.set_len(len)?;
            // SAFETY: the file was created (truncated) just now by this process and its blocks
            // are reserved; nothing else is expected to resize it while it is mapped.
            let mut map = unsafe { MmapMut::map_mut(file) }?;
            map[..HEADER_LEN].copy_from_slice(&header);
            map[HEADER_LEN..].copy_from_slice(table);
            map.flush()
        })
        .map_err(io_error(path))?;
        Ok(len)
    }

    /// Replaces the table's contents with those saved in `path`, resizing the table to the
    /// file's size if they differ. A missing, short, foreign or damaged file is reported and
    /// leaves the table as it was.
    pub fn load(&mut self, path: &Path) -> Result<LoadReport, PersistError> {
        let file = File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => PersistError::Missing(path.to_path_buf()),
            _ => io_error(path)(e),
        })?;
        let len = file.metadata().map_err(io_error(path))?.len();
        if len < HEADER_LEN as u64 {
            return Err(PersistError::Truncated { len });
        }
        // SAFETY: a read-only mapping of a file whose length was just read. If another process
        // truncated the file while it is mapped, reads past the new end would fault; hash files
        // are written only by renaming a finished file into place, which does not do that.
        let map = unsafe { Mmap::map(&file) }.map_err(io_error(path))?;
        let header = Header::decode(&map[..HEADER_LEN])?;
        let expected = (header.n_buckets)
            .checked_mul(size_of::<Bucket>() as u64)
            .and_then(|bytes| bytes.checked_add(HEADER_LEN as u64))
            .ok_or(PersistError::Foreign)?;
        if map.len() as u64 != expected {
            return Err(PersistError::SizeMismatch { len, expected });
        }
        let resized = header.n_buckets as usize != self.n_buckets;
        if resized {
            self.resize_buckets(header.n_buckets as usize)?;
        }
        self.memory.bytes_mut().copy_from_slice(&map[HEADER_LEN..]);
        self.generation = header.generation;
        self.loaded = true;
        Ok(LoadReport {
            mib: self.mib(),
            resized,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::temp_path;
    use crate::tt::Record;
    use crate::types::Bound;
    use std::fs;

    fn filled(mib: usize, count: u64) -> (Tt, Vec<u64>) {
        let tt = Tt::new(mib).unwrap();
        let keys: Vec<u64> = (1..=count)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        for (i, &key) in keys.iter().enumerate() {
            tt.store(&Record {
                key,
                ply: 0,
                mv: i as u16 | 1,
                score: i as i32 % 700,
                raw_eval: -(i as i32 % 300),
                depth: (i % 30) as i32,
                bound: Bound::Lower,
            });
        }
        (tt, keys)
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ferrite-persist-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir.join("table.hash")
    }

    #[test]
    fn header_round_trips_and_detects_damage() {
        let header = Header {
            n_buckets: 12345,
            generation: 17,
        };
        let bytes = header.encode();
        assert_eq!(Header::decode(&bytes).unwrap(), header);
        let mut damaged = bytes;
        damaged[20] ^= 1;
        assert!(matches!(
            Header::decode(&damaged),
            Err(PersistError::Checksum)
        ));
        let mut foreign = bytes;
        foreign[0] = b'X';
        assert!(matches!(
            Header::decode(&foreign),
            Err(PersistError::Foreign)
        ));
        let mut newer = bytes;
        newer[8] = 2;
        assert!(matches!(
            Header::decode(&newer),
            Err(PersistError::Version(2))
        ));
    }

    #[test]
    fn saved_table_loads_with_the_same_probes_and_size() {
        let path = scratch("roundtrip");
        let (mut tt, keys) = filled(2, 50_000);
        tt.new_search();
        tt.save(&path).unwrap();
        let mut other = Tt::new(1).unwrap();
        let report = other.load(&path).unwrap();
        assert!(report.resized);
        assert_eq!((other.mib(), other.generation()), (2, tt.generation()));
        for &key in &keys {
            assert_eq!(other.probe(key, 3), tt.probe(key, 3));
        }
        assert!(
            keys.iter()
                .filter(|&&k| other.probe(k, 0).is_some())
                .count()
                > 40_000
        );
        let _ = fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn bad_files_are_reported_and_leave_the_table_alone() {
        let path = scratch("bad");
        let (mut good, _) = filled(1, 1000);
        good.save(&path).unwrap();
        let full = fs::read(&path).unwrap();
        let (mut tt, keys) = filled(1, 20_000);
        let before: Vec<_> = keys.iter().map(|&k| tt.probe(k, 0)).collect();

        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("truncated header", full[..100].to_vec()),
            ("truncated table", full[..full.len() - 64].to_vec()),
            ("foreign", b"#!/bin/sh\n".repeat(1000)),
            ("corrupt header", {
                let mut f = full.clone();
                f[17] ^= 0x40;
                f
            }),
            ("wrong version", {
                let mut f = full.clone();
                f[8] = 9;
                f
            }),
            ("longer than the header says", {
                let mut f = full.clone();
                f.extend_from_slice(&[0; 64]);
                f
            }),
        ];
        for (what, bytes) in cases {
            fs::write(&path, bytes).unwrap();
            let err = tt.load(&path).expect_err(what);
            assert!(!err.to_string().is_empty());
            let after: Vec<_> = keys.iter().map(|&k| tt.probe(k, 0)).collect();
            assert_eq!(before, after, "{what} changed the table");
        }
        let missing = path.with_file_name("absent.hash");
        assert!(matches!(tt.load(&missing), Err(PersistError::Missing(_))));
        let _ = fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn failed_write_keeps_the_old_file() {
        let path = scratch("failed-write");
        let (mut old, _) = filled(1, 10);
        old.save(&path).unwrap();
        let old_bytes = fs::read(&path).unwrap();
        // A directory where the temporary file must go makes the write fail.
        fs::create_dir_all(temp_path(&path)).unwrap();
        let (mut new, _) = filled(1, 5000);
        assert!(new.save(&path).is_err());
        assert_eq!(fs::read(&path).unwrap(), old_bytes);
        assert!(new.save(&path.with_file_name("no/such/dir.hash")).is_err());
        let _ = fs::remove_dir_all(path.parent().unwrap());
    }

    /// A table of many pages round-trips whole, resizing the loading one (the time a 1 GiB
    /// table takes is measured by `scripts/persist_bench.py`, not here).
    #[test]
    fn a_large_table_round_trips() {
        let path = scratch("large");
        let (mut tt, keys) = filled(64, 200_000);
        assert_eq!(tt.save(&path).unwrap(), (64 << 20) + HEADER_LEN as u64);
        let mut other = Tt::new(16).unwrap();
        other.load(&path).unwrap();
        assert_eq!(other.mib(), 64);
        assert!(keys.iter().all(|&k| other.probe(k, 0) == tt.probe(k, 0)));
        let _ = fs::remove_dir_all(path.parent().unwrap());
    }
}
