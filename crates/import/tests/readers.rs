//! The readers on good and bad input: every error must name the file and the line at fault.

use ewr_import::calculix::{self, JobFiles};
use ewr_import::{
    DofMap, DofSpace, ImportError, ImportOptions, MtxFiles, mtx, read_contacts, read_forcing,
};
use ewr_model::{Kinematics, SparseMatrix};
use std::path::{Path, PathBuf};

/// A temporary folder with files written from strings.
struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

fn dense(a: &SparseMatrix) -> Vec<Vec<f64>> {
    let d = a.to_dense();
    (0..d.nrows())
        .map(|i| (0..d.ncols()).map(|j| d[(i, j)]).collect())
        .collect()
}

/// Asserts that `e` is a file error at `line` of a file named `name`, containing `words`.
#[track_caller]
fn at(e: ImportError, name: &str, line: usize, words: &str) {
    let s = e.to_string();
    assert_eq!(e.line(), Some(line), "{s}");
    assert!(s.contains(&format!("{name}:{line}: ")), "{s}");
    assert!(s.contains(words), "expected `{words}` in: {s}");
}

fn ccx_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ccx")
}

// ---------------------------------------------------------------- Matrix Market

const SYM: &str = "%%MatrixMarket matrix coordinate real symmetric
% a comment
3 3 5
1 1 2.0
2 1 -1.0
2 2 2.0
3 2 -1.0
3 3 1.0
";

#[test]
fn mtx_symmetric_lower_triangle_is_mirrored() {
    let d = Dir::new();
    let m = mtx::read_matrix(&d.file("k.mtx", SYM)).unwrap();
    assert!(m.symmetric_storage);
    assert_eq!(
        dense(&m.matrix),
        [[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 1.0]]
    );
}

#[test]
fn mtx_symmetric_upper_triangle_is_accepted_too() {
    let d = Dir::new();
    let text = SYM
        .replace("2 1 -1.0", "1 2 -1.0")
        .replace("3 2 -1.0", "2 3 -1.0");
    let m = mtx::read_matrix(&d.file("k.mtx", &text)).unwrap();
    assert_eq!(dense(&m.matrix)[0][1], -1.0);
    assert_eq!(dense(&m.matrix)[1][0], -1.0);
}

#[test]
fn mtx_symmetric_with_both_triangles_is_refused() {
    let d = Dir::new();
    let text = SYM.replace("3 3 5", "3 3 6") + "1 2 -1.0\n";
    let e = mtx::read_matrix(&d.file("k.mtx", &text)).unwrap_err();
    at(e, "k.mtx", 9, "stores both");
}

#[test]
fn mtx_general_duplicates_are_summed() {
    let d = Dir::new();
    let text = "%%MatrixMarket matrix coordinate real general
2 2 6
1 1 1.0
1 1 0.5
1 2 -1.0
2 1 -1.0
2 2 3
2 2 -1
";
    let m = mtx::read_matrix(&d.file("k.mtx", text)).unwrap();
    assert_eq!(m.duplicates, 2);
    assert_eq!(dense(&m.matrix), [[1.5, -1.0], [-1.0, 2.0]]);
}

#[test]
fn mtx_integer_field_and_fortran_exponents_are_read() {
    let d = Dir::new();
    let text = "%%MatrixMarket matrix coordinate integer general\n\n1 1 1\n1 1 2D+03\n";
    let m = mtx::read_matrix(&d.file("k.mtx", text)).unwrap();
    assert_eq!(dense(&m.matrix), [[2000.0]]);
}

#[test]
fn mtx_general_not_symmetric_names_both_lines() {
    let d = Dir::new();
    let text = "%%MatrixMarket matrix coordinate real general
2 2 4
1 1 1.0
1 2 -1.0
2 1 -2.0
2 2 1.0
";
    let e = mtx::read_matrix(&d.file("k.mtx", text)).unwrap_err();
    let s = e.to_string();
    assert!(s.contains("not symmetric") && s.contains("line"), "{s}");
    // One triangle stored under `general`: the message says how to declare it.
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 1 -1\n2 2 1\n";
    let e = mtx::read_matrix(&d.file("k2.mtx", text)).unwrap_err();
    at(e, "k2.mtx", 4, "header must say `symmetric`");
}

#[test]
fn mtx_complex_pattern_array_and_skew_headers_are_refused() {
    let d = Dir::new();
    for (header, words) in [
        (
            "coordinate complex general",
            "`complex` matrices are not supported",
        ),
        (
            "coordinate pattern symmetric",
            "`pattern` matrix has no values",
        ),
        ("array real general", "`array` format is not supported"),
        (
            "coordinate real skew-symmetric",
            "`skew-symmetric` matrices",
        ),
        ("coordinate complex hermitian", "`complex`"),
        ("coordinate real", "expected 5"),
        ("vector coordinate real general", "only `matrix`"),
    ] {
        let text = format!("%%MatrixMarket matrix {header}\n2 2 1\n1 1 1 0\n");
        let text = text.replace("matrix vector", "vector");
        let e = mtx::read_matrix(&d.file("h.mtx", &text)).unwrap_err();
        at(e, "h.mtx", 1, words);
    }
}

