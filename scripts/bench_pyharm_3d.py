#!/usr/bin/env python3
"""ewr against pyHarm (PyPI `pyHarm-os`) on the 3-D contact model blade-damper-blade-3d.

Runs, one process at a time, on the same model file:
  * `ewr simulate` at the check frequencies (the independent time-domain reference; first
    order in dt, so it is run again at dt / 2 and extrapolated to dt -> 0),
  * `ewr solve` at the check frequencies (all:H, and all:63 to show the truncation error),
    and `ewr frc` over the band (all:H, fixed step, sequential),
  * pyHarm's frequency response (nh = H, harmonic 0 included, arclength continuation), each
    curve in its own Python process, of the same system built from the HDF5 file: the
    substructure from M, K, C (DOFs grouped into pyHarm nodes found from the contact rows),
    the forcing terms, and one pyHarm `Penalty3D` element per contact (normal penalty k_n
    plus a Jenkins element k_t / mu), in two variants:
      stock    pyHarm's Penalty3D as shipped, driven by the preload N0 = -k_n g0 plus the
               static load N0 W_N^T that turns its "relative to the preload" normal force
               into lambda = N0 + k_n * compression (exact while the contact is closed;
               when it opens, the element keeps the preload force and a friction bound
               mu N0, see docs/performance.md);
      liftoff  the same element with the normal force max(N0 - k_n * opening, 0) and the
               friction bound mu * lambda(t), i.e. exactly the ewr model (a subclass defined
               here, registered as a pyHarm plugin; it reuses pyHarm's Jenkins return map),
and prints tables: points, wall time per process, and the peak of the monitored DOF,
max_t |x(t)|, at each check frequency with its deviation from `ewr simulate` (and from its
dt -> 0 extrapolation); curves are interpolated linearly in w, `ewr solve` gives single
points. Then the agreement of the whole curves.

Usage (not part of CI; needs a release build and a Python with pyHarm):

    cargo build --release -p ewr-cli
    python3 -m venv target/pyharm-venv && target/pyharm-venv/bin/pip install pyHarm-os h5py numpy scipy
    target/pyharm-venv/bin/python scripts/bench_pyharm_3d.py [--ewr target/release/ewr]
        [--model models/blade-damper-blade-3d.h5] [--omega-start 1000] [--omega-end 1600]
        [--step 1.2] [--harmonics 15] [--samples 128] [--check 1240,1280,1350] [--dof x2]
        [--variants stock,liftoff] [--pyharm-minutes 15] [--blas-threads 1] [--out DIR]
        [--no-richardson] [--high-harmonics 63]

--blas-threads N sets OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS for pyHarm
(0 leaves the environment alone): on a loaded 2-core machine multi-threaded OpenBLAS spins on
pyHarm's 249 x 249 QR and determinants and makes it several times slower. --out DIR also
writes every curve (w, peak of the monitored DOF) as CSV.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ewr", default=os.path.join(ROOT, "target", "release", "ewr"),
                   help="the ewr binary (default: target/release/ewr)")
    p.add_argument("--model", default=os.path.join(ROOT, "models", "blade-damper-blade-3d.h5"))
    p.add_argument("--omega-start", type=float, default=1000.0)
    p.add_argument("--omega-end", type=float, default=1600.0)
    p.add_argument("--step", type=float, default=1.2,
                   help="ewr's frequency step; pyHarm's initial and largest arclength step")
    p.add_argument("--harmonics", type=int, default=15, help="H: ewr all:H, pyHarm nh = H")
    p.add_argument("--samples", type=int, default=128, help="time samples per period (both)")
    p.add_argument("--check", default="1240,1280,1350", help="check frequencies (rad/s)")
    p.add_argument("--dof", default=None,
                   help="monitored DOF, index or label prefix (default: the first forced DOF)")
    p.add_argument("--variants", default="stock,liftoff",
                   help="pyHarm element variants to run: stock, liftoff (comma-separated, or none)")
    p.add_argument("--pyharm-minutes", type=float, default=15.0,
                   help="time budget of each pyHarm curve (its stop criterion's timeout)")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="OpenBLAS/OpenMP/MKL threads for pyHarm (0: leave the environment)")
    p.add_argument("--no-richardson", dest="richardson", action="store_false",
                   help="skip the second simulate run at dt / 2 (the dt -> 0 extrapolation)")
    p.add_argument("--high-harmonics", type=int, default=63,
                   help="also `ewr solve` the check points at all:N (0 to skip)")
    p.add_argument("--out", default=None, help="write the curves as CSV into this folder")
    p.add_argument("--pyharm-child", default=None, help=argparse.SUPPRESS)
    return p.parse_args()


ARGS = parse_args()
if ARGS.blas_threads > 0:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.blas_threads)

import h5py  # noqa: E402  (after the thread settings)
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402


# ----------------------------------------------------------------------------------------------
# The ewr model file (docs/model-format.md)

def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def read_matrix(node, n=None):
    """A sparse group (csr/csc/coo, optionally one stored triangle) or a dense dataset."""
    if isinstance(node, h5py.Dataset):
        return np.array(node[()], dtype=float)
    enc = _text(node.attrs["encoding-type"])
    shape = tuple(int(s) for s in node.attrs["shape"])
    if enc == "csr_matrix":
        a = sp.csr_matrix((node["data"][()], node["indices"][()], node["indptr"][()]), shape=shape)
    elif enc == "csc_matrix":
        a = sp.csc_matrix((node["data"][()], node["indices"][()], node["indptr"][()]), shape=shape)
    elif enc == "coo_matrix":
        a = sp.coo_matrix((node["data"][()], (node["row"][()], node["col"][()])), shape=shape)
    else:
        raise ValueError(f"{node.name}: unknown encoding-type {enc}")
    a = a.toarray()  # duplicates add up, as in ewr
    sym = _text(node.attrs.get("symmetric", ""))
    if sym == "upper":
        a = np.triu(a) + np.triu(a, 1).T
    elif sym == "lower":
        a = np.tril(a) + np.tril(a, -1).T
    return a


def _scalar(g, name, default=0.0):
    if name in g:
        return float(g[name][()])
    if name in g.attrs:
        return float(g.attrs[name])
    return default


def _dof_map(g, nc, n, rows_per_contact):
    """`dofs` / `dofs_other` (+1 / -1 entries) as a dense map."""
    d = np.array(g["dofs"][()]).reshape(nc, rows_per_contact)
    o = (np.array(g["dofs_other"][()]).reshape(nc, rows_per_contact)
         if "dofs_other" in g else -np.ones_like(d))
    w = np.zeros((nc * rows_per_contact, n))
    for c in range(nc):
        for k in range(rows_per_contact):
            w[c * rows_per_contact + k, d[c, k]] += 1.0
            if o[c, k] >= 0:
                w[c * rows_per_contact + k, o[c, k]] -= 1.0
    return w


def read_model(path):
    with h5py.File(path, "r") as f:
        K = read_matrix(f["K"])
        n = K.shape[0]
        M = read_matrix(f["M"])
        C = read_matrix(f["C"]) if "C" in f else np.zeros((n, n))
        if "damping" in f:
            d = f["damping"]
            C = C + _scalar(d, "alpha") * M + _scalar(d, "beta") * K
            if _scalar(d, "eta") != 0.0 or "zeta" in d:
                raise SystemExit("hysteretic or modal damping: not handled by this benchmark")
        labels = ([_text(s) for s in f["dof_labels"][()]] if "dof_labels" in f
                  else [f"u{i}" for i in range(n)])
        c = f["contacts"]
        dim = int(c.attrs["dim"])
        if "normal" not in c:
            raise SystemExit("the model has no 3-D contacts (/contacts/normal)")
        nrm = c["normal"]
        mu = np.array(nrm["mu"][()], dtype=float)
        nc = len(mu)
        W = read_matrix(c["W"]) if "W" in c else _dof_map(c, nc, n, dim)
        WN = read_matrix(nrm["W"]) if "W" in nrm else _dof_map(nrm, nc, n, 1)
        g0 = np.array(nrm["g0"][()], dtype=float) if "g0" in nrm else np.zeros(nc)
        if "k_n" not in nrm or "k_t" not in c:
            raise SystemExit("pyHarm's Penalty3D needs both contact stiffnesses k_n and k_t")
        kn = np.array(nrm["k_n"][()], dtype=float)
        kt = np.array(c["k_t"][()], dtype=float)
        fo = f["forcing"]
        forcing = list(zip(fo["dof"][()].tolist(), fo["harmonic"][()].tolist(),
                           fo["cos"][()].tolist(), fo["sin"][()].tolist()))
    return dict(n=n, M=M, K=K, C=C, labels=labels, dim=dim, nc=nc, W=W, WN=WN, g0=g0, mu=mu,
                kn=kn, kt=kt, forcing=forcing)


# ----------------------------------------------------------------------------------------------
# The same system in pyHarm

def group_nodes(m):
    """pyHarm's node-to-node elements act between two nodes with the same components. Find,
    for each contact, two groups of dim + 1 DOFs on which its rows [W; W_N] are R and -R with R
    orthonormal (a rotated frame): those are the two nodes. Remaining DOFs are packed into
    nodes of the same size (padded with decoupled unit DOFs). Returns (nodes, contacts) with
    nodes a list of DOF tuples (-1 = padding) and contacts a list of
    (slave node, master node or None for ground, R with rows [normal, tangential...])."""
    import itertools
    dim, nd = m["dim"], m["dim"] + 1
    nodes, where, contacts = [], {}, []

    def node_of(dofs):
        key = tuple(dofs)
        if key[0] in where:
            k = where[key[0]]
            if tuple(nodes[k]) != key:
                raise SystemExit(f"DOFs {key} group differently in two contacts: unsupported")
            return k
        if any(d in where for d in key):
            raise SystemExit(f"DOFs {key} overlap another node: unsupported")
        nodes.append(key)
        for d in key:
            where[d] = len(nodes) - 1
        return len(nodes) - 1

    for c in range(m["nc"]):
        B = np.vstack([m["WN"][c], m["W"][c * dim:(c + 1) * dim]])
        S = [j for j in range(m["n"]) if np.any(B[:, j] != 0.0)]
        found = None
        if len(S) == nd:
            for perm in itertools.permutations(S):
                if perm[0] in where and tuple(nodes[where[perm[0]]]) != perm:
                    continue
                R = B[:, list(perm)]
                if np.allclose(R @ R.T, np.eye(nd), atol=1e-9):
                    found = (perm, None, R)
                    break
        elif len(S) == 2 * nd:
            for A in itertools.combinations(S, nd):
                rest = [j for j in S if j not in A]
                for a in itertools.permutations(A):
                    if a[0] in where and tuple(nodes[where[a[0]]]) != a:
                        continue
                    for b in itertools.permutations(rest):
                        if b[0] in where and tuple(nodes[where[b[0]]]) != b:
                            continue
                        R = B[:, list(a)]
                        if (np.allclose(B[:, list(b)], -R, atol=1e-12)
                                and np.allclose(R @ R.T, np.eye(nd), atol=1e-9)):
                            found = (a, b, R)
                            break
                    if found:
                        break
                if found:
                    break
        if not found:
            raise SystemExit(f"contact {c}: its rows are not R (u_a - u_b) with R orthonormal "
                             "on two groups of dim + 1 DOFs; pyHarm's node-to-node form needs that")
        a, b, R = found
        contacts.append((node_of(a), None if b is None else node_of(b), R))
    rest = [j for j in range(m["n"]) if j not in where]
    while rest:
        chunk = rest[:nd] + [-1] * (nd - len(rest[:nd]))
        rest = rest[nd:]
        nodes.append(tuple(chunk))
    return nodes, contacts


def make_liftoff_element():
    """Penalty3D with the normal force max(N0 - k_n * opening, 0) and the friction bound
    mu * lambda(t) (zero while open), the ewr model. Reuses pyHarm's Jenkins return map."""
    import jax
    import jax.numpy as jnp
    from pyHarm.Elements.NodeToNodeElements.Jenkins import JenkinsCorLoop_jax
    from pyHarm.Elements.NodeToNodeElements.Penalty3D import Penalty3D

    def residual(x, Pdir, Pslave, Pmaster, mu, N0, k_n, k_t, floor, DFT, DTF):
        rel = (Pslave - Pmaster) @ x
        opening = (Pdir[0] @ rel) @ DFT
        lam = jnp.maximum(N0 - k_n * opening, 0.0)  # compression
        # force on the structure W_N^T lambda; the static load N0 W_N^T is a forcing term,
        # so the element's internal force is N0 - lambda (k_n * opening while closed)
        R = (Pslave - Pmaster).T @ (Pdir[0].T @ ((N0 - lam) @ DTF))
        xt = jnp.stack([(Pdir[d] @ rel) @ DFT for d in range(1, Pdir.shape[0])])
        # floor: a bound of 1e-9 mu N0 while open keeps the return map's slip direction defined
        z = JenkinsCorLoop_jax(xt, k_t, DFT, mu * lam + floor)
        ft = k_t * (xt - z)
        for d in range(1, Pdir.shape[0]):
            R = R + (Pslave - Pmaster).T @ (Pdir[d].T @ (ft[d - 1] @ DTF))
        return R

    res = jax.jit(residual)
    jac = jax.jit(jax.jacfwd(residual))

    class Penalty3DLiftoff(Penalty3D):
        factory_keyword = "Penalty3DLiftoff"

        def _args(self, xg):
            return (xg[self.indices], self.Pdir, self.Pslave, self.Pmaster, self.mu, self.N0,
                    self.k_n, self.k_t, 1e-9 * self.mu * self.N0, self.D["ft"], self.D["tf"])

        def evalResidual(self, xg, om):
            self.R = np.asarray(res(*self._args(xg)))
            return self.R

        def _evalJaco_ana(self, xg, om):
            self.J = np.asarray(jac(*self._args(xg)))
            self.dJdom = np.zeros(len(self.indices))
            return self.J, self.dJdom

    return Penalty3DLiftoff


