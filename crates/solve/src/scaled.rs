//! The E-WR system of any contact kind as Newton solves it: divided by the square of its force
//! scale, so that the tolerance is dimensionless, with the preconditioner of the matrix-free
//! path (contact blocks, harmonic-averaged Jacobians, or both).

use crate::newton::{EvalError, Residual, pin_empty_columns, pin_empty_rows};
use crate::periodic::Preconditioner;
use ewr_contact::{ContactSystem, ResidualError};
use ewr_hb::HarmonicSet;
use faer::linalg::solvers::{PartialPivLu, Solve};
use faer::{Mat, MatMut, c32, c64};
use rayon::prelude::*;

/// How the preconditioner is built for a contact kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Which levels.
    pub kind: Preconditioner,
    /// Put a pivot on rows of the factorised blocks that vanish identically (3-D contacts
    /// stuck or open all period leave whole rows of `J` zero).
    pub pin_empty_rows: bool,
    /// Keep the harmonic-level factorisation from one Newton step to the next while GMRES
    /// stays short (see [`HARMONIC_REFRESH_AFTER`]); otherwise refactorise at every step.
    pub reuse_harmonic: bool,
}

impl Policy {
    /// Constant friction bounds: the preconditioner chosen, its harmonic level kept while it
    /// serves.
    pub fn constant_bounds(kind: Preconditioner) -> Self {
        Policy {
            kind,
            pin_empty_rows: false,
            reuse_harmonic: true,
        }
    }

    /// 3-D contacts: both levels, pinned empty rows, the harmonic level kept while it serves
    /// (with double-precision factors, keeping them cost as much GMRES as it saved
    /// factorisations on the 3-D sectors; with single ones it saves time from 100 contacts:
    /// docs/performance.md, "The harmonic level in single precision").
    pub fn unilateral() -> Self {
        Policy {
            kind: Preconditioner::TwoLevel,
            pin_empty_rows: true,
            reuse_harmonic: true,
        }
    }
}

/// The harmonic-averaged factorisation (`O(m^3)` per harmonic, the dominant cost with
/// hundreds of contacts) is kept from one Newton step to the next while the GMRES solves it
/// preconditions stay shorter than this; a longer one means it has gone stale. (Scaled with
/// the cost of a build, `m / 40` iterations, it let GMRES grow and Newton's path with it: 290
/// against 226 Newton iterations on five points of the 500-contact 3-D sector, 11 % slower.
/// Rebuilt only once the iterations beyond the first solve after a build add up to a build's
/// cost, `m / 64`, the 1000-contact interface did 12 builds instead of 87 but 227 Newton
/// iterations instead of 145, in the same time: docs/performance.md, "The 1000-contact
/// interface again".)
const HARMONIC_REFRESH_AFTER: usize = 15;

/// Below this many contact rows `m` the harmonic factorisation is cheaper than the GMRES
/// iterations a stale one costs, and is refreshed at every Newton step.
const HARMONIC_REUSE_MIN_ROWS: usize = 256;

/// From this many rows the harmonic level is factorised in single precision: half the
/// arithmetic of the LU at twice the vector width, and half the memory its solves stream,
/// which dominate GMRES with hundreds of contacts. A preconditioner needs no more digits.
const SINGLE_PRECISION_MIN_ROWS: usize = 128;

/// A single-precision factorisation is kept only where it solves a test right-hand side to
/// this relative residual (an ill-conditioned averaged Jacobian gets a double one).
const SINGLE_PRECISION_MAX_RESIDUAL: f64 = 1e-3;

