"""Regression tests of bad input found by fuzzing: each reproduction exits 2 with one line (or
raises a clear error, or gives the promised output), and no input is lost or dropped in silence.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import perturb
from gate_fixtures import make_results
from perturb.bench.adapters.cache import CacheKey, EmbeddingCache
from bench_fixtures import write_tiny_dataset
from perturb.cli import main
from perturb.contrast.types import TYPES
from perturb.video.sample import sample_clip

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "src" / "perturb" / "assets" / "sample" / "sample.mp4"
BUILD = ["--video-perturbations", "none", "--text-perturbations", "DropFirst", "--no-progress"]
BENCH = ["--video-perturbations", "none", "--text-perturbations", "none", "--bootstrap", "0",
         "--no-progress", "--size", "32"]


def error_line(capsys, command: str) -> str:
    """The one stderr line of a refused command (and nothing on stdout)."""
    out, err = capsys.readouterr()
    assert err.startswith(f"perturb {command}") and ": error: " in err and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def refused(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    return error_line(capsys, argv[0])


@pytest.fixture()
def video(tmp_path: Path) -> Path:
    path = tmp_path / "v.mp4"
    shutil.copyfile(SAMPLE, path)
    return path


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    return write_tiny_dataset(tmp_path / "ds")


def write(path: Path, text: str | bytes) -> str:
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return str(path)


# --- outputs aimed at inputs (1, 6, 21) -------------------------------------------------------

def test_apply_never_writes_over_its_input(capsys, video, tmp_path, monkeypatch):
    before = video.read_bytes()
    (tmp_path / "link.mp4").symlink_to(video)
    monkeypatch.chdir(tmp_path)
    for out in ("v.mp4", "./v.mp4", "link.mp4", str(video)):
        assert "is the input" in refused(capsys, "apply", "v.mp4", out, "--name", "jpeg", "--severity", "3")
    assert "is the input" in refused(capsys, "gallery", "v.mp4", "link.mp4")
    assert video.read_bytes() == before


def test_outputs_that_are_folders_files_or_under_files(capsys, video, dataset, tmp_path):
    (tmp_path / "dir").mkdir()
    assert "is a directory" in refused(capsys, "apply", str(video), str(tmp_path / "dir"), "--name", "jpeg")
    assert "is a file" in refused(capsys, "build", str(dataset), "--out", str(video), *BUILD)
    assert "which is a file" in refused(capsys, "build", str(dataset), "--out", str(video / "sub"), *BUILD)
    results = write(tmp_path / "r.json", json.dumps(make_results()))
    assert "is a file" in refused(capsys, "report", results, "--out", str(video))
    assert "which is a file" in refused(capsys, "report", results, "--out", str(video / "sub"))
    assert "is the input" in refused(capsys, "build", str(dataset), "--out", str(dataset), *BUILD)
    assert "is the input" in refused(capsys, "check", results, "--min", "gamma_r=0.1", "--junit", results)
    assert "is the input" in refused(capsys, "mc", "--captions", str(dataset), "--out", str(dataset))


def test_a_folder_output_that_would_write_over_its_input(capsys, tmp_path, monkeypatch):
    """``build d/dataset.json --out d`` wrote its own dataset.json over the dataset, and ``bench
    --dataset d/results.csv --out d`` its results.csv over the dataset, both with exit 0."""
    folder = tmp_path / "d"
    folder.mkdir()
    shutil.copyfile(SAMPLE, folder / "video1.mp4")
    msrvtt = folder / "dataset.json"
    write(msrvtt, json.dumps({"videos": [{"video_id": "video1"}],
                              "sentences": [{"video_id": "video1", "caption": "a dog runs"}]}))
    generic = folder / "results.csv"
    write(generic, "video_id,video_path,caption\nvideo1,video1.mp4,a dog runs\nv2,video1.mp4,a cat sits\n")
    before = {p: p.read_bytes() for p in (msrvtt, generic)}
    monkeypatch.chdir(tmp_path)
    for out in ("d", "./d", str(folder)):
        err = refused(capsys, "build", "d/dataset.json", "--out", out, *BUILD)
        assert f"the command writes {os.path.join(out, 'dataset.json')}, which is or holds the input" in err
        err = refused(capsys, "bench", "--model", "toy:8", "--dataset", "d/results.csv", "--out", out, *BENCH)
        assert f"the command writes {os.path.join(out, 'results.csv')}, which is or holds the input" in err
    with pytest.raises(ValueError, match="the build writes d/dataset.json, which is or holds the dataset"):
        perturb.dataset.build("d/dataset.json", "d", video_perturbations="none", text_perturbations="DropFirst",
                              options=perturb.dataset.BuildOptions(progress=False))
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(os.listdir(folder)) == ["dataset.json", "results.csv", "video1.mp4"]


def test_two_outputs_of_one_command_on_one_path(capsys, tmp_path, monkeypatch):
    """``mc --out m.tsv --jsonl ./m.tsv`` wrote the JSONL over the TSV and said "rows written to
    m.tsv" (exit 0); ``check --junit F --markdown F`` kept only the Markdown."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "caps.csv", "video_id,caption\n" + "".join(f"v{i},caption {i}\n" for i in range(8)))
    write(tmp_path / "r.json", json.dumps(make_results()))
    err = refused(capsys, "mc", "--captions", "caps.csv", "--out", "m.tsv", "--jsonl", "./m.tsv")
    assert err == "perturb mc: error: --jsonl ./m.tsv is the --out file m.tsv; expected a path of its own\n"
    for command in (["check", "r.json", "--min", "gamma_r=0.1"], ["compare", "r.json", "r.json"]):
        err = refused(capsys, *command, "--junit", "g.xml", "--markdown", str(tmp_path / "g.xml"))
        assert "--markdown " in err and "is the --junit file g.xml" in err
    assert sorted(os.listdir(tmp_path)) == ["caps.csv", "r.json"]              # nothing written
    assert main(["mc", "--captions", "caps.csv", "--out", "m.tsv", "--jsonl", "m.jsonl"]) == 0
    assert (tmp_path / "m.tsv").read_text().startswith("clip\t")


