"""Every fact of a run is established once: the pairs parsed, the baseline read, the engine chosen,
the source fitted to the model and the replicas' context built, each counted over one run."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench_fixtures import tiny_data, write_tiny_dataset
from perturb.bench import api, cli
from perturb.bench.adapters import ModelOptions
from perturb.bench.distributed import dry_run, placement, replica_tasks
from perturb.bench.options import BenchOptions
from perturb.bench.pipeline.encoder import Settings
from perturb.bench.pipeline.sources import OnTheFly
from perturb.bench.scoring import baselines
from perturb.cli import main


def counting(calls: Counter, name: str, fn):
    def counted(*args, **kwargs):
        calls[name] += 1
        return fn(*args, **kwargs)
    return counted


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_dataset(tmp_path_factory.mktemp("once") / "ds", n=3, frames=6, size=32)


def test_one_bench_run_parses_its_pairs_reads_its_baseline_and_chooses_its_engine_once(
        dataset, tmp_path, monkeypatch):
    calls: Counter = Counter()
    monkeypatch.setattr(cli, "_pairs", counting(calls, "pairs", cli._pairs))
    baseline = counting(calls, "baseline", baselines.load_baseline)
    monkeypatch.setattr(baselines, "load_baseline", baseline)
    monkeypatch.setattr(api, "load_baseline", baseline, raising=False)       # where a module holds its own name
    engine = counting(calls, "engine", placement.default_engine)
    for module in (placement, dry_run, api):
        monkeypatch.setattr(module, "default_engine", engine, raising=False)
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"jpeg_compression": [0.5] * 5}))
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(tmp_path / "out"),
                 "--video-perturbations", "translate", "--severities", "1", "--text-perturbations", "none",
                 "--pairs", "translate@Typos", "--baseline-errors", str(base), "--bootstrap", "0",
                 "--no-progress"]) == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [r["perturbation"] for r in doc["runs"]] == ["translate", "translate+Typos"]
    assert calls == {"pairs": 1, "baseline": 1, "engine": 1}


def test_a_run_on_replicas_fits_its_source_and_builds_its_context_once(monkeypatch):
    calls: Counter = Counter()
    monkeypatch.setattr(OnTheFly, "fit_to", counting(calls, "fit_to", OnTheFly.fit_to))
    monkeypatch.setattr(replica_tasks.WorkerContext, "__init__",
                        counting(calls, "context", replica_tasks.WorkerContext.__init__))
    source = OnTheFly(seed=0, size="model")
    options = BenchOptions(bootstrap=0, source=source, settings=Settings(progress=False, batch_size=2),
                           backend="loky", n_workers=1, model=ModelOptions(device="cpu"))
    doc = api.benchmark("callable:perturb.bench.adapters.toy:ToyEncoder", tiny_data(3), options,
                        video=["translate"], severities=[1])
    assert doc["provenance"]["engine"] == "loky" and doc["decode"]["short_side"] is None   # fitted: native size
    assert calls == {"fit_to": 1, "context": 1}


def test_a_wrong_options_object_is_one_line_naming_the_class_expected():
    from perturb.bench.adapters.factory import load_model
    from perturb.testing import assert_robust

    with pytest.raises(TypeError, match=r"^benchmark takes its options as a perturb\.bench\.options\.BenchOptions; "
                                        r"got dict; build it as BenchOptions\(\*\*mapping\)$"):
        api.benchmark("toy:8", tiny_data(2), {"bootstrap": 0})
    with pytest.raises(TypeError, match=r"^load_model takes its options as a "
                                        r"perturb\.bench\.adapters\.model_options\.ModelOptions; got BenchOptions$"):
        load_model("toy:8", BenchOptions())
    with pytest.raises(TypeError, match=r"^BenchOptions\(model=\.\.\.\) takes its options as a .*ModelOptions; got dict"):
        BenchOptions(model={"device": "cpu"})
    with pytest.raises(TypeError, match=r"^assert_robust takes its options as a perturb\.testing\.robust\.RobustOptions"):
        assert_robust("toy:8", tiny_data(2), {"subset": 2}, perturbations=["translate"], min_gamma_r=0.5)
