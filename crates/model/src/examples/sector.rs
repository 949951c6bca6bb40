//! The generated bladed-disk-like sector: a steel disk-sector block and blade meshed with
//! 8-node hexahedra, with under-platform contacts to ground, or closed into a tuned disk with
//! inter-sector snubber contacts.

use crate::model::{Contacts, Kinematics, Model};

/// Parameters of the generated bladed-disk-like [`sector`] (see `models/README.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Sector {
    /// Mesh refinement level `R >= 1`: the disk sector has `8R x 5R x 8R` and the blade
    /// `2R x 12R x 8R` hexahedra (tangential x radial x axial). `R = 1` gives about 2 000
    /// DOFs, `R = 4` about 108 000, `R = 5` about 190 000.
    pub refine: usize,
    /// Number of 2-D friction contacts to ground (under-platform dampers), spread evenly
    /// over the platform's top face and then the disk sector's side faces.
    pub contacts: usize,
    /// Friction bound `mu N` of every contact (N).
    pub mu_n: f64,
    /// Amplitude of the tangential force `F cos(w t)` at the blade tip (N).
    pub force: f64,
    /// 3-D contacts instead of constant bounds: each contact gets its node's third DOF as
    /// normal direction, friction coefficient [`SECTOR_MU`], contact stiffnesses
    /// [`SECTOR_K_CONTACT`] and an interference preload of `mu_n / mu` (N).
    pub contact_3d: bool,
}

impl Default for Sector {
    fn default() -> Self {
        Sector {
            refine: 1,
            contacts: 20,
            mu_n: 100.0,
            force: 50.0,
            contact_3d: false,
        }
    }
}

/// Friction coefficient of the 3-D contacts of [`sector`].
pub const SECTOR_MU: f64 = 0.3;
/// Tangential and normal contact stiffness of the 3-D contacts of [`sector`] (N/m): about the
/// nodal stiffness of the mesh at refinement 1.
pub const SECTOR_K_CONTACT: f64 = 1e8;

/// Geometry and material of [`sector`]: steel, SI units.
const SECTOR_E: f64 = 210e9;
const SECTOR_NU: f64 = 0.3;
const SECTOR_RHO: f64 = 7850.0;
/// Disk sector: tangential width, radial height, axial depth (m).
const SECTOR_DISK: [f64; 3] = [0.04, 0.03, 0.04];
/// Blade: radial length (m); its thickness is a quarter of the sector width, its chord the
/// disk's axial depth.
const SECTOR_BLADE_LENGTH: f64 = 0.12;
/// Rayleigh damping `C = alpha M + beta K` (about 0.4 % of critical at the first bending
/// mode, rising with frequency).
const SECTOR_RAYLEIGH: (f64, f64) = (5.0, 2e-6);
/// The friction law's `rho` on every contact (N s/m).
const SECTOR_RHO_LAW: f64 = 1e4;

impl Sector {
    fn dims(&self) -> ([usize; 3], [usize; 2]) {
        let r = self.refine.max(1);
        // Disk: nx, ny, nz elements; blade: x-columns (thickness) and radial rows.
        ([8 * r, 5 * r, 8 * r], [2 * r, 12 * r])
    }

    /// The largest number of contacts the mesh has candidate nodes for.
    pub fn max_contacts(&self) -> usize {
        let ([nx, ny, nz], [nbx, _]) = self.dims();
        // Platform top face without the blade footprint, then the two side faces above the
        // clamped hub row.
        (nx - nbx) * (nz + 1) + 2 * (ny - 1) * (nz + 1)
    }

    /// The largest number of inter-sector contacts of [`sector_disk`]: nodes on the outer
    /// half of the blade face.
    pub fn max_snubber_contacts(&self) -> usize {
        let ([_, _, nz], [_, nby]) = self.dims();
        (nby - nby / 2) * (nz + 1)
    }

