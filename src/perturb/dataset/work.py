"""The builder's unit of work: :func:`run_task` is the single task function every engine runs.

It is pure apart from the files it writes: outputs are staged under a temporary name, fsynced
and renamed (:mod:`.staging`), and the manifest rows are returned to the caller, which alone
appends them. Video tasks live in :mod:`.video_outputs`, recipe images in :mod:`.image_outputs`,
caption sets in :mod:`.caption_outputs`.
"""
from __future__ import annotations

from typing import Any

from .caption_outputs import run_text
from .image_outputs import run_image
from .work_units import ImageTask, TextTask, VideoTask
from .video_outputs import run_video


def run_task(task: VideoTask | ImageTask | TextTask) -> list[dict[str, Any]]:
    """Run one task and return its manifest rows (never raises for bad inputs)."""
    if isinstance(task, TextTask):
        return [run_text(task)]
    if isinstance(task, ImageTask):
        return run_image(task)
    return run_video(task)
