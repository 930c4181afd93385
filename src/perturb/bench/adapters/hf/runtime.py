"""What every hf adapter shares: loading, device and precision, batching, device preprocessing,
and unwrapping of feature outputs (tensors in transformers 4.x, ``BaseModelOutputWithPooling`` in 5.x).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..device import pick_device
from ..protocol import ModelSpecError
from .checkpoint import HfSpec, check_tokenizer, not_cached, offline

DTYPES = ("auto", "float32", "bfloat16", "float16")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")


def features(out: Any) -> Any:
    """The embedding tensor of a ``get_*_features`` output: a tensor (4.x) or its ``pooler_output`` (5.x)."""
    if hasattr(out, "norm") and hasattr(out, "shape"):
        return out
    pooled = getattr(out, "pooler_output", None)
    if pooled is None:
        raise TypeError(f"expected a tensor or an output with pooler_output; got {type(out).__name__}")
    return pooled


def unit(x: Any) -> Any:
    """Rows scaled to unit L2 norm."""
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)


def mean_per_clip(rows: Any, counts: Sequence[int]) -> Any:
    """The mean of each clip's rows, ``counts[i]`` consecutive rows for clip i."""
    if len(set(counts)) == 1:
        return rows.view(len(counts), counts[0], rows.shape[-1]).mean(dim=1)
    import torch
    return torch.stack([part.mean(dim=0) for part in rows.split(list(counts))])


@dataclass
class Runtime:
    """Device, weight dtype, autocast precision and batch size of one loaded model."""

    device: str = "cpu"
    dtype: str = "auto"
    precision: str = "auto"
    batch_size: int = 32                 # 0: automatic (start at 64 and halve on CUDA out-of-memory)
    device_map: str | None = None
    torch: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        import torch
        if self.dtype not in DTYPES:
            raise ModelSpecError(f"dtype must be one of {', '.join(DTYPES)}; got {self.dtype!r}")
        if self.precision not in PRECISIONS:
            raise ModelSpecError(f"precision must be one of {', '.join(PRECISIONS)}; got {self.precision!r}")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 0:
            raise ModelSpecError(f"batch_size must be an int >= 0 (0 = automatic); got {self.batch_size!r}")
        self.device = pick_device(self.device)
        self.torch = torch

    @property
    def autocast_dtype(self) -> Any:
        """The autocast dtype: bf16 (fp16 where bf16 is unsupported) on CUDA under ``auto``, none on CPU."""
        torch = self.torch
        if self.precision == "fp32" or (self.precision == "auto" and not self.device.startswith("cuda")):
            return None
        if self.precision == "fp16":
            return torch.float16
        if self.precision == "auto" and not torch.cuda.is_bf16_supported():
            return torch.float16
        return torch.bfloat16

    @property
    def autocast_name(self) -> str:
        """The autocast dtype's name ("bfloat16", "float16"), or "none"."""
        return str(self.autocast_dtype).replace("torch.", "") if self.autocast_dtype is not None else "none"

    @property
    def pixel_dtype(self) -> Any:
        """Resizing and normalising run in half precision on CUDA under autocast (the model reads
        them in half anyway), in float32 otherwise (CPU has no half antialiased resize)."""
        torch = self.torch
        return torch.float16 if self.device.startswith("cuda") and self.autocast_dtype is not None else torch.float32

    def context(self) -> contextlib.AbstractContextManager:
        """Inference mode plus autocast where the precision asks for it."""
        torch = self.torch
        stack = contextlib.ExitStack()
        stack.enter_context(torch.inference_mode())
        if self.autocast_dtype is not None:
            stack.enter_context(torch.autocast(self.device.split(":")[0], dtype=self.autocast_dtype))
        return stack

    def load(self, cls: Any, spec: HfSpec, **kwargs: Any) -> Any:
        """``cls.from_pretrained`` of the spec with this runtime's dtype and device (or device_map)."""
        opts: dict[str, Any] = dict(revision=spec.revision, local_files_only=spec.local or offline(), **kwargs)
        if self.dtype != "auto":
            opts["dtype"] = getattr(self.torch, self.dtype)
        if self.device_map:
            opts["device_map"] = self.device_map
        with _cached_only(spec):
            model = cls.from_pretrained(spec.name, **opts).eval()
        if not self.device_map:
            model = model.to(self.device)
        else:
            self.device = str(next(model.parameters()).device)
        return model

    def to_device(self, frames: Sequence[Any]) -> Any:
        """uint8 (F, H, W, 3) frames of several clips as one tensor on the device: tensors already
        there are used as they are; host arrays go through one (pinned, on CUDA) buffer and a
        non-blocking copy."""
        torch = self.torch
        device = torch.device(self.device)
        if all(isinstance(f, torch.Tensor) and f.device == device for f in frames):
            return torch.cat(list(frames)) if len(frames) > 1 else frames[0]
        cuda = device.type == "cuda"
        host = torch.empty((sum(len(f) for f in frames), *frames[0].shape[1:]), dtype=torch.uint8,
                           pin_memory=cuda)
        at = 0
        for f in frames:                           # one copy into the batch, no concatenation first
            if isinstance(f, torch.Tensor):
                host[at:at + len(f)] = f
            else:                                  # read-only arrays too (a memoised clean clip)
                host[at:at + len(f)].numpy()[...] = np.asarray(f)
            at += len(f)
        return host.to(device, non_blocking=True)

    def weight_dtype(self, model: Any) -> str:
        return str(next(model.parameters()).dtype).replace("torch.", "")

    def batches(self, n: int, run: Callable[[slice], Any]) -> Iterator[Any]:
        """``run`` over consecutive slices of ``n`` items; under batch_size 0 on CUDA the slice halves on OOM."""
        size = self.batch_size or (64 if self.device.startswith("cuda") else 32)
        start = 0
        while start < n:
            try:
                out = run(slice(start, min(n, start + size)))
            except self.torch.cuda.OutOfMemoryError:
                if self.batch_size or size == 1:
                    raise
                self.torch.cuda.empty_cache()
                size //= 2
                continue
            start += size
            yield out


