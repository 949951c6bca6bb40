//! Figures people look at: one period at a contact like the paper's Figs. 6-12 (from `solve`
//! and from `simulate` alike) and frequency response curves like Figs. 5 and 17. PNG or SVG by
//! the file's extension.

use ewr_solve::Curve;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

type Res = Result<(), String>;

fn register_font() -> Res {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| "cannot load the embedded font".to_string());
    });
    result
}

/// A plotters error as a sentence: its message without the layers' own prefixes.
fn e<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |err| {
        let full = err.to_string();
        let mut msg = full.as_str();
        for layer in ["backend error: ", "Drawing backend error: "] {
            msg = msg.strip_prefix(layer).unwrap_or(msg);
        }
        format!("cannot draw the figure ({what}): {msg}")
    }
}

/// Draws with `$draw` (an expression using `$root`, a drawing area of either backend) into a
/// PNG or SVG file chosen by `$path`'s extension; plotters' backends are different types, so
/// the body is instantiated once per backend.
///
/// The figure is drawn into a temporary file renamed at the end (as every result file), so
/// that an existing figure is only ever replaced by a complete one.
macro_rules! render {
    ($path:expr, $size:expr, |$root:ident| $draw:expr) => {{
        register_font()?;
        let png = kind($path)?;
        let size = $size;
        ewr_model::h5::atomically($path, |tmp| {
            if png {
                let area = BitMapBackend::new(tmp, size).into_drawing_area();
                let $root = &area;
                $draw?;
                area.present().map_err(e("write"))
            } else {
                let area = SVGBackend::new(tmp, size).into_drawing_area();
                let $root = &area;
                $draw?;
                area.present().map_err(e("write"))
            }
        })
    }};
}

fn kind(path: &Path) -> Result<bool, String> {
    crate::ensure_parent(path)?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("png") => Ok(true),
        Some("svg") => Ok(false),
        _ => Err(format!(
            "plot {}: the file name must end in .png or .svg",
            path.display()
        )),
    }
}

/// A tick label read at a glance: at most 4 significant digits, plain from 1e-3 to 1e5,
/// else `2.5e-6`. Log-axis tick positions carry float noise (`9.999999e-5`): it rounds away.
fn tick(v: &f64) -> String {
    let v = *v;
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { format!("{v}") };
    }
    // Rust's `{:e}` rounds with the carry (9.9999e-5 -> 1.000e-4).
    let sci = format!("{v:.3e}");
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("integer exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-3..5).contains(&exp) {
        let rounded: f64 = sci.parse().expect("a number");
        let decimals = (3 - exp).max(0) as usize;
        trim(&format!("{rounded:.decimals$}"))
    } else {
        format!("{}e{exp}", trim(mantissa))
    }
}

/// [`tick`] for a linear axis spanning `span`: a position within round-off of zero (the
/// `6.9e-18` of a mesh stepped in floats) is written `0`.
fn linear_tick(span: f64) -> impl Fn(&f64) -> String {
    move |v: &f64| {
        if v.abs() <= 1e-9 * span.abs() {
            "0".to_string()
        } else {
            tick(v)
        }
    }
}

/// [`tick`] for a linear axis over `lo..hi` whose span is narrow beside its values: as many
/// decimals as steps of a tenth of the span need (a backbone's frequency moves over
/// 3509.1..3512.1 rad/s, where four significant digits write 3509.5 and 3510 alike).
fn narrow_tick(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let (span, size) = ((hi - lo).abs(), lo.abs().max(hi.abs()));
    let decimals = (span > 0.0 && span < 1e-2 * size && (1e-3..1e5).contains(&size))
        .then(|| (-(0.1 * span).log10().floor()).max(0.0) as usize);
    move |v: &f64| match decimals {
        Some(d) => {
            let s = format!("{v:.d$}");
            if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                s
            }
        }
        None => tick(v),
    }
}

/// A polyline on a chart with linear x over `x0..x1` and logarithmic y over `a0..a1`, as
/// points in the plot's fractions for [`legend_corner`]: 21 per segment, since the lines
/// between a few points are hidden by a legend too. Segments through `y <= 0` are skipped.
fn line_fractions(
    line: &[(f64, f64)],
    (x0, x1): (f64, f64),
    (a0, a1): (f64, f64),
) -> Vec<(f64, f64)> {
    let (la0, la1) = (a0.ln(), a1.ln());
    let norm = |p: &(f64, f64)| ((p.0 - x0) / (x1 - x0), (p.1.ln() - la0) / (la1 - la0));
    line.windows(2)
        .filter(|w| w[0].1 > 0.0 && w[1].1 > 0.0)
        .flat_map(|w| {
            let (a, b) = (norm(&w[0]), norm(&w[1]));
            (0..=20).map(move |k| {
                let t = k as f64 / 20.0;
                (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1))
            })
        })
        .collect()
}

/// The corner of the plot where a legend box of `w x h` (fractions of the plot) covers the
/// fewest data points, given in the plot's fractions (`0..1` left to right, bottom to top).
fn legend_corner(points: &[(f64, f64)], w: f64, h: f64) -> (SeriesLabelPosition, usize) {
    let corners = [
        (SeriesLabelPosition::UpperRight, 1.0 - w, 1.0 - h),
        (SeriesLabelPosition::UpperLeft, 0.0, 1.0 - h),
        (SeriesLabelPosition::LowerRight, 1.0 - w, 0.0),
        (SeriesLabelPosition::LowerLeft, 0.0, 0.0),
    ];
    let covered = |x0: f64, y0: f64| {
        points
            .iter()
            .filter(|p| p.0 >= x0 && p.0 <= x0 + w && p.1 >= y0 && p.1 <= y0 + h)
            .count()
    };
    corners
        .into_iter()
        .map(|(c, x0, y0)| (c, covered(x0, y0)))
        .min_by_key(|&(_, n)| n)
        .expect("four corners")
}

/// How frequencies are labelled: `w` in rad per time unit, or `f = w / 2 pi` (`--hz`), with
/// the unit when the model's unit statement gives the time unit.
#[derive(Clone, Debug, Default)]
pub struct FrequencyAxis {
    /// Draw `f = w / 2 pi` instead of `w`.
    pub hz: bool,
    /// The model's unit statement (`/units`), shown under the title.
    pub units: Option<String>,
    /// The amplitude measure the curves are in (the y axis names it).
    pub amplitude: ewr_solve::Amplitude,
    /// The model's title (`/title`), which the figure's title names.
    pub model_title: Option<String>,
    /// Whether the model's contacts are 3-D: their friction bound is `mu N(t)`, set by the
    /// model's `mu` and preload, not one `mu N`.
    pub three_d: bool,
}

impl FrequencyAxis {
    /// The axes of a figure of `model`'s responses in the measure `amplitude`.
    pub fn of_model(model: &ewr_model::Model, amplitude: ewr_solve::Amplitude, hz: bool) -> Self {
        FrequencyAxis {
            hz,
            units: model.units.clone(),
            amplitude,
            model_title: model.title.clone(),
            three_d: model.contacts.has_normal(),
        }
    }

    /// Whether the model's units put time in seconds (SI, or an explicit `s`).
    fn seconds(&self) -> bool {
        self.units.as_deref().is_some_and(|u| {
            u.contains("SI")
                || u.split(|c: char| !c.is_alphanumeric())
                    .any(|w| w == "s" || w == "sec" || w == "seconds")
        })
    }

    /// The x value drawn for `w`.
    fn x(&self, w: f64) -> f64 {
        if self.hz {
            w / std::f64::consts::TAU
        } else {
            w
        }
    }

    /// The x axis title.
    fn label(&self) -> String {
        match (self.hz, self.seconds()) {
            (true, true) => "frequency f = w / 2 pi [Hz]".into(),
            (true, false) => "frequency f = w / 2 pi [cycles per time unit]".into(),
            (false, true) => "excitation frequency w [rad/s]".into(),
            (false, false) => "excitation frequency w [rad per time unit]".into(),
        }
    }

    /// The amplitude axis title (SI models are in metres).
    fn amplitude_label(&self, what: &str) -> String {
        if self.seconds() && self.units.as_deref().is_some_and(|u| u.contains("SI")) {
            format!("{what} [m]")
        } else {
            what.to_string()
        }
    }
}

