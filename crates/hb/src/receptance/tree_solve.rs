//! Triangular solves with a supernodal Cholesky factor, concurrent over independent subtrees
//! of its elimination tree.
//!
//! A solve reads the whole factor once forward and once backward for a few flops per entry:
//! it is bound by memory bandwidth, and one right-hand side (a shift-invert Lanczos step)
//! leaves each supernode's dense kernels too small to share among threads. faer solves the
//! supernodes one after another, so its solve hardly speeds up with threads. Disjoint
//! subtrees of the supernodal elimination tree, though, touch disjoint unknowns except
//! through their common ancestors: each group of subtrees (a *bin*) is solved by one thread
//! on a local copy of its unknowns, forward updates to ancestors are summed in a private
//! buffer, and the supernodes above every bin (the *top*: with nested dissection, the large
//! separators) are solved in order with faer's parallel dense kernels.
//!
//! The bins depend on the factor only, never on the number of threads, and the buffers are
//! summed in bin order, so results are the same to the last bit with any thread count.

use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::sparse::linalg::cholesky::supernodal::{SupernodalLltRef, SymbolicSupernodalCholesky};
use faer::{Accum, Mat, MatMut, MatRef, Par};
use rayon::prelude::*;

/// Bins of subtrees: enough to balance a workstation's threads by work stealing.
const BINS: usize = 16;

/// The supernodes handled by one thread, and where their unknowns live.
struct Bin {
    /// Supernodes, ascending (children before parents).
    supernodes: Vec<usize>,
    /// Global (permuted) rows of the bin's unknowns: each supernode's columns, contiguous.
    rows: Vec<usize>,
    /// Local position of each supernode's first column.
    offset: Vec<usize>,
    /// Rows of top supernodes that this bin's supernodes update, ascending.
    ext_rows: Vec<usize>,
    /// Per pattern entry of each supernode, concatenated: a local row, or `rows.len()` plus
    /// a position in `ext_rows`.
    dest: Vec<usize>,
    /// Start of each supernode's entries in `dest`.
    dest_ptr: Vec<usize>,
    /// Longest pattern among the bin's supernodes (scratch size).
    max_pattern: usize,
}

/// The supernode owning each column of the factor.
pub(super) fn supernode_of_columns(sym: &SymbolicSupernodalCholesky<usize>) -> Vec<usize> {
    let (begin, end) = (sym.supernode_begin(), sym.supernode_end());
    let mut col_super = vec![0usize; sym.nrows()];
    for s in 0..sym.n_supernodes() {
        col_super[begin[s]..end[s]].fill(s);
    }
    col_super
}

/// Each supernode's parent in the elimination tree (`None` for a root): the owner of the first
/// row below its diagonal block, numbered after it.
pub(super) fn supernode_parents(
    sym: &SymbolicSupernodalCholesky<usize>,
    col_super: &[usize],
) -> Vec<Option<usize>> {
    (0..sym.n_supernodes())
        .map(|s| sym.supernode(s).pattern().first().map(|&r| col_super[r]))
        .collect()
}

/// Entries of supernode `s` in the factor: its lower-triangular diagonal block and the rows
/// below it.
pub(super) fn supernode_entries(sym: &SymbolicSupernodalCholesky<usize>, s: usize) -> usize {
    let cols = sym.supernode_end()[s] - sym.supernode_begin()[s];
    cols * (cols + 1) / 2 + cols * sym.supernode(s).pattern().len()
}

/// How a solve with one supernodal factor is split among threads.
pub(crate) struct SolvePlan {
    bins: Vec<Bin>,
    /// Supernodes above every bin, ascending.
    top: Vec<usize>,
    max_top_pattern: usize,
}

