//! Galerkin matrices of sampled coefficients: the hot path of the E-WR Jacobian.
//!
//! For a coefficient `a(tau)` known at the samples `tau_j`, its Galerkin matrix is
//! `G = P diag(a) S` (`S` synthesis, `P` projection, both as in [`crate::fourier`]), i.e.
//! `G_ij = w_i sum_j phi_i(tau_j) a(tau_j) phi_j(tau_j)` with `w_i = 2/N_t` (`1/N_t` for the
//! constant row), so that `project(a .* synthesize(x)) == G x` for every `x`. The Jacobian
//! `J = P diag(dPsi/dr) S + P diag(dPsi/dv) S D G` of the E-WR residual is made of such
//! blocks: each contact's `d x d` per-sample derivative entries become `d * d` Galerkin blocks.
//!
//! # Computation from one FFT
//!
//! With `C_m = sum_j a_j cos(m tau_j)` and `S_m = sum_j a_j sin(m tau_j)` (real and minus
//! imaginary part of the DFT of `a`), the product identities
//! `cos p cos q = (cos(p-q) + cos(p+q))/2`, `sin p sin q = (cos(p-q) - cos(p+q))/2`,
//! `cos p sin q = (sin(p+q) - sin(p-q))/2`, `sin p cos q = (sin(p+q) + sin(p-q))/2`
//! give every entry from `C` and `S` at `p - q` (Toeplitz part) and `p + q` (Hankel part).
//! One real FFT of `a` (`O(N_t log N_t)`) then fills the matrix in `O(n_coeffs^2)`, instead of
//! the `O(N_t n_coeffs^2)` of the direct quadrature ([`DenseGalerkin`]).
//!
//! # Aliasing conditions
//!
//! * **FFT formula == sampled quadrature**: exact (to rounding) for every `N_t > 2 h_max`, the
//!   condition already required by [`FourierSampler::new`]. The identities above hold sample by
//!   sample, and the DFT is `N_t`-periodic in `m`, so the only care needed is to read `C_m`,
//!   `S_m` for `N_t/2 < m <= 2 h_max` from the mirrored bin `N_t - m`
//!   (`C_m = C_{N_t-m}`, `S_m = -S_{N_t-m}`), which this module does. A version reading only
//!   the stored half spectrum would need `N_t >= 4 h_max`; no fallback is needed here.
//! * **Sampled quadrature == exact integral** `(1/c_i) integral phi_i a phi_j`: exact when `a`
//!   is a trigonometric polynomial of degree `K` and `N_t > 2 h_max + K` (the integrand has
//!   degree at most `2 h_max + K` and the `N_t`-point rule integrates `e^{i m tau}` exactly for
//!   `0 < |m| < N_t`). For a nonsmooth `a` (Heaviside of the slip condition) it is never exact:
//!   the error is the aliasing of the spectrum of `a` beyond `N_t - 2 h_max`. The E-WR residual
//!   uses the same sampled quadrature, so the Jacobian is the exact derivative of the discrete
//!   residual regardless.

use ewr_fft::Complex;
use faer::prelude::ReborrowMut;
use faer::{Mat, MatMut, MatRef};

use crate::fourier::{FourierError, FourierSampler, HarmonicSet, check_len};

impl FourierSampler {
    /// Galerkin matrix `G = P diag(a) S` of the sampled coefficient `a_samples` (`N_t` values),
    /// written into `out` (`n_coeffs x n_coeffs`, e.g. a sub-block of a Jacobian). One real FFT
    /// plus `O(n_coeffs^2)`; no allocation. Exactly equal to the direct sampled quadrature.
    pub fn galerkin_matrix(
        &mut self,
        a_samples: &[f64],
        out: MatMut<'_, f64>,
    ) -> Result<(), FourierError> {
        check_shape(&self.set, &out)?;
        self.forward_into_spec_buf(a_samples)?;
        fill_sums(
            &self.spec_buf,
            self.n_samples,
            sum_stride(&self.set),
            &mut self.cos_sums,
            &mut self.sin_sums,
        );
        write_galerkin(
            &self.set,
            &self.cos_sums,
            &self.sin_sums,
            &mut self.col_buf,
            out,
        );
        Ok(())
    }

