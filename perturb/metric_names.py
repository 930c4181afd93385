"""The metric vocabulary of results files and rules: ``gamma_a``, ``gamma_r``, ``t2v.R@5``,
``clean.v2t.MdR``, ...; :func:`gamma_metric` reads the metric γ is computed on, :func:`parse_metric`
any metric a rule or a comparison names.

Imports nothing above the ground floor; :mod:`perturb.results` builds on it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .errors import GateInputError
from .names import normalize, unknown_name

DIRECTIONS = ("t2v", "v2t")
KS = (1, 5, 10)
GAMMA_METRICS = tuple(f"R@{k}" for k in KS) + ("mAP",)       # fractions in [0, 1]: γ is defined
RETRIEVAL_KEYS = tuple(f"R@{k}" for k in KS) + ("MdR", "MnR")
LOWER_IS_BETTER = ("MdR", "MnR")
GAMMAS = ("gamma_a", "gamma_r")


@dataclass(frozen=True)
class Metric:
    """One measured quantity: a robustness score of runs, or a retrieval metric of runs or of clean."""

    key: str                      # "gamma_r", "R@5", "MdR", ...
    direction: str | None = None  # "t2v" / "v2t"; None for the gammas
    clean: bool = False

    @property
    def name(self) -> str:
        base = self.key if self.direction is None else f"{self.direction}.{self.key}"
        return f"clean.{base}" if self.clean else base

    @property
    def is_gamma(self) -> bool:
        return self.key in GAMMAS

    @property
    def lower_is_better(self) -> bool:
        return self.key in LOWER_IS_BETTER

    @property
    def is_fraction(self) -> bool:
        """R@K values are fractions in [0, 1]."""
        return self.key.startswith("R@")

    def of(self, record: Mapping[str, Any]) -> float | None:
        """The value in a run (or in ``clean``); None when absent or null."""
        value = record.get(self.key) if self.direction is None else \
            (record.get(self.direction) or {}).get(self.key)
        return None if value is None else float(value)

    def __str__(self) -> str:
        return self.name


def gamma_metric(metric: str | Metric) -> Metric:
    """The metric γ is computed on: ``[t2v.|v2t.]R@1|R@5|R@10|mAP`` (a bare name means text→video);
    a :class:`Metric` passes through. ValueError for anything else."""
    if isinstance(metric, Metric):
        return metric
    direction, _, name = str(metric).rpartition(".")
    direction = direction or "t2v"
    if direction not in DIRECTIONS or name not in GAMMA_METRICS:
        raise ValueError(f"--metric must be [t2v.|v2t.]R@1|R@5|R@10|mAP (a value in [0, 1], so γ is "
                         f"defined); got {metric!r}")
    return Metric(name, direction)


def metric_names(results: Any = None, clean: bool = True) -> list[str]:
    """Every metric name a rule may use (with the extra metrics a results file, anything with a
    ``clean`` mapping, carries)."""
    keys = list(RETRIEVAL_KEYS)
    if results is not None:
        for direction in DIRECTIONS:
            keys += [k for k in results.clean.get(direction, {}) if k not in keys]
    run = list(GAMMAS) + [f"{d}.{k}" for d in DIRECTIONS for k in keys]
    return run + ([f"clean.{d}.{k}" for d in DIRECTIONS for k in keys] if clean else [])


def parse_metric(text: str, results: Any = None, clean: bool = True) -> Metric:
    """A metric name → Metric, matched ignoring case, spaces, dashes and underscores (``GAMMA-R``
    is ``gamma_r``; a bare retrieval metric means text→video); GateInputError listing the valid ones."""
    valid = metric_names(results, clean)
    lookup = {normalize(v): v for v in valid}
    for v in valid:
        if "t2v." in v:
            lookup.setdefault(normalize(v.replace("t2v.", "", 1)), v)
    canonical = lookup.get(normalize(str(text)))
    if canonical is None:
        raise GateInputError(unknown_name("metric", str(text).strip(), {v: v for v in valid}, valid))
    parts = canonical.split(".")
    is_clean = parts[0] == "clean"
    parts = parts[1:] if is_clean else parts
    return Metric(key=parts[-1], direction=parts[0] if len(parts) == 2 else None, clean=is_clean)
