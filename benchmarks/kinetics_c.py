"""Kinetics-C's rain, temporal_blur and frame_rate against the reference, timed alternately on one clip.

The reference (Yi et al. 2021, github.com/Newbeeyoung/Video-Corruption-Robustness) is a pair of
scripts that import its training code at module level, so it is not imported: its rain and
motion_blur are re-stated below step by step (same operations, float64, the global numpy RNG
drawn in the same order, a Python loop over drops, OpenCV lines and box blur), and its
frame_rate, an ffmpeg command, is run as ffmpeg's ``fps`` filter there and back
(``-vf fps=R,fps=30``) through a temporary file.

- temporal_blur (deterministic): PSNR between our output under the kinetics-c table and the
  reference's on the frames both produce (the reference drops the first and last c).
- rain (random): output statistics of ours with ``per_frame=True`` (a new sheet per frame, as the
  reference draws per image) against the reference seeded from outside (``np.random.seed``):
  streak coverage, mean change of the levels, output mean and std, PSNR to the clean clip.
- frame_rate: whether our frame choice equals ffmpeg's on a clip whose frames carry their index.
Speed is per clip; ours is timed with a new seed every round (rain's sheet is drawn every time).
"""
from __future__ import annotations

import itertools
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from perturb.video.api import apply, draw
from perturb.video.psnr import psnr
from perturb.video.kernels.rain import frame_masks
from perturb.video.severity_params import SEVERITY_PARAMS, SUITE_PARAMS

from .harness import Settings, interleaved, ms, speed_table, timed

NEEDS = ("ffmpeg",)          # command-line peers, checked before any timing (harness.unmet)
SEVERITIES = (1, 3, 5)
TARGET = 5.0
CLIP_FPS = 30


# ------------------------------------------------------------------------ reference, re-stated
def reference_temporal_blur(clip: np.ndarray, c: int) -> np.ndarray:
    """Output i (c <= i < T - c) is the float64 mean of frames i-c .. i+c-1, truncated to uint8."""
    return np.stack([(clip[i - c:i + c].sum(axis=0, dtype=np.float64) / (2.0 * c)).astype(np.uint8)
                     for i in range(c, clip.shape[0] - c)])


def reference_rain_frame(frame: np.ndarray, severity: int) -> tuple[np.ndarray, float]:
    """One image under the reference's rain, its random draws from numpy's global RNG in its order;
    also the fraction of pixels its streaks cover."""
    h, w = frame.shape[:2]
    row = SEVERITY_PARAMS["rain"]
    per_drop, length, darken = (row[k][severity - 1] for k in ("area", "length", "darken"))
    slant = np.random.randint(-10, 10)                    # drawn, but streaks are rendered at -1
    starts = []
    for _ in range((h * w) // per_drop):
        x = np.random.randint(slant, w) if slant < 0 else np.random.randint(0, w - slant)
        starts.append((x, np.random.randint(0, h - length)))
    mask = np.zeros((h, w))
    for x, y in starts:
        cv2.line(mask, (x, y), (x - 1, y + length), (220, 220, 220), 1)
    m = np.dstack([mask] * 3)
    lifted = frame + np.array(m * (1 - frame / 255.0) * (1 - np.mean(frame) / 255.0), dtype=np.uint8)
    blended = cv2.blur(lifted, (3, 3)) * m / 255.0 + frame * (1 - m / 255.0)
    v = blended / 255.0
    means = v.mean(axis=(0, 1), keepdims=True)
    out = (np.clip((v - means) * darken + means, 0, 1) * 255).astype(np.uint8)
    return out, float((mask > 0).mean())


def reference_rain(clip: np.ndarray, severity: int) -> tuple[np.ndarray, float]:
    """The clip frame by frame, as the reference's script applies it; mean streak coverage."""
    outs = [reference_rain_frame(f, severity) for f in clip]
    return np.stack([o for o, _ in outs]), float(np.mean([c for _, c in outs]))


def ffmpeg_frame_rate(clip: np.ndarray, fps: int, work: Path) -> np.ndarray:
    """The clip through ffmpeg's fps filter to ``fps`` and back to 30, raw frames in and out."""
    t, h, w, _ = clip.shape
    src, dst = work / "in.rgb", work / "out.rgb"
    clip.tofile(src)
    raw = ["-f", "rawvideo", "-pix_fmt", "rgb24"]
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", *raw, "-s", f"{w}x{h}", "-r", str(CLIP_FPS),
                    "-i", str(src), "-vf", f"fps={fps},fps={CLIP_FPS}", *raw, str(dst)], check=True)
    return np.fromfile(dst, np.uint8).reshape(-1, h, w, 3)


# -------------------------------------------------------------------------------- equivalence
def rain_stats(out: np.ndarray, clip: np.ndarray, coverage: float) -> dict[str, float]:
    change = out.astype(np.float32) - clip.astype(np.float32)
    return {"coverage": coverage, "mean_change": float(change.mean()), "mean": float(out.mean()),
            "std": float(out.std()), "psnr_db": psnr(out, clip)}


