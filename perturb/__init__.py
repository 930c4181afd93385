"""perturb: robustness of video-text retrieval models under video and caption perturbations."""
from __future__ import annotations

from .version import __version__

from . import text, video  # noqa: E402  (imports register every perturbation)
from .registry import REGISTRY, Spec  # noqa: E402
from .catalogue import describe, list_perturbations  # noqa: E402

list = list_perturbations  # noqa: A001  - the public name is perturb.list()

__all__ = ["REGISTRY", "Spec", "describe", "list", "text", "video", "__version__"]

_LAZY = ("contrast", "dataset", "bench", "gate", "testing")


def __getattr__(name: str):
    """Import the heavier subpackages on first use: ``perturb.contrast``, ``perturb.bench``..."""
    if name in _LAZY:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'perturb' has no attribute {name!r}")