    /// Number of DOFs of the mesh (3 per node, the hub face clamped).
    pub fn n_dofs(&self) -> usize {
        let ([nx, ny, nz], [nbx, nby]) = self.dims();
        3 * ((nx + 1) * ny * (nz + 1) + (nbx + 1) * nby * (nz + 1))
    }
}

/// Stiffness and consistent mass of an 8-node trilinear hexahedron that is an `a x b x c`
/// box (2 x 2 x 2 Gauss points, exact for the mass), DOFs node-major `(x, y, z)` with the
/// corners in the order of [`HEX_CORNERS`].
#[allow(clippy::needless_range_loop)] // index notation mirrors the B^T D B formulas
fn hex8_box(a: f64, b: f64, c: f64) -> ([[f64; 24]; 24], [[f64; 24]; 24]) {
    let (e, nu) = (SECTOR_E, SECTOR_NU);
    let lam = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    let mu = e / (2.0 * (1.0 + nu));
    let mut k = [[0.0; 24]; 24];
    let mut m = [[0.0; 24]; 24];
    let gp = 1.0 / 3f64.sqrt();
    let det = a * b * c / 8.0;
    for &gx in &[-gp, gp] {
        for &gy in &[-gp, gp] {
            for &gz in &[-gp, gp] {
                let mut nval = [0.0; 8];
                let mut dn = [[0.0; 3]; 8];
                for (i, s) in HEX_CORNERS.iter().enumerate() {
                    let (fx, fy, fz) = (1.0 + s[0] * gx, 1.0 + s[1] * gy, 1.0 + s[2] * gz);
                    nval[i] = fx * fy * fz / 8.0;
                    dn[i] = [
                        s[0] * fy * fz / 8.0 * 2.0 / a,
                        fx * s[1] * fz / 8.0 * 2.0 / b,
                        fx * fy * s[2] / 8.0 * 2.0 / c,
                    ];
                }
                // Strain (xx, yy, zz, xy, yz, zx) = B u.
                let mut bm = [[0.0; 24]; 6];
                for i in 0..8 {
                    let [dx, dy, dz] = dn[i];
                    bm[0][3 * i] = dx;
                    bm[1][3 * i + 1] = dy;
                    bm[2][3 * i + 2] = dz;
                    bm[3][3 * i] = dy;
                    bm[3][3 * i + 1] = dx;
                    bm[4][3 * i + 1] = dz;
                    bm[4][3 * i + 2] = dy;
                    bm[5][3 * i] = dz;
                    bm[5][3 * i + 2] = dx;
                }
                let d = |p: usize, q: usize| -> f64 {
                    match (p < 3, q < 3) {
                        (true, true) => lam + if p == q { 2.0 * mu } else { 0.0 },
                        (false, false) if p == q => mu,
                        _ => 0.0,
                    }
                };
                let mut db = [[0.0; 24]; 6];
                for p in 0..6 {
                    for j in 0..24 {
                        db[p][j] = (0..6).map(|q| d(p, q) * bm[q][j]).sum();
                    }
                }
                for i in 0..24 {
                    for j in 0..24 {
                        k[i][j] += det * (0..6).map(|p| bm[p][i] * db[p][j]).sum::<f64>();
                    }
                }
                for i in 0..8 {
                    for j in 0..8 {
                        let v = SECTOR_RHO * det * nval[i] * nval[j];
                        for dir in 0..3 {
                            m[3 * i + dir][3 * j + dir] += v;
                        }
                    }
                }
            }
        }
    }
    (k, m)
}