/// One frequency response curve to draw: legend label and `(w, amplitude, converged)` per
/// point, in the order computed.
#[derive(Clone, Debug)]
pub struct FrcLine {
    /// Legend label.
    pub label: String,
    /// The points.
    pub points: Vec<(f64, f64, bool)>,
    /// Refined peaks `(w, amplitude)`, marked with a circle; the highest peak of each curve
    /// is joined to the next curve's by a dashed line (the backbone of the peaks).
    pub peaks: Vec<(f64, f64)>,
    /// The parameter value of the curve: with more curves than legend entries, curves are
    /// coloured by it on a colour bar instead of listed.
    pub value: Option<f64>,
    /// Points and peaks `(w, amplitude)` whose truncation-error estimate exceeds
    /// [`ewr_solve::estimate::WARN_ABOVE`]: marked with a triangle, so that a figure says
    /// where its curve needs more harmonics.
    pub inaccurate: Vec<(f64, f64)>,
    /// Stretches `(w, amplitude)` of consecutive unstable points (a Floquet multiplier
    /// outside the unit circle, docs/stability.md), each with its stable neighbours: drawn
    /// dashed over the curve.
    pub unstable: Vec<Vec<(f64, f64)>>,
}

/// The unstable stretches of a curve's points, for [`FrcLine::unstable`].
pub fn unstable_runs(points: &[&ewr_solve::PointSolution]) -> Vec<Vec<(f64, f64)>> {
    let marks: Vec<PointMark> = points
        .iter()
        .map(|s| PointMark {
            omega: s.omega,
            amplitude: s.dofs.norm_peak,
            converged: s.status.converged(),
            unstable: s.stability.as_ref().is_some_and(|st| !st.is_stable()),
        })
        .collect();
    unstable_stretches(&marks)
}

/// What [`unstable_stretches`] needs of a point of a curve.
pub struct PointMark {
    /// Frequency.
    pub omega: f64,
    /// Amplitude.
    pub amplitude: f64,
    /// Whether it converged.
    pub converged: bool,
    /// Whether it was classified unstable.
    pub unstable: bool,
}

/// Stretches `(w, amplitude)` of consecutive converged unstable points, each with its
/// converged neighbours (so that the dashed stretch joins the line), in curve order.
pub fn unstable_stretches(points: &[PointMark]) -> Vec<Vec<(f64, f64)>> {
    let unstable = |p: &PointMark| p.converged && p.unstable;
    let mut runs = Vec::new();
    let mut i = 0;
    while i < points.len() {
        if !unstable(&points[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < points.len() && unstable(&points[i]) {
            i += 1;
        }
        let lo = start.saturating_sub(1);
        let hi = i.min(points.len() - 1);
        runs.push(
            points[lo..=hi]
                .iter()
                .filter(|p| p.converged)
                .map(|p| (p.omega, p.amplitude))
                .collect(),
        );
    }
    runs
}

/// What the curves of an FRC figure are and how its axes read.
pub struct FrcStyle<'a> {
    /// Figure title.
    pub title: &'a str,
    /// Frequency axis.
    pub axis: FrequencyAxis,
    /// Name of the parameter of [`FrcLine::value`] (the colour bar's title).
    pub parameter: Option<&'a str>,
}

/// A model's title short enough for a figure's title line (1000 px at 22 px): its name where
/// it reads `name: description`, else its first 60 characters cut at a word.
pub fn short_title(title: &str) -> String {
    if let Some((name, _)) = title.split_once(": ")
        && name.chars().count() <= 40
    {
        return name.to_string();
    }
    if title.chars().count() <= 60 {
        return title.to_string();
    }
    let cut: String = title.chars().take(60).collect();
    let words = cut.rsplit_once(' ').map_or(cut.as_str(), |(w, _)| w);
    format!("{}...", words.trim_end_matches([',', ' ', '(']))
}

/// Frequency response curves: peak total amplitude of the monitored DOFs against `w`.
pub fn frc(path: &Path, curves: &[Curve], axis: FrequencyAxis) -> Res {
    let lines: Vec<FrcLine> = curves
        .iter()
        .map(|c| FrcLine {
            label: c.mu_n.map(|m| format!("mu N = {m}")).unwrap_or_else(|| {
                if axis.three_d {
                    "model's mu and preload".into()
                } else {
                    "model's mu N".into()
                }
            }),
            points: c
                .points
                .iter()
                .map(|p| {
                    let s = &p.solution;
                    (s.omega, s.dofs.norm_peak, s.status.converged())
                })
                .collect(),
            peaks: c.peaks.iter().map(|p| (p.omega, p.amplitude)).collect(),
            value: c.mu_n,
            inaccurate: c
                .points
                .iter()
                .map(|p| (&p.solution, p.solution.dofs.norm_peak))
                .chain(c.peaks.iter().map(|p| (&p.solution, p.amplitude)))
                .filter(|(s, _)| {
                    s.estimate
                        .as_ref()
                        .is_some_and(|e| e.relative > ewr_solve::estimate::WARN_ABOVE)
                })
                .map(|(s, a)| (s.omega, a))
                .collect(),
            unstable: unstable_runs(&c.points.iter().map(|p| &p.solution).collect::<Vec<_>>()),
        })
        .collect();
    let title = match axis.model_title.as_deref().map(short_title) {
        Some(t) => format!("{t}: frequency response"),
        None => "Frequency response of the monitored DOFs".to_string(),
    };
    frc_lines(
        path,
        &FrcStyle {
            title: &title,
            axis,
            parameter: Some("mu N"),
        },
        &lines,
    )
}

/// Frequency response curves given as plain lines (e.g. read back from a study), overlaid;
/// up to 12 are listed in a legend, more are coloured by their value on a colour bar.
pub fn frc_lines(path: &Path, style: &FrcStyle<'_>, lines: &[FrcLine]) -> Res {
    render!(path, (1000, 650), |root| draw_frc(root, style, lines))
}

/// Smallest and largest finite value; `(inf, -inf)` when there is none.
fn extent(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        })
}

/// The figure's title line, and under it the model's unit statement where it has one; the
/// area below both.
fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    units: Option<&str>,
) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    let area = root.titled(title, ("sans-serif", 22)).map_err(e("title"))?;
    match units {
        Some(u) => area
            .titled(&format!("units: {u}"), ("sans-serif", 14))
            .map_err(e("title")),
        None => Ok(area),
    }
}

fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = extent(v);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = 0.05 * (hi - lo).max(1e-12 * hi.abs().max(1.0));
    (lo - pad, hi + pad)
}

/// Labelled ticks of a logarithmic axis from `a0` to `a1`: 1, 2, 5 per decade over a few
/// decades, 1 per decade over many, and where the range spans less than a decade, evenly
/// spaced round values, so that every axis has at least three labels.
fn log_ticks(a0: f64, a1: f64) -> Vec<f64> {
    if !(a0 > 0.0 && a1 > a0 && a1.is_finite()) {
        return vec![a0, a1];
    }
    let decades = (a1 / a0).log10();
    let mantissas: &[f64] = if decades > 6.0 {
        &[1.0]
    } else if decades > 2.5 {
        &[1.0, 3.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut ticks = Vec::new();
    let mut k = a0.log10().floor() as i32;
    while 10f64.powi(k) <= a1 {
        for m in mantissas {
            let v = m * 10f64.powi(k);
            if v >= a0 && v <= a1 {
                ticks.push(v);
            }
        }
        k += 1;
    }
    if ticks.len() >= 3 {
        return ticks;
    }
    round_ticks(a0, a1)
}

/// Evenly spaced round values from `a0` to `a1` (a step of 1, 2, 2.5 or 5 times a power of
/// ten giving 4 to 10 of them).
fn round_ticks(a0: f64, a1: f64) -> Vec<f64> {
    if !(a1 > a0 && a0.is_finite() && a1.is_finite()) {
        return vec![a0, a1];
    }
    let raw = (a1 - a0) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|f| f * mag)
        .find(|st| (a1 - a0) / st <= 8.0)
        .unwrap_or(10.0 * mag);
    let mut v = (a0 / step).ceil() * step;
    let mut out = Vec::new();
    while v <= a1 {
        out.push(v);
        v += step;
    }
    out
}

/// Range of positive values for a logarithmic axis, with a margin.
fn log_bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (a0, a1) = v
        .filter(|a| *a > 0.0 && a.is_finite())
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), a| {
            (lo.min(a), hi.max(a))
        });
    if a0.is_finite() {
        (a0 / 1.5, a1 * 1.5)
    } else {
        (1e-3, 1.0)
    }
}

/// Distinct line colours (matplotlib's ten), enough for a 10-entry legend without a repeat.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Marks of points whose truncation error exceeds the warning level.
const ORANGE: RGBColor = RGBColor(230, 120, 0);

/// Most legend entries drawn; more would cover the plot.
const MAX_LEGEND: usize = 12;

/// Legend label of the dashed line through the curves' highest peaks.
const BACKBONE_LABEL: &str = "highest peak of each curve";

/// Legend label standing for the curves beyond [`MAX_LEGEND`].
fn more_curves_label(n: usize) -> String {
    format!("... {n} curves in all")
}

/// Legend label of the dashed unstable stretches.
const UNSTABLE_LABEL: &str = "unstable (a Floquet multiplier outside the unit circle)";

