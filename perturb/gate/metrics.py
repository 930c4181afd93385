"""The metric vocabulary of rules: gamma_a, gamma_r, t2v.R@5, clean.v2t.MdR, ..."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .errors import unknown
from .results import DIRECTIONS, Results

GAMMAS = ("gamma_a", "gamma_r")
RETRIEVAL_KEYS = ("R@1", "R@5", "R@10", "MdR", "MnR")
LOWER_IS_BETTER = ("MdR", "MnR")


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


def _retrieval_keys(results: Results | None) -> list[str]:
    keys = list(RETRIEVAL_KEYS)
    if results is not None:
        for direction in DIRECTIONS:
            keys += [k for k in results.clean.get(direction, {}) if k not in keys]
    return keys


def valid_metric_names(results: Results | None = None, clean: bool = True) -> list[str]:
    """Every metric name a rule may use (with the extra metrics a results file carries)."""
    keys = _retrieval_keys(results)
    run = list(GAMMAS) + [f"{d}.{k}" for d in DIRECTIONS for k in keys]
    return run + ([f"clean.{d}.{k}" for d in DIRECTIONS for k in keys] if clean else [])


def _folded(name: str) -> str:
    """A metric name with case, spaces, dashes and underscores ignored."""
    return "".join(ch for ch in name.lower() if ch not in " -_")


def parse_metric(text: str, results: Results | None = None, clean: bool = True) -> Metric:
    """A metric name → Metric, matched ignoring case, spaces, dashes and underscores (``GAMMA-R``
    is ``gamma_r``); GateInputError listing the valid ones."""
    valid = valid_metric_names(results, clean)
    lookup = {_folded(v): v for v in valid}
    # a bare retrieval metric means text→video, as in `perturb bench --metric R@5`
    for v in valid:
        if "t2v." in v:
            lookup.setdefault(_folded(v.replace("t2v.", "", 1)), v)
    canonical = lookup.get(_folded(str(text)))
    if canonical is None:
        raise unknown("metric", str(text).strip(), valid)
    parts = canonical.split(".")
    is_clean = parts[0] == "clean"
    parts = parts[1:] if is_clean else parts
    return Metric(key=parts[-1], direction=parts[0] if len(parts) == 2 else None, clean=is_clean)


def headline(results: Results) -> Metric:
    """The results file's own metric (``"metric": "t2v.R@5"``) as a run metric."""
    return parse_metric(results.metric, results, clean=False)
