"""Every video op on both paths against the library a user would pick instead, in one run.

numpy path (uint8 (T, H, W, 3)) against albumentations 2.0.8's nearest op (pixelate against
Pillow's BOX + NEAREST resizes), torch path (float (T, C, H, W) in [0, 1] on the CPU) against
kornia 0.9.0's nearest op on the same tensor, and torch-CPU time / numpy time for every op.
Ours go through the public ``perturb.video.apply``; the peers and their draws are in
:mod:`benchmarks.library_ops`. Per (op, severity), ours and albumentations are timed in
interleaved rounds (``harness.interleaved``), then ours and kornia on the tensor; ratio = peer
time / ours, so >= 1 means ours is at least as fast.
A peer that is not installed or fails is reported as such and the rest still runs.
"""
from __future__ import annotations

import contextlib
import itertools
import time
import warnings
from typing import Any, Callable

import numpy as np

from perturb.registry import REGISTRY
from perturb.video.api import apply

from .harness import Settings, failure, float_clip, interleaved, ms, table, threads_held, timed
from .library_ops import albumentations_contenders, kornia_contender

SEVERITIES = (1, 3, 5)
TORCH_CPU_LIMIT = 1.5                 # torch-CPU time at most this many times the numpy time
TORCH_THREADS = 1                     # ours and kornia alike: a DataLoader worker's setting (torch's own
                                      # threads spin on a loaded 2-core machine: 1.4-2 s for a 0.1 s op)
ONE_THREAD_NUMPY = "single:numpy"     # the numpy path timed in the torch group, on its one thread
FLOAT_FLOOR = "single:float-floor"    # the float clip's conversions alone, timed beside it


def _versions() -> dict[str, str]:
    found = {}
    for module in ("albumentations", "kornia", "torch", "PIL"):
        try:
            found[module] = __import__(module).__version__
        except Exception as exc:                         # noqa: BLE001 - absent or broken: say which
            found[module] = f"unavailable ({type(exc).__name__}: {exc})"
    return found


def _guarded(build: Callable[[], Any]) -> tuple[Any, str]:
    """``build()`` or (None, the reason it failed)."""
    try:
        return build(), ""
    except Exception as exc:                             # noqa: BLE001 - a peer's failure is data
        return None, failure(exc)


def _contenders(name: str, severity: int, clip: np.ndarray, x: Any) -> tuple[dict[str, Callable], dict[str, Any]]:
    """Ours (numpy, torch) and the peers' callables for one row, and the row's peer notes."""
    params = REGISTRY.get(name, "video").params(severity)
    seeds = itertools.count()             # a new draw per call, as the peers draw anew (no cached layers)
    runs: dict[str, Callable] = {"numpy": lambda: apply(clip, name, severity, seed=next(seeds))}
    if x is not None:
        runs["torch"] = lambda: apply(x, name, severity, seed=next(seeds))
        runs[ONE_THREAD_NUMPY] = runs["numpy"]           # timed in the torch group: one thread, as torch
        runs[FLOAT_FLOOR] = _float_round_trip(x)
    notes: dict[str, Any] = {}
    albu, why = _guarded(lambda: albumentations_contenders(name, params, clip))
    if albu and albu[1]:
        notes["albumentations_op"] = albu[0]
        runs.update({f"albumentations:{k}": v for k, v in albu[1].items()})
    elif why:
        notes["albumentations_error"] = why
    if x is not None:
        korn, why = _guarded(lambda: kornia_contender(name, params, x))
        if korn and korn[1] is not None:
            notes["kornia_op"] = korn[0]
            runs["kornia"] = korn[1]
        elif why:
            notes["kornia_error"] = why
    return runs, notes


def _checked(runs: dict[str, Callable], notes: dict[str, Any]) -> dict[str, Callable]:
    """The contenders that run once without error: a failing peer or torch path is dropped and
    noted; our numpy path is kept, so its failure stops the run."""
    kept = {}
    for key, run in runs.items():
        _, why = _guarded(run)
        if why and key != "numpy":
            notes.setdefault("errors", {})[key] = why
        else:
            kept[key] = run
    return kept