/// Legend label of the points whose truncation error is above the warning level.
fn inaccurate_label() -> String {
    format!(
        "truncation error > {}% (more harmonics, or --harmonics auto)",
        100.0 * ewr_solve::estimate::WARN_ABOVE
    )
}

/// The FRC legend's size as fractions of the plot (width, height): one row per entry
/// [`draw_frc`] writes, as wide as its longest label (about 8 px per character of the 15 px
/// font, plus the sample line, of ~880 px; rows of 22 px of ~540 px).
fn legend_size(lines: &[FrcLine], by_value: bool) -> (f64, f64) {
    let mut rows: Vec<usize> = Vec::new();
    if !by_value {
        rows.extend(
            lines
                .iter()
                .take(MAX_LEGEND)
                .map(|c| c.label.chars().count()),
        );
        if lines.len() > MAX_LEGEND {
            rows.push(more_curves_label(lines.len()).len());
        }
    }
    if lines.iter().any(|c| !c.unstable.is_empty()) {
        rows.push(UNSTABLE_LABEL.len());
    }
    if lines.iter().any(|c| !c.inaccurate.is_empty()) {
        rows.push(inaccurate_label().len());
    }
    if lines.iter().filter(|c| !c.peaks.is_empty()).count() > 1 {
        rows.push(BACKBONE_LABEL.len());
    }
    let widest = rows.iter().copied().max().unwrap_or(0) as f64;
    (
        ((widest * 8.0 + 45.0) / 880.0).clamp(0.2, 0.95),
        (rows.len() as f64 * 22.0 + 12.0) / 540.0,
    )
}

fn draw_frc<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    style: &FrcStyle<'_>,
    lines: &[FrcLine],
) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let axis = &style.axis;
    let root = titled(root, style.title, axis.units.as_deref())?;
    // Many curves with values: a colour scale by value and a colour bar, not a legend.
    let values: Vec<f64> = lines.iter().filter_map(|c| c.value).collect();
    let by_value = lines.len() > MAX_LEGEND && values.len() == lines.len();
    let (v0, v1) = extent(values.iter().copied());
    let (main, bar) = if by_value {
        root.split_horizontally(880)
    } else {
        (root.clone(), root.clone())
    };
    let color_of = |i: usize| -> RGBColor {
        match lines[i].value {
            Some(v) if by_value => scale_color(if v1 > v0 { (v - v0) / (v1 - v0) } else { 0.5 }),
            // More curves than colours (up to the legend's 12): a scale, no two alike.
            _ if lines.len() > COLORS.len() => scale_color(i as f64 / (lines.len() - 1) as f64),
            _ => COLORS[i],
        }
    };
    let pts = lines.iter().flat_map(|c| &c.points);
    let (w0, w1) = bounds(pts.clone().map(|p| axis.x(p.0)));
    // Logarithmic amplitude: friction changes peaks by orders of magnitude (paper Fig. 5).
    let peak_amps = lines.iter().flat_map(|c| c.peaks.iter().map(|p| p.1));
    let (a0, a1) = log_bounds(pts.clone().map(|p| p.1).chain(peak_amps));
    // The legend goes in the corner where it hides the fewest points, a peak counting as
    // four (what the figure is read for); where every corner hides some, the amplitude axis
    // grows upwards until the legend sits above the data (blade-ccx's refined peak was
    // under it).
    let (w_frac, h_frac) = legend_size(lines, by_value);
    let data: Vec<(f64, f64)> = pts
        .clone()
        .map(|p| (axis.x(p.0), p.1))
        .chain(
            lines
                .iter()
                .flat_map(|c| c.peaks.iter().flat_map(|&(w, a)| [(axis.x(w), a); 4])),
        )
        .filter(|p| p.1 > 0.0)
        .collect();
    let fractions = |a1: f64| -> Vec<(f64, f64)> {
        let (la0, la1) = (a0.ln(), a1.ln());
        data.iter()
            .map(|p| {
                (
                    (p.0 - w0) / (w1 - w0),
                    (p.1.max(a0).ln() - la0) / (la1 - la0),
                )
            })
            .collect()
    };
    let (mut corner, hidden) = legend_corner(&fractions(a1), w_frac, h_frac);
    let a1 = if hidden > 0 && h_frac < 0.6 {
        let raised = (a0.ln() + (a1.ln() - a0.ln()) / (1.0 - h_frac)).exp();
        corner = legend_corner(&fractions(raised), w_frac, h_frac).0;
        raised
    } else {
        a1
    };
    let mut chart = ChartBuilder::on(&main)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(85)
        .build_cartesian_2d(
            w0..w1,
            (a0..a1).log_scale().with_key_points(log_ticks(a0, a1)),
        )
        .map_err(e("axes"))?;
    chart
        .configure_mesh()
        .x_desc(axis.label())
        .y_desc(axis.amplitude_label(axis.amplitude.formula()))
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(e("mesh"))?;
    let mut entries = 0;
    for (i, c) in lines.iter().enumerate() {
        let color = color_of(i);
        let series = chart
            .draw_series(LineSeries::new(
                drawn_line(c, axis, a0),
                color.stroke_width(2),
            ))
            .map_err(e("curve"))?;
        if !by_value && i < MAX_LEGEND {
            entries += 1;
            series.label(c.label.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        } else if !by_value && i == MAX_LEGEND {
            entries += 1;
            series
                .label(more_curves_label(lines.len()))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], WHITE));
        }
        draw_marks(&mut chart, c, color, axis, a0)?;
    }
    if lines.iter().any(|c| !c.unstable.is_empty()) {
        entries += 1;
        let text = UNSTABLE_LABEL;
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(e("legend"))?
            .label(text)
            .legend(|(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (6, 0)], BLACK.stroke_width(2))
                    + PathElement::new(vec![(10, 0), (16, 0)], BLACK.stroke_width(2))
            });
    }
    if lines.iter().any(|c| !c.inaccurate.is_empty()) {
        entries += 1;
        let text = inaccurate_label();
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(e("legend"))?
            .label(text)
            .legend(|(x, y)| TriangleMarker::new((x + 10, y), 6, ORANGE.stroke_width(2)));
    }
    let backbone = peak_backbone(lines, axis);
    if backbone.len() > 1 {
        entries += 1;
        chart
            .draw_series(DashedLineSeries::new(
                backbone,
                6,
                4,
                BLACK.mix(0.6).stroke_width(1),
            ))
            .map_err(e("backbone"))?
            .label(BACKBONE_LABEL)
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.6)));
    }
    if entries > 0 {
        chart
            .configure_series_labels()
            .position(corner)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .label_font(("sans-serif", 15))
            .draw()
            .map_err(e("legend"))?;
    }
    if by_value {
        colour_bar(&bar, style.parameter.unwrap_or("value"), v0, v1)?;
    }
    Ok(())
}

/// A curve's marks over its line: failed points (red crosses), refined peaks (circles),
/// points above the truncation-error warning level (orange triangles) and unstable stretches
/// (dashed); amplitudes below the axis's bottom `a0` sit on it.
fn draw_marks<DB, CT>(
    chart: &mut ChartContext<'_, DB, CT>,
    c: &FrcLine,
    color: RGBColor,
    axis: &FrequencyAxis,
    a0: f64,
) -> Res
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    CT: CoordTranslate<From = (f64, f64)>,
{
    let bad = c
        .points
        .iter()
        .filter(|p| !p.2)
        .map(|p| Cross::new((axis.x(p.0), p.1.max(a0)), 5, RED));
    chart.draw_series(bad).map_err(e("failed points"))?;
    let marks = c
        .peaks
        .iter()
        .map(|&(w, a)| Circle::new((axis.x(w), a), 5, color.stroke_width(2)));
    chart.draw_series(marks).map_err(e("peaks"))?;
    let rough = c
        .inaccurate
        .iter()
        .map(|&(w, a)| TriangleMarker::new((axis.x(w), a.max(a0)), 6, ORANGE.stroke_width(2)));
    chart.draw_series(rough).map_err(e("inaccurate points"))?;
    for run in &c.unstable {
        let pts: Vec<(f64, f64)> = run.iter().map(|&(w, a)| (axis.x(w), a.max(a0))).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), WHITE.stroke_width(3)))
            .map_err(e("unstable"))?;
        chart
            .draw_series(DashedLineSeries::new(pts, 5, 4, color.stroke_width(2)))
            .map_err(e("unstable"))?;
    }
    Ok(())
}

