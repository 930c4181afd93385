"""Two steps for every visual perturbation: draw its parameters, then render the frames asked for.

A :class:`Draw` holds everything a perturbation drew for a clip of T frames (angles, offsets,
index maps, noise keys), drawn once on the host from the clip's Generator. It renders any set
of output frames on numpy or torch, and a rendered subset equals the same frames of the full
output. How an op does this is its :class:`Renderer`, registered on its registry entry
(``Spec.render``): what output frame t reads, how parameters are drawn, its kernels (numpy, and
torch where it has one: :mod:`.kernels.twins`, where each kernel is registered beside its definition).

What output frame t reads (``Renderer.reads``):

- ``"frame"``: input frame t only (noise, blur, camera, JPEG).
- ``"index"``: input frame ``index[t]`` of a drawn index map (temporal ops); rendering is a
  gather, so it is the same on numpy and torch and on every device.
- ``"window"``: input frames t - b .. t + a, clamped to the clip, for the draw's
  ``window = (b, a)`` (temporal_blur: the mean of neighbouring frames).
- ``"prefix"``: input frames 0..t (the MPEG codecs). Their encoders carry state from one GOP
  to the next (rate control and motion search; measured: re-encoding one 12-frame GOP alone
  changes its P-frames by up to 137 levels), so a GOP window is not rendered alone. They do
  not look ahead (no B-frames), so encoding frames 0..t gives exactly the whole clip's first
  t + 1 frames. The H.264/H.265 CRF ops too (no B-frames, no look-ahead).
- ``"clip"``: every input frame, whatever the output frame: ops whose output frame t depends on
  later frames (B-frames and look-ahead of a source encode, a bitrate target taken from the
  whole clip): bit_error, packet_loss and the ABR codecs.

A kernel is ``kernel(frames, ids, drawn, params)``: ``frames`` holds the input frames that
:meth:`Draw.source_indices` names for the sorted unique output frames ``ids`` (uint8
(N, H, W, 3) numpy; for torch, float32 (N, 3, H, W) holding 0..255 levels, or with
``torch_frames="clip"`` the validated torch clip itself, uint8 (N, H, W, 3) or float
(N, 3, H, W) in [0, 1], which the kernel gives back in kind and dtype), ``drawn`` the whole clip's draws and ``params`` the severity's
parameters; it returns the output frames ``ids`` in the same form. A torch clip on the CPU, and on any
device a torch clip of an op without a torch kernel, renders through the numpy kernel (:mod:`.host`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..registry import REGISTRY, Spec
from .clip import is_torch, to_numpy, torch_layout
from .host import render_on_host, renders_on_host
from .kernels.temporal import window_sources
from .kernels.twins import LIBRARIES, Drawer, Kernel, OpKernels
from .layouts import from_levels, to_levels

FRAME, INDEX, WINDOW, PREFIX, CLIP = "frame", "index", "window", "prefix", "clip"
READS = (FRAME, INDEX, WINDOW, PREFIX, CLIP)


def no_draws(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The draw of a deterministic op: nothing."""
    return {}


@dataclass(frozen=True)
class Renderer:
    """How one visual perturbation draws its parameters and renders frames. ``kernels`` maps an
    array library ("numpy", "torch") to its kernel: a registered op's are ``kernels_of(name)``
    (:mod:`.kernels.twins`)."""

    reads: str = FRAME
    draw: Drawer = no_draws
    kernels: Mapping[str, Kernel] = field(default_factory=dict)
    torch_frames: str = "levels"     # the torch kernel's input: float levels, or "clip" (the clip itself)
    cpu_kernel: str = "numpy"        # the kernel of a float torch clip on the CPU (:mod:`.host`)

    def __post_init__(self) -> None:
        if self.reads not in READS:
            raise ValueError(f"reads must be one of {READS}; got {self.reads!r}")
        if not isinstance(self.kernels, OpKernels):      # registered kernels are keyed by library already
            unknown = set(self.kernels) - set(LIBRARIES)
            if unknown:
                raise ValueError(f"kernels must be keyed by array library, among {LIBRARIES}; got {sorted(unknown)}")
        if self.torch_frames not in ("levels", "clip"):
            raise ValueError(f"torch_frames must be 'levels' or 'clip'; got {self.torch_frames!r}")
        if self.cpu_kernel not in LIBRARIES:
            raise ValueError(f"cpu_kernel must be one of {LIBRARIES}; got {self.cpu_kernel!r}")
        if self.reads != INDEX and "numpy" not in self.kernels:
            raise ValueError("a renderer that computes pixels needs a numpy kernel")


def renderer_of(spec: Spec) -> Renderer:
    """The renderer registered on a visual perturbation's entry."""
    if spec.render is None:
        raise ValueError(f"{spec.name} has no renderer registered on its entry")
    return spec.render


