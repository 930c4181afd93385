"""The builder's unit of work: one input video → its perturbed outputs (or one caption set).

:func:`run_task` is the single task function every engine runs. It is pure apart from the
files it writes: outputs go to a temporary name, are fsynced and then renamed, and the
manifest rows are returned to the caller, which alone appends them.

Memory: each output gets a :class:`Strategy`, chosen once per process by :func:`strategy`:

- ``stream``: the kernel gives the same result applied window by window (one Generator
  carried across windows) as on the whole clip; checked on a small synthetic clip for windows
  of 64 frames (per-frame ops, short segments), then 192 (the GOP-12 codecs). The output
  equals ``perturb.video.apply(clip, name, severity, seed=item_seed)``.
- ``windowed``: a random, non-temporal kernel whose draws do not split at frame boundaries
  (e.g. one that seeds blocks of values rather than frames). Frames are still independent, so
  each 64-frame window k is perturbed with its own Generator ``derive_seed(item_seed, "window",
  k)``; the output equals :func:`apply_windowed` on the whole clip.
- ``whole``: anything else (box_jumble, reverse_sampling, freeze): the whole decoded clip.

The first two hold about one window of frames per output, whatever the video's length.
"""
from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import MissingResourceError
from ..registry import Spec
from ..rng import derive_seed
from . import encode
from .items import Item
from .manifest import row_key, sha256_file

CHUNK = 64            # frames decoded at a time; every window is a multiple of it
WINDOWS = (CHUNK, 3 * CHUNK)   # 64: per-frame ops and segments <= 64; 192: codecs (GOP 12)
PROBE_HW = (24, 32)
TMP_MARK = ".part-"   # temporary outputs are hidden files containing this mark


@dataclass(frozen=True)
class Preprocess:
    """Optional resampling before perturbing: short side in pixels and frame rate."""

    short_side: int | None = None
    fps: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"short_side": self.short_side, "fps": self.fps}


@dataclass(frozen=True)
class Output:
    """One planned output file of a video task."""

    spec: Spec
    severity: int
    seed: int
    path: str           # relative to the output directory

    @property
    def params(self) -> dict[str, Any]:
        return self.spec.params(self.severity)


@dataclass(frozen=True)
class VideoTask:
    """An input video and the outputs still to make from it."""

    item: Item
    outputs: tuple[Output, ...]
    out_dir: str
    format: str
    preprocess: Preprocess = field(default_factory=Preprocess)

    @property
    def size(self) -> int:
        return len(self.outputs)


@dataclass(frozen=True)
class TextTask:
    """One text perturbation over every caption of the dataset."""

    spec: Spec
    items: tuple[Item, ...]
    seed: int
    out_dir: str
    path: str

    @property
    def size(self) -> int:
        return 1


def run_task(task: VideoTask | TextTask) -> list[dict[str, Any]]:
    """Run one task and return its manifest rows (never raises for bad inputs)."""
    if isinstance(task, TextTask):
        return [run_text(task)]
    return run_video(task)


# ------------------------------------------------------------------------------- file helpers
def temp_path(final: Path) -> Path:
    """A unique hidden temporary name next to ``final``."""
    return final.with_name(f".{final.name}{TMP_MARK}{uuid.uuid4().hex[:12]}")


