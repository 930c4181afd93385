"""One GPU run, one JSON: torch kernels' frames/s (kornia beside them where importable), CUDA
against numpy pixel differences for every video op, the runner grid with a ViT-B/32-sized random
CLIP against the model floor, and the CUDA-parametrised tests.

Run: ``python -m benchmarks.gpu [--device cuda] [--wheels DIR] [--out FILE]``; a dry pass on the
CPU (small counts, a tiny CLIP): ``python -m benchmarks.gpu --device cpu --dry``. perturb.video
imports PyAV, which a bare GPU machine lacks: ``--wheels DIR`` installs the wheels carried in DIR
first (benchmarks/README.md says how to fetch a cp312 one); without PyAV every part that needs
perturb.video is skipped and the reason is written down. Each part is skipped, with the reason,
once ``--budget`` seconds are spent, so a run ends in time; a part that fails records its error
and the run goes on.
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .harness import Settings, finite, interleaved, table, timed

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / ".gpu-site"                       # where --wheels installs (ignored by git)
SEVERITY = 3
# ViT-B/32's towers (CLIP's published sizes); weights random, nothing downloaded.
VIT_B32 = dict(text=dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=8,
                         max_position_embeddings=77),
               vision=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12),
               image_size=224, patch_size=32, projection_dim=512, processor_size=224)


def install_wheels(folder: Path) -> str:
    """pip-install every wheel of ``folder`` into SITE (no index, no dependencies) and put SITE on
    this process's and its children's import path."""
    wheels = sorted(str(p) for p in Path(folder).glob("*.whl"))
    if not wheels:
        raise SystemExit(f"--wheels {folder}: expected a folder holding .whl files; found none")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--upgrade", "--target", str(SITE), *wheels], check=True)
    sys.path.insert(0, str(SITE))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(SITE), os.environ.get("PYTHONPATH")) if p)
    importlib.invalidate_caches()
    return f"installed {len(wheels)} wheel(s) from {folder} into {SITE}"


def pyav_missing() -> str | None:
    """Why perturb.video cannot be imported here (it needs PyAV), or None."""
    try:
        import av  # noqa: F401
    except ImportError as exc:
        return (f"PyAV is not importable ({exc}); perturb.video needs it: carry a cp312 wheel and pass "
                "--wheels DIR (benchmarks/README.md)")
    return None


def synchronise(device: str) -> Callable[[], None]:
    import torch
    return (lambda: torch.cuda.synchronize()) if device.startswith("cuda") else (lambda: None)


def as_float(clip: np.ndarray, device: str):
    """A uint8 (T, H, W, 3) clip as float (T, 3, H, W) in [0, 1] on ``device``."""
    import torch
    return torch.from_numpy(np.ascontiguousarray(clip)).to(device).permute(0, 3, 1, 2).float().div(255).contiguous()


def kornia_peers(kornia, n: int, device: str) -> dict[str, Callable]:
    """kornia's nearest op per perturb op, severity-3-like arguments, float (T, 3, H, W) in [0, 1]."""
    import torch
    angle = torch.full((n,), 15.0, device=device)
    shift = torch.full((n, 2), 8.0, device=device)
    return {
        "gaussian_blur": lambda x: kornia.filters.gaussian_blur2d(x, (17, 17), (3.0, 3.0), border_type="replicate"),
        "motion_blur": lambda x: kornia.filters.motion_blur(x, 9, 30.0, 1.0),
        "rotate": lambda x: kornia.geometry.transform.rotate(x, angle),
        "static_rotate": lambda x: kornia.geometry.transform.rotate(x, angle),
        "translate": lambda x: kornia.geometry.transform.translate(x, shift),
        "brightness": lambda x: kornia.enhance.adjust_brightness(x, 0.3),
        "contrast": lambda x: kornia.enhance.adjust_contrast(x, 0.4),
        "saturate": lambda x: kornia.enhance.adjust_saturation(x, 2.0),
        "gaussian_noise": lambda x: (x + 0.18 * torch.randn_like(x)).clamp_(0, 1),
        "elastic_transform": lambda x: kornia.geometry.transform.elastic_transform2d(
            x, torch.rand(n, 2, *x.shape[-2:], device=device) * 2 - 1),
    }


