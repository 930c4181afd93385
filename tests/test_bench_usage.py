"""``perturb bench`` and ``perturb build`` as documented: every ``callable:`` form runs, defaults
select what can run here (and say what they left out), and what cannot run or selects nothing is
refused in one line before any work or file is written.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench_fixtures import write_tiny_dataset
from perturb.cli import main

QUICK = ["--video-perturbations", "none", "--bootstrap", "0", "--no-progress", "--size", "32"]
# A module of every documented callable: form (docs/benchmark.md, "Model adapters").
CALLABLES = '''
import numpy as np
from perturb.bench.adapters.toy import ToyEncoder

MODEL = ToyEncoder(8)                        # an object with the methods


def factory():                               # a zero-argument factory returning one
    return ToyEncoder(8)


def cross(clips, texts):                     # a function (clips, texts) -> scores: a cross-encoder
    return np.array([float(np.asarray(c).mean()) / 255 + len(t) / 100 for c, t in zip(clips, texts)])
'''


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    return write_tiny_dataset(tmp_path / "ds", n=3, frames=4)


def one_error_line(capsys, command: str) -> str:
    out, err = capsys.readouterr()
    assert err.startswith(f"perturb {command}: error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("attr", ["MODEL", "ToyEncoder", "factory", "cross"])
def test_every_documented_callable_form_benches(capsys, dataset, tmp_path, monkeypatch, attr):
    (tmp_path / "mymodels.py").write_text(CALLABLES)
    monkeypatch.syspath_prepend(str(tmp_path))
    target = "perturb.bench.adapters.toy:ToyEncoder" if attr == "ToyEncoder" else f"mymodels:{attr}"
    out = tmp_path / "out"
    code = main(["bench", "--model", f"callable:{target}", "--dataset", str(dataset), "--out", str(out),
                 "--text-perturbations", "DropFirst", "--no-cache", *QUICK])
    assert code == 0, capsys.readouterr().err
    doc = json.loads((out / "results.json").read_text())
    assert [r["perturbation"] for r in doc["runs"]] == ["DropFirst"]
    assert 0 <= doc["clean"]["t2v"]["R@1"] <= 1


def test_a_callable_that_is_no_model_is_refused(capsys, dataset, tmp_path):
    out = tmp_path / "out"
    assert main(["bench", "--model", "callable:os:sep", "--dataset", str(dataset), "--out", str(out), *QUICK]) == 2
    assert "os:sep is not a model" in one_error_line(capsys, "bench")
    assert not out.exists()


# --- empty selections select nothing: refused, `none` is the deliberate form (item 5) ----------

@pytest.mark.parametrize("command", ["bench", "build"])
@pytest.mark.parametrize("option, value", [("--video-perturbations", ""), ("--video-perturbations", ","),
                                           ("--text-perturbations", " , "), ("--severities", "1,,3"),
                                           ("--severities", "")])
def test_an_empty_selection_is_refused(capsys, dataset, tmp_path, command, option, value):
    out = tmp_path / "out"
    head = ["bench", "--model", "toy:8", "--dataset", str(dataset)] if command == "bench" else ["build", str(dataset)]
    assert main([*head, "--out", str(out), "--no-progress", option, value]) == 2
    err = one_error_line(capsys, command)
    assert f"error: {option} " in err and ("has an empty item" in err or "must be levels" in err), err
    assert not out.exists()


def test_none_still_selects_nothing_on_purpose(capsys, dataset, tmp_path):
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(tmp_path / "o"),
                 "--text-perturbations", "none", *QUICK]) == 0
    assert json.loads((tmp_path / "o" / "results.json").read_text())["runs"] == []


# --- a refused option leaves no --out folder (item 6) ------------------------------------------

@pytest.mark.parametrize("rule, message", [("fps:0", "frame sampling must be one of"),
                                           ("fps:abc", "frame sampling must be one of"),
                                           ("bogus", "frame sampling must be one of"),
                                           ("centre", "applies to hf: and clip: models")])
def test_a_refused_frame_sampling_writes_nothing(capsys, dataset, tmp_path, rule, message):
    out = tmp_path / "out"
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out),
                 "--frame-sampling", rule, *QUICK]) == 2
    assert message in one_error_line(capsys, "bench")
    assert not out.exists()


# --- --baseline-errors: 5 numbers per op, one entry per op, not all zero (item 7) ----------------

@pytest.mark.parametrize("text, message", [
    ('{"fog": [0.1, 0.2, 0.3, 0.4]}', "'fog' must map to 5 errors"),
    ('{"fog": [0.1, 0.2, 0.3, 0.4, 0.5], "FOG": [0.5, 0.5, 0.5, 0.5, 0.5]}', "'fog' and 'FOG' both name fog"),
    ('{"fog": [0, 0, 0, 0, 0]}', "'fog' has every error 0"),
])
def test_bad_baseline_errors_are_one_line_before_any_work(capsys, dataset, tmp_path, text, message):
    base, out = tmp_path / "base.json", tmp_path / "out"
    base.write_text(text)
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out),
                 "--baseline-errors", str(base), *QUICK]) == 2
    assert message in one_error_line(capsys, "bench")
    assert not out.exists()


# --- defaults select what can run here; what cannot run and is named is refused (items 2, 3) ----

MODEL_VARIABLES = ("PERTURB_MLM_MODEL", "PERTURB_BACKTRANS_MODELS", "PERTURB_CASUAL_MODEL",
                   "PERTURB_FORMAL_MODEL", "PERTURB_STYLE_MODEL")


@pytest.fixture()
def no_text_models(monkeypatch):
    for var in MODEL_VARIABLES:
        monkeypatch.delenv(var, raising=False)


def test_the_default_text_selection_leaves_out_what_needs_an_unconfigured_model(no_text_models, monkeypatch):
    from perturb.registry import REGISTRY
    from perturb.text.availability import runnable

    kept, left = runnable("all")
    assert [r["perturbation"] for r in left] == ["BackTrans", "MLM", "Casual", "Formal"]
    assert [s.name for s in kept] == [s.name for s in REGISTRY.select("text") if not s.needs_model]
    assert left[1]["enable"].startswith("set PERTURB_MLM_MODEL to a masked language model")
    monkeypatch.setenv("PERTURB_STYLE_MODEL", "/models/style")          # configured: selected again
    assert [r["perturbation"] for r in runnable("all")[1]] == ["BackTrans", "MLM"]
    assert "Casual" in [s.name for s in runnable("TextStyle")[0]]


def test_a_group_selection_runs_what_it_can_and_records_what_it_left_out(capsys, no_text_models, dataset, tmp_path):
    out = tmp_path / "out"
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out),
                 "--text-perturbations", "TextStyle", *QUICK]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "left out" in line]
    assert notes == [notes[0]] and notes[0].startswith("perturb bench: note: left out the text perturbations "
                                                       "Casual, Formal: each needs a model")
    doc = json.loads((out / "results.json").read_text())
    assert [r["perturbation"] for r in doc["runs"]] == ["Negation", "Passive", "Tense"]
    assert [r["perturbation"] for r in doc["left_out"]] == ["Casual", "Formal"] and "skipped" not in doc
    assert "PERTURB_CASUAL_MODEL" in doc["left_out"][0]["enable"]
    assert "left out the text perturbations Casual, Formal" in (out / "report.md").read_text()


@pytest.mark.parametrize("command", ["bench", "build"])
def test_a_named_perturbation_that_cannot_run_is_refused_before_any_work(capsys, no_text_models, dataset,
                                                                         tmp_path, command):
    out = tmp_path / "out"
    head = ["bench", "--model", "toy:8", "--dataset", str(dataset)] if command == "bench" else ["build", str(dataset)]
    assert main([*head, "--out", str(out), "--no-progress", "--video-perturbations", "none",
                 "--text-perturbations", "Typos,mlm"]) == 2
    err = one_error_line(capsys, command)
    assert "--text-perturbations MLM: MLM needs a model and none is configured; set PERTURB_MLM_MODEL" in err
    assert not out.exists()


# --- progress in a log: no cursor movements (item 17) -------------------------------------------

def test_progress_bars_written_to_a_log_hold_no_cursor_movements(capsys):
    from bench_fixtures import tiny_data
    from perturb.bench.adapters.toy import ToyEncoder
    from perturb.bench.api import benchmark
    from perturb.bench.options import BenchOptions
    from perturb.bench.pipeline.encoder import Settings

    doc = benchmark(ToyEncoder(8), tiny_data(4),
                    BenchOptions(bootstrap=0, settings=Settings(seed=0, batch_size=2, progress=True)),
                    video=["gaussian_noise"], text=["DropFirst"], severities=(1,))
    err = capsys.readouterr().err                       # captured: stderr is not a terminal
    assert len(doc["runs"]) == 2 and "configs" in err
    assert "\x1b" not in err, repr(err)


# --- --per-frame for build and bench (item 20) ----------------------------------------------------

def test_bench_per_frame_redraws_the_weather_layer_every_frame_and_records_it(capsys, dataset, tmp_path):
    from perturb import video
    from perturb.bench.pipeline.sources import OnTheFly
    from perturb.dataset import read_dataset

    item = read_dataset(dataset)[0]
    fly, plain = OnTheFly(seed=0, per_frame=True), OnTheFly(seed=0)
    seed = fly.seed_of(item, "fog", 2)
    clean = plain.decode(item)
    assert np.array_equal(fly.clip(item, "fog", 2), video.apply(clean, "fog", 2, seed=seed, per_frame=True))
    assert not np.array_equal(fly.clip(item, "fog", 2), plain.clip(item, "fog", 2))
    assert np.array_equal(fly.clip(item, "jpeg", 2), plain.clip(item, "jpeg", 2))      # takes no per_frame
    assert fly.settings != plain.settings                                          # cached apart
    out = tmp_path / "out"
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out), "--per-frame",
                 "--video-perturbations", "fog,jpeg", "--severities", "2", "--text-perturbations", "none",
                 "--bootstrap", "0", "--no-progress"]) == 0
    assert json.loads((out / "results.json").read_text())["decode"]["per_frame"] is True


def test_build_per_frame_renders_and_records_it(capsys, dataset, tmp_path):
    from perturb import video
    from perturb.dataset import read_dataset
    from perturb.rng import item_seed
    from perturb.video.io import read

    out = tmp_path / "built"
    argv = ["build", str(dataset), "--out", str(out), "--video-perturbations", "snow", "--severities", "1",
            "--text-perturbations", "none", "--jobs", "1", "--no-progress"]
    assert main([*argv, "--per-frame"]) == 0
    info = json.loads((out / "dataset.json").read_text())
    assert info["per_frame"] is True and info["video_perturbations"][0]["params"]["1"]["per_frame"] is True
    rows = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert rows and all(r["params"]["per_frame"] is True for r in rows)       # every output says so
    item = read_dataset(dataset)[0]
    made = read(out / "videos" / "snow" / "1" / f"{item.item_id}.mkv")[0]
    clean = read(item.video_path)[0]
    assert np.array_equal(made, video.apply(clean, "snow", 1, seed=item_seed(0, item.item_id, "snow", 1),
                                            per_frame=True))
    capsys.readouterr()
    assert main(argv) == 2                                     # resuming without it: another build
    assert "was built with other settings (per_frame=True" in one_error_line(capsys, "build")


@pytest.mark.parametrize("command", ["bench", "build"])
def test_per_frame_is_refused_where_no_selected_op_takes_it(capsys, dataset, tmp_path, command):
    out = tmp_path / "out"
    head = ["bench", "--model", "toy:8", "--dataset", str(dataset)] if command == "bench" else ["build", str(dataset)]
    assert main([*head, "--out", str(out), "--per-frame", "--video-perturbations", "jpeg,gaussian_noise",
                 "--text-perturbations", "none", "--no-progress"]) == 2
    err = one_error_line(capsys, command)
    takers = ("blue_noise_sample, brownish_noise, caustic_refraction, checkerboard_cutout, cocentric_sine_waves, fog, "
              "frost, inverse_sparkles, perlin_noise, plasma_noise, rain, single_frequency_greyscale, snow, sparkles, "
              "spatter")
    assert f"--per-frame applies to {takers}; none of them is selected" in err
    assert not out.exists()


def test_bench_built_per_frame_is_refused(capsys, dataset, tmp_path):
    built = tmp_path / "built"
    assert main(["build", str(dataset), "--out", str(built), "--video-perturbations", "none",
                 "--text-perturbations", "DropFirst", "--jobs", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["bench", "--model", "toy:8", "--built", str(built), "--out", str(tmp_path / "o"),
                 "--per-frame", "--video-perturbations", "fog"]) == 2
    assert "--per-frame renders on the fly; --built benches the clips as built" in one_error_line(capsys, "bench")
