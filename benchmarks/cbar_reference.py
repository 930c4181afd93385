"""ImageNet-C-bar against its reference code: pixels at the same parameters, the draws'
distributions, and speed on the same clip.

Run: ``python -m benchmarks.cbar_reference --reference DIR [--record]``, DIR a checkout of
facebookresearch/augmentation-corruption (or its ``imagenet_c_bar/``; default: the environment
variable ``PERTURB_CBAR_REFERENCE``). The reference runs in the peer environment
(``benchmarks/.peers``, through ``benchmarks/cbar_peer.py``). Every op with a reference form
(``perturb.video.kernels.reference_forms``) is compared:

- fidelity: frame 0 of the sample clip resized to ``--side`` (64) square, our draw rendered by our
  numpy kernel against the reference's ``transform`` at ``reference_params`` of the same draw,
  PSNR at every severity (99 with ``identical`` for equal frames); and frame t=1 of a 2-frame
  clip at severity 3, with one draw per clip and with ``per_frame=True`` (the coherence path);
- distributions: ``--draws`` (2,000) of our draws at severity 3 (seeds ``seed`` .. ``seed+n-1``)
  read at side 224 against as many ``sample_parameters()`` at im_size 224 (``np.random`` seeded
  with ``seed``): a two-sample Kolmogorov-Smirnov test per scalar component the reference draws
  (p > 0.01); the components it holds constant are compared at every severity (100 draws a side,
  equal to 1e-9 relative);
- speed: ms/frame of the reference's ``transform`` against ours (draw + render, numpy and torch
  CPU kernels, one thread) on the first ``--speed-frames`` (4) frames of the sample clip at
  ``--speed-side`` (96) square, severity 3: the reference timed once (per-pixel Python loops),
  ours the median of interleaved rounds.

Prints the tables and writes ``benchmarks/results/cbar_reference-<date>.json``; ``--record``
also rewrites ``tests/data/cbar_reference.json``, which tests/test_cbar_reference.py checks (with
our frames' sha256 at the recorded seeds). Exit status 1 when a PSNR is under 40 dB, a p at or
under 0.01 or a constant differs; 2 on bad input.
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
RECORD = ROOT / "tests" / "data" / "cbar_reference.json"
COMMAND = "python -m benchmarks.cbar_reference --reference DIR --record"
ENV = "PERTURB_CBAR_REFERENCE"
FLOOR_DB = 40.0
ALPHA = 0.01
IDENTICAL_DB = 99.0             # JSON has no inf: an identical frame is recorded as 99 dB, flagged
KS_SEVERITY = 3                 # the reference's draws do not depend on the severity; its constants do
CONSTANT_DRAWS = 100
SEVERITIES = (1, 2, 3, 4, 5)


def compared_ops() -> list[str]:
    """The ops with a reference form that are registered video ops (a form alone cannot be drawn)."""
    from perturb.registry import REGISTRY
    from perturb.video.kernels.reference_forms import reference_ops

    registered = {spec.name for spec in REGISTRY.select("video")}
    return sorted(op for op in reference_ops() if op in registered)


def square_clip(frames: int, side: int) -> np.ndarray:
    """The first ``frames`` frames of the bundled sample clip, resized to ``side`` x ``side``."""
    import cv2

    from perturb.video.sample import sample_clip

    return np.stack([cv2.resize(f, (side, side), interpolation=cv2.INTER_AREA) for f in sample_clip(frames)])


def our_render(op: str, severity: int, clip: np.ndarray, seed: int, per_frame: bool = False) -> tuple[Any, np.ndarray]:
    """Our draw for ``clip`` at ``seed`` and its render by the numpy kernel."""
    from perturb.video.api import draw

    drawn = draw(op, severity, len(clip), seed=seed, per_frame=per_frame)
    return drawn, drawn.render_clip(clip)


def digest(frame: np.ndarray) -> str:
    """sha256 of a frame's bytes."""
    return hashlib.sha256(np.ascontiguousarray(frame).tobytes()).hexdigest()


