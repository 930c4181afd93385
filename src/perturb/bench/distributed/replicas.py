"""Model replicas on an engine: long-lived workers, one per GPU (else ``--jobs`` on CPUs), each
serving shard after shard with the model it built once (kept in its process).

- loky: one single-worker process per replica, started with ``CUDA_VISIBLE_DEVICES`` set to its GPU
  (before anything in it can initialise CUDA);
- Dask: every worker declaring a ``GPU`` resource is a replica (a local cluster starts one per GPU,
  pinned the same way); a task asks for ``GPU=1``, so a worker serves one at a time;
- Ray: one actor per GPU (``num_gpus=1``), up to the cluster's GPUs; a killed actor is restarted
  and its task retried.

Replicas pull work: each holds at most :data:`IN_FLIGHT` tasks, so a slow one takes fewer shards.
"""
from __future__ import annotations

import os
from concurrent import futures
from contextlib import contextmanager
from itertools import islice
from typing import Any, Callable, Iterable, Iterator, Sequence

from ...clusters import DEFAULT_CONNECT_TIMEOUT, connect_dask, ray_address, start_ray
from ...engines import bounded_in_flight, call_in_loky_worker, call_single_threaded
from ...errors import MissingResourceError
from .devices import GpuRequest, Gpus, check_devices, gpu_request
from .placement import DEFAULT_JOBS, Replica, local_gpus, local_replicas, on_gpus, this_host

IN_FLIGHT = 2                   # tasks held by one replica at a time
RETRIES = 3                     # a killed Ray replica is restarted, and its task retried, this often
REPLICA_ENV = "PERTURB_REPLICA"  # a worker's replica name, as results.json's provenance gives it


