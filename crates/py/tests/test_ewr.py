"""Tests of the ewr Python package: models from arrays and files, results as numpy arrays,
exceptions, callbacks and the GIL, checked against closed forms, the time-domain reference
and the `ewr` command's own files."""

import csv
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import ewr

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "models"


def oscillator_from_arrays(mu_n=8.0):
    """seed 000 sec. 3-4 (README of models/): m = 1, k = diag(1, 2), c = 0.01, 2-D friction
    to ground, f = 10 cos(w t) on both DOFs."""
    return ewr.Model(
        np.eye(2),
        sp.diags([1.0, 2.0]),
        0.01 * np.eye(2),
        contacts={"dim": 2, "dofs": [[0, 1]], "mu_n": mu_n},
        forcing=[(0, 1, 10.0), (1, 1, 10.0, 0.0)],
        dof_labels=["u1", "u2"],
    )


def test_model_from_arrays_equals_the_shipped_file():
    built = oscillator_from_arrays()
    read = ewr.Model.read(MODELS / "oscillator-2d.h5")
    for name in ["mass", "stiffness", "damping"]:
        a, b = getattr(built, name), getattr(read, name)
        assert isinstance(a, sp.csc_array)
        assert a.dtype == np.float64
        assert abs(a - b).max() == 0.0, name
    assert built.forcing == read.forcing
    assert built.mu_n == read.mu_n == [8.0]
    assert built.n_dofs == 2 and built.n_contacts == 1 and built.contact_dim == 2
    s1, s2 = built.solve(0.17), read.solve(0.17)
    assert s1.converged and s2.converged
    assert np.array_equal(s1.friction_coefficients, s2.friction_coefficients)


