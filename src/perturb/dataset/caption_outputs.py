"""One text perturbation -> captions/<perturbation>.jsonl over every caption of the dataset."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..errors import MissingResourceError
from ..fileio import jsonl_text
from .manifest import row_key
from .staging import commit, discard, error_text, temp_path
from .work_units import TextTask


def run_text(task: TextTask) -> dict[str, Any]:
    """Write captions/<perturbation>.jsonl: one row per caption with the applicability flag."""
    from ..text.api import apply_batch

    t0 = time.perf_counter()
    spec = task.spec
    row = {"key": row_key("*", spec.name, None), "kind": "text", "item_id": "*", "video_id": None,
           "perturbation": spec.name, "category": spec.category, "severity": None,
           "seed": task.seed, "params": spec.params(None) if not spec.has_severity else
           spec.params(spec.default_severity), "path": task.path, "status": "ok", "error": None}
    final = Path(task.out_dir) / task.path
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(final)
    try:
        refs = [(it, i, c) for it in task.items for i, c in enumerate(it.captions)]
        results = apply_batch([c for _, _, c in refs], spec.name, seed=task.seed)
        tmp.write_text(jsonl_text({"item_id": it.item_id, "video_id": it.video_id,
                                   "caption_index": i, "original": c, "text": str(res),
                                   "applied": bool(res.applied)}
                                  for (it, i, c), res in zip(refs, results)), encoding="utf-8")
        digest, size = commit(tmp, final)
    except Exception as exc:  # noqa: BLE001 - recorded; a missing model or resource is 'skipped'
        discard(tmp)
        status = "skipped" if isinstance(exc, MissingResourceError) else "failed"
        return {**row, "status": status, "error": error_text(exc),
                "seconds": round(time.perf_counter() - t0, 4)}
    applied = sum(bool(r.applied) for r in results)
    return {**row, "sha256": digest, "bytes": size, "captions": len(results),
            "applied_rate": round(applied / len(results), 6) if results else None,
            "seconds": round(time.perf_counter() - t0, 4)}