# --- dataset rows validated in the reader (2, 3, 4, 12, 13, 14, 21) ---------------------------

@pytest.mark.parametrize("limit", ["-1", "0"])
def test_limit_must_be_at_least_one(capsys, dataset, tmp_path, limit):
    err = refused(capsys, "build", str(dataset), "--out", str(tmp_path / "o"), "--limit", limit, *BUILD)
    assert err == (f"perturb build: error: --limit must be an integer >= 1; got {limit} "
                   "(see perturb build --help)\n")
    with pytest.raises(ValueError, match="limit must be an int >= 1"):
        perturb.dataset.BuildOptions(limit=int(limit))


BAD_ROWS = {
    "unterminated quote": ("data.csv", 'video_id,video_path,caption\nv1,v_1.mp4,"unterminated\nv2,v_2.mp4,a dog\n',
                           "expected every quote closed"),
    "missing caption": ("data.csv", "video_id,video_path,caption\nv1,v_1.mp4\nv2,v_2.mp4,a dog\n",
                        "line 2 has 2 values for 3 header columns"),
    "empty caption": ("data.csv", "video_id,video_path,caption\nv1,v_1.mp4,  \n", "'caption' is empty"),
    "empty JSONL caption": ("data.jsonl", '{"video_id": "v1", "video_path": "v.mp4", "caption": ""}\n',
                            "'caption' is empty"),
    "end before start": ("data.csv", "video_id,video_path,caption,start,end\nv1,v.mp4,a man,5,1\n",
                         "end (1) must be after start (5)"),
    "NaN start": ("data.csv", "video_id,video_path,caption,start,end\nv1,v.mp4,a man,NaN,inf\n",
                  "start must be a finite number of seconds >= 0; got 'NaN'"),
    "negative start": ("data.jsonl", '{"video_id": "v1", "caption": "a", "start": -1, "end": 2}\n',
                       "start must be a finite number of seconds >= 0; got -1"),
    "latin-1": ("data.csv", "video_id,video_path,caption\nv1,v.mp4,caf\xe9\n".encode("latin-1"),
                "not UTF-8 text"),
    "a column named twice": ("data.csv", "video_id,video_path,caption,caption\nv1,v.mp4,a dog,a cat\n",
                             "column 'caption' appears 2 times in the header; expected each column once"),
    "text after a closing quote": ("data.csv", 'video_id,video_path,caption\nv1,v.mp4,"a" b\n', "not valid CSV"),
}


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_bad_rows_are_refused_by_build_and_bench(capsys, tmp_path, case):
    name, content, message = BAD_ROWS[case]
    data = write(tmp_path / name, content)
    assert message in refused(capsys, "build", data, "--out", str(tmp_path / "o"), *BUILD)
    assert message in refused(capsys, "bench", "--model", "toy:8", "--dataset", data,
                              "--out", str(tmp_path / "b"), *BENCH, "--no-cache")
    assert not (tmp_path / "o").exists()


