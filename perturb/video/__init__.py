"""Visual perturbations of clips: ``perturb.video.apply(clip, "motion_blur", severity=3)``."""
from __future__ import annotations

# Category modules register their perturbations on import, in the paper's order.
from . import noise, blur, digital, temporal, camera, weather  # noqa: F401,I001
from .api import Compose, Perturbation, apply, draw, get
from .render import Draw

__all__ = ["Compose", "Draw", "Perturbation", "apply", "draw", "get"]
