"""When numbers mean little: chance levels, clean scores near chance or near 1, γ above 1, severity
curves that rise, and configurations that did not run.

A clean score at chance leaves nothing for a perturbation to destroy, and one near 1 leaves no room
to show a gain; γ is then mostly noise. The thresholds are data below, in one place.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .metric_names import headline_ci_key, kind_of, record_value, reported_names
from .ranking import Judgements

CHANCE_MARGIN = 0.10      # clean within this fraction of the span chance..1 above chance: "near chance"
SATURATION = 0.95         # clean at or above this: "near 1"
MONOTONE_SLACK = 1e-9     # a rise of the metric with severity beyond float rounding is flagged
# why a flagged score means little: (near chance, near 1), for retrieval (γ is computed from it) and
# for the side tasks on clean videos (multiple choice, entailment), which have no γ
RETRIEVAL_WHY = ("there is little for a perturbation to destroy, so γ means little",
                 "the task is too easy to separate models, and no perturbation can show a gain")
SIDE_TASK_WHY = ("the model barely tells the matching caption from the others, so the score says little",
                 "the task is too easy to separate models")


def chance_levels(relevance: np.ndarray, names: Iterable[str] | None = None) -> dict[str, dict[str, float]]:
    """Expected value of each metric ``names`` (default: those every judged results file carries)
    under a random ranking, per direction, from a (Q, N) relevance (or grade) matrix: K/N for R@K
    when each query has one positive among N videos; each kind's chance function says how."""
    with_chance = {name: found for name in (reported_names(judged=True) if names is None else names)
                   if (found := kind_of(name)) is not None and found[0].chance is not None}
    rel = np.asarray(relevance)
    out: dict[str, dict[str, float]] = {}
    for direction, gains in (("t2v", rel), ("v2t", rel.T)):
        judged = Judgements(gains)
        out[direction] = {name: float(np.mean(kind.chance(judged, k))) for name, (kind, k) in with_chance.items()}
    return out


def chance_of(doc: Mapping[str, Any]) -> float | None:
    """The chance level of a results document's own metric (None for files written before it)."""
    return record_value(doc.get("chance") or {}, str(doc.get("metric", "")))


def _clean_value(doc: Mapping[str, Any]) -> float | None:
    return record_value(doc.get("clean", {}), str(doc.get("metric", "")))


def clean_flags(clean: float | None, chance: float | None, ci: Sequence[float | None] | None = None,
                what: str = "clean score", why: tuple[str, str] = RETRIEVAL_WHY) -> list[dict[str, str]]:
    """Flags of one clean score: near chance (or its CI reaching down to chance) and near 1."""
    flags = []
    if clean is None:
        return flags
    lower = ci[0] if ci and ci[0] is not None else None
    if chance is not None and (clean <= chance + CHANCE_MARGIN * (1 - chance)
                               or (lower is not None and lower <= chance)):
        flags.append({"kind": "chance", "message": f"{what} {clean:.3f} is near chance ({chance:.3f}): {why[0]}"})
    if clean >= SATURATION:
        flags.append({"kind": "saturated", "message": f"{what} {clean:.3f} is near 1: {why[1]}"})
    return flags