    /// As [`FourierSampler::galerkin_matrix`], from the unnormalised half spectrum of `a`
    /// (`N_t / 2 + 1` bins, as [`FourierSampler::spectrum`] or a batched real FFT gives), so
    /// that callers can transform many coefficient signals at once. `O(n_coeffs^2)`.
    pub fn galerkin_matrix_from_spectrum(
        &mut self,
        spectrum: &[Complex<f64>],
        out: MatMut<'_, f64>,
    ) -> Result<(), FourierError> {
        check_len("spectrum", self.spectrum_len(), spectrum.len())?;
        check_shape(&self.set, &out)?;
        fill_sums(
            spectrum,
            self.n_samples,
            sum_stride(&self.set),
            &mut self.cos_sums,
            &mut self.sin_sums,
        );
        write_galerkin(
            &self.set,
            &self.cos_sums,
            &self.sin_sums,
            &mut self.col_buf,
            out,
        );
        Ok(())
    }
}

fn check_shape(set: &HarmonicSet, out: &MatMut<'_, f64>) -> Result<(), FourierError> {
    let n = set.n_coeffs();
    if out.nrows() == n && out.ncols() == n {
        Ok(())
    } else {
        Err(FourierError::ShapeMismatch {
            what: "Galerkin matrix",
            expected: (n, n),
            got: (out.nrows(), out.ncols()),
        })
    }
}

/// Spacing of the sums the Galerkin entries read: `p - q` and `p + q` are even for two odd
/// harmonics, so odd sets only need `C_m`, `S_m` at even `m` (stored at `m / 2`).
fn sum_stride(set: &HarmonicSet) -> usize {
    if set.all_odd() { 2 } else { 1 }
}

/// `cos_sums[m / stride] = C_m / N`, `sin_sums[m / stride] = S_m / N` for
/// `m = 0, stride, .. <= 2 h_max` from the half spectrum `A_m = C_m - i S_m`; bins past `N/2`
/// come from the mirror `A_m = conj(A_{N-m})`. Requires `2 h_max < N` (checked at sampler
/// construction), so `1 <= N - m` for every `m`.
fn fill_sums(
    spectrum: &[Complex<f64>],
    n: usize,
    stride: usize,
    cos_sums: &mut [f64],
    sin_sums: &mut [f64],
) {
    let inv_n = 1.0 / n as f64;
    let half = n / 2;
    let len = (cos_sums.len() - 1) / stride + 1;
    for (k, (c, s)) in cos_sums[..len]
        .iter_mut()
        .zip(sin_sums[..len].iter_mut())
        .enumerate()
    {
        let m = k * stride;
        if m <= half {
            let z = spectrum[m];
            *c = z.re * inv_n;
            *s = -z.im * inv_n;
        } else {
            let z = spectrum[n - m];
            *c = z.re * inv_n;
            *s = z.im * inv_n;
        }
    }
}

/// Writes the Galerkin matrix from the scaled sums, column by column (column-major fast path,
/// else via `col_buf`).
fn write_galerkin(
    set: &HarmonicSet,
    cs: &[f64],
    sn: &[f64],
    col_buf: &mut [f64],
    mut out: MatMut<'_, f64>,
) {
    let n = set.n_coeffs();
    let columns = set.harmonics().iter().enumerate().flat_map(|(k, &q)| {
        let j = set.offset_of(k);
        let cos_col = std::iter::once((j, q, false));
        let sin_col = (q > 0).then_some((j + 1, q, true));
        cos_col.chain(sin_col)
    });
    if let Some(mut m) = out.rb_mut().try_as_col_major_mut() {
        for (j, q, sine) in columns {
            galerkin_column(set, cs, sn, q, sine, m.rb_mut().col_mut(j).as_slice_mut());
        }
    } else {
        for (j, q, sine) in columns {
            galerkin_column(set, cs, sn, q, sine, col_buf);
            for (i, &v) in col_buf.iter().enumerate().take(n) {
                out[(i, j)] = v;
            }
        }
    }
}