def commit(tmp: Path, final: Path) -> tuple[str, int]:
    """fsync a finished temporary file, rename it into place; returns (sha256, bytes)."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    digest = sha256_file(tmp)
    size = tmp.stat().st_size
    os.replace(tmp, final)
    return digest, size


def _discard(path: Path) -> None:
    for p in (path, Path(f"{path}.raw")):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# -------------------------------------------------------------------------------- perturbing
def perturb(spec: Spec, clip: np.ndarray, rng: np.random.Generator, params: dict[str, Any]) -> np.ndarray:
    """Apply a registered kernel to a uint8 (T, H, W, 3) clip and check what comes back."""
    from ..video.render import perturb_clip
    out = np.asarray(perturb_clip(spec, clip, rng, params))
    if out.dtype != np.uint8 or out.ndim != 4 or out.shape[1:] != clip.shape[1:] or not len(out):
        raise ValueError(f"{spec.name} returned {out.dtype} {out.shape} for a {clip.shape} clip; "
                         "expected uint8 frames of the input size")
    return out


@dataclass(frozen=True)
class Strategy:
    """How an output is produced: 'stream', 'windowed' or 'whole', and the window in frames."""

    mode: str
    window: int | None = None


_STRATEGIES: dict[tuple[str, str, int], Strategy] = {}


def strategy(spec: Spec, severity: int) -> Strategy:
    """The :class:`Strategy` for ``spec`` at ``severity`` (cached per process; see the module doc)."""
    key = (spec.name, f"{spec.fn.__module__}.{getattr(spec.fn, '__qualname__', '')}", severity)
    if key not in _STRATEGIES:
        found = Strategy("whole")
        if not spec.extra.get("whole_clip"):
            size = next((w for w in WINDOWS if _same_in_windows(spec, severity, w)), None)
            if size is not None:
                found = Strategy("stream", size)
            elif spec.random and not spec.temporal:
                found = Strategy("windowed", CHUNK)
        _STRATEGIES[key] = found
    return _STRATEGIES[key]


def window_generator(seed: int, index: int) -> np.random.Generator:
    """The Generator of window ``index`` of an output in 'windowed' mode."""
    return np.random.default_rng(derive_seed(seed, "window", index))


def apply_windowed(clip: np.ndarray, spec: Spec, severity: int, seed: int,
                   size: int = CHUNK) -> np.ndarray:
    """A per-frame random op applied window by window, window k drawing from window_generator."""
    params = spec.params(severity)
    return np.concatenate([perturb(spec, clip[i:i + size], window_generator(seed, k), params)
                           for k, i in enumerate(range(0, len(clip), size))])


def reproduce(clip: np.ndarray, spec: Spec, severity: int, seed: int) -> np.ndarray:
    """What the builder writes for a decoded (preprocessed) clip, by the output's strategy."""
    if strategy(spec, severity).mode == "windowed":
        return apply_windowed(clip, spec, severity, seed)
    return perturb(spec, clip, np.random.default_rng(seed), spec.params(severity))


def probe_clip(frames: int) -> np.ndarray:
    """A deterministic moving pattern with mild noise (codecs predict it like real video)."""
    t = np.arange(frames, dtype=np.float32)[:, None, None]
    y = np.arange(PROBE_HW[0], dtype=np.float32)[None, :, None]
    x = np.arange(PROBE_HW[1], dtype=np.float32)[None, None, :]
    base = 128 + 60 * np.sin((x + 2 * t) / 7) + 50 * np.cos((y + t) / 5)
    noise = np.random.default_rng(20240).normal(0, 6, (frames, *PROBE_HW, 3))
    return np.clip(base[..., None] + noise, 0, 255).astype(np.uint8)


def _same_in_windows(spec: Spec, severity: int, size: int) -> bool:
    clip = probe_clip(2 * size + 7)
    params = spec.params(severity)
    try:
        whole = perturb(spec, clip, np.random.default_rng(7), params)
        rng = np.random.default_rng(7)
        pieces = [perturb(spec, clip[i:i + size], rng, params) for i in range(0, len(clip), size)]
    except Exception:  # noqa: BLE001 - a kernel that cannot take short pieces gets whole clips
        return False
    return np.array_equal(whole, np.concatenate(pieces))


# ------------------------------------------------------------------------------------- video
def _row(task: VideoTask, out: Output, **fields: Any) -> dict[str, Any]:
    it = task.item
    return {"key": row_key(it.item_id, out.spec.name, out.severity), "kind": "video",
            "item_id": it.item_id, "video_id": it.video_id, "perturbation": out.spec.name,
            "category": out.spec.category, "severity": out.severity, "seed": out.seed,
            "params": out.params, "path": out.path, "status": "ok", "error": None, **fields}


