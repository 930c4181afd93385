"""Kinetics-C's codec ops and bitstream faults (PyAV, in memory) against the reference route.

The reference route is the reference's own: the clip written to a temporary raw file, the
``ffmpeg``/``ffprobe`` command-line tools run on temporary files, the result read back. Per op:

- CRF: ``ffmpeg -c:v libx26x -crf c`` twice: at our settings (preset medium, zerolatency tune,
  one thread; x265 without a thread pool) for speed and equality, and at the encoder's defaults (the
  reference's command) for the PSNR gap our settings make; beside them, our encoder alone
  (PyAV's encode call, no decoding), the floor both routes share.
- ABR: the clip encoded as its source (libx264, CRF 23, mb-tree off, one thread) to an .mp4,
  ``ffprobe`` for its bit rate, and the clip encoded at source / divisor with -b:v = -maxrate =
  -bufsize: bitrate reached against the target, on both sides.
- bit_error: the source .mp4 through ``ffmpeg -c copy -bsf:v noise=amount=N``: PSNR against
  ours over five seeds, and the fraction of damaged bytes (packets compared byte by byte) on a
  long stream (the clip 20 times over), where one byte in 100,000 is more than a byte or two.
- packet_loss: FFmpeg has no datagram loss, so the nearest CLI route: ``-bsf:v
  noise=drop=lt(random(0),loss)`` drops whole packets (frames) of the source with probability
  ``loss``; PSNR, and the fraction dropped on the long stream, against ours (1472-byte datagrams).

The Debian ffmpeg links other encoder versions than PyAV's wheel (x264 core 164 and x265 3.5
against core 165 and x265 4.2), so equal settings give close, not identical, streams.

Damaged files are read back by a tolerant decoder (errors skipped, missing frames held), as ours.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable

import av
import numpy as np

import perturb.video as pv
from perturb.video.kernels import bitstream as bs
from perturb.video.io.codec_stream import GREY, encode
from perturb.video.io.codec_stream import CODEC_FPS
from perturb.video.io import read
from perturb.video.kernels.h26x import X265_PARAMS, abr_options, abr_target, crf_options, source_stream
from perturb.video.psnr import mean_psnr, psnr

from .harness import Settings, interleaved, ms, table, timed

NEEDS = ("ffmpeg", "ffprobe")  # command-line peers, checked before any timing (harness.unmet)
SEVERITIES = (1, 3, 5)
SEEDS = range(5)
LONG = 20                      # the long stream: the clip this many times over
TARGET = 2.0
FF = ["ffmpeg", "-y", "-nostdin", "-loglevel", "error"]
SOURCE = ["-c:v", "libx264", "-preset", "medium", "-crf", "23", "-x264-params", "mbtree=0", "-threads", "1"]
ENCODER = {"h264": "libx264", "h265": "libx265"}


def _ff(*args: str) -> None:
    subprocess.run([*FF, *args], check=True)


class Route:
    """The reference route's temporary files for one clip."""

    def __init__(self, clip: np.ndarray, work: Path) -> None:
        self.clip, self.work = clip, work
        self.raw = work / "clip.rgb"
        self.stream: Any = None             # our source stream of the clip, where a row needs it

    def raw_input(self) -> list[str]:
        t, h, w, _ = self.clip.shape
        self.raw.write_bytes(np.ascontiguousarray(self.clip).tobytes())
        # -pix_fmt yuv420p after the input: for RGB input ffmpeg would pick 4:4:4 for libx264
        return ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}", "-r", str(CODEC_FPS), "-i", str(self.raw),
                "-pix_fmt", "yuv420p"]

    def path(self, name: str) -> str:
        return str(self.work / name)

    def source(self) -> str:
        _ff(*self.raw_input(), *SOURCE, self.path("source.mp4"))
        return self.path("source.mp4")


def codec_args(op: str, value: int, same: bool) -> list[str]:
    """Encoder arguments of a CRF op: our settings (``same``) or the encoder's defaults."""
    enc = ENCODER[op[:4]]
    args = ["-c:v", enc, "-crf", str(value)]
    if same:
        args += ["-preset", "medium", "-tune", "zerolatency", "-threads", "1"]
    return args + (["-x265-params", X265_PARAMS if same else "log-level=none"] if enc == "libx265" else [])


def probe_bitrate(path: str) -> float:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=bit_rate", "-of", "json", path],
                         capture_output=True, text=True, check=True).stdout
    return float(json.loads(out)["format"]["bit_rate"])


