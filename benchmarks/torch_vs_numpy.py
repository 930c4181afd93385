"""The torch path against the numpy path on the CPU, this checkout against another, back to back.

``python -m benchmarks.torch_vs_numpy [--against DIR] [--ops a,b] [--rounds 2] [--repeats 3]``
times ``perturb.video.apply`` on the sample clip (32 frames, 224²): numpy uint8 (T, H, W, 3)
against torch float (T, 3, H, W) in [0, 1] on the CPU, one thread each (a DataLoader worker's
setting), best of ``--repeats`` after a warm-up, the two called alternately. Times are the
process's CPU time (``time.process_time``): on one thread that is the work itself, which a
shared machine's load inflates far less than wall time (it does not count waiting for a core;
numpy kernels that share frames over threads are counted as the sum of their threads). With ``--against DIR`` (another checkout, e.g. a worktree of the
parent commit) every group of ops runs in a child process of each checkout in turn, ``--rounds``
times, and the best of all counts: "before" is DIR, "after" this checkout, at the same load.
Also timed: the float-path floor, what every float clip pays whatever the op (the range check,
quantising to levels and converting back: OpenCV frame by frame on the CPU route of
:mod:`perturb.video.host` (conversions in :mod:`perturb.video.layouts`), the torch conversions in a checkout without it).
Writes ``results/<date>-<machine>-torch-cpu.json`` and prints the table.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEVERITIES = (1, 3, 5)
GROUP = 6                       # ops per child process


def _worker(ops: list[str], repeats: int) -> dict[str, Any]:
    """Best seconds of numpy and torch per op and severity, and of the float-path floor, in this process."""
    import cv2
    import numpy as np
    import torch

    from perturb.video import clip as conv
    from perturb.video import render
    from perturb.video.api import apply
    from perturb.video.sample import sample_clip

    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    clip = sample_clip(32)
    x = torch.from_numpy(np.array(clip)).permute(0, 3, 1, 2).to(torch.float32).div(255).contiguous()

    def floor() -> Any:
        layout = conv.torch_layout(x)
        for home in ("layouts", "host"):      # the CPU route's conversions, here or in an older checkout
            try:
                module = importlib.import_module(f"perturb.video.{home}")
            except ImportError:
                continue
            if hasattr(module, "host_frames"):
                return module.from_host_frames(module.host_frames(x, layout), layout, x.dtype)
        # older still: the torch kernels' own conversions
        step = lambda a, b, *dest: conv.from_levels(conv.to_levels(x[a:b], "TCHW"), "TCHW", x.dtype, *dest)
        return render._in_passes(x, step) if hasattr(render, "_in_passes") else step(0, len(x))

    def best(fn: Any) -> float:
        fn()
        times = []
        for _ in range(repeats):
            t0 = time.process_time()
            fn()
            times.append(time.process_time() - t0)
        return min(times)

    out: dict[str, Any] = {"floor": best(floor), "ops": {}}
    for name in ops:
        for s in SEVERITIES:
            runs = {"numpy": lambda: apply(clip, name, s, seed=s), "torch": lambda: apply(x, name, s, seed=s)}
            for fn in runs.values():
                fn()
            times: dict[str, list[float]] = {k: [] for k in runs}
            for _ in range(repeats):
                for k, fn in runs.items():
                    t0 = time.process_time()
                    fn()
                    times[k].append(time.process_time() - t0)
            out["ops"].setdefault(name, {})[str(s)] = {k: min(v) for k, v in times.items()}
    return out


def _child(tree: Path, ops: list[str], repeats: int) -> dict[str, Any]:
    """This file run as a script (so perturb is the one on ``tree``'s path) over ``ops``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tree / "src"), str(tree))), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", ",".join(ops), str(repeats)]
    done = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _merge(into: dict[str, Any], got: dict[str, Any]) -> None:
    into["floor"] = min(into.get("floor", float("inf")), got["floor"])
    for name, sevs in got["ops"].items():
        for s, times in sevs.items():
            cell = into.setdefault("ops", {}).setdefault(name, {}).setdefault(s, {})
            for k, v in times.items():
                cell[k] = min(cell.get(k, float("inf")), v)


def measure(ops: list[str], against: Path | None, rounds: int, repeats: int, log=print) -> dict[str, Any]:
    """Per checkout ("before": ``against``, "after": this one) the best times over ``rounds``."""
    trees = {"before": against, "after": HERE.parent} if against else {"after": HERE.parent}
    found: dict[str, dict[str, Any]] = {k: {} for k in trees}
    for r in range(rounds):
        for i in range(0, len(ops), GROUP):
            group = ops[i:i + GROUP]
            for label, tree in (trees.items() if r % 2 == 0 else reversed(list(trees.items()))):
                _merge(found[label], _child(tree, group, repeats))
            log(f"  round {r + 1}: {', '.join(group)}")
    return found


def render_table(found: dict[str, Any]) -> str:
    """op | sev | numpy ms | torch ms (before, after) | torch/numpy (before, after)."""
    from .harness import table

    after, before = found["after"], found.get("before", {})
    rows = []
    for name, sevs in after["ops"].items():
        for s, t in sevs.items():
            b = before.get("ops", {}).get(name, {}).get(s)
            rows.append((name, s, f"{t['numpy'] * 1e3:.1f}", f"{b['torch'] * 1e3:.1f}" if b else "",
                         f"{t['torch'] * 1e3:.1f}", f"{b['torch'] / b['numpy']:.2f}" if b else "",
                         f"{t['torch'] / t['numpy']:.2f}"))
    rows.append(("float-path floor", "", "", f"{before['floor'] * 1e3:.1f}" if before else "",
                 f"{after['floor'] * 1e3:.1f}", "", ""))
    return table(["op", "sev", "numpy ms", "torch ms before", "torch ms after", "before", "after"], rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.torch_vs_numpy", description=__doc__.split("\n")[0])
    p.add_argument("--against", type=Path, default=None, help="another checkout to time as 'before'")
    p.add_argument("--ops", default=None, help="comma-separated ops (default: every video op)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    from perturb.registry import REGISTRY

    from .harness import Settings, write_results

    ops = args.ops.split(",") if args.ops else [s.name for s in REGISTRY.select("video")]
    start = time.perf_counter()
    found = measure(ops, args.against, args.rounds, args.repeats)
    print(render_table(found))
    section = {"against": str(args.against) if args.against else None, "seconds": time.perf_counter() - start,
               **found}
    print(f"results: {write_results({'torch_vs_numpy': section}, Settings(repeats=args.repeats), '-torch-cpu')}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        print(json.dumps(_worker(sys.argv[2].split(","), int(sys.argv[3]))))
    else:
        main()
