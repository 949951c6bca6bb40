//! What the solver needs of a contact kind's E-WR equations at one frequency, so that one
//! scaled residual, one point solver and one continuation serve every kind: constant friction
//! bounds ([`crate::EwrResidual`]) and 3-D contacts with a unilateral normal
//! ([`crate::UnilateralResidual`]). A new contact kind is a module of this crate that
//! implements [`ContactSystem`], taking the shared parameter and history types from `kinds`
//! and [`ResidualError`] from `error`, not from another kind's module.
//!
//! Unknowns are force coefficients in hb's block layout (`n_coeffs` per signal); a kind says
//! which of them belong to each contact, for the block preconditioner.

use crate::error::ResidualError;
use crate::kinds::ContactHistories;
use ewr_hb::{FourierError, FourierSampler, HarmonicSet};
use faer::{Mat, MatMut, MatRef, c64};

/// The E-WR system `g(x) = 0` of one contact kind at one frequency, with its analytical
/// Jacobian, dense or as products.
pub trait ContactSystem: Send {
    /// Number of unknowns (and equations).
    fn len(&self) -> usize;

    /// True without unknowns.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of contacts.
    fn contact_count(&self) -> usize;

    /// The harmonic set of the unknowns.
    fn harmonic_set(&self) -> &HarmonicSet;

    /// The unknowns of contact `c`, in the order of its diagonal Jacobian block
    /// ([`ContactSystem::contact_jacobian_blocks`]).
    fn contact_unknowns(&self, c: usize) -> Vec<usize>;

    /// `g(x)`.
    fn residual(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), ResidualError>;

    /// `g(x)` and the dense Jacobian `J(x)`.
    fn residual_and_jacobian(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        j: MatMut<'_, f64>,
    ) -> Result<(), ResidualError>;

    /// `g(x)`, keeping the law's derivatives at `x` for the products and blocks below.
    fn residual_keep_derivatives(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), ResidualError>;

    /// `y = J v` at the last point evaluated with derivatives.
    fn jacobian_product(&mut self, v: &[f64], y: &mut [f64]) -> Result<(), ResidualError>;

    /// `y = J v`, then `finish(c, part)` on each contact's part of `y` (its
    /// [`ContactSystem::contact_unknowns`], in that order), whose result is kept: a
    /// preconditioner's per-contact work done in the same parallel task as the contact's
    /// part of the product, one pass over the threads instead of several (which is what a
    /// workstation's many threads wait on: docs/performance.md, "Sixteen cores measured").
    fn jacobian_product_then(
        &mut self,
        v: &[f64],
        y: &mut [f64],
        finish: &(dyn Fn(usize, &mut [f64]) + Sync),
    ) -> Result<(), ResidualError>;

    /// `y = J^T v` at the last point evaluated with derivatives.
    fn jacobian_transpose_product(&mut self, v: &[f64], y: &mut [f64])
    -> Result<(), ResidualError>;

    /// Each contact's diagonal block of `J` (unknowns of [`ContactSystem::contact_unknowns`]).
    fn contact_jacobian_blocks(&mut self) -> Result<Vec<Mat<f64>>, ResidualError>;

    /// Per harmonic of the set (in its order), the complex Jacobian with the law's
    /// derivatives averaged over the period: the coupling through the structure, none of the
    /// time variation of stick and slip.
    fn averaged_harmonic_jacobians(&self) -> Result<Vec<Mat<c64>>, ResidualError>;

    /// The matrices of [`ContactSystem::averaged_harmonic_jacobians`] as the preconditioner
    /// factorises them: those, or their transposes where the system forms those faster
    /// (`true`; a factorisation of `K^T` solves with `K` by its transposed solve).
    fn averaged_harmonic_jacobians_to_factor(
        &self,
    ) -> Result<(Vec<Mat<c64>>, bool), ResidualError> {
        Ok((self.averaged_harmonic_jacobians()?, false))
    }

    /// Sampled histories of the contacts for the force coefficients `x`.
    fn histories(&mut self, x: &[f64]) -> Result<ContactHistories, ResidualError>;

    /// Coefficients of the contacts' relative displacement (3-D contacts: tangential, then
    /// the gaps), same layout as `x`.
    fn displacement_coeffs(&mut self, x: &[f64]) -> Result<Vec<f64>, ResidualError>;