#[test]
fn mtx_wrong_or_missing_header() {
    let d = Dir::new();
    let e = mtx::read_matrix(&d.file("a.mtx", "2 2 1\n1 1 1.0\n")).unwrap_err();
    at(e, "a.mtx", 1, "the header line is missing");
    let e = mtx::read_matrix(&d.file("b.mtx", "hello\n")).unwrap_err();
    at(e, "b.mtx", 1, "not a Matrix Market file");
    let e = mtx::read_matrix(&d.file("c.mtx", "")).unwrap_err();
    assert!(e.to_string().contains("c.mtx: the file is empty"), "{e}");
    let e = mtx::read_matrix(&d.file(
        "d.mtx",
        "%%MatrixMarket matrix coordinate real general\n% only comments\n",
    ))
    .unwrap_err();
    at(e, "d.mtx", 3, "before the size line");
    let e = mtx::read_matrix(&d.file(
        "e.mtx",
        "%%MatrixMarket matrix coordinate real general\n2 2\n",
    ))
    .unwrap_err();
    at(e, "e.mtx", 2, "3 integers");
}

#[test]
fn mtx_non_square_is_refused_at_the_size_line() {
    let d = Dir::new();
    let text = "%%MatrixMarket matrix coordinate real general\n% c\n2 3 1\n1 1 1.0\n";
    let e = mtx::read_matrix(&d.file("r.mtx", text)).unwrap_err();
    at(e, "r.mtx", 3, "2 x 3");
}

#[test]
fn mtx_truncated_file_is_detected() {
    let d = Dir::new();
    let cut = &SYM[..SYM.find("3 2 -1.0").unwrap()];
    let e = mtx::read_matrix(&d.file("t.mtx", cut)).unwrap_err();
    at(e, "t.mtx", 7, "after 3 of the 5 entries");
    // Cut inside an entry: the half line is reported.
    let cut = &SYM[..SYM.find("3 2 -1.0").unwrap() + 2];
    let e = mtx::read_matrix(&d.file("u.mtx", cut)).unwrap_err();
    at(e, "u.mtx", 7, "found 1 field");
    // More entries than announced.
    let e = mtx::read_matrix(&d.file("v.mtx", &format!("{SYM}3 1 0.0\n"))).unwrap_err();
    at(e, "v.mtx", 9, "more entries than the 5 announced");
}

#[test]
fn mtx_zero_based_indices_are_detected() {
    let d = Dir::new();
    let text = "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n0 0 1.0\n1 0 -1\n1 1 1\n";
    let e = mtx::read_matrix(&d.file("z.mtx", text)).unwrap_err();
    at(e, "z.mtx", 3, "0-based");
    let text = "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n3 1 1.0\n";
    let e = mtx::read_matrix(&d.file("o.mtx", text)).unwrap_err();
    at(e, "o.mtx", 3, "out of range 1..=2");
}

#[test]
fn mtx_bad_values() {
    let d = Dir::new();
    for (v, words) in [
        ("nan", "not finite"),
        ("inf", "not finite"),
        ("1,5", "not a number"),
    ] {
        let text = format!("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 {v}\n");
        let e = mtx::read_matrix(&d.file("n.mtx", &text)).unwrap_err();
        at(e, "n.mtx", 3, words);
    }
    let text = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1\n";
    let e = mtx::read_matrix(&d.file("p.mtx", text)).unwrap_err();
    at(e, "p.mtx", 3, "pattern");
    let text = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1.5 1 2\n";
    let e = mtx::read_matrix(&d.file("q.mtx", text)).unwrap_err();
    at(e, "q.mtx", 3, "integer");
}

#[test]
fn binary_file_is_refused_as_not_text() {
    let d = Dir::new();
    let p = d.0.path().join("k.mtx");
    std::fs::write(&p, b"%%MatrixMarket\n\x89HDF\r\n\x1a\n\xff\xfe").unwrap();
    let e = mtx::read_matrix(&p).unwrap_err();
    at(e, "k.mtx", 2, "not a text file");
}

#[test]
fn mtx_import_checks_sizes_and_dof_map() {
    let d = Dir::new();
    let k = d.file("k.mtx", SYM);
    let m2 = d.file(
        "m.mtx",
        "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n2 2 1\n",
    );
    let files = MtxFiles {
        mass: m2,
        stiffness: k.clone(),
        ..Default::default()
    };
    let e = ewr_import::import_mtx(&files, &ImportOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("m.mtx: the matrix is 2 x 2 but the stiffness"),
        "{e}"
    );

    let m = d.file(
        "m3.mtx",
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 2 1\n3 3 1\n",
    );
    let files = MtxFiles {
        mass: m.clone(),
        stiffness: k.clone(),
        dofs: Some(d.file("map.dof", "1.1\n1.2\n")),
        ..Default::default()
    };
    let e = ewr_import::import_mtx(&files, &ImportOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("map.dof: the DOF map has 2 equations"),
        "{e}"
    );

    // A good import, with Rayleigh damping and equation-style forcing.
    let files = MtxFiles {
        mass: m,
        stiffness: k,
        ..Default::default()
    };
    let opts = ImportOptions {
        rayleigh: Some((0.0, 0.01)),
        eta: Some(0.002),
        forcing: Some(d.file("f.csv", "eq,harmonic,cos\n3,1,1.0\n")),
        ..Default::default()
    };
    let imp = ewr_import::import_mtx(&files, &opts).unwrap();
    assert_eq!(imp.model.n_dofs(), 3);
    assert_eq!(imp.model.forcing[0].dof, 2);
    assert_eq!(imp.model.damping.rayleigh, Some((0.0, 0.01)));
    assert_eq!(imp.model.damping.hysteretic_eta, Some(0.002));
    assert!(imp.model.contacts.is_empty());
    // Negative damping is an option error, not a panic.
    let opts = ImportOptions {
        rayleigh: Some((-1.0, 0.0)),
        ..Default::default()
    };
    let e = ewr_import::import_mtx(&files, &opts).unwrap_err();
    assert!(matches!(e, ImportError::Option { .. }), "{e}");
}

