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
