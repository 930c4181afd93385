"""ImageNet-C-bar's overlay ops (checkerboard_cutout, sparkles, inverse_sparkles, caustic_refraction):
exact layers on known draws, the reference's parameters, coherence, per_frame, sizes and backends."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
import torch

import perturb.video as pv
from perturb.video.kernels import cbar_caustics as cc
from perturb.video.kernels import cbar_overlays as co
from perturb.video.kernels.reference_forms import reference_params
from perturb.video.sample import sample_clip

OPS = ["checkerboard_cutout", "sparkles", "inverse_sparkles", "caustic_refraction"]
SEVERITIES = [1, 2, 3, 4, 5]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@lru_cache(maxsize=1)
def clip8() -> np.ndarray:
    c = np.ascontiguousarray(sample_clip(8)[:, 40:104, 60:124])
    c.setflags(write=False)
    return c


def level_diff(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())


def grey(t: int, h: int, w: int, level: int = 60) -> np.ndarray:
    return np.full((t, h, w, 3), level, np.uint8)


# ------------------------------------------------------------------------------ checkerboard
def test_checkerboard_cuts_agreeing_cells_of_an_unrotated_grid() -> None:
    """angle 0, cells of 2 px (0.25 of an 8 px side), every grid cell below fraction 1: cut
    exactly where the row's and column's cell parities agree."""
    mask = co.cutout_mask(0.0, 0.25, 5, 1.0, 8, 8)
    y, x = np.mgrid[:8, :8]
    assert np.array_equal(mask, (y // 2) % 2 == (x // 2) % 2)
    assert not co.cutout_mask(0.0, 0.25, 5, 0.0, 8, 8).any()          # fraction 0: nothing cut


def test_checkerboard_follows_the_seeded_grid_and_wraps_negative_cells() -> None:
    """angle π/2: nx = x/s, ny = -y/s, so rows below 0 read the grid's last columns (the
    reference's negative-index wrap-around); cell (i, j) is cut iff RandomState(seed)'s
    uniform grid is below fraction there and the parities agree."""
    h = w = 8
    mask = co.cutout_mask(np.pi / 2, 0.25, 9, 0.5, h, w)
    grid = np.random.RandomState(9).uniform(size=(16, 16)) < 0.5
    expect = np.zeros((h, w), bool)
    for yy in range(h):
        for xx in range(w):
            nx = (np.cos(np.pi / 2) * yy + np.sin(np.pi / 2) * xx) / 2.0
            ny = (-np.sin(np.pi / 2) * yy + np.cos(np.pi / 2) * xx) / 2.0
            expect[yy, xx] = int(nx % 2) == int(ny % 2) and grid[int(nx), int(ny)]
    assert np.array_equal(mask, expect) and mask.any() and not mask.all()


def test_checkerboard_sets_cut_pixels_to_grey_128_and_keeps_the_rest() -> None:
    clip = clip8()
    out = pv.apply(clip, "checkerboard_cutout", 5, seed=3)
    d = pv.draw("checkerboard_cutout", 5, 8, seed=3)
    mask = co.checkerboard_mask(d.drawn, d.params, 0, 64, 64)
    assert np.all(out[:, mask] == 128) and np.array_equal(out[:, ~mask], clip[:, ~mask])
    assert 0.05 < mask.mean() < 0.45


def test_checkerboard_reference_form_names_the_references_arguments() -> None:
    d = pv.draw("checkerboard_cutout", 2, 3, seed=1)
    kw = reference_params("checkerboard_cutout", d.drawn, d.params, 2, 224)
    assert sorted(kw) == ["angle", "fraction", "scales", "seed"]
    s = float(d.drawn["scale"][0]) * 224
    assert kw["scales"] == (s, s) and kw["fraction"] == 0.3 and 0 <= kw["seed"] < 2**32
    assert 0 <= kw["angle"] < 2 * np.pi and 22.4 <= s < 56
    assert co.cell_side(0.1, 3) == 1.0                            # at least one pixel, as the reference


# ------------------------------------------------------------------------------ starbursts
def test_starburst_weights_on_four_rays_by_hand() -> None:
    """Rays 1, 2, 3, 4 px from a centre at (0, 0), exponent 1 (amount 50): a pixel at angle
    arctan2(dx, dy) + π = k·π/2 lies on ray k (f = 0), weight 0.75·L²/(r² + 1e-4), clipped to 1.
    Down the first column (dx = 0) is ray 2 (3 px), along the first row (dy = 0) ray 3 (4 px):
    the axes are the reference's (points as [y, x])."""
    weights = co.starburst(5, 5, (0.0, 0.0), np.array([1.0, 2.0, 3.0, 4.0]), 50)
    assert weights[4, 0] == pytest.approx(0.75 * 9 / 16.0001, rel=1e-12)
    assert weights[0, 4] == pytest.approx(0.75 * 16 / 16.0001, rel=1e-12)
    # (3, 3): halfway between rays 2 and 3 (f = 1/2), L = 3.5
    assert weights[3, 3] == pytest.approx(3.5 ** 2 / 18.0001, rel=1e-12)
    assert weights[0, 0] == 1.0 and weights.min() >= 0


