//! The truncation error of a periodic solution: how far its amplitudes are from those of the
//! same problem on a richer harmonic set. The solution is solved again on the enriched set
//! `2H + 1` (same parity rule), warm-started from its own coefficients, and the error is the
//! change of the amplitudes, with the tail beyond `2H + 1` from the rate seen against the set
//! below, and a floor from that set where `H` and `2H + 1` agree by chance ([`with_tail`]).
//! Chosen by measurement over the alternatives (docs/accuracy.md): one Newton step on the
//! enriched set, or the tail of the force spectrum, miss the change of the retained harmonics
//! when stick and slip move, by orders of magnitude at some points.

use crate::periodic::{PointSettings, PointSolution, SolveError};
use crate::point::solve_point;
use ewr_contact::ContactParams;
use ewr_hb::receptance::Receptance;
use ewr_hb::{HarmonicKind, HarmonicSet, default_samples};

/// Relative truncation error above which front ends warn and figures mark the point: 1 % of
/// the amplitude (the default tolerance of `--harmonics auto`).
pub const WARN_ABOVE: f64 = 0.01;

/// How an [`Estimate`] was obtained (docs/accuracy.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EstimateMethod {
    /// The change on the richer set ([`truncation_error`], [`compare`]).
    Richer,
    /// The change on the richer set times `1 / (1 - r)`, the tail beyond it from the rate
    /// `r` seen against the set below, and at least a seventh of the change from that set
    /// ([`with_tail`]; every estimate on `2H + 1` where a set below converges).
    RicherWithTail,
    /// [`from_below`]: the conservative change from the two sets below (`auto`'s checks from
    /// `h = 31`).
    FromBelow,
}

impl EstimateMethod {
    /// Its name in result files, JSON and Python: `richer`, `richer-with-tail`, `from-below`.
    pub fn name(self) -> &'static str {
        match self {
            EstimateMethod::Richer => "richer",
            EstimateMethod::RicherWithTail => "richer-with-tail",
            EstimateMethod::FromBelow => "from-below",
        }
    }

    /// Its code in the integer columns of FRC result files: 0 `richer`, 1 `richer-with-tail`,
    /// 2 `from-below` (-1 there where a point has no estimate).
    pub fn code(self) -> i64 {
        match self {
            EstimateMethod::Richer => 0,
            EstimateMethod::RicherWithTail => 1,
            EstimateMethod::FromBelow => 2,
        }
    }
}

/// The estimated truncation error of a periodic solution's amplitudes.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// How it was obtained.
    pub method: EstimateMethod,
    /// The harmonic set the solution was compared with: the enriched set `2H + 1` (`4H + 3`
    /// where a first set changes more there), or the next coarser set for `auto`'s checks from
    /// below ([`from_below`]).
    pub set: HarmonicSet,
    /// `|A' - A|` of the monitored amplitude `max_t ||u(t)||` ([`crate::DofResponse::norm_peak`]).
    pub amplitude: f64,
    /// `|A' - A| / A'` (0 when both are 0).
    pub relative: f64,
    /// `|peak'_i - peak_i|` per monitored DOF.
    pub dof_peaks: Vec<f64>,
    /// Largest change of a contact force coefficient (friction and, for 3-D contacts, normal),
    /// relative to the largest coefficient.
    pub force: f64,
    /// Whether the enriched solution converged (otherwise the estimate is only indicative).
    pub converged: bool,
    /// The amplitude's error ratio per doubling of the set, where two successive changes were
    /// measured (the set below, `sol`, `2H + 1`; `sol`, `2H + 1`, `4H + 3`; or, from below,
    /// the two sets below and `sol`): what [`suggested`] predicts the richer sets' errors
    /// with. `None` for a single change.
    pub rate: Option<f64>,
}

/// The richer set a solution on `set` is compared with: odd or all harmonics up to
/// `2 h_max + 1`, keeping every harmonic of a list.
pub fn enriched(set: &HarmonicSet) -> Result<HarmonicSet, SolveError> {
    let h = (2 * set.h_max() + 1).min(ewr_hb::MAX_HARMONIC);
    let richer = match set.kind() {
        HarmonicKind::Odd => HarmonicSet::odd(h | 1)?,
        HarmonicKind::All => HarmonicSet::all(h)?,
        HarmonicKind::List => {
            // A list of odd harmonics stays odd; one with even or static terms takes them all.
            let mut hs: Vec<usize> = if set.all_odd() {
                (1..=h).step_by(2).collect()
            } else {
                (usize::from(!set.contains_zero())..=h).collect()
            };
            hs.extend(set.harmonics());
            HarmonicSet::list(&hs)?
        }
    };
    Ok(richer)
}

