//! What solving 3-D contacts (normal load that varies and lifts off) needs beside the
//! common point solver: the automatic scaling of their equations from the structure, and the
//! Newton windows their nearly singular Jacobians call for (`docs/contact-3d.md`).

use crate::newton::NewtonOptions;
use ewr_contact::{CondensedContacts, ContactParams, UnilateralParams};

/// The scalings of the 3-D contact equations at one frequency, from the structure alone:
/// `rho_N = 1 / |G_1,NN|` (force per gap), `rho_T = 1 / (w |G_1,TT|)` (force per velocity),
/// each times the model's `rho` (default 1), and the force scale `F = max(mu, 0.05) lambda_ref`
/// with `lambda_ref` a contact's fixed normal load, else the static normal load the
/// interference and static forcing would give it alone, else the dynamic one. The zero set does not depend on them; Newton's
/// path does (see docs/contact-3d.md, "Scaling").
pub fn auto_params(params: &ContactParams, cond: &CondensedContacts) -> UnilateralParams {
    scaled_params(params, cond, 1)
}

/// [`auto_params`] with the flexibilities `|G_h,NN|` and `|G_h,TT|` read on harmonic `h`
/// (`w |G_0,TT|` for the friction rows at `h = 0`). A nonlinear mode takes them from the
/// static receptance: at the mode's own frequency `G_1,NN` of a contact that carries the
/// mode vanishes (that is what makes the motion free), and `1 / |G_1,NN|` would change by
/// orders of magnitude between the evaluations of one Newton step (docs/nonlinear-modes.md,
/// pitfall 6).
pub(crate) fn scaled_params(
    params: &ContactParams,
    cond: &CondensedContacts,
    h: usize,
) -> UnilateralParams {
    let normal = params.normal.as_ref().expect("3-D contacts");
    let (d, nc) = (params.dim, params.len());
    let mt = d * nc;
    let get = |h: usize| cond.index_of(h);
    let diag = |h: usize, i: usize| get(h).map_or(0.0, |j| cond.g_diagonal(j, i).norm());
    let w = cond.omega;
    let mut rho_t = Vec::with_capacity(nc);
    let mut rho_n = Vec::with_capacity(nc);
    let mut force_scale = Vec::with_capacity(nc);
    for c in 0..nc {
        let gt = (0..d).map(|k| diag(h, c * d + k)).fold(0.0, f64::max);
        let gn = diag(h, mt + c);
        let inv = |x: f64| {
            if x > 0.0 && x.is_finite() {
                1.0 / x
            } else {
                1.0
            }
        };
        rho_t.push(params.rho[c] * inv(w * gt));
        rho_n.push(params.rho[c] * inv(gn));
        let stat = get(0).map_or(0.0, |j| {
            let g0n = cond.g_diagonal(j, mt + c).norm();
            let closing = -(normal.g0[c] + cond.q(j)[mt + c].re);
            if g0n > 0.0 {
                closing.max(0.0) / g0n
            } else {
                0.0
            }
        });
        let dynamic = get(1).map_or(0.0, |j| {
            let g1 = cond.g_diagonal(j, mt + c).norm();
            if g1 > 0.0 {
                cond.q(j)[mt + c].norm() / g1
            } else {
                0.0
            }
        });
        let lambda_ref = if let Some(n) = normal.load[c].filter(|&n| n > 0.0) {
            n
        } else if stat > 0.0 {
            stat
        } else if dynamic > 0.0 {
            dynamic
        } else {
            1.0
        };
        force_scale.push(normal.mu[c].max(0.05) * lambda_ref);
    }
    UnilateralParams {
        dim: d,
        mu: normal.mu.clone(),
        g0: normal.g0.clone(),
        load: normal.load.clone(),
        rho_t,
        rho_n,
        force_scale,
    }
}

/// [`crate::KrylovOptions::stagnation_window`] of 3-D contact solves: contacts stuck all
/// period make `J` nearly singular, and a stagnating GMRES then spent up to its 1000 products
/// per Newton step (17 s on the 200-contact sector). Measured there on 5 points near the
/// resonance: 50 products gave 464 Newton iterations; 100 products with a tenth as the
/// required gain gave more than 1400 (an early-stopped Krylov step is also a regularised one).
pub(crate) const STAGNATION_WINDOW_3D: usize = 50;

/// `opts` with [`STAGNATION_WINDOW_3D`] unless the caller chose a window.
pub(crate) fn with_stagnation_window(opts: &NewtonOptions) -> NewtonOptions {
    let mut o = opts.clone();
    if o.krylov.stagnation_window == 0 {
        o.krylov.stagnation_window = STAGNATION_WINDOW_3D;
    }
    o
}

/// [`NewtonOptions::stall_window`] of a 3-D solve that another `rho` may retry: the stall
/// traced at 4120 rad/s on the 100-contact sector held `||g||` at 0.46 from iteration 80 to
/// its cap of 200 (25 iterations cutting it by less than 5 % from iteration 85), then
/// `rho x 0.1` converged in 10; the slowest real progress traced, the last digits above the
/// tolerance, cut it by 12 % or more per 25 iterations.
pub(crate) const STALL_WINDOW_3D: usize = 25;
