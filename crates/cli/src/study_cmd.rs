//! `ewr study` (a parameter study: many frequency response curves, their peaks, the damper
//! design curve) and `ewr study merge` (combine the shards of a study run as a job array).

use crate::Failure;
use crate::paths::named;
use crate::plot::{self, DesignPanel, FrcLine, HeatMap};
use clap::{Args, Subcommand};
use ewr_study::{
    CaseResult, CaseStatus, Event, ParamKind, RunOptions, Shard, Study, StudyInfo, cases_dir_for,
    merge, write_study_file, write_summary_csv,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Long help of `ewr study`.
pub const STUDY_ABOUT: &str = "Parameter study: one frequency response curve per case of a \
    grid (or list) over mu_n, forcing scale, a DOF mass, rho, friction law and harmonics, \
    given in a TOML study file (docs/study.md). Cases run in parallel; each finished case is \
    written at once to its own file in OUT.h5.cases/, so an interrupted study (Ctrl-C, kill, \
    crash) keeps every finished case and rerunning the same command resumes where it \
    stopped. At the end OUT.h5 holds every case (parameters, curve, peak) and a summary \
    table, also written as OUT.csv, with figures OUT.frc.png (curves), OUT.peaks.png (peak \
    against each parameter, optimum marked) and, for two-parameter grids, OUT.map.png.\n\n\
    On a cluster: `--shard I/N` (or a Slurm job array: SLURM_ARRAY_TASK_ID/COUNT are read) \
    runs every N-th case into OUT.shard-I-of-N.h5; `ewr study merge` combines the shards.\n\n\
    Exit codes: 0 every case converged, 1 some case failed or had unconverged points (all are \
    recorded with the reason), 2 bad study file or option (found before any work).";

/// Arguments of `ewr study`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct StudyArgs {
    /// `merge`: combine shard result files.
    #[command(subcommand)]
    pub command: Option<StudyCommand>,
    /// The study file (TOML, see docs/study.md).
    #[arg(required = true, value_name = "STUDY.toml")]
    pub study: Option<PathBuf>,
    /// Cases computed at the same time (default: one per core).
    #[arg(long, short = 'j', value_name = "N", allow_negative_numbers = true)]
    pub jobs: Option<usize>,
    /// Result file (default: the study file's name with .h5, in the current folder).
    #[arg(long, short, value_name = "STUDY.h5")]
    pub output: Option<PathBuf>,
    /// Run only shard I of N (every N-th case, from case I-1) into OUT.shard-I-of-N.h5.
    /// Default under a Slurm job array: from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Recompute cases an earlier run recorded as failed (default: keep them).
    #[arg(long)]
    pub retry_failed: bool,
    /// Write no figures.
    #[arg(long)]
    pub no_plot: bool,
    /// Check the study file and list its cases, without computing anything.
    #[arg(long)]
    pub check: bool,
}

/// Subcommands of `ewr study`.
#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Combine the shard files of a study into one result file, checking that no case is
    /// missing or duplicated; writes the same CSV and figures as a single run.
    Merge(MergeArgs),
}

/// Arguments of `ewr study merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shard result files (`*.shard-I-of-N.h5`).
    #[arg(required = true, value_name = "SHARDS")]
    pub shards: Vec<PathBuf>,
    /// The combined result file.
    #[arg(long, short, value_name = "STUDY.h5")]
    pub output: PathBuf,
    /// Write no figures.
    #[arg(long)]
    pub no_plot: bool,
}

/// `ewr study ...`.
pub fn run(a: &StudyArgs) -> Result<(), Failure> {
    match &a.command {
        Some(StudyCommand::Merge(m)) => merge_cmd(m),
        None => study_cmd(a),
    }
}

/// `OUT.h5` -> `OUT<suffix>` (e.g. `.csv`, `.frc.png`).
fn sibling(output: &Path, suffix: &str) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    output.with_file_name(format!("{stem}{suffix}"))
}

fn case_line(study: &Study, r: &CaseResult) -> String {
    let key = study.key(&study.cases[r.index]);
    match r.status {
        CaseStatus::Failed => format!("case {} [{key}]: FAILED: {}", r.index, r.reason),
        _ => {
            let note = if r.reason.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.reason)
            };
            if let Some(o) = &study.optimize {
                return format!(
                    "case {} [{key}]: optimum {} = {:.6e}: peak {:.6e} at w = {:.6}, {} values, \
                     {} solves{note}",
                    r.index,
                    o.kind.name(),
                    r.optimum_value,
                    r.peak_amplitude,
                    r.peak_omega,
                    r.locus_value.len(),
                    r.solves
                );
            }
            format!(
                "case {} [{key}]: peak {:.6e} at w = {:.6}, {} points{note}",
                r.index,
                r.peak_amplitude,
                r.peak_omega,
                r.omega.len()
            )
        }
    }
}

