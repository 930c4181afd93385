"""perturb.fileio: atomic writes, JSON Lines and checksums shared by every part of the package."""
from __future__ import annotations

import hashlib
import json

import pytest

from perturb.fileio import (jsonl_text, publish, read_jsonl, sha256_file, temp_name, write_atomic,
                            write_json, write_jsonl)


def test_write_atomic_replaces_whole_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "a.txt"
    write_atomic(path, "old")
    assert write_atomic(path, b"new\xff") == path
    assert path.read_bytes() == b"new\xff"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_write_atomic_into_a_missing_folder_fails_cleanly(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "a.txt", "x")
    assert list(tmp_path.iterdir()) == []


def test_temp_name_is_hidden_next_to_the_target(tmp_path):
    tmp = temp_name(tmp_path / "m.jsonl")
    assert tmp.parent == tmp_path and tmp.name.startswith(".m.jsonl.") and tmp.name.endswith(".tmp")


def test_publish_renames_a_finished_file(tmp_path):
    tmp, final = tmp_path / ".x.part", tmp_path / "x"
    tmp.write_bytes(b"data")
    assert publish(tmp, final) == final
    assert final.read_bytes() == b"data" and not tmp.exists()


def test_json_and_jsonl_round_trip(tmp_path):
    rows = [{"a": "é", "n": 1}, [1, 2], "s", None]
    assert jsonl_text(rows) == '{"a": "é", "n": 1}\n[1, 2]\n"s"\nnull\n'
    write_jsonl(tmp_path / "r.jsonl", rows)
    assert read_jsonl(tmp_path / "r.jsonl") == rows
    write_json(tmp_path / "d.json", {"k": [1, 2]})
    assert json.loads((tmp_path / "d.json").read_text()) == {"k": [1, 2]}
    assert (tmp_path / "d.json").read_text().endswith("]\n}\n")


def test_read_jsonl_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"b": \n')
    with pytest.raises(ValueError, match=r"bad\.jsonl: line 3 is not valid JSON"):
        read_jsonl(path)

    class FormatError(ValueError):
        pass

    with pytest.raises(FormatError, match="line 3"):
        read_jsonl(path, error=FormatError)
    path.write_bytes(b'{"a": 1}\n\xff\xfe\n')
    with pytest.raises(ValueError, match="line 2 is not valid JSON \\(not UTF-8 text\\)"):
        read_jsonl(path)


def test_read_jsonl_can_skip_a_torn_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": \xc3')
    assert read_jsonl(path, skip_invalid=True) == [{"a": 1}, {"b": 2}]


def test_sha256_file_reads_in_blocks(tmp_path):
    data = bytes(range(256)) * 1000
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f", block=1000) == hashlib.sha256(data).hexdigest()


def test_read_json_says_why_in_one_line(tmp_path):
    from perturb.fileio import read_json

    good = tmp_path / "good.json"
    good.write_text('{"a": [1, 2]}')
    assert read_json(good) == {"a": [1, 2]}
    with pytest.raises(FileNotFoundError):
        read_json(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": ')
    with pytest.raises(ValueError, match=r"^Expecting value: line 1 column 7 \(char 6\)$"):
        read_json(bad)
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="can't decode byte 0xff"):
        read_json(bad)


def test_json_or_lines_reads_either_and_names_the_failure():
    from perturb.fileio import json_or_lines

    assert json_or_lines('[{"a": 1}, null]') == ([{"a": 1}, None], "json")
    assert json_or_lines('{"a": 1}\n\nnull\n[2]\n') == ([{"a": 1}, None, [2]], "jsonl")
    with pytest.raises(json.JSONDecodeError, match="line 1 column 1"):
        json_or_lines('{"a": 1}\nnot json\n')
