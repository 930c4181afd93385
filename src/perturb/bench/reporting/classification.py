"""The report of a classification (or lmms-eval) results file: what it leads with (clean top-1 and
top-5, or the task's score, with their CIs, then ImageNet-C's mCE and relative mCE or Kinetics-C's mPC
and rPC) and the corruption × severity table in RobustBench's shape (rows: corruption; columns:
severities 1..5 and their mean; in %, 2 decimals), plus the same figures as data for ``report.json``.
"""
from __future__ import annotations

from statistics import fmean
from typing import Any, Mapping

from ...honesty import chance_of
from ...metric_names import CLASSIFY, LMMS, MEASURE_BY_KEY, VISUAL, record_value, stored_scores, task_of
from ...selection import SEVERITY_LEVELS
from ..scoring.corruption import operation_name
from ..scoring.suite_summary import suite_runs

SUITE_TITLES = {"imagenet-c": "ImageNet-C", "kinetics-c": "Kinetics-C"}


def is_classification(doc: Mapping[str, Any]) -> bool:
    """A file of per-sample scores over visual corruptions: a classifier's, or an lmms-eval task's."""
    return task_of(doc) in (CLASSIFY, LMMS)


def _word(doc: Mapping[str, Any]) -> str:
    return "Accuracy" if task_of(doc) == CLASSIFY else "Score"


def pct(x: float | None, digits: int = 2) -> str:
    """A fraction as a percentage without the sign (``0.7672`` → ``76.72``); '—' for missing."""
    return "—" if x is None else f"{100 * x:.{digits}f}"


def _ci(ci: Any) -> str:
    return "" if not ci or None in ci else f"[{pct(ci[0])}, {pct(ci[1])}]"


def clean_line(doc: Mapping[str, Any]) -> str:
    """``clean top-1: 76.72% [75.50, 77.90] (chance 0.10%); top-5: 93.00% [92.00, 94.00]``."""
    clean, chance = doc["clean"], chance_of(doc)
    parts = []
    for key in (k for k in stored_scores(task_of(doc)) if k in clean):
        ci = _ci((clean.get("ci") or {}).get(key))
        part = f"{MEASURE_BY_KEY[key].display.split()[0]}: {pct(clean[key])}%{' ' + ci if ci else ''}"
        parts.append(part + (f" (chance {pct(chance)}%)" if key == doc["metric"] and chance is not None else ""))
    return "clean " + "; ".join(parts)


def operation_cells(runs: list[Mapping[str, Any]], metric: str) -> dict[str, dict[int, float]]:
    """Operation → severity → the metric, over the visual runs with a severity, in run order."""
    out: dict[str, dict[int, float]] = {}
    for r in runs:
        value = record_value(r, metric)
        if r["modality"] in VISUAL and r["severity"] is not None and value is not None:
            out.setdefault(operation_name(r["perturbation"]), {})[int(r["severity"])] = value
    return out


def corruption_accuracy(doc: Mapping[str, Any], suite: str) -> float | None:
    """The mean metric over every (corruption, severity) cell a suite ran: RobustBench's corruption
    accuracy for ImageNet-C, Kinetics-C's mPC."""
    cells = [v for by_sev in operation_cells(suite_runs(doc["runs"], suite), doc["metric"]).values()
             for v in by_sev.values()]
    return fmean(cells) if cells else None


def suite_figures(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per suite of the file: its paper's figures (as ``suites`` holds them, or recomputed with a
    baseline) and its ``corruption_accuracy``."""
    return {name: {**(entry.get("figures") or {}), "corruption_accuracy": corruption_accuracy(doc, name)}
            for name, entry in (doc.get("suites") or {}).items()}


def figure_lines(doc: Mapping[str, Any]) -> list[str]:
    """One headline line per suite: mCE and relative mCE (or what they need), or mPC and rPC."""
    lines = []
    for name, got in suite_figures(doc).items():
        title = SUITE_TITLES.get(name, name)
        accuracy = f"corruption accuracy {pct(got['corruption_accuracy'])}%"
        if "mPC" in got:
            lines.append(f"{title}: mPC {pct(got['mPC'])}%, rPC {pct(got.get('rPC'))}%")
        elif "mCE" in got:
            relative = "" if got.get("relative_mCE") is None else f", relative mCE {pct(got['relative_mCE'])}%"
            lines.append(f"{title}: mCE {pct(got['mCE'])}%{relative} against {got.get('baseline')}; {accuracy}"
                         + "".join(f"; {note}" for note in got.get("notes") or ()))
        elif name == "imagenet-c":
            lines.append(f"{title}: {accuracy}; mCE needs a baseline model's errors (--baseline-errors)")
        else:
            lines.append(f"{title}: {accuracy}")
    return lines


def corruption_table(doc: Mapping[str, Any]) -> tuple[str, list[str], list[list[str]]] | None:
    """RobustBench's table: a row per corruption, the metric in % at severities 1..5 and their mean,
    then the mean of each column over corruptions; None without graded runs."""
    cells = operation_cells(doc["runs"], doc["metric"])
    if not cells:
        return None
    rows = [[op, *(pct(by_sev.get(s)) for s in SEVERITY_LEVELS), pct(fmean(by_sev.values()))]
            for op, by_sev in cells.items()]
    columns = [[by_sev[s] for by_sev in cells.values() if s in by_sev] for s in SEVERITY_LEVELS]
    every = [v for by_sev in cells.values() for v in by_sev.values()]
    rows.append(["mean", *(pct(fmean(c)) if c else "—" for c in columns), pct(fmean(every))])
    what = MEASURE_BY_KEY[doc["metric"]].display
    return (f"{_word(doc)} under corruption ({what}, %)", ["corruption", *map(str, SEVERITY_LEVELS), "mean"], rows)


def clean_table(doc: Mapping[str, Any]) -> tuple[str, list[str], list[list[str]]]:
    """Clean accuracy and error with their CIs (%)."""
    clean = doc["clean"]
    rows = [[MEASURE_BY_KEY[k].display, pct(clean[k]), _ci((clean.get("ci") or {}).get(k)),
             pct(1 - clean[k])] for k in stored_scores(task_of(doc)) if k in clean]
    return f"Clean {_word(doc).lower()}", ["measure", f"{_word(doc).lower()} (%)", "CI", "error (%)"], rows


def figures(doc: Mapping[str, Any]) -> dict[str, Any]:
    """What ``report.json`` holds of a results document (fractions): which model, data and metric; the
    clean scores with their CIs; per suite its figures and corruption accuracy; the corruption ×
    severity table; and the seen/held-out split when the run has one (``--trained-with``)."""
    return {"model": doc["model"]["id"], "dataset": doc["dataset"]["name"], "task": task_of(doc),
            "metric": doc["metric"], "clean": dict(doc["clean"]), "suites": suite_figures(doc),
            "corruptions": {op: {**{str(s): v for s, v in by_sev.items()}, "mean": fmean(by_sev.values())}
                            for op, by_sev in operation_cells(doc["runs"], doc["metric"]).items()},
            **({"split": doc["split"]} if "split" in doc else {})}
