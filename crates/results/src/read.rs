//! Reading a result file back whole, for tools that do not read HDF5 themselves (Python's
//! `ewr.read_result`): every attribute and dataset of every group, as numbers or text, in
//! the layout of `docs/results-format.md`.

use hdf5::types::{TypeDescriptor, VarLenAscii, VarLenUnicode};

/// Values of one attribute or dataset, with their shape (empty for a scalar attribute).
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Floating-point numbers.
    Float(Vec<f64>, Vec<usize>),
    /// Integers.
    Int(Vec<i64>, Vec<usize>),
    /// Strings.
    Text(Vec<String>, Vec<usize>),
}

/// A group of a result file: its attributes, datasets and subgroups, by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tree {
    /// Attributes (scalars have an empty shape).
    pub attrs: Vec<(String, Values)>,
    /// Datasets.
    pub datasets: Vec<(String, Values)>,
    /// Subgroups.
    pub groups: Vec<(String, Tree)>,
}

/// Largest dataset read back: result files hold sweeps of up to 100 000 points.
const MAX_VALUES: usize = 1 << 28;

fn values(c: &hdf5::Container, name: &str) -> Result<Values, String> {
    let e = |e: hdf5::Error| format!("{name}: {e}");
    let shape = c.shape();
    let n: usize = shape.iter().product();
    if n > MAX_VALUES {
        return Err(format!("{name}: {n} values, more than a result file holds"));
    }
    let td = c.dtype().and_then(|t| t.to_descriptor()).map_err(e)?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(match td {
        TypeDescriptor::Float(_) => Values::Float(c.read_raw::<f64>().map_err(e)?, shape),
        TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) | TypeDescriptor::Boolean => {
            Values::Int(c.read_raw::<i64>().map_err(e)?, shape)
        }
        TypeDescriptor::VarLenUnicode => Values::Text(
            c.read_raw::<VarLenUnicode>()
                .map_err(e)?
                .iter()
                .map(|s| text(s.as_bytes()))
                .collect(),
            shape,
        ),
        TypeDescriptor::VarLenAscii => Values::Text(
            c.read_raw::<VarLenAscii>()
                .map_err(e)?
                .iter()
                .map(|s| text(s.as_bytes()))
                .collect(),
            shape,
        ),
        other => return Err(format!("{name}: values of type {other:?} are not read")),
    })
}

fn tree(g: &hdf5::Group, at: &str) -> Result<Tree, String> {
    let e = |e: hdf5::Error| format!("{at}: {e}");
    let mut t = Tree::default();
    for name in g.attr_names().map_err(e)? {
        let a = g.attr(&name).map_err(e)?;
        t.attrs
            .push((name.clone(), values(&a, &format!("{at}@{name}"))?));
    }
    for name in g.member_names().map_err(e)? {
        let path = format!("{}/{name}", at.trim_end_matches('/'));
        if let Ok(sub) = g.group(&name) {
            t.groups.push((name, tree(&sub, &path)?));
        } else {
            let d = g.dataset(&name).map_err(e)?;
            t.datasets.push((name, values(&d, &path)?));
        }
    }
    Ok(t)
}

/// Every attribute, dataset and group of the HDF5 file at `path`.
pub fn read_tree(path: &std::path::Path) -> Result<Tree, String> {
    let f = hdf5::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    tree(&f, "/").map_err(|e| format!("{}: {e}", path.display()))
}