/// A curve's converged points as drawn: `(x, amplitude)` on the axis (amplitudes below its
/// bottom `a0` on it), in `w` order for a sequential sweep, in curve order for arclength.
fn drawn_line(c: &FrcLine, axis: &FrequencyAxis, a0: f64) -> Vec<(f64, f64)> {
    let mut ok: Vec<(f64, f64)> = c
        .points
        .iter()
        .filter(|p| p.2)
        .map(|p| (axis.x(p.0), p.1.max(a0)))
        .collect();
    if c.points.windows(2).all(|w| w[0].0 <= w[1].0) {
        ok.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    ok
}

/// The dashed line through the highest peak of each curve (the peaks' backbone), in the
/// axis's x.
fn peak_backbone(lines: &[FrcLine], axis: &FrequencyAxis) -> Vec<(f64, f64)> {
    lines
        .iter()
        .filter_map(|c| c.peaks.iter().copied().max_by(|x, y| x.1.total_cmp(&y.1)))
        .map(|(w, a)| (axis.x(w), a))
        .collect()
}

/// One panel of [`frc_grid`]: the curves that share the values of every parameter but the
/// colour's.
pub struct FrcPanel {
    /// What the curves share (`mass = 0.5`).
    pub caption: String,
    /// The curves, coloured by [`FrcLine::value`] on the figure's one colour bar.
    pub lines: Vec<FrcLine>,
}

/// Most panels [`frc_grid`] draws (4 rows of 3); a study with more combinations of its other
/// parameters is drawn overlaid.
pub const MAX_PANELS: usize = 12;

/// Frequency response curves as small multiples: one panel per combination of the other
/// parameters, on shared axes, every curve coloured by its value on one colour bar. Thirty
/// curves of a two-parameter study overlaid and coloured by one parameter hide the other.
pub fn frc_grid(path: &Path, style: &FrcStyle<'_>, panels: &[FrcPanel]) -> Res {
    let cols = panels.len().clamp(1, 3);
    let rows = panels.len().div_ceil(cols).max(1) as u32;
    let extra = if style.axis.units.is_some() { 30 } else { 0 };
    render!(path, (1150, 60 + extra + 380 * rows), |root| {
        draw_frc_grid(root, style, panels)
    })
}

fn draw_frc_grid<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    style: &FrcStyle<'_>,
    panels: &[FrcPanel],
) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let axis = &style.axis;
    let root = titled(root, style.title, axis.units.as_deref())?;
    let all = || panels.iter().flat_map(|p| &p.lines);
    let (v0, v1) = extent(all().filter_map(|c| c.value));
    let color_of = |c: &FrcLine| match c.value {
        Some(v) if v1 > v0 => scale_color((v - v0) / (v1 - v0)),
        _ => scale_color(0.5),
    };
    // Shared axes: the panels are compared with each other.
    let pts = || all().flat_map(|c| &c.points);
    let (w0, w1) = bounds(pts().map(|p| axis.x(p.0)));
    let peak_amps = all().flat_map(|c| c.peaks.iter().map(|p| p.1));
    let (a0, a1) = log_bounds(pts().map(|p| p.1).chain(peak_amps));
    let (main, bar) = root.split_horizontally(1040);
    let cols = panels.len().clamp(1, 3);
    let rows = panels.len().div_ceil(cols).max(1);
    let areas = main.split_evenly((rows, cols));
    for (panel, area) in panels.iter().zip(&areas) {
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.caption, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                w0..w1,
                (a0..a1).log_scale().with_key_points(log_ticks(a0, a1)),
            )
            .map_err(e("axes"))?;
        chart
            .configure_mesh()
            .x_labels(5)
            .x_desc(axis.label())
            .y_desc(axis.amplitude_label(axis.amplitude.formula()))
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(e("mesh"))?;
        for c in &panel.lines {
            let color = color_of(c);
            chart
                .draw_series(LineSeries::new(
                    drawn_line(c, axis, a0),
                    color.stroke_width(2),
                ))
                .map_err(e("curve"))?;
            draw_marks(&mut chart, c, color, axis, a0)?;
        }
        let backbone = peak_backbone(&panel.lines, axis);
        if backbone.len() > 1 {
            chart
                .draw_series(DashedLineSeries::new(
                    backbone,
                    6,
                    4,
                    BLACK.mix(0.6).stroke_width(1),
                ))
                .map_err(e("backbone"))?;
        }
    }
    colour_bar(&bar, style.parameter.unwrap_or("value"), v0, v1)
}

/// A vertical colour bar of [`scale_color`] from `v0` (bottom) to `v1`, titled `name`.
fn colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    name: &str,
    v0: f64,
    v1: f64,
) -> Res
where
    DB::ErrorType: 'static,
{
    let v1 = if v1 > v0 { v1 } else { v0 + 1.0 };
    draw_colour_bar(area, name, v0, v1, round_ticks(v0, v1), &tick)
}

/// [`colour_bar`] of a quantity drawn by its `log10` (`l0..l1`), labelled in the quantity
/// itself (1, 2, 5 per decade), not in its logarithm.
fn log_colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    name: &str,
    l0: f64,
    l1: f64,
) -> Res
where
    DB::ErrorType: 'static,
{
    let l1 = if l1 > l0 { l1 } else { l0 + 1.0 };
    let ticks = log_ticks(10f64.powf(l0), 10f64.powf(l1))
        .into_iter()
        .map(f64::log10)
        .collect();
    draw_colour_bar(area, name, l0, l1, ticks, &|l: &f64| tick(&10f64.powf(*l)))
}

fn draw_colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    name: &str,
    v0: f64,
    v1: f64,
    ticks: Vec<f64>,
    label: &dyn Fn(&f64) -> String,
) -> Res
where
    DB::ErrorType: 'static,
{
    let mut cb = ChartBuilder::on(area)
        .margin(15)
        .margin_left(5)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .caption(name, ("sans-serif", 14))
        .build_cartesian_2d(
            0.0..1.0,
            TickedAxis {
                lo: v0,
                hi: v1,
                ticks,
            },
        )
        .map_err(e("colour bar"))?;
    cb.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_label_formatter(label)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(e("colour bar"))?;
    let n = 100;
    cb.draw_series((0..n).map(|k| {
        let a = v0 + (v1 - v0) * k as f64 / n as f64;
        let b = v0 + (v1 - v0) * (k + 1) as f64 / n as f64;
        Rectangle::new(
            [(0.0, a), (1.0, b)],
            scale_color((k as f64 + 0.5) / n as f64).filled(),
        )
    }))
    .map_err(e("colour bar"))?;
    Ok(())
}

/// One period at one contact, whatever computed it: time histories per direction, stick
/// intervals and the friction bound.
pub struct PeriodFigure {
    /// Figure title.
    pub title: String,
    /// Sample times in `[0, period)`.
    pub t: Vec<f64>,
    /// The period.
    pub period: f64,
    /// Relative displacement, one series per tangential direction.
    pub w: Vec<Vec<f64>>,
    /// Relative velocity, likewise.
    pub v: Vec<Vec<f64>>,
    /// Friction force, likewise.
    pub r: Vec<Vec<f64>>,
    /// Stick intervals (an interval wrapping past the period has its end above it).
    pub stick: Vec<[f64; 2]>,
    /// Friction bound, drawn as the Coulomb circle of the force locus (3-D contacts: the
    /// largest `mu lambda` of the period).
    pub mu_n: f64,
    /// 3-D contacts: the normal side, drawn in place of `|r|` against `|v|`.
    pub normal: Option<NormalPanel>,
}

/// The normal side of a 3-D contact over the period.
pub struct NormalPanel {
    /// Normal force `lambda(t)`.
    pub lambda: Vec<f64>,
    /// Friction coefficient (the bound `mu lambda` is drawn too).
    pub mu: f64,
    /// Separation intervals (as the stick intervals).
    pub separated: Vec<[f64; 2]>,
}

impl PeriodFigure {
    /// Contact 0 of a periodic solution.
    pub fn of_solution(
        s: &ewr_solve::PointSolution,
        params: &ewr_contact::ContactParams,
        model: &ewr_model::Model,
    ) -> Self {
        let h = &s.histories;
        let nt = h.n_samples;
        let period = std::f64::consts::TAU / s.omega;
        let series = |buf: &[f64]| -> Vec<Vec<f64>> {
            (0..params.dim)
                .map(|k| buf[k * nt..(k + 1) * nt].to_vec())
                .collect()
        };
        PeriodFigure {
            title: format!(
                "{}: ewr solve at w = {}, {}, contact 0 of {} ({}; residual {:.1e})",
                short_title(model.title.as_deref().unwrap_or("model")),
                s.omega,
                s.set,
                params.len(),
                s.status,
                s.residual
            ),
            t: (0..nt).map(|j| period * j as f64 / nt as f64).collect(),
            period,
            w: series(&h.displacement),
            v: series(&h.velocity),
            r: series(&h.force),
            stick: s.contacts[0].stick_intervals.clone(),
            mu_n: match (&h.normal, &params.normal) {
                (Some(nh), Some(np)) => {
                    np.mu[0] * nh.force[..nt].iter().copied().fold(0.0, f64::max)
                }
                _ => params.mu_n[0],
            },
            normal: h
                .normal
                .as_ref()
                .zip(params.normal.as_ref())
                .map(|(nh, np)| NormalPanel {
                    lambda: nh.force[..nt].to_vec(),
                    mu: np.mu[0],
                    separated: s.contacts[0].separation_intervals.clone(),
                }),
        }
    }

