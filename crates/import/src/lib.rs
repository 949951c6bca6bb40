//! Importers from FE codes' matrix exports to ewr models.
//!
//! Users get `M` and `K` from an FE code, not from us; this crate reads them, adds contacts,
//! forcing and damping, checks everything on the way, and returns a validated
//! [`ewr_model::Model`] ready to be written with [`ewr_model::write`].
//!
//! - [`mtx`]: Matrix Market files (`real general` or `real symmetric` coordinate).
//! - [`calculix`]: CalculiX's `*FREQUENCY, SOLVER=MATRIXSTORAGE` export (`.sti`, `.mas`,
//!   `.dof`) and the eigenvalue table of its `.dat` file.
//! - [`read_contacts`], [`read_forcing`]: the contacts and forcing CSV files.
//! - [`import_calculix`], [`import_mtx`]: the whole route, as `ewr import` runs it.
//!
//! Every error names the file and, where one line is at fault, the line
//! ([`ImportError`] displays as `file:line: message`). File formats: `docs/importing.md`.

mod assemble;
pub mod calculix;
mod contact_law;
mod contacts;
mod csv;
pub mod cyclic;
mod dofs;
mod error;
mod forcing;
pub mod mtx;
mod text;

pub use contacts::{
    CONTACT_COLUMNS, ORTHOGONALITY_TOL, ReadContacts, read_contacts, tangents_from_normal,
};
pub use dofs::{DofMap, NodeDof};
pub use error::ImportError;
pub use forcing::{FORCING_COLUMNS, read_forcing};

use ewr_model::{Contacts, Damping, Model, Problem, Severity, SparseMatrix, validate};
use std::path::{Path, PathBuf};

/// The linear structure as read from an FE export, before contacts and forcing.
#[derive(Clone, Debug)]
pub struct FeMatrices {
    /// Mass matrix (both triangles).
    pub mass: SparseMatrix,
    /// Stiffness matrix (both triangles).
    pub stiffness: SparseMatrix,
    /// Viscous damping matrix, if one was given.
    pub damping: Option<SparseMatrix>,
    /// Which FE node and direction each equation is, if known.
    pub dofs: Option<DofMap>,
    /// Where the matrices came from (for the model's title and messages).
    pub source: String,
    /// Remarks made while reading (e.g. duplicate entries summed).
    pub notes: Vec<String>,
}

/// The DOFs a contacts or forcing file refers to: `n` equations, and the node map if known.
#[derive(Clone, Copy, Debug)]
pub struct DofSpace<'a> {
    /// Number of equations.
    pub n: usize,
    /// Node and direction of each equation.
    pub map: Option<&'a DofMap>,
    /// The file the map was read from (named in errors).
    pub map_file: Option<&'a Path>,
}

/// What to add to the FE matrices: contacts, forcing, damping, title.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Contacts CSV file; without it the model is linear (no contacts).
    pub contacts: Option<PathBuf>,
    /// Forcing CSV file; without it the model has no forcing (a warning, not an error).
    pub forcing: Option<PathBuf>,
    /// Rayleigh damping `(alpha, beta)`: `C += alpha M + beta K`.
    pub rayleigh: Option<(f64, f64)>,
    /// Hysteretic loss factor `eta`: `+ i eta K` in the frequency domain.
    pub eta: Option<f64>,
    /// Model title; default "imported from ...".
    pub title: Option<String>,
    /// Free-text unit statement (ewr does not convert units; FE exports do not state them).
    pub units: Option<String>,
    /// Make the model one sector of a tuned disk (docs/cyclic.md).
    pub cyclic: Option<CyclicOptions>,
}

/// How an imported sector closes into a disk.
#[derive(Clone, Debug)]
pub struct CyclicOptions {
    /// Number of sectors `N`.
    pub sectors: usize,
    /// Engine order of the excitation.
    pub engine_order: i64,
    /// Matched boundary CSV (`left_node,right_node` or `left_eq,right_eq`); `None` when the
    /// sectors touch only through inter-sector contacts.
    pub boundary: Option<PathBuf>,
}