def test_write_read_round_trip_and_cli_reads_it(tmp_path):
    m = ewr.Model.example("blade-damper-blade-3d")
    path = tmp_path / "bdb3d.h5"
    m.write(path)
    back = ewr.Model.read(path)
    assert back.has_normal and back.n_contacts == 2
    assert abs(back.stiffness - m.stiffness).max() == 0.0
    assert abs(back.contact_matrix - m.contact_matrix).max() == 0.0
    cli = cli_binary()
    if cli:
        out = subprocess.run([cli, "model", "check", str(path)], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr


def linear_amplitudes(w):
    """Peak |u_i| of the linear oscillator (mu N = 0): 10 / |k_i - w^2 + i c w|."""
    return [10.0 / abs(k - w * w + 1j * 0.01 * w) for k in (1.0, 2.0)]


def test_rho_auto_makes_a_model_unit_free():
    """Den Hartog's stick-slip oscillator in non-dimensional units and with lengths in
    micrometres read as metres and forces in kN read as N: with rho="auto" both converge to
    the same solution (fixed rho = 1 stalls in the second)."""

    def den_hartog(a, b):
        return ewr.Model(
            np.eye(1) * b / a,
            np.eye(1) * b / a,
            contacts={"dim": 1, "dofs": [0], "mu_n": b, "rho": "auto"},
            forcing=[(0, 1, 0.0, 2.0 * b)],
        )

    ref = den_hartog(1.0, 1.0).solve(2.0, harmonics="odd:81")
    si = den_hartog(1e-6, 1e3).solve(2.0, harmonics="odd:81")
    assert ref.converged and si.converged
    assert math.isclose(si.dof_peaks[0] / 1e-6, ref.dof_peaks[0], rel_tol=1e-7)
    # Den Hartog's exact max |x| k / p0 = 0.2204793 (digest V8), error ~ 1/H.
    assert abs(ref.dof_peaks[0] / 2.0 - 0.2204793) < 2e-2 * 0.2204793


def test_zero_friction_is_the_linear_frf():
    with pytest.warns(UserWarning, match="every friction bound is 0"):
        m = oscillator_from_arrays(mu_n=0.0)
    for w in [0.3, 0.99, 1.2, 1.5]:
        s = m.solve(w, harmonics="odd:9")
        assert s.converged
        assert np.allclose(s.dof_peaks, linear_amplitudes(w), rtol=1e-9, atol=0)


def test_solution_arrays():
    m = ewr.Model.example("oscillator-2d")
    s = m.solve(0.17, harmonics="odd:59")
    assert s.converged and s.residual < 1e-10
    ns = s.samples
    assert s.time.shape == (ns,) and s.time.dtype == np.float64
    for a in [s.contact_displacement, s.contact_velocity, s.friction_force]:
        assert a.shape == (1, 2, ns) and a.dtype == np.float64
    nco = len(s.coefficient_names)
    assert s.coefficient_names[:3] == ["a1", "b1", "a3"]
    assert s.friction_coefficients.shape == (2, nco)
    assert s.normal_force is None and s.contact_state is None
    # Coulomb holds in the Galerkin sense: the sampled truncated series of r overshoots the
    # bound by a few percent near stick-slip transitions (Gibbs), no more.
    r = np.linalg.norm(s.friction_force[0], axis=0)
    assert 7.9 < r.max() <= 8.0 * 1.03
    assert s.contacts[0]["max_coulomb_violation"] < 0.1
    # The paper's Fig. 9 at w = 0.17: stuck about 9.1 s of the period 36.96 s, twice.
    assert 0.45 < s.stick_fraction[0] < 0.52
    t, u = s.dof_history()
    assert u.shape == (2, ns)
    assert np.isclose(np.abs(u).max(axis=1), s.dof_peaks, rtol=1e-3).all()
    assert s.dof_labels == ["u1", "u2"]
    assert s.contacts[0]["dissipated_energy"] > 0
    assert s.stick.shape == (1, ns) and s.stick.dtype == np.bool_
    assert abs(s.stick.mean() - s.stick_fraction[0]) < 0.01


def test_three_d_contact_results():
    m = ewr.Model.example("single-contact-3d")
    s = m.solve(6.0, harmonics="all:31")
    assert s.converged
    assert s.normal_force.shape == (1, s.samples)
    # A compression, to the Gibbs undershoot of the truncated series where it lifts off.
    assert s.normal_force.min() >= -0.01 * s.normal_force.max()
    # Above w = 5.5 the mass lifts off part of the period (models/README.md).
    assert (s.contact_state == 0).any() and (s.gap > 0).any()
    assert ((s.contact_state == 0) == (s.normal_force <= 1e-9 * s.normal_force.max())).mean() > 0.9
    with pytest.raises(ewr.InputError, match="use all:31"):
        m.solve(6.0, harmonics="odd:31")
    # Without harmonics, the default set carries the static term a 3-D contact needs.
    assert m.solve(3.0, estimate=False).harmonics == "all:59"


def test_fixed_normal_load_contact_is_the_constant_bound_contact():
    """A 3-D model whose contact has no normal DOF (-1) but a fixed normal force 20 with
    mu = 0.4: the constant bound mu N = 8 of the shipped oscillator (same rho)."""
    base = oscillator_from_arrays()
    m3 = ewr.Model(
        base.mass,
        base.stiffness,
        base.damping,
        contacts={
            "dim": 2,
            "dofs": [[0, 1]],
            "rho": "auto",
            "normal": {"dofs": [-1], "mu": [0.4], "load": [20.0]},
        },
        forcing=base.forcing,
    )
    m2 = ewr.Model(
        base.mass,
        base.stiffness,
        base.damping,
        contacts={"dim": 2, "dofs": [[0, 1]], "mu_n": [8.0], "rho": "auto"},
        forcing=base.forcing,
    )
    assert m3.has_normal
    for w in (0.6, 1.2):
        a, b = m3.solve(w, harmonics="all:15"), m2.solve(w, harmonics="all:15")
        assert a.converged and b.converged
        assert np.allclose(a.normal_force, 20.0, rtol=1e-9)
        pa, pb = np.asarray(a.dof_peaks), np.asarray(b.dof_peaks)
        assert abs(pa - pb).max() < 1e-6 * pb.max()
    with pytest.raises(ewr.InputError, match="no fixed load"):
        ewr.Model(
            base.mass,
            base.stiffness,
            contacts={"dim": 2, "dofs": [[0, 1]], "normal": {"dofs": [-1], "mu": [0.4]}},
        )


def cli_binary():
    env = os.environ.get("EWR_BIN")
    if env:
        return env
    built = ROOT / "target" / "release" / "ewr"
    if built.exists():
        return str(built)
    return shutil.which("ewr")


def test_fig5_from_python_equals_the_cli_csv(tmp_path):
    """Seed 000 Fig. 5 (five normal loads) from Python, against `ewr frc --csv`."""
    cli = cli_binary()
    if cli is None:
        if os.environ.get("EWR_REQUIRE_CLI"):
            pytest.fail("EWR_REQUIRE_CLI is set but no ewr binary was found")
        pytest.skip("no ewr binary (build it with cargo build --release -p ewr-cli)")
    loads = [0, 5, 8, 10, 12]
    csv_path = tmp_path / "frc.csv"
    subprocess.run(
        [cli, "frc", str(MODELS / "oscillator-2d.h5"), "--omega-start", "0.05",
         "--omega-end", "1.5", "--step", "0.005", "--mu-n", ",".join(map(str, loads)),
         "--csv", str(csv_path)],
        check=True, capture_output=True,
    )
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    m = ewr.Model.read(MODELS / "oscillator-2d.h5")
    seen = []
    for mu_n in loads:
        curve = m.frc(0.05, 1.5, 0.005, mu_n=float(mu_n))
        assert curve.stopped is None and curve.converged.all()
        table = curve.table()
        assert set(rows[0].keys()) <= set(table.keys())
        cli_rows = sorted((r for r in rows if float(r["mu_n"]) == mu_n),
                          key=lambda r: float(r["omega"]))
        assert len(cli_rows) == len(curve)
        assert np.allclose([float(r["omega"]) for r in cli_rows], curve.omega, rtol=0, atol=1e-12)
        cli_amp = np.array([float(r["amp_norm"]) for r in cli_rows])
        assert np.allclose(cli_amp, curve.amplitude, rtol=1e-12, atol=0)
        seen.append(curve.amplitude.max())
    # Fig. 5: friction lowers the resonance peaks; the linear curve peaks near w = 1 and
    # sqrt(2) at 10 / (c w) ~ 700-1000 on the DOF that resonates.
    assert seen[0] > 500 and all(a > b for a, b in zip(seen, seen[1:]))


def test_frc_table_peaks_and_progress():
    m = ewr.Model.example("oscillator-2d")
    calls = []
    curve = m.frc(0.8, 1.2, 0.01, harmonics="odd:19",
                  progress=lambda n, w, a: calls.append((n, w, a)))
    assert [c[0] for c in calls] == list(range(1, len(curve) + 1))
    assert np.allclose([c[1] for c in calls], curve.omega)
    assert curve.dof_peaks.shape == (len(curve), 2)
    assert curve.stick_fraction.shape == (len(curve), 1)
    assert (curve.dissipated_energy >= 0).all()
    assert curve.iterations.dtype == np.uint64
    # The refined peak is at least as high as every grid point.
    assert len(curve.peaks) >= 1
    assert max(p["amplitude"] for p in curve.peaks) >= curve.amplitude.max() * (1 - 1e-12)
    assert curve[-1].omega == curve.omega[-1]
    with pytest.raises(IndexError):
        curve[len(curve)]


def test_adaptive_steps_resolve_a_sharp_peak():
    # Two-mass damper, mu N = 4: a fixed step of 0.005 reads the peak 7 % low; adaptive steps
    # from 0.02 keep the curve within 1 % of the refined maximum, in fewer points.
    m = ewr.Model.example("two-mass-damper")
    fixed = m.frc(0.3, 1.4, 0.005, mu_n=4.0, harmonics="odd:15")
    adaptive = m.frc(0.3, 1.4, 0.02, mu_n=4.0, harmonics="odd:15", adaptive=0.01)
    top = max(p["amplitude"] for p in fixed.peaks)
    assert fixed.amplitude.max() < 0.97 * top
    assert adaptive.amplitude.max() > 0.99 * top
    assert len(adaptive) < len(fixed)
    assert adaptive.omega[-1] == pytest.approx(1.4)
    with pytest.raises(ewr.InputError):
        m.frc(0.3, 1.4, 0.02, adaptive=-1.0)


def test_peaks_finds_the_optimum_of_full_curves():
    # Two-mass damper with damper mass 0.5: the optimum friction bound, where the highest
    # peak changes resonance (w 0.86 -> 1.64), against the refined peaks of full curves on a
    # grid around it (spacing 0.02).
    m = ewr.Model.example("two-mass-damper", damper_mass=0.5)
    common = dict(harmonics="odd:15", dofs=["u11", "u12"])
    loc = m.peaks("mu_n", 1.0, 30.0, omega_start=0.2, omega_end=2.6, step=0.02, count=8,
                  adaptive=0.01, **common)
    opt = loc["optimum"]
    # A sharp minimum where two peaks cross: not flat.
    assert loc["error"] is None and opt["interior"] and opt["plateau"] is None
    assert loc["value"].shape == loc["amplitude"].shape and len(loc["value"]) > 8
    assert opt["amplitude"] == loc["amplitude"].min()
    grid = [opt["value"] + 0.02 * k for k in range(-5, 6)]
    brute = [max(p["amplitude"] for p in m.frc(0.2, 2.6, 0.01, mu_n=v, **common).peaks)
             for v in grid]
    best = int(np.argmin(brute))
    assert abs(grid[best] - opt["value"]) <= 0.021
    assert opt["amplitude"] <= min(brute) * (1 + 1e-6)
    assert opt["amplitude"] >= min(brute) * (1 - 1e-2)
    # The change of resonance is flagged once, with its jump in frequency, and the optimum is
    # where the two peaks are equal: next to it.
    sw = loc["switched"]
    assert sw.dtype == bool and sw.sum() == 1
    k = int(np.flatnonzero(sw)[0])
    assert loc["omega"][k - 1] < 1.0 < 1.5 < loc["omega"][k] or \
        loc["omega"][k] < 1.0 < 1.5 < loc["omega"][k - 1]
    assert loc["value"][k - 1] <= opt["value"] <= loc["value"][k]
    with pytest.raises(ewr.InputError, match="3-D"):
        m.peaks("mu", 0.1, 0.5, omega_start=0.2, omega_end=2.6, step=0.02)
    with pytest.raises(ewr.InputError):
        m.peaks("stiffness", 0.1, 0.5, omega_start=0.2, omega_end=2.6, step=0.02)
    with pytest.raises(ewr.InputError, match=">= 0"):
        m.peaks("mu_n", -1.0, 5.0, omega_start=0.2, omega_end=2.6, step=0.02)


def test_peaks_with_stability_flags_the_maximum_past_the_fold():
    # single-contact-3d at its own forcing: the refined maximum lies past the fold (the
    # command-line test checks it against the sequential sweep); a multiplier outside.
    m = ewr.Model.example("single-contact-3d")
    loc = m.peaks("forcing", 1.0, 1.0, count=1, omega_start=5.6, omega_end=8.0, step=0.05,
                  harmonics="all:15", stability=True)
    assert list(loc["stable"]) == [0] and loc["max_multiplier"][0] > 1.5
    # Without the option there are no such entries.
    assert "stable" not in m.peaks("forcing", 1.0, 1.0, count=1, omega_start=5.6,
                                   omega_end=8.0, step=0.05, harmonics="all:15")


def test_a_failing_callback_raises():
    m = ewr.Model.example("oscillator-2d")

    def bad(n, w, a):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        m.frc(0.8, 1.2, 0.01, harmonics="odd:9", progress=bad)


def test_solves_release_the_gil():
    m = ewr.Model.example("two-mass-damper")
    done = threading.Event()
    result = {}

    def work():
        result["frc"] = m.frc(0.2, 1.0, 0.002, harmonics="odd:59", refine=False)
        done.set()

    ticks = 0
    th = threading.Thread(target=work)
    start = time.perf_counter()
    th.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    th.join()
    elapsed = time.perf_counter() - start
    assert len(result["frc"]) > 100
    # With the GIL held for the whole sweep, this thread could not tick at all.
    if elapsed > 0.2:
        assert ticks > 20


def test_simulate_agrees_with_harmonic_balance():
    m = ewr.Model.example("oscillator-2d")
    w = 0.5
    hb = m.solve(w, harmonics="odd:159")
    sim = m.simulate(w)
    assert sim.converged
    assert sim.u.shape == (2, len(sim.time))
    assert sim.friction_force.shape == (1, 2, len(sim.time))
    assert sim.stick.dtype == np.bool_
    peaks = np.abs(sim.u).max(axis=1)
    assert np.allclose(peaks, hb.dof_peaks, rtol=1e-2)
    summary = sim.summary()
    assert summary["contacts"][0]["dissipated_energy"] == pytest.approx(
        hb.dissipated_energy[0], rel=1e-2)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: ewr.Model.read("/nonexistent/model.h5"), "/nonexistent/model.h5"),
        (lambda: ewr.Model.example("nope"), "unknown example"),
        (lambda: ewr.Model.example("oscillator-2d").solve(0.5, harmonics="odd:4"), "harmonics"),
        (lambda: ewr.Model.example("oscillator-2d").solve(0.5, mu_n=-1.0), "mu_n=-1"),
        (lambda: ewr.Model.example("oscillator-2d").solve(float("nan")), "omega=NaN"),
        (lambda: ewr.Model.example("oscillator-2d").frc(1.0, 2.0, 0.0), "step=0"),
        (lambda: ewr.Model.example("oscillator-2d").solve(0.5, law="magic"), "law"),
        (lambda: ewr.Model.example("oscillator-2d").solve(0.5, dofs=["nope"]), "nope"),
        (lambda: ewr.Model(np.eye(2), np.eye(3)), "mass: shape 2 x 2, expected 3 x 3"),
        (lambda: ewr.Model(np.eye(2), [[1.0, float("nan")], [0.0, 1.0]]), "finite"),
        (lambda: ewr.Model(np.eye(2), np.eye(2), contacts={"dim": 1, "dofs": [5], "mu_n": 1.0}),
         "5"),
        (lambda: ewr.Model(np.eye(2), np.eye(2), contacts={"dim": 1, "dofs": [0], "mu_n": -1.0}),
         "mu"),
        (lambda: ewr.Model(np.eye(2), np.eye(2), contacts={"dofs": [0], "mu": 1.0}),
         "unknown key"),
        (lambda: ewr.Model(np.eye(2), np.eye(2),
                           contacts={"dim": 1, "dofs": [0], "mu_n": 1.0, "rho": "fast"}),
         "auto"),
    ],
)
def test_bad_input_raises_input_error(call, message):
    with pytest.raises(ewr.InputError, match=message.replace("(", r"\(")) as e:
        call()
    assert isinstance(e.value, ValueError)