    /// The last period of contact 0 of a time integration.
    pub fn of_simulation(sim: &ewr_simulate::Simulation, model: &ewr_model::Model) -> Self {
        let (dim, ns) = (sim.dim, sim.t.len());
        let series = |a: &[f64]| -> Vec<Vec<f64>> {
            (0..dim)
                .map(|k| (0..ns).map(|j| sim.at(a, j, 0, k)).collect())
                .collect()
        };
        let first = sim.contact_summaries().into_iter().next();
        PeriodFigure {
            title: format!(
                "{}: ewr simulate at w = {}, dt = {:.3e}, contact 0 of {}{}",
                short_title(model.title.as_deref().unwrap_or("model")),
                sim.omega,
                sim.dt,
                sim.n_contacts,
                if sim.converged { "" } else { " (NOT steady)" }
            ),
            t: sim.t.clone(),
            period: sim.period,
            w: series(&sim.w),
            v: series(&sim.v),
            r: series(&sim.r),
            stick: first
                .as_ref()
                .map(|c| c.stick_intervals.clone())
                .unwrap_or_default(),
            // 3-D contacts: the friction circle of the largest normal force.
            mu_n: first.as_ref().map_or(0.0, |c| c.mu_n),
            normal: sim.normal.as_ref().map(|n| NormalPanel {
                lambda: (0..ns).map(|j| n.lambda[j * sim.n_contacts]).collect(),
                mu: n.mu[0],
                separated: first
                    .as_ref()
                    .and_then(|c| c.normal.as_ref())
                    .map(|n| n.separation_intervals.clone())
                    .unwrap_or_default(),
            }),
        }
    }
}

/// Time histories (stick phases shaded), trajectory, force locus with the Coulomb circle
/// and `|r|` against `|v|`: the paper's figure of a periodic solution.
pub fn period(path: &Path, fig: &PeriodFigure) -> Res {
    render!(path, (1500, 900), |root| draw_period(root, fig))
}

/// Time intervals as bands within `[0, period)`: an interval that wraps past the period's
/// end is drawn in two pieces.
fn wrapped_bands(intervals: &[[f64; 2]], period: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
    intervals.iter().flat_map(move |&[s, end]| {
        let mut v = vec![(s, end.min(period))];
        if end > period {
            v.push((0.0, end - period));
        }
        v
    })
}

/// The normal force and the friction bound `mu lambda` against time, separation shaded.
fn draw_normal<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &PeriodFigure,
    n: &NormalPanel,
    t: &[f64],
    lambda: &[f64],
) -> Res
where
    DB::ErrorType: 'static,
{
    let bound: Vec<f64> = lambda.iter().map(|l| n.mu * l.max(0.0)).collect();
    let (y0, y1) = bounds(lambda.iter().chain(&bound).copied().chain([0.0]));
    let mut ch = ChartBuilder::on(area)
        .caption("normal force (separation shaded)", ("sans-serif", 17))
        .margin(8)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..fig.period, y0..y1)
        .map_err(e("axes"))?;
    ch.configure_mesh()
        .x_desc("t")
        .x_label_formatter(&linear_tick(fig.period))
        .y_label_formatter(&linear_tick(y1 - y0))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e("mesh"))?;
    let bands = wrapped_bands(&n.separated, fig.period);
    ch.draw_series(
        bands
            .map(|(s, end)| Rectangle::new([(s, y0), (end, y1)], RGBColor(255, 225, 200).filled())),
    )
    .map_err(e("separation"))?;
    for (k, (y, label)) in [(lambda, "lambda"), (bound.as_slice(), "mu lambda")]
        .into_iter()
        .enumerate()
    {
        let color = COLORS[k % COLORS.len()];
        ch.draw_series(LineSeries::new(
            t.iter().copied().zip(y.iter().copied()),
            color.stroke_width(2),
        ))
        .map_err(e("curve"))?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    ch.configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(e("legend"))
}

/// One x-y panel: title, x values, y values, axis labels.
type Panel<'a> = (&'a str, &'a [f64], &'a [f64], [&'a str; 2]);

fn draw_period<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &PeriodFigure) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let root = root
        .titled(&fig.title, ("sans-serif", 22))
        .map_err(e("title"))?;
    let panels = root.split_evenly((2, 3));
    let dim = fig.w.len();
    let ns = fig.t.len();
    // At most about 4000 points per curve: enough for the eye, small SVG files.
    let stride = ns.div_ceil(4000).max(1);
    let idx: Vec<usize> = (0..ns).step_by(stride).collect();
    let pick = |a: &[f64]| -> Vec<f64> { idx.iter().map(|&j| a[j]).collect() };
    let norm = |a: &[Vec<f64>]| -> Vec<f64> {
        idx.iter()
            .map(|&j| a.iter().map(|s| s[j] * s[j]).sum::<f64>().sqrt())
            .collect()
    };
    let t = pick(&fig.t);
    let histories = [
        ("w (relative displacement)", &fig.w),
        ("v (relative velocity)", &fig.v),
        ("r (friction force)", &fig.r),
    ];
    for (p, (name, a)) in panels.iter().zip(histories) {
        let series: Vec<Vec<f64>> = a.iter().map(|s| pick(s)).collect();
        let (y0, y1) = bounds(series.iter().flatten().copied());
        let frac: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|y| {
                t.iter()
                    .zip(y)
                    .map(|(t, y)| (t / fig.period, (y - y0) / (y1 - y0)))
            })
            .collect();
        let mut ch = ChartBuilder::on(p)
            .caption(name, ("sans-serif", 17))
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..fig.period, y0..y1)
            .map_err(e("axes"))?;
        ch.configure_mesh()
            .x_desc("t")
            .x_label_formatter(&linear_tick(fig.period))
            .y_label_formatter(&linear_tick(y1 - y0))
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(e("mesh"))?;
        // Stick phases as grey bands (wrapped intervals drawn in two pieces).
        let bands = wrapped_bands(&fig.stick, fig.period);
        ch.draw_series(bands.map(|(s, end)| {
            Rectangle::new([(s, y0), (end, y1)], RGBColor(220, 220, 220).filled())
        }))
        .map_err(e("stick"))?;
        for (k, y) in series.into_iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            ch.draw_series(LineSeries::new(
                t.iter().copied().zip(y),
                color.stroke_width(2),
            ))
            .map_err(e("curve"))?
            .label(format!("direction {}", k + 1))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        }
        if dim > 1 {
            ch.configure_series_labels()
                .position(legend_corner(&frac, 0.35, 0.2).0)
                .border_style(BLACK)
                .background_style(WHITE.mix(0.8))
                .label_font(("sans-serif", 13))
                .draw()
                .map_err(e("legend"))?;
        }
    }
    // Bottom row: trajectory, force locus, |r| against |v| (1-D: w-v, w-r, v-r).
    let (xs, ys, names) = if dim == 2 {
        (pick(&fig.w[0]), pick(&fig.w[1]), ["w1", "w2"])
    } else {
        (pick(&fig.w[0]), pick(&fig.v[0]), ["w", "v"])
    };
    let (fx, fy, fnames) = if dim == 2 {
        (pick(&fig.r[0]), pick(&fig.r[1]), ["r1", "r2"])
    } else {
        (pick(&fig.w[0]), pick(&fig.r[0]), ["w", "r"])
    };
    let (gx, gy) = (norm(&fig.v), norm(&fig.r));
    let locus = if dim == 2 {
        "friction force locus"
    } else {
        "hysteresis loop"
    };
    let plots: [Panel; 3] = [
        ("trajectory", &xs, &ys, names),
        (locus, &fx, &fy, fnames),
        ("|r| against |v|", &gx, &gy, ["|v|", "|r|"]),
    ];
    for (i, (name, x, y, labels)) in plots.into_iter().enumerate() {
        if i == 2
            && let Some(n) = &fig.normal
        {
            draw_normal(&panels[5], fig, n, &t, &pick(&n.lambda))?;
            continue;
        }
        let (mut x0, mut x1) = bounds(x.iter().copied());
        let (mut y0, mut y1) = bounds(y.iter().copied());
        if i == 1 && dim == 2 {
            // Equal axes around the friction circle.
            let m = 1.1
                * fig
                    .mu_n
                    .max(x0.abs())
                    .max(x1.abs())
                    .max(y0.abs())
                    .max(y1.abs());
            (x0, x1, y0, y1) = (-m, m, -m, m);
        }
        let mut ch = ChartBuilder::on(&panels[3 + i])
            .caption(name, ("sans-serif", 17))
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(e("axes"))?;
        ch.configure_mesh()
            .x_desc(labels[0])
            .y_desc(labels[1])
            .x_label_formatter(&linear_tick(x1 - x0))
            .y_label_formatter(&linear_tick(y1 - y0))
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(e("mesh"))?;
        if i == 1 && dim == 2 {
            let circle = (0..=200).map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 200.0;
                (fig.mu_n * a.cos(), fig.mu_n * a.sin())
            });
            ch.draw_series(LineSeries::new(circle, BLACK.stroke_width(1)))
                .map_err(e("circle"))?;
        }
        let pts = x.iter().copied().zip(y.iter().copied());
        if i == 2 {
            ch.draw_series(pts.map(|p| Circle::new(p, 2, COLORS[0].filled())))
                .map_err(e("points"))?;
        } else {
            ch.draw_series(LineSeries::new(pts, COLORS[0].stroke_width(2)))
                .map_err(e("curve"))?;
        }
    }
    Ok(())
}

