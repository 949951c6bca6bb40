//! `W A^{-1} W^T` for a sparse `W` with few rows (the contact rows of an FE model) from a
//! supernodal Cholesky factor `P A P^T = L L^T`, as the Gram matrix `Y^T Y` of `Y = L^{-1} P
//! W^T`.
//!
//! A column of `W^T` has a few nonzeros, and the forward solve from it touches only the
//! supernodes on the paths from those to the root of the elimination tree: with nested
//! dissection, the separators above the contact, a fraction of the factor. No backward solve
//! is needed. Each supernode keeps `Y` for the columns whose paths pass through it, and `Y^T
//! Y` sums one small Gram matrix per group of supernodes with the same columns (the large
//! separators near the root are shared by every column: one product there). Against solving
//! `A X = W^T` forward and backward through the whole factor, this reads a fraction of `L`
//! once (docs/performance.md, "The residual flexibility by sparse forward solves").
//!
//! Deterministic: the supernodes are visited in one fixed order whatever the threads, and
//! only the dense kernels inside a large supernode are parallel (faer's, with a fixed split).

use std::collections::HashMap;

use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::reborrow::ReborrowMut;
use faer::sparse::linalg::cholesky::supernodal::SupernodalLltRef;
use faer::{Accum, Mat, Par};

use super::tree_solve::{supernode_entries, supernode_of_columns, supernode_parents};

/// Below this many columns a supernode's kernels run on one thread: splitting smaller
/// blocks costs more than it saves.
const PARALLEL_MIN_COLS: usize = 64;

/// `W A^{-1} W^T` (`m x m`) where `rows[i]` lists row `i` of `W` as `(unknown, value)` in the
/// factor's own (permuted) numbering; `None` where `Y` would hold more than `max_entries`
/// reals (the caller then solves with the whole factor instead).
pub(crate) fn inverse_gram(
    l: SupernodalLltRef<'_, usize, f64>,
    rows: &[Vec<(usize, f64)>],
    max_entries: usize,
    par: Par,
) -> Option<Mat<f64>> {
    let sym = l.symbolic();
    let ns = sym.n_supernodes();
    let begin = sym.supernode_begin();
    let end = sym.supernode_end();
    let m = rows.len();
    let col_super = supernode_of_columns(sym);
    let parent = supernode_parents(sym, &col_super);

    // Columns of `Y` (rows of `W`) whose forward solve reaches each supernode, ascending.
    let mut cols: Vec<Vec<usize>> = vec![Vec::new(); ns];
    let mut stamp = vec![usize::MAX; ns];
    for (i, row) in rows.iter().enumerate() {
        for &(p, _) in row {
            let mut s = Some(col_super[p]);
            while let Some(t) = s {
                if stamp[t] == i {
                    break;
                }
                stamp[t] = i;
                cols[t].push(i);
                s = parent[t];
            }
        }
    }
    let entries: usize = (0..ns).map(|s| (end[s] - begin[s]) * cols[s].len()).sum();
    if entries > max_entries {
        return None;
    }
    crate::profile::note(|| {
        let reached: usize = (0..ns)
            .filter(|&s| !cols[s].is_empty())
            .map(|s| supernode_entries(sym, s))
            .sum();
        format!(
            "residual flexibility: {m} contact rows reach {reached} of the factor's {} \
             entries; Y holds {entries} reals",
            sym.len_val()
        )
    });

    // `Y` per supernode: its own unknowns by its columns, the right-hand side first.
    let mut y: Vec<Mat<f64>> = (0..ns)
        .map(|s| Mat::zeros(end[s] - begin[s], cols[s].len()))
        .collect();
    for (i, row) in rows.iter().enumerate() {
        for &(p, v) in row {
            let s = col_super[p];
            let j = cols[s]
                .binary_search(&i)
                .expect("the row's own supernode is reached");
            y[s][(p - begin[s], j)] += v;
        }
    }

    // Forward: `L Y = P W^T`, children before parents (supernodes are numbered so).
    let mut map = Vec::new();
    for s in 0..ns {
        let k = cols[s].len();
        if k == 0 {
            continue;
        }
        let p = if k >= PARALLEL_MIN_COLS {
            par
        } else {
            Par::Seq
        };
        let sn = l.supernode(s);
        let (diag, below) = sn.val().split_at_row(sn.val().ncols());
        solve_lower_triangular_in_place(diag, y[s].as_mut(), p);
        if below.nrows() == 0 {
            continue;
        }
        let mut t = Mat::zeros(below.nrows(), k);
        matmul(t.as_mut(), Accum::Replace, below, y[s].as_ref(), 1.0, p);
        // Pattern rows come in runs of one ancestor each; the columns of `s` are among the
        // ancestor's (every path through `s` goes on through it).
        let pattern = sn.pattern();
        let mut idx = 0;
        while idx < pattern.len() {
            let a = col_super[pattern[idx]];
            map.clear();
            let mut q = cols[a].partition_point(|&c| c < cols[s][0]);
            for &c in &cols[s] {
                while cols[a][q] != c {
                    q += 1;
                }
                map.push(q);
            }
            let ya = &mut y[a];
            while idx < pattern.len() && col_super[pattern[idx]] == a {
                let r = pattern[idx] - begin[a];
                for (j, &q) in map.iter().enumerate() {
                    ya[(r, q)] -= t[(idx, j)];
                }
                idx += 1;
            }
        }
    }

    // `Y^T Y`: one Gram matrix per group of supernodes with the same columns, in the order
    // of each group's first supernode.
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut index: HashMap<&[usize], usize> = HashMap::new();
    for (s, c) in cols.iter().enumerate() {
        if c.is_empty() {
            continue;
        }
        match index.get(c.as_slice()) {
            Some(&g) => groups[g].1.push(s),
            None => {
                index.insert(c.as_slice(), groups.len());
                groups.push((s, vec![s]));
            }
        }
    }
    let mut gram = Mat::<f64>::zeros(m, m);
    for (first, members) in &groups {
        let c = &cols[*first];
        let k = c.len();
        let p = if k >= PARALLEL_MIN_COLS {
            par
        } else {
            Par::Seq
        };
        // Every column (the separators near the root): straight into the result.
        let whole = k == m;
        let kg = if whole { 0 } else { k };
        let mut g = Mat::<f64>::zeros(kg, kg);
        let mut dst = if whole { gram.as_mut() } else { g.as_mut() };
        for &s in members {
            matmul(
                dst.rb_mut(),
                Accum::Add,
                y[s].transpose(),
                y[s].as_ref(),
                1.0,
                p,
            );
        }
        if whole {
            continue;
        }
        for (b, &jb) in c.iter().enumerate() {
            for (a, &ja) in c.iter().enumerate() {
                gram[(ja, jb)] += g[(a, b)];
            }
        }
    }
    Some(gram)
}