/// One column of the Galerkin matrix: trial function `cos(q tau)` (or `sin` if `sine`), all
/// test functions. `cs`, `sn` hold `C_m / N`, `S_m / N`; the row weight `w_p / 2 * N` is 1 for
/// `p > 0` and 1/2 for the constant row.
///
/// With `d = |p - q|`, `s = p + q` and `sign = +1` for `p >= q`, `-1` below, the rows are
/// `cos`: `(cs[d] + cs[s], sn[s] + sign sn[d])`, `sin`: `(sn[s] - sign sn[d], cs[d] - cs[s])`.
/// The loops below are split at `p = q` so that the sign is known and no row branches; adding
/// or subtracting `sn[d]` is bit for bit the same as adding `sign * sn[d]`.
#[inline]
fn galerkin_column(
    set: &HarmonicSet,
    cs: &[f64],
    sn: &[f64],
    q: usize,
    sine: bool,
    col: &mut [f64],
) {
    let hs = set.harmonics();
    let mut first = 0;
    if hs.first() == Some(&0) {
        // Constant row: d = q, s = q, sign = -1 unless q = 0.
        let sign = if q == 0 { 1.0 } else { -1.0 };
        col[0] = if sine {
            0.5 * (sn[q] - sign * sn[q])
        } else {
            0.5 * (cs[q] + cs[q])
        };
        first = 1;
    }
    let rest = &hs[first..];
    if rest.is_empty() {
        return;
    }
    let rows = &mut col[first..first + 2 * rest.len()];
    // Sums are stored at m / stride (see `fill_sums`); consecutive harmonics of the set are
    // `stride` apart, so d and s move by one stored sum per row: contiguous slices, no index
    // arithmetic per row. Split at p = q so that the sign of p - q is known.
    let stride = sum_stride(set);
    if !rest.windows(2).all(|w| w[1] - w[0] == stride) {
        // A list with gaps (`1,3,7`, `0,1,2,5`): the same formulas, each row's sums by index
        // (the slices below would run on past a gap and read other harmonics' sums).
        for (row, &p) in rows.chunks_exact_mut(2).zip(rest) {
            let (d, s) = (p.abs_diff(q) / stride, (p + q) / stride);
            let (cd, cs, sd, ss) = (cs[d], cs[s], sn[d], sn[s]);
            row.copy_from_slice(&match (sine, p < q) {
                (true, true) => [ss + sd, cd - cs],
                (false, true) => [cd + cs, ss - sd],
                (true, false) => [ss - sd, cd - cs],
                (false, false) => [cd + cs, ss + sd],
            });
        }
        return;
    }
    let split = rest.partition_point(|&p| p < q);
    let (rows_below, rows_above) = rows.split_at_mut(2 * split);
    if split > 0 {
        // p < q: d = q - p falls, s = p + q rises.
        let (d0, s0) = ((q - rest[0]) / stride, (rest[0] + q) / stride);
        let sums = cs[..=d0]
            .iter()
            .rev()
            .zip(&cs[s0..])
            .zip(sn[..=d0].iter().rev())
            .zip(&sn[s0..]);
        if sine {
            for (row, (((&cd, &cs), &sd), &ss)) in rows_below.chunks_exact_mut(2).zip(sums) {
                row[0] = ss + sd;
                row[1] = cd - cs;
            }
        } else {
            for (row, (((&cd, &cs), &sd), &ss)) in rows_below.chunks_exact_mut(2).zip(sums) {
                row[0] = cd + cs;
                row[1] = ss - sd;
            }
        }
    }
    if split < rest.len() {
        // p >= q: d = p - q and s = p + q both rise.
        let (d0, s0) = ((rest[split] - q) / stride, (rest[split] + q) / stride);
        let sums = cs[d0..].iter().zip(&cs[s0..]).zip(&sn[d0..]).zip(&sn[s0..]);
        if sine {
            for (row, (((&cd, &cs), &sd), &ss)) in rows_above.chunks_exact_mut(2).zip(sums) {
                row[0] = ss - sd;
                row[1] = cd - cs;
            }
        } else {
            for (row, (((&cd, &cs), &sd), &ss)) in rows_above.chunks_exact_mut(2).zip(sums) {
                row[0] = cd + cs;
                row[1] = ss + sd;
            }
        }
    }
}

