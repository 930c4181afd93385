"""``per_frame`` is one option of the registry's Spec: the video API, the builder and the runner read it
alike (same pixels), and the library refuses it in its own words (the commands in theirs)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import datasets as ds  # noqa: E402

from perturb import video  # noqa: E402
from perturb.bench.adapters.frames import FrameSpec  # noqa: E402
from perturb.bench.pipeline.sources import OnTheFly  # noqa: E402
from perturb.dataset import BuildOptions, build, encode, read_dataset  # noqa: E402
from perturb.errors import PerFrameError  # noqa: E402
from perturb.registry import REGISTRY, per_frame_selection  # noqa: E402
from perturb.rng import item_seed  # noqa: E402

TAKERS = ("blue_noise_sample, brownish_noise, caustic_refraction, checkerboard_cutout, cocentric_sine_waves, fog, "
          "frost, inverse_sparkles, perlin_noise, plasma_noise, rain, single_frequency_greyscale, snow, sparkles, "
          "spatter")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return ds.generic_dataset(tmp_path_factory.mktemp("data"), n=1, frames=8)


@pytest.mark.parametrize("name", ["snow", "rain"])
def test_api_builder_and_runner_give_the_same_pixels_for_a_per_frame_spec(dataset, tmp_path, name):
    item = read_dataset(dataset)[0]
    spec = REGISTRY.get(name, "video").with_per_frame()
    assert spec.per_frame and spec.params(2)["per_frame"] is True
    clean = video.io.read(item.video_path)[0]
    seed = item_seed(0, item.item_id, name, 2)
    by_api = video.apply(clean, spec, 2, seed=seed)
    assert np.array_equal(by_api, video.apply(clean, name, 2, seed=seed, per_frame=True))
    assert not np.array_equal(by_api, video.apply(clean, name, 2, seed=seed))      # the option acts

    quiet = dict(severities=2, text_perturbations="none")
    for out, selection, options in ((tmp_path / "spec", [spec], BuildOptions(jobs=1, progress=False, format="npy")),
                                    (tmp_path / "option", name, BuildOptions(jobs=1, progress=False, format="npy",
                                                                             per_frame=True))):
        assert build(dataset, out, video_perturbations=selection, options=options, **quiet).ok
        assert np.array_equal(encode.load(out / f"videos/{name}/2/{item.item_id}.npy"), by_api), out.name

    runner = OnTheFly(seed=0, per_frame=True)
    assert np.array_equal(runner.clip(item, name, 2), by_api)
    frames = FrameSpec(3)                         # only the frames a model reads, from a partial decode
    kept = runner.clean(item, [(name, 2)], frames)
    wanted = frames.indices(len(clean), None)
    assert np.array_equal(runner.frames(item, kept, name, 2, frames), by_api[wanted])


def test_the_library_refuses_per_frame_in_its_own_words(dataset, tmp_path):
    clip = np.zeros((2, 8, 8, 3), np.uint8)
    with pytest.raises(PerFrameError, match=f"^jpeg has no per_frame option; ops that take it: {TAKERS}$"):
        video.apply(clip, "jpeg", 3, per_frame=True)
    with pytest.raises(PerFrameError, match=f"^none of gaussian_noise, jpeg has a per_frame option; "
                                            f"ops that take it: {TAKERS}$") as caught:
        build(dataset, tmp_path / "o", video_perturbations="jpeg,gaussian_noise", text_perturbations="none",
              options=BuildOptions(per_frame=True, progress=False))
    assert caught.value.takers == tuple(TAKERS.split(", ")) and isinstance(caught.value, ValueError)
    assert "--" not in str(caught.value)              # no command-line flag in a library error
    assert not (tmp_path / "o").exists()
    with pytest.raises(PerFrameError, match=f"^no video op is selected; ops that take it: {TAKERS}$"):
        per_frame_selection([], True)
    with pytest.raises(ValueError, match="^per_frame must be True or False; got 'yes'$"):
        REGISTRY.get("fog").with_per_frame("yes")


def test_a_selection_sets_per_frame_on_the_ops_that_take_it_only():
    jpeg, fog = REGISTRY.get("jpeg"), REGISTRY.get("fog")
    chosen = per_frame_selection([jpeg, fog], True)
    assert [s.per_frame for s in chosen] == [False, True] and chosen[0] is jpeg
    assert "per_frame" not in chosen[0].params(3) and chosen[1].params(3) == {**fog.params(3), "per_frame": True}
    assert per_frame_selection([jpeg, fog], False) == [jpeg, fog]
