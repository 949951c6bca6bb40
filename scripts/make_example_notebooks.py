#!/usr/bin/env python3
"""Writes the example notebooks in examples/ (without outputs) from the cells below.

Edit the cells here, not the .ipynb files, then run (needs nbformat, which
`bash scripts/test-notebooks.sh` installs into target/pyenv):

    target/pyenv/bin/python scripts/make_example_notebooks.py

and `bash scripts/test-notebooks.sh` to execute them. Cell ids are fixed, so regenerating
unchanged cells gives the same files.
"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# Every notebook starts with this cell: it finds the repository (the folder holding models/)
# from the notebook's folder, so the notebooks run from examples/ or from the root.
FIND_ROOT = """\
from pathlib import Path

ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "models").is_dir())
MODELS = ROOT / "models\""""


def md(text):
    return ("md", text)


def code(text):
    return ("code", text)


FIG5 = [
    md(
        """\
# Seed 000, Fig. 5: the one-mass oscillator with 2-D friction

Frequency response curves of the one-mass oscillator of Hashemi, Pierre & Legrand (JSD 2025, Fig. 5)
for five friction bounds `mu N` = 0, 5, 8, 10, 12: the Python version of the README's main
command

    ewr frc models/oscillator-2d.h5 --omega-start 0.05 --omega-end 1.5 --step 0.005 \\
        --mu-n 0,5,8,10,12 --csv out/frc.csv --plot out/frc.png

Runs in a few seconds."""
    ),
    md("The imports, and the repository's `models/` folder found from the notebook's folder."),
    code(
        FIND_ROOT
        + """

import time

import matplotlib.pyplot as plt
import numpy as np

import ewr"""
    ),
    md(
        "The shipped model: one unit mass in the plane (DOFs `u1`, `u2`, springs 1 and 2, "
        "dampers 0.01), a 2-D friction contact to ground and the forcing `10 cos(w t)` in "
        "both directions; its natural frequencies are 1 and sqrt(2)."
    ),
    code(
        """\
m = ewr.Model.read(MODELS / "oscillator-2d.h5")
print(f"{m.n_dofs} DOFs {m.dof_labels}, {m.n_contacts} contact of dim {m.contact_dim}, mu N = {m.mu_n}")
print("forcing (dof, harmonic, cos, sin):", m.forcing)
print("natural frequencies without friction:", np.round(m.natural_frequencies(), 6))"""
    ),
    md(
        "The five curves from 0.05 to 1.5 in steps of 0.005 (291 points each, the default "
        "harmonics `odd:59`), computed in parallel over one condensation as `--mu-n` does."
    ),
    code(
        """\
loads = [0, 5, 8, 10, 12]
t0 = time.perf_counter()
curves = m.frc(0.05, 1.5, 0.005, mu_n=loads)
print(f"{len(curves)} curves in {time.perf_counter() - t0:.1f} s")
for c in curves:
    top = max(c.peaks, key=lambda p: p["amplitude"])
    print(f"mu N = {c.mu_n:4g}: {len(c)} points, all converged: {bool(c.converged.all())}, "
          f"highest peak {top['amplitude']:8.3f} at w = {top['omega']:.4f}")"""
    ),
    md(
        "Fig. 5: the amplitude `max_t ||u(t)||` against the forcing frequency, on a log scale "
        "since friction lowers the linear resonances (`mu N = 0`) by two orders of magnitude."
    ),
    code(
        """\
fig, ax = plt.subplots(figsize=(8, 5))
for c in curves:
    ax.semilogy(c.omega, c.amplitude, label=f"$\\\\mu N$ = {c.mu_n:g}")
ax.set_xlabel(r"$\\omega$")
ax.set_ylabel(r"$\\max_t \\|u(t)\\|$")
ax.set_title("oscillator-2d, seed 000 Fig. 5")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
plt.show()"""
    ),
    md(
        "The fraction of the period the contact sticks along each curve: part of every period "
        "at low frequency, none near the resonances up to `mu N = 10`, while at `mu N = 12` "
        "it sticks again above `w = 1`."
    ),
    code(
        """\
fig, ax = plt.subplots(figsize=(8, 3))
for c in curves[1:]:
    ax.plot(c.omega, c.stick_fraction[:, 0], label=f"$\\\\mu N$ = {c.mu_n:g}")
ax.set_xlabel(r"$\\omega$")
ax.set_ylabel("stick fraction")
ax.legend()
plt.show()"""
    ),
    md(
        "One point in detail, `w = 0.17` at `mu N = 8` (the paper's Fig. 9): the displacements "
        "and the friction force over one period, with the stick intervals shaded."
    ),
    code(
        """\
s = m.solve(0.17, harmonics="odd:59")
t, u = s.dof_history()
print(f"converged: {s.converged}, stick fraction {s.stick_fraction[0]:.3f}, "
      f"dissipated energy per cycle {s.dissipated_energy[0]:.3f}")
fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(8, 5))
a1.plot(t, u[0], label="$u_1$")
a1.plot(t, u[1], label="$u_2$")
a2.plot(s.time, s.friction_force[0, 0], label="$r_1$")
a2.plot(s.time, s.friction_force[0, 1], label="$r_2$")
for a in (a1, a2):
    a.fill_between(s.time, 0, 1, where=s.stick[0], color="grey", alpha=0.2,
                   transform=a.get_xaxis_transform(), label="stick")
    a.legend(loc="upper right")
a2.set_xlabel("t")
plt.show()"""
    ),
    md(
        "The columns of `ewr frc --csv` for one curve, as numpy arrays "
        "(`pandas.DataFrame(curve.table())` makes a data frame of them)."
    ),
    code(
        """\
table = curves[2].table()
print(list(table))
print({k: np.round(v[:3], 4) for k, v in table.items() if k in ("omega", "amp_norm", "stick0")})"""
    ),
]


