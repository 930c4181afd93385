"""``perturb contrast`` and ``perturb mc``."""
from __future__ import annotations

import json

from perturb.cli import main
from perturb.contrast.mc import read_mc_tsv


def test_contrast_command(capsys):
    assert main(["contrast", "Two men are doing wrestling.", "--type", "gender", "--seed", "0"]) == 0
    assert capsys.readouterr().out == "Two women are doing wrestling.\n"
    assert main(["contrast", "A man lowers his gun.", "--type", "verb", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["text"] == "A man raises his gun." and d["span"]["original"] == "lowers"
    assert d["type"] == "verb" and d["rule"] == "verb:antonym" and d["explanation"]


def test_contrast_command_errors(capsys):
    assert main(["contrast", "a man", "--type", "colour"]) == 2
    assert "unknown contrast type" in capsys.readouterr().err
    assert main(["contrast", "A cat sleeps.", "--type", "gender"]) == 0    # reported, as `perturb text`
    assert "no gender contrast" in capsys.readouterr().err
    assert main(["contrast", "A cat sleeps.", "--type", "gender", "--strict"]) == 1


def test_mc_command(tmp_path, capsys):
    src = tmp_path / "caps.csv"
    rows = ["video_id,video_path,caption"] + [f"v{k},v{k}.mp4,a man lowers his gun in scene {k}" for k in range(12)]
    src.write_text("\n".join(rows) + "\n")
    out = tmp_path / "mc.tsv"
    assert main(["mc", "--captions", str(src), "--type", "verb", "--out", str(out),
                 "--jsonl", str(tmp_path / "mc.jsonl")]) == 0
    assert "12 rows written" in capsys.readouterr().err
    back = read_mc_tsv(out)
    assert len(back) == 12
    for r in back:
        assert r.endings[r.label] == f"a man lowers his gun in scene {r.clip[1:]}"
        assert f"a man raises his gun in scene {r.clip[1:]}" in r.endings
    assert main(["mc", "--captions", str(tmp_path / "missing.csv"), "--out", str(out)]) == 2


def test_mc_and_entailment_on_malformed_caption_files_exit_2_naming_file_row_and_column(tmp_path, capsys):
    header = tmp_path / "header.csv"
    header.write_text("video_id,text\nv1,a man lowers his gun\n")
    row = tmp_path / "row.jsonl"
    row.write_text('{"video_id": "v1", "caption": "a man lowers his gun"}\n{"video_id": "v2"}\n')
    listed = tmp_path / "listed.jsonl"
    listed.write_text('["v1", "a man lowers his gun"]\n')
    expected = {header: f"{header}:1: the header lacks column(s) 'caption'",
                row: f"{row}:2: missing column(s) 'caption'",
                listed: f"{listed}:1: expected an object with video_id, video_path, caption; got list"}
    for path, words in expected.items():
        for command in (["mc", "--captions", str(path), "--out", str(tmp_path / "mc.tsv")],
                        ["entailment", "--captions", str(path), "--type", "verb",
                         "--out", str(tmp_path / "e.tsv")]):
            assert main(command) == 2
            err = capsys.readouterr().err
            assert err.startswith(f"perturb {command[0]}: error: {words}") and err.count("\n") == 1, err
    assert not (tmp_path / "mc.tsv").exists() and not (tmp_path / "e.tsv").exists()
