"""Peak signal-to-noise ratio of perturbed frames against clean ones (severity ordering, the demo's
table, benchmarks): the one PSNR of the project."""
from __future__ import annotations

import numpy as np

PEAK = 255.0


def _decibels(mse: np.ndarray, cap: float | None) -> np.ndarray:
    """10·log10(255² / mse): inf where mse is 0, or at most ``cap`` dB when a cap is given."""
    floor = 0.0 if cap is None else PEAK ** 2 / 10 ** (cap / 10)
    with np.errstate(divide="ignore"):
        return 10 * np.log10(PEAK ** 2 / np.maximum(mse, floor))


def psnr(a: np.ndarray, b: np.ndarray, cap: float | None = None) -> float:
    """PSNR (dB) between two uint8 arrays taken whole; inf when they are equal (or ``cap``)."""
    diff = a.astype(np.float64) - b.astype(np.float64)
    return float(_decibels(np.mean(diff ** 2), cap))


def mean_psnr(clip: np.ndarray, ref: np.ndarray, cap: float | None = None) -> float:
    """Mean over frames of the per-frame PSNR against a reference clip; an identical frame counts
    inf, or ``cap`` dB when a cap is given (so one identical frame does not hide the others)."""
    diff = clip.astype(np.float64) - ref.astype(np.float64)
    return float(np.mean(_decibels((diff ** 2).reshape(len(diff), -1).mean(axis=1), cap)))