// ---------------------------------------------------------------- CalculiX

/// A two-node, six-equation job written as CalculiX does (upper triangle, 1-based).
fn small_job(d: &Dir) -> PathBuf {
    d.file("job.dof", "7.1\n7.2\n7.3\n9.1\n9.2\n9.3\n");
    let mut k = String::new();
    let mut m = String::new();
    for i in 1..=6 {
        k += &format!("{i} {i}  2.0000000000000e+00\n");
        m += &format!("{i} {i}  1.0000000000000e+00\n");
        if i > 3 {
            k += &format!("{} {i} -1.0000000000000e+00\n", i - 3);
            m += &format!("{} {i}  0.0000000000000e+00\n", i - 3);
        }
    }
    d.file("job.sti", &k);
    d.file("job.mas", &m);
    d.0.path().join("job")
}

#[test]
fn calculix_small_job_is_read_and_mirrored() {
    let d = Dir::new();
    let job = small_job(&d);
    let fe = calculix::read_job(&job).unwrap();
    let k = dense(&fe.stiffness);
    assert_eq!(k[0][3], -1.0);
    assert_eq!(k[3][0], -1.0);
    assert_eq!(fe.dofs.as_ref().unwrap().equation(9, 2), Some(4));
    assert_eq!(fe.dofs.as_ref().unwrap().labels()[5], "9.3");
}

#[test]
fn calculix_committed_plate_fixture() {
    let fe = calculix::read_job(&ccx_fixture().join("plate")).unwrap();
    let map = fe.dofs.as_ref().unwrap();
    assert_eq!(map.len(), 342);
    assert_eq!(fe.stiffness.nrows(), 342);
    // The clamped root (x = 0, nodes 1..=13) has no equations.
    assert!(!map.contains_node(1) && map.contains_node(14));
    let modes = calculix::read_dat_eigenvalues(&ccx_fixture().join("plate-freq.dat")).unwrap();
    assert_eq!(modes.len(), 10);
    assert_eq!(modes[0].mode, 1);
    assert!((modes[0].frequency - 346.754).abs() < 1e-3, "{modes:?}");
}

#[test]
fn calculix_truncated_files_are_detected() {
    let d = Dir::new();
    let job = small_job(&d);
    let sti = std::fs::read_to_string(d.0.path().join("job.sti")).unwrap();
    // Cut inside the last number: no end of line.
    std::fs::write(d.0.path().join("job.sti"), &sti[..sti.len() - 5]).unwrap();
    let e = calculix::read_job(&job).unwrap_err();
    at(e, "job.sti", 9, "truncated");
    // Cut at a line end: the last diagonal entries are missing.
    let cut: String = sti.lines().take(5).map(|l| format!("{l}\n")).collect();
    std::fs::write(d.0.path().join("job.sti"), cut).unwrap();
    let e = calculix::read_job(&job).unwrap_err();
    at(
        e,
        "job.sti",
        6,
        "no diagonal entry for 2 of the 6 equations",
    );
    // Cut inside a line: too few fields.
    std::fs::write(d.0.path().join("job.sti"), "1 1 2.0\n2 2\n").unwrap();
    let e = calculix::read_job(&job).unwrap_err();
    at(e, "job.sti", 2, "found 2 field(s)");
}

#[test]
fn calculix_index_errors_name_the_dof_file() {
    let d = Dir::new();
    let job = small_job(&d);
    d.file("job.mas", "1 1 1.0\n1 7 0.5\n");
    let e = calculix::read_job(&job).unwrap_err();
    at(e, "job.mas", 2, "beyond the 6 equations of");
    assert!(e_str(&job).contains("job.dof"));
    d.file("job.mas", "0 1 1.0\n");
    let e = calculix::read_job(&job).unwrap_err();
    at(e, "job.mas", 1, "0-based");
}

fn e_str(job: &Path) -> String {
    calculix::read_job(job).unwrap_err().to_string()
}

#[test]
fn calculix_bad_dof_map() {
    let d = Dir::new();
    let job = small_job(&d);
    d.file("job.dof", "7.1\n7.2\n\n7 3\n");
    let e = calculix::read_job(&job).unwrap_err();
    at(e, "job.dof", 4, "expected `node.direction`");
    d.file("job.dof", "7.1\n7.2\n7.1\n");
    let e = calculix::read_job(&job).unwrap_err();
    at(e, "job.dof", 3, "DOF 7.1 is listed twice (first on line 1)");
    std::fs::remove_file(d.0.path().join("job.dof")).unwrap();
    let e = calculix::read_job(&job).unwrap_err();
    assert!(e.to_string().contains("job.dof: not found"), "{e}");
}

