"""The noise ops' kernels in the draw/render model, until they register renderers of their own.

Each noise kernel seeds one child generator per frame from ``rng.integers(0, 2**63, size=T)``
(:func:`._fast_random.frame_generators`), so the per-frame seeds are the draw: frame t rendered
alone with seed t equals frame t of the whole clip. :class:`FrameSeeds` hands a kernel the
seeds of just the frames it renders. The torch path renders these ops through numpy, so every
backend gives the same pixels.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np

from ..registry import Spec

FRAME_SEEDED = ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise")
SEED_HIGH = 2**63


class FrameSeeds:
    """Stands in for the clip's Generator inside a noise kernel: returns the drawn frame seeds."""

    def __init__(self, seeds: np.ndarray) -> None:
        self.seeds = seeds

    def integers(self, low: int, high: int | None = None, size: int | None = None) -> np.ndarray:
        if (low, high, size) != (0, SEED_HIGH, len(self.seeds)):
            raise RuntimeError(f"a frame-seeded kernel asked for integers({low}, {high}, size={size}); "
                               f"expected the {len(self.seeds)} frame seeds in [0, 2**63)")
        return self.seeds


def draw_frame_seeds(rng: np.random.Generator, n_frames: int,
                     params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """One child seed per frame, drawn as the noise kernels draw them."""
    return {"frame_seeds": rng.integers(0, SEED_HIGH, size=n_frames)}


def frame_seeded_kernel(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    def kernel(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, np.ndarray],
               params: Mapping[str, Any]) -> np.ndarray:
        return fn(frames, FrameSeeds(drawn["frame_seeds"][ids]), **params)
    return kernel


@lru_cache(maxsize=None)
def _renderer(name: str, fn: Callable[..., np.ndarray]) -> Any:
    from .render import FRAME, Renderer
    return Renderer(FRAME, draw_frame_seeds, {"numpy": frame_seeded_kernel(fn)})


def keyed_renderer(draw_key: Callable[[np.random.Generator], int], render_numpy: Callable[..., Any],
                   render_torch: Callable[..., Any] | None = None) -> Any:
    """The renderer of a noise op drawn as one key per clip and rendered per (key, frame index):
    ``render_*(frames, frame_indices, key, params)``, torch on float (N, 3, H, W) levels."""
    from .render import FRAME, Renderer

    def draw(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"key": int(draw_key(rng))}

    def on(render: Callable[..., Any]) -> Callable[..., Any]:
        return lambda frames, ids, drawn, params: render(frames, ids, drawn["key"], params)

    kernels = {"numpy": on(render_numpy)}
    if render_torch is not None:
        kernels["torch"] = on(render_torch)
    return Renderer(FRAME, draw, kernels)


def renderer_for(spec: Spec) -> Any:
    """The interim renderer of a frame-seeded noise op; None for any other op."""
    return _renderer(spec.name, spec.fn) if spec.name in FRAME_SEEDED else None
