//! Reading `/contacts`: the tangential directions and their bounds, the kinematics (DOF
//! tables or a sparse `W`) and the normal directions of 3-D contacts.

use super::matrix::read_matrix;
use super::values::{attr_ints, attr_string, dataset, floats, ints, to_index};
use crate::model::{Contacts, Kinematics, NormalContacts};
use crate::validate::Problem;

/// Reads `/contacts`; `n` is `None` when K could not be read (DOF ranges are then not
/// checked, and a `W` matrix is not built).
pub(super) fn read_contacts(
    file: &hdf5::File,
    n: Option<usize>,
    out: &mut Vec<Problem>,
) -> Option<Contacts> {
    if !file.link_exists("contacts") {
        return Some(Contacts::none());
    }
    let g = match file.group("contacts") {
        Ok(g) => g,
        Err(e) => {
            out.push(Problem::error(
                "/contacts",
                format!("must be a group ({e})"),
            ));
            return None;
        }
    };
    let dim = match attr_ints(&g, "dim") {
        Ok(Some(v)) if v.len() == 1 && (v[0] == 1 || v[0] == 2) => v[0] as usize,
        Ok(Some(v)) => {
            out.push(Problem::error(
                "/contacts",
                format!("attribute dim = {v:?}, must be 1 or 2"),
            ));
            return None;
        }
        Ok(None) => {
            out.push(Problem::error(
                "/contacts",
                "missing attribute dim (1 or 2 tangential directions)",
            ));
            return None;
        }
        Err(e) => {
            out.push(Problem::error("/contacts", format!("attribute dim: {e}")));
            return None;
        }
    };
    let has_normal = g.link_exists("normal");
    let normal_group = if has_normal {
        match g.group("normal") {
            Ok(ng) => Some(ng),
            Err(e) => {
                out.push(Problem::error(
                    "/contacts/normal",
                    format!("must be a group ({e})"),
                ));
                return None;
            }
        }
    } else {
        None
    };
    let mu_n = match &normal_group {
        None => dataset(&g, "/contacts", "mu_n", out, |c| floats(c).map(|x| x.0))?,
        Some(ng) => {
            if g.link_exists("mu_n") {
                out.push(Problem::error(
                    "/contacts/mu_n",
                    "contacts with a normal direction take their bound from /contacts/normal/mu \
                     and the normal force: remove mu_n",
                ));
                return None;
            }
            let mu = dataset(ng, "/contacts/normal", "mu", out, |c| {
                floats(c).map(|x| x.0)
            })?;
            vec![0.0; mu.len()]
        }
    };
    let nc = mu_n.len();
    let rho = if g.link_exists("rho") {
        dataset(&g, "/contacts", "rho", out, |c| floats(c).map(|x| x.0))?
    } else {
        vec![1.0; nc]
    };
    let rho_auto = match attr_string(&g, "rho_mode") {
        Ok(None) => false,
        Ok(Some(m)) if m == "auto" => true,
        Ok(Some(m)) if m == "fixed" => false,
        Ok(Some(m)) => {
            out.push(Problem::error(
                "/contacts",
                format!("attribute rho_mode = {m:?}, must be \"auto\" or \"fixed\""),
            ));
            return None;
        }
        Err(e) => {
            out.push(Problem::error(
                "/contacts",
                format!("attribute rho_mode: {e}"),
            ));
            return None;
        }
    };
    let has_dofs = g.link_exists("dofs");
    let has_w = g.link_exists("W");
    let kinematics = match (has_dofs, has_w) {
        (true, true) => {
            out.push(Problem::error(
                "/contacts",
                "has both dofs and W: give the kinematics one way only",
            ));
            return None;
        }
        (false, false) => {
            out.push(Problem::error(
                "/contacts",
                "missing the kinematics: a dofs dataset (nc x dim) or a sparse W group",
            ));
            return None;
        }
        (true, false) | (false, true) => read_kinematics(&g, "/contacts", nc, dim, n, out)?,
    };
    let k_t = if g.link_exists("k_t") {
        Some(per_contact(&g, "/contacts", "k_t", nc, out)?)
    } else {
        None
    };
    let normal = match &normal_group {
        None => None,
        Some(ng) => Some(read_normal(ng, nc, n, out)?),
    };
    Some(Contacts {
        dim,
        mu_n,
        rho,
        rho_auto,
        kinematics,
        k_t,
        normal,
    })
}

/// Reads the kinematics of group `g` (path `gpath`): a `dofs` table (with an optional
/// `dofs_other`) or a sparse `W` of `nc * dim` rows.
fn read_kinematics(
    g: &hdf5::Group,
    gpath: &str,
    nc: usize,
    dim: usize,
    n: Option<usize>,
    out: &mut Vec<Problem>,
) -> Option<Kinematics> {
    if g.link_exists("dofs") {
        let n = n.unwrap_or(usize::MAX);
        let dofs = dof_table(g, gpath, "dofs", nc, dim, n, false, out)?;
        let other = if g.link_exists("dofs_other") {
            Some(dof_table(g, gpath, "dofs_other", nc, dim, n, true, out)?)
        } else {
            None
        };
        return Some(Kinematics::Dofs {
            dofs: dofs.into_iter().map(|d| d.unwrap_or(0)).collect(),
            other,
        });
    }
    let w = read_matrix(g, gpath, "W", false, out)?;
    let n = n?;
    // Checked before the matrix is built (its declared size could be anything).
    if w.shape != [nc * dim, n] {
        out.push(Problem::error(
            format!("{gpath}/W"),
            format!(
                "shape is {:?}, expected [dim * nc, n] = [{}, {n}]",
                w.shape,
                nc * dim
            ),
        ));
        return None;
    }
    Some(Kinematics::Matrix(w.build(out)?))
}

