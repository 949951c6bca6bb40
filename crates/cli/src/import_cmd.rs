//! `ewr import ...`: model files from FE matrix exports (CalculiX, Matrix Market).

use crate::Failure;
use crate::paths::named;
use clap::{Args, Subcommand};
use ewr_import::{ImportError, ImportOptions, Imported, MtxFiles};
use std::path::PathBuf;

/// Subcommands of `ewr import`.
#[derive(Subcommand)]
pub enum ImportCommand {
    /// Import a CalculiX matrix export: JOB.sti, JOB.mas and JOB.dof.
    #[command(
        long_about = "Import the stiffness and mass matrices CalculiX writes for a step \
                      `*FREQUENCY, SOLVER=MATRIXSTORAGE`: JOB.sti, JOB.mas and JOB.dof (the \
                      node and direction of each equation, which lets the contacts and \
                      forcing files name FE nodes). See docs/importing.md."
    )]
    Calculix(CalculixArgs),
    /// Import M, K (and C) from Matrix Market files.
    #[command(
        long_about = "Import M, K and optionally C from Matrix Market coordinate files \
                      (`real general` or `real symmetric`, as scipy.io.mmwrite, MATLAB \
                      scripts and PETSc write them). See docs/importing.md."
    )]
    Mtx(MtxArgs),
}

/// Arguments of `ewr import calculix`.
#[derive(Args)]
pub struct CalculixArgs {
    /// The CalculiX job: `dir/JOB` (or any of its files, e.g. `dir/JOB.inp`).
    job: PathBuf,
    #[command(flatten)]
    common: CommonArgs,
}

/// Arguments of `ewr import mtx`.
#[derive(Args)]
pub struct MtxArgs {
    /// Mass matrix (Matrix Market).
    #[arg(long, value_name = "M.mtx")]
    mass: PathBuf,
    /// Stiffness matrix (Matrix Market).
    #[arg(long, value_name = "K.mtx")]
    stiffness: PathBuf,
    /// Viscous damping matrix (Matrix Market).
    #[arg(long, value_name = "C.mtx")]
    damping: Option<PathBuf>,
    /// DOF map, one `node.direction` per equation (CalculiX's .dof format), so that the
    /// contacts and forcing files can name FE nodes.
    #[arg(long, value_name = "FILE")]
    dofs: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

/// Options shared by every importer.
#[derive(Args)]
pub struct CommonArgs {
    /// Output model file (HDF5).
    #[arg(short, long, value_name = "MODEL.h5")]
    output: PathBuf,
    /// Friction contacts (CSV; without it the model is linear).
    #[arg(long, value_name = "C.csv")]
    contacts: Option<PathBuf>,
    /// Harmonic forcing (CSV).
    #[arg(long, value_name = "F.csv")]
    forcing: Option<PathBuf>,
    /// Rayleigh damping C += alpha M + beta K.
    #[arg(long, value_name = "ALPHA,BETA", value_parser = parse_pair, allow_hyphen_values = true)]
    rayleigh: Option<(f64, f64)>,
    /// Hysteretic loss factor (adds i*eta*K to the dynamic stiffness).
    #[arg(long, value_name = "ETA", allow_hyphen_values = true)]
    eta: Option<f64>,
    /// Model title (default: "imported from ...").
    #[arg(long)]
    title: Option<String>,
    /// Free-text statement of the units (FE exports do not state them; ewr converts none).
    #[arg(long)]
    units: Option<String>,
    /// Make the model one sector of a tuned disk of N sectors (cyclic symmetry,
    /// docs/cyclic.md); contacts with `other_sector = next` then name the next sector's node.
    #[arg(long, value_name = "N")]
    sectors: Option<usize>,
    /// Engine order of the excitation of a sector (default 1; negative: the other way).
    #[arg(
        long,
        value_name = "EO",
        allow_hyphen_values = true,
        requires = "sectors"
    )]
    engine_order: Option<i64>,
    /// Matched cut faces of a sector (CSV: `left_node,right_node` or `left_eq,right_eq`; the
    /// right side is the next sector's copy of the left).
    #[arg(long = "cyclic", value_name = "B.csv", requires = "sectors")]
    boundary: Option<PathBuf>,
}