def test_a_bom_is_skipped_alike_in_csv_and_jsonl(tmp_path):
    from perturb.dataset.readers import read_generic
    row = {"video_id": "v1", "video_path": "v.mp4", "caption": "a dog runs"}
    csv_file = write(tmp_path / "d.csv", b"\xef\xbb\xbfvideo_id,video_path,caption\nv1,v.mp4,a dog runs\n")
    jsonl_file = write(tmp_path / "d.jsonl", b"\xef\xbb\xbf" + json.dumps(row).encode() + b"\n")
    assert read_generic(csv_file) == read_generic(jsonl_file)
    assert read_generic(jsonl_file)[0].captions == ("a dog runs",)


# --- the subset-render promise and torch zoom_blur (5, 9) -------------------------------------

def test_zoom_blur_one_frame_render_equals_apply():
    clip = sample_clip(4)
    d = perturb.video.draw("zoom_blur", 3, 4, seed=0)
    one = d.render(clip[d.source_indices([0])], [0])
    assert np.array_equal(one, perturb.video.apply(clip, "zoom_blur", 3, seed=0)[[0]])


def test_zoom_blur_torch_within_one_level_on_a_random_texture():
    torch = pytest.importorskip("torch")
    clip = np.random.default_rng(0).integers(0, 256, (2, 224, 224, 3), dtype=np.uint8)
    ref = perturb.video.apply(clip, "zoom_blur", 3, seed=0).astype(np.int16)
    got = perturb.video.apply(torch.from_numpy(clip), "zoom_blur", 3, seed=0).numpy().astype(np.int16)
    diff = np.abs(got - ref)
    assert diff.max() <= 1 and (diff > 0).mean() <= 0.01, (diff.max(), (diff > 0).mean())


# --- contrast and MC (7, 11, 18, 20, 21, 23) --------------------------------------------------

def test_mc_with_too_few_distinct_captions(capsys, tmp_path):
    data = write(tmp_path / "three.csv", "video_id,caption\nv1,a dog runs\nv2,a cat sits\nv3,a man cooks\n")
    assert refused(capsys, "mc", "--captions", data, "--type", "gender", "--out", str(tmp_path / "mc.tsv")) == (
        f"perturb mc: error: {data}: not enough distinct captions of other clips for 'v1'; expected 4 "
        "(one per wrong ending), found 2\n")
    assert "not enough distinct captions" in refused(capsys, "mc", "--captions", data,
                                                     "--out", str(tmp_path / "mc.tsv"))


def test_mc_group_column_must_exist(capsys, tmp_path):
    rows = "".join(f"v{i},caption number {i}\n" for i in range(8))
    data = write(tmp_path / "caps.csv", "video_id,caption\n" + rows)
    assert "--group-column nope" in refused(capsys, "mc", "--captions", data, "--group-column", "nope",
                                            "--out", str(tmp_path / "mc.tsv"))


@pytest.mark.parametrize("n", [0, -1, 2.5, "2", True])
def test_contrast_n_is_validated_for_every_type(n):
    for type in TYPES:
        with pytest.raises(ValueError, match="expected n to be an int >= 1"):
            perturb.contrast.generate("a man runs", type, n=n, seed=0)
        with pytest.raises(ValueError, match="expected n to be an int >= 1"):
            perturb.contrast.generate_batch(["a man runs"], type, n=n, seed=0)


@pytest.mark.parametrize("caption", [None, "", "  ", 3])
def test_random_mc_refuses_captions_that_are_not_text(caption):
    items = [("v1", caption)] + [(f"v{i}", f"caption {i}") for i in range(2, 9)]
    with pytest.raises(ValueError, match="expected the caption as a non-empty string"):
        perturb.contrast.random_mc(items, seed=0)


