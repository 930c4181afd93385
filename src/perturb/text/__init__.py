"""Text perturbations of captions (35, paper Table 1): ``perturb.text.apply(caption, "Typos")``."""
from __future__ import annotations

# Category modules register their perturbations on import, in the paper's Table 1 order.
from . import changechar, swaptext, addtext, style, bias, droptext, positional  # noqa: F401,I001
from .api import TextResult, apply, apply_batch, get, parse_batch, pipeline_key

__all__ = ["TextResult", "apply", "apply_batch", "get", "parse_batch", "pipeline_key"]
