"""Honest numbers: chance levels, flags for scores that mean little, CIs on γ, nothing skipped in
silence; and a report that answers first (headline, ranked table, MC and entailment, method named)."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from perturb.honesty import chance_levels, flags, non_monotone
from perturb.ranking import hit_chance
from perturb.bench.reporting.report import damaging, headline, html_report, markdown, summary_lines
from perturb.bench.scoring.robustness import summarize
from perturb.cli import main
from test_bench_tasks import Angles, data  # noqa: F401  (fixture)


def test_chance_levels_are_k_over_n_and_exact_with_several_positives():
    rel = np.repeat(np.eye(6, dtype=bool), 2, axis=0)        # 12 captions, 2 per video
    levels = chance_levels(rel)
    assert levels["t2v"]["R@1"] == pytest.approx(1 / 6)
    assert levels["t2v"]["R@5"] == pytest.approx(5 / 6)
    assert levels["t2v"]["R@10"] == 1.0                      # K >= N: every ranking hits
    assert levels["v2t"]["R@1"] == pytest.approx(2 / 12)     # 2 positives among 12 captions
    assert levels["v2t"]["R@5"] == pytest.approx(1 - 252 / 792)   # 1 - C(10,5)/C(12,5)
    assert hit_chance(10, 0, 5) == 0.0


def _doc(clean: float, runs: list[dict], chance: float = 5 / 6, n: int = 6) -> dict:
    doc = {"metric": "t2v.R@5", "model": {"id": "m", "kind": "dual"},
           "dataset": {"name": "d", "n_items": n, "subset": None, "seed": 0},
           "bootstrap": {"n": 200, "seed": 0, "level": 0.95},
           "clean": {"t2v": {"R@1": 0.1, "R@5": clean, "R@10": 1.0, "MdR": 3.0, "MnR": 3.0},
                     "v2t": {"R@1": 0.1, "R@5": clean, "R@10": 1.0, "MdR": 3.0, "MnR": 3.0},
                     "ci": {"metric": [max(0.0, clean - 0.1), min(1.0, clean + 0.1)]}},
           "chance": {"t2v": {"R@5": chance}, "v2t": {"R@5": chance}}, "runs": runs}
    doc["summary"] = summarize(runs)
    return doc


def _run(name: str, sev: int | None, value: float, clean: float, modality: str = "video") -> dict:
    return {"modality": modality, "perturbation": name, "category": "noise" if modality == "video" else "typo",
            "severity": sev, "t2v": {"R@5": value}, "v2t": {"R@5": value},
            "gamma_a": 1 - (clean - value), "gamma_r": 1 - (clean - value) / clean,
            "ci": {"metric": [value - 0.05, value + 0.05], "gamma_a": [0.5, 1.0], "gamma_r": [0.4, 1.0]}}


def test_clean_score_at_chance_gamma_above_one_and_rising_severities_are_flagged():
    clean = 5 / 6                                                   # three random models scored this
    runs = [_run("jpeg", 1, 0.7, clean), _run("jpeg", 2, 0.8, clean), _run("Typos", None, 0.9, clean, "text")]
    kinds = {f["kind"]: f["message"] for f in flags(_doc(clean, runs))}
    assert set(kinds) == {"chance", "gamma_above_1", "non_monotone"}
    assert kinds["chance"].startswith("clean t2v.R@5 0.833 is near chance (0.833)")
    assert "γ > 1 in 1 run(s) (Typos)" in kinds["gamma_above_1"]
    assert non_monotone(runs) == [("jpeg 1→2", False)]                 # both γa CIs are [0.5, 1.0]
    assert kinds["non_monotone"].endswith(". Every rise lies within the γa CIs (the two γa intervals overlap; this "
                                          "compares γa intervals, not the score intervals of the tables): not told "
                                          "apart from the noise of a finite gallery")
    assert kinds["gamma_above_1"].endswith("beat the clean one. Every γa CI reaches 1 or below: not told apart "
                                           "from the noise of a finite gallery")
    runs[1]["ci"]["gamma_a"] = [1.01, 1.2]
    assert non_monotone(runs) == [("jpeg 1→2", True)]
    assert "Beyond the γa CIs" in {f["kind"]: f["message"] for f in flags(_doc(clean, runs))}["non_monotone"]
    assert {f["kind"] for f in flags(_doc(0.99, [], chance=0.05))} == {"saturated"}
    assert flags(_doc(0.6, [_run("jpeg", 1, 0.5, 0.6)], chance=0.05)) == []
    side = _doc(0.6, [], chance=0.05) | {"entailment": {"roc_auc": 0.53, "chance": 0.5, "n": 100},
                                        "mc": {"accuracy": 0.97, "chance": 0.2, "n": 40, "ci": [0.9, 1.0]}}
    assert [f["message"] for f in flags(side)] == [                 # side tasks on clean videos: no γ to blame
        "MC accuracy 0.970 is near 1: the task is too easy to separate models",
        "entailment ROC-AUC 0.530 is near chance (0.500): the model barely tells the matching caption from "
        "the others, so the score says little"]


def test_without_cis_no_sentence_claims_anything_about_them():
    """--bootstrap 0: a rise or a γ > 1 is said to be of unknown meaning, never 'within the CIs'."""
    clean = 0.6
    runs = [_run("jpeg", 1, 0.3, clean), _run("jpeg", 2, 0.4, clean), _run("Typos", None, 0.7, clean, "text")]
    for r in runs:
        r.pop("ci")
    doc = _doc(clean, runs, chance=0.05) | {"bootstrap": None}
    doc["clean"].pop("ci")
    kinds = {f["kind"]: f["message"] for f in flags(doc)}
    assert non_monotone(runs) == [("jpeg 1→2", None)]
    assert kinds["non_monotone"] == ("a higher severity scored better than a lower one in 1 place(s) (jpeg 1→2). "
                                     "No γa CI was computed (--bootstrap 0), so whether a rise is noise is not known")
    assert kinds["gamma_above_1"].endswith("beat the clean one. No γa CI was computed (--bootstrap 0), so "
                                           "whether this is noise is not known")
    text = markdown([doc])
    assert "within" not in text and "noise of a finite gallery" not in text and "CIs:" not in text
    assert "no confidence intervals (--bootstrap 0)" in text


def test_report_leads_with_headline_and_explains(data, tmp_path):  # noqa: F811
    from perturb.bench.api import benchmark
    from perturb.bench.options import BenchOptions
    from perturb.bench.pipeline.encoder import Settings
    from perturb.contrast.mc import MCRow, write_mc_tsv

    mc = write_mc_tsv([MCRow("item0", [f"clip {k}" for k in range(5)], 0),
                       MCRow("item1", ["clip 3", "clip 1", "clip 0", "clip 4", "clip 2"], 0)], tmp_path / "mc.tsv")
    ent = tmp_path / "ent.tsv"
    ent.write_text("video\tcaption\tlabel\n" + "".join(f"item{i}\tclip {i}\t1\nitem{i}\tclip {(i + 2) % 5}\t0\n"
                                                       for i in range(5)))
    doc = benchmark(Angles(), data,
                    BenchOptions(bootstrap=50, mc=str(mc), entailment=str(ent), settings=Settings(progress=False)),
                    video=["jpeg"], text=[], severities=(1, 5), metric="t2v.R@1")
    assert doc["chance"]["t2v"]["R@1"] == pytest.approx(1 / 5)
    assert doc["mc"]["chance"] == pytest.approx(1 / 5) and doc["entailment"]["chance"] == 0.5
    assert set(doc["summary"]["modality"]["video"]["ci"]) == {"gamma_a", "gamma_r"}
    md = markdown([doc])
    body = md.split("\n")
    assert body[2] == "## angles on angles (5 items)"
    assert body[4].startswith("**clean t2v.R@1: 1.000 [") and body[4].endswith("(chance 0.200)**")
    assert body[6].startswith("**MC accuracy: 0.500 [") and body[6].endswith("on 2 questions (chance 0.200)**")
    assert body[7] == "**entailment ROC-AUC: 1.000 on 10 pairs (chance 0.5)**"      # in the headline
    assert "- entailment ROC-AUC 1.000 is near 1: the task is too easy to separate models" in body
    assert "5 most damaging configurations:" in md and "| 1 | video | jpeg@" in md
    assert "### Multiple choice (clean videos)" in md and "| 0.500 |" in md.split("### Multiple choice")[1]
    assert "### Entailment (clean videos)" in md
    assert "percentile bootstrap over queries: 50 resamples" in md
    assert "| γa 95% CI |" in md and "| γr 95% CI |" in md
    html = html_report([doc])
    assert html.index("id='headline'") < html.index("<img")              # the answer before the curves
    headline_html = html[html.index("id='headline'"):html.index("</section>")]
    assert "MC accuracy: 0.500" in headline_html and "entailment ROC-AUC: 1.000 on 10 pairs" in headline_html
    lines = summary_lines(doc)
    assert lines[0].startswith("clean t2v.R@1: 1.000") and lines[1].startswith("MC accuracy: 0.500")
    assert lines[2] == "entailment ROC-AUC: 1.000 on 10 pairs (chance 0.5)"


def test_headline_ranks_the_most_damaging_with_cis():
    clean = 0.6
    runs = [_run("jpeg", 1, 0.55, clean), _run("jpeg", 2, 0.2, clean), _run("Typos", None, 0.4, clean, "text")]
    doc = _doc(clean, runs, chance=0.01)
    assert [(r["perturbation"], r["severity"]) for r in damaging(doc)] == [("jpeg", 2), ("Typos", None),
                                                                           ("jpeg", 1)]
    worst = headline(doc)["worst"][0]
    assert worst == ["1", "video", "jpeg@2", "0.200", "[0.150, 0.250]", "0.600", "[0.500, 1.000]",
                     "0.333", "[0.400, 1.000]"]


def test_severity_curve_legends_sit_beside_the_axes():
    from perturb.bench.reporting.plots import severity_figure

    clean = 0.9
    runs = [_run(n, s, 0.9 - 0.1 * s, clean) for n in ("jpeg", "gaussian_noise", "shot_noise") for s in (1, 2, 3)]
    fig = severity_figure(_doc(clean, runs, chance=0.01))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box, area = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert box.x0 >= area.x1                       # entirely right of the plotting area
        assert len(ax.collections) == 3                # one CI band per line


def test_bar_chart_legends_sit_beside_the_axes(monkeypatch):
    from perturb.bench.reporting import plots

    drawn = []
    monkeypatch.setattr(plots, "_png", lambda fig: drawn.append(fig) or b"")
    clean = 0.9
    runs = [_run(n, s, 0.9 - 0.1 * s, clean) for n in ("jpeg", "gaussian_noise") for s in (1, 2)]
    runs += [_run(n, None, v, clean, "text") for n, v in (("Typos", 0.8), ("NoVB", 0.3), ("OCR", 0.85))]
    doc = _doc(clean, runs, chance=0.01)
    assert plots.text_bars(doc) == plots.gamma_bars(doc) == b""
    assert len(drawn) == 2
    for fig in drawn:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        (ax,) = fig.axes
        assert ax.get_legend().get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1


def _bench(dataset, out, *extra):
    return main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out), "--video-perturbations",
                 "none", "--text-perturbations", "Typos,NoVB", "--bootstrap", "20", "--no-progress", "--no-cache",
                 "--size", "32", *extra])


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from bench_fixtures import write_tiny_dataset
    return write_tiny_dataset(tmp_path_factory.mktemp("tiny"))


@pytest.fixture()
def no_spacy(monkeypatch):
    """As installed without the [text] extra: parsing captions needs a resource that is missing."""
    from perturb.errors import MissingResourceError
    from perturb.text import api

    def missing(*args, **kwargs):
        raise MissingResourceError("NoVB needs spaCy: install perturb with the [text] extra")
    monkeypatch.setattr(api, "parse_batch", missing)


def test_a_requested_perturbation_that_cannot_run_is_never_silent(tiny, tmp_path, capsys, no_spacy):
    assert _bench(tiny, tmp_path / "a") == 1
    err = capsys.readouterr().err
    assert "perturb bench: error: requested text NoVB did not run: NoVB needs spaCy" in err
    assert err.rstrip().endswith("pass --allow-skips to accept")
    doc = json.loads((tmp_path / "a" / "results.json").read_text())
    assert [s["perturbation"] for s in doc["skipped"]] == ["NoVB"] and "skips_allowed" not in doc
    assert "### Requested but not run" in (tmp_path / "a" / "report.md").read_text()
    assert main(["check", str(tmp_path / "a" / "results.json"), "--min", "gamma_r=0"]) == 1
    out = capsys.readouterr().out
    assert "requested but did not run: NoVB needs spaCy: install perturb with the [text] extra" in out
    assert "1 perturbations that ran (1 requested configuration(s) did not run)" in out

    assert _bench(tiny, tmp_path / "b", "--allow-skips") == 0
    assert "perturb bench: note: requested text NoVB did not run" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "b" / "results.json"), "--min", "gamma_r=0"]) == 0


def test_check_and_compare_say_when_the_clean_score_is_at_chance(tiny, tmp_path, capsys):
    assert main(["bench", "--model", "toy:8", "--dataset", str(tiny), "--out", str(tmp_path / "a"),
                 "--video-perturbations", "none", "--text-perturbations", "Typos", "--bootstrap", "20",
                 "--no-progress", "--no-cache", "--size", "32"]) == 0              # R@5 of 4 videos: chance 1
    capsys.readouterr()
    path = str(tmp_path / "a" / "results.json")
    assert main(["check", path, "--min", "R@5=0.5"]) == 0                            # bare metric accepted
    out = capsys.readouterr().out
    assert "clean t2v.R@5 1.000 is near chance (1.000)" in " ".join(out.split())
    assert main(["compare", path, path]) == 0
    assert "current: clean t2v.R@5 1.000 is near chance" in " ".join(capsys.readouterr().out.split())


def test_compare_notes_a_large_drop_passed_as_noise(tmp_path, capsys):
    from perturb.gate.compare import compare
    from perturb.results import validate

    clean = 0.75
    base = _doc(clean, [_run("jpeg", 1, 0.5, clean)], chance=0.3, n=16)
    cur = copy.deepcopy(base)
    cur["runs"] = [_run("jpeg", 1, 0.0, clean)]
    cur["runs"][0]["ci"]["gamma_r"] = [-0.5, 1.2]                                     # 16 items: wide
    base["runs"][0]["ci"]["gamma_r"] = [-0.2, 1.3]
    cur["summary"] = summarize(cur["runs"])
    for d in (base, cur):
        d.update(schema_version="1.2", ties="pessimistic")
    result = compare(validate(base), validate(cur), ["gamma_r"], 0.02, 0.05)
    assert [o.cells["verdict"] for o in result.outcomes] == ["noise", "noise"]
    assert result.notes[-1].startswith("2 drop(s) larger than 0.1 passed only as noise (perturbation jpeg "
                                       "gamma_r +0.667")
    assert "with 16 items the CIs are too wide" in result.notes[-1]


def test_report_refuses_mixed_metrics_and_datasets_unless_asked(tiny, tmp_path, capsys):
    common = ["--model", "toy:8", "--dataset", str(tiny), "--video-perturbations", "none", "--text-perturbations",
              "Typos", "--bootstrap", "0", "--no-progress", "--no-cache", "--size", "32"]
    assert main(["bench", *common, "--out", str(tmp_path / "r5")]) == 0
    assert main(["bench", *common, "--out", str(tmp_path / "r1"), "--metric", "R@1"]) == 0
    assert main(["bench", *common, "--out", str(tmp_path / "sub"), "--subset", "3"]) == 0
    capsys.readouterr()
    files = [str(tmp_path / d / "results.json") for d in ("r5", "r1", "sub")]
    assert main(["report", files[0], files[1], "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"perturb report: error: {files[0]} and {files[1]} differ in metric (t2v.R@5 vs t2v.R@1); "
                   "their scores are not comparable in one report: pass --allow-mixed to combine them anyway")
    assert main(["report", files[0], files[2], "--out", str(tmp_path / "rep")]) == 2
    assert "differ in dataset" in capsys.readouterr().err
    assert not (tmp_path / "rep" / "report.md").exists()
    assert main(["report", *files, "--out", str(tmp_path / "rep"), "--allow-mixed"]) == 0
