//! The resonance peak followed as a design parameter varies, and the value with the smallest
//! peak (the optimum damper), without sweeping full curves: `ewr peaks` and the `[optimize]`
//! mode of studies.
//!
//! Coarse sweeps at both ends of the range find every local maximum; each is then followed
//! from one value to the next by a few solves that bracket the new maximum and refine it
//! (`ewr_solve::peak_near`). Following every maximum, not only the highest, matters: as a
//! damper sticks more the highest peak moves from one resonance to another (the stuck
//! system's). The optimum is refined by golden section between the neighbours of the smallest
//! evaluated peak.

use crate::param::ParamKind;
use ewr_contact::ContactParams;
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_model::Model;
use ewr_solve::setup::{Opt, OptionError};
use ewr_solve::{
    Continuation, FrcPoint, FrcSettings, Peak, PointSettings, PointSolution, frc, peak_near,
    refine_peaks,
};

/// The model at a parameter value.
pub type ModelAt<'a> = dyn Fn(f64) -> Result<Model, String> + Sync + 'a;

/// How peaks are searched at every value.
#[derive(Clone, Debug)]
pub struct TrackSettings {
    /// Frequency band of the coarse sweeps at the ends of the range.
    pub omega_start: f64,
    /// See `omega_start`.
    pub omega_end: f64,
    /// Step of the coarse sweeps, and the first bracketing step when following a peak.
    pub step: f64,
    /// Adaptive steps for the coarse sweeps (`ewr_solve::step_control`).
    pub adaptive: Option<f64>,
    /// How each periodic solution is computed.
    pub point: PointSettings,
    /// Condensation backend.
    pub kind: ReceptanceKind,
    /// Whether a value changes the structure or its loads (the receptance is rebuilt); false
    /// for friction bounds and coefficients, which only the contact law sees.
    pub structural: bool,
    /// Whether each value's peak gets its Floquet multipliers (`ewr_solve::stability`): a
    /// peak past a fold, on a branch a sweep jumps off, is no physical maximum.
    pub stability: bool,
    /// With `stability` on a cyclic sector: against every inter-sector phase
    /// (`ewr_solve::stability_all_phases`), not only the travelling wave's.
    pub all_phases: bool,
}

/// Everything found at one parameter value: the tracked peaks (`None` where one vanished or
/// ran into another) and the highest of them, the response's maximum over frequency.
#[derive(Clone, Debug)]
pub struct Evaluated {
    /// The parameter value.
    pub value: f64,
    /// One entry per followed maximum.
    pub tracks: Vec<Option<Peak>>,
    /// The highest tracked peak (its solution's `stability` set when asked for and
    /// classified).
    pub peak: Peak,
    /// Why the peak's stability is not known, when it was asked for and could not be had.
    pub unclassified: Option<String>,
}

/// The peak locus over the parameter.
#[derive(Clone, Debug, Default)]
pub struct Locus {
    /// Every evaluated value (the grid, then the golden-section values), sorted by value.
    pub points: Vec<Evaluated>,
    /// The smallest peak: `(value, amplitude, omega)`.
    pub optimum: Option<(f64, f64, f64)>,
    /// Whether the optimum lies inside the range (refined by golden section), not at an end.
    pub interior: bool,
    /// The parameter values `(from, to)` around the optimum whose peaks are all within
    /// [`PLATEAU_TOL`] of it, where they span three grid values or more ([`plateau`]): the
    /// optimum is flat there, and any value between does as well (a damper stuck all period
    /// gives the same peak at every larger normal load).
    pub plateau: Option<(f64, f64)>,
    /// The coarse sweeps at the ends of the range (value, points).
    pub sweeps: Vec<(f64, Vec<FrcPoint>)>,
    /// Periodic solutions computed in all.
    pub solves: usize,
    /// Why the locus stopped early (the points up to there are kept).
    pub failure: Option<String>,
    /// Whether it stopped because the caller asked it to ([`track`]'s `stop`).
    pub interrupted: bool,
    /// What the user should hear about the condensations it built
    /// ([`ewr_solve::setup::receptance_warnings`]): the first that had any, and how many
    /// values more gave other ones.
    pub warnings: Vec<String>,
}

