"""Reports of one or several results documents: Markdown, self-contained HTML, a rich terminal table."""
from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any, Sequence

from ...fileio import write_atomic, write_json
from ...honesty import chance_of, flags, run_label
from ...metric_names import DIRECTIONS, MODALITIES, headline_ci_key, headline_metric, is_fraction, task_of
from . import classification, plots
from .sections import ci_text as _ci, fmt as _f, level_text as _level, model_tables, task_tables
from .split import split_lines, split_tables
from ..scoring.bootstrap import METHOD
from ..scoring.suite_summary import figure_lines, suite_tables


def _pm(agg: dict[str, Any], g: str) -> str:
    return f"{_f(agg.get(f'{g}_mean'))} ± {_f(agg.get(f'{g}_std'))}"


def _clean_table(doc: dict[str, Any]) -> tuple[str, list[str], list[list[str]]]:
    """Every retrieval metric the file measured on clean, per direction (fractions to 3 digits, ranks to
    1); a classification file's accuracies."""
    if classification.is_classification(doc):
        return classification.clean_table(doc)
    names = list(doc["clean"]["t2v"])
    rows = [[d, *(_f(doc["clean"][d].get(k), 3 if is_fraction(k) else 1) for k in names)] for d in DIRECTIONS]
    return "Clean retrieval", ["direction", *names], rows


RANKED = 10          # rows of the "most damaging configurations" table
HEADLINE_WORST = 5   # of them, in the headline


def damaging(doc: dict[str, Any], n: int = RANKED) -> list[dict[str, Any]]:
    """The ``n`` runs that cost the metric most (lowest γa, then lowest γr); undefined γ last."""
    def key(r: dict[str, Any]) -> tuple[float, float]:
        return (r["gamma_a"] if r["gamma_a"] is not None else float("inf"),
                r["gamma_r"] if r["gamma_r"] is not None else float("inf"))
    return sorted(doc["runs"], key=key)[:n]


def _run_ci(r: dict[str, Any], key: str) -> str:
    return _ci((r.get("ci") or {}).get(key))


def _ranked_rows(doc: dict[str, Any], n: int) -> list[list[str]]:
    metric = doc["metric"]
    return [[str(i), r["modality"], run_label(r), _f(plots.metric_value(r, metric), 3), _run_ci(r, headline_ci_key(doc)),
             _f(r["gamma_a"], 3), _run_ci(r, "gamma_a"), _f(r["gamma_r"], 3), _run_ci(r, "gamma_r")]
            for i, r in enumerate(damaging(doc, n), 1)]


def _ranked_header(doc: dict[str, Any]) -> list[str]:
    lv = _level(doc)
    return ["#", "modality", "configuration", doc["metric"], lv, "γa", f"γa {lv}", "γr", f"γr {lv}"]


def _modality_rows(doc: dict[str, Any]) -> list[list[str]]:
    s = doc["summary"]["modality"]
    return [[m, _pm(s[m], "gamma_a"), _ci((s[m].get("ci") or {}).get("gamma_a")),
             _pm(s[m], "gamma_r"), _ci((s[m].get("ci") or {}).get("gamma_r"))] for m in MODALITIES if m in s]


