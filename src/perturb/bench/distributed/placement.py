"""Where a sharded benchmark runs: the GPUs this machine shows, the model replicas a run places
(one per GPU, else ``--jobs`` CPU replicas), how videos are cut into shards, and the :class:`Placement` that
``perturb bench --dry-run`` prints.

This machine's GPUs are those torch counts, numbered as ``CUDA_VISIBLE_DEVICES`` names them
(:func:`local_gpus`); ``--gpus N`` stands in for them in a preview. They are counted through
:func:`device_count` alone (tests patch it), so placement is decided, and testable, on a machine
without one. A replica's model is always built for its own first visible device (``cuda:0`` in a
worker pinned to one GPU), never for the driver's numbering.
"""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from ..adapters.kinds import KINDS
from ..adapters.model_options import ModelOptions
from .devices import GpuRequest, Gpus, check_devices

DEFAULT_JOBS = 2               # CPU replicas of a local engine when --jobs is not given
SHARDS_PER_CPU = 2             # CPU replicas: about two shards each, of whole batches
SHARDS_PER_GPU = 4             # GPU replicas: smaller shards, so a slower GPU simply takes fewer
REPLICA_DEVICE = "cuda:0"      # what a replica's model is built for: its worker sees its GPU alone


def device_count() -> int:
    """CUDA devices torch can see here (0 without torch or CUDA); the one GPU probe, patched in tests."""
    try:
        import torch
    except ImportError:
        return 0
    return int(torch.cuda.device_count())


def visible_gpus() -> list[str]:
    """Ids of the GPUs this process may use: ``CUDA_VISIBLE_DEVICES``'s entries when it is set
    (up to the first invalid one, as CUDA reads it), else ``0 .. device_count()-1``."""
    count = device_count()
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is None:
        return [str(i) for i in range(count)]
    ids: list[str] = []
    for entry in (e.strip() for e in env.split(",")):
        if not entry or entry.startswith("-"):
            break
        ids.append(entry)
    return ids[:count]


PREVIEW_ADVICE = "preview the plan for N GPUs from this machine with --dry-run --gpus N"


def local_gpus(preview: int | None = None) -> Gpus:
    """The GPUs of this machine (:func:`visible_gpus`), or ``preview`` GPUs numbered 0..N-1 for a
    ``--gpus N`` dry run. Where ``CUDA_VISIBLE_DEVICES`` names more GPUs than torch counts (a login
    node without any), only those torch counts are usable, and ``counted`` says so."""
    if preview is not None:
        return Gpus(tuple(str(i) for i in range(preview)), "the previewed machine", f"--gpus {preview}")
    ids = tuple(visible_gpus())
    named = [e for e in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if e.strip()]
    counted = Gpus(()).counted if len(named) <= len(ids) else \
        f"CUDA_VISIBLE_DEVICES names {len(named)}, but torch counts {len(ids)} here"
    return Gpus(ids, "this machine", counted, PREVIEW_ADVICE)


@dataclass
class Replica:
    """One model replica: its name, the device it serves from (its host's GPU number) and host."""

    name: str
    device: str
    host: str
    pin: str | None = None      # CUDA_VISIBLE_DEVICES of a local worker (its one GPU)


def this_host() -> str:
    """This machine's name, as replicas on it are reported."""
    return socket.gethostname()


def local_replicas(request: GpuRequest, jobs: int | None, engine: str, gpus: Gpus | None = None,
                   host: str | None = None) -> list[Replica]:
    """One replica per GPU of ``gpus`` (default :func:`local_gpus`; capped by ``jobs``; the named one
    for ``cuda:N``), or ``jobs`` CPU replicas when no GPU is asked for or, under ``--device auto``,
    there is none; the devices checked first (:func:`~.devices.check_devices`)."""
    gpus = gpus or local_gpus()
    host = host or this_host()
    if check_devices(request, engine, gpus):
        ids = list(gpus.ids) if request.index is None else [gpus.ids[request.index]]
        return [Replica(str(i), f"cuda:{g}", host, g) for i, g in enumerate(ids[:jobs or len(ids)])]
    return [Replica(str(i), "cpu", host) for i in range(jobs or DEFAULT_JOBS)]


IN_PROCESS = "this process"
IN_PROCESS_ENGINE = "in-process"       # a placement's engine when the driver runs the model itself


def default_engine(kind: str, device: str | None, jobs: int | None, *, device_map: str | None = None,
                   rerank: bool = False, gpus: Gpus | None = None) -> tuple[str | None, str]:
    """The engine of a run given no ``--backend``, and why, in one line: ``"loky"`` (one local
    replica per GPU) where a ``kind`` model goes on ``--device cuda`` or ``auto`` (its row's
    :attr:`~.adapters.kinds.Kind.on_device`) and more than one GPU is usable (``gpus``, default
    :func:`local_gpus`); else None (this process, as on one GPU or on the CPU)."""
    device = device or "auto"
    if device not in ("auto", "cuda"):
        return None, f"--device {device}: {IN_PROCESS}"
    if kind not in KINDS or not KINDS[kind].on_device:
        return None, f"a {kind}: model is not placed on --device: {IN_PROCESS}"
    if device_map:
        return None, f"--device-map {device_map} spreads one model over the GPUs: {IN_PROCESS}"
    if rerank:
        return None, f"--rerank runs in {IN_PROCESS}"
    gpus = gpus or local_gpus()               # last: counting GPUs imports torch
    n = len(gpus.ids)
    if n < 2:
        return None, f"{n} GPU(s) {gpus.usable()}: {IN_PROCESS}"
    if jobs == 1:
        return None, f"--jobs 1: {IN_PROCESS}"
    used = min(n, jobs or n)
    return "loky", (f"no --backend, --device {device} and {n} GPUs {gpus.usable()}: {used} local loky "
                    f"replicas, one per GPU (--device cuda:0 keeps one GPU in {IN_PROCESS})")