#[test]
fn calculix_dat_without_eigenvalues() {
    let d = Dir::new();
    let e = calculix::read_dat_eigenvalues(&d.file("x.dat", "\n displacements\n")).unwrap_err();
    assert!(e.to_string().contains("no eigenvalue table"), "{e}");
    assert_eq!(
        JobFiles::of(Path::new("a/b.dat")).mass,
        PathBuf::from("a/b.mas")
    );
}

// ---------------------------------------------------------------- contacts and forcing

/// Nodes 7 (x, y, z free), 9 (x, y free, z constrained) and 11 (x, y, z).
fn map() -> DofMap {
    let d = Dir::new();
    DofMap::read(&d.file("m.dof", "7.1\n7.2\n7.3\n9.1\n9.2\n11.1\n11.2\n11.3\n")).unwrap()
}

fn space(map: &DofMap) -> DofSpace<'_> {
    DofSpace {
        n: map.len(),
        map: Some(map),
        map_file: Some(Path::new("m.dof")),
    }
}

#[test]
fn contacts_from_a_normal_along_an_axis_read_single_dofs() {
    let d = Dir::new();
    let map = map();
    let p = d.file(
        "c.csv",
        "# a comment\nnode,other,mu_n,rho,nx,ny,nz\n7,ground,5,,0,0,2\n11,7,3,0.5,0,0,1\n",
    );
    let r = read_contacts(&p, &space(&map)).unwrap();
    let c = r.contacts;
    assert_eq!((c.dim, c.len()), (2, 2));
    assert_eq!(c.mu_n, [5.0, 3.0]);
    assert_eq!(c.rho, [1.0, 0.5]);
    let Kinematics::Dofs { dofs, other } = &c.kinematics else {
        panic!("axis-aligned contacts should be given as DOFs")
    };
    // Normal z: tangents x, y. Node 7 is equations 0..3, node 11 is 5..8.
    assert_eq!(dofs, &[0, 1, 5, 6]);
    assert_eq!(other.as_ref().unwrap(), &[None, None, Some(0), Some(1)]);
}

#[test]
fn contacts_with_oblique_tangents_give_a_w_matrix() {
    let d = Dir::new();
    let map = map();
    let s = 0.5f64.sqrt();
    let p = d.file(
        "c.csv",
        &format!("node,mu_n,t1x,t1y,t1z,t2x,t2y,t2z\n7,1,{s},{s},0,0,0,1\n"),
    );
    let c = read_contacts(&p, &space(&map)).unwrap().contacts;
    let w = c.w_matrix(map.len()).unwrap().to_dense();
    assert!((w[(0, 0)] - s).abs() < 1e-15 && (w[(0, 1)] - s).abs() < 1e-15);
    assert_eq!(w[(1, 2)], 1.0);
    // A tangent component on a constrained DOF (node 9 has no z) is dropped with a note.
    let p = d.file("d.csv", "node,mu_n,t1x,t1y,t1z\n9,1,1,0,1\n");
    let r = read_contacts(&p, &space(&map)).unwrap();
    assert_eq!(r.contacts.dim, 1);
    assert!(
        r.notes[0].contains("d.csv:2: node 9 has no free DOF in direction 3"),
        "{:?}",
        r.notes
    );
    let p = d.file("e.csv", "node,mu_n,t1x,t1y,t1z\n9,1,0,0,1\n");
    let e = read_contacts(&p, &space(&map)).unwrap_err();
    at(e, "e.csv", 2, "reads no free DOF");
}

#[test]
fn contacts_bad_rows_name_their_line() {
    let d = Dir::new();
    let map = map();
    let sp = space(&map);
    let head = "node,other,mu_n,rho,nx,ny,nz\n";
    for (row, words) in [
        (
            "8,ground,1,,0,0,1",
            "node 8 (column `node`) is not in m.dof",
        ),
        ("7,13,1,,0,0,1", "node 13 (column `other`) is not in m.dof"),
        ("7,7,1,,0,0,1", "own node 7"),
        ("7,,-1,,0,0,1", "mu_n = -1"),
        ("7,,1,0,0,0,1", "rho = 0"),
        ("7,,1,,0,0,0", "zero vector"),
        ("7,,,,0,0,1", "column `mu_n` is empty"),
        ("7,,x,,0,0,1", "`x` is not a number"),
        ("7.5,,1,,0,0,1", "must be a non-negative integer"),
        ("7,,1,,0,0", "6 field(s), but the header names 7"),
    ] {
        let p = d.file("c.csv", &format!("{head}11,ground,1,,0,1,0\n{row}\n"));
        let e = read_contacts(&p, &sp).unwrap_err();
        at(e, "c.csv", 3, words);
    }
    let p = d.file(
        "t.csv",
        "node,mu_n,t1x,t1y,t1z,t2x,t2y,t2z\n7,1,1,0,0,0.1,1,0\n",
    );
    at(
        read_contacts(&p, &sp).unwrap_err(),
        "t.csv",
        2,
        "not orthogonal",
    );
}

#[test]
fn a_huge_direction_vector_is_normalised_not_zeroed() {
    // The squares of 1e200 overflow: the vector is scaled by its largest component first.
    let d = Dir::new();
    let map = map();
    let sp = space(&map);
    let read = |name: &str, z: &str| {
        let p = d.file(name, &format!("node,mu_n,nx,ny,nz\n7,1,0,0,{z}\n"));
        let r = read_contacts(&p, &sp).unwrap();
        let n = sp.n;
        dense(&r.contacts.contact_matrix(n).unwrap())
    };
    let (huge, unit) = (read("h.csv", "1e200"), read("u.csv", "1"));
    assert_eq!(huge, unit);
}

