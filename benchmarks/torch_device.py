"""Frames per second of the torch path, per op, on one device (``--device cuda``).

The clip goes to the device once as uint8 (T, H, W, 3); each call returns a tensor on the
device, and the device is synchronised before the clock stops.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from perturb.video.api import apply

from .harness import Settings, interleaved, table, timed

OPS = ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise", "defocus_blur", "motion_blur",
       "zoom_blur", "static_rotate", "rotate", "translate", "jumble", "box_jumble", "sampling",
       "reverse_sampling", "freeze",
       # ImageNet-C spatial and colour ops
       "gaussian_blur", "glass_blur", "pixelate", "elastic_transform", "brightness", "contrast", "saturate")
SEVERITY = 3
TARGET_FPS = 2000.0


def unavailable(device: str) -> str | None:
    """Why the device cannot be used here, or None."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if device.startswith("cuda") and not torch.cuda.is_available():
        return "no CUDA device is available on this machine"
    try:
        torch.zeros(1, device=device)
    except (RuntimeError, AssertionError) as exc:
        return f"device {device!r} cannot be used: {exc}"
    return None


def run(clip: np.ndarray, device: str, settings: Settings, log=print) -> dict[str, Any]:
    """Frames/s of every torch op at severity 3 on ``device``."""
    import torch

    x = torch.from_numpy(np.array(clip)).to(device)        # a writable copy
    sync = (lambda: torch.cuda.synchronize(x.device)) if x.device.type == "cuda" else (lambda: None)
    rows = []
    for name in OPS:
        def call(name: str = name) -> None:
            apply(x, name, SEVERITY, seed=0)
            sync()
        seconds = interleaved({"op": timed(call)}, settings)["op"]
        fps = clip.shape[0] / seconds
        rows.append({"op": name, "severity": SEVERITY, "seconds": seconds, "fps": fps,
                     "target_fps": TARGET_FPS, "met": fps >= TARGET_FPS})
        log(f"  {name}: {fps:,.0f} frames/s")
    name = torch.cuda.get_device_name(x.device) if x.device.type == "cuda" else "cpu"
    return {"device": str(x.device), "device_name": name, "frames": int(clip.shape[0]),
            "size": list(clip.shape[1:3]), "rows": rows}


def render(section: dict[str, Any]) -> str:
    """The section as a table."""
    on_gpu = section["device"].startswith("cuda")
    rows = [(r["op"], r["severity"], f"{r['seconds'] * 1000:.1f}", f"{r['fps']:,.0f}",
             f"{r['target_fps']:,.0f}", ("yes" if r["met"] else "NO") if on_gpu else "n/a (CPU)")
            for r in section["rows"]]
    return table(["op", "sev", "ms/clip", "frames/s", "target (GPU)", "met"], rows)