def on_gpus(replicas: Sequence[Replica]) -> bool:
    """Whether the replicas hold GPUs (else they are CPU workers)."""
    return any(r.device.startswith("cuda") for r in replicas)


def replica_options(options: ModelOptions, replicas: Sequence[Replica]) -> ModelOptions:
    """The model options a replica builds with: a GPU replica's model goes on its own GPU."""
    if on_gpus(replicas) and options.device != "cpu":
        return replace(options, device=REPLICA_DEVICE)
    if options.device == "auto":
        return replace(options, device="cpu")
    return options


def replica_perturb_device(perturb_device: str | None, replicas: Sequence[Replica]) -> str | None:
    """``--perturb-device`` as a replica sees it (``cuda:N`` is its own GPU, ``cuda:0`` there)."""
    if perturb_device and perturb_device.startswith("cuda") and on_gpus(replicas):
        return REPLICA_DEVICE
    return perturb_device


def shards(n: int, batch_size: int, replicas: int, gpus: bool = False) -> list[list[int]]:
    """Item positions in contiguous shards: on CPUs about two per replica of whole batches; on
    GPUs about four per replica, whole batches only where a shard holds a batch or more (so every
    GPU gets work however large the batch)."""
    per = max(1, -(-n // max(1, (SHARDS_PER_GPU if gpus else SHARDS_PER_CPU) * replicas)))
    if not gpus or per > batch_size:
        per = -(-per // batch_size) * batch_size
    return [list(range(i, min(i + per, n))) for i in range(0, n, per)]


@dataclass
class Placement:
    """Where a run will go and what its replicas will do, before it does it (``--dry-run``'s record)."""

    engine: str
    replicas: list[Replica]
    tasks: int                        # video shards (dual encoders) or configurations (cross-encoders)
    task_kind: str                    # "video shards" or "configurations"
    scheduler: str | None = None
    model_device: str = "cpu"
    perturb_device: str | None = None
    notes: list[str] = field(default_factory=list)
    reason: str = ""                  # why this engine, in one line

    def to_json(self) -> dict[str, Any]:
        """``{"engine", "replicas": [{"replica", "device", "host", "shards"}], ...}``; shards per
        replica as dealt out evenly (a replica that finishes early takes the next one)."""
        n = len(self.replicas) or 1
        dealt = [self.tasks // n + (i < self.tasks % n) for i in range(n)]
        remote = self.engine != IN_PROCESS_ENGINE
        return {
            "engine": self.engine, "reason": self.reason, "scheduler": self.scheduler,
            "replicas": [{"replica": r.name, "device": r.device, "host": r.host, "shards": k}
                         for r, k in zip(self.replicas, dealt)],
            "shards": self.tasks, "shard_kind": self.task_kind,
            "model_device": self.model_device,
            "driver_model": None if remote else self.model_device,
            "texts": "replicas" if remote else "driver",
            "cross_encoders": "replicas, one configuration per shard" if remote else "driver",
            "perturb_device": self.perturb_device, "notes": list(self.notes),
        }

    def lines(self) -> list[str]:
        doc = self.to_json()
        where = f" ({self.scheduler})" if self.scheduler else ""
        out = [f"engine: {self.engine}{where}; {len(self.replicas)} replica(s), {self.tasks} {self.task_kind}"]
        out += [f"why: {self.reason}"] if self.reason else []
        out += [f"  replica {r['replica']}: {r['device']} on {r['host']}, about {r['shards']} shard(s)"
                for r in doc["replicas"]]
        out.append(f"model on: {'each replica' if doc['driver_model'] is None else 'this process'} "
                   f"({self.model_device}); the driver holds "
                   f"{'no model' if doc['driver_model'] is None else 'the model'}")
        out.append(f"texts encoded on: {doc['texts']}; cross-encoders scored on: {doc['cross_encoders']}")
        out.append(f"perturbations on: {self.perturb_device or 'numpy on the CPU'}"
                   + (" of each replica" if self.perturb_device and doc["driver_model"] is None else ""))
        return out + [f"note: {n}" for n in self.notes]


def replica_record(where: dict[str, Any]) -> dict[str, Any]:
    """The (replica, host, device) of a shard's ``where``, for results.json's provenance."""
    return {k: where[k] for k in ("replica", "host", "device")}


def provenance(engine: str, ledger: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """results.json's ``provenance``: the replicas that ran, and where each shard ran."""
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for entry in ledger:
        rec = replica_record(entry)
        key = (str(rec["replica"]), rec["host"], rec["device"])
        seen.setdefault(key, {**rec, "shards": 0})["shards"] += 1
    return {"engine": engine, "replicas": list(seen.values()), "shards": [dict(e) for e in ledger]}

