"""One model replica per GPU on loky, Dask and Ray, tested on CPUs: GPUs are declared (a patched
device count, Dask workers with a ``GPU`` resource, Ray's logical GPUs) and the ``callable:`` model
records the device it was built for and the CUDA_VISIBLE_DEVICES it saw, without touching CUDA."""
from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from bench_fixtures import tiny_data, write_tiny_dataset
from perturb.bench.distributed import placement
from perturb.bench.api import benchmark
from perturb.bench.adapters.model_options import ModelOptions
from perturb.bench.options import BenchOptions
from perturb.bench.distributed.replicas import planned_replicas
from perturb.cli import main
from perturb.bench.reporting.report import model_tables
from perturb.bench.pipeline.encoder import Settings
from replica_models import KILL_ENV, LOG_ENV, builds

MODEL = "callable:replica_models:Recorder"
KW = dict(video=["translate"], severities=[2], text=["Typos"])
QUIET = BenchOptions(bootstrap=0, settings=Settings(progress=False, batch_size=2))


@pytest.fixture(scope="module")
def reference():
    """The single-process run every sharded run must equal."""
    return benchmark(MODEL, tiny_data(4), QUIET, **KW)


@pytest.fixture
def log(tmp_path, monkeypatch):
    folder = tmp_path / "builds"
    folder.mkdir()
    monkeypatch.setenv(LOG_ENV, str(folder))
    return folder


def _gpus(monkeypatch, n: int, visible: str | None = None) -> None:
    monkeypatch.setattr(placement, "device_count", lambda: n)
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)


def _same(doc, reference) -> None:
    assert doc["runs"] == reference["runs"] and doc["clean"] == reference["clean"]
    assert doc["summary"] == reference["summary"]


def _one_replica_per_gpu(doc, log, n: int) -> list[dict]:
    """n replicas on distinct GPUs, none on the driver, each model built once, for its own GPU."""
    ran = doc["provenance"]["replicas"]
    made = builds(log)
    assert len(ran) == n and len({(r["host"], r["device"]) for r in ran}) == n
    assert all(r["device"].startswith("cuda:") for r in ran)
    assert len(made) == n and len({b["pid"] for b in made}) == n         # once per replica
    assert os.getpid() not in {b["pid"] for b in made}                   # none on the driver
    assert {b["device"] for b in made} == {"cuda:0"}                     # its only visible GPU
    assert sorted(b["visible"] for b in made) == sorted(r["device"][5:] for r in ran)
    shards = doc["provenance"]["shards"]
    assert [s["shard"] for s in shards][:3] == ["model", "texts clean", "texts Typos"]
    assert sorted(s["shard"] for s in shards[3:]) == [f"videos {k}-{k}" for k in range(4)]
    return made


@pytest.mark.parametrize("n", [1, 2, 4])
def test_loky_pins_one_replica_per_gpu_and_gives_the_single_process_results(n, monkeypatch, log, reference):
    _gpus(monkeypatch, n)
    planned = planned_replicas("loky", None, None, "cuda", None)
    assert [(r.device, r.pin) for r in planned] == [(f"cuda:{i}", str(i)) for i in range(n)]
    doc = benchmark(MODEL, tiny_data(4), replace(QUIET, backend="loky", model=ModelOptions(device="cuda")), **KW)
    _same(doc, reference)
    _one_replica_per_gpu(doc, log, n)
    assert model_tables(doc)[0] == ("Model", ["id", "replicas"], [[MODEL, f"{n} (loky)"]])


@pytest.mark.parametrize("n, device", [(2, "cuda"), (4, "auto")])
def test_without_a_backend_several_gpus_get_one_local_replica_each(n, device, monkeypatch, log, reference):
    _gpus(monkeypatch, n)
    doc = benchmark(MODEL, tiny_data(4), replace(QUIET, model=ModelOptions(device=device)), **KW)
    _same(doc, reference)
    assert doc["provenance"]["engine"] == "loky"
    _one_replica_per_gpu(doc, log, n)


