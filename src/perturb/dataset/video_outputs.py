"""One input video -> its perturbed output files, each by its :class:`~.strategy.Strategy`.

Outputs in 'render', 'stream', 'counted' and 'windowed' mode share one decoding pass, chunk
by chunk ('counted' ones after a first pass that counts the frames); 'whole' ones decode the
clip once. A bad input or a failing kernel is recorded in the row, never raised.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from . import encode
from .manifest import row_key
from .staging import commit, discard, error_text, temp_path
from .strategy import CHUNK, Strategy, perturb, render_draw, strategy, window_generator
from .work_units import Output, VideoTask


def _row(task: VideoTask, out: Output, **fields: Any) -> dict[str, Any]:
    it = task.item
    return {"key": row_key(it.item_id, out.spec.ref, out.severity), "kind": "video",
            "item_id": it.item_id, "video_id": it.video_id, "perturbation": out.spec.ref,
            "category": out.spec.category, "severity": out.severity, "seed": out.seed,
            "params": out.params, "path": out.path, "status": "ok", "error": None, **fields}


def run_video(task: VideoTask) -> list[dict[str, Any]]:
    """Make every output of one video; a bad input fails all of them with its error."""
    from ..video import io

    item, pre = task.item, task.preprocess
    try:
        info = io.probe(item.video_path)
    except Exception as exc:  # noqa: BLE001 - any unreadable input is a recorded failure
        return [_row(task, o, status="failed", error=error_text(exc), seconds=0.0) for o in task.outputs]
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
                 plan: Strategy = Strategy("whole"), n_frames: int | None = None) -> None:
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
        self.draw = None                      # render / counted: one draw, windows rendered from it
        if plan.mode == "render":
            self.draw = render_draw(out.spec, self.params, self.rng)
        elif plan.mode == "counted" and n_frames:    # none: no frames, reported at finish
            self.draw = render_draw(out.spec, self.params, self.rng, n_frames)
        self.done = 0                         # frames perturbed so far (the next window's offset)
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
            if self.draw is not None:           # frames done..done+n of the clip, one draw
                result = self.draw.render(frames, np.arange(self.done, self.done + len(frames)))
            else:
                rng = window_generator(self.out.seed, self.windows) if self.plan.mode == "windowed" else self.rng
                result = perturb(self.out.spec, frames, rng, self.params)
            self.windows += 1
            self.done += len(frames)
            self.sink.write(result)
            self.shape = result.shape[1:3]
        except Exception as exc:  # noqa: BLE001 - one bad output must not stop the others
            self.error = error_text(exc)
        self.seconds += time.perf_counter() - t

    def finish(self, task: VideoTask, fps: float, shared: float) -> dict[str, Any]:
        self.flush()
        mode = self.plan.mode
        t = time.perf_counter()
        if self.error is None:
            try:
                if not self.sink.frames_written:
                    raise ValueError(f"no frames were written to {self.final}")
                self.sink.close()
                digest, size = commit(self.tmp, self.final)
            except Exception as exc:  # noqa: BLE001
                self.error = error_text(exc)
        if self.error is not None:
            self.abort()
            return _row(task, self.out, status="failed", error=self.error, mode=mode, window=self.size,
                        seconds=self.seconds + shared)
        h, w = self.shape
        return _row(task, self.out, sha256=digest, bytes=size, frames=self.sink.frames_written,
                    height=int(h), width=int(w), fps=fps, mode=mode, window=self.size,
                    seconds=self.seconds + shared + time.perf_counter() - t)

    def abort(self) -> None:
        """Drop the unfinished output."""
        try:
            self.sink.abort()
        except Exception:  # noqa: BLE001 - best effort before deleting the file
            pass
        discard(self.tmp)


def _run_streamed(task: VideoTask, outputs: list[Output], plans: dict[str, Strategy],
                  read_opts: dict[str, Any], fps: float) -> list[dict[str, Any]]:
    from ..video import io

    t = time.perf_counter()
    n_frames = None
    if any(plans[o.path].mode == "counted" for o in outputs):
        try:                                  # the clip's length, for the draws made for it
            n_frames = sum(len(c) for c in io.iter_frames(task.item.video_path, chunk=CHUNK, **read_opts))
        except Exception as exc:  # noqa: BLE001 - as a failure of the decoding pass below
            return [_row(task, o, status="failed", error=error_text(exc), mode=plans[o.path].mode,
                         seconds=0.0) for o in outputs]
    decode = time.perf_counter() - t
    jobs = [_Job(task, o, fps, plans[o.path], n_frames) for o in outputs]
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
        return [_row(task, j.out, status="failed", error=error_text(exc), mode=j.plan.mode,
                     seconds=j.seconds) for j in jobs]
    return [j.finish(task, fps, decode / len(jobs)) for j in jobs]


def _run_whole(task: VideoTask, outputs: list[Output], read_opts: dict[str, Any],
               fps: float) -> list[dict[str, Any]]:
    from ..video import io

    t = time.perf_counter()
    try:
        clip, _ = io.read(task.item.video_path, **read_opts)
    except Exception as exc:  # noqa: BLE001
        return [_row(task, o, status="failed", error=error_text(exc), mode="whole", seconds=0.0)
                for o in outputs]
    decode = (time.perf_counter() - t) / len(outputs)
    rows = []
    for o in outputs:
        job = _Job(task, o, fps)
        job.feed(clip)
        rows.append(job.finish(task, fps, decode))
    return rows
