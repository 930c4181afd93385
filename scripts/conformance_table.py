"""Regenerate the conformance table in docs/models.md: each hf family's ``preprocess`` against its
official transformers processor (tests/conformance_cases.py) on the same frames.

Run: ``python scripts/conformance_table.py`` (``--check`` prints the table without writing;
``--families vit,deit`` re-measures only those rows and keeps the others as the page has them).
For every family, frame size (320x240, 640x360, 1280x720) and clip length (7, 150 frames) it
measures the pixel difference after un-normalising (0..255 levels), whether shapes and grids
agree, and the cosine between the model's outputs on either pixels over an 8x8 gallery (8 clips'
logits for a classifier), in fp32 and under bf16 autocast.
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
PRECISIONS = ("fp32", "bf16")
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
    load = lambda precision="fp32": load_hf(  # noqa: E731
        f"{path}{'#' + case.mode if case.mode else ''}",
        ModelOptions(device="cpu", frames=case.frames, batch_size=8, precision=precision))
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
    cosine = {}
    for precision in PRECISIONS:
        mine = scores(load(precision), clips, TEXTS)
        ref = scores(use_official_pixels(case, load(precision)), clips, TEXTS)
        cosine[precision] = float((mine * ref).sum() / (np.linalg.norm(mine) * np.linalg.norm(ref)))
    return {"family": family, "processor": case.processor, "max": float(d.max()), "mean": float(d.mean()),
            "within1": float((d <= 1 + 1e-4).mean()), "grid": grid_equal, "cosine": cosine}


def row(r: dict) -> str:
    return (f"| {r['family']} | `{r['processor']}` | {r['max']:.2f} | {r['mean']:.4f} | "
            f"{100 * r['within1']:.3f}% | {'yes' if r['grid'] else 'no'} | "
            + " | ".join(f"{r['cosine'][p]:.6f}" for p in PRECISIONS) + " |")


def table(rows: list[str]) -> str:
    lines = ["| family | reference processor | max diff (/255) | mean diff (/255) | within 1/255 "
             "| shapes and grid equal | output cosine fp32 | output cosine bf16 |",
             "|---|---|---|---|---|---|---|---|"]
    return "\n".join(lines + rows)


def rows_on_page(doc: str) -> dict[str, str]:
    """family -> its row as the page has it."""
    block = doc.partition(BEGIN)[2].partition(END)[0]
    return {ln.split("|")[1].strip(): ln for ln in block.splitlines()[3:] if ln.startswith("| ")}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="print the table, do not write docs/models.md")
    p.add_argument("--families", help="comma-separated families to re-measure (default: all)")
    args = p.parse_args()
    from conformance_cases import CASES
    wanted = args.families.split(",") if args.families else list(CASES)
    unknown = sorted(set(wanted) - set(CASES))
    if unknown:
        p.error(f"--families: no conformance case for {', '.join(unknown)}; expected some of {', '.join(CASES)}")
    kept = rows_on_page(DOC.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        measured = {f: row(measure(f, Path(tmp))) for f in wanted}
    text = table([measured.get(f) or kept[f] for f in CASES if f in measured or f in kept])
    print(text)
    if not args.check:
        doc = DOC.read_text()                   # as it is now, after the measuring
        block = f"{BEGIN}\n{text}\n{END}"
        doc = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
        DOC.write_text(doc)


if __name__ == "__main__":
    main()
