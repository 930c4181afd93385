"""Timing harness: warm-up, repeats, interleaved medians, the results file and a printed table.

The machine is shared and noisy, so contenders are never timed in separate blocks: every
repeat runs each contender once, in turn, and ratios are taken between medians of the same run.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import platform
import socket
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

RESULTS = Path(__file__).resolve().parent / "results"

# A contender is a callable that runs the work once and returns the seconds it took.
Contender = Callable[[], float]


@dataclass(frozen=True)
class Settings:
    """How often to time: ``repeats`` rounds after ``warmup`` untimed ones, cut short after
    ``budget`` seconds per measurement once ``min_repeats`` rounds are in."""

    repeats: int = 5
    warmup: int = 1
    min_repeats: int = 3
    budget: float = 30.0


def timed(fn: Callable[[], Any]) -> Contender:
    """A contender from a plain callable, timed with ``perf_counter``."""
    def run() -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    return run


def interleaved(contenders: Mapping[str, Contender], settings: Settings) -> dict[str, float]:
    """Median seconds per contender, the contenders timed alternately in every round."""
    for _ in range(settings.warmup):
        for run in contenders.values():
            run()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    start = time.perf_counter()
    for i in range(settings.repeats):
        order = list(contenders.items())
        if i % 2:
            order.reverse()                 # neither side always runs right after the other
        for name, run in order:
            samples[name].append(run())
        if i + 1 >= settings.min_repeats and time.perf_counter() - start > settings.budget:
            break
    return {name: statistics.median(s) for name, s in samples.items()}


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    import cv2
    import numpy

    info = {"host": socket.gethostname(), "platform": platform.platform(), "python": platform.python_version(),
            "cpus": os.cpu_count(), "numpy": numpy.__version__, "opencv": cv2.__version__,
            "opencv_threads": cv2.getNumThreads()}
    try:
        import torch
        info["torch"] = torch.__version__
    except ImportError:
        pass
    return info


def write_results(sections: Mapping[str, Any], settings: Settings, suffix: str = "") -> Path:
    """Write ``results/<date>-<machine><suffix>.json`` with the machine description and every section."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    host = "".join(c if c.isalnum() or c in "-_" else "-" for c in socket.gethostname()) or "machine"
    path = RESULTS / f"{now:%Y-%m-%d}-{host}{suffix}.json"
    doc = {"date": now.isoformat(timespec="seconds"), "machine": machine(),
           "settings": settings.__dict__, **sections}
    path.write_text(json.dumps(finite(doc), indent=2, default=float) + "\n")
    return path


def finite(value: Any) -> Any:
    """The value with inf/nan floats as strings ("inf"), so the file is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (it reads as plain text on a terminal too)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def ms(seconds: float) -> str:
    """Seconds shown as milliseconds."""
    return f"{seconds * 1000:.1f}"


def verdict(ratio: float, target: float) -> str:
    """'yes' when a speed-up meets its target."""
    return "yes" if ratio >= target else "NO"


def speed_table(rows: Sequence[Mapping[str, Any]], peer: str, equivalence: str) -> str:
    """Per-op rows (ours against ``peer`` per clip, speed-up against target, equivalence) as a table."""
    body = [(r["op"], r["severity"], ms(r["ours_s"]), ms(r["peer_s"]), f"{r['speedup']:.1f}x",
             f"{r['target']:.0f}x", verdict(r["speedup"], r["target"]), r["equivalence"]["text"])
            for r in rows]
    return table(["op", "sev", "ours ms/clip", f"{peer} ms/clip", "speed-up", "target", "met", equivalence], body)


# The command-line peers a section may declare it needs (its module's NEEDS), each with how to get it.
TOOLS = {"ffmpeg": "install Debian's ffmpeg (apt-get install ffmpeg)",
         "ffprobe": "install Debian's ffmpeg (apt-get install ffmpeg)"}


def unmet(needs: Sequence[str]) -> str | None:
    """Why a section that needs the command-line tools ``needs`` cannot run here (the tools not on
    PATH and how to install them), or None when every one is found: checked before any timing."""
    import shutil

    missing = [tool for tool in needs if shutil.which(tool) is None]
    if not missing:
        return None
    hints = "; ".join(dict.fromkeys(TOOLS[tool] for tool in missing))
    return f"{'/'.join(missing)} not found: {hints} to run this section"


def failure(exc: Exception) -> str:
    """A contender's failure in one line (type and message, at most 160 characters): a peer that
    is missing or breaks is data, reported beside the tables."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:160]


@contextlib.contextmanager
def threads_held(n: int) -> Iterator[None]:
    """torch and OpenCV (and so perturb's frame threads) held to ``n`` threads, then restored:
    a DataLoader worker's setting, the same for ours and a torch peer."""
    import cv2

    from perturb.demo.model import torch_threads

    before = cv2.getNumThreads()
    cv2.setNumThreads(n)
    try:
        with torch_threads(n):
            yield
    finally:
        cv2.setNumThreads(before)


def float_clip(clip: Any) -> Any:
    """A uint8 (T, H, W, 3) numpy clip as a contiguous float32 (T, 3, H, W) tensor in [0, 1]."""
    import numpy as np
    import torch

    return torch.from_numpy(np.array(clip)).permute(0, 3, 1, 2).to(torch.float32).div(255).contiguous()
