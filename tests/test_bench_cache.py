"""Embedding cache: keys follow what the numbers depend on, bad rows are never cached, damaged
parts are recomputed, and ``perturb cache ls / rm / prune`` show and clear what is stored."""
from __future__ import annotations

import dataclasses
import errno
import os
import time
import warnings

import numpy as np
import pytest

from perturb.bench.adapters import cache as cache_mod
from perturb.bench import cache_cli
from perturb.bench.adapters.toy import ToyEncoder
from perturb.bench.api import benchmark
from perturb.bench.adapters.model_options import ModelOptions
from perturb.bench.options import BenchOptions
from perturb.bench.adapters.protocol import BadEmbeddingsError, check_rows
from perturb.bench.adapters.cache import CacheKey, EmbeddingCache
from perturb.bench.pipeline.data import make_data
from perturb.fingerprint import checkpoint_fingerprint, file_identity
from bench_fixtures import tiny_items, write_tiny_dataset
from perturb.bench.pipeline.encoder import Settings
from perturb.cli import main
from perturb.registry import REGISTRY

QUIET = Settings(progress=False, batch_size=4)


class Counting(ToyEncoder):
    """A toy dual encoder counting the items it encodes; ``video_width`` breaks its video rows."""

    def __init__(self, video_width: int | None = None) -> None:
        super().__init__(16)
        self.id = "counting"
        self.videos = self.texts = 0
        self.video_width = video_width

    def encode_videos(self, clips):
        self.videos += len(clips)
        out = super().encode_videos(clips)
        return out if self.video_width is None else out[:, : self.video_width]

    def encode_texts(self, texts):
        self.texts += len(texts)
        return super().encode_texts(texts)


def _data(items):
    return make_data(items, "tiny", "memory")


def _run(model, items, cache, cache_key=None, **kw):
    kw.setdefault("video", ["translate"])
    kw.setdefault("severities", [1, 2])
    kw.setdefault("text", [])
    options = BenchOptions(bootstrap=0, cache_dir=str(cache), settings=QUIET, model=ModelOptions(cache_key=cache_key))
    return benchmark(model, _data(items), options, **kw)


def _parts(root):
    return sorted(root.rglob("part-*.npz"))


def test_editing_one_caption_reencodes_exactly_that_caption(tmp_path):
    items = tiny_items(5)
    _run(Counting(), items, tmp_path, text=["Typos"])
    edited = list(items)
    edited[2] = dataclasses.replace(items[2], captions=("a brand new caption", items[2].captions[1]))
    again = Counting()
    doc = _run(again, edited, tmp_path, text=["Typos"])
    assert again.videos == 0
    assert again.texts == 2                        # the edited caption, clean and under Typos
    fresh = _run(Counting(), edited, tmp_path / "fresh", text=["Typos"])
    assert doc["clean"] == fresh["clean"] and doc["runs"] == fresh["runs"]


def test_replacing_one_video_reencodes_only_that_video(tmp_path):
    items = tiny_items(5)
    _run(Counting(), items, tmp_path)
    replaced = list(items)
    replaced[1] = dataclasses.replace(items[1], meta={"clip": items[4].meta["clip"][::-1].copy()})
    again = Counting()
    _run(again, replaced, tmp_path)
    assert (again.videos, again.texts) == (3, 0)   # one video: clean + 2 severities


def test_video_file_identity_follows_content_size_and_mtime(tmp_path):
    path = tmp_path / "v.bin"
    path.write_bytes(b"a" * 1000)
    os.utime(path, ns=(10**18, 10**18))
    first = file_identity(path)
    assert file_identity(path) == first
    path.write_bytes(b"b" * 1000)                  # same size, same mtime, other bytes
    os.utime(path, ns=(10**18, 10**18))
    assert file_identity(path) != first
    os.utime(path, ns=(2 * 10**18, 2 * 10**18))
    assert len({first, file_identity(path)}) == 2