/// A contact system divided by the square of its force scale (`scale = 1 / F^2`), with the
/// dense and the matrix-free interface of [`Residual`].
pub struct ScaledContacts<'a> {
    /// The system being solved.
    pub inner: Box<dyn ContactSystem + 'a>,
    /// `1 / F^2`.
    pub scale: f64,
    policy: Policy,
    /// Each contact's unknowns and the LU of its diagonal block of the scaled `J`.
    blocks: Vec<(Vec<usize>, PartialPivLu<f64>)>,
    /// LU of each harmonic's averaged Jacobian, with the harmonic's coefficient index.
    harmonic: Vec<HarmonicLu>,
    /// Whether `harmonic` factorises the transposes (solved by the transposed solve).
    harmonic_transposed: bool,
    /// Preconditioner applications since the last linearisation (the last GMRES's length).
    applications: usize,
}

fn eval_err(e: ResidualError) -> EvalError {
    EvalError(e.to_string())
}

/// A harmonic's LU for the preconditioner: coefficient index, whether it has a sine
/// coefficient, and the factorisation of its (scaled) averaged Jacobian.
pub(crate) type HarmonicLu = (usize, bool, HarmonicFactor);

/// The LU of one harmonic's averaged Jacobian: complex, or real where the matrix has no
/// imaginary part (the static harmonic's: a real LU costs a quarter of a complex one, and
/// with all:7 that harmonic is one eighth of the harmonic level's factorisations); in single
/// precision from [`SINGLE_PRECISION_MIN_ROWS`] rows where that solves well enough.
pub(crate) enum HarmonicFactor {
    Complex(PartialPivLu<c64>),
    Real(PartialPivLu<f64>),
    ComplexSingle(PartialPivLu<c32>),
    RealSingle(PartialPivLu<f32>),
}

impl HarmonicFactor {
    fn new(k: &Mat<c64>) -> Self {
        let real = (0..k.ncols()).all(|j| k.col(j).iter().all(|x| x.im == 0.0));
        if k.nrows() >= SINGLE_PRECISION_MIN_ROWS {
            let single = Self::single(k, real);
            if single.test_residual(k) <= SINGLE_PRECISION_MAX_RESIDUAL {
                crate::profile::count("harmonic LUs in single precision");
                return single;
            }
            crate::profile::count(
                "harmonic LUs fallen back to double (single solved worse than 1e-3)",
            );
        }
        if real {
            let r = Mat::from_fn(k.nrows(), k.ncols(), |i, j| k[(i, j)].re);
            HarmonicFactor::Real(r.partial_piv_lu())
        } else {
            HarmonicFactor::Complex(k.partial_piv_lu())
        }
    }

    /// The single-precision LU of `k` (of its real part where `real`).
    fn single(k: &Mat<c64>, real: bool) -> Self {
        let (m, n) = (k.nrows(), k.ncols());
        if real {
            HarmonicFactor::RealSingle(
                Mat::from_fn(m, n, |i, j| k[(i, j)].re as f32).partial_piv_lu(),
            )
        } else {
            HarmonicFactor::ComplexSingle(
                Mat::from_fn(m, n, |i, j| {
                    c32::new(k[(i, j)].re as f32, k[(i, j)].im as f32)
                })
                .partial_piv_lu(),
            )
        }
    }

    /// `||k z - b|| / ||b||` for `z` this factorisation's solution of `k z = b`, with a `b`
    /// that has every entry nonzero (infinite where the solve is not finite): one product by
    /// `k`, `O(m^2)` beside the LU's `O(m^3)`.
    fn test_residual(&self, k: &Mat<c64>) -> f64 {
        let m = k.nrows();
        let b: Vec<c64> = (0..m)
            .map(|i| c64::new(1.0 + 0.25 * (i % 5) as f64, 0.5 - 0.25 * (i % 3) as f64))
            .collect();
        let mut z = b.clone();
        self.solve_in_place(&mut z, false);
        if z.iter().any(|x| !x.re.is_finite() || !x.im.is_finite()) {
            return f64::INFINITY;
        }
        let kz = k * faer::MatRef::from_column_major_slice(&z, m, 1);
        let num: f64 = (0..m).map(|i| (kz[(i, 0)] - b[i]).norm_sqr()).sum();
        let den: f64 = b.iter().map(|x| x.norm_sqr()).sum();
        (num / den).sqrt()
    }

