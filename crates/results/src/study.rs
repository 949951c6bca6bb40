//! What a study writes beside its result file: the summary table and the figures (curves,
//! design curves with the optimum, heat map), for `ewr study`, `ewr study merge` and Python.

use crate::figures::{self, DesignPanel, FrcLine, HeatMap};
use ewr_study::{
    CaseResult, CaseStatus, Event, ParamKind, RunOptions, Shard, Study, StudyInfo, cases_dir_for,
    write_study_file, write_summary_csv,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A study run to its output: which cases, where, how. [`StudyRun::run`] does what `ewr
/// study` does between reading the study file and reporting: claims the output, computes or
/// reuses every case, writes the result file, then (unless sharded) the summary table and the
/// figures.
pub struct StudyRun<'a> {
    /// The loaded study.
    pub study: &'a Study,
    /// The result file (`STUDY.h5`); a shard writes `STUDY.shard-I-of-N.h5` beside it.
    pub output: PathBuf,
    /// Only this shard's cases.
    pub shard: Option<Shard>,
    /// Cases computed at the same time (default: one per core).
    pub jobs: Option<usize>,
    /// Recompute cases an earlier run recorded as failed.
    pub retry_failed: bool,
    /// Draw the figures.
    pub plots: bool,
    /// Stop starting new cases once set (the finished ones stay in the cases folder).
    pub cancel: Option<Arc<AtomicBool>>,
}

/// Why a study run stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StudyRunError {
    /// Another running study holds the output (bad input: choose another output).
    #[error("{0}")]
    Busy(String),
    /// A file could not be written, or the cases folder belongs to another study.
    #[error("{0}")]
    Work(String),
}

impl From<String> for StudyRunError {
    fn from(e: String) -> Self {
        StudyRunError::Work(e)
    }
}

/// What a study run produced.
pub struct StudyOutcome {
    /// Every case of the run, by index.
    pub results: Vec<CaseResult>,
    /// The files written: the result file, then the table and figures.
    pub written: Vec<PathBuf>,
    /// Cases found finished in the cases folder and reused.
    pub reused: usize,
    /// Whether the run was cancelled before every case was computed (nothing but the cases
    /// folder was written then).
    pub cancelled: bool,
}

impl StudyRun<'_> {
    /// The file this run writes its cases to.
    pub fn output_file(&self) -> PathBuf {
        match self.shard {
            Some(s) => sibling(
                &self.output,
                &format!(".shard-{}-of-{}.h5", s.index, s.count),
            ),
            None => self.output.clone(),
        }
    }

    /// The table and figures written beside the result file (none for a shard).
    pub fn derived_outputs(&self) -> Vec<PathBuf> {
        if self.shard.is_some() {
            return Vec::new();
        }
        let out = self.output_file();
        [".csv", ".frc.png", ".peaks.png", ".map.png"]
            .iter()
            .map(|x| sibling(&out, x))
            .collect()
    }

    /// The cases of this run (a shard's, or all).
    pub fn indices(&self) -> Vec<usize> {
        (0..self.study.cases.len())
            .filter(|&i| self.shard.is_none_or(|s| s.owns(i)))
            .collect()
    }

    /// Runs the cases, reporting each as it finishes, and writes the outputs.
    pub fn run(&self, report: &(dyn Fn(Event<'_>) + Sync)) -> Result<StudyOutcome, StudyRunError> {
        let output = self.output_file();
        let cases_dir = cases_dir_for(&output);
        // Held until the study file is written: a second study on the same output stops here.
        let _lock =
            ewr_study::lock_output(&cases_dir, &self.study.path).map_err(StudyRunError::Busy)?;
        let reused = std::sync::atomic::AtomicUsize::new(0);
        let counting = |ev: Event<'_>| {
            if let Event::Reused(_) = ev {
                reused.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            report(ev)
        };
        let opts = RunOptions {
            cases_dir,
            jobs: self.jobs,
            retry_failed: self.retry_failed,
            cancel: self.cancel.clone(),
        };
        let indices = self.indices();
        let results = ewr_study::run(self.study, &indices, &opts, &counting)?;
        let reused = reused.into_inner();
        if results.len() < indices.len() {
            return Ok(StudyOutcome {
                results,
                written: Vec::new(),
                reused,
                cancelled: true,
            });
        }
        let info = StudyInfo::of(self.study);
        write_study_file(&output, &info, self.shard, &results)?;
        let mut written = vec![output.clone()];
        if self.shard.is_none() {
            written.extend(write_study_outputs(&output, &info, &results, self.plots)?);
        }
        Ok(StudyOutcome {
            results,
            written,
            reused,
            cancelled: false,
        })
    }
}

/// `OUT.h5` -> `OUT<suffix>` (e.g. `.csv`, `.frc.png`).
pub fn sibling(output: &Path, suffix: &str) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    output.with_file_name(format!("{stem}{suffix}"))
}