/// Finds peaks at parameter values, reusing the condensation where a value does not change
/// the structure.
struct Tracker<'a> {
    model_at: &'a ModelAt<'a>,
    s: &'a TrackSettings,
    rec: Option<Receptance>,
    solves: usize,
    stop: &'a dyn Fn() -> bool,
    /// [`Locus::warnings`]: those of the first condensation that had any.
    warnings: Vec<String>,
    /// Later condensations whose warnings differ from those.
    more_warnings: usize,
}

impl Tracker<'_> {
    fn prepare(&mut self, v: f64) -> Result<(Receptance, ContactParams), String> {
        let model = (self.model_at)(v)?;
        let params = ContactParams::of(&model.contacts);
        let rec = match self.rec.take() {
            Some(r) if !self.s.structural => r,
            last => {
                // A value that moves the loads alone keeps the modes (`with_forcing` refuses
                // another structure: a mass, an engine order).
                let derived = last
                    .filter(Receptance::keeps_modes_for_other_forcing)
                    .map(|r| r.with_forcing(&model));
                let rec = match derived {
                    Some(Ok(r)) => r,
                    _ => Receptance::new(&model, self.s.kind)
                        .map_err(|e| format!("cannot condense the model: {e}"))?,
                };
                // One of each: a parameter that changes the structure (a mass) would repeat
                // it at every value, with its numbers moved; the others are counted.
                let top = self.s.omega_start.abs().max(self.s.omega_end.abs());
                let new = ewr_solve::setup::receptance_warnings(&rec, &self.s.point, top);
                if self.warnings.is_empty() {
                    self.warnings = new;
                } else if !new.is_empty() && new != self.warnings {
                    self.more_warnings += 1;
                }
                rec
            }
        };
        Ok((rec, params))
    }

    /// The refined local maxima of a coarse sweep at `v`, and the sweep.
    fn sweep(&mut self, v: f64) -> Result<(Vec<Peak>, Vec<FrcPoint>), String> {
        let (rec, params) = self.prepare(v)?;
        let s = self.s;
        let settings = FrcSettings {
            omega_start: s.omega_start,
            omega_end: s.omega_end,
            step: s.step,
            min_step: s.step / 64.0,
            max_step: s.step * 8.0,
            method: Continuation::Sequential,
            point: s.point.clone(),
            max_points: ewr_solve::MAX_POINTS,
            adaptive: s.adaptive,
            keep_histories: false,
        };
        let stop = self.stop;
        let pts = frc(&rec, &params, &settings, &mut |_| !stop()).map_err(|e| e.to_string());
        let peaks = pts.and_then(|pts| {
            self.solves += pts.len();
            let peaks = refine_peaks(&rec, &params, &s.point, &pts).map_err(|e| e.to_string())?;
            Ok((peaks, pts))
        });
        self.rec = Some(rec);
        let (peaks, pts) = peaks?;
        self.solves += peaks.iter().map(|p| p.evaluations).sum::<usize>();
        Ok((peaks, pts))
    }

    /// Every tracked peak at `v`, each started from its own guess (a solution near it at a
    /// neighbouring value).
    fn at(&mut self, v: f64, guesses: &[Option<PointSolution>]) -> Result<Evaluated, String> {
        let (rec, params) = self.prepare(v)?;
        let mut tracks: Vec<Option<Peak>> = Vec::new();
        let mut left_band = None;
        for g in guesses {
            let found = g
                .as_ref()
                .and_then(|g| peak_near(&rec, &params, &self.s.point, g, self.s.step).ok());
            if let Some(p) = &found {
                self.solves += p.evaluations;
            }
            // A peak that wandered out of the band is not the band's peak: it is lost there.
            let (lo, hi) = (
                self.s.omega_start.min(self.s.omega_end),
                self.s.omega_start.max(self.s.omega_end),
            );
            let inside = |p: &Peak| p.omega >= lo && p.omega <= hi;
            if let Some(p) = found.as_ref().filter(|p| !inside(p)) {
                left_band = Some(p.omega);
            }
            let found = found.filter(inside);
            let duplicate = found.as_ref().is_some_and(|p| {
                tracks
                    .iter()
                    .flatten()
                    .any(|q| (q.omega - p.omega).abs() <= 1e-4 * p.omega)
            });
            tracks.push(if duplicate { None } else { found });
        }
        let peak = tracks
            .iter()
            .flatten()
            .max_by(|x, y| x.amplitude.total_cmp(&y.amplitude))
            .cloned();
        let Some(peak) = peak else {
            self.rec = Some(rec);
            return Err(match left_band {
                Some(w) => format!(
                    "the peak left the frequency band {}..{} (it is at w = {w}): widen the band",
                    self.s.omega_start, self.s.omega_end
                ),
                None => "every tracked peak was lost".to_string(),
            });
        };
        let mut peak = peak;
        let unclassified = self
            .s
            .stability
            .then(|| {
                classify(
                    &rec,
                    &params,
                    &self.s.point,
                    self.s.all_phases,
                    &mut peak.solution,
                )
                .err()
            })
            .flatten();
        self.rec = Some(rec);
        Ok(Evaluated {
            value: v,
            tracks,
            peak,
            unclassified,
        })
    }
}