    /// Solves in place with the matrix, or with its transpose. Real factors solve the real
    /// and imaginary parts as two right-hand sides; single ones a rounded copy.
    fn solve_in_place(&self, z: &mut [c64], transposed: bool) {
        let m = z.len();
        match self {
            HarmonicFactor::Complex(lu) => {
                solve_with(lu, MatMut::from_column_major_slice_mut(z, m, 1), transposed);
            }
            HarmonicFactor::Real(lu) => solve_parts(lu, z, transposed, |x| x, |x| *x),
            HarmonicFactor::ComplexSingle(lu) => {
                let mut r = Mat::from_fn(m, 1, |i, _| c32::new(z[i].re as f32, z[i].im as f32));
                solve_with(lu, r.as_mut(), transposed);
                for (i, z) in z.iter_mut().enumerate() {
                    *z = c64::new(r[(i, 0)].re as f64, r[(i, 0)].im as f64);
                }
            }
            HarmonicFactor::RealSingle(lu) => {
                solve_parts(lu, z, transposed, |x| x as f32, |x| *x as f64)
            }
        }
    }
}

/// A real `lu` solved for the real and imaginary parts of `z` as two right-hand sides, in
/// the precision `to` rounds them to.
fn solve_parts<T: faer::traits::ComplexField>(
    lu: &PartialPivLu<T>,
    z: &mut [c64],
    transposed: bool,
    to: impl Fn(f64) -> T,
    back: impl Fn(&T) -> f64,
) {
    let mut r = Mat::from_fn(z.len(), 2, |i, j| {
        to(if j == 0 { z[i].re } else { z[i].im })
    });
    solve_with(lu, r.as_mut(), transposed);
    for (i, z) in z.iter_mut().enumerate() {
        *z = c64::new(back(&r[(i, 0)]), back(&r[(i, 1)]));
    }
}

/// A contact's block LU solved in place on `z`; a singular block (e.g. a contact whose law
/// derivatives vanish) leaves `z` unchanged (the identity).
fn solve_contact_block(lu: &PartialPivLu<f64>, z: &mut [f64]) {
    let keep = z.to_vec();
    let n = z.len();
    lu.solve_in_place(faer::MatMut::from_column_major_slice_mut(z, n, 1));
    if !z.iter().all(|x| x.is_finite()) {
        z.copy_from_slice(&keep);
    }
}

/// `lu` solved in place on `rhs`, or with its transpose.
fn solve_with<T: faer::traits::ComplexField>(
    lu: &PartialPivLu<T>,
    rhs: MatMut<'_, T>,
    transposed: bool,
) {
    if transposed {
        lu.solve_transpose_in_place(rhs);
    } else {
        lu.solve_in_place(rhs);
    }
}

/// LU of each harmonic's averaged Jacobian `ks` (in the order of `set`), scaled by `scale`.
fn factor_harmonics(ks: &mut [faer::Mat<c64>], set: &HarmonicSet, scale: f64) -> Vec<HarmonicLu> {
    let _t = crate::profile::span(crate::profile::Phase::HarmonicFactor);
    ks.par_iter_mut()
        .zip(set.harmonics().par_iter())
        .map(|(k, &h)| {
            *k *= faer::Scale(c64::new(scale, 0.0));
            let p = set.coeff_index(h).expect("h is in the set");
            (p, h > 0, HarmonicFactor::new(k))
        })
        .collect()
}

