"""End-to-end speed of ``perturb bench``: clip evaluations/s per category, against two floors.

Run: ``python benchmarks/runner_speed.py [--videos 4] [--base REF] [--device cuda] [--rss-videos 200]``.

1. A generated MSR-VTT-like set: N videos of 10 s at 30 fps, 320x240, H.264, one caption each
   (kept under ``benchmarks/.cache/``).
2. For every model (``toy:32``, a tiny randomly initialised CLIP on CPU, and a tiny VideoMAE
   classifier, ``--task classify`` over the same videos labelled round-robin with its classes;
   ``--device cuda`` adds the CLIP on the GPU), ``perturb bench`` runs each video category (all 5 severities, no
   text perturbations, no cache, no bootstrap) in a child process; evaluations/s = videos x
   configurations / the run's own timing (``N configurations in S s``), summed over categories
   for the grid. ``--base REF`` runs the same commands on a git worktree of REF in the same run.
   Each child's CPU seconds (user + system) are recorded too: on a shared machine the wall time
   moves with the load, the CPU time of the same work much less (``x base (CPU)``).
3. Floors: decoding alone (``perturb.video.io.read`` against PyAV's own decode + RGB
   conversion, frames/s, one thread) and the adapter encoding (a classifier: classifying)
   pre-decoded clean clips.
4. Memory: peak RSS (VmHWM) of ``perturb bench`` with ``toy:32`` on ``--rss-videos`` small
   videos and on a tenth of them: bounded by the clips in flight, the two stay close.

Prints a table and writes ``benchmarks/results/runner_speed-<date>.json``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "benchmarks" / ".cache"
RESULTS = ROOT / "benchmarks" / "results"
CATEGORIES = ("noise", "blur", "digital", "temporal", "camera")
CODEC = ("digital",)                        # jpeg, mpeg1, mpeg2: encoded by a codec per clip


def make_dataset(root: Path, n: int, seconds: float, fps: int, width: int, height: int) -> Path:
    """``n`` smooth moving-pattern H.264 videos and a generic captions.jsonl (reused when present)."""
    from perturb.video.io import VideoWriter

    folder = root / f"msrvtt-like-{n}x{seconds:g}s-{fps}fps-{width}x{height}"
    captions = folder / "captions.jsonl"
    if captions.exists():
        return captions
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    rows = []
    for k in range(n):
        freq = rng.uniform(0.2, 1.0, (3, 3)).astype(np.float32)
        name = f"video{k}.mp4"
        with VideoWriter(folder / name, fps, codec="libx264") as w:
            for t in range(int(seconds * fps)):
                img = np.stack([127 + 100 * np.sin(xx * freq[c, 0] / 20 + yy * freq[c, 1] / 25 + t * freq[c, 2] / 5)
                                for c in range(3)], -1)
                cx = int(width / 2 + width / 3 * np.sin(t / 20 + k))
                img[height // 3: height // 3 + 60, max(0, cx - 30): cx + 30] = 255 * (k % 2)
                w.write(img.astype(np.uint8))
        rows.append({"video_id": f"video{k}", "video_path": name,
                     "caption": f"a {'bright' if k % 2 else 'dark'} square moves over waves number {k}"})
    tmp = captions.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tmp.replace(captions)
    return captions


def _peak_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _children_cpu() -> float:
    """User + system CPU seconds of the finished children: on a shared machine, steadier than wall time."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_bench(code: Path, model: str, dataset: Path, category: str, extra: list[str]) -> dict:
    """One ``perturb bench`` child on the checkout ``code``: seconds, configurations, peak RSS."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-c", "import sys, time; from perturb.cli import main; rc = main(sys.argv[1:]); "
               "print('VmHWM', open('/proc/self/status').read().split('VmHWM:')[1].split()[0]); sys.exit(rc)",
               "bench", "--model", model, "--dataset", str(dataset), "--video-perturbations", category,
               "--text-perturbations", "none", "--bootstrap", "0", "--no-cache", "--no-progress",
               "--captions", "first", "--out", out, *extra]
        paths = (str(code / "src"), str(code), os.environ.get("PYTHONPATH"))   # the checkout first (src/ or flat)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p), "HF_HUB_OFFLINE": "1"}
        t0, cpu0 = time.perf_counter(), _children_cpu()
        proc = subprocess.run(cmd, cwd=code, env=env, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode != 0:
        raise RuntimeError(f"perturb bench failed on {code} ({model}, {category}):\n{proc.stderr[-2000:]}")
    m = re.search(r"(\d+) configurations in ([\d.]+) s", proc.stdout)
    rss = re.search(r"VmHWM (\d+)", proc.stdout)
    return {"configs": int(m.group(1)), "seconds": float(m.group(2)), "wall": round(wall, 2), "cpu_s": round(cpu, 2),
            "peak_rss_mb": round(int(rss.group(1)) / 1024, 1) if rss else None}


def labelled_dataset(captions: Path, labels: tuple[str, ...]) -> Path:
    """The videos of ``captions``' folder as a ``path,label`` CSV, classes given round-robin."""
    files = sorted(captions.parent.glob("*.mp4"))
    out = captions.parent / "labels.csv"
    rows = ["path,label"] + [f"{f},{labels[k % len(labels)]}" for k, f in enumerate(files)]
    out.write_text("\n".join(rows) + "\n")
    return out


