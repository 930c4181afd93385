"""Draw once, render any frames: subsets equal the full output, on numpy, torch-CPU and CUDA."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import perturb.video as pv
from perturb.registry import REGISTRY
from perturb.video.kernels.jpeg_mpeg import reencode
from perturb.video.render import CLIP, FRAME, INDEX, PREFIX, WINDOW, renderer_of
from perturb.video.sample import sample_clip

# CPU tensors render with the torch kernels here, as on a GPU (the code these tests check).
pytestmark = pytest.mark.usefixtures("torch_kernels_on_cpu")

SPECS = REGISTRY.select("video")
NAMES = [s.name for s in SPECS]
SEVERITIES = [1, 2, 3, 4, 5]
T = 26                                       # three GOPs of the codecs, the last one short
INTERPOLATING = {"defocus_blur", "motion_blur", "zoom_blur", "static_rotate", "rotate",
                 "gaussian_blur", "glass_blur", "elastic_transform",
                 "fog", "frost", "snow", "spatter"}       # weather: float composites may round apart on GPUs
DEVICES = [pytest.param("cpu")] + [pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: the CUDA comparison is not run here"))]


def texture(t: int, h: int, w: int, seed: int) -> np.ndarray:
    """A random texture: every value uniform in 0..255, the content where interpolation differs most."""
    return np.random.default_rng(seed).integers(0, 256, (t, h, w, 3), dtype=np.uint8)


@pytest.fixture(scope="module", params=["sample", "texture"])
def clip(request: pytest.FixtureRequest) -> np.ndarray:
    """26 frames, 36 x 44, read-only: real content, or a random texture."""
    c = (np.ascontiguousarray(sample_clip(T)[:, 60:96, 80:124]) if request.param == "sample"
         else texture(T, 36, 44, seed=3))
    c.setflags(write=False)
    return c


def subsets(severity: int) -> list[list[int]]:
    """Subsets of output frames: spread, random (unsorted, repeating), reversed, single frames."""
    picks = np.random.default_rng(severity).integers(0, T, 7).tolist()      # unsorted, may repeat
    return [[0, 5, T - 1], picks, [T - 1, 3, 3], [0], [picks[0]], [T - 1]]


def level_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.astype(np.int16) - b.astype(np.int16))


@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", NAMES)
def test_rendered_subset_equals_the_full_output(name: str, severity: int, clip: np.ndarray) -> None:
    full = pv.apply(clip, name, severity, seed=17)
    draw = pv.draw(name, severity, T, seed=17)
    assert np.array_equal(draw.render(clip[draw.source_indices(None)]), full)
    assert np.array_equal(draw.render_clip(clip), full)
    for frames in subsets(severity):
        need = draw.source_indices(frames)
        assert np.array_equal(need, np.unique(need)) and need.dtype.kind == "i"
        out = draw.render(clip[need], frames)
        assert out.shape == (len(frames), *clip.shape[1:]) and out.dtype == np.uint8
        assert np.array_equal(out, full[frames]), frames
        assert np.array_equal(draw.render_clip(clip, np.array(frames)), full[frames])


@pytest.mark.parametrize("severity", [1, 3, 5])
@pytest.mark.parametrize("name", NAMES)
def test_torch_subset_equals_torch_full_output(name: str, severity: int, clip: np.ndarray) -> None:
    draw = pv.draw(name, severity, T, seed=5)
    full = draw.render_clip(torch.from_numpy(clip.copy()))
    for frames in subsets(severity):
        out = draw.render(torch.from_numpy(clip[draw.source_indices(frames)]), frames)
        assert torch.equal(out, full[frames])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", NAMES)
def test_same_pixels_on_every_backend(name: str, severity: int, device: str, clip: np.ndarray) -> None:
    """Identical draws; interpolating renders within 1 level on at most 1% of values, the rest exact."""
    draw = pv.draw(name, severity, T, seed=9)
    ref = draw.render_clip(clip)
    x = torch.from_numpy(clip.copy()).to(device)
    got = draw.render_clip(x).cpu().numpy()
    diff = level_diff(got, ref)
    if name in INTERPOLATING:
        assert diff.max() <= 1 and (diff > 0).mean() <= 0.01, (diff.max(), (diff > 0).mean())
    else:
        assert diff.max() == 0
    frames = subsets(severity)[1]
    sub = draw.render(x[torch.as_tensor(draw.source_indices(frames), device=device)], frames)
    assert sub.device == x.device
    assert level_diff(sub.cpu().numpy(), ref[frames]).max() <= (1 if name in INTERPOLATING else 0)


@pytest.mark.parametrize("name", NAMES)
def test_float_tchw_renders_float_tchw(name: str, clip: np.ndarray) -> None:
    draw = pv.draw(name, 3, T, seed=2)
    x = torch.from_numpy(clip.copy()).permute(0, 3, 1, 2).double() / 255
    frames = [4, 1]
    out = draw.render(x[torch.as_tensor(draw.source_indices(frames))], frames)
    assert out.dtype == torch.float64 and out.shape == (2, 3, *clip.shape[1:3])
    want = draw.render_clip(clip)[frames]
    tol = 1 if name in INTERPOLATING else 0
    assert np.abs(out.permute(0, 2, 3, 1).numpy() * 255 - want).max() <= tol + 1e-6


@pytest.mark.parametrize("name", NAMES)
def test_draws_are_deterministic_picklable_and_small(name: str, clip: np.ndarray) -> None:
    a, b = pv.draw(name, 4, T, seed=3), pv.draw(name, 4, T, seed=np.random.default_rng(3))
    assert a.drawn.keys() == b.drawn.keys()
    assert all(np.array_equal(a.drawn[k], b.drawn[k]) for k in a.drawn)
    c = pickle.loads(pickle.dumps(a))
    assert (c.name, c.severity, c.n_frames, c.params) == (name, 4, T, a.params)
    assert len(pickle.dumps(a)) < 2000
    assert np.array_equal(c.render_clip(clip, None), pv.apply(clip, name, 4, seed=3))
    spec = REGISTRY.get(name)
    if spec.random:                  # severity 2: freeze keeps 20% of 26 frames, a random choice
        one, other = pv.draw(name, 2, T, seed=3), pv.draw(name, 2, T, seed=4)
        assert any(not np.array_equal(one.drawn[k], other.drawn[k]) for k in one.drawn)


def test_source_indices_say_what_each_kind_of_op_reads() -> None:
    reads = {name: renderer_of(REGISTRY.get(name)).reads for name in NAMES}
    assert {n for n, r in reads.items() if r == INDEX} == {
        "jumble", "box_jumble", "sampling", "reverse_sampling", "freeze", "frame_rate"}
    assert {n for n, r in reads.items() if r == WINDOW} == {"temporal_blur"}
    assert {n for n, r in reads.items() if r == PREFIX} == {"mpeg1", "mpeg2", "h264_crf", "h265_crf"}
    assert {n for n, r in reads.items() if r == CLIP} == {"h264_abr", "h265_abr", "bit_error", "packet_loss"}
    assert pv.draw("bit_error", 3, T, seed=0).source_indices([2]).tolist() == list(range(T))
    assert reads["jpeg"] == reads["rotate"] == reads["gaussian_noise"] == FRAME
    assert pv.draw("jumble", 3, T).native_libraries == ("numpy", "torch")
    assert pv.draw("rotate", 3, T).native_libraries == ("numpy", "torch")
    assert pv.draw("mpeg2", 3, T).native_libraries == ("numpy",)
    assert pv.draw("rotate", 3, T, seed=0).source_indices([9, 2, 9]).tolist() == [2, 9]
    assert pv.draw("mpeg1", 3, T, seed=0).source_indices([9, 2]).tolist() == list(range(10))
    assert pv.draw("temporal_blur", 3, T).source_indices([9, 0]).tolist() == [0, 1, 2, 6, 7, 8, 9, 10, 11]
    assert pv.draw("temporal_blur", 3, T).native_libraries == ("numpy", "torch")
    sampling = pv.draw("sampling", 2, T, seed=0)                    # idx[t] = (t // 4) * 4
    assert sampling.source_indices([5, 6, 13]).tolist() == [4, 12]
    assert sampling.source_indices(None).tolist() == list(range(0, T, 4))
    jumble = pv.draw("jumble", 3, T, seed=1)
    assert jumble.source_indices([0, 1]).tolist() == sorted(set(jumble.drawn["index"][[0, 1]].tolist()))


def test_temporal_render_is_a_gather_of_the_drawn_index(clip: np.ndarray) -> None:
    draw = pv.draw("box_jumble", 2, T, seed=8)
    frames = [3, 0, 21]
    out = draw.render(clip[draw.source_indices(frames)], frames)
    assert np.array_equal(out, clip[draw.drawn["index"][frames]])


@pytest.mark.parametrize("codec", ["mpeg2video", "mpeg4"])
def test_codec_prefix_is_exact_but_a_gop_alone_is_not(codec: str) -> None:
    """Why the codecs render from frame 0: their encoders carry state across GOP borders, so a
    GOP encoded alone differs from the same GOP inside the clip, while frames 0..t encoded
    alone give exactly the clip's first t + 1 frames (no B-frames: no look-ahead)."""
    clip = np.ascontiguousarray(sample_clip(36)[:, ::2, ::2])
    whole = reencode(clip, codec, 12)
    for n in (1, 13, 30):
        assert np.array_equal(reencode(clip[:n], codec, 12), whole[:n])
    assert not np.array_equal(reencode(clip[12:24], codec, 12), whole[12:24])