/// Applies the harmonic LUs to `v` (hb layout, `nco` coefficients per signal): each harmonic
/// reads and writes its own coefficients only; a singular one leaves them unchanged. With
/// `transposed` the LUs are of the transposes, and solved transposed.
fn apply_harmonics(harmonic: &[HarmonicLu], nco: usize, v: &mut [f64], transposed: bool) {
    if harmonic.is_empty() {
        return;
    }
    let _t = crate::profile::span(crate::profile::Phase::HarmonicSolve);
    let m = v.len() / nco;
    let solved: Vec<Vec<c64>> = harmonic
        .par_iter()
        .map(|(p, sine, lu)| {
            let mut z: Vec<c64> = (0..m)
                .map(|s| {
                    let b = if *sine { v[s * nco + p + 1] } else { 0.0 };
                    c64::new(v[s * nco + p], -b)
                })
                .collect();
            let keep = z.clone();
            lu.solve_in_place(&mut z, transposed);
            if z.iter().any(|x| !x.re.is_finite() || !x.im.is_finite()) {
                return keep;
            }
            z
        })
        .collect();
    for ((p, sine, _), z) in harmonic.iter().zip(&solved) {
        for (s, z) in z.iter().enumerate() {
            v[s * nco + p] = z.re;
            if *sine {
                v[s * nco + p + 1] = -z.im;
            }
        }
    }
}

impl<'a> ScaledContacts<'a> {
    /// `inner` scaled by `scale`, preconditioned as `policy` says on the matrix-free path.
    pub fn new(inner: Box<dyn ContactSystem + 'a>, scale: f64, policy: Policy) -> Self {
        ScaledContacts {
            inner,
            scale,
            policy,
            blocks: Vec::new(),
            harmonic: Vec::new(),
            harmonic_transposed: false,
            applications: 0,
        }
    }

    fn factor_contact_blocks(&mut self) -> Result<(), EvalError> {
        let mut blocks = self.inner.contact_jacobian_blocks().map_err(eval_err)?;
        let (s, pin) = (self.scale, self.policy.pin_empty_rows);
        let lus: Vec<PartialPivLu<f64>> = blocks
            .par_iter_mut()
            .map(|b| {
                *b *= faer::Scale(s);
                if pin {
                    pin_empty_rows(b.as_mut(), f64::abs, |a| a);
                }
                b.partial_piv_lu()
            })
            .collect();
        self.blocks = lus
            .into_iter()
            .enumerate()
            .map(|(c, lu)| (self.inner.contact_unknowns(c), lu))
            .collect();
        Ok(())
    }

    fn factor_harmonic_blocks(&mut self) -> Result<(), EvalError> {
        let (mut ks, transposed) = self
            .inner
            .averaged_harmonic_jacobians_to_factor()
            .map_err(eval_err)?;
        if self.policy.pin_empty_rows {
            // |re| + |im| finds the empty rows as well as the modulus, without a hypot per
            // entry (a third of the harmonic level's time on the 100-contact 3-D sector).
            let abs = |x: c64| x.re.abs() + x.im.abs();
            let from = |a| c64::new(a, 0.0);
            ks.par_iter_mut().for_each(|k| {
                if transposed {
                    pin_empty_columns(k.as_mut(), abs, from)
                } else {
                    pin_empty_rows(k.as_mut(), abs, from)
                }
            });
        }
        self.harmonic_transposed = transposed;
        self.harmonic = factor_harmonics(&mut ks, self.inner.harmonic_set(), self.scale);
        Ok(())
    }

    fn apply_contact_blocks(&self, v: &mut [f64]) {
        let solved: Vec<Vec<f64>> = self
            .blocks
            .par_iter()
            .map(|(idx, lu)| {
                let mut z: Vec<f64> = idx.iter().map(|&i| v[i]).collect();
                solve_contact_block(lu, &mut z);
                z
            })
            .collect();
        for ((idx, _), z) in self.blocks.iter().zip(solved) {
            for (&i, zi) in idx.iter().zip(z) {
                v[i] = zi;
            }
        }
    }

    fn apply_harmonic_blocks(&self, v: &mut [f64]) {
        apply_harmonics(
            &self.harmonic,
            self.inner.harmonic_set().n_coeffs(),
            v,
            self.harmonic_transposed,
        );
    }
}

