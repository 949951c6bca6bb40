//! Reading and writing the HDF5 model file (format `ewr-model`, version 1).
//!
//! The layout is documented in `docs/model-format.md`. The reader collects every problem it
//! finds (with the HDF5 path at fault) instead of stopping at the first, so that a user fixing
//! an export sees all of them at once.

use crate::linalg_error::Sentence;
use crate::model::{
    Contacts, Damping, ForcingTerm, Kinematics, Model, NormalContacts, SparseMatrix,
};
use crate::validate::{Parts, Problem, has_errors, validate, validate_parts};
use faer::sparse::Triplet;
use hdf5::types::{FixedAscii, FixedUnicode, TypeDescriptor, VarLenAscii, VarLenUnicode};
use std::fmt;
use std::path::{Path, PathBuf};

/// Value of the root attribute `format`.
pub const FORMAT_NAME: &str = "ewr-model";
/// The newest model-file version this build reads and writes: 2 (3-D contacts and contact
/// stiffness). Version 1 files are read unchanged, and a model without the version-2
/// features is written as version 1.
pub const FORMAT_VERSION: i64 = 3;

/// Why a model file could not be read or written.
#[derive(Debug)]
pub enum ModelError {
    /// The file does not exist, is not HDF5, or cannot be opened.
    Open {
        /// The file.
        path: PathBuf,
        /// What the HDF5 library or the OS said.
        reason: String,
    },
    /// The file was read but does not hold a valid model.
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem found (errors and warnings).
        problems: Vec<Problem>,
    },
    /// Writing failed; no partial file is left at the target path.
    Write {
        /// The target file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Open { path, reason } => {
                write!(f, "cannot open model file {}: {reason}", path.display())
            }
            ModelError::Invalid { path, problems } => {
                let n = problems
                    .iter()
                    .filter(|p| p.severity == crate::Severity::Error);
                write!(
                    f,
                    "{} is not a valid ewr model ({} error(s)):",
                    path.display(),
                    n.count()
                )?;
                for p in problems {
                    write!(f, "\n  {p}")?;
                }
                Ok(())
            }
            ModelError::Write { path, reason } => {
                write!(f, "cannot write model file {}: {reason}", path.display())
            }
        }
    }
}

impl std::error::Error for ModelError {}

/// A model read from a file, with the warnings validation raised (errors make `read` fail).
#[derive(Clone, Debug)]
pub struct ReadModel {
    /// The model.
    pub model: Model,
    /// Warnings about the model (never errors).
    pub warnings: Vec<Problem>,
}

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
    cyclic: Option<Option<crate::cyclic::Cyclic>>,
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
        .filter_map(|m| m.as_ref().map(|m| m.triplets.len()))
        .sum();
    let mut build = |m: Option<RawMatrix>| {
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
    let stiffness = build(stiffness);
    let mass = build(mass);
    let damping_matrix = match damping_matrix {
        Some(Some(c)) => build(Some(c)).map(Some),
        Some(None) => Some(None),
        None => None,
    };
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
fn read_cyclic(file: &hdf5::File, out: &mut Vec<Problem>) -> Option<Option<crate::cyclic::Cyclic>> {
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
    Some(Some(crate::cyclic::Cyclic {
        sectors,
        engine_order: engine_order?,
        left: left?,
        right: right?,
    }))
}

fn optional_string(
    loc: &hdf5::Location,
    name: &str,
    path: &str,
    out: &mut Vec<Problem>,
) -> Option<String> {
    match attr_string(loc, name) {
        Ok(s) => s,
        Err(e) => {
            out.push(Problem::warning(path, format!("attribute {name}: {e}")));
            None
        }
    }
}

/// Reads a string attribute of any of the string types h5py, numpy and C codes write.
fn attr_string(loc: &hdf5::Location, name: &str) -> Result<Option<String>, String> {
    if !loc
        .attr_names()
        .map_err(|e| e.to_string())?
        .iter()
        .any(|a| a == name)
    {
        return Ok(None);
    }
    let a = loc.attr(name).map_err(|e| e.to_string())?;
    container_string(&a).map(Some)
}

fn container_string(c: &hdf5::Container) -> Result<String, String> {
    let td = c
        .dtype()
        .and_then(|t| t.to_descriptor())
        .map_err(|e| e.to_string())?;
    if c.size() != 1 {
        return Err(format!(
            "expected a single string, found {} values",
            c.size()
        ));
    }
    let first = |v: Vec<String>| v.into_iter().next().unwrap_or_default();
    strings_of(c, &td).map(first)
}

fn strings(d: &hdf5::Dataset) -> Result<Vec<String>, String> {
    let td = d
        .dtype()
        .and_then(|t| t.to_descriptor())
        .map_err(|e| e.to_string())?;
    strings_of(d, &td)
}

fn strings_of(c: &hdf5::Container, td: &TypeDescriptor) -> Result<Vec<String>, String> {
    check_declared_size(c)?;
    // Fixed-length strings are read 1024 bytes wide whatever their stored width.
    if matches!(
        td,
        TypeDescriptor::FixedAscii(_) | TypeDescriptor::FixedUnicode(_)
    ) && c.size() > (256 << 20) / 1024
    {
        return Err(format!(
            "{} fixed-length strings: at most {} are read; store variable-length strings",
            c.size(),
            (256 << 20) / 1024
        ));
    }
    let e = |e: hdf5::Error| e.to_string();
    // Fixed-length strings are converted by HDF5 to a generous fixed width on read.
    let trim = |s: &str| s.trim_end_matches(['\0', ' ']).to_string();
    // Bytes are decoded here, lossily: HDF5 does not check that a "UTF-8" string is UTF-8,
    // and a corrupt one must become a message, not undefined behaviour in a `&str`.
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match td {
        TypeDescriptor::VarLenUnicode => Ok(c
            .read_raw::<VarLenUnicode>()
            .map_err(e)?
            .iter()
            .map(|s| text(s.as_bytes()))
            .collect()),
        TypeDescriptor::VarLenAscii => Ok(c
            .read_raw::<VarLenAscii>()
            .map_err(e)?
            .iter()
            .map(|s| text(s.as_bytes()))
            .collect()),
        TypeDescriptor::FixedAscii(n) if *n <= 1024 => Ok(c
            .read_raw::<FixedAscii<1024>>()
            .map_err(e)?
            .iter()
            .map(|s| trim(&text(s.as_bytes())))
            .collect()),
        TypeDescriptor::FixedUnicode(n) if *n <= 1024 => Ok(c
            .read_raw::<FixedUnicode<1024>>()
            .map_err(e)?
            .iter()
            .map(|s| trim(&text(s.as_bytes())))
            .collect()),
        other => Err(format!("expected a string, found {}", describe(other))),
    }
}

fn describe(td: &TypeDescriptor) -> String {
    match td {
        TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) => "integers".into(),
        TypeDescriptor::Float(_) => "floating-point numbers".into(),
        TypeDescriptor::Boolean => "booleans".into(),
        TypeDescriptor::Compound(_) => "a compound type (complex numbers?)".into(),
        TypeDescriptor::FixedAscii(_)
        | TypeDescriptor::FixedUnicode(_)
        | TypeDescriptor::VarLenAscii
        | TypeDescriptor::VarLenUnicode => "strings".into(),
        other => format!("{other:?}"),
    }
}

