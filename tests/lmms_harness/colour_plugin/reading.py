"""How the plugin model reads a clip (PyAV and numpy only, so the main test environment can check
it too): the mean colour of every decoded frame, and the listed option nearest to it."""
from __future__ import annotations

import re

import av
import numpy as np

# the colours the model knows by name (the fixture's MC_COLOURS, tests/lmms_fixtures.py)
COLOURS = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 40, 220),
           "yellow": (220, 200, 40), "purple": (130, 40, 160), "orange": (230, 120, 20)}
OPTION = re.compile(r"^([A-D])\. (\w+)$", re.MULTILINE)


def mean_colour(path: str) -> np.ndarray:
    """The mean RGB of every decoded frame of ``path``."""
    with av.open(path) as container:
        frames = [f.to_ndarray(format="rgb24").reshape(-1, 3) for f in container.decode(video=0)]
    return np.concatenate(frames).astype(np.float64).mean(axis=0)


def answer(prompt: str, paths: list[str]) -> str:
    """The letter of the prompt's option ("A. red" lines) whose colour is nearest the videos' mean colour."""
    mean = np.mean([mean_colour(p) for p in paths], axis=0)
    options = [(letter, name) for letter, name in OPTION.findall(prompt) if name in COLOURS]
    return min(options, key=lambda o: float(np.sum((np.array(COLOURS[o[1]]) - mean) ** 2)))[0]