/// One panel of the damper design figure: peak amplitude against one swept parameter.
pub struct DesignPanel {
    /// The parameter (x axis).
    pub parameter: String,
    /// One series per combination of the other parameters: label and `(x, peak)` points.
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// The case marked (the smallest peak, or the largest of an engine-order study):
    /// `(x, peak)`.
    pub optimum: (f64, f64),
    /// What the marked case is (`optimum`, `largest peak`), for the legend.
    pub mark: &'static str,
    /// The amplitude measure of the peaks (the y axis names it).
    pub amplitude: ewr_solve::Amplitude,
}

/// Peak amplitude against each swept parameter, one panel per parameter side by side, the
/// optimum (smallest peak) marked: the damper design curves.
pub fn design(path: &Path, title: &str, panels: &[DesignPanel]) -> Res {
    render!(path, (700 * panels.len().clamp(1, 3) as u32, 600), |root| {
        draw_design(root, title, panels)
    })
}

fn draw_design<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    panels: &[DesignPanel],
) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(e("title"))?;
    let cols = panels.len().clamp(1, 3);
    let rows = panels.len().div_ceil(cols).max(1);
    let areas = root.split_evenly((rows, cols));
    for (panel, area) in panels.iter().zip(&areas) {
        let pts = panel.series.iter().flat_map(|s| &s.1);
        let (x0, x1) = bounds(pts.clone().map(|p| p.0));
        let (a0, a1) = log_bounds(pts.map(|p| p.1));
        // More than a few series: their legend goes in a strip under the chart, where it
        // hides nothing.
        let strip = panel.series.len() > 3 && panel.series.len() <= MAX_LEGEND;
        let (area, below) = if strip {
            let rows = panel.series.len().div_ceil(3) as u32;
            let h = area.dim_in_pixel().1;
            area.split_vertically(h.saturating_sub(22 * rows + 10))
        } else {
            (area.clone(), area.clone())
        };
        let area = &area;
        let mut ch = ChartBuilder::on(area)
            .caption(
                format!("peak against {}", panel.parameter),
                ("sans-serif", 17),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                x0..x1,
                (a0..a1).log_scale().with_key_points(log_ticks(a0, a1)),
            )
            .map_err(e("axes"))?;
        ch.configure_mesh()
            .x_desc(panel.parameter.as_str())
            .y_desc(format!("peak {}", panel.amplitude.formula()))
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(e("mesh"))?;
        // The optimum's parameter value, marked on the axis where a designer reads it.
        let (ox, oy) = panel.optimum;
        ch.draw_series(DashedLineSeries::new(
            [(ox, a0), (ox, a1)],
            5,
            4,
            RED.mix(0.7).stroke_width(1),
        ))
        .map_err(e("optimum"))?;
        ch.draw_series([Text::new(
            tick(&ox),
            (ox, a0 * (a1 / a0).powf(0.03)),
            ("sans-serif", 14).into_font().color(&RED),
        )])
        .map_err(e("optimum"))?;
        let many = panel.series.len() > MAX_LEGEND;
        for (i, (label, xy)) in panel.series.iter().enumerate() {
            let color = if panel.series.len() > COLORS.len() {
                scale_color(i as f64 / (panel.series.len() - 1) as f64)
            } else {
                COLORS[i % COLORS.len()]
            };
            let s = ch
                .draw_series(LineSeries::new(xy.iter().copied(), color.stroke_width(2)))
                .map_err(e("curve"))?;
            if strip {
                let cols = 3;
                let (w, _) = below.dim_in_pixel();
                let x = 70 + (i % cols) as i32 * ((w as i32 - 80) / cols as i32);
                let y = 4 + (i / cols) as i32 * 22;
                below
                    .draw(&PathElement::new(
                        vec![(x, y + 8), (x + 24, y + 8)],
                        color.stroke_width(3),
                    ))
                    .map_err(e("legend"))?;
                below
                    .draw(&Text::new(label.clone(), (x + 30, y), ("sans-serif", 13)))
                    .map_err(e("legend"))?;
            } else if panel.series.len() > 1 && !many {
                s.label(label.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            }
            ch.draw_series(xy.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(e("points"))?;
        }
        ch.draw_series([Circle::new((ox, oy), 9, RED.stroke_width(3))])
            .map_err(e("optimum"))?
            .label(format!(
                "{}: {} = {}, peak {}",
                panel.mark,
                panel.parameter,
                tick(&ox),
                tick(&oy)
            ))
            .legend(|(x, y)| Circle::new((x + 10, y), 6, RED.stroke_width(3)));
        let frac: Vec<(f64, f64)> = panel
            .series
            .iter()
            .flat_map(|s| line_fractions(&s.1, (x0, x1), (a0, a1)))
            .collect();
        let entries = 1 + if panel.series.len() > 1 && !many && !strip {
            panel.series.len()
        } else {
            0
        };
        ch.configure_series_labels()
            .position(legend_corner(&frac, 0.5, (entries as f64 * 20.0 + 12.0) / 480.0).0)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(e("legend"))?;
    }
    Ok(())
}

/// A linear axis whose labelled ticks are given: plotters' `WithKeyPoints` over a plain f64
/// range has no value formatter, so a mesh cannot be drawn on it.
#[derive(Clone)]
struct TickedAxis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl plotters::coord::ranged1d::Ranged for TickedAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// The figure of a peak locus: what [`peak_locus`] draws.
pub struct PeakLocusFigure<'a> {
    /// Figure title.
    pub title: String,
    /// The parameter's name (x axis).
    pub parameter: &'a str,
    /// The locus, sorted by value.
    pub points: &'a [crate::LocusPoint],
    /// The smallest peak `(value, amplitude)`, marked.
    pub optimum: Option<(f64, f64)>,
    /// How frequencies and amplitudes read.
    pub axis: FrequencyAxis,
}

/// Legend label of the vertical lines where the highest peak changes resonance.
const SWITCH_LABEL: &str = "highest peak changes resonance";

/// Legend label of unstable peaks.
const UNSTABLE_PEAK_LABEL: &str = "unstable peak (past a fold: a sweep jumps off first)";

/// The peak locus: the highest peak's amplitude (top, logarithmic) and frequency (bottom)
/// against the parameter, on one x axis; where the highest peak changes from one resonance to
/// another the frequency line breaks and a dashed line crosses both panels. A parameter
/// spanning more than a factor 30 (friction loads from 1 to 100) is drawn on a log axis.
pub fn peak_locus(path: &Path, fig: &PeakLocusFigure<'_>) -> Res {
    let extra = if fig.axis.units.is_some() { 30 } else { 0 };
    render!(path, (1000, 820 + extra), |root| draw_peak_locus(root, fig))
}

