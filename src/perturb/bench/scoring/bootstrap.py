"""Percentile-bootstrap confidence intervals over queries, single and paired (clean vs perturbed).

METHOD names the method in reports."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...rng import as_generator
from .robustness import gamma_a, gamma_r

METHOD = ("percentile bootstrap over queries: {n} resamples of the queries with replacement (seed {seed}), "
          "{level:.0%} intervals; γ intervals are paired (each resample takes the same queries clean and "
          "perturbed)")

def _indices(n_items: int, n: int, seed: int) -> np.ndarray:
    if n_items < 1:
        raise ValueError("bootstrap needs at least one query")
    if n < 1:
        raise ValueError(f"the number of bootstrap resamples must be >= 1; got {n}")
    return as_generator(seed).integers(0, n_items, size=(n, n_items))


def _interval(samples: np.ndarray, level: float) -> list[float | None]:
    if not 0 < level < 1:
        raise ValueError(f"the confidence level must be in (0, 1); got {level}")
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return [None, None]
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(samples, [alpha, 1.0 - alpha])
    return [float(lo), float(hi)]


def _stat(values: np.ndarray, idx: np.ndarray, median: bool) -> np.ndarray:
    taken = values[idx]
    return np.median(taken, axis=1) if median else taken.mean(axis=1)


def bootstrap_ci(values: np.ndarray, n: int = 1000, seed: int = 0, level: float = 0.95,
                 median: bool = False) -> list[float | None]:
    """Percentile CI of the mean (or median) of per-query values, from ``n`` resamples of queries."""
    values = np.asarray(values, dtype=np.float64)
    return _interval(_stat(values, _indices(len(values), n, seed), median), level)


def paired_bootstrap(clean: np.ndarray, perturbed: np.ndarray, n: int = 1000, seed: int = 0,
                     level: float = 0.95) -> dict[str, list[float | None]]:
    """CIs of the perturbed metric, γa and γr; each resample takes the same queries in both runs."""
    clean = np.asarray(clean, dtype=np.float64)
    perturbed = np.asarray(perturbed, dtype=np.float64)
    if clean.shape != perturbed.shape:
        raise ValueError(f"paired bootstrap needs per-query values of equal shape; "
                         f"got {clean.shape} and {perturbed.shape}")
    idx = _indices(len(clean), n, seed)
    a_c, a_p = _stat(clean, idx, False), _stat(perturbed, idx, False)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {"metric": _interval(a_p, level), "gamma_a": _interval(gamma_a(a_c, a_p), level),
                "gamma_r": _interval(gamma_r(a_c, a_p), level)}


def mean_gamma_bootstrap(clean: np.ndarray, perturbed: Sequence[np.ndarray], n: int = 1000, seed: int = 0,
                         level: float = 0.95) -> dict[str, list[float | None]]:
    """CIs of the mean γa and mean γr over several runs (e.g. one modality's), each resample taking
    the same queries in the clean run and in every perturbed run."""
    clean = np.asarray(clean, dtype=np.float64)
    idx = _indices(len(clean), n, seed)
    a_c = _stat(clean, idx, False)
    sums = {"gamma_a": np.zeros(n), "gamma_r": np.zeros(n)}
    with np.errstate(divide="ignore", invalid="ignore"):
        for values in perturbed:
            a_p = _stat(np.asarray(values, dtype=np.float64), idx, False)
            sums["gamma_a"] += gamma_a(a_c, a_p)
            sums["gamma_r"] += gamma_r(a_c, a_p)
    count = max(1, len(perturbed))
    return {g: _interval(total / count, level) for g, total in sums.items()}