def torch_ops() -> list[str]:
    """Every video op rendered by torch on the device: a torch kernel, or a gather (index maps)."""
    from perturb.registry import REGISTRY
    from perturb.video.render import INDEX, renderer_of
    return [s.name for s in REGISTRY.select("video")
            if "torch" in renderer_of(s).kernels or renderer_of(s).reads == INDEX]


def kernel_rates(clip: np.ndarray, device: str, settings: Settings, log=print) -> dict[str, Any]:
    """Frames/s of every torch kernel on ``device`` at severity 3, kornia's nearest op beside it."""
    from perturb.video.api import apply
    x, sync = as_float(clip, device), synchronise(device)
    try:
        import kornia
        peers, kornia_note = kornia_peers(kornia, len(x), device), f"kornia {kornia.__version__}"
    except ImportError as exc:
        peers, kornia_note = {}, f"kornia not importable ({exc})"
    rows = []
    for name in torch_ops():
        contenders = {"ours": timed(lambda name=name: (apply(x, name, SEVERITY, seed=0), sync()))}
        if name in peers:
            contenders["kornia"] = timed(lambda fn=peers[name]: (fn(x), sync()))
        secs = interleaved(contenders, settings)
        row = {"op": name, "ms": secs["ours"] * 1e3, "fps": len(x) / secs["ours"]}
        if "kornia" in secs:
            row.update(kornia_fps=len(x) / secs["kornia"], vs_kornia=secs["kornia"] / secs["ours"])
        rows.append(row)
        log(f"  {name:20s} {row['fps']:12,.0f} frames/s" + (f"  kornia {row['kornia_fps']:12,.0f}" if name in peers else ""))
    return {"frames": len(x), "size": list(clip.shape[1:3]), "severity": SEVERITY, "kornia": kornia_note, "rows": rows}


def pixel_diffs(clip: np.ndarray, device: str, severities: tuple[int, ...], log=print) -> dict[str, Any]:
    """For every video op: the torch path on ``device`` (float clip) against the numpy path, in levels."""
    import torch

    from perturb.registry import REGISTRY
    from perturb.video.api import apply
    x = as_float(clip, device)
    rows = []
    for spec in REGISTRY.select("video"):
        for sev in severities:
            ref = apply(clip, spec.name, sev, seed=0).astype(np.int16)
            out = apply(x, spec.name, sev, seed=0).mul(255).round_().to(torch.uint8).permute(0, 2, 3, 1).cpu()
            diff = np.abs(out.numpy().astype(np.int16) - ref)
            rows.append({"op": spec.name, "severity": sev, "max_level_diff": int(diff.max()),
                         "share_over_1": float(np.mean(diff > 1)), "share_differing": float(np.mean(diff > 0))})
        worst = max(rows[-len(severities):], key=lambda r: r["max_level_diff"])
        log(f"  {spec.name:20s} max diff {worst['max_level_diff']}  share >1 level {worst['share_over_1']:.2e}")
    return {"frames": len(clip), "size": list(clip.shape[1:3]), "severities": list(severities), "rows": rows}


def _grid(model: str, label: str, opts: dict[str, Any], cats: tuple[str, ...], dataset: Path, device: str,
          dry: bool, extra: list[str], log=print) -> dict[str, Any]:
    """``perturb bench`` over ``cats`` with ``model`` on ``device`` against its model floor."""
    from . import runner_speed as rs
    files = sorted(dataset.parent.glob("*.mp4"))
    floor = rs.adapter_floor(model, files, opts)
    log(f"  model floor: {floor['clips_per_s']} clips/s ({label})")
    workers = max(1, min(8, (os.cpu_count() or 2) - 1))
    rows = []
    for cat in cats:
        args = ["--workers", str(workers), "--device", device, *extra] + (["--severities", "3"] if dry else [])
        r = rs.run_bench(ROOT, model, dataset, cat, args)
        rows.append({"code": "head", "model": label, "category": cat, "videos": len(files), **r,
                     "evals_per_s": r["configs"] * len(files) / r["seconds"]})
        log(f"  {cat:9s} {r['configs']} configs {r['seconds']:.2f} s {rows[-1]['evals_per_s']:.1f} evals/s")
    non_codec = tuple(c for c in cats if c not in rs.CODEC)
    totals = {name: rs.totals(rows, "head", label, group, name) for group, name in ((cats, "grid"), (non_codec, "non-codec"))}
    share = totals["non-codec"]["evals_per_s"] / floor["clips_per_s"] if totals["non-codec"] else None
    return {"model": label, "videos": len(files), "workers": workers, "floor": floor, "runs": rows,
            "totals": totals, "non_codec_share_of_floor": share}


