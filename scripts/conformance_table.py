"""Regenerate the conformance table in docs/models.md: each hf family's ``preprocess`` against its
official transformers processor (tests/conformance_cases.py) on the same frames.

Run: ``python scripts/conformance_table.py`` (``--check`` prints the table without writing).
For every family, frame size (320x240, 640x360, 1280x720) and clip length (7, 150 frames) it
measures the pixel difference after un-normalising (0..255 levels), whether shapes and grids
agree, and the cosine between the model's outputs on either pixels over an 8x8 gallery.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
DOC = ROOT / "docs" / "models.md"
BEGIN, END = "<!-- conformance:begin -->", "<!-- conformance:end -->"
TEXTS = ["a man is riding a horse", "a dog runs on grass", "a woman cooks food", "a car drives at night",
         "children play football", "a cat sleeps on a sofa", "people dance on a stage", "a boat on a lake"]


def measure(family: str, root: Path) -> dict:
    """Pixel differences over every size and length, grid agreement, and the gallery cosine."""
    from conformance_cases import CASES, LENGTHS, SIZES, build, levels, official, ours, scores, \
        use_official_pixels, video
    from perturb.bench.adapters.hf import load_hf
    from perturb.bench.adapters.model_options import ModelOptions

    case = CASES[family]
    path = build(case, root)
    options = ModelOptions(device="cpu", frames=case.frames, batch_size=8)
    load = lambda: load_hf(f"{path}{'#' + case.mode if case.mode else ''}", options)  # noqa: E731
    a = load()
    diffs, grid_equal = [], True
    for w, h in SIZES:
        for n in LENGTHS:
            clip = video(w, h, n, a.frame_spec.indices(n), seed=n + w)
            want, got = official(case, clip[a.frame_spec.indices(n)]), ours(case, a, clip)
            grid_equal &= got["frames"].shape == want["frames"].shape and got.get("grid") == want.get("grid")
            diffs.append(np.abs(levels(case, got["frames"].float()) - levels(case, want["frames"].float())).ravel())
    d = np.concatenate(diffs)
    clips = [video(320, 240, 150, a.frame_spec.indices(150), seed=i) for i in range(8)]
    mine, ref = scores(a, clips, TEXTS), scores(use_official_pixels(case, load()), clips, TEXTS)
    cos = float((mine * ref).sum() / (np.linalg.norm(mine) * np.linalg.norm(ref)))
    return {"family": family, "processor": case.processor, "max": float(d.max()), "mean": float(d.mean()),
            "within1": float((d <= 1 + 1e-4).mean()), "grid": grid_equal, "cosine": cos}


def table(rows: list[dict]) -> str:
    lines = ["| family | reference processor | max diff (/255) | mean diff (/255) | within 1/255 "
             "| shapes and grid equal | output cosine |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['family']} | `{r['processor']}` | {r['max']:.2f} | {r['mean']:.4f} | "
                     f"{100 * r['within1']:.3f}% | {'yes' if r['grid'] else 'no'} | {r['cosine']:.6f} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="print the table, do not write docs/models.md")
    args = p.parse_args()
    from conformance_cases import CASES
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(f, Path(tmp)) for f in CASES]
    text = table(rows)
    print(text)
    if not args.check:
        doc = DOC.read_text()
        block = f"{BEGIN}\n{text}\n{END}"
        doc = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
        DOC.write_text(doc)


if __name__ == "__main__":
    main()
