"""ewr: periodic forced vibration of structures with exact dry (Coulomb) friction.

The Equality-based Weighted Residual (E-WR) harmonic balance: 1-D/2-D friction contacts with a
constant normal load, and 3-D contacts whose normal load varies and lifts off. Models come from
numpy / scipy.sparse arrays (``Model(M, K, C, contacts=..., forcing=...)``), from model files
(``Model.read``) or the built-in examples (``Model.example``); ``solve``, ``frc`` and
``simulate`` return results whose arrays are numpy arrays. See ``docs/python.md``.

    >>> import ewr
    >>> m = ewr.Model.example("oscillator-2d")
    >>> s = m.solve(0.17, harmonics="odd:59")
    >>> s.converged, s.stick_fraction
"""

from ._ewr import (
    Frc,
    InputError,
    Model,
    Simulation,
    Solution,
    SolveError,
    SteppedSine,
    Study,
    StudyResult,
    __version__,
    examples,
    read_result,
)

__all__ = [
    "Frc",
    "InputError",
    "Model",
    "Simulation",
    "Solution",
    "SolveError",
    "SteppedSine",
    "Study",
    "StudyResult",
    "__version__",
    "examples",
    "read_result",
    "tqdm_progress",
]


def tqdm_progress(total=None, **kwargs):
    """A ``progress`` callback for ``Model.frc`` that drives a tqdm bar.

    ``total`` is the expected number of points (``(omega_end - omega_start) / step + 1`` for a
    sequential sweep). Needs the ``tqdm`` package; close the returned callback's ``bar`` when
    done, or use it as ``with ewr.tqdm_progress(n) as cb: m.frc(..., progress=cb)``.
    """
    from tqdm.auto import tqdm

    class _Progress:
        def __init__(self):
            self.bar = tqdm(total=total, unit="pt", **kwargs)

        def __call__(self, done, omega, amplitude):
            self.bar.update(done - self.bar.n)
            self.bar.set_postfix(w=f"{omega:.5g}", amp=f"{amplitude:.4g}")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.bar.close()
            return False

    return _Progress()
