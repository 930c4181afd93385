"""``python -m perturb.demo --out DIR``: the main job on bundled data.

Perturb the bundled sample clip with every video perturbation at every severity, write
``DIR/gallery.png`` and print the mean PSNR of every perturbed clip against the clean one; then
run the full robustness benchmark on the generated demo videos with the demo model
(:mod:`perturb.demo.run`), print its summary and write ``DIR/report.html``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from ..errors import UsageError
from ..extras import require
from .gallery import gallery_demo, summary_lines

DESCRIPTION = __doc__.splitlines()[0]
# the demo's benchmark: text perturbations (spaCy), the bundled MiniLM, scikit-image photographs and
# the report's figures, and torch to train the demo model
DEMO_EXTRAS = ("text", "models", "bench")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo."""
    import perturb  # noqa: F401  (registers every perturbation)

    parser = argparse.ArgumentParser(prog="python -m perturb.demo", description=DESCRIPTION)
    parser.add_argument("--out", type=Path, default=Path("demo-out"), help="output folder")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--frames", type=int, default=None, help="use only the first N sample frames")
    parser.add_argument("--gallery-only", action="store_true", help="skip the robustness benchmark")
    args = parser.parse_args(argv)
    if not args.gallery_only:                    # before any work, not after the gallery
        try:
            require(DEMO_EXTRAS, ["torch"], why="for its benchmark (--gallery-only needs none)")
        except UsageError as e:
            parser.exit(2, f"{parser.prog}: error: {e}\n")
    path, scores = gallery_demo(args.out, args.seed, args.frames)
    print("\n".join(summary_lines(scores)))
    print(f"gallery: {path}")
    if not args.gallery_only:
        from .run import run_demo

        _, paths = run_demo(args.out, args.seed)
        print(f"report: {paths['html']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