#[test]
fn contacts_bad_headers() {
    let d = Dir::new();
    let map = map();
    let sp = space(&map);
    for (text, line, words) in [
        ("7,ground,1,0,0,1\n", 1, "missing header row"),
        ("node;mu_n;nx;ny;nz\n7;1;0;0;1\n", 1, "not semicolons"),
        (
            "node,mu_t,nx,ny,nz\n7,1,0,0,1\n",
            1,
            "unknown column `mu_t`",
        ),
        ("node,nx,ny,nz\n7,0,0,1\n", 1, "`mu_n`"),
        ("node,mu_n,nx,ny\n7,1,0,0\n", 1, "three columns `nx,ny,nz`"),
        ("node,mu_n\n7,1\n", 1, "no contact directions"),
        (
            "node,mu_n,nx,ny,nz,t1x,t1y,t1z\n7,1,0,0,1,1,0,0\n",
            1,
            "not both",
        ),
        ("mu_n,nx,ny,nz\n1,0,0,1\n", 1, "needs `node`"),
        ("node,eq1,mu_n\n7,1,1\n", 1, "not both"),
        ("eq1,mu_n,nx,ny,nz\n1,1,0,0,1\n", 1, "belongs to node-style"),
        ("# only a header\nnode,mu_n,nx,ny,nz\n", 2, "no data rows"),
        ("node,node,mu_n\n7,7,1\n", 1, "appears twice"),
    ] {
        let p = d.file("h.csv", text);
        let e = read_contacts(&p, &sp).unwrap_err();
        at(e, "h.csv", line, words);
    }
    let p = d.file("empty.csv", "\n# nothing\n");
    let e = read_contacts(&p, &sp).unwrap_err();
    assert!(
        e.to_string().contains("empty.csv: the file is empty"),
        "{e}"
    );
    // Node style without a DOF map.
    let p = d.file("n.csv", "node,mu_n,nx,ny,nz\n7,1,0,0,1\n");
    let bare = DofSpace {
        n: 8,
        map: None,
        map_file: None,
    };
    at(
        read_contacts(&p, &bare).unwrap_err(),
        "n.csv",
        1,
        "needs a DOF map",
    );
}

#[test]
fn contacts_by_equation() {
    let d = Dir::new();
    let sp = DofSpace {
        n: 8,
        map: None,
        map_file: None,
    };
    let p = d.file(
        "e.csv",
        "\u{feff}eq1,eq2,other1,other2,mu_n\r\n1,2,,,4\r\n4,5,7,ground,2\r\n",
    );
    let c = read_contacts(&p, &sp).unwrap().contacts;
    let Kinematics::Dofs { dofs, other } = &c.kinematics else {
        panic!()
    };
    assert_eq!(dofs, &[0, 1, 3, 4]);
    assert_eq!(other.as_ref().unwrap(), &[None, None, Some(6), None]);
    let p = d.file("z.csv", "eq1,mu_n\n1,1\n0,1\n");
    at(read_contacts(&p, &sp).unwrap_err(), "z.csv", 3, "1-based");
    let p = d.file("o.csv", "eq1,mu_n\n9,1\n");
    at(
        read_contacts(&p, &sp).unwrap_err(),
        "o.csv",
        2,
        "model has 8 equations",
    );
    let p = d.file("s.csv", "eq1,other1,mu_n\n3,3,1\n");
    at(
        read_contacts(&p, &sp).unwrap_err(),
        "s.csv",
        2,
        "own equation 3",
    );
}

#[test]
fn forcing_by_node_and_by_equation() {
    let d = Dir::new();
    let map = map();
    let sp = space(&map);
    let p = d.file(
        "f.csv",
        "node,direction,harmonic,cos,sin\n7,z,1,2.5,0\n11,1,3,,-1\n",
    );
    let f = read_forcing(&p, &sp).unwrap();
    assert_eq!(
        (f[0].dof, f[0].harmonic, f[0].cos, f[0].sin),
        (2, 1, 2.5, 0.0)
    );
    assert_eq!(
        (f[1].dof, f[1].harmonic, f[1].cos, f[1].sin),
        (5, 3, 0.0, -1.0)
    );
    let p = d.file("g.csv", "harmonic,eq,sin\n1,8,1\n");
    assert_eq!(read_forcing(&p, &sp).unwrap()[0].dof, 7);
    for (text, line, words) in [
        (
            "node,direction,harmonic,cos\n8,1,1,1\n",
            2,
            "node 8 is not in m.dof",
        ),
        (
            "node,direction,harmonic,cos\n9,3,1,1\n",
            2,
            "no free DOF in direction 3",
        ),
        ("node,direction,harmonic,cos\n7,w,1,1\n", 2, "direction `w`"),
        (
            "node,direction,harmonic,cos\n7,1,-1,1\n",
            2,
            "harmonic `-1`",
        ),
        ("node,direction,cos\n7,1,1\n", 1, "`harmonic` is missing"),
        ("node,direction,harmonic\n7,1,1\n", 1, "no amplitude"),
        ("node,harmonic,cos\n7,1,1\n", 1, "`node` needs `direction`"),
        ("eq,harmonic,cos\n0,1,1\n", 2, "1-based"),
        ("dof,harmonic,cos\n1,1,1\n", 1, "unknown column `dof`"),
    ] {
        let p = d.file("h.csv", text);
        at(read_forcing(&p, &sp).unwrap_err(), "h.csv", line, words);
    }
}

