//! Elastic (Jenkins) contacts: a tangential contact stiffness in series with the slider.
//!
//! The model format has rigid Coulomb contacts only; an elastic contact is built from them
//! the way `ewr_model::examples::blade_damper_blade` does it: one massless slider DOF per
//! contact direction, a spring `k_t` between the slider and the contact's relative
//! displacement `W u`, and the friction contact moved onto the slider DOF against ground.
//! The result is an ordinary model (it can be written to a file and read by every command).
//! Seed 001 (Liu et al. 2003) is this element with `k_t = k_d`; `k_t -> infinity` is the
//! rigid contact.

use crate::model_check::check_model;
use crate::{SimulateError, State};
use ewr_model::linalg_error::Sentence;
use ewr_model::{Contacts, Damping, Kinematics, Model, NormalContacts, SparseMatrix};
use faer::sparse::Triplet;

/// Puts a tangential stiffness in series with every contact (a Jenkins element).
///
/// `k_t` holds one stiffness per contact, or a single value for all. The new model has
/// `n + dim * nc` DOFs: the original ones, then the sliders (contact `c`, direction `k` is
/// DOF `n + c * dim + k`, labelled `slider <c>_<k+1>` when the model has labels). The
/// contacts' `w`, `v`, `r` then describe the slider (its slip and the friction force),
/// and the elastic deformation of the contact is `W u - s`. Viscous damping, Rayleigh
/// included, is copied as an explicit `C` on the original DOFs, so the contact springs
/// stay undamped; hysteretic and modal damping are copied as they are. The normal directions
/// of 3-D contacts stay on the original DOFs.
///
/// A model that already has contact stiffnesses `k_t` is refused: [`crate::simulate`] builds
/// its sliders itself, and a second spring in series is most likely a mistake.
pub fn with_jenkins(model: &Model, k_t: &[f64]) -> Result<Model, SimulateError> {
    if model.contacts.k_t.is_some() {
        return Err(SimulateError::Option(
            "the model already has tangential contact stiffnesses (/contacts/k_t); they are \
             put in series with the contacts automatically"
                .into(),
        ));
    }
    jenkins(model, k_t)
}

/// The model with its own `k_t` turned into slider DOFs ([`with_jenkins`]), or `None` when
/// it has none.
pub(crate) fn expand_k_t(model: &Model) -> Result<Option<Model>, SimulateError> {
    let Some(k_t) = &model.contacts.k_t else {
        return Ok(None);
    };
    // Report the user's model, not the one built from it.
    check_model(model)?;
    let mut rigid = model.clone();
    rigid.contacts.k_t = None;
    jenkins(&rigid, k_t).map(Some)
}

/// An initial state of `model` extended to the sliders of [`expand_k_t`]: each slider starts
/// where its spring is relaxed (`s = W u`, `s' = W u'`). A state that already has the slider
/// DOFs is returned as it is.
pub(crate) fn extend_state(model: &Model, state: &State) -> Result<State, SimulateError> {
    let n = model.n_dofs();
    if state.u.len() != n || state.v.len() != n {
        return Ok(state.clone());
    }
    let w = model.contacts.w_matrix(n).map_err(SimulateError::Model)?;
    let mut out = state.clone();
    let (mut su, mut sv) = (vec![0.0; w.nrows()], vec![0.0; w.nrows()]);
    for t in w.triplet_iter() {
        su[t.row] += t.val * state.u[t.col];
        sv[t.row] += t.val * state.v[t.col];
    }
    out.u.extend(su);
    out.v.extend(sv);
    Ok(out)
}

