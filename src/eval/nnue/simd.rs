//! The network's two hot loops, each in a portable version and an AVX2 version that is chosen
//! at run time, so one binary runs on any x86-64 (and on aarch64) and uses AVX2 where the CPU
//! has it: updating an accumulator by a move's feature rows, and the SCReLU output layer.

use super::QA;

/// Which implementation of the kernels this machine runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Kernels {
    /// The fastest kernels this CPU supports.
    pub fn detect() -> Kernels {
        #[cfg(target_arch = "x86_64")]
        let best = if std::arch::is_x86_feature_detected!("avx2") {
            Kernels::Avx2
        } else {
            Kernels::Portable
        };
        #[cfg(not(target_arch = "x86_64"))]
        let best = Kernels::Portable;
        best
    }

    /// The kernels' name, for the GUI and the logs.
    pub fn name(self) -> &'static str {
        match self {
            Kernels::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Kernels::Avx2 => "AVX2",
        }
    }

    /// Every implementation this CPU can run, the portable one first (for tests).
    pub fn available() -> Vec<Kernels> {
        let mut all = vec![Kernels::Portable];
        if Kernels::detect() != Kernels::Portable {
            all.push(Kernels::detect());
        }
        all
    }

    /// `out = input + (sum of adds) - (sum of subs)`, element by element. Every slice has the
    /// same length. With weights within `WEIGHT_LIMIT` the sums never leave the i16 range; the
    /// arithmetic wraps rather than panics if a foreign file breaks that.
    pub fn update(self, out: &mut [i16], input: &[i16], adds: &[&[i16]], subs: &[&[i16]]) {
        match self {
            Kernels::Portable => update(out, input, adds, subs),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only ever chosen by `detect`, after the CPU reported AVX2.
            Kernels::Avx2 => unsafe { update_avx2(out, input, adds, subs) },
        }
    }

    /// The sum over one perspective of `clamp(acc, 0, QA)^2 * weight`, exactly.
    pub fn screlu_dot(self, acc: &[i16], weights: &[i16]) -> i64 {
        assert_eq!(acc.len(), weights.len());
        match self {
            Kernels::Portable => screlu_dot(acc, weights),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `update`, the CPU has AVX2; the lengths are equal (checked above).
            Kernels::Avx2 => unsafe { screlu_dot_avx2(acc, weights) },
        }
    }
}

/// Plain loops over equal-length slices, written so the compiler vectorises them for whatever
/// instruction set the caller is compiled for. The common cases (a quiet move: one row in,
/// one out; a capture: one in, two out) are fused into one pass over the accumulator.
#[inline(always)]
fn update(out: &mut [i16], input: &[i16], adds: &[&[i16]], subs: &[&[i16]]) {
    let n = out.len();
    let (out, input) = (&mut out[..n], &input[..n]);
    match (adds, subs) {
        ([add], [sub]) => {
            let (add, sub) = (&add[..n], &sub[..n]);
            for i in 0..n {
                out[i] = input[i].wrapping_add(add[i]).wrapping_sub(sub[i]);
            }
        }
        ([add], [sub1, sub2]) => {
            let (add, sub1, sub2) = (&add[..n], &sub1[..n], &sub2[..n]);
            for i in 0..n {
                out[i] = input[i]
                    .wrapping_add(add[i])
                    .wrapping_sub(sub1[i])
                    .wrapping_sub(sub2[i]);
            }
        }
        _ => {
            out.copy_from_slice(input);
            for add in adds {
                let add = &add[..n];
                for i in 0..n {
                    out[i] = out[i].wrapping_add(add[i]);
                }
            }
            for sub in subs {
                let sub = &sub[..n];
                for i in 0..n {
                    out[i] = out[i].wrapping_sub(sub[i]);
                }
            }
        }
    }
}

/// The same loops, compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn update_avx2(out: &mut [i16], input: &[i16], adds: &[&[i16]], subs: &[&[i16]]) {
    update(out, input, adds, subs)
}

fn screlu_dot(acc: &[i16], weights: &[i16]) -> i64 {
    acc.iter()
        .zip(weights)
        .map(|(&a, &w)| {
            let v = i64::from(a.clamp(0, QA as i16));
            v * v * i64::from(w)
        })
        .sum()
}

