//! The model file: round trips, interop with h5py, and every validation rule on real files.

use ewr_model::{
    Contacts, Example, ExampleOptions, Kinematics, Model, ModelBuilder, ModelError, Problem,
    Severity, SparseMatrix, examples, read, write,
};
use std::path::{Path, PathBuf};

fn dense(a: &SparseMatrix) -> Vec<f64> {
    let d = a.to_dense();
    (0..d.nrows())
        .flat_map(|i| (0..d.ncols()).map(move |j| (i, j)))
        .map(|(i, j)| d[(i, j)])
        .collect()
}

fn assert_same_model(a: &Model, b: &Model) {
    assert_eq!(a.n_dofs(), b.n_dofs());
    assert_eq!(dense(&a.mass), dense(&b.mass), "M");
    assert_eq!(dense(&a.stiffness), dense(&b.stiffness), "K");
    assert_eq!(
        a.damping_matrix.as_ref().map(dense),
        b.damping_matrix.as_ref().map(dense),
        "C"
    );
    assert_eq!(a.damping, b.damping);
    assert_eq!(a.contacts.dim, b.contacts.dim);
    assert_eq!(a.contacts.mu_n, b.contacts.mu_n);
    assert_eq!(a.contacts.rho, b.contacts.rho);
    assert_eq!(a.contacts.rho_auto, b.contacts.rho_auto);
    let n = a.n_dofs();
    assert_eq!(
        dense(&a.contacts.w_matrix(n).unwrap()),
        dense(&b.contacts.w_matrix(n).unwrap()),
        "W"
    );
    assert_eq!(a.contacts.k_t, b.contacts.k_t);
    assert_eq!(a.contacts.has_normal(), b.contacts.has_normal());
    if let (Some(na), Some(nb)) = (&a.contacts.normal, &b.contacts.normal) {
        assert_eq!((&na.g0, &na.mu, &na.k_n), (&nb.g0, &nb.mu, &nb.k_n));
        let fixed = |x: &ewr_model::NormalContacts| -> Vec<Option<f64>> {
            (0..a.contacts.len()).map(|c| x.fixed_load(c)).collect()
        };
        assert_eq!(fixed(na), fixed(nb));
        assert_eq!(
            dense(&a.contacts.contact_matrix(n).unwrap()),
            dense(&b.contacts.contact_matrix(n).unwrap()),
            "[W; W_N]"
        );
    }
    assert_eq!(a.forcing, b.forcing);
    assert_eq!(a.dof_labels, b.dof_labels);
    assert_eq!(a.title, b.title);
    assert_eq!(a.units, b.units);
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn every_example_round_trips() {
    let dir = tmp();
    for ex in Example::ALL {
        let m = ex.build(&ExampleOptions::default());
        let p = dir.path().join(format!("{}.h5", ex.name()));
        write(&p, &m).unwrap();
        let r = read(&p).unwrap_or_else(|e| panic!("{ex}: {e}"));
        assert!(r.warnings.is_empty(), "{ex}: {:?}", r.warnings);
        assert_same_model(&m, &r.model);
    }
}

#[test]
fn rigid_blade_damper_blade_round_trips_through_a_w_matrix() {
    let p = examples::BladeDamperBlade {
        k_contact: (None, 1e5),
        ..Default::default()
    };
    let m = examples::blade_damper_blade(&p);
    assert!(matches!(m.contacts.kinematics, Kinematics::Matrix(_)));
    assert_eq!(m.n_dofs(), 8);
    let dir = tmp();
    let f = dir.path().join("rigid.h5");
    write(&f, &m).unwrap();
    let r = read(&f).unwrap();
    assert!(matches!(r.model.contacts.kinematics, Kinematics::Matrix(_)));
    assert_same_model(&m, &r.model);
    // W reads the relative tangential displacement of the left face: t . (u_platform - u_damper).
    let w = m.contacts.w_matrix(8).unwrap().to_dense();
    let a = std::f64::consts::FRAC_PI_6;
    assert!((w[(0, 1)] - a.cos()).abs() < 1e-15 && (w[(0, 3)] + a.cos()).abs() < 1e-15);
    assert!((w[(0, 2)] - a.sin()).abs() < 1e-15 && (w[(0, 4)] + a.sin()).abs() < 1e-15);
}

#[test]
fn automatic_rho_round_trips_and_a_bad_mode_is_named() {
    let mut m = examples::oscillator_2d();
    m.contacts.rho_auto = true;
    let dir = tmp();
    let f = dir.path().join("auto.h5");
    write(&f, &m).unwrap();
    let r = read(&f).unwrap();
    assert!(r.model.contacts.rho_auto);
    assert_same_model(&m, &r.model);
    // A file without the attribute keeps its rho fixed.
    m.contacts.rho_auto = false;
    write(&f, &m).unwrap();
    assert!(!read(&f).unwrap().model.contacts.rho_auto);
    {
        let h = hdf5::File::open_rw(&f).unwrap();
        let g = h.group("contacts").unwrap();
        let v: hdf5::types::VarLenUnicode = "quick".parse().unwrap();
        g.new_attr::<hdf5::types::VarLenUnicode>()
            .create("rho_mode")
            .unwrap()
            .write_scalar(&v)
            .unwrap();
    }
    let e = read(&f).unwrap_err().to_string();
    assert!(e.contains("rho_mode") && e.contains("quick"), "{e}");
}

#[test]
fn node_to_node_contacts_round_trip_with_ground_marker() {
    let m = ModelBuilder::new(3)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .mass(2, 1.0)
        .spring_to_ground(0, 1.0)
        .spring(0, 1, 1.0)
        .spring(1, 2, 1.0)
        .contacts(
            Contacts::between(1, vec![1, 2], vec![Some(0), None], vec![1.0, 2.0]).with_rho(10.0),
        )
        .force(2, 1, 1.0, 0.5)
        .build()
        .unwrap();
    let dir = tmp();
    let f = dir.path().join("n2n.h5");
    write(&f, &m).unwrap();
    let r = read(&f).unwrap();
    assert_same_model(&m, &r.model);
    let w = r.model.contacts.w_matrix(3).unwrap().to_dense();
    assert_eq!(
        (w[(0, 1)], w[(0, 0)], w[(1, 2)], w[(1, 0)]),
        (1.0, -1.0, 1.0, 0.0)
    );
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

#[test]
fn reads_the_file_h5py_wrote() {
    // Written by scripts/make_h5py_fixture.py: upper-triangle CSR with int32 indices, COO,
    // fixed-length byte strings, damping as attribute and as dataset.
    let r = read(fixture("h5py-two-mass-damper.h5")).unwrap();
    let m = r.model;
    let reference = examples::two_mass_damper(1.0);
    assert_eq!(dense(&m.stiffness), dense(&reference.stiffness));
    assert_eq!(dense(&m.mass), dense(&reference.mass));
    assert_eq!(
        dense(m.damping_matrix.as_ref().unwrap()),
        dense(reference.damping_matrix.as_ref().unwrap())
    );
    assert_eq!(m.damping.rayleigh, Some((0.001, 0.0)));
    assert_eq!(m.contacts.mu_n, vec![8.0]);
    assert_eq!(m.contacts.rho, vec![1.0]);
    assert_eq!(
        dense(&m.contacts.w_matrix(4).unwrap()),
        dense(&reference.contacts.w_matrix(4).unwrap())
    );
    assert_eq!(m.forcing, reference.forcing);
    assert_eq!(m.dof_labels, reference.dof_labels);
    assert_eq!(m.title.as_deref(), Some("two-mass-damper written by h5py"));
}

/// Writes a valid oscillator-2d file, lets `edit` break it, and returns the read error.
fn broken(edit: impl FnOnce(&hdf5::File)) -> Vec<Problem> {
    broken_model(&examples::oscillator_2d(), edit)
}

/// Writes `model`, lets `edit` break the file, and returns the read error.
fn broken_model(model: &Model, edit: impl FnOnce(&hdf5::File)) -> Vec<Problem> {
    let dir = tmp();
    let p = dir.path().join("m.h5");
    write(&p, model).unwrap();
    {
        let f = hdf5::File::open_rw(&p).unwrap();
        edit(&f);
        f.close().unwrap();
    }
    match read(&p) {
        Err(ModelError::Invalid { problems, .. }) => problems,
        Err(e) => panic!("expected an invalid-model error, got {e}"),
        Ok(_) => panic!("the broken file was accepted"),
    }
}

fn assert_problem(problems: &[Problem], path: &str, words: &str) {
    assert!(
        problems
            .iter()
            .any(|p| p.severity == Severity::Error && p.path == path && p.message.contains(words)),
        "no error at {path} containing {words:?} in {problems:#?}"
    );
}

/// Writes a valid single-contact-3d file (format v2), lets `edit` break it, returns the error.
fn broken_3d(edit: impl FnOnce(&hdf5::File)) -> Vec<Problem> {
    broken_model(&examples::single_contact_3d(), edit)
}

#[test]
fn version_2_is_written_only_for_version_2_content() {
    let dir = tmp();
    let version = |m: &Model| {
        let p = dir.path().join("v.h5");
        write(&p, m).unwrap();
        let f = hdf5::File::open(&p).unwrap();
        f.attr("version").unwrap().read_scalar::<i64>().unwrap()
    };
    assert_eq!(version(&examples::oscillator_2d()), 1);
    assert_eq!(version(&examples::single_contact_3d()), 2);
    let mut m = examples::oscillator_2d();
    m.contacts.k_t = Some(vec![1e3]);
    assert_eq!(version(&m), 2);
}

#[test]
fn bad_3d_contact_data_is_named() {
    let p = broken_3d(|f| replace_f64(f, "contacts/normal/mu", &[-0.1]));
    assert_problem(&p, "/contacts/normal/mu", "finite and >= 0");
    let p = broken_3d(|f| replace_f64(f, "contacts/normal/k_n", &[0.0]));
    assert_problem(&p, "/contacts/normal/k_n", "finite and > 0");
    let p = broken_3d(|f| replace_f64(f, "contacts/normal/g0", &[f64::NAN]));
    assert_problem(&p, "/contacts/normal/g0", "finite");
    let p = broken_3d(|f| replace_f64(f, "contacts/normal/g0", &[0.0, 0.0]));
    assert_problem(&p, "/contacts/normal/g0", "2 entries for 1 contacts");
    let p = broken_3d(|f| replace_i64(f, "contacts/normal/dofs", &[7]));
    assert_problem(&p, "/contacts/normal/dofs", "out of range");
    let p = broken_3d(|f| {
        f.group("contacts")
            .unwrap()
            .new_dataset_builder()
            .with_data(&[8.0])
            .create("mu_n")
            .unwrap();
    });
    assert_problem(&p, "/contacts/mu_n", "remove mu_n");
    let p = broken_3d(|f| f.unlink("contacts/normal/dofs").unwrap());
    assert_problem(&p, "/contacts/normal", "missing the normal kinematics");
    // A normal DOF that is one of the contact's friction directions (x), or its own opposite.
    let p = broken_3d(|f| replace_i64(f, "contacts/normal/dofs", &[0]));
    assert_problem(
        &p,
        "/contacts/normal/dofs",
        "also one of its friction directions",
    );
    let p = broken_3d(|f| {
        f.group("contacts/normal")
            .unwrap()
            .new_dataset_builder()
            .with_data(&[2i64])
            .create("dofs_other")
            .unwrap();
    });
    assert_problem(
        &p,
        "/contacts/normal/dofs_other",
        "same normal DOF 2 on both sides",
    );
    // A normal map with a NaN, or an empty row without a fixed load.
    for (entry, words) in [(f64::NAN, "is NaN"), (0.0, "is empty")] {
        let mut m = examples::single_contact_3d();
        let w =
            SparseMatrix::try_new_from_triplets(1, 3, &[faer::sparse::Triplet::new(0, 2, entry)])
                .unwrap();
        m.contacts.normal.as_mut().unwrap().kinematics = Kinematics::Matrix(w);
        assert_problem(&ewr_model::validate(&m), "/contacts/normal/W", words);
    }
    let p = broken(|f| {
        f.group("contacts")
            .unwrap()
            .new_dataset_builder()
            .with_data(&[-5.0])
            .create("k_t")
            .unwrap();
    });
    assert_problem(&p, "/contacts/k_t", "finite and > 0");
}

#[test]
fn fixed_normal_loads_round_trip_and_bad_ones_are_named() {
    // One contact of a two-contact model keeps its normal DOF, the other has none (-1 in the
    // file) but a fixed normal force.
    let m = ewr_model::ModelBuilder::new(4)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .mass(2, 1.0)
        .mass(3, 1.0)
        .spring_to_ground(0, 1.0)
        .spring_to_ground(1, 1.0)
        .spring_to_ground(2, 1.0)
        .spring_to_ground(3, 1.0)
        .contacts({
            let mut c = ewr_model::Contacts::to_ground(1, vec![0, 1], vec![0.0, 0.0]);
            c.normal = Some(ewr_model::NormalContacts {
                kinematics: ewr_model::Kinematics::Dofs {
                    dofs: vec![2, 0],
                    other: None,
                },
                g0: vec![0.0, 0.0],
                mu: vec![0.3, 0.5],
                k_n: None,
                load: Some(vec![f64::NAN, 12.0]),
            });
            c
        })
        .force(2, 0, -10.0, 0.0)
        .force(0, 1, 1.0, 0.0)
        .build()
        .unwrap();
    let dir = tmp();
    let p = dir.path().join("mixed.h5");
    write(&p, &m).unwrap();
    let r = read(&p).unwrap();
    assert_same_model(&m, &r.model);
    let f = hdf5::File::open(&p).unwrap();
    let dofs = f.dataset("contacts/normal/dofs").unwrap();
    assert_eq!(dofs.read_raw::<i64>().unwrap(), vec![2, -1]);
    // The fixed contact's normal row is empty.
    let wn = r.model.contacts.contact_matrix(4).unwrap().to_dense();
    assert_eq!((0..4).map(|j| wn[(3, j)].abs()).sum::<f64>(), 0.0);
    assert_eq!(wn[(2, 2)], 1.0);
    let p = broken_3d(|f| {
        f.group("contacts/normal")
            .unwrap()
            .new_dataset_builder()
            .with_data(&[-1.0])
            .create("load")
            .unwrap();
    });
    assert_problem(&p, "/contacts/normal/load", "finite and >= 0");
    let p = broken_3d(|f| replace_i64(f, "contacts/normal/dofs", &[-1]));
    assert_problem(&p, "/contacts/normal/dofs", "out of range");
    let p = broken_3d(|f| {
        f.group("contacts/normal")
            .unwrap()
            .new_dataset_builder()
            .with_data(&[f64::NAN])
            .create("load")
            .unwrap();
        replace_i64(f, "contacts/normal/dofs", &[-1]);
    });
    assert_problem(&p, "/contacts/normal/dofs", "no fixed load");
}

fn replace_f64(f: &hdf5::File, path: &str, v: &[f64]) {
    f.unlink(path).unwrap();
    f.new_dataset_builder().with_data(v).create(path).unwrap();
}

fn replace_i64(f: &hdf5::File, path: &str, v: &[i64]) {
    f.unlink(path).unwrap();
    f.new_dataset_builder().with_data(v).create(path).unwrap();
}

#[test]
fn missing_stiffness_is_named() {
    let p = broken(|f| f.unlink("K").unwrap());
    assert_problem(&p, "/K", "missing");
}

#[test]
fn missing_dataset_in_sparse_group_is_named() {
    let p = broken(|f| f.unlink("M/indptr").unwrap());
    assert_problem(&p, "/M/indptr", "missing dataset");
}

#[test]
fn wrong_shape_is_named() {
    let p = broken(|f| {
        let g = f.group("M").unwrap();
        g.delete_attr("shape").unwrap();
        g.new_attr::<i64>()
            .shape([2])
            .create("shape")
            .unwrap()
            .write_raw(&[3i64, 3])
            .unwrap();
        // A 3 x 3 matrix needs 4 row pointers.
        replace_i64(f, "M/indptr", &[0, 1, 2, 2]);
    });
    assert_problem(&p, "/M", "expected [2, 2]");
}

#[test]
fn index_out_of_range_is_named() {
    let p = broken(|f| replace_i64(f, "K/indices", &[0, 7]));
    assert_problem(&p, "/K/indices", "out of range");
}

#[test]
fn float_indices_are_refused_not_truncated() {
    let p = broken(|f| replace_f64(f, "K/indices", &[0.0, 1.0]));
    assert_problem(&p, "/K/indices", "expected integers");
}

#[test]
fn non_symmetric_matrix_is_named() {
    let p = broken(|f| {
        let g = f.group("K").unwrap();
        g.delete_attr("symmetric").unwrap();
        // Full storage [[1, 0.5], [0, 2]]: K[0,1] has no mirror.
        replace_i64(f, "K/indptr", &[0, 2, 3]);
        replace_i64(f, "K/indices", &[0, 1, 1]);
        replace_f64(f, "K/data", &[1.0, 0.5, 2.0]);
    });
    assert_problem(&p, "/K", "not symmetric");
}

#[test]
fn entry_in_wrong_triangle_is_named() {
    let p = broken(|f| {
        replace_i64(f, "K/indptr", &[0, 1, 3]);
        replace_i64(f, "K/indices", &[0, 0, 1]);
        replace_f64(f, "K/data", &[1.0, 0.5, 2.0]);
    });
    assert_problem(&p, "/K", "other triangle");
}

#[test]
fn nan_is_named() {
    let p = broken(|f| replace_f64(f, "K/data", &[1.0, f64::NAN]));
    assert_problem(&p, "/K", "finite");
}

#[test]
fn negative_mass_is_named() {
    let p = broken(|f| replace_f64(f, "M/data", &[1.0, -1.0]));
    assert_problem(&p, "/M", "negative mass");
}

#[test]
fn negative_friction_bound_is_named() {
    let p = broken(|f| replace_f64(f, "contacts/mu_n", &[-8.0]));
    assert_problem(&p, "/contacts/mu_n", "mu_n = -8");
}

#[test]
fn nan_friction_bound_is_named() {
    let p = broken(|f| replace_f64(f, "contacts/mu_n", &[f64::NAN]));
    assert_problem(&p, "/contacts/mu_n", "finite");
}

#[test]
fn friction_bound_of_wrong_type_is_named() {
    let p = broken(|f| {
        f.unlink("contacts/mu_n").unwrap();
        let s: hdf5::types::VarLenUnicode = "eight".parse().unwrap();
        f.new_dataset_builder()
            .with_data(&[s])
            .create("contacts/mu_n")
            .unwrap();
    });
    assert_problem(&p, "/contacts/mu_n", "expected numbers");
}

#[test]
fn bad_contact_dimension_is_named() {
    let p = broken(|f| {
        let g = f.group("contacts").unwrap();
        g.delete_attr("dim").unwrap();
        g.new_attr::<i64>()
            .create("dim")
            .unwrap()
            .write_scalar(&3)
            .unwrap();
    });
    assert_problem(&p, "/contacts", "must be 1 or 2");
}

#[test]
fn contact_dof_out_of_range_is_named() {
    let p = broken(|f| {
        f.unlink("contacts/dofs").unwrap();
        f.new_dataset::<i64>()
            .shape([1, 2])
            .create("contacts/dofs")
            .unwrap()
            .write_raw(&[0i64, 5])
            .unwrap();
    });
    assert_problem(&p, "/contacts/dofs", "DOF 5, out of range 0..2");
}

#[test]
fn contact_table_of_wrong_shape_is_named() {
    let p = broken(|f| replace_i64(f, "contacts/dofs", &[0, 1, 1]));
    assert_problem(&p, "/contacts/dofs", "expected [nc, dim] = [1, 2]");
}

#[test]
fn forcing_on_missing_dof_is_named() {
    let p = broken(|f| replace_i64(f, "forcing/dof", &[0, 99]));
    assert_problem(&p, "/forcing/dof", "DOF 99");
}

#[test]
fn forcing_columns_of_unequal_length_are_named() {
    let p = broken(|f| replace_f64(f, "forcing/cos", &[10.0]));
    assert_problem(&p, "/forcing", "same length");
}

#[test]
fn unknown_format_is_named() {
    let p = broken(|f| {
        f.delete_attr("format").unwrap();
        let s: hdf5::types::VarLenUnicode = "anndata".parse().unwrap();
        f.new_attr::<hdf5::types::VarLenUnicode>()
            .create("format")
            .unwrap()
            .write_scalar(&s)
            .unwrap();
    });
    assert_problem(&p, "/", "expected \"ewr-model\"");
}

#[test]
fn unknown_version_is_named() {
    let p = broken(|f| {
        f.delete_attr("version").unwrap();
        f.new_attr::<i64>()
            .create("version")
            .unwrap()
            .write_scalar(&4)
            .unwrap();
    });
    assert_problem(&p, "/", "unsupported version");
}

#[test]
fn empty_row_of_w_is_named() {
    let w = SparseMatrix::try_new_from_triplets(2, 2, &[faer::sparse::Triplet::new(0, 0, 1.0)])
        .unwrap();
    let err = ModelBuilder::new(2)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .spring_to_ground(0, 1.0)
        .spring_to_ground(1, 1.0)
        .contacts(Contacts::from_matrix(2, w, vec![1.0]))
        .build()
        .unwrap_err();
    assert_problem(&err, "/contacts/W", "row 1");
}

#[test]
fn builder_refuses_out_of_range_dofs() {
    let err = ModelBuilder::new(2).spring(0, 2, 1.0).build().unwrap_err();
    assert_problem(&err, "/K", "DOF 2 is out of range");
}

#[test]
fn all_problems_are_reported_at_once() {
    let p = broken(|f| {
        replace_f64(f, "contacts/mu_n", &[-1.0]);
        replace_i64(f, "forcing/dof", &[0, 42]);
    });
    assert_problem(&p, "/contacts/mu_n", "mu_n = -1");
    assert_problem(&p, "/forcing/dof", "DOF 42");
}

fn open_error(p: &Path) -> String {
    match read(p) {
        Err(e @ ModelError::Open { .. }) => e.to_string(),
        Err(e) => panic!("expected an open error, got {e}"),
        Ok(_) => panic!("accepted {}", p.display()),
    }
}

#[test]
fn malformed_files_give_errors_not_panics() {
    let dir = tmp();
    let missing = dir.path().join("nope.h5");
    assert!(open_error(&missing).contains("No such file"));
    let empty = dir.path().join("empty.h5");
    std::fs::write(&empty, b"").unwrap();
    assert!(open_error(&empty).contains("empty"));
    let text = dir.path().join("text.h5");
    std::fs::write(&text, b"K = [1 2; 3 4]\n").unwrap();
    assert!(open_error(&text).contains("not a readable HDF5 file"));
    // A truncated HDF5 file: the first half of a valid one.
    let good = dir.path().join("good.h5");
    write(&good, &examples::chain(40)).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let cut = dir.path().join("cut.h5");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(read(&cut).is_err());
    assert!(open_error(dir.path()).contains("directory"));
}

#[test]
fn plain_hdf5_without_the_format_attribute_is_refused() {
    let dir = tmp();
    let p = dir.path().join("plain.h5");
    hdf5::File::create(&p)
        .unwrap()
        .new_dataset_builder()
        .with_data(&[1.0, 2.0])
        .create("x")
        .unwrap();
    match read(&p) {
        Err(ModelError::Invalid { problems, .. }) => {
            assert_problem(&problems, "/", "not an ewr model file")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalid_model_is_not_written_and_failed_write_leaves_no_file() {
    let mut m = examples::oscillator_2d();
    m.contacts.mu_n[0] = -1.0;
    let dir = tmp();
    let p = dir.path().join("bad.h5");
    assert!(matches!(write(&p, &m), Err(ModelError::Invalid { .. })));
    assert!(!p.exists());
    // Missing folders are created; a folder that cannot exist (a file is in the way) fails.
    std::fs::write(dir.path().join("a-file"), b"x").unwrap();
    let under_a_file = dir.path().join("a-file/m.h5");
    assert!(matches!(
        write(&under_a_file, &examples::oscillator_2d()),
        Err(ModelError::Write { .. })
    ));
    assert!(write(dir.path().join("new/dir/m.h5"), &examples::oscillator_2d()).is_ok());
}

#[test]
fn dense_matrix_datasets_are_accepted() {
    let dir = tmp();
    let p = dir.path().join("dense.h5");
    write(&p, &examples::two_dof_1d()).unwrap();
    {
        let f = hdf5::File::open_rw(&p).unwrap();
        f.unlink("K").unwrap();
        f.new_dataset::<f64>()
            .shape([2, 2])
            .create("K")
            .unwrap()
            .write_raw(&[2.0, -1.0, -1.0, 1.0])
            .unwrap();
        f.close().unwrap();
    }
    let r = read(&p).unwrap();
    assert_eq!(
        dense(&r.model.stiffness),
        dense(&examples::two_dof_1d().stiffness)
    );
}

#[test]
fn example_options_apply() {
    let m = Example::Chain.build(&ExampleOptions {
        contacts: Some(40),
        mu_n: Some(0.2),
        ..Default::default()
    });
    assert_eq!((m.n_dofs(), m.contacts.len()), (50, 40));
    assert!(m.contacts.mu_n.iter().all(|&x| x == 0.2));
    let massless = Example::TwoMassDamper.build(&ExampleOptions {
        damper_mass: Some(0.0),
        ..Default::default()
    });
    assert_eq!(massless.mass.to_dense()[(2, 2)], 0.0);
}
