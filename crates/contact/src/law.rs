//! Friction laws as equalities `Psi(r, v) = 0`, evaluated on sampled time histories of
//! many contacts at once (paper sections 2 and 3.4; `notes/method.md` section 2).
//!
//! # Data layout (structure of arrays, one batch = one tangential dimension `d`)
//!
//! A batch holds `nc` contacts (`nc = rho.len()`), all with the same dimension `d` (1 or
//! 2) and the same `n_t` time samples; callers with mixed dimensions make one batch per
//! dimension. Every (contact, component) is contiguous over the samples, so a contact's
//! data is one block and each component can be fed to an FFT as is:
//!
//! | array | length | index of (contact `c`, component, sample `j`) |
//! |---|---|---|
//! | `r`, `v`, `psi` | `nc d n_t` | `(c d + k) n_t + j` (component `k`) |
//! | `d_r`, `d_v` | `nc d d n_t` | `((c d + m) d + n) n_t + j` (`dPsi_m/dr_n`, `dPsi_m/dv_n`) |
//! | `mu_n`: [`Bound::PerContact`] | `nc` | `c` |
//! | `mu_n`: [`Bound::Sampled`] | `nc n_t` | `c n_t + j` |
//! | `rho` | `nc` | `c` |
//!
//! [`vec_index`] and [`mat_index`] compute these indices.
//!
//! # Laws (`z = r - rho v`, `s = |z|`, `m = muN >= 0`, `I` the identity, `zh = z/s`)
//!
//! * [`FrictionLaw::Exact`] (eq. 2): `Psi = r max(m, s) - m z`, evaluated as
//!   `r max(s - m, 0) + m rho v`. Its zero set is Coulomb's law. With `H = [s > m]`
//!   (eq. 33): `dPsi/dr = H r zh^T + max(s - m, 0) I`, `dPsi/dv = -rho H r zh^T + rho m I`.
//! * [`FrictionLaw::Projection`] (eq. 3/5): `Psi = r - P(z)`, `P(z) = k z` with
//!   `k = m/s` if `s > m` (slip), else `k = 1` (stick, `m > 0`), else `k = 0` (`m = 0`:
//!   the disk is a point and `P = 0`). `dP/dz = k (I - H zh zh^T)`,
//!   `dPsi/dr = I - dP/dz`, `dPsi/dv = rho dP/dz`. Unlike the exact law it has no
//!   spurious zero `r = rho v` when `m = 0`, so it stays Coulomb when the normal load
//!   vanishes or varies in time.
//! * [`FrictionLaw::Tanh`] (eq. 14, radial in 2-D as in the paper): with `s = |v|`,
//!   `vh = v/s`, `phi(s) = tanh(alpha s)`, `g = phi(s)/s` (`= alpha` at `s = 0`):
//!   `Psi = r + m g v`, `dPsi/dr = I`, `dPsi/dv = m [g I + (phi'(s) - g) vh vh^T]`,
//!   `phi' = alpha sech^2(alpha s)`. Smooth everywhere; `rho` is not used.
//! * [`FrictionLaw::PiecewiseLinear`] (eq. 16): the same radial form with
//!   `phi(s) = min(s, delta)/delta`: `dPsi/dv = (m/delta) I` for `s <= delta`,
//!   `(m/s)(I - vh vh^T)` for `s > delta`. `rho` is not used.
//! * [`FrictionLaw::MaxEps`] (eq. 17 in eq. 2): `Psi = r (M - m) + m rho v` with
//!   `M = max_eps(m, s) = (m + s + sqrt((s - m)^2 + eps))/2`, `sigma = dM/ds =
//!   (1 + (s - m)/sqrt((s - m)^2 + eps))/2`: `dPsi/dr = sigma r zh^T + (M - m) I`,
//!   `dPsi/dv = -rho sigma r zh^T + rho m I`. `|M - max(m, s)| <= sqrt(eps)/2`.
//!
//! The paper writes the tanh and piecewise-linear laws in 2-D through `|v|` (eq. 12-16)
//! and `max_eps` as a scalar smoothing of the scalar `max` of eq. 2, so no further
//! generalisation is needed; in 1-D the radial laws reduce to `r + m tanh(alpha v)` and
//! `r + m clamp(v/delta, -1, 1)`. `Psi` has units of force squared for the exact and
//! max_eps laws and of force for the others, which matters when residuals are compared.
//!
//! # Degenerate points (all resolved deterministically, no division by zero)
//!
//! * `s == m` exactly (exact, projection): the stick side (`H = 0`); both sides agree on
//!   `Psi`, only the derivative jumps.
//! * `z = 0` (exact, projection, max_eps): `H = 0` and `zh = 0` (the zero subgradient of
//!   `|z|`); for `m = 0` the exact law then has zero derivatives (a singular Newton
//!   block on its spurious branch), the projection law `dPsi/dr = I`, `dPsi/dv = 0`.
//! * `m = 0`: exact `Psi = r |z|` (zero also on the spurious branch `r = rho v`);
//!   projection `Psi = r`; tanh and pwl `Psi = r`.
//! * `|v| == delta` (pwl): the linear branch. `v = 0` (tanh, pwl): `dPsi/dv = m g I`.
//!
//! # Errors and performance
//!
//! Inputs are validated (lengths, `d`, law parameters, `rho > 0`, finite `muN >= 0`) and
//! every input and output is checked to be finite, block by block while it is in cache:
//! a NaN or infinite `r` or `v` (or an overflow) is [`LawError::NonFinite`] naming the
//! contact and sample, and `Ok(())` guarantees finite outputs. On error the output
//! contents are unspecified. Evaluation does not allocate; it runs in parallel over
//! contacts (one task writes one contact, so results are bit-identical for any thread
//! count) when `nc * n_t >= `[`PARALLEL_THRESHOLD`].

