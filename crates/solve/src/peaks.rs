//! Resonance peaks: the maximum over frequency of the monitored amplitude, found exactly
//! rather than read off a frequency grid, and followed as a parameter changes.
//!
//! A peak is a maximum of the scalar function `A(w)` (the total amplitude
//! `max_t ||u(t)||` of the monitored DOFs, [`crate::DofResponse::norm_peak`]), each evaluation
//! one periodic solution warm-started from the nearest one already computed. `A` is smooth
//! near a resonance peak of a friction-damped structure (stick-slip transitions move
//! continuously with `w`), so Brent's method (golden section with parabolic steps) converges
//! fast: 10-20 solves per peak, each a few Newton iterations.
//!
//! Known limit: along a curve that folds back in `w` (not seen with constant normal loads),
//! a maximum on the folded branch is not bracketed by frequencies; the sweep's own largest
//! point is kept then.

use crate::continuation::FrcPoint;
use crate::periodic::{PointSettings, PointSolution, SolveError};
use crate::point::solve_point;
use ewr_contact::ContactParams;
use ewr_hb::receptance::Receptance;

/// A refined resonance peak.
#[derive(Clone, Debug)]
pub struct Peak {
    /// Frequency of the maximum.
    pub omega: f64,
    /// The maximum total amplitude `max_t ||u(t)||` of the monitored DOFs.
    pub amplitude: f64,
    /// The periodic solution at the peak (its contact summaries give stick and slip).
    pub solution: PointSolution,
    /// Periodic solutions computed to refine it.
    pub evaluations: usize,
}

/// Sub-intervals of the first scan of a bracket (see [`maximise`]).
const SCAN: usize = 16;

/// Relative tolerance on the peak frequency: the amplitude, flat at its maximum, is then
/// exact to about its square (1e-12), far below the discretisation error.
pub const OMEGA_RTOL: f64 = 1e-6;

/// Evaluates `A(w)` by periodic solutions warm-started from the nearest solution computed so
/// far; unconverged solutions count as no amplitude at all, so the search moves away.
struct Amplitude<'a> {
    rec: &'a Receptance,
    params: &'a ContactParams,
    settings: &'a PointSettings,
    known: Vec<PointSolution>,
    evaluations: usize,
}

impl Amplitude<'_> {
    fn at(&mut self, omega: f64) -> Result<f64, SolveError> {
        if let Some(s) = self.known.iter().find(|s| s.omega == omega) {
            return Ok(amp(s));
        }
        let near = self
            .known
            .iter()
            .filter(|s| s.status.converged())
            .min_by(|a, b| (a.omega - omega).abs().total_cmp(&(b.omega - omega).abs()));
        let start = near.map(|s| (s.set.clone(), s.friction.clone()));
        let sol = solve_point(
            self.rec,
            self.params,
            omega,
            self.settings,
            start.as_ref().map(|(set, x)| (set, x.as_slice())),
        )?;
        self.evaluations += 1;
        let a = amp(&sol);
        self.known.push(sol);
        Ok(a)
    }

    fn best(&self) -> Option<&PointSolution> {
        self.known
            .iter()
            .filter(|s| s.status.converged())
            .max_by(|a, b| a.dofs.norm_peak.total_cmp(&b.dofs.norm_peak))
    }
}

fn amp(s: &PointSolution) -> f64 {
    if s.status.converged() {
        s.dofs.norm_peak
    } else {
        f64::NEG_INFINITY
    }
}