def compare(worker: Any, work: Path, op: str, severity: int, clip: np.ndarray, t: int, seed: int,
            per_frame: bool = False) -> dict[str, Any]:
    """Frame ``t`` of ours against the reference's transform at the same draw."""
    from perturb.video.kernels.reference_forms import reference_params
    from perturb.video.psnr import psnr

    drawn, ours = our_render(op, severity, clip, seed, per_frame)
    np.save(work / "frame.npy", clip[t:t + 1])
    kwargs = reference_params(op, drawn.drawn, drawn.params, t, clip.shape[1])
    worker.transform(op, drawn.params["level"], work / "frame.npy", [kwargs], work / "theirs.npy")
    theirs = np.load(work / "theirs.npy")[0]
    db = psnr(ours[t], theirs)
    diff = np.abs(ours[t].astype(np.int16) - theirs.astype(np.int16))
    cell = {"seed": seed, "psnr": IDENTICAL_DB if db == float("inf") else round(db, 3),
            "identical": bool(db == float("inf")), "max_diff": int(diff.max()),
            "differing": round(float((diff > 0).mean()), 5), "sha256": digest(ours[t])}
    if t:        # one draw per clip reads frame 0's parameters at every t; per_frame a new draw
        cell["same_draw_as_t0"] = components(reference_params(op, drawn.drawn, drawn.params, 0, clip.shape[1])) \
            == components(kwargs)
    return cell


def fidelity(worker: Any, work: Path, ops: Sequence[str], side: int, seed: int, log: Callable) -> dict[str, Any]:
    """PSNR per op and severity at frame 0, and at t=1 of a 2-frame clip (one draw per clip, per frame)."""
    one, two = square_clip(1, side), square_clip(2, side)
    cells, coherence = {}, {}
    for op in ops:
        cells[op] = {str(s): compare(worker, work, op, s, one, 0, seed + s) for s in SEVERITIES}
        coherence[op] = {mode: compare(worker, work, op, KS_SEVERITY, two, 1, seed + 10, mode == "per_frame")
                         for mode in ("clip", "per_frame")}
        log(f"  fidelity {op}: " + ", ".join(f"s{s} {c['psnr']:.2f}" for s, c in cells[op].items())
            + ", t=1 " + ", ".join(f"{m} {c['psnr']:.2f}" for m, c in coherence[op].items()) + " dB")
    return {"side": side, "frame": 0, "floor_db": FLOOR_DB, "cells": cells,
            "coherence": {"severity": KS_SEVERITY, "frames": 2, "t": 1, "cells": coherence}}


def components(kwargs: Mapping[str, Any]) -> dict[str, float]:
    """Every scalar in a parameter dict by name: ``radius``, ``centers[4,1]``, ``scales[0]``."""
    out = {}
    for key, value in kwargs.items():
        arr = np.asarray(value, dtype=np.float64)
        for idx in np.ndindex(arr.shape):
            out[key + (f"[{','.join(map(str, idx))}]" if idx else "")] = float(arr[idx])
    return out


