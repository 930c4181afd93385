"""``perturb check`` semantics on hand-made results: scopes, severities, clean metrics, bad input."""
from __future__ import annotations

import pytest

from gate_fixtures import make_results
from perturb.errors import GateInputError
from perturb.gate.check import check, check_rule
from perturb.gate.rules import parse_rule
from perturb.registry import REGISTRY
from perturb.results import validate

# gamma_r per perturbation (mean over severities) in the default fixture, clean R@5 = 0.6:
#   gaussian_noise 0.8267, shot_noise 0.8633, motion_blur 0.94, Typos 0.90; category noise 0.845.


@pytest.fixture
def results():
    return validate(make_results())


def outcome(results, spec, bound="min"):
    return check_rule(results, parse_rule(spec, bound))


def test_every_perturbation_rule_reports_the_worst_and_names_the_ones_short(results):
    ok = outcome(results, "gamma_r=0.8")
    assert not ok.failed and ok.cells["value"] == "0.827" and "worst gaussian_noise" in ok.message
    bad = outcome(results, "gamma_r=0.87")
    assert bad.failed
    assert "2 of 4 fall short" in bad.message
    assert "gaussian_noise (0.827)" in bad.message and "shot_noise (0.863)" in bad.message
    assert "motion_blur" not in bad.message


def test_category_rule_uses_the_category_mean(results):
    assert not outcome(results, "noise:gamma_r=0.84").failed
    failed = outcome(results, "noise:gamma_r=0.85")
    assert failed.failed and failed.cells["value"] == "0.845"
    assert not outcome(results, "ChangeChar:gamma_r=0.9").failed     # a text category


def test_per_perturbation_rule_and_names_are_normalised(results):
    assert not outcome(results, "gaussian_noise:gamma_a=0.89").failed      # γa mean = 0.896
    assert outcome(results, "gaussian_noise:gamma_a=0.9").failed
    assert outcome(results, "Gaussian Noise:gamma_a=0.9").cells["value"] == "0.896"
    assert not outcome(results, "typos:gamma_r=0.9").failed


def test_severity_specific_rules(results):
    at5 = outcome(results, "gaussian_noise@5:gamma_r=0.67")       # 0.40 / 0.60 = 0.667
    assert at5.failed and at5.cells["value"] == "0.667"
    assert not outcome(results, "gaussian_noise@1:gamma_r=0.95").failed
    assert not outcome(results, "noise@1:gamma_r=0.97").failed      # (0.58 + 0.59) / 2 / 0.6
    every = outcome(results, "@5:gamma_r=0.7")                      # Typos has no severity 5
    assert every.failed and "1 of 3 fall short: gaussian_noise" in every.message
    missing = outcome(results, "Typos@3:gamma_r=0.1")
    assert missing.failed and "undefined or missing at severity 3" in missing.message


def test_modality_rules(results):
    assert not outcome(results, "text:gamma_r=0.9").failed
    assert outcome(results, "video:gamma_r=0.9").failed
    assert "no runs of modality 'both'" in outcome(results, "both:gamma_r=0.5").message


def test_clean_and_run_metrics(results):
    assert not outcome(results, "clean.t2v.R@5=0.6").failed
    assert outcome(results, "clean.t2v.R@5=0.61").failed
    assert not outcome(results, "clean.v2t.MdR=5", "max").failed
    assert outcome(results, "clean.v2t.MdR=4.9", "max").failed
    assert not outcome(results, "motion_blur:t2v.R@5=0.56").failed      # mean over severities 0.564
    worst_rank = outcome(results, "t2v.MdR=6", "max")                    # worst is the largest rank
    assert worst_rank.cells["value"] == "6.040" and worst_rank.failed


def test_registry_name_not_in_results_fails_the_rule(results):
    absent = next(s.name for s in REGISTRY if s.name not in results.perturbations())
    result = outcome(results, f"{absent}:gamma_r=0.1")
    assert result.failed and f"no runs of perturbation {absent!r}" in result.message


def test_undefined_gamma_r_fails(results):
    doc = validate(make_results(clean=0.0, perturbed={"gaussian_noise": [0, 0, 0, 0, 0]}))
    result = outcome(doc, "gamma_r=0.5")
    assert result.failed and "gaussian_noise (—)" in result.message
    assert outcome(doc, "gaussian_noise:gamma_r=0.5").failed
    assert not outcome(doc, "gaussian_noise:gamma_a=1.0").failed


@pytest.mark.parametrize("spec, words", [
    ("gausian_noise:gamma_r=0.5", "unknown perturbation, category or modality 'gausian_noise'; "
                                  "did you mean 'gaussian_noise'?"),
    ("noize:gamma_r=0.5", "did you mean 'noise'?"),
    ("gamma=0.5", "unknown metric 'gamma'; did you mean"),
    ("t2v.R@3=0.5", "Expected one of: gamma_a, gamma_r, t2v.R@1"),
    ("clean.t2v.R@5=40", "R@5 is a fraction in [0, 1]; got threshold 40 (did you mean 0.4?)"),
    ("noise:clean.t2v.R@5=0.4", "a clean metric takes no scope"),
])
def test_unknown_names_and_metrics(results, spec, words):
    with pytest.raises(GateInputError) as info:
        check(results, [parse_rule(spec)])
    assert words in str(info.value)


def test_bad_input_is_reported_before_any_verdict(results):
    with pytest.raises(GateInputError, match="unknown metric"):
        check(results, [parse_rule("gamma_r=0.1"), parse_rule("gama_r=0.1")])
    with pytest.raises(GateInputError, match="no rules to check"):
        check(results, [])


def test_extra_metrics_in_results_are_valid(results):
    doc = make_results()
    doc["clean"]["t2v"]["mAP"] = 0.5
    for run in doc["runs"]:
        run["t2v"]["mAP"] = 0.45
    assert not outcome(validate(doc), "noise:t2v.mAP=0.45").failed
