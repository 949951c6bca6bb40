//! `ewr study` (a parameter study: many frequency response curves, their peaks, the damper
//! design curve) and `ewr study merge` (combine the shards of a study run as a job array).

use crate::Failure;
use crate::paths::named;
use clap::{Args, Subcommand};
use ewr_results::study::{StudyRun, StudyRunError, write_study_outputs};
use ewr_study::{
    CaseResult, CaseStatus, Event, Shard, Study, StudyInfo, cases_dir_for, merge, write_study_file,
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
    #[arg(long, short = 'j', value_name = "N", allow_hyphen_values = true)]
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

/// `, flat from A to B` where a case's optimum is flat (`optimum_plateau`): any value of that
/// range gives the peak within 1 %, and the reported value is only the smallest peak's, a
/// round-off pick among them (case lines say so in their reason).
fn flat(r: &CaseResult) -> String {
    let [lo, hi] = r.optimum_plateau;
    if lo.is_finite() && hi.is_finite() {
        format!(", flat from {lo:.6e} to {hi:.6e}")
    } else {
        String::new()
    }
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
    let runner = StudyRun {
        study: &study,
        output: base.clone(),
        shard,
        jobs: a.jobs,
        retry_failed: a.retry_failed,
        plots: !a.no_plot,
        cancel: None,
    };
    let mut runner = runner;
    let output = runner.output_file();
    let derived = runner.derived_outputs();
    // A shard writes only its shard file: several shards of one study run at once.
    let mut outs: Vec<crate::args::Output<'_>> = if output != base {
        if base.extension().and_then(|e| e.to_str()) != Some("h5") {
            return Err(Failure::input(format!(
                "-o {}: the file name must end in .h5",
                base.display()
            )));
        }
        vec![("the shard file", Some(output.as_path()), &["h5"])]
    } else {
        vec![("-o", Some(base.as_path()), &["h5"])]
    };
    outs.extend(
        derived
            .iter()
            .map(|p| ("the study output", Some(p.as_path()), &[][..])),
    );
    let _claims = crate::args::prepare_outputs(
        &[named("STUDY", path), named("its model", &study.model_path)],
        &outs,
    )?;
    let indices = runner.indices();
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
    set_aside_damaged_cases(&cases_dir)?;
    // Ctrl-C / SIGTERM: the cases under way finish and are kept; a rerun resumes.
    crate::interrupt::install();
    runner.cancel = Some(crate::interrupt::flag());
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
    let outcome = runner.run(&report).map_err(|e| match e {
        StudyRunError::Busy(m) => Failure::input(m),
        e => Failure::work(e.to_string()),
    })?;
    bar.finish_and_clear();
    if outcome.cancelled {
        return Err(Failure::work(format!(
            "interrupted after {} of {} cases: the finished ones are kept in {}; rerun the same \
             command to resume",
            outcome.results.len(),
            indices.len(),
            cases_dir.display()
        )));
    }
    let results = outcome.results;
    if computed.load(Ordering::SeqCst) == 0 && reused.load(Ordering::SeqCst) > 0 {
        say!(
            "all {} cases already finished in {}: kept",
            results.len(),
            cases_dir.display()
        );
    }
    for (i, p) in outcome.written.iter().enumerate() {
        if i == 0 {
            say!(
                "wrote {} ({:.1} s)",
                p.display(),
                t0.elapsed().as_secs_f64()
            );
        } else {
            say!("wrote {}", p.display());
        }
    }
    finish(&ewr_study::StudyInfo::of(&study), &results)
}

/// Each distinct warning of the cases once on stderr, with the cases it concerns.
fn warn_once(results: &[CaseResult]) {
    for w in ewr_study::result::distinct_warnings(results) {
        say_err!("{w}");
    }
}

/// Reads every finished case file of an earlier run in a child process first: one the HDF5
/// library crashes or hangs on is named and set aside (`.h5.damaged`), and its case is
/// computed again, instead of crashing every rerun.
fn set_aside_damaged_cases(dir: &Path) -> Result<(), Failure> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("case-") && name.ends_with(".h5")) {
            continue;
        }
        if let Err(f) = crate::probe::readable(crate::probe::Kind::Result, &p) {
            let aside = p.with_extension("h5.damaged");
            std::fs::rename(&p, &aside).map_err(|e| {
                Failure::input(format!(
                    "{}; it cannot be set aside ({e}): remove it and rerun",
                    f.message
                ))
            })?;
            say_err!(
                "warning: {}; set aside as {} (its case is computed again)",
                f.message,
                aside.display()
            );
        }
    }
    Ok(())
}

fn merge_cmd(m: &MergeArgs) -> Result<(), Failure> {
    let shards: Vec<_> = m.shards.iter().map(|p| named("SHARD", p)).collect();
    let _claims =
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
    finish(&info, &results)
}

/// Final report and exit status: 1 when any case is not fully converged.
/// Summary CSV and figures next to the result file.
fn outputs(
    output: &Path,
    info: &StudyInfo,
    results: &[CaseResult],
    plots: bool,
) -> Result<(), Failure> {
    for p in write_study_outputs(output, info, results, plots).map_err(Failure::work)? {
        say!("wrote {}", p.display());
    }
    Ok(())
}

fn finish(info: &StudyInfo, results: &[CaseResult]) -> Result<(), Failure> {
    warn_once(results);
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
    if let Some((b, mark)) = ewr_results::study::highlight(info, results) {
        let at = if b.optimum_value.is_nan() {
            String::new()
        } else {
            format!(
                " with the optimised parameter at {}{}",
                b.optimum_value,
                flat(b)
            )
        };
        say!(
            "{mark}: case {} [{}]{at}: peak {:.6e} at w = {:.6}",
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