def output_frames(frames: Any, n_frames: int) -> np.ndarray:
    """Requested output frames as an int64 array (all T of them for None), validated."""
    if frames is None:
        return np.arange(n_frames)
    if is_torch(frames):
        frames = frames.detach().cpu().numpy()
    idx = np.asarray(frames)
    if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
        raise ValueError(f"expected frames as a non-empty 1-D sequence of ints (or None for all); "
                         f"got {idx.dtype} with shape {idx.shape}")
    if idx.min() < 0 or idx.max() >= n_frames:
        raise ValueError(f"expected frame indices in 0..{n_frames - 1} for a {n_frames}-frame clip; "
                         f"got values from {idx.min()} to {idx.max()}")
    return idx.astype(np.int64, copy=False)


def check_n_frames(n_frames: Any) -> int:
    if isinstance(n_frames, bool) or not isinstance(n_frames, (int, np.integer)) or n_frames < 1:
        raise ValueError(f"expected n_frames to be an int >= 1 (the clip's length T); got {n_frames!r}")
    return int(n_frames)


@dataclass(frozen=True, eq=False)
class Draw:
    """One perturbation's parameters drawn for a clip of ``n_frames`` frames; renders any frames.

    Small and picklable: the drawn values are a few numbers per frame. The renderer is looked
    up in the registry by name once per Draw, and left out when the Draw is pickled.
    """

    name: str
    severity: int | None
    n_frames: int
    params: Mapping[str, Any]
    drawn: Mapping[str, np.ndarray]

    @cached_property
    def renderer(self) -> Renderer:
        return renderer_of(REGISTRY.get(self.name, "video"))

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "renderer"}

    @property
    def native_libraries(self) -> tuple[str, ...]:
        """The array libraries ("numpy", "torch") whose clips render without a round trip through
        the other (a gather runs on both)."""
        renderer = self.renderer
        return LIBRARIES if renderer.reads == INDEX else tuple(b for b in LIBRARIES if b in renderer.kernels)

    def source_indices(self, frames: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """Sorted unique input frame indices needed to render output ``frames`` (None: all)."""
        return self._sources(output_frames(frames, self.n_frames))

    def _sources(self, ids: np.ndarray) -> np.ndarray:
        reads = self.renderer.reads
        if reads == INDEX:
            return np.unique(self.drawn["index"][ids])
        if reads == PREFIX:
            return np.arange(int(ids.max()) + 1)
        if reads == WINDOW:
            return np.unique(window_sources(ids, self.drawn["window"], self.n_frames))
        if reads == CLIP:
            return np.arange(self.n_frames)
        return np.unique(ids)

    def render(self, src: Any, frames: Sequence[int] | np.ndarray | None = None) -> Any:
        """Output ``frames`` (None: all T) from ``src``, which holds exactly the input frames
        ``source_indices(frames)`` in that order: uint8 (N, H, W, 3) numpy, or a torch uint8
        (N, H, W, 3) / float (N, 3, H, W) tensor in [0, 1] on any device. Returns
        ``len(frames)`` frames of the same type, layout, dtype and device; ``src`` is not modified.
        """
        layout = torch_layout(src) if is_torch(src) else None
        if layout is None:
            src, _ = to_numpy(src)
        return self._render(src, layout, output_frames(frames, self.n_frames))

    def render_clip(self, clip: Any, frames: Sequence[int] | np.ndarray | None = None) -> Any:
        """Output ``frames`` (None: all T) from the whole input clip (all T frames), of any
        accepted clip type: ``render(clip[source_indices(frames)], frames)`` without the copy."""
        layout = torch_layout(clip) if is_torch(clip) else None
        if layout is None:
            clip, _ = to_numpy(clip)
        return self.render_checked(clip, layout, frames)

    def render_checked(self, clip: Any, layout: str | None, frames: Sequence[int] | np.ndarray | None = None) -> Any:
        """:meth:`render_clip` of a whole clip its caller already validated: ``layout`` is
        :func:`.clip.torch_layout`'s answer for it (None for contiguous uint8 (T, H, W, 3) numpy).
        Nothing checks it again (a float clip's range check reads every value)."""
        return self._render_clip(clip, layout, output_frames(frames, self.n_frames))

    def _render_clip(self, clip: Any, layout: str | None, ids: np.ndarray) -> Any:
        if len(clip) != self.n_frames:
            raise ValueError(f"expected the whole {self.n_frames}-frame clip this draw was made for; "
                             f"got {len(clip)} frames")
        if self.renderer.reads == INDEX:
            return _take(clip, self.drawn["index"][ids])
        need = self._sources(ids)
        if len(need) == len(clip):
            src = clip
        elif self.renderer.reads == PREFIX:
            src = clip[:len(need)]                       # a view: frames 0..max(ids)
        else:
            src = _take(clip, need)
        return self._render(src, layout, ids)

    def _render(self, src: Any, layout: str | None, ids: np.ndarray) -> Any:
        """:meth:`render` on a clip validated where it came in (``layout`` None for contiguous
        uint8 numpy): nothing here checks or converts it again."""
        need = self._sources(ids)
        if len(src) != len(need):
            raise ValueError(f"expected src to hold the {len(need)} input frames that "
                             f"source_indices(frames) names for {self.name}; got {len(src)}")
        renderer = self.renderer
        if renderer.reads == INDEX:
            return _take(src, np.searchsorted(need, self.drawn["index"][ids]))
        unique, order = (ids, None) if _is_increasing(ids) else np.unique(ids, return_inverse=True)
        if layout is not None and (renders_on_host(src, layout, renderer.cpu_kernel)     # a CPU tensor,
                                   or "torch" not in renderer.kernels):                  # or no torch kernel
            out = render_on_host(renderer.kernels["numpy"], src, layout, unique, self.drawn, self.params)
        elif layout is not None:
            import torch

            with torch.no_grad():
                if renderer.reads == FRAME:          # frame-local: a few frames per pass on the CPU
                    out = _in_passes(src, lambda a, b, dest: self._torch_pass(src[a:b], layout, unique[a:b], dest))
                else:
                    out = self._torch_pass(src, layout, unique)
        else:                                    # numpy, validated where it came in
            out = renderer.kernels["numpy"](src, unique, self.drawn, self.params)
        return out if order is None else _take(out, order)

    def _torch_pass(self, src: Any, layout: str, ids: np.ndarray, dest: Any = None) -> Any:
        """Output frames ``ids`` from ``src`` through the torch kernel: converted in, rendered,
        converted back (into ``dest`` when given)."""
        renderer = self.renderer
        kernel = renderer.kernels["torch"]
        if renderer.torch_frames == "clip":
            out = kernel(src, ids, self.drawn, self.params)
            return out if dest is None else dest.copy_(out)
        return from_levels(kernel(to_levels(src, layout), ids, self.drawn, self.params), layout, src.dtype, dest)


CPU_PASS_VALUES = 640 * 1024   # values per pass of a torch clip on the CPU (four 224² frames): passes run in cache


def frames_per_pass(clip: Any) -> int:
    """How many frames of a torch clip go through a frame-local pass at once: all of them off the
    CPU, a few on it (every conversion and kernel step then reads and writes the cache)."""
    if clip.device.type != "cpu":
        return len(clip)
    return max(1, CPU_PASS_VALUES // max(1, clip[0].numel()))


def _in_passes(clip: Any, step: Callable[[int, int, Any], Any]) -> Any:
    """``step(a, b, dest)`` over the clip a few frames at a time: the tensor for frames a..b of
    ``clip``, a new one for the first pass (``dest`` None), written into ``dest`` (that part of
    the output, laid out as the first) for the others."""
    n, k = len(clip), frames_per_pass(clip)
    first = step(0, min(k, n), None)
    if k >= n:
        return first
    out = first.new_empty((n, *first.shape[1:]))
    out[:k] = first
    for a in range(k, n, k):
        step(a, min(n, a + k), out[a:a + k])
    return out


def _is_increasing(ids: np.ndarray) -> bool:
    return bool(np.all(ids[1:] > ids[:-1]))


def _take(frames: Any, positions: np.ndarray) -> Any:
    """frames[positions] for numpy or torch (a new array either way)."""
    if is_torch(frames):
        import torch
        return frames.detach().index_select(0, torch.as_tensor(positions, device=frames.device))
    return frames[positions]


def draw_for(spec: Spec, params: Mapping[str, Any], n_frames: int, rng: np.random.Generator,
             severity: int | None = None) -> Draw:
    """Draw ``spec``'s parameters for a clip of ``n_frames`` frames from ``rng``."""
    n = check_n_frames(n_frames)
    params = dict(params)
    renderer = renderer_of(spec)
    out = Draw(spec.name, severity, n, params, renderer.draw(rng, n, params))
    object.__setattr__(out, "renderer", renderer)    # renders with this entry's renderer (registered or not)
    return out


def perturb_clip(spec: Spec, clip: np.ndarray, rng: np.random.Generator,
                 params: Mapping[str, Any]) -> np.ndarray:
    """A whole uint8 clip perturbed by ``spec`` with draws from ``rng`` (the builder's unit step)."""
    return draw_for(spec, params, len(clip), rng).render_clip(clip)
