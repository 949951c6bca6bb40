//! Pointwise friction laws: the residual `Psi(r, v)` and its partial derivatives at one
//! sample of one contact, for `D = 1` or `2` tangential directions.
//!
//! Every kernel is written without data-dependent control flow where it can be (the
//! branches below are value selections), so that the sample loop of the caller can
//! be vectorised. The formulas and the choices at degenerate points are documented on
//! [`crate::law`]; the comments here only record numerical reasons.

use crate::disc::{kron, norm, project};
use std::array::from_fn;

/// Residual and (optionally) Jacobian blocks at one sample: `dr[m][n] = dPsi_m/dr_n`,
/// `dv[m][n] = dPsi_m/dv_n`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Point<const D: usize> {
    pub psi: [f64; D],
    pub dr: [[f64; D]; D],
    pub dv: [[f64; D]; D],
}

impl<const D: usize> Point<D> {
    #[inline(always)]
    fn residual(psi: [f64; D]) -> Self {
        Point {
            psi,
            dr: [[0.0; D]; D],
            dv: [[0.0; D]; D],
        }
    }
}

/// A friction law evaluated at one sample. `DER = false` lets the compiler drop the
/// derivative computations entirely.
pub(super) trait Kernel: Copy + Send + Sync {
    fn eval<const D: usize, const DER: bool>(
        self,
        r: [f64; D],
        v: [f64; D],
        mu: f64,
        rho: f64,
    ) -> Point<D>;
}

/// Paper eq. 2, evaluated as `Psi = r max(|z| - muN, 0) + muN rho v`, which is
/// algebraically identical to `r max(muN, |z|) - muN z` but does not cancel `muN r`
/// against `muN z`: the stick residual is then exactly `muN rho v`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Exact;

impl Kernel for Exact {
    #[inline(always)]
    fn eval<const D: usize, const DER: bool>(
        self,
        r: [f64; D],
        v: [f64; D],
        mu: f64,
        rho: f64,
    ) -> Point<D> {
        let z: [f64; D] = from_fn(|k| r[k] - rho * v[k]);
        let s = norm(&z);
        // Strict: |z| == muN is put on the stick side, and z = 0 is always stick.
        let slip = s > mu;
        let excess = if slip { s - mu } else { 0.0 };
        let mr = mu * rho;
        let psi = from_fn(|k| r[k] * excess + mr * v[k]);
        if !DER {
            return Point::residual(psi);
        }
        // slip implies s > muN >= 0, so 1/s is finite whenever it is used.
        let inv = if slip { 1.0 / s } else { 0.0 };
        let zh: [f64; D] = from_fn(|n| z[n] * inv);
        Point {
            psi,
            dr: from_fn(|m| from_fn(|n| r[m] * zh[n] + excess * kron(m, n))),
            dv: from_fn(|m| from_fn(|n| -rho * r[m] * zh[n] + mr * kron(m, n))),
        }
    }
}

/// Paper eq. 3/5: `Psi = r - k z` with `k` the radial projection factor, written as
/// `(1 - k) r + k rho v` so that the stick residual is exactly `rho v`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Projection;

impl Kernel for Projection {
    #[inline(always)]
    fn eval<const D: usize, const DER: bool>(
        self,
        r: [f64; D],
        v: [f64; D],
        mu: f64,
        rho: f64,
    ) -> Point<D> {
        let z: [f64; D] = from_fn(|k| r[k] - rho * v[k]);
        let disc = project(z, mu);
        // With muN = 0 the disk is the point 0 and the projection is identically 0,
        // including its derivative at z = 0 (where `slip` is false).
        let k = if disc.slip {
            disc.factor
        } else if mu > 0.0 {
            1.0
        } else {
            0.0
        };
        let psi = from_fn(|i| (1.0 - k) * r[i] + k * rho * v[i]);
        if !DER {
            return Point::residual(psi);
        }
        // dP/dz = k (I - zh zh^T); zh = 0 off the slip branch.
        let dp = disc.jacobian(k);
        Point {
            psi,
            dr: from_fn(|m| from_fn(|n| kron(m, n) - dp[m][n])),
            dv: from_fn(|m| from_fn(|n| rho * dp[m][n])),
        }
    }
}

/// Single-valued radial law `Psi = r + muN phi(|v|) v/|v|`: the Jacobian in `v` is
/// `muN [ g I + (phi'(s) - g) vh vh^T ]` with `g = phi(s)/s`, `vh = v/s` (radial and
/// tangential stiffness). Shared by the tanh and piecewise-linear laws.
#[inline(always)]
fn radial<const D: usize, const DER: bool>(
    r: [f64; D],
    v: [f64; D],
    mu: f64,
    g: f64,
    dphi: f64,
    inv_s: f64,
) -> Point<D> {
    let mg = mu * g;
    let psi = from_fn(|k| r[k] + mg * v[k]);
    if !DER {
        return Point::residual(psi);
    }
    let vh: [f64; D] = from_fn(|n| v[n] * inv_s);
    let md = mu * (dphi - g);
    Point {
        psi,
        dr: from_fn(|m| from_fn(|n| kron(m, n))),
        dv: from_fn(|m| from_fn(|n| mg * kron(m, n) + md * vh[m] * vh[n])),
    }
}