def _pull(submitters: Sequence[Callable[[Any], Any]], wait_one: Callable[[list[Any]], Any],
          get: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
    """Results in completion order; a replica gets its next task when one of its own finishes."""
    it = iter(tasks)
    pending: dict[Any, int] = {}
    for _ in range(IN_FLIGHT):                       # dealt round-robin: every replica starts at once
        for r, submit in enumerate(submitters):
            for t in islice(it, 1):
                pending[submit(t)] = r
    while pending:
        done = wait_one(list(pending))
        r = pending.pop(done)
        for t in islice(it, 1):
            pending[submitters[r](t)] = r
        yield get(done)


def _first_done(pending: list[futures.Future]) -> futures.Future:
    done, _ = futures.wait(pending, return_when=futures.FIRST_COMPLETED)
    return next(iter(done))


class LokyReplicas:
    """One loky worker process per replica, pinned to its GPU through its environment."""

    engine = "loky"

    def __init__(self, request: GpuRequest, jobs: int | None, scheduler: str | None = None,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        from joblib.externals.loky import ProcessPoolExecutor

        if scheduler is not None:
            raise ValueError("--scheduler needs --backend dask or ray")
        self.replicas = local_replicas(request, jobs, self.engine)
        self._executors = [ProcessPoolExecutor(max_workers=1, env=_env(r)) for r in self.replicas]

    def map(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        parent = os.getpid()
        submitters = [lambda t, ex=ex: ex.submit(call_in_loky_worker, fn, t, parent) for ex in self._executors]
        yield from _pull(submitters, _first_done, lambda f: f.result(), tasks)

    def close(self, kill: bool = False) -> None:
        for ex in self._executors:
            ex.shutdown(wait=True, kill_workers=kill)


def _env(replica: Replica) -> dict[str, str]:
    env = {REPLICA_ENV: replica.name}
    if replica.pin is not None:
        env["CUDA_VISIBLE_DEVICES"] = replica.pin
    return env


def _dask_gpu_cluster(replicas: Sequence[Replica]) -> Any:
    """A local Dask cluster of one single-thread worker per GPU, each seeing only its GPU."""
    from distributed import Nanny, Scheduler, SpecCluster

    workers = {r.name: {"cls": Nanny, "options": {"nthreads": 1, "resources": {"GPU": 1},
                                                  "env": _env(r), "silence_logs": 40,
                                                  "host": "127.0.0.1"}} for r in replicas}
    scheduler = {"cls": Scheduler, "options": {"dashboard": False, "host": "127.0.0.1"}}
    return SpecCluster(workers=workers, scheduler=scheduler, silence_logs=40)


def worker_gpu() -> str:
    """``cuda:N`` of the first GPU this process sees (its host's number for it)."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return f"cuda:{first or 0}"


def worker_place() -> tuple[str, str]:
    """(host name, first visible GPU) of a Dask worker, asked without running a task."""
    return this_host(), worker_gpu()


class DaskReplicas:
    """The GPU workers of a Dask cluster (or all its workers, on CPUs) as replicas."""

    engine = "dask"

    def __init__(self, request: GpuRequest, jobs: int | None, scheduler: str | None = None,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as e:
            raise MissingResourceError("--backend dask needs dask.distributed: "
                                       "pip install 'dask[distributed]'") from e
        check_devices(request, self.engine, None)
        self.cluster = None
        self.where = f"the Dask cluster at {scheduler}" if scheduler else "the local Dask cluster"
        if scheduler:
            self.client = connect_dask(scheduler, connect_timeout)
        else:
            local = local_replicas(request, jobs, self.engine)
            self.cluster = _dask_gpu_cluster(local) if on_gpus(local) else LocalCluster(
                n_workers=len(local), threads_per_worker=1, processes=True, dashboard_address=None)
            self.client = Client(self.cluster)
            self.client.wait_for_workers(len(local))
        try:
            self.replicas, self.gpu = self._discover(request)
        except BaseException:
            self.close()
            raise

    def _discover(self, request: GpuRequest) -> tuple[list[Replica], bool]:
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        places = self.client.run(worker_place)
        gpu = {a: w for a, w in workers.items() if (w.get("resources") or {}).get("GPU", 0) >= 1}
        use_gpu = check_devices(request, self.engine, Gpus(
            tuple(gpu), self.where, "its workers' GPU resources",
            "start one worker per GPU with `dask worker ADDRESS --resources GPU=1`"))
        return [Replica(str(w.get("name", a)), places[a][1] if use_gpu else "cpu", places[a][0])
                for a, w in sorted((gpu if use_gpu else workers).items())], use_gpu

    def map(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed

        done = as_completed()
        resources = {"GPU": 1} if self.gpu else None
        slots = max(1, sum(self.client.nthreads().values())) if not self.gpu else len(self.replicas)

        def wait_one() -> Any:
            fut = next(done)
            result = fut.result()
            fut.release()
            return result

        def submit(t: Any) -> None:
            done.add(self.client.submit(call_single_threaded, fn, t, pure=False, resources=resources))

        yield from bounded_in_flight(submit, wait_one, tasks, IN_FLIGHT * slots)

    def close(self, kill: bool = False) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


class RayActor:
    """A Ray replica: it names itself, then runs task after task in its one process."""

    def __init__(self, name: str) -> None:
        os.environ[REPLICA_ENV] = name

    def run(self, fn: Callable[[Any], Any], task: Any) -> Any:
        return call_single_threaded(fn, task)


class RayReplicas:
    """One Ray actor per GPU (``num_gpus=1``), up to the cluster's GPUs; on CPUs ``--jobs`` actors."""

    engine = "ray"

    def __init__(self, request: GpuRequest, jobs: int | None, scheduler: str | None = None,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        check_devices(request, self.engine, None)
        address = ray_address(scheduler)            # None: a Ray started here, with this machine's GPUs
        here = local_gpus().ids if address is None and request.any else ()   # counted only where asked for
        gpus_here = bool(here)                      # else 2 CPU replicas, as before
        ray, self.started = start_ray(scheduler, connect_timeout, include_dashboard=False, num_gpus=len(here),
                                      num_cpus=jobs or (None if gpus_here else DEFAULT_JOBS))
        self.actors: list[Any] = []
        try:
            self.replicas, self.gpu = ray_replicas(request, jobs, address)
            options = {"num_gpus": 1, "num_cpus": 0} if self.gpu else {"num_cpus": 1}
            actor = ray.remote(max_restarts=RETRIES, max_task_retries=RETRIES, **options)(RayActor)
            self.actors = [actor.remote(r.name) for r in self.replicas]
        except BaseException:
            self.close()
            raise

    def map(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        import ray

        submitters = [lambda t, a=a: a.run.remote(fn, t) for a in self.actors]
        yield from _pull(submitters, lambda refs: ray.wait(refs, num_returns=1)[0][0], ray.get, tasks)

    def close(self, kill: bool = False) -> None:
        import ray

        for a in self.actors:
            ray.kill(a)
        if self.started:
            ray.shutdown()


def ray_replicas(request: GpuRequest, jobs: int | None, address: str | None) -> tuple[list[Replica], bool]:
    """The replicas the connected Ray cluster (at ``address``; None: started here) gives: its GPUs
    node by node (``jobs`` at most), else ``jobs`` (or its CPU count) CPU replicas."""
    import ray

    nodes = sorted((n for n in ray.nodes() if n.get("Alive")), key=lambda n: n["NodeManagerAddress"])
    gpus = [(n.get("NodeManagerHostname") or n["NodeManagerAddress"], g) for n in nodes
            for g in range(int(n["Resources"].get("GPU", 0)))]
    where = f"the Ray cluster at {address}" if address else "the Ray instance of this process"
    if check_devices(request, "ray", Gpus(tuple(f"{h}:{g}" for h, g in gpus), where, "its nodes' GPU resources",
                                          "start its nodes with `ray start ... --num-gpus N`")):
        return [Replica(str(i), f"cuda:{g}", host) for i, (host, g) in enumerate(gpus[:jobs or len(gpus)])], True
    n = jobs or max(1, int(ray.cluster_resources().get("CPU", DEFAULT_JOBS)))
    return [Replica(str(i), "cpu", "any node") for i in range(n)], False


ENGINES = {"loky": LokyReplicas, "dask": DaskReplicas, "ray": RayReplicas}


@contextmanager
def open_replicas(engine: str, scheduler: str | None, jobs: int | None, device: str | None,
                  perturb_device: str | None, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> Iterator[Any]:
    """The replicas of ``engine`` for these device options, closed (workers stopped) on exit; a
    device they cannot honour, or a scheduler that does not answer, is a PlacementError first."""
    if engine not in ENGINES:
        raise ValueError(f"unknown backend {engine!r}; expected one of {', '.join(ENGINES)}")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be a positive number of replicas; got {jobs}")
    pool = ENGINES[engine](gpu_request(device, perturb_device), jobs, scheduler, connect_timeout)
    try:
        yield pool
    except BaseException:
        pool.close(kill=True)              # a failed run must not wait for its queued shards
        raise
    pool.close()


def _ray_running() -> bool:
    try:
        import ray
    except ImportError:
        return False
    return bool(ray.is_initialized())


def planned_replicas(engine: str, scheduler: str | None, jobs: int | None, device: str | None,
                     perturb_device: str | None, *, preview: int | None = None,
                     connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> list[Replica]:
    """The replicas a run would place, found without starting a worker: a local engine's from the
    GPUs here; an existing cluster's (``scheduler``, or ``RAY_ADDRESS`` for Ray) by asking it
    (Dask's workers, Ray's nodes); ``preview`` GPUs (``--gpus N``) asking nothing."""
    request = gpu_request(device, perturb_device)
    address = ray_address(scheduler) if engine == "ray" else scheduler
    if preview is not None:
        return local_replicas(request, jobs, engine, local_gpus(preview), "any node" if address else None)
    if engine == "loky" or (address is None and not (engine == "ray" and _ray_running())):
        return local_replicas(request, jobs, engine)
    if engine == "dask":
        with open_replicas(engine, scheduler, jobs, device, perturb_device, connect_timeout) as pool:
            return list(pool.replicas)
    check_devices(request, engine, None)
    ray, started = start_ray(scheduler, connect_timeout)
    try:
        return ray_replicas(request, jobs, address)[0]
    finally:
        if started:
            ray.shutdown()

__all__ = ["open_replicas", "planned_replicas", "worker_gpu", "this_host", "REPLICA_ENV"]
