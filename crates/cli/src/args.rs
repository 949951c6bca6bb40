//! Checks of option values shared by the commands, with messages that name the option.

use crate::Failure;
use ewr_model::Model;
use std::path::Path;

/// `x` if it is finite and above `min` (or at least `min` when `inclusive`), else exit 2.
pub fn finite(name: &str, x: f64, min: f64, inclusive: bool) -> Result<f64, Failure> {
    let ok = x.is_finite() && if inclusive { x >= min } else { x > min };
    if ok {
        Ok(x)
    } else {
        let rel = if inclusive { ">=" } else { ">" };
        Err(Failure::input(format!(
            "{name} {x}: must be finite and {rel} {min}"
        )))
    }
}

/// DOFs from a comma-separated list of indices or labels (`all` for every DOF), without
/// repeats, in the order given.
pub fn parse_dofs(spec: &str, model: &Model) -> Result<Vec<usize>, Failure> {
    let n = model.n_dofs();
    if spec.trim() == "all" {
        return Ok((0..n).collect());
    }
    let mut out = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let d = match item.parse::<usize>() {
            Ok(d) => d,
            Err(_) => model.dof_by_label(item).ok_or_else(|| {
                Failure::input(format!(
                    "--dofs: {item:?} is neither a DOF index nor a DOF label of the model"
                ))
            })?,
        };
        if d >= n {
            return Err(Failure::input(format!(
                "--dofs: DOF {d} is out of range 0..{n}"
            )));
        }
        if !out.contains(&d) {
            out.push(d);
        }
    }
    if out.is_empty() {
        return Err(Failure::input("--dofs: no DOF given"));
    }
    Ok(out)
}

/// Checks an output file's extension (when `extensions` is not empty) and creates its
/// folder, before a long run rather than after it.
pub fn prepare_output(path: &Path, extensions: &[&str]) -> Result<(), Failure> {
    if !extensions.is_empty() {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !extensions.contains(&ext) {
            return Err(Failure::input(format!(
                "{}: the file name must end in .{}",
                path.display(),
                extensions.join(" or .")
            )));
        }
    }
    crate::results::ensure_parent(path).map_err(Failure::work)
}