def tolerant_read(path: str, shape: tuple[int, ...]) -> np.ndarray:
    """A damaged file's frames placed by timestamp; decode errors skipped, missing frames held."""
    t, h, w, _ = shape
    got: dict[int, np.ndarray] = {}
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_count = 1
        for packet in container.demux(stream):
            try:
                frames = packet.decode()
            except av.FFmpegError:
                continue
            for f in frames:
                if f.time is not None and (f.height, f.width) == (h, w):
                    got.setdefault(int(round(f.time * CODEC_FPS)), f.to_ndarray(format="rgb24"))
    out, last = np.empty(shape, np.uint8), np.full((h, w, 3), GREY, np.uint8)
    for i in range(t):
        last = got.get(i, last)
        out[i] = last
    return out


def packets(path: str) -> list[bytes]:
    with av.open(path) as container:
        return [bytes(p) for p in container.demux(container.streams.video[0]) if p.size]


# --------------------------------------------------------------------------------- routes
def crf_row(route: Route, long: Route, op: str, s: int, settings: Settings) -> dict[str, Any]:
    crf = pv.get(op).params(s)["crf"]
    clip = route.clip

    def ref(same: bool) -> np.ndarray:
        _ff(*route.raw_input(), *codec_args(op, crf, same), route.path("out.mp4"))
        return read(route.path("out.mp4"))[0]
    enc = ENCODER[op[:4]]
    times = interleaved({"ours": timed(lambda: pv.apply(clip, op, s)), "ffmpeg": timed(lambda: ref(True)),
                         "encoder": timed(lambda: encode(clip, enc, crf_options(enc, crf)))}, settings)
    ours, same = pv.apply(clip, op, s), ref(True)
    kbps_ffmpeg = probe_bitrate(route.path("out.mp4")) / 1000
    default = ref(False)
    return {"crf": crf, "ours_s": times["ours"], "ffmpeg_s": times["ffmpeg"], "encoder_s": times["encoder"],
            "kbps_ours": encode(clip, enc, crf_options(enc, crf)).bitrate() / 1000, "kbps_ffmpeg": kbps_ffmpeg,
            "psnr_ours_db": mean_psnr(ours, clip), "psnr_ffmpeg_db": mean_psnr(same, clip),
            "psnr_between_db": psnr(ours, same), "psnr_ffmpeg_defaults_db": mean_psnr(default, clip)}


def abr_row(route: Route, long: Route, op: str, s: int, settings: Settings) -> dict[str, Any]:
    divisor = pv.get(op).params(s)["divisor"]
    clip, enc = route.clip, ENCODER[op[:4]]

    def ref() -> tuple[np.ndarray, float, float]:
        target = int(probe_bitrate(route.source()) / divisor)
        extra = ["-x265-params", X265_PARAMS] if enc == "libx265" else ["-x264-params", "mbtree=0"]
        _ff(*route.raw_input(), "-c:v", enc, "-preset", "medium", "-threads", "1", "-b:v", str(target),
            "-maxrate", str(target), "-bufsize", str(target), *extra, route.path("abr.mp4"))
        return read(route.path("abr.mp4"))[0], target, probe_bitrate(route.path("abr.mp4"))
    times = interleaved({"ours": timed(lambda: pv.apply(clip, op, s)), "ffmpeg": timed(ref)}, settings)
    target = abr_target(clip, divisor)
    reached = encode(clip, enc, abr_options(enc, target), bit_rate=target).bitrate()
    theirs, ref_target, ref_reached = ref()
    return {"divisor": divisor, "ours_s": times["ours"], "ffmpeg_s": times["ffmpeg"],
            "target_ours_bps": target, "reached_ours_bps": reached, "target_ffmpeg_bps": ref_target,
            "reached_ffmpeg_bps": ref_reached, "psnr_ours_db": mean_psnr(pv.apply(clip, op, s), clip),
            "psnr_ffmpeg_db": mean_psnr(theirs, clip)}


