"""Fixtures of the lmms-eval bridge: tiny solid-colour clips (made with perturb's own video io), a
local multiple-choice video task (json data + YAML + utils.py), a Video-MME-style task whose
doc_to_visual builds paths under HF_HOME (no hub access), and a perturb-built copy of their videos."""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np

from perturb.dataset import BuildOptions, build
from perturb.video import io

COLOURS = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 40, 220)}
LETTERS = {"red": "A", "green": "B", "blue": "C"}
LOCAL_CLIPS = ("red_1", "green_1", "blue_1", "red_2")
LOCAL_TASK = "colour_mc"

LOCAL_YAML = """\
dataset_path: json
dataset_kwargs:
  data_files:
    test: data.json
task: colour_mc
test_split: test
output_type: generate_until
doc_to_visual: !function utils.colour_doc_to_visual
doc_to_text: !function utils.colour_doc_to_text
doc_to_target: answer
generation_kwargs:
  max_new_tokens: 4
  temperature: 0
  do_sample: false
process_results: !function utils.colour_process_results
metric_list:
  - metric: accuracy
    aggregation: mean
    higher_is_better: true
metadata:
  - version: 0.0
"""

LOCAL_UTILS = '''\
"""A local multiple-choice colour task: which colour fills the clip?"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def colour_doc_to_visual(doc):
    return [os.path.join(HERE, doc["video"])]


def colour_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["question"] + "\\n" + "\\n".join(doc["options"]) + "\\nAnswer with the letter."


def colour_process_results(doc, results):
    answer = results[0].strip()[:1].upper() if results and results[0] else ""
    return {"accuracy": float(answer == doc["answer"])}
'''

VMME_TASK = "vmme_mini"
VMME_CLIPS = {"vid001": ".mp4", "vid002": ".MP4", "vid003": ".mkv"}

VMME_HUB = "dataset_path: lmms-eval/Video-MME-mini\ndataset_kwargs:\n"
VMME_LOCAL = "dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: docs.json\n"


def _options(index: int, right: str, others: list[str]) -> tuple[list[str], str]:
    """Colour ``right`` placed among three ``others`` at option ``index % 4``: the options as
    "A. red" lines, and the right letter."""
    slot = index % 4
    ordered = others[:slot] + [right] + others[slot:]
    return [f"{letter}. {name}" for letter, name in zip("ABCD", ordered)], "ABCD"[slot]


# each primary among orange, purple and yellow, which a desaturated clip drifts to
VMME_DOCS = [{"videoID": video, "answer": answer,
              "question": "\n".join(["Which colour fills the clip?", *options, "Answer with the letter."])}
             for i, (video, colour) in enumerate(zip(VMME_CLIPS, COLOURS))
             for options, answer in [_options(i, colour, ["orange", "purple", "yellow"])]]
VMME_YAML = """\
  token: True
  cache_dir: vmme_mini
  video: True
task: vmme_mini
test_split: test
output_type: generate_until
doc_to_visual: !function utils.vmme_doc_to_visual
doc_to_text: !function utils.vmme_doc_to_text
doc_to_target: "answer"
process_results: !function utils.vmme_process_results
metric_list:
  - metric: vmme_perception_score
    aggregation: mean
    higher_is_better: true
"""

VMME_UTILS = '''\
"""Video-MME's path building, in miniature: HF_HOME, the YAML's cache_dir, "data", videoID + ext."""
import os
import sys
from pathlib import Path

import yaml

hf_home = os.getenv("HF_HOME", "~/.cache/huggingface/")
base_cache_dir = os.path.expanduser(hf_home)
with open(Path(__file__).parent / "vmme_mini.yaml", "r") as f:
    safe_data = [line for line in f.readlines() if "!function" not in line]
cache_name = yaml.safe_load("".join(safe_data))["dataset_kwargs"]["cache_dir"]


def vmme_doc_to_visual(doc):
    cache_dir = os.path.join(base_cache_dir, cache_name)
    video_path = doc["videoID"] + ".mp4"
    video_path = os.path.join(cache_dir, "data", video_path)
    if os.path.exists(video_path):
        video_path = video_path
    elif os.path.exists(video_path.replace("mp4", "MP4")):
        video_path = video_path.replace("mp4", "MP4")
    elif os.path.exists(video_path.replace("mp4", "mkv")):
        video_path = video_path.replace("mp4", "mkv")
    else:
        sys.exit(f"video path:{video_path} does not exist, please check")
    return [video_path]


def vmme_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["question"]


def vmme_process_results(doc, results):
    return {"vmme_perception_score": float(results[0].strip()[:1] == doc["answer"])}
'''


