"""The metric vocabulary of results files and rules: ``gamma_a``, ``gamma_r``, ``t2v.R@5``,
``clean.v2t.MdR``, ``top1``, ``mCE``, ...; :data:`KINDS`, the one table of what each kind of
retrieval metric is, and :data:`MEASURES`, the one table of the other measures (a classification
file's accuracies and errors, the suites' figures); :func:`gamma_metric` reads the metric γ is
computed on, :func:`parse_metric` any metric a rule or a comparison names.

Imports nothing above the ground floor (and no numpy: a kind's functions receive a
:class:`perturb.ranking.Ranking` or :class:`~perturb.ranking.Judgements` and call it), so
:mod:`perturb.results` and the gate build on it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .errors import GateInputError
from .names import normalize, unknown_name

DIRECTIONS = ("t2v", "v2t")
DIRECTION_WORDS = {"t2v": "text→video", "v2t": "video→text"}
GAMMAS = ("gamma_a", "gamma_r")
MODALITIES = ("video", "image", "text", "both")   # what a run perturbed (image: a classification file's images)
VISUAL = ("video", "image")                       # the modalities of severity-graded visual perturbations
PARTS = ("seen", "held_out")                      # a run split by --trained-with (results' "split")
RETRIEVAL, CLASSIFY, LMMS = "retrieval", "classify", "lmms"   # a results file's "task" (none: retrieval)
TASK_PHRASES = {RETRIEVAL: "a retrieval", CLASSIFY: "a classification", LMMS: "an lmms-eval"}   # for messages


@dataclass(frozen=True)
class MetricKind:
    """One kind of retrieval metric: how it is measured per query, and what every reader of a
    results file needs to know of it."""

    key: str                                    # "R@K", "mAP", ...: "@K" takes K from the name (R@5)
    display: str                                # what it is, in words ("recall at K")
    per_query: Callable[[Any, Any], Any]        # (Ranking, K or None) -> (Q,) values
    chance: Callable[[Any, Any], Any] | None = None   # (Judgements, K) -> (Q,) values of a random ranking
    fraction: bool = True                       # values in [0, 1]: γ is defined on it
    lower_is_better: bool = False
    median: bool = False                        # the metric is the median of the per-query values, not the mean
    needs_judgements: bool = False              # measured only with a judgements file (--judgements)
    reported: tuple[int | None, ...] = (None,)  # the Ks every results file carries; () only when asked for

    @property
    def takes_k(self) -> bool:
        return self.key.endswith("@K")

    def name(self, k: int | None) -> str:
        """The name of this kind at ``k`` (``R@5``), or its key when it takes no K."""
        return f"{self.key[:-1]}{k}" if self.takes_k else self.key

    def describe(self, k: int | None) -> str:
        """What this kind at ``k`` is, in words (``recall at 5``)."""
        return self.display.replace(" K", f" {k}") if self.takes_k else self.display


KINDS = (    # one row per kind; a new kind is a row here and its per-query function in perturb.ranking
    MetricKind("R@K", "recall at K", lambda r, k: r.hits(k), lambda j, k: j.hit_chance(k), reported=(1, 5, 10)),
    MetricKind("MdR", "median rank", lambda r, k: r.first_ranks, fraction=False, lower_is_better=True, median=True),
    MetricKind("MnR", "mean rank", lambda r, k: r.first_ranks, fraction=False, lower_is_better=True),
    MetricKind("mAP", "mean average precision", lambda r, k: r.average_precisions(), lambda j, k: j.positive_rate(),
               needs_judgements=True),
    MetricKind("nDCG@K", "normalised discounted cumulative gain at K", lambda r, k: r.ndcg(k),
               lambda j, k: j.ndcg_chance(k), reported=()),
)
_BY_KEY = {kind.key: kind for kind in KINDS}


@dataclass(frozen=True)
class Measure:
    """A measure other than a retrieval metric or γ: a classification file's accuracy or error (read
    from a run or ``clean``), or a suite's figure (read from ``suites.<suite>.figures``)."""

    key: str                          # "top1", "top1_error", "mCE", ...
    display: str                      # what it is, in words
    stored: str                       # the key it is read from ("top1" for top1_error)
    error: bool = False               # the value is 1 - the stored accuracy
    fraction: bool = True             # values in [0, 1]
    lower_is_better: bool = False
    figure: bool = False              # a suite's figure (one per file), not a run's value
    task: str | None = CLASSIFY       # the task whose files carry it (None: any file with the suite)
    comes_from: str = ""              # a figure: the run that gives a file one

    def read(self, record: Mapping[str, Any]) -> float | None:
        """The value in a run, ``clean`` or a suite's ``figures``; None when absent or null."""
        value = record.get(self.stored)
        if value is None:
            return None
        return round(1.0 - float(value), 12) if self.error else float(value)    # 0.07, not 0.06999999999999995


