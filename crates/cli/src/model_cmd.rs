//! `ewr model ...`: information about, validation of, and creation of model files.

use crate::Failure;
use clap::{Args, Subcommand};
use ewr_hb::modes::{DENSE_MODES_MAX_DOFS, natural_frequencies};
use ewr_hb::{Receptance, ReceptanceKind};
use ewr_model::{Example, ExampleOptions, Kinematics, Model, ModelError, Problem};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Subcommands of `ewr model`.
#[derive(Subcommand)]
pub enum ModelCommand {
    /// Summarise a model: DOFs, nonzeros, contacts, forcing, damping, natural frequencies.
    Info(InfoArgs),
    /// Validate a model file: exit 0 if valid, 2 with the list of problems if not.
    Check {
        /// The model file (HDF5).
        file: PathBuf,
    },
    /// Write one of the built-in example models to a file.
    #[command(
        long_about = "Write one of the built-in example models (the systems of the papers ewr \
                      reproduces) to an HDF5 model file. `--list` names them; models/README.md \
                      gives their sources and parameters."
    )]
    Example(ExampleArgs),
    /// Expand a cyclic sector model into its full annulus (N sectors, phase-shifted forcing).
    #[command(
        long_about = "Expand a cyclic sector model into the full annulus: N copies of the \
                      sector joined at their boundaries, the contacts repeated per sector and \
                      the forcing of sector j phase-shifted by exp(i 2 pi j h EO / N). The \
                      result is an ordinary model that every command, including `ewr \
                      simulate`, takes: the reference for checking a sector computation. DOF \
                      i of sector j is labelled `s<j>:<label>`; contact c of sector j becomes \
                      contact j * nc + c."
    )]
    Annulus {
        /// The cyclic sector model (HDF5, with `/cyclic`).
        sector: PathBuf,
        /// Output model file of the full annulus.
        #[arg(short, long)]
        output: PathBuf,
    },
}