def pyharm_input(m, nodes, contacts, element, H, nti, w0, w1, step, minutes):
    nd = m["dim"] + 1
    n_pad = sum(1 for nd_ in nodes for d in nd_ if d < 0)
    order = [d for nd_ in nodes for d in nd_]
    N = len(order)
    Mp, Kp, Cp = np.zeros((N, N)), np.zeros((N, N)), np.zeros((N, N))
    real = [i for i, d in enumerate(order) if d >= 0]
    src = [order[i] for i in real]
    for A, Ap in ((m["M"], Mp), (m["K"], Kp), (m["C"], Cp)):
        Ap[np.ix_(real, real)] = A[np.ix_(src, src)]
    for i, d in enumerate(order):
        if d < 0:  # padding DOF: a decoupled unit oscillator, never loaded
            Mp[i, i] = Kp[i, i] = 1.0
    pos = {d: (k // nd, k % nd) for k, d in enumerate(order) if d >= 0}

    coords, conn = {}, {}
    loads = {}  # (dof, h) -> [cos, sin]
    for dof, h, a, b in m["forcing"]:
        loads.setdefault((dof, h), [0.0, 0.0])
        loads[(dof, h)][0] += a
        loads[(dof, h)][1] += b
    for c, (sl, ma, R) in enumerate(contacts):
        # pyHarm's Penalty3D wants 3 directions (normal, 2 tangential); with dim = 1 the nodes
        # have 2 components and the third direction (0, 0, 1) sees no motion
        dirs = np.zeros((3, 3))
        dirs[:nd, :nd] = R
        if nd == 2:
            dirs[2, 2] = 1.0
        coords[f"contact{c}"] = dirs.tolist()
        N0 = -m["kn"][c] * m["g0"][c]
        if N0 <= 0.0:
            raise SystemExit(f"contact {c}: g0 >= 0 (no preload); Penalty3D's N0 = 0 mode "
                             "turns friction off, so it cannot stand for this contact")
        con = {"s": [sl]} if ma is None else {"s": [sl], "INTERNAL": [ma]}
        conn[f"contact{c}"] = {"type": element, "connect": con, "dirs": [0, 1, 2],
                               "coordinatesystem": f"contact{c}", "mu": float(m["mu"][c]),
                               "N0": float(N0), "k_n": float(m["kn"][c]),
                               "k_t": float(m["kt"][c]), "g": 0.0}
        for dof in range(m["n"]):  # the static load N0 W_N^T (see the docstring)
            if m["WN"][c, dof] != 0.0:
                loads.setdefault((dof, 0), [0.0, 0.0])
                loads[(dof, 0)][0] += N0 * m["WN"][c, dof]
    for (dof, h), (a, b) in sorted(loads.items()):
        node, comp = pos[dof]
        if h == 0:
            amp, phi = a, 0.0
        else:
            amp, phi = math.hypot(a, b), math.atan2(b, a)
        if amp == 0.0:
            continue
        conn[f"load_u{dof}_h{h}"] = {"type": "GOForcing", "connect": {"s": [node]},
                                    "dirs": [comp], "amp": float(amp), "phi": float(phi),
                                    "ho": int(h), "dto": 0}
    budget = max(1, int(minutes * 60))
    hh, mm, ss = budget // 3600, (budget % 3600) // 60, budget % 60
    analysis = {"study": "frf", "puls_inf": w0, "puls_sup": w1,
                "ds0": step, "ds_max": step, "ds_min": 1e-3,
                "solver": "scipyroot", "corrector": "arc_length", "predictor": "tangent",
                "stepsizer": "acceptance", "verbose": False,
                "stopper_options": {"timeout": {"status": True,
                                                "timeout": f"00:{hh:02d}:{mm:02d}:{ss:02d}"}}}
    data = {"export": {"status": False},
            "system": {"type": "Base", "nh": H, "nti": nti},
            "coordinates": coords,
            "substructures": {"s": {"type": "substructure", "ndofs": nd,
                                    "matrix": {"M": Mp, "K": Kp, "C": Cp}}},
            "connectors": conn,
            "analysis": {"frf": analysis}}
    return data, pos, n_pad


def synth_peak(coefs, harms, ns=4096):
    """max_t |x(t)| of x(t) = sum a_h cos(h t) + b_h sin(h t) (coefs: {h: (a, b)})."""
    t = np.arange(ns) * 2 * np.pi / ns
    x = np.zeros(ns)
    for h in harms:
        a, b = coefs[h]
        x += a * np.cos(h * t) + b * np.sin(h * t)
    return float(np.max(np.abs(x)))


def run_pyharm(m, variant, dof):
    import logging
    t0 = time.perf_counter()
    from pyHarm.Maestro import Maestro
    t_import = time.perf_counter() - t0
    nodes, contacts = group_nodes(m)
    plugins = []
    element = "Penalty3D"
    if variant == "liftoff":
        cls = make_liftoff_element()
        plugins, element = [cls], cls.factory_keyword
    data, pos, n_pad = pyharm_input(m, nodes, contacts, element, ARGS.harmonics, ARGS.samples,
                                    ARGS.omega_start, ARGS.omega_end, ARGS.step,
                                    ARGS.pyharm_minutes)
    data["plugin"] = plugins
    logging.disable(logging.INFO)  # pyHarm logs every point and a banner at INFO
    try:
        t0 = time.perf_counter()
        mae = Maestro(data)
        t_build = time.perf_counter() - t0
        t0 = time.perf_counter()
        mae.operate()
        t_solve = time.perf_counter() - t0
    finally:
        logging.disable(logging.NOTSET)
    an = mae.nls["frf"]
    edf = mae.system.expl_dofs
    node, comp = pos[dof]
    rows = edf[(edf["sub"] == "s") & (edf["node_num"] == node) & (edf["dof_num"] == comp)]
    harms = sorted(set(int(h) for h in rows["harm"]))
    omega, amp = [], []
    for sol in an.SolList:
        if not sol.flag_accepted:
            continue
        x = sol.x
        coefs = {h: [0.0, 0.0] for h in harms}
        for i, r in rows.iterrows():
            coefs[int(r["harm"])][0 if r["cs"] == "c" else 1] = float(x[i])
        omega.append(float(x[-1]))
        amp.append(synth_peak(coefs, harms))
    # keep the band (the last accepted point lies just past the end)
    keep = [i for i, w in enumerate(omega) if ARGS.omega_start <= w <= ARGS.omega_end]
    first = an.SolList[0]
    return dict(
        omega=[omega[i] for i in keep], amp=[amp[i] for i in keep],
        total=len(an.SolList), accepted=sum(1 for s in an.SolList if s.flag_accepted),
        import_s=t_import, build_s=t_build, solve_s=t_solve,
        reached_end=bool(omega) and omega[-1] >= ARGS.omega_end - 1e-9,
        first_status=int(getattr(first, "status_solver", -1)),
        first_omega=float(first.x[-1]),
        first_residual=float(np.linalg.norm(first.R[:-1])),
        element=element, n_pad=n_pad, nodes=[list(map(int, nd_)) for nd_ in nodes])


def run_pyharm_process(variant):
    """One pyHarm curve in its own Python process (import, JIT and all), timed from outside.
    It runs in a scratch folder: importing pyHarm writes .pyHarm/context.json into the
    current folder (or PYHARM_CONTEXT_FILE), which must not land in the repository."""
    argv = sys.argv[1:] + ["--model", os.path.abspath(ARGS.model), "--pyharm-child", variant]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYHARM_CONTEXT_FILE=os.path.join(tmp, "context.json"))
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, os.path.abspath(__file__)] + argv, cwd=tmp,
                             env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"pyHarm ({variant}) failed:\n{out.stderr[-4000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["wall"] = wall
    return r


