"""Visual perturbations of clips: ``perturb.video.apply(clip, "motion_blur", severity=3)``."""
from __future__ import annotations

# Category modules register their perturbations on import, in the paper's order.
from . import noise, blur, digital, temporal, camera  # noqa: F401,I001
from . import imagenet_c, imagenet_c_pixelate, imagenet_c_colour  # noqa: F401,I001
from . import weather  # noqa: F401,I001
from . import rain, temporal_blur  # noqa: F401,I001  (Kinetics-C's pixel ops; frame_rate is in temporal)
from . import kinetics_codecs, bitstream  # noqa: F401,I001
from . import suites  # noqa: F401  (the named suites: data, registered on import)
from .api import Compose, Perturbation, apply, draw, get
from .render import Draw

__all__ = ["Compose", "Draw", "Perturbation", "apply", "draw", "get"]