/// The generated [`sector`] closed into a tuned disk of `sectors` sectors under engine order
/// `engine_order` (cyclic symmetry, docs/cyclic.md). The disk block's faces `x = 0` (left)
/// and `x = wd` (right) are the cut faces: the disk is unrolled, so matched nodes share their
/// Cartesian directions and no rotation is needed. Instead of contacts to ground, `contacts`
/// 2-D inter-sector contacts join the blade's face `x = x1` to the next blade's face
/// `x = x0` on the outer half of the blade (part-span snubbers; slip radial and axial,
/// `mu N` each). The next blade's contact DOFs are appended as right DOFs without mass or
/// stiffness, paired with this blade's face-`x0` DOFs.
///
/// # Panics
/// When `refine` is 0, `sectors < 2`, or `contacts` exceeds
/// [`Sector::max_snubber_contacts`].
pub fn sector_disk(p: &Sector, sectors: usize, engine_order: i64) -> Model {
    assert!(sectors >= 2, "sector_disk: at least 2 sectors");
    assert!(
        p.contacts <= p.max_snubber_contacts(),
        "sector_disk: {} contacts requested, the blade has room for {}",
        p.contacts,
        p.max_snubber_contacts()
    );
    let mut m = sector(&Sector {
        contacts: 0,
        contact_3d: false,
        ..p.clone()
    });
    let ([nx, ny, nz], [nbx, nby]) = p.dims();
    let (ix0, ix1) = ((nx - nbx) / 2, (nx - nbx) / 2 + nbx);
    let labels = m.dof_labels.clone().expect("sector labels its DOFs");
    let index: std::collections::HashMap<&str, usize> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    let dof =
        |ix: usize, iy: usize, iz: usize, d: &str| index[format!("{ix}.{iy}.{iz}.{d}").as_str()];
    let n = m.n_dofs();
    let mut left = Vec::new();
    let mut right = Vec::new();
    for iy in 1..=ny {
        for iz in 0..=nz {
            for d in ["x", "y", "z"] {
                left.push(dof(0, iy, iz, d));
                right.push(dof(nx, iy, iz, d));
            }
        }
    }
    // Snubber contacts spread over the outer half of the blade face.
    let rows: Vec<(usize, usize)> = (ny + nby / 2 + 1..=ny + nby)
        .flat_map(|iy| (0..=nz).map(move |iz| (iy, iz)))
        .collect();
    let nc = p.contacts;
    let mut own = Vec::with_capacity(2 * nc);
    let mut next = Vec::with_capacity(2 * nc);
    let mut new_labels = labels.clone();
    for c in 0..nc {
        let (iy, iz) = rows[c * rows.len() / nc.max(1)];
        for d in ["y", "z"] {
            own.push(dof(ix1, iy, iz, d));
            let phantom = n + next.len();
            next.push(Some(phantom));
            left.push(dof(ix0, iy, iz, d));
            right.push(phantom);
            new_labels.push(format!("next:{ix0}.{iy}.{iz}.{d}"));
        }
    }
    let n2 = n + next.len();
    let widen = |a: &crate::model::SparseMatrix| {
        let trip: Vec<faer::sparse::Triplet<usize, usize, f64>> = a
            .triplet_iter()
            .map(|t| faer::sparse::Triplet::new(t.row, t.col, *t.val))
            .collect();
        crate::model::SparseMatrix::try_new_from_triplets(n2, n2, &trip).expect("indices < n")
    };
    m.mass = widen(&m.mass);
    m.stiffness = widen(&m.stiffness);
    m.contacts = Contacts::between(2, own, next, vec![p.mu_n; nc]).with_rho(SECTOR_RHO_LAW);
    m.dof_labels = Some(new_labels);
    m.title = Some(format!(
        "sector disk: the generated sector closed into {sectors} sectors, EO {engine_order}, \
         {n2} DOFs per sector, {nc} inter-sector snubber contacts"
    ));
    m.cyclic = Some(crate::Cyclic {
        sectors,
        engine_order,
        left,
        right,
    });
    let problems = crate::validate::validate(&m);
    assert!(
        !crate::validate::has_errors(&problems),
        "generated sector disk is invalid: {problems:?}"
    );
    m
}

/// Corner signs of the reference hexahedron `[-1, 1]^3`.
const HEX_CORNERS: [[f64; 3]; 8] = [
    [-1.0, -1.0, -1.0],
    [1.0, -1.0, -1.0],
    [1.0, 1.0, -1.0],
    [-1.0, 1.0, -1.0],
    [-1.0, -1.0, 1.0],
    [1.0, -1.0, 1.0],
    [1.0, 1.0, 1.0],
    [-1.0, 1.0, 1.0],
];

