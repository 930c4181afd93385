"""Perturb the bundled sample clip and a caption, and save a few results.

    python examples/perturb_clip_and_caption.py --out example-out
"""
from __future__ import annotations

import argparse
from pathlib import Path

import perturb
from perturb.video import io
from perturb.video.sample import sample_clip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("example-out"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    clip = sample_clip()
    for name, severity in [("motion_blur", 3), ("jumble", 4), ("translate", 5)]:
        out = perturb.video.apply(clip, name, severity=severity, seed=0)
        path = args.out / f"{name}-{severity}.mkv"
        io.write(path, out, fps=16)
        print(f"wrote {path}  ({out.shape[0]} frames)")

    chain = perturb.video.Compose([("gaussian_noise", 2), ("jpeg", 4)], seed=0)
    io.write(args.out / "noise+jpeg.mkv", chain(clip), fps=16)

    caption = "a little girl does gymnastics"
    for name in ["Typos", "NoVB", "Tense", "Passive", "GenderSwap", "DropFirstLast"]:
        result = perturb.text.apply(caption, name, seed=0)
        print(f"{name:>14}: {result}   (applied={result.applied})")


if __name__ == "__main__":
    main()
