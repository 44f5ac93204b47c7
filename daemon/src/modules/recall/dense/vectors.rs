//! The turns' meaning vectors, kept small and searched whole: each unit vector is stored as one
//! signed byte per number and a scale (a quarter of a float's size; ranking moves by less than
//! the model's own noise), and a query is compared with every vector a caller may see. On 233k
//! turns that is 90 MB read per search, about 15 ms on one core with AVX2 (the bench measures
//! it): no approximate index to build, tune or keep in step with the rows.

use std::collections::HashMap;

/// A vector as stored: its numbers scaled into `i8`, and the scale that brings them back.
#[derive(Debug, Clone, PartialEq)]
pub struct Packed {
    pub scale: f32,
    pub codes: Vec<i8>,
}

/// Bytes a packed vector takes in the store: its scale (4, little-endian) then its codes.
pub fn to_bytes(p: &Packed) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + p.codes.len());
    out.extend_from_slice(&p.scale.to_le_bytes());
    out.extend(p.codes.iter().map(|&c| c as u8));
    out
}

/// A stored vector read back; `None` for bytes of another length (another model's).
pub fn from_bytes(b: &[u8], dim: usize) -> Option<Packed> {
    if b.len() != 4 + dim {
        return None;
    }
    let scale = f32::from_le_bytes(b[..4].try_into().ok()?);
    if !scale.is_finite() {
        return None;
    }
    Some(Packed {
        scale,
        codes: b[4..].iter().map(|&c| c as i8).collect(),
    })
}

/// `v` packed: its largest number becomes ±127.
pub fn pack(v: &[f32]) -> Packed {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return Packed {
            scale: 0.0,
            codes: vec![0; v.len()],
        };
    }
    let scale = max / 127.0;
    Packed {
        scale,
        codes: v
            .iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
            .collect(),
    }
}

/// The dot product of two packed vectors' codes, in sixteen lanes summed at the end: integer
/// sums reorder freely, so the compiler keeps the lanes in vector registers and multiplies
/// sixteen pairs at a time (a length not a multiple of 16 has its rest added one by one).
#[inline(always)]
fn dot_lanes(a: &[i8], b: &[i8]) -> i32 {
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

/// Scores of `query` against each vector of `codes` (`dim` codes each), into `out`.
fn scores_portable(query: &[i8], codes: &[i8], dim: usize, out: &mut Vec<i32>) {
    out.extend(codes.chunks_exact(dim).map(|c| dot_lanes(query, c)));
}

/// The same, compiled for AVX2 (most x86 machines of the last ten years): twice as fast.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scores_avx2(query: &[i8], codes: &[i8], dim: usize, out: &mut Vec<i32>) {
    out.extend(codes.chunks_exact(dim).map(|c| dot_lanes(query, c)));
}

/// Vectors per thread below which a search stays on one thread (a thread costs more than it
/// saves on fewer).
const PER_THREAD: usize = 32_768;