NUMPY_GROUP = ("numpy", "albumentations")
TORCH_GROUP = ("torch", "kornia", ONE_THREAD_NUMPY, FLOAT_FLOOR)


def _group(name: str, severity: int, clip: np.ndarray, x: Any, settings: Settings,
           group: tuple[str, ...]) -> tuple[dict[str, float], dict[str, Any]]:
    """One (op, severity)'s contenders of ``group``, interleaved: the numpy group (ours and
    albumentations) at the default threads, the torch group (ours on the tensor, kornia, and our
    numpy path and the float floor beside them) on one thread for torch and OpenCV alike."""
    runs, notes = _contenders(name, severity, clip, x)
    runs = _checked({k: v for k, v in runs.items() if k.startswith(group)}, notes)
    if not runs:
        return {}, notes
    return interleaved({k: timed(v) for k, v in runs.items()}, settings), notes


def _row(name: str, severity: int, times: dict[str, float], notes: dict[str, Any]) -> dict[str, Any]:
    """One (op, severity)'s figures and ratios from both groups' times."""
    row: dict[str, Any] = {"op": name, "severity": severity, "numpy_s": times["numpy"], **notes}
    if "torch" in times:
        row["torch_s"] = times["torch"]
        row["numpy_one_thread_s"] = times[ONE_THREAD_NUMPY]
        row["torch_over_numpy"] = times["torch"] / times[ONE_THREAD_NUMPY]       # one thread each
        row["torch_over_numpy_default_threads"] = times["torch"] / times["numpy"]
        row["float_floor_s"] = times[FLOAT_FLOOR]
        row["torch_over_floor"] = times["torch"] / (times[ONE_THREAD_NUMPY] + times[FLOAT_FLOOR])
    albu = {k.split(":", 1)[1]: v for k, v in times.items() if k.startswith("albumentations:")}
    if albu:
        row["albumentations_s"] = min(albu.values())
        row["albumentations_ways_s"] = albu
        row["albumentations_ratio"] = row["albumentations_s"] / times["numpy"]
    if "kornia" in times and "torch" in times:
        row["kornia_s"] = times["kornia"]
        row["kornia_ratio"] = times["kornia"] / times["torch"]
    return row


def run(clip: np.ndarray, settings: Settings, log=print, ops: list[str] | None = None) -> dict[str, Any]:
    """Every op (or ``ops``) at severities 1, 3 and 5, ours and the peers interleaved: the numpy
    group of every row first, then the torch group of every row. Torch work changes the process's
    allocator state, which moved a numpy kernel timed after it (snow: 9.6-10 ms a clip alone,
    15.5-16.5 ms after the torch group of its own row, the same code)."""
    warnings.filterwarnings("ignore", module="albumentations")
    x, why = _guarded(lambda: float_clip(clip))
    keys = [(name, s) for name in (ops or [s.name for s in REGISTRY.select("video")]) for s in SEVERITIES]
    times: dict[tuple[str, int], dict[str, float]] = {key: {} for key in keys}
    notes: dict[tuple[str, int], dict[str, Any]] = {key: {} for key in keys}
    start = time.perf_counter()
    phases = [(NUMPY_GROUP, contextlib.nullcontext())]
    if x is not None:
        phases.append((TORCH_GROUP, threads_held(TORCH_THREADS)))
    for group, threads in phases:
        with threads:
            for key in keys:
                got, said = _group(*key, clip, x, settings, group)
                times[key].update(got)
                notes[key].update(said)
                log(f"  {key[0]} s{key[1]}: " + ", ".join(f"{k} {ms(v)} ms" for k, v in got.items()))
    rows = [_row(*key, times[key], notes[key]) for key in keys]
    return {"frames": int(clip.shape[0]), "size": list(clip.shape[1:3]), "versions": _versions(),
            "torch_threads": TORCH_THREADS if x is not None else None,
            "torch_error": why, "seconds": time.perf_counter() - start, "rows": rows}


