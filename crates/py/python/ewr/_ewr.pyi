"""Type stubs of the extension module ``ewr._ewr`` (PyO3). Arrays are numpy float64 unless
noted; every computation releases the GIL while it runs."""

from os import PathLike
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt
import scipy.sparse

__version__: str

MatrixLike = Union[npt.ArrayLike, scipy.sparse.spmatrix, scipy.sparse.sparray]
Dof = Union[int, str]

class InputError(ValueError):
    """Bad input: a missing or malformed file, an invalid model or option. The message is
    the one the ``ewr`` command prints."""

class SolveError(RuntimeError):
    """A computation that could not be done (singular structure, numerical failure)."""

def examples() -> dict[str, str]:
    """The built-in example models: ``{name: one-line summary}``."""

def cli_main(argv: Sequence[str], relaunch: Sequence[str]) -> int:
    """Run the ``ewr`` command line with ``argv`` (program name first) and return its exit
    code; ``relaunch`` starts a copy of it. Behind the installed ``ewr`` command."""

class Model:
    """A linear structure with dry-friction contacts under periodic forcing (immutable).

    ``M u'' + C u' + K u = f(t) + W^T r(t)`` with ``r`` the contact forces.

    ``contacts`` is a dict:

    - ``dim``: tangential directions per contact, 1 or 2 (default 1);
    - the kinematics, either ``dofs`` (one list of ``dim`` DOF indices per contact, or a flat
      list) with optional ``other`` (the opposite node's DOFs, same layout; ``None`` or -1
      for ground), or ``W``, a ``(dim * n_contacts, n_dofs)`` matrix;
    - ``mu_n``: friction bound per contact (a number applies to all);
    - ``rho`` (optional): E-WR scaling per contact (default 1), or ``"auto"``: scaled at each
      frequency from the structure, ``1 / (h w |G_h|)`` (3-D contacts always are);
    - ``k_t`` (optional): tangential contact stiffness in series (a Jenkins element);
    - ``normal`` (optional, 3-D contacts, excludes ``mu_n``): a dict with ``dofs``/``other``
      or ``W`` (one normal row per contact, gap ``g = g0 + W_N u``, positive open),
      ``g0`` (initial gap, negative = interference/preload, default 0), ``mu`` (friction
      coefficient, required), optional ``k_n`` (normal contact stiffness) and optional
      ``load``: per contact a fixed normal force (``nan``: unilateral), for a contact with
      no normal direction (its ``dofs`` entry -1) whose friction bound is ``mu * load``.

    ``forcing`` is a list of ``(dof, harmonic, cos[, sin])``: ``f_dof(t) += cos cos(h w t) +
    sin sin(h w t)``; harmonic 0 is a static load (needs ``harmonics="all:H"``).

    Raises ``InputError`` listing every problem of an invalid model (same checks and messages
    as ``ewr model check``).
    """

    def __init__(
        self,
        mass: MatrixLike,
        stiffness: MatrixLike,
        damping: Optional[MatrixLike] = None,
        *,
        contacts: Optional[dict[str, Any]] = None,
        forcing: Optional[Sequence[tuple]] = None,
        rayleigh: Optional[tuple[float, float]] = None,
        eta: Optional[float] = None,
        dof_labels: Optional[Sequence[str]] = None,
        title: Optional[str] = None,
        units: Optional[str] = None,
        cyclic: Optional[dict] = None,
    ) -> None: ...
    @staticmethod
    def read(path: Union[str, PathLike]) -> "Model":
        """Reads a model file (HDF5, docs/model-format.md); warnings become UserWarnings."""
    @staticmethod
    def example(
        name: str,
        *,
        mu_n: Optional[float] = None,
        contacts: Optional[int] = None,
        refine: Optional[int] = None,
        contact_3d: bool = False,
        damper_mass: Optional[float] = None,
        sectors: Optional[int] = None,
        engine_order: Optional[int] = None,
    ) -> "Model":
        """A built-in example (``ewr.examples()`` lists them), as ``ewr model example``."""
    def write(self, path: Union[str, PathLike]) -> None:
        """Writes the model file, readable by the ``ewr`` command."""
    @property
    def n_dofs(self) -> int: ...
    @property
    def n_contacts(self) -> int: ...
    @property
    def contact_dim(self) -> int: ...
    @property
    def has_normal(self) -> bool: ...
    @property
    def mu_n(self) -> list[float]: ...
    @property
    def title(self) -> Optional[str]: ...
    @property
    def units(self) -> Optional[str]: ...
    @property
    def dof_labels(self) -> Optional[list[str]]: ...
    @property
    def mass(self) -> scipy.sparse.csc_array: ...
    @property
    def stiffness(self) -> scipy.sparse.csc_array: ...
    @property
    def damping(self) -> scipy.sparse.csc_array:
        """Total viscous damping ``C + alpha M + beta K``."""
    @property
    def contact_matrix(self) -> scipy.sparse.csc_array:
        """Tangential rows ``W``, then the normal rows of 3-D contacts."""
    @property
    def forcing(self) -> list[tuple[int, int, float, float]]: ...
    def natural_frequencies(
        self, *, stuck: bool = False, nodal_diameter: Optional[int] = None
    ) -> list[float]:
        """Undamped natural circular frequencies, friction removed or (``stuck=True``) every
        contact stuck, as ``ewr model info``: a sweep should cover both. Up to 3000 DOFs. On
        a cyclic sector, those of ``nodal_diameter`` (default: that of harmonic 1)."""
    @property
    def cyclic(self) -> Optional[dict]:
        """``{"sectors", "engine_order", "left", "right"}`` of a cyclic sector model
        (docs/cyclic.md), ``None`` otherwise."""
    def annulus(self) -> "Model":
        """The full disk of a cyclic sector model, as ``ewr model annulus``."""
    def with_mu_n(self, mu_n: float) -> "Model":
        """The same model with every contact's friction bound set to ``mu_n``."""
    def solve(
        self,
        omega: float,
        *,
        harmonics: str = "default",
        mu_n: Optional[float] = None,
        rho: Union[float, str, None] = None,
        law: str = "exact",
        samples: Optional[int] = None,
        tol: Optional[float] = None,
        max_iter: int = 200,
        ramp: bool = True,
        dofs: Optional[Sequence[Dof]] = None,
        receptance: str = "auto",
        linear: str = "auto",
        preconditioner: str = "two-level",
        amplitude: str = "max",
        engine_order: Optional[int] = None,
        output: Union[str, PathLike, None] = None,
        timeseries: Union[str, PathLike, None] = None,
        plot: Union[str, PathLike, None] = None,
        estimate: bool = True,
        stability: bool = True,
        all_phases: bool = False,
    ) -> "Solution":
        """One periodic solution at ``omega``, as ``ewr solve`` (same options, same checks and
        messages). A solution that did not converge is returned with ``converged == False``;
        bad options raise ``InputError``. ``tol=None`` is 1e-10, or 1e-9 for a model with 3-D
        contacts. ``rho`` is a number or ``"auto"`` (``1 / (h w |G_h|)`` at each frequency).
        ``output``, ``timeseries`` and ``plot`` write the files of ``ewr solve -o``,
        ``--timeseries`` and ``--plot`` (.png or .svg). ``estimate`` solves the point again on
        the richer set 2H+1 for ``Solution.error_estimate`` (``ewr solve`` without
        ``--no-estimate``); above 1 % of the amplitude it warns. ``harmonics="default"`` is
        odd:59, or all:59 where the model needs the static term or even harmonics (3-D
        contacts, a static load, even forcing harmonics). ``harmonics="auto"`` (or
        ``"auto:0.01"``) chooses the smallest set of ``odd:1, odd:3, odd:7, ...`` within that
        error (docs/accuracy.md). ``amplitude`` is what the DOF amplitudes measure: ``"max"``
        (``max_t ||u(t)||``), ``"dynamic"`` (about the mean), ``"h1"`` (first harmonic) or
        ``"pp"`` (peak to peak), as ``--amplitude``. ``engine_order`` overrides a cyclic
        sector model's engine order, as ``--engine-order``. ``stability`` computes the Floquet
        multipliers (``Solution.stable``, ``max_multiplier``; ``ewr solve`` without
        ``--no-stability``, docs/stability.md); on a cyclic sector against the travelling
        wave's perturbations, and with ``all_phases`` every other inter-sector phase's too
        (``Solution.phases``, ``--all-phases``)."""
    def frc(
        self,
        omega_start: float,
        omega_end: float,
        step: float,
        *,
        continuation: str = "sequential",
        adaptive: Optional[float] = None,
        refine: bool = True,
        progress: Optional[Callable[[int, float, float], None]] = None,
        harmonics: str = "default",
        mu_n: Union[float, Sequence[float], None] = None,
        rho: Union[float, str, None] = None,
        law: str = "exact",
        samples: Optional[int] = None,
        tol: Optional[float] = None,
        max_iter: int = 200,
        ramp: bool = True,
        dofs: Optional[Sequence[Dof]] = None,
        receptance: str = "auto",
        linear: str = "auto",
        preconditioner: str = "two-level",
        amplitude: str = "max",
        engine_order: Optional[int] = None,
        output: Union[str, PathLike, None] = None,
        csv: Union[str, PathLike, None] = None,
        plot: Union[str, PathLike, None] = None,
        hz: bool = False,
        resume: bool = False,
        estimate: bool = False,
        stability: bool = False,
        all_phases: bool = False,
    ) -> Union["Frc", list["Frc"]]:
        """Frequency response curve(s), as ``ewr frc`` (same options). A list of ``mu_n``
        gives one curve per value, computed in parallel over one condensation, returned as a
        list. ``adaptive=1e-2`` lets the step follow the curve (smaller at peaks and folds, up
        to 8 ``step`` where it is straight) so that the polyline through the points is within
        that relative tolerance of the amplitude. ``refine`` refines every local maximum and
        phase resonance (``ewr frc`` without ``--no-refine``). ``progress(points_done, omega,
        amplitude)`` is called after every point. Ctrl-C stops the sweep and returns the points
        computed so far (``Frc.stopped`` says so, with a warning); unconverged points warn.
        ``output``, ``csv`` and ``plot`` write the files of ``ewr frc -o``, ``--csv`` and
        ``--plot``; ``resume=True`` continues an interrupted sweep from its ``output`` file.
        ``estimate=True`` estimates every point's truncation error (``Frc.amplitude_error``,
        one more solve per point, ``ewr frc --estimate``); refined peaks are estimated anyway.
        ``stability=True`` classifies every converged point and peak by its Floquet multipliers
        (``Frc.stable``, ``Frc.max_multiplier``, ``ewr frc --stability``); with
        ``all_phases=True`` on a cyclic sector against every inter-sector phase
        (``Frc.phase_max_multiplier``, ``--all-phases``).
        ``tol=None`` is 1e-10, or 1e-9 for a model with 3-D contacts."""
    def peaks(
        self,
        param: str,
        start: float,
        end: float,
        *,
        omega_start: float,
        omega_end: float,
        step: float,
        count: int = 11,
        optimum: bool = True,
        adaptive: Optional[float] = None,
        harmonics: str = "default",
        mu_n: Optional[float] = None,
        rho: Union[float, str, None] = None,
        law: str = "exact",
        samples: Optional[int] = None,
        tol: Optional[float] = None,
        max_iter: int = 200,
        ramp: bool = True,
        dofs: Optional[Sequence[Dof]] = None,
        receptance: str = "auto",
        linear: str = "auto",
        preconditioner: str = "two-level",
        amplitude: str = "max",
        engine_order: Optional[int] = None,
        output: Union[str, PathLike, None] = None,
        csv: Union[str, PathLike, None] = None,
        plot: Union[str, PathLike, None] = None,
        stability: bool = False,
        all_phases: bool = False,
    ) -> dict[str, Any]:
        """The resonance peak followed as ``param`` goes from ``start`` to ``end`` (``count``
        values), and the value with the smallest peak, as ``ewr peaks``: ``param`` is ``mu_n``,
        ``forcing``, ``mass:DOF`` (index or label), or for 3-D contacts ``mu`` and
        ``normal-preload``. Coarse sweeps over ``omega_start..omega_end`` (``step``, adaptive if
        given) at both ends find the maxima; each is followed without full curves; golden
        section refines the optimum when ``optimum``. Returns ``{"parameter", "value",
        "omega", "amplitude", "evaluations", "switched"`` (arrays over the evaluated values,
        sorted; ``switched`` true where the highest peak is another resonance's than at the
        previous value),
        ``"optimum": {"value", "amplitude", "omega", "interior", "plateau"} or None, "solves",
        "error"}`` (``plateau`` is ``(from, to)`` where the peak stays within 1 % of the
        optimum over three grid values or more: a flat optimum; else None); a peak lost midway
        warns and returns the locus so far. ``output``,
        ``csv`` and ``plot`` write the files of ``ewr peaks -o``, ``--csv`` and ``--plot``.
        ``stability=True`` adds ``"stable"`` (1 stable, 0 unstable, -1 not classified) and
        ``"max_multiplier"`` per peak (``ewr peaks --stability``; a peak past a fold is no
        physical maximum); with ``all_phases=True`` on a cyclic sector against every
        inter-sector phase (``--all-phases``). ``tol=None`` is 1e-10, or 1e-9 for a model
        with 3-D contacts."""
    def modes(
        self,
        start: float,
        end: float,
        *,
        mode: int = 1,
        points: int = 30,
        harmonics: str = "default",
        mu_n: Optional[float] = None,
        rho: Union[float, str, None] = None,
        law: str = "exact",
        samples: Optional[int] = None,
        tol: Optional[float] = None,
        max_iter: int = 200,
        ramp: bool = True,
        dofs: Optional[Sequence[Dof]] = None,
        receptance: str = "auto",
        linear: str = "auto",
        preconditioner: str = "two-level",
        amplitude: str = "max",
        engine_order: Optional[int] = None,
        output: Union[str, PathLike, None] = None,
        csv: Union[str, PathLike, None] = None,
        plot: Union[str, PathLike, None] = None,
        frc: bool = False,
    ) -> dict[str, Any]:
        """Nonlinear mode ``mode`` (counted from 1 in the structure with every contact stuck)
        by the extended periodic motion concept with the exact friction law, at ``points``
        modal amplitudes ``sqrt(Q1^H M Q1)`` from ``start`` to ``end`` (logarithmic), as
        ``ewr modes`` (docs/nonlinear-modes.md). Returns ``{"amplitude", "omega",
        "damping_ratio", "xi", "converged", "no_oscillation", "iterations",
        "gmres_iterations", "residual"}`` (arrays per amplitude; ``no_oscillation`` where
        Newton converged to no free oscillation; Newton and GMRES iterations and the final
        scaled residual, as in ``ewr modes --json``), ``"shape"`` (the
        fundamental of every DOF, complex, ``(points, n_dofs)``), ``"displacement"`` (every
        harmonic of every DOF, ``(points, n_dofs, n_coeffs)``, coefficients as in
        docs/results-format.md), ``"synthesis_peak"``
        (``(modal amplitude, omega, |Q1| per DOF)`` of the model's forcing synthesised from
        the mode, or ``None``) and ``"frc"``: with ``frc=True`` the forced response swept
        through that resonance (``ewr modes --frc``), ``(omega, |Q1|)`` rows at the forced DOF
        the mode moves most, ``"frc_dof"`` (the upward sweep's rows, then, for a mode that
        softens past its resonance's width, those of a sweep down from above), else ``None``.
        ``output``, ``csv`` and ``plot`` write the files of ``ewr modes -o``, ``--csv`` and
        ``--plot``. The backbone uses the exact law and a dense receptance (above 500 DOFs or
        with modal damping ratios the modes that cover its harmonics, extracted once)
        whatever the solver keywords say, and dense Newton steps but on the modal receptance
        or with 3-D contacts, where ``linear`` chooses as for a forced solve; the keywords
        apply to the forced sweep. Warns where an amplitude did not converge. Ctrl-C
        keeps the amplitudes computed (their files written, ``"interrupted"`` True, a warning)."""
    def simulate(
        self,
        omega: Optional[float] = None,
        *,
        omega_start: Optional[float] = None,
        omega_end: Optional[float] = None,
        step: Optional[float] = None,
        dt: Optional[float] = None,
        periods: int = 1000,
        tol: float = 1e-6,
        mu_n: Optional[float] = None,
        static_factor: float = 1.0,
        jenkins: Optional[float] = None,
        eta_as_viscous: bool = False,
        linear_solver: str = "auto",
        dofs: Optional[Sequence[Dof]] = None,
        progress: Optional[Callable[[int, int, float], None]] = None,
        output: Union[str, PathLike, None] = None,
        timeseries: Union[str, PathLike, None] = None,
        plot: Union[str, PathLike, None] = None,
        csv: Union[str, PathLike, None] = None,
    ) -> Union["Simulation", "SteppedSine"]:
        """The independent time-domain reference, as ``ewr simulate`` (same options, checks and
        files: ``output``, ``timeseries``, ``plot``). ``progress(period, max_periods,
        change)`` is called after every period; a run that does not reach the steady state
        within ``periods`` warns and returns its last period. With ``omega_start``,
        ``omega_end`` and ``step`` instead of ``omega``, a stepped sine: each frequency from
        the state the one before ended in (the first from rest), returned as a
        ``SteppedSine``, its rows in ``csv`` as they are done, its curve in ``plot``, its last
        period in ``output`` and ``timeseries``; ``progress(frequency, frequencies, omega)``
        is then called once a frequency, after its first period."""

