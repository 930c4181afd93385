"""``perturb bench`` and ``perturb build`` as documented: every ``callable:`` form runs, defaults
select what can run here (and say what they left out), and what cannot run or selects nothing is
refused in one line before any work or file is written.
"""
from __future__ import annotations

import json
from pathlib import Path

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