/// Floquet multipliers of a peak's solution (`sol.stability`), or why they cannot be had.
fn classify(
    rec: &Receptance,
    params: &ContactParams,
    point: &PointSettings,
    all_phases: bool,
    sol: &mut PointSolution,
) -> Result<(), String> {
    if !sol.status.converged() {
        return Err("not converged".into());
    }
    let dynamics = rec.dynamics().map_err(|e| e.to_string())?;
    let st = if all_phases {
        ewr_solve::stability_all_phases(rec, &dynamics, params, point, sol)
    } else {
        ewr_solve::stability(rec, &dynamics, params, point, sol)
    };
    let st = st.map_err(|e| e.to_string())?;
    sol.stability = Some(st);
    Ok(())
}

/// Distinct peaks: solutions closer in frequency than 1e-4 relative are one.
fn dedupe(mut sols: Vec<PointSolution>) -> Vec<PointSolution> {
    sols.sort_by(|a, b| a.omega.total_cmp(&b.omega));
    let mut out: Vec<PointSolution> = Vec::new();
    for s in sols {
        if !out
            .iter()
            .any(|q| (q.omega - s.omega).abs() <= 1e-4 * s.omega)
        {
            out.push(s);
        }
    }
    out
}

/// Starting guesses at `v`: the peaks tracked at the nearest evaluated values below and above
/// it, without repeats. Both sides matter: a peak that vanished on one side of `v` may still
/// exist at `v` (golden section closes in on the value where the highest peak changes
/// resonance, from the side that has lost the other one).
fn neighbour_guesses(points: &[Evaluated], v: f64) -> Vec<Option<PointSolution>> {
    let below = points
        .iter()
        .filter(|e| e.value <= v)
        .max_by(|x, y| x.value.total_cmp(&y.value));
    let above = points
        .iter()
        .filter(|e| e.value > v)
        .min_by(|x, y| x.value.total_cmp(&y.value));
    let sols = [below, above]
        .into_iter()
        .flatten()
        .flat_map(|e| e.tracks.iter().flatten().map(|p| p.solution.clone()))
        .collect();
    dedupe(sols).into_iter().map(Some).collect()
}

fn smallest(points: &[Evaluated]) -> Option<&Evaluated> {
    points
        .iter()
        .min_by(|x, y| x.peak.amplitude.total_cmp(&y.peak.amplitude))
}

/// How close to the smallest peak a peak must be to count as part of a flat optimum: 1 % of
/// it, or a millionth of the locus's largest peak, whichever is more (the second for a
/// response stopped by the contacts, whose peaks are round-off: 1e-15 against 1e-13).
pub const PLATEAU_TOL: f64 = 0.01;

/// The values `(from, to)` of the contiguous run of `points` (sorted by value) around the
/// smallest peak whose peaks are within [`PLATEAU_TOL`] of it, where the run holds at least
/// three of the grid's `values`: the peak is flat over two grid steps or more. Golden section's
/// values, packed around the optimum, do not count, so a sharp minimum is not a plateau.
pub fn plateau(points: &[Evaluated], values: &[f64]) -> Option<(f64, f64)> {
    flat_run(points, values).map(|(lo, hi, _)| (points[lo].value, points[hi].value))
}

