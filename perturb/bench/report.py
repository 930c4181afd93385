"""Reports of one or several results documents: Markdown, self-contained HTML, a rich terminal table."""
from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any, Sequence

from ..fileio import write_atomic
from . import plots

MODALITIES = ("video", "text", "both")


def _f(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _pm(agg: dict[str, Any], g: str) -> str:
    return f"{_f(agg.get(f'{g}_mean'))} ± {_f(agg.get(f'{g}_std'))}"


def _clean_rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for d in ("t2v", "v2t"):
        m = doc["clean"][d]
        rows.append([d, *(_f(m[k], 3) for k in ("R@1", "R@5", "R@10")), _f(m["MdR"], 1), _f(m["MnR"], 1)])
    return rows


CARD_FIELDS = ("family", "checkpoint", "revision", "mode", "frames", "frame_sampling", "resolution", "dtype",
               "autocast", "device")


def model_tables(doc: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The model card and the two-stage re-ranking set-up, where the results document has them."""
    out = []
    card = doc["model"].get("card")
    if card:
        out.append(("Model", list(CARD_FIELDS), [[str(card.get(k, "")) for k in CARD_FIELDS]]))
    rr = doc.get("rerank")
    if rr:
        out.append(("Two-stage re-ranking", ["first stage", "top K re-scored", "pairs scored", "note"],
                    [[rr["first_stage"], str(rr["k"]), str(rr["pairs_scored"]), rr["note"]]]))
    return out


def tables(doc: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every report table for one results document."""
    s = doc["summary"]
    out = model_tables(doc)
    out += [("Clean retrieval", ["direction", "R@1", "R@5", "R@10", "MdR", "MnR"], _clean_rows(doc))]
    out.append(("Robustness per modality (cf. Table 5)", ["modality", "γa ± σ", "γr ± σ"],
                [[m, _pm(s["modality"][m], "gamma_a"), _pm(s["modality"][m], "gamma_r")]
                 for m in MODALITIES if m in s["modality"]]))
    out.append(("Robustness per category (cf. Tables 3–4)", ["modality", "category", "γa ± σ", "γr ± σ"],
                [[a["modality"], c, _pm(a, "gamma_a"), _pm(a, "gamma_r")] for c, a in s["category"].items()]))
    metric = doc["metric"]
    out.append((f"Every run ({metric})", ["modality", "perturbation", "category", "severity", metric,
                                          "γa", "γr", f"{metric} 95% CI"],
                [[r["modality"], r["perturbation"], r["category"], "" if r["severity"] is None else str(r["severity"]),
                  _f(plots.metric_value(r, metric), 3), _f(r["gamma_a"], 3), _f(r["gamma_r"], 3),
                  _ci(r.get("ci", {}).get("metric"))] for r in doc["runs"]]))
    return out


def _ci(ci: Sequence[float | None] | None) -> str:
    return "" if not ci or ci[0] is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _title(doc: dict[str, Any]) -> str:
    ds = doc["dataset"]
    sub = f", subset {ds['subset']} (seed {ds['seed']})" if ds.get("subset") else ""
    return f"{doc['model']['id']} on {ds['name']} ({ds['n_items']} items{sub})"


def markdown(docs: Sequence[dict[str, Any]]) -> str:
    """The Markdown report."""
    lines = ["# Robustness report", ""]
    if len(docs) > 1:
        lines += _md_table(["model", "dataset", "metric", "clean", "γa video", "γr video", "γa text", "γr text"],
                           [_overview(d) for d in docs]) + [""]
    for doc in docs:
        lines += [f"## {_title(doc)}", "", f"Metric: `{doc['metric']}`; γr is empty (null) where the "
                  "clean metric is 0.", ""]
        for title, header, rows in tables(doc):
            lines += [f"### {title}", ""] + _md_table(header, rows) + [""]
    return "\n".join(lines)


def _overview(doc: dict[str, Any]) -> list[str]:
    mod = doc["summary"]["modality"]
    return [doc["model"]["id"], doc["dataset"]["name"], doc["metric"],
            _f(plots.metric_value(doc["clean"], doc["metric"]), 3),
            *(_f(mod.get(m, {}).get(f"{g}_mean")) for m in ("video", "text") for g in ("gamma_a", "gamma_r"))]


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(r) + " |" for r in rows])


