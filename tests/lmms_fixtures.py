"""Tiny lmms-eval tasks for the bridge's tests, written to disk (no hub, no lmms_eval import here):
a local multiple-choice video task ("which colour dominates?") over six 32x32 clips, each mostly
one colour, and a Video-MME-style task whose ``doc_to_visual`` builds the video path from a cache
folder. The plugin model in ``tests/lmms_harness`` answers these questions from the pixels."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# the clips' dominant colours (RGB); the plugin model holds the same table
COLOURS = {"red": (200, 30, 30), "green": (40, 170, 50), "blue": (40, 60, 210),
           "yellow": (220, 200, 40), "purple": (130, 40, 160), "orange": (230, 120, 20)}
LETTERS = "ABCD"
TASK = "colour_mc"
VMME_TASK = "colour_vmme"
PLUGIN = "colour_plugin"                  # the LMMS_EVAL_PLUGINS package, in tests/lmms_harness/
PLUGIN_MODEL = "colour_reader"
TESTS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class LmmsTask:
    """A written fixture task: its YAML, the folder of its videos, the generic caption file that
    ``perturb build`` reads, and the right answer letter per question id."""
    yaml: Path
    videos: Path
    captions: Path
    answers: dict[str, str]


def colour_clip(colour: str, index: int, frames: int = 8, size: int = 32) -> np.ndarray:
    """A (frames, size, size, 3) uint8 clip: ``colour`` with seeded pixel noise, and a small square
    of the next colour that moves across the frames (so temporal ops reorder something)."""
    rng = np.random.default_rng(index)
    names = list(COLOURS)
    base = np.array(COLOURS[colour], np.int16)
    other = np.array(COLOURS[names[(names.index(colour) + 1) % len(names)]], np.int16)
    clip = base + rng.integers(-20, 21, (frames, size, size, 3), dtype=np.int16)
    for t in range(frames):
        x = (3 * t) % (size - 8)
        clip[t, 4:12, x:x + 8] = other
    return np.clip(clip, 0, 255).astype(np.uint8)


def _options(index: int) -> tuple[list[str], str]:
    """Four colour names: the clip's own at letter ``index % 4``, then the next three colours in
    the table's order around it; and that letter."""
    names = list(COLOURS)
    right = names[index]
    others = [names[(index + k) % len(names)] for k in (1, 2, 3)]
    slot = index % len(LETTERS)
    return others[:slot] + [right] + others[slot:], LETTERS[slot]


def _write_clips(folder: Path) -> dict[str, Path]:
    """The six clips as lossless H.264 .mp4 files, ``clip<i>.mp4``; {video id: path}."""
    from perturb.video.io import write

    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for i, colour in enumerate(COLOURS):
        paths[f"clip{i}"] = folder / f"clip{i}.mp4"
        write(paths[f"clip{i}"], colour_clip(colour, i), fps=8.0, codec="libx264rgb", qp=0)
    return paths


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


UTILS = '''\
"""{what}"""
import os
import re


def colour_text(doc, lmms_eval_specific_kwargs=None):
    options = "\\n".join(f"{{letter}}. {{name}}" for letter, name in zip("ABCD", doc["options"]))
    return f"Which colour dominates the video?\\n{{options}}\\nAnswer with the option's letter."


def colour_results(doc, results):
    match = re.search(r"[ABCD]", results[0].strip().upper())
    return {{"accuracy": float(bool(match) and match.group(0) == doc["answer"])}}
{visual}'''

LOCAL_VISUAL = '''

def colour_visual(doc):
    return [doc["video"]]
'''

# Video-MME's shape: the path joins HF_HOME, the YAML's cache_dir, "data" and the video id, and a
# missing file exits the process (as tasks/videomme/utils.py does)
VMME_VISUAL = '''
import sys
from pathlib import Path

import yaml

hf_home = os.getenv("HF_HOME", "~/.cache/huggingface/")
base_cache_dir = os.path.expanduser(hf_home)
with open(Path(__file__).parent / "colour_vmme.yaml", "r") as f:
    safe_data = [line for line in f.readlines() if "!function" not in line]
cache_name = yaml.safe_load("".join(safe_data))["dataset_kwargs"]["cache_dir"]


def colour_doc_to_visual(doc):
    cache_dir = os.path.join(base_cache_dir, cache_name)
    video_path = os.path.join(cache_dir, "data", doc["videoID"] + ".mp4")
    if os.path.exists(video_path):
        return [video_path]
    sys.exit(f"video path:{video_path} does not exist, please check")
'''