def test_cli_and_python_messages_agree(tmp_path):
    cli = cli_binary()
    if cli is None:
        pytest.skip("no ewr binary")
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not an HDF5 file")
    out = subprocess.run([cli, "model", "check", str(bad)], capture_output=True, text=True)
    assert out.returncode == 2
    with pytest.raises(ewr.InputError) as e:
        ewr.Model.read(bad)
    first_line = str(e.value).splitlines()[0]
    assert first_line in out.stderr


def test_examples_listing():
    ex = ewr.examples()
    assert "oscillator-2d" in ex and "blade-damper-blade-3d" in ex
    assert math.isfinite(ewr.Model.example("chain", contacts=3).n_dofs)


def test_ctrl_c_keeps_the_points_computed():
    import _thread

    m = ewr.Model.example("two-mass-damper")
    # A process started in the background of a non-interactive shell inherits SIGINT
    # ignored, and interrupt_main() then does nothing: Ctrl-C needs Python's handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.warns(UserWarning, match="interrupted"):
            curve = m.frc(0.2, 3.0, 0.0005, harmonics="odd:59")
    finally:
        timer.cancel()
    assert curve.stopped is not None and "interrupted" in curve.stopped
    assert 0 < len(curve) < 5601
    assert curve.converged.all()
    assert curve.peaks == []


