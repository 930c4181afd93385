"""Execution backends: run one task function over many tasks, yielding results as they finish.

``loky`` (joblib, one machine), ``dask`` (a ``LocalCluster`` or ``--scheduler ADDRESS``) and
``ray`` (local or ``ray://``/``host:port``). All run the same picklable function; results arrive
in completion order, and at most a few tasks per worker are in flight, so a plan of a million
tasks never sits in a scheduler at once.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from itertools import islice
from typing import Any, Callable, Iterable, Iterator

from .clusters import DEFAULT_CONNECT_TIMEOUT, connect_dask, start_ray
from .errors import MissingResourceError

BACKENDS = ("loky", "dask", "ray")
BACKEND_MODULES = {"loky": "joblib", "dask": "distributed", "ray": "ray"}     # what each imports (dataset extra)
IN_FLIGHT_PER_WORKER = 2
MODEL_MEMORY = 16 * 2**30        # a loky worker may grow by this much (NLP models it keeps) before a restart
PARENT_POLL_SECONDS = 0.5        # how soon a loky worker notices its build was killed


def default_jobs() -> int:
    """All cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def run(fn: Callable[[Any], Any], tasks: Iterable[Any], *, backend: str = "loky",
        jobs: int | None = None, scheduler: str | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> Iterator[Any]:
    """Yield ``fn(task)`` for every task, in completion order, on the chosen backend (a ``scheduler``
    that does not answer within ``connect_timeout`` seconds is a PlacementError)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be a positive number of workers; got {jobs}")
    if scheduler is not None and backend == "loky":
        raise ValueError("--scheduler needs --backend dask or ray")
    jobs = jobs or default_jobs()
    if backend == "dask":
        return _dask(fn, tasks, jobs, scheduler, connect_timeout)
    if backend == "ray":
        return _ray(fn, tasks, jobs, scheduler, connect_timeout)
    if jobs == 1:
        return _in_process(fn, tasks)
    return _loky(fn, tasks, jobs)


def call_single_threaded(fn: Callable[[Any], Any], task: Any) -> Any:
    """``fn(task)`` with OpenCV and torch held to one thread: one worker per core."""
    one_thread()
    return fn(task)


def one_thread() -> tuple[int, int | None]:
    """Set OpenCV (and torch, if loaded) to one thread; returns the previous counts."""
    import cv2

    before = (cv2.getNumThreads(), None)
    cv2.setNumThreads(1)
    torch = sys.modules.get("torch")
    if torch is not None:
        before = (before[0], torch.get_num_threads())
        torch.set_num_threads(1)
    return before


def _in_process(fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
    """``--jobs 1``: run here, single-threaded like a worker, then restore the thread counts."""
    import cv2

    cv_threads, torch_threads = one_thread()
    try:
        yield from map(fn, tasks)
    finally:
        cv2.setNumThreads(cv_threads)
        if torch_threads is not None:
            sys.modules["torch"].set_num_threads(torch_threads)


def call_in_loky_worker(fn: Callable[[Any], Any], task: Any, parent: int) -> Any:
    """:func:`call_single_threaded` in a loky worker that keeps its models and dies with ``parent``."""
    _settle_loky_worker(parent)
    return call_single_threaded(fn, task)


_PARENT_WATCHED: list[int] = []


def _settle_loky_worker(parent: int) -> None:
    """Once per worker: allow it to keep the models perturbations load (loky would take their memory
    for a leak, restart the worker and warn "A worker stopped"), and exit when ``parent`` is gone
    (a killed build must not leave workers behind)."""
    if _PARENT_WATCHED:
        return
    _PARENT_WATCHED.append(parent)
    from joblib.externals.loky import process_executor
    if hasattr(process_executor, "_MAX_MEMORY_LEAK_SIZE"):
        process_executor._MAX_MEMORY_LEAK_SIZE = max(process_executor._MAX_MEMORY_LEAK_SIZE, MODEL_MEMORY)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True, name="perturb-parent-watch").start()


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _loky(fn: Callable[[Any], Any], tasks: Iterable[Any], jobs: int) -> Iterator[Any]:
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered",
                        batch_size=1, pre_dispatch=f"{IN_FLIGHT_PER_WORKER}*n_jobs")
    parent = os.getpid()
    yield from parallel(delayed(call_in_loky_worker)(fn, t, parent) for t in tasks)


def bounded_in_flight(submit: Callable[[Any], Any], wait_one: Callable[[], Any], tasks: Iterable[Any],
                      limit: int) -> Iterator[Any]:
    """Keep at most ``limit`` tasks submitted; ``wait_one`` returns the next finished result."""
    it = iter(tasks)
    pending = 0
    for t in islice(it, limit):
        submit(t)
        pending += 1
    while pending:
        result = wait_one()
        pending -= 1
        for t in islice(it, 1):
            submit(t)
            pending += 1
        yield result


def _dask(fn: Callable[[Any], Any], tasks: Iterable[Any], jobs: int,
          scheduler: str | None, connect_timeout: float) -> Iterator[Any]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as e:
        raise MissingResourceError("--backend dask needs dask.distributed: "
                                   "pip install 'dask[distributed]'") from e
    cluster = None
    if scheduler:
        client = connect_dask(scheduler, connect_timeout)
    else:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        workers = max(1, sum(client.nthreads().values()))
        futures = as_completed()

        def submit(t: Any) -> None:
            futures.add(client.submit(call_single_threaded, fn, t, pure=False))

        def wait_one() -> Any:
            fut = next(futures)
            result = fut.result()
            fut.release()
            return result

        yield from bounded_in_flight(submit, wait_one, tasks, IN_FLIGHT_PER_WORKER * workers)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _ray(fn: Callable[[Any], Any], tasks: Iterable[Any], jobs: int,
         scheduler: str | None, connect_timeout: float) -> Iterator[Any]:
    ray, started = start_ray(scheduler, connect_timeout, num_cpus=jobs, include_dashboard=False)
    try:
        remote = ray.remote(num_cpus=1)(call_single_threaded)
        workers = max(1, int(ray.cluster_resources().get("CPU", jobs)))
        refs: list[Any] = []

        def wait_one() -> Any:
            done, rest = ray.wait(refs, num_returns=1)
            refs[:] = rest
            return ray.get(done[0])

        yield from bounded_in_flight(lambda t: refs.append(remote.remote(fn, t)), wait_one, tasks,
                                     IN_FLIGHT_PER_WORKER * workers)
    finally:
        if started:
            ray.shutdown()
