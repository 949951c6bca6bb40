"""Python and the `ewr` command are two spellings of one run layer: every command-line option
of `solve`, `frc` and `peaks` has a Python keyword, and the same case through both writes the
same files. Also the study API and reading result files back."""

import inspect
import json
import math
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ewr

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "models"


def cli_binary():
    env = os.environ.get("EWR_BIN")
    if env:
        return env
    built = ROOT / "target" / "release" / "ewr"
    if built.exists():
        return str(built)
    found = shutil.which("ewr")
    if found is None and os.environ.get("EWR_REQUIRE_CLI"):
        pytest.fail("EWR_REQUIRE_CLI is set but no ewr binary was found")
    return found


def needs_cli():
    cli = cli_binary()
    if cli is None:
        pytest.skip("no ewr binary")
    return cli


def run_cli(*args):
    out = subprocess.run([needs_cli(), *map(str, args)], capture_output=True, text=True)
    return out


# Command-line options that have no Python keyword, and why.
CLI_ONLY = {
    "json": "Python returns the results as objects",
    "profile": "a report of the process's time per phase on stderr; Python code is timed with Python's own profilers",
    "help": "clap's own",
    "version": "clap's own",
}
# Command-line spellings whose Python keyword is another word.
RENAMED = {
    "no_ramp": "ramp",
    "no_refine": "refine",
    "no_optimum": "optimum",
    "no_estimate": "estimate",
    "no_stability": "stability",
    "from": "start",
    "to": "end",
    "model": None,  # the Model object itself
}


def cli_options(command):
    """The long options and positionals of `ewr COMMAND --help`, as Python identifiers."""
    text = run_cli(command, "--help").stdout
    names = set(re.findall(r"--([a-z][a-z0-9-]*)", text))
    names |= {m.lower() for m in re.findall(r"^\s+<([A-Z]+)>", text, re.M)}
    return {n.replace("-", "_") for n in names}


@pytest.mark.parametrize("command, method", [("solve", "solve"), ("frc", "frc"),
                                             ("peaks", "peaks"), ("simulate", "simulate"),
                                             ("modes", "modes")])
def test_every_cli_option_has_a_python_keyword(command, method):
    keywords = set(inspect.signature(getattr(ewr.Model, method)).parameters) - {"self"}
    missing = []
    for name in sorted(cli_options(command)):
        if name in CLI_ONLY:
            continue
        target = RENAMED.get(name, name)
        if target is not None and target not in keywords:
            missing.append(name)
    assert not missing, f"ewr {command} options without a Python keyword: {missing}"
    # And the other way: no Python keyword the command lacks (but the callback).
    cli = {RENAMED.get(n, n) for n in cli_options(command)}
    extra = sorted(keywords - cli - {"progress"})
    assert not extra, f"Model.{method} keywords that ewr {command} lacks: {extra}"


def h5_equal(a, b, skip=("model",)):
    """Every attribute and dataset of two result files equal (NaN equal to NaN)."""
    da, db = ewr.read_result(a), ewr.read_result(b)

    def walk(x, y, at):
        assert set(x) - set(skip) == set(y) - set(skip), f"{at}: {set(x) ^ set(y)}"
        for k in x:
            if k in skip:
                continue
            u, v = x[k], y[k]
            if isinstance(u, dict):
                walk(u, v, f"{at}/{k}")
            elif isinstance(u, np.ndarray):
                assert u.shape == v.shape and np.array_equal(u, v, equal_nan=True), f"{at}/{k}"
            elif isinstance(u, float) and math.isnan(u):
                assert math.isnan(v), f"{at}/{k}"
            else:
                assert u == v, f"{at}/{k}: {u!r} != {v!r}"

    walk(da, db, "")


def csv_rows(path):
    lines = Path(path).read_text().splitlines()
    return lines[0], sorted(lines[1:])


