"""The public video API, checked for every registered visual perturbation."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

import perturb
from perturb.registry import REGISTRY
from perturb.video import Compose, Perturbation, apply
from perturb.video.sample import sample_clip

SPECS = REGISTRY.select("video")
NAMES = [s.name for s in SPECS]
DETERMINISTIC = [s.name for s in SPECS if not s.random]


@pytest.fixture(scope="module")
def small() -> np.ndarray:
    """12 frames of the sample clip at 48x48: real content, fast."""
    return np.stack([cv2.resize(f, (48, 48), interpolation=cv2.INTER_AREA) for f in sample_clip(12)])


def test_eighteen_visual_perturbations():
    assert len(SPECS) >= 18
    assert set(REGISTRY.categories("video")) >= {"noise", "blur", "digital", "temporal", "camera"}


@pytest.mark.parametrize("name", NAMES)
def test_bad_clips_raise_informative_errors(name, small):
    cases = {
        "dimensions": small[0],                                     # wrong rank
        "1 channels": small[..., :1],
        "4 channels": np.concatenate([small, small[..., :1]], axis=-1),
        "[0, 1]": small.astype(np.float32),                         # float in [0, 255]
        "at least one frame": small[:0],
    }
    for expected, bad in cases.items():
        with pytest.raises(ValueError, match=expected.replace("[", r"\[").replace("]", r"\]")):
            apply(bad, name, 3, seed=0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("severity", [0, 6, "3", 2.0, True])
def test_bad_severity(name, severity, small):
    with pytest.raises(ValueError, match="severity must be an int in 1..5"):
        apply(small, name, severity, seed=0)
    with pytest.raises(ValueError, match="severity"):
        Perturbation(name, severity)


def test_a_text_perturbation_is_named_as_one(small):
    """Issue 27 item 13: a text op given to the video API says where it belongs."""
    with pytest.raises(ValueError, match=r"'Typos' is a text perturbation, not a video one; apply it with "
                       r"perturb\.text\.apply"):
        apply(small, "Typos")


def test_a_channels_first_clip_is_told_the_layout(small):
    """Issue 27 item 13: (T, 3, H, W) numpy is answered with the channels-last layout expected."""
    with pytest.raises(ValueError, match=r"laid out \(T, H, W, 3\) channels-last; got shape \(12, 3, 48, 48\)"
                       r".*clip\.transpose\(0, 2, 3, 1\)") as info:
        apply(np.ascontiguousarray(small.transpose(0, 3, 1, 2)), "contrast")
    assert "grayscale" not in str(info.value)
    with pytest.raises(ValueError, match=r"\(T, 3, H, W\) channels-first.*permute\(0, 3, 1, 2\)"):
        apply(torch.from_numpy(small).float() / 255, "contrast")        # float torch is (T, 3, H, W)


def test_sample_clip_is_writable_and_torch_takes_it_quietly():
    """Issue 27 item 14: the README's torch.from_numpy(sample_clip()) warns about nothing, and
    writing to one copy leaves the next call's clip as it was."""
    import warnings

    clip = sample_clip(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tensor = torch.from_numpy(clip)
        torch.from_numpy(sample_clip())
    tensor[0, 0, 0] = 0
    clip[1] = 255
    assert sample_clip(4)[1].min() < 255 and clip.flags.writeable


def test_unknown_name_suggests():
    with pytest.raises(ValueError, match="did you mean 'motion_blur'"):
        apply(np.zeros((1, 8, 8, 3), np.uint8), "motion_blurr")
    with pytest.raises(ValueError, match="is a text perturbation, not a video one"):
        perturb.video.get("Typos")                  # a text perturbation is not a video one


@pytest.mark.parametrize("spec", SPECS, ids=NAMES)
def test_aliases_resolve(spec):
    for key in (spec.name, *spec.aliases, spec.name.upper(), spec.name.replace("_", " ")):
        assert perturb.video.get(key) is spec


@pytest.mark.parametrize("name", NAMES)
def test_perturbation_and_compose_reproducible(name, small):
    p = Perturbation(name, 2, seed=5)
    assert p.name == name and np.array_equal(p(small), p(small))
    assert np.array_equal(p(small), apply(small, name, 2, seed=5))
    chain = Compose([p, ("jpeg", 1), "sampling"], seed=9)
    assert np.array_equal(chain(small), chain(small))
    assert np.array_equal(chain(small), Compose([(name, 2), ("jpeg", 1), "sampling"], seed=9)(small))


def test_compose_seed_matters_for_random_steps(small):
    chain = Compose([("gaussian_noise", 2), ("jumble", 2)])
    assert not np.array_equal(chain(small, seed=1), chain(small, seed=2))


@pytest.mark.parametrize("name", NAMES)
def test_torch_in_torch_out(name, small):
    t_uint8 = torch.from_numpy(small.copy())
    out = apply(t_uint8, name, 3, seed=4)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.uint8
    assert out.shape == t_uint8.shape and out.device == t_uint8.device

    t_float = torch.from_numpy(small.copy()).permute(0, 3, 1, 2).float() / 255
    outf = apply(t_float, name, 3, seed=4)
    assert isinstance(outf, torch.Tensor) and outf.dtype == torch.float32
    assert outf.shape == t_float.shape and outf.device == t_float.device
    assert float(outf.min()) >= 0 and float(outf.max()) <= 1
    assert torch.equal(t_uint8, torch.from_numpy(small)), "input modified"


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_torch_matches_numpy_for_deterministic_ops(name, small):
    ref = apply(small, name, 3).astype(int)
    got = apply(torch.from_numpy(small.copy()), name, 3).numpy().astype(int)
    assert np.abs(got - ref).max() <= 1
    gotf = apply(torch.from_numpy(small.copy()).permute(0, 3, 1, 2).float() / 255, name, 3)
    gotf = (gotf.permute(0, 2, 3, 1) * 255).round().numpy().astype(int)
    assert np.abs(gotf - ref).max() <= 1


@pytest.mark.parametrize("name", NAMES)
def test_float_numpy_clips_are_refused(name, small):
    for dtype in (np.float32, np.float64):
        with pytest.raises(ValueError, match=r"numpy clips must be uint8 levels"):
            apply(small.astype(dtype) / 255, name, 2, seed=0)


@pytest.mark.parametrize("name", NAMES)
def test_single_frame_and_tiny_frames(name, small):
    for clip in (small[:1], small[:, 20:28, 20:28], small[:1, 20:28, 20:28]):
        for severity in (1, 5):
            out = apply(clip, name, severity, seed=0)
            assert out.shape == clip.shape and out.dtype == np.uint8


PIXEL_RANGE = re.compile(r"\b(h|w|H|W|height|width|rows|cols)\b|shape\[-?[123]\]")


def _pixel_loops(source: str) -> list[str]:
    """Python loops over rows or columns: ``for ... in range(h)`` / ``range(x.shape[1])`` and kin."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.For, ast.comprehension)):
            it = ast.unparse(node.iter)
            if it.startswith(("range(", "np.arange(", "np.ndindex(")) and PIXEL_RANGE.search(it):
                found.append(it)
    return found


def test_pixel_loop_detector_works():
    assert _pixel_loops("for y in range(h):\n    pass") == ["range(h)"]
    assert _pixel_loops("v = [f(r) for r in range(img.shape[1])]") == ["range(img.shape[1])"]
    assert _pixel_loops("for t in range(len(clip)):\n    pass") == []


def test_no_python_loops_over_pixels_in_video_kernels():
    root = Path(perturb.video.__file__).parent
    for path in sorted(root.rglob("*.py")):
        assert _pixel_loops(path.read_text()) == [], path.name