fn attr_ints(loc: &hdf5::Location, name: &str) -> Result<Option<Vec<i64>>, String> {
    if !loc
        .attr_names()
        .map_err(|e| e.to_string())?
        .iter()
        .any(|a| a == name)
    {
        return Ok(None);
    }
    let a = loc.attr(name).map_err(|e| e.to_string())?;
    ints(&a).map(|(v, _)| Some(v))
}

fn attr_float(loc: &hdf5::Location, name: &str) -> Result<Option<f64>, String> {
    if !loc
        .attr_names()
        .map_err(|e| e.to_string())?
        .iter()
        .any(|a| a == name)
    {
        return Ok(None);
    }
    let a = loc.attr(name).map_err(|e| e.to_string())?;
    let (v, _) = floats(&a)?;
    match v.as_slice() {
        [x] => Ok(Some(*x)),
        _ => Err(format!("expected one number, found {}", v.len())),
    }
}

/// Below this many declared bytes a dataset is read without asking how much the file stores.
const SMALL_BYTES: u64 = 16 << 20;

/// Largest ratio of declared to stored bytes accepted: above deflate's maximum (about 1032),
/// below what a hostile file needs to exhaust memory.
const MAX_EXPANSION: u64 = 2048;

/// Refuses a dataset or attribute that declares more data than the file can hold for it
/// (a 17 KB file can declare 1.5e9 entries, whose reading would abort the process).
fn check_declared_size(c: &hdf5::Container) -> Result<(), String> {
    let elem = c.dtype().map(|t| t.size() as u64).unwrap_or(8).max(1);
    let count = c
        .shape()
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64));
    let declared = count.and_then(|n| n.checked_mul(elem));
    match declared {
        Some(bytes) if bytes <= SMALL_BYTES => Ok(()),
        Some(bytes) if bytes <= c.storage_size().saturating_mul(MAX_EXPANSION) => Ok(()),
        _ => Err(format!(
            "declares shape {:?} ({} bytes) but the file stores only {} bytes of it: a \
             truncated or corrupt file",
            c.shape(),
            declared.map_or("too many".to_string(), |b| b.to_string()),
            c.storage_size()
        )),
    }
}

/// Integer values and shape; refuses floats so that an index is never silently truncated.
fn ints(c: &hdf5::Container) -> Result<(Vec<i64>, Vec<usize>), String> {
    check_declared_size(c)?;
    let td = c
        .dtype()
        .and_then(|t| t.to_descriptor())
        .map_err(|e| e.to_string())?;
    match td {
        TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) | TypeDescriptor::Boolean => {
            let v = c.read_raw::<i64>().map_err(|e| e.to_string())?;
            Ok((v, c.shape()))
        }
        other => Err(format!("expected integers, found {}", describe(&other))),
    }
}

