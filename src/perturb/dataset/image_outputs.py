"""One input image -> its recipe's clean copy and corrupted files (``perturb build --recipe``).

The image is read and prepared (the recipe's resize and crop) once; each output is corrupted from
that with its own seed, encoded as the recipe saves it and published atomically. A bad input or a
failing kernel is recorded in the row, never raised.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .manifest import row_key
from .staging import commit, discard, error_text, temp_path
from .work_units import ImageTask, Output

CLEAN = "clean"


def _row(task: ImageTask, out: Output | None, path: str, **fields: Any) -> dict[str, Any]:
    it = task.item
    named = {"perturbation": out.spec.ref, "category": out.spec.category, "severity": out.severity,
             "seed": out.seed, "params": out.params} if out is not None else \
        {"perturbation": CLEAN, "category": None, "severity": None, "seed": None, "params": None}
    return {"key": row_key(it.item_id, named["perturbation"], named["severity"]), "kind": "image",
            "item_id": it.item_id, "video_id": None, **named, "label": it.label, "recipe": task.recipe,
            "path": path, "status": "ok", "error": None, **fields}


def _save(task: ImageTask, recipe: Any, pixels: Any, path: str) -> dict[str, Any]:
    """Encode and publish one output; the row's file fields."""
    final = Path(task.out_dir) / path
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(final)
    try:
        tmp.write_bytes(recipe.encode(pixels))
        digest, size = commit(tmp, final)
    except BaseException:
        discard(tmp)
        raise
    return {"sha256": digest, "bytes": size, "frames": 1, "height": int(pixels.shape[0]),
            "width": int(pixels.shape[1])}


def run_image(task: ImageTask) -> list[dict[str, Any]]:
    """Make the clean copy (when asked) and every corrupted output of one image."""
    from ..image import RECIPES, read_image

    recipe = RECIPES[task.recipe]
    wanted: list[tuple[Output | None, str]] = [(None, task.clean)] if task.clean else []
    wanted += [(o, o.path) for o in task.outputs]
    t0 = time.perf_counter()
    try:
        prepared = recipe.clean(read_image(task.item.path))
    except Exception as exc:  # noqa: BLE001 - any unreadable input is a recorded failure
        return [_row(task, o, p, status="failed", error=error_text(exc), seconds=0.0) for o, p in wanted]
    shared = (time.perf_counter() - t0) / len(wanted)
    rows = []
    for out, path in wanted:
        t = time.perf_counter()
        try:
            pixels = prepared if out is None else recipe.render(prepared, out.spec.name, out.severity, out.seed)
            fields = _save(task, recipe, pixels, path)
        except Exception as exc:  # noqa: BLE001 - one bad output must not stop the others
            fields = {"status": "failed", "error": error_text(exc)}
        rows.append(_row(task, out, path, **fields, seconds=round(shared + time.perf_counter() - t, 4)))
    return rows
