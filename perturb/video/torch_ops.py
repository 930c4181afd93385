"""Torch kernels for visual perturbations (device-agnostic). Filled per op; see run_torch."""
from __future__ import annotations

from typing import Any, Callable

TORCH_KERNELS: dict[str, Callable[..., Any]] = {}


def run_torch(spec, clip, rng, params):  # pragma: no cover - replaced when kernels exist
    raise NotImplementedError
