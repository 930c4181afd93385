"""ImageNet-C-bar's texture ops: fields on known inputs, the reference's parameters, draws,
coherence over a clip, per_frame, subsets, tiny frames, numpy against torch."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

import perturb.video as pv
from perturb.video.kernels import cbar_fields as fields
from perturb.video.kernels.cbar_texture import LAYERS
from perturb.video.kernels.reference_forms import reference_params
from perturb.video.render import Draw, perturb_clip
from perturb.video.sample import sample_clip

NAMES = ["single_frequency_greyscale"]
# imagenet_c_bar.csv of the reference: each op's five severities on its 1-10 scale
LEVELS = {"single_frequency_greyscale": (1.0, 1.5, 2.0, 4.5, 5.0), "cocentric_sine_waves": (3.0, 5.0, 8.0, 9.0, 10.0),
          "plasma_noise": (4.75, 7.0, 8.5, 9.25, 10.0), "perlin_noise": (4.6, 5.2, 5.8, 7.6, 8.8),
          "brownish_noise": (1.0, 2.0, 3.0, 4.0, 5.0), "blue_noise_sample": (0.8, 1.6, 2.4, 4.0, 5.6)}


@lru_cache(maxsize=1)
def clip8() -> np.ndarray:
    c = np.ascontiguousarray(sample_clip(8)[:, ::2, ::2])          # 8 x 112 x 112, real content
    c.setflags(write=False)
    return c


def grey(t: int, h: int, w: int, level: int = 100) -> np.ndarray:
    return np.full((t, h, w, 3), level, np.uint8)


def changed(out: np.ndarray, clip: np.ndarray) -> float:
    return float(np.abs(out.astype(np.int16) - clip.astype(np.int16)).mean())


def draw_of(name: str, drawn: dict, severity: int = 1, n_frames: int = 1) -> Draw:
    params = pv.get(name).params(severity)
    return Draw(name, severity, n_frames, params, {k: np.asarray(v) for k, v in drawn.items()})


# ------------------------------------------------------------------------ known outputs
def test_single_frequency_at_phase_zero_is_a_quarter_period_grating() -> None:
    """freq (pi/2, 0), phase 0: sin(x·pi/2) = 0, 1, 0, -1 along a row, the same in every row;
    severity 1 adds 19.6 levels times that to every channel (rounded)."""
    d = draw_of("single_frequency_greyscale", {"freq": [[np.pi / 2, 0.0]], "phase": [0.0]})
    out = d.render(grey(1, 3, 6))
    assert out[0, :, :, 0].tolist() == [[100, 120, 100, 80, 100, 120]] * 3
    assert np.array_equal(out[..., 0], out[..., 2])
    turned = draw_of("single_frequency_greyscale", {"freq": [[0.0, np.pi / 2]], "phase": [0.0]})
    assert turned.render(grey(1, 6, 3))[0, :, 0, 1].tolist() == [100, 120, 100, 80, 100, 120]


# ----------------------------------------------------------------- the reference's terms
def test_single_frequency_reference_form_names_the_draw() -> None:
    d = draw_of("single_frequency_greyscale", {"freq": [[0.5, -0.25], [1.0, 2.0]], "phase": [1.0, 2.0]}, 4, 2)
    kw = reference_params("single_frequency_greyscale", d.drawn, d.params, 1, 64)
    assert sorted(kw) == ["freq", "intensity", "phase"]
    assert kw["freq"].tolist() == [1.0, 2.0] and kw["phase"] == 2.0 and kw["intensity"] == 88.2


def test_single_frequency_draws_follow_the_reference() -> None:
    """|freq| of one component ~ U(0, pi); the other within it; each order half the time."""
    d = pv.draw("single_frequency_greyscale", 1, 4000, seed=0, per_frame=True)
    freq = d.drawn["freq"]
    big = np.abs(freq).max(axis=1)
    assert freq.shape == (4000, 2) and big.max() <= np.pi
    assert 0.45 < (np.abs(freq[:, 0]) >= np.abs(freq[:, 1])).mean() < 0.55
    assert abs(big.mean() - np.pi / 2) < 0.05
    assert 0 <= d.drawn["phase"].min() and d.drawn["phase"].max() < 2 * np.pi


# ------------------------------------------------------------------------- every op
@pytest.mark.parametrize("name", NAMES)
def test_damage_grows_with_severity_on_the_sample_clip(name: str) -> None:
    damage = [changed(pv.apply(clip8(), name, s, seed=2), clip8()) for s in range(1, 6)]
    assert all(a < b for a, b in zip(damage, damage[1:])), damage


@pytest.mark.parametrize("name", NAMES)
def test_one_draw_per_clip_unless_per_frame(name: str) -> None:
    clip = grey(4, 20, 24)
    out = pv.apply(clip, name, 5, seed=1)
    assert out.shape == clip.shape and out.dtype == np.uint8 and not np.array_equal(out, clip)
    assert all(np.array_equal(out[0], frame) for frame in out[1:])
    fresh = pv.apply(clip, name, 5, seed=1, per_frame=True)
    assert not any(np.array_equal(fresh[0], frame) for frame in fresh[1:])
    assert np.array_equal(pv.apply(clip, name, 5, seed=1), out)
    assert not np.array_equal(pv.apply(clip, name, 5, seed=2), out)


@pytest.mark.parametrize("per_frame", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_a_subset_renders_as_in_the_whole_clip(name: str, per_frame: bool) -> None:
    d = pv.draw(name, 3, 8, seed=5, per_frame=per_frame)
    whole = d.render(clip8())
    picked = np.array([6, 1, 3])
    assert np.array_equal(d.render(clip8()[np.sort(picked)], np.sort(picked)), whole[np.sort(picked)])
    assert np.array_equal(d.render_clip(clip8(), picked), whole[picked])


@pytest.mark.parametrize("name", NAMES)
def test_tiny_odd_and_long_frames(name: str) -> None:
    for shape in [(2, 1, 1, 3), (2, 1, 7, 3), (2, 3, 5, 3), (2, 4000, 16, 3), (3, 16, 1, 3)]:
        clip = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
        before = clip.copy()
        for severity in (1, 5):
            for per_frame in (False, True):
                out = pv.apply(clip, name, severity, seed=3, per_frame=per_frame)
                assert out.shape == clip.shape and out.dtype == np.uint8
        assert np.array_equal(clip, before)


@pytest.mark.parametrize("name", NAMES)
def test_layers_are_finite_on_tiny_frames(name: str) -> None:
    d = pv.draw(name, 5, 1, seed=4)
    for h, w in [(1, 1), (1, 2), (2, 1), (1, 7), (3, 5), (4000, 16)]:
        row = {k: (v[0].item() if v[0].ndim == 0 else v[0]) for k, v in d.drawn.items()}
        for part in LAYERS[name](row, d.params, h, w):
            assert part is None or np.isfinite(part).all()


@pytest.mark.parametrize("per_frame", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_torch_renders_within_one_level_of_numpy(name: str, per_frame: bool, torch_kernels_on_cpu) -> None:
    torch = pytest.importorskip("torch")
    for severity in (1, 3, 5):
        ours = pv.apply(torch.from_numpy(clip8().copy()), name, severity, seed=9, per_frame=per_frame).numpy()
        ref = pv.apply(clip8(), name, severity, seed=9, per_frame=per_frame)
        assert np.abs(ours.astype(np.int16) - ref.astype(np.int16)).max() <= 1


@pytest.mark.parametrize("name", NAMES)
def test_registered_with_its_source_and_the_references_levels(name: str) -> None:
    spec = pv.get(name)
    assert spec.category == "texture" and spec.extra["per_frame"] and spec.random
    assert "augmentation-corruption imagenet_c_bar/corrupt.py" in spec.deviation
    assert tuple(spec.params(s)["level"] for s in range(1, 6)) == LEVELS[name]


@pytest.mark.parametrize("name,key,value", [
    ("single_frequency_greyscale", "intensity", -1.0),
    ("single_frequency_greyscale", "intensity", float("nan")),
])
def test_bad_parameters_name_what_was_expected(name: str, key: str, value: float) -> None:
    params = dict(pv.get(name).params(3), **{key: value})
    with pytest.raises(ValueError, match=f"^{name}: expected {key} to be a finite number in "):
        perturb_clip(pv.get(name), grey(1, 4, 4), np.random.default_rng(0), params)
