//! The peak locus of `ewr peaks` (the resonance peak against a parameter, and the optimum):
//! HDF5 and CSV.

use ewr_model::h5::{atomically, create_h5, put_1d, put_2d, put_str};
use serde::Serialize;
use std::path::Path;

/// One point of the locus: the parameter value and its refined peak.
#[derive(Clone, Debug, Serialize)]
pub struct LocusPoint {
    /// Parameter value.
    pub value: f64,
    /// Frequency of the peak.
    pub omega: f64,
    /// Peak amplitude.
    pub amplitude: f64,
    /// Periodic solutions that found it.
    pub evaluations: usize,
    /// Stick fraction of the period per contact at the peak.
    pub stick_fraction: Vec<f64>,
    /// Whether the peak's solution is stable (`--stability`; `None`: not asked for, or not
    /// classified).
    pub stable: Option<bool>,
    /// Its largest Floquet multiplier modulus, where classified.
    pub max_multiplier: Option<f64>,
    /// Whether the highest peak is another resonance's than at the previous value
    /// (`ewr_study::track::resonance_switches`).
    pub switched: bool,
}

/// The locus points of a tracked locus (sorted by value), resonance switches marked.
pub fn locus_points(points: &[ewr_study::track::Evaluated]) -> Vec<LocusPoint> {
    let switched = ewr_study::track::resonance_switches(points);
    points
        .iter()
        .zip(switched)
        .map(|(e, s)| LocusPoint {
            switched: s,
            ..LocusPoint::of(e)
        })
        .collect()
}

impl LocusPoint {
    /// The locus point of a tracked peak (not marked as a switch: [`locus_points`] sees its
    /// neighbours).
    fn of(e: &ewr_study::track::Evaluated) -> Self {
        LocusPoint {
            switched: false,
            value: e.value,
            omega: e.peak.omega,
            amplitude: e.peak.amplitude,
            evaluations: e.peak.evaluations,
            stick_fraction: e.peak.solution.stick_fractions(),
            stable: e.peak.solution.stability.as_ref().map(|st| st.is_stable()),
            max_multiplier: e
                .peak
                .solution
                .stability
                .as_ref()
                .map(|st| st.max_multiplier),
        }
    }
}

/// Whether any point of the locus was classified: the stability columns are written then.
fn classified(points: &[LocusPoint]) -> bool {
    points.iter().any(|q| q.stable.is_some())
}

impl LocusPoint {
    /// `1` stable, `0` unstable, `-1` not classified, as in FRC files.
    pub fn stable_code(&self) -> i64 {
        self.stable.map_or(-1, i64::from)
    }
}

/// Writes the locus as CSV: `NAME,omega,amplitude,evaluations,switched,stick_fraction<c>...`,
/// then `stable,max_multiplier` where some peak was classified.
pub fn write_peaks_csv(path: &Path, name: &str, points: &[LocusPoint]) -> Result<(), String> {
    let nc = points.first().map_or(0, |p| p.stick_fraction.len());
    atomically(path, |tmp| {
        let mut s = format!("{name},omega,amplitude,evaluations,switched");
        for c in 0..nc {
            s.push_str(&format!(",stick_fraction{c}"));
        }
        let stability = classified(points);
        if stability {
            s.push_str(",stable,max_multiplier");
        }
        s.push('\n');
        for q in points {
            s.push_str(&format!(
                "{},{},{},{},{}",
                q.value,
                q.omega,
                q.amplitude,
                q.evaluations,
                u8::from(q.switched)
            ));
            for f in &q.stick_fraction {
                s.push_str(&format!(",{f}"));
            }
            if stability {
                s.push_str(&format!(
                    ",{},{}",
                    q.stable_code(),
                    q.max_multiplier.unwrap_or(f64::NAN)
                ));
            }
            s.push('\n');
        }
        std::fs::write(tmp, s).map_err(|e| e.to_string())
    })
}

/// Writes the locus, the optimum `(value, amplitude, omega)`, the flat range around it
/// (`track::Locus::plateau`) and how the tracking ended
/// (`complete`, `interrupted` or why it stopped) as HDF5 (layout in docs/results-format.md).
pub fn write_peaks_h5(
    path: &Path,
    model: &Path,
    name: &str,
    points: &[LocusPoint],
    optimum: Option<(f64, f64, f64)>,
    plateau: Option<(f64, f64)>,
    status: &str,
) -> Result<(), String> {
    let nc = points.first().map_or(0, |p| p.stick_fraction.len());
    atomically(path, |tmp| {
        let file = create_h5(tmp)?;
        {
            let f = &file;
            put_str(f, "format", "ewr-result")?;
            put_str(f, "kind", "peaks")?;
            put_str(f, "model", &model.display().to_string())?;
            put_str(f, "parameter", name)?;
            put_str(f, "status", status)?;
            let col = |g: &dyn Fn(&LocusPoint) -> f64| points.iter().map(g).collect::<Vec<_>>();
            put_1d(f, "value", &col(&|q| q.value))?;
            put_1d(f, "omega", &col(&|q| q.omega))?;
            put_1d(f, "amplitude", &col(&|q| q.amplitude))?;
            put_1d(
                f,
                "evaluations",
                &points
                    .iter()
                    .map(|q| q.evaluations as i64)
                    .collect::<Vec<_>>(),
            )?;
            put_1d(
                f,
                "switched",
                &points
                    .iter()
                    .map(|q| i64::from(q.switched))
                    .collect::<Vec<_>>(),
            )?;
            let stick: Vec<f64> = points
                .iter()
                .flat_map(|q| q.stick_fraction.iter().copied())
                .collect();
            put_2d(f, "stick_fraction", points.len(), nc, &stick)?;
            if classified(points) {
                put_1d(
                    f,
                    "stable",
                    &points
                        .iter()
                        .map(LocusPoint::stable_code)
                        .collect::<Vec<_>>(),
                )?;
                put_1d(
                    f,
                    "max_multiplier",
                    &col(&|q| q.max_multiplier.unwrap_or(f64::NAN)),
                )?;
            }
            let (v, amp, w) = optimum.unwrap_or((f64::NAN, f64::NAN, f64::NAN));
            put_1d(f, "optimum", &[v, amp, w])?;
            let (lo, hi) = plateau.unwrap_or((f64::NAN, f64::NAN));
            put_1d(f, "optimum_plateau", &[lo, hi])?;
        }
        // Groups are closed above; flushing and closing here turns a full disk into an
        // error instead of a truncated file renamed into place.
        crate::finish_h5(file)
    })
}

/// The figure of a peak locus (`ewr peaks --plot`, Python's `peaks(plot=)`): the highest
/// peak's amplitude and frequency against the parameter, resonance switches and the optimum
/// marked.
pub fn plot_peaks(
    path: &Path,
    name: &str,
    points: &[LocusPoint],
    optimum: Option<(f64, f64, f64)>,
    axis: crate::figures::FrequencyAxis,
) -> Result<(), String> {
    let title = match axis.model_title.as_deref().map(crate::figures::short_title) {
        Some(t) => format!("{t}: resonance peak against {name}"),
        None => format!("Resonance peak against {name}"),
    };
    crate::figures::peak_locus(
        path,
        &crate::figures::PeakLocusFigure {
            title,
            parameter: name,
            points,
            optimum: optimum.map(|(v, amp, _)| (v, amp)),
            axis,
        },
    )
}