def test_apply_equals_draw_then_render_on_torch(clip: np.ndarray) -> None:
    x = torch.from_numpy(clip.copy())
    for name in ("rotate", "jumble", "gaussian_noise", "mpeg2"):
        draw = pv.draw(name, 3, T, seed=6)
        need = torch.as_tensor(draw.source_indices())
        assert torch.equal(pv.apply(x, name, 3, seed=6), draw.render(x[need]))


def test_bad_frames_and_sources_are_refused(clip: np.ndarray) -> None:
    draw = pv.draw("rotate", 3, T, seed=0)
    for bad, match in [([T], r"0\.\.25"), ([-1], r"0\.\.25"), ([], "non-empty"), ([1.0], "ints"),
                       ([[1]], "1-D"), (np.array([True]), "ints")]:
        with pytest.raises(ValueError, match=match):
            draw.source_indices(bad)
    with pytest.raises(ValueError, match="expected src to hold the 2 input frames"):
        draw.render(clip[:3], [0, 1])
    with pytest.raises(ValueError, match="whole 26-frame clip"):
        draw.render_clip(clip[:5])
    with pytest.raises(ValueError, match="numpy clips must be uint8"):
        draw.render(clip[:2].astype(np.float32) / 255, [0, 1])
    for n in (0, -3, 2.0, True, None):
        with pytest.raises(ValueError, match="n_frames"):
            pv.draw("rotate", 3, n)
    with pytest.raises(ValueError, match="severity"):
        pv.draw("rotate", 6, T)
    assert pv.draw("rotate", 3, np.int64(T), seed=0).n_frames == T