/// [`plateau`]'s run as indices into `points`, with the largest peak that belongs to it.
fn flat_run(points: &[Evaluated], values: &[f64]) -> Option<(usize, usize, f64)> {
    let k = points
        .iter()
        .enumerate()
        .min_by(|x, y| x.1.peak.amplitude.total_cmp(&y.1.peak.amplitude))?
        .0;
    let largest = points
        .iter()
        .map(|e| e.peak.amplitude)
        .fold(0.0_f64, f64::max);
    let best = points[k].peak.amplitude;
    let bound = best + (PLATEAU_TOL * best).max(1e-6 * largest);
    let flat = |e: &Evaluated| e.peak.amplitude <= bound;
    let lo = (0..k)
        .rev()
        .take_while(|&i| flat(&points[i]))
        .last()
        .unwrap_or(k);
    let hi = (k + 1..points.len())
        .take_while(|&i| flat(&points[i]))
        .last()
        .unwrap_or(k);
    let on_grid = points[lo..=hi]
        .iter()
        .filter(|e| values.contains(&e.value))
        .count();
    (on_grid >= 3).then_some((lo, hi, bound))
}

/// Locates by bisection, to [`OPTIMUM_RTOL`] of the grid step, the ends of a flat optimum
/// (`points` sorted by value, the run `lo..=hi` of [`flat_run`] with its `bound`) that lie
/// inside the range: where a damper starts to stick all period, say. Every evaluation is added
/// to `points` (unsorted). A value whose peak cannot be had (near the edge the slipping peak
/// can leave the band) ends that edge's bisection where it is: the edge stays bracketed by the
/// values evaluated, and only an interruption is an error.
fn plateau_edges(
    t: &mut Tracker<'_>,
    points: &mut Vec<Evaluated>,
    (lo, hi, bound): (usize, usize, f64),
) -> Result<(), String> {
    let mut brackets = Vec::new();
    if lo > 0 {
        brackets.push((points[lo - 1].value, points[lo].value));
    }
    if hi + 1 < points.len() {
        brackets.push((points[hi + 1].value, points[hi].value));
    }
    for (mut off, mut on) in brackets {
        let tol = OPTIMUM_RTOL * (on - off).abs();
        while (on - off).abs() > tol {
            if (t.stop)() {
                return Err("interrupted".into());
            }
            let v = 0.5 * (off + on);
            let guesses = neighbour_guesses(points, v);
            let Ok(e) = t.at(v, &guesses) else {
                break;
            };
            if e.peak.amplitude <= bound {
                on = v;
            } else {
                off = v;
            }
            points.push(e);
        }
    }
    Ok(())
}

/// Relative width (of the bracket it starts from) to which golden section refines the optimum.
pub const OPTIMUM_RTOL: f64 = 1e-4;

/// Golden-section minimisation of the peak amplitude over the parameter between the
/// neighbours of `points[k]`; every evaluation is added to `points`.
fn golden(t: &mut Tracker<'_>, points: &mut Vec<Evaluated>, k: usize) -> Result<(), String> {
    let g = 0.618_033_988_749_894_9;
    let (mut lo, mut hi) = (points[k - 1].value, points[k + 1].value);
    if lo > hi {
        std::mem::swap(&mut lo, &mut hi);
    }
    let tol = OPTIMUM_RTOL * (hi - lo).abs().max(f64::MIN_POSITIVE);
    let mut eval = |v: f64, points: &mut Vec<Evaluated>| -> Result<f64, String> {
        if (t.stop)() {
            return Err("interrupted".into());
        }
        let guesses = neighbour_guesses(points, v);
        if guesses.is_empty() {
            return Err("no peak to start from".into());
        }
        let e = t.at(v, &guesses)?;
        let amp = e.peak.amplitude;
        points.push(e);
        Ok(amp)
    };
    let mut x1 = hi - g * (hi - lo);
    let mut x2 = lo + g * (hi - lo);
    let mut f1 = eval(x1, points)?;
    let mut f2 = eval(x2, points)?;
    while hi - lo > tol {
        if f1 < f2 {
            hi = x2;
            (x2, f2) = (x1, f1);
            x1 = hi - g * (hi - lo);
            f1 = eval(x1, points)?;
        } else {
            lo = x1;
            (x1, f1) = (x2, f2);
            x2 = lo + g * (hi - lo);
            f2 = eval(x2, points)?;
        }
    }
    Ok(())
}