/// The slowest error ratio per doubling a prediction of [`suggested`] assumes: `H^-3`, the
/// fastest convergence dry friction's responses are taken to have ([`FLOOR_DIVISOR`]), so that
/// a ratio that fell by chance does not predict a set too small.
pub const PREDICTED_RATE_MIN: f64 = 1.0 / 8.0;

/// Most doublings of the set [`suggested`] looks ahead (16 times the harmonics).
const PREDICTED_DOUBLINGS: usize = 4;

/// The set a warning names for a solution on `set` whose estimate `e` is above [`WARN_ABOVE`]:
/// where `e` measured a convergence rate `r` below 1, the first set of the doubling sequence
/// whose predicted error `e r^k` (`r` at least [`PREDICTED_RATE_MIN`]) is within it, if one is
/// within four doublings and `auto`'s largest harmonic; never below the set `e` compared with
/// (`2H + 1`, or `4H + 3` where a first set changed more there), which is named where no
/// prediction reaches the tolerance (slow convergence: `--harmonics auto` then decides), else
/// `2H + 1` (an estimate from below compares with a coarser set). docs/accuracy.md, "The set
/// a warning names".
pub fn suggested(set: &HarmonicSet, e: &Estimate) -> HarmonicSet {
    let known = if e.set.h_max() > set.h_max() {
        e.set.clone()
    } else {
        enriched(set).unwrap_or_else(|_| e.set.clone())
    };
    let Some(rate) = e.rate.filter(|r| r.is_finite() && *r < 1.0) else {
        return known;
    };
    let rate = rate.max(PREDICTED_RATE_MIN);
    let (mut next, mut error) = (set.clone(), e.relative);
    for _ in 0..PREDICTED_DOUBLINGS {
        match enriched(&next) {
            Ok(s) if s.h_max() > next.h_max() && s.h_max() <= crate::auto::MAX_HARMONIC => next = s,
            _ => break,
        }
        error *= rate;
        if error <= WARN_ABOVE {
            break;
        }
    }
    if error <= WARN_ABOVE && next.h_max() > known.h_max() {
        next
    } else {
        known
    }
}

/// The settings of the enriched solve of a solution on `set`: the richer set, enough samples
/// for it (at least the solution's own), no ramp (it starts from the solution), and no
/// automatic set (an `auto` point's estimate is the change on its own `2H + 1`; before, its
/// solve was automatic too and checked `2H + 1` on `4H + 3`, the cost of most of a curve's
/// peak estimates).
pub fn enriched_settings(
    settings: &PointSettings,
    set: &HarmonicSet,
) -> Result<PointSettings, SolveError> {
    let set = enriched(set)?;
    let n_samples = default_samples(&set).max(settings.n_samples);
    Ok(PointSettings {
        n_samples,
        set,
        ramp: false,
        auto: None,
        ..settings.clone()
    })
}