/// Reference Galerkin matrices by direct sampled quadrature, `G = P diag(a) S` with the
/// basis tables stored densely (`O(N_t n_coeffs)` memory, `O(N_t n_coeffs^2)` per matrix via a
/// matrix product). For validation and benchmarks; [`FourierSampler::galerkin_matrix`] is the
/// fast path and agrees with it to rounding.
#[derive(Debug, Clone)]
pub struct DenseGalerkin {
    set: HarmonicSet,
    n_samples: usize,
    /// `S[j, i] = phi_i(tau_j)`, `N_t x n_coeffs`.
    synthesis: Mat<f64>,
    /// `P[i, j] = w_i phi_i(tau_j)`, `n_coeffs x N_t`.
    projection: Mat<f64>,
    /// Scratch `diag(a) S`.
    scaled: Mat<f64>,
}

impl DenseGalerkin {
    /// Tabulates the basis on `n_samples` instants (same validity rule as
    /// [`FourierSampler::new`]).
    pub fn new(set: HarmonicSet, n_samples: usize) -> Result<Self, FourierError> {
        // Reuse the sampler's validation so the two agree on what is acceptable.
        FourierSampler::new(set.clone(), n_samples)?;
        let nc = set.n_coeffs();
        let mut synthesis = Mat::zeros(n_samples, nc);
        let step = 2.0 * std::f64::consts::PI / n_samples as f64;
        for j in 0..n_samples {
            for (k, &h) in set.harmonics().iter().enumerate() {
                let i = set.offset_of(k);
                // Reduce h*j modulo N before scaling: keeps the angle small and the table exact
                // to rounding.
                let (s, c) = (((h * j) % n_samples) as f64 * step).sin_cos();
                if h == 0 {
                    synthesis[(j, i)] = 1.0;
                } else {
                    synthesis[(j, i)] = c;
                    synthesis[(j, i + 1)] = s;
                }
            }
        }
        let mut projection = Mat::zeros(nc, n_samples);
        for j in 0..n_samples {
            for (k, &h) in set.harmonics().iter().enumerate() {
                let i = set.offset_of(k);
                let w = if h == 0 { 1.0 } else { 2.0 } / n_samples as f64;
                projection[(i, j)] = w * synthesis[(j, i)];
                if h > 0 {
                    projection[(i + 1, j)] = w * synthesis[(j, i + 1)];
                }
            }
        }
        Ok(Self {
            set,
            n_samples,
            scaled: Mat::zeros(n_samples, nc),
            synthesis,
            projection,
        })
    }

    /// The harmonic set.
    pub fn set(&self) -> &HarmonicSet {
        &self.set
    }

    /// Number of time samples per period.
    pub fn n_samples(&self) -> usize {
        self.n_samples
    }