_IMAGENET_C = "an ImageNet-C run scored with --baseline-errors (perturb bench or perturb report)"
_KINETICS_C = "a Kinetics-C run"
MEASURES = (    # one row per measure; errors are never stored, always 1 - the accuracy
    Measure("top1", "top-1 accuracy", "top1"),
    Measure("top5", "top-5 accuracy", "top5"),
    Measure("top1_error", "top-1 error", "top1", error=True, lower_is_better=True),
    Measure("top5_error", "top-5 error", "top5", error=True, lower_is_better=True),
    Measure("score", "score of the lmms-eval task", "score", task=LMMS),
    Measure("mCE", "mean corruption error against a baseline (ImageNet-C)", "mCE", fraction=False,
            lower_is_better=True, figure=True, task=None, comes_from=_IMAGENET_C),
    Measure("relative_mCE", "relative mean corruption error (ImageNet-C)", "relative_mCE", fraction=False,
            lower_is_better=True, figure=True, task=None, comes_from=_IMAGENET_C),
    Measure("mPC", "mean performance under corruption (Kinetics-C)", "mPC", figure=True, task=None,
            comes_from=_KINETICS_C),
    Measure("rPC", "relative performance under corruption (Kinetics-C)", "rPC", fraction=False, figure=True,
            task=None, comes_from=_KINETICS_C),
)
MEASURE_BY_KEY = {m.key: m for m in MEASURES}
ACCURACIES = tuple(m.key for m in MEASURES if m.task == CLASSIFY and not m.error)   # what a run stores


def stored_scores(task: str) -> tuple[str, ...]:
    """What a run of a classification or lmms-eval file stores (``top1``, ``top5``; ``score``)."""
    return tuple(m.key for m in MEASURES if m.task == task and not m.error and not m.figure)


def kind_of(name: str) -> tuple[MetricKind, int | None] | None:
    """The kind and K of a retrieval metric name (``R@5`` → R@K, 5; ``mAP`` → mAP, None); None for
    any other name (K is a positive integer written without leading zeros)."""
    head, at, k = name.partition("@")
    if at and k.isascii() and k.isdigit() and not k.startswith("0") and f"{head}@K" in _BY_KEY:
        return _BY_KEY[f"{head}@K"], int(k)
    kind = _BY_KEY.get(name)
    return None if kind is None or kind.takes_k else (kind, None)


def reported_names(judged: bool = False) -> tuple[str, ...]:
    """The retrieval metrics every results file carries (with the judgements-only ones when ``judged``)."""
    return tuple(kind.name(k) for kind in KINDS if judged or not kind.needs_judgements for k in kind.reported)


def measured_names(headline: str, judged: bool) -> tuple[str, ...]:
    """What a benchmark measures per direction: the reported metrics and the one γ is computed on."""
    names = reported_names(judged)
    return names if headline in names else names + (headline,)


def is_fraction(name: str) -> bool:
    """Whether a retrieval metric's values are fractions in [0, 1] (R@K, mAP, ...)."""
    found = kind_of(name)
    return found is not None and found[0].fraction


def gamma_kinds(judged: bool = True) -> tuple[str, ...]:
    """The kinds γ may be computed on (fractions in [0, 1]; without ``judged``, none that needs judgements)."""
    return tuple(kind.key for kind in KINDS if kind.fraction and (judged or not kind.needs_judgements))


def gamma_forms() -> str:
    """How a metric γ is computed on is spelled: ``[t2v.|v2t.]R@K|mAP|...``."""
    return f"[t2v.|v2t.]{'|'.join(gamma_kinds())}"


