//! Checks of option values shared by the commands, with messages that name the option.

use crate::Failure;
use crate::paths::{Named, named};
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
    let refs = ewr_solve::DofRef::parse_list(spec);
    Ok(ewr_solve::setup::resolve_dofs(
        model,
        &refs,
        ewr_solve::Opt::Dofs,
    )?)
}

/// One output of a command: its option, its path if given, and the allowed extensions
/// (empty: any).
pub type Output<'a> = (&'a str, Option<&'a Path>, &'a [&'a str]);

/// The claims on a command's outputs (see [`ewr_results::lock`]), held until it has written
/// them.
#[must_use = "the outputs are claimed only while this is held"]
pub struct Claims(#[allow(dead_code)] Vec<ewr_results::lock::OutputLock>);

/// Checks a command's outputs before any work (extensions, not an input, not each other,
/// regular files only; see [`crate::paths`]), creates their folders, claims them against
/// another run writing the same files, and probes that each can be written there.
pub fn prepare_outputs(inputs: &[Named<'_>], outputs: &[Output<'_>]) -> Result<Claims, Failure> {
    let given: Vec<Named<'_>> = outputs
        .iter()
        .filter_map(|&(option, path, _)| path.map(|path| named(option, path)))
        .collect();
    for &(option, path, extensions) in outputs {
        if let Some(path) = path {
            check_extension(option, path, extensions)?;
        }
    }
    crate::paths::check(inputs, &given)?;
    let mut claims = Vec::with_capacity(given.len());
    for o in &given {
        ewr_results::ensure_parent(o.path).map_err(Failure::work)?;
        ewr_results::lock::probe_writable(o.path)
            .map_err(|e| Failure::work(format!("{}: {e}", o.option)))?;
        claims.push(ewr_results::lock::claim(o.path).map_err(Failure::input)?);
    }
    Ok(Claims(claims))
}

fn check_extension(option: &str, path: &Path, extensions: &[&str]) -> Result<(), Failure> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if extensions.is_empty() || extensions.contains(&ext) {
        Ok(())
    } else {
        Err(Failure::input(format!(
            "{option} {}: the file name must end in .{}",
            path.display(),
            extensions.join(" or .")
        )))
    }
}