fn study_cmd(a: &StudyArgs) -> Result<(), Failure> {
    let path = a.study.as_ref().expect("clap requires the study file");
    crate::probe::readable(crate::probe::Kind::Study, path)?;
    let study = Study::load(path).map_err(|e| Failure::input(e.to_string()))?;
    if let Some(0) = a.jobs {
        return Err(Failure::input("--jobs 0: give at least 1"));
    }
    let shard = match &a.shard {
        Some(s) => Some(
            s.parse::<Shard>()
                .map_err(|e| Failure::input(format!("--shard: {e}")))?,
        ),
        None => Shard::from_env(|k| std::env::var(k).ok()).map_err(Failure::input)?,
    };
    let base = match &a.output {
        Some(p) => p.clone(),
        None => PathBuf::from(format!(
            "{}.h5",
            path.file_stem()
                .map(|s| s.to_string_lossy())
                .unwrap_or_default()
        )),
    };
    let output = match shard {
        Some(s) => sibling(&base, &format!(".shard-{}-of-{}.h5", s.index, s.count)),
        None => base.clone(),
    };
    let derived: Vec<PathBuf> = if shard.is_some() {
        Vec::new()
    } else {
        [".csv", ".frc.png", ".peaks.png", ".map.png"]
            .iter()
            .map(|x| sibling(&output, x))
            .collect()
    };
    let mut outs: Vec<crate::args::Output<'_>> = vec![("-o", Some(base.as_path()), &["h5"])];
    if output != base {
        outs.push(("the shard file", Some(output.as_path()), &["h5"]));
    }
    outs.extend(
        derived
            .iter()
            .map(|p| ("the study output", Some(p.as_path()), &[][..])),
    );
    crate::args::prepare_outputs(
        &[named("STUDY", path), named("its model", &study.model_path)],
        &outs,
    )?;
    let indices: Vec<usize> = (0..study.cases.len())
        .filter(|&i| shard.is_none_or(|s| s.owns(i)))
        .collect();
    let params: Vec<String> = study
        .parameters
        .iter()
        .map(|p| {
            let mut distinct: Vec<String> = Vec::new();
            for c in &study.cases {
                let v =
                    c.values[study.parameters.iter().position(|q| q == p).unwrap_or(0)].to_string();
                if !distinct.contains(&v) {
                    distinct.push(v);
                }
            }
            format!("{} ({} values)", p.name(), distinct.len())
        })
        .collect();
    say!(
        "study {}: {} cases over {}{}",
        path.display(),
        study.cases.len(),
        if params.is_empty() {
            "no parameter".to_string()
        } else {
            params.join(", ")
        },
        shard
            .map(|s| format!("; shard {s}: {} cases", indices.len()))
            .unwrap_or_default()
    );
    if let Some(o) = &study.optimize {
        say!(
            "each case: the {} with the smallest resonance peak, {} values from {} to {} tracked, \
             then golden section",
            o.kind.name(),
            o.count,
            o.from,
            o.to
        );
    } else if study.objective == ewr_study::Objective::Peak {
        say!(
            "each case: every resonance peak of a coarse adaptive sweep, refined (objective = \"peak\")"
        );
    }
    if a.check {
        for &i in &indices {
            say!("case {i}: {}", study.key(&study.cases[i]));
        }
        return Ok(());
    }
    let cases_dir = cases_dir_for(&output);
    // Held until the study file is written: a second study on the same output stops here.
    let _lock = ewr_study::lock_output(&cases_dir, path).map_err(Failure::input)?;
    let t0 = Instant::now();
    let bar = crate::progress::bar(indices.len() as u64, "cases");
    let reused = AtomicUsize::new(0);
    let computed = AtomicUsize::new(0);
    let report = |ev: Event<'_>| match ev {
        Event::Reused(_) => {
            reused.fetch_add(1, Ordering::SeqCst);
            bar.inc(1);
        }
        Event::Computed(r, secs) => {
            if computed.fetch_add(1, Ordering::SeqCst) == 0 {
                let n = reused.load(Ordering::SeqCst);
                if n > 0 {
                    bar.suspend(|| {
                        say!(
                            "{n} cases already finished in {}: kept",
                            cases_dir.display()
                        )
                    });
                }
            }
            bar.inc(1);
            let line = format!(
                "[{:>w$}/{}] {} ({secs:.2} s)",
                bar.position(),
                indices.len(),
                case_line(&study, r),
                w = indices.len().to_string().len()
            );
            bar.suspend(|| say!("{line}"));
        }
    };
    let opts = RunOptions {
        cases_dir: cases_dir.clone(),
        jobs: a.jobs,
        retry_failed: a.retry_failed,
    };
    let results = ewr_study::run(&study, &indices, &opts, &report).map_err(Failure::work)?;
    bar.finish_and_clear();
    if computed.load(Ordering::SeqCst) == 0 && reused.load(Ordering::SeqCst) > 0 {
        say!(
            "all {} cases already finished in {}: kept",
            results.len(),
            cases_dir.display()
        );
    }
    let info = StudyInfo::of(&study);
    write_study_file(&output, &info, shard, &results).map_err(Failure::work)?;
    say!(
        "wrote {} ({:.1} s)",
        output.display(),
        t0.elapsed().as_secs_f64()
    );
    if shard.is_none() {
        outputs(&output, &info, &results, !a.no_plot)?;
    }
    finish(&results)
}