/// A bladed-disk-like sector: a steel disk-sector block clamped at the hub with a plate-like
/// blade on top, meshed with 8-node hexahedra (consistent mass), Rayleigh damping, `contacts`
/// 2-D friction contacts to ground on the platform (under-platform dampers: the tangential
/// and axial directions of a node), and a tangential force at the blade tip. Coordinates:
/// `x` tangential, `y` radial (hub at `y = 0`), `z` axial. See `models/README.md`.
///
/// # Panics
/// When `contacts` exceeds [`Sector::max_contacts`] or `refine` is 0.
pub fn sector(p: &Sector) -> Model {
    use crate::model::{Damping, ForcingTerm};
    use faer::sparse::{SparseColMat, Triplet};
    assert!(p.refine >= 1, "sector: refine must be at least 1");
    assert!(
        p.contacts <= p.max_contacts(),
        "sector: {} contacts requested, the mesh has room for {}",
        p.contacts,
        p.max_contacts()
    );
    let ([nx, ny, nz], [nbx, nby]) = p.dims();
    let ix0 = (nx - nbx) / 2;
    let ix1 = ix0 + nbx;
    // Node numbering: (ix, iy, iz) with iy <= ny everywhere and iy > ny only for
    // ix0 <= ix <= ix1; the hub row iy = 0 is clamped and gets no DOFs.
    let (nxp, nzp) = (nx + 1, nz + 1);
    let disk_nodes = nxp * ny * nzp; // rows 1..=ny
    let node = |ix: usize, iy: usize, iz: usize| -> Option<usize> {
        if iy == 0 {
            None
        } else if iy <= ny {
            Some(((iy - 1) * nxp + ix) * nzp + iz)
        } else {
            debug_assert!((ix0..=ix1).contains(&ix));
            Some(disk_nodes + ((iy - ny - 1) * (nbx + 1) + (ix - ix0)) * nzp + iz)
        }
    };
    let n = p.n_dofs();
    let [wd, hd, dd] = SECTOR_DISK;
    let disk_el = hex8_box(wd / nx as f64, hd / ny as f64, dd / nz as f64);
    let blade_el = hex8_box(
        wd / nx as f64,
        SECTOR_BLADE_LENGTH / nby as f64,
        dd / nz as f64,
    );
    let mut elements: Vec<([usize; 3], bool)> = Vec::new();
    for iy in 0..ny + nby {
        let (xs, blade) = if iy < ny {
            (0..nx, false)
        } else {
            (ix0..ix1, true)
        };
        for ix in xs {
            for iz in 0..nz {
                elements.push(([ix, iy, iz], blade));
            }
        }
    }
    let assemble = |which: usize| -> SparseColMat<usize, f64> {
        let mut trip: Vec<Triplet<usize, usize, f64>> = Vec::with_capacity(elements.len() * 300);
        for &([ix, iy, iz], blade) in &elements {
            let el = if blade { &blade_el } else { &disk_el };
            let mat = if which == 0 { &el.0 } else { &el.1 };
            let dofs: Vec<Option<usize>> = HEX_CORNERS
                .iter()
                .flat_map(|s| {
                    let (cx, cy, cz) = (
                        ix + usize::from(s[0] > 0.0),
                        iy + usize::from(s[1] > 0.0),
                        iz + usize::from(s[2] > 0.0),
                    );
                    let nd = node(cx, cy, cz);
                    (0..3).map(move |d| nd.map(|k| 3 * k + d))
                })
                .collect();
            for (i, di) in dofs.iter().enumerate() {
                let Some(di) = *di else { continue };
                for (j, dj) in dofs.iter().enumerate() {
                    // Lower triangle only, mirrored after summation.
                    if let Some(dj) = *dj
                        && dj <= di
                    {
                        trip.push(Triplet::new(di, dj, mat[i][j]));
                    }
                }
            }
        }
        let lower = SparseColMat::try_new_from_triplets(n, n, &trip).expect("indices < n");
        drop(trip);
        // Full symmetric matrix from the summed lower triangle.
        let mut full: Vec<Triplet<usize, usize, f64>> = Vec::with_capacity(2 * lower.val().len());
        for t in lower.triplet_iter() {
            full.push(Triplet::new(t.row, t.col, *t.val));
            if t.row != t.col {
                full.push(Triplet::new(t.col, t.row, *t.val));
            }
        }
        SparseColMat::try_new_from_triplets(n, n, &full).expect("indices < n")
    };
    let stiffness = assemble(0);
    let mass = assemble(1);
    // Contact candidates: platform top face outside the blade footprint, then the side
    // faces x = 0 and x = wd above the hub row.
    let mut cand: Vec<usize> = Vec::new();
    for ix in (0..=nx).filter(|&ix| ix < ix0 || ix > ix1) {
        for iz in 0..=nz {
            cand.push(node(ix, ny, iz).expect("above the hub"));
        }
    }
    for ix in [0, nx] {
        for iy in 1..ny {
            for iz in 0..=nz {
                cand.push(node(ix, iy, iz).expect("above the hub"));
            }
        }
    }
    let nc = p.contacts;
    let top = cand.len() - 2 * (ny - 1) * (nz + 1);
    let mut dofs = Vec::with_capacity(2 * nc);
    let mut normal = Vec::with_capacity(nc);
    for c in 0..nc {
        let i = c * cand.len() / nc.max(1);
        let k = cand[i];
        if p.contact_3d && i >= top {
            // Side faces: the face normal is x; slip in the radial and axial directions.
            dofs.extend([3 * k + 1, 3 * k + 2]);
            normal.push(3 * k);
        } else {
            // Platform top: tangential (x) and axial (z) directions, radial normal.
            dofs.extend([3 * k, 3 * k + 2]);
            normal.push(3 * k + 1);
        }
    }
    let mut contacts = Contacts::to_ground(2, dofs, vec![p.mu_n; nc]).with_rho(SECTOR_RHO_LAW);
    if p.contact_3d {
        contacts.mu_n = vec![0.0; nc];
        contacts.rho = vec![1.0; nc];
        contacts.k_t = Some(vec![SECTOR_K_CONTACT; nc]);
        contacts.normal = Some(crate::model::NormalContacts {
            kinematics: Kinematics::Dofs {
                dofs: normal,
                other: None,
            },
            g0: vec![-p.mu_n / SECTOR_MU / SECTOR_K_CONTACT; nc],
            mu: vec![SECTOR_MU; nc],
            k_n: Some(vec![SECTOR_K_CONTACT; nc]),
            load: None,
        });
    }
    let tip = node((ix0 + ix1) / 2, ny + nby, nz / 2).expect("blade tip");
    let mut labels = vec![String::new(); n];
    for iy in 1..=ny + nby {
        let xs = if iy <= ny { 0..=nx } else { ix0..=ix1 };
        for ix in xs {
            for iz in 0..=nz {
                let k = node(ix, iy, iz).expect("above the hub");
                for (d, name) in ["x", "y", "z"].iter().enumerate() {
                    labels[3 * k + d] = format!("{ix}.{iy}.{iz}.{name}");
                }
            }
        }
    }
    let model = Model {
        title: Some(format!(
            "sector: bladed-disk-like sector, {} hex8, {n} DOFs, {nc} under-platform contacts",
            elements.len()
        )),
        units: Some("SI (m, kg, s, N)".into()),
        mass,
        stiffness,
        damping_matrix: None,
        damping: Damping {
            rayleigh: Some(SECTOR_RAYLEIGH),
            ..Damping::default()
        },
        // rho ~ force / velocity scale of the contacts (N per m/s): Newton converges in a
        // few iterations with it, in hundreds with rho = 1 (the solution does not depend on
        // rho for the exact law).
        contacts,
        forcing: vec![ForcingTerm {
            dof: 3 * tip,
            harmonic: 1,
            cos: p.force,
            sin: 0.0,
        }],
        dof_labels: Some(labels),
        cyclic: None,
    };
    let problems = crate::validate::validate(&model);
    assert!(
        !crate::validate::has_errors(&problems),
        "generated sector is invalid: {problems:?}"
    );
    model
}

