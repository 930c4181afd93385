"""Batches of clips for the video transform: validation, content keys and grouped rendering.

A batch is (B, T, C, H, W) float in [0, 1] or (B, T, H, W, C) uint8, torch on any device, or
numpy uint8 (B, T, H, W, 3); one clip (T, ...) is a batch of one. Samples that drew the same op
and severity render together: ops whose draws are per frame (blur angles, camera offsets,
temporal index maps, deterministic ops) in one kernel call over the group's frames; the
others (noise keys, weather layers, codecs) one sample at a time. Everything goes through
:meth:`perturb.video.Draw.render_clip` (validated once for the batch:
:meth:`~perturb.video.Draw.render_checked`), so the output of a sample is ``perturb.video.apply``'s.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..video import Draw, draw
from ..video.clip import is_torch, to_numpy, torch_layout
from ..video.layouts import to_uint8_frames
from ..video.render import FRAME, INDEX
from .draws import group_params

EXPECTED = ("a batch (B, T, C, H, W) float in [0, 1] or (B, T, H, W, C) uint8 (torch on any device, "
            "or numpy uint8), or one clip (T, ...) of the same kinds")


@dataclass(frozen=True)
class BatchKind:
    """How a batch came in: torch layout (None for numpy) and whether it was one clip."""

    layout: str | None
    single: bool


def check_batch(x: Any) -> tuple[Any, BatchKind]:
    """The batch as (B, T, ...) plus its kind; a clip of the clip model gets a leading axis."""
    torch_in = is_torch(x)
    if not torch_in and not isinstance(x, np.ndarray):
        raise ValueError(f"expected {EXPECTED}; got {type(x).__name__}")
    ndim = len(x.shape)
    if ndim not in (4, 5):
        raise ValueError(f"expected {EXPECTED}; got {'torch' if torch_in else 'numpy'} {x.dtype} "
                         f"with shape {tuple(x.shape)}")
    single = ndim == 4
    misread = layout_misread(tuple(x.shape), str(x.dtype).removeprefix("torch."), torch_in, single)
    if misread:
        raise ValueError(misread)
    batch = x[None] if single else x
    if batch.shape[0] == 0:
        raise ValueError(f"expected a batch of at least one clip; got shape {tuple(x.shape)}")
    frames = batch.reshape(batch.shape[0] * batch.shape[1], *batch.shape[2:])
    if torch_in:          # the clip model's checks over every frame: dtype, channels, range
        return batch, BatchKind(torch_layout(frames), single)
    to_numpy(frames)
    return np.ascontiguousarray(batch), BatchKind(None, single)


# the clip layouts a batch may come in (after its leading B): ours, and kornia's channels before time
LAYOUT_NAMES = {"TCHW": "channels first", "THWC": "channels last",
                "CTHW": "channels before time, as kornia lays out video"}


def layout_misread(shape: tuple[int, ...], dtype: str, torch_in: bool, single: bool) -> str | None:
    """The error for a batch (or one clip) whose 3 channels sit where exactly one other layout keeps
    them and not where its dtype's layout does (float: (B, T, 3, H, W); uint8: (B, T, H, W, 3)):
    it names the layout it reads as and the permute that fixes it. None otherwise (the clip
    model's own checks then speak)."""
    wanted = "THWC" if dtype == "uint8" else "TCHW" if torch_in and "float" in dtype else None
    lead = "" if single else "B"
    has_rgb = [have for have in LAYOUT_NAMES if shape[len(lead) + have.index("C")] == 3]
    if wanted is None or wanted in has_rgb or len(has_rgb) != 1:
        return None
    have = has_rgb[0]
    axes = lambda layout: "(" + ", ".join(lead + layout).replace("C", "3") + ")"    # noqa: E731
    order = ", ".join(str(i) for i in [0] * len(lead) + [len(lead) + have.index(a) for a in wanted])
    noun, verb = ("clip" if single else "batch"), ("permute" if torch_in else "transpose")
    kind = "uint8" if wanted == "THWC" else "float"
    return (f"expected a {kind} {noun} laid out {axes(wanted)}; got {'torch' if torch_in else 'numpy'} {dtype} "
            f"with shape {shape}, which reads as {axes(have)}, {LAYOUT_NAMES[have]}: use "
            f"{noun}.{verb}({order})")


def content_keys(batch: Any, kind: BatchKind) -> list[str]:
    """A key per sample from its content: a digest of its uint8 levels (the values every op
    reads) and shape, so the same clip gets the same key in any layout, on any device."""
    if kind.layout is None:
        levels = batch
    else:
        b, t = batch.shape[:2]
        frames = to_uint8_frames(batch.reshape(b * t, *batch.shape[2:]), kind.layout)    # (N, H, W, 3)
        levels = frames.reshape(b, t, *frames.shape[1:]).cpu().numpy()
    keys = []
    for clip in levels:
        h = hashlib.blake2b(repr(clip.shape).encode(), digest_size=16)
        h.update(np.ascontiguousarray(clip).data)
        keys.append("content:" + h.hexdigest())
    return keys


def fused(draws: Sequence[Draw]) -> Draw | None:
    """One Draw over the group's frames laid end to end, when the op's draws are per frame
    (so frame t of sample i is frame i·T + t of the fused clip); None otherwise."""
    first = draws[0]
    reads, n = first.renderer.reads, first.n_frames
    if reads not in (FRAME, INDEX) or (reads == INDEX and set(first.drawn) != {"index"}):
        return None
    for d in draws:
        if any(not isinstance(v, np.ndarray) or v.ndim < 1 or len(v) != n for v in d.drawn.values()):
            return None
    offsets = {k: (np.arange(len(draws)) * n if reads == INDEX else None) for k in first.drawn}
    drawn = {k: np.concatenate([d.drawn[k] + (0 if offsets[k] is None else offsets[k][i])
                                for i, d in enumerate(draws)]) for k in first.drawn}
    return Draw(first.name, first.severity, n * len(draws), first.params, drawn)


def render_batch(batch: Any, kind: BatchKind, params: Sequence[Mapping[str, Any] | None]) -> Any:
    """A perturbed copy of ``batch``: sample i rendered with ``params[i]`` (None: left as is).

    ``batch`` and ``kind`` come from :func:`check_batch`, so nothing here checks the range again.
    A group holding every sample renders the batch's own frames (no gather) and its output is the
    result (no copy of the input, no scatter)."""
    n, n_frames = batch.shape[:2]
    groups = group_params(params)
    out = None
    for (op, severity), members in groups.items():
        draws = [draw(op, severity, n_frames, seed=params[i]["seed"]) for i in members]
        together = fused(draws) if len(draws) > 1 else draws[0]
        if together is not None and len(members) == n:           # every sample, in order
            frames = batch.reshape(n * n_frames, *batch.shape[2:])
            return _own(together.render_checked(frames, kind.layout).reshape(batch.shape), batch)
        if out is None:                          # a copy only where some sample is left as it is
            out = _new_like(batch, copy=sum(map(len, groups.values())) < n)
        if together is None or len(draws) == 1:
            for i, d in zip(members, draws):
                out[i] = d.render_checked(batch[i], kind.layout)
            continue
        idx = _index(members, batch)
        frames = batch[idx].reshape(len(members) * n_frames, *batch.shape[2:])
        out[idx] = together.render_checked(frames, kind.layout).reshape(len(members), *batch.shape[1:])
    return _new_like(batch, copy=True) if out is None else out


def _new_like(batch: Any, copy: bool) -> Any:
    """A new array like ``batch``: a copy of it, or uninitialised (every sample is written)."""
    if is_torch(batch):
        return batch.detach().clone() if copy else batch.detach().new_empty(batch.shape)
    return batch.copy() if copy else np.empty_like(batch)


def _own(out: Any, batch: Any) -> Any:
    """``out``, copied where it shares memory with ``batch`` (the result never aliases the input)."""
    if is_torch(out):
        shared = out.untyped_storage().data_ptr() == batch.untyped_storage().data_ptr()
        return out.clone() if shared else out
    return out.copy() if np.may_share_memory(out, batch) else out


def _index(members: list[int], batch: Any) -> Any:
    """Sample positions as an index of the batch's own kind (a tensor on its device for torch)."""
    if is_torch(batch):
        import torch
        return torch.as_tensor(members, device=batch.device)
    return np.asarray(members)
