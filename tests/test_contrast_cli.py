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