/// The maximum of `A(w)` in `[lo, hi]`, which must hold an interior point `mid` with `A`
/// above both ends (a bracket); `known` are solutions to warm-start from (at least one
/// converged). Brent's method to [`OMEGA_RTOL`].
pub fn maximise(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    bracket: [f64; 3],
    known: Vec<PointSolution>,
) -> Result<Peak, SolveError> {
    let mut f = Amplitude {
        rec,
        params,
        settings,
        known,
        evaluations: 0,
    };
    let [a0, mid, b0] = bracket;
    let (lo, hi) = (a0.min(b0), a0.max(b0));
    // `A` is the largest of several smooth functions (the response's maximum moves from one
    // instant of the period to another as `w` changes), so it can have close local maxima:
    // a scan of the bracket first picks the highest before Brent's method refines it.
    let mut scan: Vec<(f64, f64)> = vec![(mid, f.at(mid)?)];
    for i in 1..SCAN {
        let w = lo + (hi - lo) * i as f64 / SCAN as f64;
        scan.push((w, f.at(w)?));
    }
    scan.push((lo, f.at(lo)?));
    scan.push((hi, f.at(hi)?));
    scan.sort_by(|x, y| x.0.total_cmp(&y.0));
    // `mid` may be a scan point too (the centre of a uniform grid's bracket).
    scan.dedup_by(|x, y| (x.0 - y.0).abs() <= OMEGA_RTOL * x.0.abs());
    if scan.len() < 3 {
        // The bracket is already narrower than the tolerance (a step of 1e-12): its best
        // point is the peak.
        return best_peak(f);
    }
    let k = (1..scan.len() - 1)
        .max_by(|&i, &j| scan[i].1.total_cmp(&scan[j].1))
        .unwrap_or(1);
    let (mid, mut a, mut b) = (scan[k].0, scan[k - 1].0, scan[k + 1].0);
    // Brent's minimisation of -A (Numerical Recipes' `brent`, in plain form).
    const CGOLD: f64 = 0.381_966_011_250_105_1;
    let (mut x, mut w, mut v) = (mid, mid, mid);
    let fx0 = -f.at(mid)?;
    let (mut fx, mut fw, mut fv) = (fx0, fx0, fx0);
    let (mut d, mut e) = (0.0f64, 0.0f64);
    for _ in 0..100 {
        let xm = 0.5 * (a + b);
        let tol1 = OMEGA_RTOL * x.abs() + 1e-300;
        let tol2 = 2.0 * tol1;
        if (x - xm).abs() <= tol2 - 0.5 * (b - a) {
            break;
        }
        let mut golden = true;
        if e.abs() > tol1 {
            let r = (x - w) * (fx - fv);
            let mut q = (x - v) * (fx - fw);
            let mut p = (x - v) * q - (x - w) * r;
            q = 2.0 * (q - r);
            if q > 0.0 {
                p = -p;
            }
            q = q.abs();
            let etemp = e;
            e = d;
            if p.abs() < (0.5 * q * etemp).abs() && p > q * (a - x) && p < q * (b - x) {
                d = p / q;
                let u = x + d;
                if u - a < tol2 || b - u < tol2 {
                    d = tol1.copysign(xm - x);
                }
                golden = false;
            }
        }
        if golden {
            e = if x >= xm { a - x } else { b - x };
            d = CGOLD * e;
        }
        let u = if d.abs() >= tol1 {
            x + d
        } else {
            x + tol1.copysign(d)
        };
        let fu = -f.at(u)?;
        if fu <= fx {
            if u >= x {
                a = x;
            } else {
                b = x;
            }
            (v, w, x) = (w, x, u);
            (fv, fw, fx) = (fw, fx, fu);
        } else {
            if u < x {
                a = u;
            } else {
                b = u;
            }
            if fu <= fw || w == x {
                (v, w) = (w, u);
                (fv, fw) = (fw, fu);
            } else if fu <= fv || v == x || v == w {
                v = u;
                fv = fu;
            }
        }
    }
    best_peak(f)
}

/// The best converged solution evaluated, as the peak.
fn best_peak(f: Amplitude<'_>) -> Result<Peak, SolveError> {
    let evaluations = f.evaluations;
    let best = f
        .best()
        .cloned()
        .ok_or_else(|| SolveError::Start("no periodic solution converged near the peak".into()))?;
    Ok(Peak {
        omega: best.omega,
        amplitude: best.dofs.norm_peak,
        solution: best,
        evaluations,
    })
}