def runner_grid(device: str, dry: bool, log=print) -> dict[str, Any]:
    """benchmarks/runner_speed.py's grid with a random CLIP on ``device`` against its model floor."""
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny_models import build_clip

    from . import runner_speed as rs
    cache = rs.CACHE / ("tiny-clip" if dry else "vit-b32-random")
    path = build_clip(cache) if dry else build_clip(cache, **VIT_B32)
    cats = ("noise", "digital") if dry else rs.CATEGORIES         # dry: one non-codec, one codec category
    dataset = rs.make_dataset(rs.CACHE, 1 if dry else 4, 1.0 if dry else 5.0, 30, 320, 240)
    return _grid(f"clip:{path}", "tiny CLIP" if dry else "ViT-B/32-sized random CLIP",
                 {"device": device, "batch_size": 32, "frames": 8}, cats, dataset, device, dry, [], log)


def classify_grid(device: str, dry: bool, log=print) -> dict[str, Any]:
    """runner_speed.py's classification row: a random VideoMAE classifier (16 frames; 224 px, or 28
    dry) over the same videos labelled round-robin, ``--task classify``, against its model floor."""
    sys.path.insert(0, str(ROOT / "tests"))
    from hf_classifiers import build, labels_of

    from . import runner_speed as rs
    path = build("videomae", rs.CACHE / ("tiny-videomae" if dry else "videomae-224-random"),
                 image_size=28 if dry else 224)
    dataset = rs.make_dataset(rs.CACHE, 1 if dry else 4, 1.0 if dry else 5.0, 30, 320, 240)
    labelled = rs.labelled_dataset(dataset, labels_of("videomae"))
    cats = ("noise",) if dry else tuple(c for c in rs.CATEGORIES if c not in rs.CODEC)
    return _grid(f"hf:{path}", "tiny VideoMAE" if dry else "random VideoMAE (224 px, 16 frames)",
                 {"device": device, "batch_size": 32}, cats, labelled, device, dry, ["--task", "classify"], log)


def cuda_tests(log=print) -> dict[str, Any]:
    """``pytest -k cuda`` over the test files that parametrise or check a CUDA device."""
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py") if "cuda" in p.read_text())
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "cuda", "-rfEs", "--tb=line", *files]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH")) if p)})
    lines = proc.stdout.strip().splitlines()
    summary = next((ln for ln in reversed(lines) if re.search(r"passed|failed|skipped|deselected|error", ln)), "")
    log(f"  {' '.join(files)}: {summary}")
    failed = [ln.split(" ", 1)[1].split(" - ", 1)[0] for ln in lines if ln.startswith(("FAILED ", "ERROR "))]
    return {"files": files, "returncode": proc.returncode, "summary": summary, "failed": failed,
            "tail": "\n".join(lines[-30:])}


def device_info(device: str) -> dict[str, Any]:
    import torch
    info = {"device": device, "torch": torch.__version__, "python": platform.python_version(),
            "host": platform.node(), "cpus": os.cpu_count()}
    if device.startswith("cuda"):
        info.update(name=torch.cuda.get_device_name(), cuda=torch.version.cuda)
    return info


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gpu", description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda", help="cuda (default), cuda:1, or cpu for a dry pass")
    p.add_argument("--dry", action="store_true", help="small counts and a tiny CLIP: prove the script end to end")
    p.add_argument("--frames", type=int, help="frames per clip for the kernel rates (default 256; 8 dry)")
    p.add_argument("--size", type=int, default=224, help="frame side in pixels, a crop of the sample clip (default 224)")
    p.add_argument("--wheels", type=Path, help="folder of wheels (e.g. PyAV for cp312) to install first")
    p.add_argument("--budget", type=float, default=420.0, help="seconds after which remaining parts are skipped")
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: kernels, pixels, classify, runner, tests")
    p.add_argument("--out", type=Path, help="the JSON file (default benchmarks/results/gpu-<date>-<device>.json)")
    return p.parse_args(argv)