    /// Synthesis matrix `S` (`N_t x n_coeffs`, `S[j, i] = phi_i(tau_j)`).
    pub fn synthesis_matrix(&self) -> MatRef<'_, f64> {
        self.synthesis.as_ref()
    }

    /// Projection matrix `P` (`n_coeffs x N_t`), the left inverse of `S`.
    pub fn projection_matrix(&self) -> MatRef<'_, f64> {
        self.projection.as_ref()
    }

    /// `G = P diag(a) S` by direct quadrature (a dense matrix product, single-threaded).
    pub fn galerkin_matrix(
        &mut self,
        a_samples: &[f64],
        out: MatMut<'_, f64>,
    ) -> Result<(), FourierError> {
        check_len("coefficient samples", self.n_samples, a_samples.len())?;
        check_shape(&self.set, &out)?;
        for i in 0..self.set.n_coeffs() {
            for (j, &a) in a_samples.iter().enumerate() {
                self.scaled[(j, i)] = a * self.synthesis[(j, i)];
            }
        }
        faer::linalg::matmul::matmul(
            out,
            faer::Accum::Replace,
            self.projection.as_ref(),
            self.scaled.as_ref(),
            1.0,
            faer::Par::Seq,
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fourier::tests::{Rng, max_abs_diff};
    use std::f64::consts::PI;

    /// Plain triple-loop quadrature, independent of both implementations.
    fn naive(set: &HarmonicSet, a: &[f64]) -> Mat<f64> {
        let n = a.len();
        let nc = set.n_coeffs();
        let phi = |i: usize, tau: f64| -> f64 {
            for (k, &h) in set.harmonics().iter().enumerate() {
                let o = set.offset_of(k);
                if i == o {
                    return (h as f64 * tau).cos();
                }
                if h > 0 && i == o + 1 {
                    return (h as f64 * tau).sin();
                }
            }
            unreachable!()
        };
        let weight = |i: usize| {
            if set.contains_zero() && i == 0 {
                1.0
            } else {
                2.0
            }
        };
        let mut g = Mat::zeros(nc, nc);
        for i in 0..nc {
            for j in 0..nc {
                let mut acc = 0.0;
                for (t, &at) in a.iter().enumerate() {
                    let tau = 2.0 * PI * t as f64 / n as f64;
                    acc += phi(i, tau) * at * phi(j, tau);
                }
                g[(i, j)] = weight(i) * acc / n as f64;
            }
        }
        g
    }

    fn rel_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
        let mut num: f64 = 0.0;
        let mut den: f64 = 0.0;
        for j in 0..a.ncols() {
            for i in 0..a.nrows() {
                num = num.max((a[(i, j)] - b[(i, j)]).abs());
                den = den.max(b[(i, j)].abs());
            }
        }
        num / den.max(1e-300)
    }

    /// Coefficient signals: smooth (a few harmonics, including even ones and a mean) and
    /// nonsmooth (Heaviside-like, |sin|, random).
    fn coefficient_samples(n: usize, rng: &mut Rng) -> Vec<(&'static str, Vec<f64>)> {
        let tau = |j: usize| 2.0 * PI * j as f64 / n as f64;
        vec![
            (
                "smooth",
                (0..n)
                    .map(|j| {
                        let t = tau(j);
                        0.3 + t.cos() - 0.5 * (2.0 * t).sin() + 0.25 * (4.0 * t + 0.3).cos()
                    })
                    .collect(),
            ),
            (
                "heaviside",
                (0..n)
                    .map(|j| if (tau(j) + 0.4).sin() > 0.3 { 1.7 } else { 0.2 })
                    .collect(),
            ),
            ("abs_sin", (0..n).map(|j| tau(j).sin().abs()).collect()),
            ("random", rng.vec(n)),
        ]
    }

    fn cases() -> Vec<(HarmonicSet, usize)> {
        vec![
            (HarmonicSet::odd(7).unwrap(), 64),
            (HarmonicSet::odd(7).unwrap(), 15), // minimal, odd N: mirrored bins used
            (HarmonicSet::odd(9).unwrap(), 20), // minimal even N + 1: Nyquist bin used
            (HarmonicSet::odd(15).unwrap(), 256),
            (HarmonicSet::all(6).unwrap(), 64),
            (HarmonicSet::all(6).unwrap(), 13),
            (HarmonicSet::all(0).unwrap(), 8),
            (HarmonicSet::all(12).unwrap(), 200), // not a power of two
            // Lists whose harmonics are not evenly spaced (odd, with the static term, without
            // harmonic 1).
            (HarmonicSet::list(&[1, 3, 7]).unwrap(), 64),
            (HarmonicSet::list(&[0, 1, 2, 5]).unwrap(), 32),
            (HarmonicSet::list(&[2, 3, 9]).unwrap(), 19),
        ]
    }

    /// The column formula before it was split at p = q (every sum stored, sign per row).
    fn column_with_signs(
        set: &HarmonicSet,
        cs: &[f64],
        sn: &[f64],
        q: usize,
        sine: bool,
        col: &mut [f64],
    ) {
        for (k, &p) in set.harmonics().iter().enumerate() {
            let i = set.offset_of(k);
            let (d, sign) = if p >= q { (p - q, 1.0) } else { (q - p, -1.0) };
            let s = p + q;
            if p == 0 {
                col[i] = if sine {
                    0.5 * (sn[s] - sign * sn[d])
                } else {
                    0.5 * (cs[d] + cs[s])
                };
            } else if sine {
                col[i] = sn[s] - sign * sn[d];
                col[i + 1] = cs[d] - cs[s];
            } else {
                col[i] = cs[d] + cs[s];
                col[i + 1] = sn[s] + sign * sn[d];
            }
        }
    }

    #[test]
    fn split_columns_are_bit_for_bit_the_signed_formula() {
        let mut rng = Rng::new(11);
        for (set, n) in cases() {
            let mut s = FourierSampler::new(set.clone(), n).unwrap();
            let nc = set.n_coeffs();
            for (name, a) in coefficient_samples(n, &mut rng) {
                let mut g = Mat::zeros(nc, nc);
                s.galerkin_matrix(&a, g.as_mut()).unwrap();
                let mut spectrum = vec![Complex::new(0.0, 0.0); s.spectrum_len()];
                s.spectrum(&a, &mut spectrum).unwrap();
                let len = 2 * set.h_max() + 1;
                let (mut cs, mut sn) = (vec![0.0; len], vec![0.0; len]);
                fill_sums(&spectrum, n, 1, &mut cs, &mut sn);
                let mut col = vec![0.0; nc];
                for (k, &q) in set.harmonics().iter().enumerate() {
                    let j = set.offset_of(k);
                    for (jj, sine) in [(j, false), (j + 1, true)] {
                        if sine && q == 0 {
                            continue;
                        }
                        column_with_signs(&set, &cs, &sn, q, sine, &mut col);
                        for (i, &v) in col.iter().enumerate() {
                            assert_eq!(
                                g[(i, jj)].to_bits(),
                                v.to_bits(),
                                "{set} N={n} {name} ({i}, {jj})"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fft_formula_matches_direct_quadrature() {
        let mut rng = Rng::new(10);
        for (set, n) in cases() {
            let mut s = FourierSampler::new(set.clone(), n).unwrap();
            let mut dense = DenseGalerkin::new(set.clone(), n).unwrap();
            let nc = set.n_coeffs();
            for (name, a) in coefficient_samples(n, &mut rng) {
                let reference = naive(&set, &a);
                let mut g = Mat::zeros(nc, nc);
                s.galerkin_matrix(&a, g.as_mut()).unwrap();
                let err = rel_diff(&g, &reference);
                assert!(err < 1e-12, "{set} N={n} {name}: FFT vs naive {err}");
                let mut gd = Mat::zeros(nc, nc);
                dense.galerkin_matrix(&a, gd.as_mut()).unwrap();
                let err = rel_diff(&gd, &reference);
                assert!(err < 1e-12, "{set} N={n} {name}: dense vs naive {err}");
                // From a separately computed spectrum.
                let mut spec = vec![Complex::new(0.0, 0.0); s.spectrum_len()];
                s.spectrum(&a, &mut spec).unwrap();
                let mut gs = Mat::zeros(nc, nc);
                s.galerkin_matrix_from_spectrum(&spec, gs.as_mut()).unwrap();
                assert_eq!(rel_diff(&gs, &g), 0.0);
            }
        }
    }

    #[test]
    fn galerkin_matrix_applies_like_project_of_product() {
        let mut rng = Rng::new(11);
        for (set, n) in cases() {
            let mut s = FourierSampler::new(set.clone(), n).unwrap();
            let nc = set.n_coeffs();
            for (name, a) in coefficient_samples(n, &mut rng) {
                let mut g = Mat::zeros(nc, nc);
                s.galerkin_matrix(&a, g.as_mut()).unwrap();
                for _ in 0..3 {
                    let x = rng.vec(nc);
                    let mut xs = vec![0.0; n];
                    s.synthesize(&x, &mut xs).unwrap();
                    for (v, &aj) in xs.iter_mut().zip(&a) {
                        *v *= aj;
                    }
                    let mut px = vec![0.0; nc];
                    s.project(&xs, &mut px).unwrap();
                    let gx: Vec<f64> = (0..nc)
                        .map(|i| (0..nc).map(|j| g[(i, j)] * x[j]).sum())
                        .collect();
                    let scale = px.iter().fold(1e-300_f64, |m, v| m.max(v.abs()));
                    let err = max_abs_diff(&gx, &px) / scale;
                    assert!(err < 1e-12, "{set} N={n} {name}: G x vs P(a S x) {err}");
                }
            }
        }
    }

    #[test]
    fn known_matrices() {
        // a = 1 -> identity; a = 2 cos(tau) on all:2 is the exact continuous one when
        // N > 2 h_max + 1.
        let set = HarmonicSet::all(2).unwrap();
        let n = 6;
        let mut s = FourierSampler::new(set.clone(), n).unwrap();
        let mut g = Mat::zeros(5, 5);
        s.galerkin_matrix(&[1.0; 6], g.as_mut()).unwrap();
        let eye = Mat::<f64>::identity(5, 5);
        assert!(rel_diff(&g, &eye) < 1e-15);
        let a: Vec<f64> = (0..n).map(|j| 2.0 * s.tau(j).cos()).collect();
        s.galerkin_matrix(&a, g.as_mut()).unwrap();
        // 2 cos t * 1 = 2 cos t; 2 cos t cos t = 1 + cos 2t; 2 cos t sin t = sin 2t;
        // 2 cos t cos 2t = cos t + cos 3t; 2 cos t sin 2t = sin t + sin 3t.
        // Columns are trial functions [1, cos, sin, cos2, sin2]; rows their coefficients.
        let mut expect = Mat::<f64>::zeros(5, 5);
        expect[(1, 0)] = 2.0;
        expect[(0, 1)] = 1.0;
        expect[(3, 1)] = 1.0;
        expect[(4, 2)] = 1.0;
        expect[(1, 3)] = 1.0;
        expect[(2, 4)] = 1.0;
        assert!(rel_diff(&g, &expect) < 1e-14, "{g:?}");
    }

    #[test]
    fn non_contiguous_output_and_sub_blocks() {
        let set = HarmonicSet::odd(5).unwrap();
        let n = 32;
        let mut s = FourierSampler::new(set.clone(), n).unwrap();
        let a: Vec<f64> = (0..n).map(|j| (s.tau(j)).sin().abs()).collect();
        let mut g = Mat::zeros(6, 6);
        s.galerkin_matrix(&a, g.as_mut()).unwrap();
        // Write into a transposed view (row-major, not column-major) ...
        let mut gt = Mat::zeros(6, 6);
        s.galerkin_matrix(&a, gt.as_mut().transpose_mut()).unwrap();
        assert_eq!(rel_diff(&gt.transpose().to_owned(), &g), 0.0);
        // ... and into a sub-block of a larger Jacobian.
        let mut j = Mat::zeros(12, 12);
        s.galerkin_matrix(&a, j.as_mut().submatrix_mut(6, 0, 6, 6))
            .unwrap();
        assert_eq!(
            rel_diff(&j.as_ref().submatrix(6, 0, 6, 6).to_owned(), &g),
            0.0
        );
        assert_eq!(j.as_ref().submatrix(0, 0, 6, 12).norm_max(), 0.0);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let set = HarmonicSet::odd(5).unwrap();
        let mut s = FourierSampler::new(set.clone(), 32).unwrap();
        let mut g = Mat::zeros(6, 6);
        assert!(s.galerkin_matrix(&[0.0; 31], g.as_mut()).is_err());
        let mut wrong = Mat::zeros(6, 5);
        let e = s.galerkin_matrix(&[0.0; 32], wrong.as_mut()).unwrap_err();
        assert!(matches!(e, FourierError::ShapeMismatch { .. }), "{e}");
        let spec = vec![Complex::new(0.0, 0.0); 16];
        assert!(s.galerkin_matrix_from_spectrum(&spec, g.as_mut()).is_err());
        assert!(DenseGalerkin::new(set.clone(), 10).is_err());
        let mut d = DenseGalerkin::new(set, 32).unwrap();
        assert!(d.galerkin_matrix(&[0.0; 3], g.as_mut()).is_err());
    }
}