def test_starburst_of_a_frame_taller_than_int32_squares_stays_finite() -> None:
    """49 999² passes 2**31: float64 coordinates keep the far pixel's weight right."""
    weights = co.starburst(50_000, 1, (0.0, 0.0), np.full(4, 1.0), 50)
    assert weights[-1, 0] == pytest.approx(0.75 / (49_999 ** 2 + 1e-4), rel=1e-12)
    assert np.isfinite(weights).all() and weights.min() > 0


def test_ray_lengths_follow_the_seeds_random_state_in_order() -> None:
    rs = np.random.RandomState(4)
    expect = [max(1, 2.0 + 25 / 100.0 * 2.0 * rs.randn()) for _ in range(60)]
    assert np.array_equal(co.ray_lengths(np.random.RandomState(4), 2.0, 60, 1.0), expect)
    rs = np.random.RandomState(4)
    assert np.array_equal(co.ray_lengths(np.random.RandomState(4), 0.5, 7, None),
                          [0.5 + 25 / 100.0 * 0.5 * rs.randn() for _ in range(7)])


def test_inverse_sparkles_keep_the_picture_at_the_centre_of_a_tall_frame() -> None:
    """Centre fractions (y, x) scale by H and W: on a 200 x 20 black frame the picture stays at
    (0.25·200, 0.75·20) = (50, 15) and turns white far from it."""
    d = pv.draw("inverse_sparkles", 5, 1, seed=0)
    d.drawn["centre"][0] = (0.25, 0.75)
    out = d.render(np.zeros((1, 200, 20, 3), np.uint8))[0]
    assert out[50, 15].tolist() == [0, 0, 0] and out[199, 0].tolist() == [255, 255, 255]
    ys, xs = np.nonzero(out[:, :, 0] == 0)                 # the hole: within two radii (5 px)
    assert np.abs(ys - 50).max() <= 10 and np.abs(xs - 15).max() <= 10 and len(ys) > 20


def test_sparkles_blend_each_burst_onto_the_previous_result() -> None:
    frames = np.array([[[[0, 100, 255]]]], np.uint8)
    weights = np.array([[[0.5]], [[0.5]]])
    # 0 -> 127.5 -> 191.25; 100 -> 177.5 -> 216.25; 255 stays
    assert co.blend_bursts(frames, weights).tolist() == [[[[191, 216, 255]]]]


def test_sparkles_reference_form_names_the_references_arguments() -> None:
    d = pv.draw("sparkles", 4, 2, seed=1)
    kw = reference_params("sparkles", d.drawn, d.params, 1, 64)
    assert sorted(kw) == ["amounts", "centers", "color", "nrays", "radii", "randomness", "seed"]
    assert np.array_equal(kw["centers"], d.drawn["centres"][0] * 64) and kw["centers"].shape == (5, 2)
    assert kw["radii"].tolist() == [0.05 * 64] * 5 and kw["amounts"].tolist() == [50] * 5
    assert kw["randomness"] == 25 and kw["color"].tolist() == [255] * 3
    assert all(50 <= n < 200 for n in kw["nrays"])
    kw = reference_params("inverse_sparkles", pv.draw("inverse_sparkles", 4, 1, seed=1).drawn,
                          {"amount": 41.5}, 0, 64)
    assert sorted(kw) == ["amount", "center", "color", "radius", "randomness", "rays", "seed"]
    assert kw["radius"] == 16 and kw["amount"] == 41.5 and all(16 <= c < 48 for c in kw["center"])


