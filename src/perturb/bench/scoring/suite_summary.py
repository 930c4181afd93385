"""Results grouped by suite and category, with each source paper's summary figures.

A video run belongs to a suite when its operation is a member and it ran under the suite's
table (``contrast:kinetics-c`` is in kinetics-c; plain ``contrast`` is in imagenet-c, whose
table is contrast's own). Per suite: γa and γr (mean ± std over its runs), per category, and

- Kinetics-C (Yi et al. 2021): mPC, the mean metric over its corruptions and severities, and
  rPC = mPC / clean metric. rPC is exactly perturb's mean γr over the same runs (γr = A_p / A_c);
  mPC is perturb's mean γa shifted by the clean error (mean γa = 1 − A_c + mPC).
- ImageNet-C (Hendrycks & Dietterich 2019): CE, mCE and relative mCE, given a baseline model's
  errors (:mod:`.baselines`; a file or a built-in name such as ``alexnet``), with E = 1 − metric.

Both come from :mod:`.corruption`, the one implementation classification uses too.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...errors import UnknownPerturbationError
from ...metric_names import VISUAL
from ...registry import REGISTRY, Spec
from .baselines import Baseline
from .corruption import corruption_errors, performance_under_corruption
from .robustness import summarize


def _spec(perturbation: str) -> Spec | None:
    try:
        return REGISTRY.get(perturbation, "video")
    except (UnknownPerturbationError, ValueError):      # a results file from another installation
        return None


def suite_runs(runs: Sequence[Mapping[str, Any]], suite: str) -> list[Mapping[str, Any]]:
    """The video (or image) runs of ``suite``: its members, each under the suite's table."""
    out = []
    for r in runs:
        spec = _spec(r["perturbation"]) if r.get("modality") in VISUAL else None
        if spec is not None and spec.name in REGISTRY.suite(suite) \
                and REGISTRY.bind(spec, suite).ref == spec.ref:
            out.append(r)
    return out


def _metric(record: Mapping[str, Any], metric: str) -> float:
    """The file's metric in a run or clean: ``t2v.R@1`` of a retrieval file, ``top1`` of a classification one."""
    direction, _, name = metric.rpartition(".")
    return float(record[direction][name] if direction else record[name])


def _cells(runs: Sequence[Mapping[str, Any]], metric: str) -> dict[tuple[str, int], float]:
    """The runs' metric per (operation, severity), the corruption aggregates' input."""
    return {(_spec(r["perturbation"]).name, int(r["severity"])): _metric(r, metric) for r in runs}


def selected(suite: str, runs: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the runs of a suite show that it was asked for: every member ran, or one ran under the
    suite's own table (``shot_noise:imagenet-c``); members that merely belong to another selected
    suite too (fog of kinetics-c is imagenet-c's fog) do not make a suite."""
    s = REGISTRY.suite(suite)
    specs = [spec for spec in (_spec(r["perturbation"]) for r in runs) if spec is not None]
    return set(s.members or ()) <= {spec.name for spec in specs} or any(spec.table == s.name for spec in specs)


def summarize_suites(doc: Mapping[str, Any], baseline: Baseline | None = None) -> dict[str, dict[str, Any]]:
    """Per suite the runs select (:func:`selected`; ``all`` aside; ImageNet-C whenever baseline errors
    are given): coverage, γ per suite and category, and the paper's summary figures (module doc)."""
    metric = doc["metric"]
    clean = _metric(doc["clean"], metric)
    out: dict[str, dict[str, Any]] = {}
    for suite in REGISTRY.suites("video"):
        runs = suite_runs(doc["runs"], suite.name) if suite.members is not None else []
        if not runs or not (selected(suite.name, runs) or (baseline and "mCE" in suite.figures)):
            continue
        names = list(dict.fromkeys(s.name for s in (_spec(r["perturbation"]) for r in runs) if s))
        agg = summarize(list(runs))
        entry: dict[str, Any] = {
            "title": suite.title, "source": suite.source, "members": len(suite.members or ()),
            "operations": names, "not_run": [n for n in suite.members or () if n not in names],
            "configurations": len(runs),
            "tables": {n: suite.name for n in names if n in suite.tables
                       and REGISTRY.bind(REGISTRY.get(n, "video"), suite.name).table},
            **agg["modality"][runs[0]["modality"]], "category": agg["category"], "figures": {}}
        if "mPC" in suite.figures:
            entry["figures"] = performance_under_corruption(_cells(runs, metric), clean)
        if "mCE" in suite.figures and baseline:
            entry["figures"] = corruption_errors(_cells(runs, metric), clean, baseline)
        out[suite.name] = entry
    return out


def _f(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _figures(entry: Mapping[str, Any], figures: Sequence[str]) -> str:
    got = entry.get("figures") or {}
    if "mPC" in got:
        return f"mPC {_f(got['mPC'])}, rPC {_f(got.get('rPC'))} (rPC = mean γr)"
    if "mCE" in got:
        counted = len(got.get("CE") or {}) - len(got.get("outside_mce") or ())
        relative = got.get("relative_mCE")
        return (f"mCE {_f(None if got['mCE'] is None else 100 * got['mCE'], 1)}% over {counted} corruptions "
                f"with baseline errors" + ("" if relative is None else f", relative mCE {_f(100 * relative, 1)}%")
                + "".join(f"; {note}" for note in got.get("notes") or ()))
    if "mCE" in figures:
        return "mCE: needs a baseline model's errors (--baseline-errors)"
    return ""


def _suites(doc: Mapping[str, Any], baseline: Baseline | None) -> dict[str, dict[str, Any]]:
    """The document's own ``suites``, or summarised anew (with ``baseline``, or for older files)."""
    return summarize_suites(doc, baseline) if baseline or "suites" not in doc else doc["suites"]


def figure_lines(doc: Mapping[str, Any], baseline: Baseline | None = None) -> list[str]:
    """One line per suite with the paper's figures computed (mPC and rPC, mCE), for the headline."""
    suites = _suites(doc, baseline)
    return [f"{name} ({len(e['operations'])}/{e['members']} operations): {_figures(e, ())}"
            for name, e in suites.items() if {"mPC", "mCE"} & set(e.get("figures") or {})]


def suite_tables(doc: Mapping[str, Any], baseline: Baseline | None = None) -> list[tuple[str, list[str], list[list[str]]]]:
    """Report tables (title, header, rows): robustness per suite, and per suite and category."""
    suites = _suites(doc, baseline)
    if not suites:
        return []
    figures = {s.name: s.figures for s in REGISTRY.suites("video")}
    pm = lambda a, g: f"{_f(a.get(f'{g}_mean'), 2)} ± {_f(a.get(f'{g}_std'), 2)}"  # noqa: E731
    per_suite = [[name, f"{len(e['operations'])}/{e['members']}", str(e["configurations"]),
                  pm(e, "gamma_a"), pm(e, "gamma_r"), _figures(e, figures.get(name, ()))]
                 for name, e in suites.items()]
    per_cat = [[name, cat, pm(a, "gamma_a"), pm(a, "gamma_r")]
               for name, e in suites.items() for cat, a in e["category"].items()]
    return [("Robustness per suite", ["suite", "operations run", "configurations", "γa ± σ", "γr ± σ",
                                      "the paper's figures"], per_suite),
            ("Robustness per suite and category", ["suite", "category", "γa ± σ", "γr ± σ"], per_cat)]
