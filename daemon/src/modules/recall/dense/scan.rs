//! The loops a search spends its time in: a query compared with every vector of a history, as
//! fast as this processor goes. Two kinds of comparison: the full one (the dot product of two
//! vectors' signed bytes) and the rough one (how many of two vectors' signs differ, 48 bytes a
//! vector instead of 384, eight times less memory read). A large history is shared out among
//! the cores: a search is someone waiting, and the embedder steps aside while one runs.

/// The dot product of two packed vectors' codes, in sixteen lanes summed at the end: integer
/// sums reorder freely, so the compiler keeps the lanes in vector registers and multiplies
/// sixteen pairs at a time (a length not a multiple of 16 has its rest added one by one).
#[inline(always)]
pub fn dot(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let rest: i32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(&x, &y)| x as i32 * y as i32)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            lanes[i] += x[i] as i16 as i32 * y[i] as i16 as i32;
        }
    }
    lanes.iter().sum::<i32>() + rest
}

/// The signs of `codes` as bits, one `u64` per 64 numbers (a positive number is a 1).
pub fn signs(codes: &[i8]) -> Vec<u64> {
    codes
        .chunks(64)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u64, |w, (i, &x)| w | (((x > 0) as u64) << i))
        })
        .collect()
}

/// How many signs two vectors' bits do not share.
#[inline(always)]
fn differ(a: &[u64], b: &[u64]) -> u16 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x ^ y).count_ones())
        .sum::<u32>() as u16
}

/// Scores of `query` against each vector of `codes` (`dim` codes each), into `out`.
fn scores_portable(query: &[i8], codes: &[i8], dim: usize, out: &mut Vec<i32>) {
    out.extend(codes.chunks_exact(dim).map(|c| dot(query, c)));
}

/// The same, compiled for AVX2 (most x86 machines of the last ten years): twice as fast.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scores_avx2(query: &[i8], codes: &[i8], dim: usize, out: &mut Vec<i32>) {
    out.extend(codes.chunks_exact(dim).map(|c| dot(query, c)));
}

/// [`scores`] on this thread, with the fastest code this processor runs.
fn scores_one(query: &[i8], codes: &[i8], dim: usize, out: &mut Vec<i32>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor was just found to have AVX2, the only feature it is built for.
        unsafe { scores_avx2(query, codes, dim, out) };
        return;
    }
    scores_portable(query, codes, dim, out)
}

fn distances_portable(query: &[u64], bits: &[u64], words: usize, out: &mut Vec<u16>) {
    out.extend(bits.chunks_exact(words).map(|b| differ(query, b)));
}

/// The same with the processor's own bit count (one instruction a word, not twelve).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn distances_popcnt(query: &[u64], bits: &[u64], words: usize, out: &mut Vec<u16>) {
    out.extend(bits.chunks_exact(words).map(|b| differ(query, b)));
}

fn distances_one(query: &[u64], bits: &[u64], words: usize, out: &mut Vec<u16>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the processor was just found to have POPCNT, the only feature it is built for.
        unsafe { distances_popcnt(query, bits, words, out) };
        return;
    }
    distances_portable(query, bits, words, out)
}

/// Vectors per thread below which a search stays on one thread (a thread costs more than it
/// saves on fewer).
pub const PER_THREAD: usize = 32_768;

