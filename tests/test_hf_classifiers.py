"""hf image and video classifiers (#classify) on tiny random checkpoints of the real classes,
loaded through ``hf:PATH``: labels, logits, the frames each reads and what the card records."""
from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import hf_classifiers  # noqa: E402
from hf_classifiers import FRAMES, SPECS, VIDEO, labels_of  # noqa: E402
from perturb.bench.adapters.hf import load_hf  # noqa: E402
from perturb.bench.adapters.hf.checkpoint import HfSpec, check_available  # noqa: E402
from perturb.bench.adapters.hf.families import BY_NAME, pick_family  # noqa: E402
from perturb.bench.adapters.hf.runtime import Runtime, pixels_from  # noqa: E402
from perturb.bench.adapters.model_options import ModelOptions  # noqa: E402
from perturb.bench.adapters.protocol import ModelSpecError  # noqa: E402

IMAGE = tuple(f for f in SPECS if f not in VIDEO)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf-classifiers")
    made: dict[str, object] = {}

    def get(family: str):
        if family not in made:
            made[family] = hf_classifiers.build(family, root / family)
        return made[family]
    return get


def _load(ckpt, family: str, **kw):
    return load_hf(str(ckpt(family)), ModelOptions(**{"device": "cpu", "batch_size": 2, **kw}))


def _clips(n: int, frames: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (frames, 40, 52, 3), dtype=np.uint8) for _ in range(n)]


