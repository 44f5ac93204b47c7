//! A BERT encoder's forward pass for one sequence, as sentence-transformers runs MiniLM: the
//! embeddings, N layers of self-attention and a GELU feed-forward (post-LayerNorm), then the
//! mean of the token vectors, L2-normalised. f32 throughout; the matrix products are
//! matrixmultiply's. Shapes are checked as the weights load, so a model of another shape is an
//! error there and never an out-of-bounds read here.

use super::weights::Tensors;

/// The shape of a BERT encoder.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub vocab: usize,
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub positions: usize,
}

impl Shape {
    /// From the model's `config.json`.
    pub fn from_config(c: &serde_json::Value) -> Result<Shape, String> {
        let n = |k: &str| {
            c[k].as_u64()
                .map(|v| v as usize)
                .filter(|v| *v > 0)
                .ok_or_else(|| format!("the model's config has no {k}"))
        };
        let shape = Shape {
            vocab: n("vocab_size")?,
            hidden: n("hidden_size")?,
            layers: n("num_hidden_layers")?,
            heads: n("num_attention_heads")?,
            intermediate: n("intermediate_size")?,
            positions: n("max_position_embeddings")?,
        };
        if !shape.hidden.is_multiple_of(shape.heads) || c["hidden_act"] != "gelu" {
            return Err("the model is not a BERT encoder this Vyre runs".into());
        }
        Ok(shape)
    }
}

struct Linear {
    w: Vec<f32>, // [out, in]
    b: Vec<f32>,
    out: usize,
    inp: usize,
}

struct Norm {
    w: Vec<f32>,
    b: Vec<f32>,
}

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    attn_norm: Norm,
    up: Linear,
    down: Linear,
    out_norm: Norm,
}

pub struct Bert {
    shape: Shape,
    words: Vec<f32>,
    positions: Vec<f32>,
    types: Vec<f32>,
    embed_norm: Norm,
    layers: Vec<Layer>,
}

const EPS: f32 = 1e-12;

