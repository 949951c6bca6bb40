//! Reading a matrix: a sparse group (CSR, CSC or COO, optionally one stored triangle of a
//! symmetric matrix) or a dense 2-D dataset.

use super::values::{attr_ints, attr_string, dataset, floats, ints, to_index};
use crate::model::SparseMatrix;
use crate::validate::Problem;
use faer::sparse::Triplet;

/// A matrix as stored, before it is built: its size can be checked against the rest of the
/// file first.
pub(super) struct RawMatrix {
    pub(super) path: String,
    pub(super) shape: [usize; 2],
    pub(super) entries: Entries,
    symmetric: Option<String>,
}

impl RawMatrix {
    pub(super) fn build(self, out: &mut Vec<Problem>) -> Option<SparseMatrix> {
        assemble(
            &self.entries,
            self.shape,
            self.symmetric.as_deref(),
            &self.path,
            out,
        )
    }
}

/// A matrix's stored entries, indices checked against its shape: as triplets (COO, dense),
/// or as the compressed arrays themselves, which are walked where they are assembled rather
/// than copied into triplets first (that copy was a third of reading a 100 000-DOF model).
pub(super) enum Entries {
    Triplets(Vec<Triplet<usize, usize, f64>>),
    Compressed {
        data: Vec<f64>,
        /// Each entry's column (CSR) or row (CSC).
        minor: Vec<usize>,
        /// Where each row (CSR) or column (CSC) starts in `data`, and the end.
        start: Vec<usize>,
        by_rows: bool,
    },
}

impl Entries {
    /// Number of stored entries.
    pub(super) fn len(&self) -> usize {
        match self {
            Entries::Triplets(t) => t.len(),
            Entries::Compressed { data, .. } => data.len(),
        }
    }

    /// `f(row, col, value)` for every stored entry, in the order stored; stops at the first
    /// `Some`.
    fn find<T>(&self, mut f: impl FnMut(usize, usize, f64) -> Option<T>) -> Option<T> {
        match self {
            Entries::Triplets(t) => t.iter().find_map(|e| f(e.row, e.col, e.val)),
            Entries::Compressed {
                data,
                minor,
                start,
                by_rows,
            } => start.windows(2).enumerate().find_map(|(a, w)| {
                (w[0]..w[1]).find_map(|p| {
                    let (i, j) = if *by_rows {
                        (a, minor[p])
                    } else {
                        (minor[p], a)
                    };
                    f(i, j, data[p])
                })
            }),
        }
    }

    /// `f(row, col, value)` for every stored entry, in the order stored.
    fn for_each(&self, mut f: impl FnMut(usize, usize, f64)) {
        self.find(|i, j, v| {
            f(i, j, v);
            None::<()>
        });
    }
}

/// Reads a sparse (CSR, CSC or COO group) or dense (2-D dataset) matrix `/name`.
///
/// With `square`, the shape must be square (M, K, C); `W` is rectangular.
pub(super) fn read_matrix(
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
    let entries = match encoding.as_str() {
        "csr_matrix" | "csc_matrix" => {
            read_compressed(&g, &path, shape, encoding == "csr_matrix", out)
        }
        "coo_matrix" => read_coo(&g, &path, shape, out).map(Entries::Triplets),
        other => {
            return fail(format!(
                "encoding-type = {other:?}; supported: \"csr_matrix\", \"csc_matrix\", \"coo_matrix\""
            ));
        }
    }?;
    Some(RawMatrix {
        path,
        shape,
        entries,
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
        entries: Entries::Triplets(t),
        symmetric: None,
    })
}

fn read_compressed(
    g: &hdf5::Group,
    path: &str,
    shape: [usize; 2],
    by_rows: bool,
    out: &mut Vec<Problem>,
) -> Option<Entries> {
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
    let mut minor_of = Vec::new();
    if minor_of.try_reserve_exact(indices.len()).is_err() {
        return fail(
            "indices",
            format!("out of memory for {} entries", indices.len()),
        );
    }
    for (p, &b) in indices.iter().enumerate() {
        let Some(b) = to_index(b, minor) else {
            return fail(
                "indices",
                format!("index {b} at position {p} is out of range 0..{minor}"),
            );
        };
        minor_of.push(b);
    }
    Some(Entries::Compressed {
        data,
        minor: minor_of,
        start: indptr.iter().map(|&p| p as usize).collect(),
        by_rows,
    })
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
    t: &Entries,
    shape: [usize; 2],
    symmetric: Option<&str>,
    path: &str,
    out: &mut Vec<Problem>,
) -> Option<SparseMatrix> {
    if let Some(tri) = symmetric {
        let upper = tri == "upper";
        let other = |i: usize, j: usize, _| {
            let wrong = if upper { i > j } else { i < j };
            wrong.then_some((i, j))
        };
        if let Some((row, col)) = t.find(other) {
            out.push(Problem::error(
                path,
                format!("symmetric = {tri:?} but entry ({row}, {col}) lies in the other triangle"),
            ));
            return None;
        }
        if shape[0] != shape[1] {
            out.push(Problem::error(
                path,
                format!("symmetric = {tri:?} but the shape {shape:?} is not square"),
            ));
            return None;
        }
    }
    let built = compress(shape, t, symmetric.is_some());
    if built.is_none() {
        out.push(Problem::error(
            path,
            format!(
                "cannot build the matrix: out of memory for {} entries",
                t.len()
            ),
        ));
    }
    built
}