def gamma_above_one(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Labels of runs scoring higher perturbed than clean (γ > 1)."""
    return [run_label(r) for r in runs if (r.get("gamma_a") or 0) > 1 + MONOTONE_SLACK]


def _ci_of(run: Mapping[str, Any], key: str = "gamma_a") -> list[float] | None:
    """A run's CI of ``key`` when one was computed (None with --bootstrap 0 or an undefined bound)."""
    ci = (run.get("ci") or {}).get(key)
    return ci if ci and None not in ci else None


def _rise_is_real(low: Mapping[str, Any], high: Mapping[str, Any]) -> bool | None:
    """Whether the higher severity's γa CI lies wholly above the lower one's (a rise beyond noise);
    None when either has no CI, so nothing can be said."""
    lo_ci, hi_ci = _ci_of(low), _ci_of(high)
    return None if lo_ci is None or hi_ci is None else bool(hi_ci[0] > lo_ci[1])


def non_monotone(runs: Sequence[Mapping[str, Any]]) -> list[tuple[str, bool | None]]:
    """Each rise of γa from one severity to the next higher one, as ('jpeg 3→4', beyond its γa CIs,
    or None without CIs)."""
    by_name: dict[str, list[Mapping[str, Any]]] = {}
    for r in runs:
        if r.get("severity") is not None and r.get("gamma_a") is not None:
            by_name.setdefault(r["perturbation"], []).append(r)
    out = []
    for name, points in by_name.items():
        points = sorted(points, key=lambda r: r["severity"])
        out += [(f"{name} {a['severity']}→{b['severity']}", _rise_is_real(a, b)) for a, b in zip(points, points[1:])
                if b["gamma_a"] > a["gamma_a"] + MONOTONE_SLACK]
    return out


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


NO_CI = "no γa CI was computed (--bootstrap 0), so whether {} noise is not known"
NOISE = "not told apart from the noise of a finite gallery"


def _gamma_above_one_message(runs: Sequence[Mapping[str, Any]], above: list[str]) -> str:
    """What γ > 1 means for each run, judged by its own γa CI (or said to be unknown without one)."""
    cis = [(run_label(r), _ci_of(r)) for r in runs]
    real = [label for label, ci in cis if label in above and ci and ci[0] > 1]
    without = {label for label, ci in cis if ci is None}
    no_ci = [label for label in above if label in without]
    within = [label for label in above if label not in real and label not in no_ci]
    parts = []
    if real:
        parts.append(f"its γa CI lies above 1 for {', '.join(real)}: the perturbation removed something that "
                     "misled the model")
    if within:
        parts.append(f"{'every' if not real and not no_ci else 'for ' + ', '.join(within) + ' the'} γa CI "
                     f"reaches 1 or below: {NOISE}")
    if no_ci:
        parts.append(NO_CI.format("this is"))
    return (f"γ > 1 in {len(above)} run(s) ({', '.join(above[:5])}{', ...' if len(above) > 5 else ''}): the "
            "perturbed score beat the clean one. " + _sentence("; ".join(parts)))


def _non_monotone_message(rising: list[tuple[str, bool | None]]) -> str:
    """Where a higher severity scored better, judged by the two severities' γa CIs (not score CIs)."""
    real = [label for label, beyond in rising if beyond]
    within = [label for label, beyond in rising if beyond is False]
    no_ci = [label for label, beyond in rising if beyond is None]
    parts = []
    if real:
        parts.append(f"beyond the γa CIs (the higher severity's γa interval lies wholly above the lower one's): "
                     f"{', '.join(real)}: there the strongest levels remove something the model relied on less "
                     "than the milder ones did (e.g. a shuffle that lands near the original order)")
    if within:
        parts.append(f"{'every rise' if len(within) == len(rising) else ', '.join(within)} lies within the γa CIs "
                     "(the two γa intervals overlap; this compares γa intervals, not the score intervals "
                     f"of the tables): {NOISE}")
    if no_ci:
        parts.append(NO_CI.format("a rise is" if len(no_ci) == 1 else "these rises are"))
    return (f"a higher severity scored better than a lower one in {len(rising)} place(s) "
            f"({', '.join(label for label, _ in rising)}). " + _sentence("; ".join(parts)))


def run_label(run: Mapping[str, Any]) -> str:
    """``gaussian_noise@3`` / ``Typos``."""
    sev = run.get("severity")
    return f"{run['perturbation']}@{sev}" if sev is not None else str(run["perturbation"])


def flags(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """Every flag of a results document: clean score near chance or 1 (retrieval, MC, entailment),
    γ above 1, non-monotone severities, configurations that did not run."""
    out = clean_flags(_clean_value(doc), chance_of(doc), (doc["clean"].get("ci") or {}).get(headline_ci_key(doc)),
                      f"clean {doc['metric']}")
    mc, ent = doc.get("mc"), doc.get("entailment")
    if mc:
        out += clean_flags(mc["accuracy"], mc.get("chance"), mc.get("ci"), "MC accuracy", SIDE_TASK_WHY)
    if ent and ent.get("roc_auc") is not None:
        out += clean_flags(ent["roc_auc"], ent.get("chance", 0.5), ent.get("ci"), "entailment ROC-AUC",
                           SIDE_TASK_WHY)
    above = gamma_above_one(doc["runs"])
    if above:
        out.append({"kind": "gamma_above_1", "message": _gamma_above_one_message(doc["runs"], above)})
    rising = non_monotone(doc["runs"])
    if rising:
        out.append({"kind": "non_monotone", "message": _non_monotone_message(rising)})
    skipped = doc.get("skipped") or []
    if skipped:
        out.append({"kind": "skipped", "message": f"{len(skipped)} requested configuration(s) did not run: "
                    + "; ".join(f"{run_label(s)} ({s['reason']})" for s in skipped)})
    return out
