"""Which torch device a model adapter runs on (`--device auto|cpu|cuda[:N]`)."""
from __future__ import annotations


def pick_device(device: str = "auto") -> str:
    """``cuda`` when asked for or available under ``auto``, else ``cpu``."""
    import torch
    if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
        raise ValueError(f"device must be auto, cpu or cuda[:N]; got {device!r}")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError("--device cuda was requested but torch sees no CUDA device")
    return device
