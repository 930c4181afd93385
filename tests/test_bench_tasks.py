"""MC accuracy and entailment ROC-AUC through benchmark(), on a model whose scores are known."""
from __future__ import annotations

import re

import numpy as np
import pytest

from perturb.bench.api import benchmark
from perturb.bench.options import BenchOptions
from perturb.bench.pipeline.data import make_data
from perturb.bench.pipeline.encoder import Settings
from perturb.dataset.items import Item


class Angles:
    """Video i (constant pixel value 10*i) and caption "clip k" sit at angles 10i/40 and 10k/40."""

    id = "angles"

    def encode_videos(self, clips):
        a = np.array([float(np.mean(c)) / 40 for c in clips])
        return np.stack([np.cos(a), np.sin(a)], axis=1)

    def encode_texts(self, texts):
        a = np.array([10 * int(re.search(r"\d+", t).group()) / 40 for t in texts])
        return np.stack([np.cos(a), np.sin(a)], axis=1)


@pytest.fixture()
def data():
    items = [Item(f"item{i}", f"vid{i}", "", (f"clip {i}",), meta={"clip": np.full((2, 4, 4, 3), 10 * i, np.uint8)})
             for i in range(5)]
    return make_data(items, "angles", "memory")


def test_mc_accuracy_and_entailment_auc(data, tmp_path):
    from perturb.contrast.mc import MCRow, write_mc_tsv

    rows = [MCRow("item0", [f"clip {k}" for k in range(5)], 0),              # right
            MCRow("item1", ["clip 3", "clip 1", "clip 0", "clip 4", "clip 2"], 0),   # "clip 1" wins: wrong
            MCRow("vid2", ["clip 0", "clip 1", "clip 2", "clip 3", "clip 4"], 2),    # by video id: right
            MCRow("nowhere", ["a 1", "b 2", "c 3", "d 4", "e 0"], 0)]                # not in the dataset
    mc = write_mc_tsv(rows, tmp_path / "mc.tsv")
    ent = tmp_path / "ent.tsv"
    ent.write_text("video\tcaption\tlabel\ttype\n" + "".join(
        f"item{i}\tclip {i}\t1\t\nitem{i}\tclip {(i + 2) % 5}\t0\tobject\n" for i in range(5)))
    doc = benchmark(Angles(), data,
                    BenchOptions(bootstrap=50, mc=str(mc), entailment=str(ent), settings=Settings(progress=False)),
                    video=[], text=[])
    assert doc["mc"]["accuracy"] == pytest.approx(2 / 3)
    assert doc["mc"]["n"] == 3 and doc["mc"]["missing"] == 1
    assert doc["mc"]["ci"][0] <= 2 / 3 <= doc["mc"]["ci"][1]
    assert doc["entailment"]["roc_auc"] == pytest.approx(1.0)          # every true pair scores cos(0) = 1
    assert doc["entailment"]["n"] == 10