def test_the_same_sweep_through_cli_and_python_writes_the_same_files(tmp_path):
    model = MODELS / "two-mass-damper.h5"
    args = ["--omega-start", "0.3", "--omega-end", "1.2", "--step", "0.02",
            "--harmonics", "odd:15", "--mu-n", "2,8"]
    out = run_cli("frc", model, *args, "-o", tmp_path / "cli.h5", "--csv", tmp_path / "cli.csv")
    assert out.returncode == 0, out.stderr
    m = ewr.Model.read(model)
    curves = m.frc(0.3, 1.2, 0.02, harmonics="odd:15", mu_n=[2.0, 8.0],
                   output=tmp_path / "py.h5", csv=tmp_path / "py.csv")
    assert isinstance(curves, list) and [c.mu_n for c in curves] == [2.0, 8.0]
    h5_equal(tmp_path / "cli.h5", tmp_path / "py.h5")
    assert csv_rows(tmp_path / "cli.csv") == csv_rows(tmp_path / "py.csv")
    # One curve written by itself is the one-curve file of the command.
    out = run_cli("frc", model, *args[:-2], "--mu-n", "8", "-o", tmp_path / "one.h5")
    assert out.returncode == 0, out.stderr
    curves[1].write(tmp_path / "py-one.h5")
    h5_equal(tmp_path / "one.h5", tmp_path / "py-one.h5")


def test_the_same_solution_and_peaks_through_cli_and_python(tmp_path):
    model = MODELS / "single-contact-3d.h5"
    out = run_cli("solve", model, "--omega", "3", "--harmonics", "all:15", "--rho", "auto",
                  "-o", tmp_path / "cli.h5", "--timeseries", tmp_path / "cli.csv")
    assert out.returncode == 0, out.stderr
    m = ewr.Model.read(model)
    s = m.solve(3.0, harmonics="all:15", rho="auto", output=tmp_path / "py.h5",
                timeseries=tmp_path / "py.csv")
    assert s.converged
    h5_equal(tmp_path / "cli.h5", tmp_path / "py.h5")
    assert (tmp_path / "cli.csv").read_text() == (tmp_path / "py.csv").read_text()

    model = MODELS / "two-mass-damper.h5"
    out = run_cli("peaks", model, "--param", "mu_n", "--from", "2", "--to", "20", "--count", "4",
                  "--omega-start", "0.3", "--omega-end", "2.0", "--step", "0.02",
                  "--harmonics", "odd:15", "-o", tmp_path / "pk-cli.h5",
                  "--csv", tmp_path / "pk-cli.csv")
    assert out.returncode == 0, out.stderr
    ewr.Model.read(model).peaks("mu_n", 2.0, 20.0, count=4, omega_start=0.3, omega_end=2.0,
                                step=0.02, harmonics="odd:15", output=tmp_path / "pk-py.h5",
                                csv=tmp_path / "pk-py.csv")
    h5_equal(tmp_path / "pk-cli.h5", tmp_path / "pk-py.h5")
    assert (tmp_path / "pk-cli.csv").read_text() == (tmp_path / "pk-py.csv").read_text()


def test_the_same_nonlinear_mode_through_cli_and_python_writes_the_same_files(tmp_path):
    model = MODELS / "two-dof-1d.h5"
    args = ["--from", "0.1", "--to", "1e4", "--points", "41", "--harmonics", "odd:31"]
    out = run_cli("modes", model, *args, "--frc", "-o", tmp_path / "cli.h5",
                  "--csv", tmp_path / "cli.csv", "--json")
    assert out.returncode == 0, out.stderr
    m = ewr.Model.read(model).modes(0.1, 1e4, points=41, harmonics="odd:31", frc=True,
                                     output=tmp_path / "py.h5", csv=tmp_path / "py.csv",
                                     plot=tmp_path / "py.svg")
    h5_equal(tmp_path / "cli.h5", tmp_path / "py.h5")
    assert (tmp_path / "cli.csv").read_text() == (tmp_path / "py.csv").read_text()
    assert "ewr frc (all modes)" in (tmp_path / "py.svg").read_text()
    # The forced sweep is the command's: the same peak at the same frequency.
    cli = json.loads(out.stdout)["frc_peak"]
    assert m["frc_dof"] == cli["forced_dof"]
    k = int(np.argmax(m["frc"][:, 1]))
    assert m["frc"][k, 1] == cli["amplitude"] and m["frc"][k, 0] == cli["omega"]
    # And it peaks where the mode's synthesis says (seed 003's isolated mode), within 2 %.
    syn = m["synthesis_peak"][2][m["frc_dof"]]
    assert abs(syn - m["frc"][k, 1]) < 0.02 * m["frc"][k, 1]
    with pytest.raises(ewr.InputError, match="law"):
        ewr.Model.read(model).modes(0.1, 1.0, law="projection")
    with pytest.raises(ewr.InputError, match="amplitude"):
        ewr.Model.read(model).modes(0.1, 1.0, amplitude="h1")