/// The truncation error of `sol` (computed with `settings`): `sol` solved again on the
/// enriched set from its own coefficients, and the change of its amplitudes and forces, with
/// the tail beyond the enriched set and the floor from the set below ([`with_tail`]; that set
/// solved from `sol` too, an eighth of the re-solve or less). A set with none below that keeps
/// the forcing harmonics (`h = 1`, a list) is compared with `4H + 3` as well, and the larger
/// change counts: the first sets can agree by chance (docs/accuracy.md, "The estimate").
/// Where the set below or `4H + 3` cannot be had (memory, a failed solve), the plain change.
/// These solves stop at [`crate::auto::CHECK_TOLERANCE`] or [`crate::auto::CHECK_TOLERANCE_3D`]
/// (or the run's tolerance where it is looser): they only judge `sol`.
pub fn truncation_error(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
) -> Result<Estimate, SolveError> {
    // Every solve here only judges `sol`, at the warning's 1 %: to `auto`'s checks' tolerance.
    let settings = &crate::auto::judging(settings, params, WARN_ABOVE);
    let finer = solve_point(
        rec,
        params,
        sol.omega,
        &enriched_settings(settings, &sol.set)?,
        Some((&sol.set, sol.friction.as_slice())),
    )?;
    let plain = compare(sol, &finer);
    if !finer.status.converged() {
        return Ok(plain);
    }
    let forced: Vec<usize> = rec.forced_harmonics().collect();
    if let Some(l1) = serving_below(&sol.set, &forced) {
        let settings = PointSettings {
            n_samples: default_samples(&l1).max(settings.n_samples),
            set: l1,
            ramp: false,
            auto: None,
            ..settings.clone()
        };
        return Ok(
            match solve_point(
                rec,
                params,
                sol.omega,
                &settings,
                Some((&sol.set, sol.friction.as_slice())),
            ) {
                Ok(b) => with_tail(sol, &finer, &b),
                Err(_) => plain,
            },
        );
    }
    if solves_above(&sol.set, &finer.set)
        && let Ok(richer) = enriched_settings(settings, &finer.set)
        && crate::setup::fits_in_memory(params, &richer)
        && let Ok(f2) = solve_point(
            rec,
            params,
            sol.omega,
            &richer,
            Some((&finer.set, finer.friction.as_slice())),
        )
        && f2.status.converged()
    {
        return Ok(first_set(plain, compare(sol, &f2), &finer, &f2));
    }
    Ok(plain)
}

/// Every harmonic a truncation estimate of a solution on `set` ([`truncation_error`]) may
/// solve on, for a model forced on `forced`: the richer set's, and where no set below can
/// serve (none, or one without a forced harmonic) that of the set above it too (the first
/// sets' `4H + 3`). What a cyclic sector extracts its diameters for before estimates run side
/// by side.
pub(crate) fn estimate_harmonics(set: &HarmonicSet, forced: &[usize]) -> Vec<usize> {
    let mut hs = Vec::new();
    let Ok(richer) = enriched(set) else {
        return hs;
    };
    hs.extend(richer.harmonics());
    if serving_below(set, forced).is_none()
        && solves_above(set, &richer)
        && let Ok(above) = enriched(&richer)
    {
        hs.extend(above.harmonics());
    }
    hs
}

/// The set below `set` that an estimate solves on: none where it lacks a forced harmonic
/// (it would solve another problem).
fn serving_below(set: &HarmonicSet, forced: &[usize]) -> Option<HarmonicSet> {
    below(set).filter(|l| forced.iter().all(|&h| l.contains(h)))
}

/// Whether an estimate of a first set (no set below serves) solves on `4H + 3` too, the set
/// above `set`'s richer one `richer`: only below `h = CHECK_FROM_BELOW`.
fn solves_above(set: &HarmonicSet, richer: &HarmonicSet) -> bool {
    set.h_max() < crate::auto::CHECK_FROM_BELOW && richer.h_max() < crate::auto::MAX_HARMONIC
}

/// The set below `set` in the doubling sequence (`odd:7` below `odd:15`, `odd:29` below
/// `odd:59`), if it has a harmonic; none below `h = 1` or for a list.
fn below(set: &HarmonicSet) -> Option<HarmonicSet> {
    let smallest = match set.kind() {
        HarmonicKind::Odd => HarmonicSet::odd(1).ok()?,
        HarmonicKind::All => HarmonicSet::all(1).ok()?,
        HarmonicKind::List => return None,
    };
    crate::auto::lower(set, &smallest)
}

/// Largest error ratio per doubling of the set that [`with_tail`] credits: the tail beyond
/// `2H + 1` at most doubles the re-solve's change.
pub const TAIL_RATIO_MAX: f64 = 0.5;

/// The floor's divisor in [`with_tail`]: `2^p - 1` for the fastest convergence `H^-p` dry
/// friction's response is taken to have, `p = 3` (a friction force with kinks has harmonics
/// falling like `h^-2`, the displacement's like `h^-4`, the sum of their tail like `H^-3`).
pub const FLOOR_DIVISOR: f64 = 7.0;

