"""``perturb bench --dry-run [--json] [--gpus N]``: the plan of a run (engine, replicas with device
and host, shards per replica, where texts and cross-encoders run), printed without loading a model
or decoding a video; and the device options checked before any work, against the GPUs of the place
the work will run (:func:`~.devices.check_devices`)."""
from __future__ import annotations

import argparse
import json
from typing import Any, Sequence

from ...clusters import ray_address
from ...errors import UsageError
from ..adapters.factory import parse_spec
from ..adapters.kinds import KINDS
from .placement import (IN_PROCESS_ENGINE, Plan, Replica, check_devices, default_engine, gpu_request, local_gpus,
                        on_gpus, shards, this_host)
from ..pipeline.plan import Job, caption_sets


def model_kind(spec: str) -> str | None:
    """``dual`` or ``cross`` read from the spec (a callable's module is imported, nothing built);
    None when only building it would tell (its kind's :attr:`~.adapters.kinds.Kind.encoder`)."""
    kind, target = parse_spec(spec)
    return KINDS[kind].encoder(target, True)


def cluster_address(args: argparse.Namespace) -> str | None:
    """The cluster a ``--backend dask|ray`` run joins (``--scheduler``; for Ray also ``RAY_ADDRESS``),
    else None (this machine)."""
    if args.backend == "ray":
        return ray_address(args.scheduler)
    return args.scheduler if args.backend == "dask" else None


def check_placement(args: argparse.Namespace) -> None:
    """The options that say where the run goes, before any work: ``--scheduler`` with a cluster
    engine, ``--gpus`` with ``--dry-run``, and the device options against this machine's GPUs
    (a cluster's are checked once it is reached, before any work too); a ValueError in one line."""
    if args.scheduler and args.backend in (None, "loky"):
        raise ValueError("--scheduler needs --backend dask or ray")
    if args.gpus is not None and not args.dry_run:
        raise ValueError(f"--gpus {args.gpus} previews the plan for that many GPUs: it goes with --dry-run "
                         "(a run uses the GPUs it finds; --jobs N caps them)")
    request = gpu_request(args.device, args.perturb_device)
    engine = run_engine(args)[0] or IN_PROCESS_ENGINE
    local = args.gpus is not None or cluster_address(args) is None
    check_devices(request, engine, local_gpus(args.gpus) if local and request.needs_count else None)


def run_engine(args: argparse.Namespace) -> tuple[str | None, str]:
    """The engine ``perturb bench`` runs on (None: this process) and why, in one line: ``--backend``
    as given, else :func:`~.placement.default_engine` (local replicas where several GPUs are usable,
    or previewed with ``--gpus N``)."""
    if args.backend is not None:
        return args.backend, f"--backend {args.backend}"
    return default_engine(parse_spec(args.model)[0], args.device, args.jobs, device_map=args.device_map,
                          rerank=args.rerank is not None,
                          gpus=local_gpus(args.gpus) if args.gpus is not None else None)   # counted last, if needed


def bench_plan(args: argparse.Namespace, n_items: int, jobs: Sequence[Job]) -> Plan:
    """What ``perturb bench`` with these options would run, and where."""
    from .replicas import planned_replicas

    kind = model_kind(args.model)
    texts = caption_sets(jobs)
    notes = [] if kind else ["the model's kind (dual or cross) is known only once built; planned as a dual encoder"]
    if args.gpus is not None:
        notes.append(f"a preview for --gpus {args.gpus}: no GPU was counted and no cluster asked")
    engine, reason = run_engine(args)
    if engine is None:
        device = args.device if args.device != "auto" else ("cuda" if local_gpus(args.gpus).ids else "cpu")
        return Plan(IN_PROCESS_ENGINE, [Replica("driver", device, this_host())], 1, "shard (every configuration)",
                    None, device, args.perturb_device, notes, reason)
    replicas = planned_replicas(engine, args.scheduler, args.jobs, args.device, args.perturb_device,
                                preview=args.gpus, connect_timeout=args.connect_timeout)
    gpus = on_gpus(replicas)
    model_device = "cpu" if args.device == "cpu" or not gpus else "cuda:0 of each replica"
    perturb = args.perturb_device and ("cuda:0 of each replica" if gpus and args.perturb_device.startswith("cuda")
                                       else args.perturb_device)
    side = [("model description", 1)] + [(f"{k} set", 1) for k in ("mc", "entailment") if getattr(args, k)]
    if kind == "cross":
        counts = [*side, ("configuration(s), clean included", len(jobs) + 1)]
    else:
        counts = [*side, ("caption set(s)", len(texts)),
                  ("video shard(s)", len(shards(n_items, args.batch_size, len(replicas), gpus)))]
    return Plan(engine, replicas, sum(n for _, n in counts), f"shards ({', '.join(f'{n} {w}' for w, n in counts)})",
                cluster_address(args), model_device, perturb, notes, reason)


def print_plan(args: argparse.Namespace, data: Any, jobs: Sequence[Job]) -> int:
    """Print the plan (``--json``: as JSON) and return exit status 0."""
    if args.json and not args.dry_run:
        raise UsageError("--json goes with --dry-run (the plan as JSON)")
    try:
        plan = bench_plan(args, len(data.items), jobs)
    except ValueError as e:
        raise UsageError(str(e)) from None
    doc: dict[str, Any] = {**plan.to_json(), "model": args.model, "items": len(data.items),
                           "configurations": len(jobs)}
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(f"perturb bench --dry-run: {args.model} on {len(data.items)} items, {len(jobs)} configurations")
        print("\n".join(plan.lines()))
    return 0
