//! What an engineer reads off a periodic solution, per contact: when it sticks, how well
//! Coulomb's law holds on the samples, the energy it dissipates per cycle, amplitudes.

use ewr_contact::{ContactHistories, ContactParams};
use serde::Serialize;

/// Speeds below this fraction of the period's largest are too small for the direction of
/// sliding to be judged by [`ContactSummary::max_coulomb_violation`]: just after a stick
/// phase the velocity of a truncated series rings at a fraction of a per cent of its largest,
/// which turns a slow velocity's direction (seed 000's 2-D oscillator at w = 0.17, odd:159:
/// 1.7 % of the bound across the velocity at 1.6 % of the largest speed, 21 samples after
/// the stick phase: more than at odd:79, with a 1 % threshold).
pub const SLIDING_SPEED_FRACTION: f64 = 5e-2;

/// Per-contact summary of a periodic solution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContactSummary {
    /// Stick intervals `[t_start, t_end]` in time units within the period `[0, T)`; an
    /// interval that wraps past the end of the period has `t_end > T`.
    pub stick_intervals: Vec<[f64; 2]>,
    /// Largest violation of Coulomb's law over the period, relative to `mu N`: the excess
    /// `|r| - mu N`, and when sliding (faster than [`SLIDING_SPEED_FRACTION`] of the largest
    /// speed) the force's component along the velocity and across it (the distance of `r`
    /// from the forces that oppose the sliding). The excess is measured on the series smoothed
    /// by Lanczos' sigma factors ([`sigma_smoothed`]), so that the Gibbs overshoot of a
    /// truncated series at every stick-slip kink is not counted as a violation and a real one
    /// is; the direction on the samples (overshoot does not turn a force).
    pub max_coulomb_violation: f64,
    /// Energy dissipated by friction per cycle, `-integral r . v dt` (>= 0 for Coulomb).
    pub dissipated_energy: f64,
    /// Largest norm of the relative tangential displacement over the period.
    pub displacement_amplitude: f64,
    /// Largest norm of the relative tangential velocity over the period.
    pub velocity_amplitude: f64,
    /// Largest norm of the friction force over the period.
    pub force_amplitude: f64,
    /// Separation intervals (3-D contacts; empty otherwise), as `stick_intervals`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub separation_intervals: Vec<[f64; 2]>,
    /// Smallest and largest normal force over the period (3-D contacts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normal_force_range: Option<[f64; 2]>,
    /// Least stick margin over the period's samples, `1 - |r - rho v| / b` (`b` the bound),
    /// `-1` where the bound vanishes (separated, or no friction): the solver holds a 3-D
    /// contact stuck all period down to `-ewr_contact::HOLD_MARGIN`.
    #[serde(skip)]
    pub least_stick_margin: f64,
}