def test_without_a_backend_one_gpu_or_one_asked_for_stays_in_this_process(monkeypatch, log, reference):
    _gpus(monkeypatch, 1)
    doc = benchmark(MODEL, tiny_data(4), replace(QUIET, model=ModelOptions(device="cuda")), **KW)
    _same(doc, reference)
    assert "provenance" not in doc
    assert [(b["pid"], b["device"]) for b in builds(log)] == [(os.getpid(), "cuda")]     # built here, once
    _gpus(monkeypatch, 4, visible="3")                   # CUDA_VISIBLE_DEVICES leaves one of four
    assert placement.default_engine("hf", "cuda", None) == (
        None, "1 GPU(s) usable here (CUDA_VISIBLE_DEVICES / torch): this process")
    _gpus(monkeypatch, 4)
    assert placement.default_engine("clip", "auto", 2)[0] == "loky"
    assert placement.default_engine("callable", "cuda", None)[1].startswith(
        "no --backend, --device cuda and 4 GPUs usable here (CUDA_VISIBLE_DEVICES / torch): 4 local loky "
        "replicas, one per GPU")
    in_process = [(("hf", "cuda:1", None), {}, "--device cuda:1: this process"),
                  (("hf", "cpu", None), {}, "--device cpu: this process"),
                  (("hf", "auto", 1), {}, "--jobs 1: this process"),
                  (("precomputed", "cuda", None), {}, "a precomputed: model is not placed on --device: this process"),
                  (("hf", "cuda", None), {"device_map": "auto"},
                   "--device-map auto spreads one model over the GPUs: this process"),
                  (("hf", "cuda", None), {"rerank": True}, "--rerank runs in this process")]
    for args, kw, why in in_process:
        assert placement.default_engine(*args, **kw) == (None, why)
    _gpus(monkeypatch, 0)
    assert placement.default_engine("hf", "auto", None) == (
        None, "0 GPU(s) usable here (CUDA_VISIBLE_DEVICES / torch): this process")


def test_loky_cuda_n_selects_that_gpu_and_refuses_one_it_lacks(monkeypatch):
    _gpus(monkeypatch, 2, visible="5,7")
    assert [(r.device, r.pin) for r in planned_replicas("loky", None, None, "cuda:1", None)] == [("cuda:7", "7")]
    assert [r.device for r in planned_replicas("loky", None, None, "cpu", "cuda")] == ["cuda:5", "cuda:7"]
    assert [r.device for r in planned_replicas("loky", None, None, "cpu", None)] == ["cpu", "cpu"]
    with pytest.raises(ValueError, match=r"cuda:2: this machine shows 2 GPU\(s\)"):
        planned_replicas("loky", None, None, "cuda:2", None)
    with pytest.raises(ValueError, match="--backend ray cannot pick cuda:1: each ray replica serves the GPU"):
        planned_replicas("ray", None, None, "cuda:1", None)
    _gpus(monkeypatch, 0)
    assert [r.device for r in planned_replicas("loky", None, 3, "auto", None)] == ["cpu"] * 3
    with pytest.raises(ValueError, match="shows no GPU"):
        planned_replicas("loky", None, None, "cuda", None)