    /// The tangential scaling `rho` of each contact's friction law as solved (after any
    /// automatic scaling): the stick test of the summaries reads it.
    fn tangential_rho(&self) -> Vec<f64>;

    /// Mean slip position (tangential law variable at `h = 0`) of each friction row for the
    /// force coefficients `x`: where a contact stuck all period stays. Empty for a kind that
    /// does not hold stuck contacts (docs/stuck-contacts.md).
    fn mean_slip(&mut self, x: &[f64]) -> Result<Vec<f64>, ResidualError> {
        let _ = x;
        Ok(Vec::new())
    }

    /// Holds the contacts flagged in `held` (one flag per contact) at these mean slip
    /// positions (from [`ContactSystem::mean_slip`]); the law alone decides the others.
    /// Before it nothing is held, and a kind without the hold ignores it.
    fn hold_mean_slip(&mut self, positions: &[f64], held: &[bool]) -> Result<(), ResidualError> {
        let _ = (positions, held);
        Ok(())
    }

    /// The mean slip position of contact `c` nearest `target` on the segment from `current`
    /// at which it still sticks all period, predicted from the last evaluation (a kind
    /// without the hold: `target`).
    fn stuck_toward(&self, c: usize, current: &[f64], target: &[f64]) -> Vec<f64> {
        let _ = (c, current);
        target.to_vec()
    }

    /// Where contact `c`, which slips somewhere in the period at the last evaluation, would
    /// stick again, from its mean slip position `current` (a stepped sine's shakedown,
    /// predicted), its mean friction force in the coefficients `x` moved with it; `None` where
    /// it cannot stick all period, or for a kind without the hold.
    fn shaken_down(&self, c: usize, current: &[f64], x: &mut [f64]) -> Option<Vec<f64>> {
        let _ = (c, current, x);
        None
    }

    /// Per contact, the least stick margin over the period at the last evaluation
    /// (`1 - |z| / b`: positive where it sticks all period, `-1` where it opens). Empty for a
    /// kind that does not hold stuck contacts.
    fn stick_margins(&self) -> Vec<f64> {
        Vec::new()
    }

    /// The law linearised at the force coefficients `x`, before condensation (for the
    /// stability of the solution `x`, docs/stability.md). Stuck contacts are not held.
    fn linearization(&mut self, x: &[f64]) -> Result<Linearization, ResidualError>;
}

/// The E-WR equations linearised at a solution, with the structure left out: `J = d_force +
/// d_motion T`, where `T` maps force coefficients to the law variables' coefficients (the
/// contact rows' velocity or displacement). Hill's method replaces `T` by its value off the
/// imaginary axis.
#[derive(Clone, Debug)]
pub struct Linearization {
    /// Galerkin matrix of `dPsi / d(force)` (`len x len`).
    pub d_force: SignalBlocks,
    /// Galerkin matrix of `dPsi / d(law variable)` (`len x len`, the same signal layout).
    pub d_motion: SignalBlocks,
    /// Per signal: its law variable is the contact row's velocity (false: its displacement).
    pub velocity: Vec<bool>,
    /// Per signal, as a row: its equations read no force and only velocities, with
    /// coefficients constant over the period (a friction row stuck all period). They say
    /// `v = 0`, which is `y = const` for every perturbation with `lambda != 0`: reading the
    /// displacement instead removes the neutral `lambda = 0` of the free mean force.
    pub stuck_rows: Vec<bool>,
}

/// A square matrix on signals of `nco` coefficients each (`signals nco` rows), stored as the
/// `nco x nco` blocks between the pairs of signals it couples. The law couples the signals
/// of one contact only, so a dense matrix would be almost all zeros: 648 MB each for
/// `d_force` and `d_motion` on 200 3-D contacts at all:7 (9000 unknowns), where the blocks
/// take 3.2 MB.
#[derive(Clone, Debug)]
pub struct SignalBlocks {
    signals: usize,
    nco: usize,
    /// `(row signal, column signal, block)` in the order pushed (the law's producers push each
    /// pair once; a pair pushed twice adds up).
    blocks: Vec<(usize, usize, Mat<f64>)>,
}

