"""Tiny generated datasets with real encoded videos, in every reader's layout, plus bad inputs."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import av
import numpy as np

from perturb.video import io

FPS = 10
CAPTIONS = ("a man is cooking pasta in a kitchen", "a girl sings a song on stage",
            "a dog runs after a ball", "two people talk about the weather",
            "a car drives down the road", "a woman cuts vegetables")
BAD = ("truncated", "empty", "text", "missing")


def moving_clip(frames: int, height: int = 48, width: int = 64, seed: int = 0) -> np.ndarray:
    """A smooth moving pattern with mild noise, uint8 (T, H, W, 3)."""
    rng = np.random.default_rng(seed)
    t = np.arange(frames)[:, None, None]
    y = np.arange(height)[None, :, None]
    x = np.arange(width)[None, None, :]
    phase = rng.uniform(0, 6, 3)
    chans = [128 + 80 * np.sin((x + (2 + c) * t) / (6 + c) + phase[c]) * np.cos((y - t) / 9)
             for c in range(3)]
    noise = rng.normal(0, 4, (frames, height, width, 3))
    return np.clip(np.stack(chans, -1) + noise, 0, 255).astype(np.uint8)


def write_video(path: Path, frames: int = 12, height: int = 48, width: int = 64,
                seed: int = 0) -> Path:
    """An H.264 .mp4 (what datasets ship) of a moving clip."""
    path.parent.mkdir(parents=True, exist_ok=True)
    io.write(str(path), moving_clip(frames, height, width, seed), FPS, "libx264",
             {"crf": "18", "preset": "ultrafast", "threads": "1"})
    return path


def write_bad_videos(folder: Path) -> dict[str, Path]:
    """A truncated mp4, a zero-byte file, a text file named .mp4, and a path that does not exist."""
    folder.mkdir(parents=True, exist_ok=True)
    good = folder / "truncated.mp4"
    _write_faststart(good, moving_clip(30, seed=99))
    data = good.read_bytes()
    good.write_bytes(data[: len(data) * 2 // 3])      # the index survives, frames are cut off
    (folder / "empty.mp4").write_bytes(b"")
    (folder / "text.mp4").write_text("this is not a video\n" * 20)
    return {"truncated": good, "empty": folder / "empty.mp4", "text": folder / "text.mp4",
            "missing": folder / "missing.mp4"}


def _write_faststart(path: Path, clip: np.ndarray) -> None:
    """An mp4 with its index first, so a truncated copy still opens and fails while decoding."""
    with av.open(str(path), "w", options={"movflags": "faststart"}) as c:
        s = c.add_stream("libx264", rate=FPS, options={"preset": "ultrafast", "threads": "1"})
        s.width, s.height, s.pix_fmt = clip.shape[2], clip.shape[1], "yuv420p"
        for f in clip:
            c.mux(s.encode(av.VideoFrame.from_ndarray(f, format="rgb24")))
        c.mux(s.encode(None))


def generic_dataset(root: Path, n: int = 4, frames: int = 12, bad: bool = False,
                    jsonl: bool = False, captions_per_video: int = 2) -> Path:
    """A generic caption file (relative video paths) with n good clips and optionally the bad ones."""
    rows = []
    for i in range(n):
        write_video(root / "videos" / f"clip{i}.mp4", frames=frames, seed=i)
        rows += [{"video_id": f"clip{i}", "video_path": f"videos/clip{i}.mp4",
                  "caption": CAPTIONS[(i + k) % len(CAPTIONS)]} for k in range(captions_per_video)]
    if bad:
        for name, path in write_bad_videos(root / "videos").items():
            rows.append({"video_id": name, "video_path": f"videos/{path.name}",
                         "caption": f"a {name} video"})
    if jsonl:
        path = root / "captions.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path
    path = root / "captions.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["video_id", "video_path", "caption"])
        w.writeheader()
        w.writerows(rows)
    return path


def msrvtt_dataset(root: Path, n: int = 3, frames: int = 12) -> Path:
    """An MSR-VTT folder: videos/all/videoN.mp4, MSRVTT_data.json, MSRVTT_JSFUSION_test.csv."""
    videos, sentences, fusion = [], [], []
    for i in range(n):
        vid = f"video{i}"
        write_video(root / "videos" / "all" / f"{vid}.mp4", frames=frames, seed=i)
        videos.append({"category": i, "url": f"https://example.org/{i}", "video_id": vid,
                       "start time": 1.0, "end time": 2.0, "split": "test", "id": i})
        for k in range(2):
            sentences.append({"caption": CAPTIONS[(i + k) % len(CAPTIONS)], "video_id": vid,
                              "sen_id": 2 * i + k})
        fusion.append({"key": f"ret{i}", "vid_key": f"msr{i}", "video_id": vid,
                       "sentence": CAPTIONS[i % len(CAPTIONS)]})
    (root / "MSRVTT_data.json").write_text(json.dumps({"videos": videos, "sentences": sentences}))
    with open(root / "MSRVTT_JSFUSION_test.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["key", "vid_key", "video_id", "sentence"])
        w.writeheader()
        w.writerows(fusion)
    return root


def youcook2_dataset(root: Path, n: int = 2, seconds: float = 3.0) -> Path:
    """youcookii_annotations_trainval.json plus raw_videos/<subset>/<recipe>/<id>.mp4."""
    database = {}
    for i in range(n):
        vid = f"yc{i}abcdEFG"
        write_video(root / "raw_videos" / "validation" / "113" / f"{vid}.mp4",
                    frames=int(seconds * FPS), seed=10 + i)
        database[vid] = {"duration": seconds, "subset": "validation", "recipe_type": "113",
                         "video_url": f"https://example.org/{vid}",
                         "annotations": [{"segment": [0, 1], "id": 0, "sentence": CAPTIONS[i]},
                                         {"segment": [1, 2.5], "id": 1, "sentence": CAPTIONS[i + 1]}]}
    (root / "youcookii_annotations_trainval.json").write_text(json.dumps({"database": database}))
    return root