fn floats(c: &hdf5::Container) -> Result<(Vec<f64>, Vec<usize>), String> {
    check_declared_size(c)?;
    let td = c
        .dtype()
        .and_then(|t| t.to_descriptor())
        .map_err(|e| e.to_string())?;
    match td {
        TypeDescriptor::Float(_) | TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) => {
            let v = c.read_raw::<f64>().map_err(|e| e.to_string())?;
            Ok((v, c.shape()))
        }
        other => Err(format!("expected numbers, found {}", describe(&other))),
    }
}

/// Reads dataset `name` of `group` (whose HDF5 path is `gpath`) with `f`, naming the path in
/// any problem.
fn dataset<T>(
    group: &hdf5::Group,
    gpath: &str,
    name: &str,
    out: &mut Vec<Problem>,
    f: impl Fn(&hdf5::Container) -> Result<T, String>,
) -> Option<T> {
    let path = format!("{gpath}/{name}");
    if !group.link_exists(name) {
        out.push(Problem::error(path, "missing dataset"));
        return None;
    }
    match group.dataset(name) {
        Ok(d) => match f(&d) {
            Ok(v) => Some(v),
            Err(e) => {
                out.push(Problem::error(path, e));
                None
            }
        },
        Err(e) => {
            out.push(Problem::error(path, format!("not a dataset ({e})")));
            None
        }
    }
}

fn to_index(v: i64, bound: usize) -> Option<usize> {
    usize::try_from(v).ok().filter(|&u| u < bound)
}

/// A matrix as stored, before it is built: its size can be checked against the rest of the
/// file first.
struct RawMatrix {
    path: String,
    shape: [usize; 2],
    triplets: Vec<Triplet<usize, usize, f64>>,
    symmetric: Option<String>,
}

impl RawMatrix {
    fn build(self, out: &mut Vec<Problem>) -> Option<SparseMatrix> {
        assemble(
            self.triplets,
            self.shape,
            self.symmetric.as_deref(),
            &self.path,
            out,
        )
    }
}

/// Reads a sparse (CSR, CSC or COO group) or dense (2-D dataset) matrix `/name`.
///
/// With `square`, the shape must be square (M, K, C); `W` is rectangular.
fn read_matrix(
    file: &hdf5::Group,
    gpath: &str,
    name: &str,
    square: bool,
    out: &mut Vec<Problem>,
) -> Option<RawMatrix> {
    let path = format!("{gpath}/{name}");
    if !file.link_exists(name) {
        out.push(Problem::error(
            path,
            "missing (a sparse matrix group is required)",
        ));
        return None;
    }
    if let Ok(d) = file.dataset(name) {
        return read_dense(&d, &path, square, out);
    }
    let g = match file.group(name) {
        Ok(g) => g,
        Err(e) => {
            out.push(Problem::error(path, format!("cannot open ({e})")));
            return None;
        }
    };
    let mut fail = |m: String| {
        out.push(Problem::error(path.clone(), m));
        None
    };
    let encoding = match attr_string(&g, "encoding-type") {
        Ok(Some(e)) => e,
        Ok(None) => {
            return fail(
                "missing attribute encoding-type (\"csr_matrix\", \"csc_matrix\" or \"coo_matrix\")"
                    .into(),
            );
        }
        Err(e) => return fail(format!("attribute encoding-type: {e}")),
    };
    let shape = match attr_ints(&g, "shape") {
        Ok(Some(s)) if s.len() == 2 && s[0] >= 0 && s[1] >= 0 => [s[0] as usize, s[1] as usize],
        Ok(Some(s)) => return fail(format!("attribute shape = {s:?}, expected [rows, cols]")),
        Ok(None) => return fail("missing attribute shape = [rows, cols]".into()),
        Err(e) => return fail(format!("attribute shape: {e}")),
    };
    if square && shape[0] != shape[1] {
        return fail(format!("shape is {shape:?}, the matrix must be square"));
    }
    let symmetric = match attr_string(&g, "symmetric") {
        Ok(None) => None,
        Ok(Some(s)) if s == "upper" || s == "lower" => Some(s),
        Ok(Some(s)) if s == "full" || s == "none" || s.is_empty() => None,
        Ok(Some(s)) => {
            return fail(format!(
                "attribute symmetric = {s:?}, expected \"upper\" or \"lower\""
            ));
        }
        Err(e) => return fail(format!("attribute symmetric: {e}")),
    };
    let triplets = match encoding.as_str() {
        "csr_matrix" | "csc_matrix" => {
            read_compressed(&g, &path, shape, encoding == "csr_matrix", out)
        }
        "coo_matrix" => read_coo(&g, &path, shape, out),
        other => {
            return fail(format!(
                "encoding-type = {other:?}; supported: \"csr_matrix\", \"csc_matrix\", \"coo_matrix\""
            ));
        }
    }?;
    Some(RawMatrix {
        path,
        shape,
        triplets,
        symmetric,
    })
}

