//! `y = x · Wᵀ` (added to y) for a few rows of x: a search's question, a short turn.
//!
//! sgemm copies W into panels of its own before it multiplies; for a handful of rows that copy
//! costs more than the product, and a question's time went mostly to it. Here each weight row is
//! read once, where it lies, and dotted with every row of x (which stays in cache): two weight
//! rows against four rows of x at a time, eight running sums in registers, so the processor's
//! multiply-adds are never waiting on one another.
//!
//! Every number of y is summed the same way whichever part computes it (the pairing of weight
//! rows and the grouping of x's rows never change one sum's order), so a vector is the same on
//! one thread or four.

/// `y[r][j] += x[r] · W[j]` for the `n` rows of x and the columns `from..from + cols`.
///
/// # Safety
/// x is n×inp and W out×inp (row-major, as the slices' lengths say); y points at n×out numbers
/// (row-major); `from + cols <= out`; no other thread reads or writes these columns of y
/// meanwhile.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn product(
    w: &[f32],
    inp: usize,
    out: usize,
    x: &[f32],
    n: usize,
    y: *mut f32,
    from: usize,
    cols: usize,
) {
    assert!(
        w.len() >= out * inp && x.len() >= n * inp && from + cols <= out,
        "shapes checked at load"
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has AVX2 and FMA; the shapes were just checked; y is the
        // caller's promise.
        return unsafe { avx2::product(w, inp, out, x, n, y, from, cols) };
    }
    for j in from..from + cols {
        let row = &w[j * inp..(j + 1) * inp];
        for r in 0..n {
            let v = dot(row, &x[r * inp..(r + 1) * inp]);
            // SAFETY: row r < n and column j < out of y, which this call alone writes.
            unsafe { *y.add(r * out + j) += v };
        }
    }
}

/// A dot product in 32 lanes, four vector registers' worth summed apart (so no sum waits on the
/// one before), added up at the end.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 32];
    let (ca, cb) = (a.chunks_exact(32), b.chunks_exact(32));
    let rest: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..32 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + rest
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// [`super::product`] in AVX2 and FMA.
    ///
    /// # Safety
    /// The processor has AVX2 and FMA; the rest is [`super::product`]'s.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn product(
        w: &[f32],
        inp: usize,
        out: usize,
        x: &[f32],
        n: usize,
        y: *mut f32,
        from: usize,
        cols: usize,
    ) {
        let end = from + cols;
        let mut j = from;
        while j < end {
            let pair = end - j >= 2;
            let w0 = &w[j * inp..(j + 1) * inp];
            let w1 = if pair {
                &w[(j + 1) * inp..(j + 2) * inp]
            } else {
                w0
            };
            let mut r = 0;
            while r < n {
                let take = (n - r).min(4);
                let xs = &x[r * inp..(r + take) * inp];
                let sums = match take {
                    4 => rows::<4>(w0, w1, xs, inp),
                    3 => rows::<3>(w0, w1, xs, inp),
                    2 => rows::<2>(w0, w1, xs, inp),
                    _ => rows::<1>(w0, w1, xs, inp),
                };
                for (i, s) in sums.iter().enumerate().take(take) {
                    // SAFETY: rows r + i < n and columns j (and j + 1 < end when paired) of y,
                    // which this call alone writes.
                    unsafe {
                        *y.add((r + i) * out + j) += s[0];
                        if pair {
                            *y.add((r + i) * out + j + 1) += s[1];
                        }
                    }
                }
                r += take;
            }
            j += if pair { 2 } else { 1 };
        }
    }

    /// The dot products of weight rows `w0` and `w1` with the `R` rows of `xs` (each `inp`
    /// long): `[row][weight row]`.
    #[target_feature(enable = "avx2,fma")]
    fn rows<const R: usize>(w0: &[f32], w1: &[f32], xs: &[f32], inp: usize) -> [[f32; 2]; 4] {
        assert!(w0.len() >= inp && w1.len() >= inp && xs.len() >= R * inp && R <= 4);
        let whole = inp - inp % 8;
        let mut a0 = [_mm256_setzero_ps(); R];
        let mut a1 = [_mm256_setzero_ps(); R];
        let mut k = 0;
        while k < whole {
            // SAFETY: k + 8 <= inp, within each row, as asserted above.
            unsafe {
                let v0 = _mm256_loadu_ps(w0.as_ptr().add(k));
                let v1 = _mm256_loadu_ps(w1.as_ptr().add(k));
                for i in 0..R {
                    let xv = _mm256_loadu_ps(xs.as_ptr().add(i * inp + k));
                    a0[i] = _mm256_fmadd_ps(v0, xv, a0[i]);
                    a1[i] = _mm256_fmadd_ps(v1, xv, a1[i]);
                }
            }
            k += 8;
        }
        let mut sums = [[0f32; 2]; 4];
        for i in 0..R {
            let row = &xs[i * inp..(i + 1) * inp];
            let tail = |w: &[f32]| -> f32 { (whole..inp).map(|k| w[k] * row[k]).sum::<f32>() };
            sums[i] = [sum(a0[i]) + tail(w0), sum(a1[i]) + tail(w1)];
        }
        sums
    }

    /// The eight lanes of `v` added up.
    #[target_feature(enable = "avx2,fma")]
    fn sum(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps::<1>(s, s));
        _mm_cvtss_f32(s)
    }
}

#[cfg(test)]
mod tests {
    /// Every way through the product (paired weight rows or one alone, four rows of x or fewer,
    /// lengths with and without a tail) gives float64's answer to float32's rounding.
    #[test]
    fn the_product_is_the_exact_one_to_rounding_for_any_shape() {
        let mut seed = 11u32;
        let mut rand = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        for (out, inp, n) in [(7, 37, 1), (9, 40, 3), (16, 384, 6), (5, 13, 4), (3, 64, 9)] {
            let w: Vec<f32> = (0..out * inp).map(|_| rand()).collect();
            let x: Vec<f32> = (0..n * inp).map(|_| rand()).collect();
            for (from, cols) in [(0, out), (1, out - 1), (out - 1, 1)] {
                let mut y = vec![1f32; n * out];
                // SAFETY: the shapes are as said and y is this test's own.
                unsafe { super::product(&w, inp, out, &x, n, y.as_mut_ptr(), from, cols) };
                for r in 0..n {
                    for j in 0..out {
                        let want = if (from..from + cols).contains(&j) {
                            1.0 + (0..inp)
                                .map(|k| x[r * inp + k] as f64 * w[j * inp + k] as f64)
                                .sum::<f64>()
                        } else {
                            1.0
                        };
                        let got = y[r * out + j] as f64;
                        assert!(
                            (got - want).abs() < 1e-5,
                            "{out}×{inp}, {n} rows, from {from}: y[{r}][{j}] = {got}, not {want}"
                        );
                    }
                }
            }
        }
    }
}