# ----------------------------------------------------------------------------------------------
# ewr

def ewr(args):
    t0 = time.perf_counter()
    out = subprocess.run([ARGS.ewr] + args, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode not in (0, 1):
        sys.exit(f"ewr {' '.join(args)} failed ({out.returncode}):\n{out.stderr}")
    return wall, out.returncode, out.stdout


def ewr_simulate(m, dof, w, tmp, dt=None):
    ts = os.path.join(tmp, f"sim{w}.csv")
    args = ["simulate", ARGS.model, "--omega", repr(w), "--dofs", str(dof), "--timeseries", ts,
            "--json"]
    if dt is not None:
        args += ["--dt", repr(dt)]
    wall, rc, out = ewr(args)
    info = json.loads(out)
    with open(ts) as fh:
        rows = list(csv.DictReader(fh))
    u = np.array([float(r[f"u{dof}"]) for r in rows])
    sep = [float(np.mean([float(r[f"state{c}"]) == 0.0 for r in rows]))
           for c in range(m["nc"]) if f"state{c}" in rows[0]]
    return dict(amp=float(np.max(np.abs(u))), wall=wall, steady=bool(info.get("converged")),
                periods=info.get("periods_run"), sep=sep, dt=float(info["dt"]))


def ewr_solve(dof, w, harmonics, samples, tmp):
    h5 = os.path.join(tmp, f"solve{w}.h5")
    args = ["solve", ARGS.model, "--omega", repr(w), "--harmonics", harmonics,
            "--dofs", str(dof), "-o", h5, "--json"]
    if samples:
        args += ["--samples", str(samples)]
    wall, rc, out = ewr(args)
    with h5py.File(h5, "r") as f:
        hl = [int(h) for h in f["harmonic_list"][()]]
        c = f["dof_displacement"][0]
        coefs, k = {}, 0
        for h in hl:
            if h == 0:
                coefs[h] = (c[k], 0.0)
                k += 1
            else:
                coefs[h] = (c[k], c[k + 1])
                k += 2
        sep = [float(v) for v in (f["time/state"][()] == 0).mean(axis=1)]
        conv = bool(f.attrs["converged"])
    return dict(amp=synth_peak(coefs, hl), wall=wall, converged=conv, sep=sep)


def run_ewr(m, dof, checks, tmp):
    H = f"all:{ARGS.harmonics}"
    res = {"simulate": {}, "simulate_half": {}, "solve": {}, "solve_hi": {}}
    for w in checks:
        res["simulate"][w] = ewr_simulate(m, dof, w, tmp)
        if ARGS.richardson:
            res["simulate_half"][w] = ewr_simulate(m, dof, w, tmp, res["simulate"][w]["dt"] / 2)
        res["solve"][w] = ewr_solve(dof, w, H, ARGS.samples, tmp)
        if ARGS.high_harmonics:
            res["solve_hi"][w] = ewr_solve(dof, w, f"all:{ARGS.high_harmonics}", None, tmp)
    csvf = os.path.join(tmp, "frc.csv")
    wall, rc, out = ewr(["frc", ARGS.model, "--harmonics", H, "--samples", str(ARGS.samples),
                         "--omega-start", repr(ARGS.omega_start),
                         "--omega-end", repr(ARGS.omega_end), "--step", repr(ARGS.step),
                         "--csv", csvf, "--json"])
    info = json.loads(out)
    with open(csvf) as fh:
        rows = [r for r in csv.DictReader(fh)]
    ok = [r for r in rows if r["converged"] == "1"]
    pairs = sorted((float(r["omega"]), float(r[f"peak_u{dof}"])) for r in ok)
    res["frc"] = dict(omega=[p[0] for p in pairs], amp=[p[1] for p in pairs], wall=wall,
                      points=info["points"], failed=info["failed_points"],
                      iterations=info["iterations"], kernel_s=info["elapsed_s"],
                      refine=sum(p["evaluations"] for c in info["peaks"] for p in c))
    return res


# ----------------------------------------------------------------------------------------------

def interp(omega, amp, w):
    """Linear interpolation along the curve (points in computed order); the first crossing
    of w and the number of crossings."""
    hits = []
    for i in range(len(omega) - 1):
        a, b = omega[i], omega[i + 1]
        if (a - w) * (b - w) <= 0 and a != b:
            s = (w - a) / (b - a)
            hits.append(amp[i] + s * (amp[i + 1] - amp[i]))
    return (hits[0] if hits else float("nan")), len(hits)


def curve_peak(omega, amp):
    if not amp:
        return float("nan"), float("nan")
    i = int(np.argmax(amp))
    return omega[i], amp[i]


def monitored_dof(m):
    if ARGS.dof is None:
        return int(m["forcing"][0][0])
    if ARGS.dof.isdigit():
        return int(ARGS.dof)
    return next(i for i, s in enumerate(m["labels"]) if s.split()[0] == ARGS.dof)


def main():
    if ARGS.pyharm_child:
        m = read_model(ARGS.model)
        print(json.dumps(run_pyharm(m, ARGS.pyharm_child, monitored_dof(m))))
        return
    if not os.path.exists(ARGS.ewr):
        sys.exit(f"no ewr binary at {ARGS.ewr}: cargo build --release -p ewr-cli, or --ewr PATH")
    m = read_model(ARGS.model)
    dof = monitored_dof(m)
    label = m["labels"][dof].split()[0]
    checks = [float(s) for s in ARGS.check.split(",")]
    variants = [v for v in ARGS.variants.split(",") if v and v != "none"]

    print(f"model {os.path.relpath(ARGS.model, ROOT)}: {m['n']} DOFs, {m['nc']} 3-D contacts "
          f"(dim {m['dim']}), mu {m['mu'].tolist()}, k_n {m['kn'].tolist()}, "
          f"k_t {m['kt'].tolist()}, g0 {m['g0'].tolist()}")
    print(f"band w = {ARGS.omega_start:g} .. {ARGS.omega_end:g}, step {ARGS.step:g}, "
          f"harmonics 0..{ARGS.harmonics}, {ARGS.samples} samples; monitored DOF {dof} "
          f"({label}), amplitude = max_t |{label}(t)|")
    print(f"BLAS threads for pyHarm: {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}; "
          f"load average at start {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores",
          flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        e = run_ewr(m, dof, checks, tmp)
    print(f"ewr done (load average {os.getloadavg()[0]:.2f})", flush=True)
    ph = {}
    for v in variants:
        ph[v] = run_pyharm_process(v)
        print(f"pyHarm {v} done (load average {os.getloadavg()[0]:.2f})", flush=True)

    ref = {w: e["simulate"][w]["amp"] for w in checks}
    rows = []  # (tool, points, wall, per point, {w: amplitude})
    sim_wall = sum(e["simulate"][w]["wall"] for w in checks)
    rows.append(("ewr simulate (reference)", f"{len(checks)}", sim_wall,
                 f"{sim_wall / len(checks):.2f} s", ref))
    extrap = None
    if ARGS.richardson:
        half = {w: e["simulate_half"][w]["amp"] for w in checks}
        wall = sum(e["simulate_half"][w]["wall"] for w in checks)
        rows.append(("ewr simulate, dt / 2", f"{len(checks)}", wall,
                     f"{wall / len(checks):.2f} s", half))
        extrap = {w: 2 * half[w] - ref[w] for w in checks}
        rows.append(("simulate extrapolated to dt -> 0", "", float("nan"), "", extrap))
    sol_wall = sum(e["solve"][w]["wall"] for w in checks)
    rows.append((f"ewr solve all:{ARGS.harmonics} (single points)", f"{len(checks)}", sol_wall,
                 f"{1000 * sol_wall / len(checks):.0f} ms",
                 {w: e["solve"][w]["amp"] for w in checks}))
    if ARGS.high_harmonics:
        wall = sum(e["solve_hi"][w]["wall"] for w in checks)
        rows.append((f"ewr solve all:{ARGS.high_harmonics} (single points)", f"{len(checks)}",
                     wall, f"{1000 * wall / len(checks):.0f} ms",
                     {w: e["solve_hi"][w]["amp"] for w in checks}))
    fr = e["frc"]
    rows.append((f"ewr frc all:{ARGS.harmonics} (interpolated)", f"{fr['points']}", fr["wall"],
                 f"{1000 * fr['wall'] / fr['points']:.2f} ms",
                 {w: interp(fr["omega"], fr["amp"], w)[0] for w in checks}))
    for v, r in ph.items():
        name = {"stock": "pyHarm Penalty3D, stock", "liftoff": "pyHarm Penalty3D, lift-off fixed"}[v]
        n_pts = len(r["omega"])
        rows.append((f"{name} nh={ARGS.harmonics} (interpolated)",
                     f"{n_pts}" + ("" if r["reached_end"] else " (stopped)"),
                     r["wall"], f"{1000 * r['wall'] / n_pts:.0f} ms" if n_pts else "-",
                     {w: interp(r["omega"], r["amp"], w)[0] for w in checks}))

    def table(against, what, with_times):
        head = ["tool"] + (["points", "wall s", "per point"] if with_times else [])
        for w in checks:
            head += [f"{label} @ {w:g}", what]
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        for tool, pts, wall, per, amps in rows:
            cells = [tool] + ([pts, "" if math.isnan(wall) else f"{wall:.2f}", per]
                              if with_times else [])
            for w in checks:
                a = amps.get(w, float("nan"))
                cells += (["-", "-"] if math.isnan(a) else
                          [f"{a:.4e}", f"{100 * (a - against[w]) / against[w]:+.2f} %"])
            print("| " + " | ".join(cells) + " |")

    print()
    table(ref, "vs simulate", True)
    if extrap:
        print()
        print("Deviation from simulate extrapolated to dt -> 0 (2 a(dt/2) - a(dt), first order):")
        print()
        table(extrap, "vs dt -> 0", False)

    print()
    print("Details:")
    for w in checks:
        s, so = e["simulate"][w], e["solve"][w]
        print(f"  w = {w:g}: simulate {'steady' if s['steady'] else 'NOT steady'} after "
              f"{s['periods']} periods, separated fraction per contact "
              f"{[round(x, 3) for x in s['sep']]} (ewr solve: {[round(x, 3) for x in so['sep']]}"
              f"{'' if so['converged'] else ', NOT converged'})")
    wpk, apk = curve_peak(fr["omega"], fr["amp"])
    print(f"  ewr frc: {fr['points']} points, {fr['failed']} not converged, "
          f"{fr['iterations']} Newton iterations, kernel {fr['kernel_s']:.3f} s of "
          f"{fr['wall']:.3f} s wall (includes {fr['refine']} peak-refinement solves); "
          f"curve maximum {apk:.4e} at w = {wpk:.1f}")
    for v, r in ph.items():
        wpk, apk = curve_peak(r["omega"], r["amp"])
        crossings = {w: interp(r["omega"], r["amp"], w)[1] for w in checks}
        print(f"  pyHarm {v} ({r['element']}): {r['total']} solutions, {r['accepted']} accepted, "
              f"{r['total'] - r['accepted']} rejected (step halved); process wall {r['wall']:.1f} s"
              f" (import {r['import_s']:.1f}, build {r['build_s']:.1f}, FRC {r['solve_s']:.1f} "
              f"with JIT compilation); first point at w = {r['first_omega']:.1f}: hybr status "
              f"{r['first_status']}{' (converged)' if r['first_status'] == 1 else ' (NOT converged, kept: pyHarm accepts any first point)'}, "
              f"|R| = {r['first_residual']:.2e}; curve maximum {apk:.4e} at w = {wpk:.1f}; "
              f"crossings of the check frequencies {crossings}"
              + ("" if r["reached_end"] else "; STOPPED before the end of the band"))
        # the whole curve: pyHarm's interpolated at ewr's frequencies where both exist
        if len(r["omega"]) > 1:
            order = np.argsort(r["omega"])
            po, pa = np.array(r["omega"])[order], np.array(r["amp"])[order]
            eo, ea = np.array(fr["omega"]), np.array(fr["amp"])
            inside = (eo >= po[0]) & (eo <= po[-1])
            d = ea[inside] / np.interp(eo[inside], po, pa) - 1
            if d.size:
                k = int(np.argmax(np.abs(d)))
                print(f"    ewr frc / pyHarm {v} - 1 over w = {eo[inside][0]:g} .. "
                      f"{eo[inside][-1]:g} ({d.size} points): median |.| "
                      f"{100 * np.median(np.abs(d)):.2f} %, largest {100 * d[k]:+.2f} % at w = "
                      f"{eo[inside][k]:g}, within 1 %: {100 * np.mean(np.abs(d) <= 0.01):.0f} % "
                      "of the points")
    if ph:
        r = next(iter(ph.values()))
        print(f"  pyHarm settings: nh = {ARGS.harmonics} (0..{ARGS.harmonics}), nti = "
              f"{ARGS.samples}, solver scipyroot (hybr), predictor tangent, corrector "
              f"arc_length, stepsizer acceptance, ds0 = ds_max = {ARGS.step:g}, ds_min = 1e-3; "
              f"nodes {r['nodes']} (padding DOFs {r['n_pad']})")

    if ARGS.out:
        os.makedirs(ARGS.out, exist_ok=True)
        curves = {"ewr_frc": (fr["omega"], fr["amp"])}
        curves.update({f"pyharm_{v}": (r["omega"], r["amp"]) for v, r in ph.items()})
        for name, (om, am) in curves.items():
            with open(os.path.join(ARGS.out, f"{name}.csv"), "w") as fh:
                fh.write(f"omega,peak_{label}\n")
                for a, b in zip(om, am):
                    fh.write(f"{a!r},{b!r}\n")


if __name__ == "__main__":
    main()
