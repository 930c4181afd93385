"""Build the bundled sample clip from photographs that ship with scikit-image.

A camera pans (with a slow zoom and a little vertical sway) across a strip of four photographs
(astronaut, coffee, chelsea, rocket) while the scikit-image logo, with its alpha channel, moves
and turns across the view. Deterministic: the same script gives the same frames. Run:

    python scripts/make_sample_clip.py [--out src/perturb/assets/sample/sample.mp4]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np
from skimage import data

from perturb.video.io import write

SIZE = 224                    # output frames are SIZE x SIZE
FRAMES = 64
FPS = 16
STRIP_HEIGHT = 320            # every photograph is scaled to this height, then placed side by side
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket")
SPRITE = 72                   # side of the moving logo, in output pixels
ENCODING = {"codec": "libx264", "pix_fmt": "yuv444p",
            "options": {"crf": "12", "preset": "slow", "threads": "1"}}
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "perturb" / "assets" / "sample" / "sample.mp4"


def photo_strip() -> np.ndarray:
    """The photographs side by side at a common height: the scene the camera pans over."""
    tiles = []
    for name in PHOTOS:
        img = getattr(data, name)()
        w = round(img.shape[1] * STRIP_HEIGHT / img.shape[0])
        tiles.append(cv2.resize(img, (w, STRIP_HEIGHT), interpolation=cv2.INTER_AREA))
    return np.concatenate(tiles, axis=1)


def camera(t: float, strip_width: int) -> np.ndarray:
    """2x3 affine map from the strip to the output frame at time t in [0, 1] (pan, zoom, sway)."""
    ease = 0.5 - 0.5 * np.cos(np.pi * t)                   # starts and ends slowly
    view = 290 - 50 * t                                     # source window side: slow zoom in
    x0 = ease * (strip_width - view)
    y0 = (STRIP_HEIGHT - view) * (0.5 + 0.4 * np.sin(2 * np.pi * 1.5 * t))
    s = SIZE / view
    return np.array([[s, 0, -x0 * s], [0, s, -y0 * s]], dtype=np.float64)


def sprite() -> tuple[np.ndarray, np.ndarray]:
    """The scikit-image logo as float RGB and alpha at a fixed size."""
    logo = data.logo()
    logo = cv2.resize(logo, (SPRITE, SPRITE), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    return logo[..., :3], logo[..., 3:]


def paste(frame: np.ndarray, rgb: np.ndarray, alpha: np.ndarray, t: float) -> np.ndarray:
    """Composite the sprite on a frame, moving on a curve and turning with t."""
    cx = SPRITE / 2 + (SIZE - SPRITE) * t
    cy = SIZE / 2 + 60 * np.sin(2 * np.pi * t)
    m = cv2.getRotationMatrix2D((SPRITE / 2, SPRITE / 2), 180 * t, 1.0)
    m[:, 2] += (cx - SPRITE / 2, cy - SPRITE / 2)
    warp = lambda a: cv2.warpAffine(a, m, (SIZE, SIZE), flags=cv2.INTER_LINEAR,  # noqa: E731
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    a = warp(alpha)[..., None]
    out = frame.astype(np.float32) / 255 * (1 - a) + warp(rgb * alpha)
    return np.clip(np.rint(out * 255), 0, 255).astype(np.uint8)


def make_clip() -> np.ndarray:
    """The sample clip: uint8 (FRAMES, SIZE, SIZE, 3) RGB."""
    strip = photo_strip()
    rgb, alpha = sprite()
    frames = []
    for i in range(FRAMES):
        t = i / (FRAMES - 1)
        view = cv2.warpAffine(strip, camera(t, strip.shape[1]), (SIZE, SIZE),
                              flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        frames.append(paste(view, rgb, alpha, t))
    return np.stack(frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write(args.out, make_clip(), FPS, **ENCODING)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB, {FRAMES} frames at {FPS} fps)")


if __name__ == "__main__":
    main()