fn jenkins(model: &Model, k_t: &[f64]) -> Result<Model, SimulateError> {
    let c = &model.contacts;
    let (n, dim, nc) = (model.n_dofs(), c.dim, c.len());
    if k_t.len() != 1 && k_t.len() != nc {
        return Err(SimulateError::Option(format!(
            "{} contact stiffnesses for {nc} contacts (give one, or one per contact)",
            k_t.len()
        )));
    }
    if let Some(k) = k_t.iter().find(|k| !(k.is_finite() && **k > 0.0)) {
        return Err(SimulateError::Option(format!(
            "contact stiffness {k}: must be finite and > 0"
        )));
    }
    let m = dim * nc;
    let n2 = n + m;
    let w = c.w_matrix(n).map_err(SimulateError::Model)?;
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); m];
    for t in w.triplet_iter() {
        rows[t.row].push((t.col, *t.val));
    }
    let copy = |a: &SparseMatrix| -> Vec<Triplet<usize, usize, f64>> {
        a.triplet_iter()
            .map(|t| Triplet::new(t.row, t.col, *t.val))
            .collect()
    };
    let mut k = copy(&model.stiffness);
    for (a, row) in rows.iter().enumerate() {
        let kt = if k_t.len() == 1 { k_t[0] } else { k_t[a / dim] };
        let s = n + a;
        // Energy k_t (w.u - s)^2 / 2.
        for &(i, wi) in row {
            for &(j, wj) in row {
                k.push(Triplet::new(i, j, kt * wi * wj));
            }
            k.push(Triplet::new(i, s, -kt * wi));
            k.push(Triplet::new(s, i, -kt * wi));
        }
        k.push(Triplet::new(s, s, kt));
    }
    let make = |t: &[Triplet<usize, usize, f64>]| {
        SparseMatrix::try_new_from_triplets(n2, n2, t).map_err(|e| {
            SimulateError::Model(format!("assembling the Jenkins model: {}", e.sentence()))
        })
    };
    let cv = copy(&model.viscous_damping());
    let labels = model.dof_labels.as_ref().map(|l| {
        let mut l = l.clone();
        for a in 0..m {
            l.push(format!("slider {}_{}", a / dim, a % dim + 1));
        }
        l
    });
    let out = Model {
        title: model
            .title
            .as_ref()
            .map(|t| format!("{t} [Jenkins contacts]")),
        units: model.units.clone(),
        mass: make(&copy(&model.mass))?,
        stiffness: make(&k)?,
        damping_matrix: if cv.is_empty() {
            None
        } else {
            Some(make(&cv)?)
        },
        damping: Damping {
            rayleigh: None,
            hysteretic_eta: model.damping.hysteretic_eta,
            modal_zeta: model.damping.modal_zeta.clone(),
        },
        contacts: Contacts {
            dim,
            mu_n: c.mu_n.clone(),
            rho: c.rho.clone(),
            rho_auto: c.rho_auto,
            kinematics: Kinematics::Dofs {
                dofs: (n..n2).collect(),
                other: None,
            },
            k_t: None,
            normal: c.normal.as_ref().map(|nc| widen(nc, n2)).transpose()?,
        },
        forcing: model.forcing.clone(),
        dof_labels: labels,
        cyclic: None,
    };
    let problems = ewr_model::validate(&out);
    if ewr_model::has_errors(&problems) {
        let msgs: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(SimulateError::Model(msgs.join("; ")));
    }
    Ok(out)
}

/// The normal contacts with a `W_N` given as a matrix widened to `n2` columns (the sliders
/// do not enter the normal gaps); DOF-based ones are unchanged.
fn widen(normal: &NormalContacts, n2: usize) -> Result<NormalContacts, SimulateError> {
    let mut out = normal.clone();
    if let Kinematics::Matrix(w) = &normal.kinematics {
        let trip: Vec<Triplet<usize, usize, f64>> = w
            .triplet_iter()
            .map(|t| Triplet::new(t.row, t.col, *t.val))
            .collect();
        let wide = SparseMatrix::try_new_from_triplets(w.nrows(), n2, &trip).map_err(|e| {
            SimulateError::Model(format!("normal W_N of the Jenkins model: {}", e.sentence()))
        })?;
        out.kinematics = Kinematics::Matrix(wide);
    }
    Ok(out)
}