/// The peak locus at `values` (in the order given; the first and last get coarse sweeps),
/// and, when `optimize` and the smallest peak is inside the range, the optimum refined by
/// golden section; where the optimum is flat ([`plateau`]), the ends of the flat run are
/// located by bisection instead. `on_value` is called after each coarse sweep and each value of `values`;
/// once `stop` says so (Ctrl-C), the locus ends with what was found ([`Locus::interrupted`]).
/// Never fails: an error stops the locus with [`Locus::failure`] set, keeping what was found.
pub fn track(
    model_at: &ModelAt<'_>,
    s: &TrackSettings,
    values: &[f64],
    optimize: bool,
    on_value: &mut dyn FnMut(),
    stop: &dyn Fn() -> bool,
) -> Locus {
    let mut t = Tracker {
        model_at,
        s,
        rec: None,
        solves: 0,
        stop,
        warnings: Vec::new(),
        more_warnings: 0,
    };
    let mut locus = Locus::default();
    let (Some(&first), Some(&last)) = (values.first(), values.last()) else {
        locus.failure = Some("no parameter values".into());
        return locus;
    };
    let mut starts = Vec::new();
    let ends = if values.len() > 1 {
        vec![first, last]
    } else {
        vec![first]
    };
    for v in ends {
        match t.sweep(v) {
            Ok((peaks, pts)) => {
                starts.extend(peaks.into_iter().map(|p| p.solution));
                locus.sweeps.push((v, pts));
            }
            Err(e) => {
                locus.failure = Some(format!("{v}: {e}"));
                break;
            }
        }
        on_value();
        if stop() {
            break;
        }
    }
    if locus.failure.is_none() && starts.is_empty() && !stop() {
        locus.failure = Some(format!(
            "no local maximum of the amplitude between w = {} and {}",
            s.omega_start, s.omega_end
        ));
    }
    let mut guesses: Vec<Option<PointSolution>> = dedupe(starts).into_iter().map(Some).collect();
    for &v in values {
        if locus.failure.is_some() || stop() {
            break;
        }
        match t.at(v, &guesses) {
            Ok(e) => {
                guesses = e
                    .tracks
                    .iter()
                    .map(|t| t.as_ref().map(|p| p.solution.clone()))
                    .collect();
                locus.points.push(e);
            }
            Err(e) => locus.failure = Some(format!("{v}: {e}")),
        }
        on_value();
    }
    if stop() {
        locus.interrupted = true;
        locus.failure.get_or_insert_with(|| {
            format!(
                "interrupted after {} of {} values",
                locus.points.len(),
                values.len()
            )
        });
    }
    locus.points.sort_by(|x, y| x.value.total_cmp(&y.value));
    if locus.failure.is_none() && optimize && locus.points.len() >= 3 {
        let k = locus
            .points
            .iter()
            .enumerate()
            .min_by(|x, y| x.1.peak.amplitude.total_cmp(&y.1.peak.amplitude))
            .map_or(0, |(k, _)| k);
        locus.interior = k > 0 && k + 1 < locus.points.len();
        // On a flat optimum golden section would chase round-off between equal peaks: the
        // ends of the flat run are what an engineer can use (the least load that sticks).
        let refined = match flat_run(&locus.points, values) {
            Some(run) => plateau_edges(&mut t, &mut locus.points, run),
            None if locus.interior => golden(&mut t, &mut locus.points, k),
            None => Ok(()),
        };
        if let Err(e) = refined {
            locus.interrupted = stop();
            locus.failure = Some(format!("refining the optimum: {e}"));
        }
    }
    locus.points.sort_by(|x, y| x.value.total_cmp(&y.value));
    locus.optimum = smallest(&locus.points).map(|e| (e.value, e.peak.amplitude, e.peak.omega));
    if locus.failure.is_none() {
        locus.plateau = plateau(&locus.points, values);
    }
    locus.solves = t.solves;
    locus.warnings = t.warnings;
    // Said on the warning itself, so that it keeps its context where warnings of several
    // loci are gathered (a study's cases).
    if t.more_warnings > 0
        && let Some(last) = locus.warnings.last_mut()
    {
        last.push_str(&format!(
            " (the same, with other numbers, at {} more parameter value(s))",
            t.more_warnings
        ));
    }
    locus
}

/// For each point of a locus sorted by value, whether its highest peak is another local
/// maximum than the previous value's: the tracked peak nearest in frequency to the previous
/// highest is not the highest here. As a damper sticks, the highest peak changes from the
/// slipping system's resonance to the stuck system's; the optimum is usually where it does.
/// A switch onto a maximum that was not followed (it appeared between two values) is not seen.
pub fn resonance_switches(points: &[Evaluated]) -> Vec<bool> {
    let mut out = vec![false; points.len()];
    for (i, pair) in points.windows(2).enumerate() {
        let (prev, cur) = (&pair[0], &pair[1]);
        let w = prev.peak.omega;
        let nearest = cur
            .tracks
            .iter()
            .flatten()
            .min_by(|a, b| (a.omega - w).abs().total_cmp(&(b.omega - w).abs()));
        out[i + 1] =
            nearest.is_some_and(|q| (q.omega - cur.peak.omega).abs() > 1e-4 * cur.peak.omega.abs());
    }
    out
}

