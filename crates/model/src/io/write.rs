//! Writing a model file: validated first, then written atomically; the version written is
//! the oldest that holds the model's features.

use super::{FORMAT_NAME, ModelError};
use crate::linalg_error::Sentence;
use crate::model::{Kinematics, Model, SparseMatrix};
use crate::validate::{has_errors, validate};
use hdf5::types::VarLenUnicode;
use std::path::Path;

/// Writes a model file atomically: to a temporary file beside `path`, renamed on success.
///
/// The model is validated first; an invalid model is not written.
pub fn write(path: impl AsRef<Path>, model: &Model) -> Result<(), ModelError> {
    let path = path.as_ref();
    let problems = validate(model);
    if has_errors(&problems) {
        return Err(ModelError::Invalid {
            path: path.to_path_buf(),
            problems,
        });
    }
    crate::h5::atomically(path, |tmp| write_to(tmp, model).map_err(|e| e.to_string())).map_err(
        |reason| {
            // `atomically` names the file already; the variant's message does too.
            let prefix = format!("cannot write {}: ", path.display());
            ModelError::Write {
                path: path.to_path_buf(),
                reason: reason.strip_prefix(&prefix).unwrap_or(&reason).to_string(),
            }
        },
    )
}

fn vlu(s: &str) -> hdf5::Result<VarLenUnicode> {
    s.parse::<VarLenUnicode>()
        .map_err(|e| hdf5::Error::from(format!("string {s:?}: {e}")))
}

fn put_str_attr(loc: &hdf5::Location, name: &str, value: &str) -> hdf5::Result<()> {
    loc.new_attr::<VarLenUnicode>()
        .create(name)?
        .write_scalar(&vlu(value)?)
}

fn write_to(path: &Path, model: &Model) -> hdf5::Result<()> {
    let f = hdf5::File::create(path)?;
    put_str_attr(&f, "format", FORMAT_NAME)?;
    let v2 = model.contacts.k_t.is_some() || model.contacts.has_normal();
    let version = if model.cyclic.is_some() {
        3
    } else if v2 {
        2
    } else {
        1
    };
    f.new_attr::<i64>()
        .create("version")?
        .write_scalar(&version)?;
    if let Some(t) = &model.title {
        put_str_attr(&f, "title", t)?;
    }
    if let Some(u) = &model.units {
        put_str_attr(&f, "units", u)?;
    }
    write_csr(&f, "M", &model.mass, true)?;
    write_csr(&f, "K", &model.stiffness, true)?;
    if let Some(c) = &model.damping_matrix {
        write_csr(&f, "C", c, true)?;
    }
    let d = &model.damping;
    if !d.is_empty() {
        let g = f.create_group("damping")?;
        let scalar = |name: &str, v: f64| -> hdf5::Result<()> {
            g.new_dataset::<f64>().create(name)?.write_scalar(&v)
        };
        if let Some((a, b)) = d.rayleigh {
            scalar("alpha", a)?;
            scalar("beta", b)?;
        }
        if let Some(eta) = d.hysteretic_eta {
            scalar("eta", eta)?;
        }
        if let Some(z) = &d.modal_zeta {
            g.new_dataset_builder()
                .with_data(z.as_slice())
                .create("zeta")?;
        }
    }
    let c = &model.contacts;
    if !c.is_empty() {
        let g = f.create_group("contacts")?;
        g.new_attr::<i64>()
            .create("dim")?
            .write_scalar(&(c.dim as i64))?;
        if !c.has_normal() {
            g.new_dataset_builder()
                .with_data(c.mu_n.as_slice())
                .create("mu_n")?;
        }
        g.new_dataset_builder()
            .with_data(c.rho.as_slice())
            .create("rho")?;
        // Written only when set, so that files of fixed-rho models stay as they were.
        if c.rho_auto && !c.has_normal() {
            put_str_attr(&g, "rho_mode", "auto")?;
        }
        if let Some(k) = &c.k_t {
            g.new_dataset_builder()
                .with_data(k.as_slice())
                .create("k_t")?;
        }
        write_kinematics(&g, &c.kinematics, c.len(), c.dim)?;
        if let Some(nc) = &c.normal {
            let ng = g.create_group("normal")?;
            ng.new_dataset_builder()
                .with_data(nc.mu.as_slice())
                .create("mu")?;
            ng.new_dataset_builder()
                .with_data(nc.g0.as_slice())
                .create("g0")?;
            if let Some(k) = &nc.k_n {
                ng.new_dataset_builder()
                    .with_data(k.as_slice())
                    .create("k_n")?;
            }
            if let Some(load) = &nc.load {
                ng.new_dataset_builder()
                    .with_data(load.as_slice())
                    .create("load")?;
            }
            match (&nc.load, &nc.kinematics) {
                (Some(_), Kinematics::Dofs { dofs, other }) => {
                    // -1: the contacts with a fixed load have no normal DOF.
                    let fixed = |c: usize| nc.fixed_load(c).is_some();
                    let table: Vec<i64> = (0..c.len())
                        .map(|i| if fixed(i) { -1 } else { dofs[i] as i64 })
                        .collect();
                    ng.new_dataset_builder().with_data(&table).create("dofs")?;
                    if let Some(o) = other {
                        let table: Vec<i64> = (0..c.len())
                            .map(|i| match o[i] {
                                Some(d) if !fixed(i) => d as i64,
                                _ => -1,
                            })
                            .collect();
                        ng.new_dataset_builder()
                            .with_data(&table)
                            .create("dofs_other")?;
                    }
                }
                (_, kin) => write_kinematics(&ng, kin, c.len(), 1)?,
            }
        }
    }
    if !model.forcing.is_empty() {
        let g = f.create_group("forcing")?;
        let fo = &model.forcing;
        let dof: Vec<i64> = fo.iter().map(|t| t.dof as i64).collect();
        let h: Vec<i64> = fo.iter().map(|t| t.harmonic as i64).collect();
        let cs: Vec<f64> = fo.iter().map(|t| t.cos).collect();
        let sn: Vec<f64> = fo.iter().map(|t| t.sin).collect();
        g.new_dataset_builder().with_data(&dof).create("dof")?;
        g.new_dataset_builder().with_data(&h).create("harmonic")?;
        g.new_dataset_builder().with_data(&cs).create("cos")?;
        g.new_dataset_builder().with_data(&sn).create("sin")?;
    }
    if let Some(cy) = &model.cyclic {
        let g = f.create_group("cyclic")?;
        g.new_dataset::<i64>()
            .create("sectors")?
            .write_scalar(&(cy.sectors as i64))?;
        g.new_dataset::<i64>()
            .create("engine_order")?
            .write_scalar(&cy.engine_order)?;
        for (name, v) in [("left", &cy.left), ("right", &cy.right)] {
            let v: Vec<i64> = v.iter().map(|&d| d as i64).collect();
            g.new_dataset_builder().with_data(&v).create(name)?;
        }
    }
    if let Some(labels) = &model.dof_labels {
        let v = labels
            .iter()
            .map(|l| vlu(l))
            .collect::<hdf5::Result<Vec<_>>>()?;
        f.new_dataset_builder().with_data(&v).create("dof_labels")?;
    }
    f.flush()?;
    Ok(())
}

