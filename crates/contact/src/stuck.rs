//! Contacts stuck all period. Coulomb's law holds such a contact with any mean friction force
//! inside the cone, so the `h = 0` friction equations vanish identically there and the mean
//! force is set by the path that led to the state (docs/stuck-contacts.md). A stepped-sine
//! test keeps the contact where it is: its mean slip position (the tangential law variable at
//! `h = 0`: the slider of a Jenkins element, the contact point itself for a rigid law) stays
//! what it was at the last solution (a sweep's previous point, a start). [`HeldSlip`] adds that
//! condition to the `h = 0` friction rows of the contacts the solver holds; which ones is
//! decided outside Newton (an active set, `ewr_solve`'s point solver), so the equations Newton
//! solves are the law's plus a linear term.

use faer::{Mat, MatMut, c64};
use rayon::prelude::*;

/// A held contact is released once its stick margin (`1 - |z| / b`, the least over the
/// period) falls below `-HOLD_MARGIN`: it slips somewhere with `rho_T |v|` beyond this
/// fraction of the bound, and the law decides its mean force. Down to it the hold keeps the
/// contact: releasing at margin zero would let Gibbs overshoot and the solver's tolerance
/// release contacts that stick (docs/stuck-contacts.md, section 3).
pub const HOLD_MARGIN: f64 = 0.03;

/// A free contact whose stick margin is at least `-STICK_MARGIN` sticks all period and is
/// held: a solve that converges onto the bound of its stick region (the law's root nearest
/// the predictor, where `|z|` touches `b` at an instant) leaves a margin of round-off size
/// below zero, a slip velocity `rho_T |v|` of that fraction of the bound that the solver
/// cannot tell from none (docs/stuck-contacts.md, section 6, pitfall 1).
pub const STICK_MARGIN: f64 = 1e-6;

/// A sample's stick margin `1 - |z| / b` (`slip = |z|`), `-1` where the bound is zero (an
/// open 3-D contact, or no friction): positive while it sticks with room to spare.
pub(crate) fn stick_margin(slip: f64, b: f64) -> f64 {
    if b > 0.0 { 1.0 - slip / b } else { -1.0 }
}

/// The mean slip position nearest `target` on the segment from `current` at which a contact
/// still sticks all period, given its least stick margin `margin(theta)` over the period with
/// its mean friction force moved by the fraction `theta` of the move: `target` where it sticks
/// there, `current` where it does not stick at the start.
pub(crate) fn stuck_toward(
    current: &[f64],
    target: &[f64],
    margin: impl Fn(f64) -> f64,
) -> Vec<f64> {
    match stuck_fraction(margin) {
        Some(theta) if theta >= 1.0 => target.to_vec(),
        Some(theta) => current
            .iter()
            .zip(target)
            .map(|(c, t)| c + theta * (t - c))
            .collect(),
        None => current.to_vec(),
    }
}

/// Most projections [`shakedown`] makes before it concludes that no mean force sticks.
const SHAKEDOWN_STEPS: usize = 1000;

/// Where a contact that slips somewhere in the period would stick again: the move `delta` of
/// its mean friction force after which `|z_s + delta| <= b_s` at every sample `s` (`z`, `d`
/// components per sample, sample after sample; `b` the bound per sample), found as a stepped
/// sine's slip finds it: the force is moved onto the bound of the sample that slips most, again
/// and again (projections onto the samples' discs, which converge to a common point where there
/// is one). `None` where the bound vanishes somewhere (an open contact cannot stick all
/// period) or no move sticks within [`SHAKEDOWN_STEPS`].
pub(crate) fn shakedown(d: usize, z: &[f64], b: &[f64]) -> Option<Vec<f64>> {
    if d == 0 || b.is_empty() || z.len() != d * b.len() || b.iter().any(|&x| x.is_nan() || x <= 0.0)
    {
        return None;
    }
    let mut delta = vec![0.0; d];
    let mut w = vec![0.0; d];
    for _ in 0..SHAKEDOWN_STEPS {
        // The sample that slips most, as a fraction of its bound.
        let (mut worst, mut excess) = (0, f64::NEG_INFINITY);
        for (s, &bs) in b.iter().enumerate() {
            let norm = (0..d)
                .map(|k| (z[s * d + k] + delta[k]).powi(2))
                .sum::<f64>()
                .sqrt();
            let e = norm / bs - 1.0;
            if e > excess {
                (worst, excess) = (s, e);
            }
        }
        if !excess.is_finite() {
            return None;
        }
        // Within the margin a held contact's slip is taken for none (STICK_MARGIN).
        if excess <= 0.1 * STICK_MARGIN {
            return Some(delta);
        }
        for k in 0..d {
            w[k] = z[worst * d + k] + delta[k];
        }
        let shrink = excess / (1.0 + excess);
        for k in 0..d {
            delta[k] -= w[k] * shrink;
        }
    }
    None
}

