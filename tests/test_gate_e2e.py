"""End to end: `perturb bench` on the demo data with the demo model and with a degraded copy of it;
`perturb compare` against the first run fails for the degraded run only."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from perturb.cli import main

QUICK = ["--subset", "12", "--seed", "0", "--metric", "t2v.R@1", "--severities", "3,5",
         "--video-perturbations", "gaussian_noise,motion_blur", "--text-perturbations", "none",
         "--bootstrap", "200", "--no-progress"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """results.json of the demo model (twice) and of the degraded model, on the same subset."""
    from perturb.demo.data import write_dataset

    root = tmp_path_factory.mktemp("e2e")
    captions = write_dataset(root / "data")
    out = {}
    for name, model, extra in (("baseline", "demo", []), ("rerun", "demo", []),
                               ("degraded", "noise_sensitive", []),
                               ("optimistic", "demo", ["--ties", "optimistic"])):
        code = main(["bench", "--model", f"callable:gate_models:{model}", "--dataset", str(captions),
                     "--out", str(root / name), *QUICK, *extra])
        assert code == 0, name
        out[name] = str(root / name / "results.json")
    return out


def test_compare_passes_for_a_rerun_and_fails_for_the_degraded_model(runs, tmp_path, capsys):
    gate = ["--max-drop", "0.02", "--significance", "0.05"]        # by default: γr and t2v.R@1
    assert main(["compare", runs["baseline"], runs["rerun"], *gate]) == 0

    junit = tmp_path / "compare.xml"
    assert main(["compare", runs["baseline"], runs["degraded"], *gate, "--junit", str(junit)]) == 1
    cases = ET.parse(junit).getroot().findall("./testsuite/testcase")
    failed = sorted(c.get("name") for c in cases if c.find("failure") is not None)
    assert failed == sorted([
        "perturbation gaussian_noise: gamma_r drop <= 0.02", "category noise: gamma_r drop <= 0.02",
        "perturbation gaussian_noise: t2v.R@1 drop <= 0.02", "category noise: t2v.R@1 drop <= 0.02"])
    passed = {c.get("name") for c in cases if c.find("failure") is None}
    assert "clean.t2v.R@1 drop <= 0.02" in passed                     # clean retrieval is unchanged
    assert "perturbation motion_blur: gamma_r drop <= 0.02" in passed
    capsys.readouterr()


def test_check_fails_for_the_degraded_model_naming_the_perturbation(runs, capsys):
    assert main(["check", runs["baseline"], "--min", "gamma_r=0.7", "--min", "clean.t2v.R@1=0.5"]) == 0
    capsys.readouterr()
    assert main(["check", runs["degraded"], "--min", "gamma_r=0.7", "--min", "clean.t2v.R@1=0.5"]) == 1
    out = capsys.readouterr().out
    assert "1 of 2 fall short: gaussian_noise" in out and "FAILED 2 checks: 1 passed, 1 failed" in out


def test_the_tie_convention_is_recorded_and_compare_refuses_to_mix_them(runs, capsys):
    import json

    ties = {name: json.loads(open(path).read())["ties"] for name, path in runs.items()}
    assert ties == {"baseline": "pessimistic", "rerun": "pessimistic", "degraded": "pessimistic",
                    "optimistic": "optimistic"}
    capsys.readouterr()
    assert main(["compare", runs["baseline"], runs["optimistic"]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("perturb compare: error: the files rank ties differently "
                          "(baseline pessimistic, current optimistic)")