/// The estimate of `sol` from the re-solve `finer` on `2H + 1` and the same problem on the set
/// below, `lower` (about half the harmonics). With `d_L` the change from `lower` to `sol` and
/// `d_H` the change from `sol` to `finer`, the error falls by `r = d_H / d_L` per doubling,
/// and the whole error of `sol` is about `d_H / (1 - r)` (`r` at most [`TAIL_RATIO_MAX`]):
/// without it the re-solve sees about half the error of a series converging like `1 / H`.
/// Where the error falls no faster than `H^-3`, the error of `sol` is at least `d_L / 7`
/// ([`FLOOR_DIVISOR`]): that floor catches `sol` and `finer` agreeing by chance while both
/// are off (non-monotone convergence: on the shipped models, of 208 cases with true errors
/// above 1e-3, the plain change underestimated 13 by more than three times, the tail alone 5,
/// both with it 1). Each measure
/// (amplitude, each DOF's peak, forces) takes its own rate and floor. Where `finer` or `lower`
/// did not converge, the plain change ([`compare`]).
pub fn with_tail(sol: &PointSolution, finer: &PointSolution, lower: &PointSolution) -> Estimate {
    let plain = compare(sol, finer);
    if !finer.status.converged() || !lower.status.converged() {
        return plain;
    }
    let from_lower = compare(lower, sol);
    let tail = |d_h: f64, d_l: f64| {
        let ratio = credited_rate(d_h, d_l);
        // `f64::max` would hide a NaN change (a force coefficient that is not finite).
        if d_h.is_nan() {
            d_h
        } else {
            (d_h / (1.0 - ratio)).max(d_l / FLOOR_DIVISOR)
        }
    };
    let amplitude = tail(plain.amplitude, from_lower.amplitude);
    Estimate {
        method: EstimateMethod::RicherWithTail,
        rate: ratio(plain.amplitude, from_lower.amplitude),
        relative: relative(amplitude, finer.dofs.norm_peak),
        dof_peaks: plain
            .dof_peaks
            .iter()
            .zip(&from_lower.dof_peaks)
            .map(|(&h, &l)| tail(h, l))
            .collect(),
        force: tail(plain.force, from_lower.force),
        amplitude,
        ..plain
    }
}

/// The estimate of a first set (no set below) from its changes on `2H + 1` (`plain`, against
/// `finer`) and on `4H + 3` (`further`, against `f2`): the larger change, and the tail beyond
/// `4H + 3` as [`with_tail`] credits it beyond `2H + 1`, at the rate of the two successive
/// changes `r = |A(4H + 3) - A(2H + 1)| / |A(2H + 1) - A(H)|` (at most [`TAIL_RATIO_MAX`]):
/// `|A(4H + 3) - A(2H + 1)| r / (1 - r)` more. Without it the first set's error was
/// underestimated where the series converges slowly: blade-damper-blade at the onset of slip
/// (odd:1, 1261 rad/s), 0.74 % against a true 1.21 % (docs/accuracy.md, "When a sweep checks
/// its set").
pub(crate) fn first_set(
    plain: Estimate,
    further: Estimate,
    finer: &PointSolution,
    f2: &PointSolution,
) -> Estimate {
    let last = compare(finer, f2);
    let rate = ratio(last.amplitude, plain.amplitude);
    let tail = |d_1: f64, d_2: f64, d_last: f64| {
        let r = credited_rate(d_last, d_1);
        // `f64::max` would hide a NaN change (a force coefficient that is not finite).
        if d_1.is_nan() || d_2.is_nan() {
            f64::NAN
        } else {
            d_1.max(d_2) + d_last * r / (1.0 - r)
        }
    };
    let amplitude = tail(plain.amplitude, further.amplitude, last.amplitude);
    let dof_peaks = plain
        .dof_peaks
        .iter()
        .zip(&further.dof_peaks)
        .zip(&last.dof_peaks)
        .map(|((&a, &b), &c)| tail(a, b, c))
        .collect();
    let force = tail(plain.force, further.force, last.force);
    let e = if further.amplitude > plain.amplitude {
        further
    } else {
        plain
    };
    Estimate {
        rate,
        amplitude,
        relative: relative(amplitude, f2.dofs.norm_peak),
        dof_peaks,
        force,
        ..e
    }
}