@dataclass(frozen=True)
class Metric:
    """One measured quantity: a robustness score of runs, or a retrieval metric of runs or of clean."""

    key: str                      # "gamma_r", "R@5", "MdR", ...
    direction: str | None = None  # "t2v" / "v2t"; None for the gammas
    clean: bool = False
    part: str | None = None       # "seen" / "held_out": γ or a figure of that part of the split

    @property
    def name(self) -> str:
        base = self.key if self.direction is None else f"{self.direction}.{self.key}"
        return f"clean.{base}" if self.clean else f"{self.part}.{base}" if self.part else base

    @property
    def is_gamma(self) -> bool:
        return self.key in GAMMAS

    @property
    def kind(self) -> MetricKind | None:
        """The row of :data:`KINDS` of a retrieval metric (None for the gammas and unknown keys)."""
        found = kind_of(self.key)
        return None if found is None else found[0]

    @property
    def k(self) -> int | None:
        found = kind_of(self.key)
        return None if found is None else found[1]

    @property
    def measure(self) -> Measure | None:
        """The row of :data:`MEASURES` of an accuracy, error or suite figure (None for the others)."""
        return MEASURE_BY_KEY.get(self.key)

    @property
    def is_figure(self) -> bool:
        """A suite's figure (mCE, mPC, ...): one value per file, under ``suites``."""
        return self.measure is not None and self.measure.figure

    @property
    def lower_is_better(self) -> bool:
        row = self.kind or self.measure
        return row is not None and row.lower_is_better

    @property
    def words(self) -> str:
        """The metric in words: ``recall at 5 (...), text→video``, ``top-1 accuracy`` (the gammas and
        unknown keys: the name)."""
        if self.measure is not None:
            return self.measure.display
        if self.kind is None:
            return self.name
        return f"{self.kind.describe(self.k)}, {DIRECTION_WORDS[self.direction]}"

    @property
    def is_fraction(self) -> bool:
        """R@K, mAP, top-1 accuracy, ... values are fractions in [0, 1]."""
        return is_fraction(self.key) or (self.measure is not None and self.measure.fraction)

    def of(self, record: Mapping[str, Any]) -> float | None:
        """The value in a run (or in ``clean``, or a suite's ``figures``); None when absent or null."""
        if self.measure is not None:
            return self.measure.read(record)
        value = record.get(self.key) if self.direction is None else \
            (record.get(self.direction) or {}).get(self.key)
        return None if value is None else float(value)

    def __str__(self) -> str:
        return self.name


def gamma_metric(metric: str | Metric) -> Metric:
    """The metric γ is computed on: ``[t2v.|v2t.]`` and a fraction kind of :data:`KINDS` (``R@5``,
    ``mAP``; a bare name means text→video); a :class:`Metric` passes through. ValueError for anything else."""
    if isinstance(metric, Metric):
        return metric
    direction, _, name = str(metric).rpartition(".")
    direction = direction or "t2v"
    if direction not in DIRECTIONS or not is_fraction(name):
        raise ValueError(f"--metric must be {gamma_forms()}, K a positive integer (e.g. R@5; a value in "
                         f"[0, 1], so γ is defined); got {metric!r}")
    return Metric(name, direction)


def stored_metric(task: str) -> Callable[[str | Metric], Metric]:
    """The reader of the metric γ is computed on in a classification file (``top1`` or ``top5``) or an
    lmms-eval file (``score``): one of what its runs store; ValueError otherwise."""
    def read(metric: str | Metric) -> Metric:
        if not isinstance(metric, Metric) and metric not in stored_scores(task):
            raise ValueError(f"{TASK_PHRASES[task]} metric must be {' or '.join(stored_scores(task))}; got {metric!r}")
        return metric if isinstance(metric, Metric) else Metric(metric)
    return read


# per task: the reader of its files' "metric", and the key of that metric's bootstrap interval in a
# ``ci`` object (None: the metric's own name, as classification files write it)
HEADLINES = {RETRIEVAL: (gamma_metric, "metric"), **{task: (stored_metric(task), None) for task in (CLASSIFY, LMMS)}}


def task_of(doc: Mapping[str, Any]) -> str:
    """A results document's task: its ``task`` key, ``retrieval`` for files older than it."""
    return doc.get("task") or RETRIEVAL


def headline_metric(metric: str | Metric, task: str = RETRIEVAL) -> Metric:
    """A results file's own metric, read as its task writes it (``t2v.R@5``, ``top1``)."""
    return HEADLINES[task][0](metric)


def headline_ci_key(doc: Mapping[str, Any]) -> str:
    """The key of a results document's metric in its ``ci`` objects (``metric``, ``top1``)."""
    return HEADLINES[task_of(doc)][1] or str(doc["metric"])