/// Paper eq. 14: `phi(s) = tanh(alpha s)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tanh {
    pub alpha: f64,
}

impl Kernel for Tanh {
    #[inline(always)]
    fn eval<const D: usize, const DER: bool>(
        self,
        r: [f64; D],
        v: [f64; D],
        mu: f64,
        _rho: f64,
    ) -> Point<D> {
        let alpha = self.alpha;
        let s = norm(&v);
        let x = alpha * s;
        // One expm1 gives both tanh(x) = -em/(2+em) and sech^2(x) = 4(1+em)/(2+em)^2,
        // accurate for small x (where tanh(x)/x must tend to 1) and without overflow.
        let em = (-2.0 * x).exp_m1();
        let den = 2.0 + em;
        let t = -em / den;
        // g = tanh(alpha s)/s, continuous at s = 0 with value alpha.
        let g = if x > 0.0 { alpha * (t / x) } else { alpha };
        if !DER {
            return radial::<D, false>(r, v, mu, g, 0.0, 0.0);
        }
        let dphi = alpha * 4.0 * (1.0 + em) / (den * den);
        // At s = 0 the radial correction vanishes (phi'(0) = g(0)), so vh = 0 is exact.
        let inv_s = if s > 0.0 { 1.0 / s } else { 0.0 };
        radial::<D, true>(r, v, mu, g, dphi, inv_s)
    }
}

/// Paper eq. 16: `phi(s) = min(s, delta)/delta`; `|v| == delta` takes the linear branch.
#[derive(Clone, Copy, Debug)]
pub(super) struct PiecewiseLinear {
    pub delta: f64,
}

impl Kernel for PiecewiseLinear {
    #[inline(always)]
    fn eval<const D: usize, const DER: bool>(
        self,
        r: [f64; D],
        v: [f64; D],
        mu: f64,
        _rho: f64,
    ) -> Point<D> {
        let s = norm(&v);
        let outer = s > self.delta;
        let q = if outer { s } else { self.delta };
        let g = 1.0 / q;
        if !DER {
            return radial::<D, false>(r, v, mu, g, 0.0, 0.0);
        }
        // Linear branch: phi' = 1/delta = g, no radial correction; outer: phi' = 0.
        let dphi = if outer { 0.0 } else { g };
        let inv_s = if outer { g } else { 0.0 };
        radial::<D, true>(r, v, mu, g, dphi, inv_s)
    }
}

/// Paper eq. 17 applied to the max of eq. 2: `Psi = r (max_eps(muN, |z|) - muN) + muN rho v`.
#[derive(Clone, Copy, Debug)]
pub(super) struct MaxEps {
    pub eps: f64,
}

impl Kernel for MaxEps {
    #[inline(always)]
    fn eval<const D: usize, const DER: bool>(
        self,
        r: [f64; D],
        v: [f64; D],
        mu: f64,
        rho: f64,
    ) -> Point<D> {
        let eps = self.eps;
        let z: [f64; D] = from_fn(|k| r[k] - rho * v[k]);
        let s = norm(&z);
        let d = s - mu;
        let q = (d * d + eps).sqrt();
        // For d < 0, (d + q)/2 and (1 + d/q)/2 cancel catastrophically when eps << d^2;
        // the rationalised forms eps/(2(q - d)) and eps/(2q(q - d)) do not.
        let w = q - d;
        let neg = d < 0.0;
        let excess = if neg { eps / (2.0 * w) } else { 0.5 * (d + q) };
        let mr = mu * rho;
        let psi = from_fn(|k| r[k] * excess + mr * v[k]);
        if !DER {
            return Point::residual(psi);
        }
        let sigma = if neg {
            eps / (2.0 * q * w)
        } else {
            0.5 * (1.0 + d / q)
        };
        // |z| is not differentiable at z = 0; the zero subgradient is taken there.
        let inv = if s > 0.0 { sigma / s } else { 0.0 };
        let zh: [f64; D] = from_fn(|n| z[n] * inv);
        Point {
            psi,
            dr: from_fn(|m| from_fn(|n| r[m] * zh[n] + excess * kron(m, n))),
            dv: from_fn(|m| from_fn(|n| -rho * r[m] * zh[n] + mr * kron(m, n))),
        }
    }
}
