"""Measured floors of the ops that still miss their peer: ``python -m benchmarks --sections floors``.

For each floor of :mod:`benchmarks.floor_steps` (severity 3, the sample clip), one interleaved run
times our op through ``perturb.video.apply``, the peer's op (:mod:`benchmarks.library_ops`:
albumentations on the uint8 clip, kornia on the float tensor; a peer that cannot be imported or
fails is skipped and said so) and the floor's steps. Torch rows run with one torch thread and one
OpenCV thread, ours and kornia alike. peer/ours below 1 is the miss; peer/floor below 1 says that
no correct implementation of our function reaches the peer with these steps.
"""
from __future__ import annotations

import contextlib
import itertools
import time
import warnings
from typing import Any, Callable

import cv2
import numpy as np

from perturb.registry import REGISTRY
from perturb.video.api import apply

from .floor_steps import FLOORS, Floor
from .harness import Settings, failure, float_clip, interleaved, ms, table, threads_held, timed
from .library_ops import albumentations_contenders, kornia_contender

SEVERITY = 3
TORCH_THREADS = 1                       # torch rows: one torch thread and one OpenCV thread


def _peer(floor: Floor, params: Any, source: Any) -> tuple[str, dict[str, Callable], str]:
    """The peer op's name, its callables (one per way of drawing) and why it is missing ('' if not)."""
    try:
        if floor.path == "numpy":
            name, ways = albumentations_contenders(floor.op, params, source)
        else:
            name, fn = kornia_contender(floor.op, params, source)
            ways = {"tensor": fn} if fn is not None else {}
        if not ways:
            return "", {}, "no nearest peer op"
        for run in ways.values():
            run()                                               # fails here rather than mid-timing
        return name, ways, ""
    except Exception as exc:                                    # noqa: BLE001 - absent or broken: say which
        return "", {}, failure(exc)


def _path_threads(path: str) -> contextlib.AbstractContextManager:
    """One torch thread and one OpenCV thread for torch rows; numpy rows as they are."""
    return threads_held(TORCH_THREADS) if path == "torch" else contextlib.nullcontext()


def measure(floor: Floor, source: Any, settings: Settings) -> dict[str, Any]:
    """One row: ours, the peer (each of its ways) and the floor, interleaved; ratios peer/ours, peer/floor."""
    params = REGISTRY.get(floor.op, "video").params(SEVERITY)
    seeds = itertools.count()                   # a new draw per call, as the peers draw anew
    row: dict[str, Any] = {"op": floor.op, "path": floor.path, "severity": SEVERITY,
                           "floor_steps": list(floor.steps), "floor_why": floor.why}
    with _path_threads(floor.path):
        peer_op, ways, missing = _peer(floor, params, source)
        contenders = {"ours": timed(lambda: apply(source, floor.op, SEVERITY, seed=next(seeds))),
                      "floor": timed(floor.build(source, params)),
                      **{f"peer:{k}": timed(v) for k, v in ways.items()}}
        times = interleaved(contenders, settings)
    row.update(ours_s=times["ours"], floor_s=times["floor"], ours_over_floor=times["ours"] / times["floor"])
    peer = {k.split(":", 1)[1]: v for k, v in times.items() if k.startswith("peer:")}
    if peer:
        row.update(peer_op=peer_op, peer_s=min(peer.values()), peer_ways_s=peer)
        row.update(peer_over_ours=row["peer_s"] / row["ours_s"], peer_over_floor=row["peer_s"] / row["floor_s"])
    else:
        row["peer_missing"] = missing
    return row


def run(clip: np.ndarray, settings: Settings, log=print, ops: list[str] | None = None) -> dict[str, Any]:
    """Every floor (or those of ``ops``), numpy rows on ``clip``, torch rows on its float tensor."""
    warnings.filterwarnings("ignore", module="albumentations")
    floors = [f for f in FLOORS if ops is None or f.op in ops]
    x, torch_missing = None, ""
    if any(f.path == "torch" for f in floors):
        try:
            x = float_clip(clip)
        except Exception as exc:                                # noqa: BLE001 - no torch: numpy rows only
            torch_missing = failure(exc)
            log(f"  torch rows skipped: {torch_missing}")
    rows, start = [], time.perf_counter()
    for floor in floors:
        if floor.path == "torch" and x is None:
            continue
        rows.append(measure(floor, clip if floor.path == "numpy" else x, settings))
        r = rows[-1]
        peer = (f"{r['peer_op']} {ms(r['peer_s'])} ms" if "peer_s" in r
                else f"peer skipped ({r['peer_missing']})")
        log(f"  {r['op']} {r['path']}: ours {ms(r['ours_s'])} ms, {peer}, floor {ms(r['floor_s'])} ms")
    return {"frames": int(clip.shape[0]), "size": list(clip.shape[1:3]), "severity": SEVERITY,
            "opencv_threads": cv2.getNumThreads(), "torch_threads": TORCH_THREADS, "torch_error": torch_missing,
            "seconds": time.perf_counter() - start, "rows": rows}


def _ratio(row: dict[str, Any], key: str) -> str:
    return f"{row[key]:.2f}" if key in row else ""


def render(section: dict[str, Any]) -> str:
    """The floors table, with the peers that were skipped listed under it."""
    body = [(r["op"], r["path"], ms(r["ours_s"]), ms(r["peer_s"]) if "peer_s" in r else "",
             ms(r["floor_s"]), " + ".join(r["floor_steps"]), _ratio(r, "peer_over_ours"), _ratio(r, "peer_over_floor"))
            for r in section["rows"]]
    head = (f"{section['frames']} frames {section['size'][0]}x{section['size'][1]}, severity {section['severity']}, "
            "ms per clip, medians of interleaved rounds (ours, the peer, the floor: numpy steps per frame); "
            "numpy rows with OpenCV's "
            f"{section.get('opencv_threads', '?')} thread(s), torch rows with {section['torch_threads']} torch and "
            f"OpenCV thread. Section time {section.get('seconds', 0):.0f} s.")
    parts = [head, table(["op", "path", "ours ms", "peer ms", "floor ms", "floor steps", "peer/ours", "peer/floor"],
                         body)]
    skipped = [f"- {r['op']} ({r['path']}): peer skipped, {r['peer_missing']}" for r in section["rows"]
               if "peer_missing" in r]
    if section.get("torch_error"):
        skipped.append(f"- torch rows skipped: {section['torch_error']}")
    if skipped:
        parts.append("\n".join(skipped))
    return "\n\n".join(parts)

