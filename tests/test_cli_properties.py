"""Property-based: every ``perturb`` subcommand given a malformed file ends cleanly.

Whatever the file holds (random bytes, JSON of the wrong shape, a valid document with one field
replaced or removed), the command returns an exit status (0/1 only for documents that still
make sense, 2 for bad input, with one ``perturb CMD: error:`` line) and never raises.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gate_fixtures import make_results
from perturb.cli import main
from properties import bounded


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)


def _paths(doc, prefix=()):
    """Every (path to a value) in a JSON document."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


@st.composite
def damaged_results(draw) -> dict:
    """A valid results document with one value replaced by random JSON, or removed."""
    doc = make_results(ci=0.02)
    paths = [p for p in _paths(doc) if p]
    path = draw(st.sampled_from(paths))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if draw(st.booleans()):
        parent[path[-1]] = draw(json_values)
    elif isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent.pop(path[-1])
    return doc


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def assert_clean_end(code: int, err: str, command: str, allowed=(0, 1, 2)) -> None:
    assert code in allowed, (code, err)
    if code == 2:
        assert err.startswith(f"perturb {command}: error: ") and "Traceback" not in err, err


def write(path: Path, content: str | bytes) -> str:
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    return str(path)


garbage = st.one_of(st.binary(max_size=64), json_values.map(json.dumps), st.text(max_size=40))


@bounded(60)
@given(doc=damaged_results())
def test_check_and_compare_on_damaged_results(capsys, tmp_path, doc):
    good = write(tmp_path / "good.json", json.dumps(make_results(ci=0.02)))
    bad = write(tmp_path / "bad.json", json.dumps(doc, allow_nan=True))
    assert_clean_end(*run(capsys, "check", bad, "--min", "gamma_r=0.5"), "check")
    assert_clean_end(*run(capsys, "compare", good, bad), "compare")
    assert_clean_end(*run(capsys, "compare", bad, good), "compare")


@bounded(30)
@given(content=garbage)
def test_gate_and_report_on_garbage(capsys, tmp_path, content):
    bad = write(tmp_path / "bad.json", content)
    good = write(tmp_path / "good.json", json.dumps(make_results(ci=0.02)))
    assert_clean_end(*run(capsys, "check", bad, "--min", "gamma_r=0.5"), "check", (2,))
    assert_clean_end(*run(capsys, "compare", good, bad), "compare", (2,))
    code, err = run(capsys, "report", bad, "--out", str(tmp_path / "rep"))
    assert_clean_end(code, err, "report", (2,))
    assert "bad.json" in err


rows = st.lists(st.one_of(
    json_values,
    st.fixed_dictionaries({}, optional={"video_id": json_values, "video_path": json_values,
                                        "caption": json_values, "start": json_values,
                                        "end": json_values})), min_size=1, max_size=4)


def serialise(rows: list, suffix: str, header: bool) -> str:
    """``rows`` as JSON Lines, or as CSV cells of JSON values (with a header row of the keys, or
    without one, each row's values in order)."""
    if suffix == ".jsonl":
        return "".join(json.dumps(r) + "\n" for r in rows)
    if not header:
        return "\n".join(",".join(json.dumps(v) for v in (r.values() if isinstance(r, dict) else [r]))
                         for r in rows) + "\n"
    keys = sorted({k for r in rows if isinstance(r, dict) for k in r}) or ["x"]
    lines = [",".join(keys)] + [",".join(json.dumps(r.get(k, "")) if isinstance(r, dict) else json.dumps(r)
                                         for k in keys) for r in rows]
    return "\n".join(lines) + "\n"


@bounded(25)
@given(rows=rows, suffix=st.sampled_from([".jsonl", ".csv"]))
def test_build_on_malformed_dataset_files(capsys, tmp_path, rows, suffix):
    data = write(tmp_path / f"data{suffix}", serialise(rows, suffix, header=True))
    code, err = run(capsys, "build", data, "--out", str(tmp_path / "out"), "--video-perturbations", "none",
                    "--text-perturbations", "DropFirst", "--no-progress")
    assert_clean_end(code, err, "build")


@bounded(20)
@given(rows=rows, suffix=st.sampled_from([".jsonl", ".csv"]))
def test_mc_on_malformed_caption_files(capsys, tmp_path, rows, suffix):
    data = write(tmp_path / f"caps{suffix}", serialise(rows, suffix, header=False))
    code, err = run(capsys, "mc", "--captions", data, "--out", str(tmp_path / "mc.tsv"))
    assert_clean_end(code, err, "mc")


@bounded(15)
@given(content=st.binary(max_size=256), suffix=st.sampled_from([".mp4", ".mkv", ".avi"]))
def test_apply_on_a_file_that_is_not_a_video(capsys, tmp_path, content, suffix):
    src = write(tmp_path / f"in{suffix}", content)
    code, err = run(capsys, "apply", src, str(tmp_path / "out.mkv"), "--name", "jumble")
    assert_clean_end(code, err, "apply", (2,))