mod error;
mod kernel;
mod spec;

use std::array::from_fn;

use rayon::prelude::*;

pub use error::LawError;
pub use spec::{FRICTION_LAW_FORMS, FrictionLaw, ParseLawError};

use kernel::Kernel;

/// Contacts x samples at or above which the contacts are evaluated in parallel (rayon).
/// Below it a batch takes well under a millisecond and thread start-up would dominate.
pub const PARALLEL_THRESHOLD: usize = 1 << 16;

/// Samples processed per block: the finiteness check re-reads a block while it is still
/// in L1 (a 2-D block with derivatives touches about 30 KiB).
const BLOCK: usize = 256;

/// The friction bound `muN` of each contact: constant, or sampled in time (for a
/// normal-load law that makes it vary).
#[derive(Clone, Copy, Debug)]
pub enum Bound<'a> {
    /// One value per contact (length `nc`).
    PerContact(&'a [f64]),
    /// One value per contact and sample (length `nc n_t`, index `c n_t + j`).
    Sampled(&'a [f64]),
}

/// Sampled inputs of a batch of contacts of one dimension; see the module doc for the
/// layout. The number of contacts is `rho.len()`.
#[derive(Clone, Copy, Debug)]
pub struct LawInput<'a> {
    /// Tangential dimension `d` of every contact of the batch (1 or 2).
    pub dim: usize,
    /// Number of time samples `n_t` per period.
    pub n_samples: usize,
    /// Friction force on the structure, `nc d n_t` values.
    pub r: &'a [f64],
    /// Relative tangential velocity, `nc d n_t` values.
    pub v: &'a [f64],
    /// Friction bound `muN >= 0`.
    pub mu_n: Bound<'a>,
    /// Scaling `rho > 0` of each contact (ignored by the tanh and pwl laws).
    pub rho: &'a [f64],
}

impl LawInput<'_> {
    /// Number of contacts in the batch (`rho.len()`).
    pub fn n_contacts(&self) -> usize {
        self.rho.len()
    }
}

/// Outputs of [`evaluate`]: the residual and both Jacobian blocks, layout as in the
/// module doc.
#[derive(Debug)]
pub struct LawOutput<'a> {
    /// `Psi`, `nc d n_t` values.
    pub psi: &'a mut [f64],
    /// `dPsi/dr`, `nc d d n_t` values.
    pub d_r: &'a mut [f64],
    /// `dPsi/dv`, `nc d d n_t` values.
    pub d_v: &'a mut [f64],
}

/// Index of component `k` of contact `c` at sample `j` in `r`, `v` and `psi`.
#[inline]
pub fn vec_index(dim: usize, n_samples: usize, c: usize, k: usize, j: usize) -> usize {
    (c * dim + k) * n_samples + j
}

/// Index of entry `(m, n)` of contact `c` at sample `j` in `d_r` and `d_v`.
#[inline]
pub fn mat_index(dim: usize, n_samples: usize, c: usize, m: usize, n: usize, j: usize) -> usize {
    ((c * dim + m) * dim + n) * n_samples + j
}

