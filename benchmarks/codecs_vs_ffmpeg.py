"""Codec re-encoding in memory (PyAV) against the subprocess way, timed alternately on one clip.

The subprocess way is the reference approach: write the clip to a temporary file, run the
``ffmpeg`` command-line tool with ``-c:v <encoder> -q:v <q>``, read the result back. Both sides
use the same encoder and quantiser; quality is reported as mean per-frame PSNR against the clean clip (and
PSNR between the two outputs over the whole clip), so "same or better" can be read off directly.
"""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from perturb.video.psnr import mean_psnr, psnr
from perturb.video.api import apply, get
from perturb.video.io.codec_stream import CODEC_FPS
from perturb.video.io import read

from .harness import Settings, interleaved, ms, table, timed

# our perturbation -> the encoder it uses
CODECS = {"mpeg1": "mpeg2video", "mpeg2": "mpeg4"}
NEEDS = ("ffmpeg",)          # command-line peers, checked before any timing (harness.unmet)
SEVERITIES = (1, 3, 5)
TARGET = 2.0
PSNR_SAME_DB = 0.1           # "same" PSNR: within 0.1 dB (below what a viewer or a model can tell)


def ffmpeg_roundtrip(clip: np.ndarray, encoder: str, q: int, workdir: Path) -> np.ndarray:
    """Raw clip to a file, ``ffmpeg -c:v encoder -q:v q`` to an .mp4, decoded back; T frames."""
    t, h, w, _ = clip.shape
    raw, out = workdir / "clip.rgb", workdir / "out.mp4"
    raw.write_bytes(np.ascontiguousarray(clip).tobytes())
    subprocess.run(["ffmpeg", "-y", "-nostdin", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
                    "-s", f"{w}x{h}", "-r", str(CODEC_FPS), "-i", str(raw), "-c:v", encoder, "-q:v", str(q),
                    str(out)], check=True)
    frames = read(out)[0]
    frames = frames[:t] if len(frames) >= t else np.concatenate([frames, frames[-1:].repeat(t - len(frames), 0)])
    return frames


def run(clip: np.ndarray, settings: Settings, log=print) -> dict[str, Any]:
    """Every codec at every severity; rows for the table and the JSON."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, encoder in CODECS.items():
            for s in SEVERITIES:
                q = get(name).params(s)["q"]
                times = interleaved({"ours": timed(lambda: apply(clip, name, s)),
                                     "ffmpeg": timed(lambda: ffmpeg_roundtrip(clip, encoder, q, work))}, settings)
                ours, ref = apply(clip, name, s), ffmpeg_roundtrip(clip, encoder, q, work)
                row = {"op": name, "encoder": encoder, "severity": s, "q": q, "ours_s": times["ours"],
                       "ffmpeg_s": times["ffmpeg"], "speedup": times["ffmpeg"] / times["ours"], "target": TARGET,
                       "psnr_ours_db": mean_psnr(ours, clip), "psnr_ffmpeg_db": mean_psnr(ref, clip),
                       "psnr_between_db": psnr(ours, ref)}
                row["met"] = row["speedup"] >= TARGET and row["psnr_ours_db"] >= row["psnr_ffmpeg_db"] - PSNR_SAME_DB
                rows.append(row)
                log(f"  {name} s{s} (q={q}): ours {ms(times['ours'])} ms, ffmpeg {ms(times['ffmpeg'])} ms, "
                    f"{row['speedup']:.1f}x; PSNR {row['psnr_ours_db']:.2f} vs {row['psnr_ffmpeg_db']:.2f} dB")
    version = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.split("\n")[0]
    return {"frames": int(clip.shape[0]), "ffmpeg": version, "rows": rows}


def render(section: dict[str, Any]) -> str:
    """The section as a table."""
    rows = [(r["op"], r["encoder"], r["severity"], r["q"], ms(r["ours_s"]), ms(r["ffmpeg_s"]),
             f"{r['speedup']:.1f}x", f"{r['psnr_ours_db']:.2f}", f"{r['psnr_ffmpeg_db']:.2f}",
             f"{r['psnr_between_db']:.1f}", "yes" if r["met"] else "NO") for r in section["rows"]]
    return table(["op", "encoder", "sev", "q", "ours ms/clip", "ffmpeg CLI ms/clip", "speed-up",
                  "PSNR ours dB", "PSNR ffmpeg dB", "PSNR ours-ffmpeg dB", "met (2x, PSNR)"], rows)