@bounded(15)
@given(rows=rows)
def test_bench_on_malformed_dataset_files(capsys, tmp_path, rows):
    data = write(tmp_path / "data.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    code, err = run(capsys, "bench", "--model", "toy:8", "--dataset", data, "--out", str(tmp_path / "o"),
                    "--video-perturbations", "none", "--text-perturbations", "none", "--no-cache")
    assert_clean_end(code, err, "bench")


@pytest.mark.parametrize("argv", [
    ["bench", "--model", "nosuch:x", "--dataset", "DATA", "--out", "OUT"],
    ["bench", "--model", "toy:8", "--dataset", "DATA", "--out", "OUT", "--severities", "0-9"],
    ["bench", "--model", "toy:8", "--dataset", "DATA", "--out", "OUT", "--video-perturbations", "nosuch"],
    ["build", "DATA", "--out", "OUT", "--text-perturbations", "nosuch"],
    ["text", "--name", "nosuch", "a dog runs"],
    ["contrast", "--type", "nosuch", "a dog runs"],
    ["describe", "nosuch"],
])
def test_bad_arguments_exit_2(capsys, tmp_path, argv):
    data = write(tmp_path / "data.jsonl", json.dumps({"video_id": "v", "video_path": "v.mp4",
                                                      "caption": "a dog runs"}) + "\n")
    argv = [data if a == "DATA" else str(tmp_path / "out") if a == "OUT" else a for a in argv]
    code, err = run(capsys, *argv)
    assert code == 2 and err.startswith(f"perturb {argv[0]}: error: "), err


def test_same_seed_same_output_across_processes(tmp_path):
    """Outputs of every perturbation depend on the seed only, not on the process (hash seed)."""
    import subprocess
    import sys

    import os

    root = Path(__file__).resolve().parents[1]
    script = tmp_path / "digest.py"
    script.write_text(DIGEST_SCRIPT)
    out = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root / "src")}
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=root)
        assert done.returncode == 0, done.stderr
        out.append(done.stdout)
    from perturb.registry import REGISTRY
    lines = len(REGISTRY.select("video")) + sum(not s.needs_model for s in REGISTRY.select("text"))
    assert out[0] == out[1] and len(out[0].splitlines()) == lines


DIGEST_SCRIPT = '''
import hashlib
import numpy as np
import perturb
from perturb.registry import REGISTRY

clip = np.random.default_rng(7).integers(0, 256, (6, 20, 18, 3), dtype=np.uint8)
for spec in REGISTRY.select("video"):
    out = perturb.video.apply(clip, spec.name, 4, seed=11)
    print(spec.name, hashlib.sha256(out.tobytes()).hexdigest()[:16])
for spec in REGISTRY.select("text"):
    if spec.needs_model:
        continue
    out = perturb.text.apply("a little girl does gymnastics with her brother", spec.name, seed=11)
    print(spec.name, out)
'''


# --- dataset files written by a CSV/JSONL writer, then damaged ---------------------------------

captions_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                        min_size=0, max_size=12)


@st.composite
def caption_rows(draw) -> list[dict]:
    """1..4 rows of a generic caption file; captions hold quotes, commas, line breaks, blanks."""
    n = draw(st.integers(1, 4))
    return [{"video_id": f"v{i}", "video_path": f"v{i}.mp4", "caption": draw(captions_text)} for i in range(n)]


def written(rows: list[dict], suffix: str) -> str:
    """``rows`` as the csv module or json writes them (quoting done right)."""
    import csv
    import io
    if suffix == ".jsonl":
        return "".join(json.dumps(r) + "\n" for r in rows)
    buf = io.StringIO()
    # "\r\n" so that QUOTE_MINIMAL quotes a field holding either character: with "\n" alone a
    # caption ending in "\r" is written bare, and the row is then an ordinary CRLF line
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def well_formed(caption: str) -> bool:
    return bool(caption.strip()) and "\n" not in caption and "\r" not in caption


@bounded(40)
@given(rows=caption_rows(), suffix=st.sampled_from([".csv", ".jsonl"]))
@example(rows=[{"video_id": "v0", "video_path": "v0.mp4", "caption": "0\r"}], suffix=".csv")
def test_reader_keeps_every_caption_or_refuses_the_file(tmp_path, rows, suffix):
    """Nothing dropped in silence: every written caption comes back, or the file is refused."""
    from perturb.dataset.readers import DatasetFormatError, read_generic
    path = write(tmp_path / f"d{suffix}", written(rows, suffix))
    if all(well_formed(r["caption"]) for r in rows):
        items = read_generic(path)
        expected = [r["caption"].strip() if suffix == ".csv" else r["caption"] for r in rows]
        assert [c for it in items for c in it.captions] == expected
    else:
        with pytest.raises(DatasetFormatError):
            read_generic(path)


DAMAGE = ("drop the closing quote", "drop the last field", "empty the caption", "negative start",
          "end before start", "non-finite end")


