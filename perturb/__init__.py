"""perturb: robustness of video-text retrieval models under video and caption perturbations."""
from __future__ import annotations

__version__ = "0.1.0"

from . import text, video  # noqa: E402  (imports register every perturbation)
from .registry import REGISTRY, Spec  # noqa: E402
from .catalogue import describe, list_perturbations  # noqa: E402

list = list_perturbations  # noqa: A001  - the public name is perturb.list()

__all__ = ["REGISTRY", "Spec", "describe", "list", "text", "video", "__version__"]
