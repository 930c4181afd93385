"""Visual perturbations of clips: ``perturb.video.apply(clip, "motion_blur", severity=3)``."""
from __future__ import annotations

# Category modules register their perturbations on import, in the paper's order.
from .ops import noise  # noqa: F401,I001
from .kernels import blur  # noqa: F401,I001
from .kernels import jpeg_mpeg as digital  # noqa: F401,I001
from .ops import temporal  # noqa: F401,I001
from .kernels import camera  # noqa: F401,I001
from .kernels import imagenet_c  # noqa: F401,I001
from .kernels import imagenet_c_pixelate  # noqa: F401,I001
from .kernels import imagenet_c_colour  # noqa: F401,I001
from .kernels import weather  # noqa: F401,I001
from .kernels import rain  # noqa: F401,I001  (Kinetics-C's pixel ops; frame_rate is in temporal)
from .kernels import temporal_blur  # noqa: F401,I001  (Kinetics-C's pixel ops; frame_rate is in temporal)
from .kernels import h26x as kinetics_codecs  # noqa: F401,I001
from .kernels import bitstream  # noqa: F401,I001
from . import suites  # noqa: F401  (the named suites: data, registered on import)
from .api import Compose, Perturbation, apply, draw, get
from .render import Draw

__all__ = ["Compose", "Draw", "Perturbation", "apply", "draw", "get"]