def _img(png: bytes | None, alt: str) -> str:
    if png is None:
        return ""
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}"></figure>'


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1300px;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f0f0f0}
figure{margin:1em 0}img{max-width:100%}h2{border-bottom:2px solid #ddd;padding-bottom:.2em}
.gallery img{width:150px;margin:2px}"""


def html_report(docs: Sequence[dict[str, Any]], extra_html: str = "") -> str:
    """The self-contained HTML report (plots embedded as base64 PNG)."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Robustness report</title>"
             f"<style>{CSS}</style></head><body><h1>Robustness report</h1>"]
    if len(docs) > 1:
        parts.append(_html_table(["model", "dataset", "metric", "clean", "γa video", "γr video", "γa text",
                                  "γr text"], [_overview(d) for d in docs]))
        parts.append(_img(plots.heatmap(docs, "gamma_r"), "model x perturbation heatmap of relative robustness"))
        parts.append(_img(plots.heatmap(docs, "gamma_a"), "model x perturbation heatmap of absolute robustness"))
    for doc in docs:
        parts.append(f"<h2>{html.escape(_title(doc))}</h2>")
        parts.append(f"<p>Metric <code>{html.escape(doc['metric'])}</code>. γa = 1 − (A<sub>c</sub> − A<sub>p</sub>),"
                     " γr = 1 − (A<sub>c</sub> − A<sub>p</sub>)/A<sub>c</sub>; “—” where undefined.</p>")
        figs = [(plots.severity_curves(doc), "metric vs severity per video category"),
                (plots.gamma_bars(doc), "robustness per category"), (plots.text_bars(doc), "text perturbations")]
        parts += [_img(png, alt) for png, alt in figs]
        for title, header, rows in tables(doc):
            parts.append(f"<h3>{html.escape(title)}</h3>" + _html_table(header, rows))
    parts.append(extra_html + "</body></html>")
    return "\n".join(parts)


def rich_summary(doc: dict[str, Any]) -> Any:
    """A rich Table of clean metric and γ per modality and category, for the terminal."""
    from rich.table import Table

    t = Table(title=f"{_title(doc)} — {doc['metric']} clean {_f(plots.metric_value(doc['clean'], doc['metric']), 3)}")
    for col in ("modality", "category", "runs", "γa mean ± std", "γr mean ± std"):
        t.add_column(col)
    counts: dict[str, int] = {}
    for r in doc["runs"]:
        counts[r["category"]] = counts.get(r["category"], 0) + 1
    for cat, agg in doc["summary"]["category"].items():
        t.add_row(agg["modality"], cat, str(counts.get(cat, 0)), _pm(agg, "gamma_a"), _pm(agg, "gamma_r"))
    for mod, agg in doc["summary"]["modality"].items():
        t.add_row(f"[bold]{mod}[/bold]", "[bold]all[/bold]", str(sum(r["modality"] == mod for r in doc["runs"])),
                  _pm(agg, "gamma_a"), _pm(agg, "gamma_r"))
    return t


def print_summary(doc: dict[str, Any]) -> None:
    """Print the rich summary table to the terminal."""
    from rich.console import Console
    Console().print(rich_summary(doc))


def write_reports(docs: Sequence[dict[str, Any]], out: str | Path, extra_html: str = "") -> dict[str, Path]:
    """Write report.md and report.html into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "report.md", "html": out / "report.html"}
    write_atomic(paths["md"], markdown(docs))
    write_atomic(paths["html"], html_report(docs, extra_html))
    return paths