/// Summarises every contact of `h` (sampled over one period of `2 pi / omega`), for a
/// solution whose highest harmonic is `h_max`.
///
/// A sample sticks when `|r - rho v| <= mu N`, the same classification the E-WR law uses:
/// at an exact solution this is `v = 0, |r| <= mu N`, and it needs no velocity threshold (a
/// threshold on the speed misplaces the start of slip, where the speed grows from zero with
/// zero slope). At a truncated solution it moves with `rho` (docs/results-format.md says how
/// much, and why the alternatives tried were worse). Gibbs oscillations can lift a few
/// samples inside a stick phase just above the bound, so stick runs separated by less than
/// half a period of the highest harmonic, `T / (2 h_max)`, the shortest feature the series
/// resolves, are joined.
pub fn summarise(
    h: &ContactHistories,
    params: &ContactParams,
    omega: f64,
    h_max: usize,
) -> Vec<ContactSummary> {
    let nt = h.n_samples;
    let d = params.dim;
    let period = std::f64::consts::TAU / omega;
    let dt = period / nt as f64;
    let min_gap = period / (2 * h_max.max(1)) as f64;
    // The excess over the bound reads the smoothed force and normal force (the raw ones where
    // they cannot be smoothed).
    let force_s = sigma_smoothed(&h.force, nt, h_max).unwrap_or_else(|| h.force.clone());
    let normal_s = h
        .normal
        .as_ref()
        .map(|nh| sigma_smoothed(&nh.force, nt, h_max).unwrap_or_else(|| nh.force.clone()));
    (0..params.len())
        .map(|c| {
            let rho = params.rho[c];
            // 3-D contacts: the bound follows the normal force, zero where separated.
            let normal = h.normal.as_ref().zip(params.normal.as_ref());
            let bound = |j: usize| match normal {
                Some((nh, np)) => np.mu[c] * nh.force[c * nt + j].max(0.0),
                None => params.mu_n[c],
            };
            let separated = |j: usize| {
                normal.is_some_and(|(nh, _)| {
                    nh.state[c * nt + j] == ewr_contact::unilateral::SampleState::Separated
                })
            };
            let bound_max = (0..nt).map(bound).fold(0.0, f64::max);
            let bound_s = |j: usize| match (normal, &normal_s) {
                (Some((_, np)), Some(ns)) => np.mu[c] * ns[c * nt + j].max(0.0),
                _ => params.mu_n[c],
            };
            let comp = |buf: &[f64], k: usize, j: usize| buf[(c * d + k) * nt + j];
            let norm =
                |buf: &[f64], j: usize| (0..d).map(|k| comp(buf, k, j).powi(2)).sum::<f64>().sqrt();
            let mut stuck = vec![false; nt];
            let mut violation = 0.0f64;
            let mut least_margin = f64::INFINITY;
            let mut dissipated = 0.0;
            let (mut wa, mut va, mut ra) = (0.0f64, 0.0f64, 0.0f64);
            let scale = if bound_max > 0.0 { bound_max } else { 1.0 };
            for (j, stuck_j) in stuck.iter_mut().enumerate() {
                let rn = norm(&h.force, j);
                let vn = norm(&h.velocity, j);
                wa = wa.max(norm(&h.displacement, j));
                va = va.max(vn);
                ra = ra.max(rn);
                let zn = (0..d)
                    .map(|k| (comp(&h.force, k, j) - rho * comp(&h.velocity, k, j)).powi(2))
                    .sum::<f64>()
                    .sqrt();
                *stuck_j = !separated(j) && zn <= bound(j);
                let b = if separated(j) { 0.0 } else { bound(j) };
                least_margin = least_margin.min(if b > 0.0 { 1.0 - zn / b } else { -1.0 });
                // The excess over the bound, on the smoothed series (Gibbs overshoot is not).
                let excess = (norm(&force_s, j) - bound_s(j)).max(0.0);
                violation = violation.max(excess / scale);
                dissipated -= (0..d)
                    .map(|k| comp(&h.force, k, j) * comp(&h.velocity, k, j))
                    .sum::<f64>()
                    * dt;
            }
            // Sliding, the force must oppose the velocity: its components along the velocity
            // and across it are violations (a force below the bound while sliding is not
            // judged: every truncated series rounds the reversals). The direction is judged on
            // the samples (smoothing force and velocity apart would turn the one against the
            // other), where the speed exceeds a fraction of the period's largest (the direction
            // of a nearly zero velocity is not defined), and at least `T / (2 h_max)` (the
            // shortest feature the series resolves) from the nearest stick or separation
            // sample: the series rings there.
            let guard = nt.div_ceil(2 * h_max.max(1));
            let open: Vec<bool> = (0..nt).map(separated).collect();
            let stops: Vec<bool> = stuck.iter().zip(&open).map(|(&s, &o)| s || o).collect();
            let near_stop = any_within(&stops, guard);
            // A contact stuck all period moves at rounding noise only, whose direction means
            // nothing: the speed must be visible on the law's own scale (rho v against the
            // bound) for the direction to be judged. `va` is the period's largest speed.
            let still = rho * va <= 1e-9 * bound_max.max(f64::MIN_POSITIVE);
            if !still {
                for (j, &stuck_j) in stuck.iter().enumerate() {
                    let vn = norm(&h.velocity, j);
                    if stuck_j || vn == 0.0 || vn <= SLIDING_SPEED_FRACTION * va || near_stop[j] {
                        continue;
                    }
                    let along: f64 = (0..d)
                        .map(|k| comp(&h.force, k, j) * comp(&h.velocity, k, j) / vn)
                        .sum();
                    let across = (0..d)
                        .map(|k| {
                            (comp(&h.force, k, j) - along * comp(&h.velocity, k, j) / vn).powi(2)
                        })
                        .sum::<f64>();
                    let off = (along.max(0.0).powi(2) + across).sqrt();
                    violation = violation.max(off / scale);
                }
            }
            ContactSummary {
                separation_intervals: intervals(&open, dt),
                normal_force_range: normal.map(|(nh, _)| {
                    let f = &nh.force[c * nt..(c + 1) * nt];
                    [
                        f.iter().copied().fold(f64::INFINITY, f64::min),
                        f.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    ]
                }),
                stick_intervals: join_short_gaps(intervals(&stuck, dt), min_gap, period),
                max_coulomb_violation: violation,
                dissipated_energy: dissipated,
                displacement_amplitude: wa,
                velocity_amplitude: va,
                force_amplitude: ra,
                least_stick_margin: if least_margin.is_finite() {
                    least_margin
                } else {
                    -1.0
                },
            }
        })
        .collect()
}