impl SolvePlan {
    /// Cuts the supernodal elimination tree into subtrees of at most `1 / (2 BINS)` of the
    /// factor's entries each (the supernodes above them form the top), and packs the
    /// subtrees into `BINS` bins of about equal work (largest first, into the lightest bin).
    pub fn new(sym: &SymbolicSupernodalCholesky<usize>) -> SolvePlan {
        let ns = sym.n_supernodes();
        let begin = sym.supernode_begin();
        let end = sym.supernode_end();
        let n = sym.nrows();
        let col_super = supernode_of_columns(sym);
        let pattern = |s: usize| sym.supernode(s).pattern();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); ns];
        let mut subtree = vec![0usize; ns];
        let mut roots = Vec::new();
        for (s, parent) in supernode_parents(sym, &col_super).into_iter().enumerate() {
            subtree[s] += supernode_entries(sym, s);
            match parent {
                Some(p) => {
                    children[p].push(s);
                    subtree[p] += subtree[s];
                }
                None => roots.push(s),
            }
        }
        let total: usize = roots.iter().map(|&r| subtree[r]).sum();
        let limit = (total / (2 * BINS)).max(1);
        let mut top = Vec::new();
        let mut cut = Vec::new();
        let mut stack = roots;
        while let Some(s) = stack.pop() {
            if subtree[s] > limit && !children[s].is_empty() {
                top.push(s);
                stack.extend(&children[s]);
            } else {
                cut.push(s);
            }
        }
        top.sort_unstable();
        cut.sort_unstable_by(|&a, &b| subtree[b].cmp(&subtree[a]).then(a.cmp(&b)));
        let mut load = [0usize; BINS];
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); BINS];
        for &r in &cut {
            let b = (0..BINS).min_by_key(|&b| (load[b], b)).unwrap_or(0);
            load[b] += subtree[r];
            // The whole subtree of `r`.
            let mut todo = vec![r];
            while let Some(s) = todo.pop() {
                members[b].push(s);
                todo.extend(&children[s]);
            }
        }
        // Where each row lives: a bin's local row, or a top row.
        const TOP: usize = usize::MAX;
        let mut owner = vec![TOP; n];
        let mut local = vec![0usize; n];
        let mut bins = Vec::new();
        for (b, mut supernodes) in members.into_iter().enumerate() {
            if supernodes.is_empty() {
                continue;
            }
            supernodes.sort_unstable();
            let mut rows = Vec::new();
            let mut offset = Vec::with_capacity(supernodes.len());
            for &s in &supernodes {
                offset.push(rows.len());
                for c in begin[s]..end[s] {
                    owner[c] = b;
                    local[c] = rows.len();
                    rows.push(c);
                }
            }
            let mut ext_rows: Vec<usize> = supernodes
                .iter()
                .flat_map(|&s| pattern(s).iter().copied())
                .filter(|&r| owner[r] != b)
                .collect();
            ext_rows.sort_unstable();
            ext_rows.dedup();
            let nl = rows.len();
            let mut dest = Vec::new();
            let mut dest_ptr = vec![0];
            let mut max_pattern = 0;
            for &s in &supernodes {
                max_pattern = max_pattern.max(pattern(s).len());
                for &r in pattern(s) {
                    dest.push(if owner[r] == b {
                        local[r]
                    } else {
                        // Not in another bin: disjoint subtrees share only ancestors.
                        debug_assert_eq!(owner[r], TOP);
                        nl + ext_rows.binary_search(&r).unwrap_or_default()
                    });
                }
                dest_ptr.push(dest.len());
            }
            bins.push(Bin {
                supernodes,
                rows,
                offset,
                ext_rows,
                dest,
                dest_ptr,
                max_pattern,
            });
        }
        let max_top_pattern = top.iter().map(|&s| pattern(s).len()).max().unwrap_or(0);
        SolvePlan {
            bins,
            top,
            max_top_pattern,
        }
    }

    /// Overwrites `x` (permuted unknowns, any number of columns) with `(L L^T)^{-1} x`.
    pub fn solve(&self, l: SupernodalLltRef<'_, usize, f64>, mut x: MatMut<'_, f64>, par: Par) {
        let k = x.ncols();
        // Forward, L y = x: the bins, then the top.
        let parts: Vec<(Mat<f64>, Mat<f64>)> = {
            let xr = x.rb();
            self.bins.par_iter().map(|bin| bin.forward(l, xr)).collect()
        };
        for (bin, (local, ext)) in self.bins.iter().zip(&parts) {
            for j in 0..k {
                for (i, &r) in bin.rows.iter().enumerate() {
                    x[(r, j)] = local[(i, j)];
                }
                for (i, &r) in bin.ext_rows.iter().enumerate() {
                    x[(r, j)] -= ext[(i, j)];
                }
            }
        }
        drop(parts);
        let mut tmp = Mat::zeros(self.max_top_pattern, k);
        for &s in &self.top {
            let sn = l.supernode(s);
            let (diag, below) = sn.val().split_at_row(sn.val().ncols());
            let mut t = tmp.as_mut().subrows_mut(0, below.nrows());
            forward_block(
                diag,
                below,
                x.rb_mut().subrows_mut(sn.start(), diag.nrows()),
                t.rb_mut(),
                par,
            );
            for j in 0..k {
                for (idx, &r) in sn.pattern().iter().enumerate() {
                    x[(r, j)] -= t[(idx, j)];
                }
            }
        }
        // Backward, L^T x = y: the top, then the bins.
        for &s in self.top.iter().rev() {
            let sn = l.supernode(s);
            let (diag, below) = sn.val().split_at_row(sn.val().ncols());
            let mut t = tmp.as_mut().subrows_mut(0, below.nrows());
            for j in 0..k {
                for (idx, &r) in sn.pattern().iter().enumerate() {
                    t[(idx, j)] = x[(r, j)];
                }
            }
            backward_block(
                diag,
                below,
                x.rb_mut().subrows_mut(sn.start(), diag.nrows()),
                t.rb(),
                par,
            );
        }
        let parts: Vec<Mat<f64>> = {
            let xr = x.rb();
            self.bins
                .par_iter()
                .map(|bin| bin.backward(l, xr))
                .collect()
        };
        for (bin, local) in self.bins.iter().zip(&parts) {
            for j in 0..k {
                for (i, &r) in bin.rows.iter().enumerate() {
                    x[(r, j)] = local[(i, j)];
                }
            }
        }
    }
}