def test_harmonic_lists():
    m = ewr.Model.example("oscillator-2d")
    # A list that is an odd or all set is that set.
    assert m.solve(0.5, harmonics="1,3,5,7").harmonics == "odd:7"
    assert m.solve(0.5, harmonics="0,1,2,3").harmonics == "all:3"
    # 1..15 without the static term: odd forcing and a symmetric law leave the even
    # harmonics at zero, and the odd ones are those of odd:15.
    full = m.solve(0.5, harmonics=",".join(str(h) for h in range(1, 16)))
    odd = m.solve(0.5, harmonics="odd:15")
    assert full.converged and odd.converged
    assert full.harmonics == "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"
    names = full.coefficient_names
    assert names[:4] == ["a1", "b1", "a2", "b2"]
    fc = full.friction_coefficients
    for col, name in enumerate(names):
        h = int(name[1:])
        if h % 2 == 0:
            assert np.abs(fc[:, col]).max() < 1e-8, name
        else:
            j = odd.coefficient_names.index(name)
            assert np.allclose(fc[:, col], odd.friction_coefficients[:, j], atol=1e-8), name
    # Linear limit with forcing on harmonics 1 and 2 only, on the list 1,2: the closed-form
    # response of each harmonic.
    with pytest.warns(UserWarning):
        lin = ewr.Model(np.eye(1), [[1.0]], [[0.01]], contacts={"dofs": [0], "mu_n": 0.0},
                        forcing=[(0, 1, 10.0), (0, 2, 5.0)])
    w = 0.7
    s = lin.solve(w, harmonics="1,2")
    a1, b1, a2, b2 = s.dof_coefficients[0]
    for h, f, (a, b) in [(1, 10.0, (a1, b1)), (2, 5.0, (a2, b2))]:
        x = f / (1.0 - (h * w) ** 2 + 1j * 0.01 * h * w)
        assert abs(a - x.real) < 1e-9 and abs(b + x.imag) < 1e-9


