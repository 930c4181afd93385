"""Model adapters: one small protocol, built-in clip / precomputed / callable / http / toy adapters.

May import: nothing else of the benchmark.
"""
from __future__ import annotations

from .factory import load_model
from .model_options import ModelOptions
from .protocol import CrossEncoder, DualEncoder, Model, wrap

__all__ = ["CrossEncoder", "DualEncoder", "Model", "ModelOptions", "load_model", "wrap"]
