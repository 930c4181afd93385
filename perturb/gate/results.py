"""Load and validate a benchmark results file (results.json) against the known schema versions."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..bench.results import DIRECTIONS, SCHEMA_VERSION
from .errors import GateInputError

KNOWN_SCHEMA_VERSIONS = (SCHEMA_VERSION,)   # minor versions of a known major (1.x) are read as 1.0
RUN_KEYS = ("modality", "perturbation", "category", "severity", "t2v", "v2t", "gamma_a", "gamma_r")


@dataclass(frozen=True)
class Results:
    """A validated results file: the raw mapping plus where it came from."""

    data: Mapping[str, Any]
    source: str = "<results>"

    @property
    def metric(self) -> str:
        return self.data["metric"]

    @property
    def clean(self) -> Mapping[str, Any]:
        return self.data["clean"]

    @property
    def runs(self) -> list[Mapping[str, Any]]:
        return list(self.data["runs"])

    @property
    def summary(self) -> Mapping[str, Any]:
        return self.data.get("summary") or {}

    @property
    def ci_level(self) -> float | None:
        boot = self.data.get("bootstrap")
        return float(boot["level"]) if isinstance(boot, Mapping) and "level" in boot else None

    def perturbations(self) -> dict[str, Mapping[str, Any]]:
        """Perturbation name → its first run (modality, category), in run order."""
        out: dict[str, Mapping[str, Any]] = {}
        for run in self.runs:
            out.setdefault(run["perturbation"], run)
        return out

    def categories(self) -> list[str]:
        return list(dict.fromkeys(run["category"] for run in self.runs))

    def modalities(self) -> list[str]:
        found = list(dict.fromkeys(run["modality"] for run in self.runs))
        return found + [m for m in self.summary.get("modality", {}) if m not in found]


def _schema_ok(version: Any) -> bool:
    if not isinstance(version, str):
        return False
    major = version.split(".")[0]
    return any(major == known.split(".")[0] for known in KNOWN_SCHEMA_VERSIONS)


def _require(mapping: Any, keys: tuple[str, ...], where: str) -> None:
    if not isinstance(mapping, Mapping):
        raise GateInputError(f"{where}: expected an object; got {type(mapping).__name__}")
    missing = [k for k in keys if k not in mapping]
    if missing:
        raise GateInputError(f"{where}: missing key(s) {', '.join(map(repr, missing))}")


def validate(data: Any, source: str = "<results>") -> Results:
    """Check the keys the gate relies on; raise GateInputError naming the first problem."""
    _require(data, ("schema_version", "metric", "clean", "runs"), source)
    if not _schema_ok(data["schema_version"]):
        raise GateInputError(
            f"{source}: unknown schema_version {data['schema_version']!r}; this perturb reads "
            f"{', '.join(KNOWN_SCHEMA_VERSIONS)} (and later 1.x)")
    metric = data["metric"]
    if not isinstance(metric, str) or metric.split(".")[0] not in DIRECTIONS or "." not in metric:
        raise GateInputError(f"{source}: 'metric' must look like 't2v.R@5'; got {metric!r}")
    _require(data["clean"], DIRECTIONS, f"{source}: clean")
    if not isinstance(data["runs"], list):
        raise GateInputError(f"{source}: 'runs' must be a list; got {type(data['runs']).__name__}")
    for i, run in enumerate(data["runs"]):
        _require(run, RUN_KEYS, f"{source}: runs[{i}]")
        for direction in DIRECTIONS:
            _require(run[direction], (), f"{source}: runs[{i}].{direction}")
    summary = data.get("summary")
    if summary is not None and not isinstance(summary, Mapping):
        raise GateInputError(f"{source}: 'summary' must be an object")
    return Results(data, source)


def load_results(path: str | Path) -> Results:
    """Read and validate a results.json; GateInputError if unreadable, not JSON or off-schema."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GateInputError(f"cannot read results file {str(p)!r}: {e}") from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise GateInputError(f"{p}: not valid JSON ({e})") from e
    return validate(data, str(p))
