"""Share of the 1,000 varied test captions each contrast generator handles (none may crash).

    python benchmarks/contrast_coverage.py [--n 1000] [--seed 0]

Writes ``benchmarks/results/contrast_coverage.json`` and ``.md``. The verb, action and object
generators use the same captions as their frequency corpus; person_id uses the names found in
them (gender-guesser).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "results"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    from perturb.contrast import TYPES, generate_batch, lexicon
    from perturb.testing.captions import varied_captions

    captions = varied_captions(args.n, seed=args.seed)
    freq = lexicon.Frequencies.from_captions(captions)
    rows = []
    for kind in TYPES:
        ctx = {"names": captions} if kind == "person_id" else {"frequencies": freq}
        t0 = time.perf_counter()
        found = generate_batch(captions, kind, seed=args.seed, n=1, **ctx)
        dt = time.perf_counter() - t0
        covered = sum(bool(f) for f in found)
        example = next((f[0] for f in found if f), None)
        rows.append({"type": kind, "covered": covered, "coverage": covered / len(captions),
                     "captions_per_s": len(captions) / dt,
                     "example": example.to_dict() if example else None})
        print(f"{kind:14s} {covered / len(captions):6.1%}  ({len(captions) / dt:.0f} captions/s)",
              file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"captions": len(captions), "seed": args.seed, "generators": rows}
    (args.out / "contrast_coverage.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = [f"# Contrast generator coverage on {len(captions)} varied captions (seed {args.seed})",
             "", "| type | covered | share | captions/s | example |", "|---|---:|---:|---:|---|"]
    for r in rows:
        ex = r["example"]
        ex_text = f"{ex['source'][:60]!r} → {ex['text'][:60]!r}" if ex else ""
        lines.append(f"| {r['type']} | {r['covered']} | {r['coverage']:.1%} | "
                     f"{r['captions_per_s']:.0f} | {ex_text} |")
    (args.out / "contrast_coverage.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
