"""Visual ops against imagecorruptions applied frame by frame, timed alternately on the same clip.

Equivalence is measured at the peer's parameters: PSNR between the two outputs (whole clip) for the
deterministic ops (and for motion blur, rendered at the angles the peer drew), residual
statistics (mean and standard deviation of output - input) for the noise ops, and output
statistics (mean PSNR against the clean clip, mean absolute change) for glass blur and the
elastic transform, whose draws cannot be matched (the peer's global RNG is seeded from outside).
Where the peer's constants differ from ours (shot and speckle noise), our kernel is called with
its constants for the equivalence check; the timing uses each library's own severity table,
except for the ops whose levels we reordered (glass blur, saturate): those are timed at the
peer's level so both do the same work. Ours is timed with a new seed every round, so per-clip
draws (glass blur's pixel moves, the elastic field) are paid every time.
"""
from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from perturb.video.api import apply, get
from perturb.video.kernels.blur import render_motion_blur
from perturb.video.psnr import mean_psnr, psnr
from perturb.video.render import perturb_clip
from perturb.video.severity_params import PAPER_PARAMS

from .harness import Settings, interleaved, ms, speed_table, timed
from .peers import PeerWorker

# our name -> peer name
OPS = {"gaussian_noise": "gaussian_noise", "shot_noise": "shot_noise", "impulse_noise": "impulse_noise",
       "speckle_noise": "speckle_noise", "defocus_blur": "defocus_blur", "motion_blur": "motion_blur",
       "zoom_blur": "zoom_blur", "jpeg": "jpeg_compression",
       # ImageNet-C spatial and colour ops
       "gaussian_blur": "gaussian_blur", "glass_blur": "glass_blur", "pixelate": "pixelate",
       "elastic_transform": "elastic_transform", "brightness": "brightness", "contrast": "contrast",
       "saturate": "saturate",
       # ImageNet-C weather
       "fog": "fog", "frost": "frost", "snow": "snow", "spatter": "spatter"}
NOISE = ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise")
# Random ops whose draws differ from the peer's: compared by output statistics.
RANDOM_STATS = ("glass_blur", "elastic_transform")
# Ops whose five levels we reordered by damage: compared and timed at the peer's level.
REORDERED = ("glass_blur", "saturate")
WEATHER = ("fog", "frost", "snow", "spatter")
# A value counts as covered by a weather layer when it moved by more than this many levels.
COVERED_LEVELS = 16
SEVERITIES = (1, 3, 5)
TARGET = {"zoom_blur": 20.0}
DEFAULT_TARGET = 5.0
# The peer's own constants where they differ from ours (imagecorruptions 1.1.2 source).
PEER_PARAMS: dict[str, dict[int, dict[str, Any]]] = {
    "shot_noise": {s: {"photons": c} for s, c in zip(range(1, 6), (60, 25, 12, 5, 3))},
    "speckle_noise": {s: {"sigma": c} for s, c in zip(range(1, 6), (0.15, 0.20, 0.35, 0.45, 0.60))},
    **{name: {s: {k: v[s - 1] for k, v in PAPER_PARAMS[name].items()} for s in range(1, 6)}
       for name in REORDERED},
}