RESAMPLE = {0: "nearest-exact", 2: "bilinear", 3: "bicubic"}     # PIL filter codes torch can match


def resample_mode(code: Any) -> str:
    """The torch interpolation mode of a PIL ``resample`` code (antialiased like PIL for bilinear
    and bicubic); Lanczos, box and Hamming have no torch counterpart and are refused."""
    code = int(getattr(code, "value", code))
    if code not in RESAMPLE:
        raise ModelSpecError(f"resample={code} (PIL) has no torch counterpart; supported: "
                             f"{', '.join(f'{k} ({v})' for k, v in RESAMPLE.items())}")
    return RESAMPLE[code]


@dataclass(frozen=True)
class Pixels:
    """How frames become pixel values, as the checkpoint's processor makes them.

    ``rule`` says how the resize size follows the frame size: ``fixed`` (height x width),
    ``shortest_edge`` (short side to ``edge``, the long side truncated as transformers does, then
    a centre crop to height x width when ``crop``), ``naflex`` (SigLIP 2: aspect kept, at most
    ``max_patches`` patches of ``patch`` px) or ``smart`` (Qwen2-VL's ``smart_resize`` to a
    multiple of ``patch`` within ``min_pixels``..``max_pixels``). The resized frame is rounded to
    8 bits as the PIL backend's is, then rescaled and normalised.
    """

    height: int
    width: int
    crop: bool
    mean: tuple[float, ...]
    std: tuple[float, ...]
    resample: str = "bicubic"
    rule: str = "fixed"
    edge: int = 0
    do_resize: bool = True
    rescale: float | None = 1 / 255
    normalize: bool = True
    patch: int = 1
    max_patches: int = 0
    min_pixels: int = 0
    max_pixels: int = 0
    size: tuple[int, int] | None = None   # fixed rule with a crop: the resize size (DeiT: 256x256, then 224)
    offset: bool = False                  # ViViT: rescaled values offset by -1 (1/127.5 then -1: -1..1)

    def resize_size(self, h: int, w: int) -> tuple[int, int]:
        """The (height, width) a frame of h x w is resized to (before any crop)."""
        if not self.do_resize:
            return h, w
        if self.rule == "shortest_edge":
            short, long = (w, h) if w <= h else (h, w)
            new_long = int(self.edge * long / short)
            return (self.edge, new_long) if h == short else (new_long, self.edge)
        if self.rule == "naflex":
            from transformers.models.siglip2.image_processing_pil_siglip2 import get_image_size_for_max_num_patches
            return get_image_size_for_max_num_patches(h, w, self.patch, self.max_patches)
        if self.rule == "smart":
            from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize
            return smart_resize(h, w, factor=self.patch, min_pixels=self.min_pixels, max_pixels=self.max_pixels)
        return self.size or (self.height, self.width)

    def resize(self, x: Any, size: tuple[int, int]) -> Any:
        """(F, 3, H, W) 0..255 values resized as PIL resizes 8-bit images: the width pass, rounded
        to 8 bits, then the height pass, rounded (antialiased for bilinear and bicubic)."""
        import torch
        aa = self.resample != "nearest-exact"
        opts = {"antialias": True, "align_corners": False} if aa else {}
        if x.shape[-1] != size[1]:
            x = torch.nn.functional.interpolate(x, size=(x.shape[-2], size[1]), mode=self.resample, **opts)
            x = x.round().clamp(0, 255)
        if x.shape[-2] != size[0]:
            x = torch.nn.functional.interpolate(x, size=(size[0], x.shape[-1]), mode=self.resample, **opts)
            x = x.round().clamp(0, 255)
        return x

    def __call__(self, frames: Any, runtime: Runtime) -> Any:
        """uint8 (F, H, W, 3) numpy or torch frames -> float (F, 3, h, w) pixel values on the
        runtime's device (resized there)."""
        torch = runtime.torch
        if not isinstance(frames, torch.Tensor):
            frames = np.asarray(frames)
        if frames.ndim != 4 or frames.shape[-1] != 3 or str(frames.dtype).replace("torch.", "") != "uint8":
            raise ValueError(f"expected uint8 frames of shape (F, H, W, 3); got {frames.dtype} {tuple(frames.shape)}")
        x = runtime.to_device([frames]).permute(0, 3, 1, 2).to(runtime.pixel_dtype)
        h, w = x.shape[-2:]
        size = self.resize_size(h, w)
        if size != (h, w):
            x = self.resize(x, size)
        if self.crop:
            top, left = (size[0] - self.height) // 2, (size[1] - self.width) // 2
            if top < 0 or left < 0:
                raise ValueError(f"frames of {size[0]}x{size[1]} are smaller than the {self.height}x{self.width} crop")
            x = x[..., top:top + self.height, left:left + self.width]
        if self.rescale is not None:
            x = x * self.rescale - (1 if self.offset else 0)
        if self.normalize:
            mean = torch.as_tensor(self.mean, device=x.device, dtype=x.dtype).view(1, 3, 1, 1)
            std = torch.as_tensor(self.std, device=x.device, dtype=x.dtype).view(1, 3, 1, 1)
            x = (x - mean) / std
        return x.float()