/// Writes kinematics as a `dofs` table (`nc x dim`, with `dofs_other`) or a sparse `W`.
fn write_kinematics(
    g: &hdf5::Group,
    kinematics: &Kinematics,
    nc: usize,
    dim: usize,
) -> hdf5::Result<()> {
    match kinematics {
        Kinematics::Dofs { dofs, other } => {
            let table: Vec<i64> = dofs.iter().map(|&d| d as i64).collect();
            g.new_dataset::<i64>()
                .shape([nc, dim])
                .create("dofs")?
                .write_raw(&table)?;
            if let Some(o) = other {
                let table: Vec<i64> = o.iter().map(|d| d.map_or(-1, |d| d as i64)).collect();
                g.new_dataset::<i64>()
                    .shape([nc, dim])
                    .create("dofs_other")?
                    .write_raw(&table)?;
            }
        }
        Kinematics::Matrix(w) => write_csr(g, "W", w, false)?,
    }
    Ok(())
}

/// Writes `a` as a CSR group; with `upper`, only the upper triangle (attribute symmetric).
fn write_csr(loc: &hdf5::Group, name: &str, a: &SparseMatrix, upper: bool) -> hdf5::Result<()> {
    // CSR of A is CSC of A^T; for the upper triangle of a symmetric A, row i of the upper
    // triangle holds the entries of column i of A on or below the diagonal.
    let csr = if upper {
        None
    } else {
        Some(
            a.as_ref()
                .transpose()
                .to_col_major()
                .map_err(|e| hdf5::Error::from(e.sentence()))?,
        )
    };
    let src = csr.as_ref().unwrap_or(a);
    let mut indptr = vec![0i64];
    let mut indices = Vec::new();
    let mut data = Vec::new();
    for j in 0..src.ncols() {
        for (&i, &v) in src.row_idx_of_col_raw(j).iter().zip(src.val_of_col(j)) {
            if !upper || i >= j {
                indices.push(i as i64);
                data.push(v);
            }
        }
        indptr.push(indices.len() as i64);
    }
    let g = loc.create_group(name)?;
    put_str_attr(&g, "encoding-type", "csr_matrix")?;
    put_str_attr(&g, "encoding-version", "0.1.0")?;
    if upper {
        put_str_attr(&g, "symmetric", "upper")?;
    }
    g.new_attr::<i64>()
        .shape([2])
        .create("shape")?
        .write_raw(&[a.nrows() as i64, a.ncols() as i64])?;
    g.new_dataset_builder().with_data(&data).create("data")?;
    g.new_dataset_builder()
        .with_data(&indices)
        .create("indices")?;
    g.new_dataset_builder()
        .with_data(&indptr)
        .create("indptr")?;
    Ok(())
}
