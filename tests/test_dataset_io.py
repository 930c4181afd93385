"""Output formats (lossless, byte-reproducible, streamed) and the append-only manifest."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import datasets as ds  # noqa: E402

from perturb.dataset import encode  # noqa: E402
from perturb.dataset.manifest import Manifest, read_rows  # noqa: E402
from perturb.fileio import sha256_file  # noqa: E402


@pytest.mark.parametrize("name", sorted(encode.FORMATS))
def test_formats_are_lossless_streamed_and_reproducible(tmp_path, name):
    clip = ds.moving_clip(10, 30, 46, seed=3)        # odd-free but not a multiple of 16
    fmt = encode.get_format(name)
    digests = []
    for run in range(2):
        path = tmp_path / f"{run}.{fmt.ext}"
        sink = encode.open_sink(fmt, str(path), 25)
        sink.write(clip[:3])
        sink.write(clip[3:])
        sink.close()
        assert sink.frames_written == 10
        digests.append(sha256_file(path))
        np.testing.assert_array_equal(encode.load(path), clip)
    assert digests[0] == digests[1]
    assert not list(tmp_path.glob("*.raw"))


def test_unknown_format_names_the_choices():
    with pytest.raises(ValueError, match="lossless, x264, npy, npz"):
        encode.get_format("webp")
    assert encode.get_format("ffv1").name == "lossless"


def test_manifest_append_dedup_and_torn_line(tmp_path):
    path = tmp_path / "manifest.jsonl"
    with Manifest(path) as m:
        m.append({"key": "a|x|1", "status": "failed", "error": "boom"})
        m.append({"key": "b|x|1", "status": "ok"})
        m.append({"key": "a|x|1", "status": "ok"})
    with open(path, "ab") as f:                        # what a kill in mid-write could leave
        f.write(b'{"key": "c|x|1", "sta')
    m = Manifest(path)
    assert {k: r["status"] for k, r in m.rows.items()} == {"a|x|1": "ok", "b|x|1": "ok"}
    m.append({"key": "c|x|1", "status": "ok"})
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(x) for x in lines[:-1])
    m.compact(order=["c|x|1", "b|x|1"])
    assert [r["key"] for r in read_rows(path)] == ["c|x|1", "b|x|1", "a|x|1"]
    m.append({"key": "d|x|1", "status": "ok"})        # still appendable after compaction
    m.close()
    assert len(read_rows(path)) == 4
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