#[test]
fn calculix_import_with_contacts_and_forcing() {
    let dir = ccx_fixture();
    let opts = ImportOptions {
        contacts: Some(dir.join("plate-contacts.csv")),
        forcing: Some(dir.join("plate-forcing.csv")),
        rayleigh: Some((0.0, 1e-6)),
        ..Default::default()
    };
    let imp = ewr_import::import_calculix(&dir.join("plate"), &opts).unwrap();
    let m = &imp.model;
    assert_eq!(m.n_dofs(), 342);
    assert_eq!(m.contacts.dim, 2);
    assert!(imp.warnings.is_empty(), "{:?}", imp.warnings);
    // Normal along y: the tangents are z and x of the tip corner node 127.
    let Kinematics::Dofs { dofs, other } = &m.contacts.kinematics else {
        panic!("{:?}", m.contacts.kinematics)
    };
    let labels = m.dof_labels.as_ref().unwrap();
    assert_eq!([&labels[dofs[0]], &labels[dofs[1]]], ["127.3", "127.1"]);
    assert!(other.is_none());
    assert_eq!(labels[m.forcing[0].dof], "117.3");
}

// ---------------------------------------------------------------- cyclic sectors

/// Matrix Market text of the leading `n x n` block of `a` (upper triangle, symmetric).
fn mtx_block(a: &SparseMatrix, n: usize) -> String {
    let entries: Vec<String> = a
        .triplet_iter()
        .filter(|t| t.row < n && t.col < n && t.row <= t.col && *t.val != 0.0)
        .map(|t| format!("{} {} {:e}", t.row + 1, t.col + 1, t.val))
        .collect();
    format!(
        "%%MatrixMarket matrix coordinate real symmetric\n{n} {n} {}\n{}\n",
        entries.len(),
        entries.join("\n")
    )
}