YAML = '''\
dataset_path: json
dataset_kwargs:
{kwargs}
task: {task}
test_split: train
output_type: generate_until
doc_to_visual: !function utils.{visual}
doc_to_text: !function utils.colour_text
doc_to_target: answer
generation_kwargs:
  max_new_tokens: 4
  do_sample: false
process_results: !function utils.colour_results
metric_list:
  - metric: accuracy
    aggregation: mean
    higher_is_better: true
metadata:
  version: 0.0
'''


def _questions(videos: dict[str, Path], key: str, absolute: bool) -> tuple[list[dict], dict[str, str]]:
    rows, answers = [], {}
    for i, (vid, path) in enumerate(videos.items()):
        options, answers[f"q{i}"] = _options(i)
        rows.append({"question_id": f"q{i}", key: str(path) if absolute else vid,
                     "options": options, "answer": answers[f"q{i}"]})
    return rows, answers


def _captions(folder: Path, videos: dict[str, Path]) -> Path:
    """The generic caption file ``perturb build`` reads: one row per clip (the caption is its colour)."""
    return _write_jsonl(folder / "captions.jsonl", [
        {"video_id": vid, "video_path": str(path), "caption": f"a {colour} clip"}
        for (vid, path), colour in zip(videos.items(), COLOURS)])


def write_colour_task(root: str | os.PathLike) -> LmmsTask:
    """The local-data task ``colour_mc``: ``root/tasks/colour_mc/`` holds its YAML, ``utils.py`` and
    ``questions.jsonl`` (``video`` holds each clip's absolute path); the clips are in
    ``root/colour_mc/videos/``. ``root/tasks`` is the folder to pass lmms-eval's ``--include_path``."""
    root = Path(root)
    folder = root / "tasks" / TASK
    videos = _write_clips(root / TASK / "videos")
    rows, answers = _questions(videos, "video", absolute=True)
    data = _write_jsonl(folder / "questions.jsonl", rows)
    (folder / "utils.py").write_text(
        UTILS.format(what="The colour task's prompt, scoring and visuals.", visual=LOCAL_VISUAL))
    yaml = folder / f"{TASK}.yaml"
    yaml.write_text(YAML.format(kwargs=f"  data_files: {json.dumps(str(data))}", task=TASK, visual="colour_visual"))
    return LmmsTask(yaml, root / TASK / "videos", _captions(root / TASK, videos), answers)


def write_vmme_task(root: str | os.PathLike, hf_home: str | os.PathLike) -> LmmsTask:
    """The path-building task ``colour_vmme`` in ``root/tasks/colour_vmme/``: its ``doc_to_visual``
    reads ``<HF_HOME>/colour_vmme_cache/data/<videoID>.mp4``, where the clips are written."""
    root = Path(root)
    folder = root / "tasks" / VMME_TASK
    videos = _write_clips(Path(hf_home) / "colour_vmme_cache" / "data")
    rows, answers = _questions(videos, "videoID", absolute=False)
    data = _write_jsonl(folder / "vmme.jsonl", rows)
    (folder / "utils.py").write_text(
        UTILS.format(what="A Video-MME-shaped task: paths built from HF_HOME and cache_dir.", visual=VMME_VISUAL))
    yaml = folder / f"{VMME_TASK}.yaml"
    yaml.write_text(YAML.format(kwargs=f"  data_files: {json.dumps(str(data))}\n  cache_dir: colour_vmme_cache",
                                task=VMME_TASK, visual="colour_doc_to_visual"))
    return LmmsTask(yaml, videos["clip0"].parent, _captions(root / VMME_TASK, videos), answers)


def plugin_env(hf_home: str | os.PathLike) -> dict[str, str]:
    """The environment an lmms-eval subprocess runs in: offline, its caches under ``hf_home``, and
    the plugin model importable (``LMMS_EVAL_PLUGINS``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LMMS_EVAL_PLUGINS")}
    return {**env, "HF_HOME": str(hf_home), "HF_DATASETS_CACHE": str(Path(hf_home) / "datasets"),
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": str(TESTS / "lmms_harness"), "LMMS_EVAL_PLUGINS": PLUGIN, "WANDB_MODE": "disabled",
            "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}

