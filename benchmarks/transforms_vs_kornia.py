"""``perturb.transforms.RandomPerturbation`` against kornia's ``VideoSequential`` on one batch.

A batch of 8 clips x 16 frames x 224² (the bundled sample clip, float (B, T, C, H, W) in [0, 1],
on the device) through each side, op by op with comparable settings (ours at severity 3, kornia
with the same strength where it has the op), then a mixed row: ours draws an op per sample from
all of them (severity 1..5), kornia applies one of them per batch (``random_apply=1``). On the
CPU ours is also timed on the same levels as a numpy uint8 (B, T, H, W, C) batch (the numpy
kernels, as a DataLoader worker fed numpy clips runs them). Interleaved medians; the device is synchronised before the clock stops.

Run: ``python -m benchmarks.transforms_vs_kornia [--device cuda] [--repeats 3]``. Prints a table
and writes ``benchmarks/results/<date>-<machine>-transforms-<device>.json``.
kornia is a benchmark-only peer (``pip install --no-deps kornia==0.9.0 kornia-rs``).
"""
from __future__ import annotations

import argparse
from typing import Any, Callable

from perturb.transforms import RandomPerturbation
from perturb.video.sample import sample_clip

from .harness import Settings, interleaved, ms, table, timed, write_results

BATCH, FRAMES, SEVERITY = 8, 16, 3


def kornia_ops() -> dict[str, tuple[str, Callable[[], Any], bool]]:
    """Our op -> (kornia's comparable augmentation as written, a factory, same draw on every frame)."""
    import kornia.augmentation as K

    shift = 24 / 224                           # translate's largest shift at severity 3, as a fraction
    return {
        "gaussian_noise": ("RandomGaussianNoise(std=0.18)", lambda: K.RandomGaussianNoise(std=0.18, p=1.0), True),
        "motion_blur": ("RandomMotionBlur(31, (-45, 45), 0)",
                        lambda: K.RandomMotionBlur(31, (-45.0, 45.0), 0.0, p=1.0), True),
        "gaussian_blur": ("RandomGaussianBlur((25, 25), (3, 3))",
                          lambda: K.RandomGaussianBlur((25, 25), (3.0, 3.0), p=1.0), True),
        "defocus_blur": ("RandomBoxBlur((13, 13)) (no disk blur)", lambda: K.RandomBoxBlur((13, 13), p=1.0), True),
        "rotate": ("RandomRotation(18), per frame", lambda: K.RandomRotation(18.0, p=1.0), False),
        "translate": (f"RandomAffine(0, translate={shift:.3f}), per frame",
                      lambda: K.RandomAffine(0.0, translate=(shift, shift), p=1.0), False),
        "brightness": ("RandomBrightness((1.3, 1.3))", lambda: K.RandomBrightness((1.3, 1.3), p=1.0), True),
        "contrast": ("RandomContrast((0.2, 0.2))", lambda: K.RandomContrast((0.2, 0.2), p=1.0), True),
        "saturate": ("RandomSaturation((5, 5))", lambda: K.RandomSaturation((5.0, 5.0), p=1.0), True),
        "jpeg": ("RandomJPEG(15)", lambda: K.RandomJPEG(jpeg_quality=15.0, p=1.0), True),
    }


def batch_on(device: str):
    """8 clips x 16 frames x 224² of real content (different windows of the sample clip)."""
    import torch

    clip = torch.from_numpy(sample_clip(FRAMES + BATCH * 4).copy())
    clips = torch.stack([clip[4 * i:4 * i + FRAMES] for i in range(BATCH)])          # (B, T, H, W, C)
    return (clips.permute(0, 1, 4, 2, 3).float() / 255).to(device)


def run(device: str, settings: Settings, log=print) -> dict[str, Any]:
    """Per-op and mixed timings of both sides on ``device``."""
    import torch
    from kornia.augmentation import VideoSequential

    x = batch_on(device)
    # on the CPU, ours also on the same levels as a numpy uint8 batch: the numpy kernels
    levels = (x * 255).round().to(torch.uint8).permute(0, 1, 3, 4, 2).contiguous().numpy() \
        if x.device.type == "cpu" else None
    sync = (lambda: torch.cuda.synchronize(x.device)) if x.device.type == "cuda" else (lambda: None)
    keys = list(range(BATCH))
    peers = kornia_ops()

    def pair(ours: RandomPerturbation, theirs: Any) -> dict[str, float]:
        def call(fn: Callable[[], Any]) -> Callable[[], None]:
            return lambda: (fn(), sync())
        contenders = {"ours": timed(call(lambda: ours(x, keys=keys))), "kornia": timed(call(lambda: theirs(x)))}
        if levels is not None:
            contenders["ours_numpy"] = timed(lambda: ours(levels, keys=keys))
        with torch.no_grad():
            return interleaved(contenders, settings)

    rows = []
    for op, (written, make, same) in peers.items():
        seconds = pair(RandomPerturbation(op, severity=SEVERITY, seed=0),
                       VideoSequential(make(), data_format="BTCHW", same_on_frame=same))
        rows.append({"op": op, "kornia": written, **{f"{k}_s": v for k, v in seconds.items()}})
        log("  " + op + ": " + ", ".join(f"{k} {ms(v)} ms" for k, v in seconds.items()))
    mixed = RandomPerturbation(",".join(peers), severity=(1, 5), seed=0)
    seconds = pair(mixed, VideoSequential(*(make() for _, make, _ in peers.values()), data_format="BTCHW",
                                          same_on_frame=True, random_apply=1))
    rows.append({"op": "mixed (one op per sample / per batch)", "kornia": "VideoSequential(..., random_apply=1)",
                 **{f"{k}_s": v for k, v in seconds.items()}})
    name = torch.cuda.get_device_name(x.device) if x.device.type == "cuda" else "cpu"
    return {"device": str(x.device), "device_name": name, "batch": list(x.shape), "severity": SEVERITY,
            "rows": [{**r, "ratio": r["kornia_s"] / r["ours_s"]} for r in rows]}


def render(section: dict[str, Any]) -> str:
    """The section as a table: kornia's time over ours (above 1: ours is faster)."""
    numpy = "ours_numpy_s" in section["rows"][0]
    rows = [(r["op"], r["kornia"], ms(r["ours_s"]), ms(r["kornia_s"]), f"{r['ratio']:.2f}x",
             *((ms(r["ours_numpy_s"]), f"{r['kornia_s'] / r['ours_numpy_s']:.2f}x") if numpy else ()))
            for r in section["rows"]]
    extra = ["ours numpy uint8 ms/batch", "kornia/ours numpy"] if numpy else []
    return table(["op (ours, sev 3)", "kornia", "ours torch ms/batch", "kornia ms/batch", "kornia/ours torch",
                  *extra], rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.transforms_vs_kornia", description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 (default: cpu)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--budget", type=float, default=20.0)
    args = p.parse_args(argv)
    from .torch_device import unavailable

    why = unavailable(args.device)
    if why:
        print(f"skipped: {why}")
        return 0
    settings = Settings(repeats=args.repeats, warmup=args.warmup, budget=args.budget)
    section = run(args.device, settings)
    print(render(section))
    device = section["device"].replace(":", "")
    path = write_results({"transforms_vs_kornia": section}, settings, suffix=f"-transforms-{device}")
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