/// [`first_set`] where `4H + 3` was not solved again: the change on `2H + 1` (`plain`) times
/// `factor`, what [`first_set`] made of that change at a recent check of the same set
/// (`crate::auto`'s first-set memory: its estimate over its change on `2H + 1`, between 1 and
/// `1 / (1 - TAIL_RATIO_MAX)`), for the amplitude, the DOF peaks and the force alike.
pub(crate) fn first_set_at_factor(plain: Estimate, factor: f64) -> Estimate {
    let max = 1.0 / (1.0 - TAIL_RATIO_MAX);
    let f = if factor.is_nan() {
        max
    } else {
        factor.clamp(1.0, max)
    };
    Estimate {
        amplitude: plain.amplitude * f,
        relative: plain.relative * f,
        dof_peaks: plain.dof_peaks.iter().map(|d| d * f).collect(),
        force: plain.force * f,
        ..plain
    }
}

/// The rate per doubling a tail is credited at: `after / before`, at most
/// [`TAIL_RATIO_MAX`], 0 where `before` is not positive.
fn credited_rate(after: f64, before: f64) -> f64 {
    if before > 0.0 {
        (after / before).min(TAIL_RATIO_MAX)
    } else {
        0.0
    }
}

/// `after / before` where `before` is positive and both are finite.
fn ratio(after: f64, before: f64) -> Option<f64> {
    (before > 0.0 && after.is_finite() && before.is_finite()).then(|| after / before)
}

/// `change / |reference|`, 0 where both are 0.
fn relative(change: f64, reference: f64) -> f64 {
    if reference.abs() > 0.0 {
        change / reference.abs()
    } else if change == 0.0 {
        0.0
    } else {
        f64::INFINITY
    }
}

/// The estimate of `sol` from the same problem solved on the two sets below its own, `l1` (the
/// next coarser, about half the harmonics) and `l2` (about a quarter): the larger of half the
/// change from `l1` and a quarter of the change from `l2`, for the amplitudes and the forces.
///
/// Where the error falls like `H^-p` with `p >= 1` (dry friction's kinks give `p` about 1 to
/// 2), the error of `l1` is at least twice that of `sol`, so half the change from `l1` is at
/// least the change [`compare`] would see on `2H + 1` for `p = 1` and larger for faster
/// convergence: a conservative estimate that needs no solve on a richer set. The change from
/// `l2` guards against `l1` crossing `sol`'s answer by chance. Measured against the enriched
/// re-solve in docs/accuracy.md ("A check from below").
pub fn from_below(sol: &PointSolution, l1: &PointSolution, l2: &PointSolution) -> Estimate {
    let (e1, e2) = (compare(l1, sol), compare(l2, sol));
    // Both changes are relative to `sol`'s amplitude, so their relatives combine as they do.
    let amplitude = (0.5 * e1.amplitude).max(0.25 * e2.amplitude);
    let relative = (0.5 * e1.relative).max(0.25 * e2.relative);
    let dof_peaks = e1
        .dof_peaks
        .iter()
        .zip(&e2.dof_peaks)
        .map(|(d1, d2)| (0.5 * d1).max(0.25 * d2))
        .collect();
    Estimate {
        method: EstimateMethod::FromBelow,
        set: l1.set.clone(),
        amplitude,
        relative,
        dof_peaks,
        force: (0.5 * e1.force).max(0.25 * e2.force),
        converged: l1.status.converged() && l2.status.converged(),
        rate: ratio(e1.amplitude, (l1.dofs.norm_peak - l2.dofs.norm_peak).abs()),
    }
}