/// An imported, validated model.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The model, valid (no validation errors).
    pub model: Model,
    /// Remarks made while reading the files.
    pub notes: Vec<String>,
    /// Validation warnings (e.g. no forcing).
    pub warnings: Vec<Problem>,
}

/// The Matrix Market files of an import.
#[derive(Clone, Debug, Default)]
pub struct MtxFiles {
    /// Mass matrix.
    pub mass: PathBuf,
    /// Stiffness matrix.
    pub stiffness: PathBuf,
    /// Optional viscous damping matrix.
    pub damping: Option<PathBuf>,
    /// Optional DOF map in CalculiX's `.dof` format (one `node.direction` per equation), so
    /// that contacts and forcing can name FE nodes.
    pub dofs: Option<PathBuf>,
}

/// Reads a CalculiX job's `.sti`, `.mas`, `.dof` and builds the model.
pub fn import_calculix(job: &Path, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let fe = calculix::read_job(job)?;
    let map_file = calculix::JobFiles::of(job).dofs;
    build_model(fe, Some(&map_file), opts)
}

/// Reads M, K (and C, and a DOF map) from Matrix Market files and checks that they fit.
pub fn read_mtx(files: &MtxFiles) -> Result<FeMatrices, ImportError> {
    let stiffness = mtx::parse(&files.stiffness)?;
    let n = stiffness.n();
    let mass = mtx::parse(&files.mass)?;
    let damping = files.damping.as_deref().map(mtx::parse).transpose()?;
    for other in std::iter::once(&mass).chain(damping.as_ref()) {
        if other.n() != n {
            return Err(other.error(format!(
                "the matrix is {0} x {0} but the stiffness {1} is {n} x {n}",
                other.n(),
                files.stiffness.display()
            )));
        }
    }
    // Every DOF needs a mass or a stiffness, so the entries bound the size; checked before
    // the matrices are built (a 75-byte file can declare 2e8 rows).
    let stored = stiffness.stored() + mass.stored();
    if n > stored {
        return Err(stiffness.error(format!(
            "the size line declares {n} DOFs but the mass and stiffness files store only \
             {stored} entries together: every DOF needs a mass or a stiffness"
        )));
    }
    let mut notes = Vec::new();
    let mut build = |m: mtx::MtxEntries<'_>, path: &Path| -> Result<SparseMatrix, ImportError> {
        let m = m.assemble()?;
        if m.duplicates > 0 {
            notes.push(format!(
                "{}: {} duplicate entries summed (Matrix Market semantics)",
                path.display(),
                m.duplicates
            ));
        }
        Ok(m.matrix)
    };
    let stiffness = build(stiffness, &files.stiffness)?;
    let mass = build(mass, &files.mass)?;
    let damping = match (damping, &files.damping) {
        (Some(c), Some(path)) => Some(build(c, path)?),
        _ => None,
    };
    let dofs = match &files.dofs {
        Some(p) => {
            let map = DofMap::read(p)?;
            if map.len() != n {
                return Err(ImportError::file(
                    p,
                    format!(
                        "the DOF map has {} equations but the matrices have {n}",
                        map.len()
                    ),
                ));
            }
            Some(map)
        }
        None => None,
    };
    Ok(FeMatrices {
        mass,
        stiffness,
        damping,
        dofs,
        source: format!("Matrix Market {}", files.stiffness.display()),
        notes,
    })
}

/// Reads Matrix Market files and builds the model.
pub fn import_mtx(files: &MtxFiles, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let fe = read_mtx(files)?;
    build_model(fe, files.dofs.as_deref(), opts)
}