/// How far along a move of a stuck contact's mean friction force (`theta` in `[0, 1]`) it
/// still sticks all period, given its least stick margin `margin(theta)` over the period:
/// 1 where it sticks at the end, `None` where it does not stick at the start (or the margin
/// cannot be evaluated). The margin is concave in `theta` (a minimum of concave functions),
/// so there is one crossing, found by bisection.
fn stuck_fraction(margin: impl Fn(f64) -> f64) -> Option<f64> {
    if margin(1.0) >= 0.0 {
        return Some(1.0);
    }
    let m0 = margin(0.0);
    if m0.is_nan() || m0 < 0.0 {
        return None;
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if margin(mid) >= 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// The hold of stuck contacts' mean slip positions on a system's `h = 0` friction rows.
#[derive(Clone, Debug)]
pub(crate) struct HeldSlip {
    /// Tangential directions per contact.
    dim: usize,
    /// Friction rows (`dim` per contact).
    rows: usize,
    /// Coefficients per signal and the index of `h = 0` among them.
    nco: usize,
    p0: usize,
    /// `Re G_0` on the friction rows (`mt x m`): the mean slip position per unit mean force.
    g0: Mat<f64>,
    /// The forced part of the mean slip position (static load, preload through cross terms).
    q0: Vec<f64>,
    /// Per friction row: the force scale of its contact over its static compliance, so that
    /// the hold has the size of the law's rows (a force times `F`).
    stiffness: Vec<f64>,
    /// Mean slip position held per friction row; `None` until [`HeldSlip::hold`]: a solve
    /// from zero force has no loading history to hold, and the law alone decides.
    reference: Option<Vec<f64>>,
    /// Per contact, 1 where it is held and 0 where the law alone decides.
    weights: Vec<f64>,
}

/// Friction rows per task of [`HeldSlip::g0_times`].
const G0_ROW_BLOCK: usize = 64;

impl HeldSlip {
    /// The hold for `dim` directions of the contacts whose force scales are `force_scale`,
    /// from the `h = 0` receptance `g0` (`m x m` complex, friction rows first) and forced
    /// response `q0` (law variables), on `nco` coefficients per signal with `h = 0` at `p0`.
    /// Holds nothing until [`HeldSlip::hold`].
    pub(crate) fn new(
        dim: usize,
        force_scale: &[f64],
        g0: &Mat<c64>,
        q0: &[c64],
        nco: usize,
        p0: usize,
    ) -> Self {
        let nc = force_scale.len();
        let mt = dim * nc;
        let m = g0.ncols();
        let g0r = Mat::from_fn(mt, m, |i, j| g0[(i, j)].re);
        let stiffness = (0..mt)
            .map(|i| {
                let g = g0r[(i, i)].abs();
                let f = force_scale[i / dim];
                if g > 0.0 && g.is_finite() { f / g } else { f }
            })
            .collect();
        HeldSlip {
            dim,
            nco,
            p0,
            g0: g0r,
            q0: q0.iter().take(mt).map(|q| q.re).collect(),
            stiffness,
            reference: None,
            rows: mt,
            weights: vec![0.0; nc],
        }
    }

    fn rows(&self) -> usize {
        self.rows
    }

    fn held(&self, i: usize) -> f64 {
        self.reference.as_ref().map_or(0.0, |r| r[i])
    }

    /// Mean slip position of each friction row for the force coefficients `x`.
    pub(crate) fn positions(&self, x: &[f64]) -> Vec<f64> {
        let mut s = self.g0_times(x, |_| true);
        s.iter_mut().zip(&self.q0).for_each(|(s, q)| *s += q);
        s
    }

    /// `Re G_0` times the `h = 0` coefficients of `x`, one entry per friction row, on the
    /// blocks of [`G0_ROW_BLOCK`] rows that hold a row `wanted` (the others stay zero). Each
    /// block reads a column of `G_0` at a time (contiguous; a row at a time read one cache
    /// line per entry and cost 3 % of the 200-contact 3-D sector's sweep), blocks on every
    /// thread (on the calling thread inside every Jacobian product it was a fifth of the README
    /// 3-D sector's receptance product); each row's terms added in the order of the columns,
    /// whatever the threads.
    fn g0_times(&self, x: &[f64], wanted: impl Fn(usize) -> bool + Sync) -> Vec<f64> {
        let a: Vec<f64> = (0..self.g0.ncols())
            .map(|j| x[j * self.nco + self.p0])
            .collect();
        let mut s = vec![0.0; self.rows()];
        s.par_chunks_mut(G0_ROW_BLOCK)
            .enumerate()
            .for_each(|(b, rows)| {
                let first = b * G0_ROW_BLOCK;
                if !(first..first + rows.len()).any(&wanted) {
                    return;
                }
                for (j, &aj) in a.iter().enumerate() {
                    let g = &self.g0_column(j)[first..first + rows.len()];
                    rows.iter_mut().zip(g).for_each(|(s, g)| *s += g * aj);
                }
            });
        s
    }

    /// Column `j` of `Re G_0` (an owned matrix: its columns are contiguous).
    fn g0_column(&self, j: usize) -> &[f64] {
        self.g0
            .col(j)
            .try_as_col_major()
            .expect("an owned matrix has contiguous columns")
            .as_slice()
    }

    /// Holds the contacts flagged in `held` at these mean slip positions (one per friction
    /// row); the others are left to the law.
    pub(crate) fn hold(&mut self, positions: &[f64], held: &[bool]) {
        if positions.len() == self.rows() && held.len() == self.weights.len() {
            self.reference = Some(positions.to_vec());
            for (w, &h) in self.weights.iter_mut().zip(held) {
                *w = if h { 1.0 } else { 0.0 };
            }
        }
    }

    /// Contact `c`'s mean friction force moved by `df` in the coefficients `x`, and its mean
    /// slip position `current` moved with it (by its own static compliance, `Re G_0,cc df`:
    /// the inverse of [`force_shift`](Self::force_shift)); returns the new position.
    pub(crate) fn shaken(&self, c: usize, df: &[f64], current: &[f64], x: &mut [f64]) -> Vec<f64> {
        let i = c * self.dim;
        for (k, f) in df.iter().enumerate() {
            if let Some(v) = x.get_mut((i + k) * self.nco + self.p0) {
                *v += f;
            }
        }
        current
            .iter()
            .enumerate()
            .map(|(a, p)| {
                p + (0..self.dim)
                    .map(|b| self.g0[(i + a, i + b)] * df[b])
                    .sum::<f64>()
            })
            .collect()
    }

    /// The change of contact `c`'s mean friction force (one per direction) that moves its
    /// mean slip position by `dp` with every other force held: `(Re G_0,cc)^-1 dp` on its
    /// friction rows. `None` where that block is singular.
    pub(crate) fn force_shift(&self, c: usize, dp: &[f64]) -> Option<Vec<f64>> {
        let i = c * self.dim;
        let g = |a: usize, b: usize| self.g0[(i + a, i + b)];
        match self.dim {
            1 => (g(0, 0) != 0.0).then(|| vec![dp[0] / g(0, 0)]),
            2 => {
                let det = g(0, 0) * g(1, 1) - g(0, 1) * g(1, 0);
                (det != 0.0 && det.is_finite()).then(|| {
                    vec![
                        (g(1, 1) * dp[0] - g(0, 1) * dp[1]) / det,
                        (g(0, 0) * dp[1] - g(1, 0) * dp[0]) / det,
                    ]
                })
            }
            _ => None,
        }
    }

    /// Adds the hold to the residual `g` at `x`.
    pub(crate) fn add_residual(&self, x: &[f64], g: &mut [f64]) {
        if self.weights.iter().all(|&w| w == 0.0) {
            return;
        }
        let pos = self.positions(x);
        for (i, p) in pos.iter().enumerate() {
            let w = self.weights[i / self.dim];
            if w > 0.0 {
                g[i * self.nco + self.p0] += w * self.stiffness[i] * (p - self.held(i));
            }
        }
    }

    /// Adds the hold's Jacobian to the dense `j`.
    pub(crate) fn add_jacobian(&self, mut j: MatMut<'_, f64>) {
        for i in 0..self.rows() {
            let w = self.weights[i / self.dim];
            if w == 0.0 {
                continue;
            }
            let a = w * self.stiffness[i];
            for c in 0..self.g0.ncols() {
                j[(i * self.nco + self.p0, c * self.nco + self.p0)] += a * self.g0[(i, c)];
            }
        }
    }

    /// The terms of `J_hold v`, one per friction row (on its `h = 0` coefficient; `None` on a
    /// row not held), or `None` where nothing is held: for a product that adds them contact
    /// by contact.
    pub(crate) fn product_terms(&self, v: &[f64]) -> Option<Vec<Option<f64>>> {
        if self.weights.iter().all(|&w| w == 0.0) {
            return None;
        }
        let s = self.g0_times(v, |i| self.weights[i / self.dim] != 0.0);
        Some(
            s.iter()
                .enumerate()
                .map(|(i, s)| {
                    let w = self.weights[i / self.dim];
                    (w != 0.0).then(|| w * self.stiffness[i] * s)
                })
                .collect(),
        )
    }

    /// `y += J_hold^T v`, a column of `G_0` at a time (as [`g0_times`](Self::g0_times)), each
    /// entry of `y` taking its terms in the order of the rows.
    pub(crate) fn add_transpose_product(&self, v: &[f64], y: &mut [f64]) {
        let a: Vec<(usize, f64)> = (0..self.rows())
            .filter(|&i| self.weights[i / self.dim] != 0.0)
            .map(|i| {
                let w = self.weights[i / self.dim];
                (i, w * self.stiffness[i] * v[i * self.nco + self.p0])
            })
            .collect();
        if a.is_empty() {
            return;
        }
        for c in 0..self.g0.ncols() {
            let g = self.g0_column(c);
            let yc = &mut y[c * self.nco + self.p0];
            for &(i, ai) in &a {
                *yc += ai * g[i];
            }
        }
    }

    /// Adds the hold to contact `c`'s diagonal block, whose unknowns are `idx` (global
    /// indices, in the block's order).
    pub(crate) fn add_to_block(&self, c: usize, idx: &[usize], mut block: MatMut<'_, f64>) {
        let w = self.weights[c];
        if w == 0.0 {
            return;
        }
        let local = |g: usize| idx.iter().position(|&i| i == g);
        // The block's `h = 0` unknowns and their signals (a search per column of `G_0` over
        // the block's unknowns cost as much as the rest of the block's assembly).
        let statics: Vec<(usize, usize)> = idx
            .iter()
            .enumerate()
            .filter(|&(_, &g)| g % self.nco == self.p0 && g / self.nco < self.g0.ncols())
            .map(|(col, &g)| (col, g / self.nco))
            .collect();
        for k in 0..self.dim {
            let i = c * self.dim + k;
            let Some(r) = local(i * self.nco + self.p0) else {
                continue;
            };
            for &(col, s) in &statics {
                block[(r, col)] += w * self.stiffness[i] * self.g0[(i, s)];
            }
        }
    }

    /// Adds the hold to the `h = 0` harmonic's averaged Jacobian (`m x m`, one row per
    /// signal).
    pub(crate) fn add_to_static_harmonic(&self, k: &mut Mat<c64>) {
        self.add_to_static_harmonic_as(k, false);
    }

    /// [`add_to_static_harmonic`](Self::add_to_static_harmonic) into `k` or, with
    /// `transposed`, into its transpose.
    pub(crate) fn add_to_static_harmonic_as(&self, k: &mut Mat<c64>, transposed: bool) {
        for i in 0..self.rows() {
            let w = self.weights[i / self.dim];
            if w == 0.0 {
                continue;
            }
            for s in 0..self.g0.ncols() {
                let a = c64::new(w * self.stiffness[i] * self.g0[(i, s)], 0.0);
                if transposed {
                    k[(s, i)] += a;
                } else {
                    k[(i, s)] += a;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shakedown_moves_the_mean_force_onto_the_bound_of_the_worst_sample() {
        // One direction: z in [-3, 1] over the period, bound 2: the contact slips at z = -3
        // and sticks after a move of +1 (the least), on the bound there.
        let z = [-3.0, 1.0, 0.0, -1.0];
        let b = [2.0; 4];
        let d = shakedown(1, &z, &b).unwrap();
        assert!((d[0] - 1.0).abs() < 1e-9, "{d:?}");
        // An interval wider than the cone: no move sticks.
        assert!(shakedown(1, &[-3.0, 2.0], &[2.0, 2.0]).is_none());
        // Open at an instant: cannot stick all period.
        assert!(shakedown(1, &[0.0, 0.5], &[1.0, 0.0]).is_none());
        // Two directions: a circle of radius 1 about (2, 0), bound 1.5: the move puts the
        // centre within 0.5 of the origin, and every sample is then inside.
        let n = 64;
        let mut z2 = Vec::new();
        for s in 0..n {
            let t = std::f64::consts::TAU * s as f64 / n as f64;
            z2.extend([2.0 + t.cos(), t.sin()]);
        }
        let d = shakedown(2, &z2, &vec![1.5; n]).unwrap();
        let centre = ((2.0 + d[0]).powi(2) + d[1].powi(2)).sqrt();
        assert!(centre <= 0.5 + 1e-6, "{d:?}");
        for s in 0..n {
            let r = ((z2[2 * s] + d[0]).powi(2) + (z2[2 * s + 1] + d[1]).powi(2)).sqrt();
            assert!(r <= 1.5 * (1.0 + 1e-6), "{s}: {r}");
        }
        // The radius 1 circle does not fit a bound of 0.9 anywhere.
        assert!(shakedown(2, &z2, &vec![0.9; n]).is_none());
    }
}