def test_seed_is_keyword_only(clip: np.ndarray) -> None:
    with pytest.raises(TypeError):
        pv.apply(clip, "rotate", 3, 0)
    with pytest.raises(TypeError):
        pv.Perturbation("rotate", 3, 0)
    with pytest.raises(TypeError):
        pv.Compose(["rotate"], 0)
    with pytest.raises(TypeError):
        pv.draw("rotate", 3, T, 0)
    p = pv.Perturbation("rotate", 2, seed=1)
    assert np.array_equal(p(clip), pv.apply(clip, "rotate", 2, seed=1))
    assert np.array_equal(p.draw(T).render_clip(clip), p(clip))


def test_empty_compose_returns_a_copy(clip: np.ndarray) -> None:
    out = pv.Compose([])(clip)
    assert out is not clip and not np.shares_memory(out, clip) and np.array_equal(out, clip)
    x = torch.from_numpy(clip.copy())
    t = pv.Compose([], seed=1)(x)
    assert t is not x and t.data_ptr() != x.data_ptr() and torch.equal(t, x)
    with pytest.raises(ValueError, match="numpy clips must be uint8"):
        pv.Compose([])(clip.astype(np.float64))


def test_float_clip_just_above_one_prints_its_real_extremes() -> None:
    above = float(np.nextafter(np.float32(1), np.float32(2)))          # 1 + 1 ulp in float32
    x = torch.full((1, 3, 4, 4), 0.5)
    x[0, 0, 0, 0] = above
    with pytest.raises(ValueError) as err:
        pv.apply(x, "jpeg", 3)
    assert f"[0.5, {above!r}]" in str(err.value) and "1.0000001" in str(err.value)