class Solution:
    """One periodic solution. Contact arrays are ``(n_contacts, dim, samples)``; coefficient
    arrays have columns ``coefficient_names`` (``a0, a1, b1, ...`` of ``a_h cos(h w t) + b_h
    sin(h w t)``)."""

    omega: float
    converged: bool
    status: str
    residual: float
    iterations: int
    harmonics: str
    coefficient_names: list[str]
    samples: int
    time: npt.NDArray[np.float64]
    friction_coefficients: npt.NDArray[np.float64]
    displacement_coefficients: npt.NDArray[np.float64]
    contact_displacement: npt.NDArray[np.float64]
    contact_velocity: npt.NDArray[np.float64]
    friction_force: npt.NDArray[np.float64]
    normal_force: Optional[npt.NDArray[np.float64]]
    gap: Optional[npt.NDArray[np.float64]]
    contact_state: Optional[npt.NDArray[np.float64]]
    """3-D contacts: 0 separated, 1 slip, 2 stick per sample (as the HDF5 results)."""
    stick: npt.NDArray[np.bool_]
    """Whether each contact sticks at each sample, ``(n_contacts, samples)``."""
    contacts: list[dict[str, Any]]
    stick_fraction: list[float]
    dissipated_energy: list[float]
    dofs: list[int]
    dof_labels: Optional[list[str]]
    dof_coefficients: npt.NDArray[np.float64]
    dof_peaks: list[float]
    amplitude: float
    error_estimate: Optional[dict[str, Any]]
    """The truncation error where estimated: the point on the richer set ``harmonics``
    (2H+1, or 4H+3 for a first set; with the tail beyond it from the set below), ``{"harmonics", "method",
    "amplitude" (|A' - A|), "relative", "force", "dof_peaks", "converged"}``."""
    stable: Optional[bool]
    """No Floquet multiplier outside the unit circle (Hill's method, docs/stability.md);
    ``None`` where not classified."""
    max_multiplier: Optional[float]
    """Largest Floquet multiplier modulus; ``None`` where not classified."""
    floquet_exponents: Optional[npt.NDArray[np.complex128]]
    """The Floquet exponents kept, one per family, by decreasing real part."""
    phases: Optional[list[dict[str, Any]]]
    """With ``solve(all_phases=True)`` on a cyclic sector: per inter-sector phase ``2 pi p /
    N`` of the perturbation (``p = 0``, the travelling wave's, to ``N/2``), ``{"p", "stable",
    "max_multiplier", "reason"}``; ``stable`` and ``max_multiplier`` then cover every family.
    ``None`` otherwise (docs/stability.md, section 2)."""
    travelling_wave_only: Optional[bool]
    """A cyclic sector's: classified against the perturbations that keep its travelling wave
    only (``False`` with ``all_phases=True``); ``None`` on ordinary models."""
    def dof_history(
        self, samples: Optional[int] = None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """``(time, u)`` over one period, ``u`` of shape ``(n_monitored, samples)``."""

class Frc:
    """A frequency response curve; ``frc[i]`` is the ``Solution`` of point ``i``."""

    stopped: Optional[str]
    omega: npt.NDArray[np.float64]
    amplitude: npt.NDArray[np.float64]
    amplitude_error: npt.NDArray[np.float64]
    """Truncation error of ``amplitude`` per point (``estimate=True``), NaN elsewhere."""
    amplitude_error_method: list[Optional[str]]
    """How each point's ``amplitude_error`` was obtained (``"richer"``,
    ``"richer-with-tail"``, ``"from-below"``), None where not estimated."""
    stable: npt.NDArray[np.int64]
    """Per point (``stability=True``): 1 stable, 0 unstable, -1 not classified."""
    max_multiplier: npt.NDArray[np.float64]
    """Largest Floquet multiplier modulus per point, NaN where not classified."""
    travelling_wave_only: Optional[npt.NDArray[np.int64]]
    """A cyclic sector's, per point: 1 classified against the travelling wave's
    perturbations only, 0 against every inter-sector phase (``all_phases=True``), -1 not
    classified; ``None`` on ordinary models."""
    phase_max_multiplier: Optional[npt.NDArray[np.float64]]
    """With ``frc(all_phases=True)``: per point and family ``p = 0 .. N/2`` the largest
    Floquet multiplier modulus (NaN where not classified); ``None`` otherwise."""
    converged: npt.NDArray[np.bool_]
    iterations: npt.NDArray[np.uint64]
    dofs: list[int]
    dof_peaks: npt.NDArray[np.float64]
    contact_amplitude: npt.NDArray[np.float64]
    stick_fraction: npt.NDArray[np.float64]
    dissipated_energy: npt.NDArray[np.float64]
    peaks: list[dict[str, Any]]
    """Refined peaks: ``{"omega", "amplitude", "evaluations", "stick_fraction",
    "amplitude_error"}`` (the truncation error, estimated on 2H+1)."""
    phase_resonances: list[dict[str, Any]]
    """The forced DOF's phase resonances: ``{"dof", "omega", "amplitude", "evaluations"}``."""
    mu_n: Optional[float]
    """This curve's friction bound when ``mu_n=`` overrode the model's."""
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Solution: ...
    def table(self) -> dict[str, npt.NDArray[Any]]:
        """Columns named as ``ewr frc --csv``, plus ``stick<c>`` and ``energy<c>``:
        ``pandas.DataFrame(frc.table())``."""
    def write(self, path: Union[str, PathLike]) -> None:
        """The HDF5 result file of ``ewr frc -o`` (docs/results-format.md)."""
    def write_csv(self, path: Union[str, PathLike]) -> None:
        """The table of ``ewr frc --csv``."""
    def plot(self, path: Union[str, PathLike], *, hz: bool = False) -> None:
        """The figure of ``ewr frc --plot`` (.png or .svg)."""

class Simulation:
    """A time-domain simulation to the periodic steady state (last period)."""

    omega: float
    converged: bool
    interrupted: bool
    """True when Ctrl-C stopped the run before the steady state (the last period is kept)."""
    periods_run: int
    time: npt.NDArray[np.float64]
    contact_displacement: npt.NDArray[np.float64]
    contact_velocity: npt.NDArray[np.float64]
    friction_force: npt.NDArray[np.float64]
    stick: npt.NDArray[np.bool_]
    normal_force: Optional[npt.NDArray[np.float64]]
    dofs: list[int]
    u: npt.NDArray[np.float64]
    def summary(self) -> dict[str, Any]:
        """The summary of ``ewr simulate --json``."""

class SteppedSine:
    """A stepped sine (``Model.simulate(omega_start=..., omega_end=..., step=...)``): one
    steady state per frequency, each from the state the one before ended in. Tables are
    ``(frequencies, dofs)`` or ``(frequencies, contacts)``."""

    omega: npt.NDArray[np.float64]
    converged: list[bool]
    interrupted: bool
    """True when Ctrl-C stopped the sweep (its last frequency before the steady state)."""
    periods_run: list[int]
    steady_state_error: npt.NDArray[np.float64]
    amplitude: npt.NDArray[np.float64]
    """``max_t ||u(t)||`` over the recorded DOFs, as ``Frc``'s amplitude."""
    contact_amplitude: npt.NDArray[np.float64]
    """Largest ``|w|`` per contact, ``(frequencies, contacts)``."""
    dofs: list[int]
    dof_peak: npt.NDArray[np.float64]
    dof_mean: npt.NDArray[np.float64]
    dof_h1: npt.NDArray[np.float64]
    stick_fraction: npt.NDArray[np.float64]
    dissipated_energy: npt.NDArray[np.float64]
    last: Optional["Simulation"]
    """The last frequency's period in full."""
    failure: Optional[str]
    """The numerical failure that ended the sweep early (with a warning), else ``None``."""
    def table(self) -> dict[str, Any]:
        """The columns of ``ewr simulate --csv`` as ``{name: array}``."""
    def __len__(self) -> int: ...

class Study:
    """A parameter study (docs/study.md): from a study file (TOML) or a dict of the same
    content, e.g. ``{"model": "two-mass-damper.h5", "frequency": {"start": 0.2, "end": 2.6,
    "step": 0.005}, "grid": {"mu_n": [1, 2, 4]}}`` (a relative model path is then relative to
    the current folder). Every setting and case is checked at construction."""

    title: Optional[str]
    model_path: str
    parameters: list[str]
    cases: list[dict[str, Any]]
    """``{"index", "key", <parameter>: value}`` per case."""
    def __init__(self, source: Union[str, PathLike, dict[str, Any]]) -> None: ...
    def __len__(self) -> int: ...
    def run(
        self,
        output: Union[str, PathLike, None] = None,
        *,
        jobs: Optional[int] = None,
        progress: Optional[Callable[[int, int, str], None]] = None,
        retry_failed: bool = False,
        plots: bool = True,
    ) -> "StudyResult":
        """Runs every case as ``ewr study -o output``: in parallel (``jobs`` at a time), each
        finished case kept at once in ``output + ".cases/"`` (a rerun resumes), then the result
        file, the summary table and the figures beside ``output``. Without ``output`` nothing
        is kept. ``progress(done, total, key)`` is called as each case finishes; Ctrl-C stops
        starting new cases and raises ``KeyboardInterrupt``."""

class StudyResult:
    """The results of ``Study.run``."""

    files: list[str]
    cases: list[dict[str, Any]]
    """Per case: ``index``, ``key``, parameter values, ``status``, ``reason``, ``peak_omega``,
    ``peak_amplitude``, ``optimum_value``, ``optimum_plateau`` (``(from, to)`` where the
    optimum is flat, else None) and arrays ``omega``, ``amplitude``, ``converged``,
    ``iterations``, ``peaks_omega``, ``peaks_amplitude``, ``locus_value``, ``locus_omega``,
    ``locus_amplitude``; with ``solver.stability = true`` also ``stable`` and
    ``max_multiplier`` per point, ``peak_stable`` and ``locus_stable`` (1 stable, 0 unstable,
    -1 not classified)."""
    optimum: Optional[dict[str, Any]]
    """The case the study is read for: the smallest peak (among fully converged cases if
    any), or in a study over ``engine_order`` the largest (the critical engine order)."""
    def table(self) -> dict[str, Any]:
        """The summary table (columns as the study's CSV): ``pandas.DataFrame(r.table())``."""
    def __len__(self) -> int: ...

def read_result(path: Union[str, PathLike]) -> dict[str, Any]:
    """Any result file ewr writes (``solve``, ``frc``, ``peaks``, ``simulate`` ``-o``, a study
    file) as a dict: attributes and datasets by name (numbers, strings, numpy arrays in their
    stored shape), groups as nested dicts (layout in docs/results-format.md)."""