impl Bert {
    pub fn load(shape: Shape, t: &mut Tensors) -> Result<Bert, String> {
        let h = shape.hidden;
        let norm = |t: &mut Tensors, p: &str| -> Result<Norm, String> {
            Ok(Norm {
                w: t.take(&format!("{p}.weight"), &[h])?,
                b: t.take(&format!("{p}.bias"), &[h])?,
            })
        };
        let linear = |t: &mut Tensors, p: &str, out: usize, inp: usize| -> Result<Linear, String> {
            Ok(Linear {
                w: t.take(&format!("{p}.weight"), &[out, inp])?,
                b: t.take(&format!("{p}.bias"), &[out])?,
                out,
                inp,
            })
        };
        let mut layers = Vec::with_capacity(shape.layers);
        for i in 0..shape.layers {
            let p = format!("encoder.layer.{i}");
            layers.push(Layer {
                q: linear(t, &format!("{p}.attention.self.query"), h, h)?,
                k: linear(t, &format!("{p}.attention.self.key"), h, h)?,
                v: linear(t, &format!("{p}.attention.self.value"), h, h)?,
                o: linear(t, &format!("{p}.attention.output.dense"), h, h)?,
                attn_norm: norm(t, &format!("{p}.attention.output.LayerNorm"))?,
                up: linear(t, &format!("{p}.intermediate.dense"), shape.intermediate, h)?,
                down: linear(t, &format!("{p}.output.dense"), h, shape.intermediate)?,
                out_norm: norm(t, &format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(Bert {
            words: t.take("embeddings.word_embeddings.weight", &[shape.vocab, h])?,
            positions: t.take(
                "embeddings.position_embeddings.weight",
                &[shape.positions, h],
            )?,
            types: t.take("embeddings.token_type_embeddings.weight", &[2, h])?,
            embed_norm: norm(t, "embeddings.LayerNorm")?,
            layers,
            shape,
        })
    }

    pub fn dim(&self) -> usize {
        self.shape.hidden
    }

    /// The most tokens one sequence may have.
    pub fn max_tokens(&self) -> usize {
        self.shape.positions
    }

    /// The sentence vector of `ids` (at most [`Bert::max_tokens`]; more are cut), unit length,
    /// with each matrix product shared among `threads` threads.
    pub fn embed(&self, ids: &[u32], threads: usize) -> Vec<f32> {
        let h = self.shape.hidden;
        let ids = &ids[..ids.len().min(self.shape.positions)];
        let n = ids.len().max(1);
        let mut x = vec![0f32; n * h];
        for (t, id) in ids.iter().enumerate() {
            let id = (*id as usize).min(self.shape.vocab - 1);
            let row = &mut x[t * h..(t + 1) * h];
            let (w, p, ty) = (
                &self.words[id * h..(id + 1) * h],
                &self.positions[t * h..(t + 1) * h],
                &self.types[..h],
            );
            for i in 0..h {
                row[i] = w[i] + p[i] + ty[i];
            }
        }
        layer_norm(&mut x, &self.embed_norm, h);
        let mut scratch = Scratch::new(n, &self.shape, threads.max(1));
        for layer in &self.layers {
            self.layer(layer, &mut x, n, &mut scratch);
        }
        let mut pooled = vec![0f32; h];
        for row in x.chunks_exact(h) {
            for (p, v) in pooled.iter_mut().zip(row) {
                *p += v;
            }
        }
        let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
        pooled.iter_mut().for_each(|v| *v /= norm);
        pooled
    }

    fn layer(&self, l: &Layer, x: &mut [f32], n: usize, s: &mut Scratch) {
        let h = self.shape.hidden;
        let heads = self.shape.heads;
        let d = h / heads;
        let t = s.threads;
        linear(&l.q, x, n, &mut s.q, t);
        linear(&l.k, x, n, &mut s.k, t);
        linear(&l.v, x, n, &mut s.v, t);
        let scale = 1.0 / (d as f32).sqrt();
        for head in 0..heads {
            // scores = Q_h · K_hᵀ / √d, one sequence: nothing masked.
            unsafe {
                matrixmultiply::sgemm(
                    n,
                    d,
                    n,
                    scale,
                    s.q.as_ptr().add(head * d),
                    h as isize,
                    1,
                    s.k.as_ptr().add(head * d),
                    1,
                    h as isize,
                    0.0,
                    s.scores.as_mut_ptr(),
                    n as isize,
                    1,
                );
            }
            for row in s.scores.chunks_exact_mut(n) {
                softmax(row);
            }
            // context_h = P · V_h, written into its head's columns.
            unsafe {
                matrixmultiply::sgemm(
                    n,
                    n,
                    d,
                    1.0,
                    s.scores.as_ptr(),
                    n as isize,
                    1,
                    s.v.as_ptr().add(head * d),
                    h as isize,
                    1,
                    0.0,
                    s.ctx.as_mut_ptr().add(head * d),
                    h as isize,
                    1,
                );
            }
        }
        linear(&l.o, &s.ctx, n, &mut s.q, t);
        for (xi, oi) in x.iter_mut().zip(&s.q) {
            *xi += oi;
        }
        layer_norm(x, &l.attn_norm, h);
        linear(&l.up, x, n, &mut s.up, t);
        gelu_all(&mut s.up[..n * self.shape.intermediate]);
        linear(&l.down, &s.up, n, &mut s.q, t);
        for (xi, oi) in x.iter_mut().zip(&s.q) {
            *xi += oi;
        }
        layer_norm(x, &l.out_norm, h);
    }
}

/// Buffers one sequence's layers reuse.
struct Scratch {
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    ctx: Vec<f32>,
    scores: Vec<f32>,
    up: Vec<f32>,
    threads: usize,
}

impl Scratch {
    fn new(n: usize, s: &Shape, threads: usize) -> Scratch {
        Scratch {
            threads,
            q: vec![0.0; n * s.hidden],
            k: vec![0.0; n * s.hidden],
            v: vec![0.0; n * s.hidden],
            ctx: vec![0.0; n * s.hidden],
            scores: vec![0.0; n * n],
            up: vec![0.0; n * s.intermediate],
        }
    }
}

/// Output columns below which a product stays on one thread (a thread costs more than it saves).
const COLUMNS_PER_THREAD: usize = 128;

/// `y = x · Wᵀ + b` for `n` rows of `x`, W's rows (y's columns) shared among `threads`.
fn linear(l: &Linear, x: &[f32], n: usize, y: &mut [f32], threads: usize) {
    assert!(
        x.len() >= n * l.inp && y.len() >= n * l.out,
        "buffers sized for n rows"
    );
    for row in y[..n * l.out].chunks_exact_mut(l.out) {
        row.copy_from_slice(&l.b);
    }
    let threads = threads.min(l.out / COLUMNS_PER_THREAD).max(1);
    let share = l.out.div_ceil(threads);
    let y = Columns(y.as_mut_ptr());
    let part = |from: usize| {
        let cols = share.min(l.out - from);
        if n <= FEW_ROWS {
            // SAFETY: as below; `few::product` writes only columns `from..from + cols` of y's
            // n rows.
            return unsafe { super::few::product(&l.w, l.inp, l.out, x, n, y.0, from, cols) };
        }
        // SAFETY: x is n×inp and W is out×inp (read transposed), y is n×out, all row-major,
        // checked by the shapes taken at load and the assert above. Each part writes only its
        // own columns `from..from + cols` of y, so parts on other threads never overlap.
        unsafe {
            matrixmultiply::sgemm(
                n,
                l.inp,
                cols,
                1.0,
                x.as_ptr(),
                l.inp as isize,
                1,
                l.w.as_ptr().add(from * l.inp),
                1,
                l.inp as isize,
                1.0,
                y.at(from),
                l.out as isize,
                1,
            );
        }
    };
    if threads == 1 {
        return part(0);
    }
    std::thread::scope(|s| {
        for from in (share..l.out).step_by(share) {
            s.spawn(move || part(from));
        }
        part(0);
    });
}

/// Rows (tokens) up to which a product is [`super::few::product`]'s, not sgemm's: a search's
/// question, a short turn.
const FEW_ROWS: usize = 32;

/// The output of a product shared among threads, each writing its own columns.
#[derive(Clone, Copy)]
struct Columns(*mut f32);
// SAFETY: the pointer is only used by `linear`, whose parts write disjoint columns, and the
// scope it is shared in ends before the buffer can be touched again.
unsafe impl Send for Columns {}
unsafe impl Sync for Columns {}

impl Columns {
    /// The buffer's element `i` (row-major: row r's column c is `r * columns + c`).
    ///
    /// # Safety
    /// `i` is within the buffer.
    unsafe fn at(self, i: usize) -> *mut f32 {
        unsafe { self.0.add(i) }
    }
}

fn layer_norm(x: &mut [f32], n: &Norm, h: usize) {
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + EPS).sqrt();
        for ((v, w), b) in row.iter_mut().zip(&n.w).zip(&n.b) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    row.iter_mut().for_each(|v| *v /= sum);
}

/// GELU over every number of `v`, with the fastest code this processor runs: the loop below
/// has no branch and no call, so the compiler makes it eight numbers at a time.
fn gelu_all(v: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor was just found to have AVX2 and FMA, the features it is built for.
        unsafe { gelu_avx2(v) };
        return;
    }
    v.iter_mut().for_each(|x| *x = gelu(*x));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn gelu_avx2(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = gelu(*x));
}

/// GELU as BERT has it: x·Φ(x), with the error function.
#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The error function, Abramowitz and Stegun 7.1.26 (error under 1.5e-7; under 6e-7 in f32,
/// tested against a float64 reference): a fifth of the time of a float64 `exp` per number,
/// which made GELU a quarter of a turn's embedding.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152 + t * 1.061_405_4))));
    (1.0 - poly * exp_neg(a * a)).copysign(x)
}

/// e^-z for z ≥ 0 (0 past 87, where it is under f32's smallest normal): z split into n·ln 2 + r,
/// e^r by its series to r⁶ (|r| ≤ ln 2 / 2), and 2^n made from its bits.
#[inline(always)]
fn exp_neg(z: f32) -> f32 {
    let z = z.min(87.0);
    let n = (0.5 - z * std::f32::consts::LOG2_E).floor();
    // ln 2 in two parts, so that n·ln 2 loses nothing to rounding.
    let r = -z - n * 0.693_145_75 - n * 1.428_606_8e-6;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_668 + r * (0.008_333_334 + r * 0.001_388_889)))));
    f32::from_bits((((n as i32) + 127) << 23) as u32) * p
}