/// Summary CSV and figures next to the result file.
pub fn write_study_outputs(
    output: &Path,
    info: &StudyInfo,
    results: &[CaseResult],
    plots: bool,
) -> Result<Vec<PathBuf>, String> {
    let csv = sibling(output, ".csv");
    write_summary_csv(&csv, info, results)?;
    let mut written = vec![csv];
    if !plots {
        return Ok(written);
    }
    let title = if info.title.is_empty() {
        info.model.clone()
    } else {
        info.title.clone()
    };
    // Many curves are coloured by the first numeric parameter (a colour bar, not a legend).
    let colour_by = info.parameters.iter().position(|k| k.numeric());
    let lines: Vec<FrcLine> = results
        .iter()
        .filter(|r| !r.omega.is_empty())
        .map(|r| FrcLine {
            label: r.key.clone(),
            points: (0..r.omega.len())
                .map(|i| (r.omega[i], r.amp_norm[i], r.converged[i]))
                .collect(),
            peaks: r
                .peaks_omega
                .iter()
                .zip(&r.peaks_amplitude)
                .map(|(w, a)| (*w, *a))
                .collect(),
            value: colour_by.map(|p| r.values[p].num()),
            inaccurate: Vec::new(),
            unstable: figures::unstable_stretches(
                &(0..r.omega.len())
                    .map(|i| figures::PointMark {
                        omega: r.omega[i],
                        amplitude: r.amp_norm[i],
                        converged: r.converged[i],
                        unstable: r.stable.get(i) == Some(&0),
                    })
                    .collect::<Vec<_>>(),
            ),
        })
        .collect();
    if !lines.is_empty() {
        let p = sibling(output, ".frc.png");
        let title = format!("{title}: frequency response per case");
        let style = figures::FrcStyle {
            title: &title,
            axis: figures::FrequencyAxis {
                amplitude: info.amplitude,
                ..Default::default()
            },
            parameter: colour_by.map(|p| info.parameters[p].name()),
        };
        let cases = results.iter().filter(|r| !r.omega.is_empty());
        match colour_by.and_then(|c| small_multiples(info, c, cases.zip(lines.clone()))) {
            Some(panels) => figures::frc_grid(&p, &style, &panels)?,
            None => figures::frc_lines(&p, &style, &lines)?,
        }
        written.push(p);
    }
    let mut panels = Vec::new();
    if let Some(k) = info.optimize {
        panels.extend(locus_panel(info, k, results));
    }
    panels.extend(design_panels(info, results));
    if !panels.is_empty() {
        let p = sibling(output, ".peaks.png");
        figures::design(
            &p,
            &format!("{title}: peak amplitude (design curves)"),
            &panels,
        )?;
        written.push(p);
    }
    if let Some(map) = heat_map(info, results) {
        let p = sibling(output, ".map.png");
        figures::heat_map(&p, &format!("{title}: peak amplitude"), &map)?;
        written.push(p);
    }
    Ok(written)
}

/// A case's values of every parameter but the `except`-th, as `name{eq}value`.
fn other_values(info: &StudyInfo, r: &CaseResult, except: usize, eq: &str) -> Vec<String> {
    info.parameters
        .iter()
        .zip(&r.values)
        .enumerate()
        .filter(|(q, _)| *q != except)
        .map(|(_, (k, v))| format!("{}{eq}{v}", k.name()))
        .collect()
}

/// The study's curves grouped by the values of every parameter but the colour's (`colour`),
/// one panel per group in the order first met, where there are 2 to
/// [`figures::MAX_PANELS`] groups; `None` for one group (nothing to separate) or more.
fn small_multiples<'a>(
    info: &StudyInfo,
    colour: usize,
    cases: impl Iterator<Item = (&'a CaseResult, FrcLine)>,
) -> Option<Vec<figures::FrcPanel>> {
    let mut panels: Vec<figures::FrcPanel> = Vec::new();
    for (r, line) in cases {
        let caption = other_values(info, r, colour, " = ").join(", ");
        match panels.iter_mut().find(|p| p.caption == caption) {
            Some(p) => p.lines.push(line),
            None => panels.push(figures::FrcPanel {
                caption,
                lines: vec![line],
            }),
        }
        if panels.len() > figures::MAX_PANELS {
            return None;
        }
    }
    (panels.len() > 1).then_some(panels)
}

/// The case with the smallest resonance peak inside the band, among fully converged cases if
/// there are any (a curve with unconverged points may miss its peak).
pub fn optimum(results: &[CaseResult]) -> Option<&CaseResult> {
    extreme_peak(results, std::cmp::Ordering::Less)
}