# ------------------------------------------------------------------------------ caustics
def test_caustic_field_equals_the_per_point_recipe() -> None:
    """The vectorised field against the reference's recipe written out for single points."""
    def point(y: int, x: int, time: float, size: float) -> float:
        p = (np.array([y, x]) / size % 1) * 6.28318530718 - 250
        i, c = p.copy(), 1.0
        for n in range(5):
            t = time * (1.0 - (3.5 / (n + 1)))
            i = p + np.array([np.cos(t - i[0]) + np.sin(t + i[1]), np.sin(t - i[1]) + np.cos(t + i[0])])
            c += 1.0 / np.sqrt((p[0] / (np.sin(i[0] + t) / 0.005)) ** 2 + (p[1] / (np.cos(i[1] + t) / 0.005)) ** 2)
        return float(np.clip(np.abs(1.17 - (c / 5.0) ** 1.4) ** 8.0, 0, 1))
    field = cc.caustic_field(1.3, 9.5, 6, 11)
    assert field.shape == (6, 11)
    expect = [[point(y, x, 1.3, 9.5) for x in range(11)] for y in range(6)]
    assert np.allclose(field, expect, rtol=1e-12, atol=0) and field.std() > 0


def test_softening_equals_scipys_filter_of_three_equal_channels() -> None:
    ndimage = pytest.importorskip("scipy.ndimage")
    for shape in [(7, 9), (1, 5), (2, 3)]:
        field = np.random.default_rng(0).random(shape)
        stacked = ndimage.gaussian_filter(np.stack([field] * 3, axis=2), sigma=1)
        for channel in range(3):
            assert np.allclose(cc.soften(field), stacked[..., channel], rtol=0, atol=1e-15)


def test_refraction_bends_a_vertical_ray_by_snells_law_in_the_normals_plane() -> None:
    """A field rising along y only: the normal (a, 0, 1)/|.| with a = east - west luma; the ray
    (0, 0, 1) leaves at arcsin(sin θ / 4) off the normal, θ = arccos(n_z). Flat places do not
    bend it, and the light is (north - south, east - west) of the luma."""
    field = np.repeat(np.array([0.0, 0.0, 0.5, 1.0, 1.0])[:, None], 3, axis=1)     # 5 x 3
    dy, dx, light = cc.refraction(field, 10.0)
    luma = 0.2126 + 0.7152 + 0.0722                              # per unit of field
    a = (1.0 - 0.0) * luma                                       # row 2: east (row 3) - west (row 1)
    n = np.array([a, 0, 1]) / np.sqrt(a * a + 1)
    theta = np.arccos(n[2])
    out = np.arcsin(np.sin(theta) / 4)
    bent = np.cos(out) * n + np.sin(out) * np.cross(n, np.cross([0, 0, 1], n) / np.sin(theta))
    assert dy[2, 1] == round(bent[0] * 10, 3) and dx[2, 1] == 0
    assert dy[0, 1] == 0 and dx[0, 1] == 0                       # flat: east = west, north = south
    assert light[1][2, 1] == pytest.approx(a) and light[0][2, 1] == 0


def test_a_flat_field_leaves_the_picture_as_it_is() -> None:
    frames = np.random.default_rng(2).integers(0, 256, (2, 5, 6, 3), dtype=np.uint8)
    layer = (np.tile((np.arange(1, 6)[:, None] * 8 + np.arange(1, 7)).ravel(), (4, 1)),
             np.array([[1.0] * 30, [0.0] * 30, [0.0] * 30, [0.0] * 30]), np.zeros((2, 30)))
    assert np.array_equal(cc.refract_frames(frames, layer), frames)


def test_caustic_samples_outside_the_frame_read_black() -> None:
    """Every point moved far down: all four corners fall off the frame, so only light is left."""
    frames = np.full((1, 3, 4, 3), 200, np.uint8)
    corners = np.full((4, 12), 0)                                 # the padding's corner: zero
    layer = (corners, np.full((4, 12), 0.25), np.stack([np.full(12, 0.1), np.full(12, 0.3)]))
    assert np.all(cc.refract_frames(frames, layer) == 102)                  # (0.1 + 0.3)·255


def test_caustic_reference_form_names_the_references_arguments() -> None:
    d = pv.draw("caustic_refraction", 5, 1, seed=3)
    kw = reference_params("caustic_refraction", d.drawn, d.params, 0, 224)
    assert sorted(kw) == ["eta", "lens_scale", "lighting_amount", "size", "softening", "time"]
    assert kw["eta"] == 4.0 and kw["softening"] == 1 and kw["lighting_amount"] == 1.83
    assert kw["lens_scale"] == pytest.approx(9.15 * 0.5 * 224 / 10, rel=1e-12)
    assert 0.5 <= kw["time"] < 2 and 0.75 * 224 <= kw["size"] < 1.25 * 224