def _run_parts(parts: dict[str, tuple[bool, Callable[[], Any]]], skip: set[str], no_av: str | None, budget: float,
               start: float, doc: dict[str, Any]) -> None:
    """Each part in turn into ``doc``, unless skipped, PyAV-less (``no_av``: why) or past the budget; a failing
    part is recorded."""
    for name, (needs_av, run) in parts.items():
        spent = time.perf_counter() - start
        reason = ("--skip" if name in skip else no_av if needs_av and no_av
                  else f"budget of {budget:.0f} s spent ({spent:.0f} s)" if spent > budget else None)
        if reason:
            doc[name] = {"skipped": reason}
            print(f"== {name}: skipped, {reason}")
            continue
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        try:
            doc[name] = run()
        except Exception as exc:                      # one broken part must not lose the others' figures
            doc[name] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
            print(f"  failed: {doc[name]['error']}")
        doc[name]["wall_s"] = round(time.perf_counter() - t0, 1)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    start = time.perf_counter()
    doc: dict[str, Any] = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "dry": args.dry}
    if args.wheels:
        doc["wheels"] = install_wheels(args.wheels)
        print(doc["wheels"])
    from .torch_device import unavailable
    why = unavailable(args.device)
    if why:
        print(f"--device {args.device}: {why}", file=sys.stderr)
        return 2
    doc["machine"] = device_info(args.device)
    if args.device == "cpu":
        import torch
        torch.set_num_threads(1)                      # a DataLoader worker's setting; steady on a shared CPU
    no_av = pyav_missing()
    doc["pyav"] = no_av or "importable"
    frames = args.frames or (8 if args.dry else 256)
    settings = Settings(repeats=1, warmup=1, min_repeats=1, budget=1.0) if args.dry else Settings(3, 1, 3, 10.0)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}

    def clip(n: int) -> np.ndarray:
        from perturb.video.sample import sample_clip
        base = sample_clip()[:, :args.size, :args.size]
        return np.ascontiguousarray(np.resize(base, (n, *base.shape[1:])))   # the sample clip, looped

    parts: dict[str, tuple[bool, Callable[[], Any]]] = {
        "kernels": (True, lambda: kernel_rates(clip(frames), args.device, settings)),
        "pixels": (True, lambda: pixel_diffs(clip(8 if args.dry else 32), args.device, (3,) if args.dry else (1, 3, 5))),
        "tests": (False, lambda: cuda_tests()),
        "classify": (True, lambda: classify_grid(args.device, args.dry)),
        "runner": (True, lambda: runner_grid(args.device, args.dry)),       # the longest part last
    }
    from perturb.video.host import torch_kernels_on_cpu
    # On the CPU a torch clip renders through the numpy kernels: the dry pass asks for the torch ones
    # (the code a GPU runs); on a GPU they are the path anyway.
    with torch_kernels_on_cpu(args.device == "cpu"):
        _run_parts(parts, skip, no_av, args.budget, start, doc)
    doc["wall_s"] = round(time.perf_counter() - start, 1)
    out = args.out or ROOT / "benchmarks" / "results" / f"gpu-{dt.date.today()}-{args.device.replace(':', '')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(finite(doc), indent=2, default=float) + "\n")
    print("\n" + summary(doc) + f"\n\nwall time {doc['wall_s']} s; written: {out}")
    return 0


def summary(doc: dict[str, Any]) -> str:
    """The kernel rates and the pixel differences as tables."""
    parts = []
    k = doc.get("kernels", {})
    if "rows" in k:
        parts.append(table(["op", "ms/clip", "frames/s", "kornia frames/s", "ours/kornia"],
                           [(r["op"], f"{r['ms']:.2f}", f"{r['fps']:,.0f}", f"{r.get('kornia_fps', 0):,.0f}" if "kornia_fps" in r else "-",
                             f"{r['vs_kornia']:.2f}" if "vs_kornia" in r else "-") for r in k["rows"]]))
    p = doc.get("pixels", {})
    if "rows" in p:
        parts.append(table(["op", "sev", "max level diff", "share > 1 level"],
                           [(r["op"], r["severity"], r["max_level_diff"], f"{r['share_over_1']:.2e}") for r in p["rows"]]))
    return "\n\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