/// The local maxima of a frequency response curve (converged points, in the order
/// computed), each refined to the true maximum between its two neighbours.
pub fn refine_peaks(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    points: &[FrcPoint],
) -> Result<Vec<Peak>, SolveError> {
    let ok: Vec<&PointSolution> = points
        .iter()
        .map(|p| &p.solution)
        .filter(|s| s.status.converged())
        .collect();
    let mut peaks = Vec::new();
    for i in 1..ok.len().saturating_sub(1) {
        let (l, c, r) = (ok[i - 1], ok[i], ok[i + 1]);
        let monotone =
            (l.omega < c.omega && c.omega < r.omega) || (l.omega > c.omega && c.omega > r.omega);
        let is_max = c.dofs.norm_peak >= l.dofs.norm_peak && c.dofs.norm_peak > r.dofs.norm_peak;
        if !is_max {
            continue;
        }
        if !monotone {
            // A fold: keep the sweep's point (see the module's note).
            peaks.push(Peak {
                omega: c.omega,
                amplitude: c.dofs.norm_peak,
                solution: c.clone(),
                evaluations: 0,
            });
            continue;
        }
        let known = vec![l.clone(), c.clone(), r.clone()];
        peaks.push(maximise(
            rec,
            params,
            settings,
            [l.omega, c.omega, r.omega],
            known,
        )?);
    }
    Ok(peaks)
}

/// The highest peak of `A(w)` near `guess` (a solution close to the peak): steps of `step`
/// from it, growing by half each time, until the amplitude falls on both sides, then
/// [`maximise`]. For following a peak as a parameter changes (the previous parameter's peak
/// is the guess).
pub fn peak_near(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    guess: &PointSolution,
    step: f64,
) -> Result<Peak, SolveError> {
    let mut f = Amplitude {
        rec,
        params,
        settings,
        known: Vec::new(),
        evaluations: 0,
    };
    let w0 = guess.omega;
    // Re-solve at the guess: the guess may come from another parameter value.
    let start = (guess.set.clone(), guess.friction.clone());
    let sol = solve_point(rec, params, w0, settings, Some((&start.0, &start.1)))?;
    f.evaluations += 1;
    f.known.push(sol);
    let a0 = f.at(w0)?;
    let (mut lo, mut hi) = (w0, w0);
    let (mut alo, mut ahi) = (a0, a0);
    let (mut mid, mut amid) = (w0, a0);
    let mut h = step;
    for _ in 0..60 {
        let cand_lo = (lo - h).max(1e-9 * w0);
        let a_lo = f.at(cand_lo)?;
        let cand_hi = hi + h;
        let a_hi = f.at(cand_hi)?;
        for (w, a) in [(cand_lo, a_lo), (cand_hi, a_hi)] {
            if a > amid {
                mid = w;
                amid = a;
            }
        }
        lo = cand_lo;
        hi = cand_hi;
        alo = a_lo;
        ahi = a_hi;
        if amid > alo && amid > ahi && mid > lo && mid < hi {
            break;
        }
        h *= 1.5;
    }
    if !(amid > alo && amid > ahi) {
        return Err(SolveError::Start(format!(
            "no peak found near w = {w0}: the amplitude keeps growing towards w = {}",
            if ahi >= alo { hi } else { lo }
        )));
    }
    // Narrow the bracket to the neighbours of the best point among those evaluated.
    let mut ws: Vec<(f64, f64)> = f.known.iter().map(|s| (s.omega, amp(s))).collect();
    ws.sort_by(|a, b| a.0.total_cmp(&b.0));
    let k = ws.iter().position(|&(w, _)| w == mid).unwrap_or(0);
    let bracket = [
        ws[k.saturating_sub(1)].0,
        mid,
        ws[(k + 1).min(ws.len() - 1)].0,
    ];
    let evaluations = f.evaluations;
    let mut peak = maximise(rec, params, settings, bracket, f.known)?;
    peak.evaluations += evaluations;
    Ok(peak)
}