def test_changed_perturbation_parameters_recompute_only_that_configuration(tmp_path, monkeypatch):
    items = tiny_items(4)
    _run(Counting(), items, tmp_path, text=["Typos"])
    spec = REGISTRY.get("translate", "video")
    severities = {**spec.severities, 2: {"max_shift": 3}}
    monkeypatch.setitem(REGISTRY._specs, "translate", dataclasses.replace(spec, severities=severities))
    again = Counting()
    _run(again, items, tmp_path, text=["Typos"])
    assert (again.videos, again.texts) == (4, 0)   # severity 2 only
    monkeypatch.setitem(REGISTRY._specs, "translate", dataclasses.replace(spec, version=spec.version + 1))
    bumped = Counting()
    _run(bumped, items, tmp_path, text=["Typos"])
    assert (bumped.videos, bumped.texts) == (8, 0)  # a new implementation: both severities


@pytest.mark.parametrize("damage", ["truncate", "empty", "bitflip", "garbage"])
def test_damaged_part_is_named_in_a_warning_and_recomputed(tmp_path, damage):
    items = tiny_items(6)
    doc = _run(Counting(), items, tmp_path, video=[], severities=[1])
    parts = _parts(tmp_path)
    victim = parts[0]
    raw = victim.read_bytes()
    victim.write_bytes({"truncate": raw[: len(raw) // 2], "empty": b"",
                        "bitflip": raw[:200] + bytes([raw[200] ^ 0xFF]) + raw[201:],
                        "garbage": b"PK\x03\x04" + b"\x00" * 50}[damage])
    again = Counting()
    with pytest.warns(UserWarning, match=victim.name):
        doc2 = _run(again, items, tmp_path, video=[], severities=[1])
    assert 0 < again.videos + again.texts <= QUIET.batch_size   # that part's rows only
    assert doc2["clean"] == doc["clean"]
    third = Counting()
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # repaired: no warning, no work
        _run(third, items, tmp_path, video=[], severities=[1])
    assert third.videos + third.texts == 0


def test_part_of_another_width_is_dropped_as_inconsistent(tmp_path):
    key = CacheKey("m", "d", "video", "clean", None, 0)
    cache = EmbeddingCache(tmp_path)
    cache.save(key, ["a", "b"], np.ones((2, 4)))
    cache.save(key, ["c", "d", "e"], np.ones((3, 4)))
    cache.save(key, ["f"], np.ones((1, 7)))
    with pytest.warns(UserWarning, match="inconsistent"):
        rows = cache.load(key, list("abcdef"))
    assert sorted(rows) == list("abcde")


def test_rows_are_checked_before_they_are_cached(tmp_path):
    items = tiny_items(4)
    with pytest.raises(BadEmbeddingsError, match="model counting: text and video widths differ: .*width 16.*width 8"):
        _run(Counting(video_width=8), items, tmp_path)       # texts 16 wide, videos 8
    cached_modalities = {p.relative_to(tmp_path).parts[3] for p in _parts(tmp_path)}
    assert cached_modalities == {"text"}                      # no video row was written
    fixed = Counting()
    _run(fixed, items, tmp_path)
    assert fixed.videos == 4 * 3 and fixed.texts == 0
    with pytest.raises(BadEmbeddingsError, match="width 0"):
        _run(Counting(video_width=0), items, tmp_path / "zero")
    assert not [p for p in _parts(tmp_path / "zero") if "video" in p.parts]
    for bad, message in [(np.full((2, 3), np.nan), "NaN"), (np.ones((2, 0)), "width 0"),
                         (np.ones((3, 3)), "expected 2 rows"), (np.ones((2, 5)), "width 5")]:
        with pytest.raises(BadEmbeddingsError, match=message):
            check_rows(bad, 2, 3, "m")
    with pytest.raises(BadEmbeddingsError):
        EmbeddingCache(tmp_path).save(CacheKey("m", "d", "text", "clean", None, 0), ["a"], np.ones((1, 0)))


def test_writes_are_atomic_and_stale_temporaries_are_cleaned(tmp_path, monkeypatch):
    key = CacheKey("m", "d", "video", "clean", None, 0)
    cache = EmbeddingCache(tmp_path)
    cache.save(key, ["a"], np.ones((1, 3)))
    folder = key.folder(tmp_path)
    stale, fresh = folder / ".part-dead.npz.1.tmp", folder / ".part-live.npz.2.tmp"
    stale.write_bytes(b"x")
    fresh.write_bytes(b"x")
    old = time.time() - 2 * cache_mod.STALE_TMP_S
    os.utime(stale, (old, old))
    assert list(cache.load(key, ["a"])) == ["a"]
    assert not stale.exists() and fresh.exists()              # a live writer's file is left alone
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    cache.save(key, ["b"], np.ones((1, 3)))
    assert synced                                             # fsynced before the rename


def _swap_keeping_stat(path, content: bytes) -> None:
    """Rewrite ``path`` with same-size ``content`` and put its old mtime back (as ``touch -r`` does)."""
    st = path.stat()
    assert len(content) == st.st_size
    path.write_bytes(content)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_checkpoint_fingerprint_follows_content_under_an_unchanged_size_and_mtime(tmp_path):
    (tmp_path / "config.json").write_text('{"a": 1}')
    weights = tmp_path / "model.safetensors"
    body = np.random.default_rng(0).integers(0, 256, 5 << 20, dtype=np.uint8).tobytes()   # 5 MiB: sampled
    header = b"\x02\x00\x00\x00\x00\x00\x00\x00{}"
    weights.write_bytes(header + body)
    first = checkpoint_fingerprint(tmp_path)
    assert checkpoint_fingerprint(tmp_path) == first                  # deterministic
    assert not list(tmp_path.glob(".*"))                              # nothing written beside the weights
    retrained = np.frombuffer(body, np.uint8) ^ 1                     # every byte changed, same size
    _swap_keeping_stat(weights, header + retrained.tobytes())
    second = checkpoint_fingerprint(tmp_path)
    assert second != first
    _swap_keeping_stat(tmp_path / "config.json", b'{"a": 2}')
    assert checkpoint_fingerprint(tmp_path) not in (first, second)


def test_video_identity_sees_a_middle_change_under_an_unchanged_size_and_mtime(tmp_path):
    from perturb import fingerprint as fp_mod
    video = tmp_path / "v.mp4"
    data = bytearray(np.random.default_rng(1).integers(0, 256, 3 << 20, dtype=np.uint8).tobytes())   # hashed whole
    video.write_bytes(bytes(data))
    first = file_identity(video)
    middle = len(data) // 2
    data[middle - 4096:middle + 4096] = bytes(8192)                   # 8 KiB in the middle, nothing at the ends
    _swap_keeping_stat(video, bytes(data))
    fp_mod._FILE_MEMO.clear()                                         # a later process: no memo
    assert file_identity(video) != first
    big = tmp_path / "big.mp4"                                        # past 16 MiB: blocks over the whole file
    big.write_bytes(bytes(20 << 20))
    before, st = file_identity(big), big.stat()
    with open(big, "r+b") as f:
        f.seek(10 << 20)
        f.write(b"\x01" * (64 << 10))                                # 64 KiB in the middle
    os.utime(big, ns=(st.st_atime_ns, st.st_mtime_ns))
    fp_mod._FILE_MEMO.clear()
    assert file_identity(big) != before


def test_unversioned_callable_gets_a_notice_once_and_cache_key_pins_it(tmp_path, capsys):
    class Plain(Counting):
        pass

    def plain():
        m = Plain()
        m.cache_version = None
        m.id = "plain-model"
        return m
    items = tiny_items(3)
    _run(plain(), items, tmp_path)
    _run(plain(), items, tmp_path)
    assert capsys.readouterr().err.count("keyed by its name only") == 1
    pinned = plain()
    _run(pinned, items, tmp_path, cache_key="v2")
    assert pinned.videos == 3 * 3                              # another key: recomputed
    again = plain()
    _run(again, items, tmp_path, cache_key="v2")
    assert again.videos == 0
    assert "keyed by its name only" not in capsys.readouterr().err


# --- the command line -------------------------------------------------------------------------

@pytest.fixture()
def dataset(tmp_path):
    return write_tiny_dataset(tmp_path / "ds")


BENCH = ["--video-perturbations", "translate", "--severities", "1", "--text-perturbations", "none",
         "--bootstrap", "0", "--no-progress", "--size", "32", "--batch-size", "2"]


def test_cache_ls_rm_and_prune(dataset, tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out), *BENCH]) == 0
    capsys.readouterr()
    cache = out / "cache"
    monkeypatch.setattr(cache_cli, "to_terminal", lambda: True)
    assert main(["cache", "ls", str(cache)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert len(listing) == 4                                  # video clean, video translate@1, text clean
    assert sum("toy:8" in line and "4 rows" in line for line in listing) == 2
    assert any("8 rows" in line and " text clean" in line for line in listing)
    assert listing[-1].endswith(f"in 3 entries under {cache}")
    monkeypatch.undo()
    assert main(["cache", "ls", str(cache)]) == 0             # piped: plain rows, the total on stderr
    captured = capsys.readouterr()
    rows = [line.split("\t") for line in captured.out.splitlines()]
    assert [len(r) for r in rows] == [len(cache_cli.PLAIN_FIELDS)] * 3
    fields = [dict(zip(cache_cli.PLAIN_FIELDS, r)) for r in rows]
    assert sorted((f["modality"], f["perturbation"], f["severity"], f["rows"]) for f in fields) == \
        [("text", "clean", "", "8"), ("video", "clean", "", "4"), ("video", "translate", "1", "4")]
    assert all(f["model"] == "toy:8" and int(f["bytes"]) > 0 and f["damaged"] == "0" for f in fields)
    assert captured.err.strip().endswith(f"in 3 entries under {cache}")
    spec = REGISTRY.get("translate", "video")
    monkeypatch.setitem(REGISTRY._specs, "translate", dataclasses.replace(spec, version=spec.version + 1))
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out), *BENCH]) == 0
    victim = next(p for p in _parts(cache) if any(x.startswith("clean-") for x in p.parts))
    victim.write_bytes(b"broken")
    capsys.readouterr()
    assert main(["cache", "prune", str(cache)]) == 0
    assert "removed 1 entries, 1 damaged parts" in capsys.readouterr().out   # the old translate version
    assert not victim.exists()
    assert main(["cache", "rm", str(cache)]) == 2                          # no filter: refused
    assert main(["cache", "rm", str(cache), "--perturbation", "translate"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert main(["cache", "ls", str(cache)]) == 0
    assert "translate" not in capsys.readouterr().out
    assert main(["cache", "ls", str(tmp_path / "nowhere")]) == 2


def test_bad_out_exits_2(dataset, tmp_path, capsys, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, message in [(afile, "is a file"), (afile / "sub", "is under")]:
        assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out), *BENCH]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    from perturb.bench import cli as bench_cli

    def read_only(path, data):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))
    monkeypatch.setattr(bench_cli, "write_atomic", read_only)
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(tmp_path / "ro"), *BENCH]) == 2
    assert "is not writable (Permission denied)" in capsys.readouterr().err


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_read_only_out_exits_2(dataset, tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(ro), *BENCH]) == 2
    finally:
        ro.chmod(0o755)
    assert "not writable" in capsys.readouterr().err