def test_rho_auto_and_a_resumed_sweep(tmp_path):
    m = ewr.Model.example("oscillator-2d")
    # rho="auto" converges to the Coulomb solution of the model's rho, up to the truncation
    # error (the Galerkin solution depends on rho at that order: 2e-4 at odd:31).
    a = m.solve(0.5, harmonics="odd:31", rho="auto")
    b = m.solve(0.5, harmonics="odd:31")
    assert a.converged and b.converged
    assert a.amplitude == pytest.approx(b.amplitude, rel=1e-3)
    with pytest.raises(ewr.InputError, match="rho"):
        m.solve(0.5, rho="fast")
    # A sweep cut short and resumed from its file equals the whole sweep.
    whole = m.frc(0.3, 0.8, 0.02, harmonics="odd:15")
    part = tmp_path / "part.h5"
    m.frc(0.3, 0.5, 0.02, harmonics="odd:15", output=part)
    resumed = m.frc(0.3, 0.8, 0.02, harmonics="odd:15", output=part, resume=True)
    assert len(resumed) == len(whole)
    assert np.allclose(resumed.amplitude, whole.amplitude, rtol=1e-8)


def test_study_from_a_file_equals_the_command(tmp_path):
    study = tmp_path / "study.toml"
    shutil.copy(MODELS / "two-mass-damper.h5", tmp_path / "tmd.h5")
    study.write_text(
        'model = "tmd.h5"\n[frequency]\nstart = 0.3\nend = 1.2\nstep = 0.02\n'
        '[solver]\nharmonics = "odd:15"\ndofs = ["u11", "u12"]\n'
        '[grid]\nmu_n = [2, 8]\n'
    )
    out = run_cli("study", study, "-o", tmp_path / "cli.h5", "--no-plot")
    assert out.returncode == 0, out.stderr
    s = ewr.Study(study)
    assert len(s) == 2 and s.parameters == ["mu_n"]
    seen = []
    r = s.run(tmp_path / "py.h5", plots=False, progress=lambda d, n, k: seen.append((d, n, k)))
    assert sorted(seen)[-1][:2] == (2, 2)
    h5_equal(tmp_path / "cli.h5", tmp_path / "py.h5", skip=("model", "source"))
    t = r.table()
    assert list(t["mu_n"]) == [2.0, 8.0] and t["status"] == ["ok", "ok"]
    # The optimum (smallest peak) is the larger bound here, as the command reports it.
    assert r.optimum["mu_n"] == 8.0 or r.optimum["mu_n"] == 2.0
    assert r.optimum["peak_amplitude"] == min(t["peak_amplitude"])
    # The same study as a dict, model relative to the current folder.
    os.chdir(tmp_path)
    d = ewr.Study({"model": "tmd.h5",
                   "frequency": {"start": 0.3, "end": 1.2, "step": 0.02},
                   "solver": {"harmonics": "odd:15", "dofs": ["u11", "u12"]},
                   "grid": {"mu_n": [2, 8]}}).run()
    assert np.array_equal(d.table()["peak_amplitude"], t["peak_amplitude"])
    assert "stable" not in d.cases[0]
    # With stability: every converged point of a sequential sweep is classified, and a
    # sweep's points are stable (it jumps off a branch where it turns unstable).
    st = ewr.Study({"model": "tmd.h5",
                    "frequency": {"start": 0.3, "end": 1.2, "step": 0.02},
                    "solver": {"harmonics": "odd:15", "dofs": ["u11", "u12"],
                               "stability": True},
                    "grid": {"mu_n": [8]}}).run()
    c = st.cases[0]
    assert c["stable"].shape == c["omega"].shape and (c["stable"] == 1).all()
    assert (c["max_multiplier"] < 1).all() and c["peak_stable"] == 1
    with pytest.raises(ewr.InputError, match="frequency"):
        ewr.Study({"model": "tmd.h5", "frequency": {"start": -1.0, "end": 1.2, "step": 0.02}})


def test_a_flat_optimum_is_in_the_study_s_cases_and_table(tmp_path, monkeypatch):
    # oscillator-2d: from mu N = 10 sqrt(2) on the friction contact holds the mass at every
    # instant (closed form), so the optimum is flat from there to the range's end.
    shutil.copy(MODELS / "oscillator-2d.h5", tmp_path / "osc.h5")
    monkeypatch.chdir(tmp_path)
    r = ewr.Study({"model": "osc.h5",
                   "frequency": {"start": 0.2, "end": 2.6, "step": 0.05},
                   "solver": {"harmonics": "odd:15"},
                   "grid": {"forcing_scale": [1.0]},
                   "optimize": {"parameter": "mu_n", "from": 1, "to": 30, "count": 8}}).run()
    lo, hi = r.cases[0]["optimum_plateau"]
    assert 10 * 2 ** 0.5 <= lo <= 1.01 * 10 * 2 ** 0.5 and hi == 30.0
    t = r.table()
    assert (t["plateau_from"][0], t["plateau_to"][0]) == (lo, hi)


