"""Plans come from where the work will run: a real Ray head declaring 4 GPUs and a Dask scheduler
with two ``--resources GPU=1`` workers, each started here as its own process (ended by its id),
planned by ``perturb bench --dry-run`` from a driver process that sees no GPU; and a scheduler that
does not answer is one line and exit 2 within seconds, never a retry of minutes or a traceback."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench_fixtures import write_tiny_dataset

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# Ray here and in the driver: no token authentication (else both would read the token in the shared
# ~/.ray, which another Ray on this machine may rewrite), no usage reports
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
START_WAIT = 90              # seconds a head or a worker may take to come up on a loaded 2-core machine
ANSWER_BOUND = 15            # the bound for an unreachable scheduler, start-up included


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports nothing listens on now."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def start(argv: list[str], log: Path, **env: str) -> subprocess.Popen:
    """A service process in its own session (so its children can be ended with it), logging to ``log``."""
    with open(log, "wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, **env})


def end(proc: subprocess.Popen) -> None:
    """End ``proc`` by its id (SIGTERM, then SIGKILL), then whatever of its session is left."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        if proc.poll() is None:
            os.kill(proc.pid, sig)
            try:
                proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue
    try:
        os.killpg(proc.pid, signal.SIGKILL)            # its session's leftovers: the group it leads
    except ProcessLookupError:
        pass