fn merge_cmd(m: &MergeArgs) -> Result<(), Failure> {
    let shards: Vec<_> = m.shards.iter().map(|p| named("SHARD", p)).collect();
    crate::args::prepare_outputs(&shards, &[("-o", Some(m.output.as_path()), &["h5"])])?;
    for p in &m.shards {
        crate::probe::readable(crate::probe::Kind::StudyResult, p)?;
    }
    let (info, results) = merge(&m.shards).map_err(Failure::input)?;
    write_study_file(&m.output, &info, None, &results).map_err(Failure::work)?;
    say!(
        "merged {} shard file(s): {} cases into {}",
        m.shards.len(),
        results.len(),
        m.output.display()
    );
    outputs(&m.output, &info, &results, !m.no_plot)?;
    finish(&results)
}

/// Summary CSV and figures next to the result file.
fn outputs(
    output: &Path,
    info: &StudyInfo,
    results: &[CaseResult],
    plots: bool,
) -> Result<(), Failure> {
    let csv = sibling(output, ".csv");
    write_summary_csv(&csv, info, results).map_err(Failure::work)?;
    say!("wrote {}", csv.display());
    if !plots {
        return Ok(());
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
        })
        .collect();
    let mut written = Vec::new();
    if !lines.is_empty() {
        let p = sibling(output, ".frc.png");
        let title = format!("{title}: frequency response per case");
        let style = plot::FrcStyle {
            title: &title,
            axis: plot::FrequencyAxis::default(),
            parameter: colour_by.map(|p| info.parameters[p].name()),
        };
        plot::frc_lines(&p, &style, &lines).map_err(Failure::work)?;
        written.push(p);
    }
    let mut panels = Vec::new();
    if let Some(k) = info.optimize {
        panels.extend(locus_panel(info, k, results));
    }
    panels.extend(design_panels(info, results));
    if !panels.is_empty() {
        let p = sibling(output, ".peaks.png");
        plot::design(
            &p,
            &format!("{title}: peak amplitude (design curves)"),
            &panels,
        )
        .map_err(Failure::work)?;
        written.push(p);
    }
    if let Some(map) = heat_map(info, results) {
        let p = sibling(output, ".map.png");
        plot::heat_map(&p, &format!("{title}: peak amplitude"), &map).map_err(Failure::work)?;
        written.push(p);
    }
    for p in written {
        say!("wrote {}", p.display());
    }
    Ok(())
}

/// The case with the smallest peak, among fully converged cases if there are any (a curve
/// with unconverged points may miss its peak).
fn optimum(results: &[CaseResult]) -> Option<&CaseResult> {
    let best = |ok_only: bool| {
        results
            .iter()
            .filter(|r| r.peak_amplitude.is_finite() && (!ok_only || r.status == CaseStatus::Ok))
            .min_by(|a, b| a.peak_amplitude.total_cmp(&b.peak_amplitude))
    };
    best(true).or_else(|| best(false))
}

fn design_panels(info: &StudyInfo, results: &[CaseResult]) -> Vec<DesignPanel> {
    let Some(best) = optimum(results) else {
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
            let others: Vec<String> = info
                .parameters
                .iter()
                .zip(&r.values)
                .enumerate()
                .filter(|(q, _)| *q != p)
                .map(|(_, (k, v))| format!("{}={v}", k.name()))
                .collect();
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
    let optimum = cell(optimum(results)?)?;
    Some(HeatMap {
        x: (info.parameters[0].name().to_string(), xs.clone()),
        y: (info.parameters[1].name().to_string(), ys.clone()),
        z,
        optimum,
    })
}

/// Final report and exit status: 1 when any case is not fully converged.
fn finish(results: &[CaseResult]) -> Result<(), Failure> {
    let count = |s: CaseStatus| results.iter().filter(|r| r.status == s).count();
    let (ok, partial, failed) = (
        count(CaseStatus::Ok),
        count(CaseStatus::Unconverged),
        count(CaseStatus::Failed),
    );
    say!(
        "{} cases: {ok} ok, {partial} with unconverged points, {failed} failed",
        results.len()
    );
    if let Some(b) = optimum(results) {
        let at = if b.optimum_value.is_nan() {
            String::new()
        } else {
            format!(" with the optimised parameter at {}", b.optimum_value)
        };
        say!(
            "optimum: case {} [{}]{at}: peak {:.6e} at w = {:.6}",
            b.index,
            b.key,
            b.peak_amplitude,
            b.peak_omega
        );
    }
    if partial + failed > 0 {
        let bad: Vec<String> = results
            .iter()
            .filter(|r| r.status != CaseStatus::Ok)
            .take(10)
            .map(|r| format!("case {} ({}): {}", r.index, r.status.as_str(), r.reason))
            .collect();
        return Err(Failure::work(format!(
            "{} of {} cases did not fully converge (every case was written with its status): {}{}",
            partial + failed,
            results.len(),
            bad.join("; "),
            if partial + failed > 10 { "; ..." } else { "" }
        )));
    }
    Ok(())
}