def test_natural_frequencies_free_and_stuck():
    m = ewr.Model.example("two-mass-damper")
    # Seed 000 sec. 5: 0.618, 0.874, 1.618, 2.288 free; the blade alone on k11 + k21 = 2 and
    # k12 + k22 = 4 with the damper stuck: sqrt(2) and 2.
    assert np.allclose(m.natural_frequencies(), [0.618, 0.874, 1.618, 2.288], atol=1e-3)
    stuck = m.natural_frequencies(stuck=True)
    assert np.allclose(stuck[:2], [2 ** 0.5, 2.0], rtol=1e-5)


def test_cyclic_sector_equals_its_annulus():
    """Issue 16: one sector of the lumped bladed disk (N = 12, EO 3) against the whole disk
    built from it, an ordinary model solved without cyclic code; and the same sector built
    from arrays with ``cyclic=``."""
    sector = ewr.Model.example("bladed-disk")
    assert sector.cyclic == {"sectors": 12, "engine_order": 3,
                             "left": [0, 1, 2, 3], "right": [4, 5, 6, 7]}
    disk = sector.annulus()
    assert disk.cyclic is None and disk.n_dofs == 48 and disk.n_contacts == 24
    # Samples a multiple of N: the annulus is then exactly shift-invariant (docs/cyclic.md).
    s = sector.solve(1.21, harmonics="odd:7", samples=96)
    a = disk.solve(1.21, harmonics="odd:7", samples=96)
    assert s.converged and a.converged
    # Sector 0's contacts are the annulus's first two.
    assert np.allclose(s.friction_coefficients, a.friction_coefficients[:4], atol=1e-7)
    assert np.allclose(s.stick_fraction, a.stick_fraction[:2], atol=1e-6)
    # ND 3's lowest frequency by hand, and in the annulus's spectrum.
    w3 = math.sqrt((5.5 - math.sqrt(14.25)) / 2)
    assert abs(sector.natural_frequencies()[0] - w3) < 1e-9
    assert abs(sector.natural_frequencies(nodal_diameter=3)[0] - w3) < 1e-9
    assert min(abs(w - w3) for w in disk.natural_frequencies()) < 1e-9
    # The same sector from its arrays.
    again = ewr.Model(
        sector.mass, sector.stiffness, sector.damping,
        contacts={"dim": 2, "dofs": [[2, 3], [2, 3]], "other": [[6, 7], [0, 1]],
                  "mu_n": [0.5, 0.3], "k_t": [1.0, 1.0]},
        forcing=sector.forcing, cyclic=sector.cyclic,
    )
    s2 = again.solve(1.21, harmonics="odd:7", samples=96)
    assert np.allclose(s2.friction_coefficients, s.friction_coefficients, atol=1e-7)
    with pytest.raises(ewr.InputError, match="left has 1 DOFs and right 2"):
        ewr.Model(sector.mass, sector.stiffness,
                  cyclic={"sectors": 12, "engine_order": 3, "left": [0], "right": [4, 5]})
    with pytest.raises(ewr.InputError, match="simulate its full annulus"):
        sector.simulate(1.21)


