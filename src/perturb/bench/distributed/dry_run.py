"""``perturb bench --dry-run [--json] [--gpus N]``: the :class:`~.placement.Placement` of a run
(engine, replicas with device and host, shards per replica, where texts and cross-encoders run),
printed without loading a model or decoding a video; and the engine a run goes on, chosen once and
checked before any work with the device options, against the GPUs of the place the work will run
(:func:`~.devices.check_devices`)."""
from __future__ import annotations

import argparse
import json
from typing import Any, Sequence

from ...clusters import ray_address
from ...errors import UsageError
from ..adapters.factory import encoder_type, parse_spec
from .devices import check_devices, gpu_request
from .placement import (IN_PROCESS_ENGINE, Placement, Replica, default_engine, local_gpus, on_gpus, shards,
                        this_host)
from ..pipeline.jobs import Job, caption_sets

Engine = tuple[str | None, str]      # the engine a run goes on (None: this process) and why, in one line


def cluster_address(args: argparse.Namespace) -> str | None:
    """The cluster a ``--backend dask|ray`` run joins (``--scheduler``; for Ray also ``RAY_ADDRESS``),
    else None (this machine)."""
    if args.backend == "ray":
        return ray_address(args.scheduler)
    return args.scheduler if args.backend == "dask" else None


def check_placement(args: argparse.Namespace) -> Engine:
    """The options that say where the run goes, before any work: ``--scheduler`` with a cluster
    engine, ``--gpus`` with ``--dry-run``, and the device options against this machine's GPUs
    (a cluster's are checked once it is reached, before any work too); a ValueError in one line.
    Returns the engine the run goes on, chosen here once (:func:`run_engine`)."""
    if args.scheduler and args.backend in (None, "loky"):
        raise ValueError("--scheduler needs --backend dask or ray")
    if args.gpus is not None and not args.dry_run:
        raise ValueError(f"--gpus {args.gpus} previews the plan for that many GPUs: it goes with --dry-run "
                         "(a run uses the GPUs it finds; --jobs N caps them)")
    request = gpu_request(args.device, args.perturb_device)
    engine = run_engine(args)
    local = args.gpus is not None or cluster_address(args) is None
    check_devices(request, engine[0] or IN_PROCESS_ENGINE, local_gpus(args.gpus) if local and request.needs_count
                  else None)
    return engine


def run_engine(args: argparse.Namespace) -> Engine:
    """The engine ``perturb bench`` runs on (None: this process) and why, in one line: ``--backend``
    as given, else :func:`~.placement.default_engine` (local replicas where several GPUs are usable,
    or previewed with ``--gpus N``)."""
    if args.backend is not None:
        return args.backend, f"--backend {args.backend}"
    return default_engine(parse_spec(args.model)[0], args.device, args.jobs, device_map=args.device_map,
                          rerank=args.rerank is not None,
                          gpus=local_gpus(args.gpus) if args.gpus is not None else None)   # counted last, if needed


def placement_of(args: argparse.Namespace, n_items: int, jobs: Sequence[Job], chosen: Engine) -> Placement:
    """What ``perturb bench`` with these options would run, and where, on the ``chosen`` engine."""
    from .replicas import planned_replicas

    encoder = encoder_type(args.model, may_import=True)
    texts = caption_sets(jobs)
    notes = [] if encoder else ["the model's kind (dual or cross) is known only once built; planned as a dual encoder"]
    if args.gpus is not None:
        notes.append(f"a preview for --gpus {args.gpus}: no GPU was counted and no cluster asked")
    engine, reason = chosen
    if engine is None:
        device = args.device if args.device != "auto" else ("cuda" if local_gpus(args.gpus).ids else "cpu")
        return Placement(IN_PROCESS_ENGINE, [Replica("driver", device, this_host())], 1,
                         "shard (every configuration)", None, device, args.perturb_device, notes, reason)
    replicas = planned_replicas(engine, args.scheduler, args.jobs, args.device, args.perturb_device,
                                preview=args.gpus, connect_timeout=args.connect_timeout)
    gpus = on_gpus(replicas)
    model_device = "cpu" if args.device == "cpu" or not gpus else "cuda:0 of each replica"
    perturb = args.perturb_device and ("cuda:0 of each replica" if gpus and args.perturb_device.startswith("cuda")
                                       else args.perturb_device)
    side = [("model description", 1)] + [(f"{k} set", 1) for k in ("mc", "entailment") if getattr(args, k)]
    if encoder == "cross":
        counts = [*side, ("configuration(s), clean included", len(jobs) + 1)]
    else:
        counts = [*side, ("caption set(s)", len(texts)),
                  ("video shard(s)", len(shards(n_items, args.batch_size, len(replicas), gpus)))]
    return Placement(engine, replicas, sum(n for _, n in counts),
                     f"shards ({', '.join(f'{n} {w}' for w, n in counts)})", cluster_address(args), model_device,
                     perturb, notes, reason)


def print_placement(args: argparse.Namespace, data: Any, jobs: Sequence[Job], chosen: Engine) -> int:
    """Print the placement on the ``chosen`` engine (``--json``: as JSON) and return exit status 0."""
    if args.json and not args.dry_run:
        raise UsageError("--json goes with --dry-run (the plan as JSON)")
    try:
        placement = placement_of(args, len(data.items), jobs, chosen)
    except ValueError as e:
        raise UsageError(str(e)) from None
    doc: dict[str, Any] = {**placement.to_json(), "model": args.model, "items": len(data.items),
                           "configurations": len(jobs)}
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(f"perturb bench --dry-run: {args.model} on {len(data.items)} items, {len(jobs)} configurations")
        print("\n".join(placement.lines()))
    return 0