#[cfg(test)]
mod sector_tests {
    use super::*;

    #[test]
    fn hex8_has_six_rigid_body_modes_and_the_right_mass() {
        let (a, b, c) = (0.02, 0.01, 0.03);
        let (k, m) = hex8_box(a, b, c);
        let kmax = k.iter().flatten().map(|v| v.abs()).fold(0.0, f64::max);
        // Translations and infinitesimal rotations (about the box centre) give no force.
        let mut modes: Vec<[f64; 24]> = Vec::new();
        for d in 0..3 {
            let mut u = [0.0; 24];
            (0..8).for_each(|i| u[3 * i + d] = 1.0);
            modes.push(u);
        }
        for (p, q) in [(0, 1), (1, 2), (2, 0)] {
            let mut u = [0.0; 24];
            for (i, s) in HEX_CORNERS.iter().enumerate() {
                let x = [s[0] * a / 2.0, s[1] * b / 2.0, s[2] * c / 2.0];
                u[3 * i + p] = -x[q];
                u[3 * i + q] = x[p];
            }
            modes.push(u);
        }
        for u in &modes {
            for row in &k {
                let f: f64 = row.iter().zip(u).map(|(k, u)| k * u).sum();
                assert!(f.abs() < 1e-9 * kmax * a, "{f}");
            }
        }
        // A pure stretch is not free.
        let mut u = [0.0; 24];
        for (i, s) in HEX_CORNERS.iter().enumerate() {
            u[3 * i] = s[0];
        }
        let e: f64 = (0..24)
            .map(|i| u[i] * (0..24).map(|j| k[i][j] * u[j]).sum::<f64>())
            .sum();
        // Uniaxial strain 2/a... energy = (lam + 2 mu) eps^2 V with eps = 2 / a.
        let nu = SECTOR_NU;
        let c11 = SECTOR_E * (1.0 - nu) / ((1.0 + nu) * (1.0 - 2.0 * nu));
        let expect = c11 * (2.0 / a).powi(2) * a * b * c;
        assert!((e - expect).abs() < 1e-9 * expect, "{e} vs {expect}");
        // Consistent mass: the x-x entries sum to the element mass.
        let total: f64 = (0..8)
            .flat_map(|i| (0..8).map(move |j| (i, j)))
            .map(|(i, j)| m[3 * i][3 * j])
            .sum();
        assert!((total - SECTOR_RHO * a * b * c).abs() < 1e-12 * total);
    }

    #[test]
    fn sector_sizes_and_contacts() {
        let p = Sector::default();
        let m = sector(&p);
        assert_eq!(m.n_dofs(), p.n_dofs());
        assert!(m.n_dofs() > 1500 && m.n_dofs() < 3000, "{}", m.n_dofs());
        assert_eq!(m.contacts.len(), 20);
        assert_eq!(m.contacts.dim, 2);
        // 108k DOFs at refine 4, with room for 1000 contacts.
        let big = Sector {
            refine: 4,
            ..Sector::default()
        };
        assert!(big.n_dofs() >= 100_000, "{}", big.n_dofs());
        assert!(big.max_contacts() >= 1000, "{}", big.max_contacts());
        // Contacts are on distinct nodes.
        let max = Sector {
            contacts: p.max_contacts(),
            ..p.clone()
        };
        let m = sector(&max);
        let ewr_model_dofs = match &m.contacts.kinematics {
            crate::model::Kinematics::Dofs { dofs, .. } => dofs.clone(),
            _ => unreachable!(),
        };
        let mut d = ewr_model_dofs.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), ewr_model_dofs.len());
    }
}