def test_contrast_options_that_cannot_work(capsys, video):
    base = ["contrast", "a man runs", "--type", "verb"]
    assert "--model /nonexistent/model" in refused(capsys, *base, "--model", "/nonexistent/model")
    assert "--cast expects NAME:m|f" in refused(capsys, "contrast", "John runs", "--type", "person_id",
                                                "--cast", "John:x")
    assert "not UTF-8 text" in refused(capsys, *base, "--corpus", str(video))


# --- the video API (15) ----------------------------------------------------------------------

def test_compose_refuses_a_bare_string():
    with pytest.raises(TypeError, match=r"Compose\(\['jpeg'\]\)"):
        perturb.video.Compose("jpeg")
    assert len(list(perturb.video.Compose(["jpeg"]))) == 1


# --- the CLI speaks in one line (16, 8) -------------------------------------------------------

@pytest.mark.parametrize("argv, line", [
    (["apply", "v.mp4", "o.mkv", "--name", "jpeg", "--severity", "0"],
     "perturb apply: error: --severity must be 1..5; got 0 (see perturb apply --help)\n"),
    (["build", "d.csv", "--out", "o", "--jobs", "x"],
     "perturb build: error: --jobs must be an integer >= 1; got 'x' (see perturb build --help)\n"),
    (["list", "--modality", "audio"],
     "perturb list: error: --modality must be one of video, text; got 'audio' (see perturb list --help)\n"),
    (["apply", "v.mp4"],
     "perturb apply: error: the following arguments are required: OUT, --name (see perturb apply --help)\n"),
    (["bench", "--model", "toy:8", "--out", "o", "--severities", "0-9"],
     "perturb bench: error: --severities must be levels in 1..5 as e.g. '1-5' or '1,3'; got '0-9' "
     "(see perturb bench --help)\n"),
    (["list", "--bogus"],
     "perturb list: error: unrecognized arguments: --bogus (see perturb list --help)\n"),
    (["cache", "rm", "DIR", "--older-than", "3"],
     "perturb cache rm: error: unrecognized arguments: --older-than 3 (see perturb cache rm --help)\n"),
])
def test_usage_errors_are_one_line(capsys, argv, line):
    assert main(argv) == 2
    assert capsys.readouterr().err == line


