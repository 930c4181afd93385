"""Model adapters: one small protocol, built-in clip / precomputed / callable / http / toy adapters,
the zero-shot classifier over a dual encoder, and the on-disk embedding cache that keeps their rows.

May import: nothing else of the benchmark.
"""
from __future__ import annotations

from .factory import load_model
from .model_options import ModelOptions
from .protocol import CrossEncoder, DualEncoder, Model, wrap

__all__ = ["CrossEncoder", "DualEncoder", "Model", "ModelOptions", "load_model", "wrap"]