impl Residual for ScaledContacts<'_> {
    fn len(&self) -> usize {
        self.inner.len()
    }

    fn evaluate(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        jacobian: Option<MatMut<'_, f64>>,
    ) -> Result<(), EvalError> {
        let s = self.scale;
        let _t = crate::profile::span(if jacobian.is_some() {
            crate::profile::Phase::Jacobian
        } else {
            crate::profile::Phase::Residual
        });
        match jacobian {
            Some(mut j) => {
                self.inner
                    .residual_and_jacobian(x, g, j.as_mut())
                    .map_err(eval_err)?;
                j *= faer::Scale(s);
            }
            None => self.inner.residual(x, g).map_err(eval_err)?,
        }
        g.iter_mut().for_each(|v| *v *= s);
        Ok(())
    }

    fn supports_matrix_free(&self) -> bool {
        true
    }

    fn prefers_matrix_free(&self) -> bool {
        self.inner.contact_count() > 1
    }

    fn linearize(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        let _t = crate::profile::span(crate::profile::Phase::Preconditioner);
        self.inner
            .residual_keep_derivatives(x, g)
            .map_err(eval_err)?;
        g.iter_mut().for_each(|v| *v *= self.scale);
        let m = self.inner.len() / self.inner.harmonic_set().n_coeffs().max(1);
        let stale = !self.policy.reuse_harmonic
            || self.harmonic.is_empty()
            || self.applications > HARMONIC_REFRESH_AFTER
            || m < HARMONIC_REUSE_MIN_ROWS;
        self.applications = 0;
        match self.policy.kind {
            Preconditioner::Contact => self.factor_contact_blocks(),
            Preconditioner::Harmonic => self.factor_harmonic_blocks(),
            Preconditioner::TwoLevel => {
                self.factor_contact_blocks()?;
                if stale {
                    self.factor_harmonic_blocks()?;
                }
                Ok(())
            }
        }
    }

    fn jacobian_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        let _t = crate::profile::span(crate::profile::Phase::Krylov);
        self.inner.jacobian_product(v, out).map_err(eval_err)?;
        out.iter_mut().for_each(|y| *y *= self.scale);
        Ok(())
    }

    fn jacobian_transpose_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        let _t = crate::profile::span(crate::profile::Phase::Krylov);
        self.inner
            .jacobian_transpose_product(v, out)
            .map_err(eval_err)?;
        out.iter_mut().for_each(|y| *y *= self.scale);
        Ok(())
    }

    fn precondition(&mut self, v: &mut [f64]) -> Result<(), EvalError> {
        let _t = crate::profile::span(crate::profile::Phase::Krylov);
        self.applications += 1;
        match self.policy.kind {
            Preconditioner::Contact => self.apply_contact_blocks(v),
            Preconditioner::Harmonic => self.apply_harmonic_blocks(v),
            Preconditioner::TwoLevel => {
                // y = H^-1 v, then y += B^-1 (v - J y): each contact's block solve in the
                // task that computed its part of J y.
                let mut y = v.to_vec();
                self.apply_harmonic_blocks(&mut y);
                let mut out = vec![0.0; v.len()];
                let (blocks, s, vr, yr) = (&self.blocks, self.scale, &*v, &y);
                let finish = |c: usize, part: &mut [f64]| {
                    let (idx, lu) = &blocks[c];
                    for (p, &i) in part.iter_mut().zip(idx) {
                        *p = vr[i] - *p * s;
                    }
                    solve_contact_block(lu, part);
                    for (p, &i) in part.iter_mut().zip(idx) {
                        *p += yr[i];
                    }
                };
                // The inner product itself: this span already counts it.
                self.inner
                    .jacobian_product_then(&y, &mut out, &finish)
                    .map_err(eval_err)?;
                v.copy_from_slice(&out);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `||K z - b|| / ||b||` (or with `K^T`).
    fn residual(k: &faer::Mat<c64>, z: &[c64], b: &[c64], transposed: bool) -> f64 {
        let n = b.len();
        let (mut num, mut den) = (0.0, 0.0);
        for i in 0..n {
            let kz: c64 = (0..n)
                .map(|j| if transposed { k[(j, i)] } else { k[(i, j)] } * z[j])
                .sum();
            num += (kz - b[i]).norm_sqr();
            den += b[i].norm_sqr();
        }
        (num / den).sqrt()
    }

    #[test]
    fn a_real_averaged_jacobian_is_factorised_real_and_solves_complex_right_hand_sides() {
        let n = 7;
        let entry = |i: usize, j: usize| {
            let d = if i == j { 4.0 } else { 0.0 };
            d + ((3 * i + 5 * j) % 7) as f64 * 0.3 - 0.9
        };
        let real = faer::Mat::from_fn(n, n, |i, j| c64::new(entry(i, j), 0.0));
        let complex = faer::Mat::from_fn(n, n, |i, j| c64::new(entry(i, j), 0.1 * j as f64));
        let b: Vec<c64> = (0..n)
            .map(|i| c64::new(1.0 + i as f64, 0.5 - i as f64))
            .collect();
        for (k, is_real) in [(&real, true), (&complex, false)] {
            let f = HarmonicFactor::new(k);
            assert_eq!(matches!(f, HarmonicFactor::Real(_)), is_real);
            for transposed in [false, true] {
                let mut z = b.clone();
                f.solve_in_place(&mut z, transposed);
                let r = residual(k, &z, &b, transposed);
                assert!(r < 1e-13, "real {is_real}, transposed {transposed}: {r}");
            }
        }
    }

    #[test]
    fn large_averaged_jacobians_are_factorised_in_single_precision_unless_ill_conditioned() {
        let n = SINGLE_PRECISION_MIN_ROWS + 32;
        let pattern = |i: usize, j: usize| ((3 * i + 5 * j) % 7) as f64 * 0.3 - 0.9;
        // Diagonally dominant: well conditioned.
        let good = Mat::from_fn(n, n, |i, j| {
            let d = if i == j { n as f64 } else { 0.0 };
            c64::new(d + pattern(i, j), 0.01 * pattern(j, i))
        });
        // Its second row the first's to 1e-10: a single-precision LU cannot tell them apart.
        let mut bad = good.clone();
        for j in 0..n {
            bad[(1, j)] = bad[(0, j)] * c64::new(1.0 + 1e-10, 0.0);
        }
        bad[(1, 1)] += c64::new(1e-10, 0.0);
        let real = Mat::from_fn(n, n, |i, j| c64::new(good[(i, j)].re, 0.0));
        let b: Vec<c64> = (0..n)
            .map(|i| c64::new((i % 4) as f64 - 1.5, 1.0))
            .collect();
        for (name, k, single, tol) in [
            ("complex", &good, true, 1e-5),
            ("real", &real, true, 1e-5),
            ("ill-conditioned", &bad, false, 1e-4),
        ] {
            let f = HarmonicFactor::new(k);
            let is_single = matches!(
                f,
                HarmonicFactor::ComplexSingle(_) | HarmonicFactor::RealSingle(_)
            );
            assert_eq!(is_single, single, "{name}");
            for transposed in [false, true] {
                let mut z = b.clone();
                f.solve_in_place(&mut z, transposed);
                let r = residual(k, &z, &b, transposed);
                assert!(r < tol, "{name}, transposed {transposed}: {r}");
            }
        }
        // Below the threshold, double as before.
        let small = Mat::from_fn(8, 8, |i, j| good[(i, j)]);
        assert!(matches!(
            HarmonicFactor::new(&small),
            HarmonicFactor::Complex(_)
        ));
    }
}
