"""The results.json contract (docs/results-schema.md), below both the benchmark that writes it and
the gate that reads it: schema versions (metric names and their parsing live in :mod:`.metric_names`,
what differs between retrieval and classification files in :mod:`.result_tasks`), tie conventions,
the writers (results.json, the tidy results.csv), :func:`validate` and :func:`load_results`.

Imports nothing above the ground floor, so reading results loads no runner, codec or model.
"""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any, Iterator, Mapping

from .errors import GateInputError
from .fileio import write_atomic
from .metric_names import GAMMAS, RETRIEVAL, Metric, figure_value, headline_ci_key, headline_metric
from .result_tasks import RUN_TEXT_KEYS, SHAPES, TaskShape, intervals, number, require, shape_of
from .shapes import ANY_OBJECT, COUNT, INTEGER, INTERVAL, NUMBER, TEXT, ListOf, MapOf, Nullable, Obj

SCHEMA_VERSION = "1.5"         # 1.1 added "ties"; 1.2 "chance", "flags", summary.modality.*.ci; 1.3 "task";
                               # 1.4 "split" (--trained-with); 1.5 task "lmms" (perturb lmms-score)
KNOWN_SCHEMA_VERSIONS = ("1.0", SCHEMA_VERSION)   # later minor versions (1.x) are read too
TIES = ("pessimistic", "optimistic")
DEFAULT_TIES = "pessimistic"      # files without a "ties" key predate it and used this convention
RUN_KEYS = SHAPES[RETRIEVAL].run_keys
SUMMARY_KINDS = ("perturbation", "category", "modality")
SUMMARY_TOLERANCE = 1e-6          # a summary mean may differ from its runs' mean by float rounding only
CSV_FIELDS = ("model", "dataset", "modality", "perturbation", "category", "severity", "measure", "value")

# The keys around the scores (checked by hand in validate()) that check, compare and report read, in
# the shapes they read them: a file off these is refused in one line instead of failing in a reader.
GAMMA_AGGREGATE = Obj(optional={f"{g}_{s}": NUMBER for g in GAMMAS for s in ("mean", "std")})
SIDE_TASK = {"file": TEXT, "n": COUNT, "missing": COUNT}
FIGURES = Nullable(Obj(optional={"mPC": NUMBER, "rPC": NUMBER, "mCE": NUMBER, "relative_mCE": NUMBER,
                                 "CE": MapOf(NUMBER)}))
PART = Obj({"operations": ListOf(TEXT), "configurations": COUNT},
           {**GAMMA_AGGREGATE.optional, "ci": Nullable(MapOf(INTERVAL)), "figures": FIGURES})
FIELDS = Obj(
    required={"model": Obj({"id": TEXT}, {"kind": TEXT, "card": ANY_OBJECT}),
              "dataset": Obj({"name": TEXT, "n_items": COUNT}, {"seed": Nullable(INTEGER)})},
    optional={
        "bootstrap": Nullable(Obj({"n": COUNT, "seed": INTEGER, "level": NUMBER})),
        "flags": ListOf(Obj({"kind": TEXT, "message": TEXT})),
        "skipped": Nullable(ListOf(Obj({"modality": TEXT, "perturbation": TEXT, "reason": TEXT},
                                       {"severity": Nullable(INTEGER)}))),
        "left_out": Nullable(ListOf(Obj({"perturbation": TEXT}))),
        "suites": MapOf(Obj({"operations": ListOf(TEXT), "members": COUNT, "configurations": COUNT,
                             "category": MapOf(GAMMA_AGGREGATE)},
                            {**GAMMA_AGGREGATE.optional, "figures": FIGURES})),
        "split": Obj({"trained_with": Obj({"given": TEXT, "operations": ListOf(TEXT)}, {"kind": TEXT}),
                      "seen": PART, "held_out": PART}),
        "mc": Nullable(Obj({**SIDE_TASK, "accuracy": NUMBER}, {"ci": INTERVAL, "chance": NUMBER})),
        "entailment": Nullable(Obj(SIDE_TASK, {"roc_auc": NUMBER, "chance": NUMBER})),
        "rerank": Nullable(Obj({"first_stage": TEXT, "k": COUNT, "pairs_scored": COUNT, "note": TEXT})),
        "provenance": Nullable(Obj({"engine": TEXT, "replicas": ListOf(ANY_OBJECT)})),
    })


@dataclass(frozen=True)
class Results(Mapping[str, Any]):
    """A validated results document (read like the mapping it is) plus where it came from."""

    data: Mapping[str, Any]
    source: str = "<results>"

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    @property
    def task(self) -> str:
        """``retrieval`` (also for files older than the key) or ``classify``."""
        return self.data.get("task", RETRIEVAL)

    @property
    def shape(self) -> TaskShape:
        return SHAPES[self.task]

    @property
    def labels(self) -> list[str]:
        """A classification file's class names, in label order (empty for retrieval)."""
        return list((self.data.get("classification") or {}).get("labels") or [])

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
    def headline(self) -> Metric:
        """The file's own metric (``"metric": "t2v.R@5"``, ``"top1"``) as a run metric."""
        return headline_metric(self.metric, self.task)

    def ci_key(self, metric: Metric) -> str | None:
        """The key of ``metric``'s bootstrap interval in a run's (or clean's) ``ci``: γ's own, the
        headline metric's (an error's is its accuracy's, mirrored), None for any other."""
        if metric.is_gamma:
            return metric.key
        if metric.measure is not None and not metric.is_figure:      # an accuracy or its error
            return metric.measure.stored
        return headline_ci_key(self.data) if metric.name.removeprefix("clean.") == self.metric else None

    def figure(self, key: str) -> float | None:
        """A suite's figure (``mCE``, ``relative_mCE``, ``mPC``, ``rPC``); None where no suite has it."""
        return figure_value(self.data, key)

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