fn read_dense(
    d: &hdf5::Dataset,
    path: &str,
    square: bool,
    out: &mut Vec<Problem>,
) -> Option<RawMatrix> {
    let (v, shape) = match floats(d) {
        Ok(x) => x,
        Err(e) => {
            out.push(Problem::error(path, e));
            return None;
        }
    };
    if shape.len() != 2 || (square && shape[0] != shape[1]) {
        out.push(Problem::error(
            path,
            format!(
                "a dense matrix dataset must be 2-D{}, found shape {shape:?}",
                if square { " and square" } else { "" }
            ),
        ));
        return None;
    }
    let mut t = Vec::new();
    for i in 0..shape[0] {
        for j in 0..shape[1] {
            let x = v[i * shape[1] + j];
            if x != 0.0 {
                t.push(Triplet::new(i, j, x));
            }
        }
    }
    Some(RawMatrix {
        path: path.to_string(),
        shape: [shape[0], shape[1]],
        triplets: t,
        symmetric: None,
    })
}

fn read_compressed(
    g: &hdf5::Group,
    path: &str,
    shape: [usize; 2],
    by_rows: bool,
    out: &mut Vec<Problem>,
) -> Option<Vec<Triplet<usize, usize, f64>>> {
    let data = dataset(g, path, "data", out, |c| floats(c).map(|x| x.0));
    let indices = dataset(g, path, "indices", out, |c| ints(c).map(|x| x.0));
    let indptr = dataset(g, path, "indptr", out, |c| ints(c).map(|x| x.0));
    let (data, indices, indptr) = (data?, indices?, indptr?);
    let (major, minor) = if by_rows {
        (shape[0], shape[1])
    } else {
        (shape[1], shape[0])
    };
    let mut fail = |name: &str, m: String| {
        out.push(Problem::error(format!("{path}/{name}"), m));
        None
    };
    if indptr.len() != major + 1 {
        return fail(
            "indptr",
            format!(
                "has {} entries, expected {} (one more than the {} count)",
                indptr.len(),
                major + 1,
                if by_rows { "row" } else { "column" }
            ),
        );
    }
    if data.len() != indices.len() {
        return fail(
            "indices",
            format!("has {} entries but data has {}", indices.len(), data.len()),
        );
    }
    if indptr[0] != 0 || indptr.windows(2).any(|w| w[1] < w[0]) {
        return fail("indptr", "must start at 0 and never decrease".into());
    }
    if indptr[major] as usize != data.len() {
        return fail(
            "indptr",
            format!(
                "last entry is {}, but there are {} values",
                indptr[major],
                data.len()
            ),
        );
    }
    let mut t = Vec::with_capacity(data.len());
    for a in 0..major {
        for p in indptr[a] as usize..indptr[a + 1] as usize {
            let Some(b) = to_index(indices[p], minor) else {
                return fail(
                    "indices",
                    format!(
                        "index {} at position {p} is out of range 0..{minor}",
                        indices[p]
                    ),
                );
            };
            let (i, j) = if by_rows { (a, b) } else { (b, a) };
            t.push(Triplet::new(i, j, data[p]));
        }
    }
    Some(t)
}

fn read_coo(
    g: &hdf5::Group,
    path: &str,
    shape: [usize; 2],
    out: &mut Vec<Problem>,
) -> Option<Vec<Triplet<usize, usize, f64>>> {
    let data = dataset(g, path, "data", out, |c| floats(c).map(|x| x.0));
    let row = dataset(g, path, "row", out, |c| ints(c).map(|x| x.0));
    let col = dataset(g, path, "col", out, |c| ints(c).map(|x| x.0));
    let (data, row, col) = (data?, row?, col?);
    if row.len() != data.len() || col.len() != data.len() {
        out.push(Problem::error(
            path,
            format!(
                "row, col and data must have the same length, found {}, {}, {}",
                row.len(),
                col.len(),
                data.len()
            ),
        ));
        return None;
    }
    let mut t = Vec::with_capacity(data.len());
    for p in 0..data.len() {
        match (to_index(row[p], shape[0]), to_index(col[p], shape[1])) {
            (Some(i), Some(j)) => t.push(Triplet::new(i, j, data[p])),
            _ => {
                out.push(Problem::error(
                    path,
                    format!(
                        "entry {p} at ({}, {}) is out of range for shape {shape:?}",
                        row[p], col[p]
                    ),
                ));
                return None;
            }
        }
    }
    Some(t)
}

