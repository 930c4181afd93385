"""Classifiers whose logits are known, for the classification runner's tests (importable by
``callable:`` specs and loky replicas)."""
from __future__ import annotations

import numpy as np

COLOURS = ["red", "green", "blue"]


class MeanColour:
    """Logits: the clip's mean R, G and B levels (class order red, green, blue)."""

    labels = COLOURS
    id = "mean-colour"
    cache_version = "1"

    def classify(self, clips):
        return np.stack([np.asarray(c, dtype=np.float32).mean(axis=(0, 1, 2)) for c in clips])


def mean_colour(clips):
    """The same logits as a bare function (its labels come from --classes)."""
    return MeanColour().classify(clips)