/// Scores of `query` against every vector of `codes`, on every core for a large history: a
/// search is someone waiting, and the embedder steps aside while one runs.
fn scores(query: &[i8], codes: &[i8], dim: usize, out: &mut Vec<i32>) {
    let n = codes.len() / dim.max(1);
    let threads = std::thread::available_parallelism()
        .map_or(1, |c| c.get())
        .min(n / PER_THREAD)
        .min(8);
    if threads <= 1 {
        return scores_one(query, codes, dim, out);
    }
    let share = n.div_ceil(threads) * dim;
    let parts: Vec<Vec<i32>> = std::thread::scope(|s| {
        let running: Vec<_> = codes
            .chunks(share)
            .map(|part| {
                s.spawn(move || {
                    let mut o = Vec::with_capacity(part.len() / dim);
                    scores_one(query, part, dim, &mut o);
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

#[cfg(test)]
fn dot(a: &[i8], b: &[i8]) -> i32 {
    dot_lanes(a, b)
}

/// Every vector in memory, one block of codes, with the turn and the session of each.
#[derive(Default)]
pub struct Vectors {
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    ids: Vec<i64>,
    sessions: Vec<u32>,
    slot_of: HashMap<i64, usize>,
    session_names: Vec<String>,
    session_of: HashMap<String, u32>,
}

impl Vectors {
    pub fn new(dim: usize) -> Vectors {
        Vectors {
            dim,
            ..Vectors::default()
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Bytes held, for `recall.status` and the bench.
    pub fn bytes(&self) -> usize {
        self.codes.len() + self.scales.len() * 4 + self.ids.len() * 12
    }

    /// Add turn `id`'s vector, or replace it (a reply that grew was embedded again).
    pub fn put(&mut self, id: i64, session: &str, p: &Packed) {
        if p.codes.len() != self.dim {
            return;
        }
        let s = match self.session_of.get(session) {
            Some(&s) => s,
            None => {
                let s = self.session_names.len() as u32;
                self.session_names.push(session.to_string());
                self.session_of.insert(session.to_string(), s);
                s
            }
        };
        match self.slot_of.get(&id) {
            Some(&slot) => {
                self.codes[slot * self.dim..(slot + 1) * self.dim].copy_from_slice(&p.codes);
                self.scales[slot] = p.scale;
                self.sessions[slot] = s;
            }
            None => {
                self.slot_of.insert(id, self.ids.len());
                self.ids.push(id);
                self.codes.extend_from_slice(&p.codes);
                self.scales.push(p.scale);
                self.sessions.push(s);
            }
        }
    }

    /// The `k` turns closest in meaning to `query` (a unit vector), closest first, with their
    /// cosine similarity; only within `sessions` when given.
    pub fn nearest(&self, query: &[f32], sessions: Option<&[String]>, k: usize) -> Vec<(i64, f32)> {
        if query.len() != self.dim || k == 0 {
            return vec![];
        }
        let allowed: Option<Vec<bool>> = sessions.map(|list| {
            let mut mask = vec![false; self.session_names.len()];
            for name in list {
                if let Some(&s) = self.session_of.get(name) {
                    mask[s as usize] = true;
                }
            }
            mask
        });
        if allowed.as_ref().is_some_and(|m| !m.contains(&true)) {
            return vec![];
        }
        let q = pack(query);
        // Every score first (one tight loop the processor's vector units take), then the best k:
        // a min-heap by score, worst on top.
        // Fenced to some sessions, only theirs are scored.
        let raw: Vec<(usize, i32)> = match &allowed {
            None => {
                let mut all = Vec::with_capacity(self.ids.len());
                scores(&q.codes, &self.codes, self.dim, &mut all);
                all.into_iter().enumerate().collect()
            }
            Some(mask) => (0..self.ids.len())
                .filter(|&slot| mask[self.sessions[slot] as usize])
                .map(|slot| {
                    let codes = &self.codes[slot * self.dim..(slot + 1) * self.dim];
                    (slot, dot_lanes(&q.codes, codes))
                })
                .collect(),
        };
        let mut best: std::collections::BinaryHeap<std::cmp::Reverse<(Score, usize)>> =
            std::collections::BinaryHeap::with_capacity(k + 1);
        for (slot, raw) in raw {
            let score = Score(raw as f32 * self.scales[slot]);
            if best.len() < k {
                best.push(std::cmp::Reverse((score, slot)));
            } else if best.peek().is_some_and(|w| score > w.0.0) {
                best.pop();
                best.push(std::cmp::Reverse((score, slot)));
            }
        }
        let mut out: Vec<(i64, f32)> = best
            .into_iter()
            .map(|std::cmp::Reverse((s, slot))| (self.ids[slot], s.0 * q.scale))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out
    }
}

/// A similarity that orders totally (a NaN cannot come out of finite codes and scales).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Score(f32);
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

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
    fn packing_keeps_the_similarity_within_a_hair() {
        let a = unit(&[0.3, -0.7, 0.1, 0.9, -0.2, 0.05, 0.4, -0.6]);
        let b = unit(&[0.2, -0.5, 0.3, 0.8, 0.1, -0.3, 0.2, -0.4]);
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let (pa, pb) = (pack(&a), pack(&b));
        let packed = dot(&pa.codes, &pb.codes) as f32 * pa.scale * pb.scale;
        assert!((exact - packed).abs() < 0.01, "{exact} vs {packed}");
        let back = from_bytes(&to_bytes(&pa), a.len()).unwrap();
        assert_eq!(back, pa);
        assert!(
            from_bytes(&to_bytes(&pa), a.len() + 1).is_none(),
            "another model's size"
        );
        assert_eq!(
            pack(&[0.0; 4]).scale,
            0.0,
            "a zero vector packs to zeros, not NaN"
        );
    }

    #[test]
    fn the_nearest_come_first_and_only_from_the_sessions_asked() {
        let mut v = Vectors::new(3);
        v.put(1, "a", &pack(&unit(&[1.0, 0.0, 0.0])));
        v.put(2, "a", &pack(&unit(&[0.7, 0.7, 0.0])));
        v.put(3, "b", &pack(&unit(&[0.0, 1.0, 0.0])));
        v.put(4, "b", &pack(&unit(&[0.9, 0.1, 0.0])));
        let q = unit(&[1.0, 0.05, 0.0]);
        let ids = |hits: Vec<(i64, f32)>| hits.into_iter().map(|h| h.0).collect::<Vec<_>>();
        assert_eq!(ids(v.nearest(&q, None, 3)), vec![1, 4, 2]);
        assert_eq!(ids(v.nearest(&q, Some(&["b".into()]), 3)), vec![4, 3]);
        assert!(v.nearest(&q, Some(&["c".into()]), 3).is_empty());
        assert!(v.nearest(&q, Some(&[]), 3).is_empty());
        // Embedded again (a reply that grew): replaced in place, never twice.
        v.put(4, "b", &pack(&unit(&[0.0, 0.0, 1.0])));
        assert_eq!(v.len(), 4);
        assert_eq!(ids(v.nearest(&q, None, 2)), vec![1, 2]);
        let top = v.nearest(&q, None, 1)[0].1;
        assert!((top - 0.9987).abs() < 0.01, "a cosine: {top}");
        assert!(
            v.nearest(&[1.0, 0.0], None, 3).is_empty(),
            "a query of another size"
        );
    }
}