/// Evaluates `Psi` and its derivatives `dPsi/dr`, `dPsi/dv` at every sample of every
/// contact of the batch (for Newton's Jacobian, paper eq. 31-33).
pub fn evaluate(
    law: FrictionLaw,
    input: &LawInput<'_>,
    out: &mut LawOutput<'_>,
) -> Result<(), LawError> {
    let mat_len = check(law, input, out.psi.len())?;
    check_len("d_r", mat_len, out.d_r.len())?;
    check_len("d_v", mat_len, out.d_v.len())?;
    dispatch::<true>(law, input, out.psi, out.d_r, out.d_v)
}

/// Evaluates `Psi` only (for the residual, where the Jacobian is not needed).
pub fn evaluate_residual(
    law: FrictionLaw,
    input: &LawInput<'_>,
    psi: &mut [f64],
) -> Result<(), LawError> {
    check(law, input, psi.len())?;
    dispatch::<false>(law, input, psi, &mut [], &mut [])
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), LawError> {
    if expected == got {
        Ok(())
    } else {
        Err(LawError::Length {
            what,
            expected,
            got,
        })
    }
}

/// Validates everything but the per-contact values; returns the length `d_r` and `d_v`
/// must have.
fn check(law: FrictionLaw, input: &LawInput<'_>, psi_len: usize) -> Result<usize, LawError> {
    law.validate()?;
    let d = input.dim;
    if d != 1 && d != 2 {
        return Err(LawError::InvalidDim { dim: d });
    }
    let nc = input.rho.len();
    let n = input.n_samples;
    let mul = |a: usize, b: usize| a.checked_mul(b).ok_or(LawError::SizeOverflow);
    let vec = mul(mul(nc, d)?, n)?;
    let mat = mul(vec, d)?;
    check_len("r", vec, input.r.len())?;
    check_len("v", vec, input.v.len())?;
    check_len("psi", vec, psi_len)?;
    match input.mu_n {
        Bound::PerContact(m) => check_len("mu_n", nc, m.len())?,
        Bound::Sampled(m) => check_len("mu_n", mul(nc, n)?, m.len())?,
    }
    Ok(mat)
}

fn dispatch<const DER: bool>(
    law: FrictionLaw,
    input: &LawInput<'_>,
    psi: &mut [f64],
    d_r: &mut [f64],
    d_v: &mut [f64],
) -> Result<(), LawError> {
    match law {
        FrictionLaw::Exact => by_dim::<_, DER>(kernel::Exact, input, psi, d_r, d_v),
        FrictionLaw::Projection => by_dim::<_, DER>(kernel::Projection, input, psi, d_r, d_v),
        FrictionLaw::Tanh { alpha } => {
            by_dim::<_, DER>(kernel::Tanh { alpha }, input, psi, d_r, d_v)
        }
        FrictionLaw::PiecewiseLinear { delta } => {
            by_dim::<_, DER>(kernel::PiecewiseLinear { delta }, input, psi, d_r, d_v)
        }
        FrictionLaw::MaxEps { eps } => {
            by_dim::<_, DER>(kernel::MaxEps { eps }, input, psi, d_r, d_v)
        }
    }
}

fn by_dim<K: Kernel, const DER: bool>(
    kernel: K,
    input: &LawInput<'_>,
    psi: &mut [f64],
    d_r: &mut [f64],
    d_v: &mut [f64],
) -> Result<(), LawError> {
    match input.dim {
        1 => batch::<K, 1, DER>(kernel, input, psi, d_r, d_v),
        2 => batch::<K, 2, DER>(kernel, input, psi, d_r, d_v),
        dim => Err(LawError::InvalidDim { dim }),
    }
}

