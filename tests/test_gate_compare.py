"""``perturb compare``: drops per perturbation and category, max-drop, significance from bootstrap CIs."""
from __future__ import annotations

import pytest

from gate_fixtures import DEFAULT_PERTURBED, make_results
from perturb.errors import GateInputError
from perturb.gate.compare import compare
from perturb.gate.tables import markdown
from perturb.results import validate


def shifted(name: str, delta: float, **kwargs) -> dict:
    """The default fixture with ``name``'s perturbed R@5 moved by ``delta`` at every severity."""
    perturbed = {k: [round(v + delta, 6) if k == name else v for v in vals]
                 for k, vals in DEFAULT_PERTURBED.items()}
    return make_results(perturbed, **kwargs)


def rows(comparison) -> dict[str, object]:
    return {f"{o.cells['scope']} {o.cells['name']} {o.cells['metric']}": o for o in comparison.outcomes}


def verdicts(comparison) -> dict[str, str]:
    return {k: o.cells["verdict"] for k, o in rows(comparison).items()}


def test_identical_results_pass_with_one_row_per_perturbation_and_category():
    doc = validate(make_results())
    result = compare(doc, doc, metrics=["gamma_r"])
    assert list(verdicts(result)) == [
        "perturbation gaussian_noise gamma_r", "perturbation shot_noise gamma_r",
        "perturbation motion_blur gamma_r", "perturbation Typos gamma_r",
        "category noise gamma_r", "category blur gamma_r", "category ChangeChar gamma_r"]
    assert not any(o.failed for o in result.outcomes) and result.notes == []


def test_by_default_gamma_r_and_the_headline_metric_clean_and_perturbed():
    doc = validate(make_results())
    assert list(verdicts(compare(doc, doc))) == [
        "perturbation gaussian_noise gamma_r", "perturbation shot_noise gamma_r",
        "perturbation motion_blur gamma_r", "perturbation Typos gamma_r",
        "category noise gamma_r", "category blur gamma_r", "category ChangeChar gamma_r",
        "clean  clean.t2v.R@5", "perturbation gaussian_noise t2v.R@5", "perturbation shot_noise t2v.R@5",
        "perturbation motion_blur t2v.R@5", "perturbation Typos t2v.R@5",
        "category noise t2v.R@5", "category blur t2v.R@5", "category ChangeChar t2v.R@5"]


def test_an_equal_drop_on_clean_and_perturbed_data_keeps_gamma_r_but_fails_by_default():
    # every score 10 % lower: γr is unchanged, the model is worse
    base = validate(make_results())
    worse = validate(make_results({k: [round(a * 0.9, 6) for a in v] for k, v in DEFAULT_PERTURBED.items()},
                                  clean=0.54))
    assert not any(o.failed for o in compare(base, worse, metrics=["gamma_r"]).outcomes)
    failed = [o for o in compare(base, worse).outcomes if o.failed]
    assert failed[0].name == "clean.t2v.R@5 drop <= 0.02" and failed[0].cells["drop"] == "+0.060"
    assert all(o.cells["metric"].endswith("t2v.R@5") for o in failed)
    assert len(failed) == 1 + 4 + 3          # clean, each perturbation, each category


def test_files_with_different_tie_conventions_are_refused():
    pessimistic, optimistic = validate(make_results()), validate(make_results(ties="optimistic"))
    legacy = make_results()
    assert "ties" not in legacy
    assert validate(legacy).ties == "pessimistic"            # files older than the key
    with pytest.raises(GateInputError, match="rank ties differently .baseline pessimistic, current "
                                             "optimistic.*--ties pessimistic"):
        compare(pessimistic, optimistic)
    with pytest.raises(GateInputError, match="rank ties differently"):
        compare(optimistic, validate(legacy))
    assert not any(o.failed for o in compare(optimistic, optimistic).outcomes)
    assert not any(o.failed for o in compare(validate(legacy), validate(make_results(ties="pessimistic")))
                   .outcomes)


def test_max_drop_is_absolute_on_gamma():
    base = validate(make_results())
    small = validate(shifted("gaussian_noise", -0.01))      # γr drops by 0.0167
    big = validate(shifted("gaussian_noise", -0.02))        # γr drops by 0.0333
    assert not any(o.failed for o in compare(base, small, max_drop=0.02).outcomes)
    failed = [o for o in compare(base, big, max_drop=0.02).outcomes if o.failed]
    assert [o.name for o in failed] == ["perturbation gaussian_noise: gamma_r drop <= 0.02"]
    assert "dropped by 0.033 (> 0.02)" in failed[0].message
    assert not any(o.failed for o in compare(base, big, max_drop=0.05).outcomes)
    # an improvement is never a regression
    assert not any(o.failed for o in compare(big, base, max_drop=0.0).outcomes)


