"""Property-based: no visual perturbation crashes or changes the shape on random small clips."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perturb.registry import REGISTRY
from perturb.selection import SEVERITY_LEVELS as SEVERITIES
from perturb.video import apply
from perturb.video.kernels.temporal import INDEX_FUNCTIONS, mean_displacement
from perturb.video.severity_params import table

NAMES = [s.name for s in REGISTRY.select("video")]


@st.composite
def clips(draw) -> np.ndarray:
    """A random clip, T 1..40, H and W 8..64, smooth or noisy content."""
    t = draw(st.integers(1, 40))
    h = draw(st.integers(8, 64))
    w = draw(st.integers(8, 64))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        return rng.integers(0, 256, size=(t, h, w, 3), dtype=np.uint8)
    ramp = np.linspace(0, 255, h * w).reshape(1, h, w, 1) + rng.integers(0, 64, (t, 1, 1, 3))
    return np.clip(ramp, 0, 255).astype(np.uint8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clip=clips(), name=st.sampled_from(NAMES), severity=st.sampled_from(SEVERITIES),
       seed=st.integers(0, 2**31))
def test_any_clip_any_perturbation(clip, name, severity, seed):
    before = clip.copy()
    out = apply(clip, name, severity, seed=seed)
    assert out.shape == clip.shape and out.dtype == np.uint8
    assert np.array_equal(clip, before)


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 200), name=st.sampled_from(sorted(INDEX_FUNCTIONS)),
       severity=st.sampled_from(SEVERITIES), seed=st.integers(0, 2**31))
def test_temporal_indices_are_valid(n, name, severity, seed):
    idx = INDEX_FUNCTIONS[name](n, rng=np.random.default_rng(seed), **table(name)[severity])
    assert idx.shape == (n,) and idx.min() >= 0 and idx.max() < n
    if name in ("jumble", "box_jumble"):
        assert sorted(idx.tolist()) == list(range(n))          # a permutation
    if name in ("sampling", "freeze"):
        assert np.all(idx <= np.arange(n)) and np.all(np.diff(idx) >= 0)   # held, never ahead


ORDERED = ("sampling", "freeze", "frame_rate")         # displacement grows with severity at every length


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 200), name=st.sampled_from(ORDERED), seed=st.integers(0, 2**31))
def test_displacement_grows_with_severity(n, name, seed):
    """Under one seed, each severity of sampling, freeze and frame_rate displaces the clip at least
    as much as the one below, at any length (sampling and freeze frame by frame: a higher rate or
    fewer kept frames only holds frames longer), and on 64 frames or more sampling and freeze
    strictly more, as their documentation says."""
    index = [INDEX_FUNCTIONS[name](n, rng=np.random.default_rng(seed), **table(name)[s]) for s in sorted(table(name))]
    moved = [np.abs(idx - np.arange(n)) for idx in index]
    means = [mean_displacement(idx) for idx in index]
    assert all(a <= b for a, b in zip(means, means[1:])), means
    if name != "frame_rate":
        assert all(np.all(a <= b) for a, b in zip(moved, moved[1:]))
        if n >= 64:
            assert all(a < b for a, b in zip(means, means[1:])), means
