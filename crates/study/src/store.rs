//! Result files of a study (layout in `docs/study.md`): one HDF5 file per finished case,
//! written atomically; the study file assembled from them (or merged from shards); the
//! summary table as CSV.
//!
//! Files are written with object time stamps off, so the same results give the same bytes:
//! a resumed, sharded or merged study is byte-for-byte the uninterrupted single-process one.

use crate::param::{ParamKind, Value};
use crate::result::{CaseResult, CaseStatus};
use crate::shard::Shard;
use crate::spec::{Objective, STUDY_FORMAT_VERSION, Study};
use ewr_model::h5::{
    atomically, create_h5, get_1d, get_f64, get_i64, get_str, group, h5, put_1d, put_2d, put_f64,
    put_i64, put_str, put_strs,
};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a study result file says about its study, besides the cases.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyInfo {
    /// Title (empty if none).
    pub title: String,
    /// The study file's text.
    pub source: String,
    /// Model path as written in the study file.
    pub model: String,
    /// [`Study::hash`] as 16 hex digits.
    pub hash: String,
    /// Number of cases in the whole study.
    pub n_cases: usize,
    /// Swept parameters, in column order.
    pub parameters: Vec<ParamKind>,
    /// Number of contacts.
    pub n_contacts: usize,
    /// Monitored DOFs.
    pub monitored_dofs: Vec<usize>,
    /// The optimised parameter of an `[optimize]` study.
    pub optimize: Option<ParamKind>,
    /// Whether cases store every refined peak (`objective = "peak"` without `[optimize]`).
    pub peaks: bool,
    /// The amplitude measure of the curves, peaks and optima (`solver.amplitude`).
    pub amplitude: ewr_solve::Amplitude,
    /// Whether cases carry the stability of their points and peaks (`solver.stability`).
    pub stability: bool,
}

impl StudyInfo {
    /// The information of a loaded study.
    pub fn of(study: &Study) -> Self {
        StudyInfo {
            title: study.title.clone().unwrap_or_default(),
            source: study.source.clone(),
            model: study.model_name.clone(),
            hash: format!("{:016x}", study.hash),
            n_cases: study.cases.len(),
            parameters: study.parameters.iter().map(|p| p.kind).collect(),
            n_contacts: study.base.contacts.len(),
            monitored_dofs: study.solver.monitor.clone(),
            optimize: study.optimize.as_ref().map(|o| o.kind),
            peaks: study.optimize.is_none() && study.objective == Objective::Peak,
            amplitude: study.solver.amplitude,
            stability: study.solver.stability,
        }
    }
}

/// Writes one case's group (attributes, curve, peak).
fn write_case(g: &hdf5::Group, info: &StudyInfo, r: &CaseResult) -> Result<(), String> {
    put_i64(g, "index", r.index as i64)?;
    put_str(g, "key", &r.key)?;
    put_str(g, "status", r.status.as_str())?;
    put_str(g, "reason", &r.reason)?;
    put_f64(g, "peak_omega", r.peak_omega)?;
    put_f64(g, "peak_amplitude", r.peak_amplitude)?;
    for (k, v) in info.parameters.iter().zip(&r.values) {
        match v {
            Value::Num(x) => put_f64(g, k.name(), *x)?,
            Value::Text(s) => put_str(g, k.name(), s)?,
        }
    }
    put_1d(g, "omega", &r.omega)?;
    put_1d(g, "amp_norm", &r.amp_norm)?;
    let conv: Vec<i64> = r.converged.iter().map(|&c| i64::from(c)).collect();
    put_1d(g, "converged", &conv)?;
    put_1d(g, "iterations", &r.iterations)?;
    put_1d(g, "residual", &r.residual)?;
    put_2d(g, "amp_w", r.omega.len(), r.n_contacts, &r.amp_w)?;
    put_2d(g, "dof_peak", r.omega.len(), r.n_monitored, &r.dof_peak)?;
    // Only cases with something to say carry it: the others' files stay as they were.
    if !r.warnings.is_empty() {
        put_strs(g, "warnings", &r.warnings)?;
    }
    // Only `[optimize]` studies carry a locus: other studies' files stay as they were.
    if info.optimize.is_some() {
        put_f64(g, "optimum_value", r.optimum_value)?;
        put_1d(g, "optimum_plateau", &r.optimum_plateau)?;
        put_i64(g, "solves", r.solves)?;
        put_1d(g, "locus_value", &r.locus_value)?;
        put_1d(g, "locus_omega", &r.locus_omega)?;
        put_1d(g, "locus_amplitude", &r.locus_amplitude)?;
        put_1d(g, "locus_evaluations", &r.locus_evaluations)?;
    }
    if info.peaks {
        put_1d(g, "peaks_omega", &r.peaks_omega)?;
        put_1d(g, "peaks_amplitude", &r.peaks_amplitude)?;
    }
    if info.stability {
        put_i64(g, "peak_stable", r.peak_stable)?;
        put_1d(g, "stable", &r.stable)?;
        put_1d(g, "max_multiplier", &r.max_multiplier)?;
        if info.optimize.is_some() {
            put_1d(g, "locus_stable", &r.locus_stable)?;
        }
    }
    Ok(())
}