def test_stability_of_a_linear_model_and_across_a_fold(tmp_path):
    """Without friction the largest multiplier is exp(-c/2 T) of the oscillator's modes
    (c = 0.01, m = 1: both modes decay at 0.005); across the fold of the 3-D contact's
    arclength curve the points turn unstable, as the CSV and HDF5 files say."""
    with pytest.warns(UserWarning, match="every friction bound is 0"):
        m = oscillator_from_arrays(mu_n=0.0)
    w = 0.8
    s = m.solve(w, harmonics="odd:5")
    assert s.stable is True
    assert math.isclose(s.max_multiplier, math.exp(-0.005 * 2 * math.pi / w), rel_tol=1e-8)
    assert s.floquet_exponents is not None and len(s.floquet_exponents) > 0
    model = ewr.Model.read(MODELS / "single-contact-3d.h5")
    frc = model.frc(5.6, 8.0, 0.05, harmonics="all:15", continuation="arclength",
                    stability=True, csv=tmp_path / "f.csv", output=tmp_path / "f.h5")
    assert frc.stable[0] == 1 and (frc.stable == 0).any()
    assert np.nanmax(frc.max_multiplier) > 1.5
    with open(tmp_path / "f.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["stable"]) for r in rows] == list(frc.stable)


def test_nonlinear_mode_from_stuck_to_free():
    """two-mass-damper: sqrt(2) with the damper held at small amplitude, the free mode where
    the blade leads (the golden ratio) at large amplitude (docs/nonlinear-modes.md)."""
    model = ewr.Model.read(MODELS / "two-mass-damper.h5")
    m = model.modes(0.1, 1e4, points=13, harmonics="odd:31")
    assert m["converged"].all()
    assert not m["no_oscillation"].any()
    assert math.isclose(m["omega"][0], math.sqrt(2), rel_tol=1e-5)
    assert math.isclose(m["omega"][-1], (1 + math.sqrt(5)) / 2, rel_tol=1e-4)
    assert m["damping_ratio"].max() > 4 * m["damping_ratio"][0]
    assert m["shape"].shape == (13, 4)
    # Newton's record per amplitude, as `ewr modes --json` gives it: dense steps on this
    # small model (no GMRES), each converged to the default tolerance (the stuck amplitudes
    # in none: the predictor is the linear mode).
    assert m["iterations"].shape == (13,) and m["iterations"].sum() > 0
    assert (m["gmres_iterations"] == 0).all()
    assert (m["residual"] <= 1e-9).all()
    # Every harmonic of every DOF (odd:31: 16 harmonics, cos and sin); the fundamental is
    # the shape, x = Re(Q1 e^{iwt}) = a1 cos + b1 sin.
    u = m["displacement"]
    assert u.shape == (13, 4, 32)
    assert np.allclose(u[:, :, 0] - 1j * u[:, :, 1], m["shape"], rtol=0, atol=1e-9 * abs(u).max())
    with pytest.raises(ewr.InputError):
        model.modes(1.0, 0.5)
    # Starved of Newton iterations, the slipping amplitudes fail: said, not silent.
    with pytest.warns(UserWarning, match="amplitudes did not converge"):
        starved = model.modes(0.1, 1e4, points=7, harmonics="odd:31", max_iter=2)
    assert not starved["converged"].all()


def test_cyclic_stability_of_every_inter_sector_phase():
    """A cyclic sector's stability against the travelling wave's perturbations and, with
    ``all_phases``, every other inter-sector phase's (docs/stability.md, section 2; the union
    is checked against the annulus in crates/solve/tests/cyclic.rs)."""
    sector = ewr.Model.example("bladed-disk")
    wave = sector.solve(1.21, harmonics="odd:15")
    assert wave.phases is None and wave.travelling_wave_only is True
    s = sector.solve(1.21, harmonics="odd:15", all_phases=True)
    assert s.converged and s.stable and 0 < s.max_multiplier < 1
    assert s.travelling_wave_only is False
    assert [p["p"] for p in s.phases] == [0, 1, 2, 3, 4, 5, 6]
    assert all(p["stable"] and 0 < p["max_multiplier"] < 1 for p in s.phases)
    # p = 0 is the travelling wave's own family; the summary is the largest over them all.
    assert s.phases[0]["max_multiplier"] == pytest.approx(wave.max_multiplier, rel=1e-9)
    assert s.max_multiplier == max(p["max_multiplier"] for p in s.phases)
    with pytest.raises(ewr.InputError, match="not a cyclic sector"):
        ewr.Model.example("oscillator-2d").solve(1.0, all_phases=True)
    # A sweep: per point and family, as ewr frc --stability --all-phases.
    f = sector.frc(1.15, 1.25, 0.05, harmonics="odd:15", refine=False, stability=True,
                   all_phases=True)
    m = f.phase_max_multiplier
    assert m.shape == (len(f), 7)
    assert list(f.travelling_wave_only) == [0] * len(f)
    assert np.allclose(f.max_multiplier, m.max(axis=1))
    assert f[1].phases is not None
    plain = sector.frc(1.15, 1.25, 0.05, harmonics="odd:15", refine=False, stability=True)
    assert plain.phase_max_multiplier is None
    assert list(plain.travelling_wave_only) == [1] * len(plain)
    assert np.allclose(plain.max_multiplier, m[:, 0])
    with pytest.raises(ewr.InputError, match="stability=True"):
        sector.frc(1.15, 1.25, 0.05, all_phases=True)



def test_a_progress_callback_may_run_a_model_on_one_thread():
    # The callback runs on one of rayon's workers; a sweep it starts must not hand its work to
    # the pool and wait for the worker it holds (with one thread there is no other).
    script = """
import ewr
m = ewr.Model.example("two-mass-damper")
inner = []
def progress(done, omega, amp):
    if done == 2:
        inner.append(len(m.frc(0.9, 1.0, 0.05, harmonics="odd:3", refine=False)))
c = m.frc(0.8, 1.0, 0.05, harmonics="odd:7", refine=False, progress=progress)
print(len(c), inner)
"""
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["5", "[3]"]


def test_the_modal_receptance_warns_where_the_damping_matrix_couples_its_modes():
    """A chain of three masses with a dashpot to ground at the first: keeping the diagonal of
    the damping projected on the modes moves the third mode's response by about 4.6 %
    (docs/receptance.md, "Non-proportional damping"). The dense receptance is exact."""
    k = np.array([[1.3, -0.3, 0.0], [-0.3, 1.6, -1.3], [0.0, -1.3, 1.3]])
    c = 1e-4 * k
    c[0, 0] += 0.05
    m = ewr.Model(
        np.diag([1.0, 1.2, 0.9]),
        k,
        c,
        contacts={"dim": 1, "dofs": [[2]], "mu_n": 0.1},
        forcing=[(2, 1, 1.0)],
    )
    with pytest.warns(UserWarning, match=r"couples them: near mode 3 .* 4\.6%"):
        s = m.solve(0.9, harmonics="odd:7", receptance="modal:3")
    assert s.converged
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert m.solve(0.9, harmonics="odd:7", receptance="dense").converged


def test_a_study_warns_where_its_modes_drop_the_damping_coupling(tmp_path):
    """The chain above in a study condensed by its three modes: the study warns once, as
    `ewr study` does, naming every case, and each case's dict keeps the warning."""
    k = np.array([[1.3, -0.3, 0.0], [-0.3, 1.6, -1.3], [0.0, -1.3, 1.3]])
    c = 1e-4 * k
    c[0, 0] += 0.05
    ewr.Model(
        np.diag([1.0, 1.2, 0.9]),
        k,
        c,
        contacts={"dim": 1, "dofs": [[2]], "mu_n": 0.1},
        forcing=[(2, 1, 1.0)],
    ).write(tmp_path / "chain.h5")
    study = ewr.Study({"model": str(tmp_path / "chain.h5"),
                       "frequency": {"start": 0.85, "end": 0.95, "step": 0.05},
                       "solver": {"harmonics": "odd:7", "receptance": "modal:3"},
                       "grid": {"mu_n": [0.1, 0.2]}})
    with pytest.warns(UserWarning) as caught:
        r = study.run()
    said = [str(w.message) for w in caught if "couples them" in str(w.message)]
    assert len(said) == 1, said
    assert "near mode 3" in said[0] and said[0].endswith("(every case)"), said
    assert [len(case["warnings"]) for case in r.cases] == [1, 1]
