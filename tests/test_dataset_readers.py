"""Readers: MSR-VTT JSON and JSFUSION CSV, YouCook2 segments, generic CSV/JSONL, inference."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import datasets as ds  # noqa: E402

from perturb.dataset import read_dataset, read_generic  # noqa: E402
from perturb.dataset.readers import DatasetFormatError, infer_reader  # noqa: E402


@pytest.fixture(scope="module")
def msrvtt(tmp_path_factory):
    return ds.msrvtt_dataset(tmp_path_factory.mktemp("msrvtt"), n=3, frames=4)


def test_msrvtt_json_folder_gives_items_with_all_captions(msrvtt):
    items = read_dataset(msrvtt)
    assert [it.item_id for it in items] == ["video0", "video1", "video2"]
    assert items[1].captions == (ds.CAPTIONS[1], ds.CAPTIONS[2])
    assert items[0].video_path == str(msrvtt / "videos" / "all" / "video0.mp4")
    assert Path(items[0].video_path).is_file()
    assert items[0].start is None and items[0].meta["split"] == "test"


def test_msrvtt_jsfusion_csv(msrvtt):
    path = msrvtt / "MSRVTT_JSFUSION_test.csv"
    assert infer_reader(path) == "msrvtt"
    items = read_dataset(path)
    assert [(it.video_id, it.captions) for it in items] == [
        (f"video{i}", (ds.CAPTIONS[i],)) for i in range(3)]
    assert items[2].meta == {"key": "ret2", "vid_key": "msr2"}
    assert Path(items[2].video_path).is_file()


def test_youcook2_segments(tmp_path):
    root = ds.youcook2_dataset(tmp_path, n=2, seconds=1.0)
    assert infer_reader(root) == "youcook2"
    items = read_dataset(root)
    assert [it.item_id for it in items] == ["yc0abcdEFG_0", "yc0abcdEFG_1", "yc1abcdEFG_0", "yc1abcdEFG_1"]
    seg = items[1]
    assert (seg.start, seg.end, seg.video_id, seg.group) == (1.0, 2.5, "yc0abcdEFG", "yc0abcdEFG")
    assert seg.captions == (ds.CAPTIONS[1],)
    assert Path(seg.video_path).is_file() and "validation/113" in seg.video_path


def test_generic_csv_and_jsonl_give_the_same_stream(tmp_path):
    csv_items = read_dataset(ds.generic_dataset(tmp_path / "a", n=2, frames=4))
    jsonl_items = read_dataset(ds.generic_dataset(tmp_path / "b", n=2, frames=4, jsonl=True))
    strip = [(i.item_id, i.captions, Path(i.video_path).name) for i in csv_items]
    assert strip == [(i.item_id, i.captions, Path(i.video_path).name) for i in jsonl_items]
    assert csv_items[0].captions == (ds.CAPTIONS[0], ds.CAPTIONS[1])
    assert Path(csv_items[0].video_path).is_file()     # relative path resolved against the file


def test_generic_segments_and_missing_files(tmp_path):
    path = tmp_path / "caps.csv"
    path.write_text("video_id,video_path,caption,start,end\n"
                    "v1,/nowhere/v1.mp4,a cat sleeps,0,2.5\n"
                    "v1,/nowhere/v1.mp4,a cat naps,0,2.5\n"
                    "v1,/nowhere/v1.mp4,a cat wakes,2.5,4\n")
    items = read_generic(path)
    assert [(i.item_id, i.start, i.end, len(i.captions)) for i in items] == [
        ("v1_0-2.5", 0.0, 2.5, 2), ("v1_2.5-4", 2.5, 4.0, 1)]
    assert items[0].video_path == "/nowhere/v1.mp4"      # kept: a missing video fails at build time


def test_caption_only_file_without_video_path(tmp_path):
    path = tmp_path / "caps.jsonl"
    path.write_text('{"video_id": "a", "caption": "x y"}\n{"video_id": "a", "caption": "z"}\n')
    (item,) = read_generic(path)
    assert item.captions == ("x y", "z") and item.video_path == ""


def test_clear_errors(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text\n1,hello\n")
    with pytest.raises(DatasetFormatError, match="missing column.*video_id"):
        read_dataset(bad)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_dataset(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text('{"foo": 1}')
    with pytest.raises(DatasetFormatError, match="cannot tell the dataset type"):
        read_dataset(tmp_path / "x.json")
    with pytest.raises(ValueError, match="unknown reader"):
        read_dataset(bad, reader="kinetics")
