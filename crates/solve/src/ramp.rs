//! The harmonic ramp of a point solved from zero force: a few harmonics first, then doubling
//! up to the target set (paper Table 1: much faster than the whole set from zero), each stage
//! with its own sample count.

use crate::periodic::{PointSettings, SolveError};
use ewr_hb::HarmonicSet;

/// The harmonic sets of a ramp towards `target`: a few harmonics, then doubling.
pub fn ramp_sets(target: &HarmonicSet) -> Vec<HarmonicSet> {
    let h_max = target.h_max();
    let mut out = Vec::new();
    // Start from the single harmonic: its solution is nearly always reached from zero
    // force, and each doubling then starts close to its answer.
    let mut h = 1usize;
    while h < h_max {
        if let Some(s) = target.up_to(h)
            && out.last() != Some(&s)
        {
            out.push(s);
        }
        h = 2 * h + 1;
    }
    out.push(target.clone());
    out
}

/// Fewest samples of a ramp stage: with fewer, the first stages of a point from zero force
/// (long stick phases, few harmonics) need more Newton iterations than they save (measured on
/// the first point of Fig. 5, which the default 512 samples of odd:59 keep unchanged).
pub const STAGE_MIN_SAMPLES: usize = 512;

/// Time samples of a ramp stage: the final set's samples scaled down with the number of
/// harmonics (same samples per harmonic, a power of two, at least [`STAGE_MIN_SAMPLES`]), the
/// final count for the final set. An early stage only gives the next one its start, and its Galerkin
/// integrals of 4096 or 16384 samples for one harmonic cost FFTs that do not change where the
/// final stage converges.
pub fn stage_samples(stage: &HarmonicSet, target: &HarmonicSet, n_samples: usize) -> usize {
    if stage == target {
        return n_samples;
    }
    let scaled =
        (n_samples as u128 * (stage.h_max() as u128 + 1)).div_ceil(target.h_max() as u128 + 1);
    let scaled = (scaled as usize).max(STAGE_MIN_SAMPLES).next_power_of_two();
    scaled.max(2 * stage.h_max() + 2).min(n_samples)
}

/// The harmonic sets to solve on in turn (a ramp from zero force, or just the target from a
/// given start) and the start on its own set, for `m` force signals.
pub(crate) fn initial_stages(
    settings: &PointSettings,
    start: Option<(&HarmonicSet, &[f64])>,
    m: usize,
) -> Result<(Vec<HarmonicSet>, HarmonicSet, Vec<f64>), SolveError> {
    let stages = match start {
        Some(_) => vec![settings.set.clone()],
        None if settings.ramp => ramp_sets(&settings.set),
        None => vec![settings.set.clone()],
    };
    let (x_set, x) = match start {
        Some((set, x)) => {
            if x.len() != m * set.n_coeffs() {
                return Err(SolveError::Start(format!(
                    "{} coefficients given, {} expected for {set}",
                    x.len(),
                    m * set.n_coeffs()
                )));
            }
            (set.clone(), x.to_vec())
        }
        None => (stages[0].clone(), vec![0.0; m * stages[0].n_coeffs()]),
    };
    Ok((stages, x_set, x))
}
