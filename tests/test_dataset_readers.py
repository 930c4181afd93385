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
    with pytest.raises(DatasetFormatError, match=r"bad.csv:1: the header lacks column\(s\) 'video_id', 'caption'"):
        read_dataset(bad)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_dataset(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text('{"foo": 1}')
    with pytest.raises(DatasetFormatError, match="cannot tell the dataset type"):
        read_dataset(tmp_path / "x.json")
    with pytest.raises(ValueError, match="unknown reader"):
        read_dataset(bad, reader="kinetics")


def test_several_captions_of_one_video_stay_legal(tmp_path):
    csv_path = tmp_path / "caps.csv"
    csv_path.write_text("video_id,video_path,caption\nv1,a.mp4,a dog runs\nv2,b.mp4,a cat\nv1,a.mp4,a dog plays\n")
    jsonl_path = tmp_path / "caps.jsonl"
    jsonl_path.write_text('{"video_id": 7, "video_path": "a.mp4", "caption": "a dog runs"}\n\n'
                          '{"video_id": 7, "video_path": "a.mp4", "caption": "a dog plays"}\n')
    assert [(i.item_id, i.captions) for i in read_generic(csv_path)] == [
        ("v1", ("a dog runs", "a dog plays")), ("v2", ("a cat",))]
    (item,) = read_generic(jsonl_path)
    assert (item.item_id, item.video_path, item.captions) == ("7", str(tmp_path / "a.mp4"),
                                                              ("a dog runs", "a dog plays"))


@pytest.mark.parametrize("name, text, words", [
    ("two.csv", "video_id,video_path,caption\nv1,a.mp4,a dog\nv2,c.mp4,x\nv1,b.mp4,a cat\n",
     "two.csv:4: video_id 'v1' names video '{root}/b.mp4', but {root}/two.csv:2 gave it '{root}/a.mp4'; "
     "one video_id must name one video"),
    ("two.jsonl", '{"video_id": "v1", "video_path": "/x/a.mp4", "caption": "a dog", "start": 0, "end": 1}\n'
                  '{"video_id": "v1", "video_path": "/x/b.mp4", "caption": "a cat", "start": 1, "end": 2}\n',
     "two.jsonl:2: video_id 'v1' names video '/x/b.mp4', but {root}/two.jsonl:1 gave it '/x/a.mp4'"),
    ("ids.csv", "item_id,video_id,video_path,caption\nk,v1,a.mp4,a dog\nk,v2,b.mp4,a cat\n",
     "ids.csv:3: item 'k' has video_id 'v2', but {root}/ids.csv:2 gave it 'v1'; rows of one item may "
     "differ only in their caption"),
    ("nocap.jsonl", '{"video_id": "v1", "video_path": "a.mp4", "caption": "a dog"}\n'
                    '{"video_id": "v2", "video_path": "b.mp4"}\n',
     "nocap.jsonl:2: missing column(s) 'caption'; expected video_id, video_path, caption"),
    ("list.jsonl", '{"video_id": "v1", "caption": "a dog"}\n["v2", "b.mp4", "a cat"]\n',
     "list.jsonl:2: expected an object with video_id, video_path, caption; got list"),
    ("null.jsonl", '{"video_id": null, "video_path": "a.mp4", "caption": "a dog"}\n',
     "null.jsonl:1: 'video_id' is null; every row needs a video_id"),
    ("empty.csv", "video_id,video_path,caption\nv1,a.mp4,a dog\n,b.mp4,a cat\n",
     "empty.csv:3: 'video_id' is empty; every row needs a video_id"),
    ("object.jsonl", '{"video_id": {"id": 1}, "caption": "a dog"}\n',
     "object.jsonl:1: 'video_id' must be a string; got {{'id': 1}}"),
    ("number.jsonl", '{"video_id": "v1", "caption": 5}\n', "number.jsonl:1: 'caption' must be a string; got 5"),
    ("half.jsonl", '{"video_id": "v1", "video_path": "a.mp4", "caption": "a dog"}\n'
                   '{"video_id": "v2", "caption": "a cat"}\n',
     "half.jsonl:2: 'video_path' is missing, but {root}/half.jsonl:1 has one; give every row its video or none"),
])
def test_generic_rows_that_contradict_or_lack_fields_name_file_row_and_column(tmp_path, name, text, words):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DatasetFormatError) as info:
        read_dataset(path)
    assert str(info.value).startswith(f"{path.parent}/{words.format(root=tmp_path)}")


def test_msrvtt_and_youcook2_entries_that_are_malformed_or_contradict(tmp_path):
    import json

    msr = tmp_path / "MSRVTT_data.json"
    msr.write_text(json.dumps({"videos": [{"video_id": "video0"}],
                               "sentences": [{"video_id": "video0", "caption": "a"}, {"video_id": "video0"}]}))
    with pytest.raises(DatasetFormatError, match=r"MSRVTT_data.json: sentences\[1\]: missing 'caption'$"):
        read_dataset(msr)
    msr.write_text(json.dumps({"videos": [["video0"]], "sentences": []}))
    with pytest.raises(DatasetFormatError, match=r"MSRVTT_data.json: videos\[0\]: expected an object; got list"):
        read_dataset(msr)

    root = ds.youcook2_dataset(tmp_path / "yc", n=1, seconds=1.0)
    (ann,) = root.glob("youcookii_annotations*.json")
    data = json.loads(ann.read_text())
    (entry,) = data["database"].values()
    entry["annotations"][1]["id"] = entry["annotations"][0]["id"]        # one segment id, two segments
    ann.write_text(json.dumps(data))
    with pytest.raises(DatasetFormatError, match=r"annotations\[1\]: item 'yc0abcdEFG_0' has start 1.0, but "
                                                 r".*annotations\[0\] gave it 0.0"):
        read_dataset(root)
    entry["annotations"][1]["segment"] = "late"
    ann.write_text(json.dumps(data))
    with pytest.raises(DatasetFormatError, match=r"annotations\[1\]: 'segment' must be \[start, end\]"):
        read_dataset(root)