DAMPER3D = [
    md(
        """\
# A 3-D friction damper built from numpy arrays

A blade mass (DOFs `x1 y1 z1`) carries a damper mass (`x2 y2 z2`) on springs; the damper is
pressed against the ground (a platform) by a preload and rubs on it in `x` and `y`, while the
normal load follows the vibration in `z`: a 3-D contact (two tangential directions, a
unilateral normal direction with contact stiffness, friction coefficient `mu`). We compute
the blade's frequency response for three preloads with a progress bar and the stability of
every point. About 10 s."""
    ),
    md("The imports."),
    code(
        """\
import time

import matplotlib.pyplot as plt
import numpy as np

import ewr"""
    ),
    md(
        "The structure: mass, stiffness and damping matrices (`C = 0.01 K`), blade springs to "
        "ground and blade-damper springs in each direction."
    ),
    code(
        """\
labels = ["x1", "y1", "z1", "x2", "y2", "z2"]
m_blade, m_damper = 1.0, 0.2
k_blade = np.array([1.0, 2.0, 4.0])   # blade to ground, x y z
k_link = np.array([1.0, 1.0, 2.0])    # blade to damper, x y z
M = np.diag([m_blade] * 3 + [m_damper] * 3)
K = np.zeros((6, 6))
for d in range(3):
    b, dd = d, d + 3
    K[b, b] += k_blade[d] + k_link[d]
    K[dd, dd] += k_link[d]
    K[b, dd] -= k_link[d]
    K[dd, b] -= k_link[d]
C = 0.01 * K
print(K)"""
    ),
    md(
        "The contact (docs/contact-3d.md): tangential DOFs `x2 y2` against ground, normal DOF "
        "`z2` with gap `g = g0 + z2`; the interference `g0 < 0` is chosen so the normal load at "
        "rest is the preload `N0` (the `z` springs and the contact stiffness `k_n` in series)."
    ),
    code(
        """\
mu, k_n = 0.5, 50.0
k_z = 1.0 / (1.0 / k_blade[2] + 1.0 / k_link[2])   # what holds the damper in z
forcing = [(0, 1, 2.0), (1, 1, 2.0), (2, 1, 1.0)]  # (dof, harmonic, cos): blade x y z


def damper_model(N0):
    g0 = -N0 * (1.0 / k_z + 1.0 / k_n)
    contacts = {
        "dim": 2,
        "dofs": [[3, 4]],
        "normal": {"dofs": [5], "g0": [g0], "mu": [mu], "k_n": [k_n]},
    }
    return ewr.Model(M, K, C, contacts=contacts, forcing=forcing, dof_labels=labels,
                     title=f"3-D damper, preload {N0}")


model = damper_model(5.0)
print(f"{model.n_dofs} DOFs, {model.n_contacts} contact of dim {model.contact_dim}, "
      f"normal direction: {model.has_normal}")
print("natural frequencies, contact free: ", np.round(model.natural_frequencies(), 3))
print("natural frequencies, contact stuck:", np.round(model.natural_frequencies(stuck=True), 3))"""
    ),
    md(
        "One periodic solution at `w = 1`: the preload lives in harmonic 0, so 3-D contacts "
        "need a full harmonic set `all:H` (here `all:7`, enough for this smooth response)."
    ),
    code(
        """\
s = model.solve(1.0, harmonics="all:7")
print(f"converged {s.converged}, stick fraction {s.stick_fraction[0]:.2f}, "
      f"normal load {s.normal_force.min():.2f} .. {s.normal_force.max():.2f} (preload 5)")"""
    ),
    md(
        "The blade's response (amplitude about the mean, `amplitude=\"dynamic\"`) from 0.5 to "
        "2.0 for three preloads, each with a tqdm progress bar (`ewr.tqdm_progress`) and the "
        "Floquet stability of every point (`stability=True`)."
    ),
    code(
        """\
preloads = [2.0, 5.0, 20.0]
w0, w1, step = 0.5, 2.0, 0.01
n_points = int(round((w1 - w0) / step)) + 1
curves = {}
t0 = time.perf_counter()
for N0 in preloads:
    with ewr.tqdm_progress(n_points, desc=f"N0 = {N0:g}") as bar:
        curves[N0] = damper_model(N0).frc(
            w0, w1, step, harmonics="all:7", dofs=["x1", "y1", "z1"],
            amplitude="dynamic", stability=True, progress=bar)
print(f"{len(curves)} curves in {time.perf_counter() - t0:.1f} s")
for N0, c in curves.items():
    stable = {1: "stable", 0: "unstable", -1: "not classified"}
    counts = {stable[k]: int((c.stable == k).sum()) for k in (1, 0, -1) if (c.stable == k).any()}
    top = max(c.peaks, key=lambda p: p["amplitude"])
    print(f"N0 = {N0:4g}: {len(c)} points, converged {int(c.converged.sum())}, {counts}, "
          f"largest multiplier {np.nanmax(c.max_multiplier):.3f}, "
          f"peak {top['amplitude']:.3f} at w = {top['omega']:.3f}")"""
    ),
    md(
        "The figure: blade amplitude (unstable points, if any, marked with crosses) and the "
        "range of the normal load over each period."
    ),
    code(
        """\
fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(8, 7))
for N0, c in curves.items():
    (line,) = a1.semilogy(c.omega, c.amplitude, label=f"$N_0$ = {N0:g}")
    bad = c.stable == 0
    a1.plot(c.omega[bad], c.amplitude[bad], "x", color=line.get_color())
    lam = [c[i].normal_force[0] for i in range(len(c))]
    a2.fill_between(c.omega, [l.min() for l in lam], [l.max() for l in lam],
                    color=line.get_color(), alpha=0.4, label=f"$N_0$ = {N0:g}")
a1.set_ylabel("blade amplitude (dynamic)")
a1.legend()
a2.set_ylabel(r"normal load $\\lambda(t)$, min .. max")
a2.set_xlabel(r"$\\omega$")
a2.legend()
plt.show()"""
    ),
    md(
        "The highest point of the middle preload solved again with `all:31`: the amplitude "
        "moves by a fraction of a percent (so `all:7` was enough for the curves), and the "
        "friction force `|r(t)|` follows the Coulomb bound `mu lambda(t)`, which moves with "
        "the normal load, more closely (the truncated series rings where stick and slip "
        "alternate)."
    ),
    code(
        """\
c = curves[5.0]
i = int(np.argmax(c.amplitude))
fig, ax = plt.subplots(figsize=(8, 3.5))
for H in ["all:7", "all:31"]:
    s = model.solve(c.omega[i], harmonics=H, dofs=["x1", "y1", "z1"], amplitude="dynamic")
    r = np.linalg.norm(s.friction_force[0], axis=0)
    bound = mu * s.normal_force[0]
    print(f"{H:>6}: w = {s.omega:.3f}, amplitude {s.amplitude:.4f}, stick fraction "
          f"{s.stick_fraction[0]:.2f}, largest |r| - mu lambda {np.max(r - bound):.3f}")
    ax.plot(s.time, r, label=f"$|r(t)|$, {H}")
ax.plot(s.time, bound, "k--", label=r"$\\mu \\lambda(t)$, all:31")
ax.set_xlabel("t")
ax.legend()
plt.show()"""
    ),
]