def test_the_same_simulation_through_cli_and_python(tmp_path):
    model = MODELS / "oscillator-2d.h5"
    out = run_cli("simulate", model, "--omega", "0.5", "--dt", "0.01", "--dofs", "all",
                  "-o", tmp_path / "cli.h5", "--timeseries", tmp_path / "cli.csv")
    assert out.returncode == 0, out.stderr
    ewr.Model.read(model).simulate(0.5, dt=0.01, output=tmp_path / "py.h5",
                                   timeseries=tmp_path / "py.csv")
    h5_equal(tmp_path / "cli.h5", tmp_path / "py.h5", skip=("model", "elapsed_s"))
    assert (tmp_path / "cli.csv").read_text() == (tmp_path / "py.csv").read_text()
    with pytest.raises(ewr.InputError, match="static_factor=0.5"):
        ewr.Model.read(model).simulate(0.5, static_factor=0.5)


def test_the_same_stepped_sine_through_cli_and_python(tmp_path):
    model = MODELS / "two-mass-damper.h5"
    grid = ["--omega-start", "0.5", "--omega-end", "0.7", "--step", "0.1"]
    out = run_cli("simulate", model, *grid, "--dt", "0.01", "--csv", tmp_path / "cli.csv",
                  "--timeseries", tmp_path / "cli-last.csv")
    assert out.returncode == 0, out.stderr
    seen = []
    s = ewr.Model.read(model).simulate(omega_start=0.5, omega_end=0.7, step=0.1, dt=0.01,
                                       csv=tmp_path / "py.csv",
                                       timeseries=tmp_path / "py-last.csv",
                                       progress=lambda i, n, w: seen.append((i, n)))
    assert (tmp_path / "cli.csv").read_text() == (tmp_path / "py.csv").read_text()
    assert (tmp_path / "cli-last.csv").read_text() == (tmp_path / "py-last.csv").read_text()
    assert isinstance(s, ewr.SteppedSine) and len(s) == 3 and all(s.converged)
    assert seen == [(0, 3), (1, 3), (2, 3)]
    assert np.allclose(s.omega, [0.5, 0.6, 0.7])
    assert s.dof_peak.shape == (3, len(s.dofs)) and s.stick_fraction.shape == (3, 1)
    # The amplitude is the largest norm over the period of the recorded DOFs' vector.
    last = s.last
    assert last.omega == s.omega[-1]
    assert np.isclose(np.linalg.norm(last.u, axis=0).max(), s.amplitude[-1], rtol=1e-12)
    # The table has the CSV's columns, in its order and with its numbers.
    header = (tmp_path / "py.csv").read_text().splitlines()[0].split(",")
    t = s.table()
    assert list(t) == header
    assert np.array_equal(t["peak_u0"], s.dof_peak[:, 0]) and s.failure is None
    assert s.contact_amplitude.shape == (3, 1) and s.steady_state_error.shape == (3,)
    m = ewr.Model.read(model)
    for call, message in [
        (lambda: m.simulate(), "omega_start"),
        (lambda: m.simulate(0.5, omega_start=0.5, omega_end=0.7, step=0.1), "omega_start"),
        (lambda: m.simulate(omega_start=0.5, omega_end=0.7), "omega_start"),
        (lambda: m.simulate(omega_start=0.5, omega_end=0.7, step=-1.0), "step=-1"),
        (lambda: m.simulate(0.5, csv=tmp_path / "x.csv"), "csv"),
        (lambda: m.simulate(omega_start=0.5, omega_end=40.5, step=20.0, dt=0.02), "dt=0.02"),
    ]:
        with pytest.raises(ewr.InputError, match=message):
            call()


