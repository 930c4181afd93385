"""Run the speed benchmarks: ``python -m benchmarks`` (or ``make bench``).

Sections: ``visual`` (our ops against imagecorruptions frame by frame; the peer is installed
in ``benchmarks/.peers/`` on first use), ``codecs`` (PyAV in memory against the ffmpeg
command-line tool), ``temporal`` (temporal and camera ops against a memory-copy floor),
``kinetics`` (Kinetics-C's rain, temporal_blur and frame_rate against the reference),
``kinetics-codecs`` (Kinetics-C's H.264/H.265 ops and bitstream faults against the ffmpeg
command-line route), ``peers`` (both paths of every op against albumentations 2.0.8 and
kornia 0.9.0, ``pip install -e .[bench-peers]``; its tables have their own block in the README,
refreshed whenever it runs), ``floors`` (the ops that still miss their peer: ours, the peer and the
measured floor of our function, ``benchmarks/floors.py``; its own README block too), and,
on its own, ``runner`` (``benchmarks/runner_speed.py``: end-to-end ``perturb bench`` speed
against the parent commit, with its defaults; run that script directly for its options) and
``cbar`` (``benchmarks/cbar_reference.py``: the ImageNet-C-bar ops against their reference code,
pixels, draws and speed, the reference checkout named by ``$PERTURB_CBAR_REFERENCE``; run
``python -m benchmarks.cbar_reference`` for its options).
A section whose module declares the command-line peers it needs (``NEEDS = ("ffmpeg",)``) is
skipped up front, with the install hint, when one is not on PATH; the other sections still run and
the results file is still written (the README's tables are left as they were). ``--device cuda``
instead times the torch path per op in frames/s, and says so and stops when there is no such
device. Prints the tables, writes ``benchmarks/results/<date>-<machine>.json``
(``...-torch-<device>.json`` for a device run) and, after a full run, the tables into
``benchmarks/README.md``.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import cv2
import numpy as np

from perturb.video.sample import sample_clip

from . import (codecs_vs_ffmpeg, floors, kinetics_c, kinetics_vs_ffmpeg, temporal_camera, torch_device,
               visual_vs_imagecorruptions, vs_libraries)
from .harness import Settings, unmet, write_results

SECTIONS = {"visual": visual_vs_imagecorruptions, "codecs": codecs_vs_ffmpeg, "temporal": temporal_camera,
            "kinetics": kinetics_c, "kinetics-codecs": kinetics_vs_ffmpeg, "peers": vs_libraries,
            "floors": floors}
DEFAULT = "visual,codecs,temporal,kinetics,kinetics-codecs"       # peers and floors run when asked for
TITLES = {"visual": "Visual ops vs imagecorruptions 1.1.2 (frame by frame)",
          "codecs": "Codecs: PyAV in memory vs temp file + ffmpeg CLI + read back",
          "temporal": "Temporal and camera ops vs a memory-copy floor",
          "kinetics": "Kinetics-C rain, temporal_blur, frame_rate vs the reference (Yi et al. 2021)",
          "kinetics-codecs": "Kinetics-C codecs and bitstream faults: PyAV in memory vs the ffmpeg CLI route",
          "torch": "Torch path, frames/s per op",
          "peers": "Both paths vs albumentations 2.0.8 and kornia 0.9.0",
          "floors": "Floors of the ops that still miss their peer (severity 3)"}
README = Path(__file__).resolve().parent / "README.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"
PEERS_START, PEERS_END = "<!-- peers:start -->", "<!-- peers:end -->"
FLOORS_START, FLOORS_END = "<!-- floors:start -->", "<!-- floors:end -->"


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    p.add_argument("--sections", default=DEFAULT,
                   help="comma-separated subset of: " + ", ".join(SECTIONS))
    p.add_argument("--device", default=None, help="time the torch path on this device (cuda, cuda:1, cpu)")
    p.add_argument("--frames", type=int, default=32, help="frames of the sample clip (224x224)")
    p.add_argument("--repeats", type=int, default=5, help="timed rounds per measurement (median)")
    p.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    p.add_argument("--budget", type=float, default=30.0,
                   help="seconds per measurement after which rounds stop (at least 3 are kept)")
    p.add_argument("--ops", default=None,
                   help="visual, peers and floors sections: comma-separated ops to compare (default: all of them)")
    p.add_argument("--no-readme", action="store_true", help="do not rewrite the table in benchmarks/README.md")
    return p.parse_args(argv)


def markdown(done: dict[str, dict], path: Path) -> str:
    """Every section's table under its title, with the results file it came from."""
    parts = [f"Results file: `benchmarks/results/{path.name}`."]
    for key, section in done.items():
        module = torch_device if key == "torch" else SECTIONS[key]
        text = f"skipped: {section['skipped']}" if section.get("skipped") else module.render(section)
        parts.append(f"### {TITLES[key]}\n\n{text}")
    return "\n\n".join(parts)


