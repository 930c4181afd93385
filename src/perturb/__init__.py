"""perturb: robustness of video-text retrieval models under video and caption perturbations."""
from __future__ import annotations

from .version import __version__
from .registry import REGISTRY, Spec   # filled on first lookup (see registry.PROVIDERS)
from .catalogue import describe, list_perturbations

list = list_perturbations  # noqa: A001  - the public name is perturb.list()

__all__ = ["REGISTRY", "Spec", "describe", "list", "text", "video", "__version__"]

# Subpackages imported on first use (``perturb.video``, ``perturb.text``, ``perturb.bench``...),
# so that ``import perturb.gate`` loads neither OpenCV nor PyAV.
_LAZY = ("text", "video", "contrast", "dataset", "bench", "gate", "testing", "transforms")


def __getattr__(name: str):
    """Import a subpackage on first use: ``perturb.video``, ``perturb.contrast``..."""
    if name in _LAZY:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'perturb' has no attribute {name!r}")