# ------------------------------------------------------------------------------ every op
@pytest.mark.parametrize("name", OPS)
def test_damage_grows_with_severity_on_the_sample_clip(name: str) -> None:
    """The mean absolute change over four draws (seeds 0..3) grows with every severity."""
    clip = clip8()[:2]
    change = [np.mean([np.abs(pv.apply(clip, name, s, seed=seed).astype(np.int16) - clip).mean()
                       for seed in range(4)]) for s in SEVERITIES]
    assert all(a < b for a, b in zip(change, change[1:])), f"{name}: mean change by severity {change}"


@pytest.mark.parametrize("name", OPS)
def test_one_draw_per_clip_gives_every_frame_the_same_pattern(name: str) -> None:
    out = pv.apply(grey(6, 20, 30), name, 4, seed=2)
    assert all(np.array_equal(out[0], frame) for frame in out[1:])
    assert not np.array_equal(out[0], grey(1, 20, 30)[0])


@pytest.mark.parametrize("name", OPS)
def test_per_frame_draws_a_new_pattern_every_frame(name: str) -> None:
    out = pv.apply(grey(4, 20, 30), name, 4, seed=2, per_frame=True)
    assert all(not np.array_equal(out[i], out[j]) for i in range(4) for j in range(i))
    d = pv.draw(name, 4, 4, seed=2, per_frame=True)
    assert all(len(v) == 4 for v in d.drawn.values())


@pytest.mark.parametrize("per_frame", [False, True])
@pytest.mark.parametrize("name", OPS)
def test_subsets_render_as_in_the_whole_clip_and_seeds_repeat(name: str, per_frame: bool) -> None:
    clip = clip8()
    d = pv.draw(name, 3, 8, seed=5, per_frame=per_frame)
    full = d.render(clip)
    assert np.array_equal(d.render(clip[[1, 6]], [1, 6]), full[[1, 6]])
    assert np.array_equal(pv.apply(clip, name, 3, seed=5, per_frame=per_frame), full)
    assert not np.array_equal(pv.apply(clip, name, 3, seed=6, per_frame=per_frame), full)


@pytest.mark.parametrize("shape", [(2, 1, 1), (2, 1, 7), (2, 3, 5), (2, 4000, 16), (1000, 2, 3)])
@pytest.mark.parametrize("name", OPS)
def test_tiny_odd_and_long_sizes_keep_shape_and_dtype(name: str, shape: tuple[int, int, int]) -> None:
    clip = np.random.default_rng(1).integers(0, 256, (*shape, 3), dtype=np.uint8)
    for per_frame in (False, True):
        out = pv.apply(clip, name, 5, seed=0, per_frame=per_frame)
        assert out.shape == clip.shape and out.dtype == np.uint8


@pytest.mark.usefixtures("torch_kernels_on_cpu")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("per_frame", [False, True])
@pytest.mark.parametrize("name", OPS)
def test_torch_within_one_level_of_numpy(name: str, per_frame: bool, device: str) -> None:
    clip = clip8()
    for severity in (1, 5):
        ref = pv.apply(clip, name, severity, seed=4, per_frame=per_frame)
        ours = pv.apply(torch.from_numpy(clip.copy()).to(device), name, severity, seed=4, per_frame=per_frame)
        assert level_diff(ours.cpu().numpy(), ref) <= 1


@pytest.mark.usefixtures("torch_kernels_on_cpu")
@pytest.mark.parametrize("shape", [(2, 1, 1), (2, 3, 5), (2, 4000, 16)])
@pytest.mark.parametrize("name", OPS)
def test_torch_on_tiny_and_long_frames_within_one_level_of_numpy(name: str, shape: tuple[int, int, int]) -> None:
    clip = np.random.default_rng(2).integers(0, 256, (*shape, 3), dtype=np.uint8)
    for per_frame in (False, True):
        ref = pv.apply(clip, name, 5, seed=1, per_frame=per_frame)
        ours = pv.apply(torch.from_numpy(clip.copy()), name, 5, seed=1, per_frame=per_frame).numpy()
        assert ours.shape == clip.shape and level_diff(ours, ref) <= 1
