"""A (transductive) linear fixed-confidence identifier assembled from a sampling rule, the GLR
stopping rule and the empirical-best recommendation (issue 36 §2: "a composable K-armed and
linear identifier"), the linear counterpart of
:class:`~banditkit.identification.k_armed.composed.ComposedIdentifier`.

* Sampling (:class:`LinearSampling`): ``"track-and-stop"`` — the sampling half of
  :class:`~banditkit.identification.track_and_stop.LinearTrackAndStop` (Jedra & Proutière 2020:
  forced exploration while λ_min(A_t) < c₀√t, else C- or D-tracking of the lazily recomputed
  plug-in allocation); ``"frank-wolfe"`` — the sampling half of
  :class:`~banditkit.identification.fw_sampling.FrankWolfeSampling` (Wang, Tzeng & Proutière
  2021); ``"uniform"`` — round robin over the arms (the least pulled, ties to the lowest index).
  A rule takes its class's parameters (``LinearSampling("track-and-stop", tracking="D")``) and
  its class's defaults.
* Stopping: the GLR statistic Z(t) = min_{z ≠ ẑ} ((ẑ − z)ᵀθ̂)²/(2σ²‖ẑ − z‖²_{A_t⁻¹}) against
  β(t, δ), ``threshold="paper"`` (Jedra & Proutière's Proposition 2, δ-correct whatever the
  sampling rule, once λ_min(A_t) ≥ c) or ``"heuristic"`` log((1 + log t)/δ)
  (:mod:`~banditkit.identification.glr`).
* Recommendation: ẑ = argmax_z zᵀθ̂_t.

The registered classes are combinations: ``LinearSampling("track-and-stop", **p)`` with the GLR
stop is ``LinearTrackAndStop(X, Z, δ, **p)``, and ``"frank-wolfe"`` is ``FrankWolfeSampling``,
bit for bit (``tests/test_composed_rules.py``): the rule is an instance of that class whose
least-squares state is the identifier's own, asked only for its sampling step. A composition
runs through the protocol loop (the classes keep their compiled drivers).
"""

from __future__ import annotations

import numpy as np

from .glr import GLRIdentifier

__all__ = ["LINEAR_RULES", "LinearComposedIdentifier", "LinearSampling"]

LINEAR_RULES = ("track-and-stop", "frank-wolfe", "uniform")


class LinearSampling:
    """A linear sampling rule by name, with its class's parameters (module docstring).

    Parameters
    ----------
    rule : {"track-and-stop", "frank-wolfe", "uniform"}
    **params
        The parameters of the rule's class other than X, Z, δ, the threshold and the GLR's
        u, c, σ and refresh period (the identifier's): e.g. ``tracking``, ``lazy_ratio``,
        ``forced_scale``, ``design_tol`` (Track-and-Stop); ``r_exponent``, ``tracking``,
        ``step``, ``forced`` (Frank-Wolfe). Checked when the identifier is built.
    """

    def __init__(self, rule: str = "track-and-stop", **params: object) -> None:
        if rule not in LINEAR_RULES:
            raise ValueError(f"rule must be one of {LINEAR_RULES}, got {rule!r}")
        if rule == "uniform" and params:
            raise ValueError(f"the uniform rule takes no parameters, got {sorted(params)}")
        self.rule, self.params = rule, dict(params)
        self._inner: GLRIdentifier | None = None

    def start(self, alg: LinearComposedIdentifier) -> None:
        """Build the rule's class on the identifier's problem, sharing its state."""
        if self.rule == "uniform":
            return
        if self.rule == "track-and-stop":
            from .track_and_stop import LinearTrackAndStop as cls
        else:
            from .fw_sampling import FrankWolfeSampling as cls
        inner = cls(alg.X, alg.Z, alg.delta, threshold=alg.threshold, u=alg.u, c=alg.c,
                    sigma=alg.sigma, refresh_every=alg.state.refresh_every, **self.params)
        inner.state = alg.state  # one least-squares state: the rule reads what the stop reads
        self._inner = inner

    def choose(self, alg: LinearComposedIdentifier) -> int:
        if self._inner is None:
            return int(np.argmin(alg.state.counts))
        return self._inner._choose()

    @property
    def info(self) -> dict:
        if self._inner is None:
            return {}
        skip = ("glr", "beta", "threshold")
        return {k: v for k, v in self._inner.info.items() if k not in skip}


class LinearComposedIdentifier(GLRIdentifier):
    """A linear identifier from a sampling rule and the GLR stop (module docstring).

    Parameters
    ----------
    X, Z, delta
        Arms (spanning R^d), items (distinct rows; ``None`` for Z = X), confidence δ ∈ (0, 1).
    sampling : LinearSampling
        The sampling rule (a fresh one: the identifier owns its state).
    threshold : {"paper", "heuristic"}
        β(t, δ) of the GLR stop.
    u, c, sigma, refresh_every
        As for :class:`~banditkit.identification.track_and_stop.LinearTrackAndStop`.
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, delta: float, *,
                 sampling: LinearSampling, threshold: str = "paper", u: float = 1.0,
                 c: float | None = None, sigma: float = 1.0, refresh_every: int = 10_000
                 ) -> None:
        if not isinstance(sampling, LinearSampling):
            raise ValueError(f"sampling must be a LinearSampling, got "
                             f"{type(sampling).__name__}")
        super().__init__(X, Z, delta, threshold=threshold, u=u, c=c, sigma=sigma,
                         refresh_every=refresh_every)
        self.sampling = sampling
        sampling.start(self)

    def _choose(self) -> int:
        return self.sampling.choose(self)

    @property
    def info(self) -> dict:
        return {**self.sampling.info, "glr": self.glr, "beta": self.beta,
                "threshold": self.threshold}
