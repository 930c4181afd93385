"""The demo: the perturbation gallery of the sample clip (:mod:`.gallery`), the demo videos
(:mod:`.data`), the small trained demo model (:mod:`.model`) and the benchmark of it (:mod:`.run`);
``python -m perturb.demo --out DIR`` runs them all."""
from __future__ import annotations

from .gallery import PSNR_CAP, gallery_demo, summary_lines

__all__ = ["PSNR_CAP", "gallery_demo", "summary_lines"]