/// Issue 16: the lumped bladed-disk sector imported from its FE-style parts (six DOFs:
/// disk, blade and the next disk on the cut face) with a boundary file and a shroud contact
/// against the next sector's blade: the importer appends that blade's DOFs as right DOFs
/// and gives exactly the built-in example (its contacts without k_t).
#[test]
fn cyclic_sector_from_mtx_boundary_and_next_sector_contacts() {
    let d = Dir::new();
    let ex = ewr_model::examples::bladed_disk(&Default::default());
    let files = MtxFiles {
        mass: d.file("m.mtx", &mtx_block(&ex.mass, 6)),
        stiffness: d.file("k.mtx", &mtx_block(&ex.stiffness, 6)),
        ..Default::default()
    };
    let contacts = "eq1,eq2,other1,other2,other_sector,mu_n\n\
                    3,4,3,4,next,0.5\n\
                    3,4,1,2,,0.3\n";
    let opts = ImportOptions {
        contacts: Some(d.file("c.csv", contacts)),
        forcing: Some(d.file("f.csv", "eq,harmonic,cos,sin\n3,1,1,0\n4,1,0,0.5\n")),
        rayleigh: Some((0.0, 0.005)),
        cyclic: Some(ewr_import::CyclicOptions {
            sectors: 12,
            engine_order: 3,
            boundary: Some(d.file("b.csv", "left_eq,right_eq\n1,5\n2,6\n")),
        }),
        ..Default::default()
    };
    let m = ewr_import::import_mtx(&files, &opts).unwrap().model;
    assert_eq!(m.n_dofs(), 8);
    assert_eq!(m.cyclic, ex.cyclic);
    assert_eq!(dense(&m.mass), dense(&ex.mass));
    assert_eq!(dense(&m.stiffness), dense(&ex.stiffness));
    let w = |m: &ewr_model::Model| dense(&m.contacts.contact_matrix(8).unwrap());
    assert_eq!(w(&m), w(&ex));
    assert_eq!(m.contacts.mu_n, ex.contacts.mu_n);

    // Without --sectors the next sector cannot be named; nor can ground be on it.
    let e = ewr_import::import_mtx(
        &files,
        &ImportOptions {
            contacts: opts.contacts.clone(),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("--sectors"), "{e}");
    let bad = d.file(
        "c2.csv",
        "eq1,other1,other_sector,mu_n\n3,ground,next,0.5\n",
    );
    let e = ewr_import::import_mtx(
        &files,
        &ImportOptions {
            contacts: Some(bad),
            ..opts.clone()
        },
    )
    .unwrap_err();
    at(e, "c2.csv", 2, "needs an opposite equation");
    // A boundary pair out of range, and a DOF on both sides.
    for (text, words) in [
        ("left_eq,right_eq\n1,7\n", "out of range"),
        ("left_eq,right_eq\n1,5\n5,6\n", "both a left and a right"),
    ] {
        let e = ewr_import::import_mtx(
            &files,
            &ImportOptions {
                cyclic: Some(ewr_import::CyclicOptions {
                    sectors: 12,
                    engine_order: 3,
                    boundary: Some(d.file("b2.csv", text)),
                }),
                ..opts.clone()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains(words), "{e}");
    }
}

// ---------------------------------------------------------------- 3-D contacts (issue 13)

fn assert_close(a: &[Vec<f64>], b: &[Vec<f64>], tol: f64) {
    assert_eq!((a.len(), a[0].len()), (b.len(), b[0].len()));
    for (ra, rb) in a.iter().zip(b) {
        for (x, y) in ra.iter().zip(rb) {
            assert!((x - y).abs() <= tol, "{a:?}\n!=\n{b:?}");
        }
    }
}

/// The 3-D wedge damper, imported from its matrices, a DOF map and a node-style contacts
/// file (each face: node, opposite node, in-plane tangent and axis, normal pointing from
/// the damper to the platform), gives the built-in example's contact maps and data.
#[test]
fn three_d_contacts_by_node_give_the_wedge_damper_example() {
    let d = Dir::new();
    let ex = ewr_model::examples::wedge_damper_3d();
    let p = ewr_model::examples::BladeDamperBlade3d::default();
    let (k_t, k_n) = (p.base.k_contact.0.unwrap(), p.base.k_contact.1);
    let (a1, a2) = p.base.angles;
    // Equations 0..11: x1 (node 1), x2 y3 (node 2), x4 y5 (node 3), x6 y7 (node 4), x8
    // (node 5), then the axial z of nodes 2, 3, 4.
    let dofs = d.file(
        "w.dof",
        "1.1\n2.1\n2.2\n3.1\n3.2\n4.1\n4.2\n5.1\n2.3\n3.3\n4.3\n",
    );
    let files = MtxFiles {
        mass: d.file("m.mtx", &mtx_block(&ex.mass, 11)),
        stiffness: d.file("k.mtx", &mtx_block(&ex.stiffness, 11)),
        dofs: Some(dofs),
        ..Default::default()
    };
    let g0 = -p.preload / k_n;
    let row = |node: u32, t: (f64, f64), n: (f64, f64)| {
        format!(
            "{node},3,{},{g0},{k_t},{k_n},{},{},0,0,0,1,{},{},0\n",
            p.mu, t.0, t.1, n.0, n.1
        )
    };
    let csv = format!(
        "node,other,mu,g0,k_t,k_n,t1x,t1y,t1z,t2x,t2y,t2z,nx,ny,nz\n{}{}",
        row(2, (a1.cos(), a1.sin()), (-a1.sin(), a1.cos())),
        row(4, (-a2.cos(), a2.sin()), (a2.sin(), a2.cos())),
    );
    let opts = ImportOptions {
        contacts: Some(d.file("c.csv", &csv)),
        ..Default::default()
    };
    let m = ewr_import::import_mtx(&files, &opts).unwrap().model;
    let (c, e) = (&m.contacts, &ex.contacts);
    assert_eq!((c.dim, c.len()), (2, 2));
    assert_close(
        &dense(&c.contact_matrix(11).unwrap()),
        &dense(&e.contact_matrix(11).unwrap()),
        1e-15,
    );
    let (cn, en) = (c.normal.as_ref().unwrap(), e.normal.as_ref().unwrap());
    assert_eq!((&cn.g0, &cn.mu, &cn.k_n), (&en.g0, &en.mu, &en.k_n));
    assert!(cn.load.is_none());
    assert_eq!(c.k_t, e.k_t);
    assert_eq!(c.mu_n, [0.0, 0.0]);
    assert!(c.rho_auto);
}

/// The single 3-D contact by equations; the normal's sign and opposite side; 3-D columns
/// without `mu`, and bad 3-D values, are refused at their line.
#[test]
fn three_d_contacts_by_equation() {
    let d = Dir::new();
    let ex = ewr_model::examples::single_contact_3d();
    let sp = DofSpace {
        n: 3,
        map: None,
        map_file: None,
    };
    let p = d.file("c.csv", "eq1,eq2,eqn,mu,k_n\n1,2,3,0.4,100\n");
    let c = read_contacts(&p, &sp).unwrap().contacts;
    let (cn, en) = (
        c.normal.as_ref().unwrap(),
        ex.contacts.normal.as_ref().unwrap(),
    );
    assert_eq!(
        dense(&c.contact_matrix(3).unwrap()),
        dense(&ex.contacts.contact_matrix(3).unwrap())
    );
    assert!(matches!(cn.kinematics, Kinematics::Dofs { .. }));
    assert_eq!((&cn.g0, &cn.mu, &cn.k_n), (&en.g0, &en.mu, &en.k_n));

    // Gap opening as equation 3 decreases, against equation 1; a second contact with a fixed
    // normal force and no normal equation.
    let sp5 = DofSpace { n: 5, ..sp };
    let p = d.file(
        "c2.csv",
        "eq1,eqn,othern,eqn_sign,mu,g0,load\n2,3,1,-1,0.3,-0.01,\n4,,,,0.5,,12\n",
    );
    let c = read_contacts(&p, &sp5).unwrap().contacts;
    let w = dense(&c.contact_matrix(5).unwrap());
    assert_eq!(w[2], [1.0, 0.0, -1.0, 0.0, 0.0]);
    assert_eq!(w[3], [0.0; 5], "a fixed load has no normal row");
    let n = c.normal.unwrap();
    assert_eq!(n.g0, [-0.01, 0.0]);
    assert_eq!(n.fixed_load(0), None);
    assert_eq!(n.fixed_load(1), Some(12.0));

    for (text, line, words) in [
        ("eq1,mu_n,g0\n1,1,0\n", 1, "belongs to 3-D contacts"),
        ("eq1,mu_n,mu\n1,1,0.3\n", 1, "not both"),
        ("eq1,rho\n1,1\n", 1, "give `mu`"),
        ("eq1,mu\n1,0.3\n", 1, "`eqn`"),
        (
            "eq1,eqn,mu\n1,3,-0.3\n",
            2,
            "friction coefficient must be >= 0",
        ),
        ("eq1,eqn,mu,k_n\n1,3,0.3,\n", 2, "`k_n` is empty"),
        ("eq1,eqn,mu,k_n\n1,3,0.3,0\n", 2, "stiffness must be > 0"),
        ("eq1,eqn,mu,load\n1,3,0.3,-2\n", 2, "must be >= 0"),
        ("eq1,eqn,mu,g0\n1,3,0.3,nan\n", 2, "not finite"),
        ("eq1,eqn,mu,eqn_sign\n1,3,0.3,2\n", 2, "eqn_sign = 2"),
        ("eq1,eqn,mu\n1,9,0.3\n", 2, "out of range"),
        ("eq1,eqn,othern,mu\n1,3,3,0.3\n", 2, "own equation 3"),
        ("eq1,eqn,mu\n3,3,0.3\n", 2, "also `eq1`"),
        (
            "eq1,eqn,othern,mu,load\n1,,2,0.3,5\n",
            2,
            "`othern` without `eqn`",
        ),
    ] {
        let p = d.file("bad.csv", text);
        at(read_contacts(&p, &sp5).unwrap_err(), "bad.csv", line, words);
    }
}

/// Node style: the normal reads `n . (u_node - u_other)`; a 3-D contact needs a normal; a
/// tangent not orthogonal to it is refused.
#[test]
fn three_d_contacts_by_node_check_the_frame() {
    let d = Dir::new();
    let map = map();
    let p = d.file("c.csv", "node,other,mu,g0,nx,ny,nz\n11,7,0.2,-1e-3,0,0,1\n");
    let c = read_contacts(&p, &space(&map)).unwrap().contacts;
    let n = c.normal.as_ref().unwrap();
    let Kinematics::Dofs { dofs, other } = &n.kinematics else {
        panic!("{:?}", n.kinematics)
    };
    // Node 11's z is equation 7, node 7's z is equation 2.
    assert_eq!(
        (dofs.as_slice(), other.as_ref().unwrap().as_slice()),
        (&[7][..], &[Some(2)][..])
    );
    assert_eq!(c.dim, 2);
    for (text, words) in [
        (
            "node,mu,t1x,t1y,t1z\n7,0.2,1,0,0\n",
            "need the contact normal",
        ),
        (
            "node,mu,nx,ny,nz,t1x,t1y,t1z\n7,0.2,0,0,1,0.1,0,1\n",
            "not orthogonal",
        ),
        (
            "node,mu_n,nx,ny,nz,t1x,t1y,t1z\n7,2,0,0,1,1,0,0\n",
            "not both",
        ),
        ("node,mu,eqn,nx,ny,nz\n7,0.2,3,0,0,1\n", "equation-style"),
    ] {
        let p = d.file("bad.csv", text);
        let e = read_contacts(&p, &space(&map)).unwrap_err();
        assert!(e.to_string().contains(words), "expected `{words}` in: {e}");
    }
    // Node 9 has no z: a normal along z reads no free DOF against ground.
    let p = d.file("c3.csv", "node,mu,nx,ny,nz\n9,0.2,0,0,1\n");
    at(
        read_contacts(&p, &space(&map)).unwrap_err(),
        "c3.csv",
        2,
        "the normal of this contact reads no free DOF",
    );
}

/// An inter-sector 3-D contact: the next sector's DOFs that the normal names are appended
/// and paired like the tangential ones.
#[test]
fn three_d_contact_on_the_next_sector() {
    let d = Dir::new();
    let ex = ewr_model::examples::bladed_disk(&Default::default());
    let files = MtxFiles {
        mass: d.file("m.mtx", &mtx_block(&ex.mass, 6)),
        stiffness: d.file("k.mtx", &mtx_block(&ex.stiffness, 6)),
        ..Default::default()
    };
    let opts = ImportOptions {
        contacts: Some(d.file(
            "c.csv",
            "eq1,other1,eqn,othern,other_sector,mu,g0\n4,4,3,3,next,0.3,-0.001\n",
        )),
        cyclic: Some(ewr_import::CyclicOptions {
            sectors: 12,
            engine_order: 3,
            boundary: Some(d.file("b.csv", "left_eq,right_eq\n1,5\n2,6\n")),
        }),
        ..Default::default()
    };
    let m = ewr_import::import_mtx(&files, &opts).unwrap().model;
    assert_eq!(m.n_dofs(), 8);
    let cy = m.cyclic.as_ref().unwrap();
    // Equations 3 and 4 (DOFs 2, 3) of the next sector become DOFs 6 and 7.
    assert_eq!((&cy.left[2..], &cy.right[2..]), (&[2, 3][..], &[6, 7][..]));
    let w = dense(&m.contacts.contact_matrix(8).unwrap());
    assert_eq!(w[0], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0]);
    assert_eq!(w[1], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0, 0.0]);
}
