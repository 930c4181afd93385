"""Labelled readers (class folders, path,label CSV/JSONL, Kinetics annotations), class lists, the
mapping of class names onto a model's id2label, and file-name subsets."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import datasets as ds  # noqa: E402

from perturb.dataset import (LabelledItem, keep_subset, label_index, map_labels, read_classes,  # noqa: E402
                             read_labelled)
from perturb.dataset.annotations import DatasetFormatError  # noqa: E402
from perturb.dataset.labelled import infer_labelled_reader  # noqa: E402


def png(path: Path, seed: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.random.default_rng(seed).integers(0, 256, (6, 8, 3), dtype=np.uint8)).save(path)
    return path


def touch(path: Path) -> Path:
    """A file the readers only look up by name (they never open one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def error(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def rows(items: list[LabelledItem], root: Path) -> list[tuple]:
    return [(it.item_id, Path(it.path).relative_to(root).as_posix(), it.label, it.kind, it.start, it.end)
            for it in items]


# ------------------------------------------------------------------------------- class folders
@pytest.fixture
def image_folder(tmp_path):
    root = tmp_path / "val"
    png(root / "n01443537" / "b.png", 1)
    png(root / "n01440764" / "ILSVRC2012_val_00000293.JPEG", 2)
    png(root / "n01440764" / "a.png", 3)
    touch(root / "n01440764" / ".DS_Store")                # hidden entries are skipped
    (root / ".cache").mkdir()
    (root / "LOC_synset_mapping.txt").write_text("n01440764 tench, Tinca tinca\n")   # files at the root too
    return root


def test_class_folders_sorted_classes_and_files(image_folder):
    items = read_labelled(image_folder)
    assert rows(items, image_folder) == [
        ("n01440764/ILSVRC2012_val_00000293.JPEG", "n01440764/ILSVRC2012_val_00000293.JPEG", "n01440764",
         "image", None, None),
        ("n01440764/a.png", "n01440764/a.png", "n01440764", "image", None, None),
        ("n01443537/b.png", "n01443537/b.png", "n01443537", "image", None, None)]


def test_class_folders_of_videos(tmp_path):
    root = tmp_path / "ucf"
    ds.write_video(root / "ApplyEyeMakeup" / "v_ApplyEyeMakeup_g01_c01.mp4", frames=4, height=16, width=16)
    touch(root / "Archery" / "v_Archery_g01_c01.avi")
    items = read_labelled(root, reader="folder")
    assert rows(items, root) == [
        ("ApplyEyeMakeup/v_ApplyEyeMakeup_g01_c01.mp4", "ApplyEyeMakeup/v_ApplyEyeMakeup_g01_c01.mp4",
         "ApplyEyeMakeup", "video", None, None),
        ("Archery/v_Archery_g01_c01.avi", "Archery/v_Archery_g01_c01.avi", "Archery", "video", None, None)]


def test_class_folder_errors(tmp_path):
    png(tmp_path / "a.png")
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(tmp_path / "a.png", reader="folder")
    assert error(e) == f"{tmp_path / 'a.png'}: not a folder; expected root/<class>/<file>"
    (tmp_path / "flat").mkdir()
    png(tmp_path / "flat" / "a.png")
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(tmp_path / "flat")
    assert error(e) == (f"{tmp_path / 'flat'}: no class folders; expected root/<class>/<file> "
                        "(ImageNet's and UCF101's layout)")
    png(tmp_path / "r" / "cat" / "a.png")
    (tmp_path / "r" / "dog").mkdir()
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(tmp_path / "r")
    assert error(e) == (f"{tmp_path / 'r' / 'dog'}: empty class folder; expected an image (.jpg .jpeg .png "
                        ".bmp .webp) or a video (.mp4 .mkv .webm .avi .mov .m4v) in it")
    (tmp_path / "r" / "dog" / "notes.txt").write_text("x")
    with pytest.raises(DatasetFormatError, match=r"dog/notes.txt: expected an image \(.* directly in the class"):
        read_labelled(tmp_path / "r")
    (tmp_path / "r" / "dog" / "notes.txt").unlink()
    png(tmp_path / "r" / "dog" / "nested" / "b.png")
    with pytest.raises(DatasetFormatError, match=r"dog/nested: expected an image .* directly in the class folder$"):
        read_labelled(tmp_path / "r")


# ------------------------------------------------------------------------------ CSV and JSONL
def test_label_csv_paths_segments_and_ids(tmp_path):
    png(tmp_path / "img" / "cat.png")
    csv = tmp_path / "labels.csv"
    csv.write_text("path,label,start,end\nimg/cat.png,cat,,\nclips/a.mp4, dancing ,1.5,4\n"
                   "clips/a.mp4,jumping,4,\n/abs/b.MKV,jumping,,\n")
    items = read_labelled(csv)
    assert [(it.item_id, it.path, it.label, it.kind, it.start, it.end) for it in items] == [
        ("img/cat.png", str(tmp_path / "img" / "cat.png"), "cat", "image", None, None),
        ("clips/a.mp4_1.5-4", str(tmp_path / "clips" / "a.mp4"), "dancing", "video", 1.5, 4.0),
        ("clips/a.mp4_4-end", str(tmp_path / "clips" / "a.mp4"), "jumping", "video", 4.0, None),
        ("/abs/b.MKV", "/abs/b.MKV", "jumping", "video", None, None)]
    moved = read_labelled(csv, videos=tmp_path / "elsewhere")        # relative paths against videos=
    assert moved[0].path == str(tmp_path / "elsewhere" / "img" / "cat.png")


def test_label_jsonl_gives_the_csv_stream(tmp_path):
    (tmp_path / "a.csv").write_text("path,label\nx/1.jpg,cat\nx/2.webm,dog\n")
    (tmp_path / "a.jsonl").write_text('{"path": "x/1.jpg", "label": "cat"}\n\n'
                                      '{"path": "x/2.webm", "label": "dog", "start": null}\n')
    assert infer_labelled_reader(tmp_path / "a.jsonl") == "jsonl"
    assert read_labelled(tmp_path / "a.jsonl") == read_labelled(tmp_path / "a.csv")
    (tmp_path / "ids.jsonl").write_text('{"id": "first", "path": "x/1.jpg", "label": 7}\n')
    [item] = read_labelled(tmp_path / "ids.jsonl")
    assert (item.item_id, item.label) == ("first", "7")


@pytest.mark.parametrize("body, message", [
    ("a.png,cat\n", ":1: the header lacks column(s) 'path', 'label'; expected path, label (got a.png, cat)"),
    ("path,label\na.png,\n", ":2: 'label' is empty; every row needs a label"),
    ("path,label\na.png,  \n", ":2: 'label' is empty; every row needs a label"),
    ("path,label\n,cat\n", ":2: 'path' must be a file path; got ''"),
    ("path,label\nnotes.txt,cat\n", ":2: 'notes.txt' is neither; expected an image (.jpg .jpeg .png .bmp .webp) "
                                   "or a video (.mp4 .mkv .webm .avi .mov .m4v)"),
    ("path,label,start,end\nv.mp4,cat,4,4\n", ":2: end (4) must be after start (4); expected 0 <= start < end"),
    ("path,label,start,end\nv.mp4,cat,x,4\n", ":2: start must be a finite number of seconds >= 0; got 'x'"),
    ("path,label,start,end\na.png,cat,0,1\n", ":2: 'a.png' is an image; start/end only apply to a video"),
    ("path,label\na.png,cat\nb.png,dog\na.png,dog\n", ":4: item 'a.png' appears twice (first at {f}:2); "
                                                      "expected each file (and segment) once"),
    ("path,label\na.png,cat,extra\n", ": line 2 has 3 values for 2 header columns"),
    ("path,label\n", ": no rows"),
])
def test_label_csv_errors(tmp_path, body, message):
    f = tmp_path / "labels.csv"
    f.write_text(body)
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(f)
    assert error(e) == f"{f}" + message.format(f=f)


@pytest.mark.parametrize("line, message", [
    ('["a.png", "cat"]', ":1: expected an object with path, label[, start, end]; got list ['a.png', 'cat']"),
    ('{"path": "a.png"}', ":1: missing 'label'; expected path, label[, start, end]"),
    ('{"path": 3, "label": "cat"}', ":1: 'path' must be a file path; got 3"),
    ('{"path": "a.png", "label": null}', ":1: 'label' is null; every row needs a label"),
    ('{"path": "a.png", "label": ["cat"]}', ":1: 'label' must be a string; got ['cat']"),
    ('{"path": "v.mp4", "label": "cat", "end": -1}', ":1: end must be a finite number of seconds >= 0; got -1"),
    ('{"path": "a.png", "label": "cat"', ": line 1 is not valid JSON (Expecting ',' delimiter)"),
])
def test_label_jsonl_errors(tmp_path, line, message):
    f = tmp_path / "labels.jsonl"
    f.write_text(line + "\n")
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(f)
    assert error(e) == f"{f}{message}"


# ---------------------------------------------------------------------------------- Kinetics
KINETICS = ("label,youtube_id,time_start,time_end,split\n"
            "abseiling,--07WQ2iBlw,1,11,val\n"
            "air drumming,-0Y1rFRNsVE,20,30,val\n"
            "abseiling,0aBcD_eFgHi,5,15,val\n")


def test_kinetics_finds_trimmed_and_full_videos(tmp_path):
    (tmp_path / "val.csv").write_text(KINETICS)
    videos = tmp_path / "videos"
    ds.write_video(videos / "abseiling" / "--07WQ2iBlw_000001_000011.mp4", frames=4, height=16, width=16)
    touch(videos / "air_drumming" / "-0Y1rFRNsVE_000020_000030.mkv")
    touch(videos / "0aBcD_eFgHi.mp4")                       # the full video: the item is the row's segment
    items = read_labelled(tmp_path / "val.csv")
    assert infer_labelled_reader(tmp_path / "val.csv") == "kinetics"
    assert rows(items, videos) == [
        ("--07WQ2iBlw_000001_000011", "abseiling/--07WQ2iBlw_000001_000011.mp4", "abseiling", "video", None, None),
        ("-0Y1rFRNsVE_000020_000030", "air_drumming/-0Y1rFRNsVE_000020_000030.mkv", "air drumming", "video",
         None, None),
        ("0aBcD_eFgHi_000005_000015", "0aBcD_eFgHi.mp4", "abseiling", "video", 5.0, 15.0)]
    assert items[2].meta == {"youtube_id": "0aBcD_eFgHi", "split": "val", "time_start": 5.0, "time_end": 15.0}


def test_kinetics_videos_folder_beside_the_annotations(tmp_path):
    """The download scripts' tree: k400/annotations/val.csv beside k400/val/<clip>.mp4."""
    (tmp_path / "annotations").mkdir()
    (tmp_path / "annotations" / "val.csv").write_text(KINETICS)
    for name in ("--07WQ2iBlw_000001_000011", "-0Y1rFRNsVE_000020_000030", "0aBcD_eFgHi_000005_000015"):
        touch(tmp_path / "val" / f"{name}.mp4")
    touch(tmp_path / "train" / "0aBcD_eFgHi.mp4")           # another split's folder is not searched
    items = read_labelled(tmp_path / "annotations" / "val.csv")
    assert [(it.item_id, Path(it.path).parent.name, it.start) for it in items] == [
        ("--07WQ2iBlw_000001_000011", "val", None), ("-0Y1rFRNsVE_000020_000030", "val", None),
        ("0aBcD_eFgHi_000005_000015", "val", None)]


def test_kinetics_missing_videos_error_or_skip_with_a_note(tmp_path):
    f = tmp_path / "val.csv"
    f.write_text(KINETICS)
    touch(tmp_path / "videos" / "--07WQ2iBlw_000001_000011.mp4")
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(f)
    said = (f"{f}: 2 of 3 rows have no video under {tmp_path / 'videos'} (looked for <youtube_id>_<start:06d>_"
            "<end:06d> or <youtube_id>, .mp4/.mkv/.webm/.avi/.mov/.m4v): line 3 (-0Y1rFRNsVE_000020_000030), "
            "line 4 (0aBcD_eFgHi_000005_000015)")
    assert error(e) == said + "; pass missing='skip' to leave them out"
    notes: list[str] = []
    items = read_labelled(f, missing="skip", note=notes.append)
    assert [it.item_id for it in items] == ["--07WQ2iBlw_000001_000011"]
    assert notes == [said.replace("rows have", "rows are left out: they have")]
    with pytest.warns(UserWarning, match="2 of 3 rows are left out"):
        read_labelled(f, missing="skip")
    (tmp_path / "videos" / "--07WQ2iBlw_000001_000011.mp4").unlink()
    with pytest.raises(DatasetFormatError, match=r"3 of 3 rows have no video .*; no row has its video$"):
        read_labelled(f, missing="skip")


def test_kinetics_lists_the_first_five_missing(tmp_path):
    f = tmp_path / "k.csv"
    f.write_text("label,youtube_id,time_start,time_end,split\n"
                 + "".join(f"x,id{i},0,10,test\n" for i in range(7)))
    touch(tmp_path / "id6_000000_000010.mp4")
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(f, videos=tmp_path)
    assert error(e).endswith(": line 2 (id0_000000_000010), line 3 (id1_000000_000010), line 4 (id2_000000_000010), "
                             "line 5 (id3_000000_000010), line 6 (id4_000000_000010), ...; pass missing='skip' "
                             "to leave them out")
    assert "6 of 7 rows" in error(e)


@pytest.mark.parametrize("row, message", [
    ("abseiling,abc,,10,val", ":2: time_start and time_end are required; got '', '10'"),
    ("abseiling,abc,10,5,val", ":2: end (5) must be after start (10); expected 0 <= start < end"),
    (",abc,0,10,val", ":2: 'label' is empty; every row needs a label"),
    ("abseiling,,0,10,val", ":2: 'youtube_id' is empty; every row needs a youtube_id"),
])
def test_kinetics_row_errors(tmp_path, row, message):
    f = tmp_path / "k.csv"
    f.write_text(f"label,youtube_id,time_start,time_end,split\n{row}\n")
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(f)
    assert error(e) == f"{f}{message}"


def test_kinetics_two_copies_and_missing_folder(tmp_path):
    f = tmp_path / "k.csv"
    f.write_text("label,youtube_id,time_start,time_end,split\nabseiling,abc,0,10,val\n")
    touch(tmp_path / "videos" / "a" / "abc_000000_000010.mp4")
    touch(tmp_path / "videos" / "b" / "abc_000000_000010.mp4")
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(f)
    videos = tmp_path / "videos"
    assert error(e) == (f"{f}:2: video 'abc_000000_000010' is found 2 times ({videos}/a/abc_000000_000010.mp4, "
                        f"{videos}/b/abc_000000_000010.mp4); expected one copy")
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(f, videos=tmp_path / "nope")
    assert error(e) == (f"videos folder {str(tmp_path / 'nope')!r} does not exist; expected the folder holding "
                        "the Kinetics clips")
    (tmp_path / "k2.csv").write_text("label,youtube_id,time_start,time_end,split\nabseiling,abc,0.5,10,val\n")
    touch(tmp_path / "videos" / "abc.mp4")                  # a fractional start: only the full video fits
    [item] = read_labelled(tmp_path / "k2.csv")
    assert (item.item_id, Path(item.path).name, item.start, item.end) == ("abc_0.5-10", "abc.mp4", 0.5, 10.0)


# --------------------------------------------------------------------------------- dispatch
def test_reader_inference_and_dispatch_errors(tmp_path, image_folder):
    assert infer_labelled_reader(image_folder) == "folder"
    (tmp_path / "l.csv").write_text("path,label\na.png,cat\n")
    assert infer_labelled_reader(tmp_path / "l.csv") == "csv"
    with pytest.raises(ValueError) as e:
        read_labelled(tmp_path / "l.csv", reader="imagenet")
    assert error(e) == "unknown labelled reader 'imagenet'; expected one of folder, csv, jsonl, kinetics"
    (tmp_path / "l.txt").write_text("a.png cat\n")
    with pytest.raises(DatasetFormatError) as e:
        read_labelled(tmp_path / "l.txt")
    assert error(e) == (f"{tmp_path / 'l.txt'}: cannot tell the labelled dataset type; expected a class folder, "
                        "a .csv or a .jsonl, or pass reader= (folder|csv|jsonl|kinetics)")
    with pytest.raises(FileNotFoundError, match="dataset path '.*nope' does not exist"):
        read_labelled(tmp_path / "nope")
    with pytest.raises(ValueError, match="^the folder reader takes no videos folder"):
        read_labelled(image_folder, videos=tmp_path)
    with pytest.raises(ValueError, match=r"^missing='skip' applies to the kinetics reader only, not 'csv'$"):
        read_labelled(tmp_path / "l.csv", missing="skip")
    with pytest.raises(ValueError, match=r"^missing='ignore'; expected one of error, skip$"):
        read_labelled(tmp_path / "l.csv", missing="ignore")


# ---------------------------------------------------------------------------------- classes
def test_read_classes_and_its_errors(tmp_path):
    f = tmp_path / "classes.txt"
    f.write_text("\ufefftench\n  goldfish \ngreat white shark\n")
    assert read_classes(f) == ["tench", "goldfish", "great white shark"]
    for body, message in (("a\n\nb\n", ":2: blank line; expected one class name a line"),
                          (b"a\n\xff\n", ": not UTF-8 text (invalid start byte at byte 2); expected a UTF-8 file"),
                          ("a\nb\na\n", ":3: class 'a' is given twice (first on line 1); expected each class once"),
                          ("", ": no classes; expected one class name a line")):
        f.write_bytes(body) if isinstance(body, bytes) else f.write_text(body)
        with pytest.raises(DatasetFormatError) as e:
            read_classes(f)
        assert error(e) == f"{f}{message}"


# hf's ImageNet id2label writes several names a label; it has two "crane" (134 and 517)
IMAGENET_ID2LABEL = {"0": "tench, Tinca tinca", "1": "goldfish, Carassius auratus",
                     "2": "great white shark, white shark", "3": "crane", "4": "crane"}


def items_of(*labels: str) -> list[LabelledItem]:
    return [LabelledItem(f"{label}/{i}.png", f"/d/{label}/{i}.png", label, "image") for i, label in enumerate(labels)]


def test_map_labels_exact_then_loose_then_first_name():
    model = {0: "abseiling", 1: "air drumming", 2: "Answering Questions", 3: "tench, Tinca tinca"}
    assert map_labels(items_of("air_drumming", "abseiling", "answering  questions", "TENCH", "air drumming"),
                      model) == [1, 0, 2, 3, 1]
    assert map_labels(items_of("goldfish", "tench, Tinca tinca", "great_white_shark"), IMAGENET_ID2LABEL) == [1, 0, 2]
    assert map_labels(items_of("b", "a"), ["a", "b"]) == [1, 0]             # a class list in label order
    assert label_index(["x, y"], ["x"]) == {"x, y": 0}                    # a dataset's own synonyms too
    assert label_index(["Crane"], {0: "crane", 1: "Crane"}) == {"Crane": 1}  # exact wins over loose


def test_map_labels_errors():
    with pytest.raises(ValueError) as e:
        map_labels(items_of("crane"), IMAGENET_ID2LABEL)
    assert error(e) == ("dataset class 'crane' matches 2 of the model's labels: 3 ('crane'), 4 ('crane'); "
                        "pass a classes file to name each label once")
    with pytest.raises(ValueError) as e:
        map_labels(items_of("tench", "a", "b", "c", "d", "e", "f", "a"), IMAGENET_ID2LABEL)
    assert error(e) == ("6 of 7 dataset classes do not map onto the model's labels (5): 'a', 'b', 'c', 'd', 'e', "
                        "... (matching is exact, then ignoring case, spaces and underscores, then by a label's "
                        "first comma-separated name)")
    with pytest.raises(ValueError) as e:
        map_labels(items_of("n01440764", "n01443537"), IMAGENET_ID2LABEL)
    assert error(e).endswith("(5): 'n01440764', 'n01443537' (matching is exact, then ignoring case, spaces and "
                             "underscores, then by a label's first comma-separated name); they look like ImageNet "
                             "wnids: pass a classes file listing the wnids in the model's label order")
    with pytest.raises(ValueError, match=r"^id2label keys must be label indices; got tench$"):
        map_labels(items_of("tench"), {"tench": "0"})
    with pytest.raises(ValueError, match=r"^the model has no labels"):
        map_labels(items_of("tench"), {})


def test_wnid_folders_map_by_position_through_a_classes_file(tmp_path, image_folder):
    items = read_labelled(image_folder)
    synsets = tmp_path / "LOC_synset_mapping.txt"                         # ImageNet's own file
    synsets.write_text("n01440764 tench, Tinca tinca\nn01443537 goldfish, Carassius auratus\n"
                       "n01484850 great white shark\nn02012849 crane\nn03126707 crane\n")
    assert map_labels(items, IMAGENET_ID2LABEL, read_classes(synsets)) == [0, 0, 1]
    wnids = tmp_path / "wnids.txt"
    wnids.write_text("n01443537\nn01440764\nn01484850\nn02012849\nn03126707\n")   # another label order
    assert map_labels(items, IMAGENET_ID2LABEL, read_classes(wnids)) == [1, 1, 0]
    assert map_labels(items, read_classes(wnids)) == [1, 1, 0]          # the classes file as the model's list
    wnids.write_text("n01440764\nn01443537\n")
    with pytest.raises(ValueError) as e:
        map_labels(items, IMAGENET_ID2LABEL, read_classes(wnids))
    assert error(e) == ("the classes file lists 2 classes but the model has 5 labels; expected one line per "
                        "model label, in its order")
    wnids.write_text("n01440764\nn09999999\n")
    with pytest.raises(ValueError) as e:
        map_labels(items, ["tench", "other"], read_classes(wnids))
    assert error(e).startswith("1 of 2 dataset classes do not map onto the classes file (2): 'n01443537' (")


# ---------------------------------------------------------------------------------- subsets
def test_subset_by_relative_path_or_file_name(tmp_path, image_folder):
    items = read_labelled(image_folder)
    keep = tmp_path / "ids.txt"
    keep.write_text("n01443537/b.png\n\nILSVRC2012_val_00000293.JPEG\nval/n01443537/b.png\n")
    assert [it.item_id for it in keep_subset(items, keep)] == [
        "n01440764/ILSVRC2012_val_00000293.JPEG", "n01443537/b.png"]          # dataset order


def test_subset_keeps_every_segment_of_a_named_video(tmp_path):
    (tmp_path / "l.csv").write_text("path,label,start,end\nv/a.mp4,x,0,2\nv/a.mp4,y,2,4\nv/b.mp4,x,,\n")
    (tmp_path / "keep.txt").write_text("a.mp4\n")
    assert [it.item_id for it in keep_subset(read_labelled(tmp_path / "l.csv"), tmp_path / "keep.txt")] == [
        "v/a.mp4_0-2", "v/a.mp4_2-4"]


def test_subset_errors(tmp_path, image_folder):
    items = read_labelled(image_folder)
    keep = tmp_path / "ids.txt"
    keep.write_text("n01440764/a.png\nn01440764/b.png\nzzz.png\n")
    with pytest.raises(DatasetFormatError) as e:
        keep_subset(items, keep)
    said = f"{keep}: 2 of 3 names are not files of the dataset: line 2 (n01440764/b.png), line 3 (zzz.png)"
    assert error(e) == said + "; pass missing='skip' to keep the 1 found"
    notes: list[str] = []
    assert [it.item_id for it in keep_subset(items, keep, missing="skip", note=notes.append)] == ["n01440764/a.png"]
    assert notes == [said.replace("names are not", "names are left out: they are not")]
    keep.write_text("x.png\ny.png\n")
    with pytest.raises(DatasetFormatError) as e:
        keep_subset(items, keep, missing="skip")
    assert error(e) == (f"{keep}: none of its 2 names is a file of the dataset (3 items): line 1 (x.png), line 2 "
                        "(y.png); expected relative paths or file names such as "
                        "'n01440764/ILSVRC2012_val_00000293.JPEG'")
    keep.write_text("\n  \n")
    with pytest.raises(DatasetFormatError) as e:
        keep_subset(items, keep)
    assert error(e) == f"{keep}: no file names; expected one relative path or file name a line"
    png(image_folder / "n01443537" / "a.png")
    keep.write_text("a.png\n")
    with pytest.raises(DatasetFormatError) as e:
        keep_subset(read_labelled(image_folder), keep)
    assert re.fullmatch(rf"{re.escape(str(keep))}:1: 'a.png' names 2 files \(.*n01440764/a.png, .*n01443537/a.png\); "
                        "expected a path that names one", error(e))


def test_kinetics_labels_map_onto_an_hf_id2label(tmp_path):
    """End to end at this layer: a Kinetics CSV, a subset, then the model's label indices."""
    (tmp_path / "val.csv").write_text(KINETICS)
    for name in ("--07WQ2iBlw_000001_000011", "-0Y1rFRNsVE_000020_000030", "0aBcD_eFgHi_000005_000015"):
        touch(tmp_path / "videos" / f"{name}.mp4")
    (tmp_path / "keep.txt").write_text("-0Y1rFRNsVE_000020_000030.mp4\n0aBcD_eFgHi_000005_000015.mp4\n")
    config = json.loads('{"id2label": {"0": "abseiling", "1": "air drumming", "2": "archery"}}')
    items = keep_subset(read_labelled(tmp_path / "val.csv"), tmp_path / "keep.txt")
    assert map_labels(items, config["id2label"]) == [1, 0]
