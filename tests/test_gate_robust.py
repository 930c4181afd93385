"""``perturb.testing.assert_robust`` and the ``perturb_robust`` pytest fixture, passing and failing."""
from __future__ import annotations

from dataclasses import replace

import pytest

from perturb.errors import UnknownPerturbationError
from perturb.testing import RobustnessError, RobustOptions, assert_robust
from perturb.testing.robust import split_by_modality

pytest_plugins = ["pytester"]
QUICK = RobustOptions(subset=12, seed=0, severities=(3,), metric="t2v.R@1")


@pytest.fixture(scope="module")
def demo_captions(tmp_path_factory):
    from perturb.demo.data import write_dataset
    return write_dataset(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def models():
    import gate_models
    return gate_models


def test_split_by_modality_accepts_names_and_categories():
    chosen = split_by_modality(["gaussian_noise", "Typos", "blur"])
    assert chosen["video"][0] == "gaussian_noise" and "motion_blur" in chosen["video"]
    assert chosen["text"] == ["Typos"]
    with pytest.raises(UnknownPerturbationError, match="did you mean 'gaussian_noise'"):
        split_by_modality(["gausian_noise"])
    with pytest.raises(ValueError, match="at least one perturbation"):
        split_by_modality([])


def test_needs_a_bound_or_a_baseline(demo_captions):
    with pytest.raises(ValueError, match="needs a bound"):
        assert_robust(object(), demo_captions, perturbations=["gaussian_noise"])


def test_assert_robust_passes_and_fails_naming_the_perturbations(demo_captions, models):
    good = assert_robust(models.demo(), demo_captions, QUICK, perturbations=["gaussian_noise", "motion_blur"],
                         min_gamma_r=0.6)
    assert good.data["dataset"]["subset"] == 12
    assert {r["perturbation"] for r in good.runs} == {"gaussian_noise", "motion_blur"}

    with pytest.raises(RobustnessError) as info:
        assert_robust(models.noise_sensitive(), demo_captions, QUICK,
                      perturbations=["gaussian_noise", "motion_blur"], min_gamma_r=0.6)
    message = str(info.value)
    assert message.splitlines()[0].endswith("is not robust enough (1 check(s) failed):")
    assert "gamma_r >= 0.6: 1 of 2 fall short: gaussian_noise" in message
    assert "motion_blur" not in message
    assert [o.name for o in info.value.failures] == ["gamma_r >= 0.6"]

    # against a baseline: the degraded model regresses on gaussian_noise and its category only,
    # in γr and (compared by default too) in the perturbed R@1; its clean R@1 holds
    with pytest.raises(RobustnessError) as info:
        assert_robust(models.noise_sensitive(), demo_captions, QUICK,
                      perturbations=["gaussian_noise", "motion_blur"], baseline=good)
    failed = [o.name for o in info.value.failures]
    assert failed == ["perturbation gaussian_noise: gamma_r drop <= 0.02",
                      "category noise: gamma_r drop <= 0.02",
                      "perturbation gaussian_noise: t2v.R@1 drop <= 0.02",
                      "category noise: t2v.R@1 drop <= 0.02"]
    with pytest.raises(RobustnessError) as info:
        assert_robust(models.noise_sensitive(), demo_captions, replace(QUICK, compare_metrics=["gamma_r"]),
                      perturbations=["gaussian_noise", "motion_blur"], baseline=good)
    assert [o.name for o in info.value.failures] == ["perturbation gaussian_noise: gamma_r drop <= 0.02",
                                                     "category noise: gamma_r drop <= 0.02"]
    assert_robust(models.demo(), demo_captions, QUICK, perturbations=["gaussian_noise", "motion_blur"],
                  baseline=good.data)


def test_fixture_from_the_plugin_entry_point(pytester, demo_captions):
    pytester.makepyfile(f"""
        import gate_models
        from perturb.testing import RobustOptions

        DATA = {str(demo_captions)!r}

        def test_demo_is_robust(perturb_robust):
            perturb_robust(gate_models.demo(), DATA, RobustOptions(severities=(3,), metric="t2v.R@1"),
                           perturbations=["motion_blur"], min_gamma_r=0.6)

        def test_degraded_is_not(perturb_robust):
            perturb_robust(gate_models.noise_sensitive(), DATA, RobustOptions(severities=(3,), metric="t2v.R@1"),
                           perturbations=["gaussian_noise"], min_gamma_r=0.6)
    """)
    result = pytester.runpytest("--perturb-subset", "12", "--perturb-seed", "0", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*RobustnessError*is not robust enough*",
                                 "*gamma_r >= 0.6: 1 of 1 fall short: gaussian_noise*"])


def test_save_creates_missing_folders(demo_captions, models, tmp_path):
    import json

    path = tmp_path / "out" / "nested" / "x.json"
    assert_robust(models.demo(), demo_captions, QUICK, perturbations=["gaussian_noise"], min_gamma_a=0.0,
                  save=path)
    assert json.loads(path.read_text())["metric"] == "t2v.R@1"


def test_a_perturbation_that_cannot_run_fails_assert_robust(demo_captions, models, monkeypatch):
    from perturb.errors import MissingResourceError
    from perturb.text import api

    def missing(*args, **kwargs):
        raise MissingResourceError("NoVB needs spaCy")
    monkeypatch.setattr(api, "parse_batch", missing)
    with pytest.raises(RobustnessError) as info:
        assert_robust(models.demo(), demo_captions, QUICK, perturbations=["Typos", "NoVB"], min_gamma_a=0.0)
    assert [o.name for o in info.value.failures] == ["text NoVB ran"]
    assert "requested but did not run: NoVB needs spaCy" in str(info.value)


def test_the_demo_model_reports_a_version(demo_captions, models, tmp_path, capsys):
    from perturb.bench.api import benchmark
    from perturb.bench.options import BenchOptions
    from perturb.bench.pipeline.data import make_data
    from perturb.bench.pipeline.encoder import Settings
    from perturb.dataset.readers import read_dataset

    model = models.demo()
    assert len(model.cache_version) == 16 and model.cache_version == models.demo().cache_version
    data = make_data(read_dataset(demo_captions), "demo", str(demo_captions), subset=4)
    benchmark(model, data, BenchOptions(cache_dir=str(tmp_path / "cache"), bootstrap=0,
                                        settings=Settings(progress=False)))
    assert "reports no version" not in capsys.readouterr().err
