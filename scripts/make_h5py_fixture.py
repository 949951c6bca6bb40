#!/usr/bin/env python3
"""Writes tests/fixtures/h5py-two-mass-damper.h5: the two-mass-damper example of seed 000
section 5, written the way a user would from Python with h5py and scipy, using on purpose the
variants the ewr reader must accept (so that CI needs no Python, the file is committed):

- /K: CSR, only the upper triangle (attribute symmetric = "upper"), int32 indices;
- /M: COO group (row, col, data);
- /C: full CSR with both triangles, encoding-type stored as a numpy fixed-length byte string;
- /damping: Rayleigh alpha as a group *attribute*, beta as a scalar dataset;
- /contacts/dofs: int32 2-D array; dof_labels as numpy fixed-length bytes.

Usage: python3 scripts/make_h5py_fixture.py [OUTPUT]   (needs: pip install h5py scipy)
"""
import sys

import h5py
import numpy as np
import scipy.sparse as sp

out = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/h5py-two-mass-damper.h5"

# DOFs: u11, u12 (mass 1), u21, u22 (mass 2, the damper). Seed 000 eq. 34-35.
k11, k12, k21, k22 = 1.0, 2.0, 1.0, 2.0
c = 0.02
K = np.array([
    [k11 + k21, 0, -k21, 0],
    [0, k12 + k22, 0, -k22],
    [-k21, 0, k21, 0],
    [0, -k22, 0, k22],
])
C = np.array([
    [2 * c, 0, -c, 0],
    [0, 2 * c, 0, -c],
    [-c, 0, c, 0],
    [0, -c, 0, c],
])
M = np.eye(4)


def csr_group(f, name, a, upper=False, bytes_encoding=False):
    m = sp.csr_matrix(np.triu(a) if upper else a)
    g = f.create_group(name)
    g["data"] = m.data
    g["indices"] = m.indices.astype(np.int32)
    g["indptr"] = m.indptr.astype(np.int32)
    g.attrs["shape"] = np.array(a.shape, dtype=np.int64)
    g.attrs["encoding-type"] = np.bytes_("csr_matrix") if bytes_encoding else "csr_matrix"
    g.attrs["encoding-version"] = "0.1.0"
    if upper:
        g.attrs["symmetric"] = "upper"


with h5py.File(out, "w") as f:
    f.attrs["format"] = "ewr-model"
    f.attrs["version"] = 1
    f.attrs["title"] = "two-mass-damper written by h5py"
    f.attrs["units"] = "consistent, non-dimensional"
    csr_group(f, "K", K, upper=True)
    csr_group(f, "C", C, bytes_encoding=True)
    coo = sp.coo_matrix(M)
    g = f.create_group("M")
    g["row"] = coo.row.astype(np.int64)
    g["col"] = coo.col.astype(np.int64)
    g["data"] = coo.data
    g.attrs["shape"] = [4, 4]
    g.attrs["encoding-type"] = "coo_matrix"
    d = f.create_group("damping")
    d.attrs["alpha"] = 0.001
    d["beta"] = 0.0
    ct = f.create_group("contacts")
    ct.attrs["dim"] = 2
    ct["mu_n"] = np.array([8.0])
    ct["dofs"] = np.array([[2, 3]], dtype=np.int32)
    fo = f.create_group("forcing")
    fo["dof"] = np.array([0, 1])
    fo["harmonic"] = np.array([1, 1])
    fo["cos"] = np.array([20.0, 20.0])
    fo["sin"] = np.array([0.0, 0.0])
    f["dof_labels"] = np.array([b"u11", b"u12", b"u21", b"u22"])
print(f"wrote {out}")