/// Sixteen hidden units at a time: clamp, multiply by the weight (`v * w` fits an i16 because
/// weights stay within `WEIGHT_LIMIT`), then `madd` multiplies by `v` again and adds pairs into
/// i32 lanes. A lane gains at most 2 x 255 x 32,767 per step, so the lanes are emptied into
/// an i64 every 64 steps, long before they could overflow.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn screlu_dot_avx2(acc: &[i16], weights: &[i16]) -> i64 {
    use std::arch::x86_64::*;
    const LANES: usize = 16;
    const FLUSH_EVERY: usize = 64;
    let chunks = acc.len().min(weights.len()) / LANES;
    let zero = _mm256_setzero_si256();
    let ceiling = _mm256_set1_epi16(QA as i16);
    let mut total: i64 = 0;
    let mut sum = zero;
    for chunk in 0..chunks {
        // SAFETY: `chunk * LANES + LANES <= acc.len()` and `<= weights.len()`, so both
        // 32-byte unaligned loads stay inside the slices.
        let (a, w) = unsafe {
            (
                _mm256_loadu_si256(acc.as_ptr().add(chunk * LANES).cast()),
                _mm256_loadu_si256(weights.as_ptr().add(chunk * LANES).cast()),
            )
        };
        let v = _mm256_min_epi16(_mm256_max_epi16(a, zero), ceiling);
        let vw = _mm256_mullo_epi16(v, w);
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(v, vw));
        if (chunk + 1) % FLUSH_EVERY == 0 {
            total += lanes_sum(sum);
            sum = zero;
        }
    }
    total += lanes_sum(sum);
    let tail = chunks * LANES;
    total + screlu_dot(&acc[tail..], &weights[tail..])
}

/// The eight i32 lanes of `v`, added in i64.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lanes_sum(v: std::arch::x86_64::__m256i) -> i64 {
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 bytes, the size of one unaligned 256-bit store.
    unsafe { std::arch::x86_64::_mm256_storeu_si256(lanes.as_mut_ptr().cast(), v) };
    lanes.iter().map(|&lane| i64::from(lane)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64 as Rng;

    fn random(rng: &mut Rng, n: usize, limit: i64) -> Vec<i16> {
        (0..n)
            .map(|_| (rng.next_u64() % (2 * limit as u64 + 1)) as i64 - limit)
            .map(|v| v as i16)
            .collect()
    }

    #[test]
    fn every_kernel_computes_the_same_numbers() {
        let mut rng = Rng::new(7);
        // Lengths that are and are not multiples of the vector width, and long enough to pass
        // a flush of the AVX2 lanes.
        for n in [1, 15, 16, 33, 128, 1024 + 48] {
            let acc = random(&mut rng, n, 600);
            let weights = random(&mut rng, n, 126);
            let rows: Vec<Vec<i16>> = (0..4).map(|_| random(&mut rng, n, 500)).collect();
            let input = random(&mut rng, n, 8000);
            let expected_dot = screlu_dot(&acc, &weights);
            let expected: Vec<Vec<i16>> = [(1, 1), (1, 2), (2, 2), (0, 1)]
                .iter()
                .map(|&(a, s)| {
                    (0..n)
                        .map(|i| {
                            let added: i16 = rows[..a].iter().map(|r| r[i]).sum();
                            let taken: i16 = rows[2..2 + s].iter().map(|r| r[i]).sum();
                            input[i] + added - taken
                        })
                        .collect()
                })
                .collect();
            for kernels in Kernels::available() {
                assert_eq!(
                    kernels.screlu_dot(&acc, &weights),
                    expected_dot,
                    "{kernels:?}"
                );
                for (k, &(a, s)) in [(1, 1), (1, 2), (2, 2), (0, 1)].iter().enumerate() {
                    let adds: Vec<&[i16]> = rows[..a].iter().map(Vec::as_slice).collect();
                    let subs: Vec<&[i16]> = rows[2..2 + s].iter().map(Vec::as_slice).collect();
                    let mut out = vec![0; n];
                    kernels.update(&mut out, &input, &adds, &subs);
                    assert_eq!(out, expected[k], "{kernels:?} {a} in, {s} out, n = {n}");
                }
            }
        }
    }
}
