//! Reading a model file: the root attributes and every group, each problem recorded with
//! its HDF5 path, then the parts that could be read validated together.

mod contacts;
mod matrix;
mod values;

use super::{FORMAT_NAME, FORMAT_VERSION, ModelError, ReadModel};
use crate::cyclic::Cyclic;
use crate::model::{Contacts, Damping, ForcingTerm, Model, SparseMatrix};
use crate::validate::{Parts, Problem, has_errors, validate_parts};
use contacts::read_contacts;
use matrix::{RawMatrix, read_matrix};
use std::path::Path;
use values::{attr_float, attr_ints, attr_string, dataset, floats, ints, optional_string, strings};

/// Reads and validates a model file.
pub fn read(path: impl AsRef<Path>) -> Result<ReadModel, ModelError> {
    let path = path.as_ref();
    let open_err = |reason: String| ModelError::Open {
        path: path.to_path_buf(),
        reason,
    };
    match std::fs::metadata(path) {
        Err(e) => return Err(open_err(e.to_string())),
        Ok(m) if m.is_dir() => return Err(open_err("it is a directory".into())),
        Ok(m) if m.len() == 0 => return Err(open_err("the file is empty".into())),
        Ok(_) => {}
    }
    let file = open_when_unlocked(path)
        .map_err(|e| open_err(format!("not a readable HDF5 file ({e})")))?;
    let mut problems = Vec::new();
    let invalid = |problems| ModelError::Invalid {
        path: path.to_path_buf(),
        problems,
    };
    let Some(parts) = read_model(&file, &mut problems) else {
        return Err(invalid(problems));
    };
    // The parts that could be read are checked even when others could not, so that one run
    // lists every problem.
    problems.extend(validate_parts(&Parts {
        mass: parts.mass.as_ref(),
        stiffness: parts.stiffness.as_ref(),
        damping_matrix: parts.damping_matrix.as_ref().and_then(Option::as_ref),
        damping: parts.damping.as_ref(),
        contacts: parts.contacts.as_ref(),
        forcing: parts.forcing.as_deref(),
        dof_labels: parts.dof_labels.as_deref(),
        cyclic: parts.cyclic.as_ref().and_then(Option::as_ref),
    }));
    match parts.into_model() {
        Some(model) if !has_errors(&problems) => Ok(ReadModel {
            model,
            warnings: problems,
        }),
        _ => Err(invalid(problems)),
    }
}

/// What [`read_model`] could read; `None` where a part could not be read (its problems are
/// recorded). `damping_matrix` is `Some(None)` when the file has no `/C`.
struct ReadParts {
    title: Option<String>,
    units: Option<String>,
    mass: Option<SparseMatrix>,
    stiffness: Option<SparseMatrix>,
    damping_matrix: Option<Option<SparseMatrix>>,
    damping: Option<Damping>,
    contacts: Option<Contacts>,
    forcing: Option<Vec<ForcingTerm>>,
    dof_labels: Option<Vec<String>>,
    cyclic: Option<Option<Cyclic>>,
    /// False when `/dof_labels` exists but could not be read.
    labels_ok: bool,
}

impl ReadParts {
    fn into_model(self) -> Option<Model> {
        if !self.labels_ok {
            return None;
        }
        Some(Model {
            title: self.title,
            units: self.units,
            mass: self.mass?,
            stiffness: self.stiffness?,
            damping_matrix: self.damping_matrix?,
            damping: self.damping?,
            contacts: self.contacts?,
            forcing: self.forcing?,
            dof_labels: self.dof_labels,
            cyclic: self.cyclic?,
        })
    }
}