def _side(value: Any, default: int) -> tuple[int, int]:
    if isinstance(value, dict):
        if "height" in value:
            return int(value["height"]), int(value["width"])
        if "shortest_edge" in value:
            return int(value["shortest_edge"]), int(value["shortest_edge"])
    if isinstance(value, int):
        return value, value
    return default, default


def pixels_from(preprocessor: dict[str, Any] | None, defaults: dict[str, Any], **extra: Any) -> Pixels:
    """:class:`Pixels` from a ``preprocessor_config.json``, missing keys taken from ``defaults``
    (the processor class's own defaults; ``crop_pct`` there marks ConvNextImageProcessor's resize)."""
    cfg = {**defaults, **{k: v for k, v in (preprocessor or {}).items() if v is not None}}
    size = cfg.get("size")
    if isinstance(size, int):
        size = {"shortest_edge": size} if not cfg.get("default_to_square", True) else {"height": size, "width": size}
    crop = bool(cfg.get("do_center_crop")) and cfg.get("crop_size") is not None
    rule, edge = "fixed", 0
    if isinstance(size, dict) and "shortest_edge" in size and "height" not in size:
        rule, edge = "shortest_edge", int(size["shortest_edge"])
    h, w = _side(cfg.get("crop_size") if crop else size, edge or 224)
    fixed = _side(size, 224) if crop and rule == "fixed" else None
    if "crop_pct" in defaults and rule == "shortest_edge":      # ConvNextImageProcessor's resize
        if edge < 384:            # short side to edge / crop_pct, then an edge x edge centre crop
            crop, h, w, edge = True, edge, edge, int(edge / float(cfg["crop_pct"]))
        else:                     # a plain edge x edge resize
            crop, rule, h, w, edge = False, "fixed", edge, edge, 0
    rescale = float(cfg.get("rescale_factor", 1 / 255)) if cfg.get("do_rescale", True) else None
    opts: dict[str, Any] = dict(resample=resample_mode(cfg.get("resample", 3)), rule=rule, edge=edge,
                                do_resize=bool(cfg.get("do_resize", True)), rescale=rescale,
                                normalize=bool(cfg.get("do_normalize", True)), size=fixed,
                                offset=bool(cfg.get("offset", False)) and rescale is not None)
    return Pixels(h, w, crop, tuple(float(v) for v in cfg["image_mean"]),
                  tuple(float(v) for v in cfg["image_std"]), **{**opts, **extra})


def sample(clip: Any, spec: Any) -> Any:
    """The frames of ``spec`` (a :class:`FrameSpec`) of a clip; a torch clip stays a tensor on its
    device. A clip of exactly ``spec.count`` frames is the runner's pick already (each rule reads
    every frame of a clip that short), so it is taken as it is; so is a clip under ``fps:N``,
    whose count only the runner can tell (it knows the clip's frame rate)."""
    if not hasattr(clip, "device"):
        clip = np.asarray(clip)
    if spec.by_rate or len(clip) == spec.count(len(clip)):
        return clip
    return clip[spec.indices(len(clip))]


@contextlib.contextmanager
def _cached_only(spec: HfSpec) -> Iterator[None]:
    """Loading a hub model with only the local cache to go on: a file it lacks is a ModelSpecError
    saying so (transformers would speak of its own ``local_files_only`` argument)."""
    try:
        yield
    except OSError:
        if spec.local or not offline():
            raise
        raise ModelSpecError(not_cached(spec, partly=True)) from None


def load_tokenizer(spec: HfSpec) -> Any:
    """The checkpoint's tokenizer; a local folder without one is refused (check_tokenizer)."""
    from transformers import AutoTokenizer
    check_tokenizer(spec)
    with _cached_only(spec):
        return AutoTokenizer.from_pretrained(spec.name, revision=spec.revision,
                                             local_files_only=spec.local or offline())
