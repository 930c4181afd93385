"""What decoding at native size costs a real-size model on the CPU, against ``--size 224``.

Run: ``python benchmarks/native_decode_cost.py [--videos 2] [--width 320 --height 240] [--reps 3]``.

A randomly initialised CLIP ViT-B/32-sized model (vision: 12 layers, width 768, 224 px, patch
32) embeds 8 frames of each generated H.264 clip through ``load_model`` and the hf adapter, after
:func:`perturb.bench.pipeline.sources.OnTheFly`-style decoding of only those frames, once at native size
(the processor's resize is the only one) and once decoded to a 224 short side (a second resize).
Prints a table and writes ``benchmarks/results/native_decode_cost-<date>.json``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests")]
CACHE = ROOT / "benchmarks" / ".cache"
RESULTS = ROOT / "benchmarks" / "results"


def build_vit_b32(path: Path) -> Path:
    """A CLIP with ViT-B/32's vision tower (random weights), the tiny test text tower and
    openai/clip-vit-base-patch32's preprocessing."""
    import torch
    from transformers import CLIPConfig, CLIPModel

    from conformance_cases import CASES
    from tiny_models import build_clip

    if (path / "model.safetensors").exists():
        return path
    build_clip(path)                                   # tokenizer and a text config to copy
    cfg = CLIPConfig.from_pretrained(path)
    cfg.vision_config.update(dict(image_size=224, patch_size=32, hidden_size=768, intermediate_size=3072,
                                  num_hidden_layers=12, num_attention_heads=12))
    with torch.random.fork_rng():
        torch.manual_seed(0)
        CLIPModel(cfg).save_pretrained(path)
    (path / "preprocessor_config.json").write_text(json.dumps(CASES["clip"].preprocessor))
    return path


def main(argv: list[str] | None = None) -> int:
    from runner_speed import make_dataset

    from perturb.bench.adapters.factory import load_model
    from perturb.bench.adapters.model_options import ModelOptions
    from perturb.video.io import read_frames

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--videos", type=int, default=2)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--width", type=int, default=320)
    p.add_argument("--height", type=int, default=240)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args(argv)
    captions = make_dataset(CACHE, args.videos, args.seconds, 30, args.width, args.height)
    files = sorted(captions.parent.glob("*.mp4"))
    model = load_model(f"clip:{build_vit_b32(CACHE / 'clip-vit-b32-random')}", ModelOptions(device="cpu", frames=8))
    spec = model.impl.frame_spec
    rows = []
    for label, size in (("native", None), ("--size 224", 224)):
        decode_s, encode_s = [], []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            clips = [read_frames(f, spec.indices, size=size)[0] for f in files]
            t1 = time.perf_counter()
            model.encode_videos(clips)
            decode_s.append(t1 - t0)
            encode_s.append(time.perf_counter() - t1)
        d, e = float(np.median(decode_s)) / len(files), float(np.median(encode_s)) / len(files)
        rows.append({"decode": label, "frame": f"{clips[0].shape[2]}x{clips[0].shape[1]}",
                     "decode_s_per_clip": round(d, 4), "encode_s_per_clip": round(e, 4),
                     "total_s_per_clip": round(d + e, 4)})
    print("| decode | frames read | decode s/clip | encode s/clip (resize + ViT-B/32) | total s/clip |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['decode']} | {r['frame']} | {r['decode_s_per_clip']:.4f} | {r['encode_s_per_clip']:.4f} | "
              f"{r['total_s_per_clip']:.4f} |")
    ratio = rows[0]["total_s_per_clip"] / rows[1]["total_s_per_clip"]
    print(f"native / --size 224: {ratio:.3f}x")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"native_decode_cost-{dt.date.today().isoformat()}.json"
    out.write_text(json.dumps({"videos": len(files), "size": f"{args.width}x{args.height}", "rows": rows,
                               "native_over_size224": round(ratio, 3)}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