/// `signals` (`nt` samples each, one period of a series with harmonics up to `h_max`) with
/// each harmonic `h` scaled by Lanczos' sigma factor `sinc(h / (h_max + 1))`: the partial sum
/// averaged over the shortest period it resolves, which takes the Gibbs overshoot at a kink of
/// the force from about 9 % of the jump to about 1 %, and keeps a force that stays above its
/// bound over a stretch of the period above it. `None` where the samples cannot carry the
/// harmonics (`nt <= 2 h_max`).
pub fn sigma_smoothed(signals: &[f64], nt: usize, h_max: usize) -> Option<Vec<f64>> {
    if nt == 0 || nt <= 2 * h_max || !signals.len().is_multiple_of(nt) {
        return None;
    }
    let set = ewr_hb::HarmonicSet::all(h_max).ok()?;
    let mut sampler = ewr_hb::FourierSampler::new(set.clone(), nt).ok()?;
    let nco = set.n_coeffs();
    let mut coeffs = vec![0.0; signals.len() / nt * nco];
    sampler.project_many(signals, &mut coeffs).ok()?;
    for &h in set.harmonics() {
        if h == 0 {
            continue;
        }
        let x = std::f64::consts::PI * h as f64 / (h_max + 1) as f64;
        let sigma = x.sin() / x;
        let p = set.coeff_index(h)?;
        for s in coeffs.chunks_mut(nco) {
            s[p] *= sigma;
            s[p + 1] *= sigma;
        }
    }
    let mut out = vec![0.0; signals.len()];
    sampler.synthesize_many(&coeffs, &mut out).ok()?;
    Some(out)
}

/// For each sample `j` of a periodic sequence, whether any of `flags[j - guard ..= j + guard]`
/// (indices modulo its length) is set. Linear in the length through a prefix count: the guard
/// is `N_t / (2 h_max)`, so a window scan per sample cost `N_t^2 / h_max`, which at odd:1 on
/// 4096 samples was a second per point.
fn any_within(flags: &[bool], guard: usize) -> Vec<bool> {
    let n = flags.len();
    if 2 * guard + 1 >= n {
        return vec![flags.contains(&true); n];
    }
    let mut prefix = vec![0usize; n + 1];
    for (i, &f) in flags.iter().enumerate() {
        prefix[i + 1] = prefix[i] + usize::from(f);
    }
    // Set flags before position `x` of the sequence repeated on both sides (x may be < 0).
    let before = |x: isize| {
        let (q, r) = (x.div_euclid(n as isize), x.rem_euclid(n as isize) as usize);
        q * prefix[n] as isize + prefix[r] as isize
    };
    let g = guard as isize;
    (0..n as isize)
        .map(|j| before(j + g + 1) > before(j - g))
        .collect()
}

/// Joins consecutive intervals (sorted, possibly one wrapping past `period`) whose gap is
/// shorter than `min_gap`.
fn join_short_gaps(iv: Vec<[f64; 2]>, min_gap: f64, period: f64) -> Vec<[f64; 2]> {
    let mut out: Vec<[f64; 2]> = Vec::with_capacity(iv.len());
    for i in iv {
        match out.last_mut() {
            Some(last) if i[0] - last[1] < min_gap => last[1] = last[1].max(i[1]),
            _ => out.push(i),
        }
    }
    // The last interval may reach (or wrap to) the first one across the period's end.
    if out.len() > 1 {
        let first = out[0];
        let last = out[out.len() - 1];
        if first[0] + period - last[1] < min_gap {
            out.pop();
            out[0] = [last[0], first[1] + period];
        }
    }
    out.sort_by(|a, b| a[0].total_cmp(&b[0]));
    out
}

