"""Matplotlib figures of results documents, returned as PNG bytes (Agg backend, no display)."""
from __future__ import annotations

import io
from typing import Any, Sequence

import numpy as np

from ...metric_names import VISUAL, headline_ci_key, record_value


def _plt():
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def metric_value(record: dict[str, Any], metric: str) -> float | None:
    """The value of a file's ``metric`` (``t2v.R@5``, ``top1``) in a clean or run record."""
    return record_value(record, metric)


def severity_curves(doc: dict[str, Any]) -> bytes | None:
    """Metric vs severity, one panel per video category, one line per perturbation (cf. Figs 11-12),
    each with its bootstrap CI as a band."""
    fig = severity_figure(doc)
    return None if fig is None else _png(fig)


def severity_figure(doc: dict[str, Any]) -> Any:
    """The figure of :func:`severity_curves` (None without video runs); legends sit beside the panels."""
    runs = [r for r in doc["runs"] if r["modality"] in VISUAL and r["severity"] is not None]
    if not runs:
        return None
    plt = _plt()
    cats = list(dict.fromkeys(r["category"] for r in runs))
    cols = min(3, len(cats))
    rows = -(-len(cats) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.6 * cols, 3.2 * rows), squeeze=False)
    clean = metric_value(doc["clean"], doc["metric"])
    ci_key = headline_ci_key(doc)
    clean_ci = (doc["clean"].get("ci") or {}).get(ci_key)
    for ax, cat in zip(axes.flat, cats):
        for name in dict.fromkeys(r["perturbation"] for r in runs if r["category"] == cat):
            mine = sorted((r for r in runs if r["perturbation"] == name), key=lambda r: r["severity"])
            x = [r["severity"] for r in mine]
            line, = ax.plot(x, [metric_value(r, doc["metric"]) for r in mine], marker="o", label=name)
            band = [(r.get("ci") or {}).get(ci_key) for r in mine]
            if all(b and None not in b for b in band):
                ax.fill_between(x, [b[0] for b in band], [b[1] for b in band], color=line.get_color(),
                                alpha=0.18, linewidth=0)
        ax.axhline(clean, color="black", linestyle="--", linewidth=1, label="clean")
        if clean_ci and None not in clean_ci:
            ax.axhspan(clean_ci[0], clean_ci[1], color="black", alpha=0.07, linewidth=0)
        ax.set_title(cat)
        ax.set_xlabel("severity")
        ax.set_ylabel(doc["metric"])
        ax.set_ylim(-0.02, 1.02)
        ax.set_xticks(sorted({r["severity"] for r in runs}))
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # beside, never over
    for ax in list(axes.flat)[len(cats):]:
        ax.axis("off")
    fig.suptitle(f"{doc['model']['id']}: {doc['metric']} under {runs[0]['modality']} perturbations (bands: bootstrap CIs)")
    fig.tight_layout()
    return fig


def text_bars(doc: dict[str, Any]) -> bytes | None:
    """Metric per text perturbation, coloured by category, with the clean value as a line (cf. Fig 10)."""
    runs = [r for r in doc["runs"] if r["modality"] == "text"]
    if not runs:
        return None
    plt = _plt()
    cats = list(dict.fromkeys(r["category"] for r in runs))
    colours = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(max(6.0, 0.32 * len(runs) + 2), 3.6))
    x = np.arange(len(runs))
    ax.bar(x, [metric_value(r, doc["metric"]) for r in runs],
           color=[colours(cats.index(r["category"]) % 10) for r in runs])
    ax.axhline(metric_value(doc["clean"], doc["metric"]), color="black", linestyle="--", linewidth=1)
    ax.set_xticks(x, [r["perturbation"] for r in runs], rotation=70, fontsize=8)
    ax.set_ylabel(doc["metric"])
    ax.set_ylim(0, 1.02)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours(i % 10)) for i in range(len(cats))]
    ax.legend(handles, cats, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(f"{doc['model']['id']}: text perturbations (dashed: clean)")
    fig.tight_layout()
    return _png(fig)


def gamma_bars(doc: dict[str, Any]) -> bytes | None:
    """γa and γr per category, mean ± std (cf. Tables 3-4)."""
    cats = doc["summary"]["category"]
    if not cats:
        return None
    plt = _plt()
    names = list(cats)
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(names) + 2), 3.6))
    for off, g, label in ((-0.2, "gamma_a", "γa"), (0.2, "gamma_r", "γr")):
        means = [cats[n][f"{g}_mean"] if cats[n][f"{g}_mean"] is not None else np.nan for n in names]
        stds = [cats[n][f"{g}_std"] or 0.0 for n in names]
        ax.bar(x + off, means, width=0.4, yerr=stds, capsize=3, label=label)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(x, [f"{n}\n({cats[n]['modality']})" for n in names], fontsize=8, rotation=30)
    ax.set_ylabel(f"robustness on {doc['metric']}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_title(f"{doc['model']['id']}: robustness per category (mean ± std)")
    fig.tight_layout()
    return _png(fig)


def heatmap(docs: Sequence[dict[str, Any]], gamma: str = "gamma_r") -> bytes | None:
    """Model x perturbation heatmap of the per-perturbation mean γ (several result files)."""
    if len(docs) < 2:
        return None
    plt = _plt()
    perts = list(dict.fromkeys(p for d in docs for p in d["summary"]["perturbation"]))
    grid = np.full((len(docs), len(perts)), np.nan)
    for i, d in enumerate(docs):
        for j, p in enumerate(perts):
            v = d["summary"]["perturbation"].get(p, {}).get(f"{gamma}_mean")
            grid[i, j] = np.nan if v is None else v
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(perts) + 3), 0.5 * len(docs) + 2.2))
    im = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=np.nanmin(grid) if np.isfinite(grid).any() else 0,
                   vmax=max(1.0, np.nanmax(grid) if np.isfinite(grid).any() else 1))
    ax.set_yticks(range(len(docs)), [d["model"]["id"] for d in docs], fontsize=8)
    ax.set_xticks(range(len(perts)), perts, rotation=75, fontsize=7)
    label = "γr" if gamma == "gamma_r" else "γa"
    fig.colorbar(im, ax=ax, label=f"{label} (mean over severities)")
    ax.set_title(f"model × perturbation robustness ({label})")
    fig.tight_layout()
    return _png(fig)