fn read_case(
    g: &hdf5::Group,
    parameters: &[ParamKind],
    optimized: bool,
    peaks: bool,
    stability: bool,
) -> Result<CaseResult, String> {
    let status_s = get_str(g, "status")?;
    let status =
        CaseStatus::parse(&status_s).ok_or_else(|| format!("unknown status {status_s:?}"))?;
    let values = parameters
        .iter()
        .map(|k| {
            if k.numeric() {
                get_f64(g, k.name()).map(Value::Num)
            } else {
                get_str(g, k.name()).map(Value::Text)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let shape = |name: &str| -> Result<usize, String> {
        g.dataset(name)
            .map(|d| d.shape().get(1).copied().unwrap_or(0))
            .map_err(|e| format!("dataset {name}: {e}"))
    };
    Ok(CaseResult {
        index: get_i64(g, "index")? as usize,
        key: get_str(g, "key")?,
        values,
        status,
        reason: get_str(g, "reason")?,
        omega: get_1d(g, "omega")?,
        amp_norm: get_1d(g, "amp_norm")?,
        converged: get_1d::<i64>(g, "converged")?
            .into_iter()
            .map(|c| c != 0)
            .collect(),
        iterations: get_1d(g, "iterations")?,
        residual: get_1d(g, "residual")?,
        n_contacts: shape("amp_w")?,
        amp_w: get_1d(g, "amp_w")?,
        n_monitored: shape("dof_peak")?,
        dof_peak: get_1d(g, "dof_peak")?,
        peak_omega: get_f64(g, "peak_omega")?,
        peak_amplitude: get_f64(g, "peak_amplitude")?,
        optimum_value: if optimized {
            get_f64(g, "optimum_value")?
        } else {
            f64::NAN
        },
        // Case files written before the plateau was recorded have none: NaN, not an error,
        // so that a resume keeps them.
        optimum_plateau: if optimized && g.link_exists("optimum_plateau") {
            let v: Vec<f64> = get_1d(g, "optimum_plateau")?;
            <[f64; 2]>::try_from(v.as_slice())
                .map_err(|_| format!("optimum_plateau has {} values, not 2", v.len()))?
        } else {
            [f64::NAN; 2]
        },
        solves: if optimized { get_i64(g, "solves")? } else { 0 },
        locus_value: locus(g, "locus_value", optimized)?,
        locus_omega: locus(g, "locus_omega", optimized)?,
        locus_amplitude: locus(g, "locus_amplitude", optimized)?,
        locus_evaluations: locus(g, "locus_evaluations", optimized)?,
        peaks_omega: locus(g, "peaks_omega", peaks)?,
        peaks_amplitude: locus(g, "peaks_amplitude", peaks)?,
        stable: locus(g, "stable", stability)?,
        max_multiplier: locus(g, "max_multiplier", stability)?,
        peak_stable: if stability {
            get_i64(g, "peak_stable")?
        } else {
            -1
        },
        locus_stable: locus(g, "locus_stable", stability && optimized)?,
        warnings: locus::<hdf5::types::VarLenUnicode>(g, "warnings", g.link_exists("warnings"))?
            .iter()
            .map(|w| w.as_str().to_string())
            .collect(),
    })
}

/// A dataset that only some studies write: read where `present`, else empty.
fn locus<T: hdf5::H5Type>(g: &hdf5::Group, name: &str, present: bool) -> Result<Vec<T>, String> {
    if present {
        get_1d(g, name)
    } else {
        Ok(Vec::new())
    }
}

/// File name of a case's result in the cases folder: a hash of its key, so that cases keep
/// their file when the grid is extended or reordered.
pub fn case_file_name(key: &str) -> String {
    format!("case-{:016x}.h5", crate::hash::of(key))
}

/// Writes one finished case as its own file (atomically).
pub fn write_case_file(path: &Path, info: &StudyInfo, r: &CaseResult) -> Result<(), String> {
    atomically(path, |tmp| {
        let f = create_h5(tmp)?;
        put_str(&f, "format", "ewr-study-case")?;
        put_i64(&f, "version", STUDY_FORMAT_VERSION)?;
        put_str(&f, "study_hash", &info.hash)?;
        write_case(&f, info, r)?;
        f.flush().map_err(h5)
    })
}

/// Reads a case file: its study hash, and the case as this study's layout reads it. The hash
/// comes first, so that a case of another study (whose layout may differ: an `[optimize]`
/// added since) is recognised as such even where its body cannot be read.
pub fn read_case_file(
    path: &Path,
    info: &StudyInfo,
) -> Result<(String, Result<CaseResult, String>), String> {
    let f = hdf5::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let at = |e: String| format!("{}: {e}", path.display());
    if get_str(&f, "format").map_err(at)? != "ewr-study-case" {
        return Err(at("not a study case file".into()));
    }
    let hash = get_str(&f, "study_hash").map_err(at)?;
    let case = read_case(
        &f,
        &info.parameters,
        info.optimize.is_some(),
        info.peaks,
        info.stability,
    )
    .map_err(at);
    Ok((hash, case))
}

fn summary(g: &hdf5::Group, info: &StudyInfo, results: &[CaseResult]) -> Result<(), String> {
    let idx: Vec<i64> = results.iter().map(|r| r.index as i64).collect();
    put_1d(g, "case", &idx)?;
    for (p, k) in info.parameters.iter().enumerate() {
        if k.numeric() {
            let v: Vec<f64> = results.iter().map(|r| r.values[p].num()).collect();
            put_1d(g, k.name(), &v)?;
        } else {
            let v: Vec<String> = results.iter().map(|r| r.values[p].to_string()).collect();
            put_strs(g, k.name(), &v)?;
        }
    }
    let st: Vec<String> = results
        .iter()
        .map(|r| r.status.as_str().to_string())
        .collect();
    put_strs(g, "status", &st)?;
    if info.optimize.is_some() {
        let v: Vec<f64> = results.iter().map(|r| r.optimum_value).collect();
        put_1d(g, "optimum_value", &v)?;
        let v: Vec<f64> = results.iter().map(|r| r.optimum_plateau[0]).collect();
        put_1d(g, "plateau_from", &v)?;
        let v: Vec<f64> = results.iter().map(|r| r.optimum_plateau[1]).collect();
        put_1d(g, "plateau_to", &v)?;
        let v: Vec<i64> = results.iter().map(|r| r.solves).collect();
        put_1d(g, "solves", &v)?;
    }
    let v: Vec<f64> = results.iter().map(|r| r.peak_omega).collect();
    put_1d(g, "peak_omega", &v)?;
    let v: Vec<f64> = results.iter().map(|r| r.peak_amplitude).collect();
    put_1d(g, "peak_amplitude", &v)?;
    if info.stability {
        let v: Vec<i64> = results.iter().map(|r| r.peak_stable).collect();
        put_1d(g, "peak_stable", &v)?;
    }
    let v: Vec<i64> = results.iter().map(|r| r.omega.len() as i64).collect();
    put_1d(g, "n_points", &v)?;
    let v: Vec<i64> = results.iter().map(|r| r.n_unconverged() as i64).collect();
    put_1d(g, "n_unconverged", &v)?;
    let v: Vec<i64> = results.iter().map(CaseResult::total_iterations).collect();
    put_1d(g, "iterations", &v)?;
    let v: Vec<String> = results.iter().map(|r| r.reason.clone()).collect();
    put_strs(g, "reason", &v)
}

/// Writes the study result file (the whole study, or one shard's share) atomically; `results`
/// must be sorted by case index.
pub fn write_study_file(
    path: &Path,
    info: &StudyInfo,
    shard: Option<Shard>,
    results: &[CaseResult],
) -> Result<(), String> {
    atomically(path, |tmp| {
        let f = create_h5(tmp)?;
        put_str(&f, "format", "ewr-study")?;
        put_i64(&f, "version", STUDY_FORMAT_VERSION)?;
        put_str(
            &f,
            "kind",
            if shard.is_some() {
                "study-shard"
            } else {
                "study"
            },
        )?;
        put_str(&f, "title", &info.title)?;
        put_str(&f, "model", &info.model)?;
        put_str(&f, "study", &info.source)?;
        put_str(&f, "study_hash", &info.hash)?;
        put_i64(&f, "n_cases", info.n_cases as i64)?;
        let names: Vec<&str> = info.parameters.iter().map(|k| k.name()).collect();
        put_str(&f, "parameters", &names.join(","))?;
        put_i64(&f, "n_contacts", info.n_contacts as i64)?;
        if let Some(k) = info.optimize {
            put_str(&f, "optimize", k.name())?;
        }
        if info.peaks {
            put_str(&f, "objective", "peak")?;
        }
        if let Some(s) = shard {
            put_i64(&f, "shard_index", s.index as i64)?;
            put_i64(&f, "shard_count", s.count as i64)?;
        }
        let dofs: Vec<i64> = info.monitored_dofs.iter().map(|&d| d as i64).collect();
        put_1d(&f, "monitored_dofs", &dofs)?;
        put_str(&f, "amplitude", info.amplitude.name())?;
        if info.stability {
            put_i64(&f, "stability", 1)?;
        }
        summary(&group(&f, "summary")?, info, results)?;
        let cases = group(&f, "cases")?;
        for r in results {
            write_case(&group(&cases, &format!("case_{:05}", r.index))?, info, r)?;
        }
        f.flush().map_err(h5)
    })
}

/// A study result file read back.
#[derive(Clone, Debug)]
pub struct StudyFile {
    /// The study it belongs to.
    pub info: StudyInfo,
    /// The shard, for a shard's file.
    pub shard: Option<Shard>,
    /// Its cases, by index.
    pub results: Vec<CaseResult>,
}

/// Reads a study (or shard) result file.
pub fn read_study_file(path: &Path) -> Result<StudyFile, String> {
    let f = hdf5::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let inner = || -> Result<StudyFile, String> {
        if get_str(&f, "format")? != "ewr-study" {
            return Err("not an ewr study result file".into());
        }
        let parameters = get_str(&f, "parameters")?
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| ParamKind::from_name(s).ok_or_else(|| format!("unknown parameter {s:?}")))
            .collect::<Result<Vec<_>, _>>()?;
        let optimize = match f.attr("optimize") {
            Ok(_) => {
                let name = get_str(&f, "optimize")?;
                Some(
                    ParamKind::from_name(&name)
                        .ok_or_else(|| format!("unknown optimised parameter {name:?}"))?,
                )
            }
            Err(_) => None,
        };
        let peaks = f.attr("objective").is_ok() && get_str(&f, "objective")? == "peak";
        // Files written before the option existed measure `max`.
        let amplitude = match f.attr("amplitude") {
            Ok(_) => get_str(&f, "amplitude")?.parse()?,
            Err(_) => ewr_solve::Amplitude::Max,
        };
        // Files written before the option existed, or without it, carry no stability.
        let stability = f.attr("stability").is_ok() && get_i64(&f, "stability")? == 1;
        let info = StudyInfo {
            amplitude,
            stability,
            optimize,
            peaks,
            title: get_str(&f, "title")?,
            source: get_str(&f, "study")?,
            model: get_str(&f, "model")?,
            hash: get_str(&f, "study_hash")?,
            n_cases: get_i64(&f, "n_cases")? as usize,
            parameters,
            n_contacts: get_i64(&f, "n_contacts")? as usize,
            monitored_dofs: get_1d::<i64>(&f, "monitored_dofs")?
                .into_iter()
                .map(|d| d as usize)
                .collect(),
        };
        let shard = if get_str(&f, "kind")? == "study-shard" {
            Some(Shard {
                index: get_i64(&f, "shard_index")? as usize,
                count: get_i64(&f, "shard_count")? as usize,
            })
        } else {
            None
        };
        let cases = f.group("cases").map_err(h5)?;
        let mut results = Vec::new();
        for name in cases.member_names().map_err(h5)? {
            let g = cases.group(&name).map_err(h5)?;
            results.push(
                read_case(
                    &g,
                    &info.parameters,
                    info.optimize.is_some(),
                    info.peaks,
                    info.stability,
                )
                .map_err(|e| format!("{name}: {e}"))?,
            );
        }
        results.sort_by_key(|r| r.index);
        Ok(StudyFile {
            info,
            shard,
            results,
        })
    };
    inner().map_err(|e| format!("{}: {e}", path.display()))
}

/// Combines shard files into the whole study's cases, checking that they belong to one
/// study and that no case is missing or duplicated.
pub fn merge(paths: &[PathBuf]) -> Result<(StudyInfo, Vec<CaseResult>), String> {
    let first = paths.first().ok_or("no shard file given")?;
    let mut info: Option<StudyInfo> = None;
    let mut by_index: BTreeMap<usize, (CaseResult, &Path)> = BTreeMap::new();
    let mut duplicates = Vec::new();
    for p in paths {
        let file = read_study_file(p)?;
        match &info {
            None => info = Some(file.info.clone()),
            Some(i) if *i != file.info => {
                return Err(format!(
                    "{} belongs to another study than {} (study file, model or settings differ)",
                    p.display(),
                    first.display()
                ));
            }
            Some(_) => {}
        }
        for r in file.results {
            if let Some((_, q)) = by_index.get(&r.index) {
                duplicates.push(format!(
                    "case {} in {} and {}",
                    r.index,
                    q.display(),
                    p.display()
                ));
            } else {
                by_index.insert(r.index, (r, p.as_path()));
            }
        }
    }
    let info = info.expect("at least one file");
    if !duplicates.is_empty() {
        return Err(format!("duplicated cases: {}", duplicates.join("; ")));
    }
    let missing: Vec<String> = (0..info.n_cases)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} of {} cases missing (a shard did not finish, or a shard file was not given): {}",
            missing.len(),
            info.n_cases,
            missing.join(", ")
        ));
    }
    if let Some(i) = by_index.keys().find(|&&i| i >= info.n_cases) {
        return Err(format!(
            "case {i} is beyond the study's {} cases",
            info.n_cases
        ));
    }
    Ok((info, by_index.into_values().map(|(r, _)| r).collect()))
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes the summary table (one row per case) as CSV, atomically: columns `case`, the
/// swept parameters, `status`, `peak_omega`, `peak_amplitude`, `points`, `unconverged`,
/// `iterations`, `reason`; for an `[optimize]` study `optimum_<parameter>` after `status`
/// and `values`, `solves`, `plateau_from`, `plateau_to` in place of the curve's counts; with
/// `solver.stability` a last column `peak_stable` (1, 0, -1 not classified).
pub fn write_summary_csv(
    path: &Path,
    info: &StudyInfo,
    results: &[CaseResult],
) -> Result<(), String> {
    atomically(path, |tmp| {
        let mut out =
            std::io::BufWriter::new(std::fs::File::create(tmp).map_err(|e| e.to_string())?);
        let mut cols = vec!["case".to_string()];
        cols.extend(info.parameters.iter().map(|k| k.name().to_string()));
        cols.push("status".into());
        let tail: &[&str] = match info.optimize {
            // An optimisation's case is a locus, not a curve: its values and solves.
            Some(k) => {
                cols.push(format!("optimum_{}", k.name()));
                &[
                    "peak_omega",
                    "peak_amplitude",
                    "values",
                    "solves",
                    "plateau_from",
                    "plateau_to",
                    "reason",
                ]
            }
            None => &[
                "peak_omega",
                "peak_amplitude",
                "points",
                "unconverged",
                "iterations",
                "reason",
            ],
        };
        cols.extend(tail.iter().map(|s| s.to_string()));
        if info.stability {
            cols.push("peak_stable".into());
        }
        let mut text = cols.join(",") + "\n";
        for r in results {
            let mut row = vec![r.index.to_string()];
            row.extend(r.values.iter().map(|v| csv_field(&v.to_string())));
            row.push(r.status.as_str().into());
            if info.optimize.is_some() {
                row.push(r.optimum_value.to_string());
            }
            row.push(r.peak_omega.to_string());
            row.push(r.peak_amplitude.to_string());
            if info.optimize.is_some() {
                row.push(r.locus_value.len().to_string());
                row.push(r.solves.to_string());
                row.extend(r.optimum_plateau.iter().map(|v| v.to_string()));
            } else {
                row.push(r.omega.len().to_string());
                row.push(r.n_unconverged().to_string());
                row.push(r.total_iterations().to_string());
            }
            row.push(csv_field(&r.reason));
            if info.stability {
                row.push(r.peak_stable.to_string());
            }
            text += &(row.join(",") + "\n");
        }
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())
    })
}