def fault_row(route: Route, long: Route, op: str, s: int, settings: Settings) -> dict[str, Any]:
    p, clip = pv.get(op).params(s), route.clip
    bsf = (f"noise=amount={p['one_in']}" if op == "bit_error" else f"noise=drop=lt(random(0)\\,{p['loss']})")

    def ref(on: Route, source: str | None = None) -> np.ndarray:
        _ff("-i", source or on.source(), "-c", "copy", "-bsf:v", bsf, on.path("damaged.mp4"))
        return tolerant_read(on.path("damaged.mp4"), on.clip.shape)
    times = interleaved({"ours": timed(lambda: pv.apply(clip, op, s, seed=0)),
                         "ffmpeg": timed(lambda: ref(route))}, settings)
    theirs = ref(route)
    ref(long, long.path("source.mp4"))                      # the long source is encoded once, in run()
    before, after = packets(long.path("source.mp4")), packets(long.path("damaged.mp4"))
    stream = long.stream
    if op == "bit_error":
        ours_fraction = bs.damaged_count(stream.size, 1 / p["one_in"], p["at_least"]) / stream.size
        ref_fraction = sum(int(np.count_nonzero(np.frombuffer(a, np.uint8) != np.frombuffer(b, np.uint8)))
                           for a, b in zip(before, after)) / sum(map(len, before))
    else:
        n = -(-stream.size // p["datagram"])
        ours_fraction = bs.damaged_count(n, p["loss"], p["at_least"]) / n
        ref_fraction = 1 - len(after) / len(before)
    psnrs = [mean_psnr(pv.apply(clip, op, s, seed=k), clip) for k in SEEDS]
    return {"rate": 1 / p["one_in"] if op == "bit_error" else p["loss"], "ours_s": times["ours"],
            "ffmpeg_s": times["ffmpeg"], "fraction_ours": ours_fraction, "fraction_ffmpeg": ref_fraction,
            "psnr_ours_mean_db": float(np.mean(psnrs)), "psnr_ours_std_db": float(np.std(psnrs)),
            "psnr_ffmpeg_db": mean_psnr(theirs, clip)}


ROWS: dict[str, Callable[..., dict[str, Any]]] = {
    "h264_crf": crf_row, "h265_crf": crf_row, "h264_abr": abr_row, "h265_abr": abr_row,
    "bit_error": fault_row, "packet_loss": fault_row}


def run(clip: np.ndarray, settings: Settings, log=print) -> dict[str, Any]:
    """Every op at severities 1, 3, 5; rows for the tables and the JSON."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as tmp_long:
        route, long = Route(clip, Path(tmp)), Route(np.concatenate([clip] * LONG), Path(tmp_long))
        long.source()
        long.stream = source_stream(long.clip, out_of_band=True)
        for op, row_of in ROWS.items():
            for s in SEVERITIES:
                row = {"op": op, "severity": s, **row_of(route, long, op, s, settings)}
                row["speedup"] = row["ffmpeg_s"] / row["ours_s"]
                row["met"] = row["speedup"] >= TARGET
                rows.append(row)
                log(f"  {op} s{s}: ours {ms(row['ours_s'])} ms, ffmpeg {ms(row['ffmpeg_s'])} ms, {row['speedup']:.1f}x")
    version = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.split("\n")[0]
    return {"frames": int(clip.shape[0]), "long_frames": int(clip.shape[0]) * LONG, "ffmpeg": version,
            "pyav": av.__version__, "rows": rows}


def render(section: dict[str, Any]) -> str:
    """The section as three tables: codecs at CRF, codecs at ABR, bitstream faults."""
    rows = section["rows"]
    speed = lambda r: (ms(r["ours_s"]), ms(r["ffmpeg_s"]), f"{r['speedup']:.1f}x", "yes" if r["met"] else "NO")
    crf = [(r["op"], r["severity"], r["crf"], *speed(r), ms(r["encoder_s"]), f"{r['kbps_ours']:.1f}",
            f"{r['kbps_ffmpeg']:.1f}",
            f"{r['psnr_ours_db']:.2f}", f"{r['psnr_ffmpeg_db']:.2f}", f"{float(r['psnr_between_db']):.1f}",
            f"{r['psnr_ffmpeg_defaults_db']:.2f}") for r in rows if "crf" in r]
    abr = [(r["op"], r["severity"], r["divisor"], *speed(r), f"{r['target_ours_bps'] / 1000:.1f}",
            f"{r['reached_ours_bps'] / 1000:.1f}", f"{r['target_ffmpeg_bps'] / 1000:.1f}",
            f"{r['reached_ffmpeg_bps'] / 1000:.1f}", f"{r['psnr_ours_db']:.2f}", f"{r['psnr_ffmpeg_db']:.2f}")
           for r in rows if "divisor" in r]
    faults = [(r["op"], r["severity"], f"{r['rate']:g}", *speed(r), f"{r['fraction_ours']:.2e}",
               f"{r['fraction_ffmpeg']:.2e}",
               f"{r['psnr_ours_mean_db']:.2f} ± {r['psnr_ours_std_db']:.2f}", f"{r['psnr_ffmpeg_db']:.2f}")
              for r in rows if "rate" in r]
    head = ["ours ms/clip", "ffmpeg CLI ms/clip", "speed-up", "2x"]
    return "\n\n".join([
        table(["op", "sev", "crf", *head, "encoder alone ms", "kb/s ours", "kb/s ffmpeg", "PSNR ours dB",
               "PSNR ffmpeg dB",
               "PSNR ours-ffmpeg dB", "PSNR ffmpeg defaults dB"], crf),
        table(["op", "sev", "divisor", *head, "target kb/s", "reached kb/s", "ffmpeg target kb/s",
               "ffmpeg reached kb/s", "PSNR ours dB", "PSNR ffmpeg dB"], abr),
        table(["op", "sev", "rate", *head, "damaged ours (long)", "damaged ffmpeg (long)",
               "PSNR ours dB (5 seeds)", "PSNR ffmpeg dB"], faults)])