/// The estimate of `coarse` from the same problem solved on a richer set, `fine`.
pub fn compare(coarse: &PointSolution, fine: &PointSolution) -> Estimate {
    let (a, a1) = (coarse.dofs.norm_peak, fine.dofs.norm_peak);
    let amplitude = (a1 - a).abs();
    let relative = relative(amplitude, a1);
    let dof_peaks = coarse
        .dofs
        .peak
        .iter()
        .zip(&fine.dofs.peak)
        .map(|(p, q)| (q - p).abs())
        .collect();
    // Forces on the coarse set's coefficients against the fine solution restricted to them,
    // and every coefficient the coarse set lacks.
    let coarse_on_fine = fine
        .set
        .prolong(&coarse.friction, &coarse.set)
        .unwrap_or_else(|_| vec![f64::NAN; fine.friction.len()]);
    let scale = fine
        .friction
        .iter()
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    let force = coarse_on_fine
        .iter()
        .zip(&fine.friction)
        .map(|(c, f)| (f - c).abs())
        .fold(0.0f64, f64::max)
        / scale;
    Estimate {
        method: EstimateMethod::Richer,
        set: fine.set.clone(),
        amplitude,
        relative,
        dof_peaks,
        force,
        converged: fine.status.converged(),
        rate: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The richer set's harmonics always; the set above it too where no set below serves
    /// (none below `h = 1` or a list, or one without a forced harmonic).
    #[test]
    fn an_estimate_solves_on_the_richer_set_and_without_a_set_below_on_the_one_above() {
        let harmonics = |set: &str| {
            enriched(&set.parse().unwrap())
                .unwrap()
                .harmonics()
                .to_vec()
        };
        let sorted = |mut v: Vec<usize>| {
            v.sort_unstable();
            v.dedup();
            v
        };
        let union = |a: Vec<usize>, b: Vec<usize>| sorted([a, b].concat());
        let odd15: HarmonicSet = "odd:15".parse().unwrap();
        assert_eq!(
            sorted(estimate_harmonics(&odd15, &[1])),
            harmonics("odd:15")
        );
        // Forced on harmonic 9, which odd:7 below lacks.
        assert_eq!(
            sorted(estimate_harmonics(&odd15, &[9])),
            union(harmonics("odd:15"), harmonics("odd:31"))
        );
        let list: HarmonicSet = "1,3,7".parse().unwrap();
        assert_eq!(list.kind(), HarmonicKind::List);
        let richer = enriched(&list).unwrap();
        let above = enriched(&richer).unwrap();
        assert_eq!(
            sorted(estimate_harmonics(&list, &[1])),
            union(richer.harmonics().to_vec(), above.harmonics().to_vec())
        );
        let odd1: HarmonicSet = "odd:1".parse().unwrap();
        assert_eq!(
            sorted(estimate_harmonics(&odd1, &[1])),
            union(harmonics("odd:1"), harmonics("odd:3"))
        );
    }

    fn estimate(relative: f64, rate: Option<f64>, compared: &str) -> Estimate {
        Estimate {
            method: EstimateMethod::RicherWithTail,
            set: compared.parse().unwrap(),
            amplitude: relative,
            relative,
            dof_peaks: Vec::new(),
            force: 0.0,
            converged: true,
            rate,
        }
    }

    #[test]
    fn the_set_named_is_the_first_predicted_within_one_per_cent() {
        let odd3: HarmonicSet = "odd:3".parse().unwrap();
        let named = |e: &Estimate| suggested(&odd3, e).to_string();
        // 20 % falling by 0.3 a doubling: 6 %, 1.8 %, 0.54 % on odd:7, odd:15, odd:31.
        assert_eq!(named(&estimate(0.2, Some(0.3), "odd:7")), "odd:31");
        // A ratio that fell by chance predicts no faster than H^-3: 2.5 %, then 0.31 %.
        assert_eq!(named(&estimate(0.2, Some(1e-3), "odd:7")), "odd:15");
        // Never below the set compared with.
        assert_eq!(named(&estimate(0.011, Some(0.3), "odd:15")), "odd:15");
        // No rate, or no convergence: the set compared with, or 2H + 1 for one below.
        assert_eq!(named(&estimate(0.2, None, "odd:15")), "odd:15");
        assert_eq!(named(&estimate(0.2, Some(1.5), "odd:1")), "odd:7");
        // Where four doublings are not predicted to reach 1 %, the set compared with.
        assert_eq!(named(&estimate(0.9, Some(0.9), "odd:7")), "odd:7");
        // Nor beyond auto's largest set: odd:127 at 20 % falling by 1/8 would need odd:255 and
        // odd:511 (2.5 %, 0.31 %).
        let odd127: HarmonicSet = "odd:127".parse().unwrap();
        assert_eq!(
            suggested(&odd127, &estimate(0.2, Some(0.1), "odd:255")).to_string(),
            "odd:255"
        );
    }
}