/// A float dataset of one value per contact.
fn per_contact(
    g: &hdf5::Group,
    gpath: &str,
    name: &str,
    nc: usize,
    out: &mut Vec<Problem>,
) -> Option<Vec<f64>> {
    let v = dataset(g, gpath, name, out, |c| floats(c).map(|x| x.0))?;
    if v.len() != nc {
        out.push(Problem::error(
            format!("{gpath}/{name}"),
            format!("has {} entries for {nc} contacts", v.len()),
        ));
        return None;
    }
    Some(v)
}

/// Reads `/contacts/normal` (format v2): `mu`, optional `g0` and `k_n`, and the normal
/// kinematics (`dofs` of `nc` entries or a sparse `W` of `nc` rows).
fn read_normal(
    g: &hdf5::Group,
    nc: usize,
    n: Option<usize>,
    out: &mut Vec<Problem>,
) -> Option<NormalContacts> {
    const PATH: &str = "/contacts/normal";
    let mu = per_contact(g, PATH, "mu", nc, out)?;
    let g0 = if g.link_exists("g0") {
        per_contact(g, PATH, "g0", nc, out)?
    } else {
        vec![0.0; nc]
    };
    let k_n = if g.link_exists("k_n") {
        Some(per_contact(g, PATH, "k_n", nc, out)?)
    } else {
        None
    };
    let load = if g.link_exists("load") {
        Some(per_contact(g, PATH, "load", nc, out)?)
    } else {
        None
    };
    match (g.link_exists("dofs"), g.link_exists("W")) {
        (true, true) => {
            out.push(Problem::error(
                PATH,
                "has both dofs and W: give the normal kinematics one way only",
            ));
            return None;
        }
        (false, false) => {
            out.push(Problem::error(
                PATH,
                "missing the normal kinematics: a dofs dataset (nc) or a sparse W group (nc x n)",
            ));
            return None;
        }
        _ => {}
    }
    let kinematics = match &load {
        // A contact with a fixed load has no normal DOF: -1 there.
        Some(load) if g.link_exists("dofs") => {
            let nn = n.unwrap_or(usize::MAX);
            let dofs = dof_table(g, PATH, "dofs", nc, 1, nn, true, out)?;
            let other = if g.link_exists("dofs_other") {
                Some(dof_table(g, PATH, "dofs_other", nc, 1, nn, true, out)?)
            } else {
                None
            };
            if let Some(c) = (0..nc).find(|&c| dofs[c].is_none() && load[c].is_nan()) {
                out.push(Problem::error(
                    format!("{PATH}/dofs"),
                    format!(
                        "contact {c} has no normal DOF (-1) but no fixed load either: give its \
                         DOF, or its constant normal force in {PATH}/load"
                    ),
                ));
                return None;
            }
            Kinematics::Dofs {
                dofs: dofs.into_iter().map(|d| d.unwrap_or(0)).collect(),
                other,
            }
        }
        _ => read_kinematics(g, PATH, nc, 1, n, out)?,
    };
    Some(NormalContacts {
        kinematics,
        g0,
        mu,
        k_n,
        load,
    })
}

/// Reads an `nc x dim` table of DOF indices (a 1-D array is accepted when dim = 1).
#[allow(clippy::too_many_arguments)]
fn dof_table(
    g: &hdf5::Group,
    gpath: &str,
    name: &str,
    nc: usize,
    dim: usize,
    n: usize,
    ground_allowed: bool,
    out: &mut Vec<Problem>,
) -> Option<Vec<Option<usize>>> {
    let path = format!("{gpath}/{name}");
    let (v, shape) = dataset(g, gpath, name, out, ints)?;
    let shape_ok = shape == [nc, dim] || (dim == 1 && shape == [nc]);
    if !shape_ok {
        out.push(Problem::error(
            path,
            format!("shape is {shape:?}, expected [nc, dim] = [{nc}, {dim}] (nc from mu_n)"),
        ));
        return None;
    }
    let mut dofs = Vec::with_capacity(v.len());
    for (row, &d) in v.iter().enumerate() {
        let (c, k) = (row / dim, row % dim);
        if d == -1 && ground_allowed {
            dofs.push(None);
        } else if let Some(u) = to_index(d, n) {
            dofs.push(Some(u));
        } else {
            let hint = if ground_allowed {
                " (use -1 for ground)"
            } else {
                ""
            };
            out.push(Problem::error(
                path,
                format!("contact {c} direction {k} uses DOF {d}, out of range 0..{n}{hint}"),
            ));
            return None;
        }
    }
    Some(dofs)
}