def decode_floor(files: list[Path]) -> dict:
    """frames/s of perturb.video.io.read and of PyAV decode + to_ndarray(rgb24), one thread, interleaved."""
    import av

    from perturb.video.io import read

    def pyav(f: Path) -> int:
        with av.open(str(f)) as c:
            return sum(1 for fr in c.decode(video=0) if fr.to_ndarray(format="rgb24") is not None)

    def ours(f: Path) -> int:
        return len(read(f)[0])

    times = {"io.read": [], "pyav": []}
    frames = 0
    for rnd in range(3):
        for name, fn in (("io.read", ours), ("pyav", pyav)) if rnd % 2 == 0 else (("pyav", pyav), ("io.read", ours)):
            t0 = time.perf_counter()
            n = sum(fn(f) for f in files)
            times[name].append(time.perf_counter() - t0)
            frames = n
    rate = {k: frames / float(np.median(v)) for k, v in times.items()}
    return {"frames": frames, "io_read_fps": round(rate["io.read"], 1), "pyav_fps": round(rate["pyav"], 1),
            "ratio": round(rate["io.read"] / rate["pyav"], 3)}


def adapter_floor(model: str, files: list[Path], options: dict) -> dict:
    """clips/s of the adapter's encode_videos on pre-decoded clean clips (only its frames when declared)."""
    from perturb.bench.adapters.frames import frame_spec_of
    from perturb.video.io import read

    try:
        from perturb.bench.adapters.factory import load_model
        from perturb.bench.adapters.model_options import ModelOptions
        m = load_model(model, ModelOptions(**options))
    except ImportError:                     # a --base checkout from before the model's options object
        try:
            from perturb.bench.adapters.factory import load_model
        except ImportError:                 # ... or before the factory had its module
            from perturb.bench.adapters.protocol import load_model  # type: ignore[attr-defined,no-redef]
        m = load_model(model, **options)
    spec = frame_spec_of(m.impl)
    clips = [read(f)[0] for f in files]
    clips = [c[spec.indices(len(c))] if spec else c for c in clips]
    reps = max(1, 64 // len(clips))
    batch = (clips * reps)[: max(len(clips), 32)]
    m.encode_videos(batch[:2])
    t0 = time.perf_counter()
    for i in range(0, len(batch), options.get("batch_size", 32)):
        m.encode_videos(batch[i:i + options.get("batch_size", 32)])
    return {"clips_per_s": round(len(batch) / (time.perf_counter() - t0), 1)}


def checkout(ref: str, path: Path | None = None) -> Path:
    """A git worktree of ``ref`` (at ``path``, else in the temp folder; created once)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", ref], capture_output=True, text=True,
                         check=True).stdout.strip()
    path = path or Path(tempfile.gettempdir()) / f"perturb-base-{sha[:12]}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), sha],
                       check=True, capture_output=True)
    return path


def table(rows: list[dict]) -> str:
    lines = ["| code | model | category | configs | videos | s | evals/s | x base | CPU s | x base (CPU) "
             "| peak RSS MB |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        speed, cpu = (f"{r[k]:.2f}" if r.get(k) else "-" for k in ("speedup", "speedup_cpu"))
        lines.append(f"| {r['code']} | {r['model']} | {r['category']} | {r['configs']} | {r['videos']} | "
                     f"{r['seconds']} | {r['evals_per_s']:.1f} | {speed} | {r.get('cpu_s')} | {cpu} | "
                     f"{r['peak_rss_mb']} |")
    return "\n".join(lines)


def median_run(runs: list[dict]) -> dict:
    """One cell's runs as one: the median seconds and CPU seconds, the highest peak RSS."""
    return {**runs[0], "seconds": statistics.median(r["seconds"] for r in runs),
            "cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 2),
            "peak_rss_mb": max((r["peak_rss_mb"] or 0) for r in runs) or None}


def totals(rows: list[dict], code: str, model: str, cats: tuple[str, ...], label: str) -> dict | None:
    chosen = [r for r in rows if r["code"] == code and r["model"] == model and r["category"] in cats]
    if not chosen:
        return None
    configs, seconds = sum(r["configs"] for r in chosen), sum(r["seconds"] for r in chosen)
    videos = chosen[0]["videos"]
    return {"code": code, "model": model, "category": label, "configs": configs, "videos": videos,
            "seconds": round(seconds, 2), "evals_per_s": configs * videos / seconds,
            "cpu_s": round(sum(r["cpu_s"] for r in chosen), 2),
            "peak_rss_mb": max(r["peak_rss_mb"] or 0 for r in chosen)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--videos", type=int, default=4, help="videos in the generated set (default 4)")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--categories", default=",".join(CATEGORIES))
    p.add_argument("--models", default="toy:32,tiny-clip,tiny-videomae",
                   help="toy:DIM, tiny-clip and/or tiny-videomae (a classifier, --task classify)")
    p.add_argument("--base", help="git ref to compare against in the same run (a worktree is made)")
    p.add_argument("--base-dir", type=Path, help="where the --base worktree goes (default: the temp folder)")
    p.add_argument("--base-models", default="toy:32", help="models also run on --base")
    p.add_argument("--device", default="cpu", help="cpu, or cuda to add the CLIP on the GPU")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rss-videos", type=int, default=0, help="peak-RSS check on this many 2 s videos (e.g. 200)")
    p.add_argument("--repeats", type=int, default=1,
                   help="runs of each cell, head and base alternating; the median is kept (default 1)")
    p.add_argument("--tag", default="", help="added to the results file's name (runner_speed-DATE-TAG.json)")
    args = p.parse_args(argv)

    cats = tuple(c.strip() for c in args.categories.split(",") if c.strip())
    dataset = make_dataset(CACHE, args.videos, args.seconds, 30, 320, 240)
    files = sorted(dataset.parent.glob("*.mp4"))
    print(f"dataset: {dataset} ({len(files)} videos)")
    models = {}
    classify: dict[str, Path] = {}          # classifiers: model -> their labelled dataset
    for name in args.models.split(","):
        if name == "tiny-clip":
            sys.path.insert(0, str(ROOT / "tests"))
            from tiny_models import build_clip
            path = build_clip(CACHE / "tiny-clip")
            models["tiny-clip"] = (f"clip:{path}", {"device": "cpu", "batch_size": 32, "frames": 8})
            if args.device.startswith("cuda"):
                models["tiny-clip-cuda"] = (f"clip:{path}", {"device": args.device, "batch_size": 32, "frames": 8})
        elif name == "tiny-videomae":
            sys.path.insert(0, str(ROOT / "tests"))
            from hf_classifiers import build, labels_of
            path = build("videomae", CACHE / "tiny-videomae")
            models[name] = (f"hf:{path}", {"device": "cpu", "batch_size": 32})
            classify[name] = labelled_dataset(dataset, labels_of("videomae"))
        elif name:
            models[name] = (name, {})
    doc: dict = {"date": dt.date.today().isoformat(), "machine": platform.node(), "cpus": os.cpu_count(),
                 "videos": len(files), "seconds_per_video": args.seconds, "workers": args.workers}
    doc["decode_floor"] = decode_floor(files[:2])
    print(f"decode floor: {doc['decode_floor']}")
    doc["adapter_floor"] = {k: adapter_floor(spec, files[:4], opts) for k, (spec, opts) in models.items()}
    print(f"adapter floor: {doc['adapter_floor']}")

    codes = {"head": ROOT}
    if args.base:
        codes["base"] = checkout(args.base, args.base_dir)
        doc["base"] = subprocess.run(["git", "-C", str(codes["base"]), "rev-parse", "HEAD"], capture_output=True,
                                     text=True).stdout.strip()
    doc["head"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                 text=True).stdout.strip()
    rows: list[dict] = []
    for cat in cats:
        for label, (spec, opts) in models.items():
            extra = ["--workers", str(args.workers), "--device", opts.get("device", "cpu")]
            data = classify.get(label, dataset)
            if label in classify:
                extra += ["--task", "classify"]
            runs_of = {code: [] for code in codes if code == "head" or label in args.base_models.split(",")}
            for _ in range(max(1, args.repeats)):          # alternating, so drift on the machine hits both
                for code in runs_of:
                    runs_of[code].append(run_bench(codes[code], spec, data, cat, extra))
            for code, runs in runs_of.items():
                r = median_run(runs)
                row = {"code": code, "model": label, "category": cat, "videos": len(files), **r,
                       "evals_per_s": r["configs"] * len(files) / r["seconds"]}
                rows.append(row)
                print(f"  {code:4} {label:14} {cat:9} {r['configs']} configs {r['seconds']:7.2f} s "
                      f"{row['evals_per_s']:7.1f} evals/s  CPU {r['cpu_s']:7.2f} s  "
                      f"RSS {r['peak_rss_mb']} MB", flush=True)
    non_codec = tuple(c for c in cats if c not in CODEC)
    for code in codes:
        for label in models:
            for group, name in ((cats, "grid"), (non_codec, "non-codec")):
                t = totals(rows, code, label, group, name)
                if t and t["configs"]:
                    rows.append(t)
    for r in rows:
        base = next((b for b in rows if b["code"] == "base" and b["model"] == r["model"]
                     and b["category"] == r["category"]), None)
        if base and r["code"] == "head":
            r["speedup"] = r["evals_per_s"] / base["evals_per_s"]
            r["speedup_cpu"] = base["cpu_s"] / r["cpu_s"]       # the same work: CPU seconds, base / head
    doc["runs"] = rows
    if args.rss_videos:
        small = make_dataset(CACHE, args.rss_videos, 2.0, 30, 320, 240)
        few = make_dataset(CACHE, max(1, args.rss_videos // 10), 2.0, 30, 320, 240)
        doc["rss"] = {}
        for code, path in codes.items():
            for ds in (few, small):
                n = len(list(ds.parent.glob("*.mp4")))
                r = run_bench(path, "toy:32", ds, "translate", ["--workers", str(args.workers), "--severities", "3"])
                doc["rss"][f"{code}-{n}"] = r["peak_rss_mb"]
                print(f"  RSS {code} {n} videos: {r['peak_rss_mb']} MB ({r['seconds']} s)")
    text = table(rows)
    print("\n" + text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    doc["repeats"] = max(1, args.repeats)
    out = RESULTS / f"runner_speed-{doc['date']}{'-' + args.tag if args.tag else ''}.json"
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