/// `each` over `items` (`width` items a vector), on every core for a large history, the
/// outputs in the vectors' order.
fn across_cores<T: Sync, U: Send>(
    items: &[T],
    width: usize,
    out: &mut Vec<U>,
    each: impl Fn(&[T], &mut Vec<U>) + Sync,
) {
    let n = items.len() / width.max(1);
    let threads = std::thread::available_parallelism()
        .map_or(1, |c| c.get())
        .min(n / PER_THREAD)
        .min(8);
    if threads <= 1 {
        return each(items, out);
    }
    let share = n.div_ceil(threads) * width;
    let parts: Vec<Vec<U>> = std::thread::scope(|s| {
        let running: Vec<_> = items
            .chunks(share)
            .map(|part| {
                let each = &each;
                s.spawn(move || {
                    let mut o = Vec::with_capacity(part.len() / width);
                    each(part, &mut o);
                    o
                })
            })
            .collect();
        running
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for p in parts {
        out.extend(p);
    }
}

/// Scores of `query` against every vector of `codes` (`dim` codes each).
pub fn scores(query: &[i8], codes: &[i8], dim: usize, out: &mut Vec<i32>) {
    across_cores(codes, dim, out, |part, o| scores_one(query, part, dim, o));
}

/// Differing signs of `query` and every vector of `bits` (`words` words each).
pub fn distances(query: &[u64], bits: &[u64], words: usize, out: &mut Vec<u16>) {
    across_cores(bits, words, out, |part, o| {
        distances_one(query, part, words, o)
    });
}

/// The places of the `want` smallest of `distances` (ties at the edge in order), in order:
/// a count per distance finds the edge, one more pass takes what is under it.
pub fn fewest(distances: &[u16], want: usize) -> Vec<usize> {
    if want >= distances.len() {
        return (0..distances.len()).collect();
    }
    let top = distances.iter().copied().max().unwrap_or(0) as usize;
    let mut counts = vec![0usize; top + 1];
    for &d in distances {
        counts[d as usize] += 1;
    }
    let (mut edge, mut below) = (0, 0);
    while edge < top && below + counts[edge] < want {
        below += counts[edge];
        edge += 1;
    }
    let mut at_edge = want - below;
    let mut out = Vec::with_capacity(want);
    for (slot, &d) in distances.iter().enumerate() {
        let d = d as usize;
        if d < edge {
            out.push(slot);
        } else if d == edge && at_edge > 0 {
            at_edge -= 1;
            out.push(slot);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_of_scoring_agrees_on_every_length() {
        let codes: Vec<i8> = (0..37 * 5).map(|i| ((i * 73) % 255) as i8).collect();
        let query: Vec<i8> = (0..37).map(|i| ((i * 31) % 251) as i8).collect();
        let want: Vec<i32> = codes
            .chunks_exact(37)
            .map(|c| {
                c.iter()
                    .zip(&query)
                    .map(|(&x, &y)| x as i32 * y as i32)
                    .sum()
            })
            .collect();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        scores_portable(&query, &codes, 37, &mut a);
        scores(&query, &codes, 37, &mut b);
        assert_eq!(a, want);
        assert_eq!(b, want);
        // A history large enough to be shared out among threads keeps its order.
        let many: Vec<i8> = (0..4 * PER_THREAD * 8)
            .map(|i| ((i * 7) % 253) as i8)
            .collect();
        let (mut one, mut all) = (Vec::new(), Vec::new());
        scores_one(&query[..8], &many, 8, &mut one);
        scores(&query[..8], &many, 8, &mut all);
        assert_eq!(one.len(), 4 * PER_THREAD);
        assert_eq!(one, all);
        let extreme = vec![-128i8; 384];
        assert_eq!(
            dot(&extreme, &extreme),
            384 * 128 * 128,
            "no overflow at the edges"
        );
    }

    #[test]
    fn signs_and_their_distances_count_every_number() {
        let a: Vec<i8> = (0..70).map(|i| if i % 3 == 0 { 5 } else { -5 }).collect();
        let b: Vec<i8> = (0..70).map(|i| if i % 2 == 0 { 5 } else { 0 }).collect();
        let (sa, sb) = (signs(&a), signs(&b));
        assert_eq!(sa.len(), 2, "70 numbers take two words");
        let want = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| (**x > 0) != (**y > 0))
            .count();
        assert_eq!(differ(&sa, &sb) as usize, want);
        // Every way of counting, on one thread and shared out, agrees.
        let bits: Vec<u64> = (0..4 * PER_THREAD as u64 * 2)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let (mut p, mut all) = (Vec::new(), Vec::new());
        distances_portable(&sa, &bits, 2, &mut p);
        distances(&sa, &bits, 2, &mut all);
        assert_eq!(p.len(), 4 * PER_THREAD);
        assert_eq!(p, all);
    }

    #[test]
    fn the_fewest_are_the_smallest_with_ties_cut_in_order() {
        let d = [5u16, 1, 3, 1, 9, 3, 0, 3];
        assert_eq!(fewest(&d, 3), vec![1, 3, 6]);
        assert_eq!(
            fewest(&d, 4),
            vec![1, 2, 3, 6],
            "one of three ties, the first"
        );
        assert_eq!(fewest(&d, 8), (0..8).collect::<Vec<_>>());
        assert_eq!(fewest(&d, 20).len(), 8);
        assert!(fewest(&d, 0).is_empty());
        assert_eq!(fewest(&[u16::MAX, 2], 1), vec![1]);
        assert_eq!(fewest(&[u16::MAX, u16::MAX], 1), vec![0]);
    }
}
