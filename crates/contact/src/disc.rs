//! The projection on the friction disc `{|x| <= b}` in `D = 1` or `2` dimensions and its
//! derivative: Coulomb's law as a projection, shared by the projection law of constant bounds
//! (`law::kernel`) and the friction equality of 3-D contacts (`unilateral`), so that both read
//! the same slip test, radial factor and unit direction.

use std::array::from_fn;

/// `|x|`: exact in 1-D (no underflow of `x^2` for `|x| < 1e-154`), the Euclidean norm in 2-D.
#[inline(always)]
pub(crate) fn norm<const D: usize>(x: &[f64; D]) -> f64 {
    if D == 1 {
        x[0].abs()
    } else {
        let mut s = 0.0;
        for xk in x {
            s += xk * xk;
        }
        s.sqrt()
    }
}

/// The Kronecker delta.
#[inline(always)]
pub(crate) fn kron(m: usize, n: usize) -> f64 {
    if m == n { 1.0 } else { 0.0 }
}

/// `z` against the disc of radius `b`: outside it (slip) the projection is `factor z` with
/// `factor = b / |z|`, and `unit = z / |z|`; inside (stick) `unit = 0` and `factor` is for
/// the caller to choose (the identity, or 0 on a disc of radius 0).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Disc<const D: usize> {
    /// `|z|`.
    pub norm: f64,
    /// `|z| > b`: the projection moves `z` onto the circle.
    pub slip: bool,
    /// `b / |z|` in slip, 0 in stick.
    pub factor: f64,
    /// `z / |z|` in slip, 0 in stick.
    pub unit: [f64; D],
}

/// Where `z` lies against the disc of radius `b`. Written as value selections, without
/// data-dependent control flow, so that the caller's sample loop can be vectorised.
#[inline(always)]
pub(crate) fn project<const D: usize>(z: [f64; D], b: f64) -> Disc<D> {
    let s = norm(&z);
    let slip = s > b;
    Disc {
        norm: s,
        slip,
        factor: if slip { b / s } else { 0.0 },
        unit: from_fn(|i| if slip { z[i] / s } else { 0.0 }),
    }
}

impl<const D: usize> Disc<D> {
    /// `dP/dz = k (I - u u^T)` with the radial factor `k` (in slip `b / |z|`, where the
    /// unit vector is 0 this is `k I`: the caller's stick factor).
    #[inline(always)]
    pub(crate) fn jacobian(&self, k: f64) -> [[f64; D]; D] {
        from_fn(|m| from_fn(|n| k * (kron(m, n) - self.unit[m] * self.unit[n])))
    }
}
