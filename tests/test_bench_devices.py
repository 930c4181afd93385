"""Every device option (``--device``, ``--perturb-device``, ``cuda:N``) is checked before any work
against the GPUs where the work runs, the same way in the dry run, the real run, on every engine and
through ``benchmark()``; ``--gpus N`` previews a plan for N GPUs from a machine without any. GPUs are
declared by patching the one probe (``placement.device_count``); nothing here touches CUDA."""
from __future__ import annotations

import json
import re

import pytest

from bench_fixtures import tiny_data, write_tiny_dataset
from perturb.bench.distributed import placement
from perturb.bench.api import benchmark
from perturb.bench.adapters.model_options import ModelOptions
from perturb.bench.options import BenchOptions
from perturb.bench.pipeline.encoder import Settings
from perturb.cli import main
from replica_models import LOG_ENV, builds

MODEL = "callable:replica_models:Recorder"
SELECT = ["--video-perturbations", "translate", "--severities", "2", "--text-perturbations", "Typos",
          "--batch-size", "2", "--bootstrap", "0", "--no-progress"]
NO_GPU = "this machine shows no GPU (CUDA_VISIBLE_DEVICES / torch)"
PREVIEW = "or preview the plan for N GPUs from this machine with --dry-run --gpus N"


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A machine whose GPU count tests set (``machine(n, visible)``); its model builds are logged and
    decoding fails, so a test can see that a refused command did no work."""
    from perturb.bench.pipeline.sources import OnTheFly

    def no_decoding(*_a, **_k):
        raise AssertionError("a refused command decodes nothing")

    log = tmp_path / "builds"
    log.mkdir()
    monkeypatch.setenv(LOG_ENV, str(log))
    monkeypatch.setattr(OnTheFly, "clean", no_decoding)
    monkeypatch.setattr(OnTheFly, "clip", no_decoding)

    def gpus(n: int, visible: str | None = None) -> None:
        monkeypatch.setattr(placement, "device_count", lambda: n)
        if visible is None:
            monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        else:
            monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    yield gpus
    assert builds(log) == []                                      # no model was built, here or elsewhere


@pytest.fixture
def bench(tmp_path, capsys):
    """``perturb bench`` on a tiny dataset with these options: (exit status, stdout, stderr)."""
    captions = write_tiny_dataset(tmp_path / "data", n=4)
    out = tmp_path / "out"

    def run(*options: str) -> tuple[int, str, str]:
        code = main(["bench", "--model", MODEL, "--dataset", str(captions), "--out", str(out), *SELECT, *options])
        printed = capsys.readouterr()
        if code == 2:
            assert not out.exists()                               # a refused run leaves no --out behind
        return code, printed.out, printed.err
    return run


def refusal(result: tuple[int, str, str]) -> str:
    """The one line of a command refused with exit status 2."""
    code, _, err = result
    assert code == 2 and err.startswith("perturb bench: error: ") and err.count("\n") == 1, err
    return err[len("perturb bench: error: "):].rstrip("\n")


DRY = [["--dry-run"], []]


@pytest.mark.parametrize("dry", DRY, ids=["dry-run", "run"])
@pytest.mark.parametrize("visible, counted", [(None, "CUDA_VISIBLE_DEVICES / torch"),
                                              ("0,1,2,3", "CUDA_VISIBLE_DEVICES names 4, but torch counts 0 here")])
def test_cuda_on_a_machine_without_a_gpu_is_one_line_before_any_work(machine, bench, visible, counted, dry):
    machine(0, visible)
    assert refusal(bench("--device", "cuda", *dry)) == (
        f"--device cuda asks for CUDA, but this machine shows no GPU ({counted}); pass --device cpu, {PREVIEW}")


def test_the_api_refuses_cuda_without_a_gpu_before_building_the_model(machine):
    machine(0)
    with pytest.raises(ValueError, match=re.escape(f"--device cuda asks for CUDA, but {NO_GPU}; pass --device cpu")):
        benchmark(MODEL, tiny_data(2),
                  BenchOptions(bootstrap=0, settings=Settings(progress=False), model=ModelOptions(device="cuda")),
                  video=["translate"], severities=[2])


def test_gpus_n_previews_a_plan_from_a_machine_without_any(machine, bench, monkeypatch):
    from perturb.bench.distributed import replicas

    def no_cluster(*_a, **_k):
        raise AssertionError("a preview asks no cluster")

    machine(0)
    monkeypatch.setattr(replicas, "start_ray", no_cluster)
    monkeypatch.setattr(replicas, "connect_dask", no_cluster)
    code, out, _ = bench("--device", "cuda", "--gpus", "4", "--dry-run", "--json")
    plan = json.loads(out)
    assert code == 0 and plan["engine"] == "loky" and plan["driver_model"] is None
    assert [r["device"] for r in plan["replicas"]] == ["cuda:0", "cuda:1", "cuda:2", "cuda:3"]
    assert plan["reason"] == ("no --backend, --device cuda and 4 GPUs usable on the previewed machine (--gpus 4): "
                              "4 local loky replicas, one per GPU (--device cuda:0 keeps one GPU in this process)")
    assert plan["notes"] == ["a preview for --gpus 4: no GPU was counted and no cluster asked"]
    for engine, scheduler in (("ray", "10.9.8.7:6379"), ("dask", "tcp://10.9.8.7:8786")):
        code, out, _ = bench("--backend", engine, "--scheduler", scheduler, "--gpus", "2", "--dry-run", "--json")
        plan = json.loads(out)
        assert (code, plan["engine"], plan["scheduler"]) == (0, engine, scheduler)
        assert [(r["device"], r["host"]) for r in plan["replicas"]] == [("cuda:0", "any node"), ("cuda:1", "any node")]
    assert refusal(bench("--device", "cuda:3", "--gpus", "2", "--dry-run")) == (
        "--device cuda:3: the previewed machine shows 2 GPU(s) (--gpus 2); expected cuda:0 .. cuda:1")
    assert refusal(bench("--gpus", "4")) == ("--gpus 4 previews the plan for that many GPUs: it goes with --dry-run "
                                             "(a run uses the GPUs it finds; --jobs N caps them)")


PERTURB_CUDA = (f"--perturb-device cuda asks for CUDA, but {NO_GPU}; pass --perturb-device cpu, {PREVIEW}")


@pytest.mark.parametrize("dry", DRY, ids=["dry-run", "run"])
@pytest.mark.parametrize("options, message", [
    (["--perturb-device", "tpu"], "--perturb-device must be cpu or cuda[:N] (torch there), or left out (numpy on "
                                  "the CPU); got 'tpu'"),
    (["--perturb-device", "cuda"], PERTURB_CUDA),
    (["--backend", "loky", "--perturb-device", "cuda", "--device", "cpu"], PERTURB_CUDA),
    (["--backend", "dask", "--perturb-device", "cuda:0"], "--backend dask cannot pick cuda:0: each dask replica "
                                                          "serves the GPU its worker owns; pass --device cuda to use "
                                                          "every GPU")], ids=["tpu", "cuda", "loky", "dask"])
def test_a_perturb_device_that_cannot_run_is_refused_before_any_work(machine, bench, options, message, dry):
    machine(0)
    assert refusal(bench(*options, *dry)) == message


@pytest.mark.parametrize("dry", DRY, ids=["dry-run", "run"])
def test_cuda_n_is_checked_the_same_way_in_process_and_on_every_engine(machine, bench, dry):
    machine(4)
    lacking = "--device cuda:7: this machine shows 4 GPU(s) (CUDA_VISIBLE_DEVICES / torch); expected cuda:0 .. cuda:3"
    assert refusal(bench("--device", "cuda:7", *dry)) == lacking                       # in this process
    assert refusal(bench("--device", "cuda:7", "--backend", "loky", *dry)) == lacking
    for engine in ("dask", "ray"):
        assert refusal(bench("--device", "cuda:7", "--backend", engine, *dry)) == (
            f"--backend {engine} cannot pick cuda:7: each {engine} replica serves the GPU its worker owns; pass "
            "--device cuda to use every GPU")
    machine(0)
    assert refusal(bench("--device", "cuda:7", *dry)) == f"--device cuda:7 asks for CUDA, but {NO_GPU}; " \
                                                          f"pass --device cpu, {PREVIEW}"


def test_the_api_checks_cuda_n_as_the_command_line_does(machine):
    machine(4)
    for backend in (None, "loky"):
        options = BenchOptions(bootstrap=0, settings=Settings(progress=False), model=ModelOptions(device="cuda:7"),
                               backend=backend)
        with pytest.raises(ValueError, match=r"^--device cuda:7: this machine shows 4 GPU\(s\)"):
            benchmark(MODEL, tiny_data(2), options, video=["translate"], severities=[2])


@pytest.mark.parametrize("options", [[], ["--device", "cpu"]], ids=["auto", "cpu"])
def test_a_run_that_asks_for_no_gpu_never_counts_them(tmp_path, monkeypatch, options):
    """Counting GPUs imports torch (about 180 MB and over a second of CPU a run): a model that is not
    placed on a device, or --device cpu, runs without counting them."""
    def counted() -> int:
        raise AssertionError("the GPUs were counted")

    monkeypatch.setattr(placement, "device_count", counted)
    captions = write_tiny_dataset(tmp_path / "data", n=4)
    assert main(["bench", "--model", "toy:8", "--dataset", str(captions), "--out", str(tmp_path / "out"),
                 *SELECT, *options]) == 0
    assert json.loads((tmp_path / "out" / "results.json").read_text())["model"]["id"].startswith("toy")