/// The compressed-column matrix of `t` (indices within `shape`), each entry off the diagonal
/// also mirrored with `mirror`; duplicates add up in the order given. Entries are bucketed by
/// column and each column sorted on its own: `O(nnz)` plus short sorts, where sorting every
/// entry as a whole was half of reading an FE model (docs/performance.md, "Setup without
/// sorting every entry").
fn compress(shape: [usize; 2], t: &Entries, mirror: bool) -> Option<SparseMatrix> {
    let [nrows, ncols] = shape;
    let mirrored = |i: usize, j: usize| mirror && i != j;
    let mut next = vec![0usize; ncols + 1];
    t.for_each(|i, j, _| {
        next[j + 1] += 1;
        if mirrored(i, j) {
            next[i + 1] += 1;
        }
    });
    for j in 0..ncols {
        next[j + 1] += next[j];
    }
    let total = next[ncols];
    // A model too large for memory is reported, not aborted on.
    let mut rows: Vec<usize> = Vec::new();
    let mut vals: Vec<f64> = Vec::new();
    rows.try_reserve_exact(total).ok()?;
    vals.try_reserve_exact(total).ok()?;
    rows.resize(total, 0);
    vals.resize(total, 0.0);
    let mut put = |i: usize, j: usize, v: f64| {
        rows[next[j]] = i;
        vals[next[j]] = v;
        next[j] += 1;
    };
    t.for_each(|i, j, v| {
        put(i, j, v);
        if mirrored(i, j) {
            put(j, i, v);
        }
    });
    // `next[j]` is now where column `j` ends; sort each column by row (stable: duplicates
    // keep their order) and add up duplicates, compacting in place.
    let mut col_ptr = Vec::with_capacity(ncols + 1);
    col_ptr.push(0);
    let mut scratch: Vec<(usize, f64)> = Vec::new();
    let (mut begin, mut w) = (0, 0);
    for &end in &next[..ncols] {
        scratch.clear();
        scratch.extend(
            rows[begin..end]
                .iter()
                .copied()
                .zip(vals[begin..end].iter().copied()),
        );
        if !scratch.is_sorted_by_key(|p| p.0) {
            scratch.sort_by_key(|p| p.0);
        }
        for &(i, v) in &scratch {
            if w > col_ptr[col_ptr.len() - 1] && rows[w - 1] == i {
                vals[w - 1] += v;
            } else {
                rows[w] = i;
                vals[w] = v;
                w += 1;
            }
        }
        col_ptr.push(w);
        begin = end;
    }
    rows.truncate(w);
    vals.truncate(w);
    let symbolic =
        faer::sparse::SymbolicSparseColMat::new_checked(nrows, ncols, col_ptr, None, rows);
    Some(SparseMatrix::new(symbolic, vals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compress_sorts_columns_adds_duplicates_and_mirrors() {
        // Unsorted, with a duplicate (2, 1) and a diagonal entry, upper triangle stored.
        let t = vec![
            Triplet::new(1, 3, 4.0),
            Triplet::new(0, 0, 1.0),
            Triplet::new(1, 2, -2.0),
            Triplet::new(0, 3, 0.5),
            Triplet::new(1, 2, 3.0),
            Triplet::new(2, 2, 7.0),
        ];
        let full = compress([4, 4], &Entries::Triplets(t.clone()), true).unwrap();
        let mut want = faer::Mat::<f64>::zeros(4, 4);
        for e in &t {
            want[(e.row, e.col)] += e.val;
            if e.row != e.col {
                want[(e.col, e.row)] += e.val;
            }
        }
        assert_eq!(full.to_dense(), want);
        assert_eq!(full.compute_nnz(), 8);
        for j in 0..4 {
            assert!(full.row_idx_of_col_raw(j).is_sorted(), "column {j}");
        }
        // Without mirroring, on a rectangular shape, it is faer's own assembly.
        let faer = SparseMatrix::try_new_from_triplets(3, 5, &t).unwrap();
        // The same entries stored compressed, by rows and by columns (unsorted within a row
        // or column, the duplicate kept), assemble to the same matrix.
        for by_rows in [true, false] {
            let key = |e: &Triplet<usize, usize, f64>| if by_rows { e.row } else { e.col };
            let mut sorted = t.clone();
            sorted.sort_by_key(key);
            let mut start = vec![0usize; 5];
            for e in &sorted {
                start[key(e) + 1] += 1;
            }
            for a in 0..4 {
                start[a + 1] += start[a];
            }
            let stored = Entries::Compressed {
                data: sorted.iter().map(|e| e.val).collect(),
                minor: sorted
                    .iter()
                    .map(|e| if by_rows { e.col } else { e.row })
                    .collect(),
                start,
                by_rows,
            };
            assert_eq!(stored.len(), t.len());
            let m = compress([4, 4], &stored, true).unwrap();
            assert_eq!(m.to_dense(), want, "by rows: {by_rows}");
        }
        assert_eq!(
            compress([3, 5], &Entries::Triplets(t.clone()), false)
                .unwrap()
                .to_dense(),
            faer.to_dense()
        );
    }
}
