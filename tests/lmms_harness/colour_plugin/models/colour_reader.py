"""A model whose answer depends on the pixels: it decodes the video it is given (PyAV), takes the
clip's mean colour, and answers the listed option whose colour is nearest. So a corruption that
moves the colours moves its score, and one that keeps them does not."""
from __future__ import annotations

import re

import av
import numpy as np
from lmms_eval.api.model import lmms

# the fixture's colours (tests/lmms_fixtures.py COLOURS)
COLOURS = {"red": (200, 30, 30), "green": (40, 170, 50), "blue": (40, 60, 210),
           "yellow": (220, 200, 40), "purple": (130, 40, 160), "orange": (230, 120, 20)}
OPTION = re.compile(r"^([A-D])\. (\w+)$", re.MULTILINE)


def mean_colour(path: str) -> np.ndarray:
    """The mean RGB of every decoded frame of ``path``."""
    with av.open(path) as container:
        frames = [f.to_ndarray(format="rgb24").reshape(-1, 3) for f in container.decode(video=0)]
    return np.concatenate(frames).astype(np.float64).mean(axis=0)


def answer(prompt: str, paths: list[str]) -> str:
    """The letter of the option whose colour is nearest the videos' mean colour."""
    mean = np.mean([mean_colour(p) for p in paths], axis=0)
    options = [(letter, name) for letter, name in OPTION.findall(prompt) if name in COLOURS]
    return min(options, key=lambda o: float(np.sum((np.array(COLOURS[o[1]]) - mean) ** 2)))[0]


class ColourReader(lmms):
    """Answers "which colour dominates?" from the decoded pixels; no weights, no device."""

    def __init__(self, **kwargs) -> None:
        super().__init__()

    def generate_until(self, requests) -> list[str]:
        replies = []
        for context, _, doc_to_visual, doc_id, task, split in [r.args for r in requests]:
            visuals = doc_to_visual(self.task_dict[task][split][doc_id])
            replies.append(answer(context, [str(v) for v in visuals]))
        return replies

    def generate_until_multi_round(self, requests) -> list[str]:
        return self.generate_until(requests)

    def loglikelihood(self, requests) -> list[tuple[float, bool]]:
        raise NotImplementedError("colour_reader only generates")
