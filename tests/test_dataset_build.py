"""The -P builder: layout, manifest, equality with perturb.video.apply, backends, resume, bad data."""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import datasets as ds  # noqa: E402

from perturb import __version__  # noqa: E402
from perturb.cli import main  # noqa: E402
from perturb.dataset import BuildOptions, build, encode, read_dataset  # noqa: E402
from perturb.dataset.manifest import read_rows  # noqa: E402
from perturb.fileio import sha256_file  # noqa: E402
from perturb.dataset.staging import TMP_MARK  # noqa: E402
from perturb.dataset.strategy import (Strategy, apply_windowed, reproduce, strategy,  # noqa: E402
                                      window_generator)
from perturb.registry import REGISTRY, Spec  # noqa: E402
from perturb.rng import derive_seed, item_seed  # noqa: E402
from perturb.video import apply, io  # noqa: E402
from perturb.video.render import FRAME, WINDOW, Renderer, perturb_clip  # noqa: E402

# one streamed per-frame op, one codec streamed in GOP-aligned windows, one whole-clip temporal op
VIDEO = "gaussian_noise,mpeg1,freeze"
SEVERITIES = "1,3"
TEXT = "Typos,DropFirst"
OPTS = dict(video_perturbations=VIDEO, severities=SEVERITIES, text_perturbations=TEXT, seed=0)
ONE_JOB = BuildOptions(jobs=1, progress=False)


def checksums(out: Path) -> dict[str, str]:
    """Relative path → sha256 of every video and caption file."""
    return {str(p.relative_to(out)): sha256_file(p) for sub in ("videos", "captions")
            for p in sorted((out / sub).rglob("*")) if p.is_file()}


def temporaries(out: Path) -> list[Path]:
    return [p for p in out.rglob("*") if TMP_MARK in p.name or p.name.endswith(".tmp")]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return ds.generic_dataset(tmp_path_factory.mktemp("data"), n=4, frames=12)