fn draw_peak_locus<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &PeakLocusFigure<'_>,
) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let axis = &fig.axis;
    let root = titled(root, &fig.title, axis.units.as_deref())?;
    let pts = fig.points;
    let (v0, v1) = extent(pts.iter().map(|p| p.value));
    let log_x = v0 > 0.0 && v1 / v0 > 30.0;
    let fx = |v: f64| if log_x { v.log10() } else { v };
    let (x0, x1) = if log_x {
        let (a, b) = log_bounds([v0, v1].into_iter());
        (a.log10(), b.log10())
    } else {
        bounds(pts.iter().map(|p| p.value))
    };
    let x_ticks: Vec<f64> = if log_x {
        log_ticks(10f64.powf(x0), 10f64.powf(x1))
            .into_iter()
            .map(f64::log10)
            .collect()
    } else {
        round_ticks(x0, x1)
    };
    let x_axis = TickedAxis {
        lo: x0,
        hi: x1,
        ticks: x_ticks,
    };
    let x_label = move |x: &f64| {
        if log_x {
            tick(&10f64.powf(*x))
        } else {
            linear_tick(x1 - x0)(x)
        }
    };
    let amps = pts.iter().map(|p| p.amplitude);
    let (a0, a1) = log_bounds(amps.chain(fig.optimum.map(|o| o.1)));
    let (w0, w1) = bounds(pts.iter().map(|p| axis.x(p.omega)));
    let height = root.dim_in_pixel().1;
    let (top, bottom) = root.split_vertically(height * 56 / 100);
    // Where the highest peak changes resonance: between the two values.
    let switches: Vec<f64> = pts
        .windows(2)
        .filter(|w| w[1].switched)
        .map(|w| 0.5 * (fx(w[0].value) + fx(w[1].value)))
        .collect();
    let blue = COLORS[0];
    let grey = BLACK.mix(0.55);

    let mut ch = ChartBuilder::on(&top)
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(85)
        .build_cartesian_2d(
            x_axis.clone(),
            (a0..a1).log_scale().with_key_points(log_ticks(a0, a1)),
        )
        .map_err(e("axes"))?;
    ch.configure_mesh()
        .x_label_formatter(&x_label)
        .y_label_formatter(&tick)
        .y_desc(axis.amplitude_label(&format!("peak {}", axis.amplitude.formula())))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(e("mesh"))?;
    let mut entries = 1;
    for (k, &x) in switches.iter().enumerate() {
        let s = ch
            .draw_series(DashedLineSeries::new(
                [(x, a0), (x, a1)],
                6,
                4,
                grey.stroke_width(2),
            ))
            .map_err(e("switch"))?;
        if k == 0 {
            entries += 1;
            s.label(SWITCH_LABEL).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(2))
            });
        }
    }
    let line: Vec<(f64, f64)> = pts.iter().map(|p| (fx(p.value), p.amplitude)).collect();
    ch.draw_series(LineSeries::new(line.clone(), blue.stroke_width(2)))
        .map_err(e("curve"))?
        .label(format!("highest peak {}", axis.amplitude.formula()))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], blue.stroke_width(2)));
    ch.draw_series(line.iter().map(|&p| Circle::new(p, 3, blue.filled())))
        .map_err(e("points"))?;
    let unstable: Vec<(f64, f64)> = pts
        .iter()
        .filter(|p| p.stable == Some(false))
        .map(|p| (fx(p.value), p.amplitude))
        .collect();
    if !unstable.is_empty() {
        entries += 1;
        ch.draw_series(
            unstable
                .iter()
                .map(|&p| Circle::new(p, 7, ORANGE.stroke_width(2))),
        )
        .map_err(e("unstable"))?
        .label(UNSTABLE_PEAK_LABEL)
        .legend(|(x, y)| Circle::new((x + 10, y), 6, ORANGE.stroke_width(2)));
    }
    if let Some((ov, oa)) = fig.optimum.filter(|o| o.0.is_finite() && o.1 > 0.0) {
        entries += 1;
        ch.draw_series([Circle::new((fx(ov), oa), 9, RED.stroke_width(3))])
            .map_err(e("optimum"))?
            .label(format!(
                "optimum: {} = {}, peak {}",
                fig.parameter,
                tick(&ov),
                tick(&oa)
            ))
            .legend(|(x, y)| Circle::new((x + 10, y), 6, RED.stroke_width(3)));
    }
    let frac = line_fractions(&line, (x0, x1), (a0, a1));
    ch.configure_series_labels()
        .position(legend_corner(&frac, 0.5, (entries as f64 * 21.0 + 12.0) / 400.0).0)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.85))
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(e("legend"))?;

    let mut ch = ChartBuilder::on(&bottom)
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(85)
        .build_cartesian_2d(x_axis, w0..w1)
        .map_err(e("axes"))?;
    ch.configure_mesh()
        .y_labels(8)
        .light_line_style(WHITE)
        .x_label_formatter(&x_label)
        .y_label_formatter(&linear_tick(w1 - w0))
        .x_desc(if log_x {
            format!("{} (log scale)", fig.parameter)
        } else {
            fig.parameter.to_string()
        })
        .y_desc(format!("peak at {}", axis.label()))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(e("mesh"))?;
    for &x in &switches {
        ch.draw_series(DashedLineSeries::new(
            [(x, w0), (x, w1)],
            6,
            4,
            grey.stroke_width(2),
        ))
        .map_err(e("switch"))?;
    }
    // One line per stretch on one resonance: a switch is a jump, not a slope.
    let mut run: Vec<(f64, f64)> = Vec::new();
    for p in pts {
        if p.switched && !run.is_empty() {
            ch.draw_series(LineSeries::new(
                std::mem::take(&mut run),
                blue.stroke_width(2),
            ))
            .map_err(e("frequency"))?;
        }
        run.push((fx(p.value), axis.x(p.omega)));
    }
    ch.draw_series(LineSeries::new(run, blue.stroke_width(2)))
        .map_err(e("frequency"))?;
    ch.draw_series(
        pts.iter()
            .map(|p| Circle::new((fx(p.value), axis.x(p.omega)), 3, blue.filled())),
    )
    .map_err(e("points"))?;
    Ok(())
}

/// A two-parameter grid of peak amplitudes.
pub struct HeatMap {
    /// Name and values of the x parameter (columns).
    pub x: (String, Vec<f64>),
    /// Name and values of the y parameter (rows).
    pub y: (String, Vec<f64>),
    /// Peak per cell, `z[iy * nx + ix]`; NaN where the case failed.
    pub z: Vec<f64>,
    /// Cell of the optimum `(ix, iy)`.
    pub optimum: (usize, usize),
}

/// Colour of `t` in [0, 1] on a blue-green-yellow scale (viridis-like).
fn scale_color(t: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Heat map of the peak amplitude over a two-parameter grid (log colour scale, failed cases
/// grey, the optimum outlined), with a colour bar.
pub fn heat_map(path: &Path, title: &str, map: &HeatMap) -> Res {
    render!(path, (1000, 700), |root| draw_heat_map(root, title, map))
}

fn draw_heat_map<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    map: &HeatMap,
) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(e("title"))?;
    let (main, bar) = root.split_horizontally(860);
    let (nx, ny) = (map.x.1.len(), map.y.1.len());
    let (l0, l1) = map
        .z
        .iter()
        .filter(|v| **v > 0.0 && v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v.log10()), b.max(v.log10()))
        });
    let (l0, l1) = if l0.is_finite() {
        (l0, l1.max(l0 + 1e-12))
    } else {
        (0.0, 1.0)
    };
    let t = |v: f64| (v.log10() - l0) / (l1 - l0);
    let fmt = |vals: &[f64]| {
        let vals = vals.to_vec();
        move |i: &f64| {
            let k = i.floor();
            if (i - k - 0.5).abs() < 1e-9 && k >= 0.0 && (k as usize) < vals.len() {
                format!("{}", vals[k as usize])
            } else {
                String::new()
            }
        }
    };
    let (fx, fy) = (fmt(&map.x.1), fmt(&map.y.1));
    let mut ch = ChartBuilder::on(&main)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..nx as f64, 0.0..ny as f64)
        .map_err(e("axes"))?;
    ch.configure_mesh()
        .disable_mesh()
        .x_desc(map.x.0.as_str())
        .y_desc(map.y.0.as_str())
        .x_labels(2 * nx + 1)
        .y_labels(2 * ny + 1)
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e("mesh"))?;
    let cells = (0..ny).flat_map(|iy| (0..nx).map(move |ix| (ix, iy)));
    ch.draw_series(cells.map(|(ix, iy)| {
        let v = map.z[iy * nx + ix];
        let color = if v > 0.0 && v.is_finite() {
            scale_color(t(v))
        } else {
            RGBColor(190, 190, 190)
        };
        Rectangle::new(
            [(ix as f64, iy as f64), (ix as f64 + 1.0, iy as f64 + 1.0)],
            color.filled(),
        )
    }))
    .map_err(e("cells"))?;
    let (ox, oy) = map.optimum;
    ch.draw_series([Rectangle::new(
        [(ox as f64, oy as f64), (ox as f64 + 1.0, oy as f64 + 1.0)],
        RED.stroke_width(4),
    )])
    .map_err(e("optimum"))?;
    // The colour is the peak's log10; the bar reads in the peak itself.
    log_colour_bar(&bar, "peak", l0, l1)?;
    Ok(())
}

/// One quantity of a backbone point, for a panel.
type ModeValue = fn(&ewr_solve::nonlinear_mode::ModePoint) -> f64;

/// The frequency-plane panel of a backbone figure: `(w, amplitude)` polylines of the backbone,
/// the forced response synthesised from the mode and, where swept, `ewr frc`'s.
pub struct ResponsePanel {
    /// What the amplitude is (the y axis).
    pub label: String,
    /// The backbone.
    pub backbone: Vec<(f64, f64)>,
    /// The response synthesised from the mode.
    pub synthesis: Vec<(f64, f64)>,
    /// The forced response computed by `frc` (empty where not swept).
    pub frc: Vec<(f64, f64)>,
}