def residual_stats(out: np.ndarray, clip: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation of output - input on the 0..255 scale."""
    r = out.astype(np.float32) - clip.astype(np.float32)
    return float(r.mean()), float(r.std())


def change_stats(out: np.ndarray, clip: np.ndarray) -> tuple[float, float]:
    """Mean per-frame PSNR against the clean clip and mean absolute change, in levels."""
    return mean_psnr(out, clip), float(np.abs(out.astype(np.float32) - clip.astype(np.float32)).mean())


def output_stats(out: np.ndarray, clip: np.ndarray) -> dict[str, float]:
    """Mean and std of the output levels, the fraction of values a layer covers (moved by more
    than COVERED_LEVELS) and the mean PSNR to the clean clip."""
    moved = np.abs(out.astype(np.int16) - clip.astype(np.int16)) > COVERED_LEVELS
    return {"mean": float(out.mean()), "std": float(out.std()), "covered": float(moved.mean()),
            "psnr_db": float(mean_psnr(out, clip))}


def weather_equivalence(name: str, severity: int, clip: np.ndarray, peer_out: np.ndarray) -> dict[str, Any]:
    """Output statistics of ours (a new layer per frame, the image recipe, at the peer's table)
    against the peer's output on the same clip."""
    spec = get(name)
    params = {**spec.params(severity), **((spec.paper or {}).get(severity) or {}), "per_frame": True}
    ours = output_stats(perturb_clip(spec, clip, np.random.default_rng(severity), params), clip)
    peer = output_stats(peer_out, clip)
    text = (f"mean {ours['mean']:.0f}/{peer['mean']:.0f}, std {ours['std']:.0f}/{peer['std']:.0f}, "
            f"covered {ours['covered']:.2f}/{peer['covered']:.2f}, "
            f"PSNR {ours['psnr_db']:.1f}/{peer['psnr_db']:.1f} dB")
    return {"kind": "stats", "ours": ours, "peer": peer, "text": text}


def ours_timed(name: str, severity: int, clip: np.ndarray):
    """Our call for the timing: a new seed every round, at the peer's level where we reordered them."""
    seeds = itertools.count(severity * 1000)
    if name in REORDERED:
        spec, params = get(name), PEER_PARAMS[name][severity]
        return timed(lambda: perturb_clip(spec, clip, np.random.default_rng(next(seeds)), params))
    return timed(lambda: apply(clip, name, severity, seed=next(seeds)))


def equivalence(name: str, severity: int, clip: np.ndarray, peer_out: np.ndarray,
                angles: list[float]) -> dict[str, Any]:
    """How close our output is to the peer's at the peer's parameters."""
    spec = get(name)
    if name in WEATHER:
        return weather_equivalence(name, severity, clip, peer_out)
    params = PEER_PARAMS.get(name, {}).get(severity) or spec.params(severity)
    if name in NOISE:
        ours = perturb_clip(spec, clip, np.random.default_rng(severity), params)
        (m0, s0), (m1, s1) = residual_stats(ours, clip), residual_stats(peer_out, clip)
        return {"kind": "noise", "ours_mean": m0, "ours_std": s0, "peer_mean": m1, "peer_std": s1,
                "std_ratio": s0 / s1, "text": f"std {s0:.1f}/{s1:.1f}, mean {m0:+.1f}/{m1:+.1f}"}
    if name in RANDOM_STATS:
        ours = perturb_clip(spec, clip, np.random.default_rng(severity), params)
        (p0, c0), (p1, c1) = change_stats(ours, clip), change_stats(peer_out, clip)
        return {"kind": "stats", "ours_psnr_db": p0, "peer_psnr_db": p1, "ours_change": c0, "peer_change": c1,
                "text": f"PSNR to clean {p0:.1f}/{p1:.1f} dB, mean abs change {c0:.1f}/{c1:.1f}"}
    if name == "motion_blur":
        ours = render_motion_blur(clip, np.asarray(angles), **params)
    else:
        ours = perturb_clip(spec, clip, np.random.default_rng(0), params)
    value = psnr(ours, peer_out)
    text = "identical" if value == float("inf") else f"PSNR {value:.1f} dB"
    return {"kind": "psnr", "psnr_db": value, "text": text}


def jpeg_floor(clip: np.ndarray, quality: int) -> None:
    """The codec work alone: one libjpeg-turbo encode and decode per frame, one thread, no colour
    swaps. Both libraries call the same libjpeg-turbo, so this bounds what any of them can reach."""
    params = [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)]
    for frame in clip:
        cv2.imdecode(cv2.imencode(".jpg", frame, params)[1], cv2.IMREAD_COLOR)


def run(clip: np.ndarray, settings: Settings, worker: PeerWorker, workdir: Path,
        ops: list[str] | None = None, severities=SEVERITIES, log=print) -> dict[str, Any]:
    """Time every shared op at every severity against the peer; rows for the table and the JSON."""
    rows = []
    for name in ops or list(OPS):
        peer = OPS[name]
        for s in severities:
            contenders = {"ours": ours_timed(name, s, clip),
                          "peer": lambda: worker.run(peer, s, seed=s)["seconds"]}
            if name == "jpeg":
                quality = get(name).params(s)["quality"]
                contenders["floor"] = timed(lambda: jpeg_floor(clip, quality))
            if name in WEATHER:                 # a new layer per frame, as the image suite draws
                fresh = itertools.count(1000 * s + 500)
                contenders["per_frame"] = timed(lambda: apply(clip, name, s, seed=next(fresh), per_frame=True))
            times = interleaved(contenders, settings)
            out_path = workdir / f"{peer}-{s}.npy"
            reply = worker.run(peer, s, seed=s, out=out_path)
            eq = equivalence(name, s, clip, np.load(out_path), reply["angles"])
            ratio = times["peer"] / times["ours"]
            target = TARGET.get(name, DEFAULT_TARGET)
            row = {"op": name, "severity": s, "ours_s": times["ours"], "peer_s": times["peer"],
                   "speedup": ratio, "target": target, "met": ratio >= target, "equivalence": eq}
            if "floor" in times:
                row["codec_floor_s"] = times["floor"]
            if "per_frame" in times:
                row["per_frame_s"] = times["per_frame"]
            rows.append(row)
            log(f"  {name} s{s}: ours {ms(times['ours'])} ms, peer {ms(times['peer'])} ms, "
                f"{ratio:.1f}x ({eq['text']})")
    return {"frames": int(clip.shape[0]), "size": list(clip.shape[1:3]), "rows": rows}


def render(section: dict[str, Any]) -> str:
    """The section as a table."""
    text = speed_table(section["rows"], "imagecorruptions", "equivalence (ours/peer, peer params)")
    floors = [r for r in section["rows"] if "codec_floor_s" in r]
    if floors:
        text += ("\n\nJPEG codec floor (libjpeg-turbo encode + decode of every frame, one thread, "
                 "same run): " + ", ".join(
                     f"s{r['severity']} {ms(r['codec_floor_s'])} ms/clip, peer/floor "
                     f"{r['peer_s'] / r['codec_floor_s']:.1f}x" for r in floors) + ".")
    per_frame = [r for r in section["rows"] if "per_frame_s" in r]
    if per_frame:
        text += ("\n\nWeather with per_frame=True (a new layer for every frame, same run): " + ", ".join(
            f"{r['op']} s{r['severity']} {ms(r['per_frame_s'])} ms/clip "
            f"({r['peer_s'] / r['per_frame_s']:.1f}x)" for r in per_frame) + ".")
    return text


def main(clip: np.ndarray, settings: Settings, log=print, ops: list[str] | None = None) -> dict[str, Any]:
    """Set up the peer, run the section (every op in OPS, or ``ops``), return it."""
    unknown = sorted(set(ops or ()) - set(OPS))
    if unknown:
        raise ValueError(f"no imagecorruptions counterpart for {', '.join(unknown)}; expected among: {', '.join(OPS)}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        np.save(work / "clip.npy", clip)
        with PeerWorker(work / "clip.npy") as worker:
            section = run(clip, settings, worker, work, ops=ops, log=log)
        section["peer"] = {"package": "imagecorruptions", **worker.info}
    return section