@pytest.fixture(scope="module")
def reference(dataset, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ref")
    result = build(dataset, out, options=ONE_JOB, **OPTS)
    assert result.ok and result.done == 4 * 3 * 2 + 2
    return out


def test_layout_manifest_and_shapes(dataset, reference):
    items = read_dataset(dataset)
    expected = {f"videos/{p}/{s}/{it.item_id}.mkv" for it in items
                for p in VIDEO.split(",") for s in (1, 3)}
    assert set(checksums(reference)) == expected | {f"captions/{t}.jsonl" for t in TEXT.split(",")}
    rows = read_rows(reference / "manifest.jsonl")
    assert len(rows) == len({r["key"] for r in rows}) == len(expected) + 2
    for r in (r for r in rows if r["kind"] == "video"):
        assert r["status"] == "ok" and r["error"] is None
        assert r["seed"] == derive_seed(0, r["item_id"], r["perturbation"], r["severity"])
        assert r["sha256"] == sha256_file(reference / r["path"])
        assert r["params"] == REGISTRY.get(r["perturbation"]).params(r["severity"])
        assert (r["frames"], r["height"], r["width"]) == (12, 48, 64) and r["seconds"] > 0   # measured
        assert encode.load(reference / r["path"]).shape == (12, 48, 64, 3)
    modes = {r["perturbation"]: (r["mode"], r["window"]) for r in rows if r["kind"] == "video"}
    # the codecs carry encoder state across GOPs: encoded whole; noise draws one key per clip and
    # renders each 64-frame window as those frames of the clip
    assert modes["mpeg1"] == ("whole", None) and modes["freeze"] == ("whole", None)
    assert modes["gaussian_noise"] == ("render", 64)
    info = json.loads((reference / "dataset.json").read_text())
    assert info["perturb_version"] == __version__ and info["status"] == "complete"
    assert info["command"] and info["items"] == 4 and info["summary"]["failed"] == 0
    assert sorted(p["name"] for p in info["video_perturbations"]) == sorted(VIDEO.split(","))
    assert not temporaries(reference)


def test_outputs_reproduce_from_the_decoded_clip(dataset, reference):
    """Every output is reproduce() of the decoded input; in 'stream'/'whole' mode that is apply()."""
    for item in read_dataset(dataset):
        clip, _ = io.read(item.video_path)
        for name in VIDEO.split(","):
            for sev in (1, 3):
                seed = derive_seed(0, item.item_id, name, sev)
                expected = reproduce(clip, REGISTRY.get(name), sev, seed)
                got = encode.load(reference / f"videos/{name}/{sev}/{item.item_id}.mkv")
                np.testing.assert_array_equal(got, expected, err_msg=f"{item.item_id} {name} {sev}")
                if strategy(REGISTRY.get(name), sev).mode != "windowed":
                    np.testing.assert_array_equal(got, apply(clip, name, sev, seed=seed))


def test_captions_one_row_per_caption_with_flag(dataset, reference):
    captions = [(it.item_id, i, c) for it in read_dataset(dataset) for i, c in enumerate(it.captions)]
    for name in TEXT.split(","):
        rows = [json.loads(x) for x in (reference / "captions" / f"{name}.jsonl").read_text().splitlines()]
        assert [(r["item_id"], r["caption_index"], r["original"]) for r in rows] == captions
        assert all(isinstance(r["applied"], bool) and r["text"] for r in rows)
        assert any(r["text"] != r["original"] for r in rows)
    row = next(r for r in read_rows(reference / "manifest.jsonl") if r["key"] == "*|DropFirst|")
    assert row["captions"] == len(captions) and row["applied_rate"] == 1.0


def test_streaming_equals_whole_clip(tmp_path):
    """Streamed and rendered ops give exactly their whole-clip result (300 frames: 64-frame
    windows + tail); the codecs are encoded whole, so they do too."""
    path = ds.write_video(tmp_path / "long.mp4", frames=300, height=32, width=48, seed=5)
    (tmp_path / "c.csv").write_text(f"video_id,video_path,caption\nlong,{path},a long clip\n")
    names = ["gaussian_noise", "impulse_noise", "motion_blur", "translate", "jpeg", "jumble",
             "sampling", "mpeg2"]
    modes = {n: strategy(REGISTRY.get(n), 4) for n in names}
    assert all(m.mode in ("stream", "render") for n, m in modes.items() if n != "mpeg2")
    assert modes["mpeg2"].mode == "whole" and modes["jumble"].mode == "stream"
    assert modes["gaussian_noise"].mode == modes["impulse_noise"].mode == "render"
    assert strategy(REGISTRY.get("box_jumble"), 4).mode == "whole"
    result = build(tmp_path / "c.csv", tmp_path / "out", video_perturbations=names,
                   severities=4, text_perturbations="none", options=ONE_JOB)
    assert result.ok
    clip, _ = io.read(path)
    for name in names:
        got = encode.load(tmp_path / f"out/videos/{name}/4/long.mkv")
        seed = derive_seed(0, "long", name, 4)
        np.testing.assert_array_equal(got, reproduce(clip, REGISTRY.get(name), 4, seed), err_msg=name)
        np.testing.assert_array_equal(got, apply(clip, name, 4, seed=seed), err_msg=name)


def _shuffled_offsets(rng: np.random.Generator, n_frames: int, params) -> dict[str, np.ndarray]:
    """One draw covering every frame of the call jointly (a permutation), so it cannot split at frames;
    the window (0 before, 0 after) is what a WINDOW renderer reads."""
    return {"offsets": (rng.permutation(n_frames) % (params["amount"] + 1)).astype(np.uint16),
            "window": np.array([0, 0], np.int64)}


def _add_offsets(frames: np.ndarray, ids: np.ndarray, drawn, params) -> np.ndarray:
    lifted = frames.astype(np.uint16) + drawn["offsets"][ids][:, None, None, None]
    return np.minimum(lifted, 255).astype(np.uint8)


def _shared_field(name: str, reads: str) -> Spec:
    return Spec(name=name, modality="video", category="noise",
                render=Renderer(reads, _shuffled_offsets, {"numpy": _add_offsets}),
                severities={s: {"amount": 10 * s} for s in range(1, 6)})


def test_kernels_drawing_across_frames_fall_back_to_windowed():
    spec = _shared_field("shared_field", WINDOW)
    assert strategy(spec, 2) == Strategy("windowed", 64)
    clip = np.random.default_rng(0).integers(0, 200, (150, 8, 8, 3), dtype=np.uint8)
    out = reproduce(clip, spec, 2, seed=5)
    assert np.array_equal(out, apply_windowed(clip, spec, 2, seed=5))
    offsets = _shuffled_offsets(window_generator(5, 1), 64, {"amount": 20})["offsets"]
    assert np.array_equal(out[64:128], _add_offsets(clip[64:128], np.arange(64), {"offsets": offsets}, {}))
    whole = perturb_clip(spec, clip, np.random.default_rng(5), spec.params(2))
    assert not np.array_equal(out, whole)
    counted = _shared_field("shared_field_frames", FRAME)   # per-frame reads: one draw for the clip
    assert strategy(counted, 2) == Strategy("counted", 64)
    assert np.array_equal(reproduce(clip, counted, 2, seed=5), whole)


@pytest.mark.parametrize("name", ["fog", "frost", "snow", "spatter"])
def test_weather_builds_equal_apply_past_one_window(tmp_path, name):
    """The weather draw spans the clip (its layer drifts over all T frames): the builder counts
    the frames first, so a 130-frame output (three windows) is apply() on the whole clip."""
    path = ds.write_video(tmp_path / "long.mp4", frames=130, height=32, width=48, seed=6)
    (tmp_path / "c.csv").write_text(f"video_id,video_path,caption\nlong,{path},a long clip\n")
    assert strategy(REGISTRY.get(name), 5) == Strategy("counted", 64)
    result = build(tmp_path / "c.csv", tmp_path / "out", video_perturbations=name, severities=5,
                   text_perturbations="none", options=ONE_JOB)
    assert result.ok
    clip, _ = io.read(path)
    got = encode.load(tmp_path / f"out/videos/{name}/5/long.mkv")
    want = apply(clip, name, 5, seed=derive_seed(0, "long", name, 5))
    assert len(got) == 130 and np.array_equal(got, want)
    assert not np.array_equal(got, apply_windowed(clip, REGISTRY.get(name), 5, derive_seed(0, "long", name, 5)))
    row = next(r for r in read_rows(tmp_path / "out/manifest.jsonl") if r.get("perturbation") == name)
    assert (row["mode"], row["frames"]) == ("counted", 130)


def test_same_bytes_on_every_backend(dataset, reference, tmp_path):
    expected = checksums(reference)
    assert build(dataset, tmp_path / "loky2", options=BuildOptions(jobs=2, progress=False), **OPTS).ok
    assert checksums(tmp_path / "loky2") == expected
    assert build(dataset, tmp_path / "dask2", options=BuildOptions(jobs=2, backend="dask", progress=False),
                 **OPTS).ok
    assert checksums(tmp_path / "dask2") == expected


def test_ray_backend_same_bytes(dataset, reference, tmp_path):
    pytest.importorskip("ray")
    assert build(dataset, tmp_path / "ray", video_perturbations="gaussian_noise", severities=SEVERITIES,
                 text_perturbations="none", options=BuildOptions(jobs=2, backend="ray", progress=False)).ok
    ref = {k: v for k, v in checksums(reference).items() if k.startswith("videos/gaussian_noise")}
    assert checksums(tmp_path / "ray") == ref


def test_resume_skips_complete_and_redoes_damaged(dataset, reference, tmp_path):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(reference, out)
    again = build(dataset, out, options=ONE_JOB, **OPTS)
    assert (again.done, again.skipped, again.failed) == (0, 26, [])
    (out / "videos/mpeg1/3/clip2.mkv").write_bytes(b"garbage")          # damaged
    (out / "videos/freeze/1/clip0.mkv").unlink()                          # lost
    (out / "captions/Typos.jsonl").write_text("")                         # emptied
    fixed = build(dataset, out, options=ONE_JOB, **OPTS)
    assert (fixed.done, fixed.skipped) == (3, 23)
    assert checksums(out) == checksums(reference)
    keys = [r["key"] for r in read_rows(out / "manifest.jsonl")]
    assert len(keys) == len(set(keys)) == 26


def test_bad_inputs_are_recorded_and_the_rest_completes(tmp_path, capsys):
    data = ds.generic_dataset(tmp_path / "data", n=2, frames=12, bad=True)
    out = tmp_path / "out"
    code = main(["build", str(data), "--out", str(out), "--video-perturbations", "gaussian_noise,freeze",
                 "--severities", "2", "--text-perturbations", "DropLast", "--jobs", "2", "--no-progress"])
    assert code == 1
    err = capsys.readouterr().err
    rows = {r["key"]: r for r in read_rows(out / "manifest.jsonl")}
    for bad in ds.BAD:
        for name in ("gaussian_noise", "freeze"):
            r = rows[f"{bad}|{name}|2"]
            assert r["status"] == "failed" and r["error"].startswith("VideoReadError")
            assert f"failed {bad}|{name}|2" in err
            assert not (out / r["path"]).exists()
    assert "decoding failed" in rows["truncated|gaussian_noise|2"]["error"]
    assert "empty" in rows["empty|freeze|2"]["error"] and "no such file" in rows["missing|freeze|2"]["error"]
    good = [r for k, r in rows.items() if k.split("|")[0] in ("clip0", "clip1") or k.startswith("*")]
    assert len(good) == 5 and all(r["status"] == "ok" for r in good)
    assert not temporaries(out)
    assert json.loads((out / "dataset.json").read_text())["summary"]["failed"] == 8


def test_preprocessing_and_npy_format(dataset, tmp_path):
    result = build(dataset, tmp_path / "out", video_perturbations="jpeg", severities=1,
                   text_perturbations="none",
                   options=BuildOptions(short_side=24, fps=5, format="npy", jobs=1, limit=2, progress=False))
    assert result.ok and result.done == 2
    frames = np.load(tmp_path / "out/videos/jpeg/1/clip0.npy")
    assert frames.shape == (6, 24, 32, 3)       # 12 frames at 10 fps -> 6 at 5 fps; 48x64 -> 24x32
    clip, _ = io.read(read_dataset(dataset)[0].video_path, fps=5, size=24)
    np.testing.assert_array_equal(frames, apply(clip, "jpeg", 1))


def test_cli_usage_errors_exit_2(dataset, tmp_path, capsys):
    out = str(tmp_path / "o")
    assert main(["build", str(tmp_path / "nope.csv"), "--out", out]) == 2
    assert main(["build", str(dataset), "--out", out, "--video-perturbations", "gausian_noise"]) == 2
    assert "gaussian_noise" in capsys.readouterr().err                    # did-you-mean
    assert main(["build", str(dataset), "--out", out, "--severities", "0-7"]) == 2
    assert main(["build", str(dataset), "--out", out, "--scheduler", "tcp://x:1"]) == 2
    assert main(["build", str(dataset), "--out", out, "--jobs", "0"]) == 2
    assert not Path(out).exists()


def test_cli_build_exit_0(dataset, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["build", str(dataset), "--out", str(out), "--video-perturbations", "static_rotate",
                 "--severities", "5", "--text-perturbations", "none", "--jobs", "1",
                 "--no-progress", "--parquet", "--limit", "1"]) == 0
    assert "1 outputs: 1 made" in capsys.readouterr().out
    import pyarrow.parquet as pq

    table = pq.read_table(out / "manifest.parquet").to_pylist()
    assert [r["key"] for r in table] == ["clip0|static_rotate|5"]
    assert json.loads((out / "dataset.json").read_text())["command"].startswith("perturb build")


def test_options_are_one_build_options_object_built_with_keywords(dataset, tmp_path):
    with pytest.raises(TypeError, match=r"^build takes its options as a perturb\.dataset\.build_options\.BuildOptions; "
                                        r"got dict; build it as BuildOptions\(\*\*mapping\)$") as caught:
        build(dataset, tmp_path / "o", video_perturbations="jpeg", options={"jobs": 1})
    assert isinstance(caught.value, ValueError) and not (tmp_path / "o").exists()
    with pytest.raises(TypeError):
        BuildOptions(1)                                   # keywords only
    with pytest.raises(dataclasses.FrozenInstanceError):
        BuildOptions().jobs = 2                           # one object, passed whole and unchanged
    assert BuildOptions(short_side=24, fps=5).preprocess.as_dict() == {"short_side": 24, "fps": 5}


def test_parquet_keeps_seeds_above_2_63(dataset, tmp_path):
    """Per-output seeds span the unsigned 64-bit range; Parquet must hold them all exactly."""
    out = tmp_path / "o"
    result = build(dataset, out, video_perturbations="static_rotate,jpeg", severities="1,5",
                   text_perturbations="none",
                   options=BuildOptions(jobs=1, progress=False, parquet=True, format="npy"))
    assert result.ok
    import pyarrow.parquet as pq

    table = pq.read_table(out / "manifest.parquet").to_pylist()
    seeds = {r["key"]: r["seed"] for r in read_rows(out / "manifest.jsonl")}
    assert any(s >= 2 ** 63 for s in seeds.values())           # the case that overflowed int64
    assert {r["key"]: r["seed"] for r in table} == seeds
    assert json.loads((out / "dataset.json").read_text())["status"] == "complete"


def test_a_worker_dying_mid_write_leaves_no_temporary_in_a_complete_build(dataset, reference, tmp_path,
                                                                           monkeypatch):
    """Issue 27 item 15: a worker killed while writing leaves its partial file and its task runs
    again elsewhere; the build sweeps temporaries when it ends, so a build ending "complete"
    holds exactly the uninterrupted build's files."""
    from perturb.dataset import builder

    out = tmp_path / "out"
    run = builder.engines.run

    def dying_worker(fn, tasks, **kwargs):
        for i, rows in enumerate(run(fn, tasks, **kwargs)):
            if i == 1:                      # the dead worker's partial output, 0 bytes
                (out / "videos" / "gaussian_noise").mkdir(parents=True, exist_ok=True)
                (out / "videos" / "gaussian_noise" / f".x{TMP_MARK}4242").write_bytes(b"")
            yield rows
    monkeypatch.setattr(builder.engines, "run", dying_worker)
    result = build(dataset, out, options=ONE_JOB, **OPTS)
    assert result.ok and json.loads((out / "dataset.json").read_text())["status"] == "complete"
    assert temporaries(out) == []
    assert checksums(out) == checksums(reference)


def test_failed_build_does_not_stay_running(dataset, tmp_path, monkeypatch):
    from perturb.dataset import builder

    def broken(rows, path):
        raise RuntimeError("disk gone")
    monkeypatch.setattr(builder, "to_parquet", broken)
    with pytest.raises(RuntimeError):
        build(dataset, tmp_path / "o", video_perturbations="jpeg", severities="1", text_perturbations="none",
              options=BuildOptions(jobs=1, progress=False, parquet=True, limit=1))
    info = json.loads((tmp_path / "o" / "dataset.json").read_text())
    assert info["status"] == "failed" and info["error"] == "RuntimeError: disk gone"


def test_resume_refuses_other_settings(dataset, tmp_path, capsys):
    opts = dict(video_perturbations="jpeg", severities=1, text_perturbations="none",
                options=BuildOptions(jobs=1, limit=1, progress=False))
    assert build(dataset, tmp_path / "o", seed=0, **opts).ok
    args = ["build", str(dataset), "--out", str(tmp_path / "o"), "--video-perturbations", "jpeg",
            "--severities", "1", "--text-perturbations", "none", "--limit", "1", "--jobs", "1"]
    assert main([*args, "--seed", "1"]) == 2
    assert "other settings (seed=0" in capsys.readouterr().err
    assert main([*args, "--seed", "0", "--no-progress"]) == 0


BAD_DATASETS = {   # file name, content → the words of the refusal (after "perturb build: error: ")
    "twice.csv": ("video_id,video_path,caption\nv1,a.mp4,a dog\nv1,b.mp4,a cat\n",
                  "twice.csv:3: video_id 'v1' names video"),
    "nocaption.jsonl": ('{"video_id": "v1", "video_path": "a.mp4", "caption": "a dog"}\n'
                        '{"video_id": "v2", "video_path": "b.mp4"}\n',
                        "nocaption.jsonl:2: missing column(s) 'caption'"),
    "list.jsonl": ('["v1", "a.mp4", "a dog"]\n', "list.jsonl:1: expected an object with video_id, video_path, "
                                                 "caption; got list"),
    "null.jsonl": ('{"video_id": null, "video_path": "a.mp4", "caption": "a dog"}\n',
                   "null.jsonl:1: 'video_id' is null"),
    "novideo.csv": ("video_id,caption\nv1,a dog\n",
                    "novideo.csv: item 'v1' has no 'video_path'; building video perturbations needs the "
                    "columns video_id, video_path, caption"),
    "collide.csv": ("video_id,video_path,caption\na/b,a.mp4,a dog\na_b,b.mp4,a cat\n",
                    "collide.csv: item ids 'a/b' and 'a_b' both map to the file name 'a_b'; rename one of them"),
}


@pytest.mark.parametrize("name", BAD_DATASETS)
def test_cli_malformed_datasets_exit_2_naming_file_and_row(tmp_path, capsys, name):
    text, words = BAD_DATASETS[name]
    path = tmp_path / name
    path.write_text(text)
    out = tmp_path / "o"
    code = main(["build", str(path), "--out", str(out), "--video-perturbations", "jpeg", "--severities", "1",
                 "--text-perturbations", "none", "--jobs", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"perturb build: error: {tmp_path}/{words}"), err
    assert err.count("\n") == 1 and not out.exists()


def test_build_refuses_colliding_ids_and_items_without_video_but_builds_captions_of_them(tmp_path):
    from perturb.dataset import Item
    from perturb.dataset.readers import DatasetFormatError

    clip = str(tmp_path / "v.mp4")
    colliding = [Item("a/b", "a/b", clip, ("a dog",)), Item("a_b", "a_b", clip, ("a cat",))]
    with pytest.raises(DatasetFormatError, match="^items: item ids 'a/b' and 'a_b' both map to the file name"):
        build(colliding, tmp_path / "o", video_perturbations="jpeg", severities=1, text_perturbations="none",
              options=ONE_JOB)
    captions_only = [Item("v1", "v1", "", ("a dog runs",)), Item("v2", "v2", "", ("a cat sleeps",))]
    with pytest.raises(DatasetFormatError, match="^items: item 'v1' has no 'video_path'"):
        build(captions_only, tmp_path / "o", video_perturbations="jpeg", severities=1,
              text_perturbations="none", options=ONE_JOB)
    assert not (tmp_path / "o").exists()
    result = build(captions_only, tmp_path / "o", video_perturbations="none", text_perturbations="Typos",
                   options=ONE_JOB)
    assert result.ok and result.done == 1


def _two_long_clips(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """Two 140-frame clips (three build windows) of 48 x 64 pixels (a few rain streaks a frame),
    as a CSV dataset."""
    rows, clips = ["video_id,video_path,caption"], {}
    for i, vid in enumerate(("a", "b")):
        path = ds.write_video(tmp_path / f"{vid}.mp4", frames=140, height=48, width=64, seed=10 + i)
        rows.append(f"{vid},{path},clip {vid}")
        clips[vid] = io.read(path)[0]
    (tmp_path / "c.csv").write_text("\n".join(rows) + "\n")
    return tmp_path / "c.csv", clips


@pytest.mark.parametrize("first", [True, False], ids=["per_frame_first", "plain_first"])
def test_a_build_does_not_depend_on_an_earlier_build_in_the_process(tmp_path, first):
    """The build mode is chosen per op, severity and parameters: a per-frame rain build (a sheet
    key and a slant per frame: its draw depends on the clip's length, counted) and a plain one
    (one key and slant: rendered window by window) in one process each equal apply() on the whole
    clip, in either order."""
    from perturb.dataset import strategy as strategy_module
    strategy_module._STRATEGIES.clear()            # this process's earlier tests chose modes too
    csv, clips = _two_long_clips(tmp_path)
    for per_frame in (first, not first):
        out = tmp_path / f"out-{per_frame}"
        result = build(csv, out, video_perturbations="rain", severities="1", text_perturbations="none",
                       options=BuildOptions(per_frame=per_frame, jobs=1, progress=False))
        assert result.ok
        for vid, clip in clips.items():
            got = encode.load(out / f"videos/rain/1/{vid}.mkv")
            want = apply(clip, "rain", 1, seed=item_seed(0, vid, "rain", 1), per_frame=per_frame)
            assert len(got) == 140 and np.array_equal(got, want), (per_frame, vid)


def test_build_mode_is_keyed_by_the_parameters_not_only_the_severity():
    """strategy() of rain with per_frame, asked after plain rain at the same severity (and the
    other way round), is the mode of its own parameters: 'counted' (a slant per frame of the
    clip), not plain rain's 'render' (a draw for 2^32 frames: 32 GiB of slants)."""
    from perturb.dataset import strategy as strategy_module
    plain = REGISTRY.get("rain")
    for order in ((plain, plain.with_per_frame()), (plain.with_per_frame(), plain)):
        strategy_module._STRATEGIES.clear()
        modes = [strategy(spec, 1).mode for spec in order]
        assert dict(zip((s.params(1).get("per_frame", False) for s in order), modes)) == \
            {False: "render", True: "counted"}
