//! Columns of dense matrices as plain slices, for the inner loops that form the
//! preconditioner's averaged Jacobians (faer's checked indexing cost several times their
//! arithmetic).

use faer::{MatMut, MatRef, c64};

/// Column `j` of `g` as a slice: itself where it is contiguous, else copied into `buf`.
pub(crate) fn column<'a>(g: MatRef<'a, c64>, j: usize, buf: &'a mut [c64]) -> &'a [c64] {
    match g.col(j).try_as_col_major() {
        Some(c) => c.as_slice(),
        None => {
            buf.iter_mut()
                .zip(g.col(j).iter())
                .for_each(|(a, b)| *a = *b);
            buf
        }
    }
}

/// Column `j` of an owned matrix's view `k` as a mutable slice (always contiguous).
pub(crate) fn column_mut(k: MatMut<'_, c64>, j: usize) -> &mut [c64] {
    k.col_mut(j)
        .try_as_col_major_mut()
        .expect("an owned matrix's columns are contiguous")
        .as_slice_mut()
}