@pytest.mark.parametrize("family", sorted(SPECS))
def test_logits_are_the_models_on_its_processors_pixels(ckpt, family):
    """(N, C) float32 logits over id2label's classes, in index order, equal to the model's forward
    on the pixels ``preprocess`` gives (batched in twos: batching does not change them)."""
    a = _load(ckpt, family)
    assert a.labels == list(labels_of(family)) and a.mode == "classify"
    clips = _clips(3, 40)
    got = a.classify(clips)
    assert got.shape == (3, 5) and got.dtype == np.float32 and np.isfinite(got).all()
    with torch.inference_mode():
        want = torch.cat([a.model(**a.preprocess(c)).logits for c in clips]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert np.abs(got[0] - got[1]).max() > 1e-4           # different clips, different logits


@pytest.mark.parametrize("family", IMAGE)
def test_an_image_classifier_reads_one_frame_the_middle_of_a_video(ckpt, family):
    a = _load(ckpt, family)
    assert a.frames == 1 and a.frame_spec.indices(7).tolist() == [3] and a.frame_spec.indices(8).tolist() == [4]
    video = _clips(1, 7, seed=1)[0]
    image = video[3:4]                                      # an image is a clip of one frame
    np.testing.assert_array_equal(a.classify([video]), a.classify([image]))
    assert tuple(a.preprocess(image)["pixel_values"].shape[:2]) == (1, 3)
    card = a.card()
    assert (card["family"], card["frames"], card["sampling"], card["classes"]) == (family, 1, "middle", 5)
    assert a.id.endswith("@local#classify@1f")


@pytest.mark.parametrize("family", VIDEO)
def test_a_video_classifier_reads_its_configs_frame_count_spread_over_the_clip(ckpt, family):
    a = _load(ckpt, family)
    n = FRAMES[family]
    assert a.frames == n and a.id.endswith(f"#classify@{n}f")
    assert a.frame_spec.indices(64).tolist() == np.linspace(0, 63, n).round().astype(int).tolist()
    card = a.card()
    assert (card["class"], card["frames"], card["sampling"], card["resolution"]) == \
        (BY_NAME[family].cls, n, "linspace", "28x28")
    assert card["dtype"] == "float32" and card["device"] == "cpu" and card["revision"] == "local"
    assert tuple(a.preprocess(_clips(1, 64)[0])["pixel_values"].shape) == (1, n, 3, 28, 28)
    long = _clips(1, 64, seed=2)[0]
    picked = long[a.frame_spec.indices(64)]                 # the runner's pick is used as it is
    np.testing.assert_array_equal(a.classify([long]), a.classify([picked]))


@pytest.mark.parametrize("family", ["vit", "videomae"])
def test_bf16_autocast_and_bfloat16_weights(ckpt, family):
    clips = _clips(4, 40)
    ref = _load(ckpt, family, precision="fp32").classify(clips)
    for kw, dtype, autocast in (({"precision": "bf16"}, "float32", "bfloat16"),
                                ({"dtype": "bfloat16", "precision": "fp32"}, "bfloat16", "none")):
        a = _load(ckpt, family, **kw)
        got = a.classify(clips)
        assert got.dtype == np.float32 and (a.card()["dtype"], a.card()["autocast"]) == (dtype, autocast)
        cos = (got * ref).sum() / (np.linalg.norm(got) * np.linalg.norm(ref))
        assert cos > 0.999 and not np.array_equal(got, ref)


def test_frame_counts_other_than_the_models_are_refused(ckpt):
    with pytest.raises(ModelSpecError, match=r"^ViTForImageClassification checkpoint takes exactly 1 frame "
                                             r"\(an image classifier\); got --frames 8$"):
        _load(ckpt, "vit", frames=8)
    with pytest.raises(ModelSpecError, match=r"^VideoMAEForVideoClassification checkpoint takes exactly 16 frames "
                                             r"\(num_frames in config.json\); got --frames 8$"):
        _load(ckpt, "videomae", frames=8)
    assert _load(ckpt, "vit", frames=1).frames == 1
    with pytest.raises(ModelSpecError, match="reads the same number of frames from every clip"):
        _load(ckpt, "timesformer", frame_sampling="fps:2")


def test_the_family_comes_from_the_config_and_a_backbone_is_refused(ckpt, tmp_path):
    teacher = {"architectures": ["DeiTForImageClassificationWithTeacher"], "model_type": "deit"}
    assert pick_family(teacher).name == "deit"
    assert pick_family({"model_type": "vivit"}).name == "vivit"
    assert type(_load(ckpt, "deit").model).__name__ == "DeiTForImageClassificationWithTeacher"
    path = tmp_path / "backbone"
    path.mkdir()
    config = json.loads((ckpt("vit") / "config.json").read_text())
    (path / "config.json").write_text(json.dumps(dict(config, architectures=["ViTModel"])))
    with pytest.raises(ModelSpecError, match=r"backbone/config.json: architectures=\['ViTModel'\] has no "
                                             r"classification head; expected a \*ForImageClassification or "
                                             r"\*ForVideoClassification checkpoint$"):
        load_hf(str(path), ModelOptions(device="cpu"))


def test_a_classifier_folder_needs_no_tokenizer(ckpt, tmp_path):
    check_available(HfSpec(str(ckpt("resnet"))))              # no tokenizer files, and none needed
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["CLIPModel"], "model_type": "clip"}))
    with pytest.raises(ModelSpecError, match="the folder has no tokenizer files"):
        check_available(HfSpec(str(tmp_path)))


def test_the_processors_geometry_deit_convnext_and_vivit():
    """DeiT resizes to 256x256 then crops 224; ConvNeXt (and ResNet) resize the short side to
    int(224 / crop_pct) = 256 then crop 224, and plainly to 384x384 at 384; ViViT rescales by
    1/127.5 and offsets by -1 before normalising."""
    deit = pixels_from({"size": 256, "crop_size": 224, "do_center_crop": True}, dict(BY_NAME["deit"].defaults))
    assert (deit.resize_size(240, 320), deit.height, deit.width, deit.crop) == ((256, 256), 224, 224, True)
    convnext = dict(BY_NAME["convnext"].defaults)
    p = pixels_from({"size": 224, "crop_pct": 0.875}, convnext)
    assert (p.resize_size(240, 320), p.height, p.crop) == ((256, 341), 224, True)
    big = pixels_from({"size": 384}, convnext)
    assert (big.resize_size(240, 320), big.crop) == ((384, 384), False)
    vivit = pixels_from(None, dict(BY_NAME["vivit"].defaults))
    frames = np.stack([np.full((256, 256, 3), v, np.uint8) for v in (0, 255)])
    out = vivit(frames, Runtime(device="cpu"))
    assert out[0].unique().tolist() == [-3.0] and out[1].unique().tolist() == [1.0]
