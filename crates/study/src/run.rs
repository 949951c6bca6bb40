//! Running a study's cases in parallel, each written to its own file (atomically) before it
//! is reported, and resuming from the files already there.

use crate::result::{CaseResult, CaseStatus, compute_case};
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

fn remove_stale_partials(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        // `.case-....h5.<pid>.partial`: left by a killed process (never by a live one).
        let Some(pid) = name
            .strip_suffix(".partial")
            .and_then(|s| s.rsplit('.').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        if !alive {
            let _ = std::fs::remove_file(e.path());
        }
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
    let info = StudyInfo::of(study);
    let dir = &opts.cases_dir;
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create folder {}: {e}", dir.display()))?;
    remove_stale_partials(dir);
    let mut done = Vec::new();
    let mut pending = Vec::new();
    for &i in indices {
        let case = &study.cases[i];
        let key = study.key(case);
        let path = dir.join(case_file_name(&key));
        if path.exists() {
            match read_case_file(&path, &info.parameters) {
                Ok((hash, mut r)) if hash == info.hash && r.key == key => {
                    if opts.retry_failed && r.status == CaseStatus::Failed {
                        pending.push((i, path));
                    } else {
                        r.index = i;
                        done.push(r);
                    }
                    continue;
                }
                Ok((hash, r)) if hash != info.hash => {
                    return Err(format!(
                        "{} holds results of another study (model or settings changed since \
                         case {:?} was computed): delete the folder to start afresh, or write \
                         to another --output",
                        dir.display(),
                        r.key
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
    let computed: Vec<CaseResult> = pool.install(|| {
        pending
            .par_iter()
            .with_max_len(1)
            .filter_map(|(i, path)| {
                if stop.load(Ordering::SeqCst) {
                    return None;
                }
                let t0 = Instant::now();
                let r = compute_case(study, &study.cases[*i]);
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
    Ok(done)
}
