//! Conversions between Python objects (numpy, scipy.sparse, plain lists) and the library's
//! types.

use crate::InputError;
use ewr_model::SparseMatrix;
use faer::sparse::Triplet;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A real matrix from anything `scipy.sparse.coo_array` accepts (dense numpy arrays, nested
/// lists, any scipy sparse format), checked to be `rows x cols` when given.
pub fn sparse(
    obj: &Bound<'_, PyAny>,
    name: &str,
    shape: Option<(usize, usize)>,
) -> PyResult<SparseMatrix> {
    let py = obj.py();
    let sp = py.import("scipy.sparse")?;
    let np = py.import("numpy")?;
    let coo = sp
        .getattr("coo_array")?
        .call1((obj,))
        .map_err(|e| InputError::new_err(format!("{name}: not a matrix ({e})")))?;
    coo.call_method0("sum_duplicates")?;
    let (nr, nc): (usize, usize) = coo.getattr("shape")?.extract()?;
    if let Some((r, c)) = shape
        && (r, c) != (nr, nc)
    {
        return Err(InputError::new_err(format!(
            "{name}: shape {nr} x {nc}, expected {r} x {c}"
        )));
    }
    let is_complex: bool = np
        .getattr("iscomplexobj")?
        .call1((coo.getattr("data")?,))?
        .extract()?;
    if is_complex {
        return Err(InputError::new_err(format!(
            "{name}: complex entries; the structural matrices are real (hysteretic damping is \
             the model's eta)"
        )));
    }
    let as_type = |attr: &str, dtype: &str| -> PyResult<Bound<'_, PyAny>> {
        let kw = PyDict::new(py);
        kw.set_item("dtype", dtype)?;
        np.getattr("ascontiguousarray")?
            .call((coo.getattr(attr)?,), Some(&kw))
    };
    let rows = as_type("row", "int64")?;
    let cols = as_type("col", "int64")?;
    let data = as_type("data", "float64")?;
    let rows: PyReadonlyArray1<'_, i64> = rows.extract()?;
    let cols: PyReadonlyArray1<'_, i64> = cols.extract()?;
    let data: PyReadonlyArray1<'_, f64> = data.extract()?;
    let (rows, cols, data) = (rows.as_slice()?, cols.as_slice()?, data.as_slice()?);
    let mut trip = Vec::with_capacity(data.len());
    for ((&i, &j), &v) in rows.iter().zip(cols).zip(data) {
        if !v.is_finite() {
            return Err(InputError::new_err(format!(
                "{name}: entry ({i}, {j}) is {v}; every entry must be finite"
            )));
        }
        if v != 0.0 {
            trip.push(Triplet::new(i as usize, j as usize, v));
        }
    }
    SparseMatrix::try_new_from_triplets(nr, nc, &trip)
        .map_err(|e| InputError::new_err(format!("{name}: {e:?}")))
}

/// A sparse matrix as a `scipy.sparse.csc_array`.
pub fn to_scipy<'py>(py: Python<'py>, a: &SparseMatrix) -> PyResult<Bound<'py, PyAny>> {
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for t in a.triplet_iter() {
        rows.push(t.row as i64);
        cols.push(t.col as i64);
        vals.push(*t.val);
    }
    let sp = py.import("scipy.sparse")?;
    let coo = sp.getattr("coo_array")?.call1((
        (
            PyArray1::from_vec(py, vals),
            (PyArray1::from_vec(py, rows), PyArray1::from_vec(py, cols)),
        ),
        (a.nrows(), a.ncols()),
    ))?;
    coo.call_method0("tocsc")
}

/// A row-major `rows x cols` array.
pub fn array2<'py>(
    py: Python<'py>,
    data: Vec<f64>,
    rows: usize,
    cols: usize,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_vec(py, data)
        .reshape([rows, cols])?
        .into_any())
}

/// A row-major `a x b x c` array.
pub fn array3<'py>(
    py: Python<'py>,
    data: Vec<f64>,
    shape: [usize; 3],
) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_vec(py, data).reshape(shape)?.into_any())
}

/// A serialisable value as plain Python objects (dicts, lists, floats), through JSON.
pub fn to_python<'py, T: serde::Serialize>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let s = serde_json::to_string(value)
        .map_err(|e| crate::SolveError::new_err(format!("cannot convert a result: {e}")))?;
    py.import("json")?.getattr("loads")?.call1((s,))
}

/// Issues a Python `UserWarning` (the CLI prints these on stderr).
pub fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    py.import("warnings")?.getattr("warn")?.call1((message,))?;
    Ok(())
}
