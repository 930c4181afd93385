"""Frame sampling rules of :class:`FrameSpec` (exact indices, fps counts, cache key, bad input) and
the processor-class defaults :func:`pixels_from` fills in."""
from __future__ import annotations

import numpy as np
import pytest

from perturb.bench.adapters.frames import FrameSpec, check_sampling, fps_count, frame_indices


def test_each_rule_gives_the_pipelines_indices_on_150_frames():
    assert frame_indices(150, 8, "centre").tolist() == [9, 28, 46, 65, 84, 103, 121, 140]
    assert frame_indices(150, 8, "start").tolist() == [0, 18, 37, 56, 75, 93, 112, 131]
    assert frame_indices(150, 8, "linspace").tolist() == [0, 21, 43, 64, 85, 106, 128, 149]
    assert frame_indices(7, 8, "start").tolist() == [0, 0, 1, 2, 3, 4, 5, 6]      # short clips repeat
    assert FrameSpec(8, sampling="linspace").indices(150).tolist() == frame_indices(150, 8, "linspace").tolist()


def test_fps_sampling_follows_the_clip_length_and_rounds_to_the_temporal_patch():
    spec = FrameSpec(None, sampling="fps:2", multiple=2)
    assert spec.count(300, fps=30.0) == 20 and spec.count(150, fps=30.0) == 10
    assert fps_count(45, 30.0, 2.0, multiple=2) == 2                   # 3 frames -> rounded down to 2
    assert fps_count(10, 30.0, 2.0, multiple=2) == 2                   # never below one group
    assert spec.indices(300, fps=30.0).tolist() == list(range(0, 300, 15))
    with pytest.raises(ValueError, match="needs the clip's frame rate"):
        spec.indices(300)


def test_the_rule_is_part_of_the_key_and_bad_rules_are_refused():
    keys = {FrameSpec(8, sampling=s).key for s in ("centre", "start", "linspace")}
    assert len(keys) == 3
    for bad in ("middle", "fps:0", "fps:x", "fps:-1", ""):
        with pytest.raises(ValueError, match="centre, start, linspace or fps:N"):
            check_sampling(bad)
    with pytest.raises(ValueError, match="multiple"):
        FrameSpec(8, multiple=0)
    assert np.array_equal(FrameSpec(None).indices(5), np.arange(5))


def test_missing_preprocessor_keys_take_the_processor_class_defaults():
    pytest.importorskip("torch")
    from perturb.bench.adapters.hf.families import BY_NAME, CLIP_MEAN
    from perturb.bench.adapters.hf.runtime import pixels_from
    from perturb.bench.adapters.protocol import ModelSpecError

    ov = pixels_from({"size": {"height": 384, "width": 384}}, BY_NAME["llava_onevision"].defaults)
    assert ov.mean == CLIP_MEAN and (ov.height, ov.width, ov.crop, ov.resample) == (384, 384, False, "bicubic")
    x = pixels_from({"size": {"shortest_edge": 224}, "crop_size": {"height": 224, "width": 224}},
                    BY_NAME["xclip"].defaults)
    assert x.resample == "bilinear" and x.crop and x.resize_size(240, 320) == (224, 298)
    assert pixels_from({"do_normalize": False, "do_rescale": False}, BY_NAME["siglip"].defaults).rescale is None
    with pytest.raises(ModelSpecError, match="resample=1"):
        pixels_from({"resample": 1}, BY_NAME["clip"].defaults)