impl ResponsePanel {
    /// The panel of mode `points` of `model`: the first harmonic of the forced DOF the mode
    /// moves most ([`ewr_solve::nonlinear_mode::response_dof`]), where a forced response
    /// (`frc`, that DOF's `|Q_1|`, empty if not swept) compares;
    /// the modal amplitude where the model has no forcing at harmonic 1.
    pub fn of_mode(
        model: &ewr_model::Model,
        points: &[ewr_solve::nonlinear_mode::ModePoint],
        synthesis: &ewr_solve::nonlinear_mode::Synthesis,
        frc: Vec<(f64, f64)>,
    ) -> Self {
        let converged = points.iter().filter(|p| p.converged);
        match ewr_solve::nonlinear_mode::response_dof(model, points, synthesis) {
            Some(dof) => ResponsePanel {
                label: format!("|first harmonic| of DOF {dof} (forced)"),
                backbone: converged.map(|p| (p.omega, p.shape[dof].norm())).collect(),
                synthesis: synthesis
                    .curve
                    .iter()
                    .zip(&synthesis.curve_dofs)
                    .map(|(c, d)| (c.0, d[dof]))
                    .collect(),
                frc,
            },
            None => ResponsePanel {
                label: "modal amplitude".into(),
                backbone: converged.map(|p| (p.omega, p.amplitude)).collect(),
                synthesis: synthesis.curve.clone(),
                frc: Vec::new(),
            },
        }
    }
}

/// The title of mode `mode`'s backbone figure: the model's title (to its first colon) and the
/// method.
pub fn backbone_title(model: &ewr_model::Model, mode: usize) -> String {
    format!(
        "{}: nonlinear mode {mode} (EPMC, exact friction)",
        model
            .title
            .as_deref()
            .map_or("model", |t| t.split(':').next().unwrap_or(t)),
    )
}

/// A nonlinear mode's backbone: natural frequency and modal damping ratio against the modal
/// amplitude (logarithmic), unconverged points as red crosses; and the forced response
/// synthesised from the mode around the backbone in the frequency plane, with `ewr frc`'s.
pub fn backbone(
    path: &Path,
    title: &str,
    points: &[ewr_solve::nonlinear_mode::ModePoint],
    response: &ResponsePanel,
) -> Res {
    render!(path, (2000, 600), |root| draw_backbone(
        root, title, points, response
    ))
}

fn draw_backbone<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    points: &[ewr_solve::nonlinear_mode::ModePoint],
    response: &ResponsePanel,
) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(e("title"))?;
    let (left, rest) = root.split_horizontally(667);
    let (right, third) = rest.split_horizontally(667);
    // The frequency plane: the backbone, the response synthesised from the mode, frc's.
    {
        let ok = &response.backbone;
        // Near the resonance only: far from it one mode says little.
        let (b0, b1) = bounds(ok.iter().chain(&response.frc).map(|p| p.0));
        let (w0, w1) = (
            b0 - 0.5 * (b1 - b0) - 0.05 * b0,
            b1 + 0.5 * (b1 - b0) + 0.05 * b1,
        );
        let synthesis: Vec<(f64, f64)> = response
            .synthesis
            .iter()
            .copied()
            .filter(|p| p.0 >= w0 && p.0 <= w1)
            .collect();
        let (a0, a1) = log_bounds(ok.iter().chain(&response.frc).map(|p| p.1));
        let mut ch = ChartBuilder::on(&third)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(85)
            .build_cartesian_2d(
                w0..w1,
                (a0..a1).log_scale().with_key_points(log_ticks(a0, a1)),
            )
            .map_err(e("axes"))?;
        ch.configure_mesh()
            .x_desc("frequency w [rad per time unit]")
            .y_desc(response.label.as_str())
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(e("mesh"))?;
        ch.draw_series(LineSeries::new(ok.clone(), COLORS[0].stroke_width(2)))
            .map_err(e("backbone"))?
            .label("backbone")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], COLORS[0].stroke_width(2))
            });
        ch.draw_series(LineSeries::new(synthesis, COLORS[1].stroke_width(2)))
            .map_err(e("synthesis"))?
            .label("forced response from this mode (model's forcing)")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], COLORS[1].stroke_width(2))
            });
        if !response.frc.is_empty() {
            ch.draw_series(
                response
                    .frc
                    .iter()
                    .map(|&q| Circle::new(q, 2, COLORS[2].filled())),
            )
            .map_err(e("frc"))?
            .label("ewr frc (all modes)")
            .legend(|(x, y)| Circle::new((x + 10, y), 3, COLORS[2].filled()));
        }
        ch.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(e("legend"))?;
    }
    let (a0, a1) = log_bounds(points.iter().map(|p| p.amplitude));
    let panels: [(&DrawingArea<DB, Shift>, &str, ModeValue); 2] = [
        (&left, "natural frequency w [rad per time unit]", |p| {
            p.omega
        }),
        (&right, "modal damping ratio xi / (2 w)", |p| {
            p.damping_ratio
        }),
    ];
    for (area, label, y) in panels {
        let (y0, y1) = bounds(points.iter().filter(|p| p.converged).map(y));
        let mut ch = ChartBuilder::on(area)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(85)
            .build_cartesian_2d(
                (a0..a1).log_scale().with_key_points(log_ticks(a0, a1)),
                y0..y1,
            )
            .map_err(e("axes"))?;
        ch.configure_mesh()
            .x_desc("modal amplitude sqrt(Q1^H M Q1)")
            .y_desc(label)
            .x_label_formatter(&tick)
            .y_label_formatter(&narrow_tick(y0, y1))
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(e("mesh"))?;
        let ok: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.converged)
            .map(|p| (p.amplitude, y(p)))
            .collect();
        ch.draw_series(LineSeries::new(ok.clone(), COLORS[0].stroke_width(2)))
            .map_err(e("backbone"))?;
        ch.draw_series(ok.iter().map(|&q| Circle::new(q, 3, COLORS[0].filled())))
            .map_err(e("points"))?;
        let bad = points
            .iter()
            .filter(|p| !p.converged && y(p).is_finite())
            .map(|p| Cross::new((p.amplitude, y(p).clamp(y0, y1)), 5, RED));
        ch.draw_series(bad).map_err(e("failed points"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::drawing::DrawingAreaErrorKind;
    use plotters_backend::DrawingErrorKind;

    #[test]
    fn a_narrow_axis_gets_the_decimals_its_steps_need() {
        let f = narrow_tick(3509.07, 3512.11);
        let labels: Vec<String> = [3509.0, 3509.5, 3510.0, 3510.5, 3511.0]
            .iter()
            .map(&f)
            .collect();
        assert_eq!(labels, ["3509", "3509.5", "3510", "3510.5", "3511"]);
        // A span wide beside its values keeps `tick`'s four significant digits.
        let g = narrow_tick(0.6, 1.5);
        assert_eq!(g(&0.75), tick(&0.75));
        assert_eq!(g(&1.0), "1");
    }

    #[test]
    fn model_titles_shorten_to_a_title_line() {
        let t = "single-contact-3d: one mass on a 3-D friction contact to ground (2 tangential \
                 directions + unilateral normal)";
        assert_eq!(short_title(t), "single-contact-3d");
        let t = "Pretwisted cantilever blade (CalculiX, 10 x 2 x 1 C3D20) with two tip-shroud \
                 friction contacts";
        let s = short_title(t);
        assert!(
            s.starts_with("Pretwisted cantilever blade") && s.ends_with("...") && s.len() <= 63,
            "{s}"
        );
        assert_eq!(short_title("my damper"), "my damper");
    }

    #[test]
    fn tick_labels_are_short_plain_numbers() {
        for (v, want) in [
            (0.0, "0"),
            (9.999_999_9e-5, "1e-4"),
            (1e-4, "1e-4"),
            (2.5e-6, "2.5e-6"),
            (0.001, "0.001"),
            (0.300_000_000_000_000_04, "0.3"),
            (-0.015, "-0.015"),
            (1500.0, "1500"),
            (123_456.0, "1.235e5"),
            (99_999.999, "1e5"),
        ] {
            assert_eq!(tick(&v), want, "{v}");
        }
        assert_eq!(linear_tick(0.1)(&6.9e-18), "0");
        assert_eq!(linear_tick(1e-9)(&6.9e-18), "6.9e-18");
    }

    #[test]
    fn drawing_errors_read_as_sentences() {
        let err: DrawingAreaErrorKind<std::io::Error> = DrawingAreaErrorKind::BackendError(
            DrawingErrorKind::DrawingError(std::io::Error::other("No space left on device")),
        );
        let m = e("write")(err);
        assert_eq!(
            m, "cannot draw the figure (write): No space left on device",
            "{m}"
        );
    }
}