def test_dry_run_prints_the_plan_and_loads_nothing(tmp_path, monkeypatch, log, capsys):
    from perturb.bench.pipeline.sources import OnTheFly

    def no_decoding(*_a, **_k):
        raise AssertionError("a dry run decodes nothing")

    monkeypatch.setattr(OnTheFly, "clean", no_decoding)
    monkeypatch.setattr(OnTheFly, "clip", no_decoding)
    _gpus(monkeypatch, 2)
    captions = write_tiny_dataset(tmp_path / "data", n=4)
    out = tmp_path / "out"
    args = ["bench", "--model", MODEL, "--dataset", str(captions), "--out", str(out), "--video-perturbations",
            "translate", "--severities", "2", "--text-perturbations", "Typos", "--batch-size", "2",
            "--backend", "loky", "--device", "cuda", "--dry-run"]
    assert main(args + ["--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["engine"] == "loky" and plan["driver_model"] is None and plan["texts"] == "replicas"
    assert [(r["device"], r["shards"]) for r in plan["replicas"]] == [("cuda:0", 4), ("cuda:1", 3)]
    assert plan["shards"] == 7 and plan["items"] == 4 and plan["configurations"] == 2  # model, 2 caption sets, 4 videos
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "replica 1: cuda:1 on" in text and "the driver holds no model" in text
    assert builds(log) == [] and not out.exists()
    assert main(args[:-5] + ["--backend", "dask", "--device", "cuda:1", "--dry-run"]) == 2
    assert capsys.readouterr().err.strip().endswith("--backend dask cannot pick cuda:1: each dask replica "
                                                    "serves the GPU its worker owns; pass --device cuda to "
                                                    "use every GPU")


@pytest.mark.parametrize("model, kinds", [
    (MODEL, "1 model description, 2 caption set(s), 1 video shard(s)"),
    ("callable:replica_models:score", "1 model description, 3 configuration(s), clean included")],
    ids=["dual", "cross"])
def test_the_dry_run_counts_every_shard_the_run_records(model, kinds, tmp_path, capsys):
    captions = write_tiny_dataset(tmp_path / "data", n=4)
    args = ["bench", "--model", model, "--dataset", str(captions), "--out", str(tmp_path / "out"),
            "--video-perturbations", "translate", "--severities", "2", "--text-perturbations", "Typos",
            "--bootstrap", "0", "--no-progress", "--backend", "loky", "--device", "cpu", "--jobs", "1"]
    assert main(args + ["--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert main(args) == 0, capsys.readouterr().err
    ran = json.loads((tmp_path / "out" / "results.json").read_text())["provenance"]["shards"]
    assert (plan["shards"], plan["shard_kind"]) == (len(ran), f"shards ({kinds})")
    assert ran[0]["shard"] == "model" and [r["shards"] for r in plan["replicas"]] == [len(ran)]


def test_dry_run_without_a_backend_plans_local_replicas_on_several_gpus_and_says_why(tmp_path, monkeypatch,
                                                                                      log, capsys):
    _gpus(monkeypatch, 2)
    captions = write_tiny_dataset(tmp_path / "data", n=4)
    args = ["bench", "--model", MODEL, "--dataset", str(captions), "--out", str(tmp_path / "out"),
            "--video-perturbations", "translate", "--severities", "2", "--text-perturbations", "Typos",
            "--batch-size", "2", "--dry-run"]
    assert main(args + ["--json"]) == 0                   # --device auto (the default)
    plan = json.loads(capsys.readouterr().out)
    assert plan["engine"] == "loky" and plan["driver_model"] is None
    assert [r["device"] for r in plan["replicas"]] == ["cuda:0", "cuda:1"]
    assert plan["reason"].startswith("no --backend, --device auto and 2 GPUs usable here")
    assert main(args + ["--device", "cuda"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("engine: loky; 2 replica(s)")
    assert lines[2].startswith("why: no --backend, --device cuda and 2 GPUs usable here (CUDA_VISIBLE_DEVICES"
                               " / torch): 2 local loky replicas, one per GPU")
    _gpus(monkeypatch, 2, visible="1")
    assert main(args + ["--device", "cuda", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["engine"], plan["driver_model"], [r["device"] for r in plan["replicas"]]) == (
        "in-process", "cuda", ["cuda"])
    assert plan["reason"] == "1 GPU(s) usable here (CUDA_VISIBLE_DEVICES / torch): this process"
    assert builds(log) == []


def test_dask_runs_one_replica_per_gpu_worker(monkeypatch, log, reference):
    pytest.importorskip("distributed")
    _gpus(monkeypatch, 2)                  # a local cluster: one worker per GPU, GPU=1 each, pinned
    assert [r.device for r in planned_replicas("dask", None, None, "auto", None)] == ["cuda:0", "cuda:1"]
    doc = benchmark(MODEL, tiny_data(4), replace(QUIET, backend="dask", model=ModelOptions(device="auto")), **KW)
    _same(doc, reference)
    _one_replica_per_gpu(doc, log, 2)


def test_dask_gpu_workers_of_a_scheduler_are_the_replicas_and_a_killed_one_is_redone(tmp_path, monkeypatch, log,
                                                                                     reference):
    pytest.importorskip("distributed")
    from distributed import Client

    from perturb.bench.distributed.placement import Replica
    from perturb.bench.distributed.replicas import _dask_gpu_cluster

    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_ENV, str(marker))       # the workers' model: the first to embed videos dies
    cluster = _dask_gpu_cluster([Replica("a", "cuda:0", "h", "0"), Replica("b", "cuda:1", "h", "1")])
    try:
        Client(cluster).wait_for_workers(2)
        address = cluster.scheduler_address
        planned = planned_replicas("dask", address, None, "cuda", None)
        assert sorted((r.name, r.device) for r in planned) == [("a", "cuda:0"), ("b", "cuda:1")]
        doc = benchmark(MODEL, tiny_data(4), replace(QUIET, backend="dask", scheduler=address,
                                                     model=ModelOptions(device="cuda")), **KW)
    finally:
        cluster.close()
    _same(doc, reference)
    killed = int(marker.read_text())
    made = builds(log)
    assert killed in {b["pid"] for b in made} and len(made) in (2, 3)   # its restarted worker may get work
    assert sorted(s["shard"] for s in doc["provenance"]["shards"][3:]) == [f"videos {k}-{k}" for k in range(4)]



@pytest.fixture(scope="module")
def ray_gpus(tmp_path_factory):
    """A local Ray instance declaring 4 logical GPUs on 2 CPUs; its workers read the build log and
    the kill marker (created: disarmed) named here, as their environment was when Ray started."""
    ray = pytest.importorskip("ray")
    root = tmp_path_factory.mktemp("ray")
    env = {LOG_ENV: str(root / "builds"), KILL_ENV: str(root / "killed"),
           "PYTHONPATH": os.pathsep.join(p for p in (os.path.dirname(os.path.abspath(__file__)),
                                                      os.environ.get("PYTHONPATH")) if p)}
    (root / "builds").mkdir()
    (root / "killed").write_text("")
    before = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    ray.init(num_gpus=4, num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield root
    finally:
        ray.shutdown()
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _fresh_log(root):
    for p in (root / "builds").glob("*.json"):
        p.unlink()
    return root / "builds"


def test_ray_runs_one_actor_per_gpu(ray_gpus, reference):
    log = _fresh_log(ray_gpus)
    planned = planned_replicas("ray", None, None, "cuda", None)
    assert [r.device for r in planned] == [f"cuda:{g}" for g in range(4)]
    doc = benchmark(MODEL, tiny_data(4), replace(QUIET, backend="ray", model=ModelOptions(device="cuda")), **KW)
    _same(doc, reference)
    _one_replica_per_gpu(doc, log, 4)
    assert len(planned_replicas("ray", None, 2, "cuda", None)) == 2          # --jobs caps the replicas


def test_ray_redoes_the_shard_of_a_killed_actor(ray_gpus, reference):
    log = _fresh_log(ray_gpus)
    marker = ray_gpus / "killed"
    marker.unlink()                                  # armed: the first actor to embed videos dies
    options = replace(QUIET, backend="ray", n_workers=2, model=ModelOptions(device="cuda"))
    doc = benchmark(MODEL, tiny_data(4), options, **KW)
    _same(doc, reference)
    made = builds(log)
    assert int(marker.read_text()) in {b["pid"] for b in made} and len(made) == 3   # restarted once
    assert sorted(s["shard"] for s in doc["provenance"]["shards"][3:]) == [f"videos {k}-{k}" for k in range(4)]


def test_a_cross_encoder_ranks_every_configuration_on_a_replica():
    model = "callable:replica_models:score"
    kw = dict(KW, video=["translate"], severities=[2], text=["Typos"], pairs=[("translate", "Typos")])
    here = benchmark(model, tiny_data(3), QUIET, **kw)
    doc = benchmark(model, tiny_data(3), replace(QUIET, backend="loky", n_workers=1), **kw)
    _same(doc, here)
    assert [s["shard"] for s in doc["provenance"]["shards"]] == [
        "model", "clean:clean", "video:translate@2", "text:Typos", "both:translate+Typos@2"]
    assert doc["provenance"]["replicas"][0]["device"] == "cpu"


def test_gpu_shards_are_small_enough_for_every_gpu():
    from perturb.bench.distributed.placement import shards

    assert shards(10, 32, 2, gpus=True) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]    # below a batch: not rounded
    assert [len(s) for s in shards(1000, 32, 2, gpus=True)] == [128] * 7 + [104]       # else whole batches
    assert shards(10, 32, 2) == [list(range(10))]                                      # CPUs: as before


def test_a_slow_replica_takes_fewer_shards():
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from perturb.bench.distributed.replicas import IN_FLIGHT, _first_done, _pull

    n = 12
    fast_done, release = [0], threading.Event()

    def slow(t):
        assert release.wait(20)
        return 0, t

    def fast(t):
        fast_done[0] += 1
        if fast_done[0] == n - IN_FLIGHT:            # the fast replica did all the rest meanwhile
            release.set()
        return 1, t

    with ThreadPoolExecutor(1) as a, ThreadPoolExecutor(1) as b:
        got = list(_pull([lambda t: a.submit(slow, t), lambda t: b.submit(fast, t)], _first_done,
                         lambda f: f.result(), range(n)))
    assert sorted(t for _, t in got) == list(range(n))
    assert sum(r == 0 for r, _ in got) == IN_FLIGHT                   # only what it held from the start


def test_an_hf_model_is_described_by_its_replica(tmp_path):
    pytest.importorskip("transformers")
    from tiny_models import build_clip

    spec = f"clip:{build_clip(tmp_path / 'clip')}"
    options = replace(QUIET, model=ModelOptions(device="cpu", frames=4))
    here = benchmark(spec, tiny_data(3), options, **KW)
    doc = benchmark(spec, tiny_data(3), replace(options, backend="loky", n_workers=1), **KW)
    _same(doc, here)
    assert doc["model"] == here["model"] and doc["model"]["card"]["frames"] == 4      # id, card: from the replica
    assert model_tables(doc)[0][1][-1] == "replicas" and model_tables(doc)[0][2][0][-1] == "1 (loky)"