def columns(samples: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """Draws as one array per scalar component."""
    flat = [components(s) for s in samples]
    return {name: np.array([f[name] for f in flat]) for name in flat[0]}


def our_samples(op: str, severity: int, n: int, seed: int, side: int) -> list[dict[str, Any]]:
    """``n`` of our one-frame draws (seeds ``seed`` .. ``seed+n-1``) as the reference's kwargs at ``side``."""
    from perturb.video.api import draw
    from perturb.video.kernels.reference_forms import reference_params

    return [reference_params(op, d.drawn, d.params, 0, side)
            for d in (draw(op, severity, 1, seed=seed + i) for i in range(n))]


def distributions(worker: Any, ops: Sequence[str], n: int, seed: int, side: int, log: Callable) -> dict[str, Any]:
    """Per op: KS statistic and p per drawn component (severity 3), constants compared at every severity."""
    from scipy.stats import ks_2samp

    from perturb.video.api import get

    rows = {}
    for op in ops:
        spec = get(op)
        ks, constants, problems = {}, {}, []
        for s in SEVERITIES:
            m = n if s == KS_SEVERITY else CONSTANT_DRAWS
            theirs = columns(worker.sample(op, spec.params(s)["level"], side, m, seed))
            ours = columns(our_samples(op, s, m, seed, side))
            if set(theirs) != set(ours):
                problems.append(f"s{s}: components only ours {sorted(set(ours) - set(theirs))}, "
                                f"only the reference's {sorted(set(theirs) - set(ours))}")
                continue
            for name, ref in theirs.items():
                if np.ptp(ref) > 0:
                    if s == KS_SEVERITY:
                        test = ks_2samp(ours[name], ref)
                        ks[name] = {"statistic": round(float(test.statistic), 5), "p": float(test.pvalue)}
                    continue
                rel = float(np.max(np.abs(ours[name] - ref[0])) / max(abs(ref[0]), 1e-300))
                constants.setdefault(name, {})[str(s)] = {"reference": float(ref[0]), "ours_min": float(ours[name].min()),
                                                          "ours_max": float(ours[name].max()), "equal": rel <= 1e-9}
        rows[op] = {"ks": ks, "constants": constants, "problems": problems}
        worst = min(ks.items(), key=lambda kv: kv[1]["p"], default=None)
        log(f"  distributions {op}: {len(ks)} drawn components" + (f", min p {worst[1]['p']:.3g} ({worst[0]})" if worst else "")
            + f", {len(constants)} constants" + (f"; {'; '.join(problems)}" if problems else ""))
    return {"side": side, "draws": n, "severity": KS_SEVERITY, "seed": seed, "alpha": ALPHA,
            "constant_draws": CONSTANT_DRAWS, "ops": rows}


def speed(worker: Any, work: Path, ops: Sequence[str], frames: int, side: int, seed: int, settings: Any,
          log: Callable) -> dict[str, Any]:
    """ms/frame of the reference's transform and of ours (numpy, torch CPU kernels) on the same clip."""
    import torch

    from perturb.video.api import apply
    from perturb.video.host import torch_kernels_on_cpu
    from perturb.video.kernels.reference_forms import reference_params

    from .harness import interleaved, threads_held, timed

    clip = square_clip(frames, side)
    np.save(work / "speed.npy", clip)
    tensor, seeds = torch.from_numpy(clip), itertools.count(seed)

    def torch_run(op: str) -> None:
        with torch_kernels_on_cpu():
            apply(tensor, op, KS_SEVERITY, seed=next(seeds))

    rows = []
    for op in ops:
        drawn, _ = our_render(op, KS_SEVERITY, clip, seed)
        kwargs = [reference_params(op, drawn.drawn, drawn.params, t, side) for t in range(frames)]
        reference = worker.transform(op, drawn.params["level"], work / "speed.npy", kwargs, work / "speed-out.npy")
        with threads_held(1):
            times = interleaved({"numpy": timed(lambda: apply(clip, op, KS_SEVERITY, seed=next(seeds))),
                                 "torch": timed(lambda: torch_run(op))}, settings)
        row = {"op": op, "reference_ms": reference / frames * 1e3, "numpy_ms": times["numpy"] / frames * 1e3,
               "torch_ms": times["torch"] / frames * 1e3}
        row.update(numpy_x=row["reference_ms"] / row["numpy_ms"], torch_x=row["reference_ms"] / row["torch_ms"])
        rows.append(row)
        log(f"  speed {op}: reference {row['reference_ms']:.1f}, numpy {row['numpy_ms']:.2f}, "
            f"torch {row['torch_ms']:.2f} ms/frame")
    return {"frames": frames, "side": side, "severity": KS_SEVERITY, "threads": 1, "rows": rows}


def failures(doc: Mapping[str, Any]) -> list[str]:
    """Every cell under the bar, one line each: PSNR < 40 dB, p <= 0.01, a constant that differs."""
    out = []
    for op, row in doc["fidelity"]["cells"].items():
        out += [f"{op} s{s}: {c['psnr']:.2f} dB" for s, c in row.items() if c["psnr"] < FLOOR_DB]
    for op, row in doc["fidelity"]["coherence"]["cells"].items():
        out += [f"{op} t=1 {m}: {c['psnr']:.2f} dB" for m, c in row.items() if c["psnr"] < FLOOR_DB]
        out += [f"{op} t=1 {m}: " + ("the draw of frame 0" if c["same_draw_as_t0"] else "another draw than frame 0's")
                for m, c in row.items() if c["same_draw_as_t0"] != (m == "clip")]
    for op, row in doc["distributions"]["ops"].items():
        out += [f"{op} {name}: KS p {r['p']:.3g}" for name, r in row["ks"].items() if r["p"] <= ALPHA]
        out += [f"{op} {name} s{s}: {c['ours_min']:g}..{c['ours_max']:g} against {c['reference']:g}"
                for name, per in row["constants"].items() for s, c in per.items() if not c["equal"]]
        out += [f"{op} {p}" for p in row["problems"]]
    return out


def render(doc: Mapping[str, Any]) -> str:
    """The fidelity and distribution table, then the speed table."""
    from .harness import table

    fid, dist = doc["fidelity"], doc["distributions"]
    cell = lambda c: "identical" if c["identical"] else f"{c['psnr']:.2f}"
    rows = []
    for op in doc["ops"]:
        ks = dist["ops"][op]["ks"]
        worst = min(ks.items(), key=lambda kv: kv[1]["p"], default=None)
        consts = [c["equal"] for per in dist["ops"][op]["constants"].values() for c in per.values()]
        rows.append([op, *(cell(fid["cells"][op][str(s)]) for s in SEVERITIES),
                     *(cell(fid["coherence"]["cells"][op][m]) for m in ("clip", "per_frame")),
                     f"{worst[1]['p']:.3g} ({worst[0]})" if worst else "-",
                     f"{sum(consts)}/{len(consts)}" + (" !" if dist["ops"][op]["problems"] else "")])
    first = table(["op", *(f"s{s} dB" for s in SEVERITIES), "t=1 clip", "t=1 per_frame",
                   "KS min p (component)", "constants equal"], rows)
    sp = doc["speed"]
    second = table(["op", "reference ms/frame", "ours numpy ms/frame", "ours torch CPU ms/frame",
                    "numpy speed-up", "torch speed-up"],
                   [[r["op"], f"{r['reference_ms']:.1f}", f"{r['numpy_ms']:.2f}", f"{r['torch_ms']:.2f}",
                     f"{r['numpy_x']:.0f}x", f"{r['torch_x']:.0f}x"] for r in sp["rows"]])
    bad = failures(doc)
    return (f"Pixels: frame 0 of the sample clip at {fid['side']}x{fid['side']}, PSNR of ours against the "
            f"reference's transform at the same draw (floor {FLOOR_DB:g} dB); KS over {dist['draws']} draws a side "
            f"at im_size {dist['side']} (p > {ALPHA:g}).\n\n{first}\n\nSpeed: {sp['frames']} frames of "
            f"{sp['side']}x{sp['side']}, severity {sp['severity']}, one thread; ours = draw + render.\n\n{second}\n\n"
            + ("under the bar: " + "; ".join(bad) if bad else "every cell meets the bar"))


def reference_commit(folder: Path, given: str | None) -> str:
    """The reference checkout's commit: ``given``, else git's, else 'unknown'."""
    if given:
        return given
    done = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown (not a git checkout; pass --commit)"


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cbar_reference", description=__doc__.split("\n")[0])
    p.add_argument("--reference", default=os.environ.get(ENV), help=f"the reference checkout (default: ${ENV})")
    p.add_argument("--commit", default=None, help="the reference's commit, when DIR is not a git checkout")
    p.add_argument("--ops", default=None, help="comma-separated ops (default: every op with a reference form)")
    p.add_argument("--side", type=int, default=64, help="fidelity frame side")
    p.add_argument("--draws", type=int, default=2000, help="draws a side for the KS tests")
    p.add_argument("--speed-frames", type=int, default=4)
    p.add_argument("--speed-side", type=int, default=96)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=15, help="timed rounds of ours per op (median)")
    p.add_argument("--record", action="store_true", help=f"also rewrite {RECORD.relative_to(ROOT)}")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    from .cbar_peer import CLONE, ReferenceWorker, reference_folder
    from .harness import Settings, finite, machine

    every = compared_ops()
    ops = every if args.ops is None else [o.strip() for o in args.ops.split(",") if o.strip()]
    unknown = sorted(set(ops) - set(every))
    try:
        if args.reference is None:
            raise FileNotFoundError(f"no reference given: run `{CLONE} DIR` and pass --reference DIR (or set {ENV})")
        folder = reference_folder(args.reference)
        if not ops or unknown:
            raise ValueError(f"expected ops with a reference form ({', '.join(every) or 'none yet'}); got "
                             f"{', '.join(unknown) or 'none'}")
        if args.record and ops != every:
            raise ValueError("--record rewrites the whole record: run every op (drop --ops)")
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    log = lambda line: print(f"[{time.perf_counter() - start:6.1f} s] {line}", flush=True)
    with tempfile.TemporaryDirectory() as tmp, ReferenceWorker(folder) as worker:
        work = Path(tmp)
        doc = {"command": COMMAND, "ops": ops,
               "reference": {"repository": "facebookresearch/augmentation-corruption", "folder": "imagenet_c_bar",
                             "commit": reference_commit(folder, args.commit),
                             **{k: v for k, v in worker.info.items() if k not in ("ready", "ops")}}}
        log(f"reference at {folder} ({doc['reference']['commit']}); ops: {', '.join(ops)}")
        doc["fidelity"] = fidelity(worker, work, ops, args.side, args.seed, log)
        doc["distributions"] = distributions(worker, ops, args.draws, args.seed, 224, log)
        settings = Settings(repeats=args.repeats, warmup=1, min_repeats=min(3, args.repeats), budget=10.0)
        doc["speed"] = speed(worker, work, ops, args.speed_frames, args.speed_side, args.seed, settings, log)
    doc["failures"] = failures(doc)
    print("\n" + render(doc))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"cbar_reference-{dt.date.today().isoformat()}.json"
    out.write_text(json.dumps(finite({"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                                      "machine": machine(), **doc}), indent=1) + "\n")
    print(f"\nwritten: {out.relative_to(ROOT)}")
    if args.record:
        RECORD.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"written: {RECORD.relative_to(ROOT)}")
    return 1 if doc["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
