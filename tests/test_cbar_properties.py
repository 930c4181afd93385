"""Property-based: ImageNet-C-bar's ops keep shape and dtype and never crash, from 1x1 to 4000x16
frames and from 1 to 1,000 frames, with one draw per clip or one per frame, on numpy and torch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perturb.registry import REGISTRY
from perturb.selection import SEVERITY_LEVELS as SEVERITIES
from perturb.video import apply

CBAR = [s.name for s in REGISTRY.resolve("suite:imagenet-c-bar", "video")]
AREA = 4000 * 16                 # the largest frame: 4000x16 (or 16x4000)
VALUES = 64 * 1024               # pixels per clip, so 1,000 frames are small ones


@st.composite
def clips(draw) -> np.ndarray:
    """A clip of 1..1,000 frames of 1..4000 px a side, at most AREA px a frame and VALUES in all."""
    h = draw(st.integers(1, 4000))
    w = draw(st.integers(1, max(1, min(4000, AREA // h))))
    t = draw(st.integers(1, max(1, min(1000, VALUES // (h * w)))))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return rng.integers(0, 256, size=(t, h, w, 3), dtype=np.uint8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clip=clips(), name=st.sampled_from(CBAR), severity=st.sampled_from(SEVERITIES),
       per_frame=st.booleans(), seed=st.integers(0, 2**31))
def test_any_size_any_length(clip, name, severity, per_frame, seed):
    if per_frame and len(clip) > 64:
        clip = clip[:64]                  # a layer per frame: keep the example quick
    before = clip.copy()
    out = apply(clip, name, severity, seed=seed, per_frame=per_frame)
    assert out.shape == clip.shape and out.dtype == np.uint8
    assert np.array_equal(clip, before)


@pytest.mark.parametrize("name", CBAR)
@pytest.mark.parametrize("shape", [(1, 1, 1), (1000, 1, 1), (2, 4000, 16), (2, 16, 4000), (3, 1, 7)])
def test_the_corners_on_torch_too(name, shape):
    torch = pytest.importorskip("torch")
    clip = np.random.default_rng(0).integers(0, 256, size=(*shape, 3), dtype=np.uint8)
    out = apply(torch.from_numpy(clip), name, 5, seed=1)
    assert tuple(out.shape) == clip.shape and out.dtype == torch.uint8
    float_out = apply(torch.from_numpy(clip).permute(0, 3, 1, 2).float() / 255, name, 5, seed=1)
    assert tuple(float_out.shape) == (shape[0], 3, *shape[1:]) and float_out.dtype == torch.float32