/// Arguments of `ewr model info`.
#[derive(Args)]
pub struct InfoArgs {
    /// The model file (HDF5).
    file: PathBuf,
    /// How many natural frequencies to list [default: 10 up to 3000 DOFs (dense
    /// eigensolver); above, none unless given: they are then computed by sparse
    /// shift-invert Lanczos, about 20 s at 100 000 DOFs].
    #[arg(long, allow_hyphen_values = true)]
    modes: Option<usize>,
    /// Print the summary as JSON on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// Arguments of `ewr model example`.
#[derive(Args)]
pub struct ExampleArgs {
    /// Example name (see --list): oscillator-2d, two-mass-damper, two-dof-1d, chain,
    /// blade-damper-blade, sector, bladed-disk, ...
    #[arg(required_unless_present = "list")]
    name: Option<String>,
    /// Output model file.
    #[arg(short, long, required_unless_present = "list")]
    output: Option<PathBuf>,
    /// List the examples with a one-line description.
    #[arg(long)]
    list: bool,
    /// Friction bound mu*N for every contact, instead of the published value.
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    mu_n: Option<f64>,
    /// Number of friction contacts of `chain` (the chain has N + 10 masses) or `sector`
    /// (default 20; at most what the mesh has room for: 126 at --refine 1, 2 046 at 4).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    contacts: Option<usize>,
    /// Mesh refinement level of `sector`: 1 (default) about 2 000 DOFs, 2 about 14 000,
    /// 3 about 45 000, 4 about 108 000, 5 about 190 000.
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    refine: Option<usize>,
    /// Damper mass of `two-mass-damper` (0 = massless damper).
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    damper_mass: Option<f64>,
    /// `sector` with 3-D contacts: normal direction, contact stiffness 1e8 N/m, mu = 0.3 and
    /// an interference preload of mu_n / mu per contact.
    #[arg(long = "contact-3d")]
    contact_3d: bool,
    /// Number of sectors of `bladed-disk` (default 12); on `sector`, closes it into a tuned
    /// disk of N sectors with --contacts inter-sector snubber contacts (cyclic symmetry).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    sectors: Option<usize>,
    /// Engine order of `bladed-disk` and `sector --sectors N` (default 3; negative: the wave
    /// travels the other way).
    #[arg(long, value_name = "EO", allow_hyphen_values = true)]
    engine_order: Option<i64>,
}

/// Runs one `ewr model` subcommand.
pub fn run(cmd: ModelCommand) -> Result<(), Failure> {
    match cmd {
        ModelCommand::Info(a) => info(&a),
        ModelCommand::Check { file } => check(&file),
        ModelCommand::Example(a) => example(&a),
        ModelCommand::Annulus { sector, output } => annulus(&sector, &output),
    }
}

fn load(file: &Path) -> Result<ewr_model::ReadModel, Failure> {
    crate::probe::readable(crate::probe::Kind::Model, file)?;
    ewr_model::read(file).map_err(|e| match e {
        ModelError::Write { .. } => Failure::work(e.to_string()),
        _ => Failure::input(e.to_string()),
    })
}

fn annulus(sector: &Path, output: &Path) -> Result<(), Failure> {
    let _claims = crate::args::prepare_outputs(
        &[crate::paths::named("SECTOR", sector)],
        &[("--output", Some(output), &[])],
    )?;
    let read = load(sector)?;
    let m = &read.model;
    let Some(cy) = &m.cyclic else {
        return Err(Failure::input(format!(
            "{}: not a cyclic sector model (no /cyclic group)",
            sector.display()
        )));
    };
    let full = m
        .annulus()
        .map_err(|e| Failure::input(format!("{}: {e}", sector.display())))?;
    ewr_model::write(output, &full).map_err(|e| Failure::work(e.to_string()))?;
    say!(
        "wrote {} (full annulus of {} sectors, engine order {}: {} DOFs, {} contacts)",
        output.display(),
        cy.sectors,
        cy.engine_order,
        full.n_dofs(),
        full.contacts.len()
    );
    Ok(())
}

fn check(file: &Path) -> Result<(), Failure> {
    let read = load(file)?;
    let m = &read.model;
    say!(
        "{}: valid ewr model ({} DOFs, {} contacts of dim {}, {} forcing terms)",
        file.display(),
        m.n_dofs(),
        m.contacts.len(),
        m.contacts.dim,
        m.forcing.len()
    );
    for w in &read.warnings {
        say!("  {w}");
    }
    if let Some(w) = ewr_model::check_semidefinite(&m.stiffness) {
        say!("  {w}");
    }
    Ok(())
}

/// The `model info` summary; also its JSON form.
#[derive(Serialize)]
struct Info {
    file: String,
    title: Option<String>,
    units: Option<String>,
    n_dofs: usize,
    nnz: Nnz,
    damping: Vec<String>,
    contacts: ContactInfo,
    forcing: ForcingInfo,
    /// Undamped natural circular frequencies with friction removed (rad per time unit).
    natural_frequencies: Option<Vec<f64>>,
    /// Why the natural frequencies were not computed, when they were not.
    natural_frequencies_note: Option<String>,
    /// Undamped natural circular frequencies with every contact stuck (contact stiffnesses
    /// as springs, rigid contacts by a penalty of `STUCK_PENALTY` x the largest `K_ii`).
    #[serde(skip_serializing_if = "Option::is_none")]
    stuck_frequencies: Option<Vec<f64>>,
    /// Cyclic symmetry of a sector model.
    #[serde(skip_serializing_if = "Option::is_none")]
    cyclic: Option<CyclicInfo>,
    warnings: Vec<String>,
}

/// The cyclic part of `model info`.
#[derive(Serialize)]
struct CyclicInfo {
    sectors: usize,
    engine_order: i64,
    boundary_pairs: usize,
    /// Nodal diameter of harmonics 0, 1, 2, ... up to 10.
    harmonic_nodal_diameters: Vec<usize>,
    /// Per nodal diameter 0 ..= N/2, the lowest natural circular frequencies (friction
    /// removed, undamped); `None` where they could not be computed.
    nodal_diameter_frequencies: Vec<Option<Vec<f64>>>,
    /// The same with every contact stuck.
    nodal_diameter_stuck_frequencies: Vec<Option<Vec<f64>>>,
    /// Why they are missing, when they are.
    frequencies_note: Option<String>,
}

#[derive(Serialize)]
struct Nnz {
    m: usize,
    k: usize,
    c: Option<usize>,
}

#[derive(Serialize)]
struct ContactInfo {
    count: usize,
    dim: usize,
    kinematics: &'static str,
    mu_n_min: Option<f64>,
    mu_n_max: Option<f64>,
    rho_min: Option<f64>,
    rho_max: Option<f64>,
    /// `rho` is a factor on the automatic scaling (always for 3-D contacts).
    rho_auto: bool,
    /// 3-D contacts: friction coefficient, initial gap and contact stiffness ranges.
    #[serde(skip_serializing_if = "Option::is_none")]
    normal: Option<NormalInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    k_t: Option<[f64; 2]>,
}

#[derive(Serialize)]
struct NormalInfo {
    mu: [f64; 2],
    g0: [f64; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    k_n: Option<[f64; 2]>,
    /// Contacts without a normal direction, at a fixed normal force, and its range.
    fixed_load_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    fixed_load: Option<[f64; 2]>,
}

#[derive(Serialize)]
struct ForcingInfo {
    terms: usize,
    harmonics: Vec<usize>,
    dofs: Vec<usize>,
}

fn span(v: &[f64]) -> [f64; 2] {
    let (a, b) = range(v);
    [a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN)]
}

fn range(v: &[f64]) -> (Option<f64>, Option<f64>) {
    let min = v.iter().copied().reduce(f64::min);
    let max = v.iter().copied().reduce(f64::max);
    (min, max)
}

/// The lowest `n` undamped natural frequencies of a large model by sparse Lanczos (the
/// modal backend's extraction, on the model without its contacts).
fn sparse_frequencies(m: &Model, n: usize) -> (Option<Vec<f64>>, Option<String>) {
    let mut free = m.clone();
    free.contacts = ewr_model::Contacts::none();
    match Receptance::new(&free, ReceptanceKind::Modal { modes: n }) {
        Ok(r) => match r.modes() {
            Some(modes) => (Some(modes.omega.clone()), None),
            None => (None, Some("not computed: no modes".to_string())),
        },
        Err(e) => (None, Some(format!("not computed: {e}"))),
    }
}

/// The natural frequencies of `m`: dense below the dense limit, else the lowest `n` by
/// sparse Lanczos, `None` when not requested; the note says why not.
fn frequencies_of(m: &Model, n_modes: Option<usize>) -> (Option<Vec<f64>>, Option<String>) {
    let large = m.n_dofs() > DENSE_MODES_MAX_DOFS;
    if n_modes == Some(0) {
        (None, Some("not requested".to_string()))
    } else if large && n_modes.is_none() {
        (
            None,
            Some(format!(
                "not computed: {} DOFs is above the dense limit of {DENSE_MODES_MAX_DOFS}; \
                 --modes N computes the lowest N by sparse Lanczos",
                m.n_dofs()
            )),
        )
    } else if large {
        sparse_frequencies(m, n_modes.unwrap_or(10))
    } else {
        let n_modes = n_modes.unwrap_or(10);
        match natural_frequencies(m) {
            Ok(mut w) => {
                w.truncate(n_modes);
                (Some(w), None)
            }
            Err(e) => (None, Some(format!("not computed: {e}"))),
        }
    }
}

fn summarise(file: &Path, m: &Model, warnings: &[Problem], n_modes: Option<usize>) -> Info {
    let nnz = |a: &ewr_model::SparseMatrix| a.compute_nnz();
    let mut damping = Vec::new();
    if let Some(c) = &m.damping_matrix {
        damping.push(format!("viscous matrix C ({} nonzeros)", nnz(c)));
    }
    if let Some((a, b)) = m.damping.rayleigh {
        damping.push(format!("Rayleigh alpha = {a:e}, beta = {b:e}"));
    }
    if let Some(eta) = m.damping.hysteretic_eta {
        damping.push(format!("hysteretic eta = {eta:e}"));
    }
    if let Some(z) = &m.damping.modal_zeta {
        damping.push(format!("modal zeta for {} modes", z.len()));
    }
    let c = &m.contacts;
    let kinematics = match &c.kinematics {
        _ if c.is_empty() => "none",
        Kinematics::Dofs { other: None, .. } => "node-to-ground DOFs",
        Kinematics::Dofs { other: Some(o), .. } if o.iter().all(Option::is_none) => {
            "node-to-ground DOFs"
        }
        Kinematics::Dofs { .. } => "node-to-node DOFs",
        Kinematics::Matrix(_) => "general W matrix",
    };
    let (mu_n_min, mu_n_max) = range(&c.mu_n);
    let (rho_min, rho_max) = range(&c.rho);
    let mut harmonics: Vec<usize> = m.forcing.iter().map(|f| f.harmonic).collect();
    harmonics.sort_unstable();
    harmonics.dedup();
    let mut dofs: Vec<usize> = m.forcing.iter().map(|f| f.dof).collect();
    dofs.sort_unstable();
    dofs.dedup();
    let stuck = m.stuck_default().ok().flatten();
    let (natural_frequencies, natural_frequencies_note, stuck_frequencies, cyclic) = match &m.cyclic
    {
        None => {
            let (w, note) = frequencies_of(m, n_modes);
            let stuck = stuck.and_then(|s| frequencies_of(&s, n_modes).0);
            (w, note, stuck, None)
        }
        Some(cy) => (
            None,
            Some("cyclic sector: listed per nodal diameter".to_string()),
            None,
            Some(cyclic_info(m, cy, stuck.as_ref(), n_modes)),
        ),
    };
    Info {
        file: file.display().to_string(),
        title: m.title.clone(),
        units: m.units.clone(),
        n_dofs: m.n_dofs(),
        nnz: Nnz {
            m: nnz(&m.mass),
            k: nnz(&m.stiffness),
            c: m.damping_matrix.as_ref().map(nnz),
        },
        damping,
        contacts: ContactInfo {
            count: c.len(),
            dim: c.dim,
            kinematics,
            mu_n_min,
            mu_n_max,
            rho_min,
            rho_auto: c.rho_auto || c.has_normal(),
            rho_max,
            normal: c.normal.as_ref().map(|n| NormalInfo {
                mu: span(&n.mu),
                g0: span(&n.g0),
                k_n: n.k_n.as_deref().map(span),
                fixed_load_count: (0..c.len()).filter(|&i| n.fixed_load(i).is_some()).count(),
                fixed_load: {
                    let l: Vec<f64> = (0..c.len()).filter_map(|i| n.fixed_load(i)).collect();
                    (!l.is_empty()).then(|| span(&l))
                },
            }),
            k_t: c.k_t.as_deref().map(span),
        },
        forcing: ForcingInfo {
            terms: m.forcing.len(),
            harmonics,
            dofs,
        },
        natural_frequencies,
        natural_frequencies_note,
        stuck_frequencies,
        cyclic,
        warnings: warnings.iter().map(ToString::to_string).collect(),
    }
}

/// Nodal diameters and their natural frequencies (dense, small sectors only).
fn cyclic_info(
    m: &Model,
    cy: &ewr_model::Cyclic,
    stuck: Option<&Model>,
    n_modes: Option<usize>,
) -> CyclicInfo {
    let n_modes = n_modes.unwrap_or(10);
    let nds = cy.sectors / 2 + 1;
    let small = 2 * m.n_dofs() <= DENSE_MODES_MAX_DOFS;
    let per_nd = |model: &Model| -> Vec<Option<Vec<f64>>> {
        (0..nds)
            .map(|k| {
                ewr_hb::modes::cyclic_natural_frequencies(model, k)
                    .ok()
                    .map(|mut w| {
                        w.truncate(n_modes);
                        w
                    })
            })
            .collect()
    };
    let (free, stuck, note) = if !small {
        (
            Vec::new(),
            Vec::new(),
            Some(format!(
                "not computed: a sector of {} DOFs is above the dense limit of {}",
                m.n_dofs(),
                DENSE_MODES_MAX_DOFS / 2
            )),
        )
    } else if n_modes == 0 {
        (Vec::new(), Vec::new(), Some("not requested".to_string()))
    } else {
        (per_nd(m), stuck.map(per_nd).unwrap_or_default(), None)
    };
    CyclicInfo {
        sectors: cy.sectors,
        engine_order: cy.engine_order,
        boundary_pairs: cy.left.len(),
        harmonic_nodal_diameters: (0..=10).map(|h| cy.nodal_diameter(h)).collect(),
        nodal_diameter_frequencies: free,
        nodal_diameter_stuck_frequencies: stuck,
        frequencies_note: note,
    }
}

fn info(a: &InfoArgs) -> Result<(), Failure> {
    let read = load(&a.file)?;
    let m = &read.model;
    let info = summarise(&a.file, m, &read.warnings, a.modes);
    if a.json {
        let s = serde_json::to_string_pretty(&info)
            .map_err(|e| Failure::work(format!("cannot format JSON: {e}")))?;
        say!("{s}");
        return Ok(());
    }
    say!("file:      {}", info.file);
    if let Some(t) = &info.title {
        say!("title:     {t}");
    }
    if let Some(u) = &info.units {
        say!("units:     {u}");
    }
    say!("DOFs:      {}", info.n_dofs);
    say!(
        "nonzeros:  M {}, K {}{} (both triangles)",
        info.nnz.m,
        info.nnz.k,
        info.nnz.c.map(|c| format!(", C {c}")).unwrap_or_default()
    );
    if info.damping.is_empty() {
        say!("damping:   none");
    } else {
        say!("damping:   {}", info.damping.join("; "));
    }
    let ci = &info.contacts;
    if ci.count == 0 {
        say!("contacts:  none (linear model)");
    } else if let Some(n) = &ci.normal {
        say!(
            "contacts:  {} 3-D contacts, {} tangential direction(s) + normal ({}), mu {} .. {}, \
             g0 {} .. {}, rho factor {} .. {}",
            ci.count,
            ci.dim,
            ci.kinematics,
            n.mu[0],
            n.mu[1],
            n.g0[0],
            n.g0[1],
            fmt_opt(ci.rho_min),
            fmt_opt(ci.rho_max)
        );
        if let Some(k) = n.k_n {
            say!(
                "           normal contact stiffness k_n {} .. {}",
                k[0],
                k[1]
            );
        }
        if let Some(l) = n.fixed_load {
            say!(
                "           {} with a fixed normal load (no normal direction), {} .. {}",
                n.fixed_load_count,
                l[0],
                l[1]
            );
        }
    } else {
        say!(
            "contacts:  {} of dim {} ({}), mu_n {} .. {}, rho {}{} .. {}",
            ci.count,
            ci.dim,
            ci.kinematics,
            fmt_opt(ci.mu_n_min),
            fmt_opt(ci.mu_n_max),
            if ci.rho_auto { "auto, factor " } else { "" },
            fmt_opt(ci.rho_min),
            fmt_opt(ci.rho_max)
        );
    }
    if let Some(k) = ci.k_t {
        say!(
            "           tangential contact stiffness k_t {} .. {}",
            k[0],
            k[1]
        );
    }
    let label = |d: usize| match m.dof_labels.as_ref().and_then(|l| l.get(d)) {
        Some(l) => format!("{d} ({l})"),
        None => d.to_string(),
    };
    let fi = &info.forcing;
    if fi.terms == 0 {
        say!("forcing:   none");
    } else {
        let dofs: Vec<String> = fi.dofs.iter().take(8).map(|&d| label(d)).collect();
        let more = if fi.dofs.len() > 8 { ", ..." } else { "" };
        say!(
            "forcing:   {} terms, harmonics {:?}, on DOFs {}{more}",
            fi.terms,
            fi.harmonics,
            dofs.join(", ")
        );
    }
    match (&info.natural_frequencies, &info.natural_frequencies_note) {
        (Some(w), _) => {
            say!("natural frequencies (friction removed, undamped):");
            say!(
                "  {:>4}  {:>16}  {:>16}",
                "mode",
                "omega [rad/s]",
                "f = omega/2pi"
            );
            for (i, w) in w.iter().enumerate() {
                say!(
                    "  {:>4}  {:>16.8e}  {:>16.8e}",
                    i + 1,
                    w,
                    w / std::f64::consts::TAU
                );
            }
        }
        (None, Some(note)) => say!("natural frequencies: {note}"),
        (None, None) => {}
    }
    if let Some(cy) = &info.cyclic {
        let hs: Vec<String> = cy
            .harmonic_nodal_diameters
            .iter()
            .enumerate()
            .skip(1)
            .take(7)
            .map(|(h, k)| format!("h{h}->{k}"))
            .collect();
        say!(
            "cyclic:    one sector of {} (engine order {}, {} boundary DOF pairs); nodal \
             diameter of each harmonic: {}, ...",
            cy.sectors,
            cy.engine_order,
            cy.boundary_pairs,
            hs.join(" ")
        );
        if let Some(note) = &cy.frequencies_note {
            say!("natural frequencies per nodal diameter: {note}");
        }
        for (title, table) in [
            (
                "natural frequencies per nodal diameter (friction removed, undamped), omega:",
                &cy.nodal_diameter_frequencies,
            ),
            (
                "the same with every contact stuck:",
                &cy.nodal_diameter_stuck_frequencies,
            ),
        ] {
            if table.is_empty() {
                continue;
            }
            say!("{title}");
            for (k, w) in table.iter().enumerate() {
                let row = match w {
                    Some(w) => w
                        .iter()
                        .map(|x| format!("{x:.6e}"))
                        .collect::<Vec<_>>()
                        .join("  "),
                    None => "not computed".into(),
                };
                say!("  ND {k:>3}:  {row}");
            }
        }
    }
    if let Some(w) = &info.stuck_frequencies {
        say!("natural frequencies with every contact stuck (undamped; a sweep should cover both):");
        for (i, w) in w.iter().enumerate() {
            say!(
                "  {:>4}  {:>16.8e}  {:>16.8e}",
                i + 1,
                w,
                w / std::f64::consts::TAU
            );
        }
    }
    for w in &info.warnings {
        say!("{w}");
    }
    Ok(())
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map(|x| format!("{x}")).unwrap_or_else(|| "-".into())
}

fn example(a: &ExampleArgs) -> Result<(), Failure> {
    if a.list {
        for e in Example::ALL {
            say!("{:<20} {}", e.name(), e.summary());
        }
        return Ok(());
    }
    let (Some(name), Some(output)) = (&a.name, &a.output) else {
        return Err(Failure::input("an example name and --output are required"));
    };
    let ex: Example = name.parse().map_err(Failure::input)?;
    let _claims = crate::args::prepare_outputs(&[], &[("--output", Some(output.as_path()), &[])])?;
    if let Some(x) = a.mu_n
        && (!x.is_finite() || x < 0.0)
    {
        return Err(Failure::input(format!(
            "--mu-n {x}: the friction bound must be finite and >= 0"
        )));
    }
    if let Some(x) = a.damper_mass
        && (!x.is_finite() || x < 0.0)
    {
        return Err(Failure::input(format!(
            "--damper-mass {x}: must be finite and >= 0"
        )));
    }
    if a.contacts.is_some() && !matches!(ex, Example::Chain | Example::Sector) {
        return Err(Failure::input(
            "--contacts applies to the chain and sector examples only",
        ));
    }
    if a.contact_3d && ex != Example::Sector {
        return Err(Failure::input(
            "--contact-3d applies to the sector example only",
        ));
    }
    if a.refine.is_some() && ex != Example::Sector {
        return Err(Failure::input(
            "--refine applies to the sector example only",
        ));
    }
    if ex == Example::Sector {
        let p = ewr_model::examples::Sector {
            refine: a.refine.unwrap_or(1),
            contacts: a.contacts.unwrap_or(20),
            ..Default::default()
        };
        if p.refine == 0 || p.refine > 12 {
            return Err(Failure::input("--refine: 1 to 12"));
        }
        let room = if a.sectors.is_some() {
            p.max_snubber_contacts()
        } else {
            p.max_contacts()
        };
        if p.contacts > room {
            return Err(Failure::input(format!(
                "--contacts {}: the sector mesh at --refine {} has room for {room}",
                p.contacts, p.refine,
            )));
        }
        if a.sectors.is_some() && a.contact_3d {
            return Err(Failure::input(
                "--contact-3d and --sectors: the closed sector disk has 2-D snubber contacts only",
            ));
        }
    }
    if (a.sectors.is_some() || a.engine_order.is_some())
        && !matches!(ex, Example::BladedDisk | Example::Sector)
    {
        return Err(Failure::input(
            "--sectors and --engine-order apply to the bladed-disk and sector examples only",
        ));
    }
    if a.engine_order.is_some() && a.sectors.is_none() && ex == Example::Sector {
        return Err(Failure::input(
            "--engine-order on sector needs --sectors N (which closes it into a disk)",
        ));
    }
    if a.sectors.is_some_and(|s| s < 2) {
        return Err(Failure::input("--sectors: a disk needs at least 2 sectors"));
    }
    if a.damper_mass.is_some() && ex != Example::TwoMassDamper {
        return Err(Failure::input(
            "--damper-mass applies to the two-mass-damper example only",
        ));
    }
    let opts = ExampleOptions {
        contact_3d: a.contact_3d,
        mu_n: a.mu_n,
        contacts: a.contacts,
        refine: a.refine,
        damper_mass: a.damper_mass,
        sectors: a.sectors,
        engine_order: a.engine_order,
    };
    let model = ex.build(&opts);
    ewr_model::write(output, &model).map_err(|e| Failure::work(e.to_string()))?;
    say!(
        "wrote {} ({}: {} DOFs, {} contacts)",
        output.display(),
        ex.name(),
        model.n_dofs(),
        model.contacts.len()
    );
    Ok(())
}
