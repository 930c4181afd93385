"""The demo's captioned-video set: camera moves over real photographs (scikit-image), varied captions.

Ten photographs x four camera moves (pan left/right, zoom in/out) give 40 test videos, each with
two captions. Retrieval needs both *what* is shown and *how* the camera moves. Training data for
the demo model are other renderings of the same scenes (random start, speed, window) with
captions from different sentence frames; the test captions use held-out frames.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..fileio import jsonl_text, write_if_changed

SCENES: dict[str, tuple[str, ...]] = {
    "astronaut": ("an astronaut in a white space suit", "a smiling woman astronaut next to a flag",
                  "a female astronaut posing for a portrait"),
    "chelsea": ("a ginger cat", "an orange tabby cat resting", "a cat with striped fur"),
    "coffee": ("a cup of coffee on a saucer", "a mug of hot coffee", "a coffee cup on a table"),
    "rocket": ("a rocket on the launch pad", "a space rocket before liftoff",
               "a tall rocket standing by its tower"),
    "camera": ("a man holding a camera on a tripod", "a photographer standing in a field",
               "a man taking pictures outdoors"),
    "coins": ("a tray of old coins", "a collection of silver coins", "rows of ancient coins"),
    "moon": ("the cratered surface of the moon", "craters on the moon", "a grey lunar landscape"),
    "hubble_deep_field": ("galaxies in deep space", "a field of distant galaxies",
                          "stars and galaxies in the night sky"),
    "stereo_motorcycle": ("a red motorcycle in a garage", "a parked motorbike",
                          "a shiny red motorbike indoors"),
    "retina": ("the retina of a human eye", "blood vessels in an eye scan", "a medical image of an eye"),
}
MOTIONS: dict[str, tuple[str, ...]] = {
    "pan_left": ("pans to the left", "moves left", "slides to the left"),
    "pan_right": ("pans to the right", "moves right", "slides to the right"),
    "zoom_in": ("zooms in", "moves closer", "pushes in slowly"),
    "zoom_out": ("zooms out", "pulls back", "moves away"),
}
TRAIN_FRAMES = ("{subject}, the camera {motion}", "video of {subject}; the view {motion}",
                "the camera {motion} over {subject}", "{subject} as the shot {motion}")
TEST_FRAMES = ("a clip in which the camera {motion} across {subject}",
               "footage showing {subject} while the camera {motion}")


@dataclass(frozen=True)
class Scene:
    """One (photograph, camera move) combination."""

    photo: str
    motion: str

    @property
    def video_id(self) -> str:
        return f"{self.photo}-{self.motion}"


def scenes() -> list[Scene]:
    """All 40 demo scenes, in a fixed order."""
    return [Scene(p, m) for p in SCENES for m in MOTIONS]


def photo(name: str, short_side: int = 192) -> np.ndarray:
    """A scikit-image photograph as RGB uint8, downscaled to ``short_side``."""
    import cv2
    import skimage.data

    img = getattr(skimage.data, name)()
    img = img[0] if isinstance(img, tuple) else img
    img = np.asarray(img)
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=2)
    img = img[..., :3].astype(np.uint8)
    scale = short_side / min(img.shape[:2])
    return cv2.resize(img, (round(img.shape[1] * scale), round(img.shape[0] * scale)),
                      interpolation=cv2.INTER_AREA)


def render(image: np.ndarray, motion: str, rng: np.random.Generator, frames: int = 12,
           size: int = 64) -> np.ndarray:
    """A (frames, size, size, 3) clip of a camera move over ``image`` (jittered by ``rng``)."""
    import cv2

    h, w = image.shape[:2]
    side0 = min(h, w)
    t = np.linspace(0.0, 1.0, frames)
    if motion.startswith("pan"):
        win = side0 * rng.uniform(0.5, 0.65)
        travel = (w - win) * rng.uniform(0.5, 1.0)
        x_start = rng.uniform(0, w - win - travel)
        xs = x_start + travel * (t if motion == "pan_right" else 1 - t)
        ys = np.full(frames, rng.uniform(0, h - win))
        sides = np.full(frames, win)
    else:
        big, small = side0 * rng.uniform(0.85, 0.98), side0 * rng.uniform(0.4, 0.55)
        sides = big + (small - big) * (t if motion == "zoom_in" else 1 - t)
        cx, cy = w / 2 + rng.uniform(-0.05, 0.05) * w, h / 2 + rng.uniform(-0.05, 0.05) * h
        xs = np.clip(cx - sides / 2, 0, w - sides)
        ys = np.clip(cy - sides / 2, 0, h - sides)
    out = np.empty((frames, size, size, 3), dtype=np.uint8)
    for i in range(frames):
        x, y, s = int(xs[i]), int(ys[i]), max(int(sides[i]), 2)
        out[i] = cv2.resize(image[y:y + s, x:x + s], (size, size), interpolation=cv2.INTER_AREA)
    return out


def caption(scene: Scene, rng: np.random.Generator, frames: tuple[str, ...]) -> str:
    """One caption of a scene from a random sentence frame, subject and motion phrase."""
    frame = frames[rng.integers(len(frames))]
    subject = SCENES[scene.photo][rng.integers(len(SCENES[scene.photo]))]
    motion = MOTIONS[scene.motion][rng.integers(len(MOTIONS[scene.motion]))]
    return frame.format(subject=subject, motion=motion)


def training_set(seed: int = 0, renders: int = 6, frames: int = 12,
                 size: int = 64) -> tuple[list[np.ndarray], list[str], np.ndarray]:
    """Clips, captions and scene labels for training (other renderings, training sentence frames)."""
    rng = np.random.default_rng(seed)
    photos = {p: photo(p) for p in SCENES}
    clips, texts, labels = [], [], []
    for label, sc in enumerate(scenes()):
        for _ in range(renders):
            clips.append(render(photos[sc.photo], sc.motion, rng, frames, size))
            texts.append(caption(sc, rng, TRAIN_FRAMES))
            labels.append(label)
    return clips, texts, np.asarray(labels)


def write_dataset(out: str | Path, seed: int = 1, frames: int = 12, size: int = 64,
                  captions_per_video: int = 2) -> Path:
    """Write the 40 test videos (lossless FFV1 .mkv) and ``captions.jsonl`` (generic format); a file
    that already holds the same frames or text is left as it is, so a second demo run reads its
    embeddings from the cache instead of computing them again."""
    from ..video.io import write_unless_same

    out = Path(out)
    (out / "videos").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    photos = {p: photo(p) for p in SCENES}
    rows = []
    for sc in scenes():
        clip = render(photos[sc.photo], sc.motion, rng, frames, size)
        rel = f"videos/{sc.video_id}.mkv"
        write_unless_same(out / rel, clip, fps=8.0)
        seen: set[str] = set()
        while len(seen) < captions_per_video:
            seen.add(caption(sc, rng, TEST_FRAMES))
        rows += [{"video_id": sc.video_id, "video_path": rel, "caption": c} for c in sorted(seen)]
    write_if_changed(out / "captions.jsonl", jsonl_text(rows))
    return out / "captions.jsonl"