def rain_equivalence(clip: np.ndarray, severity: int) -> dict[str, Any]:
    np.random.seed(severity)
    peer_out, peer_cover = reference_rain(clip, severity)
    d = draw("rain", severity, len(clip), seed=severity, per_frame=True)
    ours_out = d.render_clip(clip)
    ours_cover = float(frame_masks(d.drawn, d.params, np.arange(len(clip)), *clip.shape[1:3]).mean())
    ours, peer = rain_stats(ours_out, clip, ours_cover), rain_stats(peer_out, clip, peer_cover)
    text = (f"covered {ours['coverage']:.3f}/{peer['coverage']:.3f}, change {ours['mean_change']:+.1f}/"
            f"{peer['mean_change']:+.1f}, mean {ours['mean']:.1f}/{peer['mean']:.1f}, std {ours['std']:.1f}/"
            f"{peer['std']:.1f}, PSNR {ours['psnr_db']:.2f}/{peer['psnr_db']:.2f} dB")
    return {"kind": "stats", "ours": ours, "peer": peer, "text": text}


def blur_equivalence(clip: np.ndarray, severity: int) -> dict[str, Any]:
    c = SUITE_PARAMS["kinetics-c"]["temporal_blur"]["c"][severity - 1]
    ours = apply(clip, "temporal_blur:kinetics-c", severity)[c:len(clip) - c]
    value = psnr(ours, reference_temporal_blur(clip, c))
    return {"kind": "psnr", "c": c, "psnr_db": value, "text": f"c={c}: PSNR {value:.1f} dB"}


def frame_rate_equivalence(severity: int, work: Path, frames: int = 64) -> dict[str, Any]:
    fps = SEVERITY_PARAMS["frame_rate"]["fps"][severity - 1]
    coded = np.repeat((np.arange(frames) * 4).astype(np.uint8), 8 * 8 * 3).reshape(frames, 8, 8, 3)
    kept = (ffmpeg_frame_rate(coded, fps, work)[:frames, 4, 4, 0].astype(int) + 2) // 4
    ours = draw("frame_rate", severity, frames).drawn["index"]
    same = int((kept == ours[:len(kept)]).sum())
    return {"kind": "frames", "fps": fps, "same": same, "frames": int(len(kept)),
            "text": f"{fps} fps: {same}/{len(kept)} frames as ffmpeg fps={fps},fps=30"}


# ------------------------------------------------------------------------------------- timing
def run(clip: np.ndarray, settings: Settings, log=print) -> dict[str, Any]:
    """Every op at severities 1, 3, 5: ours against the reference, same clip, interleaved."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in ("temporal_blur", "rain", "frame_rate"):
            for s in SEVERITIES:
                seeds = itertools.count(1000 * s)
                ref = f"{name}:kinetics-c" if name == "temporal_blur" else name
                contenders = {"ours": timed(lambda: apply(clip, ref, s, seed=next(seeds)))}
                if name == "temporal_blur":
                    c = SUITE_PARAMS["kinetics-c"]["temporal_blur"]["c"][s - 1]
                    contenders["peer"] = timed(lambda: reference_temporal_blur(clip, c))
                    eq = blur_equivalence(clip, s)
                elif name == "rain":
                    contenders["peer"] = timed(lambda: reference_rain(clip, s))
                    contenders["per_frame"] = timed(
                        lambda: apply(clip, "rain", s, seed=next(seeds), per_frame=True))
                    eq = rain_equivalence(clip, s)
                else:
                    fps = SEVERITY_PARAMS["frame_rate"]["fps"][s - 1]
                    contenders["peer"] = timed(lambda: ffmpeg_frame_rate(clip, fps, work))
                    eq = frame_rate_equivalence(s, work)
                times = interleaved(contenders, settings)
                ratio = times["peer"] / times["ours"]
                row = {"op": name, "severity": s, "ours_s": times["ours"], "peer_s": times["peer"],
                       "speedup": ratio, "target": TARGET, "met": ratio >= TARGET, "equivalence": eq}
                if "per_frame" in times:
                    row["per_frame_s"] = times["per_frame"]
                rows.append(row)
                log(f"  {name} s{s}: ours {ms(times['ours'])} ms, reference {ms(times['peer'])} ms, "
                    f"{ratio:.1f}x ({eq['text']})")
    return {"frames": int(clip.shape[0]), "size": list(clip.shape[1:3]), "rows": rows,
            "peer": {"reference": "Newbeeyoung/Video-Corruption-Robustness (re-stated; frame_rate: ffmpeg)",
                     "ffmpeg": subprocess.run(["ffmpeg", "-version"], capture_output=True,
                                              text=True).stdout.split("\n")[0]}}


def render(section: dict[str, Any]) -> str:
    """The section as a table."""
    text = speed_table(section["rows"], "reference", "equivalence (ours/reference, reference params)")
    per_frame = [r for r in section["rows"] if "per_frame_s" in r]
    if per_frame:
        text += ("\n\nRain with per_frame=True (a new sheet for every frame, same run): " + ", ".join(
            f"s{r['severity']} {ms(r['per_frame_s'])} ms/clip ({r['peer_s'] / r['per_frame_s']:.1f}x)"
            for r in per_frame) + ".")
    return text
