"""``perturb compare``: regressions of a current results file against a baseline, noise-aware."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from statistics import NormalDist, fmean
from typing import Any, Iterable, Mapping

from ..errors import GateInputError
from ..metric_names import TASK_PHRASES, Metric, parse_metric
from ..results import Results
from .outcome import FAIL, INFO, PASS, Outcome, fmt
from .scope import Scope, scope_value, select_runs

DEFAULT_MAX_DROP = 0.02
DEFAULT_METRICS = ("gamma_r",)   # and, unless narrowed, the files' headline metric (see default_metrics)
DATASET_KEYS = ("name", "n_items", "subset", "seed")
TOLERANCE = 1e-9          # a drop equal to --max-drop up to float rounding is not a regression


@dataclass(frozen=True)
class Comparison:
    """The verdict rows plus notes (e.g. the two files used different subsets)."""

    outcomes: list[Outcome]
    notes: list[str] = field(default_factory=list)


def _ci_se(record: Mapping[str, Any], key: str, level: float) -> float | None:
    """Standard error implied by a bootstrap interval at ``level`` (normal approximation)."""
    interval = (record.get("ci") or {}).get(key)
    if not interval or len(interval) != 2 or None in interval:
        return None
    return (float(interval[1]) - float(interval[0])) / 2 / NormalDist().inv_cdf(0.5 + level / 2)


def standard_error(results: Results, scope: Scope | None, metric: Metric) -> float | None:
    """SE of a scope's value from the runs' CIs; the mean of their SEs for an aggregate (an upper
    bound, as the runs share their queries). None when any run lacks a CI for this metric."""
    key = results.ci_key(metric)
    if key is None:
        return None
    level = results.ci_level or 0.95
    if metric.part:                      # a part's mean γ: its own interval
        return _ci_se(results.data["split"][metric.part], key, level) if metric.is_gamma else None
    records = [results.clean] if scope is None else select_runs(results, scope)
    ses = [_ci_se(r, key, level) for r in records]
    return fmean(ses) if ses and None not in ses else None


def _rows(baseline: Results, current: Results, metric: Metric) -> list[tuple[str, str | None]]:
    """(kind, name) rows: clean for the scores, then perturbations, then categories; one row for a
    suite's figure."""
    if metric.part:
        return [("part", metric.part)]
    if metric.is_figure:
        return [("figure", None)]
    rows: list[tuple[str, str | None]] = []
    if metric.clean or not metric.is_gamma:
        rows.append(("clean", None))
    if not metric.clean:
        for kind, names in (("perturbation", lambda r: list(r.perturbations())),
                            ("category", lambda r: r.categories())):
            rows += [(kind, n) for n in dict.fromkeys(names(baseline) + names(current))]
    return rows


def _present(results: Results, kind: str, name: str | None) -> bool:
    return kind in ("clean", "figure", "part") or bool(select_runs(results, Scope(kind, name)))


def _significance(drop: float, ses: list[float | None], alpha: float) -> tuple[bool, float | None]:
    """(significant, one-sided p) for a drop given the two SEs; significant when no CI at all."""
    known = [s for s in ses if s is not None]
    if not known:
        return True, None
    se = math.sqrt(sum(s * s for s in known))
    if se == 0:
        return drop > 0, 0.0 if drop > 0 else 1.0
    p = 1 - NormalDist().cdf(drop / se)
    return p < alpha, p


def _row(baseline: Results, current: Results, kind: str, name: str | None, metric: Metric,
         max_drop: float, alpha: float | None) -> Outcome:
    if kind == "clean":
        metric, scope, label = replace(metric, clean=True), None, "clean"
    elif kind in ("figure", "part"):
        scope, label = None, "suites" if kind == "figure" else f"{name} part"
    else:
        scope, label = Scope(kind, name), f"{kind} {name}"
    test = f"{'' if scope is None else label + ': '}{metric.name} drop <= {max_drop:g}"
    in_base, in_cur = _present(baseline, kind, name), _present(current, kind, name)
    b = scope_value(baseline, scope, metric) if in_base else None
    c = scope_value(current, scope, metric) if in_cur else None
    cells = {"scope": kind, "name": name or "", "metric": metric.name, "baseline": fmt(b),
             "current": fmt(c), "drop": "—", "p": "—"}

    def verdict(status: str, word: str, message: str = "") -> Outcome:
        return Outcome(test, status, {**cells, "verdict": word}, message)

    if not in_cur:
        return verdict(FAIL, "missing", f"{label} is in the baseline but not in the current run")
    if not in_base:
        return verdict(INFO, "new", f"{label} is new; no baseline to compare with")
    if b is None:
        return verdict(INFO, "n/a", f"{metric.name} undefined in the baseline")
    if c is None:
        return verdict(FAIL, "undefined", f"{metric.name} undefined in the current run")
    drop = c - b if metric.lower_is_better else b - c
    cells["drop"] = f"{drop:+.3f}"
    if drop <= max_drop + TOLERANCE:
        return verdict(PASS, "ok")
    if alpha is None:
        return verdict(FAIL, "regression", f"dropped by {drop:.3f} (> {max_drop:g})")
    ses = [standard_error(baseline, scope, metric), standard_error(current, scope, metric)]
    significant, p = _significance(drop, ses, alpha)
    cells["p"] = "no CI" if p is None else f"{p:.3g}"
    if not significant:
        return verdict(PASS, "noise", f"dropped by {drop:.3f} but p={p:.3g} >= {alpha:g}")
    why = "no bootstrap CI to test it" if p is None else f"p={p:.3g} < {alpha:g}"
    return verdict(FAIL, "regression", f"dropped by {drop:.3f} (> {max_drop:g}; {why})")


