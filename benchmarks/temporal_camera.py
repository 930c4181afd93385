"""Temporal and camera ops: time per clip and its ratio to a memory-copy floor.

The floor is ``clip.copy()``: one read and one write of the clip, including the allocation
every op also makes for its result. A ratio near 1 means the op is about as fast as moving
the clip through memory once.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from perturb.video.api import apply

from .harness import Settings, interleaved, ms, table, timed

OPS = ("jumble", "box_jumble", "sampling", "reverse_sampling", "freeze", "static_rotate", "rotate", "translate")
SEVERITIES = (1, 3, 5)


def run(clip: np.ndarray, settings: Settings, log=print) -> dict[str, Any]:
    """Every op at every severity, each timed alternately with the copy floor."""
    rows = []
    for name in OPS:
        for s in SEVERITIES:
            times = interleaved({"op": timed(lambda: apply(clip, name, s, seed=s)),
                                 "copy": timed(clip.copy)}, settings)
            rows.append({"op": name, "severity": s, "op_s": times["op"], "copy_s": times["copy"],
                         "ratio_to_copy": times["op"] / times["copy"]})
            log(f"  {name} s{s}: {ms(times['op'])} ms, {rows[-1]['ratio_to_copy']:.1f}x the copy floor")
    return {"frames": int(clip.shape[0]), "bytes": int(clip.nbytes), "rows": rows}


def render(section: dict[str, Any]) -> str:
    """The section as a table."""
    rows = [(r["op"], r["severity"], f"{r['op_s'] * 1000:.2f}", f"{r['copy_s'] * 1000:.2f}",
             f"{r['ratio_to_copy']:.1f}x") for r in section["rows"]]
    return table(["op", "sev", "ms/clip", "copy floor ms", "ratio to floor"], rows)
