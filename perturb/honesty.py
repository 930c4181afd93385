"""When numbers mean little: chance levels, clean scores near chance or near 1, γ above 1, severity
curves that rise, and configurations that did not run.

A clean score at chance leaves nothing for a perturbation to destroy, and one near 1 leaves no room
to show a gain; γ is then mostly noise. The thresholds are data below, in one place.
"""
from __future__ import annotations

from math import comb
from typing import Any, Mapping, Sequence

import numpy as np

from .results import KS

CHANCE_MARGIN = 0.10      # clean within this fraction of the span chance..1 above chance: "near chance"
SATURATION = 0.95         # clean at or above this: "near 1"
MONOTONE_SLACK = 1e-9     # a rise of the metric with severity beyond float rounding is flagged
# why a flagged score means little: (near chance, near 1), for retrieval (γ is computed from it) and
# for the side tasks on clean videos (multiple choice, entailment), which have no γ
RETRIEVAL_WHY = ("there is little for a perturbation to destroy, so γ means little",
                 "the task is too easy to separate models, and no perturbation can show a gain")
SIDE_TASK_WHY = ("the model barely tells the matching caption from the others, so the score says little",
                 "the task is too easy to separate models")


def hit_chance(n_candidates: int, n_positives: int, k: int) -> float:
    """P(at least one of ``n_positives`` among ``n_candidates`` lands in a random top ``k``)."""
    n, m = int(n_candidates), int(n_positives)
    if m <= 0:
        return 0.0
    k = min(k, n)
    return 1.0 - comb(n - m, k) / comb(n, k)


def chance_levels(relevance: np.ndarray) -> dict[str, dict[str, float]]:
    """Expected R@K (and mAP's positive rate) of a random ranking, per direction, from a (Q, N)
    relevance matrix: K/N for R@K when each query has one positive among N videos."""
    rel = np.asarray(relevance, dtype=bool)
    out: dict[str, dict[str, float]] = {}
    for direction, r in (("t2v", rel), ("v2t", rel.T)):
        n = r.shape[1]
        positives = r.sum(axis=1)
        levels = {f"R@{k}": float(np.mean([hit_chance(n, m, k) for m in positives])) for k in KS}
        levels["mAP"] = float(np.mean(positives / n))        # ≈: a random ranking's precision
        out[direction] = levels
    return out


def chance_of(doc: Mapping[str, Any]) -> float | None:
    """The chance level of a results document's own metric (None for files written before it)."""
    direction, _, name = str(doc.get("metric", "")).partition(".")
    return ((doc.get("chance") or {}).get(direction) or {}).get(name)


def _clean_value(doc: Mapping[str, Any]) -> float | None:
    direction, _, name = str(doc.get("metric", "")).partition(".")
    value = (doc.get("clean", {}).get(direction) or {}).get(name)
    return None if value is None else float(value)


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


def _rise_is_real(low: Mapping[str, Any], high: Mapping[str, Any]) -> bool:
    """The higher severity's γa CI lies wholly above the lower one's (not a rise within noise)."""
    lo_ci, hi_ci = ((r.get("ci") or {}).get("gamma_a") for r in (low, high))
    return bool(lo_ci and hi_ci and None not in lo_ci and None not in hi_ci and hi_ci[0] > lo_ci[1])


def non_monotone(runs: Sequence[Mapping[str, Any]]) -> list[tuple[str, bool]]:
    """Each rise of γa from one severity to the next higher one, as ('jpeg 3→4', beyond its CIs)."""
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


def run_label(run: Mapping[str, Any]) -> str:
    """``gaussian_noise@3`` / ``Typos``."""
    sev = run.get("severity")
    return f"{run['perturbation']}@{sev}" if sev is not None else str(run["perturbation"])


def flags(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """Every flag of a results document: clean score near chance or 1 (retrieval, MC, entailment),
    γ above 1, non-monotone severities, configurations that did not run."""
    out = clean_flags(_clean_value(doc), chance_of(doc), (doc["clean"].get("ci") or {}).get("metric"),
                      f"clean {doc['metric']}")
    mc, ent = doc.get("mc"), doc.get("entailment")
    if mc:
        out += clean_flags(mc["accuracy"], mc.get("chance"), mc.get("ci"), "MC accuracy", SIDE_TASK_WHY)
    if ent and ent.get("roc_auc") is not None:
        out += clean_flags(ent["roc_auc"], ent.get("chance", 0.5), ent.get("ci"), "entailment ROC-AUC",
                           SIDE_TASK_WHY)
    above = gamma_above_one(doc["runs"])
    if above:
        real = [run_label(r) for r in doc["runs"] if ((r.get("ci") or {}).get("gamma_a") or [None])[0] is not None
                and r["ci"]["gamma_a"][0] > 1]
        out.append({"kind": "gamma_above_1", "message": f"γ > 1 in {len(above)} run(s) ({', '.join(above[:5])}"
                    f"{', ...' if len(above) > 5 else ''}): the perturbed score beat the clean one. "
                    + (f"Its CI lies above 1 for {', '.join(real)}: the perturbation removed something that "
                       "misled the model" if real else "Every such CI reaches 1 or below: noise of a finite "
                       "gallery, not a gain")})
    rising = non_monotone(doc["runs"])
    if rising:
        real = [label for label, beyond in rising if beyond]
        out.append({"kind": "non_monotone", "message": f"a higher severity scored better than a lower one in "
                    f"{len(rising)} place(s) ({', '.join(label for label, _ in rising)}). "
                    + (f"Beyond the CIs: {', '.join(real)}: there the strongest levels remove something the "
                       "model relied on less than the milder ones did (e.g. a shuffle that lands near the "
                       "original order); the rest is noise" if real else
                       "Every rise lies within the bootstrap CIs: noise of a finite gallery")})
    skipped = doc.get("skipped") or []
    if skipped:
        out.append({"kind": "skipped", "message": f"{len(skipped)} requested configuration(s) did not run: "
                    + "; ".join(f"{run_label(s)} ({s['reason']})" for s in skipped)})
    return out
