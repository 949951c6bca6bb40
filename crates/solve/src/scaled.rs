//! The E-WR system of any contact kind as Newton solves it: divided by the square of its force
//! scale, so that the tolerance is dimensionless, with the preconditioner of the matrix-free
//! path (contact blocks, harmonic-averaged Jacobians, or both).

use crate::newton::{EvalError, Residual, pin_empty_columns, pin_empty_rows};
use crate::periodic::Preconditioner;
use ewr_contact::{ContactSystem, ResidualError};
use ewr_hb::HarmonicSet;
use faer::linalg::solvers::{PartialPivLu, Solve};
use faer::{MatMut, c64};
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

    /// 3-D contacts: both levels, pinned empty rows, refactorised at every linearisation
    /// (keeping them while GMRES stays short cost as much GMRES as it saved factorisations on
    /// the 3-D sector, measured twice: before and after the continuous friction equality).
    pub fn unilateral() -> Self {
        Policy {
            kind: Preconditioner::TwoLevel,
            pin_empty_rows: true,
            reuse_harmonic: false,
        }
    }
}

/// The harmonic-averaged factorisation (`O(m^3)` per harmonic, the dominant cost with
/// hundreds of contacts) is kept from one Newton step to the next while the GMRES solves it
/// preconditions stay shorter than this; a longer one means it has gone stale.
const HARMONIC_REFRESH_AFTER: usize = 15;

/// Below this many contact rows `m` the harmonic factorisation is cheaper than the GMRES
/// iterations a stale one costs, and is refreshed at every Newton step.
const HARMONIC_REUSE_MIN_ROWS: usize = 256;

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
/// with all:7 that harmonic is one eighth of the harmonic level's factorisations).
pub(crate) enum HarmonicFactor {
    Complex(PartialPivLu<c64>),
    Real(PartialPivLu<f64>),
}

impl HarmonicFactor {
    fn new(k: &faer::Mat<c64>) -> Self {
        let real = (0..k.ncols()).all(|j| k.col(j).iter().all(|x| x.im == 0.0));
        if real {
            let r = faer::Mat::from_fn(k.nrows(), k.ncols(), |i, j| k[(i, j)].re);
            HarmonicFactor::Real(r.partial_piv_lu())
        } else {
            HarmonicFactor::Complex(k.partial_piv_lu())
        }
    }

    /// Solves in place with the matrix, or with its transpose.
    fn solve_in_place(&self, z: &mut [c64], transposed: bool) {
        let m = z.len();
        match self {
            HarmonicFactor::Complex(lu) => {
                let zm = faer::MatMut::from_column_major_slice_mut(z, m, 1);
                if transposed {
                    lu.solve_transpose_in_place(zm);
                } else {
                    lu.solve_in_place(zm);
                }
            }
            HarmonicFactor::Real(lu) => {
                // The real and imaginary parts as two right-hand sides.
                let mut r = faer::Mat::from_fn(m, 2, |i, j| if j == 0 { z[i].re } else { z[i].im });
                if transposed {
                    lu.solve_transpose_in_place(r.as_mut());
                } else {
                    lu.solve_in_place(r.as_mut());
                }
                for (i, z) in z.iter_mut().enumerate() {
                    *z = c64::new(r[(i, 0)], r[(i, 1)]);
                }
            }
        }
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
                let keep = z.clone();
                let n = z.len();
                lu.solve_in_place(faer::MatMut::from_column_major_slice_mut(&mut z, n, 1));
                // A singular block (e.g. a contact whose law derivatives vanish): identity.
                if z.iter().all(|x| x.is_finite()) {
                    z
                } else {
                    keep
                }
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
                // y = H^-1 v, then y += B^-1 (v - J y).
                let mut y = v.to_vec();
                self.apply_harmonic_blocks(&mut y);
                let mut jy = vec![0.0; v.len()];
                // The inner product itself: this span already counts it.
                self.inner.jacobian_product(&y, &mut jy).map_err(eval_err)?;
                jy.iter_mut().for_each(|j| *j *= self.scale);
                v.iter_mut().zip(&jy).for_each(|(r, j)| *r -= j);
                self.apply_contact_blocks(v);
                v.iter_mut().zip(&y).for_each(|(r, y)| *r += y);
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
}
