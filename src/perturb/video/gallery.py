"""A picture of perturbations x severities for one frame, like Figure 2 of the paper's supplement.

Each row is a perturbation, each column a severity (after a "clean" column). A cell shows frame
``K`` of the perturbed clip: for temporal perturbations that is whatever frame the perturbation
put at position K. Each row has its own seed, derived from (seed, name), so a row does not depend
on which other perturbations are drawn, and the severities of a row share their random draws
(the same rotation direction, nested freeze frames), which makes the progression easy to read.
Drawn with OpenCV only.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Sequence

import cv2
import numpy as np

from ..registry import REGISTRY
from ..selection import SEVERITY_LEVELS
from ..rng import derive_seed
from .api import apply
from .clip import to_numpy

FONT = cv2.FONT_HERSHEY_SIMPLEX
FONT_SCALE = 0.45
PAD = 4                      # pixels between cells
BACKGROUND = 255             # white
INK = (0, 0, 0)              # black, RGB


def middle_frame(n_frames: int) -> int:
    """The default frame shown: the middle one."""
    return n_frames // 2


def _check_frame(frame: int | None, n_frames: int) -> int:
    if frame is None:
        return middle_frame(n_frames)
    if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)) or not 0 <= frame < n_frames:
        raise ValueError(f"expected a frame index in 0..{n_frames - 1}; got {frame!r}")
    return int(frame)


def _thumbnail(frame: np.ndarray, max_size: int) -> np.ndarray:
    h, w = frame.shape[:2]
    scale = max_size / max(h, w)
    if scale >= 1:
        return frame
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return cv2.resize(frame, size, interpolation=cv2.INTER_AREA)


Observer = Callable[[str, int, np.ndarray], None]


def gallery_cells(clip: np.ndarray, names: Sequence[str], severities: Sequence[int], frame: int,
                  seed: int, observe: Observer | None = None) -> list[list[np.ndarray]]:
    """Frame ``frame`` of the clean clip and of every (perturbation, severity): rows of frames.

    ``observe(name, severity, perturbed_clip)`` is called on every whole perturbed clip, so a
    caller can measure them without perturbing twice.
    """
    rows = []
    for name in names:
        row = [clip[frame]]
        for s in severities:
            out = apply(clip, name, severity=s, seed=derive_seed(seed, name))
            if observe is not None:
                observe(name, s, out)
            row.append(out[frame])
        rows.append(row)
    return rows


def _text_size(text: str) -> tuple[int, int]:
    (w, h), base = cv2.getTextSize(text, FONT, FONT_SCALE, 1)
    return w, h + base


def _put(canvas: np.ndarray, text: str, x: int, y_top: int) -> None:
    w, h = _text_size(text)
    cv2.putText(canvas, text, (x, y_top + h - 3), FONT, FONT_SCALE, INK, 1, cv2.LINE_AA)


def render_grid(rows: Sequence[Sequence[np.ndarray]], row_labels: Sequence[str],
                col_labels: Sequence[str], title: str = "") -> np.ndarray:
    """Lay out equally sized RGB cells in a labelled grid on a white canvas (uint8 RGB)."""
    if not rows or len(rows) != len(row_labels) or any(len(r) != len(col_labels) for r in rows):
        raise ValueError("expected one label per row and per column of a non-empty grid")
    ch, cw = rows[0][0].shape[:2]
    line = max(_text_size(t)[1] for t in (*row_labels, *col_labels, title or "x")) + PAD
    label_w = max(_text_size(t)[0] for t in row_labels) + 3 * PAD
    top = line * (2 if title else 1) + PAD
    height = top + len(rows) * (ch + PAD) + PAD
    width = max(label_w + len(col_labels) * (cw + PAD) + PAD, _text_size(title)[0] + 2 * PAD)
    canvas = np.full((height, width, 3), BACKGROUND, dtype=np.uint8)
    if title:
        _put(canvas, title, PAD, PAD)
    for j, text in enumerate(col_labels):
        x = label_w + j * (cw + PAD) + max(0, (cw - _text_size(text)[0]) // 2)
        _put(canvas, text, x, top - line)
    for i, (row, text) in enumerate(zip(rows, row_labels)):
        y = top + i * (ch + PAD)
        _put(canvas, text, PAD, y + max(0, (ch - _text_size(text)[1]) // 2))
        for j, cell in enumerate(row):
            x = label_w + j * (cw + PAD)
            canvas[y:y + ch, x:x + cw] = cell
    return canvas


def gallery(clip: object, perturbations: str | Iterable[str] = "all", *, frame: int | None = None,
            severities: Sequence[int] = SEVERITY_LEVELS, seed: int = 0, max_size: int = 128,
            observe: Observer | None = None) -> np.ndarray:
    """The gallery image (uint8 RGB) of ``perturbations`` (names, categories or "all") on ``clip``.

    ``frame`` defaults to the middle frame; cells are shrunk to at most ``max_size`` pixels;
    ``observe`` is passed to :func:`gallery_cells`.
    """
    arr, _ = to_numpy(clip)
    k = _check_frame(frame, arr.shape[0])
    specs = REGISTRY.resolve(perturbations, "video")
    if not specs:
        raise ValueError(f"expected at least one video perturbation; got {perturbations!r}")
    bad = [s for s in severities if s not in SEVERITY_LEVELS]
    if not severities or bad:
        raise ValueError(f"expected severities in {SEVERITY_LEVELS}; got {list(severities)!r}")
    names = [s.ref for s in specs]
    cells = gallery_cells(arr, names, list(severities), k, seed, observe)
    thumbs = [[_thumbnail(c, max_size) for c in row] for row in cells]
    cols = ["clean", *(f"severity {s}" for s in severities)]
    title = f"frame {k} of {arr.shape[0]}; severity increases to the right"
    return render_grid(thumbs, names, cols, title)


def save_png(path: str | Path, image: np.ndarray) -> Path:
    """Write a uint8 RGB image as PNG (parent folders created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), cv2.cvtColor(image, cv2.COLOR_RGB2BGR)):
        raise ValueError(f"could not write an image to {str(path)!r} (expected a .png path)")
    return path