/// Runs every contact, serially or in parallel. Either way the error returned is the
/// one of the lowest-index failing contact, so it does not depend on scheduling.
fn batch<K: Kernel, const D: usize, const DER: bool>(
    kernel: K,
    input: &LawInput<'_>,
    psi: &mut [f64],
    d_r: &mut [f64],
    d_v: &mut [f64],
) -> Result<(), LawError> {
    let n = input.n_samples;
    let nc = input.rho.len();
    if n == 0 || nc == 0 {
        return Ok(());
    }
    let vec_len = D * n;
    let mat_len = D * D * n;
    let one = |c: usize, p: &mut [f64], a: &mut [f64], b: &mut [f64]| {
        contact::<K, D, DER>(kernel, input, c, p, a, b)
    };
    let parallel = nc > 1 && nc.saturating_mul(n) >= PARALLEL_THRESHOLD;
    if !parallel {
        for (c, p) in psi.chunks_exact_mut(vec_len).enumerate() {
            if DER {
                let a = &mut d_r[c * mat_len..(c + 1) * mat_len];
                let b = &mut d_v[c * mat_len..(c + 1) * mat_len];
                one(c, p, a, b)?;
            } else {
                one(c, p, &mut [], &mut [])?;
            }
        }
        return Ok(());
    }
    let lowest = |a: LawError, b: LawError| {
        if a.contact() <= b.contact() { a } else { b }
    };
    let first_err = if DER {
        psi.par_chunks_mut(vec_len)
            .zip(d_r.par_chunks_mut(mat_len))
            .zip(d_v.par_chunks_mut(mat_len))
            .enumerate()
            .filter_map(|(c, ((p, a), b))| one(c, p, a, b).err())
            .reduce_with(lowest)
    } else {
        psi.par_chunks_mut(vec_len)
            .enumerate()
            .filter_map(|(c, p)| one(c, p, &mut [], &mut []).err())
            .reduce_with(lowest)
    };
    first_err.map_or(Ok(()), Err)
}

/// Where `muN` comes from within one contact: a constant or the contact's samples.
trait MuSource: Copy {
    fn block(self, j0: usize, len: usize) -> Self;
    fn at(self, j: usize) -> f64;
}

impl MuSource for f64 {
    #[inline(always)]
    fn block(self, _: usize, _: usize) -> Self {
        self
    }
    #[inline(always)]
    fn at(self, _: usize) -> f64 {
        self
    }
}

impl MuSource for &[f64] {
    #[inline(always)]
    fn block(self, j0: usize, len: usize) -> Self {
        &self[j0..j0 + len]
    }
    #[inline(always)]
    fn at(self, j: usize) -> f64 {
        self[j]
    }
}

fn valid_bound(m: f64) -> bool {
    m >= 0.0 && m.is_finite()
}

/// Validates and evaluates contact `c`; `psi`, `d_r`, `d_v` are that contact's blocks
/// (`d_r`, `d_v` empty when `!DER`).
fn contact<K: Kernel, const D: usize, const DER: bool>(
    kernel: K,
    input: &LawInput<'_>,
    c: usize,
    psi: &mut [f64],
    d_r: &mut [f64],
    d_v: &mut [f64],
) -> Result<(), LawError> {
    let n = input.n_samples;
    let rho = input.rho[c];
    if !(rho > 0.0 && rho.is_finite()) {
        return Err(LawError::InvalidRho {
            contact: c,
            value: rho,
        });
    }
    let r = &input.r[c * D * n..(c + 1) * D * n];
    let v = &input.v[c * D * n..(c + 1) * D * n];
    match input.mu_n {
        Bound::PerContact(mu) => {
            let m = mu[c];
            if !valid_bound(m) {
                return Err(LawError::InvalidBound {
                    contact: c,
                    sample: None,
                    value: m,
                });
            }
            samples::<K, f64, D, DER>(kernel, c, n, r, v, m, rho, psi, d_r, d_v)
        }
        Bound::Sampled(mu) => {
            let m = &mu[c * n..(c + 1) * n];
            if let Some(j) = m.iter().position(|&x| !valid_bound(x)) {
                return Err(LawError::InvalidBound {
                    contact: c,
                    sample: Some(j),
                    value: m[j],
                });
            }
            samples::<K, &[f64], D, DER>(kernel, c, n, r, v, m, rho, psi, d_r, d_v)
        }
    }
}

/// Splits a contact block into its `D` (or `D x D`) per-component rows of `n` samples.
fn rows<const D: usize>(x: &[f64], n: usize) -> [&[f64]; D] {
    from_fn(|k| &x[k * n..(k + 1) * n])
}

fn rows_mut<const D: usize>(x: &mut [f64], n: usize) -> [&mut [f64]; D] {
    let mut it = x.chunks_exact_mut(n);
    from_fn(|_| it.next().unwrap_or_default())
}

fn block_finite(x: &[f64]) -> bool {
    // Non-short-circuiting so that the reduction vectorises.
    x.iter().fold(true, |ok, v| ok & v.is_finite())
}

