//! Running a study's cases in parallel, each written to its own file (atomically) before it
//! is reported, and resuming from the files already there.

use crate::result::{CaseResult, CaseStatus, compute_case};
use crate::shared::Receptances;
use crate::spec::Study;
use crate::store::{StudyInfo, case_file_name, read_case_file, write_case_file};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Folder of the per-case files (the resume state), e.g. `STUDY.h5.cases/`.
    pub cases_dir: PathBuf,
    /// Worker threads (default: one per core).
    pub jobs: Option<usize>,
    /// Recompute cases recorded as failed instead of keeping them.
    pub retry_failed: bool,
    /// Set by the caller to stop starting new cases (Ctrl-C in Python): the cases under way
    /// finish and are written, the others are left for a rerun to resume.
    pub cancel: Option<std::sync::Arc<AtomicBool>>,
}

/// A finished case, as reported to the caller.
pub enum Event<'a> {
    /// Found finished in the cases folder and reused.
    Reused(&'a CaseResult),
    /// Computed now and written; `seconds` of wall time.
    Computed(&'a CaseResult, f64),
}

/// The folder of per-case files that goes with a result file: `OUT.h5` -> `OUT.h5.cases`.
pub fn cases_dir_for(output: &Path) -> PathBuf {
    let mut s = output.as_os_str().to_owned();
    s.push(".cases");
    PathBuf::from(s)
}

/// An exclusive claim on a study's output (its cases folder), released when dropped: two
/// studies writing the same output at once would lose one's results.
pub struct OutputLock {
    _file: std::fs::File,
}

/// Claims the output whose cases folder is `cases_dir` for the study file `study`, or says
/// which process holds it. The claim is an advisory lock (`flock`) on `cases_dir/lock`, so
/// it dies with its process, however that ends.
pub fn lock_output(cases_dir: &Path, study: &Path) -> Result<OutputLock, String> {
    use std::io::{Read, Seek, Write};
    std::fs::create_dir_all(cases_dir)
        .map_err(|e| format!("cannot create folder {}: {e}", cases_dir.display()))?;
    let path = cases_dir.join("lock");
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {
            let me = format!(
                "pid {}, study {}",
                std::process::id(),
                std::path::absolute(study)
                    .unwrap_or_else(|_| study.to_path_buf())
                    .display()
            );
            let _ = file.set_len(0);
            let _ = file.rewind();
            let _ = file.write_all(me.as_bytes());
            let _ = file.flush();
            Ok(OutputLock { _file: file })
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            Err(format!(
                "{} is in use by another running study ({}): wait for it to finish or write \
                 to another --output",
                cases_dir.display(),
                if holder.is_empty() {
                    "holder unknown"
                } else {
                    holder.trim()
                }
            ))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

/// Runs the cases `indices` of `study`: cases already finished in the cases folder (same
/// study fingerprint and key) are reused, the others computed in parallel. Each computed
/// case is written to its own file before `report` hears of it. A failing case is recorded
/// and the run goes on; an error (exit 1) is only a case file that cannot be written or a
/// cases folder that belongs to another study (checked before any work).
///
/// Returns every requested case's result, sorted by index.
pub fn run(
    study: &Study,
    indices: &[usize],
    opts: &RunOptions,
    report: &(dyn Fn(Event<'_>) + Sync),
) -> Result<Vec<CaseResult>, String> {
    run_counted(study, indices, opts, report).map(|(results, _)| results)
}

/// [`run`], and how many condensations it made.
fn run_counted(
    study: &Study,
    indices: &[usize],
    opts: &RunOptions,
    report: &(dyn Fn(Event<'_>) + Sync),
) -> Result<(Vec<CaseResult>, usize), String> {
    let info = StudyInfo::of(study);
    let dir = &opts.cases_dir;
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create folder {}: {e}", dir.display()))?;
    ewr_model::h5::remove_stale_partials(dir, None);
    let mut done = Vec::new();
    let mut pending = Vec::new();
    for &i in indices {
        let case = &study.cases[i];
        let key = study.key(case);
        let path = dir.join(case_file_name(&key));
        if path.exists() {
            match read_case_file(&path, &info) {
                Ok((hash, Ok(mut r))) if hash == info.hash && r.key == key => {
                    if opts.retry_failed && r.status == CaseStatus::Failed {
                        pending.push((i, path));
                    } else {
                        r.index = i;
                        done.push(r);
                    }
                    continue;
                }
                Ok((hash, _)) if hash != info.hash => {
                    return Err(format!(
                        "{} holds results of another study (model or settings changed since \
                         case {key:?} was computed): delete the folder to start afresh, or \
                         write to another --output",
                        dir.display(),
                    ));
                }
                // A hash collision of keys, or an unreadable file: compute again.
                _ => {}
            }
        }
        pending.push((i, path));
    }
    for r in &done {
        report(Event::Reused(r));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.unwrap_or(0))
        .build()
        .map_err(|e| format!("cannot start worker threads: {e}"))?;
    let stop = AtomicBool::new(false);
    let write_error = Mutex::new(None::<String>);
    // Each pending case with its structure key and family (the same dynamics, other loads);
    // a family's cases one after another, so that its member is released as soon as they
    // are done (`Receptances`), whatever the grid's order.
    let mut pending: Vec<(usize, PathBuf, String, String)> = pending
        .into_iter()
        .map(|(i, path)| {
            let case = &study.cases[i];
            (i, path, study.structure_key(case), study.dynamics_key(case))
        })
        .collect();
    let mut families: Vec<String> = Vec::new();
    for (.., f) in &pending {
        if !families.contains(f) {
            families.push(f.clone());
        }
    }
    pending.sort_by_key(|(.., f)| families.iter().position(|x| x == f));
    let shared = Receptances::new(pending.iter().map(|(.., k, f)| (k.as_str(), f.as_str())));
    let computed: Vec<CaseResult> = pool.install(|| {
        // The first case's structure is condensed before the cases start, with every thread of
        // the pool: cases that start together would each condense it (`Receptances`), and a
        // study over friction, forcing or harmonics has that one structure only. A failure,
        // or a panic, is left to the cases, which report it (each condenses once more).
        if study.optimize.is_none()
            && let Some((i, _, key, family)) = pending.first()
            && let Ok(setup) = study.case_setup(&study.cases[*i])
        {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                shared.get(key, family, |_| {
                    crate::result::condense(&setup, study.all_phase_stability()).map(|r| (r, false))
                })
            }));
        }
        pending
            .par_iter()
            .with_max_len(1)
            .filter_map(|(i, path, key, family)| {
                if stop.load(Ordering::SeqCst)
                    || opts
                        .cancel
                        .as_ref()
                        .is_some_and(|c| c.load(Ordering::SeqCst))
                {
                    return None;
                }
                let t0 = Instant::now();
                let case = &study.cases[*i];
                let r = compute_case(study, case, Some(&shared));
                shared.done(key, family);
                if let Err(e) = write_case_file(path, &info, &r) {
                    stop.store(true, Ordering::SeqCst);
                    write_error.lock().expect("lock").get_or_insert(e);
                    return None;
                }
                report(Event::Computed(&r, t0.elapsed().as_secs_f64()));
                Some(r)
            })
            .collect()
    });
    if let Some(e) = write_error.into_inner().expect("lock") {
        return Err(e);
    }
    done.extend(computed);
    done.sort_by_key(|r| r.index);
    Ok((done, shared.built()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A study of the shipped CalculiX blade (`modal:20`, odd:3, three points) over `grid`.
    fn blade_study(grid: &str) -> Study {
        let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
        Study::from_str_at(
            &models.join("test.toml"),
            &format!(
                "model = \"blade-ccx.h5\"\n[frequency]\nstart = 1400\nend = 1500\nstep = 50\n\
                 [solver]\nharmonics = \"odd:3\"\nreceptance = \"modal:20\"\n\
                 [grid]\n{grid}\n"
            ),
        )
        .map_err(|e| e.0)
        .unwrap()
    }

    /// Two workers, the case files in `dir`.
    fn two_jobs(dir: &Path) -> RunOptions {
        RunOptions {
            cases_dir: dir.join("cases"),
            jobs: Some(2),
            retry_failed: false,
            cancel: None,
        }
    }

    /// A study over friction has one structure: it is condensed once, before the cases start,
    /// not by each of the cases that start together (two here, on two workers).
    #[test]
    fn one_structure_is_condensed_once_for_cases_that_start_together() {
        let study = blade_study("mu_n = [5, 10, 20, 40]");
        let dir = tempfile::tempdir().unwrap();
        let opts = two_jobs(dir.path());
        let (results, condensed) = run_counted(&study, &[0, 1, 2, 3], &opts, &|_| {}).unwrap();
        assert_eq!(results.len(), 4);
        assert!(results.iter().all(|r| r.status == CaseStatus::Ok));
        assert_eq!(condensed, 1);
    }

    /// Cases that differ in their forcing scale share the modes (the later ones derive their
    /// receptance from the first's, `Receptance::with_forcing`), and each case's curve is the
    /// one it gets alone, with a receptance built from scratch, to the bit.
    #[test]
    fn cases_of_other_forcing_scales_share_the_modes_and_match_cases_run_alone() {
        let study = blade_study("forcing_scale = [0.5, 2, 3]");
        let keys: Vec<String> = study.cases.iter().map(|c| study.dynamics_key(c)).collect();
        assert!(keys.iter().all(|k| k == &keys[0]), "one family: {keys:?}");
        let dir = tempfile::tempdir().unwrap();
        let opts = two_jobs(dir.path());
        let (results, condensed) = run_counted(&study, &[0, 1, 2], &opts, &|_| {}).unwrap();
        assert_eq!(results.len(), 3);
        assert_eq!(
            condensed, 1,
            "the modes extracted once for the three forcings"
        );
        for r in &results {
            assert_eq!(r.status, CaseStatus::Ok, "{}", r.reason);
            let alone = crate::result::compute_case(&study, &study.cases[r.index], None);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&r.omega), bits(&alone.omega), "{}", r.key);
            assert_eq!(bits(&r.amp_norm), bits(&alone.amp_norm), "{}", r.key);
            assert_eq!(bits(&r.dof_peak), bits(&alone.dof_peak), "{}", r.key);
        }
        // The amplitudes follow the forcing (friction makes it less than proportional).
        let peak = |i: usize| results[i].amp_norm.iter().fold(0.0_f64, |a, &b| a.max(b));
        assert!(peak(0) < peak(1) && peak(1) < peak(2));
    }
}