def test_failing_model_ends_in_one_line_and_resumes(dataset, tmp_path, capsys, monkeypatch):
    (tmp_path / "flaky_model.py").write_text(
        "from perturb.bench.adapters.toy import ToyEncoder\n"
        "class Flaky(ToyEncoder):\n"
        "    budget = 1\n"
        "    calls = []\n"
        "    def __init__(self):\n"
        "        super().__init__(8)\n"
        "    def encode_videos(self, clips):\n"
        "        Flaky.calls.append(len(clips))\n"
        "        if len(Flaky.calls) > Flaky.budget:\n"
        "            raise RuntimeError('out of GPU memory')\n"
        "        return super().encode_videos(clips)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import flaky_model
    out = tmp_path / "run"
    argv = ["bench", "--model", "callable:flaky_model:Flaky", "--dataset", str(dataset), "--out", str(out), *BENCH]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("perturb bench: error: model callable:flaky_model:Flaky failed: "
                                               "RuntimeError: out of GPU memory")
    assert "finished 1 embedding sets (texts clean), 10 rows newly cached" in err[0]   # 8 texts + 2 videos
    assert "re-run the same command to resume" in err[0]
    flaky_model.Flaky.budget, flaky_model.Flaky.calls = 100, []
    assert main(argv) == 0
    assert flaky_model.Flaky.calls == [2, 2, 2]               # the first batch came from the cache
    flaky_model.Flaky.budget, flaky_model.Flaky.calls = 0, []
    with pytest.raises(RuntimeError, match="out of GPU memory"):
        main([*argv[:-len(BENCH)], "--out", str(tmp_path / "fresh"), *BENCH, "--debug"])


def test_disk_full_says_so(dataset, tmp_path, capsys, monkeypatch):
    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))
    monkeypatch.setattr(cache_mod, "write_atomic", full)
    out = tmp_path / "run"
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out), *BENCH]) == 1
    err = capsys.readouterr().err
    assert "perturb bench: error: disk full (no space left on device) writing " in err
    assert str(out / "cache") in err and "Traceback" not in err


