"""How the builder produces one output within bounded memory: its :class:`Strategy`.

Each output gets a :class:`Strategy`, chosen once per process by :func:`strategy` for each op,
version, severity and parameters (a per-frame weather or rain op has other parameters, and
another mode, than the same op at the same severity without it):

- ``render``: an op whose output frame t reads input frame t only and whose draw does not
  depend on the clip's length (the noise ops: one key per clip). Its parameters are drawn once
  and each 64-frame window is rendered as frames i..i+63 of the clip, so the output equals
  ``perturb.video.apply(clip, name, severity, seed=item_seed)``.
- ``stream``: the kernel gives the same result applied window by window (one Generator
  carried across windows) as on the whole clip; checked on a small synthetic clip for windows
  of 64 frames (per-frame ops, short segments). The output equals ``apply`` too.
- ``counted``: output frame t reads input frame t only, but the draw depends on the clip's
  length (the weather ops: the drifting layer spans the whole clip). The frames are counted in a
  first decoding pass, the parameters drawn once for that length, and each 64-frame window
  rendered as those frames of the clip: the output equals ``apply`` at the cost of a second decode.
- ``windowed``: a random, non-temporal kernel reading more than its own frame whose draws do not
  split at frame boundaries (none of the built-in ones). Each 64-frame window k is perturbed
  with its own Generator ``derive_seed(item_seed, "window", k)``; the output equals
  :func:`apply_windowed` on the whole clip.
- ``whole``: anything else (box_jumble, reverse_sampling, freeze), and the codecs: the MPEG
  encoders carry rate-control state across GOPs, so no window is safe on real content (a
  192-frame window of mpeg2 differs from the whole-clip encode after frame 192, by up to 36
  levels on the sample clip) even where the synthetic probe agrees; the H.264/H.265 ops
  (Kinetics-C) read a prefix or the whole clip.

All but ``whole`` hold about one window of frames per output, whatever the video's length.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..registry import Spec
from ..rng import derive_seed

CHUNK = 64            # frames decoded at a time; every window is a multiple of it
WINDOWS = (CHUNK,)             # per-frame ops and temporal segments of up to 64 frames
# The probe's frame size: large enough that every op draws something on every frame at every
# level (per-frame rain has one streak per 770 px at level 1: none at all on 24 x 32 frames, so
# a new sheet per window went unseen and per-frame rain streamed in windows unlike apply()).
PROBE_HW = (48, 64)


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
    """How an output is produced: 'render', 'stream', 'counted', 'windowed' or 'whole', and the
    window in frames."""

    mode: str
    window: int | None = None


_STRATEGIES: dict[tuple[str, int, int, tuple[tuple[str, str], ...]], Strategy] = {}


def strategy(spec: Spec, severity: int) -> Strategy:
    """The :class:`Strategy` for ``spec`` at ``severity`` (cached per process, keyed by everything
    that changes the mode: the op, its version, the severity and its parameters; see the module doc)."""
    key = (spec.ref, spec.version, severity, _params_key(spec.params(severity)))
    if key not in _STRATEGIES:
        found = Strategy("whole")
        reads = getattr(spec.render, "reads", None)
        if reads == "frame" and _length_free_draw(spec, severity):
            found = Strategy("render", CHUNK)
        elif reads not in ("prefix", "clip") and not spec.extra.get("whole_clip"):
            size = next((w for w in WINDOWS if _same_in_windows(spec, severity, w)), None)
            if size is not None:
                found = Strategy("stream", size)
            elif reads == "frame":
                found = Strategy("counted", CHUNK)
            elif spec.random and not spec.temporal:
                found = Strategy("windowed", CHUNK)
        _STRATEGIES[key] = found
    return _STRATEGIES[key]


def _params_key(params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Parameters as a hashable key: name and repr of every value (1, 1.0 and True stay apart)."""
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


def _length_free_draw(spec: Spec, severity: int) -> bool:
    """Whether ``spec`` draws the same parameters for a 1-frame and a 1000-frame clip."""
    params = spec.params(severity)
    short = spec.render.draw(np.random.default_rng(7), 1, params)
    long = spec.render.draw(np.random.default_rng(7), 1000, params)
    return short.keys() == long.keys() and all(np.array_equal(short[k], long[k]) for k in short)


MAX_FRAMES = 2**32 - 1                # frame indices of a length-free draw: any clip fits


def render_draw(spec: Spec, params: dict[str, Any], rng: np.random.Generator,
                n_frames: int = MAX_FRAMES) -> Any:
    """The one draw of an output in 'render' mode (valid for clips of any length) or in
    'counted' mode (for the clip's ``n_frames``)."""
    from ..video.render import draw_for
    return draw_for(spec, params, n_frames, rng)


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