def damaged(rows: list[dict], suffix: str, how: str, k: int) -> str:
    """The file with row ``k`` damaged ``how`` (for CSV at the text level, as a hand edit would)."""
    rows = [dict(r, caption=f"caption {i}", start=0, end=2) for i, r in enumerate(rows)]
    row = rows[k]
    if how == "empty the caption":
        row["caption"] = ""
    elif how == "negative start":
        row["start"] = -1
    elif how == "end before start":
        row["start"], row["end"] = 5, 1
    elif how == "non-finite end":
        row["end"] = float("nan") if suffix == ".jsonl" else "inf"
    elif how == "drop the last field" and suffix == ".jsonl":
        del row["caption"]
    text = written(rows, suffix)
    if suffix == ".csv" and how in ("drop the closing quote", "drop the last field"):
        lines = text.split("\n")
        fields = lines[k + 1].split(",")
        if how == "drop the closing quote":
            fields[2] = '"' + fields[2]
        else:
            fields = fields[:-1]
        lines[k + 1] = ",".join(fields)
        text = "\n".join(lines)
    elif suffix == ".jsonl" and how == "drop the closing quote":
        lines = text.split("\n")
        lines[k] = lines[k].replace(f'"caption {k}"', f'"caption {k}')
        text = "\n".join(lines)
    return text


@bounded(30)
@given(rows=caption_rows(), suffix=st.sampled_from([".csv", ".jsonl"]), how=st.sampled_from(DAMAGE),
       data=st.data())
def test_build_refuses_a_damaged_row_in_one_line(capsys, tmp_path, rows, suffix, how, data):
    k = data.draw(st.integers(0, len(rows) - 1), label="row")
    path = write(tmp_path / f"d{suffix}", damaged(rows, suffix, how, k))
    code, err = run(capsys, "build", path, "--out", str(tmp_path / "out"), "--video-perturbations", "none",
                    "--text-perturbations", "DropFirst", "--no-progress")
    assert code == 2 and err.count("\n") == 1, (how, err)
    assert_clean_end(code, err, "build", (2,))
    assert not (tmp_path / "out").exists()


@bounded(20)
@given(limit=st.integers(-10**6, 6))
def test_limit_takes_the_first_n_items_or_is_refused(capsys, tmp_path, limit):
    rows = [{"video_id": f"v{i}", "caption": f"caption {i}"} for i in range(3)]
    path = write(tmp_path / "d.jsonl", written(rows, ".jsonl"))
    out = tmp_path / "out"
    shutil.rmtree(out, ignore_errors=True)
    code, err = run(capsys, "build", path, "--out", str(out), "--video-perturbations", "none",
                    "--text-perturbations", "DropFirst", "--no-progress", "--limit", str(limit))
    if limit < 1:
        assert code == 2 and err == (f"perturb build: error: --limit must be an integer >= 1; got {limit} "
                                     "(see perturb build --help)\n")
        assert not out.exists()
    else:
        assert code == 0, err
        assert json.loads((out / "dataset.json").read_text())["items"] == min(limit, 3)


# --- outputs aimed at inputs -------------------------------------------------------------------

SPELLINGS = ("same", "dot", "parent", "absolute", "symlink", "hardlink")


def spelled(path: Path, how: str) -> str:
    """Another name of ``path`` (relative to its folder, the working directory)."""
    if how == "same":
        return path.name
    if how == "dot":
        return f"./{path.name}"
    if how == "parent":
        return f"../{path.parent.name}/{path.name}"
    if how == "absolute":
        return str(path.resolve())
    alias = path.with_name(f"alias-{how}{path.suffix}")
    if not alias.exists():
        (alias.symlink_to(path) if how == "symlink" else os.link(path, alias))
    return alias.name


@bounded(24)
@given(command=st.sampled_from(["apply", "gallery", "build", "report", "mc", "check"]),
       how=st.sampled_from(SPELLINGS))
def test_an_output_aimed_at_an_input_is_refused(capsys, tmp_path, monkeypatch, command, how):
    monkeypatch.chdir(tmp_path)
    video = tmp_path / "v.mp4"
    if not video.exists():
        video.write_bytes((Path(__file__).resolve().parents[1] / "src/perturb/assets/sample/sample.mp4").read_bytes())
        write(tmp_path / "caps.csv", "video_id,caption\n" + "".join(f"v{i},caption {i}\n" for i in range(8)))
        write(tmp_path / "r.json", json.dumps(make_results(ci=0.02)))
    target = {"apply": video, "gallery": video, "build": tmp_path / "caps.csv", "report": tmp_path / "r.json",
              "mc": tmp_path / "caps.csv", "check": tmp_path / "r.json"}[command]
    before = target.read_bytes()
    out = spelled(target, how)
    argv = {"apply": ["apply", "v.mp4", out, "--name", "jpeg"], "gallery": ["gallery", "v.mp4", out],
            "build": ["build", "caps.csv", "--out", out], "report": ["report", "r.json", "--out", out],
            "mc": ["mc", "--captions", "caps.csv", "--out", out],
            "check": ["check", "r.json", "--min", "gamma_r=0.1", "--markdown", out]}[command]
    code, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1, err
    assert_clean_end(code, err, command, (2,))
    assert target.read_bytes() == before