def update_readme(text: str, start: str = START, end: str = END) -> None:
    """Replace the block between ``start`` and ``end`` in benchmarks/README.md (appended if absent)."""
    doc = README.read_text() if README.exists() else "# Benchmarks\n"
    if start not in doc:
        doc = doc.rstrip("\n") + f"\n\n{start}\n{end}\n"
    block = f"{start}\n{text}\n{end}"
    doc = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, doc, flags=re.S)
    README.write_text(doc)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    settings = Settings(repeats=args.repeats, warmup=args.warmup, min_repeats=min(3, args.repeats),
                        budget=args.budget)
    clip = np.ascontiguousarray(sample_clip(args.frames))
    print(f"clip: {clip.shape} uint8 from the bundled sample; OpenCV threads {cv2.getNumThreads()}")
    done: dict[str, dict] = {}
    if args.device:
        why = torch_device.unavailable(args.device)
        if why:
            print(f"--device {args.device}: skipped, {why}")
            return 0
        print(f"== {TITLES['torch']} ({args.device})")
        done["torch"] = torch_device.run(clip, args.device, settings)
    else:
        names = [s.strip() for s in args.sections.split(",") if s.strip()]
        if names == ["runner"]:
            from . import runner_speed
            return runner_speed.main(["--base", "HEAD~1"])
        if names == ["cbar"]:
            from . import cbar_reference
            return cbar_reference.main([])
        unknown = sorted(set(names) - set(SECTIONS))
        if unknown:
            print(f"unknown section(s) {', '.join(unknown)}; expected: {', '.join(SECTIONS)}", file=sys.stderr)
            return 2
        skips = {key: why for key in names if (why := unmet(getattr(SECTIONS[key], "NEEDS", ())))}
        for key, why in skips.items():           # said up front, before any timing
            print(f"== {TITLES[key]}: skipped, {why}")
        for key in names:
            if key in skips:
                done[key] = {"skipped": skips[key], "rows": []}
                continue
            print(f"== {TITLES[key]}")
            runner = SECTIONS[key]
            ops = [o.strip() for o in args.ops.split(",") if o.strip()] if args.ops else None
            if key == "visual":
                done[key] = runner.main(clip, settings, ops=ops)
            elif key in ("peers", "floors"):
                done[key] = runner.run(clip, settings, ops=ops)
            else:
                done[key] = runner.run(clip, settings)
    suffix = f"-torch-{args.device.replace(':', '')}" if args.device else ""
    if set(done) in ({"peers"}, {"floors"}):
        suffix = f"-{next(iter(done))}"       # a run of this section alone keeps the full run's file
    path = write_results(done, settings, suffix)
    text = markdown(done, path)
    print("\n" + text + f"\n\nwritten: {path}")
    if not args.device and not args.no_readme:
        full = set(DEFAULT.split(",")) <= {k for k, v in done.items() if not v.get("skipped")}
        if full:
            update_readme(markdown({k: v for k, v in done.items() if k not in ("peers", "floors")}, path))
        if "peers" in done and not args.ops:
            update_readme(f"Results file: `benchmarks/results/{path.name}`.\n\n{vs_libraries.render(done['peers'])}",
                          PEERS_START, PEERS_END)
        if "floors" in done and not args.ops:
            update_readme(f"Results file: `benchmarks/results/{path.name}`.\n\n{floors.render(done['floors'])}",
                          FLOORS_START, FLOORS_END)
        if full or ({"peers", "floors"} & set(done) and not args.ops):
            print(f"updated: {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
