//! Adaptive continuation steps: the step shrinks where the response curve bends (resonance
//! peaks, the approach to a fold) and grows where it is straight, so that the polyline
//! through the computed points stays within a tolerance of the curve.
//!
//! The measure is the error of linear interpolation of `ln A` (the monitored amplitude)
//! between a point's neighbours, taken at the point itself: for a smooth curve it is
//! `h1 h2 |y''| / 2`, second order in the step, so the step that meets a tolerance `tol` is
//! the current one times `sqrt(tol / err)`. Measuring `ln A` rather than `A` makes the
//! tolerance relative (1e-2: the polyline misses the curve by about 1 % of the amplitude)
//! and the same on a flank a thousand times lower than the peak. A jump in `ln A` between two
//! neighbours (a fold that a sequential sweep jumps off, a missed narrow peak) is capped too.

/// Relative tolerance by default: the polyline through the points is within about 1 % of the
/// amplitude, enough to read a peak off a plot and to bracket it for refinement.
pub const DEFAULT_TOLERANCE: f64 = 1e-2;

/// A change of `ln A` between neighbours above this many tolerances marks a jump.
const JUMP: f64 = 25.0;

/// The steps never change by more than these factors at once: the error estimate is from
/// three points only.
const SHRINK: f64 = 0.5;
const GROW: f64 = 2.0;

/// What to do with a new point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// Keep it and go on with this step.
    Accept(f64),
    /// Discard it and retry with this (smaller) step from the last kept point.
    Retry(f64),
}

/// Error of linear interpolation at `p1` between `p0` and `p2` (each `(x, y)`), or 0 when
/// the abscissae do not separate the points.
pub fn interpolation_error(p0: (f64, f64), p1: (f64, f64), p2: (f64, f64)) -> f64 {
    let dx = p2.0 - p0.0;
    if dx == 0.0 || !dx.is_finite() {
        return 0.0;
    }
    let lin = p0.1 + (p2.1 - p0.1) * (p1.0 - p0.0) / dx;
    let e = (p1.1 - lin).abs();
    if e.is_finite() { e } else { 0.0 }
}

/// Decides on a new point at abscissa `x` (frequency, or arclength) with amplitude `amp`,
/// given the last two kept points `kept` (oldest first; fewer at the start of a curve), the
/// step that led to it and the allowed range of steps.
pub fn judge(
    tol: f64,
    kept: &[(f64, f64)],
    x: f64,
    amp: f64,
    step: f64,
    min_step: f64,
    max_step: f64,
) -> Verdict {
    let y = amp.ln();
    let Some(&(_, y1)) = kept.last() else {
        return Verdict::Accept(step);
    };
    if !y.is_finite() || !y1.is_finite() {
        return Verdict::Accept(step);
    }
    let jump = (y - y1).abs() / (JUMP * tol);
    let bend = match kept {
        [.., p0, p1] => interpolation_error(*p0, *p1, (x, y)) / tol,
        _ => 0.0,
    };
    // Ratio of the measured error to the allowed one (1 = on target).
    let ratio = jump.powi(2).max(bend);
    if ratio > 2.0 && step * SHRINK >= min_step {
        let next = (step * (1.0 / ratio).sqrt().max(SHRINK * SHRINK)).max(min_step);
        return Verdict::Retry(next.min(step * SHRINK));
    }
    let factor = if ratio > 0.0 {
        (1.0 / ratio).sqrt().clamp(SHRINK, GROW)
    } else {
        GROW
    };
    Verdict::Accept((step * factor).clamp(min_step, max_step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_lines_grow_the_step() {
        let kept = [(1.0, 0.0), (1.1, 0.1)];
        assert_eq!(
            judge(1e-2, &kept, 1.2, 0.2f64.exp(), 0.1, 0.01, 0.4),
            Verdict::Accept(0.2)
        );
    }

    #[test]
    fn a_parabola_top_gets_the_step_meeting_the_tolerance() {
        // y = -x^2 / (2 z^2): the interpolation error at the middle of a symmetric pair is
        // h^2 / (2 z^2); with tol the step that meets it is z sqrt(2 tol).
        let z: f64 = 0.01;
        let tol = 1e-2;
        let y = |x: f64| -x * x / (2.0 * z * z);
        let h = 0.004;
        let kept = [(-h, y(-h)), (0.0, 0.0)];
        let Verdict::Retry(next) = judge(tol, &kept, h, y(h).exp(), h, 1e-6, 1.0) else {
            panic!("a step of 0.4 z over a peak of width z must be refused");
        };
        assert!(next < h);
        let h = z * (2.0 * tol).sqrt();
        let kept = [(-h, y(-h)), (0.0, 0.0)];
        match judge(tol, &kept, h, y(h).exp(), h, 1e-6, 1.0) {
            Verdict::Accept(s) => assert!((s - h).abs() < 1e-12 * h, "{s} vs {h}"),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn a_jump_is_refused_until_the_smallest_step() {
        let kept = [(1.0, 0.0), (1.1, 0.0)];
        assert!(matches!(
            judge(1e-2, &kept, 1.2, 10.0, 0.1, 0.01, 0.4),
            Verdict::Retry(_)
        ));
        assert_eq!(
            judge(1e-2, &kept, 1.11, 10.0, 0.01, 0.01, 0.4),
            Verdict::Accept(0.01)
        );
    }
}
