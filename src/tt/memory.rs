//! The table's bytes: an anonymous mapping aligned to 2 MiB, advised to use transparent huge
//! pages on Linux, zeroed lazily by the OS and cleared by several threads on demand.
//! This module knows nothing about entries; it hands out a zeroed, 64-byte-aligned byte slice.

use memmap2::MmapMut;

/// Size of a transparent huge page on x86-64 and most aarch64 kernels.
pub const HUGE_PAGE: usize = 2 << 20;

/// Which pages the mapping should be backed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PagePolicy {
    /// Ask for 2 MiB pages (`MADV_HUGEPAGE`); silently plain pages where not granted.
    Huge,
    /// Ask for 4 KiB pages only (`MADV_NOHUGEPAGE`), even when THP is "always" (benchmarks).
    Small,
}

/// Why the table's memory could not be had.
#[derive(Debug, thiserror::Error)]
#[error("cannot allocate {} MiB for the hash table", .bytes >> 20)]
pub struct AllocError {
    pub bytes: usize,
    pub source: std::io::Error,
}

/// A zero-initialised region of `len` bytes starting on a 2 MiB boundary.
pub struct TableMemory {
    map: MmapMut,
    offset: usize,
    len: usize,
}

impl TableMemory {
    /// Maps `len` bytes (rounded up to a multiple of 64). The OS supplies zeroed pages on first
    /// touch, so this is near-instant whatever the size.
    pub fn new(len: usize, policy: PagePolicy) -> Result<TableMemory, AllocError> {
        let len = len.max(64).next_multiple_of(64);
        let err = |source| AllocError { bytes: len, source };
        // Over-allocate by one huge page so a 2 MiB-aligned start exists inside the mapping;
        // untouched slack costs no physical memory.
        let total = len
            .checked_add(HUGE_PAGE)
            .ok_or_else(|| err(std::io::Error::from(std::io::ErrorKind::OutOfMemory)))?;
        let map = MmapMut::map_anon(total).map_err(err)?;
        let base = map.as_ptr() as usize;
        let offset = base.next_multiple_of(HUGE_PAGE) - base;
        let memory = TableMemory { map, offset, len };
        memory.advise(policy);
        Ok(memory)
    }

    #[cfg(target_os = "linux")]
    fn advise(&self, policy: PagePolicy) {
        use memmap2::Advice;
        let advice = match policy {
            PagePolicy::Huge => Advice::HugePage,
            PagePolicy::Small => Advice::NoHugePage,
        };
        // Advice is a hint: kernels without THP reject it, and plain pages are then correct.
        let _ = self.map.advise_range(advice, self.offset, self.len);
    }

    #[cfg(not(target_os = "linux"))]
    fn advise(&self, _policy: PagePolicy) {}

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.bytes().as_ptr()
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map[self.offset..self.offset + self.len]
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map[self.offset..self.offset + self.len]
    }

    /// Zeroes the region with up to `threads` threads, each writing its own contiguous share,
    /// so a multi-GiB table clears at the machine's full memory bandwidth.
    pub fn clear(&mut self, threads: usize) {
        let threads = clear_threads(threads);
        let bytes = self.bytes_mut();
        if threads == 1 {
            bytes.fill(0);
            return;
        }
        let chunk = bytes.len().div_ceil(threads).next_multiple_of(64);
        std::thread::scope(|scope| {
            for part in bytes.chunks_mut(chunk) {
                scope.spawn(move || part.fill(0));
            }
        });
    }

    /// The `/proc/self/smaps` lines (fields, not headers) of the mappings this region
    /// overlaps; `None` where that file does not exist.
    fn smaps_fields(&self) -> Option<Vec<String>> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let (start, end) = (self.as_ptr() as usize, self.as_ptr() as usize + self.len);
        let mut in_region = false;
        let mut fields = Vec::new();
        for line in smaps.lines() {
            let header = line
                .split_once(' ')
                .and_then(|(range, _)| range.split_once('-'))
                .and_then(|(lo, hi)| {
                    Some((
                        usize::from_str_radix(lo, 16).ok()?,
                        usize::from_str_radix(hi, 16).ok()?,
                    ))
                });
            match header {
                Some((lo, hi)) => in_region = lo < end && hi > start,
                None if in_region => fields.push(line.to_string()),
                None => {}
            }
        }
        Some(fields)
    }

    /// Bytes of this region that the kernel currently backs with transparent huge pages.
    pub fn huge_page_bytes(&self) -> Option<usize> {
        let mut total = 0;
        for field in self.smaps_fields()? {
            if let Some(kib) = field.strip_prefix("AnonHugePages:") {
                total += kib
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<usize>()
                    .ok()?
                    << 10;
            }
        }
        Some(total)
    }

    /// The kernel's advice flags on this region (`VmFlags` of smaps: `hg` for huge pages
    /// advised, `nh` for huge pages refused).
    pub fn advice_flags(&self) -> Option<Vec<String>> {
        let fields = self.smaps_fields()?;
        let flags = fields
            .iter()
            .filter_map(|f| f.strip_prefix("VmFlags:"))
            .flat_map(|f| f.split_whitespace().map(str::to_string))
            .filter(|f| f == "hg" || f == "nh")
            .collect();
        Some(flags)
    }
}

/// One thread per available core, at most `requested`, at least one.
pub fn clear_threads(requested: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    requested.clamp(1, cores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_is_aligned_zeroed_and_clearable() {
        let mut memory = TableMemory::new(3 * HUGE_PAGE + 64, PagePolicy::Huge).unwrap();
        assert_eq!(memory.as_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(memory.len(), 3 * HUGE_PAGE + 64);
        assert!(memory.bytes().iter().all(|&b| b == 0));
        memory
            .bytes_mut()
            .iter_mut()
            .step_by(4093)
            .for_each(|b| *b = 0xAB);
        memory.clear(4);
        assert!(memory.bytes().iter().all(|&b| b == 0));
    }

    #[test]
    fn impossible_size_is_an_error_not_a_crash() {
        let err = TableMemory::new(usize::MAX / 2, PagePolicy::Huge)
            .err()
            .unwrap();
        assert!(err.to_string().contains("cannot allocate"));
    }

    #[cfg(target_os = "linux")]
    /// The table asks for huge pages, or refuses them for the benchmark's small-page side:
    /// what the kernel grants depends on its memory at the time, so the test checks the
    /// advice the region carries, not the pages it got (`tt-bench` reports those).
    #[test]
    fn the_region_is_advised_as_its_policy_says() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            eprintln!("this kernel has no transparent huge pages; nothing to advise");
            return;
        }
        let huge = TableMemory::new(8 << 20, PagePolicy::Huge).unwrap();
        let small = TableMemory::new(8 << 20, PagePolicy::Small).unwrap();
        assert_eq!(huge.advice_flags(), Some(vec!["hg".to_string()]));
        assert_eq!(small.advice_flags(), Some(vec!["nh".to_string()]));
        assert!(huge.huge_page_bytes().is_some());
    }
}