def tables(doc: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every report table for one results document."""
    s = doc["summary"]
    lv = _level(doc)
    out = model_tables(doc)
    out.append(_clean_table(doc))
    out.append((f"Most damaging configurations (lowest γa on {doc['metric']})", _ranked_header(doc),
                _ranked_rows(doc, RANKED)))
    out.append(("Robustness per modality (cf. Table 5)", ["modality", "γa ± σ", f"mean γa {lv}", "γr ± σ",
                                                           f"mean γr {lv}"], _modality_rows(doc)))
    out.append(("Robustness per category (cf. Tables 3–4)", ["modality", "category", "γa ± σ", "γr ± σ"],
                [[a["modality"], c, _pm(a, "gamma_a"), _pm(a, "gamma_r")] for c, a in s["category"].items()]))
    out += suite_tables(doc)
    out += split_tables(doc)
    out += task_tables(doc)
    metric = doc["metric"]
    out.append((f"Every run ({metric})", ["modality", "perturbation", "category", "severity", metric,
                                          f"{metric} {lv}", "γa", f"γa {lv}", "γr", f"γr {lv}"],
                [[r["modality"], r["perturbation"], r["category"], "" if r["severity"] is None else str(r["severity"]),
                  _f(plots.metric_value(r, metric), 3), _run_ci(r, headline_ci_key(doc)), _f(r["gamma_a"], 3),
                  _run_ci(r, "gamma_a"), _f(r["gamma_r"], 3), _run_ci(r, "gamma_r")] for r in doc["runs"]]))
    skipped = doc.get("skipped") or []
    if skipped:
        out.append(("Requested but not run", ["modality", "configuration", "why"],
                    [[x["modality"], run_label(x), x["reason"]] for x in skipped]))
    return out


def clean_score(doc: dict[str, Any]) -> str:
    """``0.620 [0.580, 0.660] (chance 0.005)``: the clean metric, its CI and its chance level."""
    ci = _ci((doc["clean"].get("ci") or {}).get(headline_ci_key(doc)))
    chance = chance_of(doc)
    return (f"{_f(plots.metric_value(doc['clean'], doc['metric']), 3)}{' ' + ci if ci else ''}"
            f"{f' (chance {chance:.3f})' if chance is not None else ''}")


def notes(doc: dict[str, Any]) -> list[str]:
    """What the reader must know before trusting the numbers: flags, and how the CIs were made."""
    out = [f["message"] for f in (doc.get("flags") if "flags" in doc else flags(doc))]
    if doc.get("left_out"):
        from ...text.availability import left_out_line
        out.append(left_out_line(doc["left_out"]))
    boot = doc.get("bootstrap")
    method = METHOD.format(**boot) if boot else ""
    if classification.is_classification(doc):
        method = method.replace("queries", "samples")      # its resamples are of images or clips
    out.append("CIs: " + method if boot else "no confidence intervals (--bootstrap 0)")
    return out


def headline(doc: dict[str, Any]) -> dict[str, Any]:
    """What a reader asks first: the clean score, the suites' figures (a classification file: its
    corruption × severity table too), the seen and held-out parts, mean γ per modality, the worst
    configurations."""
    mod = doc["summary"]["modality"]
    if classification.is_classification(doc):
        table = classification.corruption_table(doc)
        first = {"clean": classification.clean_line(doc),
                 "side": classification.figure_lines(doc) + split_lines(doc), "tables": [table] if table else []}
    else:
        first = {"clean": f"clean {doc['metric']}: {clean_score(doc)}",
                 "side": side_task_lines(doc) + figure_lines(doc) + split_lines(doc), "tables": []}
    return {**first,
            "modalities": [(m, _f(mod[m].get("gamma_a_mean"), 3), _ci((mod[m].get("ci") or {}).get("gamma_a")),
                            _f(mod[m].get("gamma_r_mean"), 3), _ci((mod[m].get("ci") or {}).get("gamma_r")))
                           for m in MODALITIES if m in mod],
            "worst": _ranked_rows(doc, HEADLINE_WORST)}


def _md_headline(doc: dict[str, Any]) -> list[str]:
    h = headline(doc)
    lines = [f"**{h['clean']}**", ""] + [f"**{line}**" for line in h["side"]] + ([""] if h["side"] else [])
    for title, header, rows in h["tables"]:
        lines += [f"{title}:", ""] + _md_table(header, rows) + [""]
    lines += _md_table(["modality", "mean γa", _level(doc), "mean γr", _level(doc)],
                       [list(r) for r in h["modalities"]]) + [""]
    lines += [f"{HEADLINE_WORST} most damaging configurations:", ""]
    lines += _md_table(_ranked_header(doc), h["worst"]) + [""]
    return lines


def _title(doc: dict[str, Any]) -> str:
    ds = doc["dataset"]
    sub = f", subset {ds['subset']} (seed {ds.get('seed')})" if ds.get("subset") else ""
    return f"{doc['model']['id']} on {ds['name']} ({ds['n_items']} items{sub})"


def markdown(docs: Sequence[dict[str, Any]]) -> str:
    """The Markdown report."""
    lines = ["# Robustness report", ""]
    if len(docs) > 1:
        lines += _md_table(["model", "dataset", "metric", "clean", "γa video", "γr video", "γa text", "γr text"],
                           [_overview(d) for d in docs]) + [""]
    for doc in docs:
        lines += [f"## {_title(doc)}", ""] + _md_headline(doc)
        lines += [f"Metric: `{doc['metric']}` ({_words(doc)}); γr is empty (null) where the clean metric is 0.", ""]
        lines += [f"- {n}" for n in notes(doc)] + [""]
        for title, header, rows in tables(doc):
            lines += [f"### {title}", ""] + _md_table(header, rows) + [""]
    return "\n".join(lines)


def _words(doc: dict[str, Any]) -> str:
    return headline_metric(doc["metric"], task_of(doc)).words


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


def _html_headline(doc: dict[str, Any]) -> str:
    h = headline(doc)
    mods = "".join(f"<div class='card'><div class='k'>{html.escape(m)}</div><div class='v'>γa {a}"
                   f"<small>{html.escape(aci)}</small></div><div class='v'>γr {r}<small>{html.escape(rci)}</small>"
                   f"</div></div>" for m, a, aci, r, rci in h["modalities"])
    side = "".join(f"<p class='side'>{html.escape(line)}</p>" for line in h["side"])
    side += "".join(f"<h3>{html.escape(title)}</h3>" + _html_table(header, rows) for title, header, rows in h["tables"])
    return (f"<section class='headline' id='headline'><p class='clean'>{html.escape(h['clean'])}</p>{side}"
            f"<div class='cards'>{mods}</div><h3>{HEADLINE_WORST} most damaging configurations</h3>"
            + _html_table(_ranked_header(doc), h["worst"]) + "</section>")


def _html_notes(doc: dict[str, Any]) -> str:
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes(doc))
    return f"<ul class='notes'>{items}</ul>"


CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1300px;color:#222}
.headline{background:#f5f8ff;border:1px solid #c9d6f0;border-radius:6px;padding:.6em 1em;margin:.5em 0 1.5em}
.headline .clean{font-size:20px;font-weight:600;margin:.2em 0 .6em}.headline .side{font-size:16px;margin:.2em 0 .6em}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{background:#fff;border:1px solid #c9d6f0;border-radius:6px;
padding:.4em .8em}.card .k{font-weight:600;text-transform:uppercase;font-size:12px;color:#555}
.card .v{font-size:18px}.card small{font-size:11px;color:#666;margin-left:.4em}
.notes li{margin:.2em 0;font-size:13px}
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
        parts.append(_html_headline(doc))
        parts.append(f"<p>Metric <code>{html.escape(doc['metric'])}</code> "
                     f"({html.escape(_words(doc))}). γa = 1 − (A<sub>c</sub> − A<sub>p</sub>),"
                     " γr = 1 − (A<sub>c</sub> − A<sub>p</sub>)/A<sub>c</sub>; “—” where undefined.</p>")
        parts.append(_html_notes(doc))
        figs = [(plots.severity_curves(doc), "metric vs severity per video category, bootstrap CIs as bands"),
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


def side_task_lines(doc: dict[str, Any]) -> list[str]:
    """MC accuracy and entailment ROC-AUC on clean videos, each with its chance level (when run)."""
    lines = []
    mc, ent = doc.get("mc"), doc.get("entailment")
    if mc:
        ci = _ci(mc.get("ci"))
        lines.append(f"MC accuracy: {mc['accuracy']:.3f}{' ' + ci if ci else ''} on {mc['n']} questions "
                     f"(chance {_f(mc.get('chance'), 3)})")
    if ent:
        lines.append(f"entailment ROC-AUC: {_f(ent.get('roc_auc'), 3)} on {ent['n']} pairs (chance 0.5)")
    return lines


def summary_lines(doc: dict[str, Any]) -> list[str]:
    """The lines printed under the table: clean score with chance, MC and entailment, the flags."""
    first = headline(doc)
    lines = [first["clean"], *first["side"]]
    lines += [f"note: {f['message']}" for f in (doc.get("flags") if "flags" in doc else flags(doc))]
    return lines


def print_summary(doc: dict[str, Any]) -> None:
    """Print the rich summary table to the terminal, then the clean score, side tasks and flags."""
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    console.print(rich_summary(doc))
    for line in summary_lines(doc):
        console.print(escape(line), soft_wrap=True)


def write_reports(docs: Sequence[dict[str, Any]], out: str | Path, extra_html: str = "") -> dict[str, Path]:
    """Write report.md, report.html and report.json (the figures, for scripts) into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "report.md", "html": out / "report.html", "json": out / "report.json"}
    write_atomic(paths["md"], markdown(docs))
    write_atomic(paths["html"], html_report(docs, extra_html))
    write_json(paths["json"], {"reports": [classification.figures(doc) for doc in docs]})
    return paths