def test_significance_ignores_a_drop_inside_the_ci_and_flags_one_outside():
    # CI half-width 0.02 on R@5, i.e. 0.033 on γr; the γr drop inside it is 0.025, outside 0.083.
    base = validate(make_results(ci=0.02))
    inside = validate(shifted("gaussian_noise", -0.015, ci=0.02))
    outside = validate(shifted("gaussian_noise", -0.05, ci=0.02))
    key = "perturbation gaussian_noise gamma_r"

    assert verdicts(compare(base, inside, max_drop=0.02))[key] == "regression"       # without --significance
    noisy = rows(compare(base, inside, max_drop=0.02, significance=0.05))[key]
    assert not noisy.failed and noisy.cells["verdict"] == "noise"
    assert float(noisy.cells["p"]) > 0.05

    flagged = rows(compare(base, outside, max_drop=0.02, significance=0.05))
    assert flagged[key].failed and float(flagged[key].cells["p"]) < 0.05
    assert flagged["category noise gamma_r"].failed                   # the category mean drops 0.042
    assert [k for k, o in flagged.items() if o.failed] == [
        key, "category noise gamma_r", "perturbation gaussian_noise t2v.R@5", "category noise t2v.R@5"]


def test_significance_without_cis_falls_back_to_max_drop():
    result = rows(compare(validate(make_results()), validate(shifted("gaussian_noise", -0.05)),
                          significance=0.05))
    row = result["perturbation gaussian_noise gamma_r"]
    assert row.failed and row.cells["p"] == "no CI" and "no bootstrap CI" in row.message


def test_retrieval_metric_adds_the_clean_row_and_rank_metrics_count_increases_as_drops():
    base = validate(make_results(ci=0.01))
    worse = validate(make_results(clean=0.55, ci=0.01))
    result = verdicts(compare(base, worse, metrics=["t2v.R@5"], max_drop=0.02, significance=0.05))
    assert result["clean  clean.t2v.R@5"] == "regression"
    assert result["perturbation gaussian_noise t2v.R@5"] == "ok"
    ranks = rows(compare(base, worse, metrics=["clean.t2v.MdR"], max_drop=0.1))
    assert list(ranks) == ["clean  clean.t2v.MdR"]
    assert ranks["clean  clean.t2v.MdR"].failed and ranks["clean  clean.t2v.MdR"].cells["drop"] == "+0.500"


def test_missing_perturbation_fails_and_new_one_is_informational():
    base = validate(make_results())
    fewer = {k: v for k, v in DEFAULT_PERTURBED.items() if k != "motion_blur"}
    current = validate(make_results(fewer))
    result = rows(compare(base, current))
    assert result["perturbation motion_blur gamma_r"].failed
    assert result["perturbation motion_blur gamma_r"].cells["verdict"] == "missing"
    assert result["category blur gamma_r"].failed
    reverse = rows(compare(current, base))
    assert reverse["perturbation motion_blur gamma_r"].status == "info"
    assert not any(o.failed for o in reverse.values())


def test_a_note_both_files_share_is_printed_once(capsys, tmp_path):
    """Two files with one flag (here: a clean score near 1) give one note naming both, not two notes."""
    import json
    from perturb.cli import main

    saturated = make_results(clean=0.97)
    paths = [tmp_path / "base.json", tmp_path / "cur.json"]
    for p in paths:
        p.write_text(json.dumps(saturated))
    notes = compare(validate(saturated), validate(saturated)).notes
    assert notes == ["baseline and current: clean t2v.R@5 0.970 is near 1: the task is too easy to separate "
                     "models, and no perturbation can show a gain"]
    main(["compare", str(paths[0]), str(paths[1])])
    assert capsys.readouterr().out.count("is near 1") == 1
    other = compare(validate(saturated), validate(make_results(clean=0.6))).notes
    assert [n.split(":")[0] for n in other] == ["baseline"]


def test_notes_when_the_runs_are_not_like_for_like():
    notes = compare(validate(make_results(subset=20)), validate(make_results(subset=10))).notes
    assert notes == ["dataset subset differs: baseline 20, current 10"]


@pytest.mark.parametrize("kwargs, words", [
    ({"metrics": ["gama_r"]}, "unknown metric 'gama_r'; did you mean 'gamma_r'"),
    ({"metrics": []}, "no metric to compare"),
    ({"max_drop": -1}, "--max-drop must be a number >= 0"),
    ({"significance": 5}, "--significance must be in (0, 1)"),
])
def test_bad_compare_arguments(kwargs, words):
    doc = validate(make_results())
    with pytest.raises(GateInputError) as info:
        compare(doc, doc, **kwargs)
    assert words in str(info.value)


def test_different_headline_metrics_are_not_comparable():
    with pytest.raises(GateInputError, match="measure different metrics"):
        compare(validate(make_results()), validate(make_results(metric="t2v.R@1")))


def test_markdown_summary_for_a_pull_request():
    base = validate(make_results(ci=0.02))
    result = compare(base, validate(shifted("gaussian_noise", -0.05, ci=0.02)), significance=0.05)
    text = markdown(result.outcomes, "Robustness vs baseline", result.notes)
    lines = text.splitlines()
    assert lines[0] == "### Robustness vs baseline: ❌ failed"
    assert "15 checks: 11 passed, 4 failed." in lines
    assert any(line.startswith("- `perturbation gaussian_noise: gamma_r drop <= 0.02` — dropped by 0.083")
               for line in lines)
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + len(result.outcomes)
    assert table[0] == "| scope | name | metric | baseline | current | drop | p | verdict |"
    passed = markdown(compare(base, base).outcomes, "Robustness vs baseline")
    assert passed.startswith("### Robustness vs baseline: ✅ passed") and "Failed" not in passed
