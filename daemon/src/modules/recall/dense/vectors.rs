//! The turns' meaning vectors, kept small: each unit vector is stored as one signed byte per
//! number and a scale (a quarter of a float's size; ranking moves by less than the model's own
//! noise), with its signs as bits beside. A query is compared with every vector a caller may
//! see. On a large history (233k turns: 90 MB of codes) that is done in two steps: the signs of
//! every vector (11 MB, about 1 ms on two cores), then the full comparison of the few thousand
//! closest. No index to build, tune or keep in step with the rows; the bench measures how much
//! of the exact answer the two steps keep.

use std::collections::HashMap;

use super::scan;

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

/// Histories over this many vectors are searched in two steps: the signs of every vector first,
/// then the full comparison of the closest [`SHORTLIST`] (or 64 a hit asked for, if more). Below
/// it, every vector is compared in full: fast enough, and exact.
pub const TWO_STEPS_FROM: usize = 20_000;

/// Vectors the rough step keeps for the full comparison. The bench measures how many of the
/// exact best it keeps on a large history (`dense.shortlist_recall`).
pub const SHORTLIST: usize = 4096;

/// Every vector in memory, one block of codes and one of their signs, with the turn and the
/// session of each.
#[derive(Default)]
pub struct Vectors {
    dim: usize,
    codes: Vec<i8>,
    /// The signs of each vector's codes, [`Vectors::words`] `u64`s a vector.
    signs: Vec<u64>,
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

    /// `u64`s of signs a vector has.
    fn words(&self) -> usize {
        self.dim.div_ceil(64)
    }

    /// Bytes held, for `recall.status` and the bench.
    pub fn bytes(&self) -> usize {
        self.codes.len() + self.signs.len() * 8 + self.scales.len() * 4 + self.ids.len() * 12
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
        let signs = scan::signs(&p.codes);
        let words = self.words();
        match self.slot_of.get(&id) {
            Some(&slot) => {
                self.codes[slot * self.dim..(slot + 1) * self.dim].copy_from_slice(&p.codes);
                self.signs[slot * words..(slot + 1) * words].copy_from_slice(&signs);
                self.scales[slot] = p.scale;
                self.sessions[slot] = s;
            }
            None => {
                self.slot_of.insert(id, self.ids.len());
                self.ids.push(id);
                self.codes.extend_from_slice(&p.codes);
                self.signs.extend_from_slice(&signs);
                self.scales.push(p.scale);
                self.sessions.push(s);
            }
        }
    }

    /// The `k` turns closest in meaning to `query` (a unit vector), closest first, with their
    /// cosine similarity; only within `sessions` when given. A large history unfenced is
    /// searched in two steps ([`TWO_STEPS_FROM`]).
    pub fn nearest(&self, query: &[f32], sessions: Option<&[String]>, k: usize) -> Vec<(i64, f32)> {
        self.search(query, sessions, k, true)
    }

    /// [`Vectors::nearest`] with every vector compared in full, whatever the size: what the
    /// two steps are measured against.
    pub fn nearest_exact(&self, query: &[f32], k: usize) -> Vec<(i64, f32)> {
        self.search(query, None, k, false)
    }

    fn search(
        &self,
        query: &[f32],
        sessions: Option<&[String]>,
        k: usize,
        two_steps: bool,
    ) -> Vec<(i64, f32)> {
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
        let full = |slot: usize| {
            let codes = &self.codes[slot * self.dim..(slot + 1) * self.dim];
            (slot, scan::dot(&q.codes, codes))
        };
        // Every score first (one tight loop the processor's vector units take), then the best k.
        // Fenced to some sessions, only theirs are scored.
        let raw: Vec<(usize, i32)> = match &allowed {
            Some(mask) => (0..self.ids.len())
                .filter(|&slot| mask[self.sessions[slot] as usize])
                .map(full)
                .collect(),
            None if two_steps && self.ids.len() > TWO_STEPS_FROM => {
                let words = self.words();
                let mut d = Vec::with_capacity(self.ids.len());
                scan::distances(&scan::signs(&q.codes), &self.signs, words, &mut d);
                scan::fewest(&d, SHORTLIST.max(k * 64))
                    .into_iter()
                    .map(full)
                    .collect()
            }
            None => {
                let mut all = Vec::with_capacity(self.ids.len());
                scan::scores(&q.codes, &self.codes, self.dim, &mut all);
                all.into_iter().enumerate().collect()
            }
        };
        // The best k: a min-heap by score, worst on top.
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
    fn packing_keeps_the_similarity_within_a_hair() {
        let a = unit(&[0.3, -0.7, 0.1, 0.9, -0.2, 0.05, 0.4, -0.6]);
        let b = unit(&[0.2, -0.5, 0.3, 0.8, 0.1, -0.3, 0.2, -0.4]);
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let (pa, pb) = (pack(&a), pack(&b));
        let packed = scan::dot(&pa.codes, &pb.codes) as f32 * pa.scale * pb.scale;
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

    #[test]
    fn a_large_history_searched_in_two_steps_finds_what_every_comparison_finds() {
        let dim = 64;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        let mut v = Vectors::new(dim);
        let mut kept = Vec::new();
        for id in 0..(TWO_STEPS_FROM as i64 + 5_000) {
            let x = unit(&(0..dim).map(|_| next()).collect::<Vec<_>>());
            v.put(id, &format!("s{}", id % 7), &pack(&x));
            if id % 1000 == 0 {
                kept.push((id, x));
            }
        }
        assert!(v.len() > TWO_STEPS_FROM);
        for (id, x) in &kept {
            // A question close to a turn: that turn first, and the rest as every comparison has it.
            let q = unit(&x.iter().map(|a| a + next() * 0.05).collect::<Vec<_>>());
            let two = v.nearest(&q, None, 10);
            let exact = v.nearest_exact(&q, 10);
            assert_eq!(two[0].0, *id);
            let same = two.iter().filter(|h| exact.contains(h)).count();
            assert!(same >= 9, "{same} of 10 for turn {id}");
            // Fenced, every comparison is made.
            let fenced = v.nearest(&q, Some(&[format!("s{}", id % 7)]), 1);
            assert_eq!(fenced[0].0, *id);
        }
        assert_eq!(
            v.bytes(),
            v.len() * (dim + 8 + 4 + 12),
            "codes, signs, scale, id and slot"
        );
    }
}
