"""Helpers for robustness tests in CI."""
from __future__ import annotations

from typing import Any

__all__ = ["RobustOptions", "RobustnessError", "assert_robust"]


def __getattr__(name: str) -> Any:
    """Import the benchmark-backed helpers on first use, so loading the pytest plugin stays cheap."""
    if name in __all__:
        from . import robust
        return getattr(robust, name)
    raise AttributeError(f"module 'perturb.testing' has no attribute {name!r}")