/// Adds contacts, forcing and damping to FE matrices and validates the model.
///
/// `map_file` is the file `fe.dofs` came from, named in errors about nodes.
pub fn build_model(
    fe: FeMatrices,
    map_file: Option<&Path>,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let n = fe.stiffness.nrows();
    if fe.mass.nrows() != n || fe.damping.as_ref().is_some_and(|c| c.nrows() != n) {
        return Err(ImportError::Option {
            message: format!("M, K and C must have the same size (K is {n} x {n})"),
        });
    }
    let damping = damping(opts)?;
    let FeMatrices {
        mut mass,
        mut stiffness,
        damping: mut damping_matrix,
        dofs,
        source,
        notes: fe_notes,
    } = fe;
    let mut labels = dofs.as_ref().map(DofMap::labels);
    let space = DofSpace {
        n,
        map: dofs.as_ref(),
        map_file,
    };
    let mut notes = fe_notes;
    let mut contacts = match &opts.contacts {
        Some(p) => {
            let r = read_contacts(p, &space)?;
            notes.extend(r.notes);
            r.contacts
        }
        None => Contacts::none(),
    };
    let forcing = match &opts.forcing {
        Some(p) => read_forcing(p, &space)?,
        None => Vec::new(),
    };
    let cyclic = cyclic_sector(opts, &space, &mut contacts, &mut labels)?;
    if let Some(cy) = &cyclic {
        // The next sector's contact DOFs appended by cyclic_sector.
        let n2 = n + cy.right.iter().filter(|&&r| r >= n).count();
        if n2 > n {
            mass = cyclic::widen(&mass, n2);
            stiffness = cyclic::widen(&stiffness, n2);
            damping_matrix = damping_matrix.map(|d| cyclic::widen(&d, n2));
        }
    }
    let model = Model {
        title: Some(
            opts.title
                .clone()
                .unwrap_or_else(|| format!("imported from {source}")),
        ),
        units: opts.units.clone(),
        mass,
        stiffness,
        damping_matrix,
        damping,
        contacts,
        forcing,
        dof_labels: labels,
        cyclic,
    };
    let problems = validate(&model);
    if problems.iter().any(|p| p.severity == Severity::Error) {
        return Err(ImportError::Model { problems });
    }
    Ok(Imported {
        model,
        notes,
        warnings: problems,
    })
}

/// The cyclic description of an imported sector: the boundary file's pairs, plus the next
/// sector's contact DOFs, appended after the `n` FE DOFs (labels widened; the caller widens
/// the matrices).
fn cyclic_sector(
    opts: &ImportOptions,
    space: &DofSpace<'_>,
    contacts: &mut Contacts,
    labels: &mut Option<Vec<String>>,
) -> Result<Option<ewr_model::Cyclic>, ImportError> {
    let n = space.n;
    let (next_left, next_right) = cyclic::append_next_sector_dofs(contacts, n)
        .map_err(|message| ImportError::Option { message })?;
    let Some(c) = &opts.cyclic else {
        if !next_left.is_empty() {
            return Err(ImportError::Option {
                message: "the contacts name the next sector (other_sector = next): give \
                          --sectors N (and --engine-order, --cyclic for the boundary)"
                    .into(),
            });
        }
        return Ok(None);
    };
    let (mut left, mut right) = match &c.boundary {
        Some(p) => cyclic::read_boundary(p, space)?,
        None => (Vec::new(), Vec::new()),
    };
    if let Some(l) = labels {
        let own: Vec<String> = next_left
            .iter()
            .map(|&e| format!("next:{}", l[e]))
            .collect();
        l.extend(own);
    }
    left.extend(next_left);
    right.extend(next_right);
    Ok(Some(ewr_model::Cyclic {
        sectors: c.sectors,
        engine_order: c.engine_order,
        left,
        right,
    }))
}

fn damping(opts: &ImportOptions) -> Result<Damping, ImportError> {
    let bad = |what: &str, v: f64| ImportError::Option {
        message: format!("{what} = {v}: must be finite and >= 0"),
    };
    if let Some((a, b)) = opts.rayleigh {
        for (what, v) in [("Rayleigh alpha", a), ("Rayleigh beta", b)] {
            if !v.is_finite() || v < 0.0 {
                return Err(bad(what, v));
            }
        }
    }
    if let Some(eta) = opts.eta
        && (!eta.is_finite() || eta < 0.0)
    {
        return Err(bad("hysteretic eta", eta));
    }
    Ok(Damping {
        rayleigh: opts.rayleigh,
        hysteretic_eta: opts.eta,
        modal_zeta: None,
    })
}