/// One supernode of `L y = x`: `xs` (its own unknowns) solved by the diagonal block, and
/// `t = below xs`, the update its pattern rows subtract.
fn forward_block(
    diag: MatRef<'_, f64>,
    below: MatRef<'_, f64>,
    mut xs: MatMut<'_, f64>,
    t: MatMut<'_, f64>,
    par: Par,
) {
    solve_lower_triangular_in_place(diag, xs.rb_mut(), par);
    matmul(t, Accum::Replace, below, xs.rb(), 1.0, par);
}

/// One supernode of `L^T x = y`, given `t`, the final values of its pattern rows.
fn backward_block(
    diag: MatRef<'_, f64>,
    below: MatRef<'_, f64>,
    mut xs: MatMut<'_, f64>,
    t: MatRef<'_, f64>,
    par: Par,
) {
    matmul(xs.rb_mut(), Accum::Add, below.transpose(), t, -1.0, par);
    solve_upper_triangular_in_place(diag.transpose(), xs, par);
}

impl Bin {
    fn gather(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        Mat::from_fn(self.rows.len(), x.ncols(), |i, j| x[(self.rows[i], j)])
    }

    /// The bin's part of `L y = x`: its unknowns solved, and the sums it subtracts from
    /// the top rows it updates.
    fn forward(
        &self,
        l: SupernodalLltRef<'_, usize, f64>,
        x: MatRef<'_, f64>,
    ) -> (Mat<f64>, Mat<f64>) {
        let k = x.ncols();
        let nl = self.rows.len();
        let mut local = self.gather(x);
        let mut ext = Mat::zeros(self.ext_rows.len(), k);
        let mut tmp = Mat::zeros(self.max_pattern, k);
        for (b, &s) in self.supernodes.iter().enumerate() {
            let sn = l.supernode(s);
            let (diag, below) = sn.val().split_at_row(sn.val().ncols());
            let mut t = tmp.as_mut().subrows_mut(0, below.nrows());
            forward_block(
                diag,
                below,
                local.as_mut().subrows_mut(self.offset[b], diag.nrows()),
                t.rb_mut(),
                Par::Seq,
            );
            let dest = &self.dest[self.dest_ptr[b]..self.dest_ptr[b + 1]];
            for j in 0..k {
                for (idx, &d) in dest.iter().enumerate() {
                    if d < nl {
                        local[(d, j)] -= t[(idx, j)];
                    } else {
                        ext[(d - nl, j)] += t[(idx, j)];
                    }
                }
            }
        }
        (local, ext)
    }

    /// The bin's part of `L^T x = y`, once every top row is final.
    fn backward(&self, l: SupernodalLltRef<'_, usize, f64>, x: MatRef<'_, f64>) -> Mat<f64> {
        let k = x.ncols();
        let nl = self.rows.len();
        let mut local = self.gather(x);
        let ext = Mat::from_fn(self.ext_rows.len(), k, |i, j| x[(self.ext_rows[i], j)]);
        let mut tmp = Mat::zeros(self.max_pattern, k);
        for (b, &s) in self.supernodes.iter().enumerate().rev() {
            let sn = l.supernode(s);
            let (diag, below) = sn.val().split_at_row(sn.val().ncols());
            let dest = &self.dest[self.dest_ptr[b]..self.dest_ptr[b + 1]];
            let mut t = tmp.as_mut().subrows_mut(0, below.nrows());
            for j in 0..k {
                for (idx, &d) in dest.iter().enumerate() {
                    t[(idx, j)] = if d < nl {
                        local[(d, j)]
                    } else {
                        ext[(d - nl, j)]
                    };
                }
            }
            backward_block(
                diag,
                below,
                local.as_mut().subrows_mut(self.offset[b], diag.nrows()),
                t.rb(),
                Par::Seq,
            );
        }
        local
    }
}
