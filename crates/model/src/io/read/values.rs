//! Typed values of an HDF5 file: strings of every flavour writers use, integers, numbers,
//! and datasets read with the path at fault named, each refused before it is read when it
//! declares more data than the file holds.

use crate::validate::Problem;
use hdf5::types::{FixedAscii, FixedUnicode, TypeDescriptor, VarLenAscii, VarLenUnicode};

pub(super) fn optional_string(
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

/// The attribute `name` of `loc`, if it has one.
fn attribute(loc: &hdf5::Location, name: &str) -> Result<Option<hdf5::Attribute>, String> {
    if !loc
        .attr_names()
        .map_err(|e| e.to_string())?
        .iter()
        .any(|a| a == name)
    {
        return Ok(None);
    }
    loc.attr(name).map(Some).map_err(|e| e.to_string())
}

/// Reads a string attribute of any of the string types h5py, numpy and C codes write.
pub(super) fn attr_string(loc: &hdf5::Location, name: &str) -> Result<Option<String>, String> {
    let Some(a) = attribute(loc, name)? else {
        return Ok(None);
    };
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

pub(super) fn strings(d: &hdf5::Dataset) -> Result<Vec<String>, String> {
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

pub(super) fn attr_ints(loc: &hdf5::Location, name: &str) -> Result<Option<Vec<i64>>, String> {
    let Some(a) = attribute(loc, name)? else {
        return Ok(None);
    };
    ints(&a).map(|(v, _)| Some(v))
}

pub(super) fn attr_float(loc: &hdf5::Location, name: &str) -> Result<Option<f64>, String> {
    let Some(a) = attribute(loc, name)? else {
        return Ok(None);
    };
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
pub(super) fn ints(c: &hdf5::Container) -> Result<(Vec<i64>, Vec<usize>), String> {
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

pub(super) fn floats(c: &hdf5::Container) -> Result<(Vec<f64>, Vec<usize>), String> {
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
pub(super) fn dataset<T>(
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

pub(super) fn to_index(v: i64, bound: usize) -> Option<usize> {
    usize::try_from(v).ok().filter(|&u| u < bound)
}