STUDY = [
    md(
        """\
# A friction damper study: the blade's peak against the damper's mu N and mass

`ewr.Study` runs a parameter study as `ewr study` does (docs/study.md). The model is
`two-mass-damper` (seed 000, section 5): a forced blade mass and a damper mass rubbing on
ground. The shipped `models/damper-study.toml` (30 cases, step 0.005, about 12 s) is made
smaller here (16 cases, step 0.01, a few seconds); then `models/damper-optimum.toml` finds
the optimum without full curves."""
    ),
    md("The imports, and the repository's `models/` folder found from the notebook's folder."),
    code(
        FIND_ROOT
        + """

import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import tqdm

try:
    import tomllib  # Python 3.11+
except ModuleNotFoundError:
    import tomli as tomllib

import ewr"""
    ),
    md(
        "The study file read into a dict and shrunk: eight values of `mu N`, two damper masses, "
        "a step of 0.01; `ewr.Study` checks every setting and lists the cases."
    ),
    code(
        """\
with open(MODELS / "damper-study.toml", "rb") as f:
    spec = tomllib.load(f)
print("shipped grid:", spec["grid"], "step", spec["frequency"]["step"])
spec["model"] = str(MODELS / spec["model"])   # a dict's relative paths are from the cwd
spec["grid"] = {"mu_n": [1, 2, 4, 8, 12, 16, 20, 30], "mass": [0.5, 1.0]}
spec["frequency"]["step"] = 0.01
study = ewr.Study(spec)
print(f"{len(study)} cases over {study.parameters}; first: {study.cases[0]}")"""
    ),
    md(
        "Run it (cases in parallel) with a progress bar, writing the result file, the summary "
        "CSV and the figures into a temporary folder."
    ),
    code(
        """\
out = Path(tempfile.mkdtemp()) / "damper.h5"
t0 = time.perf_counter()
with tqdm(total=len(study), unit="case") as bar:

    def progress(done, total, key):
        bar.update(done - bar.n)
        bar.set_postfix_str(key)

    result = study.run(out, progress=progress)
print(f"{len(result)} cases in {time.perf_counter() - t0:.1f} s; files:",
      [Path(f).name for f in result.files])"""
    ),
    md(
        "The summary table, one row per case: a pandas DataFrame if pandas is installed, "
        "plain columns otherwise."
    ),
    code(
        """\
table = result.table()
columns = ["mu_n", "mass", "status", "peak_omega", "peak_amplitude", "points", "unconverged"]
try:
    import pandas as pd

    display(pd.DataFrame(table)[columns])
except ImportError:
    print("  ".join(f"{c:>14}" for c in columns))
    for row in zip(*(table[c] for c in columns)):
        print("  ".join(f"{v:>14.6g}" if not isinstance(v, str) else f"{v:>14}" for v in row))"""
    ),
    md("The optimum: the case whose highest blade peak is the smallest."),
    code(
        """\
opt = result.optimum
print(f"optimum: {opt['key']}: peak {opt['peak_amplitude']:.3f} at w = {opt['peak_omega']:.4f}")"""
    ),
    md(
        "The design curves: the highest blade peak against `mu N` for each damper mass, "
        "the optimum circled (too little friction leaves the free resonance, too much sticks "
        "the damper)."
    ),
    code(
        """\
fig, ax = plt.subplots(figsize=(8, 4))
for mass in sorted({c["mass"] for c in result.cases}):
    cs = sorted((c for c in result.cases if c["mass"] == mass), key=lambda c: c["mu_n"])
    ax.semilogy([c["mu_n"] for c in cs], [c["peak_amplitude"] for c in cs], "o-",
                label=f"damper mass {mass:g}")
ax.plot(opt["mu_n"], opt["peak_amplitude"], "o", ms=14, mfc="none", color="k", label="optimum")
ax.set_xlabel(r"$\\mu N$")
ax.set_ylabel("highest blade peak")
ax.legend()
plt.show()"""
    ),
    md("The frequency response curves of the cases with damper mass 0.5, from each case's arrays."),
    code(
        """\
fig, ax = plt.subplots(figsize=(8, 4))
for c in result.cases:
    if c["mass"] == 0.5:
        ax.semilogy(c["omega"], c["amplitude"], label=f"$\\\\mu N$ = {c['mu_n']:g}")
ax.set_xlabel(r"$\\omega$")
ax.set_ylabel("blade amplitude")
ax.legend(ncol=2)
plt.show()"""
    ),
    md("One of the figures `ewr study` wrote beside the result file: the heat map of the peak."),
    code(
        """\
from IPython.display import Image

Image(filename=str(out.with_suffix(".map.png")), width=600)"""
    ),
    md(
        "The optimum without full curves: `models/damper-optimum.toml` follows the peak over "
        "`mu N` and refines the minimum per damper mass (`[optimize]`, about a second), "
        "between the grid's values."
    ),
    code(
        """\
with open(MODELS / "damper-optimum.toml", "rb") as f:
    spec_opt = tomllib.load(f)
spec_opt["model"] = str(MODELS / spec_opt["model"])
t0 = time.perf_counter()
tracked = ewr.Study(spec_opt).run()
print(f"{len(tracked)} cases in {time.perf_counter() - t0:.1f} s")
for c in tracked.cases:
    grid = [g for g in result.cases if g["mass"] == c["mass"]]
    best = min(grid, key=lambda g: g["peak_amplitude"]) if grid else None
    line = (f"damper mass {c['mass']:g}: optimum mu N = {c['optimum_value']:.2f}, "
            f"peak {c['peak_amplitude']:.3f} at w = {c['peak_omega']:.3f}")
    if best:
        line += f"  (grid: mu N = {best['mu_n']:g}, peak {best['peak_amplitude']:.3f})"
    print(line)"""
    ),
]