def test_ctrl_c_during_peaks_and_simulate_keeps_what_was_computed():
    import _thread
    import threading

    m = ewr.Model.example("two-mass-damper")
    # A process started in the background of a non-interactive shell inherits SIGINT
    # ignored, and interrupt_main() then does nothing: Ctrl-C needs Python's handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.warns(UserWarning, match="interrupted"):
            d = m.peaks("mu_n", 1.0, 30.0, count=200, omega_start=0.2, omega_end=2.6,
                        step=0.002, harmonics="odd:63")
    finally:
        timer.cancel()
    assert d["interrupted"] and len(d["value"]) < 200
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.warns(UserWarning, match="interrupted"):
            sim = m.simulate(0.5, periods=100000, tol=1e-300)
    finally:
        timer.cancel()
    assert sim.interrupted and not sim.converged and sim.periods_run < 100000
    assert np.all(np.isfinite(sim.u))
    # A backbone of 2000 amplitudes (6 s) keeps what it computed, as `ewr modes` does.
    b3 = ewr.Model.example("blade-damper-blade-3d")
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.warns(UserWarning, match="interrupted"):
            d = b3.modes(1e-7, 1e-2, points=2000, harmonics="all:31", frc=True)
    finally:
        timer.cancel()
    assert d["interrupted"] and 0 < len(d["amplitude"]) < 2000 and d["frc"] is None


def test_a_curve_that_turns_back_out_of_the_band_is_not_complete():
    # Arclength on the 3-D contact turns back at w = 6.45 and leaves the band at its start.
    m = ewr.Model.example("single-contact-3d")
    with pytest.warns(UserWarning, match="stopped early"):
        c = m.frc(1.0, 20.0, 0.05, harmonics="all:15", continuation="arclength", refine=False)
    assert c.stopped is not None and "without reaching 20" in c.stopped
    assert c.omega.max() < 20.0


def test_auto_harmonics_and_the_error_estimate():
    m = ewr.Model.example("oscillator-2d")
    with pytest.warns(UserWarning, match="truncation error"):
        coarse = m.solve(1.0, harmonics="odd:1")
    assert coarse.error_estimate["relative"] > 0.3
    assert coarse.error_estimate["method"] == "richer"
    auto = m.solve(1.0, harmonics="auto")
    assert auto.harmonics != "odd:1" and auto.error_estimate["relative"] <= 0.01
    # auto's check of a set with one below it adds the tail beyond 2H+1 (docs/accuracy.md).
    assert auto.error_estimate["method"] == "richer-with-tail"
    rich = m.solve(1.0, harmonics="odd:255", estimate=False)
    assert rich.error_estimate is None
    assert auto.dof_peaks[0] == pytest.approx(rich.dof_peaks[0], rel=0.01)
    curve = m.frc(0.3, 1.2, 0.02, harmonics="auto", refine=False)
    assert np.all(curve.converged)
    assert len({curve[i].harmonics for i in range(len(curve))}) >= 1
    # Each checked point says how: from below on every set from h = 31 (the resonance), and
    # on sets from h = 15 that the check from below vouched for (docs/accuracy.md).
    methods = curve.amplitude_error_method
    checked = ~np.isnan(curve.amplitude_error)
    assert checked.any()
    assert all((k is not None) == c for k, c in zip(methods, checked))
    for i, k in enumerate(methods):
        if k is not None:
            h = int(curve[i].harmonics.split(":")[1])
            assert h < 31 or k == "from-below", (curve[i].harmonics, k)
            assert k != "from-below" or h >= 15, (curve[i].harmonics, k)
    assert "from-below" in methods and "richer-with-tail" in methods
    # A fixed set with one below it is estimated as auto's checks are: with the tail.
    plain = m.frc(0.3, 0.5, 0.1, harmonics="odd:3", estimate=True, refine=False)
    assert plain.amplitude_error_method == ["richer-with-tail"] * len(plain)


def test_amplitude_measures_drop_the_static_part_as_the_cli_does():
    # single-contact-3d is pressed by a static load: max carries the static deflection.
    m = ewr.Model.example("single-contact-3d")
    full = m.solve(2.0, harmonics="all:7", estimate=False)
    dyn = m.solve(2.0, harmonics="all:7", estimate=False, amplitude="dynamic")
    h1 = m.solve(2.0, harmonics="all:7", estimate=False, amplitude="h1")
    assert np.all(np.asarray(dyn.dof_peaks) <= np.asarray(full.dof_peaks))
    assert dyn.dof_peaks[2] < full.dof_peaks[2]
    assert np.all(np.asarray(h1.dof_peaks) > 0)
    with pytest.raises(ewr.InputError, match="amplitude"):
        m.solve(2.0, harmonics="all:7", amplitude="rms")