def run_video(task: VideoTask) -> list[dict[str, Any]]:
    """Make every output of one video; a bad input fails all of them with its error."""
    from ..video import io

    item, pre = task.item, task.preprocess
    try:
        info = io.probe(item.video_path)
    except Exception as exc:  # noqa: BLE001 - any unreadable input is a recorded failure
        return [_row(task, o, status="failed", error=_error(exc), seconds=0.0) for o in task.outputs]
    fps = float(pre.fps or info.fps)
    read_opts = dict(fps=pre.fps, size=pre.short_side, start=item.start, end=item.end)
    plans = {o.path: strategy(o.spec, o.severity) for o in task.outputs}
    streamed = [o for o in task.outputs if plans[o.path].mode != "whole"]
    whole = [o for o in task.outputs if plans[o.path].mode == "whole"]
    rows: list[dict[str, Any]] = []
    if streamed:
        rows += _run_streamed(task, streamed, plans, read_opts, fps)
    if whole:
        rows += _run_whole(task, whole, read_opts, fps)
    order = {o.path: i for i, o in enumerate(task.outputs)}
    rows.sort(key=lambda r: order[r["path"]])
    for r in rows:
        r["seconds"] = round(r["seconds"], 4)
    return rows


class _Job:
    """An output being written: its sink, generator, temp file and timing."""

    def __init__(self, task: VideoTask, out: Output, fps: float,
                 plan: Strategy = Strategy("whole")) -> None:
        self.out, self.plan = out, plan
        self.size = plan.window               # window length; None: one call with everything
        self.windows = 0
        self.pending: list[np.ndarray] = []   # decoded chunks not yet perturbed (shared arrays)
        self.buffered = 0
        self.final = Path(task.out_dir) / out.path
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = temp_path(self.final)
        self.sink = encode.open_sink(task.format, str(self.tmp), fps)
        self.rng = np.random.default_rng(out.seed)
        self.params = out.params
        self.error: str | None = None
        self.seconds = 0.0
        self.shape: tuple[int, ...] = ()

    def feed(self, chunk: np.ndarray) -> None:
        """Queue decoded frames; perturb and encode every full window."""
        self.pending.append(chunk)
        self.buffered += len(chunk)
        while self.size and self.buffered >= self.size:
            frames = np.concatenate(self.pending) if len(self.pending) > 1 else self.pending[0]
            self._process(frames[:self.size])
            rest = frames[self.size:]
            self.pending, self.buffered = ([rest] if len(rest) else []), len(rest)

    def flush(self) -> None:
        """Perturb and encode what is left (a short last window, or the whole clip)."""
        if self.pending:
            self._process(np.concatenate(self.pending) if len(self.pending) > 1 else self.pending[0])
        self.pending, self.buffered = [], 0

    def _process(self, frames: np.ndarray) -> None:
        if self.error is not None:
            return
        t = time.perf_counter()
        try:
            rng = window_generator(self.out.seed, self.windows) if self.plan.mode == "windowed" else self.rng
            self.windows += 1
            result = perturb(self.out.spec, frames, rng, self.params)
            self.sink.write(result)
            self.shape = result.shape[1:3]
        except Exception as exc:  # noqa: BLE001 - one bad output must not stop the others
            self.error = _error(exc)
        self.seconds += time.perf_counter() - t

    def finish(self, task: VideoTask, fps: float, shared: float) -> dict[str, Any]:
        self.flush()
        mode = self.plan.mode
        t = time.perf_counter()
        if self.error is None:
            try:
                self.sink.close()
                digest, size = commit(self.tmp, self.final)
            except Exception as exc:  # noqa: BLE001
                self.error = _error(exc)
        if self.error is not None:
            self.abort()
            return _row(task, self.out, status="failed", error=self.error, mode=mode, window=self.size,
                        seconds=self.seconds + shared)
        h, w = self.shape
        return _row(task, self.out, sha256=digest, bytes=size, frames=self.sink.frames,
                    height=int(h), width=int(w), fps=fps, mode=mode, window=self.size,
                    seconds=self.seconds + shared + time.perf_counter() - t)

    def abort(self) -> None:
        """Drop the unfinished output."""
        try:
            self.sink.abort()
        except Exception:  # noqa: BLE001 - best effort before deleting the file
            pass
        _discard(self.tmp)