#[cfg(test)]
mod tests {
    /// The error function from the Chebyshev fit of erfc in Numerical Recipes (fractional error
    /// under 1.2e-7), in f64: the reference.
    fn erf_f64(x: f32) -> f64 {
        let x = x as f64;
        let t = 1.0 / (1.0 + 0.5 * x.abs());
        let y = 1.0
            - t * (-x * x - 1.265_512_23
                + t * (1.000_023_68
                    + t * (0.374_091_96
                        + t * (0.096_784_18
                            + t * (-0.186_288_06
                                + t * (0.278_868_07
                                    + t * (-1.135_203_98
                                        + t * (1.488_515_87
                                            + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
                .exp();
        if x >= 0.0 { y } else { -y }
    }

    /// A product of a few rows (a question's) is sgemm's, to float rounding, on any number of
    /// threads, and the same numbers on one thread as on three.
    #[test]
    fn a_few_rows_multiply_as_sgemm_does_on_any_threads() {
        let (out, inp) = (390, 37);
        let mut seed = 7u32;
        let mut rand = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let l = super::Linear {
            w: (0..out * inp).map(|_| rand()).collect(),
            b: (0..out).map(|_| rand()).collect(),
            out,
            inp,
        };
        for n in [1, 5, super::FEW_ROWS] {
            let x: Vec<f32> = (0..n * inp).map(|_| rand()).collect();
            let mut want = vec![0f32; n * out];
            for r in 0..n {
                for j in 0..out {
                    want[r * out + j] = l.b[j]
                        + (0..inp)
                            .map(|k| x[r * inp + k] as f64 * l.w[j * inp + k] as f64)
                            .sum::<f64>() as f32;
                }
            }
            let mut one = vec![0f32; n * out];
            super::linear(&l, &x, n, &mut one, 1);
            let mut three = vec![0f32; n * out];
            super::linear(&l, &x, n, &mut three, 3);
            assert_eq!(one, three, "n = {n}");
            for (a, b) in one.iter().zip(&want) {
                assert!((a - b).abs() < 1e-5, "n = {n}: {a} != {b}");
            }
        }
    }

    #[test]
    fn erf_is_close_to_its_known_values_and_its_reference_everywhere() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-2.0, -0.995_322_3),
            (3.5, 0.999_999_3),
        ] {
            assert!((super::erf(x) - want).abs() < 1e-6, "erf({x})");
        }
        for i in -200_000..200_000 {
            let x = i as f32 / 10_000.0;
            let d = (super::erf(x) as f64 - erf_f64(x)).abs();
            assert!(d < 1e-6, "erf({x}) is {d} off");
        }
        assert_eq!(super::erf(1e6), 1.0, "past exp's range");
        assert_eq!(super::erf(-f32::MAX), -1.0);
        // Every way of running GELU agrees.
        let mut v: Vec<f32> = (-500..500).map(|i| i as f32 / 50.0).collect();
        let want: Vec<f32> = v.iter().map(|&x| super::gelu(x)).collect();
        super::gelu_all(&mut v);
        assert_eq!(v, want);
    }
}
