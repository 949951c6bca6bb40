//! The map from equation (matrix row) to FE node and direction, as CalculiX's `.dof` file
//! gives it: one `node.direction` per equation, in row order.

use crate::ImportError;
use crate::text::TextFile;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;

/// One degree of freedom of an FE node: `direction` 1, 2, 3 are the x, y, z translations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeDof {
    /// FE node number.
    pub node: u64,
    /// Direction: 1, 2, 3 for x, y, z (CalculiX numbering; other codes may add 4-6 for
    /// rotations).
    pub direction: u32,
}

impl fmt::Display for NodeDof {
    /// CalculiX's own notation, `node.direction` (e.g. `55.3`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.node, self.direction)
    }
}

/// Which node and direction each equation (row of M and K) is.
///
/// Constrained DOFs have no equation, so they are simply absent: a node can be present with
/// only some of its directions, or absent altogether when it is fully clamped.
#[derive(Clone, Debug, Default)]
pub struct DofMap {
    dofs: Vec<NodeDof>,
    index: HashMap<NodeDof, usize>,
    nodes: HashSet<u64>,
}

impl DofMap {
    /// Builds the map from the equations in row order; fails on a DOF listed twice, naming
    /// the two rows (0-based).
    pub fn new(dofs: Vec<NodeDof>) -> Result<Self, (usize, usize)> {
        let mut index = HashMap::with_capacity(dofs.len());
        let mut nodes = HashSet::new();
        for (row, d) in dofs.iter().enumerate() {
            if let Some(first) = index.insert(*d, row) {
                return Err((first, row));
            }
            nodes.insert(d.node);
        }
        Ok(DofMap { dofs, index, nodes })
    }

    /// Reads a map in CalculiX's `.dof` format: one `node.direction` per line, line `i`
    /// being equation `i` (blank lines are ignored).
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let file = TextFile::read(path)?;
        let mut dofs = Vec::new();
        let mut lines = Vec::new();
        for l in file.lines() {
            let t = l.text.trim();
            if t.is_empty() {
                continue;
            }
            let parsed = t.split_once('.').and_then(|(n, d)| {
                Some(NodeDof {
                    node: n.trim().parse().ok()?,
                    direction: d.trim().parse().ok()?,
                })
            });
            let Some(d) = parsed else {
                return Err(file.err(
                    l.no,
                    format!("expected `node.direction` (e.g. `55.3` for node 55, z), found `{t}`"),
                ));
            };
            dofs.push(d);
            lines.push(l.no);
        }
        if dofs.is_empty() {
            return Err(ImportError::file(
                path,
                "the DOF map is empty (no `node.direction` lines)",
            ));
        }
        DofMap::new(dofs).map_err(|(first, again)| {
            file.err(
                lines[again],
                format!(
                    "DOF {} is listed twice (first on line {})",
                    // Both rows hold the same DOF; print it from the first.
                    lines_dof(&file, lines[first]),
                    lines[first]
                ),
            )
        })
    }

    /// Number of equations.
    pub fn len(&self) -> usize {
        self.dofs.len()
    }

    /// True when the map has no equations.
    pub fn is_empty(&self) -> bool {
        self.dofs.is_empty()
    }

    /// The equations' DOFs in row order.
    pub fn dofs(&self) -> &[NodeDof] {
        &self.dofs
    }

    /// 0-based equation of `node` in `direction`, if that DOF is free.
    pub fn equation(&self, node: u64, direction: u32) -> Option<usize> {
        self.index.get(&NodeDof { node, direction }).copied()
    }

    /// True when at least one DOF of `node` is free.
    pub fn contains_node(&self, node: u64) -> bool {
        self.nodes.contains(&node)
    }

    /// One label per equation, `node.direction`, for the model's `dof_labels`.
    pub fn labels(&self) -> Vec<String> {
        self.dofs.iter().map(ToString::to_string).collect()
    }
}

fn lines_dof(file: &TextFile<'_>, no: usize) -> String {
    file.lines()
        .find(|l| l.no == no)
        .map(|l| l.text.trim().to_string())
        .unwrap_or_default()
}