/// Runs of `true` as time intervals, joining a run that wraps around the end of the period.
///
/// A run of samples `j0 ..= j1` covers `[j0 dt, (j1 + 1) dt]`: each sample stands for the
/// step that starts at it.
fn intervals(flags: &[bool], dt: f64) -> Vec<[f64; 2]> {
    let n = flags.len();
    if n == 0 || !flags.contains(&true) {
        return Vec::new();
    }
    if flags.iter().all(|&f| f) {
        return vec![[0.0, n as f64 * dt]];
    }
    // Start scanning just after a `false`, so that no run is split by the period's end.
    let first_false = flags.iter().position(|&f| !f).expect("not all true");
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for i in 1..=n {
        let j = first_false + i;
        let f = flags[j % n];
        match (f, start) {
            (true, None) => start = Some(j),
            (false, Some(s)) => {
                let s0 = s % n;
                let len = j - s;
                out.push([s0 as f64 * dt, (s0 + len) as f64 * dt]);
                start = None;
            }
            _ => {}
        }
    }
    out.sort_by(|a, b| a[0].total_cmp(&b[0]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_within_the_guard_is_found_across_the_period_end_as_by_a_scan() {
        let flags: Vec<bool> = (0..37).map(|i| i % 11 == 3 || i == 35).collect();
        for guard in 0..20 {
            let scan: Vec<bool> = (0..37)
                .map(|j| (0..=2 * guard).any(|o| flags[(j + 37 * 2 + o - guard) % 37]))
                .collect();
            assert_eq!(any_within(&flags, guard), scan, "guard {guard}");
        }
        assert_eq!(any_within(&[false; 8], 1), vec![false; 8]);
    }

    #[test]
    fn short_gaps_are_joined_also_across_the_period_end() {
        let iv = vec![[1.0, 2.0], [2.05, 3.0], [5.0, 9.98]];
        assert_eq!(
            join_short_gaps(iv, 0.1, 10.0),
            vec![[1.0, 3.0], [5.0, 9.98]]
        );
        let iv = vec![[0.0, 1.0], [5.0, 9.95]];
        assert_eq!(join_short_gaps(iv, 0.1, 10.0), vec![[5.0, 11.0]]);
        let iv = vec![[0.0, 1.0], [1.5, 2.0]];
        assert_eq!(join_short_gaps(iv.clone(), 0.1, 10.0), iv);
    }

    #[test]
    fn intervals_join_across_the_period_end() {
        let f = [true, true, false, false, true, false, true];
        let iv = intervals(&f, 1.0);
        assert_eq!(iv, vec![[4.0, 5.0], [6.0, 9.0]]);
        assert!(intervals(&[false; 4], 1.0).is_empty());
        assert_eq!(intervals(&[true; 3], 0.5), vec![[0.0, 1.5]]);
    }

    #[test]
    fn pure_slip_history_has_no_violation_and_dissipates_4_mu_n_amplitude() {
        // 1-D: v = -sin(tau) (w = cos), r = mu N sign(sin): slip everywhere but at two
        // instants; energy per cycle is 4 mu N X for displacement amplitude X = 1.
        let nt = 4096;
        let mu_n = 2.0;
        let tau = |j: usize| std::f64::consts::TAU * j as f64 / nt as f64;
        let w: Vec<f64> = (0..nt).map(|j| tau(j).cos()).collect();
        let v: Vec<f64> = (0..nt).map(|j| -tau(j).sin()).collect();
        let r: Vec<f64> = v.iter().map(|&v| -mu_n * v.signum()).collect();
        let h = ContactHistories {
            n_samples: nt,
            displacement: w,
            velocity: v,
            force: r,
            normal: None,
        };
        let p = ContactParams {
            dim: 1,
            mu_n: vec![mu_n],
            rho: vec![1.0],
            rho_auto: false,
            normal: None,
        };
        let s = &summarise(&h, &p, 1.0, 1)[0];
        assert!(s.max_coulomb_violation < 1e-12);
        assert!(
            (s.dissipated_energy - 4.0 * mu_n).abs() < 1e-3,
            "{}",
            s.dissipated_energy
        );
        // Sticking only where v = 0 exactly (j = 0 and nt/2, r there is mu N sign(0) = mu N).
        assert!(s.stick_intervals.len() <= 2);
        assert!((s.displacement_amplitude - 1.0).abs() < 1e-12);
    }

    /// The truncated series of a square wave of height 1 (a friction force in gross slip).
    fn square(nt: usize, h_max: usize, height: f64) -> Vec<f64> {
        (0..nt)
            .map(|j| {
                let t = std::f64::consts::TAU * j as f64 / nt as f64;
                (1..=h_max)
                    .step_by(2)
                    .map(|h| 4.0 / std::f64::consts::PI * (h as f64 * t).sin() / h as f64)
                    .sum::<f64>()
                    * height
            })
            .collect()
    }

    #[test]
    fn gibbs_overshoot_is_not_a_violation_and_a_force_above_the_bound_is() {
        let (nt, h_max) = (1024, 15);
        let p = ContactParams {
            dim: 1,
            mu_n: vec![1.0],
            rho: vec![1.0],
            rho_auto: false,
            normal: None,
        };
        // Gross slip: r = sign(sin), v = -sin scaled up so every sample slides; the truncated
        // square wave overshoots the bound by about 9 % at each switch.
        let raw = square(nt, h_max, 1.0);
        let over = raw.iter().fold(0.0f64, |a, r| a.max(r.abs())) - 1.0;
        assert!(over > 0.07, "raw overshoot {over}");
        let velocity: Vec<f64> = (0..nt)
            .map(|j| std::f64::consts::TAU * j as f64 / nt as f64)
            .map(|t| 100.0 * t.sin())
            .collect();
        let summary = |force: Vec<f64>| {
            let h = ContactHistories {
                n_samples: nt,
                displacement: vec![0.0; nt],
                velocity: velocity.clone(),
                force,
                normal: None,
            };
            summarise(&h, &p, 1.0, h_max)[0].max_coulomb_violation
        };
        // The force opposes the velocity: r = -sign(v) = -sign(sin).
        let gibbs = summary(raw.iter().map(|r| -r).collect());
        assert!(gibbs < 0.03, "Gibbs overshoot counted: {gibbs}");
        // The same force 1.3 times too large violates the law by about 0.3.
        let real = summary(square(nt, h_max, 1.3).iter().map(|r| -r).collect());
        println!("raw overshoot {over:.4}, smoothed {gibbs:.4}, 1.3 x the bound {real:.4}");
        assert!(
            (real - 0.3).abs() < 0.05,
            "a real violation measured as {real}"
        );
    }

    #[test]
    fn a_force_across_the_sliding_is_a_violation() {
        // 2-D: circular sliding, v = (-sin, cos); the force opposes it, then is turned 90 deg.
        let nt = 256;
        let tau = |j: usize| std::f64::consts::TAU * j as f64 / nt as f64;
        let mut velocity = vec![0.0; 2 * nt];
        for j in 0..nt {
            velocity[j] = -tau(j).sin();
            velocity[nt + j] = tau(j).cos();
        }
        let p = ContactParams {
            dim: 2,
            mu_n: vec![1.0],
            rho: vec![1.0],
            rho_auto: false,
            normal: None,
        };
        let violation = |turn: f64| {
            let mut force = vec![0.0; 2 * nt];
            for j in 0..nt {
                let (c, s) = (turn.cos(), turn.sin());
                let (vx, vy) = (velocity[j], velocity[nt + j]);
                force[j] = -(c * vx - s * vy);
                force[nt + j] = -(s * vx + c * vy);
            }
            let h = ContactHistories {
                n_samples: nt,
                displacement: vec![0.0; 2 * nt],
                velocity: velocity.clone(),
                force,
                normal: None,
            };
            summarise(&h, &p, 1.0, 1)[0].max_coulomb_violation
        };
        assert!(violation(0.0) < 1e-9, "{}", violation(0.0));
        let sideways = violation(std::f64::consts::FRAC_PI_2);
        assert!((sideways - 1.0).abs() < 1e-9, "{sideways}");
    }

    #[test]
    fn force_above_the_bound_is_a_violation() {
        let h = ContactHistories {
            n_samples: 2,
            displacement: vec![0.0; 2],
            velocity: vec![0.0; 2],
            force: vec![1.5, 0.5],
            normal: None,
        };
        let p = ContactParams {
            dim: 1,
            mu_n: vec![1.0],
            rho: vec![1.0],
            rho_auto: false,
            normal: None,
        };
        let s = &summarise(&h, &p, 1.0, 1)[0];
        assert!((s.max_coulomb_violation - 0.5).abs() < 1e-15);
    }
}