@pytest.mark.parametrize("argv", [["list", "--json"], ["cache", "ls", "cache"]])
def test_a_closed_pipe_ends_quietly(tmp_path, argv):
    """``perturb list --json | head -c 1``, ``perturb cache ls DIR | head``: the reader is gone
    before the output is written."""
    cache = EmbeddingCache(tmp_path / "cache")
    for dataset in ("d1", "d2"):
        key = CacheKey(model="toy:8", dataset=dataset, modality="video", perturbation="clean", severity=None, seed=0)
        cache.save(key, ["a"], np.ones((1, 4)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "perturb", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait() == 141 and err == ""


# --- cache rm / prune refuse nonsense (17) ----------------------------------------------------

def test_cache_prune_and_rm_refuse_nonsense(capsys, tmp_path):
    cache = EmbeddingCache(tmp_path / "cache")
    key = CacheKey(model="toy:8", dataset="d", modality="video", perturbation="clean", severity=None, seed=0)
    cache.save(key, ["a"], np.ones((1, 4)))
    root = str(tmp_path / "cache")
    for age in ("-1", "0", "nan"):
        err = refused(capsys, "cache", "prune", root, "--older-than", age)
        assert "--older-than must be a finite number > 0" in err
    assert refused(capsys, "cache", "rm", root, "--model", "").startswith("perturb cache rm: error: --model is blank")
    assert "is blank" in refused(capsys, "cache", "rm", root, "--perturbation", " ")
    assert "not both" in refused(capsys, "cache", "rm", root, "--all", "--model", "toy")
    assert list((tmp_path / "cache").rglob("part-*.npz"))                 # nothing removed
    assert main(["cache", "prune", root, "--older-than", "1"]) == 0
    assert list((tmp_path / "cache").rglob("part-*.npz"))                 # a fresh entry kept


# --- bench options checked before any work (10, 22, 23) ---------------------------------------

@pytest.mark.parametrize("extra, message", [
    (["--level", "1.5"], "--level must be a confidence level between 0 and 1"),
    (["--level", "0"], "--level must be"),
    (["--level", "2"], "--level must be"),
    (["--bootstrap", "-5"], "--bootstrap must be an integer >= 0; got -5"),
    (["--seed", "-3"], "--seed must be an integer >= 0; got -3"),
    (["--mc", "EMPTY"], "--mc"),
    (["--cache", "FILE"], "--cache"),
    (["--batch-size", "0"], "--batch-size must be an integer >= 1; got 0"),
    (["--fps", "0"], "--fps must be > 0"),
    (["--frames", "0"], "--frames must be an integer >= 1; got 0"),
    (["--workers", "0"], "--workers must be an integer >= 1; got 0"),
    (["--pairs", "nope@Typos"], "--pairs nope@Typos: unknown video perturbation 'nope'"),
    (["--metric", "mAP"], "--metric mAP needs --judgements"),
    (["--rerank", "5", "--first-stage", "toy:8"], "--model toy:8 is a dual encoder"),
    (["--model", "clip:/nonexistent/dir"], "clip:/nonexistent/dir: no such folder"),
    (["--model", "precomputed:/nonexistent"], "/nonexistent is not a directory"),
    (["--model", "callable:os:sep"], "os:sep is not a model; expected an object with encode_videos"),
    (["--model", "http:not a url"], "expected http:http://HOST:PORT"),
])
def test_bad_bench_options_exit_2_before_any_work(capsys, dataset, tmp_path, extra, message):
    empty, afile = write(tmp_path / "empty.tsv", ""), write(tmp_path / "afile", "x")
    extra = [empty if a == "EMPTY" else afile if a == "FILE" else a for a in extra]
    out = tmp_path / "out"
    err = refused(capsys, "bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out),
                  *BENCH, *extra)
    assert message in err
    assert not out.exists()                                               # refused before any work


# --- results files the gate and the report rely on (21, 23, 24) -------------------------------

def test_results_with_impossible_recall_or_without_summary(capsys, tmp_path):
    doc = make_results()
    doc["clean"]["t2v"]["R@1"] = 3.5
    bad = write(tmp_path / "recall.json", json.dumps(doc))
    for argv in (["check", bad, "--min", "gamma_r=0.1"], ["report", bad, "--out", str(tmp_path / "r")]):
        assert "clean.t2v.R@1 is 3.5; expected a fraction in [0, 1]" in refused(capsys, *argv)
    doc = make_results()
    del doc["summary"]
    bare = write(tmp_path / "bare.json", json.dumps(doc))
    for argv in (["check", bare, "--min", "gamma_r=0.1"], ["report", bare, "--out", str(tmp_path / "r")]):
        assert "missing key(s) 'summary'" in refused(capsys, *argv)


@pytest.mark.parametrize("name", ["GAMMA-R", "Gamma R", "gamma_r", "gammar"])
def test_rule_metrics_ignore_case_dashes_and_spaces(capsys, tmp_path, name):
    results = write(tmp_path / "r.json", json.dumps(make_results()))
    assert main(["check", results, "--min", f"{name}=0.01"]) == 0


# --- concurrent runs on one cache (25) --------------------------------------------------------

def test_two_runs_on_one_cache_store_each_row_once(tmp_path):
    key = CacheKey(model="toy:8", dataset="d", modality="video", perturbation="clean", severity=None, seed=0)
    first, second = EmbeddingCache(tmp_path), EmbeddingCache(tmp_path)   # two processes
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    fps = {"a": "fa", "b": "fb", "c": "fc"}
    assert first.load(key, list(fps), fps) == {} and second.load(key, list(fps), fps) == {}
    first.save(key, ["a", "b"], rows[:2], fps)
    second.save(key, ["a", "b"], rows[:2], fps)                          # the same batch, meanwhile
    second.save(key, ["c"], rows[2:], fps)
    first.save(key, ["b", "c"], rows[1:], fps)
    parts = list(key.folder(tmp_path).glob("part-*.npz"))
    stored = [i for p in parts for i in np.load(p)["ids"].tolist()]
    assert sorted(stored) == ["a", "b", "c"]
    got = EmbeddingCache(tmp_path).load(key, list(fps), fps)
    assert np.array_equal(np.stack([got[i] for i in "abc"]), rows)
    first.save(key, ["a"], rows[:1], {"a": "changed video"})             # a new fingerprint is stored
    assert len(list(key.folder(tmp_path).glob("part-*.npz"))) == len(parts) + 1
