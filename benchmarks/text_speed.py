"""Captions per second of ``perturb.text.apply_batch`` for every rule-based text perturbation.

Run: ``python benchmarks/text_speed.py [--n 2000] [--repeat 3] [--names Typos,NoVB]``.
Prints a table and writes ``benchmarks/results/text_speed-<date>.json``. Targets (issue 3, on
2 cores): at least 300 captions/s for the POS-dependent perturbations, at least 5,000/s for
ChangeChar and Positional. Resources (spaCy, WordNet) are loaded before timing. Both the
wall-clock rate and the CPU-time rate are recorded; targets are checked on the CPU-time rate,
since the wall clock of a shared machine measures the other jobs as much as this code.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from perturb.registry import REGISTRY  # noqa: E402
from perturb.testing.captions import LONG_CAPTION_WORDS, varied_captions  # noqa: E402
from perturb.text import apply_batch  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
FAST_CATEGORIES = ("ChangeChar", "Positional")


def target(spec) -> int | None:
    """The issue's throughput target for a perturbation (captions/s), if it has one."""
    if spec.needs_parse:
        return 300
    return 5000 if spec.category in FAST_CATEGORIES else None


def corpus(n: int) -> list[str]:
    """``n`` varied captions (edge cases and realistic ones) without the 5,000-word caption."""
    caps = varied_captions(n + 1)
    return [c for c in caps if len(c.split()) < LONG_CAPTION_WORDS][:n]


def measure(name: str, captions: list[str], repeat: int) -> tuple[float, float]:
    """Best captions/s over ``repeat`` runs of apply_batch (after one warm-up call), by wall
    clock and by this process's CPU time.

    The CPU-time rate is what an otherwise idle machine gives this single-threaded loop; it
    stays meaningful when other jobs share the cores (the wall-clock rate then drops).
    """
    apply_batch(captions[:50], name, seed=0)
    wall = cpu = float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        apply_batch(captions, name, seed=0)
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    return len(captions) / wall, len(captions) / max(cpu, 1e-9)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="captions per run (default 2000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per perturbation, best kept")
    ap.add_argument("--names", default="all", help="comma-separated names or categories")
    ap.add_argument("--out", type=Path, default=None, help="JSON output path")
    args = ap.parse_args(argv)

    specs = [s for s in REGISTRY.resolve(args.names, "text") if not s.needs_model]
    captions = corpus(args.n)
    rows = []
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other work slows this down)")
    print(f"{'perturbation':15} {'category':11} {'POS':4} {'wall/s':>8} {'cpu/s':>8} {'target':>7}  ok")
    for spec in specs:
        wall, cpu = measure(spec.name, captions, args.repeat)
        goal = target(spec)
        ok = None if goal is None else cpu >= goal
        rows.append({"name": spec.name, "category": spec.category, "needs_parse": spec.needs_parse,
                     "captions_per_s_wall": round(wall, 1), "captions_per_s_cpu": round(cpu, 1),
                     "target": goal, "meets_target_cpu": ok})
        print(f"{spec.name:15} {spec.category:11} {'yes' if spec.needs_parse else 'no':4} "
              f"{wall:8,.0f} {cpu:8,.0f} {goal or '-':>7}  {'-' if ok is None else ('yes' if ok else 'NO')}",
              flush=True)
    out = args.out or RESULTS / f"text_speed-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "benchmark": "text_speed", "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "captions": len(captions), "repeat": args.repeat, "cpu_count": os.cpu_count(),
        "load_average_1_5_15min": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(), "machine": platform.machine(), "results": rows,
    }, indent=2) + "\n")
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
