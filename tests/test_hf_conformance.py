"""Every hf family's ``preprocess`` equals its official transformers processor on the same frames.

Tiny models of the real classes, preprocessor configs copying the real checkpoints' fields
(tests/conformance_cases.py, which also says where a PIL image processor stands in for a video
processor that needs torchvision). Pixels are compared after un-normalising, in 0..255 levels.
CUDA variants skip without a GPU; pixel differences of half-precision resizing on CUDA are
measured only where one is present.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from conformance_cases import CASES, FRAMES, LENGTHS, SIZES, build, levels, official, ours, scores, \
    use_official_pixels, video  # noqa: E402
from perturb.bench.adapters.hf import load_hf  # noqa: E402
from perturb.bench.adapters.model_options import ModelOptions  # noqa: E402

TEXTS = ["a man is riding a horse", "a dog runs on grass", "a woman cooks food", "a car drives at night",
         "children play football", "a cat sleeps on a sofa", "people dance on a stage", "a boat on a lake"]
PRECISIONS = ["fp32", "bf16"]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                   reason="no CUDA device: CUDA pixel "
                                                                          "differences stay unmeasured"))]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("conformance")
    made: dict[str, object] = {}

    def get(family: str):
        if family not in made:
            made[family] = build(CASES[family], root)
        return made[family]
    return get


def _adapter(checkpoints, family: str, precision: str = "fp32", device: str = "cpu"):
    case = CASES[family]
    return load_hf(f"{checkpoints(family)}{'#' + case.mode if case.mode else ''}",
                   ModelOptions(device=device, precision=precision, frames=case.frames, batch_size=8))


def _compare(case, adapter, clip):
    idx = adapter.frame_spec.indices(len(clip))
    want, got = official(case, clip[idx]), ours(case, adapter, clip)
    return want, got, np.abs(levels(case, got["frames"].float().cpu()) - levels(case, want["frames"].float()))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("family", sorted(CASES))
def test_preprocess_equals_the_official_processor(checkpoints, family, length, size):
    case, (w, h) = CASES[family], size
    a = _adapter(checkpoints, family)
    clip = video(w, h, length, a.frame_spec.indices(length), seed=length + w)
    want, got, diff = _compare(case, a, clip)
    assert got["frames"].shape == want["frames"].shape
    for key in ("pixel_values", "pixel_attention_mask", "spatial_shapes"):
        if key in want and key in got:
            assert tuple(got[key].shape) == tuple(want[key].shape), key
    for key in ("pixel_attention_mask", "spatial_shapes"):
        if key in want:
            assert torch.equal(got[key].cpu().long(), want[key].long()), key
    if "grid" in want:
        assert got["grid"] == want["grid"] and got["tokens"] == want["tokens"]
    assert (diff <= 1.0 + 1e-4).mean() >= 0.999, f"{(diff > 1 + 1e-4).mean():.5f} of entries beyond 1/255"
    assert diff.max() <= 3.0 + 1e-4


def test_the_issue_cases_come_out_as_the_processors_make_them(checkpoints):
    """CLIP at 320x240 resizes to 298x224 (transformers truncates), then crops; SigLIP 2 keeps the
    aspect (14x18 patches at 320x240, 12x21 at 640x360); Qwen2-VL smart-resizes 320x240 to 252x308."""
    clip = _adapter(checkpoints, "clip")
    assert clip.pixels.resize_size(240, 320) == (224, 298)
    s2 = _adapter(checkpoints, "siglip2")
    assert s2.pixels.resize_size(240, 320) == (224, 288) and s2.pixels.resize_size(360, 640) == (192, 336)
    q = _adapter(checkpoints, "qwen2_vl")
    assert q.pixels.resize_size(240, 320) == (252, 308)
    assert q.clip_tokens({"video_grid_thw": torch.tensor([[4, 18, 22]])}, 1) == [396]
    assert q.pixels.resize_size(360, 640) == (364, 644)


@pytest.mark.parametrize("length", [9, 1, 2])
@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl"])
def test_qwen_under_fps_pads_an_odd_frame_count_as_the_processor(checkpoints, family, length):
    """Issue 27 item 11: under fps:N a clip of any frame count is preprocessed; a count that is
    not a multiple of temporal_patch_size gets copies of its last frame, as Qwen2VLVideoProcessor
    pads (the reference: the PIL processor on the frames so padded)."""
    case = CASES[family]
    a = load_hf(str(checkpoints(family)), ModelOptions(device="cpu", frame_sampling="fps:2", batch_size=8))
    clip = video(64, 48, length, np.arange(length), seed=length)
    padded = np.concatenate([clip, np.repeat(clip[-1:], -length % a.tp, axis=0)])
    want, got = official(case, padded), ours(case, a, clip)
    assert got["grid"] == want["grid"] and got["grid"][0] == (length + 1) // 2
    assert got["tokens"] == want["tokens"]
    diff = np.abs(levels(case, got["frames"].float()) - levels(case, want["frames"].float()))
    assert (diff <= 1.0 + 1e-4).mean() >= 0.999 and diff.max() <= 3.0 + 1e-4
    assert np.array_equal(got["frames"][-1].numpy(), got["frames"][length - 1].numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("family", sorted(CASES))
def test_outputs_and_ranking_match_the_official_pixels(checkpoints, family, precision, device):
    case = CASES[family]
    ours_a = _adapter(checkpoints, family, precision, device)
    ref_a = use_official_pixels(case, _adapter(checkpoints, family, precision, device))
    n = 8
    clips = [video(320, 240, 150, ours_a.frame_spec.indices(150), seed=i) for i in range(n)]
    mine, ref = scores(ours_a, clips, TEXTS[:n]), scores(ref_a, clips, TEXTS[:n])
    cos = float((mine * ref).sum() / (np.linalg.norm(mine) * np.linalg.norm(ref)))
    assert cos >= 0.9999, cos
    if ours_a.mode == "embed":                       # dual encoders: every video embedding on its own
        e, f = ours_a.encode_videos(clips), ref_a.encode_videos(clips)
        assert (e * f).sum(axis=1).min() >= 0.9999        # unit rows: the dot product is the cosine
    assert_same_ranking(mine, ref, gap=0.01 if precision == "fp32" else 0.05)   # bf16 scores step by ~1/128


def assert_same_ranking(mine: np.ndarray, ref: np.ndarray, gap: float = 0.01) -> None:
    """Each caption ranks the videos alike: every pair the reference separates by more than ``gap``
    of its score range is ordered the same way (tiny random models leave near-ties that pixel
    rounding may swap; those carry no ranking)."""
    tol = gap * float(ref.max() - ref.min())
    for col in range(ref.shape[1]):
        r, m = ref[:, col], mine[:, col]
        apart = np.abs(r[:, None] - r[None, :]) > tol
        assert np.array_equal(np.sign(m[:, None] - m[None, :])[apart], np.sign(r[:, None] - r[None, :])[apart]), col