BLADE = [
    md(
        """\
# Importing a CalculiX model: the pretwisted blade

`models/blade-ccx/` holds the CalculiX inputs of a pretwisted cantilever blade (10 x 2 x 1
C3D20 bricks, 570 DOFs, steel, SI units) with two tip-shroud friction contacts
(`contacts.csv`) and a tip force (`forcing.csv`); models/README.md and docs/importing.md
describe them. With CalculiX (`ccx`) installed this notebook exports the matrices with it and
imports them with `ewr import calculix`, as `scripts/make-ccx-models.sh` does; without it, it
reads the shipped result of that import, `models/blade-ccx.h5`. Then it compares the natural
frequencies with CalculiX's own and computes a short friction FRC. About 10 s."""
    ),
    md("The imports, and the repository's `models/` folder found from the notebook's folder."),
    code(
        FIND_ROOT
        + """

import shutil
import subprocess
import sys
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np

import ewr

SRC = MODELS / "blade-ccx"
print(sorted(p.name for p in SRC.iterdir() if not p.name.startswith(".")))"""
    ),
    md(
        "The `ewr` command: the one the package installs next to Python (else `python -m ewr`, "
        "the same program), and CalculiX's `ccx` if it is on PATH."
    ),
    code(
        """\
EWR = [shutil.which("ewr") or str(Path(sys.executable).with_name("ewr"))]
if not Path(EWR[0]).exists():
    EWR = [sys.executable, "-m", "ewr"]
CCX = shutil.which("ccx")
print("ewr:", " ".join(EWR))
print("ccx:", CCX or "not installed (apt-get install calculix-ccx): the shipped import is used")"""
    ),
    md(
        "With CalculiX: run the matrix-export job `blade.inp` (`*FREQUENCY, "
        "SOLVER=MATRIXSTORAGE`) in a scratch copy, then `ewr import calculix` with the "
        "contacts, the forcing and Rayleigh damping `beta = 1e-6` s; otherwise take "
        "`models/blade-ccx.h5`."
    ),
    code(
        """\
def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}):\\n{p.stdout}\\n{p.stderr}")
    return p.stdout


if CCX:
    work = Path(tempfile.mkdtemp())
    for f in ["blade.inp", "blade-model.inp", "contacts.csv", "forcing.csv"]:
        shutil.copy(SRC / f, work)
    run([CCX, "-i", "blade"], cwd=work)
    print("ccx wrote", sorted(p.name for p in work.glob("blade.[smd]*")))
    model_path = work / "blade.h5"
    print(run(EWR + [
        "import", "calculix", str(work / "blade"), "-o", str(model_path),
        "--contacts", str(work / "contacts.csv"), "--forcing", str(work / "forcing.csv"),
        "--rayleigh", "0,1e-6", "--units", "SI (m, kg, s, N)",
        "--title", "Pretwisted blade (CalculiX) with two tip-shroud friction contacts",
    ]))
else:
    model_path = MODELS / "blade-ccx.h5"
print("model:", model_path)"""
    ),
    md("`ewr model info` on the model file: sizes, contacts, forcing, damping and frequencies."),
    code("""print(run(EWR + ["model", "info", str(model_path)]))"""),
    md(
        "The same model in Python; when it was just imported, its matrices equal the shipped "
        "`models/blade-ccx.h5`."
    ),
    code(
        """\
blade = ewr.Model.read(model_path)
print(f"{blade.n_dofs} DOFs, {blade.n_contacts} contacts of dim {blade.contact_dim}, "
      f"mu N = {blade.mu_n} N, units {blade.units}")
print("forcing:", [(blade.dof_labels[d], h, c, s) for d, h, c, s in blade.forcing])
shipped = ewr.Model.read(MODELS / "blade-ccx.h5")
for name in ["mass", "stiffness", "contact_matrix"]:
    a, b = getattr(blade, name), getattr(shipped, name)
    print(f"{name}: largest difference from the shipped model {abs(a - b).max():.1e} "
          f"(largest entry {abs(b).max():.1e})")"""
    ),
    md(
        "The natural frequencies of the imported matrices against CalculiX's eigenvalue table "
        "(`blade-freq.dat`, 7 digits), without friction, and with both contacts stuck."
    ),
    code(
        """\
def ccx_frequencies(dat):
    lines = dat.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if "E I G E N V A L U E   O U T P U T" in l)
    hz = []
    for l in lines[start + 1:]:
        parts = l.split()
        if "P A R T I C I P A T I O N" in l:
            break
        if len(parts) == 5 and parts[0].isdigit():
            hz.append(float(parts[3]))
    return np.array(hz)


f_ccx = ccx_frequencies(SRC / "blade-freq.dat")
f_ewr = np.array(blade.natural_frequencies()) / (2 * np.pi)
f_stuck = np.array(blade.natural_frequencies(stuck=True)) / (2 * np.pi)
print("mode   CalculiX [Hz]      ewr [Hz]   rel. diff   stuck [Hz]")
for k in range(6):
    print(f"{k + 1:4d} {f_ccx[k]:14.7g} {f_ewr[k]:13.9g} {abs(f_ewr[k] / f_ccx[k] - 1):11.1e}"
          f" {f_stuck[k]:12.6g}")"""
    ),
    md(
        "A short FRC around the first bending mode (239 Hz = 1502 rad/s) for four friction "
        "bounds; `odd:7` harmonics and a 5 rad/s step keep it to a few seconds (the tip contacts "
        "stick at `mu N = 20` N, the shipped value, and slide at the lower ones)."
    ),
    code(
        """\
loads = [20.0, 2.0, 1.0, 0.5]
t0 = time.perf_counter()
curves = blade.frc(1400, 1600, 5, harmonics="odd:7", mu_n=loads)
print(f"{len(curves)} curves of {len(curves[0])} points in {time.perf_counter() - t0:.1f} s, "
      f"amplitude of DOF {[blade.dof_labels[d] for d in curves[0].dofs]}")
for c in curves:
    i = int(np.argmax(c.amplitude))
    line = (f"mu N = {c.mu_n:4g} N: all converged {bool(c.converged.all())}, stick fraction "
            f"at the highest point {c.stick_fraction[i].round(2)}")
    for p in c.peaks:   # refined maxima between the points
        line += f", peak {p['amplitude'] * 1e6:.1f} um at {p['omega'] / (2 * np.pi):.2f} Hz"
    if not c.peaks:
        line += f", no peak in the band (largest {c.amplitude.max() * 1e6:.3f} um)"
    print(line)"""
    ),
    md("The tip response in micrometres against the frequency in Hz, refined peaks as dots."),
    code(
        """\
fig, ax = plt.subplots(figsize=(8, 4))
for c in curves:
    (line,) = ax.semilogy(c.omega / (2 * np.pi), c.amplitude * 1e6,
                          label=f"$\\\\mu N$ = {c.mu_n:g} N")
    for p in c.peaks:
        ax.plot(p["omega"] / (2 * np.pi), p["amplitude"] * 1e6, "o", color=line.get_color())
ax.set_xlabel("f [Hz]")
ax.set_ylabel("tip amplitude [um]")
ax.set_title("blade-ccx, tip node 196, z")
ax.legend()
plt.show()"""
    ),
]


NOTEBOOKS = {
    "fig5-oscillator-2d.ipynb": FIG5,
    "damper-3d-from-arrays.ipynb": DAMPER3D,
    "damper-study.ipynb": STUDY,
    "import-calculix-blade.ipynb": BLADE,
}


def build(cells, stem):
    nb = new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for i, (kind, text) in enumerate(cells):
        cell = new_markdown_cell(text) if kind == "md" else new_code_cell(text)
        cell.id = f"{stem}-{i:02d}"
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def main():
    EXAMPLES.mkdir(exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        path = EXAMPLES / name
        nbformat.write(build(cells, Path(name).stem[:20]), path)
        print("wrote", path.relative_to(EXAMPLES.parent))


if __name__ == "__main__":
    main()