#[allow(clippy::too_many_arguments)]
fn samples<K: Kernel, M: MuSource, const D: usize, const DER: bool>(
    kernel: K,
    c: usize,
    n: usize,
    r: &[f64],
    v: &[f64],
    mu: M,
    rho: f64,
    psi: &mut [f64],
    d_r: &mut [f64],
    d_v: &mut [f64],
) -> Result<(), LawError> {
    let r: [&[f64]; D] = rows(r, n);
    let v: [&[f64]; D] = rows(v, n);
    let mut psi: [&mut [f64]; D] = rows_mut(psi, n);
    // Rows of the derivative blocks grouped by m: entry (m, n) is row m*D + n.
    let (mut d_r, mut d_v): (MatRowsMut<'_, D>, MatRowsMut<'_, D>) = if DER {
        let mut a = d_r.chunks_exact_mut(n);
        let mut b = d_v.chunks_exact_mut(n);
        (
            from_fn(|_| from_fn(|_| a.next().unwrap_or_default())),
            from_fn(|_| from_fn(|_| b.next().unwrap_or_default())),
        )
    } else {
        (
            from_fn(|_| from_fn(|_| Default::default())),
            from_fn(|_| from_fn(|_| Default::default())),
        )
    };

    let mut j0 = 0;
    while j0 < n {
        let len = BLOCK.min(n - j0);
        let rb: [&[f64]; D] = from_fn(|k| &r[k][j0..j0 + len]);
        let vb: [&[f64]; D] = from_fn(|k| &v[k][j0..j0 + len]);
        let mb = mu.block(j0, len);
        let mut pb: [&mut [f64]; D] = psi.each_mut().map(|x| &mut x[j0..j0 + len]);
        if DER {
            let ab = d_r
                .each_mut()
                .map(|row| row.each_mut().map(|x| &mut x[j0..j0 + len]));
            let bb = d_v
                .each_mut()
                .map(|row| row.each_mut().map(|x| &mut x[j0..j0 + len]));
            for j in 0..len {
                let p = kernel.eval::<D, true>(
                    from_fn(|k| rb[k][j]),
                    from_fn(|k| vb[k][j]),
                    mb.at(j),
                    rho,
                );
                for k in 0..D {
                    pb[k][j] = p.psi[k];
                    for l in 0..D {
                        ab[k][l][j] = p.dr[k][l];
                        bb[k][l][j] = p.dv[k][l];
                    }
                }
            }
            let ok =
                (0..D).all(|k| (0..D).all(|l| block_finite(ab[k][l]) & block_finite(bb[k][l])));
            if !ok {
                return Err(first_non_finite(c, j0, &rb, &vb, &pb, Some((&ab, &bb))));
            }
        } else {
            for j in 0..len {
                let p = kernel.eval::<D, false>(
                    from_fn(|k| rb[k][j]),
                    from_fn(|k| vb[k][j]),
                    mb.at(j),
                    rho,
                );
                for (row, x) in pb.iter_mut().zip(p.psi) {
                    row[j] = x;
                }
            }
        }
        let ok = (0..D).all(|k| block_finite(rb[k]) & block_finite(vb[k]) & block_finite(pb[k]));
        if !ok {
            return Err(first_non_finite::<D>(c, j0, &rb, &vb, &pb, None));
        }
        j0 += len;
    }
    Ok(())
}

/// The `D x D` per-entry rows of one contact's derivative block.
type MatRowsMut<'a, const D: usize> = [[&'a mut [f64]; D]; D];
type MatRows<'a, 'b, const D: usize> = &'b MatRowsMut<'a, D>;

/// Locates the first non-finite sample of a block known to contain one (cold path).
#[cold]
fn first_non_finite<const D: usize>(
    c: usize,
    j0: usize,
    r: &[&[f64]; D],
    v: &[&[f64]; D],
    psi: &[&mut [f64]; D],
    der: Option<(MatRows<'_, '_, D>, MatRows<'_, '_, D>)>,
) -> LawError {
    let len = r[0].len();
    let bad = |j: usize| {
        let mut ok =
            (0..D).all(|k| r[k][j].is_finite() && v[k][j].is_finite() && psi[k][j].is_finite());
        if let Some((a, b)) = der {
            ok &= (0..D).all(|k| (0..D).all(|l| a[k][l][j].is_finite() && b[k][l][j].is_finite()));
        }
        !ok
    };
    let j = (0..len).find(|&j| bad(j)).unwrap_or(0);
    LawError::NonFinite {
        contact: c,
        sample: j0 + j,
    }
}