pub use crate::param::values;

/// Most parameter values a locus tracks: each is a few periodic solutions at least, and a
/// count typed wrong (1e12) must be refused before the values are allocated.
pub const MAX_VALUES: usize = 1000;

/// The parameter of `ewr peaks --param` and Python's `peaks(param)`: `mu_n`, `forcing` or
/// `mass:DOF`, and for 3-D contacts `mu` or `normal-preload` (`normal_preload` too).
#[derive(Clone, Debug, PartialEq)]
pub struct PeakParam {
    /// The study parameter it is.
    pub kind: ParamKind,
    /// The DOF a `mass:DOF` parameter acts on (empty otherwise).
    pub dofs: Vec<usize>,
    /// Its name in results: `mu_n`, `mu`, `normal-preload`, `forcing`, `mass:LABEL`.
    pub name: String,
}

impl PeakParam {
    /// Reads `spec` against `model`, refusing parameters that do not apply to its contacts.
    pub fn parse(spec: &str, model: &Model) -> Result<PeakParam, OptionError> {
        let normal = model.contacts.has_normal();
        let bad = |msg: String| OptionError::text(Opt::Param, spec, msg);
        let kind = match (spec, normal) {
            ("mu_n", false) => ParamKind::MuN,
            ("mu", true) => ParamKind::Mu,
            ("normal-preload" | "normal_preload", true) => ParamKind::NormalPreload,
            ("mu_n", true) => {
                return Err(bad(
                    "the model's contacts are 3-D (normal direction), whose bound is mu times the \
                     normal force: track mu or normal-preload"
                        .into(),
                ));
            }
            ("mu" | "normal-preload" | "normal_preload", false) => {
                return Err(bad(
                    "only for models with 3-D contacts (normal direction); track mu_n".into(),
                ));
            }
            ("forcing", _) => ParamKind::ForcingScale,
            _ => {
                let Some(dof) = spec.strip_prefix("mass:") else {
                    return Err(OptionError {
                        option: Opt::Param,
                        value: Some((format!("{spec:?}"), false)),
                        message: "use mu_n, forcing or mass:DOF (3-D contacts: mu, \
                                  normal-preload)"
                            .into(),
                    });
                };
                let d = ewr_solve::setup::resolve_dofs(
                    model,
                    &ewr_solve::DofRef::parse_list(dof),
                    Opt::Param,
                )?;
                let name = match &model.dof_labels {
                    Some(l) => format!("mass:{}", l[d[0]]),
                    None => format!("mass:{}", d[0]),
                };
                return Ok(PeakParam {
                    kind: ParamKind::Mass,
                    dofs: vec![d[0]],
                    name,
                });
            }
        };
        let name = match kind {
            ParamKind::NormalPreload => "normal-preload".to_string(),
            ParamKind::ForcingScale => "forcing".to_string(),
            k => k.name().to_string(),
        };
        Ok(PeakParam {
            kind,
            dofs: Vec::new(),
            name,
        })
    }

    /// Why the range `from..to` cannot be tracked, if it cannot: friction and masses must be
    /// >= 0, a forcing factor > 0. Front ends prefix the range as they spell it.
    pub fn range_problem(&self, from: f64, to: f64) -> Option<String> {
        if !from.is_finite() || !to.is_finite() {
            return Some("the parameter range must be finite".into());
        }
        let lowest_ok = match self.kind {
            ParamKind::ForcingScale => f64::MIN_POSITIVE,
            _ => 0.0,
        };
        (from.min(to) < lowest_ok).then(|| {
            format!(
                "{} must be >= 0{}",
                self.name,
                if lowest_ok > 0.0 { " and not 0" } else { "" }
            )
        })
    }

    /// `base` with the parameter at `v`.
    pub fn model_at(&self, base: &Model, v: f64) -> Result<Model, String> {
        let mut m = base.clone();
        let contacts: Vec<usize> = (0..m.contacts.len()).collect();
        self.kind.apply(&mut m, v, &contacts, &self.dofs)?;
        Ok(m)
    }
}