def test_every_bench_output_is_written_atomically(dataset, tmp_path, monkeypatch):
    from perturb import fileio
    written = []
    real = fileio.write_atomic

    def spy(path, data):
        written.append(os.path.basename(path))
        return real(path, data)
    for module in ("perturb.results", "perturb.bench.reporting.report"):
        monkeypatch.setattr(f"{module}.write_atomic", spy)
    out = tmp_path / "run"
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out), *BENCH]) == 0
    assert {"results.json", "results.csv", "report.md", "report.html"} <= set(written)
    assert not list(out.glob(".*tmp"))


def test_rebuilt_clip_of_a_built_directory_is_encoded_again(dataset, tmp_path):
    import shutil

    from perturb.bench.pipeline.built import Built
    from perturb.dataset import BuildOptions, build
    from perturb.dataset.readers import read_dataset

    built = tmp_path / "built"
    assert build(str(dataset), built, video_perturbations=["translate"], severities=[1],
                 text_perturbations=[], options=BuildOptions(jobs=1, progress=False)).ok
    data = make_data(read_dataset(str(dataset)), "captions", str(dataset))

    def run():
        model = Counting()
        benchmark(model, data,
                  BenchOptions(bootstrap=0, source=Built(built), cache_dir=str(tmp_path / "cache"), settings=QUIET),
                  video=["translate"], severities=[1], text=[])
        return model.videos
    assert run() == 8 and run() == 0
    outputs = sorted(p for p in built.rglob("*") if p.is_file() and "translate" in p.parts)
    assert len(outputs) == 4
    shutil.copyfile(outputs[1], outputs[0])                   # one clip rebuilt differently
    assert run() == 1


def test_model_version_of_paths_hub_names_and_unknown_names(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from perturb.fingerprint import model_version
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "config.json").write_text("{}")
    assert model_version(str(tmp_path / "ckpt")).startswith("ckpt:")
    refs = tmp_path / "hub" / "models--org--tiny" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text("0123abcd\n")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert model_version("org/tiny") == "rev:0123abcd"
    assert model_version("org/not-cached") == "name:org/not-cached"


def test_bad_timeout_exits_2(dataset, tmp_path, capsys):
    assert main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(tmp_path / "o"),
                 *BENCH, "--timeout", "0"]) == 2
    assert "--timeout must be > 0" in capsys.readouterr().err
