"""Visual perturbations of clips: ``perturb.video.apply(clip, "motion_blur", severity=3)``.

Where op X lives: an op of category C is registered in ``ops/C.py`` (its name, flags, severity
rows and notes); the code that renders it is in ``kernels/`` (its numpy kernel and torch twin, each
registered under the op's name where it is defined: :mod:`.kernels.twins`); files and codec streams
are read and written in ``io/``; the API, the clip model and its layouts, rendering, suites and
severity tables stand at the top.
"""
from __future__ import annotations

# The category modules register their perturbations on import, in this order.
from .ops import noise, blur, digital, temporal, camera, weather, texture, overlay  # noqa: F401,I001
from . import suites  # noqa: F401  (the named suites: data, registered on import)
from .api import Compose, Perturbation, apply, draw, get
from .render import Draw

__all__ = ["Compose", "Draw", "Perturbation", "apply", "draw", "get"]
