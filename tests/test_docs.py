"""The committed catalogue is exactly what the registry generates."""
from __future__ import annotations

import numpy as np

import perturb
from perturb import docs
from perturb.registry import Spec


def test_committed_catalogue_is_current():
    committed = docs.DEFAULT_PATH.read_text(encoding="utf-8")
    assert committed == docs.render(), "docs/perturbations.md is stale: run `python -m perturb.docs`"


def test_every_perturbation_has_a_section():
    text = docs.render()
    for spec in perturb.REGISTRY:
        assert f"#### `{spec.name}`" in text
        for alias in spec.aliases:
            assert f"`{alias}`" in text
        if spec.deviation:
            assert spec.deviation in text


def test_severity_table_shows_ours_and_the_papers():
    lines = docs.severity_table(perturb.video.get("jumble"))
    assert lines[0] == "| severity | segment | paper: segment |"
    assert lines[2] == "| 1 | 4 | 32 |" and lines[6] == "| 5 | 64 | 2 |"


def test_generic_over_spec_fields():
    spec = Spec(name="demo_text", modality="text", category="Demo", fn=lambda *a, **k: None,
                summary="A | pipe.", aliases=("Demo",), resources=("spacy",), severities=None,
                needs_parse=True, extra={"rate": 0.1, "pos": ("NN", "VB"), "n": np.int64(3),
                                         "obj": object()})
    text = docs.render([spec])
    assert "## Text perturbations" in text and "## Video perturbations" not in text
    assert "- rate: 0.1" in text and "- pos: (NN, VB)" in text and "- n: 3" in text
    assert "- obj: object" in text and "0x" not in text               # no memory addresses
    assert "Flags: random, needs a parse" in text and "Resources: spacy" in text
    assert "No severity levels." in text


def test_check_mode(tmp_path, capsys):
    out = tmp_path / "perturbations.md"
    assert docs.main(["--out", str(out), "--check"]) == 1
    assert docs.main(["--out", str(out)]) == 0
    assert docs.main(["--out", str(out), "--check"]) == 0
    out.write_text(out.read_text() + "edited\n")
    assert docs.main(["--out", str(out), "--check"]) == 1
    assert "out of date" in capsys.readouterr().err


def test_measured_figures_come_from_the_newest_results_file(tmp_path):
    import json
    from perturb import measured

    def row(op, severity, speedup, text=None):
        out = {"op": op, "severity": severity, "speedup": speedup}
        return out | ({"equivalence": {"text": text}} if text else {})

    old = {"date": "2026-01-01", "visual": {"frames": 8, "size": [32, 32], "rows": [row("fog", 1, 2.0, "old")]}}
    new = {"date": "2026-02-01", "visual": {"frames": 16, "size": [64, 48], "peer": {"package": "peer", "version": "1"},
                                            "rows": [row("fog", 1, 3.04, "PSNR 40 dB"), row("fog", 5, 9.96)]},
           "codecs": {"frames": 16, "rows": [{"op": "mpeg1", "severity": 3, "ours_s": 1.0}]},      # no speedup
           "other": {"rows": [row("rain", 1, 5.0)]}}                                              # not a peer section
    (tmp_path / "a.json").write_text(json.dumps(new))
    (tmp_path / "b.json").write_text(json.dumps(old))
    (tmp_path / "broken.json").write_text("{")
    found = measured.load(tmp_path)
    assert set(found) == {"fog"} and found["fog"].source == "a.json"
    assert found["fog"].sentence() == ("Against peer 1 on the sample clip (16 frames at 64x48, severities 1, 5; "
                                       "benchmarks/results/a.json): 3.0-10.0x as fast per clip; severity 1: PSNR 40 dB.")
    assert measured.load(tmp_path / "missing") == {}


def test_video_registrations_carry_no_measured_speed():
    """Speed figures live in the benchmark results (the catalogue's Measured lines), not in code."""
    import re

    text = docs.render()
    assert text.count("Measured: Against") >= 25
    for spec in perturb.REGISTRY.select("video"):
        assert not re.search(r"\d(\.\d+)?x (faster|the reference)|Speed:", spec.deviation), spec.name
