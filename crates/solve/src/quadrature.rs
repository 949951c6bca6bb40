//! Phase resonance: the frequencies where the first harmonic of a forced DOF's response is in
//! quadrature with its force (lags it by a quarter period), the test engineer's resonance
//! criterion. For a lightly damped linear mode it coincides with the amplitude peak; with
//! strong (friction) damping the two part (seed 004), so `ewr frc` reports both.
//!
//! The in-phase part `q(w) = a_1 f_c + b_1 f_s` of the response `a_1 cos + b_1 sin` against the
//! force `f_c cos + f_s sin` changes sign at quadrature; each sign change along a curve is
//! refined by the Illinois (modified regula falsi) method, each evaluation one periodic
//! solution warm-started from the nearest one computed.

use crate::continuation::FrcPoint;
use crate::periodic::{PointSettings, PointSolution, SolveError};
use crate::point::solve_point;
use ewr_contact::ContactParams;
use ewr_hb::receptance::Receptance;

/// A phase-resonance point of a frequency response curve.
#[derive(Clone, Debug)]
pub struct PhaseResonance {
    /// Frequency where the forced DOF's first harmonic lags its force by 90 degrees.
    pub omega: f64,
    /// The monitored amplitude there ([`crate::DofResponse::norm_peak`]).
    pub amplitude: f64,
    /// Periodic solutions computed to refine it.
    pub evaluations: usize,
}

/// Relative tolerance on the quadrature frequency.
const TOL: f64 = 1e-10;

/// The in-phase part of DOF `dof`'s first harmonic against the force `(f_c, f_s)`, or `None`
/// when the DOF is not monitored or harmonic 1 is not in the set.
fn in_phase(s: &PointSolution, dof: usize, force: (f64, f64)) -> Option<f64> {
    let i = s.dofs.dofs.iter().position(|&d| d == dof)?;
    let p = s.set.coeff_index(1)?;
    let nco = s.set.n_coeffs();
    let (a, b) = (s.dofs.coeffs[i * nco + p], s.dofs.coeffs[i * nco + p + 1]);
    Some(a * force.0 + b * force.1)
}

/// Every phase resonance of `dof` (forced by `force` on harmonic 1) along the converged
/// points of a curve, refined to a relative tolerance of 1e-10 in frequency.
pub fn phase_resonances(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    points: &[FrcPoint],
    dof: usize,
    force: (f64, f64),
) -> Result<Vec<PhaseResonance>, SolveError> {
    let ok: Vec<(&PointSolution, f64)> = points
        .iter()
        .map(|p| &p.solution)
        .filter(|s| s.status.converged())
        .filter_map(|s| in_phase(s, dof, force).map(|q| (s, q)))
        .collect();
    let mut out = Vec::new();
    for (k, &(s, q)) in ok.iter().enumerate() {
        if q == 0.0 {
            // Exactly in quadrature at a computed point (a symmetric grid around w_n).
            out.push(PhaseResonance {
                omega: s.omega,
                amplitude: s.dofs.norm_peak,
                evaluations: 0,
            });
            continue;
        }
        let Some(&(l, ql)) = k.checked_sub(1).map(|i| &ok[i]) else {
            continue;
        };
        if ql != 0.0 && ql.signum() != q.signum() {
            out.push(refine(rec, params, settings, dof, force, (l, ql), (s, q))?);
        }
    }
    Ok(out)
}

fn refine(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    dof: usize,
    force: (f64, f64),
    (l, ql): (&PointSolution, f64),
    (r, qr): (&PointSolution, f64),
) -> Result<PhaseResonance, SolveError> {
    let (mut a, mut fa, mut sa) = (l.omega, ql, l.clone());
    let (mut b, mut fb, mut sb) = (r.omega, qr, r.clone());
    let mut evaluations = 0;
    let mut side = 0i8;
    let mut best = if fa.abs() < fb.abs() {
        sa.clone()
    } else {
        sb.clone()
    };
    for _ in 0..60 {
        if (b - a).abs() <= TOL * a.abs().max(b.abs()) {
            break;
        }
        let w = (a * fb - b * fa) / (fb - fa);
        let near = if (w - a).abs() < (w - b).abs() {
            &sa
        } else {
            &sb
        };
        let s = solve_point(rec, params, w, settings, Some((&near.set, &near.friction)))?;
        evaluations += 1;
        let Some(fw) = in_phase(&s, dof, force).filter(|_| s.status.converged()) else {
            break;
        };
        best = s.clone();
        if fw == 0.0 {
            break;
        }
        // Illinois: halve the stale end's value when the same end is kept twice.
        if fw.signum() == fb.signum() {
            (b, fb, sb) = (w, fw, s);
            if side == -1 {
                fa /= 2.0;
            }
            side = -1;
        } else {
            (a, fa, sa) = (w, fw, s);
            if side == 1 {
                fb /= 2.0;
            }
            side = 1;
        }
    }
    Ok(PhaseResonance {
        omega: best.omega,
        amplitude: best.dofs.norm_peak,
        evaluations,
    })
}
