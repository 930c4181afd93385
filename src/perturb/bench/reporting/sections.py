"""The report's small pieces that need no plots: number and interval formats, the model card and
the side tasks' tables (multiple choice, entailment)."""
from __future__ import annotations

from typing import Any, Sequence

CARD_FIELDS = ("family", "checkpoint", "revision", "mode", "frames", "frame_sampling", "resolution", "dtype",
               "autocast", "device")


def fmt(x: float | None, digits: int = 2) -> str:
    """A number for a table cell; '—' for missing."""
    return "—" if x is None else f"{x:.{digits}f}"


def ci_text(ci: Sequence[float | None] | None) -> str:
    """``[0.580, 0.660]``; empty without an interval."""
    return "" if not ci or ci[0] is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def level_text(doc: dict[str, Any]) -> str:
    """The column name of a document's intervals (``95% CI``)."""
    boot = doc.get("bootstrap")
    return f"{boot['level']:.0%} CI" if boot else "CI"


def model_tables(doc: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The model card (with how many replicas ran) and the two-stage re-ranking set-up, where the
    results document has them."""
    out = []
    card, ran = doc["model"].get("card"), doc.get("provenance")
    if card or ran:
        fields = list(CARD_FIELDS) if card else ["id"]
        row = [str(card.get(k, "")) for k in CARD_FIELDS] if card else [doc["model"]["id"]]
        if ran:                                  # sharded: how many replicas ran, on which engine
            fields, row = fields + ["replicas"], row + [f"{len(ran['replicas'])} ({ran['engine']})"]
        out.append(("Model", fields, [row]))
    rr = doc.get("rerank")
    if rr:
        out.append(("Two-stage re-ranking", ["first stage", "top K re-scored", "pairs scored", "note"],
                    [[rr["first_stage"], str(rr["k"]), str(rr["pairs_scored"]), rr["note"]]]))
    return out


def task_tables(doc: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """Multiple-choice accuracy and entailment ROC-AUC on the clean videos, with chance levels."""
    out = []
    mc = doc.get("mc")
    if mc:
        out.append(("Multiple choice (clean videos)", ["file", "questions", "not in dataset", "accuracy",
                                                       level_text(doc), "chance (1/options)"],
                    [[mc["file"], str(mc["n"]), str(mc["missing"]), fmt(mc["accuracy"], 3), ci_text(mc.get("ci")),
                      fmt(mc.get("chance"), 3)]]))
    ent = doc.get("entailment")
    if ent:
        out.append(("Entailment (clean videos)", ["file", "pairs", "not in dataset", "ROC-AUC", "chance"],
                    [[ent["file"], str(ent["n"]), str(ent["missing"]), fmt(ent["roc_auc"], 3),
                      fmt(ent.get("chance", 0.5), 2)]]))
    return out
