"""Video-major schedule: only declared frames are rendered, exact forward counts, resume, shards."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import perturb.video
from perturb.bench.adapters.frames import FrameSpec, frame_indices
from perturb.bench.adapters.toy import ToyEncoder
from perturb.bench.api import benchmark
from perturb.bench.options import BenchOptions
from bench_fixtures import tiny_data
from perturb.bench.pipeline.encoder import Settings
from perturb.bench.distributed.placement import shards
from perturb.bench.pipeline.sources import CleanClip, OnTheFly
from perturb.video.api import apply

QUIET = Settings(progress=False, batch_size=4)


class Recording(ToyEncoder):
    """A toy dual encoder that records the clips it is given."""

    def __init__(self, spec: FrameSpec | None) -> None:
        super().__init__(16)
        self.id = f"recording-{spec}"
        if spec is None:
            del self.frame_spec
        else:
            self.frame_spec = spec
        self.clips: list[np.ndarray] = []
        self.video_calls = self.text_calls = 0

    def encode_videos(self, clips):
        self.video_calls += 1
        self.clips += [np.asarray(c) for c in clips]
        return super().encode_videos(clips)

    def encode_texts(self, texts):
        self.text_calls += 1
        return super().encode_texts(texts)


OPTIONS = BenchOptions(bootstrap=0, settings=QUIET)


def _bench(model, data, options=OPTIONS, **kw):
    kw.setdefault("video", ["translate"])
    kw.setdefault("severities", [1, 2])
    kw.setdefault("text", ["Typos"])
    return benchmark(model, data, options, **kw)


def test_model_gets_only_its_declared_frames_and_they_are_the_full_renders():
    data = tiny_data(3, frames=8)
    m = Recording(FrameSpec(3))
    _bench(m, data, severities=[2], text=[])
    assert [len(c) for c in m.clips] == [3] * 6                 # 3 items x (clean, translate@2)
    idx = frame_indices(8, 3)
    item = data.items[0]
    seed = OnTheFly(seed=0).seed_of(item, "translate", 2)
    full = apply(item.meta["clip"], "translate", 2, seed=seed)
    assert np.array_equal(m.clips[0], item.meta["clip"][idx])  # block order: clean first
    assert np.array_equal(m.clips[3], full[idx])


def test_adapter_that_declares_nothing_gets_whole_clips():
    m = Recording(None)
    _bench(m, tiny_data(2, frames=8), severities=[1], text=[])
    assert [len(c) for c in m.clips] == [8] * 4


class _Draw:
    """A stand-in for the draw/render contract: output frame t reads input frame T-1-t."""

    log: list[tuple[str, int]] = []

    def __init__(self, name: str, n_frames: int) -> None:
        self.name, self.n = name, n_frames

    def source_indices(self, frames):
        frames = np.arange(self.n) if frames is None else np.asarray(frames)
        return np.unique(self.n - 1 - frames)

    def render(self, src, frames):
        self.log.append((self.name, len(frames)))
        need = list(self.source_indices(frames))
        return np.stack([src[need.index(self.n - 1 - f)] for f in frames]) // 2


def test_with_sample_then_render_only_declared_frames_are_kept_and_rendered(monkeypatch):
    _Draw.log = []
    monkeypatch.setattr(perturb.video, "draw", lambda name, sev, n, seed=None: _Draw(name, n))
    kept: list[int] = []
    real_clean = OnTheFly.clean

    def counting_clean(self, item, configs, spec):
        clip = real_clean(self, item, configs, spec)
        kept.append(len(clip.frames))
        return clip

    monkeypatch.setattr(OnTheFly, "clean", counting_clean)
    data = tiny_data(3, frames=8)
    m = Recording(FrameSpec(2))
    _bench(m, data, severities=[1, 2], text=[])
    assert _Draw.log == [("translate", 2)] * 6                  # 3 items x 2 severities, 2 frames each
    assert kept == [4] * 3                                      # frames {2, 6} read, {1, 5} sources
    clip = data.items[0].meta["clip"]
    assert np.array_equal(m.clips[3], clip[[5, 1]] // 2)        # block 0: clean x3, then severity 1


def test_clean_clip_take_checks_kept_frames():
    clip = CleanClip(np.arange(3 * 2 * 2 * 3, dtype=np.uint8).reshape(3, 2, 2, 3), 10, np.array([1, 4, 7]))
    assert np.array_equal(clip.take(np.array([7, 1])), clip.frames[[2, 0]])
    with pytest.raises(ValueError, match=r"\[2\]"):
        clip.take(np.array([2]))
    with pytest.raises(ValueError, match="whole clip"):
        clip.take(None)


def test_forward_passes_are_exact():
    data = tiny_data(6)                                          # 6 videos, 12 captions
    m = Recording(FrameSpec(4))
    stats: dict = {}
    _bench(m, data, pairs=[("translate", "Typos")], stats=stats)
    # videos: 2 blocks of 4 x (clean, @1, @2); texts: 3 batches x (clean, Typos); pairs reuse both
    assert m.video_calls == 6 and len(m.clips) == 18
    assert m.text_calls == 6
    assert stats["forward_passes"] == 12


def test_a_run_killed_mid_render_resumes_from_its_cache(tmp_path):
    data = tiny_data(6)

    class Dying(OnTheFly):
        def frames(self, item, clean, perturbation, severity, spec):
            if (item.item_id, perturbation, severity) == ("item00", "translate", 2):
                raise RuntimeError("killed")
            return super().frames(item, clean, perturbation, severity, spec)

    with pytest.raises(RuntimeError, match="killed"):
        _bench(Recording(FrameSpec(4)), data, replace(OPTIONS, source=Dying(), cache_dir=str(tmp_path)))
    resumed = Recording(FrameSpec(4))
    doc = _bench(resumed, data, replace(OPTIONS, cache_dir=str(tmp_path)))
    assert len(resumed.clips) == 18 - 8               # block 0's clean and @1 batches were saved
    reference = _bench(Recording(FrameSpec(4)), data)
    assert doc["runs"] == reference["runs"] and doc["clean"] == reference["clean"]


def test_shards_are_whole_batches():
    assert shards(5, 2, 2) == [[0, 1], [2, 3], [4]]
    assert shards(10, 4, 1) == [[0, 1, 2, 3, 4, 5, 6, 7], [8, 9]]
    assert shards(3, 32, 4) == [[0, 1, 2]]


def test_dask_shards_over_videos_give_the_single_process_results(tmp_path):
    pytest.importorskip("distributed")
    data = tiny_data(5)
    kw = dict(video=["translate", "jumble"], severities=[1, 3], text=["Typos"])
    options = BenchOptions(bootstrap=50, settings=Settings(progress=False, batch_size=2))
    model = "callable:perturb.bench.adapters.toy:ToyEncoder"
    here: dict = {}
    local = benchmark(model, data, options, stats=here, **kw)
    stats: dict = {}
    sharded = benchmark(model, data, replace(options, backend="dask", n_workers=2, cache_dir=str(tmp_path)),
                        stats=stats, **kw)
    assert sharded["runs"] == local["runs"] and sharded["clean"] == local["clean"]
    assert stats["forward_passes"] == here["forward_passes"]      # on replicas, nothing encoded twice


def test_results_are_identical_on_the_numpy_and_torch_perturbation_paths():
    pytest.importorskip("torch")
    data = tiny_data(4)
    ops = ["defocus_blur", "motion_blur", "jpeg", "jumble", "freeze", "rotate", "translate",
           "gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"]
    kw = dict(video=ops, severities=[1, 4], text=[])
    m_np, m_torch = Recording(FrameSpec(3)), Recording(FrameSpec(3))
    on_numpy = _bench(m_np, data, **kw)
    on_torch = _bench(m_torch, data, replace(OPTIONS, source=OnTheFly(seed=0, device="cpu")), **kw)
    assert on_torch["runs"] == on_numpy["runs"] and on_torch["clean"] == on_numpy["clean"]
    assert all(isinstance(c, np.ndarray) and c.dtype == np.uint8 for c in m_torch.clips)
    diffs = [np.abs(a.astype(int) - b) for a, b in zip(m_np.clips, m_torch.clips)]
    assert max(d.max() for d in diffs) <= 1                       # interpolating renders: <= 1 level
    assert np.mean([(d > 0).mean() for d in diffs]) < 0.01         # on under 1% of values
    assert OnTheFly(device="cpu").settings != OnTheFly().settings       # other cache rows
    noise = dict(video=ops[-4:], severities=[1, 4], text=[])
    n_np, n_torch = Recording(FrameSpec(3)), Recording(FrameSpec(3))
    _bench(n_np, data, **noise)
    _bench(n_torch, data, replace(OPTIONS, source=OnTheFly(seed=0, device="cpu")), **noise)
    assert len(n_np.clips) == len(n_torch.clips) == 4 * (1 + 4 * 2)
    assert all(np.array_equal(a, b) for a, b in zip(n_np.clips, n_torch.clips))   # noise: bit-identical


def test_ray_shards_over_videos_give_the_single_process_results(tmp_path):
    pytest.importorskip("ray")
    data = tiny_data(4)
    kw = dict(video=["translate"], severities=[2], text=[])
    options = BenchOptions(bootstrap=0, settings=Settings(progress=False, batch_size=2))
    model = "callable:perturb.bench.adapters.toy:ToyEncoder"
    local = benchmark(model, data, options, **kw)
    sharded = benchmark(model, data, replace(options, backend="ray", n_workers=2, cache_dir=str(tmp_path)), **kw)
    assert sharded["runs"] == local["runs"] and sharded["clean"] == local["clean"]


def test_files_are_decoded_whole_but_converted_only_where_frames_are_read(tmp_path, monkeypatch):
    import perturb.video.io as vio
    from perturb.dataset.items import Item

    clip = tiny_data(1, frames=12).items[0].meta["clip"]
    path = tmp_path / "v.mkv"
    with vio.VideoWriter(path, 10, codec="ffv1") as w:
        w.write(clip)
    converted: list[int] = []
    import perturb.video.io.decode as decode
    real = decode._to_rgb
    monkeypatch.setattr(decode, "_to_rgb", lambda f, wh, r: converted.append(1) or real(f, wh, r))
    frames, kept, n = vio.read_frames(path, lambda t: [t - 1, 0, 0])
    assert n == 12 and kept.tolist() == [0, 11] and len(converted) == 2
    assert np.array_equal(frames, vio.read(path)[0][[0, 11]])
    with pytest.raises(ValueError, match="0..11"):
        vio.read_frames(path, lambda t: [t])

    monkeypatch.setattr(perturb.video, "draw", lambda name, sev, n, seed=None: _Draw(name, n))
    converted.clear()
    item = Item("v", "v", str(path), ("a caption",))
    clean = OnTheFly().clean(item, [("clean", None), ("translate", 1)], FrameSpec(2))
    assert clean.n_frames == 12 and clean.kept.tolist() == [2, 3, 8, 9]   # read {3, 9}, sources {8, 2}
    assert len(converted) == 4
    assert np.array_equal(clean.frames, vio.read(path)[0][clean.kept])


def test_clean_clips_alive_stay_within_two_blocks(monkeypatch):
    import weakref

    alive, peak = [0], [0]
    real_clean = OnTheFly.clean

    def tracked(self, item, configs, spec):
        clip = real_clean(self, item, configs, spec)
        alive[0] += 1
        peak[0] = max(peak[0], alive[0])
        weakref.finalize(clip, lambda: alive.__setitem__(0, alive[0] - 1))
        return clip

    monkeypatch.setattr(OnTheFly, "clean", tracked)
    m = Recording(FrameSpec(2))
    _bench(m, tiny_data(12), replace(OPTIONS, settings=Settings(progress=False, batch_size=2)), severities=[1, 2, 3],
           text=[])
    assert len(m.clips) == 12 * 4 and alive[0] == 0
    assert 2 <= peak[0] <= 2 * 2                         # never more than two blocks of 2 videos


def test_size_model_decodes_straight_to_the_short_side_the_model_reads(tmp_path):
    from perturb.dataset.readers import read_dataset
    from perturb.bench.pipeline.data import make_data
    from bench_fixtures import write_tiny_dataset

    captions = write_tiny_dataset(tmp_path / "ds", n=3, frames=6, size=32)
    data = make_data(read_dataset(captions), "tiny", str(captions))
    m = Recording(FrameSpec(2, 16))
    doc = _bench(m, data, replace(OPTIONS, source=OnTheFly(size="model")), text=[])
    assert {c.shape[1:] for c in m.clips} == {(16, 16, 3)} and {len(c) for c in m.clips} == {2}
    assert doc["decode"] == {"source": "on the fly", "short_side": 16, "fps": None, "max_frames": None,
                             "perturb_device": "numpy", "model_input_changed_by_size": True, "per_frame": False}
    whole = Recording(None)                                         # declares nothing: native size
    native = _bench(whole, data, replace(OPTIONS, source=OnTheFly(size="model")), text=[])["decode"]
    assert native["short_side"] is None and native["model_input_changed_by_size"] is False
    assert {c.shape[1:] for c in whole.clips} == {(32, 32, 3)}
