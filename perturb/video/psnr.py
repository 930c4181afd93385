"""Peak signal-to-noise ratio of perturbed frames against clean ones (severity ordering, benchmarks)."""
from __future__ import annotations

import numpy as np


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio (dB) between two uint8 arrays; inf when they are equal."""
    mse = float(np.mean((a.astype(np.float32) - b.astype(np.float32)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def mean_psnr(clip: np.ndarray, ref: np.ndarray) -> float:
    """Mean over frames of the per-frame PSNR against a reference clip."""
    return float(np.mean([psnr(a, b) for a, b in zip(clip, ref)]))