impl SignalBlocks {
    /// No coupling between `signals` signals of `nco` coefficients.
    pub fn new(signals: usize, nco: usize) -> Self {
        SignalBlocks {
            signals,
            nco,
            blocks: Vec::new(),
        }
    }

    /// The nonzero blocks of the dense `a` (`signals nco` square).
    pub fn from_dense(a: MatRef<'_, f64>, nco: usize) -> Self {
        let signals = a.nrows().checked_div(nco).unwrap_or(0);
        let mut out = SignalBlocks::new(signals, nco);
        for r in 0..signals {
            for c in 0..signals {
                let b = a.submatrix(r * nco, c * nco, nco, nco);
                if b.norm_max() != 0.0 {
                    out.push(r, c, b.to_owned());
                }
            }
        }
        out
    }

    /// Sets the block of row signal `row` and column signal `col` (`nco x nco`); a pair
    /// pushed twice keeps both, which add up.
    pub fn push(&mut self, row: usize, col: usize, block: Mat<f64>) {
        debug_assert!(row < self.signals && col < self.signals);
        debug_assert!(block.nrows() == self.nco && block.ncols() == self.nco);
        self.blocks.push((row, col, block));
    }

    /// Pushes the Galerkin matrix of the sampled coefficient `samples` as the block of row
    /// signal `row` and column signal `col`.
    pub(crate) fn push_galerkin(
        &mut self,
        sampler: &mut FourierSampler,
        row: usize,
        col: usize,
        samples: &[f64],
    ) -> Result<(), FourierError> {
        let mut block = Mat::zeros(self.nco, self.nco);
        sampler.galerkin_matrix(samples, block.as_mut())?;
        self.push(row, col, block);
        Ok(())
    }

    /// Rows (and columns): signals times coefficients.
    pub fn nrows(&self) -> usize {
        self.signals * self.nco
    }

    /// Signals.
    pub fn signals(&self) -> usize {
        self.signals
    }

    /// Coefficients per signal.
    pub fn coefficients(&self) -> usize {
        self.nco
    }

    /// The stored blocks as `(row signal, column signal, block)`, in the order pushed.
    pub fn blocks(&self) -> impl Iterator<Item = (usize, usize, MatRef<'_, f64>)> {
        self.blocks.iter().map(|(r, c, b)| (*r, *c, b.as_ref()))
    }

    /// The dense matrix.
    pub fn to_dense(&self) -> Mat<f64> {
        let nco = self.nco;
        let mut a = Mat::zeros(self.nrows(), self.nrows());
        for (r, c, b) in self.blocks() {
            let mut dst = a.as_mut().submatrix_mut(r * nco, c * nco, nco, nco);
            dst += b;
        }
        a
    }
}

/// True where `samples` (`n_t` per entry) are all zero.
pub(crate) fn all_zero(samples: &[f64]) -> bool {
    samples.iter().all(|&v| v == 0.0)
}

/// True where `samples` are the same value.
pub(crate) fn constant(samples: &[f64]) -> bool {
    samples
        .first()
        .is_none_or(|&a| samples.iter().all(|&v| v == a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_blocks_keep_the_nonzero_blocks_of_the_dense_matrix() {
        // Three signals of two coefficients; signal 1 couples to nothing.
        let nco = 2;
        let a = Mat::from_fn(6, 6, |i, j| match (i / nco, j / nco) {
            (0, 0) | (0, 2) | (2, 0) | (2, 2) => (1 + i * 6 + j) as f64,
            _ => 0.0,
        });
        let b = SignalBlocks::from_dense(a.as_ref(), nco);
        assert_eq!((b.signals(), b.coefficients(), b.nrows()), (3, 2, 6));
        let pairs: Vec<(usize, usize)> = b.blocks().map(|(r, c, _)| (r, c)).collect();
        assert_eq!(pairs, [(0, 0), (0, 2), (2, 0), (2, 2)]);
        assert_eq!(b.to_dense(), a);
        // A pair pushed twice adds up.
        let mut twice = b.clone();
        twice.push(2, 0, a.submatrix(4, 0, 2, 2).to_owned());
        let mut expected = a.clone();
        for i in 4..6 {
            for j in 0..2 {
                expected[(i, j)] *= 2.0;
            }
        }
        assert_eq!(twice.to_dense(), expected);
    }
}