def test_engine_order_overrides_the_sectors_as_the_cli_does():
    m = ewr.Model.example("bladed-disk")  # EO 3
    a = m.solve(1.0, harmonics="odd:7", estimate=False)
    b = m.solve(1.0, harmonics="odd:7", estimate=False, engine_order=1)
    other = ewr.Model.example("bladed-disk", engine_order=1)
    c = other.solve(1.0, harmonics="odd:7", estimate=False)
    assert b.dof_peaks == pytest.approx(c.dof_peaks, rel=1e-12)
    assert a.dof_peaks != pytest.approx(b.dof_peaks, rel=1e-3)
    with pytest.raises(ewr.InputError, match="engine_order"):
        ewr.Model.example("oscillator-2d").solve(1.0, engine_order=2)


def test_an_engine_order_study_is_read_for_its_largest_peak(tmp_path):
    # Over the engine order no value is a design choice: the case to read is the critical
    # engine order, the largest peak, as `ewr study` reports it ("largest peak: case ...").
    shutil.copy(MODELS / "bladed-disk.h5", tmp_path / "bladed-disk.h5")
    study = (MODELS / "eo-study.toml").read_text().replace(
        "[0, 1, 2, 3, 4, 5, 6]", "[1, 2, 4]").replace("step = 0.01", "step = 0.02")
    (tmp_path / "eo.toml").write_text(study)
    r = ewr.Study(tmp_path / "eo.toml").run()
    t = r.table()
    assert r.optimum["peak_amplitude"] == max(t["peak_amplitude"])
    assert r.optimum["peak_amplitude"] > min(t["peak_amplitude"])
    out = run_cli("study", tmp_path / "eo.toml", "-o", tmp_path / "eo.h5", "--no-plot")
    assert out.returncode == 0, out.stderr
    assert f"largest peak: case {r.optimum['index']} " in out.stdout, out.stdout


def test_the_package_installs_the_ewr_command(tmp_path):
    # `pip install` puts the command line on PATH beside the module, from the same build.
    found = shutil.which("ewr")
    if found is None or Path(found).resolve() == Path(cli_binary() or "").resolve():
        pytest.skip("the package's ewr command is not on PATH (not installed with pip)")
    v = subprocess.run([found, "--version"], capture_output=True, text=True)
    assert v.returncode == 0 and ewr.__version__ in v.stdout, v
    csv = tmp_path / "frc.csv"
    out = subprocess.run([found, "frc", MODELS / "two-mass-damper.h5", "--omega-start", "0.5",
                          "--omega-end", "1.0", "--step", "0.05", "--harmonics", "odd:7",
                          "--csv", csv], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    cli = run_cli("frc", MODELS / "two-mass-damper.h5", "--omega-start", "0.5", "--omega-end",
                  "1.0", "--step", "0.05", "--harmonics", "odd:7", "--csv", tmp_path / "b.csv")
    assert cli.returncode == 0, cli.stderr
    assert csv.read_text() == (tmp_path / "b.csv").read_text()
    # Bad input exits 2 with the binary's message; the file probe runs through the package.
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not an HDF5 file")
    out = subprocess.run([found, "solve", bad, "--omega", "1"], capture_output=True, text=True)
    assert out.returncode == 2 and "bad.h5" in out.stderr, out.stderr
    # `python -m ewr` is the same command.
    import sys
    m = subprocess.run([sys.executable, "-m", "ewr", "model", "example", "--list"],
                       capture_output=True, text=True)
    assert m.returncode == 0 and "two-mass-damper" in m.stdout, m.stderr


def test_runtime_signatures_and_docstrings_are_the_documented_ones():
    # help(ewr.Model.frc) in a notebook shows real defaults and the documentation of
    # _ewr.pyi, not "harmonics=Ellipsis" and "see _ewr.pyi".
    import ast
    stub = ast.parse((Path(ewr.__file__).parent / "_ewr.pyi").read_text())
    model = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Model")
    documented = {f.name: ast.get_docstring(f) for f in model.body
                  if isinstance(f, ast.FunctionDef)}
    for name in ["solve", "frc", "peaks", "modes", "simulate"]:
        method = getattr(ewr.Model, name)
        sig = inspect.signature(method)
        assert all(p.default is not Ellipsis for p in sig.parameters.values()), (name, sig)
        assert inspect.cleandoc(method.__doc__) == documented[name], name
    assert inspect.signature(ewr.Model.frc).parameters["harmonics"].default == "default"
