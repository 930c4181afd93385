"""Text perturbations of captions (35, paper Table 1): ``perturb.text.apply(caption, "Typos")``."""
from __future__ import annotations

from .api import TextResult, apply, apply_batch, get

__all__ = ["TextResult", "apply", "apply_batch", "get"]