def solid_clip(colour: str, frames: int = 6, size: int = 32, palette: dict | None = None) -> np.ndarray:
    """A (T, size, size, 3) uint8 clip filled with one colour (of COLOURS or ``palette``), with a
    faint moving bar."""
    clip = np.empty((frames, size, size, 3), np.uint8)
    clip[:] = (palette or COLOURS)[colour]
    for t in range(frames):
        clip[t, :, t % size] = 128
    return clip


def write_clip(path: Path, colour: str, palette: dict | None = None) -> Path:
    """A tiny H.264 clip of one colour (its container from the suffix: .mp4, .MP4, .mkv)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = "matroska" if path.suffix.lower() == ".mkv" else "mp4"
    io.write(str(path), solid_clip(colour, palette=palette), 10, "libx264", {"crf": "10", "preset": "ultrafast", "threads": "1"},
             format=fmt)
    return path


def local_task(root: Path) -> Path:
    """``root/colour_mc/``: colour_mc.yaml, utils.py, data.json and videos/<clip>.mp4; the task folder."""
    folder = root / LOCAL_TASK
    docs = []
    for clip in LOCAL_CLIPS:
        colour = clip.split("_")[0]
        write_clip(folder / "videos" / f"{clip}.mp4", colour)
        docs.append({"id": clip, "video": f"videos/{clip}.mp4", "question": "Which colour fills the clip?",
                     "options": ["A. red", "B. green", "C. blue"], "answer": LETTERS[colour]})
    (folder / "data.json").write_text(json.dumps(docs, indent=1) + "\n", encoding="utf-8")
    (folder / f"{LOCAL_TASK}.yaml").write_text(LOCAL_YAML, encoding="utf-8")
    (folder / "utils.py").write_text(LOCAL_UTILS, encoding="utf-8")
    return folder


def vmme_task(root: Path, hf_home: Path, local_docs: bool = False) -> tuple[Path, Path]:
    """``root/vmme_mini/`` (YAML + utils.py) and its videos under ``hf_home/vmme_mini/data`` (one .mp4,
    one .MP4, one .mkv); the task folder and the video folder. The docs are Video-MME's hub dataset's
    shape (never loaded), or with ``local_docs`` a docs.json of videoIDs, so lmms-eval runs it offline
    (its docs name no video file: the paths are still built by doc_to_visual)."""
    folder = root / VMME_TASK
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{VMME_TASK}.yaml").write_text((VMME_LOCAL if local_docs else VMME_HUB) + VMME_YAML, encoding="utf-8")
    if local_docs:
        (folder / "docs.json").write_text(json.dumps(VMME_DOCS, indent=1) + "\n", encoding="utf-8")
    (folder / "utils.py").write_text(VMME_UTILS, encoding="utf-8")
    videos = hf_home / VMME_TASK / "data"
    for (video, ext), colour in zip(VMME_CLIPS.items(), COLOURS):
        write_clip(videos / f"{video}{ext}", colour)
    return folder, videos


def build_copy(videos: list[Path], out: Path, ops: str, severities: str, seed: int = 0) -> Path:
    """A ``perturb build`` of these videos (item id = file stem, no text perturbations) into ``out``."""
    listing = out.parent / f"{out.name}-videos.csv"
    listing.parent.mkdir(parents=True, exist_ok=True)
    with listing.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["video_id", "video_path", "caption"])
        writer.writerows([p.stem, str(p), "a clip"] for p in videos)
    result = build(listing, out, video_perturbations=ops, severities=severities, text_perturbations="none",
                   seed=seed, options=BuildOptions(jobs=1, progress=False, command="perturb build (fixture)"))
    assert result.ok, result.summary()
    return out


OPS, SEVERITIES = "contrast,reverse_sampling", "1,5"


def scene(root: Path, ops: str = OPS, severities: str = SEVERITIES, local_docs: bool = False) -> dict[str, Path]:
    """Both fixture tasks under ``root/tasks``, Video-MME-style videos under ``root/hf`` (HF_HOME), and
    one copy of all their videos under ``root/copy``: the paths by name (tasks, hf_home, videos, copy).
    ``local_docs``: the Video-MME-style task reads a local docs.json (lmms-eval runs it offline)."""
    local = local_task(root / "tasks")
    _, videos = vmme_task(root / "tasks", root / "hf", local_docs)
    clips = sorted((local / "videos").glob("*.mp4")) + sorted(videos.iterdir())
    copy = build_copy(clips, root / "copy", ops, severities)
    return {"tasks": root / "tasks", "hf_home": root / "hf", "videos": videos, "copy": copy}


def lmms_tasks_argv(paths: dict[str, Path], out: Path, *tasks: str, ops: str = OPS,
                    severities: str = SEVERITIES) -> list[str]:
    """``perturb lmms-tasks`` arguments writing ``tasks`` (default: both) of a :func:`scene` into ``out``."""
    argv = ["lmms-tasks"]
    for task in tasks or (LOCAL_TASK, VMME_TASK):
        argv += ["--task", task]
    return argv + ["--include-path", str(paths["tasks"]), "--lmms-tasks", str(paths["tasks"]),
                   "--perturbations", ops, "--severities", severities, "--copy", str(paths["copy"]),
                   "--videos", str(paths["videos"]), "--out", str(out)]


# ---------------------------------------------------------------- the harness's end-to-end task
# Six colours, four options a question: a model that names the nearest colour is right on every
# clean clip, and a desaturated clip drifts to a neighbour (saturate moves the score, jumble not).
MC_COLOURS = {**COLOURS, "yellow": (220, 200, 40), "purple": (130, 40, 160), "orange": (230, 120, 20)}
MC_TASK = "dominant_mc"
HARNESS = Path(__file__).resolve().parent / "lmms_harness"     # PYTHONPATH of the lmms-eval runs
PLUGIN, PLUGIN_MODEL = "colour_plugin", "colour_reader"


def dominant_colour_task(root: Path) -> Path:
    """``root/dominant_mc/``: the local multiple-choice task of :func:`local_task` over one clip per
    colour of MC_COLOURS (``videos/<colour>.mp4``) with four options; the task folder."""
    folder = root / MC_TASK
    docs, names = [], list(MC_COLOURS)
    for i, colour in enumerate(MC_COLOURS):
        write_clip(folder / "videos" / f"{colour}.mp4", colour, MC_COLOURS)
        options, answer = _options(i, colour, [names[(i + k) % len(names)] for k in (1, 2, 3)])
        docs.append({"id": colour, "video": f"videos/{colour}.mp4", "question": "Which colour fills the clip?",
                     "options": options, "answer": answer})
    (folder / "data.json").write_text(json.dumps(docs, indent=1) + "\n", encoding="utf-8")
    (folder / f"{MC_TASK}.yaml").write_text(LOCAL_YAML.replace(LOCAL_TASK, MC_TASK), encoding="utf-8")
    (folder / "utils.py").write_text(LOCAL_UTILS, encoding="utf-8")
    return folder


def harness_env(hf_home: Path) -> dict[str, str]:
    """The environment of an lmms-eval run: offline, its caches under ``hf_home``, and the plugin
    model importable (``tests/lmms_harness`` on PYTHONPATH, not ``tests/``, whose datasets.py would
    hide Hugging Face's)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LMMS_EVAL_PLUGINS")}
    return {**env, "HF_HOME": str(hf_home), "HF_DATASETS_CACHE": str(hf_home / "datasets"),
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": str(HARNESS), "LMMS_EVAL_PLUGINS": PLUGIN, "WANDB_MODE": "disabled",
            "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