def _run_streamed(task: VideoTask, outputs: list[Output], plans: dict[str, Strategy],
                  read_opts: dict[str, Any], fps: float) -> list[dict[str, Any]]:
    from ..video import io

    jobs = [_Job(task, o, fps, plans[o.path]) for o in outputs]
    decode = 0.0
    try:
        t = time.perf_counter()
        for chunk in io.iter_frames(task.item.video_path, chunk=CHUNK, **read_opts):
            decode += time.perf_counter() - t
            for job in jobs:
                job.feed(chunk)
            t = time.perf_counter()
    except Exception as exc:  # noqa: BLE001 - decode failure (truncated, corrupt) fails them all
        for job in jobs:
            job.abort()
        return [_row(task, j.out, status="failed", error=_error(exc), mode=j.plan.mode,
                     seconds=j.seconds) for j in jobs]
    return [j.finish(task, fps, decode / len(jobs)) for j in jobs]


def _run_whole(task: VideoTask, outputs: list[Output], read_opts: dict[str, Any],
               fps: float) -> list[dict[str, Any]]:
    from ..video import io

    t = time.perf_counter()
    try:
        clip, _ = io.read(task.item.video_path, **read_opts)
    except Exception as exc:  # noqa: BLE001
        return [_row(task, o, status="failed", error=_error(exc), mode="whole", seconds=0.0)
                for o in outputs]
    decode = (time.perf_counter() - t) / len(outputs)
    rows = []
    for o in outputs:
        job = _Job(task, o, fps)
        job.feed(clip)
        rows.append(job.finish(task, fps, decode))
    return rows


# -------------------------------------------------------------------------------------- text
def run_text(task: TextTask) -> dict[str, Any]:
    """Write captions/<perturbation>.jsonl: one row per caption with the applicability flag."""
    from ..text.api import apply_batch

    t0 = time.perf_counter()
    spec = task.spec
    row = {"key": row_key("*", spec.name, None), "kind": "text", "item_id": "*", "video_id": None,
           "perturbation": spec.name, "category": spec.category, "severity": None,
           "seed": task.seed, "params": spec.params(None) if not spec.has_severity else
           spec.params(spec.default_severity), "path": task.path, "status": "ok", "error": None}
    final = Path(task.out_dir) / task.path
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(final)
    try:
        refs = [(it, i, c) for it in task.items for i, c in enumerate(it.captions)]
        results = apply_batch([c for _, _, c in refs], spec.name, seed=task.seed)
        with open(tmp, "w", encoding="utf-8") as f:
            for (it, i, c), res in zip(refs, results):
                f.write(json.dumps({"item_id": it.item_id, "video_id": it.video_id,
                                    "caption_index": i, "original": c, "text": str(res),
                                    "applied": bool(res.applied)}, ensure_ascii=False) + "\n")
        digest, size = commit(tmp, final)
    except Exception as exc:  # noqa: BLE001 - recorded; a missing model or resource is 'skipped'
        _discard(tmp)
        status = "skipped" if isinstance(exc, MissingResourceError) else "failed"
        return {**row, "status": status, "error": _error(exc),
                "seconds": round(time.perf_counter() - t0, 4)}
    applied = sum(bool(r.applied) for r in results)
    return {**row, "sha256": digest, "bytes": size, "captions": len(results),
            "applied_rate": round(applied / len(results), 6) if results else None,
            "seconds": round(time.perf_counter() - t0, 4)}
