"""Load and validate a benchmark results file (results.json) against the known schema versions."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any, Mapping

from ..bench.metrics import TIES
from ..bench.results import DIRECTIONS, GAMMA_METRICS, SCHEMA_VERSION
from .errors import GateInputError

KNOWN_SCHEMA_VERSIONS = ("1.0", SCHEMA_VERSION)   # later minor versions (1.x) are read too
RUN_KEYS = ("modality", "perturbation", "category", "severity", "t2v", "v2t", "gamma_a", "gamma_r")
RUN_TEXT_KEYS = ("modality", "perturbation", "category")
GAMMAS = ("gamma_a", "gamma_r")
SUMMARY_KINDS = ("perturbation", "category", "modality")
DEFAULT_TIES = "pessimistic"      # files without a "ties" key predate it and used this convention
SUMMARY_TOLERANCE = 1e-6          # a summary mean may differ from its runs' mean by float rounding only


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
    def ties(self) -> str:
        """How the ranks broke ties: "pessimistic" (also for files older than the key) or "optimistic"."""
        return self.data.get("ties", DEFAULT_TIES)

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


def _number(value: Any, field: str, source: str) -> None:
    """A finite number or null (undefined values are written as null, never as NaN)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GateInputError(f"{source}: {field} must be a number or null; got {value!r}")
    if not math.isfinite(value):
        raise GateInputError(f"{source}: {field} is {value!r}; an undefined value must be null")


def _scores(block: Any, field: str, source: str) -> None:
    """A t2v/v2t block: metric name → number; recalls and mAP are fractions in [0, 1]."""
    _require(block, (), f"{source}: {field}")
    for key, value in block.items():
        _number(value, f"{field}.{key}", source)
        if key in GAMMA_METRICS and value is not None and not 0 <= value <= 1:
            raise GateInputError(f"{source}: {field}.{key} is {value!r}; expected a fraction in [0, 1]")


def _intervals(record: Mapping[str, Any], field: str, source: str) -> None:
    """The optional ``ci`` object: name → [lo, hi]."""
    ci = record.get("ci")
    if ci is None:
        return
    _require(ci, (), f"{source}: {field}.ci")
    for key, interval in ci.items():
        if not isinstance(interval, list) or len(interval) != 2:
            raise GateInputError(f"{source}: {field}.ci.{key} must be a list [lo, hi]; got {interval!r}")
        for i, bound in enumerate(interval):
            _number(bound, f"{field}.ci.{key}[{i}]", source)


def _metric(data: Mapping[str, Any], source: str) -> None:
    metric = data["metric"]
    direction, _, name = metric.partition(".") if isinstance(metric, str) else ("", "", "")
    if direction not in DIRECTIONS or name not in GAMMA_METRICS:
        raise GateInputError(f"{source}: metric must be t2v. or v2t. followed by one of "
                             f"{', '.join(GAMMA_METRICS)}; got {metric!r}")
    if not isinstance(data["clean"][direction].get(name), (int, float)):
        raise GateInputError(f"{source}: metric is {metric!r} but clean.{metric} is missing or null")


def _run(run: Any, i: int, source: str) -> None:
    field = f"runs[{i}]"
    _require(run, RUN_KEYS, f"{source}: {field}")
    for key in RUN_TEXT_KEYS:
        if not isinstance(run[key], str) or not run[key]:
            raise GateInputError(f"{source}: {field}.{key} must be a non-empty string; got {run[key]!r}")
    severity = run["severity"]
    if severity is not None and (isinstance(severity, bool) or not isinstance(severity, int)):
        raise GateInputError(f"{source}: {field}.severity must be an integer or null; got {severity!r}")
    for direction in DIRECTIONS:
        _scores(run[direction], f"{field}.{direction}", source)
    for gamma in GAMMAS:
        _number(run[gamma], f"{field}.{gamma}", source)
    _intervals(run, field, source)


def _summary(summary: Any, runs: list[Mapping[str, Any]], source: str) -> None:
    """Every summary entry is an object of numbers whose γ means agree with the runs they summarize."""
    _require(summary, SUMMARY_KINDS, f"{source}: summary")
    for kind, section in summary.items():
        _require(section, (), f"{source}: summary.{kind}")
        for name, entry in section.items():
            field = f"summary.{kind}.{name}"
            _require(entry, (), f"{source}: {field}")
            for key, value in entry.items():
                if key.endswith(("_mean", "_std")):
                    _number(value, f"{field}.{key}", source)
            if kind in SUMMARY_KINDS:
                _agrees(entry, [r for r in runs if r[kind] == name], field, source)


def _agrees(entry: Mapping[str, Any], runs: list[Mapping[str, Any]], field: str, source: str) -> None:
    for gamma in GAMMAS:
        key = f"{gamma}_mean"
        if key not in entry:
            continue
        values = [r[gamma] for r in runs if r[gamma] is not None]
        expected = fmean(values) if values else None
        stated = entry[key]
        if (stated is None) != (expected is None) or (
                stated is not None and abs(stated - expected) > SUMMARY_TOLERANCE):
            given = "no defined value" if expected is None else f"a mean of {expected:.6g}"
            stated_text = "null" if stated is None else f"{stated:.6g}"
            raise GateInputError(f"{source}: {field}.{key} is {stated_text} but its {len(runs)} run(s) give "
                                 f"{given}; the summary and the runs disagree")


def validate(data: Any, source: str = "<results>") -> Results:
    """Check the keys and value types the gate relies on, and that the summary agrees with the
    runs; raise GateInputError naming the file and the first field at fault."""
    _require(data, ("schema_version", "metric", "clean", "runs"), source)
    if not _schema_ok(data["schema_version"]):
        raise GateInputError(
            f"{source}: unknown schema_version {data['schema_version']!r}; this perturb reads "
            f"{', '.join(KNOWN_SCHEMA_VERSIONS)} (and later 1.x)")
    _require(data["clean"], DIRECTIONS, f"{source}: clean")
    for direction in DIRECTIONS:
        _scores(data["clean"][direction], f"clean.{direction}", source)
    _intervals(data["clean"], "clean", source)
    _metric(data, source)
    if data.get("ties", DEFAULT_TIES) not in TIES:
        raise GateInputError(f"{source}: ties must be one of {', '.join(TIES)}; got {data['ties']!r}")
    for key in ("model", "dataset"):
        if data.get(key) is not None:
            _require(data[key], (), f"{source}: {key}")
    bootstrap = data.get("bootstrap")
    if bootstrap is not None:
        _require(bootstrap, (), f"{source}: bootstrap")
        level = bootstrap.get("level")
        _number(level, "bootstrap.level", source)
        if level is not None and not 0 < level < 1:
            raise GateInputError(f"{source}: bootstrap.level must be in (0, 1); got {level!r}")
    if not isinstance(data["runs"], list):
        raise GateInputError(f"{source}: 'runs' must be a list; got {type(data['runs']).__name__}")
    for i, run in enumerate(data["runs"]):
        _run(run, i, source)
    _require(data, ("summary",), source)         # reports and rules read it
    _summary(data["summary"], data["runs"], source)
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