/// The case whose peak is the extreme `toward` (`Less`: smallest, `Greater`: largest) of the
/// cases with a peak inside the band, among fully converged cases if there are any.
fn extreme_peak(results: &[CaseResult], toward: std::cmp::Ordering) -> Option<&CaseResult> {
    // Cases whose largest amplitude sits at the band's edge have no peak to compare.
    let pick = |ok_only: bool| {
        results
            .iter()
            .filter(|r| r.peak_amplitude.is_finite() && !r.peak_at_edge())
            .filter(|r| !ok_only || r.status == CaseStatus::Ok)
            .reduce(|a, b| {
                if b.peak_amplitude.total_cmp(&a.peak_amplitude) == toward {
                    b
                } else {
                    a
                }
            })
    };
    pick(true).or_else(|| pick(false))
}

/// The case a study is read for, and what it is called: the smallest peak (the optimum of a
/// damper design), or for a study over the engine order the largest (the critical engine
/// order of an interference diagram: no value of it is a design choice).
pub fn highlight<'a>(
    info: &StudyInfo,
    results: &'a [CaseResult],
) -> Option<(&'a CaseResult, &'static str)> {
    if info.parameters.contains(&ParamKind::EngineOrder) {
        return extreme_peak(results, std::cmp::Ordering::Greater).map(|r| (r, "largest peak"));
    }
    optimum(results).map(|r| (r, "optimum"))
}

fn design_panels(info: &StudyInfo, results: &[CaseResult]) -> Vec<DesignPanel> {
    let Some((best, mark)) = highlight(info, results) else {
        return Vec::new();
    };
    let mut panels = Vec::new();
    for (p, kind) in info.parameters.iter().enumerate() {
        if !kind.numeric() {
            continue;
        }
        // One series per combination of the other parameters.
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for r in results.iter().filter(|r| r.peak_amplitude.is_finite()) {
            let others = other_values(info, r, p, "=");
            let label = if others.is_empty() {
                "peak".to_string()
            } else {
                others.join(",")
            };
            let pt = (r.values[p].num(), r.peak_amplitude);
            match series.iter_mut().find(|s| s.0 == label) {
                Some(s) => s.1.push(pt),
                None => series.push((label, vec![pt])),
            }
        }
        for s in &mut series {
            s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        panels.push(DesignPanel {
            parameter: kind.name().to_string(),
            series,
            optimum: (best.values[p].num(), best.peak_amplitude),
            mark,
            amplitude: info.amplitude,
        });
    }
    panels
}

/// An `[optimize]` study's peak loci: peak amplitude against the optimised parameter, one
/// line per case, the best case's optimum marked.
fn locus_panel(info: &StudyInfo, k: ParamKind, results: &[CaseResult]) -> Option<DesignPanel> {
    let best = optimum(results)?;
    let series = results
        .iter()
        .filter(|r| !r.locus_value.is_empty())
        .map(|r| {
            let label = if info.parameters.is_empty() {
                "peak".to_string()
            } else {
                r.key.clone()
            };
            let pts = r
                .locus_value
                .iter()
                .zip(&r.locus_amplitude)
                .map(|(v, a)| (*v, *a))
                .collect();
            (label, pts)
        })
        .collect();
    Some(DesignPanel {
        parameter: k.name().to_string(),
        series,
        optimum: (best.optimum_value, best.peak_amplitude),
        mark: "optimum",
        amplitude: info.amplitude,
    })
}

fn heat_map(info: &StudyInfo, results: &[CaseResult]) -> Option<HeatMap> {
    if info.parameters.len() != 2 || !info.parameters.iter().all(|k| k.numeric()) {
        return None;
    }
    let distinct = |p: usize| {
        let mut v: Vec<f64> = results.iter().map(|r| r.values[p].num()).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    let (xs, ys) = (distinct(0), distinct(1));
    if xs.len() < 2 || ys.len() < 2 || xs.len() * ys.len() != results.len() {
        return None;
    }
    let mut z = vec![f64::NAN; xs.len() * ys.len()];
    let cell = |r: &CaseResult| {
        let ix = xs.iter().position(|&x| x == r.values[0].num())?;
        let iy = ys.iter().position(|&y| y == r.values[1].num())?;
        Some((ix, iy))
    };
    for r in results {
        let (ix, iy) = cell(r)?;
        z[iy * xs.len() + ix] = r.peak_amplitude;
    }
    let optimum = cell(highlight(info, results)?.0)?;
    Some(HeatMap {
        x: (info.parameters[0].name().to_string(), xs.clone()),
        y: (info.parameters[1].name().to_string(), ys.clone()),
        z,
        optimum,
    })
}