fn parse_pair(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("`{s}`: expected two numbers ALPHA,BETA"))?;
    let num = |x: &str| {
        x.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{x}` is not a number"))
    };
    Ok((num(a)?, num(b)?))
}

impl CommonArgs {
    fn options(&self) -> ImportOptions {
        ImportOptions {
            contacts: self.contacts.clone(),
            forcing: self.forcing.clone(),
            rayleigh: self.rayleigh,
            eta: self.eta,
            title: self.title.clone(),
            units: self.units.clone(),
            cyclic: self.sectors.map(|sectors| ewr_import::CyclicOptions {
                sectors,
                engine_order: self.engine_order.unwrap_or(1),
                boundary: self.boundary.clone(),
            }),
        }
    }
}

/// Runs one `ewr import` subcommand.
pub fn run(cmd: ImportCommand) -> Result<(), Failure> {
    let _claims = check_files(&cmd)?;
    let (result, common) = match &cmd {
        ImportCommand::Calculix(a) => (
            ewr_import::import_calculix(&a.job, &a.common.options()),
            &a.common,
        ),
        ImportCommand::Mtx(a) => {
            let files = MtxFiles {
                mass: a.mass.clone(),
                stiffness: a.stiffness.clone(),
                damping: a.damping.clone(),
                dofs: a.dofs.clone(),
            };
            (
                ewr_import::import_mtx(&files, &a.common.options()),
                &a.common,
            )
        }
    };
    // Every import error is about what the user gave us: a file or an option.
    let imported = result.map_err(|e: ImportError| Failure::input(e.to_string()))?;
    write(&imported, common)
}

/// Refuses, before reading anything, an output that is one of the input files.
fn check_files(cmd: &ImportCommand) -> Result<crate::args::Claims, Failure> {
    let (mut inputs, common) = match cmd {
        ImportCommand::Calculix(a) => {
            let f = ewr_import::calculix::JobFiles::of(&a.job);
            let files = vec![
                ("JOB (.sti)".to_string(), f.stiffness),
                ("JOB (.mas)".to_string(), f.mass),
                ("JOB (.dof)".to_string(), f.dofs),
                ("JOB".to_string(), a.job.clone()),
            ];
            (files, &a.common)
        }
        ImportCommand::Mtx(a) => {
            let mut files = vec![
                ("--mass".to_string(), a.mass.clone()),
                ("--stiffness".to_string(), a.stiffness.clone()),
            ];
            files.extend(a.damping.clone().map(|p| ("--damping".to_string(), p)));
            files.extend(a.dofs.clone().map(|p| ("--dofs".to_string(), p)));
            (files, &a.common)
        }
    };
    inputs.extend(
        common
            .contacts
            .clone()
            .map(|p| ("--contacts".to_string(), p)),
    );
    inputs.extend(common.forcing.clone().map(|p| ("--forcing".to_string(), p)));
    inputs.extend(common.boundary.clone().map(|p| ("--cyclic".to_string(), p)));
    let named: Vec<_> = inputs.iter().map(|(o, p)| named(o, p)).collect();
    crate::args::prepare_outputs(&named, &[("-o", Some(common.output.as_path()), &[])])
}

fn write(imported: &Imported, common: &CommonArgs) -> Result<(), Failure> {
    let m = &imported.model;
    ewr_model::write(&common.output, m).map_err(|e| Failure::work(e.to_string()))?;
    let kind = if m.contacts.has_normal() {
        "3-D contacts (normal load varies), tangential dim"
    } else {
        "contacts of dim"
    };
    say!(
        "wrote {} ({} DOFs, {} {kind} {}, {} forcing terms)",
        common.output.display(),
        m.n_dofs(),
        m.contacts.len(),
        m.contacts.dim,
        m.forcing.len()
    );
    for n in &imported.notes {
        say!("  note: {n}");
    }
    for w in &imported.warnings {
        say!("  {w}");
    }
    Ok(())
}
