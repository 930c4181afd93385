"""``perturb bench --trained-with``: the seen/held-out split in results.json, the report's headline,
``perturb check`` (``held_out.gamma_r=...``) and ``perturb compare``."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench_fixtures import tiny_data, write_tiny_dataset
from perturb.bench.adapters.toy import ToyEncoder
from perturb.bench.api import benchmark
from perturb.bench.options import BenchOptions
from perturb.bench.pipeline.encoder import Settings
from perturb.bench.reporting.report import markdown, print_summary
from perturb.bench.scoring.corruption import corruption_errors, performance_under_corruption
from perturb.bench.scoring.robustness import summarize
from perturb.cli import main
from perturb.registry import REGISTRY
from perturb.results import validate
from perturb.transforms.trained import trained_with

OVERLAP = ["shot_noise", "brightness", "contrast", "saturate", "fog"]      # imagenet-c ∩ kinetics-c
KINETICS_ONLY = ["temporal_blur", "h265_crf", "h265_abr", "bit_error", "packet_loss", "frame_rate", "rain"]
BOTH = [s.ref for s in REGISTRY.resolve("suite:imagenet-c,suite:kinetics-c", "video")]


def _bench(video: list[str], trained: str | None = None, bootstrap: int = 200) -> dict:
    options = BenchOptions(bootstrap=bootstrap, trained_with=trained, settings=Settings(seed=0, progress=False))
    return benchmark(ToyEncoder(8), tiny_data(8, frames=6, size=32), options, video=video, severities=(2,),
                     metric="t2v.R@1")


@pytest.fixture(scope="module")
def both() -> dict:
    """A run of imagenet-c plus kinetics-c, trained with imagenet-c."""
    return _bench(BOTH, "suite:imagenet-c")


def test_a_selection_overlapping_both_suites_splits_the_runs_by_op(both):
    split = both["split"]
    imagenet_c = [s.name for s in REGISTRY.resolve("suite:imagenet-c", "video")]
    assert split["trained_with"] == {"given": "suite:imagenet-c", "kind": "selection", "operations": imagenet_c}
    assert split["seen"]["operations"] == imagenet_c
    assert split["held_out"]["operations"] == KINETICS_ONLY
    seen = {r["perturbation"] for r in both["runs"] if r["perturbation"].split(":")[0] in imagenet_c}
    assert {"shot_noise:kinetics-c", "contrast:kinetics-c", "fog:kinetics-c"} <= seen      # kinetics-c's tables
    assert split["seen"]["configurations"] == len(seen) == 23 and split["held_out"]["configurations"] == 7
    validate(both)


def test_each_part_is_the_whole_run_scorer_applied_to_its_runs(both):
    """The held-out part equals a run of the held-out ops alone: γ means, their intervals (the same
    resamples) and mPC/rPC; the seen part's figures are the scorers' on its runs."""
    alone = _bench([r for r in BOTH if r.split(":")[0] in KINETICS_ONLY])
    part = both["split"]["held_out"]
    video = alone["summary"]["modality"]["video"]
    for g in ("gamma_a", "gamma_r"):
        assert part[f"{g}_mean"] == pytest.approx(video[f"{g}_mean"], abs=1e-12)
        assert part[f"{g}_std"] == pytest.approx(video[f"{g}_std"], abs=1e-12)
        assert part["ci"][g] == pytest.approx(video["ci"][g], abs=1e-12)
    cells = {(r["perturbation"], 2): r["t2v"]["R@1"] for r in alone["runs"]}
    assert part["figures"] == pytest.approx(performance_under_corruption(cells, alone["clean"]["t2v"]["R@1"]))
    seen_runs = [r for r in both["runs"] if r["perturbation"].split(":")[0] not in KINETICS_ONLY]
    expected = summarize(seen_runs)["modality"]["video"]
    assert both["split"]["seen"]["gamma_r_mean"] == pytest.approx(expected["gamma_r_mean"], abs=1e-12)
    assert both["split"]["seen"]["figures"]["mPC"] == pytest.approx(
        np.mean([r["t2v"]["R@1"] for r in seen_runs]), abs=1e-12)


def test_the_headline_gives_each_part(both, capsys):
    seen, held = both["split"]["seen"], both["split"]["held_out"]
    f = lambda x: f"{x:.3f}"  # noqa: E731
    held_line = (f"held-out ops, 7 ops in 7 configurations: γa {f(held['gamma_a_mean'])} "
                 f"[{f(held['ci']['gamma_a'][0])}, {f(held['ci']['gamma_a'][1])}], γr {f(held['gamma_r_mean'])} "
                 f"[{f(held['ci']['gamma_r'][0])}, {f(held['ci']['gamma_r'][1])}]; "
                 f"mPC {f(held['figures']['mPC'])}, rPC {f(held['figures']['rPC'])}")
    seen_line = (f"seen ops (trained with suite:imagenet-c), 19 ops in 23 configurations: "
                 f"γa {f(seen['gamma_a_mean'])} [")
    report = markdown([both])
    assert f"**{held_line}**" in report and f"**{seen_line}" in report
    assert report.index(held_line) < report.index("most damaging configurations")
    assert "### Seen and held-out ops (trained with suite:imagenet-c)" in report
    assert "| held-out | temporal_blur, h265_crf, h265_abr, bit_error, packet_loss, frame_rate, rain | 7 |" in report
    print_summary(both)
    assert held_line in capsys.readouterr().out.replace("\n", "")


def test_no_split_without_trained_with():
    assert "split" not in _bench(["fog"], bootstrap=0)


# ------------------------------------------------------------------------------ the selection


def test_a_transforms_log_names_the_seen_ops(tmp_path):
    from perturb.transforms import RandomPerturbation

    t = RandomPerturbation("fog:kinetics-c,rain,jpeg", severity=(1, 5), p=0.5, seed=0)
    logged = t.params(keys=range(40))
    assert None in logged and {d["op"] for d in logged if d} == {"fog:kinetics-c", "rain", "jpeg"}
    lines = tmp_path / "train.jsonl"
    lines.write_text("\n".join(json.dumps(t.params(keys=[k, k + 1])) for k in range(0, 40, 2)) + "\n")
    listed = tmp_path / "train.json"
    listed.write_text(json.dumps(logged))
    for path in (lines, listed):
        got = trained_with(str(path))
        assert (got.kind, got.given, got.operations) == ("log", str(path), ("jpeg", "fog", "rain"))
    flat = tmp_path / "one.jsonl"
    flat.write_text('{"op": "shot_noise:imagenet-c", "severity": 3, "seed": 1}\nnull\n')
    assert trained_with(str(flat)).operations == ("shot_noise",)


def test_a_log_of_composed_samples_names_every_step(tmp_path):
    from perturb.transforms import RandomPerturbation

    t = RandomPerturbation("rain,jpeg,fog", n=(2, 3), seed=0)
    logged = t.params(keys=range(8))
    assert all(isinstance(steps, list) and len(steps) >= 2 for steps in logged)   # one list of steps per sample
    path = tmp_path / "composed.jsonl"
    path.write_text("\n".join(json.dumps(steps) for steps in logged) + "\n")
    assert trained_with(str(path)).operations == ("jpeg", "fog", "rain")


@pytest.mark.parametrize("given, message", [
    ("fogg", "--trained-with fogg: unknown video perturbation 'fogg'; did you mean 'fog'?"),
    ("suite:nope", "--trained-with suite:nope: unknown suite 'nope'; expected one of: msrvtt-p, imagenet-c, "
                   "imagenet-c-bar, kinetics-c, all"),
    ("missing.jsonl", "--trained-with missing.jsonl: no such transforms log"),
])
def test_a_bad_selection_is_the_selection_parsers_error(given, message):
    with pytest.raises(ValueError) as e:
        trained_with(given)
    assert str(e.value).startswith(message)


def test_a_log_holding_something_else_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"op": "fog", "severity": 1, "seed": 0}, {"severity": 2}]))
    with pytest.raises(ValueError, match=r"^--trained-with .*bad.json: expected draws \{\"op\": \.\.\., "
                                         r"\"severity\": \.\.\., \"seed\": \.\.\.\} or null \(as t.params"):
        trained_with(str(bad))
    bad.write_text(json.dumps([{"op": "blurry", "severity": 1, "seed": 0}]))
    with pytest.raises(ValueError, match=r"bad.json: unknown video perturbation 'blurry'"):
        trained_with(str(bad))


# ------------------------------------------------------------------------------ command line and gate


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_dataset(tmp_path_factory.mktemp("split") / "ds", n=8, frames=6, size=32)


def _cli(dataset: Path, out: Path, video: str, trained: str) -> int:
    return main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out), "--metric", "t2v.R@1",
                 "--video-perturbations", video, "--text-perturbations", "none", "--severities", "2",
                 "--bootstrap", "50", "--no-progress", "--trained-with", trained])


def test_check_gates_on_the_held_out_part_alone(dataset, tmp_path, capsys):
    assert _cli(dataset, tmp_path / "r", "fog,contrast,rain,temporal_blur", "fog,contrast") == 0
    path = tmp_path / "r" / "results.json"
    doc = json.loads(path.read_text())
    held = doc["split"]["held_out"]
    assert held["operations"] == ["temporal_blur", "rain"] and doc["split"]["seen"]["operations"] == ["contrast", "fog"]
    value = held["gamma_r_mean"]
    capsys.readouterr()
    assert main(["check", str(path), "--min", f"held_out.gamma_r={value - 0.01:.4f}"]) == 0
    assert main(["check", str(path), "--min", f"held_out.gamma_r={value + 0.01:.4f}",
                 "--max", f"seen.gamma_a={doc['split']['seen']['gamma_a_mean'] + 0.01:.4f}"]) == 1
    out = capsys.readouterr().out
    assert f"{value:.3f} is not >= {value + 0.01:.4f}".rstrip("0") in out and "1 passed, 1 failed" in out
    assert main(["compare", str(path), str(path), "--metric", "held_out.gamma_r"]) == 0
    out = capsys.readouterr().out
    assert "held_out.gamma_r" in out and "OK 1 checks: 1 passed, 0 failed" in out


def test_report_recomputes_the_parts_figures_with_baseline_errors(dataset, tmp_path, capsys):
    from perturb.bench.scoring.baselines import load_baseline

    assert _cli(dataset, tmp_path / "r", "fog,contrast,rain", "fog,contrast") == 0
    path = tmp_path / "r" / "results.json"
    doc = json.loads(path.read_text())
    assert "mCE" not in doc["split"]["seen"]["figures"]
    assert main(["report", str(path), "--out", str(tmp_path / "rep"), "--baseline-errors", "alexnet"]) == 0
    cells = {(r["perturbation"], r["severity"]): r["t2v"]["R@1"] for r in doc["runs"] if r["perturbation"] != "rain"}
    mce = corruption_errors(cells, doc["clean"]["t2v"]["R@1"], load_baseline("alexnet"))["mCE"]
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "| seen | contrast, fog | 2 |" in report and f"mCE {100 * mce:.1f}%" in report
    assert "| held-out | rain | 1 |" in report


def test_a_split_of_the_wrong_shape_is_refused(both):
    from perturb.errors import GateInputError

    bad = {**both, "split": {**both["split"], "seen": {**both["split"]["seen"], "configurations": "24"}}}
    with pytest.raises(GateInputError, match=r"split\.seen\.configurations"):
        validate(bad)


def test_a_selection_naming_nothing_run_holds_every_op_out(dataset, tmp_path, capsys):
    assert _cli(dataset, tmp_path / "r", "fog,rain", "jpeg") == 0
    err = capsys.readouterr().err
    assert ("perturb bench: warning: --trained-with jpeg names none of the ops run; every op is held out and "
            "the seen part is empty") in err
    path = tmp_path / "r" / "results.json"
    split = json.loads(path.read_text())["split"]
    assert split["seen"] == {"operations": [], "configurations": 0, "gamma_a_mean": None, "gamma_a_std": None,
                             "gamma_r_mean": None, "gamma_r_std": None, "ci": None, "figures": {}}
    assert split["held_out"]["operations"] == ["fog", "rain"]
    assert "seen ops (trained with jpeg): none run; --trained-with jpeg names none of the ops run" in \
        (tmp_path / "r" / "report.md").read_text()
    assert main(["check", str(path), "--min", "seen.gamma_r=0.5"]) == 1
    assert "the seen part is empty: --trained-with jpeg names none of the ops run" in \
        "".join(capsys.readouterr().out.split("│"))


def test_a_bad_selection_exits_2_in_one_line_before_any_work(dataset, tmp_path, capsys):
    assert _cli(dataset, tmp_path / "r", "fog", "fogg") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("perturb bench: error: --trained-with fogg: unknown video perturbation 'fogg'; "
                          "did you mean 'fog'?") and "\n" not in err
    assert not (tmp_path / "r").exists()


def test_a_file_without_the_split_refuses_part_rules(tmp_path, capsys):
    from gate_fixtures import make_results

    path = tmp_path / "old.json"
    path.write_text(json.dumps(make_results(schema="1.3")))
    assert main(["check", str(path), "--min", "held_out.gamma_r=0.5"]) == 2
    assert capsys.readouterr().err.strip() == ("perturb check: error: metric 'held_out.gamma_r': this file holds "
                                               "no seen/held-out split; it comes from perturb bench --trained-with "
                                               "SELECTION")
    assert main(["check", str(path), "--min", "gamma_r=0.5"]) == 0          # older files read as before


# ------------------------------------------------------------------------------ classification


def test_a_classification_run_gets_the_split_with_mce(tmp_path):
    from PIL import Image

    from classify_models import COLOURS, MeanColour
    from perturb.bench.pipeline.data import make_labelled_data
    from perturb.bench.scoring.baselines import load_baseline
    from perturb.dataset.labelled import read_labelled

    root = tmp_path / "imgs"
    for c, colour in enumerate(COLOURS):
        (root / colour).mkdir(parents=True)
        for k in range(4):
            img = np.full((24, 32, 3), 40 + 5 * k, np.uint8)
            img[..., c] = 120 + 10 * k
            Image.fromarray(img).save(root / colour / f"{k}.png")
    options = BenchOptions(task="classify", bootstrap=50, baseline_errors="alexnet", trained_with="noise",
                           settings=Settings(progress=False))
    doc = benchmark(MeanColour(), make_labelled_data(read_labelled(root), "imgs", str(root)), options,
                    video=["gaussian_noise", "shot_noise", "brightness", "contrast"], severities=(1, 2, 3, 4, 5))
    validate(doc)
    split, base, clean = doc["split"], load_baseline("alexnet"), doc["clean"]["top1"]
    assert split["seen"]["operations"] == ["gaussian_noise", "shot_noise"]
    assert split["held_out"]["operations"] == ["brightness", "contrast"]
    for part, ops in (("seen", ("gaussian_noise", "shot_noise")), ("held_out", ("brightness", "contrast"))):
        cells = {(r["perturbation"].split(":")[0], r["severity"]): r["top1"] for r in doc["runs"]
                 if r["perturbation"].split(":")[0] in ops}
        expected = corruption_errors(cells, clean, base)
        assert split[part]["figures"]["mCE"] == pytest.approx(expected["mCE"], abs=1e-12)
        assert split[part]["figures"]["mPC"] == pytest.approx(np.mean(list(cells.values())), abs=1e-12)
        assert split[part]["configurations"] == 10 and set(split[part]["ci"]) == {"gamma_a", "gamma_r"}


def test_imagenet_c_bar_is_held_out_from_a_model_trained_with_imagenet_c(dataset, tmp_path, capsys):
    """The suites' protocol: a run of imagenet-c plus imagenet-c-bar, trained with imagenet-c, reports
    C-bar's ten ops as the held-out part (with mPC/rPC) and gates on it alone."""
    out = tmp_path / "bar"
    assert _cli(dataset, out, "suite:imagenet-c,suite:imagenet-c-bar", "suite:imagenet-c") == 0
    doc = json.loads((out / "results.json").read_text())
    bar = [s.name for s in REGISTRY.resolve("suite:imagenet-c-bar", "video")]
    held, seen = doc["split"]["held_out"], doc["split"]["seen"]
    assert sorted(held["operations"]) == sorted(bar) and held["configurations"] == 10
    assert not set(seen["operations"]) & set(bar) and seen["configurations"] == 19
    cells = {(r["perturbation"], 2): r["t2v"]["R@1"] for r in doc["runs"] if r["perturbation"] in bar}
    assert held["figures"] == pytest.approx(performance_under_corruption(cells, doc["clean"]["t2v"]["R@1"]))
    assert "held-out ops, 10 ops in 10 configurations" in (out / "report.md").read_text()
    assert json.loads((out / "report.json").read_text())["reports"][0]["split"] == doc["split"]
    value = held["gamma_r_mean"]
    capsys.readouterr()
    path = str(out / "results.json")
    assert main(["check", path, "--min", f"held_out.gamma_r={value - 0.01:.4f}"]) == 0
    assert main(["check", path, "--min", f"held_out.gamma_r={value + 0.01:.4f}"]) == 1