def wait_for(check, what: str, procs: list[subprocess.Popen], logs: list[Path]) -> None:
    """Until ``check()`` holds; an AssertionError with the logs once a process exits or START_WAIT passes."""
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline and all(p.poll() is None for p in procs):
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(f"{what} did not come up:\n" +
                         "\n".join(p.read_text(errors="replace")[-2000:] for p in logs if p.exists()))


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def driver(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``perturb ARGS`` in a new process that sees no GPU (CUDA_VISIBLE_DEVICES empty)."""
    full = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    full.update(PYTHONPATH=os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
                CUDA_VISIBLE_DEVICES="", **env)
    return subprocess.run([sys.executable, "-m", "perturb", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return write_tiny_dataset(tmp_path_factory.mktemp("data"), n=4)


def bench(dataset: Path, *extra: str) -> list[str]:
    return ["bench", "--model", "toy:16", "--dataset", str(dataset), "--out", "out", "--video-perturbations",
            "translate", "--severities", "2", "--text-perturbations", "Typos", "--batch-size", "2",
            "--no-progress", *extra]


def gpus_of(plan: dict) -> list[tuple[str, str]]:
    return [(r["host"], r["device"]) for r in plan["replicas"]]


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """``ray start --head --block --num-gpus 4`` on free ports, its temporary folder here; its address."""
    pytest.importorskip("ray", reason="the ray package is not installed")
    home = tmp_path_factory.mktemp("ray")
    # Ray's socket paths (TEMP/session_<date>_<pid>/sockets/plasma_store, 70 characters more) must stay
    # under 107 characters: a pytest folder too long for that is replaced by a short one in /tmp
    temp = home if len(str(home)) + 70 < 107 else Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    gcs, node, objects, agent, grpc, metrics, runtime = free_ports(7)
    argv = [str(BIN / "ray"), "start", "--head", "--block", "--num-gpus", "4", "--num-cpus", "1",
            "--node-ip-address", "127.0.0.1", "--port", str(gcs),
            "--node-manager-port", str(node), "--object-manager-port", str(objects),
            "--dashboard-agent-listen-port", str(agent), "--dashboard-agent-grpc-port", str(grpc),
            "--metrics-export-port", str(metrics), "--runtime-env-agent-port", str(runtime),
            "--include-dashboard", "false", "--disable-usage-stats", "--object-store-memory", str(100 * 2**20),
            "--temp-dir", str(temp)]
    log = home / "head.log"
    proc = start(argv, log, **RAY_ENV)
    try:
        wait_for(lambda: listening(gcs) and "Ray runtime started" in log.read_text(errors="replace"),
                 "the Ray head", [proc], [log])
        yield f"127.0.0.1:{gcs}"
    finally:
        end(proc)
        if temp != home:
            import shutil
            shutil.rmtree(temp, ignore_errors=True)


def test_ray_plans_the_gpus_of_the_cluster_from_a_driver_without_any(ray_head, dataset):
    done = driver(bench(dataset, "--backend", "ray", "--device", "cuda", "--dry-run", "--json"),
                  dataset.parent, RAY_ADDRESS=ray_head, **RAY_ENV)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["engine"] == "ray" and plan["scheduler"] == ray_head and plan["driver_model"] is None
    assert len(plan["replicas"]) == 4 and len(set(gpus_of(plan))) == 4           # four distinct GPUs
    assert sorted(d for _, d in gpus_of(plan)) == ["cuda:0", "cuda:1", "cuda:2", "cuda:3"]


@pytest.fixture(scope="module")
def dask_gpu_workers(tmp_path_factory):
    """``dask scheduler`` and two ``dask worker --resources GPU=1`` (CUDA_VISIBLE_DEVICES 0 and 1)."""
    pytest.importorskip("distributed", reason="the dask.distributed package is not installed")
    from distributed import Client

    home = tmp_path_factory.mktemp("dask")
    port, = free_ports(1)
    address = f"tcp://127.0.0.1:{port}"
    logs = [home / "scheduler.log", home / "worker0.log", home / "worker1.log"]
    procs = [start([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                    "--no-dashboard"], logs[0])]
    try:
        wait_for(lambda: listening(port), "the Dask scheduler", procs, logs[:1])
        for gpu in (0, 1):
            procs.append(start([str(BIN / "dask"), "worker", address, "--nworkers", "1", "--nthreads", "1",
                                "--resources", "GPU=1", "--name", f"gpu{gpu}", "--no-dashboard",
                                "--local-directory", str(home / f"w{gpu}")], logs[1 + gpu],
                               CUDA_VISIBLE_DEVICES=str(gpu)))
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=START_WAIT)
        yield address
    finally:
        for proc in reversed(procs):
            end(proc)


def test_dask_plans_its_gpu_workers_from_a_driver_without_any(dask_gpu_workers, dataset):
    done = driver(bench(dataset, "--backend", "dask", "--scheduler", dask_gpu_workers, "--device", "cuda",
                        "--dry-run", "--json"), dataset.parent)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["engine"] == "dask" and plan["scheduler"] == dask_gpu_workers
    assert sorted(r["replica"] for r in plan["replicas"]) == ["gpu0", "gpu1"]
    assert sorted(d for _, d in gpus_of(plan)) == ["cuda:0", "cuda:1"] and len(set(gpus_of(plan))) == 2


def one_line_refusal(done: subprocess.CompletedProcess, seconds: float) -> str:
    """The one error line of a refused command that exited 2 within the issue's bound."""
    lines = [line for line in done.stderr.splitlines() if not line.startswith("perturb bench: note:")]
    assert (done.returncode, len(lines)) == (2, 1), done.stderr
    assert seconds < ANSWER_BOUND
    return lines[0]


@pytest.mark.parametrize("engine, address, dry", [("ray", "127.0.0.1:{port}", True),
                                                   ("dask", "tcp://127.0.0.1:{port}", True),
                                                   ("dask", "tcp://127.0.0.1:{port}", False)])
def test_an_unreachable_scheduler_is_one_line_within_seconds(engine, address, dry, dataset):
    pytest.importorskip("ray" if engine == "ray" else "distributed")
    address = address.format(port=free_ports(1)[0])
    t0 = time.monotonic()
    done = driver(bench(dataset, "--backend", engine, "--scheduler", address, *(["--dry-run"] if dry else [])),
                  dataset.parent)
    line = one_line_refusal(done, time.monotonic() - t0)
    what = "Ray cluster" if engine == "ray" else "Dask scheduler"
    assert line.startswith(f"perturb bench: error: --scheduler {address}: cannot reach a {what} there (")
    assert line.endswith("waited up to 5 s); check the address and that it is running, or wait longer with "
                         "--connect-timeout SECONDS")
    assert not (dataset.parent / "out").exists()


def test_a_silent_address_is_given_up_after_connect_timeout(dataset):
    """An address that accepts but never answers (not a scheduler) is refused once --connect-timeout passes."""
    pytest.importorskip("ray")
    pytest.importorskip("distributed")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        for engine, address in (("ray", f"127.0.0.1:{port}"), ("dask", f"tcp://127.0.0.1:{port}")):
            t0 = time.monotonic()
            done = driver(bench(dataset, "--backend", engine, "--scheduler", address, "--dry-run",
                                "--connect-timeout", "1"), dataset.parent)
            line = one_line_refusal(done, time.monotonic() - t0)
            assert f"--scheduler {address}: cannot reach a" in line and "waited up to 1 s" in line


def test_build_gives_up_on_an_unreachable_scheduler_too(dataset, tmp_path, capsys):
    pytest.importorskip("distributed")
    from perturb.cli import main

    address = f"tcp://127.0.0.1:{free_ports(1)[0]}"
    assert main(["build", str(dataset), "--out", str(tmp_path / "built"), "--backend", "dask", "--scheduler", address,
                 "--connect-timeout", "1", "--video-perturbations", "translate", "--severities", "1",
                 "--text-perturbations", "none", "--no-progress"]) == 2
    assert capsys.readouterr().err == (f"perturb build: error: --scheduler {address}: cannot reach a Dask scheduler "
                                       "there (no answer; waited up to 1 s); check the address and that it is "
                                       "running, or wait longer with --connect-timeout SECONDS\n")
