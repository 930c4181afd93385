"""The seen/held-out split in the report (``perturb bench --trained-with``): a headline line per part
(γa and γr with their intervals, mPC and rPC, mCE where computed) and a table of both parts."""
from __future__ import annotations

from typing import Any, Mapping

from ...metric_names import PARTS
from ..scoring.held_out import PART_WORDS
from .sections import ci_text, fmt, level_text


def _figures(figures: Mapping[str, Any]) -> str:
    """``mPC 0.412, rPC 0.850`` and, where a baseline covered the part, ``mCE 76.4%``."""
    out = []
    if figures.get("mCE") is not None:
        relative = figures.get("relative_mCE")
        out.append(f"mCE {100 * figures['mCE']:.1f}%"
                   + ("" if relative is None else f", relative mCE {100 * relative:.1f}%"))
    if "mPC" in figures:
        out.append(f"mPC {fmt(figures['mPC'], 3)}, rPC {fmt(figures.get('rPC'), 3)}")
    return "; ".join(out)


def _empty(split: Mapping[str, Any], part: str) -> str:
    given = split["trained_with"]["given"]
    return f"--trained-with {given} names {'none of the ops' if part == 'seen' else 'every op'} run"


def split_lines(doc: Mapping[str, Any]) -> list[str]:
    """One line per part, for the headline (terminal, Markdown, HTML); none without a split."""
    split = doc.get("split")
    if not split:
        return []
    lines = []
    for part in PARTS:
        entry = split[part]
        head = f"{PART_WORDS[part]} ops"
        if part == "seen":
            head += f" (trained with {split['trained_with']['given']})"
        if not entry["configurations"]:
            lines.append(f"{head}: none run; {_empty(split, part)}")
            continue
        ci = entry.get("ci") or {}
        gammas = ", ".join(" ".join(filter(None, (g, fmt(entry.get(f"{key}_mean"), 3), ci_text(ci.get(key)))))
                           for g, key in (("γa", "gamma_a"), ("γr", "gamma_r")))
        figures = _figures(entry.get("figures") or {})
        lines.append(f"{head}, {len(entry['operations'])} ops in {entry['configurations']} configurations: "
                     f"{gammas}" + (f"; {figures}" if figures else ""))
    return lines


def split_tables(doc: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The report table of both parts: ops, configurations, γ mean ± std and intervals, figures."""
    split = doc.get("split")
    if not split:
        return []
    lv = level_text(dict(doc))
    rows = []
    for part in PARTS:
        e, ci = split[part], split[part].get("ci") or {}
        rows.append([PART_WORDS[part], ", ".join(e["operations"]) or "—", str(e["configurations"]),
                     f"{fmt(e.get('gamma_a_mean'))} ± {fmt(e.get('gamma_a_std'))}", ci_text(ci.get("gamma_a")),
                     f"{fmt(e.get('gamma_r_mean'))} ± {fmt(e.get('gamma_r_std'))}", ci_text(ci.get("gamma_r")),
                     _figures(e.get("figures") or {})])
    return [(f"Seen and held-out ops (trained with {split['trained_with']['given']})",
             ["part", "operations", "configurations", "γa ± σ", f"mean γa {lv}", "γr ± σ", f"mean γr {lv}",
              "figures"], rows)]