/// Builds the matrix from triplets, mirroring a stored triangle; duplicates add up.
fn assemble(
    mut t: Vec<Triplet<usize, usize, f64>>,
    shape: [usize; 2],
    symmetric: Option<&str>,
    path: &str,
    out: &mut Vec<Problem>,
) -> Option<SparseMatrix> {
    if let Some(tri) = symmetric {
        let upper = tri == "upper";
        if let Some(e) = t
            .iter()
            .find(|e| if upper { e.row > e.col } else { e.row < e.col })
        {
            out.push(Problem::error(
                path,
                format!(
                    "symmetric = {tri:?} but entry ({}, {}) lies in the other triangle",
                    e.row, e.col
                ),
            ));
            return None;
        }
        let mirrored: Vec<_> = t
            .iter()
            .filter(|e| e.row != e.col)
            .map(|e| Triplet::new(e.col, e.row, e.val))
            .collect();
        t.extend(mirrored);
    }
    match SparseMatrix::try_new_from_triplets(shape[0], shape[1], &t) {
        Ok(m) => Some(m),
        Err(e) => {
            out.push(Problem::error(
                path,
                format!("cannot build the matrix: {e}"),
            ));
            None
        }
    }
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

/// Reads `/contacts`; `n` is `None` when K could not be read (DOF ranges are then not
/// checked, and a `W` matrix is not built).
fn read_contacts(file: &hdf5::File, n: Option<usize>, out: &mut Vec<Problem>) -> Option<Contacts> {
    if !file.link_exists("contacts") {
        return Some(Contacts::none());
    }
    let g = match file.group("contacts") {
        Ok(g) => g,
        Err(e) => {
            out.push(Problem::error(
                "/contacts",
                format!("must be a group ({e})"),
            ));
            return None;
        }
    };
    let dim = match attr_ints(&g, "dim") {
        Ok(Some(v)) if v.len() == 1 && (v[0] == 1 || v[0] == 2) => v[0] as usize,
        Ok(Some(v)) => {
            out.push(Problem::error(
                "/contacts",
                format!("attribute dim = {v:?}, must be 1 or 2"),
            ));
            return None;
        }
        Ok(None) => {
            out.push(Problem::error(
                "/contacts",
                "missing attribute dim (1 or 2 tangential directions)",
            ));
            return None;
        }
        Err(e) => {
            out.push(Problem::error("/contacts", format!("attribute dim: {e}")));
            return None;
        }
    };
    let has_normal = g.link_exists("normal");
    let normal_group = if has_normal {
        match g.group("normal") {
            Ok(ng) => Some(ng),
            Err(e) => {
                out.push(Problem::error(
                    "/contacts/normal",
                    format!("must be a group ({e})"),
                ));
                return None;
            }
        }
    } else {
        None
    };
    let mu_n = match &normal_group {
        None => dataset(&g, "/contacts", "mu_n", out, |c| floats(c).map(|x| x.0))?,
        Some(ng) => {
            if g.link_exists("mu_n") {
                out.push(Problem::error(
                    "/contacts/mu_n",
                    "contacts with a normal direction take their bound from /contacts/normal/mu \
                     and the normal force: remove mu_n",
                ));
                return None;
            }
            let mu = dataset(ng, "/contacts/normal", "mu", out, |c| {
                floats(c).map(|x| x.0)
            })?;
            vec![0.0; mu.len()]
        }
    };
    let nc = mu_n.len();
    let rho = if g.link_exists("rho") {
        dataset(&g, "/contacts", "rho", out, |c| floats(c).map(|x| x.0))?
    } else {
        vec![1.0; nc]
    };
    let rho_auto = match attr_string(&g, "rho_mode") {
        Ok(None) => false,
        Ok(Some(m)) if m == "auto" => true,
        Ok(Some(m)) if m == "fixed" => false,
        Ok(Some(m)) => {
            out.push(Problem::error(
                "/contacts",
                format!("attribute rho_mode = {m:?}, must be \"auto\" or \"fixed\""),
            ));
            return None;
        }
        Err(e) => {
            out.push(Problem::error(
                "/contacts",
                format!("attribute rho_mode: {e}"),
            ));
            return None;
        }
    };
    let has_dofs = g.link_exists("dofs");
    let has_w = g.link_exists("W");
    let kinematics = match (has_dofs, has_w) {
        (true, true) => {
            out.push(Problem::error(
                "/contacts",
                "has both dofs and W: give the kinematics one way only",
            ));
            return None;
        }
        (false, false) => {
            out.push(Problem::error(
                "/contacts",
                "missing the kinematics: a dofs dataset (nc x dim) or a sparse W group",
            ));
            return None;
        }
        (true, false) | (false, true) => read_kinematics(&g, "/contacts", nc, dim, n, out)?,
    };
    let k_t = if g.link_exists("k_t") {
        Some(per_contact(&g, "/contacts", "k_t", nc, out)?)
    } else {
        None
    };
    let normal = match &normal_group {
        None => None,
        Some(ng) => Some(read_normal(ng, nc, n, out)?),
    };
    Some(Contacts {
        dim,
        mu_n,
        rho,
        rho_auto,
        kinematics,
        k_t,
        normal,
    })
}

/// Reads the kinematics of group `g` (path `gpath`): a `dofs` table (with an optional
/// `dofs_other`) or a sparse `W` of `nc * dim` rows.
fn read_kinematics(
    g: &hdf5::Group,
    gpath: &str,
    nc: usize,
    dim: usize,
    n: Option<usize>,
    out: &mut Vec<Problem>,
) -> Option<Kinematics> {
    if g.link_exists("dofs") {
        let n = n.unwrap_or(usize::MAX);
        let dofs = dof_table(g, gpath, "dofs", nc, dim, n, false, out)?;
        let other = if g.link_exists("dofs_other") {
            Some(dof_table(g, gpath, "dofs_other", nc, dim, n, true, out)?)
        } else {
            None
        };
        return Some(Kinematics::Dofs {
            dofs: dofs.into_iter().map(|d| d.unwrap_or(0)).collect(),
            other,
        });
    }
    let w = read_matrix(g, gpath, "W", false, out)?;
    let n = n?;
    // Checked before the matrix is built (its declared size could be anything).
    if w.shape != [nc * dim, n] {
        out.push(Problem::error(
            format!("{gpath}/W"),
            format!(
                "shape is {:?}, expected [dim * nc, n] = [{}, {n}]",
                w.shape,
                nc * dim
            ),
        ));
        return None;
    }
    Some(Kinematics::Matrix(w.build(out)?))
}

/// A float dataset of one value per contact.
fn per_contact(
    g: &hdf5::Group,
    gpath: &str,
    name: &str,
    nc: usize,
    out: &mut Vec<Problem>,
) -> Option<Vec<f64>> {
    let v = dataset(g, gpath, name, out, |c| floats(c).map(|x| x.0))?;
    if v.len() != nc {
        out.push(Problem::error(
            format!("{gpath}/{name}"),
            format!("has {} entries for {nc} contacts", v.len()),
        ));
        return None;
    }
    Some(v)
}

/// Reads `/contacts/normal` (format v2): `mu`, optional `g0` and `k_n`, and the normal
/// kinematics (`dofs` of `nc` entries or a sparse `W` of `nc` rows).
fn read_normal(
    g: &hdf5::Group,
    nc: usize,
    n: Option<usize>,
    out: &mut Vec<Problem>,
) -> Option<NormalContacts> {
    const PATH: &str = "/contacts/normal";
    let mu = per_contact(g, PATH, "mu", nc, out)?;
    let g0 = if g.link_exists("g0") {
        per_contact(g, PATH, "g0", nc, out)?
    } else {
        vec![0.0; nc]
    };
    let k_n = if g.link_exists("k_n") {
        Some(per_contact(g, PATH, "k_n", nc, out)?)
    } else {
        None
    };
    let load = if g.link_exists("load") {
        Some(per_contact(g, PATH, "load", nc, out)?)
    } else {
        None
    };
    match (g.link_exists("dofs"), g.link_exists("W")) {
        (true, true) => {
            out.push(Problem::error(
                PATH,
                "has both dofs and W: give the normal kinematics one way only",
            ));
            return None;
        }
        (false, false) => {
            out.push(Problem::error(
                PATH,
                "missing the normal kinematics: a dofs dataset (nc) or a sparse W group (nc x n)",
            ));
            return None;
        }
        _ => {}
    }
    let kinematics = match &load {
        // A contact with a fixed load has no normal DOF: -1 there.
        Some(load) if g.link_exists("dofs") => {
            let nn = n.unwrap_or(usize::MAX);
            let dofs = dof_table(g, PATH, "dofs", nc, 1, nn, true, out)?;
            let other = if g.link_exists("dofs_other") {
                Some(dof_table(g, PATH, "dofs_other", nc, 1, nn, true, out)?)
            } else {
                None
            };
            if let Some(c) = (0..nc).find(|&c| dofs[c].is_none() && load[c].is_nan()) {
                out.push(Problem::error(
                    format!("{PATH}/dofs"),
                    format!(
                        "contact {c} has no normal DOF (-1) but no fixed load either: give its \
                         DOF, or its constant normal force in {PATH}/load"
                    ),
                ));
                return None;
            }
            Kinematics::Dofs {
                dofs: dofs.into_iter().map(|d| d.unwrap_or(0)).collect(),
                other,
            }
        }
        _ => read_kinematics(g, PATH, nc, 1, n, out)?,
    };
    Some(NormalContacts {
        kinematics,
        g0,
        mu,
        k_n,
        load,
    })
}

/// Reads an `nc x dim` table of DOF indices (a 1-D array is accepted when dim = 1).
#[allow(clippy::too_many_arguments)]
fn dof_table(
    g: &hdf5::Group,
    gpath: &str,
    name: &str,
    nc: usize,
    dim: usize,
    n: usize,
    ground_allowed: bool,
    out: &mut Vec<Problem>,
) -> Option<Vec<Option<usize>>> {
    let path = format!("{gpath}/{name}");
    let (v, shape) = dataset(g, gpath, name, out, ints)?;
    let shape_ok = shape == [nc, dim] || (dim == 1 && shape == [nc]);
    if !shape_ok {
        out.push(Problem::error(
            path,
            format!("shape is {shape:?}, expected [nc, dim] = [{nc}, {dim}] (nc from mu_n)"),
        ));
        return None;
    }
    let mut dofs = Vec::with_capacity(v.len());
    for (row, &d) in v.iter().enumerate() {
        let (c, k) = (row / dim, row % dim);
        if d == -1 && ground_allowed {
            dofs.push(None);
        } else if let Some(u) = to_index(d, n) {
            dofs.push(Some(u));
        } else {
            let hint = if ground_allowed {
                " (use -1 for ground)"
            } else {
                ""
            };
            out.push(Problem::error(
                path,
                format!("contact {c} direction {k} uses DOF {d}, out of range 0..{n}{hint}"),
            ));
            return None;
        }
    }
    Some(dofs)
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

/// Writes a model file atomically: to a temporary file beside `path`, renamed on success.
///
/// The model is validated first; an invalid model is not written.
pub fn write(path: impl AsRef<Path>, model: &Model) -> Result<(), ModelError> {
    let path = path.as_ref();
    let problems = validate(model);
    if has_errors(&problems) {
        return Err(ModelError::Invalid {
            path: path.to_path_buf(),
            problems,
        });
    }
    crate::h5::atomically(path, |tmp| write_to(tmp, model).map_err(|e| e.to_string())).map_err(
        |reason| {
            // `atomically` names the file already; the variant's message does too.
            let prefix = format!("cannot write {}: ", path.display());
            ModelError::Write {
                path: path.to_path_buf(),
                reason: reason.strip_prefix(&prefix).unwrap_or(&reason).to_string(),
            }
        },
    )
}

fn vlu(s: &str) -> hdf5::Result<VarLenUnicode> {
    s.parse::<VarLenUnicode>()
        .map_err(|e| hdf5::Error::from(format!("string {s:?}: {e}")))
}

fn put_str_attr(loc: &hdf5::Location, name: &str, value: &str) -> hdf5::Result<()> {
    loc.new_attr::<VarLenUnicode>()
        .create(name)?
        .write_scalar(&vlu(value)?)
}

fn write_to(path: &Path, model: &Model) -> hdf5::Result<()> {
    let f = hdf5::File::create(path)?;
    put_str_attr(&f, "format", FORMAT_NAME)?;
    let v2 = model.contacts.k_t.is_some() || model.contacts.has_normal();
    let version = if model.cyclic.is_some() {
        3
    } else if v2 {
        2
    } else {
        1
    };
    f.new_attr::<i64>()
        .create("version")?
        .write_scalar(&version)?;
    if let Some(t) = &model.title {
        put_str_attr(&f, "title", t)?;
    }
    if let Some(u) = &model.units {
        put_str_attr(&f, "units", u)?;
    }
    write_csr(&f, "M", &model.mass, true)?;
    write_csr(&f, "K", &model.stiffness, true)?;
    if let Some(c) = &model.damping_matrix {
        write_csr(&f, "C", c, true)?;
    }
    let d = &model.damping;
    if !d.is_empty() {
        let g = f.create_group("damping")?;
        let scalar = |name: &str, v: f64| -> hdf5::Result<()> {
            g.new_dataset::<f64>().create(name)?.write_scalar(&v)
        };
        if let Some((a, b)) = d.rayleigh {
            scalar("alpha", a)?;
            scalar("beta", b)?;
        }
        if let Some(eta) = d.hysteretic_eta {
            scalar("eta", eta)?;
        }
        if let Some(z) = &d.modal_zeta {
            g.new_dataset_builder()
                .with_data(z.as_slice())
                .create("zeta")?;
        }
    }
    let c = &model.contacts;
    if !c.is_empty() {
        let g = f.create_group("contacts")?;
        g.new_attr::<i64>()
            .create("dim")?
            .write_scalar(&(c.dim as i64))?;
        if !c.has_normal() {
            g.new_dataset_builder()
                .with_data(c.mu_n.as_slice())
                .create("mu_n")?;
        }
        g.new_dataset_builder()
            .with_data(c.rho.as_slice())
            .create("rho")?;
        // Written only when set, so that files of fixed-rho models stay as they were.
        if c.rho_auto && !c.has_normal() {
            put_str_attr(&g, "rho_mode", "auto")?;
        }
        if let Some(k) = &c.k_t {
            g.new_dataset_builder()
                .with_data(k.as_slice())
                .create("k_t")?;
        }
        write_kinematics(&g, &c.kinematics, c.len(), c.dim)?;
        if let Some(nc) = &c.normal {
            let ng = g.create_group("normal")?;
            ng.new_dataset_builder()
                .with_data(nc.mu.as_slice())
                .create("mu")?;
            ng.new_dataset_builder()
                .with_data(nc.g0.as_slice())
                .create("g0")?;
            if let Some(k) = &nc.k_n {
                ng.new_dataset_builder()
                    .with_data(k.as_slice())
                    .create("k_n")?;
            }
            if let Some(load) = &nc.load {
                ng.new_dataset_builder()
                    .with_data(load.as_slice())
                    .create("load")?;
            }
            match (&nc.load, &nc.kinematics) {
                (Some(_), Kinematics::Dofs { dofs, other }) => {
                    // -1: the contacts with a fixed load have no normal DOF.
                    let fixed = |c: usize| nc.fixed_load(c).is_some();
                    let table: Vec<i64> = (0..c.len())
                        .map(|i| if fixed(i) { -1 } else { dofs[i] as i64 })
                        .collect();
                    ng.new_dataset_builder().with_data(&table).create("dofs")?;
                    if let Some(o) = other {
                        let table: Vec<i64> = (0..c.len())
                            .map(|i| match o[i] {
                                Some(d) if !fixed(i) => d as i64,
                                _ => -1,
                            })
                            .collect();
                        ng.new_dataset_builder()
                            .with_data(&table)
                            .create("dofs_other")?;
                    }
                }
                (_, kin) => write_kinematics(&ng, kin, c.len(), 1)?,
            }
        }
    }
    if !model.forcing.is_empty() {
        let g = f.create_group("forcing")?;
        let fo = &model.forcing;
        let dof: Vec<i64> = fo.iter().map(|t| t.dof as i64).collect();
        let h: Vec<i64> = fo.iter().map(|t| t.harmonic as i64).collect();
        let cs: Vec<f64> = fo.iter().map(|t| t.cos).collect();
        let sn: Vec<f64> = fo.iter().map(|t| t.sin).collect();
        g.new_dataset_builder().with_data(&dof).create("dof")?;
        g.new_dataset_builder().with_data(&h).create("harmonic")?;
        g.new_dataset_builder().with_data(&cs).create("cos")?;
        g.new_dataset_builder().with_data(&sn).create("sin")?;
    }
    if let Some(cy) = &model.cyclic {
        let g = f.create_group("cyclic")?;
        g.new_dataset::<i64>()
            .create("sectors")?
            .write_scalar(&(cy.sectors as i64))?;
        g.new_dataset::<i64>()
            .create("engine_order")?
            .write_scalar(&cy.engine_order)?;
        for (name, v) in [("left", &cy.left), ("right", &cy.right)] {
            let v: Vec<i64> = v.iter().map(|&d| d as i64).collect();
            g.new_dataset_builder().with_data(&v).create(name)?;
        }
    }
    if let Some(labels) = &model.dof_labels {
        let v = labels
            .iter()
            .map(|l| vlu(l))
            .collect::<hdf5::Result<Vec<_>>>()?;
        f.new_dataset_builder().with_data(&v).create("dof_labels")?;
    }
    f.flush()?;
    Ok(())
}

/// Writes kinematics as a `dofs` table (`nc x dim`, with `dofs_other`) or a sparse `W`.
fn write_kinematics(
    g: &hdf5::Group,
    kinematics: &Kinematics,
    nc: usize,
    dim: usize,
) -> hdf5::Result<()> {
    match kinematics {
        Kinematics::Dofs { dofs, other } => {
            let table: Vec<i64> = dofs.iter().map(|&d| d as i64).collect();
            g.new_dataset::<i64>()
                .shape([nc, dim])
                .create("dofs")?
                .write_raw(&table)?;
            if let Some(o) = other {
                let table: Vec<i64> = o.iter().map(|d| d.map_or(-1, |d| d as i64)).collect();
                g.new_dataset::<i64>()
                    .shape([nc, dim])
                    .create("dofs_other")?
                    .write_raw(&table)?;
            }
        }
        Kinematics::Matrix(w) => write_csr(g, "W", w, false)?,
    }
    Ok(())
}

/// Writes `a` as a CSR group; with `upper`, only the upper triangle (attribute symmetric).
fn write_csr(loc: &hdf5::Group, name: &str, a: &SparseMatrix, upper: bool) -> hdf5::Result<()> {
    // CSR of A is CSC of A^T; for the upper triangle of a symmetric A, row i of the upper
    // triangle holds the entries of column i of A on or below the diagonal.
    let csr = if upper {
        None
    } else {
        Some(
            a.as_ref()
                .transpose()
                .to_col_major()
                .map_err(|e| hdf5::Error::from(e.sentence()))?,
        )
    };
    let src = csr.as_ref().unwrap_or(a);
    let mut indptr = vec![0i64];
    let mut indices = Vec::new();
    let mut data = Vec::new();
    for j in 0..src.ncols() {
        for (&i, &v) in src.row_idx_of_col_raw(j).iter().zip(src.val_of_col(j)) {
            if !upper || i >= j {
                indices.push(i as i64);
                data.push(v);
            }
        }
        indptr.push(indices.len() as i64);
    }
    let g = loc.create_group(name)?;
    put_str_attr(&g, "encoding-type", "csr_matrix")?;
    put_str_attr(&g, "encoding-version", "0.1.0")?;
    if upper {
        put_str_attr(&g, "symmetric", "upper")?;
    }
    g.new_attr::<i64>()
        .shape([2])
        .create("shape")?
        .write_raw(&[a.nrows() as i64, a.ncols() as i64])?;
    g.new_dataset_builder().with_data(&data).create("data")?;
    g.new_dataset_builder()
        .with_data(&indices)
        .create("indices")?;
    g.new_dataset_builder()
        .with_data(&indptr)
        .create("indptr")?;
    Ok(())
}
