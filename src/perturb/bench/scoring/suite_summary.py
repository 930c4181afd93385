"""Results grouped by suite and category, with each source paper's summary figures.

A video run belongs to a suite when its operation is a member and it ran under the suite's
table (``contrast:kinetics-c`` is in kinetics-c; plain ``contrast`` is in imagenet-c, whose
table is contrast's own). Per suite: γa and γr (mean ± std over its runs), per category, and

- Kinetics-C (Yi et al. 2021): mPC, the mean metric over its corruptions and severities, and
  rPC = mPC / clean metric. rPC is exactly perturb's mean γr over the same runs (γr = A_p / A_c);
  mPC is perturb's mean γa shifted by the clean error (mean γa = 1 − A_c + mPC).
- ImageNet-C (Hendrycks & Dietterich 2019): mCE, given a baseline model's errors: per
  corruption, CE = Σ_s E_s / Σ_s E_s^baseline over the severities run, with E = 1 − metric;
  mCE is the mean CE over the corruptions that have baseline errors.

Baseline errors are a JSON object ``{"gaussian_noise": [e1, e2, e3, e4, e5], ...}`` (5 errors
in [0, 1] at severities 1..5, not all 0; a ``{"1": e1, ..., "5": e5}`` object works too; names
or aliases, one entry per operation).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...errors import UnknownPerturbationError
from ...registry import REGISTRY, Spec
from ...selection import SEVERITY_LEVELS
from .robustness import summarize

Baseline = Mapping[str, Mapping[int, float]]


def _spec(perturbation: str) -> Spec | None:
    try:
        return REGISTRY.get(perturbation, "video")
    except (UnknownPerturbationError, ValueError):      # a results file from another installation
        return None


def suite_runs(runs: Sequence[Mapping[str, Any]], suite: str) -> list[Mapping[str, Any]]:
    """The video runs of ``suite``: its members, each under the suite's table."""
    out = []
    for r in runs:
        spec = _spec(r["perturbation"]) if r.get("modality") == "video" else None
        if spec is not None and spec.name in REGISTRY.suite(suite) \
                and REGISTRY.bind(spec, suite).ref == spec.ref:
            out.append(r)
    return out


class _Pairs(list):
    """A JSON object read as its (key, value) pairs, so that a repeated key is seen."""


def _read_baseline(source: str | os.PathLike, where: str) -> list[tuple[str, Any]]:
    """The (key, value) pairs of a baseline-errors JSON object, repeated keys kept."""
    try:
        raw = json.loads(Path(source).read_text(encoding="utf-8"), object_pairs_hook=_Pairs)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read {where}: {e}") from e
    if not isinstance(raw, _Pairs):
        raise ValueError(f"{where}: expected a JSON object of operation -> 5 errors; got {type(raw).__name__}")
    return [(k, dict(v) if isinstance(v, _Pairs) else v) for k, v in raw]


def _errors_by_severity(errors: Any) -> dict[int, Any] | None:
    """[e1, ..., e5] or {"1": e1, ..., "5": e5} -> {1: e1, ..., 5: e5}; None for any other shape."""
    if isinstance(errors, list) and len(errors) == len(SEVERITY_LEVELS):
        return dict(zip(SEVERITY_LEVELS, errors))
    if isinstance(errors, dict) and sorted(map(str, errors)) == [str(k) for k in SEVERITY_LEVELS]:
        return {int(k): v for k, v in errors.items()}
    return None


def load_baseline(source: str | os.PathLike | Mapping[str, Any]) -> dict[str, dict[int, float]]:
    """Baseline errors per operation and severity, from a JSON file or a mapping (module doc): exactly
    one entry per operation (aliases and case count as one), 5 errors in [0, 1], not all 0 (CE divides
    by their sum)."""
    where = "baseline errors" if isinstance(source, Mapping) else f"baseline errors {os.fspath(source)}"
    pairs = list(source.items()) if isinstance(source, Mapping) else _read_baseline(source, where)
    out: dict[str, dict[int, float]] = {}
    given: dict[str, str] = {}
    for name, errors in pairs:
        spec = REGISTRY.get(name, "video")
        if spec.name in given:
            raise ValueError(f"{where}: {given[spec.name]!r} and {name!r} both name {spec.name}; "
                             "expected one entry per operation")
        given[spec.name] = name
        by_sev = _errors_by_severity(errors)
        if by_sev is None or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1
                                     for v in by_sev.values()):
            raise ValueError(f"{where}: {name!r} must map to 5 errors in [0, 1], at severities 1..5 "
                             f"(a list of 5 or an object keyed 1..5); got {errors!r}")
        if not any(by_sev.values()):
            raise ValueError(f"{where}: {name!r} has every error 0; CE divides by their sum, so expected "
                             "a baseline model's errors (some above 0)")
        out[spec.name] = {int(k): float(v) for k, v in by_sev.items()}
    if not out:
        raise ValueError(f"{where}: no operation; expected e.g. {{\"fog\": [e1, e2, e3, e4, e5]}}")
    return out


def _metric(record: Mapping[str, Any], metric: str) -> float:
    direction, name = metric.split(".", 1)
    return float(record[direction][name])


def _mce(runs: Sequence[Mapping[str, Any]], metric: str, baseline: Baseline) -> dict[str, Any]:
    """Corruption errors relative to the baseline, per operation, and their mean."""
    by_op: dict[str, list[Mapping[str, Any]]] = {}
    for r in runs:
        by_op.setdefault(_spec(r["perturbation"]).name, []).append(r)
    ce: dict[str, float | None] = {}
    without: list[str] = []
    for name, own in by_op.items():
        base = baseline.get(name, {})
        if not all(r["severity"] in base for r in own):
            without.append(name)
            continue
        denom = sum(base[r["severity"]] for r in own)
        ce[name] = sum(1 - _metric(r, metric) for r in own) / denom if denom else None
    finite = [v for v in ce.values() if v is not None]
    return {"mCE": sum(finite) / len(finite) if finite else None, "CE": ce, "without_baseline": without}


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
            **agg["modality"]["video"], "category": agg["category"], "figures": {}}
        values = [_metric(r, metric) for r in runs]
        if "mPC" in suite.figures:
            mpc = sum(values) / len(values)
            entry["figures"] = {"mPC": mpc, "rPC": mpc / clean if clean else None}
        if "mCE" in suite.figures and baseline:
            entry["figures"] = _mce(runs, metric, baseline)
        out[suite.name] = entry
    return out


def _f(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _figures(entry: Mapping[str, Any], figures: Sequence[str]) -> str:
    got = entry.get("figures") or {}
    if "mPC" in got:
        return f"mPC {_f(got['mPC'])}, rPC {_f(got.get('rPC'))} (rPC = mean γr)"
    if "mCE" in got:
        return (f"mCE {_f(None if got['mCE'] is None else 100 * got['mCE'], 1)}% over "
                f"{len(got.get('CE') or {})} corruptions with baseline errors")
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
