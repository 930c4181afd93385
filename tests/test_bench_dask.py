"""Sharding (perturbation, severity) configurations over a 2-worker Dask LocalCluster."""
from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("distributed")

from perturb.bench.api import benchmark  # noqa: E402
from perturb.bench.options import BenchOptions  # noqa: E402
from bench_fixtures import tiny_data  # noqa: E402
from perturb.bench.pipeline.encoder import Settings  # noqa: E402

MODEL = "callable:perturb.bench.adapters.toy:ToyEncoder"


def test_dask_sharding_gives_the_local_results(tmp_path):
    data = tiny_data(5)
    kw = dict(video=["translate", "jumble"], severities=[1, 3], text=["Typos"], pairs=[("translate", "Typos")])
    options = BenchOptions(bootstrap=100, settings=Settings(progress=False))
    here: dict = {}
    local = benchmark(MODEL, data, options, stats=here, **kw)
    stats: dict = {}
    sharded = benchmark(MODEL, data, replace(options, backend="dask", n_workers=2, cache_dir=str(tmp_path)),
                        stats=stats, **kw)
    assert sharded["runs"] == local["runs"]
    assert sharded["summary"] == local["summary"] and sharded["clean"] == local["clean"]
    assert stats["forward_passes"] == here["forward_passes"] == 7   # texts clean, Typos; 5 video batches: none twice
    assert "provenance" not in local
    assert {r["device"] for r in sharded["provenance"]["replicas"]} == {"cpu"}
