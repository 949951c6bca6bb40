//! Harmonic forcing from a CSV file (format in `docs/importing.md`):
//! `node,direction,harmonic,cos,sin` with a DOF map, or `eq,harmonic,cos,sin` with 1-based
//! equation numbers. Each row adds `cos * cos(h w t) + sin * sin(h w t)` to one DOF.

use crate::contacts::{check_equation, parse_node};
use crate::csv::{Row, Table};
use crate::text::TextFile;
use crate::{DofSpace, ImportError};
use ewr_model::ForcingTerm;
use std::path::Path;

/// Columns a forcing file may have.
pub const FORCING_COLUMNS: [&str; 6] = ["node", "direction", "eq", "harmonic", "cos", "sin"];

/// Reads a forcing CSV file against the model's DOFs.
pub fn read_forcing(path: &Path, space: &DofSpace<'_>) -> Result<Vec<ForcingTerm>, ImportError> {
    let t = Table::parse(TextFile::read(path)?, &FORCING_COLUMNS)?;
    if !t.has("harmonic") {
        return Err(
            t.header_err("column `harmonic` is missing (1 for a load at the forcing frequency)")
        );
    }
    if !t.has("cos") && !t.has("sin") {
        return Err(t.header_err("no amplitude: add the column `cos`, `sin` or both"));
    }
    let by_node = match (t.has("node"), t.has("direction"), t.has("eq")) {
        (true, true, false) => true,
        (false, false, true) => false,
        (true, false, false) => return Err(t.header_err("column `node` needs `direction`")),
        (false, true, false) => return Err(t.header_err("column `direction` needs `node`")),
        (false, false, false) => {
            return Err(t.header_err(
                "say where each load acts: `node,direction` (with a DOF map) or `eq` \
                 (1-based equation number)",
            ));
        }
        _ => {
            return Err(t.header_err("give loads either by `node,direction` or by `eq`, not both"));
        }
    };
    let mut terms = Vec::with_capacity(t.rows.len());
    for row in &t.rows {
        let dof = if by_node {
            node_dof(&t, row, space)?
        } else {
            check_equation(&t.file, row.line, "eq", t.index(row, "eq")?, space.n)?
        };
        let harmonic = t.index(row, "harmonic")?;
        let cos = t.f64_opt(row, "cos")?.unwrap_or(0.0);
        let sin = t.f64_opt(row, "sin")?.unwrap_or(0.0);
        terms.push(ForcingTerm {
            dof,
            harmonic,
            cos,
            sin,
        });
    }
    Ok(terms)
}

fn node_dof(t: &Table<'_>, row: &Row, space: &DofSpace<'_>) -> Result<usize, ImportError> {
    let Some(map) = space.map else {
        return Err(t.header_err(
            "columns `node,direction` need a DOF map (CalculiX's JOB.dof, or --dofs with \
             `ewr import mtx`); without one, give the 1-based equation in `eq`",
        ));
    };
    let node = parse_node(t, row, "node")?;
    let d = t.required(row, "direction")?;
    let direction: u32 = match d.to_ascii_lowercase().as_str() {
        "x" => 1,
        "y" => 2,
        "z" => 3,
        other => other.parse().map_err(|_| {
            t.file.err(
                row.line,
                format!("direction `{d}`: expected 1, 2, 3 (or x, y, z)"),
            )
        })?,
    };
    let map_name = space
        .map_file
        .map_or_else(|| "the DOF map".to_string(), |p| p.display().to_string());
    map.equation(node, direction).ok_or_else(|| {
        let why = if map.contains_node(node) {
            format!(
                "node {node} has no free DOF in direction {direction} in {map_name} (constrained?)"
            )
        } else {
            format!(
                "node {node} is not in {map_name}: no such node, or all its DOFs are constrained"
            )
        };
        t.file.err(row.line, why)
    })
}