/// Opens a file for reading, waiting up to about a second while another process (a writer
/// finishing, or a tool that just edited it) still holds HDF5's file lock.
fn open_when_unlocked(path: &Path) -> hdf5::Result<hdf5::File> {
    let mut attempt = 0;
    loop {
        match hdf5::File::open(path) {
            Err(e) if attempt < 20 && e.to_string().contains("unable to lock file") => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn read_model(file: &hdf5::File, out: &mut Vec<Problem>) -> Option<ReadParts> {
    match attr_string(file, "format") {
        Ok(Some(f)) if f == FORMAT_NAME => {}
        Ok(Some(f)) => {
            out.push(Problem::error(
                "/",
                format!("attribute format = {f:?}, expected {FORMAT_NAME:?}"),
            ));
            return None;
        }
        Ok(None) => {
            out.push(Problem::error(
                "/",
                format!("missing attribute format = {FORMAT_NAME:?}: not an ewr model file"),
            ));
            return None;
        }
        Err(e) => {
            out.push(Problem::error("/", format!("attribute format: {e}")));
            return None;
        }
    }
    match attr_ints(file, "version") {
        Ok(Some(v)) if v.len() == 1 && (1..=FORMAT_VERSION).contains(&v[0]) => {}
        Ok(Some(v)) => {
            out.push(Problem::error(
                "/",
                format!(
                    "unsupported version {v:?}: this ewr reads model files of versions 1 to {FORMAT_VERSION}"
                ),
            ));
            return None;
        }
        Ok(None) => {
            out.push(Problem::error(
                "/",
                "missing attribute version (expected 1)",
            ));
            return None;
        }
        Err(e) => {
            out.push(Problem::error("/", format!("attribute version: {e}")));
            return None;
        }
    }
    let title = optional_string(file, "title", "/", out);
    let units = optional_string(file, "units", "/", out);

    let stiffness = read_matrix(file, "", "K", true, out);
    let mass = read_matrix(file, "", "M", true, out);
    let damping_matrix = if file.link_exists("C") {
        read_matrix(file, "", "C", true, out).map(Some)
    } else {
        Some(None)
    };
    // Every DOF needs a mass or a stiffness, so M and K's stored entries bound the DOF count:
    // checked before any matrix is built, since a few bytes can declare billions of DOFs.
    let stored: usize = [&stiffness, &mass]
        .iter()
        .filter_map(|m| m.as_ref().map(|m| m.entries.len()))
        .sum();
    let build = |m: Option<RawMatrix>, out: &mut Vec<Problem>| {
        m.and_then(|m| {
            if m.shape[0] > stored {
                out.push(Problem::error(
                    m.path.clone(),
                    format!(
                        "shape declares {} DOFs but M and K store only {stored} entries \
                         together: every DOF needs a mass or a stiffness (a corrupt file?)",
                        m.shape[0]
                    ),
                ));
                return None;
            }
            m.build(out)
        })
    };
    // K, M and C are assembled side by side (each a pass over its entries, half of reading
    // a large model), their problems reported in that order.
    let (mut out_k, mut out_m, mut out_c) = (Vec::new(), Vec::new(), Vec::new());
    let (stiffness, (mass, damping_matrix)) = rayon::join(
        || build(stiffness, &mut out_k),
        || {
            rayon::join(
                || build(mass, &mut out_m),
                || match damping_matrix {
                    Some(Some(c)) => build(Some(c), &mut out_c).map(Some),
                    Some(None) => Some(None),
                    None => None,
                },
            )
        },
    );
    out.extend(out_k.into_iter().chain(out_m).chain(out_c));
    let n = stiffness.as_ref().map(|k| k.nrows());
    let damping = read_damping(file, out);
    let contacts = read_contacts(file, n, out);
    let forcing = read_forcing(file, out);
    let cyclic = read_cyclic(file, out);
    let mut labels_ok = true;
    let dof_labels = if file.link_exists("dof_labels") {
        match file
            .dataset("dof_labels")
            .map_err(|e| e.to_string())
            .and_then(|d| strings(&d))
        {
            Ok(l) => Some(l),
            Err(e) => {
                out.push(Problem::error("/dof_labels", e));
                labels_ok = false;
                None
            }
        }
    } else {
        None
    };
    Some(ReadParts {
        title,
        units,
        mass,
        stiffness,
        damping_matrix,
        damping,
        contacts,
        forcing,
        dof_labels,
        cyclic,
        labels_ok,
    })
}

/// Reads `/cyclic` (format v3): `sectors`, `engine_order` (scalar datasets or attributes)
/// and the matched `left` / `right` DOF lists; ranges are checked by validation.
fn read_cyclic(file: &hdf5::File, out: &mut Vec<Problem>) -> Option<Option<Cyclic>> {
    const PATH: &str = "/cyclic";
    if !file.link_exists("cyclic") {
        return Some(None);
    }
    let g = match file.group("cyclic") {
        Ok(g) => g,
        Err(e) => {
            out.push(Problem::error(PATH, format!("must be a group ({e})")));
            return None;
        }
    };
    let mut int = |name: &str| -> Option<i64> {
        let r = if g.link_exists(name) {
            g.dataset(name)
                .map_err(|e| e.to_string())
                .and_then(|d| ints(&d).map(|x| Some(x.0)))
        } else {
            attr_ints(&g, name)
        };
        match r {
            Ok(Some(v)) if v.len() == 1 => Some(v[0]),
            Ok(Some(v)) => {
                out.push(Problem::error(
                    format!("{PATH}/{name}"),
                    format!("expected one integer, found {}", v.len()),
                ));
                None
            }
            Ok(None) => {
                out.push(Problem::error(
                    format!("{PATH}/{name}"),
                    "missing (an integer)",
                ));
                None
            }
            Err(e) => {
                out.push(Problem::error(format!("{PATH}/{name}"), e));
                None
            }
        }
    };
    let sectors = int("sectors");
    let engine_order = int("engine_order");
    let mut list = |name: &str| -> Option<Vec<usize>> {
        let v = dataset(&g, PATH, name, out, |c| ints(c).map(|x| x.0))?;
        match v.iter().map(|&d| usize::try_from(d)).collect() {
            Ok(v) => Some(v),
            Err(_) => {
                out.push(Problem::error(
                    format!("{PATH}/{name}"),
                    "DOF indices must be >= 0",
                ));
                None
            }
        }
    };
    let left = list("left");
    let right = list("right");
    let sectors = match sectors.map(usize::try_from) {
        Some(Ok(s)) => s,
        Some(Err(_)) => {
            out.push(Problem::error(
                format!("{PATH}/sectors"),
                "must be a positive integer",
            ));
            return None;
        }
        None => return None,
    };
    Some(Some(Cyclic {
        sectors,
        engine_order: engine_order?,
        left: left?,
        right: right?,
    }))
}

fn read_damping(file: &hdf5::File, out: &mut Vec<Problem>) -> Option<Damping> {
    let mut d = Damping::default();
    if !file.link_exists("damping") {
        return Some(d);
    }
    let g = match file.group("damping") {
        Ok(g) => g,
        Err(e) => {
            out.push(Problem::error("/damping", format!("must be a group ({e})")));
            return None;
        }
    };
    // Scalars may be datasets (g["alpha"] = 0.1) or attributes (g.attrs["alpha"] = 0.1).
    let mut scalar = |name: &str| -> Option<f64> {
        let path = format!("/damping/{name}");
        let r = if g.link_exists(name) {
            g.dataset(name).map_err(|e| e.to_string()).and_then(|ds| {
                let (v, _) = floats(&ds)?;
                match v.as_slice() {
                    [x] => Ok(Some(*x)),
                    _ => Err(format!("expected one number, found {}", v.len())),
                }
            })
        } else {
            attr_float(&g, name)
        };
        match r {
            Ok(v) => v,
            Err(e) => {
                out.push(Problem::error(path, e));
                None
            }
        }
    };
    let alpha = scalar("alpha");
    let beta = scalar("beta");
    if alpha.is_some() || beta.is_some() {
        d.rayleigh = Some((alpha.unwrap_or(0.0), beta.unwrap_or(0.0)));
    }
    d.hysteretic_eta = scalar("eta");
    if g.link_exists("zeta") {
        d.modal_zeta = dataset(&g, "/damping", "zeta", out, |c| floats(c).map(|x| x.0));
    }
    Some(d)
}

fn read_forcing(file: &hdf5::File, out: &mut Vec<Problem>) -> Option<Vec<ForcingTerm>> {
    if !file.link_exists("forcing") {
        return Some(Vec::new());
    }
    let g = match file.group("forcing") {
        Ok(g) => g,
        Err(e) => {
            out.push(Problem::error("/forcing", format!("must be a group ({e})")));
            return None;
        }
    };
    let dof = dataset(&g, "/forcing", "dof", out, |c| ints(c).map(|x| x.0));
    let harmonic = dataset(&g, "/forcing", "harmonic", out, |c| ints(c).map(|x| x.0));
    let cos = dataset(&g, "/forcing", "cos", out, |c| floats(c).map(|x| x.0));
    let sin = dataset(&g, "/forcing", "sin", out, |c| floats(c).map(|x| x.0));
    let (dof, harmonic, cos, sin) = (dof?, harmonic?, cos?, sin?);
    let len = dof.len();
    if harmonic.len() != len || cos.len() != len || sin.len() != len {
        out.push(Problem::error(
            "/forcing",
            format!(
                "dof, harmonic, cos and sin must have the same length, found {}, {}, {}, {}",
                len,
                harmonic.len(),
                cos.len(),
                sin.len()
            ),
        ));
        return None;
    }
    let mut terms = Vec::with_capacity(len);
    for i in 0..len {
        let (Ok(d), Ok(h)) = (usize::try_from(dof[i]), usize::try_from(harmonic[i])) else {
            out.push(Problem::error(
                "/forcing",
                format!(
                    "term {i} has dof {} and harmonic {}: both must be >= 0",
                    dof[i], harmonic[i]
                ),
            ));
            return None;
        };
        terms.push(ForcingTerm {
            dof: d,
            harmonic: h,
            cos: cos[i],
            sin: sin[i],
        });
    }
    Some(terms)
}
