"""Visual perturbations: camera (static_rotate, rotate, translate).

Parameters are sampled apart from rendering (``*_angles`` / ``translate_offsets`` draw them,
``render_rotation`` / ``render_translation`` draw the frames); the registered renderers
(:mod:`..render`, registered in :mod:`..ops.camera`) draw once per clip and render any frames on numpy or torch.

Conventions, shared by every op here:
- A positive angle turns the picture counter-clockwise, as seen on screen, about the frame
  centre ((W-1)/2, (H-1)/2). This is ``cv2.getRotationMatrix2D``'s and PIL's convention; a
  90° rotation of a square frame equals ``np.rot90(frame)``.
- Output keeps the input's size. Area uncovered by the moved picture shows the picture
  mirrored about its edge (``BORDER``, reflect-101), not the black fill of the reference code
  (PIL ``Image.rotate``, a zero-padded crop): black corners are an artefact no camera makes, and
  on a square frame they made 45° score a lower PSNR than 90° (which uncovers nothing), breaking
  the rule that every severity is more destructive than the one below. Rotation samples
  bilinearly (the reference used nearest neighbour).
- Translation offsets are whole pixels: output pixel (y, x) shows input pixel (y + dy, x + dx),
  i.e. a crop window whose corner moves by (dx, dy); no interpolation.
"""
from __future__ import annotations

import cv2
import numpy as np

from .opencv_frames import per_frame
from .twins import numpy_kernel

# Uncovered area shows the picture mirrored about its edge (OpenCV's reflect-101: ...dcb|abcd|cba...).
BORDER = cv2.BORDER_REFLECT_101


def static_angles(n_frames: int, degrees: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """The same angle (degrees, counter-clockwise) for every frame."""
    return np.full(n_frames, float(degrees))


def random_angles(n_frames: int, max_degrees: float, rng: np.random.Generator) -> np.ndarray:
    """An independent angle ~ U(-max_degrees, max_degrees) for every frame."""
    return rng.uniform(-max_degrees, max_degrees, size=n_frames)


def translate_offsets(n_frames: int, max_shift: int, rng: np.random.Generator) -> np.ndarray:
    """Per-frame integer offsets (dx, dy), each uniform in [0, max_shift): shape (T, 2)."""
    if isinstance(max_shift, bool) or not isinstance(max_shift, (int, np.integer)) or max_shift < 1:
        raise ValueError(f"expected max_shift to be an int >= 1 pixel; got {max_shift!r}")
    return rng.integers(0, max_shift, size=(n_frames, 2))


def rotation_matrix(height: int, width: int, degrees: float) -> np.ndarray:
    """The 2x3 affine matrix turning a frame by ``degrees`` counter-clockwise about its centre."""
    return cv2.getRotationMatrix2D(((width - 1) / 2.0, (height - 1) / 2.0), float(degrees), 1.0)


def translation_matrix(dx: float, dy: float) -> np.ndarray:
    """The 2x3 affine matrix with output (y, x) = input (y + dy, x + dx)."""
    return np.array([[1.0, 0.0, -dx], [0.0, 1.0, -dy]])


def render_affine(clip: np.ndarray, matrices: np.ndarray, interpolation: int = cv2.INTER_LINEAR) -> np.ndarray:
    """Each frame t warped by its own 2x3 matrix; same size, mirrored picture where uncovered."""
    t, h, w, _ = clip.shape
    matrices = np.asarray(matrices, dtype=np.float64)
    if matrices.shape != (t, 2, 3):
        raise ValueError(f"expected {t} affine matrices of shape (2, 3); got shape {matrices.shape}")
    return per_frame(clip, lambda frame, i: cv2.warpAffine(
        frame, matrices[i], (w, h), flags=interpolation, borderMode=BORDER))


def render_rotation(clip: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Each frame t turned by ``angles[t]`` degrees (bilinear)."""
    t, h, w, _ = clip.shape
    angles = np.asarray(angles, dtype=np.float64)
    if angles.shape != (t,):
        raise ValueError(f"expected {t} angles, one per frame; got shape {angles.shape}")
    return render_affine(clip, np.stack([rotation_matrix(h, w, a) for a in angles]))


def render_translation(clip: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each frame t shifted so output (y, x) = input (y + dy_t, x + dx_t); exact whole pixels."""
    t = clip.shape[0]
    offsets = np.asarray(offsets)
    if offsets.shape != (t, 2):
        raise ValueError(f"expected {t} (dx, dy) offsets; got shape {offsets.shape}")
    matrices = np.stack([translation_matrix(dx, dy) for dx, dy in offsets.tolist()])
    return render_affine(clip, matrices, cv2.INTER_NEAREST)


# ---------------------------------------------------------------------- draw / render split
def draw_angles(rng: np.random.Generator, n_frames: int, params) -> dict[str, np.ndarray]:
    return {"angles": random_angles(n_frames, params["max_degrees"], rng)}


def draw_offsets(rng: np.random.Generator, n_frames: int, params) -> dict[str, np.ndarray]:
    return {"offsets": translate_offsets(n_frames, params["max_shift"], rng)}


@numpy_kernel("static_rotate")
def static_rotate_frames(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
    return render_rotation(frames, static_angles(len(ids), params["degrees"]))


@numpy_kernel("rotate")
def rotate_frames(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
    return render_rotation(frames, drawn["angles"][ids])


@numpy_kernel("translate")
def translate_frames(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
    return render_translation(frames, drawn["offsets"][ids])