def _run(run: Any, i: int, shape: TaskShape, source: str) -> None:
    field = f"runs[{i}]"
    require(run, shape.run_keys, f"{source}: {field}")
    for key in RUN_TEXT_KEYS:
        if not isinstance(run[key], str) or not run[key]:
            raise GateInputError(f"{source}: {field}.{key} must be a non-empty string; got {run[key]!r}")
    severity = run["severity"]
    if severity is not None and (isinstance(severity, bool) or not isinstance(severity, int)):
        raise GateInputError(f"{source}: {field}.severity must be an integer or null; got {severity!r}")
    shape.scores(run, field, source)
    for gamma in GAMMAS:
        number(run[gamma], f"{field}.{gamma}", source)
    intervals(run, field, source)


def _summary(summary: Any, runs: list[Mapping[str, Any]], source: str) -> None:
    """Every summary entry is an object of numbers whose γ means agree with the runs they summarize."""
    require(summary, SUMMARY_KINDS, f"{source}: summary")
    for kind, section in summary.items():
        require(section, (), f"{source}: summary.{kind}")
        for name, entry in section.items():
            field = f"summary.{kind}.{name}"
            require(entry, (), f"{source}: {field}")
            for key, value in entry.items():
                if key.endswith(("_mean", "_std")):
                    number(value, f"{field}.{key}", source)
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
    """Check the keys and value types readers rely on, and that the summary agrees with the
    runs; raise GateInputError naming the file and the first field at fault."""
    require(data, ("schema_version", "metric", "clean", "runs"), source)
    if not _schema_ok(data["schema_version"]):
        raise GateInputError(
            f"{source}: unknown schema_version {data['schema_version']!r}; this perturb reads "
            f"{', '.join(KNOWN_SCHEMA_VERSIONS)} (and later 1.x)")
    shape = shape_of(data, source)
    shape.scores(data["clean"], "clean", source)
    intervals(data["clean"], "clean", source)
    if data.get("ties", DEFAULT_TIES) not in TIES:
        raise GateInputError(f"{source}: ties must be one of {', '.join(TIES)}; got {data['ties']!r}")
    problem = FIELDS.problem(data, "") or shape.fields.problem(data, "")
    if problem:
        raise GateInputError(f"{source}: {problem}")
    level = (data.get("bootstrap") or {}).get("level")
    if level is not None and not 0 < level < 1:
        raise GateInputError(f"{source}: bootstrap.level must be in (0, 1); got {level!r}")
    if not isinstance(data["runs"], list):
        raise GateInputError(f"{source}: 'runs' must be a list; got {type(data['runs']).__name__}")
    for i, run in enumerate(data["runs"]):
        _run(run, i, shape, source)
    shape.document(data, source)
    require(data, ("summary",), source)         # reports and rules read it
    _summary(data["summary"], data["runs"], source)
    return Results(data, source)


def load_results(path: str | os.PathLike) -> Results:
    """Read and validate a results.json; GateInputError (a ValueError) naming the file if it is
    unreadable, not JSON, not an object or off-schema."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GateInputError(f"cannot read results file {str(p)!r}: {e}") from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise GateInputError(f"{p}: not valid JSON ({e})") from e
    if not isinstance(data, dict):
        raise GateInputError(f"{p}: expected a JSON object (a results.json); got {type(data).__name__}")
    return validate(data, str(p))


def write_json(doc: Mapping[str, Any], path: str | os.PathLike) -> Path:
    """Write results.json atomically (NaN is never written: γr of A_c = 0 is null)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode())
    return path


def tidy_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per (run, measure): t2v.R@1 ... v2t.MnR (a classification file: top1, top5, top1_error,
    top5_error), gamma_a, gamma_r; the clean run first."""
    base = {"model": doc["model"]["id"], "dataset": doc["dataset"]["name"]}
    measures = SHAPES[doc.get("task", RETRIEVAL)].measures
    rows = []
    runs = [{"modality": "clean", "perturbation": "clean", "category": "clean", "severity": None,
             **doc["clean"]}] + list(doc["runs"])
    for run in runs:
        ident = {**base, **{k: run[k] for k in ("modality", "perturbation", "category", "severity")}}
        rows += [{**ident, "measure": m, "value": v} for m, v in measures(run)]
        rows += [{**ident, "measure": g, "value": run[g]} for g in GAMMAS if g in run]
    return rows


def write_csv(doc: Mapping[str, Any], path: str | os.PathLike) -> Path:
    """Write the tidy results.csv (empty cells for null)."""
    path = Path(path)
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
    w.writeheader()
    for row in tidy_rows(doc):
        w.writerow({k: "" if row[k] is None else row[k] for k in CSV_FIELDS})
    write_atomic(path, buf.getvalue().encode("utf-8"))      # a reader never sees half a table
    return path
