"""`perturb bench --model hf:...` end to end on the demo data with tiny checkpoints, and --rerank."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from hf_models import BUILDERS  # noqa: E402
from perturb.bench.api import benchmark  # noqa: E402
from perturb.bench.adapters.model_options import ModelOptions  # noqa: E402
from perturb.bench.options import BenchOptions  # noqa: E402
from bench_fixtures import tiny_data  # noqa: E402
from perturb.bench.pipeline.rerank import merge, top_k  # noqa: E402
from perturb.bench.pipeline.encoder import Settings  # noqa: E402
from perturb.cli import main  # noqa: E402

QUICK = ["--subset", "6", "--seed", "0", "--severities", "2", "--video-perturbations", "gaussian_noise",
         "--text-perturbations", "none", "--bootstrap", "0", "--no-progress", "--device", "cpu",
         "--batch-size", "4", "--captions", "first"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from perturb.demo.data import write_dataset
    return write_dataset(tmp_path_factory.mktemp("demo") / "data")


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf-cli")
    return lambda name: BUILDERS[name](root / name) if not (root / name).exists() else root / name


def _bench(demo, out, model, *extra):
    assert main(["bench", "--model", model, "--dataset", str(demo), "--out", str(out), *QUICK, *extra]) == 0
    return json.loads((out / "results.json").read_text())


def test_bench_xclip_end_to_end(demo, ckpt, tmp_path):
    doc = _bench(demo, tmp_path / "x", f"hf:{ckpt('xclip')}")
    assert doc["model"]["id"] == f"hf:{ckpt('xclip')}@local#logits@4f" and doc["model"]["kind"] == "cross"
    assert doc["model"]["card"]["frames"] == 4 and len(doc["runs"]) == 1
    assert "| xclip |" in (tmp_path / "x" / "report.md").read_text()


def test_bench_refuses_a_frame_count_xclip_cannot_take(ckpt):
    with pytest.raises(ValueError, match="exactly 4 frames .*got --frames 8"):
        options = BenchOptions(bootstrap=0, model=ModelOptions(device="cpu", frames=8), settings=Settings(progress=False))
        benchmark(f"hf:{ckpt('xclip')}", tiny_data(2), options)


def test_cli_refuses_a_frame_count_xclip_cannot_take_with_one_line(demo, ckpt, tmp_path, capsys):
    code = main(["bench", "--model", f"hf:{ckpt('xclip')}", "--dataset", str(demo), "--out",
                 str(tmp_path / "x"), *QUICK, "--frames", "8"])
    err = capsys.readouterr().err
    assert code == 2 and "exactly 4 frames" in err and "Traceback" not in err


def test_bench_siglip_end_to_end(demo, ckpt, tmp_path):
    doc = _bench(demo, tmp_path / "s", f"hf:{ckpt('siglip')}", "--frames", "2")
    assert doc["model"]["id"].endswith("#embed@2f") and doc["model"]["card"]["family"] == "siglip"
    assert 0.0 <= doc["clean"]["t2v"]["R@1"] <= 1.0


def test_bench_blip_rerank_over_clip_end_to_end(demo, ckpt, tmp_path, capsys):
    doc = _bench(demo, tmp_path / "r", f"hf:{ckpt('blip')}", "--rerank", "5", "--first-stage",
                 f"hf:{ckpt('clip')}", "--frames", "2")
    # 6 videos x 1 caption: 6 queries x top 5, for clean and for gaussian_noise@2
    assert doc["rerank"]["k"] == 5 and doc["rerank"]["pairs_scored"] == 2 * 6 * 5
    assert doc["rerank"]["first_stage"].endswith("#embed@2f") and "k > 5" in doc["rerank"]["note"]
    assert "60 pairs scored" in capsys.readouterr().out
    assert "Two-stage re-ranking" in (tmp_path / "r" / "report.md").read_text()


def test_bench_qwen2_vl_yes_no_with_mc(demo, ckpt, tmp_path):
    from perturb.contrast.mc import MCRow, write_mc_tsv
    rows = [json.loads(line) for line in demo.read_text().splitlines()]
    vids = sorted({r["video_id"] for r in rows})
    caps = {r["video_id"]: r["caption"] for r in rows}
    mc = write_mc_tsv([MCRow(v, [caps[vids[(i + k) % len(vids)]] for k in range(5)], 0)
                       for i, v in enumerate(vids)], tmp_path / "mc.tsv")
    doc = _bench(demo, tmp_path / "q", f"hf:{ckpt('qwen2_vl')}#yesno", "--frames", "2",
                 "--video-perturbations", "none", "--mc", str(mc))
    assert doc["model"]["id"].endswith("#yesno@2f") and doc["model"]["card"]["mode"] == "yesno"
    assert doc["mc"]["n"] == 6 and doc["mc"]["missing"] == len(vids) - 6      # the subset's 6 videos
    assert doc["mc"]["accuracy"] in {k / 6 for k in range(7)}


def test_rerank_scores_exactly_queries_times_k_and_caches_each_pair(ckpt, tmp_path):
    data = tiny_data(7)                                              # 7 videos, 14 caption queries
    opts = ModelOptions(device="cpu", frames=2, batch_size=4)
    from perturb.bench.adapters.factory import load_model
    blip = load_model(f"hf:{ckpt('blip')}", opts)

    def run(k):
        return benchmark(blip, data, BenchOptions(bootstrap=0, rerank=k, first_stage=f"hf:{ckpt('clip')}", model=opts,
                                                  settings=Settings(progress=False, batch_size=4),
                                                  cache_dir=str(tmp_path)))
    doc = run(3)
    assert blip.items["pairs"] == 14 * 3 == doc["rerank"]["pairs_scored"]
    again = run(3)                                                   # every pair from the cache
    assert again["rerank"]["pairs_scored"] == 0 and blip.items["pairs"] == 14 * 3
    assert again["clean"] == doc["clean"]
    assert run(4)["rerank"]["pairs_scored"] == 14                    # only each query's 4th video is new
    with pytest.raises(ValueError, match="needs --first-stage"):
        benchmark(blip, data, BenchOptions(bootstrap=0, rerank=3, settings=Settings(progress=False)))
    with pytest.raises(ValueError, match="is a dual encoder"):
        benchmark(f"hf:{ckpt('clip')}", data, BenchOptions(bootstrap=0, rerank=3, first_stage=f"hf:{ckpt('clip')}",
                                                           model=opts, settings=Settings(progress=False)))


def test_merge_reorders_only_the_top_k():
    first = np.array([[0.9, 0.8, 0.1, 0.5], [0.2, 0.3, 0.4, 0.1]])
    top = top_k(first, 2)
    assert top.tolist() == [[0, 1], [2, 1]]
    out = merge(first, top, np.array([[-1.0, 2.0], [0.0, 0.0]]))
    order = np.argsort(-out, axis=1, kind="stable")
    assert order.tolist() == [[1, 0, 3, 2], [1, 2, 0, 3]]          # re-scored pairs first, the rest as before


def test_rerank_options_go_together(demo, tmp_path, capsys):
    assert main(["bench", "--model", "toy:8", "--dataset", str(demo), "--out", str(tmp_path), *QUICK,
                 "--rerank", "5"]) == 2
    assert "--rerank K and --first-stage MODEL go together" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["hf", "clip"])
def test_missing_or_configless_folder_is_one_line_exit_2(demo, tmp_path, capsys, kind):
    """No hub lookup of a path, no 'no hf family for architectures=None', no resume hint."""
    (tmp_path / "empty").mkdir()
    cases = {str(tmp_path / "no" / "such" / "dir"): "no such folder",
             str(tmp_path / "empty"): "the folder has no config.json"}
    for folder, said in cases.items():
        assert main(["bench", "--model", f"{kind}:{folder}", "--dataset", str(demo),
                     "--out", str(tmp_path / "o"), *QUICK]) == 2
        err = capsys.readouterr().err.strip()
        assert err == (f"perturb bench: error: {kind}:{folder}: {said}; expected a checkpoint folder "
                       + ("holding config.json, or a hub name ORG/NAME" if said == "no such folder"
                          else "(as written by save_pretrained) or a hub name ORG/NAME"))
        assert "\n" not in err and "resume" not in err


@pytest.mark.parametrize("why", ["HF_HUB_OFFLINE is set", "the hub cannot be reached (no network)"])
def test_a_hub_model_not_in_the_cache_without_network_is_one_line_exit_2(demo, tmp_path, capsys, monkeypatch,
                                                                           why):
    """Issue 27 item 9: no retrying, no resume hint, no transformers argument; nothing written."""
    from perturb.bench.adapters.hf import checkpoint

    if why.startswith("HF_HUB"):
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:                            # online by request, but no route: the probe says so at once
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setattr(checkpoint, "_hub_unreachable", lambda: True)
    name = "perturb-tests/no-such-model-anywhere"
    assert main(["bench", "--model", f"hf:{name}", "--dataset", str(demo), "--out", str(tmp_path / "o"),
                 *QUICK]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"perturb bench: error: hf:{name} is not in the local Hugging Face cache (")
    assert f"and {why}; download it where there is network (huggingface-cli download {name})" in err
    assert "or pass a local folder (hf:FOLDER" in err
    assert "resume" not in err and "local_files_only" not in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()
    from perturb.bench.adapters.factory import load_model
    with pytest.raises(ValueError, match="is not in the local Hugging Face cache"):
        load_model(f"clip:{name}", ModelOptions(device="cpu"))


def test_a_folder_saved_without_its_tokenizer_is_one_line_exit_2(demo, ckpt, tmp_path, capsys):
    """Issue 27 item 10: a CLIPModel saved alone is refused, naming the tokenizer files looked for,
    instead of benchmarking captions that all became unknown tokens."""
    import shutil

    from tiny_models import build_clip
    full = build_clip(tmp_path / "full")
    alone = tmp_path / "alone"
    alone.mkdir()
    for name in ("config.json", "model.safetensors"):        # what model.save_pretrained writes
        shutil.copy(full / name, alone / name)
    capsys.readouterr()
    assert main(["bench", "--model", f"hf:{alone}", "--dataset", str(demo), "--out", str(tmp_path / "o"),
                 *QUICK]) == 2
    err = capsys.readouterr().err
    assert err == (f"perturb bench: error: hf:{alone}: the folder has no tokenizer files (none of tokenizer.json, "
                   "vocab.json, vocab.txt, spiece.model, tokenizer.model, sentencepiece.bpe.model); save the "
                   "tokenizer or processor next to the model (processor.save_pretrained(FOLDER), or "
                   "tokenizer.save_pretrained)\n")
    assert not (tmp_path / "o").exists()
    from perturb.bench.adapters.factory import load_model
    with pytest.raises(ValueError, match="the folder has no tokenizer files"):
        load_model(f"hf:{alone}", ModelOptions(device="cpu"))
    assert load_model(f"hf:{full}", ModelOptions(device="cpu", frames=2)).encode_texts(["a dog"]).shape == (1, 16)


def test_no_progress_in_a_fresh_process_prints_no_warning(demo, ckpt, tmp_path):
    """huggingface_hub first imported under --no-progress reads its variable once; nothing re-enables
    it afterwards, so no 'Cannot enable progress bars' warning ends the run."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-m", "perturb", "bench", "--model", f"hf:{ckpt('clip')}",
                           "--dataset", str(demo), "--out", str(tmp_path / "c"), *QUICK],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_no_progress_draws_no_loading_bars(demo, ckpt, tmp_path, capfd):
    import transformers.utils.logging as hf_logging

    model = f"hf:{ckpt('clip')}"
    capfd.readouterr()                                         # the checkpoint's own writing bars
    assert main(["bench", "--model", model, "--dataset", str(demo), "--out", str(tmp_path / "c"),
                 *QUICK]) == 0
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "%|" not in err
    assert hf_logging.is_progress_bar_enabled()                # restored for the rest of the process