def record_value(record: Mapping[str, Any], metric: str) -> float | None:
    """The value of a file's metric, as its ``metric`` names it (``t2v.R@5``, ``top1``), in a run,
    ``clean`` or ``chance``; None when absent or null."""
    direction, _, key = str(metric).rpartition(".")
    value = (record.get(direction) or {}).get(key) if direction else record.get(key)
    return None if value is None or isinstance(value, Mapping) else float(value)


def figure_value(results: Any, key: str) -> float | None:
    """A suite's figure (``mCE``, ``mPC``, ...) in a results document: the first suite that has it."""
    for entry in ((results.get("suites") if isinstance(results, Mapping) else None) or {}).values():
        value = MEASURE_BY_KEY[key].read((entry or {}).get("figures") or {})
        if value is not None:
            return value
    return None


def part_value(results: Any, metric: Metric) -> float | None:
    """A part's mean γ or figure (``held_out.gamma_r``, ``seen.mPC``) in a results document's ``split``."""
    entry = (((results.get("split") if isinstance(results, Mapping) else None) or {}).get(metric.part)) or {}
    if metric.is_gamma:
        value = entry.get(f"{metric.key}_mean")
        return None if value is None else float(value)
    return MEASURE_BY_KEY[metric.key].read(entry.get("figures") or {})


def _part_names(results: Any) -> list[str]:
    """``seen.gamma_r``, ``held_out.mPC``, ...: what a file with a ``split`` may be gated on per part."""
    split = (results.get("split") if isinstance(results, Mapping) else None) or {}
    keys = list(GAMMAS) + [m.key for m in MEASURES if m.figure]
    return [f"{part}.{key}" for part in PARTS if part in split for key in keys]


def metric_names(results: Any = None, clean: bool = True) -> list[str]:
    """Every metric name a rule may use: for a classification file (``task``) its accuracies and
    errors, else the retrieval metrics (with the extra ones a results file, anything with a ``clean``
    mapping, carries); γ; and the suite figures the file holds."""
    task = getattr(results, "task", RETRIEVAL)
    if task in (CLASSIFY, LMMS):
        run = list(GAMMAS) + [m.key for m in MEASURES if m.task == task and m.stored in results.clean]
        cleans = [f"clean.{k}" for k in run[len(GAMMAS):]]
    else:
        keys = list(reported_names())
        if results is not None:
            for direction in DIRECTIONS:
                keys += [k for k in results.clean.get(direction, {}) if k not in keys]
        run = list(GAMMAS) + [f"{d}.{k}" for d in DIRECTIONS for k in keys]
        cleans = [f"clean.{d}.{k}" for d in DIRECTIONS for k in keys]
    figures = [m.key for m in MEASURES if m.figure and figure_value(results, m.key) is not None]
    return run + (cleans if clean else []) + figures + _part_names(results)


def parse_metric(text: str, results: Any = None, clean: bool = True) -> Metric:
    """A metric name → Metric, matched ignoring case, spaces, dashes and underscores (``GAMMA-R``
    is ``gamma_r``; a bare retrieval metric means text→video); GateInputError listing the valid ones."""
    valid = metric_names(results, clean)
    lookup = {normalize(v): v for v in valid}
    for v in valid:
        if "t2v." in v:
            lookup.setdefault(normalize(v.replace("t2v.", "", 1)), v)
    canonical = lookup.get(normalize(str(text)))
    head = str(text).strip().partition(".")[0]
    if canonical is None and normalize(head) in map(normalize, PARTS):
        raise GateInputError(f"metric {str(text).strip()!r}: this file holds no seen/held-out split; it comes "
                             f"from perturb bench --trained-with SELECTION" if not _part_names(results) else
                             unknown_name("metric", str(text).strip(), {v: v for v in valid}, valid))
    if canonical is None:
        absent = next((m for m in MEASURES if m.figure and normalize(m.key) == normalize(str(text))), None)
        if absent is not None:
            raise GateInputError(f"metric {absent.key!r}: this file holds no {absent.display}; it comes from "
                                 f"{absent.comes_from}")
        raise GateInputError(unknown_name("metric", str(text).strip(), {v: v for v in valid}, valid))
    parts = canonical.split(".")
    if parts[0] in PARTS:
        return Metric(key=parts[1], part=parts[0])
    is_clean = parts[0] == "clean"
    parts = parts[1:] if is_clean else parts
    return Metric(key=parts[-1], direction=parts[0] if len(parts) == 2 else None, clean=is_clean)
