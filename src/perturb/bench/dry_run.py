"""``perturb bench --dry-run [--json]``: the plan of a run (engine, replicas with device and host,
shards per replica, where texts and cross-encoders run), printed without loading a model or
decoding a video; and the device options checked before any work."""
from __future__ import annotations

import argparse
import json
from typing import Any, Sequence

from ..errors import UsageError
from .adapters.factory import parse_spec
from .adapters.kinds import KINDS
from .placement import Plan, Replica, default_engine, gpu_request, on_gpus, shards, this_host, visible_gpus
from .plan import Job, caption_sets


def model_kind(spec: str) -> str | None:
    """``dual`` or ``cross`` read from the spec (a callable's module is imported, nothing built);
    None when only building it would tell (its kind's :attr:`~.adapters.kinds.Kind.encoder`)."""
    kind, target = parse_spec(spec)
    return KINDS[kind].encoder(target, True)


def check_devices(args: argparse.Namespace) -> None:
    """``--device`` / ``--perturb-device`` the engine can honour; a ValueError in one line if not
    (``cuda:N`` on Dask or Ray; for loky, an ordinal this machine lacks or CUDA with no GPU)."""
    from .replicas import refuse_index

    if args.scheduler and args.backend in (None, "loky"):
        raise ValueError("--scheduler needs --backend dask or ray")
    request = gpu_request(args.device, args.perturb_device)
    if args.backend in ("dask", "ray"):
        refuse_index(args.backend, request)
    elif args.backend == "loky":
        from .placement import local_replicas
        local_replicas(request, args.jobs, "loky")


def run_engine(args: argparse.Namespace) -> tuple[str | None, str]:
    """The engine ``perturb bench`` runs on (None: this process) and why, in one line: ``--backend``
    as given, else :func:`~.placement.default_engine` (local replicas where several GPUs are usable)."""
    if args.backend is not None:
        return args.backend, f"--backend {args.backend}"
    return default_engine(parse_spec(args.model)[0], args.device, args.jobs, device_map=args.device_map,
                          rerank=args.rerank is not None)


def bench_plan(args: argparse.Namespace, n_items: int, jobs: Sequence[Job]) -> Plan:
    """What ``perturb bench`` with these options would run, and where."""
    from .replicas import planned_replicas

    kind = model_kind(args.model)
    texts = caption_sets(jobs)
    notes = [] if kind else ["the model's kind (dual or cross) is known only once built; planned as a dual encoder"]
    engine, reason = run_engine(args)
    if engine is None:
        device = args.device if args.device != "auto" else ("cuda" if visible_gpus() else "cpu")
        return Plan("in-process", [Replica("driver", device, this_host())], 1, "shard (every configuration)",
                    None, device, args.perturb_device, notes, reason)
    replicas = planned_replicas(engine, args.scheduler, args.jobs, args.device, args.perturb_device)
    gpus = on_gpus(replicas)
    model_device = "cpu" if args.device == "cpu" or not gpus else "cuda:0 of each replica"
    perturb = args.perturb_device and ("cuda:0 of each replica" if gpus and args.perturb_device.startswith("cuda")
                                       else args.perturb_device)
    if kind == "cross":
        return Plan(engine, replicas, len(jobs) + 1, "configurations (one each, clean included)",
                    args.scheduler, model_device, perturb, notes, reason)
    videos = shards(n_items, args.batch_size, len(replicas), gpus)
    return Plan(engine, replicas, len(texts) + len(videos),
                f"shards ({len(texts)} caption set(s), {len(videos)} video shard(s))",
                args.scheduler, model_device, perturb, notes, reason)


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
