"""Helpers for cross-encoders: the distinct clips and texts of a list of aligned pairs."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def distinct(clips: Sequence[np.ndarray], texts: Sequence[str]) -> tuple[list[np.ndarray], list[int], list[str], list[int]]:
    """Distinct clips (by identity) and texts, with each pair's index into them."""
    clip_index: dict[int, int] = {}
    text_index: dict[str, int] = {}
    uc, ut = [], []
    ci, ti = [], []
    for c, t in zip(clips, texts):
        if id(c) not in clip_index:
            clip_index[id(c)] = len(uc)
            uc.append(c)
        if t not in text_index:
            text_index[t] = len(ut)
            ut.append(t)
        ci.append(clip_index[id(c)])
        ti.append(text_index[t])
    return uc, ci, ut, ti
