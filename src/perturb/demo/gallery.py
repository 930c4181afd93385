"""The demo's first half: every video perturbation at every severity on the bundled sample clip,
as ``gallery.png`` and a table of mean PSNR against the clean clip."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..selection import SEVERITY_LEVELS
from ..video.psnr import mean_psnr

PSNR_CAP = 100.0     # dB reported for a frame identical to the clean one


def gallery_demo(out_dir: str | Path, seed: int = 0,
                 frames: int | None = None) -> tuple[Path, dict[str, dict[int, float]]]:
    """Write ``out_dir/gallery.png`` for the sample clip; return it with the PSNR table {name: {sev: dB}}."""
    from ..video.gallery import gallery, save_png
    from ..video.sample import sample_clip

    clip = sample_clip(frames)
    scores: dict[str, dict[int, float]] = {}

    def measure(name: str, severity: int, out: np.ndarray) -> None:
        scores.setdefault(name, {})[severity] = mean_psnr(clip, out, cap=PSNR_CAP)

    image = gallery(clip, "all", seed=seed, observe=measure)
    return save_png(Path(out_dir) / "gallery.png", image), scores


def summary_lines(scores: dict[str, dict[int, float]]) -> list[str]:
    """The PSNR table as text, one line per perturbation."""
    lines = ["mean PSNR (dB) against the clean sample clip, severity " + "  ".join(map(str, SEVERITY_LEVELS))]
    lines += [f"  {name:<18}" + " ".join(f"{row[s]:6.2f}" for s in SEVERITY_LEVELS if s in row)
              for name, row in scores.items()]
    return lines