def _notes(baseline: Results, current: Results) -> list[str]:
    notes = []
    b_set, c_set = baseline.data.get("dataset") or {}, current.data.get("dataset") or {}
    for key in DATASET_KEYS:
        if b_set.get(key) != c_set.get(key):
            notes.append(f"dataset {key} differs: baseline {b_set.get(key)!r}, current {c_set.get(key)!r}")
    if baseline.labels != current.labels:
        notes.append(_labels_note(baseline.labels, current.labels))
    b_model, c_model = (r.data.get("model") or {} for r in (baseline, current))
    if b_model.get("id") != c_model.get("id"):
        notes.append(f"model differs: baseline {b_model.get('id')!r}, current {c_model.get('id')!r}")
    return notes


def _labels_note(baseline: list[str], current: list[str]) -> str:
    """How the class lists of two classification files differ: their accuracies are over other classes."""
    if len(baseline) != len(current):
        return (f"the files score different classes: baseline {len(baseline)}, current {len(current)} labels; "
                f"their accuracies are not over the same choice")
    i = next(i for i, (b, c) in enumerate(zip(baseline, current)) if b != c)
    return (f"the files score different classes: label {i} is {baseline[i]!r} in the baseline, {current[i]!r} "
            f"in the current run; their accuracies are not over the same choice")


def default_metrics(results: Results) -> tuple[str, ...]:
    """γr plus the headline metric itself, clean and perturbed: a model whose accuracy dropped
    equally on clean and perturbed data keeps its γr but fails here."""
    return DEFAULT_METRICS + (results.metric,)


def compare(baseline: Results, current: Results, metrics: Iterable[str] | None = None,
            max_drop: float = DEFAULT_MAX_DROP, significance: float | None = None) -> Comparison:
    """Per clean / perturbation / category rows: a drop beyond ``max_drop`` (and, with
    ``significance``, outside the bootstrap noise) is a regression. ``metrics`` None compares
    :func:`default_metrics`."""
    if baseline.task != current.task:
        raise GateInputError(f"the baseline is {TASK_PHRASES[baseline.task]} results file and the current one "
                             f"{TASK_PHRASES[current.task]} file; they measure different tasks and are not "
                             "comparable")
    if baseline.headline.name != current.headline.name:
        raise GateInputError(f"the files measure different metrics (baseline {baseline.metric}, "
                             f"current {current.metric}); their γ are not comparable")
    if baseline.ties != current.ties:
        raise GateInputError(f"the files rank ties differently (baseline {baseline.ties}, current "
                             f"{current.ties}); their scores are not comparable: rerun one with "
                             f"--ties {baseline.ties}")
    metrics = default_metrics(baseline) if metrics is None else metrics
    if not (isinstance(max_drop, (int, float)) and math.isfinite(max_drop) and max_drop >= 0):
        raise GateInputError(f"--max-drop must be a number >= 0; got {max_drop!r}")
    if significance is not None and not 0 < significance < 1:
        raise GateInputError(f"--significance must be in (0, 1), e.g. 0.05; got {significance!r}")
    parsed = [parse_metric(m, baseline) for m in dict.fromkeys(metrics)]
    for m in parsed:
        parse_metric(m.name, current)
    if not parsed:
        raise GateInputError("no metric to compare; give --metric, e.g. --metric gamma_r")
    outcomes = [_row(baseline, current, kind, name, m, max_drop, significance)
                for m in parsed for kind, name in _rows(baseline, current, m)]
    return Comparison(outcomes, _notes(baseline, current) + _meaning_notes(baseline, current, outcomes))


LARGE_NOISE = 0.1       # a drop this large passed as noise says the run has too few queries to tell


def _meaning_notes(baseline: Results, current: Results, outcomes: list[Outcome]) -> list[str]:
    """Flags of either file (clean score near chance or 1, γ above 1...) and large drops passed as noise."""
    from .check import notes

    b_notes, c_notes = notes(baseline), notes(current)
    out = [f"{'baseline and current' if n in c_notes else 'baseline'}: {n}" for n in b_notes]
    out += [f"current: {n}" for n in c_notes if n not in b_notes]       # each note once
    large = [o for o in outcomes if o.cells.get("verdict") == "noise"
             and float(o.cells["drop"]) > LARGE_NOISE]
    if large:
        out.append(f"{len(large)} drop(s) larger than {LARGE_NOISE:g} passed only as noise ("
                   + ", ".join(f"{o.cells['scope']} {o.cells['name']} {o.cells['metric']} {o.cells['drop']}".replace("  ", " ")
                               for o in large[:5])
                   + f"): with {current.data.get('dataset', {}).get('n_items', '?')} items the CIs are too "
                   "wide to tell a large drop from noise; measure on more items")
    return out