def _float_round_trip(x: Any) -> Callable[[], Any]:
    """What a float clip on the CPU costs whatever the op: the range check, quantising to uint8
    frames and converting them back into a fresh float clip (the CPU route's conversions,
    :mod:`perturb.video.layouts`), timed in every row beside the torch path."""
    from perturb.video.clip import torch_layout
    from perturb.video.layouts import from_host_frames, host_frames

    return lambda: from_host_frames(host_frames(x, torch_layout(x)), "TCHW", x.dtype)


def _ratio(value: float | None, target: float, higher_is_better: bool = True) -> str:
    if value is None:
        return ""
    ok = value >= target if higher_is_better else value <= target
    return f"{value:.2f}" if ok else f"**{value:.2f}**"


def _spread(seconds: list[float]) -> str:
    return f"{ms(min(seconds))}-{ms(max(seconds))}" if seconds else "not timed"


def render(section: dict[str, Any]) -> str:
    """Both tables: numpy vs albumentations (with torch-CPU / numpy for every op), torch vs kornia."""
    v = section.get("versions", {})
    numpy_rows = [(r["op"], r["severity"], ms(r["numpy_s"]), r.get("albumentations_op", ""),
                   ms(r["albumentations_s"]) if "albumentations_s" in r else "",
                   _ratio(r.get("albumentations_ratio"), 1.0),
                   ms(r["numpy_one_thread_s"]) if "numpy_one_thread_s" in r else "",
                   ms(r["torch_s"]) if "torch_s" in r else "",
                   _ratio(r.get("torch_over_numpy"), TORCH_CPU_LIMIT, higher_is_better=False),
                   f"{r['torch_over_floor']:.2f}" if "torch_over_floor" in r else "")
                  for r in section["rows"]]
    torch_rows = [(r["op"], r["severity"], ms(r["torch_s"]), r["kornia_op"], ms(r["kornia_s"]),
                   _ratio(r["kornia_ratio"], 1.0)) for r in section["rows"] if "kornia_s" in r]
    errors = [f"- {r['op']} s{r['severity']}: {e}" for r in section["rows"]
              for e in [r.get("albumentations_error"), r.get("kornia_error"), *r.get("errors", {}).values()] if e]
    head = (f"{section['frames']} frames {section['size'][0]}x{section['size'][1]}, ms per clip, medians of "
            "interleaved rounds (numpy with albumentations, then torch with kornia); ratio = peer / ours "
            f"(bold: below 1.0; torch/numpy bold above {TORCH_CPU_LIMIT}). albumentations "
            f"{v.get('albumentations', '?')}, kornia {v.get('kornia', '?')}, torch {v.get('torch', '?')} (CPU, "
            f"{section.get('torch_threads') or 'default'} thread(s) for torch and OpenCV, ours and kornia alike; "
            "torch/numpy compares the two paths on that one thread). "
            + "torch/floor = torch-CPU / (numpy 1-thread + the float clip's floor: its range check, quantising "
              "and the conversion back to a fresh float clip, timed in the same row), what the CPU route costs "
              "at least; float floor " + _spread([r["float_floor_s"] for r in section["rows"] if "float_floor_s" in r])
            + f" ms. Section time {section.get('seconds', 0):.0f} s.")
    parts = [head, "numpy path vs albumentations (pixelate: vs Pillow), and torch-CPU / numpy for every op:",
             table(["op", "sev", "numpy ms", "peer op", "peer ms", "ratio", "numpy 1-thread ms", "torch-CPU ms",
                    "torch/numpy", "torch/floor"], numpy_rows),
             "torch path (float (T, C, H, W) in [0, 1], CPU) vs kornia:",
             table(["op", "sev", "torch ms", "kornia op", "kornia ms", "ratio"], torch_rows)]
    if errors:
        parts.append("Contenders that failed (left out of their row):\n\n" + "\n".join(errors))
    return "\n\n".join(parts)
